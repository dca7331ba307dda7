"""Code actions: quick fixes for the diagnostics the editor shows in a range.

Plain data in (the project, a file, a range and the diagnostics of that range), plain data
out (:class:`CodeAction` with a :class:`~mantle_lsp.ide.types.WorkspaceEdit`). Each code's
fixes live beside the rule that emits it (each rule module's ``FIXES``, gathered in
:data:`mantle_lsp.ide.rules.FIXES`; what they share is :mod:`mantle_lsp.ide.rules.fix`):
this module asks them for each diagnostic, adds the change the diagnostic's data asks
for (a did-you-mean), and offers to silence what it cannot fix ("Ignore … here", "…
in this file"). A fix reads what it needs from the diagnostic's ``data`` and from the
model, never from the message text.

Edits insert or delete whole lines of YAML and never re-dump a file
(:mod:`mantle_lsp.ide.edits`), so comments and formatting elsewhere stay untouched.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..model.files import parse_file
from ..model.layout import FileKind, inside
from ..model.project import ParsedFile, Project
from ..model.source import source_from_text
from ..syntax.text import TextRange
from .codes import REGISTRY
from .diagnostics import Diagnostic
from .edits import after_line, insert_lines, line_start, ws_edit, yaml_scalar
from .rules import FIXES
from .rules.fix import Fix, data_fixes, reads_own_data
from .suppression import MARK, find_suppressions
from .types import ActionKind, CodeAction, NameFix, TextEdit, WorkspaceEdit

__all__ = [
    "ActionKind",
    "CodeAction",
    "ConfigFile",
    "NameFix",
    "code_actions",
    "fixes_of",
    "ignore_here",
    "ignore_in_file",
    "yaml_scalar",
]

_SUPPRESSIBLE = frozenset(
    {
        FileKind.AGENT,
        FileKind.INTEGRATIONS,
        FileKind.PROJECT_MEMORY,
        FileKind.PROJECT_RESPONSES,
        FileKind.SKILL_MEMORY,
        FileKind.SKILL_RESPONSES,
        FileKind.SKILL_TOOLS,
        FileKind.SHARED_TOOLS,
        FileKind.HOOKS,
        FileKind.SKILL_MD,
        FileKind.EVAL_CONFTEST,
        FileKind.EVAL_SCENARIO,
    }
)


@dataclass(frozen=True)
class ConfigFile:
    """The project's configuration file as the editor has it (``path`` None: there is
    none; ``text`` None: it cannot be read), for "Ignore … in this file"."""

    path: Path | None
    text: str | None = None


def code_actions(
    project: Project,
    path: Path,
    rng: TextRange,
    diagnostics: list[Diagnostic],
    suppressions: bool = True,
    config: ConfigFile | None = None,
) -> list[CodeAction]:
    """The code actions for ``rng`` in ``path``; ``diagnostics`` are the diagnostics the
    editor shows there (others are ignored). Without ``suppressions``, no "Ignore …
    here" (a fix-all never takes one: it need not re-read the file to place it). With
    ``config``, a warning (or hint) in skill.md prose, which has no inline form, gets
    "Ignore … in this file": it adds the code to the configuration's ``per-file-ignores``."""
    pf = project.files.get(path)
    if pf is None:
        return []
    fx = Fix(project, pf)
    out: list[CodeAction] = []
    seen: set[tuple[str, str]] = set()
    ignores: list[CodeAction] = []
    for d in diagnostics:
        if d.path != path:
            continue
        ignore = ignore_here(pf, d) if suppressions else None
        # in prose, not for an error: the engine refuses the skill whatever the editor shows
        prose = pf.kind is FileKind.SKILL_MD and d.severity != "error"
        if ignore is None and suppressions and config and prose:
            ignore = ignore_in_file(project, config, path, d.code)
        if ignore is not None:
            ignores.append(ignore)
        for action in fixes_of(fx, d):
            if not _stays_inside(project, action.edit):
                continue  # e.g. a skill folder that is a symlink to elsewhere
            key = (action.title, repr(sorted(action.edit.edits.items())))
            if key not in seen:
                seen.add(key)
                out.append(action)
    out.sort(key=lambda a: not a.preferred)  # stable: preferred fixes first
    for action in ignores:  # after every fix: silencing is the last resort
        key = (action.title, repr(sorted(action.edit.edits.items())))
        if key not in seen:
            seen.add(key)
            out.append(action)
    return out


