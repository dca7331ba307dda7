"""The layering of ``server/mantle_lsp`` (docs/architecture.md), checked on the source.

- No import cycles, counting every import: at module level, inside functions and under
  ``TYPE_CHECKING`` (a cycle hidden in a function is still a cycle in the design).
- ``ide/`` never imports pygls or lsprotocol (only ``lsp/`` speaks the protocol).
- ``ide/`` does no file IO: it reads what the model holds (whose reader lets an open
  editor buffer win over the disk), never the disk itself.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "mantle_lsp"

# Modules allowed in an import cycle (every member of the cycle listed here): none.
CYCLE_ALLOWED: frozenset[str] = frozenset()
CYCLE_ALLOWED_PREFIXES: tuple[str, ...] = ()

# Known file IO in ide/ (module -> what it does): none; project files are read by model/.
IO_ALLOWED: dict[str, str] = {}

_PATH_IO = frozenset(
    {
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "open",
        "is_file",
        "is_dir",
        "exists",
        "iterdir",
        "glob",
        "rglob",
        "stat",
        "lstat",
        "resolve",
        "mkdir",
        "unlink",
        "touch",
    }
)
_IO_MODULES = ("os", "os.path", "shutil", "glob", "pathlib")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(_modules()[name].read_text(encoding="utf-8"))


def _imported(name: str) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import statement of module ``name``, anywhere."""
    modules = _modules()
    is_pkg = modules[name].name == "__init__.py"
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                sub = f"{prefix}.{alias.name}"
                yield (sub if sub in modules else prefix), node.lineno


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: {d for d, _ in _imported(m) if d in modules and d != m} for m in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _allowed_in_cycle(module: str) -> bool:
    return module in CYCLE_ALLOWED or module.startswith(CYCLE_ALLOWED_PREFIXES)


def test_no_import_cycles() -> None:
    graph = _graph()
    bad = [c for c in _cycles(graph) if not all(_allowed_in_cycle(m) for m in c)]
    detail = [
        " <-> ".join(c) + "\n    " + "; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c)
        for c in bad
    ]
    assert not bad, "import cycles:\n" + "\n".join(detail)


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_ide_never_imports_the_protocol_libraries() -> None:
    found = [
        f"{m}:{line} imports {dep}"
        for m in _modules()
        if m.startswith("mantle_lsp.ide")
        for dep, line in _imported(m)
        if dep.split(".")[0] in ("pygls", "lsprotocol")
    ]
    assert not found, found


def _file_io(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                mods.append(node.module or "")
            for m in mods:
                if m in ("shutil", "glob") or m.startswith(("shutil.", "glob.")):
                    yield f"line {node.lineno}: import {m}"
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            yield f"line {node.lineno}: open(...)"
        elif isinstance(f, ast.Attribute):
            base = ast.unparse(f.value)
            if base in _IO_MODULES:
                yield f"line {node.lineno}: {base}.{f.attr}(...)"
            elif f.attr in _PATH_IO:
                yield f"line {node.lineno}: {ast.unparse(f)}(...)"


def test_ide_does_no_file_io() -> None:
    found = {
        m: list(_file_io(_tree(m)))
        for m in _modules()
        if m.startswith("mantle_lsp.ide") and m not in IO_ALLOWED
    }
    found = {m: calls for m, calls in found.items() if calls}
    assert not found, found


def test_the_io_allow_list_names_modules_that_still_do_io() -> None:
    # an entry whose module no longer does IO must go: the list only shrinks
    stale = [m for m in IO_ALLOWED if m not in _modules() or not list(_file_io(_tree(m)))]
    assert not stale, stale


def test_the_io_finder_sees_the_usual_forms() -> None:
    src = (
        "import shutil\n"
        "def f(p, os):\n"
        "    open(p)\n"
        "    p.read_text()\n"
        "    p.is_file()\n"
        "    os.listdir(p)\n"
        "    os.path.exists(p)\n"
    )
    calls = list(_file_io(ast.parse(src)))
    assert len(calls) == 6, calls
    assert not list(_file_io(ast.parse("import io\nbuf = io.StringIO()\nd = {}.get('x')\n")))


def test_every_package_is_in_the_wheel() -> None:
    """A new package (a folder with __init__.py) must be listed in pyproject.toml, or the
    wheel and the .vsix ship without it."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    pyproject = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        for init in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set()


# -- the engine profile is a fact of the core ------------------------------------------------

# The one module that maps an engine version to what it enforces (model/engine.py): every
# other module asks a capability (`Semantics(project).profile.has_writable_by`, …).
PROFILE_CORE = frozenset({"mantle_lsp.model.engine"})
_VERSION_TEXT = re.compile(r"\d+\.\d+\Z")


def _version_comparisons(tree: ast.Module) -> Iterator[str]:
    """Comparisons with an engine-version string (``x == "3.22"``, ``x in ("3.21",
    "3.22")``, through a module constant bound to one) or of a project's ``.engine`` with
    anything but a constant that is no version (``settings.engine == "auto"``)."""
    versions = {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and _VERSION_TEXT.match(node.value.value)
        for t in node.targets
        if isinstance(t, ast.Name)
    }

    def versionish(e: ast.expr) -> bool:
        if isinstance(e, ast.Constant):
            return isinstance(e.value, str) and bool(_VERSION_TEXT.match(e.value))
        if isinstance(e, ast.Tuple | ast.List | ast.Set):
            return any(versionish(x) for x in e.elts)
        if isinstance(e, ast.Name):
            return e.id in versions
        return False

    def engine_vs_value(operands: list[ast.expr]) -> bool:
        engine = [x for x in operands if isinstance(x, ast.Attribute) and x.attr == "engine"]
        return bool(engine) and any(
            not isinstance(x, ast.Constant) for x in operands if x not in engine
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(versionish(x) for x in operands) or engine_vs_value(operands):
                yield f"line {node.lineno}: {ast.unparse(node)}"


def test_no_engine_version_is_compared_outside_the_core() -> None:
    found = {
        m: calls
        for m in _modules()
        if m not in PROFILE_CORE and (calls := list(_version_comparisons(_tree(m))))
    }
    assert not found, found


def test_the_version_finder_sees_the_usual_forms() -> None:
    src = (
        'V322 = "3.22"\n'
        "def f(ck, p, e):\n"
        '    a = ck.p.engine != "3.22"\n'
        "    b = p.engine == V322\n"
        '    c = e in ("3.21", "3.22")\n'
        "    d = ck.p.engine == e\n"
    )
    assert len(list(_version_comparisons(ast.parse(src)))) == 4
    clean = (
        "def f(p, s):\n"
        '    return p.profile.has_mutable and s.engine is None or s.engine == "auto"\n'
    )
    assert not list(_version_comparisons(ast.parse(clean)))
