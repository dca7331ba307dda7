"""Project layout: which files belong to a Mantle project and what each one is.

Detection follows the engine (docs/language/layout.md#project-detection): a directory is a project
when at least
two of ``agent.yml``, ``integrations.yml`` and a ``skills/<dir>/skill.md`` (``<dir>`` not
starting with ``_``) exist. Projects may be nested (an examples folder inside a repository
that is itself an agent); a file belongs to the innermost project that contains it, but a
folder that is a project is checked alone: what lies below it and looks like a project is
no part of it, and is checked only when named (:func:`find_projects`).
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class FileKind(enum.Enum):
    SKILL_MD = "skill.md"
    SKILL_MEMORY = "skill memory.yml"
    SKILL_RESPONSES = "skill responses.yml"
    SKILL_TOOLS = "skill tools"
    PROJECT_MEMORY = "project memory.yml"
    PROJECT_RESPONSES = "project responses.yml"
    SHARED_TOOLS = "shared tools"
    AGENT = "agent.yml"
    INTEGRATIONS = "integrations.yml"
    HOOKS = "hooks"
    # ``lib/**/*.py``: helper code tools import (the project root is on ``sys.path`` while
    # tools load). Read only for what it shows about memory (writes, reads, key constants);
    # never reported on.
    HELPER = "helper module"
    # the evaluation's files (docs/language/eval.md): `eval/conftest.yml` (or `.yaml`) and
    # every `*.yml` / `*.yaml` below `eval/scenarios/`
    EVAL_CONFTEST = "eval conftest"
    EVAL_SCENARIO = "eval scenario"


# Directories never searched for projects (tool caches, dependencies, VCS data).
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".cache",
        "site-packages",
        "dist",
        "build",
    }
)
MAX_DEPTH = 12
EVAL_SUFFIXES = (".yml", ".yaml")
CONFTEST_NAMES = ("conftest.yml", "conftest.yaml")  # the engine reads the first it finds
MAX_SCENARIOS = 5000  # scenario files listed per project (a bound on outside input)


def _child_maker() -> Any:
    make = getattr(Path, "_make_child_relpath", None)  # CPython's, for its own listings
    try:
        return make if make is not None and make(Path("/a"), "b.py") == Path("/a/b.py") else None
    except Exception:  # pragma: no cover - another pathlib
        return None


_MAKE_CHILD = _child_maker()


def child(parent: Path, name: str) -> Path:
    """``parent / name`` for the name of a directory entry (one component), without
    pathlib parsing it again: listing a project of 1,000 skills makes ~5,000 paths."""
    return _MAKE_CHILD(parent, name) if _MAKE_CHILD is not None else parent / name


_LISTINGS: dict[str, list[os.DirEntry[str]]] | None = None  # see remembered_listings


@contextlib.contextmanager
def remembered_listings() -> Iterator[None]:
    """Within the block, :func:`listing` reads each folder once: a ``check`` walks the
    tree for layer folders and then lists the project's skill folders again (1,000
    skills: 1,000 directory reads each). Never across blocks, where files may have come
    and gone (nor around ``check --fix``, whose fixes may add files)."""
    global _LISTINGS
    outer = _LISTINGS
    if outer is None:
        _LISTINGS = {}
    try:
        yield
    finally:
        if outer is None:
            _LISTINGS = None


def listing(folder: str) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` (``os.scandir``, unsorted; raises ``OSError``)."""
    cache = _LISTINGS
    if cache is not None:
        found = cache.get(folder)
        if found is not None:
            return found
    with os.scandir(folder) as it:
        entries = list(it)
    if cache is not None:
        cache[folder] = entries
    return entries


