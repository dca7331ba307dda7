"""Python tool modules as public agents write them (real-world-notes § "Seen in public
agents"): none of these constructs may cause a false error, and imports the engine never
runs (guarded by ``try``/``except ImportError``, ``if TYPE_CHECKING:``) are not errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mantle_lsp import parallel
from mantle_lsp.ide.diagnostics import Diagnostic, file_diagnostics, project_diagnostics
from mantle_lsp.ide.locate import reference_locations
from mantle_lsp.model.layout import FileKind
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import source_from_text
from mantle_lsp.model.workspace import Workspace
from support import check_clean, check_diagnostics, diagnostics_of, write_fixture

SKILL = """\
//- skills/card/skill.md
---
description: Card.
---
Use @tool.lock.
"""


def test_obsolete_imports_the_engine_never_runs_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- skills/card/tools.py
from __future__ import annotations

import builtins
import typing
from typing import TYPE_CHECKING

try:
    from rasa.mantle.tools.decorator import ToolContext, tool
except ImportError:  # older engines
    from rasa.calm_v2.tools.decorator import ToolContext, tool

try:
    from rasa_sdk import Tracker
except (AttributeError, ModuleNotFoundError):
    Tracker = None

try:
    import rasa_sdk.events as events
except builtins.ImportError:
    events = None

try:
    from rasa.calm_v2.tools.result import ToolResult
except Exception:
    ToolResult = None

try:
    from rasa_sdk.executor import CollectingDispatcher
except:  # noqa: E722
    CollectingDispatcher = None

if TYPE_CHECKING:
    from rasa_sdk import Action
if typing.TYPE_CHECKING:
    import rasa.calm_v2.tools


@tool(description="Lock.")
async def lock(context: ToolContext = None):
    return None
"""
        + SKILL,
    )


def test_obsolete_imports_that_fail_the_module_or_a_function(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool

try:
    from «obsolete_import:rasa_sdk» import ToolContext  # rasa_sdk has no Mantle names
except ValueError:
    ToolContext = None

try:
    from rasa_sdk import ToolResult  # guarded…
except ImportError:
    from «obsolete_import:rasa.calm_v2.tools» import ToolResult  # …but then this always runs
else:
    import rasa_sdk.events  # rasa_sdk itself is installed with rasa-pro


def helper():
    from «obsolete_import:rasa_sdk.events» import tool as old_tool

    return old_tool


class Later:
    def method(self):
        import «obsolete_import:rasa.calm_v2.tools.result»


@tool(description="Lock.")
async def lock(context=None):
    return None
"""
        + SKILL,
    )
    by_line = {(g[1], g[4]) for g in got}
    severities = [sev for _, sev in sorted(by_line)]
    assert severities == ["error"] * 2 + ["warning"] * 2
    warned = [g[5] for g in got if g[4] == "warning"]
    assert all("fails when it is called" in m for m in warned)


def test_lib_imports_follow_the_same_guards(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- lib/__init__.py
//- skills/card/tools.py
from typing import TYPE_CHECKING

from rasa.mantle.tools.decorator import tool

try:
    from lib.optional import extra
except ImportError:
    extra = None

if TYPE_CHECKING:
    from lib.types import Card

from «unresolved_import:lib.missing» import thing


def helper():
    import «unresolved_import:lib.lazy»

    return lib.lazy


@tool(description="Lock.")
async def lock(context=None):
    return None
"""
        + SKILL,
    )
    assert sorted((g[5].endswith("called"), g[4]) for g in got) == [
        (False, "error"),
        (True, "warning"),
    ]


def test_lib_imports_after_a_sys_path_shim_are_not_judged(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- skills/card/tools.py
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "vendor"))

from lib.vendored import helper  # noqa: E402
from rasa.mantle.tools.decorator import tool  # noqa: E402


@tool(description="Lock.")
async def lock(context=None):
    return helper()
"""
        + SKILL,
    )


def test_imports_in_strings_are_not_imports(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        '''\
//- skills/card/tools.py
"""Usage:

from lib.nothing import here
import rasa_sdk
"""
from rasa.mantle.tools.decorator import tool


@tool(description="Lock.")
async def lock(context=None):
    return None
'''
        + SKILL,
    )


def test_seen_in_public_agents(tmp_path: Path) -> None:
    """@tool over a functools.wraps decorator, `Any` never imported under postponed
    annotations, factory-made tools, a sys.path shim before `lib` imports,
    `context.send` / `context.events`, fallback imports: no error, no warning."""
    check_clean(
        tmp_path,
        """\
