"""The fast path (Python's own parser for simple conditions) builds exactly what the lark
parser builds, on every input it accepts; it declines everything else."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.model.project import Project
from mantle_lsp.syntax.conditions import _parse_lark
from mantle_lsp.syntax.conditions_fast import _parse_plain, _parse_python, parse_fast
from test_conditions import conditions

ROOT = Path(__file__).resolve().parents[1]

_SIMPLE_ATOMS = [
    "session.a.b",
    "session.card.reason",
    "session . c . d",
    "session.project.x",
    "'lost'",
    '"stolen"',
    "b'x'",
    "r'r'",
    "'''t'''",
    "1",
    "0x1F",
    "1_000",
    "2j",
    "1e3",
    ".5",
    "True",
    "False",
    "None",
    "...",
    "'a' 'b'",
    "x",
    "-1",
    "session.a",
    "session.a.b.c",
    "session.not.x",
    "session.a.None",
    "session.a_1.b2",
    "session.a.b1x",
    "01",
    "10",
    "0",
    "1x",
    "'it''s'",
    "'a\\'b'",
    '"q"',
    "''",
    "Trueish",
    "notsession.a.b",
    "session.a.band",
]
_SIMPLE_OPS = [" and ", " or ", " == ", " != ", " < ", " <= ", " > ", " >= ", "==", " is "]


@st.composite
def simple(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 5))
    parts = [draw(st.sampled_from(["", "not ", "not not "])) + draw(st.sampled_from(_SIMPLE_ATOMS))]
    for _ in range(n - 1):
        parts.append(draw(st.sampled_from(_SIMPLE_OPS)))
        parts.append(draw(st.sampled_from(["", "not "])) + draw(st.sampled_from(_SIMPLE_ATOMS)))
    return "".join(parts) + draw(st.sampled_from(["", " ", "  "]))


def check_same(source: str) -> None:
    fast = parse_fast(source)
    if fast is not None:
        assert fast == _parse_lark(source), source
    plain = _parse_plain(source)
    if plain is not None:  # the parser-free path: the same tree as Python's parser gives
        assert plain == _parse_python(source), source


_SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(simple())
def test_fast_path_equals_lark_on_simple_conditions(source: str) -> None:
    check_same(source)


@_SETTINGS
@given(conditions())
def test_fast_path_equals_lark_on_any_condition(source: str) -> None:
    check_same(source)


def test_fast_path_takes_the_common_forms_and_declines_the_rest() -> None:
    assert parse_fast("session.card.reason == 'lost' and not session.project.ok") is not None
    for declined in ("(session.a.b)", "session.a.b # note", "session.a.b ==\\\n 1", "x"):
        assert parse_fast(declined) is None, declined


def test_the_plainest_conditions_need_no_parser_and_the_rest_go_on_to_python() -> None:
    for taken in (
        "session.card.reason == 'lost' and not session.project.ok",
        "session.a.b < 3 <= 4 or session.c.d != None",
        'not not session.a.b == "x"',
        "session.a.b==True",
    ):
        assert _parse_plain(taken) is not None, taken
        assert _parse_plain(taken) == _parse_lark(taken), taken
    for passed_on in (
        "session.a.b == 1.5",  # floats: Python's parser
        "session.a.b == 'it\\'s'",  # escapes
        "session.a.b == 007",  # Python rejects leading zeros
        "session.not.x",  # a keyword as a name: a syntax error
        "session.a.b.c",  # four segments
        "session.a.b == 'x' 'y'",  # implicit concatenation
        "session.a.b and",
        "session.a.b is None",
        "session.a.b  ==  1x",
        " session.a.b",  # an unexpected indent
    ):
        assert _parse_plain(passed_on) is None, passed_on


def test_every_condition_of_the_examples_parses_the_same_both_ways() -> None:
    for example in ("telecom", "telecom-broken"):
        proj = Project.load(ROOT / "examples" / example)
        for pf in proj.files.values():
            for site in getattr(pf.doc, "conditions", ()):
                check_same(site.text)
