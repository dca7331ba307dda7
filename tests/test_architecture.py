"""The layering of ``server/mantle_lsp`` (docs/architecture.md), checked on the source.

- No import cycles, counting every import: at module level, inside functions and under
  ``TYPE_CHECKING`` (a cycle hidden in a function is still a cycle in the design); none
  between packages either (``lsp`` and ``cli`` included), and every import goes the way
  the layers do (:data:`LAYERS`).
- Only ``lsp/`` imports pygls or lsprotocol (only it speaks the protocol).
- Below ``lsp/`` and ``cli/`` (``syntax/``, ``model/`` — ``model/semantics.py`` included —
  ``ide/`` and the modules beside them) the disk is reached through two doors and no
  others: file contents through the reader (``model/source.py``; a project's reader lets
  an open editor buffer win), what exists through the layout interface
  (``model/layout.py``'s ``Layout``, reached as ``fs``, which the server keeps current
  from its file events). ``cli/`` and ``sync/`` write files (through ``atomic.py``) and
  are outside this rule.
- No function in ``lsp/`` is longer than :data:`LONG_FUNCTION` lines.
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

# The two doors to the disk below lsp/ and cli/: file contents (the reader) and what
# exists (the layout interface). Calls on an object named `fs` are calls of the layout
# interface (`fs.is_file(p)`, `self.p.fs.is_dir(p)`).
DOORS = {
    "mantle_lsp.model.source": "the reader: file contents",
    "mantle_lsp.model.layout": "the layout interface: listings, stats, links, .gitignore",
}
# At the level of cli/ (or above it): they may touch the disk (cli/ and sync/ write files).
ABOVE = ("mantle_lsp.lsp", "mantle_lsp.cli", "mantle_lsp.sync", "mantle_lsp.__main__")
# Other calls below lsp/ and cli/ that the finder takes for disk access, and why they are
# not a project's disk: module -> (why, the calls as the finder names them).
IO_ALLOWED: dict[str, tuple[str, frozenset[str]]] = {
    "mantle_lsp.atomic": (
        "the one way cli/ and sync/ write files (only they import it: LAYERS)",
        frozenset(
            {
                "os.path.realpath",
                "folder.mkdir",
                "os.open",
                "os.stat",
                "os.write",
                "os.fsync",
                "os.close",
                "os.replace",
                "os.chmod",
                "os.chown",
                "os.unlink",
            }
        ),
    ),
    "mantle_lsp.parallel": (
        "worker processes and their pipes",
        frozenset(
            {"os.fork", "os.pipe", "os.close", "os._exit", "os.open", "os.dup2", "os.fdopen"}
            | {"os.waitpid"}
        ),
    ),
    "mantle_lsp.workers": (
        "how many CPUs this process may use",
        frozenset({"os.sched_getaffinity", "os.cpu_count"}),
    ),
    "mantle_lsp.bytecode": (
        "the package's own bytecode in the user's cache folder, never a project's files "
        "(docs/decisions.md, entry 34)",
        frozenset(
            {"Path(__file__).resolve", "os.access", "folder.parent.mkdir", "folder.mkdir"}
            | {"os.getuid", "os.stat", "open", "os.getpid", "path.parent.mkdir", "os.open"}
            | {"os.write", "os.close", "os.replace", "os.unlink"}
        ),
    ),
    "mantle_lsp.pages": (
        "the package's own documentation pages (package data), never a project's files",
        frozenset(
            {"Path(__file__).resolve", "d.is_dir", "path.is_file", "d.glob", "path.read_text"}
        ),
    ),
    "mantle_lsp.syntax.conditions_lark": (
        "the package's own grammar (package data)",
        frozenset({"(files('mantle_lsp.grammars') / 'conditions.lark').read_text"}),
    ),
    "mantle_lsp.syntax.hooks_py": (
        "a method of the hooks parser that resolves names, not Path.resolve",
        frozenset({"self.resolve"}),
    ),
    "mantle_lsp.syntax.tools_py": (
        "a scope of the tools parser resolving a name, not Path.resolve",
        frozenset({"scope.resolve"}),
    ),
}

# Which packages (and top-level modules) each one may import: the layers of
# docs/architecture.md. `mantle_lsp` is the package itself (its version).
LAYERS: dict[str, frozenset[str]] = {
    "mantle_lsp": frozenset(),
    "syntax": frozenset(),
    "model": frozenset({"syntax"}),
    "ide": frozenset({"syntax", "model"}),
    "bytecode": frozenset(),
    "workers": frozenset({"model", "bytecode"}),
    "parallel": frozenset({"syntax", "model", "ide", "workers"}),
    "pages": frozenset(),
    "atomic": frozenset(),
    "sync": frozenset({"syntax", "model", "atomic"}),
    "lsp": frozenset({"mantle_lsp", "syntax", "model", "ide", "parallel", "workers", "pages"}),
    "cli": frozenset(
        {"mantle_lsp", "syntax", "model", "ide", "parallel", "workers", "pages", "atomic"}
        | {"sync", "lsp", "bytecode"}
    ),
    "__main__": frozenset({"cli"}),
}

# lines, decorators not counted. The handlers of lsp/ are module-level functions, one
# module per feature area, each wired by a small `register(server)` (docs/architecture.md,
# "Where the editor features are wired"): no function there is allowed to grow past this.
LONG_FUNCTION = 150

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


# os.path functions that only compute with the path's text
_PURE_PATH = frozenset(
    {"join", "relpath", "basename", "dirname", "split", "splitext", "normpath", "isabs"}
    | {"commonpath", "normcase"}
    | {"abspath", "expanduser"}  # the working folder and $HOME: the process's, no disk
)


def _file_io(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, call) for every call that may reach the disk, but those of the layout
    interface (on an object named ``fs``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                mods.append(node.module or "")
                if node.module in ("os", "os.path"):  # from os import scandir
                    for a in node.names:
                        if a.name in _PATH_IO or a.name in ("scandir", "listdir", "walk"):
                            yield node.lineno, f"from {node.module} import {a.name}"
            for m in mods:
                if m in ("shutil", "glob") or m.startswith(("shutil.", "glob.")):
                    yield node.lineno, f"import {m}"
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            yield node.lineno, "open"
        elif isinstance(f, ast.Attribute):
            base = ast.unparse(f.value)
            if base == "os.path" and f.attr in _PURE_PATH:
                continue
            layout_call = base.rsplit(".", 1)[-1] == "fs"
            if base in _IO_MODULES or (f.attr in _PATH_IO and not layout_call):
                yield node.lineno, ast.unparse(f)


def _below_lsp_and_cli(module: str) -> bool:
    return not (module in ABOVE or module.startswith(tuple(m + "." for m in ABOVE)))


def test_the_disk_is_reached_through_the_reader_and_the_layout_only() -> None:
    found: dict[str, list[str]] = {}
    for m in _modules():
        if not _below_lsp_and_cli(m) or m in DOORS:
            continue
        allowed = IO_ALLOWED.get(m, ("", frozenset()))[1]
        calls = [f"line {line}: {call}" for line, call in _file_io(_tree(m)) if call not in allowed]
        if calls:
            found[m] = sorted(calls)
    assert not found, (
        "disk access below lsp/ and cli/ (contents go through the reader, model/source.py; "
        f"what exists through the layout interface, model/layout.py): {found}"
    )


def test_semantics_and_ide_are_held_to_it() -> None:
    """The rule covers the module that answers every semantic question and the features."""
    assert _below_lsp_and_cli("mantle_lsp.model.semantics")
    assert _below_lsp_and_cli("mantle_lsp.ide.rules.tools")
    assert not _below_lsp_and_cli("mantle_lsp.cli.main")
    assert not _below_lsp_and_cli("mantle_lsp.sync.local")


def test_the_io_allow_list_names_calls_still_made() -> None:
    # an entry whose module no longer makes the call must go: the list only shrinks
    stale = []
    for m, (_, calls) in IO_ALLOWED.items():
        made = {call for _, call in _file_io(_tree(m))} if m in _modules() else set()
        stale += [f"{m}: {c}" for c in sorted(calls - made)]
    assert not stale, stale


def test_the_io_finder_sees_the_usual_forms() -> None:
    src = (
        "import shutil\n"
        "from os import scandir\n"
        "def f(p, os):\n"
        "    open(p)\n"
        "    p.read_text()\n"
        "    p.is_file()\n"
        "    os.listdir(p)\n"
        "    os.path.exists(p)\n"
    )
    calls = list(_file_io(ast.parse(src)))
    assert len(calls) == 7, calls
    quiet = (
        "import io\nbuf = io.StringIO()\nd = {}.get('x')\n"
        "def g(self, fs, p):\n    fs.is_file(p)\n    self.p.fs.is_dir(p)\n"
        "    os.path.join(p, 'x')\n"
    )
    assert not list(_file_io(ast.parse(quiet)))


def _package(module: str) -> str:
    """The package of a module (``model``), or the module beside them (``parallel``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _package_graph() -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the imports that make the edge."""
    out: dict[str, dict[str, list[str]]] = {}
    modules = _modules()
    for m in modules:
        edges = out.setdefault(_package(m), {})
        for dep, line in _imported(m):
            if dep in modules and _package(dep) != _package(m):
                edges.setdefault(_package(dep), []).append(f"{m}:{line} imports {dep}")
    return out


def test_no_package_level_cycles() -> None:
    graph = _package_graph()
    cycles = _cycles({p: set(edges) for p, edges in graph.items()})
    detail = [
        " <-> ".join(c) + ": " + "; ".join(w for p in c for q in c for w in graph[p].get(q, ())[:2])
        for c in cycles
    ]
    assert not cycles, "package cycles:\n" + "\n".join(detail)


def test_imports_go_the_way_of_the_layers() -> None:
    graph = _package_graph()
    assert set(graph) <= set(LAYERS), f"a package LAYERS does not know: {set(graph) - set(LAYERS)}"
    wrong = [
        why
        for p, edges in graph.items()
        for q, whys in edges.items()
        if q not in LAYERS[p]
        for why in whys
    ]
    assert not wrong, "imports against the layers of docs/architecture.md:\n" + "\n".join(wrong)


def test_the_layers_table_holds_no_cycle() -> None:
    assert _cycles({p: set(deps) for p, deps in LAYERS.items()}) == []


def test_only_lsp_imports_the_protocol_libraries() -> None:
    found = [
        f"{m}:{line} imports {dep}"
        for m in _modules()
        if not m.startswith("mantle_lsp.lsp")
        for dep, line in _imported(m)
        if dep.split(".")[0] in ("pygls", "lsprotocol")
    ]
    assert not found, found


def _functions(tree: ast.Module, prefix: str) -> Iterator[tuple[str, int]]:
    """(qualified name, lines) of every function, nested ones included."""

    def visit(node: ast.AST, qual: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{qual}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, (child.end_lineno or child.lineno) - child.lineno + 1
                yield from visit(child, name)
            else:
                yield from visit(child, qual)

    yield from visit(tree, prefix)


def _long_functions() -> dict[str, int]:
    return {
        name: n
        for m in _modules()
        if m.startswith("mantle_lsp.lsp")
        for name, n in _functions(_tree(m), m)
        if n > LONG_FUNCTION
    }


def test_no_long_function_in_lsp() -> None:
    long = _long_functions()
    assert not long, f"functions of lsp/ over {LONG_FUNCTION} lines (split them): {long}"


def test_a_function_over_the_limit_fails() -> None:
    src = "def handlers():\n" + "    x = 1\n" * LONG_FUNCTION  # one line over, with its def
    assert dict(_functions(ast.parse(src), "m")) == {"m.handlers": LONG_FUNCTION + 1}


def test_the_function_measure_sees_nested_functions() -> None:
    src = (
        "def a():\n    def b():\n        pass\n    return b\n"
        "class C:\n    def d(self):\n        pass\n"
    )
    assert dict(_functions(ast.parse(src), "m")) == {"m.a": 4, "m.a.b": 2, "m.C.d": 2}


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
