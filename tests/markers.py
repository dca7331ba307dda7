"""Inline range markers for parser tests.

``«text»`` marks a range: the guillemets are removed from the fixture and the range of
``text`` (code-point offsets into the cleaned text) is returned. Markers may nest; the
ranges come back in the order their ``«`` appears::

    text, r = marked("a: «b»\\n")
    assert r[0] == TextRange(3, 4)
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from mantle_lsp.syntax.errors import SyntaxIssue
from mantle_lsp.syntax.text import TextRange

OPEN, CLOSE = "«", "»"


def marked(fixture: str, dedent: bool = True) -> tuple[str, list[TextRange]]:
    """Strip ``«…»`` markers from ``fixture``; return the text and the marked ranges."""
    if dedent:
        fixture = textwrap.dedent(fixture)
    out: list[str] = []
    opened: list[tuple[int, int]] = []  # (order, start)
    ranges: dict[int, TextRange] = {}
    order = 0
    for ch in fixture:
        if ch == OPEN:
            opened.append((order, len(out)))
            order += 1
        elif ch == CLOSE:
            assert opened, "unbalanced » in fixture"
            index, start = opened.pop()
            ranges[index] = TextRange(start, len(out))
        else:
            out.append(ch)
    assert not opened, "unbalanced « in fixture"
    return "".join(out), [ranges[k] for k in sorted(ranges)]


def issue_list(issues: Iterable[SyntaxIssue]) -> list[tuple[str, str, TextRange]]:
    """``(code, severity, range)`` of each issue, sorted by position then code."""
    return sorted(((i.code, i.severity, i.range) for i in issues), key=lambda t: (t[2], t[0], t[1]))


def only(issues: Iterable[SyntaxIssue], code: str) -> list[SyntaxIssue]:
    """The issues with exactly this code, in report order."""
    return [i for i in issues if i.code == code]


def codes(issues: Iterable[SyntaxIssue]) -> list[str]:
    return [i.code for i in issues]


def excerpt(text: str, rng: TextRange) -> str:
    return text[rng.start : rng.end]


# Fragments that random documents for the "never raises" properties are built from.
FRAGMENTS = [
    "---\n", "description: x\n", ":::ordered_block id=m\n", ":::\n", "steps:\n", "  - id: a\n",
    "    instructions: |\n", "      @memory.s.a @tool.x session.a.b\n", "    next:\n",
    "      - if: x\n", "        then: a\n", "      - else: b\n", "if: x\n", "else:\n", "\n",
    "  \n", "\t", "'", '"', "\\", "{", "}", "[", "]", ": ", "- ", "&a ", "*a ", "<<: ",
    "!!str ", "|\n", ">-\n", "utter:\n", "  - u: {on: activate, when: x}\n",
    "tool_constraints:\n", "  - t:\n", "      requires: x\n", "schema:\n", "  public:\n",
    "    f: {type: text, seed: true}\n", "responses:\n", "  u:\n",
    "    - text: {session.a.b} {x}\n", "      buttons:\n", "        - title: t\n",
    "          payload: set:session.a.b=c\n", "agent:\n", "orchestrator:\n",
    "  preconditions:\n", "    p: {satisfied_when: x, resolve_with: y}\n", "😀", "é", "#",
    "--- \n", "...\n", "?", "@", "@block.zz", "`", "x",
]  # fmt: skip
