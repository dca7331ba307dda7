"""Plain data exchanged between the ``ide`` features and their callers (no LSP types).

Positions are code-point offsets into a file's normalized text (``Source.text``); the
``lsp`` package converts them to and from the protocol's UTF-16 positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..syntax.text import TextRange

if TYPE_CHECKING:
    from ..model.symbols import SymbolKey


@dataclass(frozen=True)
class Location:
    path: Path
    range: TextRange


@dataclass(frozen=True)
class TextEdit:
    range: TextRange
    new_text: str
    note: str | None = None  # the id of the edit's ChangeNote in WorkspaceEdit.notes


@dataclass(frozen=True)
class ChangeNote:
    """What a group of edits is (an LSP change annotation): a label, a longer description,
    and whether the user must confirm those edits (unticked in VS Code's refactor
    preview; a client that cannot show annotations does not get them)."""

    label: str
    description: str = ""
    needs_confirmation: bool = False


@dataclass(frozen=True)
class WorkspaceEdit:
    """Text edits per file (offsets into that file's current text), then file or folder
    renames, applied in that order; ``new_files`` are files to create with their text
    (files that do not exist yet, e.g. a skill's first memory.yml). ``notes`` describe
    the groups of annotated edits; ``notices`` are lines to tell the user (what a rename
    could not follow)."""

    edits: dict[Path, tuple[TextEdit, ...]] = field(default_factory=dict)
    renames: tuple[tuple[Path, Path], ...] = ()
    new_files: dict[Path, str] = field(default_factory=dict)
    notes: dict[str, ChangeNote] = field(default_factory=dict)
    notices: tuple[str, ...] = ()


# -- code actions (ide/code_actions.py; each fix beside its rule in ide/rules/) -----

ActionKind = Literal["quickfix", "refactor.rewrite", "source", "source.fixAll.mantle"]


@dataclass(frozen=True)
class NameFix:
    """What a fix decides about a name the project does not declare (for fixing many
    findings at once, ide/fixes.py): ``to`` None — it declares ``name``, guessing the
    declaration from its uses; else it changes the mention of ``name`` to ``to`` (a "did you
    mean")."""

    name: SymbolKey
    to: SymbolKey | None = None


@dataclass(frozen=True)
class CodeAction:
    title: str
    kind: ActionKind
    edit: WorkspaceEdit
    diagnostic_codes: tuple[str, ...] = ()
    preferred: bool = False
    # Safe: the edit keeps what the author evidently meant and deletes no comment, so
    # `mantle-lsp check --fix` applies it unasked (docs/cli.md#fixes lists the decisions);
    # the others (a guessed name, type or target, placeholder text) need --unsafe-fixes.
    safe: bool = False
    # Writes an inline suppression instead of fixing: never chosen by a fix-all or `check
    # --fix`, never listed as a help line.
    suppresses: bool = False
    # The name the fix declares or replaces by another (None: it fixes no name).
    name: NameFix | None = None


@dataclass(frozen=True)
class FeatureError:
    """A request that cannot be served, with a message for the user (e.g. an invalid
    rename)."""

    message: str


SymbolKind = Literal[
    "skill", "field", "block", "step", "response", "tool", "precondition", "mcp",
    "model_group", "namespace", "keyword", "value", "property", "snippet", "file", "heading",
]  # fmt: skip
