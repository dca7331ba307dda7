"""Code actions (``textDocument/codeAction``, ``codeAction/resolve``): the quick fixes,
refactorings and suppressions of ``ide/code_actions.py``; "Fix all safe problems in this
file" (``source.fixAll.mantle``, on save); and for a safe fix, "Fix all `CODE` in this
file / the project", whose edit is computed when chosen."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from lsprotocol import types as lsp

from ..ide import code_actions as ide_code_actions
from ..ide import fixes as ide_fixes
from ..model import settings
from . import convert
from .base import Doc, FeatureFailed
from .results import workspace_edit
from .server import MantleServer

FIX_ALL_KIND = "source.fixAll.mantle"  # the safe fixes of a file (docs/features/code-actions.md)


def register(server: MantleServer) -> None:
    server.request(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[
                lsp.CodeActionKind.QuickFix,
                lsp.CodeActionKind.RefactorRewrite,
                lsp.CodeActionKind.Source,
                lsp.CodeActionKind.SourceFixAll,
                FIX_ALL_KIND,
            ],
            resolve_provider=True,
        ),
    )(partial(code_action, server))
    server.feature(lsp.CODE_ACTION_RESOLVE)(partial(code_action_resolve, server))


def code_action(server: MantleServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    doc = server.doc(params.text_document.uri)
    if doc is None:
        return []
    rng = convert.to_text_range(doc.index, params.range)
    incoming = list(params.context.diagnostics)
    diags = [convert.from_diagnostic(d, doc.path, doc.index) for d in incoming]
    only = list(params.context.only or ())

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

    out = []
    if only and wanted(FIX_ALL_KIND):  # asked for by name (on save, Source Action…)
        out.extend(_fix_all_in_file(server, doc))
    lazy = "edit" in _resolvable(server)
    offered: set[str] = set()
    config = _config_file(server, doc.project.root)
    found_actions = ide_code_actions.code_actions(doc.project, doc.path, rng, diags, config=config)
    for action in found_actions:
        if not wanted(action.kind):
            continue
        try:
            edit = workspace_edit(server, action.edit, [doc.project.root])
        except FeatureFailed:
            continue  # e.g. it creates a file and the client cannot
        fixes = [d for d in incoming if str(d.code) in action.diagnostic_codes]
        out.append(
            lsp.CodeAction(
                title=action.title,
                kind=action.kind,
                edit=edit,
                diagnostics=fixes or None,
                is_preferred=action.preferred or None,
            )
        )
        # a safe fix: also every finding of that code in the file / the project, the
        # edit computed when chosen (codeAction/resolve)
        code = action.diagnostic_codes[0] if action.diagnostic_codes else ""
        if lazy and action.safe and code and code not in offered:
            offered.add(code)
            for scope in ("file", "project"):
                where = "this file" if scope == "file" else "the project"
                out.append(
                    lsp.CodeAction(
                        title=f"Fix all `{code}` in {where} (safe fixes)",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=fixes or None,
                        data={"uri": params.text_document.uri, "code": code, "scope": scope},
                    )
                )
    return out


def _fix_all_in_file(server: MantleServer, doc: Doc) -> list[lsp.CodeAction]:
    """ "Fix all safe problems in this file" (``source.fixAll.mantle``), when there is one
    its edit can make."""
    found = server.diagnostics.compute(doc.project, [doc.path]).get(doc.path, [])
    st = server.diagnostics.configs.settings_for(doc.project.root)
    found = [d for d in found if st.fixable(d.code)]  # `unfixable`, as --fix
    batch = ide_fixes.fix_all(doc.project, found)
    if not batch.count:
        return []
    try:
        edit = workspace_edit(server, batch.workspace_edit(), [doc.project.root])
    except FeatureFailed:
        return []
    title = f"Fix all safe problems in this file ({batch.count})"
    return [lsp.CodeAction(title=title, kind=FIX_ALL_KIND, edit=edit)]


def code_action_resolve(server: MantleServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """The edit of a "Fix all `CODE` in this file / the project" action: the safe fix
    of every finding of that code the editor shows there, one per finding."""
    data = action.data if isinstance(action.data, dict) else {}
    uri, code, scope = data.get("uri"), data.get("code"), data.get("scope")
    doc = server.doc(uri) if isinstance(uri, str) else None
    if doc is None or not isinstance(code, str) or action.edit is not None:
        return action
    proj = doc.project
    if scope == "project":
        raw = server.diagnostics.raw_project(proj)
        found = [d for p, ds in raw.items() for d in server.diagnostics.filtered(proj, p, ds)]
    else:
        found = server.diagnostics.compute(proj, [doc.path]).get(doc.path, [])
    batch = ide_fixes.fix_all(proj, found, code=code)
    try:
        action.edit = workspace_edit(server, batch.workspace_edit(), [proj.root])
    except FeatureFailed:
        action.edit = lsp.WorkspaceEdit()
    return action


def _config_file(server: MantleServer, root: Path) -> ide_code_actions.ConfigFile:
    """The project's configuration file as the editor has it (for "Ignore … in this
    file"); its text None when it cannot be read as text."""
    path = settings.discover(root)
    if path is None:
        return ide_code_actions.ConfigFile(None)
    source = server.source_of(path)
    return ide_code_actions.ConfigFile(path, source.text if source.analyzable else None)


def _resolvable(server: MantleServer) -> list[str]:
    """The code-action properties the client can resolve lazily (``edit`` in VS Code)."""
    caps = server.client_capabilities.text_document
    ca = caps.code_action if caps is not None else None
    support = ca.resolve_support if ca is not None else None
    return list(support.properties) if support is not None else []
