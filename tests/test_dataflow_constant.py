"""Conditions a never-written field decides (lsp.condition.constant_never_written): the
value is worked out with the engine's semantics, three-valued (the never-written fields
None, every other field unknown), and reported only when it is decided."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantle_lsp.ide.rules.dataflow import constant_parts
from mantle_lsp.model.evaluation import evaluate
from mantle_lsp.syntax.conditions import parse_condition
from support import check_clean, check_diagnostics

NEVER = frozenset({"card.reason", "project.tier"})


def _value(text: str) -> bool | None:
    """The condition's value: True/False when decided, None when not."""
    tree = parse_condition(text).tree
    assert tree is not None, text
    v = evaluate(tree, dict.fromkeys(NEVER))
    return bool(v.value) if v.decided else None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("session.card.reason == 'lost'", False),
        ("session.card.reason != 'lost'", True),
        ("session.card.reason == None", True),
        ("session.card.reason != None", False),
        ("None == session.card.reason", True),
        ("session.card.reason", False),
        ("not session.card.reason", True),
        ("not session.card.reason == 'x'", True),
        ("session.card.reason == session.project.tier", True),
        ("session.card.other == 'x' and session.card.reason == 'y'", False),
        ("session.card.reason == 'y' and session.card.other == 'x'", False),
        ("session.card.other == 'x' or session.card.reason == None", True),
        ("session.card.other == 'x' or session.card.reason == 'y'", None),
        ("session.card.other == 'x' and session.card.reason == None", None),
        ("session.card.other", None),
        ("session.card.reason == session.card.other", None),
        # a chain is the `and` of its links
        ("session.card.reason == None == session.card.other", None),
        ("session.card.reason == 'a' == session.card.other", False),
        # an ordering on None fails at run time: never called decided
        ("session.card.reason < 3", None),
        ("not session.card.reason > 3", None),
        ("session.card.reason > 3 or session.card.reason == None", None),
        # ... but short-circuiting before it, or no failure possible before the decider
        ("session.card.reason == None or session.card.reason > 3", True),
        ("session.card.amount > 3 and session.card.reason == 'x'", None),
        ("session.card.reason == 'x' and session.card.amount > 3", False),
        ("(session.card.amount > 3) == session.card.reason", None),
        ("not (session.card.reason > 3)", None),
        ("(session.card.reason > 3) == session.card.other", None),
        # the engine's `and`/`or` give booleans, and the result is truthiness
        ("(session.card.reason or 0) == False", True),
        ("1 == 1.0 and session.card.reason == None", True),
    ],
)
def test_three_valued_evaluation(text: str, value: bool | None) -> None:
    assert _value(text) is value


def test_the_largest_decided_parts_are_reported() -> None:
    def parts(text: str) -> list[tuple[str, bool]]:
        tree = parse_condition(text).tree
        assert tree is not None
        return [(text[p.range.start : p.range.end], v) for p, v, _ in constant_parts(tree, NEVER)]

    assert parts("session.card.reason == 'x'") == [("session.card.reason == 'x'", False)]
    assert parts("session.card.other and not (session.card.reason == 'x')") == [
        ("not (session.card.reason == 'x')", True)
    ]
    assert parts("session.card.other or session.card.reason") == [("session.card.reason", False)]
    # literals alone decide the whole (not the field): only the part the field decides
    assert parts("session.card.reason == 'x' or True") == [("session.card.reason == 'x'", False)]
    # an ordering on None fails: nothing in it, nor after it, is reported
    assert parts("session.card.reason > 2 and session.project.tier") == []
    assert parts("session.card.other or session.card.reason > 2 or session.project.tier") == []
    assert parts("session.project.tier or session.card.reason > 2") == []  # it always fails
    # the field is only compared with something unknown: nothing
    assert parts("session.card.reason == session.card.other") == []


def test_conditions_on_a_never_written_field_say_which_value_and_why(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- memory.yml
tier:
  type: text
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
    blocked:
      type: bool
      llm_settable: true
      description: Whether the card is blocked.
//- skills/card/skill.md
---
description: Card.
---
Help the user with their card.

if: «constant_never_written:session.card.reason == "stolen"»
  Block the old card first.

if: «constant_never_written:session.card.reason == "lost"» or session.card.blocked
  Say sorry.

if: «constant_never_written:session.card.blocked and session.project.tier != None»
  Be extra polite.

:::ordered_block id=main
steps:
  - id: ask
    collect: blocked
    next:
      - if: "«constant_never_written:session.card.reason == None»"
        then: done
      - else: END
  - id: done
    action: utter_done
:::
//- skills/card/responses.yml
responses:
  utter_done:
    - text: Done, {card.reason}.
      condition: «constant_never_written:not session.card.reason»
    - text: Done.
""",
        severities={"constant_never_written": "hint"},
    )
    msgs = [
        g[5]
        for g in got
        if g[3] == "lsp.condition.constant_never_written" and g[0] == "skills/card/skill.md"
    ]
    assert msgs[0] == (
        "this prose `if:` condition is always false: `card.reason` is never written, so it "
        "is always None"
    )
    assert msgs[1] == (
        '`session.card.reason == "lost"` is always false: `card.reason` is never written, '
        "so it is always None"
    )
    assert "this `next:` branch `if:` condition is always true" in msgs[3]
    assert "response variant `condition` is always true" in next(
        g[5] for g in got if g[0] == "skills/card/responses.yml"
    )


def test_conditions_the_field_does_not_decide_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- memory.yml
tier:
  type: text
  seed: true
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: float
    amount:
      type: float
      llm_settable: true
      description: The amount.
    blocked:
      type: bool
      llm_settable: true
      description: Whether the card is blocked.
//- skills/card/skill.md
---
description: Card.
---
Help the user with their card.

if: session.card.reason < 3
  An ordering on None fails: the engine hides the paragraph, it is not "false".

if: session.card.reason > 3 or session.card.blocked
  Same.

if: session.card.reason == session.card.amount
  Compared with something unknown.

if: session.project.tier == "gold"
  A field written (seeded) at session start.

if: session.card.blocked == True
  No never-written field at all.
""",
        silent=["constant_never_written"],
    )


def test_an_unreadable_field_gets_its_own_error_not_the_hint(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  private:
    card_id:
      type: text
//- skills/card/skill.md
---
description: Card.
---
Mind @memory.card.card_id.
//- skills/billing/skill.md
---
description: Billing.
---
Bill the user.

if: «unknown_memory_key:session.card.card_id» == "x"
  Go.
""",
        silent=["constant_never_written"],
    )
