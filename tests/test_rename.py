"""Rename: every place that spells a symbol, refusals with reasons, folder renames, and
the round trip A→B→A giving byte-identical files."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantle_lsp.ide.rename import MENTIONS, prepare_rename, rename, rename_files, rename_symbol
from mantle_lsp.ide.types import FeatureError, WorkspaceEdit
from mantle_lsp.model.project import Project
from mantle_lsp.model.symbols import SymbolKey
from mantle_lsp.syntax.text import TextRange
from support import Fixture, diagnostics_of, write_fixture

# Every symbol kind, each occurrence marked with the label of the rename that changes it.
RICH = """\
//- memory.yml
«pfield:authenticated»:
  type: bool
customer_tier:
  type: text
  writable_by: [«skill:card_replace»]
//- responses.yml
responses:
  «resp:utter_done»:
    - text: All done.
//- agent.yml
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
  preconditions:
    «pre:logged_in»:
      satisfied_when: session.project.«pfield:authenticated»
      resolve_with: login
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up the customer.")
async def «shared:lookup_customer»(reason: str, context: ToolContext = None):
    return context.memory.get("project.«pfield:authenticated»")
//- skills/login/skill.md
---
description: Log the user in.
---
Ask for credentials and confirm them.
//- skills/card_replace/memory.yml
schema:
  public:
    «field:reason»:
      type: categorical
      enum_values: [lost, stolen]
      llm_settable: true
      description: Why the card is replaced.
  private:
    card_id:
      type: text
//- skills/card_replace/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ActivateSkill, ToolResult


@tool(description="Record the reason.")
async def «tool:record»(reason: str, context: ToolContext = None):
    context.memory.set("«field:reason»", reason)
    context.memory.set("customer_tier", "gold")
    return context.memory.get("«skill:card_replace».«field:reason»")


@tool(description="Check the reason.")
async def run_after_setting_«field:reason»(context: ToolContext = None):
    return None


@tool(description="Start the guided flow.")
async def start_flow(context: ToolContext = None):
    return ToolResult(next=ActivateSkill(skill_id="«flow:card_flow»", ordered_block="«block:main»"))
//- skills/card_replace/responses.yml
responses:
  utter_reason:
    - text: "You said {session.«skill:card_replace».«field:reason»} and {«field:reason»}."
      condition: "session.«skill:card_replace».«field:reason» == 'lost'"
    - text: Tell me why.
      buttons:
        - title: Stolen
          payload: "set:session.«skill:card_replace».«field:reason»=stolen"
  «resp:utter_done»:
    - text: Done with the card.
//- skills/card_replace/skill.md
---
description: Replace a lost or stolen card.
precondition: «pre:logged_in»
import_tools:
  - «shared:lookup_customer»
tool_constraints:
  - «tool:record»:
      requires: "not session.«skill:card_replace».«field:reason»"
      on_success: «resp:utter_done»
---
Ask for the `«field:reason»` with @memory.«skill:card_replace».«field:reason», then use \
@tool.«tool:record» (`«tool:record»`).

if: session.«skill:card_replace».«field:reason» == 'lost'
Block the old card first, then start @skill.«flow:card_flow».
//- skills/card_flow/memory.yml
schema:
  private:
    step_count:
      type: int
//- skills/card_flow/skill.md
---
description: Guided card replacement flow, used by «skill:card_replace».
import_tools:
  - «shared:lookup_customer»
---
:::ordered_block id=«block:main»
steps:
  - id: ask
    action: utter_reason
    next: store
  - id: store
    execute_tool: «shared:lookup_customer»
    parameters:
      reason: session.«skill:card_replace».«field:reason»
    next:
      - if: "session.«skill:card_replace».«field:reason» == 'lost'"
        then: "«step:done»"
      - else: «step:done»
  - id: «step:done»
    set_memory:
      step_count: 1
  - id: more
    call: «flow:card_flow»__«sub:sub»
:::