_PFI = "per-file-ignores"
_TOOL_PFI_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*(?:"mantle-lsp"|'mantle-lsp'|mantle-lsp)[ \t]*\.[ \t]*"""
    r"""(?:"per-file-ignores"|'per-file-ignores'|per-file-ignores)[ \t]*\][ \t]*(?:#.*)?$""",
    re.M,
)
_PFI_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*(?:"per-file-ignores"|'per-file-ignores'|per-file-ignores)[ \t]*\]"""
    r"""[ \t]*(?:#.*)?$""",
    re.M,
)
_TOML_ENTRY = re.compile(
    r"""^[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[A-Za-z0-9_-]+)[ \t]*=[ \t]*(.*)$""", re.M
)


def ignore_in_file(
    project: Project, config: ConfigFile, path: Path, code: str
) -> CodeAction | None:
    """ "Ignore `CODE` in this file": ``"<path>" = ["CODE"]`` under the configuration's
    ``per-file-ignores`` (added to the file's entry, to the table, or in a new table; a
    new ``mantle-lsp.toml`` at the project root when there is no configuration). None
    when the file is written in a way this cannot edit safely (an inline table, an entry
    over several lines, a file that is not valid TOML)."""
    if code not in REGISTRY or code.startswith("lsp.suppression."):
        return None  # an unknown code makes the configuration invalid
    cfg = config.path if config.path is not None else project.root / "mantle-lsp.toml"
    try:
        glob = path.relative_to(cfg.parent).as_posix()
    except ValueError:
        return None
    if any(c in glob for c in '*?[]!\\"\n') or "/" not in glob:
        return None
    entry = f"{json.dumps(glob)} = [{json.dumps(code)}]"
    pyproject = cfg.name == "pyproject.toml"
    header = "[tool.mantle-lsp.per-file-ignores]" if pyproject else "[per-file-ignores]"
    title = f"Ignore `{code}` in this file ({cfg.name} per-file-ignores)"
    if config.path is None:
        created = WorkspaceEdit(new_files={cfg: f"{header}\n{entry}\n"})
        return CodeAction(title, "quickfix", created, (code,), suppresses=True)
    text = config.text
    if text is None or not _pfi_lists(text, pyproject, glob, code, present=False):
        return None
    edit = _pfi_edit(text, pyproject, glob, code, f"{header}\n{entry}\n")
    if edit is None:
        return None
    after = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
    if not _pfi_lists(after, pyproject, glob, code, present=True):
        return None
    return CodeAction(title, "quickfix", ws_edit(cfg, edit), (code,), suppresses=True)


def _pfi_edit(text: str, pyproject: bool, glob: str, code: str, table: str) -> TextEdit | None:
    """The edit adding ``code`` for ``glob``: to its entry, as a new entry at the end of
    the per-file-ignores table, or ``table`` (header and entry) at the end of the file."""
    entry = table.splitlines()[1]
    found = (_TOOL_PFI_HEADER if pyproject else _PFI_HEADER).search(text)
    if found is None:
        if _PFI in text:
            return None  # an inline table or a dotted key: leave it to the author
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return TextEdit(TextRange(len(text), len(text)), sep + table)
    body_start = after_line(text, found.end())
    nxt = re.compile(r"^[ \t]*\[", re.M).search(text, body_start)
    body_end = nxt.start() if nxt else len(text)
    for m in _TOML_ENTRY.finditer(text, body_start, body_end):
        key = m.group(1)
        name = json.loads(key) if key.startswith('"') else key.strip("'")
        if name != glob:
            continue
        value = m.group(2)
        close = value.rfind("]")
        if not value.startswith("[") or close < 0:
            return None  # over several lines: leave it to the author
        inner = value[1:close].strip().rstrip(",").strip()
        at = m.start(2) + close
        return TextEdit(TextRange(at, at), f", {json.dumps(code)}" if inner else json.dumps(code))
    last = found.end()  # after the table's last line that is neither blank nor a comment
    for line in re.finditer(r"^[ \t]*[^\s#].*$", text[body_start:body_end], re.M):
        last = body_start + line.end()
    return insert_lines(text, last, [entry])


