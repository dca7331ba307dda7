"""Rename: ``textDocument/prepareRename`` and ``textDocument/rename`` (a skill, a tool, a
field, a response, … and every reference to it), and ``workspace/willRenameFiles`` (a
skill folder or a memory layer renamed in the file explorer: its references follow)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide import rename as ide_rename
from ..ide.types import FeatureError, WorkspaceEdit
from . import convert
from . import layers as lsp_layers
from .base import FeatureFailed
from .results import workspace_edit
from .server import MantleServer

SKILL_FOLDERS = lsp.FileOperationRegistrationOptions(
    filters=[
        lsp.FileOperationFilter(
            scheme="file",
            pattern=lsp.FileOperationPattern(
                glob="**/skills/*", matches=lsp.FileOperationPatternKind.Folder
            ),
        ),
        # Cadenya memory layers: a layer folder or an entry file (lsp/layers.py)
        lsp.FileOperationFilter(
            scheme="file", pattern=lsp.FileOperationPattern(glob=lsp_layers.WATCH_GLOB)
        ),
    ]
)


def register(server: MantleServer) -> None:
    server.request(lsp.TEXT_DOCUMENT_PREPARE_RENAME)(partial(prepare_rename, server))
    server.request(lsp.TEXT_DOCUMENT_RENAME)(partial(rename, server))
    server.request(lsp.WORKSPACE_WILL_RENAME_FILES, SKILL_FOLDERS)(
        partial(will_rename_files, server)
    )


def prepare_rename(
    server: MantleServer, params: lsp.PrepareRenameParams
) -> lsp.PrepareRenamePlaceholder | None:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return lsp_layers.prepare_rename(server, params)  # memory-layers/ (or nothing)
    offset = convert.to_offset(doc.index, params.position)
    found = ide_rename.prepare_rename(doc.project, doc.path, offset)
    if isinstance(found, FeatureError):
        # a ResponseError: VS Code and Neovim show its message where the user is
        raise FeatureFailed(found.message)
    return lsp.PrepareRenamePlaceholder(
        range=convert.to_range(doc.index, found),
        placeholder=doc.source.text[found.start : found.end],
    )


def rename(server: MantleServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        # memory-layers/
        return lsp_layers.rename(server, params, partial(workspace_edit, server))
    offset = convert.to_offset(doc.index, params.position)
    found = ide_rename.rename(doc.project, doc.path, offset, params.new_name)
    if isinstance(found, FeatureError):
        raise FeatureFailed(found.message)
    result = workspace_edit(server, found, [doc.project.root])
    if found.notices:
        # what the rename could not follow (also in the refactor preview): told, not hidden
        for line in found.notices:
            server.log(line, lsp.MessageType.Warning)
        shown = "; ".join(found.notices[:3])
        more = (
            f" (and {len(found.notices) - 3} more: see the output)"
            if len(found.notices) > 3
            else ""
        )
        server.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=shown + more)
        )
    return result


def will_rename_files(
    server: MantleServer, params: lsp.RenameFilesParams
) -> lsp.WorkspaceEdit | None:
    by_project: dict[Path, list[tuple[Path, Path]]] = {}
    for f in params.files:
        old, new = convert.uri_to_path(f.old_uri), convert.uri_to_path(f.new_uri)
        if old is None or new is None:
            continue
        proj = server.model.project_for(old)
        if proj is not None:
            by_project.setdefault(proj.root, []).append((old, new))
    merged: dict[Path, Any] = {}
    for root, renames in by_project.items():
        proj = server.model.projects[root]
        edit = ide_rename.rename_files(proj, renames)
        merged.update(edit.edits)
    layer_edits = lsp_layers.will_rename(server, params)  # memory-layers/ folders
    merged.update(layer_edits)
    if not merged:
        return None
    return workspace_edit(
        server, WorkspaceEdit(merged), [*by_project, *lsp_layers.roots_of(layer_edits)]
    )
