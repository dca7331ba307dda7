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
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .source import read_source


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


def _safely(ask: Any, **kw: bool) -> bool:
    """``ask(**kw)``, an entry that cannot be examined (a symlink loop) being nothing."""
    try:
        return bool(ask(**kw))
    except OSError:
        return False


class Entry:
    """One entry of a folder's listing (:meth:`Layout.listing`): what it is, as
    ``os.DirEntry`` tells it (remembered once asked; an entry that cannot be examined, a
    symbolic-link loop, is neither a file nor a folder)."""

    __slots__ = ("_e", "name", "path")

    def __init__(self, entry: os.DirEntry[str]) -> None:
        self._e = entry
        self.name = entry.name
        self.path = entry.path

    @property
    def is_dir(self) -> bool:
        """A folder, or a symbolic link to one."""
        return _safely(self._e.is_dir)

    @property
    def is_file(self) -> bool:
        """A regular file, or a symbolic link to one."""
        return _safely(self._e.is_file)

    @property
    def is_link(self) -> bool:
        return _safely(self._e.is_symlink)

    @property
    def is_own_dir(self) -> bool:
        """A folder itself, not a symbolic link to one."""
        return _safely(self._e.is_dir, follow_symlinks=False)

    @property
    def is_own_file(self) -> bool:
        """A regular file itself, not a symbolic link to one."""
        return _safely(self._e.is_file, follow_symlinks=False)

    @property
    def ident(self) -> tuple[int, int] | None:
        """(device, inode) of the entry itself (links not followed), for loop-safe walks;
        None when it cannot be examined."""
        try:
            st = self._e.stat(follow_symlinks=False)
        except OSError:
            return None
        return st.st_dev, st.st_ino


class Layout:
    """What exists on disk: folder listings, whether a path is a file or a folder, where
    links lead, the ``.gitignore`` files. With the reader (:mod:`.source`, for file
    contents, open editor buffers first) it is one of the two doors through which
    ``model/`` and ``ide/`` learn about the disk: nothing else below ``lsp/`` and ``cli/``
    looks (``tests/test_architecture.py``).

    A layout made with ``keep`` remembers every answer until it is told that a path
    changed (:meth:`changed`): the language server's, kept current from its file events,
    so that what a rule sees of the disk changes when the server hears of a change and
    not at whatever moment the rule happens to ask. Without ``keep`` it asks the disk
    each time (:data:`DISK`, which ``check`` makes remember within
    :func:`remembered_listings` and :func:`remembered_links`). Where links lead
    (:meth:`realpath`, :meth:`resolve`) is asked of the disk at the time in either case:
    an edit must never reach through a link made since (see :func:`inside`)."""

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self._listings: dict[str, list[Entry]] | None = {} if keep else None
        self._modes: dict[str, int | None] | None = {} if keep else None
        self._links: dict[str, bool] | None = {} if keep else None
        self._ignores: dict[str, list[str] | None] | None = {} if keep else None
        self._real: dict[Path, str] | None = None

    # -- listings and stats ------------------------------------------------------------
    def listing(self, folder: str) -> list[Entry]:
        """The entries of ``folder`` (unsorted; raises ``OSError``)."""
        cache = self._listings
        if cache is not None:
            found = cache.get(folder)
            if found is not None:
                return found
        with os.scandir(folder) as it:
            entries = [Entry(e) for e in it]
        if cache is not None:
            cache[folder] = entries
        return entries

    def _mode(self, path: str) -> int | None:
        cache = self._modes
        if cache is not None and path in cache:
            return cache[path]
        mode = _stat_mode(path)
        if cache is not None:
            cache[path] = mode
        return mode

    def is_file(self, path: Path | str) -> bool:
        """A regular file, or a link to one (``Path.is_file``)."""
        mode = self._mode(str(path))
        return mode is not None and stat.S_ISREG(mode)

    def is_dir(self, path: Path | str) -> bool:
        """A folder, or a link to one (``Path.is_dir``)."""
        mode = self._mode(str(path))
        return mode is not None and stat.S_ISDIR(mode)

    def kind(self, path: Path | str) -> int | None:
        """What ``path`` is (``stat.S_IFMT`` of its mode, links followed), or None."""
        mode = self._mode(str(path))
        return None if mode is None else stat.S_IFMT(mode)

    def remember(self, path: str, kind: int | None) -> None:
        """Keep ``kind`` (:meth:`kind`) as the answer for ``path`` until a change of it is
        reported, unless this layout has an answer of its own: what a project loaded
        elsewhere (another process, :data:`DISK`) was told, so that :meth:`changed` says
        when the disk no longer agrees with it."""
        if self._modes is not None:
            self._modes.setdefault(path, kind)

    def exists(self, path: Path | str) -> bool:
        """Anything, links followed (``os.path.exists``)."""
        return self._mode(str(path)) is not None

    def lexists(self, path: Path | str) -> bool:
        """Anything, a broken link included (``os.path.lexists``)."""
        key = str(path)
        if self._mode(key) is not None:
            return True
        cache = self._links
        if cache is not None and key in cache:
            return cache[key]
        found = os.path.lexists(key)
        if cache is not None:
            cache[key] = found
        return found

    def ident(self, path: Path) -> tuple[int, int] | None:
        """(device, inode) of ``path``, links followed; None when it cannot be examined."""
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        return st.st_dev, st.st_ino

    def ignore_lines(self, path: Path) -> list[str] | None:
        """The lines of the ignore file ``path`` (a ``.gitignore``, ``.git/info/exclude``);
        None when it is not a readable regular file of text, or is empty."""
        key = str(path)
        cache = self._ignores
        if cache is not None and key in cache:
            return cache[key]
        lines = None
        if self.is_file(path):
            src = read_source(path)
            if src.analyzable and not src.issues and src.text.strip():
                lines = src.text.splitlines()
        if cache is not None:
            cache[key] = lines
        return lines

    # -- links -------------------------------------------------------------------------
    def realpath(self, path: Path) -> str:
        """``os.path.realpath`` (remembered only within :func:`remembered_links`)."""
        cache = self._real
        if cache is None:
            return os.path.realpath(path)
        found = cache.get(path)
        if found is None:
            found = cache[path] = os.path.realpath(path)
        return found

    def resolve(self, path: Path) -> Path:
        """``path`` made absolute with links resolved; a symlink loop (which
        ``Path.resolve`` raises on) or an unreadable component leaves the path as
        written."""
        try:
            return path.resolve()
        except (OSError, RuntimeError):
            return path.absolute()

    # -- keeping current ---------------------------------------------------------------
    def changed(self, path: Path) -> set[str]:
        """``path`` changed on disk (created, modified, deleted, moved; a file or a
        folder): what is known of it, of what lies below it and of the listings of the
        folders above it is forgotten. Returns the paths at or below it whose answer (is
        it a file, a folder, nothing?) given before is different now."""
        if not self.keep:
            return set()
        key = str(path)
        below = key.rstrip(os.sep) + os.sep

        def hit(k: str) -> bool:
            return k == key or k.startswith(below)

        differs = set()
        modes = self._modes
        if modes is not None:
            for k in [k for k in list(modes) if hit(k)]:
                old = modes.pop(k, None)
                new = _stat_mode(k)
                if (None if old is None else stat.S_IFMT(old)) != (
                    None if new is None else stat.S_IFMT(new)
                ):
                    differs.add(k)
        for cache in (self._links, self._ignores, self._listings):
            if cache is not None:
                for k in [k for k in list(cache) if hit(k)]:
                    cache.pop(k, None)
        if self._listings is not None:
            for folder in path.parents:
                self._listings.pop(str(folder), None)
        return differs