:::ordered_block id=«sub:sub»
steps:
  - id: finish
    action: «resp:utter_done»
:::
//- skills/other/skill.md
---
description: Help with other things. Do NOT activate for «skill:card_replace» requests.
---
if: session.«skill:card_replace».«field:reason» == 'lost'
Offer help, or hand over to @skill.«skill:card_replace».
"""


# -- helpers ---------------------------------------------------------------------------------


def apply_edit(root: Path, edit: WorkspaceEdit) -> None:
    """Apply a WorkspaceEdit the way a client does: text edits (last first), then moves."""
    for path, edits in edit.edits.items():
        assert path.is_relative_to(root), f"edit outside the project: {path}"
        text = path.read_bytes().decode("utf-8")
        for e in sorted(edits, key=lambda e: e.range.start, reverse=True):
            text = text[: e.range.start] + e.new_text + text[e.range.end :]
        path.write_bytes(text.encode("utf-8"))
    for old, new in edit.renames:
        assert old.is_relative_to(root) and new.is_relative_to(root)
        old.rename(new)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def codes(root: Path) -> list[str]:
    return sorted(d[3] for d in diagnostics_of(root))


def expected_after(fx: Fixture, label: str, new_name: str) -> dict[str, str]:
    """Each file's text with the ranges marked ``label`` replaced by ``new_name``."""
    out = dict(fx.files)
    for mk in sorted(fx.marks, key=lambda m: m.start, reverse=True):
        if mk.label == label:
            text = out[mk.path]
            out[mk.path] = text[: mk.start] + new_name + text[mk.end :]
    return out


def cursor_of(fx: Fixture, at: tuple[str, int] | None) -> tuple[Path, int]:
    """The ``$0`` cursor, or the start of the n-th mark with a label."""
    if at is None:
        assert fx.cursor is not None
        rel, offset = fx.cursor
    else:
        mk = [m for m in fx.marks if m.label == at[0]][at[1]]
        rel, offset = mk.path, mk.start + 1
    return fx.root / rel, offset


def check_rename(
    tmp_path: Path,
    fixture: str,
    new_name: str,
    label: str = "r",
    at: tuple[str, int] | None = None,
    moved: tuple[str, str] | None = None,
) -> WorkspaceEdit:
    """Rename at the cursor and compare every file with the fixture where the ranges marked
    ``label`` spell ``new_name`` (all other files unchanged; ``moved`` = a folder move);
    the diagnostics must not change."""
    fx = write_fixture(tmp_path, fixture)
    before = codes(fx.root)
    proj = Project.load(fx.root)
    path, offset = cursor_of(fx, at)
    edit = rename(proj, path, offset, new_name)
    assert isinstance(edit, WorkspaceEdit), edit
    apply_edit(fx.root, edit)
    expected = expected_after(fx, label, new_name)
    if moved is not None:
        old, new = moved
        expected = {
            (new + rel[len(old) :] if rel.startswith(old + "/") else rel): text
            for rel, text in expected.items()
        }
    got = {rel: data.decode("utf-8") for rel, data in snapshot(fx.root).items()}
    assert sorted(got) == sorted(expected)
    for rel in expected:
        assert got[rel] == expected[rel], rel
    assert codes(fx.root) == before
    return edit


def rename_error(
    tmp_path: Path, fixture: str, new_name: str, at: tuple[str, int] | None = None
) -> str:
    fx = write_fixture(tmp_path, fixture)
    proj = Project.load(fx.root)
    path, offset = cursor_of(fx, at)
    got = rename(proj, path, offset, new_name)
    assert isinstance(got, FeatureError), got
    return got.message


def prepare(tmp_path: Path, fixture: str) -> tuple[Fixture, TextRange | FeatureError]:
    fx = write_fixture(tmp_path, fixture)
    proj = Project.load(fx.root)
    path, offset = cursor_of(fx, None)
    return fx, prepare_rename(proj, path, offset)


# -- every kind on the rich fixture ------------------------------------------------------------


