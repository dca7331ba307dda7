"""What the feature handlers share: the conversion of an ``ide`` result that needs the
server (its documents' line indexes and URIs, what the client supports) to the protocol's
(locations, workspace edits), and a field of a custom request's parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide.types import Location, WorkspaceEdit
from ..model import layout
from . import convert
from .base import FeatureFailed
from .server import MantleServer


def locations(server: MantleServer, found: list[Location]) -> list[lsp.Location]:
    return [convert.to_location(loc, server.index_of, server.uri_of) for loc in found]


def workspace_edit(
    server: MantleServer, edit: WorkspaceEdit, roots: list[Path]
) -> lsp.WorkspaceEdit:
    """The protocol's edit, or :class:`FeatureFailed` when it would change a file outside
    ``roots`` or do what the client cannot (rename or create a file)."""
    # the last line of defence: nothing outside the project(s), links resolved
    touched = [*edit.edits, *edit.new_files, *(p for pair in edit.renames for p in pair)]
    for path in touched:
        if not any(layout.inside(root, path) for root in roots):
            raise FeatureFailed(
                f"this edit would change {path}, which is outside the project folder; "
                "mantle-lsp never edits files outside the project"
            )
    doc_changes = server.client_supports("workspace.workspace_edit.document_changes")
    ops = get_resource_operations(server) if doc_changes else []
    if edit.renames and lsp.ResourceOperationKind.Rename not in ops:
        old, new = edit.renames[0]
        raise FeatureFailed(
            f"this edit renames {old.name} to {new.name}, which this editor cannot "
            "do through the language server; rename the folder in the file "
            "explorer instead (references are updated as it is renamed)"
        )
    if edit.new_files and lsp.ResourceOperationKind.Create not in ops:
        raise FeatureFailed(
            f"this edit creates {next(iter(edit.new_files)).name}, which this editor "
            "cannot do through the language server"
        )
    annotations = server.client_supports("workspace.workspace_edit.change_annotation_support")
    return convert.to_workspace_edit(
        edit, server.index_of, server.uri_of, server.open_version, doc_changes, annotations
    )


def get_resource_operations(server: MantleServer) -> list[str]:
    caps = server.client_capabilities.workspace
    edit = caps.workspace_edit if caps is not None else None
    return list(edit.resource_operations or ()) if edit is not None else []


def param(params: Any, *path: str) -> Any:
    """A field of a custom request's parameters (a dict, or pygls' object for one)."""
    for name in path:
        if params is None:
            return None
        params = params.get(name) if isinstance(params, dict) else getattr(params, name, None)
    return params


def wire_range(rng: lsp.Range) -> dict[str, Any]:
    """A range as JSON, for the answer of a custom request."""
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }
