"""Project settings: ``[tool.mantle-lsp]`` in ``pyproject.toml``, ``mantle-lsp.toml`` or
``.mantle-lsp.toml``, merged with command-line (or editor) overrides.

Pure: discovery, parsing and merging; every problem with a file comes back as a
:class:`SettingsError` (with the line of the offending key), nothing raises on user input.
The rule selection follows ruff's: each layer (the file, then the command line) may set
``select`` (which starts the selection afresh), ``extend-select`` and ``ignore``; inside a
layer the most specific matching prefix wins (an ``ignore`` on a tie). Globs
(``exclude``, ``extend-exclude``, ``include``, ``per-file-ignores``) are gitignore-style,
read by ``pathspec`` and compiled once per :class:`Settings`, and relative to the folder
of the configuration file. :func:`apply` filters a list of
diagnostics by settings (select/ignore, per-file-ignores, excludes, min-severity), the same
way for ``check`` and the language server.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..syntax.errors import closest
from .layout import DISK, Layout, is_eval_file
from .source import read_limited

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_NAMES = (".mantle-lsp.toml", "mantle-lsp.toml", "pyproject.toml")
"""The files searched in each folder, in order of precedence (a pyproject.toml counts
only when it has a ``[tool.mantle-lsp]`` table)."""
SEVERITIES = ("error", "warning", "information", "hint")
ENGINES = ("auto", "3.21", "3.22")
DEFAULT_MIN_SEVERITY = "information"
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "__pycache__",
    "node_modules",
    "site-packages",
)
"""Folders never checked unless ``exclude`` replaces this list (tool caches, VCS data,
dependencies). Names no skill id could reasonably take: a skill folder called ``build``
is still checked."""

CODE_KEYS = ("select", "extend-select", "ignore")
FIX_KEYS = ("fixable", "extend-fixable", "unfixable")
GLOB_KEYS = ("exclude", "extend-exclude", "include")
LIST_KEYS = (*CODE_KEYS, *FIX_KEYS, *GLOB_KEYS)
KEYS = (
    "extend",
    *CODE_KEYS,
    "per-file-ignores",
    "severity",
    *FIX_KEYS,
    *GLOB_KEYS,
    "engine",
    "min-severity",
    "eval",
)
OFF = "off"
LEVELS = (*SEVERITIES, OFF)  # the values of `severity`
MAX_CONFIG_BYTES = 1024 * 1024
MAX_EXTEND_DEPTH = 10  # files in one `extend` chain, the first included


@dataclass(frozen=True)
class SettingsError:
    """A problem in a configuration file: 0-based line, columns on that line.
    ``left_out``: what the problem leaves out of the settings (a key, a list entry, a code
    in a list); None when the whole file is not read (invalid TOML, unreadable, too large,
    not a table)."""

    path: Path
    line: int
    start: int
    end: int
    message: str
    left_out: str | None
    label: str | None = None  # what to call it instead of path:line:col (`--config K=V`)

    def render(self, display: Callable[[Path], str] = str) -> str:
        """``path:line:col: error: message`` (1-based, like ``check``'s output)."""
        if self.label is not None:
            return f"{self.label}: error: {self.message}"
        where = f"{display(self.path)}:{self.line + 1}:{self.start + 1}"
        return f"{where}: error: {self.message}"


@dataclass(frozen=True)
class Layer:
    """One source of rule selection (a file, or the command line / editor)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Overrides:
    """What the command line (or the editor) says: None/empty = not given. ``inline``:
    the ``--config KEY=VALUE`` arguments, each as written (applied over the configuration
    file, under the other options, as in ruff)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    engine: str | None = None
    min_severity: str | None = None
    origin: str = "command line"
    fixable: tuple[str, ...] | None = None
    extend_fixable: tuple[str, ...] = ()
    unfixable: tuple[str, ...] = ()
    inline: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    config: Path | None = None  # the file the settings came from (None: defaults only)
    base: Path | None = None  # globs are relative to this folder
    layers: tuple[Layer, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    engine: str = "auto"
    min_severity: str = DEFAULT_MIN_SEVERITY
    eval: bool = True  # check the evaluation's files (eval/conftest.yml, eval/scenarios/)
    origins: Mapping[str, str] = field(default_factory=dict)
    file_keys: tuple[str, ...] = ()  # the keys the configuration file set (valid values)
    fix_layers: tuple[Layer, ...] = ()  # fixable / extend-fixable / unfixable
    severity: tuple[tuple[str, str], ...] = ()  # code or prefix -> level (or "off")
    # Where the globs of `exclude`, `include` and `per-file-ignores` (by key), and of each
    # `extend-exclude` entry, are anchored: the folder of the file that set them, as the
    # path from that folder down to `base` ("" for `base` itself; None when that folder
    # is not above `base`: its anchored patterns match nothing here).
    scopes: Mapping[str, str | None] = field(default_factory=dict)
    extend_scopes: tuple[str | None, ...] = ()
    sources: tuple[Path, ...] = ()  # the configuration files read (`extend` chain)
    # the codes the engine reports as errors (the registry's): `severity` keeps them
    # warnings at least
    engine_errors: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @property
    def engine_override(self) -> str | None:
        """The profile to force (None: detect it from the project's rasa-pro pin)."""
        return None if self.engine == "auto" else self.engine

    def enabled(self, code: str) -> bool:
        return _enabled(self.layers, code)

    def fixable(self, code: str) -> bool:
        """Whether ``--fix`` (and the editor's fix-all) may apply the fixes of ``code``."""
        return _enabled(self.fix_layers, code)

    def severity_of(self, code: str, severity: str) -> str | None:
        """The severity a diagnostic of ``code`` reported as ``severity`` gets from the
        ``severity`` table (None: off). The most specific matching entry wins (the later
        one on a tie). An engine error stays a warning at least: the engine refuses the
        project whatever the table says (an exact code cannot ask for less; a prefix
        lowers it to warning)."""
        best, level = -1, severity
        for pattern, value in self.severity:
            if code_matches(code, pattern) and _specificity(pattern) >= best:
                best, level = _specificity(pattern), value
        if level == severity:
            return severity
        if severity == "error" and code in self.engine_errors and level not in LEVELS[:2]:
            return "warning"
        return None if level == OFF else level

    def _rel(self, path: Path) -> str | None:
        if self.base is None:
            return None
        try:
            rel = path.relative_to(self.base)
        except ValueError:
            return None
        return rel.as_posix() if rel.parts else None

    # The globs, compiled on first use, once per Settings (a run has one per project).
    def _scoped(self, key: str, patterns: Iterable[str]) -> list[tuple[str, str | None]]:
        scope = self.scopes.get(key, "")
        return [(p, scope) for p in patterns]

    @cached_property
    def _excludes(self) -> Globs:
        scopes = self.extend_scopes or ("",) * len(self.extend_exclude)
        extra = list(zip(self.extend_exclude, scopes, strict=True))
        return Globs([*self._scoped("exclude", self.exclude), *extra])

    @cached_property
    def _includes(self) -> Globs:
        return Globs(self._scoped("include", self.include))

    @cached_property
    def _per_file(self) -> list[tuple[Globs, tuple[str, ...]]]:
        pfi = "per-file-ignores"
        return [(Globs(self._scoped(pfi, (g,))), codes) for g, codes in self.per_file_ignores]

    def excluded(self, path: Path, is_dir: bool = False, below: Path | None = None) -> bool:
        """``path`` (a file, or a project folder) matches ``exclude``/``extend-exclude``.
        With ``below`` (a folder named on the command line), a pattern that matches that
        folder (or one above it) does not count: only what matches below it does."""
        rel = self._rel(path)
        if rel is None or not (self.exclude or self.extend_exclude):
            return False
        skip = 0
        if below is not None:
            top = self._rel(below)
            skip = len(top.split("/")) if top else 0
        return self._excludes.match(rel, is_dir, skip)

    def ignored_in(self, path: Path) -> tuple[str, ...]:
        """The codes (prefixes) ``per-file-ignores`` silences in ``path``."""
        rel = self._rel(path)
        if rel is None or not self.per_file_ignores:
            return ()
        return tuple(c for g, codes in self._per_file if g.match(rel) for c in codes)

    def included(self, nested: Path) -> bool:
        """A nested project folder that ``include`` names."""
        rel = self._rel(nested)
        return rel is not None and bool(self.include) and self._includes.match(rel, True)

    def show(self) -> list[tuple[str, str, str]]:
        """(key, value as TOML, where it came from) for ``check --show-settings``."""
        # a layer that selects starts afresh: the layers before it no longer count
        starts = [i for i, lay in enumerate(self.layers) if lay.select is not None]
        layers = self.layers[starts[-1] :] if starts else self.layers
        sel = [lay.select for lay in layers if lay.select is not None]
        fstarts = [i for i, lay in enumerate(self.fix_layers) if lay.select is not None]
        flayers = self.fix_layers[fstarts[-1] :] if fstarts else self.fix_layers
        fsel = [lay.select for lay in flayers if lay.select is not None]
        values: dict[str, Any] = {
            "extend": [display_config(p) for p in self.sources[1:]],
            "select": list(sel[-1]) if sel else ["(every code)"],
            "extend-select": [c for lay in layers for c in lay.extend_select],
            "ignore": [c for lay in layers for c in lay.ignore],
            "per-file-ignores": {g: list(c) for g, c in self.per_file_ignores},
            "severity": dict(self.severity),
            "fixable": list(fsel[-1]) if fsel else ["(every code)"],
            "extend-fixable": [c for lay in flayers for c in lay.extend_select],
            "unfixable": [c for lay in flayers for c in lay.ignore],
            "exclude": list(self.exclude),
            "extend-exclude": list(self.extend_exclude),
            "include": list(self.include),
            "engine": self.engine,
            "min-severity": self.min_severity,
            "eval": self.eval,
        }
        return [(k, _toml(values[k]), self.origins.get(k, "default")) for k in KEYS]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)


# -- rule selection ------------------------------------------------------------------------


def code_matches(code: str, pattern: str) -> bool:
    """``pattern`` is ``code`` or a dotted prefix of it (``lsp.condition``)."""
    p = pattern.rstrip(".")
    return code == p or code.startswith(p + ".")


def _specificity(pattern: str) -> int:
    return len(pattern.rstrip(".").split("."))


def _enabled(layers: Sequence[Layer], code: str) -> bool:
    on = True  # default: every code
    for lay in layers:
        best = -1 if lay.select is None else 0
        state = on if lay.select is None else False
        for pats, value in ((lay.select or (), True), (lay.extend_select, True)):
            for p in pats:
                if code_matches(code, p) and _specificity(p) > best:
                    best, state = _specificity(p), value
        for p in lay.ignore:
            if code_matches(code, p) and _specificity(p) >= best:
                best, state = _specificity(p), False
        on = state
    return on


def known_pattern(pattern: str, known: Collection[str]) -> bool:
    """``pattern`` names a registered code, or a prefix of at least one."""
    return any(code_matches(c, pattern) for c in known)


def suggest_code(pattern: str, known: Collection[str]) -> str | None:
    """The code or prefix probably meant by ``pattern``, which is neither (did you mean):
    the closest code or prefix, else the code whose last part is closest to its last
    part (a dotted suffix mistyped: ``unkown_memory_key``)."""
    prefixes = {".".join(c.split(".")[:n]) for c in known for n in range(1, c.count(".") + 1)}
    close = closest(pattern.rstrip("."), sorted({*known, *prefixes}))
    if close is not None:
        return close
    ends: dict[str, str] = {}
    for c in sorted(known):
        ends.setdefault(c.rsplit(".", 1)[-1], c)
    near = closest(pattern.rsplit(".", 1)[-1], sorted(ends))
    return ends[near] if near is not None else None


# -- gitignore-style globs -------------------------------------------------------------------


def _pattern_class() -> Any:
    from pathspec import util  # only when a configuration has globs

    try:
        return util.lookup_pattern("gitignore")  # pathspec 1.x
    except KeyError:  # pragma: no cover - pathspec 0.12
        return util.lookup_pattern("gitwildmatch")


@dataclass(frozen=True)
class _Glob:
    rx: Any  # the pathspec pattern
    include: bool  # False: a `!` pattern
    dir_only: bool  # ends with `/`
    anchored: bool  # a `/` before its end: relative to the configuration's folder
    # an anchored pattern of another configuration file (`extend`): the path from its
    # folder down to the folder the paths are relative to
    scope: str = ""

    def matches(self, path: str, is_dir: bool) -> bool:
        if is_dir and self.dir_only:
            path += "/"
        if self.scope:
            path = f"{self.scope}/{path}"
        return self.rx.match_file(path) is not None


def _glob(pattern: str, kind: Any, scope: str | None = "") -> _Glob | None:
    p = pattern.strip()
    body = p[1:] if p.startswith("!") else p
    if body.startswith("./"):
        p = p.replace("./", "", 1)
        body = body[2:]
    try:
        rx = kind(p)
    except ValueError:  # pathspec's GitIgnorePatternError: git skips it, it never matches
        return None
    if rx.include is None:  # blank, a comment
        return None
    name = body.rstrip("/")
    while name.startswith("**/"):
        name = name[3:]
    anchored = "/" in name
    if anchored and scope is None:
        return None  # anchored in a folder that is not above the paths: never matches
    return _Glob(
        rx, bool(rx.include), body.endswith("/"), anchored, (scope or "") if anchored else ""
    )


class Globs:
    """gitignore-style ``patterns`` (relative POSIX paths), each compiled once by
    ``pathspec``; a pattern pathspec rejects never matches. The last matching pattern
    decides (``!`` re-includes a file or a folder with what is below it), and a matched
    folder matches everything below it. A pattern may come with its scope (``(pattern,
    scope)``, see :attr:`Settings.scopes`): an anchored one is then matched against the
    path as seen from the folder of the file that wrote it."""

    def __init__(self, patterns: Iterable[str | tuple[str, str | None]]) -> None:
        items = [(p, "") if isinstance(p, str) else p for p in patterns]
        self.patterns = tuple(p for p, _ in items)
        kind = _pattern_class() if items else None
        self._globs = [g for p, sc in items if (g := _glob(p, kind, sc)) is not None]
        self._below: dict[str, list[tuple[_Glob, bool]]] = {}
        self._memo: dict[tuple[str, bool, int], bool] = {}

    def __bool__(self) -> bool:
        return bool(self._globs)

    def match(self, rel: str, is_dir: bool = False, skip: int = 0) -> bool:
        """Whether the relative POSIX path ``rel`` is matched. With ``skip``, its first
        ``skip`` folders (a folder named on the command line, and those above it) are no
        match: a pattern that matches them counts below them only when it matches a name
        at any depth (``node_modules``, ``*.tmp``), then on the path below them."""
        key = (rel, is_dir, skip)
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) > 1 << 16:
                self._memo.clear()
            found = self._memo[key] = self._match(rel, is_dir, skip)
        return found

    def _active(self, parts: list[str], skip: int) -> list[tuple[_Glob, bool]]:
        """The patterns that count below the first ``skip`` folders of ``parts``, each
        with whether it sees the path below them only."""
        if not skip:
            return [(g, False) for g in self._globs]
        top = "/".join(parts[:skip])
        if top not in self._below:
            self._below[top] = [
                (g, True) if g.matches(top, True) else (g, False)
                for g in self._globs
                if not (g.anchored and g.matches(top, True))
            ]
        return self._below[top]

    def _match(self, rel: str, is_dir: bool, skip: int) -> bool:
        parts = rel.split("/")
        active = self._active(parts, skip)
        inner = "/".join(parts[skip:])
        if all(g.include for g, _ in active):  # no `!`: any match (folders by descent)
            return any(g.matches(inner if below else rel, is_dir) for g, below in active)
        for n in range(skip + 1, len(parts) + 1):  # a matched folder stays matched
            sub, sub_inner = "/".join(parts[:n]), "/".join(parts[skip:n])
            sub_is_dir = n < len(parts) or is_dir
            for g, below in reversed(active):
                if g.matches(sub_inner if below else sub, sub_is_dir):
                    if g.include:
                        return True
                    break
        return False


# -- discovery and parsing -------------------------------------------------------------------


def discover(root: Path, fs: Layout = DISK) -> Path | None:
    """The configuration file that applies to the project at ``root``: the nearest one at
    or above it (in one folder: ``.mantle-lsp.toml``, ``mantle-lsp.toml``, then a
    ``pyproject.toml`` that has a ``[tool.mantle-lsp]`` table)."""
    for folder in (root, *root.parents):
        for name in CONFIG_NAMES:
            p = folder / name
            if not fs.is_file(p):
                if name != "pyproject.toml" and fs.exists(p) and not fs.is_dir(p):
                    return p  # a FIFO, a device: read_config refuses it, with the reason
                continue
            if name != "pyproject.toml" or _has_table(p):
                return p
    return None


def _read(path: Path) -> tuple[str | None, str]:
    """The normalized text of a configuration file, or None and why it cannot be read
    (only a regular file, at most MAX_CONFIG_BYTES)."""
    try:
        data = read_limited(path, MAX_CONFIG_BYTES)
    except OSError as exc:
        return None, exc.strerror or type(exc).__name__
    text = data.decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n"), ""


def _loads(text: str) -> dict[str, Any]:
    """``tomllib.loads``; a document nested too deeply for the parser's recursion is a
    ``TOMLDecodeError`` too."""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply") from None
    return data


_TABLE = re.compile(
    r"""^\s*\[\s*tool\s*\.\s*(?:"mantle-lsp"|'mantle-lsp'|mantle-lsp)\s*[\].]""", re.M
)


def _has_table(pyproject: Path) -> bool:
    text = _read(pyproject)[0]
    if text is None:
        return False
    try:
        data = _loads(text)
    except tomllib.TOMLDecodeError:
        # broken: ours only if it looks like it has our table (else its owner complains)
        return bool(_TABLE.search(text))
    tool = data.get("tool")
    return isinstance(tool, dict) and "mantle-lsp" in tool


@dataclass
class _File:
    path: Path
    text: str
    table: dict[str, Any]
    in_pyproject: bool
    errors: list[SettingsError] = field(default_factory=list)
    label: str | None = None  # `--config KEY=VALUE` as written: not a file

    def locate(self, key: str, needle: str | None = None) -> tuple[int, int, int]:
        """(line, start, end) of ``key`` in our table; of ``needle`` (a quoted string) at or
        after it when given. Falls back to the table header, then to line 1."""
        lines = self.text.split("\n")
        if not key:  # the table itself
            return self._header(lines)
        want = "tool.mantle-lsp" if self.in_pyproject else ""
        current = ""
        header_line: tuple[int, int, int] | None = None
        key_line: int | None = None
        key_re = re.compile(r"""^\s*(?:"%s"|'%s'|%s)\s*=""" % ((re.escape(key),) * 3))
        for i, line in enumerate(lines):
            s = line.strip()
            if s.startswith("[") and not s.startswith("[["):
                name = re.sub(r"""["'\s]""", "", s.strip("[]").split("#")[0].strip().rstrip("]"))
                current = name
                if name == want and want:
                    header_line = (i, line.index("["), len(line.rstrip()))
                if name == f"{want}.{key}".lstrip("."):
                    key_line = i
                    break
                continue
            if current == want and key_re.match(line):
                key_line = i
                break
        if key_line is None:
            return header_line or (0, 0, len(lines[0]) if lines else 0)
        if needle is not None:
            for j in range(key_line, len(lines)):
                for q in ('"', "'"):
                    k = lines[j].find(f"{q}{needle}{q}")
                    if k >= 0:
                        return j, k, k + len(needle) + 2
        line = lines[key_line]
        start = len(line) - len(line.lstrip())
        end = line.find("=")
        if end <= start:
            end = len(line.rstrip())
        return key_line, start, len(line[:end].rstrip())

    def _header(self, lines: list[str]) -> tuple[int, int, int]:
        for i, line in enumerate(lines):
            if _TABLE.match(line):
                return i, line.index("["), len(line.rstrip())
        return 0, 0, len(lines[0]) if lines else 0

    def error(
        self, key: str, message: str, needle: str | None = None, left_out: str | None = None
    ) -> None:
        """An error on ``key``, which is left out (or only ``left_out`` of it)."""
        line, start, end = self.locate(key, needle)
        what = left_out or f"`{key}`"
        self.errors.append(
            SettingsError(self.path, line, start, max(end, start + 1), message, what, self.label)
        )


_LINE_COL = re.compile(r"line (\d+), column (\d+)")


def read_config(path: Path) -> tuple[_File | None, list[SettingsError]]:
    """Parse one configuration file into our table (None when unreadable or broken)."""
    text, why = _read(path)
    if text is None:
        if why.startswith("larger than"):
            msg = "configuration file larger than 1 MB"
        else:
            msg = f"cannot read the configuration file ({why})"
        return None, [SettingsError(path, 0, 0, 1, msg, None)]
    try:
        data = _loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _LINE_COL.search(str(exc))
        if m:
            line, col = int(m.group(1)) - 1, int(m.group(2)) - 1
        elif "end of document" in str(exc):
            line, col = text.count("\n"), len(text) - text.rfind("\n") - 1
        else:
            line, col = 0, 0
        msg = re.sub(r"\s*\(at [^)]*\)\s*$", "", str(exc)) or "invalid TOML"
        err = SettingsError(path, line, col, col + 1, f"invalid TOML: {msg}", None)
        return None, [err]
    in_pyproject = path.name == "pyproject.toml"
    table: Any = data
    if in_pyproject:
        tool = data.get("tool")
        table = tool.get("mantle-lsp") if isinstance(tool, dict) else None
        if table is None:
            return _File(path, text, {}, True), []
    f = _File(path, text, {}, in_pyproject)
    if not isinstance(table, dict):
        line, start, end = f.locate("")
        msg = "`[tool.mantle-lsp]` must be a table"
        return f, [SettingsError(path, line, start, max(end, start + 1), msg, None)]
    f.table = table
    return f, []