//- lib/__init__.py
//- lib/notion.py
from rasa.mantle.tools.decorator import tool


def notion_page_tool(page_id: str, description: str):
    @tool(description=description)
    async def fetch(context=None):
        return page_id

    return fetch
//- lib/logging_tools.py
import functools


def logged(fn):
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        return await fn(*args, **kwargs)

    return wrapper
//- tools/pages.py
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.notion import notion_page_tool  # noqa: E402

get_page = notion_page_tool("abc", description="Read the help page.")
//- skills/card/tools.py
from __future__ import annotations

try:
    from rasa.mantle.tools.decorator import ToolContext, tool
except ImportError:
    from rasa.calm_v2.tools.decorator import ToolContext, tool

from lib.logging_tools import logged


@tool(description="Lock the card.")
@logged
async def lock(context: ToolContext, reason: Any = None) -> dict[str, Any]:
    await context.send("Locking your card.")
    context.events.append({"event": "card_locked"})
    return {"ok": True}
//- skills/card/skill.md
---
description: Card.
import_tools: [get_page]
---
Use @tool.lock, and @tool.get_page for help.
""",
    )


# ---------------------------------------------------------------------------------------------
# lsp.memory.unused_field: every writer and reader the code shows counts


def _unused(tmp_path: Path, fixture: str) -> set[str]:
    """The fields with an unused-field hint, as `namespace.field`."""
    fx = write_fixture(tmp_path, fixture)
    got = diagnostics_of(fx.root)
    errors = [g for g in got if g[4] in ("error", "warning")]
    assert errors == [], errors
    return {g[5].split("`")[1] for g in got if g[3] == "lsp.memory.unused_field"}


FIELDS = """\
//- memory.yml
user_country:
  type: text
lonely_project:
  type: text
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
    shipping:
      type: text
  private:
    note:
      type: text
    lonely:
      type: text
//- skills/card/skill.md
---
description: Card.
---
Use @tool.lock.
"""

LOCK = """\
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Lock.")
async def lock(context: ToolContext):
"""


def test_an_unused_field_is_still_reported(tmp_path: Path) -> None:
    assert _unused(
        tmp_path, FIELDS + "//- skills/card/tools.py\n" + LOCK + "    return None\n"
    ) == {
        "project.user_country",
        "project.lonely_project",
        "card.reason",
        "card.shipping",
        "card.note",
        "card.lonely",
    }


def test_writes_in_shared_tools_count(tmp_path: Path) -> None:
    found = _unused(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\n"
        + LOCK
        + "    return None\n"
        + """\
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Save the reason.")
async def save_reason(context: ToolContext, reason: str):
    context.memory.set("reason", reason)  # a bare name: whichever skill runs it
    context.memory.set("card.note", reason)
    return context.memory.get("project.user_country")
""",
    )
    assert found == {"project.lonely_project", "card.shipping", "card.lonely"}


def test_writes_in_lib_helpers_count(tmp_path: Path) -> None:
    found = _unused(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\n"
        + "from lib.memory import remember, save_country\n"
        + LOCK
        + "    save_country(context.memory, 'FR')\n    remember(context)\n"
        + """\
//- lib/__init__.py
//- lib/memory.py
def save_country(memory, country):
    memory.set("user_country", country)


def remember(ctx):
    ctx.memory.set("shipping", "express")
    return ctx.memory.get("reason")
""",
    )
    assert found == {"project.lonely_project", "card.note", "card.lonely"}


def test_keys_from_loops_over_literal_containers_count(tmp_path: Path) -> None:
    found = _unused(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\n"
        + 'ADDRESS_FIELDS = ["shipping"]\n'
        + LOCK
        + """\
    for key, value in {"reason": "lost", "note": "-"}.items():
        context.memory.set(key, value)
    for key in ADDRESS_FIELDS:
        context.memory.set(key, None)
    return [context.memory.get(k) for k in ("user_country",)]
""",
    )
    assert found == {"project.lonely_project", "card.lonely"}


def test_keys_held_in_module_constants_count(tmp_path: Path) -> None:
    found = _unused(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\n"
        + 'MEMORY_COUNTRY = "user_country"\nREASON: str = "reason"\n'
        + LOCK
        + """\
    context.memory.set(REASON, "lost")
    return context.memory.get(MEMORY_COUNTRY)
