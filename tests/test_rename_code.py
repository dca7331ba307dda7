"""Rename never breaks code silently (issue 17): memory keys held in constants (of the
module, or imported from a lib module) are renamed where the string is spelled; what the
model cannot follow is listed as "not renamed"; backticked prose mentions are a group the
user confirms; a tool or lib module that does not parse refuses the rename, naming it.
Find references lists the hard references first, then the prose mentions."""

from __future__ import annotations

from pathlib import Path

from mantle_lsp.ide.navigation import reference_kinds
from mantle_lsp.ide.rename import MENTIONS, rename
from mantle_lsp.ide.types import FeatureError, WorkspaceEdit
from mantle_lsp.model.project import Project
from support import check_clean, check_diagnostics, write_fixture
from test_rename import check_rename, rename_error

TOOL_HEAD = """\
from rasa.mantle.tools.decorator import ToolContext, tool
"""

# the author's project: a lib module holds the key, a tool imports it
USER_LOCATION = (
    """\
//- memory.yml
«r:user_country»:
  type: text
//- lib/__init__.py
//- lib/user_location.py
MEMORY_COUNTRY = "«r:user_country»"


def country_of(memory):
    return memory.get(MEMORY_COUNTRY)
//- skills/travel/tools.py
"""
    + TOOL_HEAD
    + """
from lib.user_location import MEMORY_COUNTRY


@tool(description="Save the country.")
async def save_country(country: str, context: ToolContext = None):
    context.memory.set(MEMORY_COUNTRY, country)
//- skills/travel/skill.md
---
description: Plan a trip.
---
Read @memory.project.«r:user_country»$0 and use @tool.save_country.
"""
)


def _edit(tmp_path: Path, fixture: str, new: str) -> tuple[Path, WorkspaceEdit]:
    fx = write_fixture(tmp_path, fixture)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    got = rename(proj, fx.root / rel, offset - 1, new)
    assert isinstance(got, WorkspaceEdit), got
    return fx.root, got


def test_a_field_rename_edits_the_constant_a_tool_imports(tmp_path: Path) -> None:
    edit = check_rename(tmp_path, USER_LOCATION, "home_country")
    assert edit.notices == () and edit.notes == {}


def test_an_imported_constant_named_like_the_key_keeps_its_name(tmp_path: Path) -> None:
    """`from lib.keys import user_country`: the string in lib/keys.py is renamed, never the
    Python name at the call (that would break the import)."""
    fixture = USER_LOCATION.replace(
        'MEMORY_COUNTRY = "«r:user_country»"', 'user_country = "«r:user_country»"'
    ).replace("MEMORY_COUNTRY", "user_country")
    check_rename(tmp_path, fixture, "home_country")


def test_a_constant_of_the_tool_module_and_a_qualified_key_are_renamed(tmp_path: Path) -> None:
    fixture = (
        """\
//- skills/card/memory.yml
schema:
  public:
    «r:reason»:
      type: text
//- lib/__init__.py
//- lib/keys.py
REASON_KEY = "card.«r:reason»"
//- skills/card/tools.py
"""
        + TOOL_HEAD
        + """
from lib.keys import REASON_KEY

REASON = "«r:reason»"


@tool(description="Record the reason.")
async def record(why: str, context: ToolContext = None):
    context.memory.set(REASON, why)
    return context.memory.get(REASON_KEY)
//- skills/card/skill.md
---
description: Replace a card.
---
Ask with @memory.card.«r:reason»$0, then use @tool.record.
"""
    )
    check_rename(tmp_path, fixture, "cause")