def _check(f: _File, known: Collection[str]) -> dict[str, Any]:
    """The valid values of ``f``'s table; an error for each problem."""
    out: dict[str, Any] = {}
    for key, value in f.table.items():
        if key not in KEYS:
            close = closest(key, KEYS)
            hint = f"; did you mean `{close}`?" if close else ""
            f.error(key, f"unknown setting `{key}`{hint} (known: {', '.join(KEYS)})")
        elif key in LIST_KEYS:
            items = _str_list(f, key, value)
            if items is None:
                continue
            if key in CODE_KEYS or key in FIX_KEYS:
                items = [c for c in items if _known_code(f, key, c, known)]
            out[key] = tuple(items)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                f.error(key, "`per-file-ignores` must be a table of glob = [codes]")
                continue
            pfi: list[tuple[str, tuple[str, ...]]] = []
            for glob, codes in value.items():
                what = f"`per-file-ignores` entry {glob!r}"
                lst = _str_list(f, key, codes, what, glob)
                if lst is not None:
                    pfi.append((glob, tuple(c for c in lst if _known_code(f, key, c, known))))
            out[key] = tuple(pfi)
        elif key == "severity":
            table = _severity_table(f, value, known)
            if table is not None:
                out[key] = table
        elif key == "extend":
            if not isinstance(value, str) or not value.strip():
                f.error(key, "`extend` must be the path of another configuration file")
            elif f.label is not None:
                f.error(key, "`extend` can only be set in a configuration file")
            else:
                out[key] = value
        elif key == "engine":
            if value not in ENGINES:
                f.error(key, f"`engine` must be one of {', '.join(ENGINES)}, not {value!r}")
            else:
                out[key] = value
        elif key == "eval":
            if not isinstance(value, bool):
                f.error(key, f"`eval` must be true or false, not {value!r}")
            else:
                out[key] = value
        elif key == "min-severity":
            if value not in SEVERITIES:
                f.error(
                    key, f"`min-severity` must be one of {', '.join(SEVERITIES)}, not {value!r}"
                )
            else:
                out[key] = value
    return out