def _stat_mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return None


DISK = Layout()
"""The layout that asks the disk each time (``check``; the server keeps its own)."""


@contextlib.contextmanager
def remembered_listings(fs: Layout = DISK) -> Iterator[None]:
    """Within the block, ``fs`` (which does not keep its answers) reads each folder and
    looks at each path once: a ``check`` walks the tree for layer folders and then lists
    the project's skill folders again (1,000 skills: 1,000 directory reads each). Never
    across blocks, where files may have come and gone (nor around ``check --fix``, whose
    fixes may add files)."""
    if fs.keep or fs._listings is not None:
        yield
        return
    fs._listings, fs._modes, fs._links, fs._ignores = {}, {}, {}, {}
    try:
        yield
    finally:
        fs._listings = fs._modes = fs._links = fs._ignores = None


def skill_dirs(root: Path, fs: Layout = DISK) -> list[Path]:
    """``skills/<dir>`` directories the engine visits, sorted, ``_`` folders skipped."""
    skills = root / "skills"
    try:
        entries = sorted(fs.listing(str(skills)), key=lambda e: e.name)
    except OSError:
        return []
    return [child(skills, e.name) for e in entries if not e.name.startswith("_") and e.is_dir]


def linked_skill_dirs(root: Path, fs: Layout = DISK) -> list[tuple[Path, Path]]:
    """The skill folders of the project at ``root`` that are symbolic links to folders,
    each with the folder it leads to (links resolved): the project lists the files there
    under the link's path too (``skills/up -> ..`` lists the project's memory.yml again as
    ``skills/up/memory.yml``). One directory listing; a link is resolved only if found."""
    skills = root / "skills"
    try:
        entries = fs.listing(str(skills))
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.startswith("_") or not e.is_link or not e.is_dir:
            continue
        link = child(skills, e.name)
        try:
            out.append((link, Path(fs.realpath(link))))
        except (OSError, ValueError):
            continue
    return out


