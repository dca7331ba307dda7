"""memory.yml rules that need more than one file, and memory writes from blocks."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

SKILL = """\
//- skills/card/skill.md
---
description: Replace a card.
---
Help with the card.
"""


def test_settable_fields_with_descriptions_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
  seed: true
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: categorical
      enum_values: [lost, stolen]
      llm_settable: true
      description: Why the card is replaced.
    address:
      type: text
  private:
    note:
      type: text
//- skills/card/responses.yml
responses:
  utter_ask_address:
    - text: Where should we send it?
//- skills/card/skill.md
---
description: Replace a card.
---
Help with the card.

:::ordered_block id=main
steps:
  - id: ask_address
    collect: address
    utterance: utter_ask_address
    description: The postal address for the new card.
  - id: remember
    set_memory:
      note: asked
:::
""",
        silent=[
            "description_required",
            "description_not_exposed",
            "collect_description_overrides",
            "undeclared_entry",
            "collect_on_project",
            "skill_seed",
            "project_llm_settable",
            "unknown_attribute",
            "unknown_type",
            "public_and_private",
            "missing_schema",
            "field_not_mapping",
        ],
    )


def test_description_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
  «description_not_exposed:description»: Project fields never show descriptions.
//- skills/card/memory.yml
schema:
  public:
    «description_required:reason»:
      type: text
      llm_settable: true
    label:
      type: text
      «description_not_exposed:description»: Nobody can set this.
    address:
      type: text
      description: Field text.
//- skills/card/skill.md
---
description: Replace a card.
---
Help with the card.

:::ordered_block id=main
steps:
  - id: ask_address
    collect: address
    description: «collect_description_overrides:Step text.»
:::
""",
        severities={"collect_description_overrides": "warning"},
    )


def test_collect_and_set_memory_targets(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
//- skills/card/memory.yml
schema:
  private:
    reason:
      type: text
      description: Why.
//- skills/card/skill.md
---
description: Replace a card.
---
Help.

:::ordered_block id=main
steps:
  - id: a
    collect: «collect_on_project:authenticated»
  - id: b
    collect: «undeclared_entry:reasn»
  - id: c
    collect: reason
  - id: d
    set_memory:
      authenticated: true
      «undeclared_entry:card.reason»: x
:::
""",
    )


def test_project_file_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
authenticated:
  type: bool
  «project_llm_settable:llm_settable»: true
tier: «field_not_mapping:text»
plan:
  type: «unknown_type:string»
  «unknown_attribute:colour»: red
  «engine_3_22_attribute:mutable»: true
"""
        + SKILL,
        severities={"field_not_mapping": "warning", "unknown_type": "warning"},
    )


def test_root_memory_in_skill_shape(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
«project_file_in_skill_shape:schema»:
  public:
    authenticated:
      type: bool
//- skills/card/skill.md
---
description: Replace a card.
---
if: «prose.unknown_memory_key:session.project.authenticated»
Greet.
""",
    )


def test_skill_file_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
«legacy.syntax:access»:
  deny_read: []
schema:
  public:
    reason:
      type: text
      «skill_seed:seed»: true
  private:
    «public_and_private:reason»:
      type: text
"""
        + SKILL,
    )


def test_flat_skill_memory_declares_nothing(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
«missing_schema:reason»:
  type: text
//- skills/card/skill.md
---
description: Replace a card.
---
if: «prose.unknown_memory_key:session.card.reason»
Greet.
""",
    )
