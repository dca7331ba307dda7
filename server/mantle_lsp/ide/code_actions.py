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
(:mod:`mantle_lsp.ide.edits`), so comments and formatting elsewhere stay untouched. This
module chooses the actions; the text of a suppression comment is written by
:mod:`.suppression_edit`, the configuration's ``per-file-ignores`` by :mod:`.toml_edit`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..model.layout import FileKind, inside
from ..model.project import ParsedFile, Project
from ..syntax.text import TextRange
from . import toml_edit
from .codes import REGISTRY
from .diagnostics import Diagnostic
from .edits import ws_edit, yaml_scalar
from .rules import FIXES
from .rules.fix import Fix, data_fixes, reads_own_data
from .suppression_edit import ignore_comment
from .types import ActionKind, CodeAction, NameFix, WorkspaceEdit

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
    pyproject = cfg.name == "pyproject.toml"
    title = f"Ignore `{code}` in this file ({cfg.name} per-file-ignores)"
    if config.path is None:
        created = WorkspaceEdit(new_files={cfg: toml_edit.new_table(pyproject, glob, code)})
        return CodeAction(title, "quickfix", created, (code,), suppresses=True)
    if config.text is None:
        return None
    edit = toml_edit.add_per_file_ignore(config.text, pyproject, glob, code)
    if edit is None:
        return None
    return CodeAction(title, "quickfix", ws_edit(cfg, edit), (code,), suppresses=True)


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
    edit = ignore_comment(pf, d.range.start, code)
    if edit is None:
        return None
    return CodeAction(
        f"Ignore `{code}` here", "quickfix", ws_edit(pf.path, edit), (code,), suppresses=True
    )


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