def is_project_root(path: Path, fs: Layout = DISK) -> bool:
    markers = 0
    if fs.is_file(path / "agent.yml"):
        markers += 1
    if fs.is_file(path / "integrations.yml"):
        markers += 1
    if markers < 2 and any(fs.is_file(d / "skill.md") for d in skill_dirs(path, fs)):
        markers += 1
    return markers >= 2


def find_projects(start: Path, fs: Layout = DISK) -> list[Path]:
    """The projects to check for ``start`` (a directory): ``[start]`` when it is itself a
    project, since the engine loads nothing below it that merely looks like a project
    (tutorial snippets, templates: see :func:`nested_projects`); otherwise every project
    root below it, nested ones included."""
    if is_project_root(start, fs):
        return [start]
    return _walk_projects(start, fs, include_start=True)


def nested_projects(root: Path, fs: Layout = DISK) -> list[Path]:
    """Folders below the project ``root`` that look like projects of their own. The engine
    never loads them with ``root``; they are checked only when named (on the command line,
    by the configuration's ``include``, or by opening one of their files in an editor)."""
    return _walk_projects(root, fs, include_start=False)


def _walk_projects(start: Path, fs: Layout, *, include_start: bool) -> list[Path]:
    """Project roots at (``include_start``) or below ``start``: depth-limited, loop-safe,
    and skipping what git ignores (:class:`~mantle_lsp.model.ignore.IgnoreRules`).

    One directory listing per directory decides both whether it is a project root and
    where to go next; symbolic links to directories are not followed, and a directory
    met again (a bind mount) is skipped."""
    from .ignore import IgnoreRules  # pathspec: only for walks

    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    rules = IgnoreRules(start, fs)

    def walk(d: str, depth: int) -> None:
        try:
            entries = sorted(fs.listing(d), key=lambda e: e.name)
        except OSError:
            return
        if (depth or include_start) and _is_root_listing(d, entries, fs):
            found.append(Path(d))
        if depth >= MAX_DEPTH:
            return
        for e in entries:
            if e.name in SKIP_DIRS or e.name.startswith(".") or not e.is_own_dir:
                continue
            ident = e.ident
            if ident is not None and ident not in seen and not rules.ignored_dir(e.path):
                seen.add(ident)
                walk(e.path, depth + 1)

    top = fs.ident(start)
    if top is None:
        return found
    seen.add(top)
    walk(str(start), 0)
    return found


def _is_root_listing(d: str, entries: list[Entry], fs: Layout) -> bool:
    """:func:`is_project_root` for a directory whose listing is at hand."""
    markers = 0
    has_skills = False
    for e in entries:
        if e.name in ("agent.yml", "integrations.yml"):
            markers += e.is_file
        elif e.name == "skills":
            has_skills = True
    if markers == 1 and has_skills:
        return any(fs.is_file(sd / "skill.md") for sd in skill_dirs(Path(d), fs))
    return markers >= 2


def find_project_for(path: Path, fs: Layout = DISK) -> Path | None:
    """The innermost project root containing ``path`` (a file or directory)."""
    p = path if fs.is_dir(path) else path.parent
    for cand in (p, *p.parents):
        if is_project_root(cand, fs):
            return cand
    return None


@contextlib.contextmanager
def remembered_links(fs: Layout = DISK) -> Iterator[None]:
    """Within the block, :func:`inside` resolves each path's links once (a ``check`` that
    works out the fixes of 50,000 findings of one file asked the file system 100,000
    times); never across blocks, where a link may have changed."""
    fs._real = {}
    try:
        yield
    finally:
        fs._real = None


def resolve(path: Path) -> Path:
    """``path`` made absolute with links resolved (:meth:`Layout.resolve`)."""
    return DISK.resolve(path)


def inside(root: Path, path: Path, fs: Layout = DISK) -> bool:
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
        real_root = fs.realpath(root)
        real = fs.realpath(path)
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


def eval_files(root: Path, fs: Layout = DISK) -> list[tuple[Path, FileKind]]:
    """The evaluation's files of the project at ``root``: the conftest files, then the
    scenario files sorted by path (at most :data:`MAX_SCENARIOS`; links to folders are not
    followed, a file that links out of the project is left out)."""
    out: list[tuple[Path, FileKind]] = []
    folder = root / "eval"
    if not inside(root, folder, fs):
        return out  # never read through a link out of the project
    try:
        entries = {e.name: e for e in fs.listing(str(folder))}
    except OSError:
        return out
    for name in CONFTEST_NAMES:
        e = entries.get(name)
        if e is not None and e.is_file:
            p = child(folder, name)
            if not e.is_link or inside(root, p, fs):
                out.append((p, FileKind.EVAL_CONFTEST))
    sub = entries.get("scenarios")
    if sub is None or not sub.is_own_dir:
        return out
    found: list[Path] = []

    def walk(d: Path, depth: int) -> None:
        try:
            listed = sorted(fs.listing(str(d)), key=lambda e: e.name)
        except OSError:
            return
        for e in listed:
            if len(found) >= MAX_SCENARIOS or e.name.startswith("."):
                continue
            if e.is_own_dir:
                if e.name not in SKIP_DIRS and depth < MAX_DEPTH - 3:
                    walk(child(d, e.name), depth + 1)
            elif e.is_file and e.name.endswith(EVAL_SUFFIXES):
                p = child(d, e.name)
                if not e.is_link or inside(root, p, fs):
                    found.append(p)

    walk(child(folder, "scenarios"), 0)
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