def test_a_skill_rename_edits_the_namespace_in_an_imported_constant(tmp_path: Path) -> None:
    fixture = (
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- lib/__init__.py
//- lib/keys.py
REASON_KEY = "«s:card».reason"
//- skills/other/tools.py
"""
        + TOOL_HEAD
        + """
from lib.keys import REASON_KEY


@tool(description="Read the reason.")
async def peek(context: ToolContext = None):
    return context.memory.get(REASON_KEY)
//- skills/card/skill.md
---
description: Replace a card.
---
Ask why.
//- skills/other/skill.md
---
description: Other things.
---
Use @tool.peek for @skill.«s:card»$0.
"""
    )
    check_rename(tmp_path, fixture, "deck", "s", moved=("skills/card", "skills/deck"))


def test_what_cannot_be_followed_is_listed_as_not_renamed(tmp_path: Path) -> None:
    fixture = USER_LOCATION.replace(
        "    context.memory.set(MEMORY_COUNTRY, country)\n",
        "    context.memory.set(MEMORY_COUNTRY, country)\n"
        '    context.memory.set(f"user_{country}", True)\n',
    )
    root, edit = _edit(tmp_path, fixture, "home_country")
    tools = root / "skills/travel/tools.py"
    text = tools.read_text(encoding="utf-8")
    computed = text.index('f"user_{country}"')
    assert edit.notices == (
        "not renamed: skills/travel/tools.py:9 (a memory key computed at run time)",
    )
    # shown in the refactor preview as a group that changes nothing, to be confirmed
    [noop] = [e for e in edit.edits[tools] if e.note is not None]
    assert (noop.range.start, noop.new_text) == (computed, 'f"user_{country}"')
    note = edit.notes[noop.note]
    assert note.label == "Not renamed: a memory key computed at run time"
    assert note.needs_confirmation
    # everything else is renamed
    lib = root / "lib/user_location.py"
    assert [e.new_text for e in edit.edits[lib]] == ["home_country"]


def test_a_constant_naming_two_fields_is_not_renamed(tmp_path: Path) -> None:
    """One lib string read by two skills' tools, each meaning its own field: renaming one
    field must not edit the string the other skill still needs."""
    tool = (
        TOOL_HEAD
        + """
from lib.keys import REASON


@tool(description="Read.")
async def {name}(context: ToolContext = None):
    return context.memory.get(REASON)
"""
    )
    fixture = (
        """\
//- lib/__init__.py
//- lib/keys.py
REASON = "reason"
//- skills/card/memory.yml
schema:
  private:
    reason:
      type: text
//- skills/loan/memory.yml
schema:
  private:
    reason:
      type: text
//- skills/card/tools.py
"""
        + tool.format(name="peek")
        + """\
//- skills/loan/tools.py
"""
        + tool.format(name="look")
        + """\
//- skills/card/skill.md
---
description: Replace a card.
---
Ask with @memory.card.reason$0 and use @tool.peek.
//- skills/loan/skill.md
---
description: Loans.
---
Ask with @memory.loan.reason and use @tool.look.
"""
    )
    root, edit = _edit(tmp_path, fixture, "cause")
    assert root / "lib/keys.py" not in edit.edits or all(
        e.note is not None for e in edit.edits[root / "lib/keys.py"]
    )
    assert edit.notices == (
        "not renamed: skills/card/tools.py:8 (the string at lib/keys.py:1 also names "
        "`loan.reason`)",
    )


def test_prose_mentions_are_a_group_to_confirm(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/memory.yml
schema:
  private:
    icon_query:
      type: text
//- skills/card/skill.md
---
description: Replace a card.
---
Search with `icon_query`, then show @memory.card.icon_query$0.
"""
    root, edit = _edit(tmp_path, fixture, "icon_search")
    md = root / "skills/card/skill.md"
    text = md.read_text(encoding="utf-8")
    by_start = {e.range.start: e.note for e in edit.edits[md]}
    assert by_start == {
        text.index("icon_query`"): MENTIONS,
        text.index("icon_query."): None,
    }
    note = edit.notes[MENTIONS]
    assert note.needs_confirmation and "prose" in note.label
    assert edit.edits[root / "skills/card/memory.yml"][0].note is None


def test_a_tool_module_that_does_not_parse_refuses_the_rename(tmp_path: Path) -> None:
    broken = USER_LOCATION.replace(
        "    context.memory.set(MEMORY_COUNTRY, country)\n",
        "    context.memory.set(MEMORY_COUNTRY, country\n",
    )
    message = rename_error(tmp_path, broken, "home_country")
    assert message.startswith("cannot rename: skills/travel/tools.py:")
    assert "not valid Python" in message and "fix it first" in message


def test_a_lib_module_that_does_not_parse_refuses_the_rename(tmp_path: Path) -> None:
    broken = USER_LOCATION.replace("def country_of(memory):", "def country_of(memory)")
    message = rename_error(tmp_path, broken, "home_country")
    assert message.startswith("cannot rename: lib/user_location.py:4 is not valid Python")


def test_a_response_rename_does_not_care_about_tool_code(tmp_path: Path) -> None:
    fixture = """\
//- responses.yml
responses:
  «r:utter_bye»:
    - text: Bye.
//- skills/card/tools.py
def broken(:
//- skills/card/skill.md
---
description: Replace a card.
---
:::ordered_block id=main
steps:
  - id: bye
    action: «r:utter_bye»$0
:::
"""
    fx = write_fixture(tmp_path, fixture)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    assert not isinstance(rename(proj, fx.root / rel, offset - 1, "utter_goodbye"), FeatureError)


def test_references_list_hard_references_then_prose_mentions(tmp_path: Path) -> None:
    fixture = (
        """\
//- skills/card/memory.yml
schema:
  private:
    reason:
      type: text
//- skills/card/tools.py
"""
        + TOOL_HEAD
        + """

@tool(description="Record.")
async def record(why: str, context: ToolContext = None):
    context.memory.set("reason", why)
//- skills/card/skill.md
---
description: Replace a card.
---
Ask for the `reason`, then read @memory.card.reason$0.
"""
    )
    fx = write_fixture(tmp_path, fixture)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    got = [
        (loc.path.relative_to(fx.root).as_posix(), kind)
        for loc, kind in reference_kinds(proj, fx.root / rel, offset - 1, True)
    ]
    assert got == [
        ("skills/card/memory.yml", "definition"),
        ("skills/card/skill.md", "read"),
        ("skills/card/tools.py", "write"),
        ("skills/card/skill.md", "mention"),
    ]


def test_references_from_a_skill_name_value(tmp_path: Path) -> None:
    fixture = """\
//- skills/card/skill.md
---
name: Card rep$0lacement
description: Replace a card.
---
Text.
//- skills/other/skill.md
---
description: Another skill.
---
Hand over to @skill.card.
"""
    fx = write_fixture(tmp_path, fixture)
    proj = Project.load(fx.root)
    assert fx.cursor is not None
    rel, offset = fx.cursor
    got = [
        (loc.path.relative_to(fx.root).as_posix(), kind)
        for loc, kind in reference_kinds(proj, fx.root / rel, offset, False)
    ]
    assert got == [("skills/other/skill.md", "read")]


# -- check: keys that arrive through constants ---------------------------------------------

CONSTANT_KEYS = (
    """\
//- memory.yml
user_country:
  type: text
//- lib/__init__.py
//- lib/user_location.py
MEMORY_COUNTRY = "user_countri"
MEMORY_CITY = "city"
MEMORY_CITY = "town"
//- skills/travel/memory.yml
schema:
  private:
    trip:
      type: text
//- skills/travel/tools.py
"""
    + TOOL_HEAD
    + """
from lib.user_location import MEMORY_CITY, MEMORY_COUNTRY

TRIP = «lsp.tools.undeclared_memory_write:"trp"»


@tool(description="Save the trip.")
async def save_trip(country: str, context: ToolContext = None):
    context.memory.set(«lsp.tools.undeclared_memory_write:MEMORY_COUNTRY», country)
    context.memory.set(MEMORY_CITY, country)
    context.memory.set(TRIP, country)
    key = «lsp.tools.unknown_memory_read:"tripp"»
    return context.memory.get(key)


def helper(memory):
    return memory.get(TRIP)
//- skills/travel/skill.md
---
description: Plan a trip.
---
Use @tool.save_trip for the @memory.travel.trip.
"""
)


def test_undeclared_keys_through_constants_are_warnings(tmp_path: Path) -> None:
    """A module constant and a function constant are reported on their literal (a typo fix
    changes the string), an imported one at the call (only declaring fixes it); a constant
    that is rebound (`MEMORY_CITY`) and a receiver only guessed to be memory stay silent."""
    severities = {
        "lsp.tools.undeclared_memory_write": "warning",
        "lsp.tools.unknown_memory_read": "warning",
    }
    got = check_diagnostics(tmp_path, CONSTANT_KEYS, severities)
    messages = sorted(g[5] for g in got if g[3].startswith("lsp.tools."))
    assert messages == [
        '`memory.get("tripp")` through a constant (line 14) always returns the default: '
        "`travel.tripp`: skill `travel` declares no field `tripp`; did you mean `trip`?",
        '`memory.set("trp")` through a constant (line 12) names `trp`, which is declared '
        "neither in skill `travel` nor in the project memory.yml; did you mean `trip`?",
        '`memory.set("user_countri")` (`MEMORY_COUNTRY` = "user_countri", '
        "lib/user_location.py) names `user_countri`, which is declared neither in skill "
        "`travel` nor in the project memory.yml",
    ]


def test_declared_keys_through_constants_are_silent(tmp_path: Path) -> None:
    fixed = (
        CONSTANT_KEYS.replace('"user_countri"', '"user_country"')
        .replace('«lsp.tools.undeclared_memory_write:"trp"»', '"trip"')
        .replace("«lsp.tools.undeclared_memory_write:MEMORY_COUNTRY»", "MEMORY_COUNTRY")
        .replace('«lsp.tools.unknown_memory_read:"tripp"»', '"trip"')
    )
    check_clean(
        tmp_path,
        fixed,
        silent=["lsp.tools.undeclared_memory_write", "lsp.tools.unknown_memory_read"],
    )