@pytest.mark.parametrize(
    "at",
    [
        ("field", 0),  # the declaration key in memory.yml
        ("field", 2),  # the qualified tool string "card_replace.reason"
        ("field", 5),  # a bare placeholder inside a double-quoted scalar
        ("field", 9),  # a backticked soft reference in prose
    ],
)
def test_field_rename_from_declaration_or_any_reference(
    tmp_path: Path, at: tuple[str, int]
) -> None:
    """Declaration key, tool strings (bare and qualified), the hook tool name,
    placeholders (qualified and bare), quoted conditions and `set:` payloads (quotes
    kept), `@memory`, backticks, `collect`-free prose and `execute_tool` parameters —
    but not the Python parameter `reason` or the execute parameter key `reason:`."""
    check_rename(tmp_path, RICH, "cause", "field", at)


def test_project_field_rename(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "logged_on", "pfield", ("pfield", 1))


def test_skill_rename_from_a_namespace_moves_the_folder(tmp_path: Path) -> None:
    """Namespaces in conditions, tokens, placeholders, payloads and tool strings,
    `@skill`, `writable_by` and exact mentions in descriptions; the folder moves."""
    edit = check_rename(
        tmp_path, RICH, "card_swap", "skill", ("skill", 4),
        moved=("skills/card_replace", "skills/card_swap"),
    )  # fmt: skip
    root = tmp_path
    assert edit.renames == ((root / "skills/card_replace", root / "skills/card_swap"),)


def test_skill_rename_updates_its_own_block_addresses_and_activations(tmp_path: Path) -> None:
    """`call: card_flow__sub` inside card_flow, `ActivateSkill(skill_id="card_flow")`,
    `@skill.card_flow`."""
    check_rename(
        tmp_path, RICH, "guided", "flow", ("flow", 1),
        moved=("skills/card_flow", "skills/guided"),
    )  # fmt: skip


def test_block_rename_updates_fence_call_and_activate_skill(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "entry", "block", ("block", 1))


def test_block_rename_from_a_skill_qualified_call(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "wrap_up", "sub", ("sub", 0))


def test_step_rename_updates_next_then_else_and_keeps_quotes(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "finished", "step", ("step", 0))


def test_response_defined_in_two_files_is_renamed_in_both(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "utter_all_done", "resp", ("resp", 2))


def test_local_tool_rename(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "log_reason", "tool", ("tool", 1))


def test_shared_tool_rename(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "find_customer", "shared", ("shared", 0))


def test_precondition_rename(tmp_path: Path) -> None:
    check_rename(tmp_path, RICH, "signed_in", "pre", ("pre", 1))


ROUND_TRIPS: list[tuple[SymbolKey, str]] = [
    (("field", "card_replace", "reason"), "cause"),
    (("field", "project", "authenticated"), "logged_on"),
    (("skill", "card_replace"), "card_swap"),
    (("skill", "card_flow"), "guided"),
    (("block", "card_flow", "main"), "entry"),
    (("block", "card_flow", "sub"), "wrap_up"),
    (("step", "card_flow", "main", "done"), "finished"),
    (("response", "utter_done"), "utter_all_done"),
    (("tool", "card_replace", "record"), "log_reason"),
    (("tool", "", "lookup_customer"), "find_customer"),
    (("precondition", "logged_in"), "signed_in"),
]


@pytest.mark.parametrize(("key", "new"), ROUND_TRIPS, ids=lambda x: str(x))
def test_rename_and_back_is_byte_identical(tmp_path: Path, key: SymbolKey, new: str) -> None:
    fx = write_fixture(tmp_path, RICH)
    original = snapshot(fx.root)
    edit = rename_symbol(Project.load(fx.root), key, new)
    assert isinstance(edit, WorkspaceEdit), edit
    apply_edit(fx.root, edit)
    assert snapshot(fx.root) != original
    back = rename_symbol(Project.load(fx.root), (*key[:-1], new), key[-1])
    assert isinstance(back, WorkspaceEdit), back
    apply_edit(fx.root, back)
    assert snapshot(fx.root) == original


