"""Data-flow checks: fields read that nothing can write, project fields two skills write."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

TOOLS_HEADER = "from rasa.mantle.tools.decorator import ToolContext, tool\n"


def test_a_field_read_but_never_written_is_reported_on_its_declaration(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- memory.yml
«never_written:tier»:
  type: text
//- skills/card/memory.yml
schema:
  public:
    «never_written:note»:
      type: text
    reason:
      type: text
      llm_settable: true
      description: Why the card is replaced.
//- skills/card/skill.md
---
description: Card.
---
Mind the note: @memory.card.note and @memory.card.reason.

if: session.project.tier == "gold"
  Be extra polite.
""",
        severities={"never_written": "hint"},
    )
    msgs = {g[3]: g[5] for g in got if g[0] == "memory.yml"}
    tier = msgs["lsp.memory.never_written"]
    assert "condition at skills/card/skill.md:6" in tier
    assert "always None" in tier and "`== None` is always true" in tier
    note = next(g[5] for g in got if g[0] == "skills/card/memory.yml")
    assert "`@memory` token at skills/card/skill.md:4" in note
    assert "condition" not in note.split("(")[1].split(")")[0]


def test_every_kind_of_writer_silences_never_written(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- memory.yml
seeded:
  type: text
  seed: true
by_button:
  type: bool
by_shared_tool:
  type: text
//- skills/card/memory.yml
schema:
  public:
    settable:
      type: text
      llm_settable: true
      description: Set by the model.
    collected:
      type: text
      description: What the user wants.
    stepped:
      type: text
    by_tool:
      type: text
    by_constant:
      type: text
    by_loop:
      type: text
    initial:
      type: text
      initial_value: none yet
//- skills/card/responses.yml
responses:
  utter_ask_collected:
    - text: What?
      buttons:
        - title: Sure
          payload: set:session.project.by_button=true
//- skills/card/tools.py
"""
        + TOOLS_HEADER
        + """
KEY = "by_constant"


@tool(description="Ship it.")
async def ship(context: ToolContext = None):
    context.memory.set("by_tool", "x")
    context.memory.set(KEY, "x")
    for key, value in {"by_loop": "x"}.items():
        context.memory.set(key, value)
    return None

//- tools/common.py
"""
        + TOOLS_HEADER
        + """

@tool(description="Shared.")
async def remember(context: ToolContext = None):
    context.memory.set("by_shared_tool", "x")
    return None
//- skills/card/skill.md
---
description: Card.
import_tools:
  - remember
---
Use @tool.ship and @tool.remember.
Read @memory.project.seeded @memory.project.by_button @memory.project.by_shared_tool
@memory.card.settable @memory.card.collected @memory.card.stepped @memory.card.by_tool
@memory.card.by_constant @memory.card.by_loop @memory.card.initial.

:::ordered_block id=main
steps:
  - id: ask
    collect: collected
    utterance: utter_ask_collected
  - id: remember
    set_memory:
      stepped: done
:::
""",
        silent=["never_written"],
    )


def test_code_with_keys_that_cannot_be_known_silences_never_written(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- memory.yml
tier:
  type: text
//- skills/card/memory.yml
schema:
  public:
    note:
      type: text
//- skills/card/tools.py
"""
        + TOOLS_HEADER
        + """

@tool(description="Remember anything.")
async def remember(context: ToolContext = None, name: str = "", value: str = ""):
    context.memory.set(name, value)
    return None
//- skills/card/skill.md
---
description: Card.
---
Use @tool.remember. Read @memory.card.note and @memory.project.tier.
""",
        silent=["never_written"],
    )


def test_buttons_made_by_a_tool_silence_never_written(tmp_path: Path) -> None:
    """And `unused_field`: such buttons may write the fields of their skill and the
    project's, read or not."""
    check_clean(
        tmp_path,
        """\
//- memory.yml
tier:
  type: text
level:
  type: text
//- skills/card/memory.yml
schema:
  public:
    choice:
      type: text
  private:
    picked:
      type: text
//- skills/card/responses.yml
responses:
  utter_pick:
    - text: Pick one.
      buttons:
        source: card_buttons
//- skills/card/tools.py
"""
        + TOOLS_HEADER
        + """

@tool(description="The buttons.")
async def card_buttons(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Card.
---
Offer utter_pick. Read @memory.card.choice and @memory.project.tier.
""",
        silent=["never_written", "unused_field"],
    )


def test_a_project_field_two_skills_write_is_reported_on_the_other_writers(
    tmp_path: Path,
) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- memory.yml
customer_id:
  type: text
//- skills/billing/skill.md
---
description: Billing.
---
Bill @memory.project.customer_id.

:::ordered_block id=main
steps:
  - id: reset
    set_memory:
      customer_id: guest
:::
//- skills/login/tools.py
"""
        + TOOLS_HEADER
        + """

@tool(description="Log in.")
async def log_in(context: ToolContext = None):
    context.memory.set("project.«project_field_written_twice:customer_id»", "c-1")
    context.memory.set("project.«project_field_written_twice:customer_id»", "c-2")
    return None