def _severity_table(
    f: _File, value: Any, known: Collection[str]
) -> tuple[tuple[str, str], ...] | None:
    """The valid entries of a ``severity`` table (code or prefix = level)."""
    key = "severity"
    if not isinstance(value, dict):
        f.error(key, '`severity` must be a table of code = "error" | "warning" | … | "off"')
        return None
    floor = _engine_errors(known)
    out: list[tuple[str, str]] = []
    for code, level in value.items():
        what = f"{code!r} in `severity`"
        if not _known_code(f, key, code, known):
            continue
        if level not in LEVELS:
            shown = json.dumps(level, ensure_ascii=False) if isinstance(level, str) else level
            close = closest(level, LEVELS) if isinstance(level, str) else None
            hint = f"; did you mean `{close}`?" if close else ""
            f.error(
                key,
                f"`severity`: {code!r} = {shown} is no level{hint} (one of {', '.join(LEVELS)})",
                code,
                what,
            )
            continue
        if code.rstrip(".") in floor and level not in LEVELS[:2]:
            f.error(
                key,
                f"`severity`: {code!r} is an error the engine reports (`rasa train` fails on "
                f"it): it can be lowered to `warning` at most, not {level!r}; to hide it, "
                "add it to `ignore`",
                code,
                what,
            )
            continue
        out.append((code.strip(), level))
    return tuple(out)


def _engine_errors(known: Collection[str]) -> frozenset[str]:
    """The codes the engine reports as errors, when ``known`` is the code registry (code →
    an entry with ``engine`` and ``severity``); none for a bare collection of codes."""
    if not isinstance(known, Mapping):
        return frozenset()
    return frozenset(
        c
        for c, entry in known.items()
        if getattr(entry, "engine", False) and getattr(entry, "severity", None) == "error"
    )


def _str_list(
    f: _File, key: str, value: Any, what: str | None = None, needle: str | None = None
) -> list[str] | None:
    if isinstance(value, str):  # a bare string: the documented error, with the fix
        hint = json.dumps([value], ensure_ascii=False)
        f.error(key, f"{what or f'`{key}`'} must be a list of strings (write {hint})", needle)
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        f.error(key, f"{what or f'`{key}`'} must be a list of strings", needle, what)
        return None
    return [v.strip() for v in value if v.strip()]


def _known_code(f: _File, key: str, code: str, known: Collection[str]) -> bool:
    if known_pattern(code, known):
        return True
    close = suggest_code(code, known)
    hint = f"; did you mean `{close}`?" if close else ""
    f.error(
        key,
        f"`{key}`: {code!r} is no diagnostic code nor a prefix of one{hint} "
        "(`mantle-lsp explain --markdown` lists them)",
        code,
        f"{code!r} in `{key}`",
    )
    return False


def display_config(path: Path) -> str:
    """A configuration file as messages show it: relative to the working directory when
    below it, else absolute."""
    try:
        shown = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if shown.startswith("..") else shown


def _origin(f: _File, key: str) -> str:
    if f.label is not None:
        return f.label
    line = f.locate(key)[0]
    return f"{display_config(f.path)}:{line + 1}"


@dataclass
class _Part:
    """The valid values of one configuration file (or ``--config KEY=VALUE``), and the
    scope of its globs (:attr:`Settings.scopes`)."""

    file: _File
    values: dict[str, Any]
    scope: str | None = ""


def _scope(folder: Path, base: Path) -> str | None:
    """The path from ``folder`` down to ``base`` ("" when they are the same folder; None
    when ``folder`` is not at or above ``base``)."""
    try:
        rel = Path(os.path.abspath(base)).relative_to(os.path.abspath(folder))
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else ""