# -- focused cases with a cursor ---------------------------------------------------------------

CARD = """\
//- memory.yml
status:
  type: text
//- skills/card/memory.yml
schema:
  public:
    «r:reason»:
      type: text
//- skills/card/responses.yml
responses:
  utter_reason:
    - text: "You said '{«r:reason»}'."
//- skills/card/skill.md
---
description: Replace a card.
---
Ask why with @memory.card.«r:reason»$0.
"""


def test_bare_placeholder_is_renamed(tmp_path: Path) -> None:
    check_rename(tmp_path, CARD, "cause")


def test_single_quoted_yaml_scalar_keeps_its_quotes(tmp_path: Path) -> None:
    check_rename(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    '«r:reason»':
      type: text
//- skills/card/skill.md
---
description: Replace a card.
tool_constraints:
  - lookup:
      requires: 'session.card.«r:reason» != None'
---
Ask why with @memory.card.«r:reason».
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up.")
async def lookup(context: ToolContext = None):
    return context.memory.get('«r:reason»$0')
""",
        "cause",
    )


def test_prepare_rename_gives_the_name_range(tmp_path: Path) -> None:
    fx, got = prepare(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up.")
async def lookup(context: ToolContext = None):
    return context.memory.get("card.$0«r:reason»")
""",
    )
    [mk] = fx.marks
    assert got == TextRange(mk.start, mk.end)


def test_prepare_rename_on_a_namespace_gives_the_skill_id(tmp_path: Path) -> None:
    fx, got = prepare(
        tmp_path,
        CARD.replace("@memory.card.«r:reason»$0", "@memory.$0«ns:card».reason"),
    )
    [mk] = [m for m in fx.marks if m.label == "ns"]
    assert got == TextRange(mk.start, mk.end)


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        (
            """\
//- skills/card/skill.md
---
description: Replace a card.
---
if: session.default_completed.wants_to$0_continue
Continue.
""",
            "bundled with the engine",
        ),
        (
            """\
//- skills/card/skill.md
---
description: Replace a card.
---
Plain $0text.
""",
            "nothing to rename here",
        ),
        (
            """\
//- skills/card/skill.md
---
na$0me: Card
description: Replace a card.
---
Text.
""",
            "display label",
        ),
        (
            """\
//- skills/card/skill.md
---
description: Replace a card.
---
Then call @tool.comp$0lete.
""",
            "framework tool",
        ),
        (
            """\
//- skills/default_completed/skill.md
---
description: Our own closing question.
---
Ask if there is anything else, like @skill.default_comp$0leted.
""",
            "overrides a bundled default skill",
        ),
        (
            """\
//- skills/card/skill.md
---
description: Replace a card.
utter:
  - utter_ask_csat$0_score:
      on: activate
---
Text.
//- responses.yml
responses:
  utter_ask_csat_score:
    - text: How did we do?
""",
            "overridden by this project but bundled",
        ),
        (
            """\
//- skills/card/tools.py
from lib.helpers import look$0up
""",
            "imported into its module",
        ),
    ],
)
def test_prepare_rename_refuses_with_a_reason(tmp_path: Path, fixture: str, message: str) -> None:
    _, got = prepare(tmp_path, fixture)
    assert isinstance(got, FeatureError), got
    assert message in got.message


def test_system_namespace_is_not_renamable(tmp_path: Path) -> None:
    from mantle_lsp.ide.rename import rename_symbol as rs

    fx = write_fixture(tmp_path, CARD)
    got = rs(Project.load(fx.root), ("field", "system", "pending_tool_confirmation"), "x")
    assert isinstance(got, FeatureError) and "system" in got.message


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("class", "Python keyword"),
        ("2nd", "not a Python identifier"),
        ("my-reason", "could not be written in a condition"),
        ("reason", "already called `reason`"),
    ],
)
def test_invalid_field_names_are_refused(tmp_path: Path, new: str, message: str) -> None:
    assert message in rename_error(tmp_path, CARD, new)