//- skills/login/skill.md
---
description: Log in.
---
Use @tool.log_in.
""",
        severities={"project_field_written_twice": "hint"},
    )
    msgs = [g[5] for g in got if g[3].endswith("project_field_written_twice")]
    assert len(msgs) == 2
    msg = msgs[0]
    assert "skill `billing`" in msg and "skills/billing/skill.md:10" in msg
    assert "refused" in msg


def test_one_skill_writing_a_project_field_in_several_places_is_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- memory.yml
customer_id:
  type: text
//- skills/login/tools.py
"""
        + TOOLS_HEADER
        + """

@tool(description="Log in.")
async def log_in(context: ToolContext = None):
    context.memory.set("project.customer_id", "c-1")
    return None
//- skills/login/skill.md
---
description: Log in.
---
Use @tool.log_in. Greet @memory.project.customer_id.

:::ordered_block id=main
steps:
  - id: guest
    set_memory:
      customer_id: guest
:::
//- skills/billing/skill.md
---
description: Billing.
---
Bill @memory.project.customer_id.
""",
        silent=["project_field_written_twice", "never_written"],
    )


def test_a_mutable_project_field_on_3_22_may_be_written_twice(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- requirements.txt
rasa-pro==3.22.0.dev1
//- memory.yml
customer_id:
  type: text
  mutable: true
//- skills/billing/skill.md
---
description: Billing.
---
Bill @memory.project.customer_id.

:::ordered_block id=main
steps:
  - id: reset
    set_memory:
      customer_id: guest
:::
//- skills/login/skill.md
---
description: Log in.
---
Log in.

:::ordered_block id=main
steps:
  - id: reset
    set_memory:
      customer_id: guest
:::
""",
        silent=["project_field_written_twice"],
    )


def test_editing_what_silences_never_written_updates_the_editor_like_a_fresh_load(
    tmp_path: Path,
) -> None:
    """The server keeps which skills make buttons with a tool and which use memory with
    unknown keys between edits (model.project: dynamic_memory_skills,
    tool_button_sources): an edit to a tools.py or responses.yml that changes them must
    show at once, as a fresh load would."""
    from mantle_lsp.ide.diagnostics import project_diagnostics
    from mantle_lsp.model.project import Project
    from mantle_lsp.model.workspace import Workspace

    root = tmp_path / "agent"
    files = {
        "agent.yml": "name: a\n",
        "memory.yml": "tier:\n  type: text\n",
        "skills/card/skill.md": "---\ndescription: Card.\n---\n"
        "Use @tool.remember and utter_pick. Read @memory.project.tier.\n",
        "skills/card/tools.py": TOOLS_HEADER + '\n\n@tool(description="Remember.")\n'
        'async def remember(context: ToolContext = None, value: str = ""):\n'
        '    context.memory.set("note", value)\n    return None\n',
        "skills/card/responses.yml": "responses:\n  utter_pick:\n    - text: Pick one.\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ws = Workspace()
    [proj] = ws.add_folder(root.resolve())
    root = proj.root

    def never_written() -> bool:
        found = project_diagnostics(proj)
        fresh = Project(root, ws.read)
        fresh.rescan()
        assert found == project_diagnostics(fresh)
        return any("never_written" in d.code for ds in found.values() for d in ds)

    assert never_written()
    tools, resp = root / "skills/card/tools.py", root / "skills/card/responses.yml"
    dynamic = files["skills/card/tools.py"].replace('set("note", value)', "set(value, value)")
    ws.open_buffer(tools, dynamic, 2)
    assert not never_written(), "memory with a key that cannot be known"
    ws.open_buffer(tools, files["skills/card/tools.py"], 3)
    assert never_written()
    buttons = files["skills/card/responses.yml"] + "      buttons:\n        source: remember\n"
    ws.open_buffer(resp, buttons, 2)
    assert not never_written(), "buttons made by a tool"
    ws.open_buffer(resp, files["skills/card/responses.yml"], 3)
    assert never_written()


def test_a_validation_hook_is_no_writer_and_a_value_is_a_use(tmp_path: Path) -> None:
    """The engine runs `run_after_setting_<entry>` after a settable write of the field
    (the model's set_fields, a correction, a `set:` button), never in its place: a field
    that nothing else writes stays None (never_written) or is unused, whatever hooks the
    project has; the hook itself never runs, which `invalid_memory_validation_tool` says.
    A field with an `initial_value` holds a value the prompt shows: it is used.
    (`unused_field` and `never_written` ask the same Semantics.field_writers.)"""
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
«never_written:tier»:
  type: text
start:
  type: text
  initial_value: none yet
//- skills/card/memory.yml
schema:
  public:
    «never_written:note»:
      type: text
    «unused_field:checked»:
      type: text
//- skills/card/tools.py
"""
        + TOOLS_HEADER
        + """

@tool(description="Check the note.")
async def «invalid_memory_validation_tool:run_after_setting_note»(context: ToolContext = None):
    return None


@tool(description="Check the tier.")
async def «invalid_memory_validation_tool:run_after_setting_tier»(context: ToolContext = None):
    return None


@tool(description="Check.")
async def «invalid_memory_validation_tool:run_after_setting_checked»(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Card.
---
Read @memory.card.note and @memory.project.tier.
""",
        severities={"never_written": "hint", "unused_field": "hint"},
    )


def test_session_in_prose_reads_nothing_and_writes_nothing(tmp_path: Path) -> None:
    """`session.<ns>.<entry>` in instruction text only names a field (the engine refuses
    it and substitutes nothing): the field it names is still never written — every
    reader and every writer is what Semantics.readers / writers say, and before, this
    form silenced the check as one it did not know."""
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/memory.yml
schema: {public: {«never_written:note»: {type: text}}}
//- skills/card/skill.md
---
description: Card.
---
Mind @memory.card.note, not «session_reference_in_instructions:session.card.note».
""",
        severities={"never_written": "hint"},
    )
