"""mantle-lsp never executes project code.

A copy of examples/telecom whose every Python file — skill tools (``tools.py`` and
``tools/*.py``), shared tools, ``hooks.py``, a ``lib/`` module the tools import — creates
a marker file when imported, plus modules that shadow our dependencies (``yaml.py``,
``pygls/``, …) in the project root. ``mantle-lsp check``, ``mantle-lsp serve`` driven
through every feature, ``python -m mantle_lsp`` (check and serve) started from inside the
project (what editors do) and direct calls must leave no marker behind.

The second half inspects the source: nothing under server/ may execute, import or
unsafely load anything (``exec``/``eval``, ``importlib.import_module``, ``runpy``,
``subprocess``, ``yaml.load`` and unsafe loaders, ruamel ``typ="unsafe"``, network
modules).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from mantle_lsp.ide import outline
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model.workspace import Workspace
from test_lsp_support import lsp_session, position_of
from test_robustness import TELECOM, run_every_feature

REPO = Path(__file__).resolve().parent.parent
SERVER_SRC = REPO / "server" / "mantle_lsp"
CONSOLE_SCRIPT = Path(sys.executable).parent / "mantle-lsp"

PAYLOAD = 'import pathlib as _m; _m.Path({marker!r}).joinpath({name!r}).write_text("executed")\n'

# project files that get a payload (path -> module text appended after the payload)
PROJECT_MODULES = {
    "hooks.py": (
        "from rasa.mantle.hooks import on_turn_started\n\n\n"
        "@on_turn_started()\ndef hello(payload):\n    return None\n"
    ),
    "hooks/more.py": "X = 1\n",
    "lib/__init__.py": "",
    "lib/helper.py": "def zone_of(name):\n    return 'eu'\n",
    "skills/roaming_pass/tools/extra.py": (
        "from rasa.mantle.tools.decorator import tool\n\n\n"
        '@tool(description="Extra.")\nasync def extra_tool(context=None):\n    return None\n'
    ),
}
# modules named like our dependencies, found first if the project folder were on sys.path
SHADOWS = [
    "yaml.py",
    "lark.py",
    "pygls/__init__.py",
    "lsprotocol/__init__.py",
    "ruamel/__init__.py",
    "attrs/__init__.py",
    "cattrs/__init__.py",
    "typing_extensions.py",
    "rasa/__init__.py",
    "sitecustomize.py",
    "usercustomize.py",
]


def hostile_project(tmp_path: Path, shadow_mantle_lsp: bool = False) -> tuple[Path, Path]:
    """(project root, marker folder): every Python file writes ``marker/<its name>``."""
    root = tmp_path / "telecom"
    shutil.copytree(TELECOM, root)
    markers = tmp_path / "markers"
    markers.mkdir()

    def plant(rel: str, body: str | None = None) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        text = p.read_text(encoding="utf-8") if body is None else body
        payload = PAYLOAD.format(marker=str(markers), name=rel.replace("/", "__"))
        future = "from __future__ import annotations\n"
        # after a `from __future__` import, so that the module stays valid
        text = text.replace(future, future + payload, 1) if future in text else payload + text
        p.write_text(text, encoding="utf-8")

    for p in sorted(root.rglob("*.py")):
        plant(p.relative_to(root).as_posix())
    for rel, body in PROJECT_MODULES.items():
        plant(rel, body)
    tools = root / "skills" / "roaming_pass" / "tools.py"
    text = tools.read_text(encoding="utf-8")
    tools.write_text(text.replace("\n\n_ZONES", "\nfrom lib.helper import zone_of\n\n_ZONES", 1))
    for rel in SHADOWS + (["mantle_lsp/__init__.py"] if shadow_mantle_lsp else []):
        plant(rel, "")
    return root.resolve(), markers


def left_behind(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def test_the_payload_works_when_imported(tmp_path: Path) -> None:
    """The marker is written when a planted module *is* imported (so the tests can fail)."""
    root, markers = hostile_project(tmp_path)
    run = subprocess.run(
        [sys.executable, "-c", "import lib.helper, yaml"], cwd=root, capture_output=True
    )
    assert run.returncode == 0, run.stderr
    assert left_behind(markers) == ["lib____init__.py", "lib__helper.py", "yaml.py"]
    assert len(list(root.rglob("*.py"))) >= 20


def test_direct_calls_never_import_project_code(tmp_path: Path) -> None:
    root, markers = hostile_project(tmp_path)
    before = set(sys.modules)
    ws = Workspace()
    ws.add_folder(root)
    project = ws.projects[root]
    assert any(p.name == "hooks.py" for p in project.files)
    assert any(p.name == "extra.py" for p in project.files)
    project_diagnostics(project)
    for path, pf in project.files.items():
        n = len(pf.text)
        run_every_feature(project, path, [0, n // 4, n // 2, n])
    outline.workspace_symbols([project], "")
    assert left_behind(markers) == []
    new = set(sys.modules) - before
    assert not {m for m in new if m.split(".")[0] in ("lib", "tools", "hooks", "rasa")}


@pytest.mark.parametrize("how", ["console script", "python -m from the project folder"])
def test_check_never_imports_project_code(tmp_path: Path, how: str) -> None:
    root, markers = hostile_project(tmp_path, shadow_mantle_lsp=how == "console script")
    cmd = (
        [str(CONSOLE_SCRIPT), "check", "."]
        if how == "console script"
        else [sys.executable, "-m", "mantle_lsp", "check", "."]
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    run = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=60, env=env)
    assert "project" in run.stdout, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    assert left_behind(markers) == []


def test_python_m_serve_from_the_project_folder_imports_no_shadow(tmp_path: Path) -> None:
    """``python -m mantle_lsp serve`` as an editor starts it, in the workspace folder and
    without safe-path flags: the server's own imports (pygls, lsprotocol, attrs, cattrs,
    yaml, lark) come from the environment, never from the project's shadows."""
    root, markers = hostile_project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    cmd = [sys.executable, "-m", "mantle_lsp", "serve"]
    run = subprocess.run(
        cmd, cwd=root, input="", capture_output=True, text=True, timeout=60, env=env
    )
    assert "Traceback" not in run.stderr, run.stderr
    assert left_behind(markers) == []


