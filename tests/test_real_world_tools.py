"""Python tool modules as public agents write them (real-world-notes § "Seen in public
agents"): none of these constructs may cause a false error, and imports the engine never
runs (guarded by ``try``/``except ImportError``, ``if TYPE_CHECKING:``) are not errors."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

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
    from «obsolete_import:rasa_sdk» import Tracker
except ValueError:
    Tracker = None

try:
    from rasa_sdk import Action  # guarded…
except ImportError:
    from «obsolete_import:rasa.calm_v2.tools» import Action  # …but then this always runs
else:
    import «obsolete_import:rasa_sdk.events»


def helper():
    from «obsolete_import:rasa_sdk.events» import SlotSet

    return SlotSet


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
    assert severities == ["error"] * 3 + ["warning"] * 2
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