def _chain(
    path: Path, known: Collection[str], fs: Layout = DISK
) -> tuple[list[_Part], list[SettingsError]]:
    """The configuration file ``path`` and the files its ``extend`` brings in, the most
    basic first (each overridden by the next). Only regular files, at most
    MAX_EXTEND_DEPTH of them, no file twice (a cycle is an error on the `extend` that
    closes it)."""
    parts: list[_Part] = []
    errors: list[SettingsError] = []
    seen: list[str] = []
    current, via = path, None
    for depth in range(MAX_EXTEND_DEPTH + 1):
        real = fs.realpath(current)
        if via is not None:
            if real in seen:
                chain = " → ".join(display_config(p.file.path) for p in parts)
                via.error("extend", f"`extend` makes a cycle: {chain} → {display_config(current)}")
                break
            if depth == MAX_EXTEND_DEPTH:
                via.error("extend", f"`extend` goes deeper than {MAX_EXTEND_DEPTH} files")
                break
            if not fs.lexists(current):
                via.error("extend", f"`extend`: {display_config(current)}: no such file")
                break
        f, errs = read_config(current)
        if via is not None and errs and errs[0].message.startswith(("cannot read", "config")):
            via.error("extend", f"`extend`: {display_config(current)}: {errs[0].message}")
            break
        errors += errs
        if f is None:
            break
        if via is not None and f.in_pyproject and not f.table and not errs:
            via.error(
                "extend", f"`extend`: {display_config(current)} has no [tool.mantle-lsp] table"
            )
            break
        values = _check(f, known)
        parts.append(_Part(f, values))
        seen.append(real)
        ext = values.pop("extend", None)
        if ext is None:
            break
        target = Path(os.path.expanduser(ext))
        current = Path(os.path.abspath(f.path.parent / target))
        via = f
    for part in parts:
        errors += part.file.errors
    parts.reverse()
    return parts, errors


_TOOL_PREFIX = re.compile(r"""^\s*tool\s*\.\s*(?:"mantle-lsp"|'mantle-lsp'|mantle-lsp)\s*\.\s*""")


def inline_part(arg: str, known: Collection[str]) -> tuple[_Part | None, list[SettingsError]]:
    """``--config KEY=VALUE``: one line of a configuration file (``severity.
    "lsp.legacy.syntax" = "off"``; a leading ``tool.mantle-lsp.`` is allowed), as a part."""
    label = f"--config {arg!r}"
    text = _TOOL_PREFIX.sub("", arg, count=1)
    try:
        table = _loads(text)
    except tomllib.TOMLDecodeError as exc:
        why = re.sub(r"\s*\(at [^)]*\)\s*$", "", str(exc)) or "invalid TOML"
        msg = (
            f"not a configuration file, nor a `KEY = VALUE` line of one ({why}); "
            "e.g. --config 'min-severity = \"warning\"'"
        )
        return None, [SettingsError(Path("--config"), 0, 0, 1, msg, None, label)]
    f = _File(Path("--config"), text, table, False, label=label)
    values = _check(f, known)
    return _Part(f, values), f.errors


def _layer_origins(
    origins: dict[str, str], keys: Sequence[str], afresh: bool, given: Sequence[str], origin: str
) -> None:
    """Where the keys of a selection (``keys``: select-like, extend-like, ignore-like)
    come from once a layer that sets ``given`` of them applies."""
    for key in keys:
        if afresh:  # a select starts the selection afresh, as in ruff
            origins.pop(key, None)
        if key in given:
            origins[key] = f"{origins[key]}; {origin}" if key in origins else origin


