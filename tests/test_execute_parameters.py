"""``execute_tool`` parameters against the tool's ``def`` (lsp.tools.unknown_parameter,
lsp.tools.missing_parameter), and names imported from project modules that are modules,
not tools."""

from __future__ import annotations

from pathlib import Path

from support import check_clean, check_diagnostics

TOOLS = """\
//- skills/search/tools.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Search the help centre.")
async def search_articles(source: str, limit: int = 5, context: ToolContext = None):
    return None
"""


def test_a_typo_is_reported_with_the_name_meant(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        TOOLS
        + """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    «missing_parameter:parameters»:
      «unknown_parameter:sauce»: faq
      limit: 3
:::
""",
    )
    by_code = {g[3]: g for g in got}
    assert by_code["lsp.tools.unknown_parameter"][5] == (
        "step 'search': tool `search_articles` has no parameter `sauce`; did you mean `source`?"
    )
    assert by_code["lsp.tools.missing_parameter"][5] == (
        "step 'search': tool `search_articles` needs `source`, which has no default and is "
        "not given under `parameters`"
    )


def test_fix_data_names_the_tool_the_parameter_and_what_is_missing(tmp_path: Path) -> None:
    from mantle_lsp.ide.diagnostics import project_diagnostics
    from mantle_lsp.model.project import Project
    from support import write_fixture

    fx = write_fixture(
        tmp_path,
        TOOLS
        + """\
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: search
    execute_tool: search_articles
    parameters:
      sauce: faq
      colour: red
:::
""",
    )
    ds = [d for ds in project_diagnostics(Project.load(fx.root)).values() for d in ds]
    data = sorted((d.code, repr(d.data)) for d in ds if d.code.startswith("lsp.tools."))
    assert data == [
        ("lsp.tools.missing_parameter", "{'tool': 'search_articles', 'missing': ['source']}"),
        (
            "lsp.tools.unknown_parameter",
            "{'tool': 'search_articles', 'param': 'colour', 'meant': None}",
        ),
        (
            "lsp.tools.unknown_parameter",
            "{'tool': 'search_articles', 'param': 'sauce', 'meant': 'source'}",
        ),
    ]


def test_no_parameters_at_all_is_reported_on_the_tool_name(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up an order.")
async def lookup(order_id, *, region: str, context: ToolContext = None):
    return None
//- skills/orders/skill.md
---
description: Orders.
import_tools:
  - lookup
---
:::ordered_block id=main
steps:
  - id: find
    execute_tool: «missing_parameter:lookup»
:::
""",
    )
    assert got[0][5] == (
        "step 'find': tool `lookup` needs `order_id`, `region`, which have no default and are "
        "not given under `parameters`"
    )


def test_complete_and_uncheckable_calls_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        TOOLS
        + """\
    return None


@tool(description="Anything goes.")
async def flexible(source: str, context: ToolContext = None, **options):
    return None


def retry(fn):
    return fn


@tool(description="Wrapped.")
@retry
async def wrapped(source: str, context: ToolContext = None):
    return None


async def _plain(source: str, context: ToolContext = None):
    return None


def make_tool(fn):  # a factory, as real projects have (often in lib/)
    return tool(description="Made.")(fn)


made = make_tool(_plain)
assigned = tool(description="Assigned.")(_plain)
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: docs
    url: https://mcp.example.com
//- skills/search/skill.md
---
description: Search the help centre.
import_tools:
  - mcp/docs:find
---
:::ordered_block id=main
steps:
  - id: s1
    execute_tool: search_articles
    parameters:
      source: session.search.query
  - id: s2
    execute_tool: search_articles
    parameters: {source: faq, limit: 2}
  - id: s3
    execute_tool: flexible
    parameters:
      sauce: faq
  - id: s4
    execute_tool: wrapped
    parameters:
      sauce: faq
  - id: s5
    execute_tool: made
    parameters:
      sauce: faq
  - id: s6
    execute_tool: assigned
    parameters:
      source: faq
  - id: s7
    execute_tool: find
    parameters:
      anything: 1
:::
//- skills/search/memory.yml
schema:
  private:
    query:
      type: text
""",
        silent=["lsp.tools.unknown_parameter", "lsp.tools.missing_parameter"],
    )


def test_a_tool_defined_twice_is_not_checked(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        TOOLS
        + """\
//- skills/search/tools/more.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Search again.")
async def search_articles(query: str, context: ToolContext = None):
    return None
//- skills/search/skill.md
---
description: Search the help centre.
---
:::ordered_block id=main
steps:
  - id: s1
    execute_tool: search_articles
    parameters:
      query: faq
:::
""",
        silent=["lsp.tools.unknown_parameter", "lsp.tools.missing_parameter"],
    )


def test_a_tool_the_skill_defines_and_also_imports_is_not_checked(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        TOOLS
        + """\
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="The shared search.")
async def search_articles(topic: str, context: ToolContext = None):
    return None
