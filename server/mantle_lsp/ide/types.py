"""Plain data exchanged between the ``ide`` features and their callers (no LSP types).

Positions are code-point offsets into a file's normalized text (``Source.text``); the
``lsp`` package converts them to and from the protocol's UTF-16 positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..syntax.text import TextRange


@dataclass(frozen=True)
class Location:
    path: Path
    range: TextRange


@dataclass(frozen=True)
class TextEdit:
    range: TextRange
    new_text: str


@dataclass(frozen=True)
class WorkspaceEdit:
    """Text edits per file (offsets into that file's current text), then file or folder
    renames, applied in that order; ``new_files`` are files to create with their text
    (files that do not exist yet, e.g. a skill's first memory.yml)."""

    edits: dict[Path, tuple[TextEdit, ...]] = field(default_factory=dict)
    renames: tuple[tuple[Path, Path], ...] = ()
    new_files: dict[Path, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FeatureError:
    """A request that cannot be served, with a message for the user (e.g. an invalid
    rename)."""

    message: str


SymbolKind = Literal[
    "skill", "field", "block", "step", "response", "tool", "precondition", "mcp",
    "model_group", "namespace", "keyword", "value", "property", "snippet", "file",
]  # fmt: skip