def skill_dirs(root: Path) -> list[Path]:
    """``skills/<dir>`` directories the engine visits, sorted, ``_`` folders skipped."""
    skills = root / "skills"
    try:
        entries = sorted(listing(str(skills)), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.startswith("_"):
            continue
        try:
            if e.is_dir():
                out.append(child(skills, e.name))
        except OSError:
            continue
    return out


def linked_skill_dirs(root: Path) -> list[tuple[Path, Path]]:
    """The skill folders of the project at ``root`` that are symbolic links to folders,
    each with the folder it leads to (links resolved): the project lists the files there
    under the link's path too (``skills/up -> ..`` lists the project's memory.yml again as
    ``skills/up/memory.yml``). One directory listing; a link is resolved only if found."""
    skills = root / "skills"
    try:
        entries = listing(str(skills))
    except OSError:
        return []
    out = []
    for e in entries:
        try:
            if e.name.startswith("_") or not e.is_symlink() or not e.is_dir():
                continue
            link = child(skills, e.name)
            out.append((link, Path(os.path.realpath(link))))
        except (OSError, ValueError):
            continue
    return out


def is_project_root(path: Path) -> bool:
    markers = 0
    if (path / "agent.yml").is_file():
        markers += 1
    if (path / "integrations.yml").is_file():
        markers += 1
    if markers < 2 and any((d / "skill.md").is_file() for d in skill_dirs(path)):
        markers += 1
    return markers >= 2


def find_projects(start: Path) -> list[Path]:
    """The projects to check for ``start`` (a directory): ``[start]`` when it is itself a
    project, since the engine loads nothing below it that merely looks like a project
    (tutorial snippets, templates: see :func:`nested_projects`); otherwise every project
    root below it, nested ones included."""
    if is_project_root(start):
        return [start]
    return _walk_projects(start, include_start=True)


def nested_projects(root: Path) -> list[Path]:
    """Folders below the project ``root`` that look like projects of their own. The engine
    never loads them with ``root``; they are checked only when named (on the command line,
    by the configuration's ``include``, or by opening one of their files in an editor)."""
    return _walk_projects(root, include_start=False)


def _walk_projects(start: Path, *, include_start: bool) -> list[Path]:
    """Project roots at (``include_start``) or below ``start``: depth-limited, loop-safe,
    and skipping what git ignores (:class:`~mantle_lsp.model.ignore.IgnoreRules`).

    One directory listing per directory decides both whether it is a project root and
    where to go next; symbolic links to directories are not followed, and a directory
    met again (a bind mount) is skipped."""
    from .ignore import IgnoreRules  # pathspec: only for walks

    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    rules = IgnoreRules(start)

    def walk(d: str, depth: int) -> None:
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            return
        if (depth or include_start) and _is_root_listing(d, entries):
            found.append(Path(d))
        if depth >= MAX_DEPTH:
            return
        for e in entries:
            if e.name in SKIP_DIRS or e.name.startswith("."):
                continue
            try:
                if not e.is_dir(follow_symlinks=False):
                    continue
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen and not rules.ignored_dir(e.path):
                seen.add((st.st_dev, st.st_ino))
                walk(e.path, depth + 1)

    try:
        st = os.stat(start)
    except OSError:
        return found
    seen.add((st.st_dev, st.st_ino))
    walk(str(start), 0)
    return found


def _is_root_listing(d: str, entries: list[os.DirEntry[str]]) -> bool:
    """:func:`is_project_root` for a directory whose listing is at hand."""
    markers = 0
    has_skills = False
    for e in entries:
        if e.name in ("agent.yml", "integrations.yml"):
            with contextlib.suppress(OSError):
                markers += e.is_file()
        elif e.name == "skills":
            has_skills = True
    if markers == 1 and has_skills:
        return any((sd / "skill.md").is_file() for sd in skill_dirs(Path(d)))
    return markers >= 2


def find_project_for(path: Path) -> Path | None:
    """The innermost project root containing ``path`` (a file or directory)."""
    p = path if path.is_dir() else path.parent
    for cand in (p, *p.parents):
        if is_project_root(cand):
            return cand
    return None


_REALPATHS: dict[Path, str] | None = None  # see remembered_links


@contextlib.contextmanager
def remembered_links() -> Iterator[None]:
    """Within the block, :func:`inside` resolves each path's links once (a ``check`` that
    works out the fixes of 50,000 findings of one file asked the file system 100,000
    times); never across blocks, where a link may have changed."""
    global _REALPATHS
    _REALPATHS = {}
    try:
        yield
    finally:
        _REALPATHS = None


def _realpath(path: Path) -> str:
    if _REALPATHS is None:
        return os.path.realpath(path)
    found = _REALPATHS.get(path)
    if found is None:
        found = _REALPATHS[path] = os.path.realpath(path)
    return found


def inside(root: Path, path: Path) -> bool:
    """``path`` is ``root`` or lies below it, both as written and once symbolic links are
    resolved: edits never reach a file outside the project through a link (a skill folder
    that is a symlink to elsewhere) or through ``..``."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return False
    if ".." in rel.parts:
        return False
    try:
        real_root = _realpath(root)
        real = _realpath(path)
    except (OSError, ValueError):
        return False
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def classify(path: Path, root: Path) -> tuple[FileKind, str | None] | None:
    """What ``path`` is inside the project at ``root``: (kind, skill id or None)."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    parts = rel.parts
    if not parts:  # the root folder itself (or a link inside it back to it)
        return None
    if len(parts) == 1:
        name = parts[0]
        return {
            "agent.yml": (FileKind.AGENT, None),
            "integrations.yml": (FileKind.INTEGRATIONS, None),
            "memory.yml": (FileKind.PROJECT_MEMORY, None),
            "responses.yml": (FileKind.PROJECT_RESPONSES, None),
            "hooks.py": (FileKind.HOOKS, None),
        }.get(name)
    if parts[0] == "tools" and len(parts) == 2 and parts[1].endswith(".py"):
        if parts[1] == "__init__.py":
            return None
        return FileKind.SHARED_TOOLS, None
    if parts[0] == "hooks" and _is_hook_module(parts):
        return FileKind.HOOKS, None
    if parts[0] == "lib" and _is_helper_module(parts):
        return FileKind.HELPER, None
    if parts[0] == "eval":
        return _classify_eval(parts)
    if parts[0] == "skills" and len(parts) >= 3:
        sid = parts[1]
        if sid.startswith("_"):
            return None
        if len(parts) == 3:
            kind = {
                "skill.md": FileKind.SKILL_MD,
                "memory.yml": FileKind.SKILL_MEMORY,
                "responses.yml": FileKind.SKILL_RESPONSES,
                "tools.py": FileKind.SKILL_TOOLS,
            }.get(parts[2])
            return (kind, sid) if kind else None
        if (
            len(parts) == 4
            and parts[2] == "tools"
            and parts[3].endswith(".py")
            and parts[3] != "__init__.py"
        ):
            return FileKind.SKILL_TOOLS, sid
    return None


def _classify_eval(parts: tuple[str, ...]) -> tuple[FileKind, str | None] | None:
    """``eval/conftest.y(a)ml``, or a ``*.yml`` / ``*.yaml`` below ``eval/scenarios/`` (not
    in a hidden or cache folder, not itself hidden); what the evaluation writes
    (``eval/results/``) is none of them."""
    if len(parts) == 2 and parts[1] in CONFTEST_NAMES:
        return FileKind.EVAL_CONFTEST, None
    if (
        len(parts) >= 3
        and parts[1] == "scenarios"
        and parts[-1].endswith(EVAL_SUFFIXES)
        and len(parts) <= MAX_DEPTH
        and not any(p.startswith(".") or p in SKIP_DIRS for p in parts[2:])
    ):
        return FileKind.EVAL_SCENARIO, None
    return None


def is_eval_file(root: Path, path: Path) -> bool:
    """``path`` is one of the evaluation's files of the project at ``root``."""
    c = classify(path, root)
    return c is not None and c[0] in (FileKind.EVAL_CONFTEST, FileKind.EVAL_SCENARIO)


def eval_files(root: Path) -> list[tuple[Path, FileKind]]:
    """The evaluation's files of the project at ``root``: the conftest files, then the
    scenario files sorted by path (at most :data:`MAX_SCENARIOS`; links to folders are not
    followed, a file that links out of the project is left out)."""
    out: list[tuple[Path, FileKind]] = []
    folder = root / "eval"
    if folder.is_symlink() and not inside(root, folder):
        return out  # never read through a link out of the project
    try:
        entries = {e.name: e for e in listing(str(folder))}
    except OSError:
        return out
    for name in CONFTEST_NAMES:
        e = entries.get(name)
        if e is not None and _entry_is(e, want_dir=False):
            p = child(folder, name)
            if not e.is_symlink() or inside(root, p):
                out.append((p, FileKind.EVAL_CONFTEST))
    sub = entries.get("scenarios")
    if sub is None or not _entry_is(sub, want_dir=True) or sub.is_symlink():
        return out
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(child(folder, "scenarios")):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        base = Path(dirpath)
        if len(base.relative_to(root).parts) >= MAX_DEPTH - 1:
            dirnames[:] = []
        for name in sorted(filenames):
            if name.startswith(".") or not name.endswith(EVAL_SUFFIXES):
                continue
            p = child(base, name)
            if p.is_file() and (not p.is_symlink() or inside(root, p)):
                found.append(p)
        if len(found) >= MAX_SCENARIOS:
            break
    out.extend((p, FileKind.EVAL_SCENARIO) for p in sorted(found)[:MAX_SCENARIOS])
    return out


def _is_hook_module(parts: tuple[str, ...]) -> bool:
    """``hooks/**/*.py`` as the engine loads them: no ``__init__.py``, no ``__pycache__``."""
    return parts[-1].endswith(".py") and parts[-1] != "__init__.py" and "__pycache__" not in parts


def _is_helper_module(parts: tuple[str, ...]) -> bool:
    """``lib/**/*.py`` (``__init__.py`` included), not in caches or hidden folders."""
    return (
        parts[-1].endswith(".py")
        and len(parts) <= MAX_DEPTH
        and not any(p in SKIP_DIRS or p.startswith(".") for p in parts[:-1])
    )


def helper_files(root: Path) -> list[Path]:
    """The helper modules ``lib/**/*.py`` of the project at ``root``, sorted."""
    lib = root / "lib"
    if not lib.is_dir():
        return []
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(lib):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        base = Path(dirpath)
        if len(base.relative_to(root).parts) >= MAX_DEPTH:
            dirnames[:] = []
        for name in filenames:
            p = base / name
            if _is_helper_module(p.relative_to(root).parts) and p.is_file():
                out.append(p)
    return sorted(out)


def hook_module_key(root: Path, path: Path) -> tuple[int, tuple[str, ...]]:
    """Sort key for the engine's hook loading order: ``hooks.py``, then ``hooks/**/*.py``
    sorted by path components."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = path.parts
    return (0 if parts == ("hooks.py",) else 1, parts)


def hook_files(root: Path) -> list[Path]:
    """``hooks.py`` and ``hooks/**/*.py`` of the project at ``root``, in loading order."""
    out: list[Path] = []
    if (root / "hooks.py").is_file():
        out.append(root / "hooks.py")
    hooks = root / "hooks"
    if hooks.is_dir():
        for dirpath, dirnames, filenames in os.walk(hooks):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            base = Path(dirpath)
            if len(base.relative_to(root).parts) > MAX_DEPTH:
                dirnames[:] = []
            for name in filenames:
                p = base / name
                if _is_hook_module(p.relative_to(root).parts) and p.is_file():
                    out.append(p)
    return sorted(out, key=lambda p: hook_module_key(root, p))


def project_files(root: Path) -> Iterator[tuple[Path, FileKind, str | None]]:
    """Every Mantle file of the project at ``root`` that exists on disk."""
    for p in hook_files(root):
        yield p, FileKind.HOOKS, None
    for name in ("agent.yml", "integrations.yml", "memory.yml", "responses.yml"):
        p = root / name
        if p.is_file():
            c = classify(p, root)
            if c:
                yield p, c[0], c[1]
    for p in _tool_modules(root / "tools"):
        yield p, FileKind.SHARED_TOOLS, None
    for p in helper_files(root):
        yield p, FileKind.HELPER, None
    for p, kind in eval_files(root):
        yield p, kind, None
    for d in skill_dirs(root):
        sid = d.name
        try:  # one directory listing per skill instead of a stat per possible file
            entries = {e.name: e for e in listing(str(d))}
        except OSError:
            continue
        for name, kind in _SKILL_FILES:
            found = entries.get(name)
            if found is not None and _entry_is(found, want_dir=False):
                yield child(d, name), kind, sid
        sub = entries.get("tools")
        if sub is not None and _entry_is(sub, want_dir=True):
            for p in _tool_modules(child(d, "tools")):
                yield p, FileKind.SKILL_TOOLS, sid


def _tool_modules(folder: Path) -> list[Path]:
    """The tool modules of a ``tools/`` folder (``*.py`` but ``__init__.py``), by name."""
    try:
        entries = sorted(listing(str(folder)), key=lambda e: e.name)
    except OSError:
        return []
    return [
        child(folder, e.name)
        for e in entries
        if e.name.endswith(".py") and e.name != "__init__.py" and _entry_is(e, want_dir=False)
    ]


def _entry_is(entry: os.DirEntry[str], want_dir: bool) -> bool:
    """Like ``Path.is_file``/``is_dir``: a symlink loop or an unreadable entry is neither."""
    try:
        return entry.is_dir() if want_dir else entry.is_file()
    except OSError:
        return False


_SKILL_FILES = (
    ("skill.md", FileKind.SKILL_MD),
    ("memory.yml", FileKind.SKILL_MEMORY),
    ("responses.yml", FileKind.SKILL_RESPONSES),
    ("tools.py", FileKind.SKILL_TOOLS),
)