def _walk_files(fs: Layout, top: Path, prune: Any, deepest: int) -> Iterator[Path]:
    """The files (links to files included) below ``top``, as ``os.walk`` finds them:
    links to folders are not entered, folders ``prune`` rejects neither, nor any below a
    folder ``deepest`` levels down (its own files are listed)."""
    todo = [(top, 0)]
    while todo:
        base, depth = todo.pop()
        try:
            entries = fs.listing(str(base))
        except OSError:
            continue
        for e in entries:
            if e.is_dir:
                if depth < deepest and not e.is_link and not prune(e.name):
                    todo.append((child(base, e.name), depth + 1))
            elif e.is_file:
                yield child(base, e.name)


def helper_files(root: Path, fs: Layout = DISK) -> list[Path]:
    """The helper modules ``lib/**/*.py`` of the project at ``root``, sorted."""
    lib = root / "lib"
    if not fs.is_dir(lib):
        return []
    files = _walk_files(fs, lib, lambda d: d in SKIP_DIRS or d.startswith("."), MAX_DEPTH - 1)
    return sorted(p for p in files if _is_helper_module(p.relative_to(root).parts))


def hook_module_key(root: Path, path: Path) -> tuple[int, tuple[str, ...]]:
    """Sort key for the engine's hook loading order: ``hooks.py``, then ``hooks/**/*.py``
    sorted by path components."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = path.parts
    return (0 if parts == ("hooks.py",) else 1, parts)


def hook_files(root: Path, fs: Layout = DISK) -> list[Path]:
    """``hooks.py`` and ``hooks/**/*.py`` of the project at ``root``, in loading order."""
    out: list[Path] = []
    if fs.is_file(root / "hooks.py"):
        out.append(root / "hooks.py")
    hooks = root / "hooks"
    if fs.is_dir(hooks):
        found = _walk_files(fs, hooks, lambda d: d == "__pycache__", MAX_DEPTH)
        out.extend(p for p in found if _is_hook_module(p.relative_to(root).parts))
    return sorted(out, key=lambda p: hook_module_key(root, p))


def project_files(root: Path, fs: Layout = DISK) -> Iterator[tuple[Path, FileKind, str | None]]:
    """Every Mantle file of the project at ``root`` that exists on disk."""
    for p in hook_files(root, fs):
        yield p, FileKind.HOOKS, None
    for name in ("agent.yml", "integrations.yml", "memory.yml", "responses.yml"):
        p = root / name
        if fs.is_file(p):
            c = classify(p, root)
            if c:
                yield p, c[0], c[1]
    for p in _tool_modules(root / "tools", fs):
        yield p, FileKind.SHARED_TOOLS, None
    for p in helper_files(root, fs):
        yield p, FileKind.HELPER, None
    for p, kind in eval_files(root, fs):
        yield p, kind, None
    for d in skill_dirs(root, fs):
        sid = d.name
        try:  # one directory listing per skill instead of a stat per possible file
            entries = {e.name: e for e in fs.listing(str(d))}
        except OSError:
            continue
        for name, kind in _SKILL_FILES:
            found = entries.get(name)
            if found is not None and found.is_file:
                yield child(d, name), kind, sid
        sub = entries.get("tools")
        if sub is not None and sub.is_dir:
            for p in _tool_modules(child(d, "tools"), fs):
                yield p, FileKind.SKILL_TOOLS, sid


def _tool_modules(folder: Path, fs: Layout) -> list[Path]:
    """The tool modules of a ``tools/`` folder (``*.py`` but ``__init__.py``), by name."""
    try:
        entries = sorted(fs.listing(str(folder)), key=lambda e: e.name)
    except OSError:
        return []
    return [
        child(folder, e.name)
        for e in entries
        if e.name.endswith(".py") and e.name != "__init__.py" and e.is_file
    ]


_SKILL_FILES = (
    ("skill.md", FileKind.SKILL_MD),
    ("memory.yml", FileKind.SKILL_MEMORY),
    ("responses.yml", FileKind.SKILL_RESPONSES),
    ("tools.py", FileKind.SKILL_TOOLS),
)