def test_importing_the_package_leaves_sys_path_alone(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "before = list(sys.path)\n"
        "import mantle_lsp, mantle_lsp.cli.main, mantle_lsp.lsp.app\n"
        "assert sys.path == before, (before, sys.path)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.timeout(60)
async def test_serve_never_imports_project_code(tmp_path: Path) -> None:
    root, markers = hostile_project(tmp_path, shadow_mantle_lsp=True)
    # the console script, started from inside the project folder as editors do
    server = ["/bin/sh", "-c", 'cd "$1" && exec "$0" serve', str(CONSOLE_SCRIPT), str(root)]
    skill = root / "skills" / "roaming_pass" / "skill.md"
    tools = root / "skills" / "roaming_pass" / "tools.py"
    hooks = root / "hooks.py"
    async with lsp_session(root, server=server) as s:
        skill_text = skill.read_text(encoding="utf-8")
        tools_text = tools.read_text(encoding="utf-8")
        for path in (skill, tools, hooks):
            s.open(path)
        tool_pos = position_of(skill_text, "execute_tool: quote_roaming_pass", 16)
        doc = s.doc(skill)
        await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=doc, position=tool_pos)
        )
        hover = await s.client.text_document_hover_async(
            lsp.HoverParams(text_document=doc, position=tool_pos)
        )
        assert hover is not None  # the tool is known, from reading its source
        defs = await s.client.text_document_definition_async(
            lsp.DefinitionParams(text_document=doc, position=tool_pos)
        )
        assert defs and defs[0].uri.endswith("tools.py")  # type: ignore[index,union-attr]
        edit = await s.client.text_document_rename_async(
            lsp.RenameParams(text_document=doc, position=tool_pos, new_name="quote_pass")
        )
        assert edit is not None
        for path, text in ((tools, tools_text), (hooks, hooks.read_text(encoding="utf-8"))):
            end = lsp.Position(line=text.count("\n"), character=0)
            rng = lsp.Range(start=lsp.Position(line=0, character=0), end=end)
            await s.client.text_document_code_action_async(
                lsp.CodeActionParams(
                    text_document=s.doc(path),
                    range=rng,
                    context=lsp.CodeActionContext(diagnostics=list(s.diagnostics(path))),
                )
            )
            await s.client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=s.doc(path), position=lsp.Position(line=9, character=12)
                )
            )
            await s.client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(text_document=s.doc(path))
            )
            await s.client.text_document_code_lens_async(
                lsp.CodeLensParams(text_document=s.doc(path))
            )
            await s.client.text_document_semantic_tokens_full_async(
                lsp.SemanticTokensParams(text_document=s.doc(path))
            )
        syms = await s.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="quote"))
        assert syms
        s.change(tools, (0, 0), (0, 0), "import os\n")
        await s.client.text_document_hover_async(
            lsp.HoverParams(text_document=s.doc(tools), position=lsp.Position(line=0, character=8))
        )
    assert left_behind(markers) == []