def _pfi_lists(text: str, pyproject: bool, glob: str, code: str, present: bool) -> bool:
    """Whether ``text`` is valid TOML whose per-file-ignores lists ``code`` for ``glob``
    (with ``present``) or does not yet (without)."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # nested too deeply for the parser
        return False
    table: object = data
    for key in (["tool", "mantle-lsp"] if pyproject else []) + [_PFI]:
        table = table.get(key, {}) if isinstance(table, dict) else None
    if not isinstance(table, dict):
        return False
    codes = table.get(glob, [])
    listed = isinstance(codes, list) and code in codes
    return listed if present else not listed


def ignore_here(pf: ParsedFile, d: Diagnostic) -> CodeAction | None:
    """ "Ignore `CODE` here": ``# mantle-lsp: ignore[CODE]`` at the end of the diagnostic's
    first line, added to the suppression already there, or alone on the line above when
    the line cannot take a comment; None where no comment can silence it (skill.md prose,
    inside a block scalar or a multi-line string). Each candidate is checked by reading
    the edited file's suppressions back."""
    code = d.code
    if code not in REGISTRY or code.startswith("lsp.suppression.") or not pf.source.analyzable:
        return None  # an unknown code in a suppression is itself reported
    if pf.kind not in _SUPPRESSIBLE:
        return None
    text = pf.text
    if d.range.start > len(text):
        return None
    row = text.count("\n", 0, d.range.start)
    sups, bad_before = find_suppressions(pf)
    candidates: list[tuple[TextEdit, int]] = []
    for sup in sups:
        if sup.line == row and all(c != code for c, _ in sup.codes):
            close = sup.comment.end - 1
            candidates.append((TextEdit(TextRange(close, close), f", {code}"), row))
    start = line_start(text, d.range.start)
    eol = text.find("\n", start)
    eol = len(text) if eol < 0 else eol
    line = text[start:eol]
    end = start + len(line.rstrip())
    comment = f"{MARK} ignore[{code}]"
    if line.strip():
        candidates.append((TextEdit(TextRange(end, eol), f"  # {comment}"), row))
    pad = line[: len(line) - len(line.lstrip())]
    candidates.append((TextEdit(TextRange(start, start), f"{pad}# {comment}\n"), row + 1))
    for edit, target in candidates:
        new_text = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
        new_pf = parse_file(pf.path, pf.kind, pf.skill_id, source_from_text(pf.path, new_text))
        found, bad = find_suppressions(new_pf)
        if len(bad) > len(bad_before):
            continue
        if any(s.line == target and any(c == code for c, _ in s.codes) for s in found):
            return CodeAction(
                f"Ignore `{code}` here",
                "quickfix",
                ws_edit(pf.path, edit),
                (code,),
                suppresses=True,
            )
    return None


def _stays_inside(project: Project, edit: WorkspaceEdit) -> bool:
    paths = [*edit.edits, *edit.new_files, *(p for pair in edit.renames for p in pair)]
    return all(inside(project.root, p) for p in paths)


def fixes_of(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """The fixes of ``d``: its code's own (the ``FIXES`` of the rule module that emits it),
    then the change its data asks for, unless one of them reads that data itself."""
    fixers = FIXES.get(d.code, ())
    for fix in fixers:
        yield from fix(fx, d)
    if not reads_own_data(fixers):
        yield from data_fixes(fx, d)