def load(
    root: Path,
    known: Collection[str],
    overrides: Overrides | None = None,
    config: Path | None = None,
    isolated: bool = False,
    fs: Layout = DISK,
) -> tuple[Settings, list[SettingsError]]:
    """The settings of the project at ``root``: its configuration file (``config`` when
    given, else :func:`discover`; none with ``isolated``) over the files it extends, then
    ``--config KEY=VALUE``, then the other ``overrides``. Values with errors are left out
    (their default applies); the errors come back with them. ``known``: the code registry
    (or just the codes)."""
    path = None if isolated else (config or discover(root, fs))
    parts: list[_Part] = []
    errors: list[SettingsError] = []
    if path is not None:
        parts, errors = _chain(path, known, fs)
    read = bool(parts) and parts[-1].file.path == path
    base = path.parent if path is not None else root
    for part in parts:
        part.scope = _scope(part.file.path.parent, base)
    file_keys = list(dict.fromkeys(k for part in parts for k in part.values))
    o = overrides
    for arg in o.inline if o is not None else ():
        given_part, errs = inline_part(arg, known)
        errors += errs
        if given_part is not None:
            parts.append(given_part)
    layers: list[Layer] = []
    fix_layers: list[Layer] = []
    origins: dict[str, str] = {}
    merged: dict[str, Any] = {}
    scopes: dict[str, str | None] = {}
    extend_exclude: list[str] = []
    extend_scopes: list[str | None] = []
    severity: dict[str, str] = {}
    for part in parts:
        v = part.values
        for keys, into in ((CODE_KEYS, layers), (FIX_KEYS, fix_layers)):
            given = [k for k in keys if k in v]
            if given:
                sel, ext, ign = keys
                into.append(Layer(v.get(sel), v.get(ext, ()), v.get(ign, ())))
                origin = _origin(part.file, given[0])
                _layer_origins(origins, keys, sel in v, given, origin)
        for key in ("exclude", "include", "per-file-ignores", "engine", "min-severity", "eval"):
            if key in v:
                merged[key], origins[key] = v[key], _origin(part.file, key)
                scopes[key] = part.scope
        if "extend-exclude" in v:
            extend_exclude += v["extend-exclude"]
            extend_scopes += [part.scope] * len(v["extend-exclude"])
            _layer_origins(
                origins,
                ["extend-exclude"],
                False,
                ["extend-exclude"],
                _origin(part.file, "extend-exclude"),
            )
        if "severity" in v:
            for code, level in v["severity"]:
                severity.pop(code, None)  # the later file's entry, in its place
                severity[code] = level
            _layer_origins(
                origins, ["severity"], False, ["severity"], _origin(part.file, "severity")
            )
    files = [part.file for part in parts if part.file.label is None]
    if len(files) > 1:
        origins["extend"] = _origin(files[-1], "extend")
    engine = merged.get("engine", "auto")
    min_sev = merged.get("min-severity", DEFAULT_MIN_SEVERITY)
    if o is not None:
        if o.select is not None or o.extend_select or o.ignore:
            layers.append(Layer(o.select, o.extend_select, o.ignore))
        given = [
            k
            for k, g in zip(
                CODE_KEYS, (o.select is not None, o.extend_select, o.ignore), strict=True
            )
            if g
        ]
        _layer_origins(origins, CODE_KEYS, o.select is not None, given, o.origin)
        if o.fixable is not None or o.extend_fixable or o.unfixable:
            fix_layers.append(Layer(o.fixable, o.extend_fixable, o.unfixable))
        given = [
            k
            for k, g in zip(
                FIX_KEYS, (o.fixable is not None, o.extend_fixable, o.unfixable), strict=True
            )
            if g
        ]
        _layer_origins(origins, FIX_KEYS, o.fixable is not None, given, o.origin)
        if o.engine is not None:
            engine, origins["engine"] = o.engine, o.origin
        if o.min_severity is not None:
            min_sev, origins["min-severity"] = o.min_severity, o.origin
    settings = Settings(
        config=path if read else None,
        base=base,
        layers=tuple(layers),
        per_file_ignores=merged.get("per-file-ignores", ()),
        exclude=merged.get("exclude", DEFAULT_EXCLUDE),
        extend_exclude=tuple(extend_exclude),
        include=merged.get("include", ()),
        engine=engine,
        min_severity=min_sev,
        eval=merged.get("eval", True),
        origins=origins,
        file_keys=tuple(file_keys),
        fix_layers=tuple(fix_layers),
        severity=tuple(severity.items()),
        scopes=scopes,
        extend_scopes=tuple(extend_scopes) if any(sc != "" for sc in extend_scopes) else (),
        sources=tuple(reversed([p.file.path for p in parts if p.file.label is None])),
        engine_errors=_engine_errors(known),
    )
    return settings, errors


def effect(errors: Sequence[SettingsError], file_keys: Collection[str]) -> str:
    """What the language server does with a configuration file that has ``errors`` (it
    keeps going, unlike ``check``), in a sentence: nothing of the file when it could not be
    read, else everything but what the errors leave out. ``file_keys``: the keys of the
    file that do apply (:attr:`Settings.file_keys`)."""
    if any(e.left_out is None for e in errors):
        return "None of the file's settings apply until it is fixed: the defaults do."
    left = ", ".join(dict.fromkeys(e.left_out for e in errors if e.left_out))
    if not file_keys:
        return f"Left out: {left}; the file sets nothing else, so the defaults apply."
    keys = ", ".join(f"`{k}`" for k in file_keys)
    return f"Left out: {left}; the file's other settings apply ({keys})."


# -- applying ----------------------------------------------------------------------------------


class _Diag(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> str: ...


D = TypeVar("D", bound=_Diag)


def apply(
    settings: Settings,
    path: Path,
    diags: Iterable[D],
    exclude: bool = True,
    below: Path | None = None,
    root: Path | None = None,
) -> list[D]:
    """The diagnostics of the file ``path`` that ``settings`` let through: not in an
    excluded file (unless ``exclude`` is False: a file named on the command line; with
    ``below``, a folder named there, only matches below it count), not an eval file of the
    project at ``root`` when ``eval`` is off, a selected code not ignored for this file,
    with the severity the ``severity`` table gives it (not "off"), at or above
    min-severity."""
    diags = list(diags)
    if not diags:  # most files: nothing to match
        return diags
    if exclude and settings.excluded(path, below=below):
        return []
    if not settings.eval and root is not None and is_eval_file(root, path):
        return []
    per_file = settings.ignored_in(path)
    limit = SEVERITIES.index(settings.min_severity)
    out = []
    for d in diags:
        if not settings.enabled(d.code) or any(code_matches(d.code, p) for p in per_file):
            continue
        if settings.severity:
            level = settings.severity_of(d.code, d.severity)
            if level is None:
                continue
            if level != d.severity:
                d = dataclasses.replace(d, severity=level)  # type: ignore[type-var]
        if SEVERITIES.index(d.severity) <= limit:
            out.append(d)
    return out