# -- source inspection ------------------------------------------------------------------

FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "breakpoint", "execfile"}
FORBIDDEN_ATTRIBUTE_CALLS = {
    ("importlib", "import_module"),
    ("importlib", "__import__"),
    ("importlib", "reload"),
    ("os", "system"),
    ("os", "popen"),
    ("os", "execv"),
    ("os", "execve"),
    ("os", "execvp"),
    ("os", "execl"),
    ("os", "spawnv"),
    ("os", "spawnl"),
    ("os", "posix_spawn"),
    ("os", "fork"),
    ("os", "startfile"),
    ("yaml", "load"),
    ("yaml", "load_all"),
    ("yaml", "unsafe_load"),
    ("yaml", "unsafe_load_all"),
    ("yaml", "full_load"),
    ("yaml", "full_load_all"),
    ("pickle", "load"),
    ("pickle", "loads"),
    ("marshal", "loads"),
}
FORBIDDEN_MODULES = {
    "subprocess",
    "runpy",
    "pickle",
    "marshal",
    "shelve",
    "pty",
    "ctypes",
    "code",
    "codeop",
    "socket",
    "urllib.request",
    "http.client",
    "http.server",
    "ftplib",
    "smtplib",
    "telnetlib",
    "xmlrpc",
    "requests",
    "httpx",
    "aiohttp",
    "webbrowser",
}
UNSAFE_YAML_NAMES = {
    "Loader",
    "FullLoader",
    "UnsafeLoader",
    "CLoader",
    "CFullLoader",
    "CUnsafeLoader",
    "UnsafeConstructor",
    "FullConstructor",
    "Constructor",
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def forbidden_uses(source: str, name: str = "<source>") -> Iterator[str]:
    """Every construct of ``source`` that could execute, import or unsafely load code, or
    reach the network, as ``name:line: what``."""
    tree = ast.parse(source)
    imported_from: dict[str, str] = {}  # local name -> "module.attr" (from-imports)
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in FORBIDDEN_MODULES or a.name.split(".")[0] in FORBIDDEN_MODULES:
                    yield f"{where}: import {a.name}"
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if mod in FORBIDDEN_MODULES or mod.split(".")[0] in FORBIDDEN_MODULES:
                yield f"{where}: from {mod} import …"
            for a in node.names:
                imported_from[a.asname or a.name] = f"{mod}.{a.name}"
                full = f"{mod}.{a.name}"
                if (mod, a.name) in FORBIDDEN_ATTRIBUTE_CALLS or full in FORBIDDEN_MODULES:
                    yield f"{where}: from {mod} import {a.name}"
                if mod.split(".")[0] in ("yaml", "ruamel") and a.name in UNSAFE_YAML_NAMES:
                    yield f"{where}: unsafe YAML loader {full}"
        elif isinstance(node, ast.Attribute):
            base = _dotted(node.value).split(".")[0]
            if base in ("yaml", "ruamel") and node.attr in UNSAFE_YAML_NAMES:
                yield f"{where}: unsafe YAML loader {_dotted(node)}"
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                target = imported_from.get(func.id, func.id)
                if func.id in FORBIDDEN_CALLS and func.id not in imported_from:
                    yield f"{where}: {func.id}(…)"
                mod, _, attr = target.rpartition(".")
                if (mod, attr) in FORBIDDEN_ATTRIBUTE_CALLS:
                    yield f"{where}: {target}(…)"
            elif isinstance(func, ast.Attribute):
                parts = _dotted(func).split(".")
                if len(parts) >= 2 and (parts[-2], parts[-1]) in FORBIDDEN_ATTRIBUTE_CALLS:
                    yield f"{where}: {_dotted(func)}(…)"
            if _dotted(func).split(".")[-1] == "YAML":  # ruamel.yaml.YAML(typ=…)
                for kw in node.keywords:
                    values = [kw.value]
                    if isinstance(kw.value, (ast.List, ast.Tuple)):
                        values = list(kw.value.elts)
                    for v in values:
                        if kw.arg == "typ" and isinstance(v, ast.Constant) and v.value != "safe":
                            yield f"{where}: ruamel YAML(typ={v.value!r})"


def server_sources() -> list[Path]:
    return sorted(SERVER_SRC.rglob("*.py"))


# The deliberate exceptions: `check --jobs` forks workers that run this package's own
# code on the same project (parallel.py), and the server starts interpreters that run it
# (workers.py); nothing else may fork or start a process. bytecode.py keeps this
# package's own bytecode in the user's cache folder, as Python keeps __pycache__, and
# reads it back with marshal (never a project's code: docs/security.md).
ALLOWED_USES = {
    ("server/mantle_lsp/parallel.py", "os.fork(…)"),
    ("server/mantle_lsp/workers.py", "import subprocess"),
    ("server/mantle_lsp/bytecode.py", "import marshal"),
    ("server/mantle_lsp/bytecode.py", "marshal.loads(…)"),
    ("server/mantle_lsp/bytecode.py", "marshal.dumps(…)"),
}


def test_the_server_source_executes_imports_and_loads_nothing_unsafely() -> None:
    found = [
        hit
        for path in server_sources()
        for hit in forbidden_uses(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
        if (str(path.relative_to(REPO)), hit.split(": ", 1)[1]) not in ALLOWED_USES
    ]
    assert len(server_sources()) > 40
    assert found == []


def test_yaml_is_only_composed_with_the_safe_loaders() -> None:
    uses = []
    for path in server_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _dotted(node.func).startswith("yaml."):
                uses.append((path.name, _dotted(node.func)))
            if isinstance(node, ast.ImportFrom) and node.module == "yaml":
                uses += [(path.name, f"from yaml import {a.name}") for a in node.names]
    allowed = {
        "yaml.compose",
        "yaml.constructor.SafeConstructor",
        "from yaml import CSafeLoader",
        "from yaml import SafeLoader",
    }
    assert uses and {u for _, u in uses} <= allowed, uses


SELF_TEST = """
import subprocess, runpy
from importlib import import_module
import importlib
import yaml
from yaml import FullLoader
from ruamel.yaml import YAML
import urllib.request
exec("1")
eval("1")
compile("1", "f", "eval")
__import__("os")
importlib.import_module("x")
import_module("x")
yaml.load(s, Loader=yaml.Loader)
yaml.unsafe_load(s)
YAML(typ="unsafe")
YAML(typ=["unsafe"])
os.system("x")
"""


def test_the_inspection_finds_each_forbidden_construct() -> None:
    found = list(forbidden_uses(SELF_TEST))
    text = "\n".join(found)
    for needle in [
        "import subprocess",
        "import runpy",
        "from importlib import import_module",
        "FullLoader",
        "import urllib.request",
        "exec(…)",
        "eval(…)",
        "compile(…)",
        "__import__(…)",
        "importlib.import_module(…)",
        "importlib.import_module(…)",
        "yaml.load(…)",
        "yaml.Loader",
        "yaml.unsafe_load(…)",
        "typ='unsafe'",
        "os.system(…)",
    ]:
        assert needle in text, (needle, found)
    assert sum("typ='unsafe'" in f for f in found) == 2
    safe = "import yaml\nyaml.compose(t, Loader=yaml.CSafeLoader)\nre.compile('x')\n"
    assert list(forbidden_uses(safe)) == []