//- skills/search/skill.md
---
description: Search the help centre.
import_tools:
  - search_articles
---
:::ordered_block id=main
steps:
  - id: s1
    execute_tool: search_articles
    parameters:
      topic: faq
:::
""",
        silent=["lsp.tools.unknown_parameter", "lsp.tools.missing_parameter"],
    )


# -- modules imported by name are not tools ---------------------------------------------------
MODULE = """\
//- lib/__init__.py
//- lib/user_location.py
MEMORY_COUNTRY = "user_country"
//- skills/travel/tools.py
from lib import user_location
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Where the user is.")
async def locate(context: ToolContext = None):
    return user_location.MEMORY_COUNTRY
"""


def test_an_imported_module_is_not_a_tool(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        MODULE
        + """\
//- skills/travel/skill.md
---
description: Travel.
---
Use @tool.locate, not @tool.«mantle.validation.tools.unresolved_tool:user_location».
""",
    )


def test_an_imported_name_that_is_not_a_module_may_be_a_tool(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- lib/__init__.py
//- lib/tools_factory.py
from rasa.mantle.tools.decorator import tool


async def _locate(context=None):
    return None


def build():
    return tool(description="Locate a traveller.")(_locate)


shared_locate = build()
//- skills/travel/tools.py
from lib.tools_factory import shared_locate
//- skills/travel/skill.md
---
description: Travel.
---
Use @tool.shared_locate.
""",
        silent=["mantle.validation.tools.unresolved_tool"],
    )


def test_editing_a_shared_tools_parameters_updates_the_skill(tmp_path: Path) -> None:
    """An edit of the tool's def changes what the skill using it is told (incrementally,
    as a fresh check would)."""
    from mantle_lsp.ide.diagnostics import file_diagnostics, project_diagnostics
    from mantle_lsp.model.project import Project
    from mantle_lsp.model.source import source_from_text
    from support import write_fixture

    shared = (
        "from rasa.mantle.tools.decorator import ToolContext, tool\n\n\n"
        '@tool(description="Look up.")\n'
        "async def lookup({params}context: ToolContext = None):\n    return None\n"
    )
    fx = write_fixture(
        tmp_path,
        "//- tools/shared.py\n"
        + shared.format(params="order_id: str, ")
        + """\
//- skills/orders/skill.md
---
description: Orders.
import_tools:
  - lookup
---
:::ordered_block id=main
steps:
  - id: find
    execute_tool: lookup
    parameters:
      order_id: "42"
:::
""",
    )
    proj = Project.load(fx.root)
    md, tools = fx.root / "skills/orders/skill.md", fx.root / "tools/shared.py"
    assert project_diagnostics(proj).get(md, []) == []
    new = shared.format(params="order: str, ")
    affected = proj.set_source(tools, source_from_text(tools, new))
    assert md in affected
    codes = sorted(d.code for d in file_diagnostics(proj, [md]).get(md, []))
    assert codes == ["lsp.tools.missing_parameter", "lsp.tools.unknown_parameter"]
    tools.write_text(new, encoding="utf-8")
    fresh = project_diagnostics(Project.load(fx.root)).get(md, [])
    assert sorted(d.code for d in fresh) == codes
