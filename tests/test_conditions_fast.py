"""The fast path (Python's own parser for simple conditions) builds exactly what the lark
parser builds, on every input it accepts; it declines everything else."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.model.project import Project
from mantle_lsp.syntax.conditions import _parse_lark
from mantle_lsp.syntax.conditions_fast import parse_fast
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


def test_every_condition_of_the_examples_parses_the_same_both_ways() -> None:
    for example in ("telecom", "telecom-broken"):
        proj = Project.load(ROOT / "examples" / example)
        for pf in proj.files.values():
            for site in getattr(pf.doc, "conditions", ()):
                check_same(site.text)