def test_field_collision_in_the_same_namespace(tmp_path: Path) -> None:
    fixture = CARD.replace("      type: text\n//- skills/card/responses", (
        "      type: text\n  private:\n    cause:\n      type: text\n//- skills/card/responses"
    ))  # fmt: skip
    assert "`card.cause` already exists" in rename_error(tmp_path, fixture, "cause")


def test_renaming_a_skill_field_over_a_bare_project_name_is_refused(tmp_path: Path) -> None:
    """`{status}` in card means project.status; a field card.status would take it over."""
    fixture = CARD.replace("You said '{«r:reason»}'.", "You said {«r:reason»} ({status}).")
    message = rename_error(tmp_path, fixture, "status")
    assert "bare name `status`" in message and "take it over" in message


def test_renaming_a_project_field_onto_a_skill_field_name_is_refused(tmp_path: Path) -> None:
    message = rename_error(
        tmp_path,
        CARD.replace("You said '{«r:reason»}'.", "Status {sta$0tus}.").replace(
            "@memory.card.«r:reason»$0", "@memory.card.reason"
        ),
        "reason",
    )
    assert "means its own field `card.reason`" in message


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("project", "reserved namespace"),
        ("system", "reserved namespace"),
        ("card.new", "cannot contain `.`"),
        ("card-new", "not a Python identifier"),
        ("_card", "skipped by the engine"),
        ("other", "skill `other` already exists"),
        ("default_completed", "bundled default skill"),
    ],
)
def test_invalid_skill_ids_are_refused(tmp_path: Path, new: str, message: str) -> None:
    fixture = CARD.replace("@memory.card.«r:reason»$0", "@memory.ca$0rd.reason") + (
        "//- skills/other/skill.md\n---\ndescription: Other.\n---\nText.\n"
    )
    assert message in rename_error(tmp_path, fixture, new)


FLOW = """\
//- skills/flow/skill.md
---
description: A flow.
---
:::ordered_block id=main
steps:
  - id: ask
    action: utter_ask
    next: d$0one
  - id: done
    call: other
:::

:::ordered_block id=second
steps:
  - id: x
    action: utter_ask
:::
//- skills/other/skill.md
---
description: Other.
---
Text.
//- responses.yml
responses:
  utter_ask:
    - text: Hi.
"""


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("END", "reserved end-of-block target"),
        ("a b", "letters, digits, `_` and `-`"),
        ("ask", "step `ask` already exists in block `flow:main`"),
    ],
)
def test_invalid_step_ids_are_refused(tmp_path: Path, new: str, message: str) -> None:
    assert message in rename_error(tmp_path, FLOW, new)


def test_block_collisions_and_capture_of_a_called_skill(tmp_path: Path) -> None:
    fixture = FLOW.replace("id=main", "id=ma$0in").replace("next: d$0one", "next: done")
    assert "already exists in skill `flow`" in rename_error(tmp_path, fixture, "second")
    assert "would take that call over" in rename_error(tmp_path / "b", fixture, "other")


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("utter ask", "without spaces"),
        ("utter:ask", "would need quoting in YAML"),
        ("", "non-empty"),
        ("ask_prompt", "only names responses starting with `utter_`"),
    ],
)
def test_invalid_response_names_are_refused(tmp_path: Path, new: str, message: str) -> None:
    fixture = FLOW.replace("action: utter_ask\n    next", "action: utter_$0ask\n    next").replace(
        "next: d$0one", "next: done"
    )
    assert message in rename_error(tmp_path, fixture, new)


TOOLS = """\
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Shared.")
async def fetch(context: ToolContext = None):
    return None
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Local.")
async def lookup(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Replace a card.
import_tools:
  - fetch
---
Use @tool.look$0up and @tool.fetch.
"""


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("complete", "framework tool name"),
        ("fetch", "would shadow it"),
        ("look-up", "not a Python identifier"),
    ],
)
def test_invalid_tool_names_are_refused(tmp_path: Path, new: str, message: str) -> None:
    assert message in rename_error(tmp_path, TOOLS, new)


