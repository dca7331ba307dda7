"""Type-aware condition warnings: enum values, type mismatches, ordering, never-equal."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

MEMORY = """\
//- memory.yml
tier:
  type: categorical
  enum_values: [gold, silver]
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
    locked:
      type: bool
    name:
      type: text
    amount:
      type: float
"""


def test_well_typed_comparisons_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Card.
---
if: session.card.reason == 'lost' and session.project.tier != "gold"
A.

if: session.card.locked == True or 0 < session.card.amount <= 100.5
B.

if: session.card.name == 'x' and session.card.reason != None
C.
""",
        silent=["type_mismatch", "ordering_on_non_numeric", "enum_value", "never_equal"],
    )


def test_type_warnings(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MEMORY
        + """\
//- skills/card/skill.md
---
description: Card.
---
if: session.card.reason == «enum_value:'stoln'» or session.project.tier == «enum_value:'bronze'»
A.

if: session.card.locked == «type_mismatch:'true'» and session.card.amount == «type_mismatch:'5'»
B.

if: session.card.name «ordering_on_non_numeric:>» 'a' or session.card.name == «type_mismatch:3»
C.

if: session.card.reason == «never_equal:...»
D.
""",
        severities={"enum_value": "warning", "type_mismatch": "warning"},
    )