""",
    )
    assert found == {"project.lonely_project", "card.shipping", "card.note", "card.lonely"}


def test_keys_held_in_constants_imported_from_project_modules_count(tmp_path: Path) -> None:
    found = _unused(
        tmp_path,
        FIELDS
        + """\
//- lib/__init__.py
//- lib/keys.py
MEMORY_COUNTRY = "user_country"
SHIPPING = "shipping"
//- lib/consts.py
NOTE = "note"
//- skills/card/tools/lock.py
from lib import keys
from lib.consts import NOTE
from lib.keys import MEMORY_COUNTRY
"""
        + LOCK
        + """\
    context.memory.set(NOTE, "x")
    context.memory.set(keys.SHIPPING, "x")
    return context.memory.get(MEMORY_COUNTRY)
""",
    )
    assert found == {"project.lonely_project", "card.reason", "card.lonely"}


def test_unknown_keys_silence_every_field_the_module_can_reach(tmp_path: Path) -> None:
    other = """\
//- skills/other/memory.yml
schema:
  public:
    other_public:
      type: text
  private:
    other_private:
      type: text
//- skills/other/skill.md
---
description: Other.
---
Other.
"""
    # a skill's own tools: its fields, the project fields, other skills' public fields
    found = _unused(
        tmp_path / "skill",
        FIELDS
        + other
        + "//- skills/card/tools.py\n"
        + LOCK
        + "    for key in compute_keys():\n        context.memory.set(key, None)\n",
    )
    assert found == {"other.other_private"}
    # an imported constant the project does not define: unknown too
    found = _unused(
        tmp_path / "import",
        FIELDS
        + other
        + "//- skills/card/tools.py\n"
        + "from os import sep as KEY\n"
        + LOCK
        + "    context.memory.set(KEY, None)\n",
    )
    assert found == {"other.other_private"}
    # a shared tool or helper: every field
    found = _unused(
        tmp_path / "shared",
        FIELDS
        + other
        + "//- skills/card/tools.py\n"
        + LOCK
        + "    return None\n"
        + "//- lib/store.py\ndef put(context, key, value):\n"
        + '    context.memory.set(f"{key}", value)\n',
    )
    assert found == set()


def test_indirect_keys_are_references_but_never_reported(tmp_path: Path) -> None:
    """Keys through constants and loops are indexed (find references lists them) with how
    they are known; the engine counts only literal keys, so a loop's keys are never
    reported, and an undeclared key held in a constant only as a warning (on the literal)."""
    fx = write_fixture(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\n"
        + 'COUNTRY = "user_country"\nMISSING = "not_declared"\n'
        + LOCK
        + """\
    context.memory.set(MISSING, 1)
    for key in ("reason", "undeclared_too"):
        context.memory.set(key, None)
    return context.memory.get(COUNTRY)