def test_shared_tool_cannot_be_shadowed_or_take_the_set_prefix(tmp_path: Path) -> None:
    fixture = TOOLS.replace("@tool.look$0up and @tool.fetch", "@tool.lookup and @tool.fe$0tch")
    assert "would shadow the renamed shared tool" in rename_error(tmp_path, fixture, "lookup")
    assert "`set_` are dropped" in rename_error(tmp_path / "b", fixture, "set_thing")


def test_field_rename_renames_the_hook_and_refuses_a_hook_collision(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/memory.yml
schema:
  public:
    «r:reason»$0:
      type: text
      llm_settable: true
      description: Why.
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Check.")
async def run_after_setting_«r:reason»(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Replace a card.
---
Ask why.
"""
    check_rename(tmp_path, fixture, "cause")
    clash = fixture.replace(
        "    return None\n//- skills/card/skill.md",
        '    return None\n\n\n@tool(description="Other.")\n'
        "async def run_after_setting_cause(context: ToolContext = None):\n"
        "    return None\n//- skills/card/skill.md",
    )
    assert "`run_after_setting_cause` already exists" in rename_error(
        tmp_path / "b", clash, "cause"
    )


def test_rename_files_updates_references_without_moving_the_folder(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, RICH)
    proj = Project.load(fx.root)
    skills = fx.root / "skills"
    edit = rename_files(proj, [(skills / "card_replace", skills / "card_swap")])
    assert edit.renames == ()
    apply_edit(fx.root, edit)
    expected = expected_after(fx, "skill", "card_swap")
    for rel, text in expected.items():
        assert (fx.root / rel).read_text(encoding="utf-8") == text, rel
    # unrelated renames (files, folders outside skills/, bundled ids) change nothing
    other = rename_files(
        proj,
        [
            (fx.root / "tools/shared.py", fx.root / "tools/common.py"),
            (fx.root / "lib", fx.root / "library"),
            (tmp_path.parent / "elsewhere", tmp_path.parent / "other"),
        ],
    )
    assert other.edits == {} and other.renames == ()


def test_an_occurrence_that_does_not_spell_the_name_blocks_the_rename(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/memory.yml
schema:
  public:
    reason$0:
      type: text
//- skills/card/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up.")
async def lookup(context: ToolContext = None):
    return context.memory.get("rea" "son")
//- skills/card/skill.md
---
description: Replace a card.
---
Ask why.
"""
    message = rename_error(tmp_path, fixture, "cause")
    assert "cannot rename every occurrence" in message
    assert "skills/card/tools.py:6" in message


def test_model_group_and_mcp_server_renames(tmp_path: Path) -> None:
    config = """\
//- agent.yml
agent:
  persona: Careful.
orchestrator:
  model_group: «mg:main»
//- integrations.yml
model_groups:
  - id: «mg:main»
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: «mcp:banking»
    url: http://localhost:8000
//- skills/card/skill.md
---
description: Replace a card.
import_tools:
  - mcp/«mcp:banking»:get_balance
---
Check the balance with @tool.get_balance.
"""
    check_rename(tmp_path / "a", config, "primary", "mg", ("mg", 0))
    check_rename(tmp_path / "b", config, "core-bank", "mcp", ("mcp", 1))
    assert "not a valid MCP server name" in rename_error(
        tmp_path / "c", config, "_bank", ("mcp", 0)
    )


# -- backticked mentions in model-facing text (issue 29) ---------------------------------------

# `user_country` is a project field; other skills tell the model to set it in prose, step
# instructions, descriptions and response texts. `shadow` has a field of the same name:
# there the backticked name means its own field.
USER_COUNTRY = """\
//- memory.yml
«r:user_country»:
  type: text
  description: The country, as `«r:user_country»` holds it (an ISO code).
//- responses.yml
responses:
  utter_country:
    - text: "Your `«r:user_country»` is {«r:user_country»}."
//- skills/travel/skill.md
---
description: Plan a trip; reads `project.«r:user_country»`.
---
Read @memory.project.«r:user_country»$0 before you plan.
//- skills/profile/memory.yml
schema:
  public:
    home_city:
      type: text
      description: The city, in the country of `session.project.«r:user_country»`.
//- skills/profile/responses.yml
responses:
  utter_saved:
    - text: Saved `«r:user_country»`.
//- skills/profile/skill.md
---
description: Keep the user's profile.
---
When the user moves, set `«r:user_country»` and `home_city`.

:::ordered_block id=main
steps:
  - id: ask
    instructions: Ask for the new country, then set `«r:user_country»`.
:::
//- skills/shadow/memory.yml
schema:
  private:
    user_country:
      type: text
      description: Its own `user_country`.
//- skills/shadow/skill.md
---
description: Has a field of the same name.
---
Set `user_country` and read @memory.shadow.user_country.
"""


def test_backticked_mentions_of_a_field_in_other_skills_are_offered(tmp_path: Path) -> None:
    """The issue's case: renaming `user_country` left ``set `user_country` `` in another
    skill's prose. Every backticked mention that means the field — bare where it resolves
    to it, `project.` / `session.project.` qualified — in prose, step instructions,
    frontmatter and memory.yml descriptions and response texts is in the group to
    confirm; the skill with its own `user_country` keeps its mentions."""
    edit = check_rename(tmp_path, USER_COUNTRY, "home_country")
    profile = tmp_path / "skills/profile/skill.md"
    notes = [e.note for e in edit.edits[profile]]
    assert notes == [MENTIONS, MENTIONS]
    assert edit.notes[MENTIONS].needs_confirmation
    hard = [e for e in edit.edits[tmp_path / "memory.yml"] if e.note is None]
    assert len(hard) == 1  # the declaration; its description's mention is to confirm


def test_a_mention_the_new_name_would_give_to_another_field_is_left(tmp_path: Path) -> None:
    """In `profile`, which declares its own `country`, `` `user_country` `` renamed to
    `country` would name profile's field: it is not offered (the hard references are)."""
    fixture = USER_COUNTRY.replace(
        "    home_city:\n", "    country:\n      type: text\n    home_city:\n"
    )
    fx = write_fixture(tmp_path, fixture)
    edit = rename_symbol(Project.load(fx.root), ("field", "project", "user_country"), "country")
    assert isinstance(edit, WorkspaceEdit), edit
    assert tmp_path / "skills/profile/skill.md" not in edit.edits
    assert tmp_path / "skills/profile/responses.yml" not in edit.edits
    # the qualified mention in its memory.yml still means the project field
    (desc,) = edit.edits[tmp_path / "skills/profile/memory.yml"]
    assert desc.note == MENTIONS


CARD_STATUS = """\
//- skills/card/memory.yml
schema:
  public:
    «r:card_status»:
      type: text
//- skills/card/skill.md
---
description: Cards.
---
Check @memory.card.«r:card_status»$0.
//- skills/support/skill.md
---
description: Help; look at `card.«r:card_status»` first.
---
If `«r:card_status»` is blocked, say so; the `status` word stays.
"""


def test_mentions_of_another_skills_field(tmp_path: Path) -> None:
    """`card_status` belongs to `card`; `support` has no field or tool of that name, so a
    backticked `card_status` there probably means card's field (an id-like name), and
    `card.card_status` certainly does."""
    check_rename(tmp_path, CARD_STATUS, "card_state")


def test_a_plain_word_of_another_skill_is_not_guessed(tmp_path: Path) -> None:
    """`status` → `state`: in `support` a backticked `status` may be anything (neither name
    is id-like); the qualified `card.status` is renamed."""
    fixture = """\
//- skills/card/memory.yml
schema:
  public:
    «r:status»:
      type: text
//- skills/card/skill.md
---
description: Cards.
---
Check @memory.card.«r:status»$0 and `«r:status»`.
//- skills/support/skill.md
---
description: Help; look at `card.«r:status»` first.
---
If the `status` is blocked, say so.
"""
    check_rename(tmp_path, fixture, "state")


SKILL_MENTIONS = """\
//- skills/card_replace/memory.yml
schema:
  public:
    reason:
      type: text
      description: Why; `«r:card_replace»` asks for it.
//- skills/card_replace/skill.md
---
description: Replace a card.
---
Ask for @memory.«r:card_replace»$0.reason.
//- skills/support/responses.yml
responses:
  utter_handover:
    - text: Handing over to `«r:card_replace»`.
//- skills/support/skill.md
---
description: Help.
---
Hand over to `«r:card_replace»` when the card is lost; it reads `«r:card_replace».reason`.
"""


def test_skill_rename_offers_backticked_mentions_of_its_id(tmp_path: Path) -> None:
    edit = check_rename(
        tmp_path, SKILL_MENTIONS, "card_swap", moved=("skills/card_replace", "skills/card_swap")
    )
    support = tmp_path / "skills/support/skill.md"
    assert [e.note for e in edit.edits[support]] == [MENTIONS, MENTIONS]


def test_a_folder_move_never_applies_mentions_unasked(tmp_path: Path) -> None:
    """willRenameFiles edits are applied with the move, without a preview: no mentions."""
    fixture = """\
//- skills/card_replace/skill.md
---
description: Replace a card.
---
Replace it.
//- skills/support/skill.md
---
description: Help.
---
Hand over to @skill.card_replace or `card_replace`.
"""
    fx = write_fixture(tmp_path, fixture)
    skills = fx.root / "skills"
    edit = rename_files(Project.load(fx.root), [(skills / "card_replace", skills / "card_swap")])
    (only,) = edit.edits[skills / "support/skill.md"]
    assert only.note is None and edit.notes == {}


SHARED_TOOL_MENTIONS = """\
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up the customer.")
async def «r:lookup_customer»(context: ToolContext = None):
    return None
//- skills/card/skill.md
---
description: Replace a card; calls `«r:lookup_customer»` first.
import_tools:
  - «r:lookup_customer»$0
---
Call `«r:lookup_customer»` before anything else.
"""


def test_shared_tool_rename_offers_backticked_mentions(tmp_path: Path) -> None:
    check_rename(tmp_path, SHARED_TOOL_MENTIONS, "find_customer")


MENTION_ROUND_TRIPS = [
    (USER_COUNTRY, ("field", "project", "user_country"), "country"),
    (CARD_STATUS, ("field", "card", "card_status"), "card_state"),
    (CARD_STATUS, ("field", "card", "card_status"), "state"),
    (SKILL_MENTIONS, ("skill", "card_replace"), "card_swap"),
    (SHARED_TOOL_MENTIONS, ("tool", "", "lookup_customer"), "find_customer"),
]


@pytest.mark.parametrize(("fixture", "key", "new"), MENTION_ROUND_TRIPS)
def test_mention_rename_and_back_is_byte_identical(
    tmp_path: Path, fixture: str, key: SymbolKey, new: str
) -> None:
    """With every mention ticked, a rename and its inverse restore every byte (a guessed
    mention of another skill's field included: id-like on one side is enough both ways)."""
    fx = write_fixture(tmp_path, fixture)
    original = snapshot(fx.root)
    there = rename_symbol(Project.load(fx.root), key, new)
    assert isinstance(there, WorkspaceEdit), there
    assert MENTIONS in there.notes
    apply_edit(fx.root, there)
    assert snapshot(fx.root) != original
    back = rename_symbol(Project.load(fx.root), (*key[:-1], new), key[-1])
    assert isinstance(back, WorkspaceEdit), back
    apply_edit(fx.root, back)
    assert snapshot(fx.root) == original
