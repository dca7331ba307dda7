"""Bare skill mentions are found by looking each whole word up in the set of skill ids;
the alternation of every id (longest first) is the reference it must equal."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mantle_lsp.ide.rules.prose import Mentions, _mention_regex

IDS = st.lists(st.text("ab_1é", min_size=1, max_size=4), min_size=1, max_size=5, unique=True)


@settings(max_examples=500)
@given(IDS, st.text("ab_1 .\n-é\t,", max_size=40))
def test_word_lookup_finds_what_the_alternation_finds(ids: list[str], text: str) -> None:
    ordered = tuple(sorted(ids, key=len, reverse=True))
    want = [(m.group(1), m.start(1), m.end(1)) for m in _mention_regex(ordered).finditer(text)]
    assert list(Mentions(frozenset(ids), None).find(text, 0, len(text))) == want