""",
    )
    text = fx.files["skills/card/tools.py"]
    missing = text.index('"not_declared"')
    assert [g[:5] for g in diagnostics_of(fx.root) if g[4] != "hint"] == [
        (
            "skills/card/tools.py",
            missing,
            missing + len('"not_declared"'),
            "lsp.tools.undeclared_memory_write",
            "warning",
        )
    ]
    proj = Project.load(fx.root)
    tools = fx.root / "skills/card/tools.py"
    refs = proj.index.references_to(("field", "project", "user_country"))
    assert [(r.form, r.via, text[r.range.start : r.range.end]) for r in refs] == [
        ("tool_get", "constant", "user_country")
    ]
    locations = reference_locations(proj, ("field", "card", "reason"), include_declaration=False)
    assert [(loc.path, text[loc.range.start : loc.range.end]) for loc in locations] == [
        (tools, "reason")
    ]
    assert proj.index.references_to(("field", "card", "reason"))[0].via == "loop"


def test_the_hint_follows_edits_of_lib_and_tool_modules(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\n"
        + LOCK
        + "    return None\n"
        + "//- lib/keys.py\nCOUNTRY = 'nothing'\n"
        + "//- tools/shared.py\nfrom lib.keys import COUNTRY\n\n\ndef f(context):\n"
        + "    return context.memory.get(COUNTRY)\n",
    )
    proj = Project.load(fx.root)
    project_memory = fx.root / "memory.yml"

    def unused() -> set[str]:
        got = file_diagnostics(proj, [project_memory])[project_memory]
        return {d.message.split("`")[1] for d in got if d.code == "lsp.memory.unused_field"}

    assert unused() == {"project.user_country", "project.lonely_project"}
    keys = fx.root / "lib/keys.py"
    affected = proj.set_source(keys, source_from_text(keys, "COUNTRY = 'user_country'\n"))
    assert project_memory in affected
    assert unused() == {"project.lonely_project"}
    shared = fx.root / "tools/shared.py"
    dynamic = "def f(context, k):\n    return context.memory.get(k)\n"
    affected = proj.set_source(shared, source_from_text(shared, dynamic))
    assert project_memory in affected
    assert unused() == set()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_spread_check_gives_the_same_hints(tmp_path: Path) -> None:
    """Workers that own other skills know which skills use unknown keys (SkillFacts) and
    read the lib helpers themselves: the hints equal the one-process check's."""
    skills = "".join(
        f"""\
//- skills/s{i}/memory.yml
schema:
  public:
    pub{i}:
      type: text
  private:
    priv{i}:
      type: text
//- skills/s{i}/skill.md
---
description: Skill {i}.
---
Text.
"""
        for i in range(5)
    )
    fx = write_fixture(
        tmp_path,
        skills
        + "//- lib/keys.py\nKEY = 'pub1'\n"
        + "//- skills/s0/tools.py\nfrom lib.keys import KEY\n\n\ndef f(context, k):\n"
        + "    context.memory.get(KEY)\n    context.memory.set(k, 1)\n"
        + "//- skills/s3/tools.py\ndef g(context):\n    for k in ('priv3',):\n"
        + "        context.memory.set(k, 1)\n",
    )

    def plain(found: dict[Path, list[Diagnostic]]) -> set[tuple[object, ...]]:
        return {(p, d.code, d.range, d.message) for p, ds in found.items() for d in ds}

    serial = plain(project_diagnostics(Project.load(fx.root)))
    hinted = {m.split("`")[1] for _, code, _, m in serial if code == "lsp.memory.unused_field"}
    assert hinted == {"s1.priv1", "s2.priv2", "s4.priv4"}
    _, found = parallel.check_project(fx.root, 3, min_skills=0)
    assert plain(found) == serial


def test_a_lib_module_written_on_disk_re_checks_the_memory_files(tmp_path: Path) -> None:
    """The server's watched-file path: a lib/ module is a project file (classified), and
    saving one that now writes a field re-checks the memory.yml declaring it."""
    fx = write_fixture(
        tmp_path,
        FIELDS
        + "//- skills/card/tools.py\nfrom lib.store import put\n"
        + LOCK
        + "    put(context)\n"
        + "//- lib/store.py\ndef put(ctx):\n    return None\n",
    )
    ws = Workspace()
    [proj] = ws.add_folder(fx.root)
    store = fx.root / "lib/store.py"
    assert proj.classify(store) == (FileKind.HELPER, None)
    store.write_text('def put(ctx):\n    ctx.memory.set("lonely", 1)\n')
    affected = ws.file_changed(store)
    memory = fx.root / "skills/card/memory.yml"
    assert memory in affected
    got = file_diagnostics(proj, [memory])[memory]
    assert "card.lonely" not in {d.message.split("`")[1] for d in got}
    assert "card.note" in {d.message.split("`")[1] for d in got}


def test_imports_the_engine_cannot_resolve_when_it_loads_the_module(tmp_path: Path) -> None:
    """The engine loads a tool module as a plain file with the project root on sys.path: a
    relative import fails, and so does a lib module that is not valid Python."""
    got = check_diagnostics(
        tmp_path,
        """\
//- lib/__init__.py
//- lib/broken.py
def oops(
//- lib/keys.py
NOTE = "note"
//- skills/card/tools/consts.py
NOTE = "note"
//- skills/card/tools/lock.py
from «unresolved_import:.consts» import NOTE
from «unresolved_import:lib.broken» import oops
from lib.keys import NOTE as KEY

try:
    from .consts import NOTE as FALLBACK
except ImportError:
    FALLBACK = None


def later():
    from «unresolved_import:.consts» import NOTE as LATE

    return LATE
"""
        + LOCK
        + "    return None\n"
        + SKILL,
    )
    assert [(g[4], g[5].split(",")[0]) for g in got] == [
        ("error", "`.consts` is a relative import"),
        ("error", "`lib.broken` is not valid Python (lib/broken.py:1: '(' was never closed)"),
        ("warning", "`.consts` is a relative import"),
    ]
