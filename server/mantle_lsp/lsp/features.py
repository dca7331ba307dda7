"""Request handlers for the language features: each converts the request to offsets,
calls its ``mantle_lsp.ide`` function and converts the plain result back.

The ``ide`` modules are imported as modules (``ide_hover.hover(...)``), never their
functions, so a test can replace a feature function in a server process.

Requests for a document that is not a Mantle file of a known project get an empty
result (``None`` or ``[]``), never an error.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide import call_hierarchy as ide_call_hierarchy
from ..ide import code_actions as ide_code_actions
from ..ide import completion as ide_completion
from ..ide import fixes as ide_fixes
from ..ide import graphs as ide_graphs
from ..ide import hover as ide_hover
from ..ide import inlay_hints as ide_inlay_hints
from ..ide import layout as ide_layout
from ..ide import locate as ide_locate
from ..ide import navigation as ide_navigation
from ..ide import outline as ide_outline
from ..ide import preview as ide_preview
from ..ide import rename as ide_rename
from ..ide import semantic_tokens as ide_semantic_tokens
from ..ide import structure as ide_structure
from ..ide.types import FeatureError, Location, WorkspaceEdit
from ..model import layout, settings
from ..syntax.text import LineIndex, TextRange
from . import convert
from . import layers as lsp_layers
from .base import FeatureFailed
from .params import InvalidParams, field, integer, object_params, required_string, string
from .server import MantleServer

TRIGGER_CHARACTERS = [".", "@", "{", '"', "'", ":", " "]
SHOW_REFERENCES = "editor.action.showReferences"
FIX_ALL_KIND = "source.fixAll.mantle"  # the safe fixes of a file (docs/features/code-actions.md)
# accepting `@skill.`, `session.` or `type: ` opens the suggestions for what follows
RETRIGGER = lsp.Command(title="Suggest", command="editor.action.triggerSuggest")
REFERENCES_WITH_KINDS = "mantle/references"  # a request of ours (docs/lsp.md)
FLOW_GRAPH, AGENT_MAP = "mantle/flowGraph", "mantle/agentMap"  # ours too (docs/lsp.md)
PREVIEW_PROMPT = "mantle/previewPrompt"  # ours too (docs/lsp.md)
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
_TABSTOP = re.compile(r"\$(\d+)|\$\{(\d+)(:?)")


def plain_snippet(text: str) -> str:
    """A snippet as plain text (for clients without snippet support): tab stops vanish,
    placeholders keep their text, escapes are undone."""
    out: list[str] = []
    i, depth = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "$}\\":
            out.append(text[i + 1])
            i += 2
            continue
        m = _TABSTOP.match(text, i)
        if m:
            if m.group(2) is not None:
                if m.group(3):
                    depth += 1  # ${1:placeholder…}: keep what follows up to its `}`
                else:
                    close = text.find("}", m.end())  # ${1}
                    i = close + 1 if close != -1 else len(text)
                    continue
            i = m.end()
            continue
        if ch == "}" and depth:
            depth -= 1
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def register(server: MantleServer) -> None:
    lsp_layers.register(server)  # mantle/layersManifest (Cadenya memory layers)

    def locations(found: list[Location]) -> list[lsp.Location]:
        return [convert.to_location(loc, server.index_of, server.uri_of) for loc in found]

    def workspace_edit(edit: WorkspaceEdit, roots: list[Path]) -> lsp.WorkspaceEdit:
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

    # -- completion ---------------------------------------------------------------------
    @server.request(
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=True),
    )
    def completion(params: lsp.CompletionParams) -> lsp.CompletionList:
        # before the index, a document opened with the workspace is completed from its
        # first look: every item is right, but some may be missing (the responses of
        # skills it does not use yet), so the list says it is incomplete and the editor
        # asks again as the user types (gate.py)
        doc = server.doc(params.text_document.uri, partial_ok=True)
        if doc is None:
            return lsp_layers.completion(server, params)  # memory-layers/ (or nothing)
        offset = convert.to_offset(doc.index, params.position)
        result = ide_completion.complete(doc.project, doc.path, offset)
        if doc.early:
            result = dataclasses.replace(result, is_incomplete=True)
        return completion_list(server, params.text_document.uri, offset, result, doc.index)

    @server.request(lsp.COMPLETION_ITEM_RESOLVE)
    def completion_resolve(item: lsp.CompletionItem) -> lsp.CompletionItem:
        """Add the documentation to an item of a completion list. The item is found again
        by its label where the list was asked for; when that is no longer possible (the
        document is closed, or was edited so that the item is no longer offered there, or
        the data is not ours) the item comes back unchanged."""
        data = item.data
        if item.documentation is not None or not isinstance(data, dict):
            return item
        uri, offset = data.get("uri"), data.get("offset")
        if not isinstance(uri, str) or type(offset) is not int:
            return item
        doc = server.doc(uri, partial_ok=True)
        if doc is None:
            return item
        found = ide_completion.item_at(doc.project, doc.path, offset, item.label)
        if found is None or convert.completion_kind(found.kind) != item.kind:
            return item
        if item.detail is not None and item.detail != found.detail:
            return item  # the same label, but something else now
        markdown = found.documentation
        if markdown:
            item.documentation = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
        return item

    # -- signature help ---------------------------------------------------------------
    @server.request(
        lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
        lsp.SignatureHelpOptions(trigger_characters=[":", " "], retrigger_characters=[":"]),
    )
    def signature_help(params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        """The parameters of an ``execute_tool`` step's tool, in its ``parameters``."""
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return None
        offset = convert.to_offset(doc.index, params.position)
        found = ide_completion.signature_help(doc.project, doc.path, offset)
        if found is None:
            return None
        sig = lsp.SignatureInformation(
            label=found.label,
            documentation=(
                lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=found.doc)
                if found.doc
                else None
            ),
            parameters=[
                lsp.ParameterInformation(
                    label=(_utf16(found.label, start), _utf16(found.label, end)),
                    documentation=pdoc or None,
                )
                for start, end, pdoc in found.params
            ],
            active_parameter=found.active,
        )
        return lsp.SignatureHelp(
            signatures=[sig], active_signature=0, active_parameter=found.active
        )

    # -- hover --------------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return lsp_layers.hover(server, params)  # memory-layers/ (or nothing)
        offset = convert.to_offset(doc.index, params.position)
        # a client that lists the HTML tags its Markdown allows renders <details>
        html = server.client_supports("general.markdown.allowed_tags")
        h = ide_hover.hover(doc.project, doc.path, offset, html)
        if h is None:
            return None
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=h.markdown),
            range=convert.to_range(doc.index, h.range),
        )

    # -- navigation ---------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(params: lsp.DefinitionParams) -> list[lsp.Location]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return lsp_layers.definition(server, params)  # memory-layers/ (or nothing)
        offset = convert.to_offset(doc.index, params.position)
        return locations(ide_navigation.definition(doc.project, doc.path, offset))

    @server.request(lsp.TEXT_DOCUMENT_DECLARATION)
    def declaration(params: lsp.DeclarationParams) -> list[lsp.Location]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, params.position)
        return locations(ide_navigation.definition(doc.project, doc.path, offset))

    @server.request(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(params: lsp.ReferenceParams) -> list[lsp.Location]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, params.position)
        found = ide_navigation.references(
            doc.project, doc.path, offset, params.context.include_declaration
        )
        return locations(found)

    @server.request(REFERENCES_WITH_KINDS)
    def references_with_kinds(params: Any) -> list[dict[str, Any]]:
        """``textDocument/references`` with what each place is (docs/lsp.md): LSP locations
        carry no kind, so a client that wants to show prose mentions apart asks this."""
        m = REFERENCES_WITH_KINDS
        object_params(m, params, "the params of textDocument/references")
        doc_uri = required_string(m, params, "textDocument", "uri")
        line = integer(m, params, "position", "line")
        char = integer(m, params, "position", "character")
        doc = server.doc(doc_uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, lsp.Position(line=line, character=char))
        decl = bool(_param(params, "context", "includeDeclaration"))
        found = ide_navigation.reference_kinds(doc.project, doc.path, offset, decl)
        out = []
        for loc, kind in found:
            where = convert.to_location(loc, server.index_of, server.uri_of)
            rng = where.range
            out.append(
                {
                    "uri": where.uri,
                    "range": {
                        "start": {"line": rng.start.line, "character": rng.start.character},
                        "end": {"line": rng.end.line, "character": rng.end.character},
                    },
                    "kind": kind,
                }
            )
        return out

    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    def document_highlight(params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        offset = convert.to_offset(doc.index, params.position)
        return [
            lsp.DocumentHighlight(
                range=convert.to_range(doc.index, h.range), kind=convert.highlight_kind(h.kind)
            )
            for h in ide_navigation.highlights(doc.project, doc.path, offset)
        ]

    # -- rename -------------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
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

    @server.request(lsp.TEXT_DOCUMENT_RENAME)
    def rename(params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return lsp_layers.rename(server, params, workspace_edit)  # memory-layers/
        offset = convert.to_offset(doc.index, params.position)
        found = ide_rename.rename(doc.project, doc.path, offset, params.new_name)
        if isinstance(found, FeatureError):
            raise FeatureFailed(found.message)
        result = workspace_edit(found, [doc.project.root])
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

    @server.request(lsp.WORKSPACE_WILL_RENAME_FILES, SKILL_FOLDERS)
    def will_rename_files(params: lsp.RenameFilesParams) -> lsp.WorkspaceEdit | None:
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
            WorkspaceEdit(merged), [*by_project, *lsp_layers.roots_of(layer_edits)]
        )

    # -- outline ------------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(
        params: lsp.DocumentSymbolParams,
    ) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation]:
        doc = server.doc(params.text_document.uri, partial_ok=True)
        if doc is None:
            return []
        symbols = ide_outline.document_symbols(doc.project, doc.path)
        if server.client_supports(
            "text_document.document_symbol.hierarchical_document_symbol_support"
        ):
            return [document_symbol_of(s, doc.index) for s in symbols]
        uri = server.uri_of(doc.path)
        flat: list[lsp.SymbolInformation] = []

        def walk(sym: ide_outline.DocSymbol, container: str | None) -> None:
            flat.append(
                lsp.SymbolInformation(
                    name=sym.name or "?",
                    kind=convert.symbol_kind(sym.kind),
                    location=lsp.Location(uri=uri, range=convert.to_range(doc.index, sym.range)),
                    container_name=container,
                )
            )
            for child in sym.children:
                walk(child, sym.name)

        for s in symbols:
            walk(s, None)
        return flat

    @server.request(lsp.WORKSPACE_SYMBOL)
    def workspace_symbol(params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
        found = ide_outline.workspace_symbols(list(server.model.projects.values()), params.query)
        return [
            lsp.SymbolInformation(
                name=s.name,
                kind=convert.symbol_kind(s.kind),
                location=convert.to_location(s.location, server.index_of, server.uri_of),
                container_name=s.container or None,
            )
            for s in found
        ]

    # -- call hierarchy -----------------------------------------------------------------
    def call_item(it: ide_call_hierarchy.CallItem) -> lsp.CallHierarchyItem:
        index = server.index_of(it.path)
        return lsp.CallHierarchyItem(
            name=it.name,
            kind=lsp.SymbolKind.Module if it.kind == "skill" else lsp.SymbolKind.Function,
            uri=server.uri_of(it.path),
            range=convert.to_range(index, it.range),
            selection_range=convert.to_range(index, it.selection),
            detail=it.detail or None,
            data={"key": list(it.key)},
        )

    def call_key(it: lsp.CallHierarchyItem) -> tuple[Any, tuple[str, ...], Path] | None:
        doc = server.doc(it.uri)
        key = it.data.get("key") if isinstance(it.data, dict) else None
        if doc is None or not isinstance(key, list) or not all(isinstance(k, str) for k in key):
            return None
        return doc.project, tuple(key), doc.path

    @server.request(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    def prepare_call_hierarchy(
        params: lsp.CallHierarchyPrepareParams,
    ) -> list[lsp.CallHierarchyItem] | None:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return None
        offset = convert.to_offset(doc.index, params.position)
        found = ide_call_hierarchy.prepare(doc.project, doc.path, offset)
        return [call_item(it) for it in found] or None

    @server.request(lsp.CALL_HIERARCHY_INCOMING_CALLS)
    def incoming_calls(
        params: lsp.CallHierarchyIncomingCallsParams,
    ) -> list[lsp.CallHierarchyIncomingCall]:
        got = call_key(params.item)
        if got is None:
            return []
        project, key, _ = got
        return [
            lsp.CallHierarchyIncomingCall(
                from_=call_item(c.item),
                from_ranges=[convert.to_range(server.index_of(c.item.path), r) for r in c.ranges],
            )
            for c in ide_call_hierarchy.incoming(project, key)
        ]

    @server.request(lsp.CALL_HIERARCHY_OUTGOING_CALLS)
    def outgoing_calls(
        params: lsp.CallHierarchyOutgoingCallsParams,
    ) -> list[lsp.CallHierarchyOutgoingCall]:
        got = call_key(params.item)
        if got is None:
            return []
        project, key, path = got
        caller = server.index_of(path)
        return [
            lsp.CallHierarchyOutgoingCall(
                to=call_item(c.item),
                from_ranges=[convert.to_range(caller, r) for r in c.ranges],
            )
            for c in ide_call_hierarchy.outgoing(project, key)
        ]

    # -- inlay hints --------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    def inlay_hint(params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return []
        rng = convert.to_text_range(doc.index, params.range)
        return [
            lsp.InlayHint(
                position=convert.to_position(doc.index, h.offset),
                label=h.label,
                kind=lsp.InlayHintKind.Type,
                tooltip=h.tooltip,
                padding_left=True,
            )
            for h in ide_inlay_hints.inlay_hints(doc.project, doc.path, rng)
        ]

    # -- semantic tokens ----------------------------------------------------------------
    legend = lsp.SemanticTokensLegend(
        token_types=list(ide_semantic_tokens.TOKEN_TYPES),
        token_modifiers=list(ide_semantic_tokens.TOKEN_MODIFIERS),
    )

    def tokens(uri: str, rng: lsp.Range | None) -> lsp.SemanticTokens:
        doc = server.doc(uri, partial_ok=True)
        if doc is None:
            return lsp.SemanticTokens(data=[])
        text_range = convert.to_text_range(doc.index, rng) if rng is not None else None
        found = ide_semantic_tokens.semantic_tokens(doc.project, doc.path, text_range)
        data = convert.encode_semantic_tokens(
            ((t.range, t.type, t.modifiers) for t in found),
            doc.index,
            legend.token_types,
            legend.token_modifiers,
        )
        return lsp.SemanticTokens(data=data)

    @server.request(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, legend)
    def semantic_tokens_full(params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
        return tokens(params.text_document.uri, None)

    @server.request(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, legend)
    def semantic_tokens_range(params: lsp.SemanticTokensRangeParams) -> lsp.SemanticTokens:
        return tokens(params.text_document.uri, params.range)

    # -- structure ----------------------------------------------------------------------
    @server.request(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding_range(params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        doc = server.doc(params.text_document.uri, partial_ok=True)
        if doc is None:
            return []
        out = []
        for f in ide_structure.folding_ranges(doc.project, doc.path):
            start, end = doc.index.line_of(f.start), doc.index.line_of(f.end)
            if end > start:
                out.append(
                    lsp.FoldingRange(
                        start_line=start, end_line=end, kind=convert.folding_kind(f.kind)
                    )
                )
        return out

    @server.request(lsp.TEXT_DOCUMENT_SELECTION_RANGE)
    def selection_range(params: lsp.SelectionRangeParams) -> list[lsp.SelectionRange]:
        doc = server.doc(params.text_document.uri, partial_ok=True)
        if doc is None:
            return [lsp.SelectionRange(range=lsp.Range(start=p, end=p)) for p in params.positions]
        offsets = [convert.to_offset(doc.index, p) for p in params.positions]
        chains = ide_structure.selection_ranges(doc.project, doc.path, offsets)
        out = []
        for offset, chain in zip(offsets, chains, strict=False):
            parent: lsp.SelectionRange | None = None
            for rng in reversed(chain or [TextRange(offset, offset)]):
                parent = lsp.SelectionRange(range=convert.to_range(doc.index, rng), parent=parent)
            assert parent is not None
            out.append(parent)
        return out

    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions())
    def document_link(params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
        doc = server.doc(params.text_document.uri, partial_ok=True)
        if doc is None:
            return []
        return [
            lsp.DocumentLink(
                range=convert.to_range(doc.index, link.range),
                target=server.uri_of(link.target),
                tooltip=link.tooltip or None,
            )
            for link in ide_structure.document_links(doc.project, doc.path)
        ]

    @server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    def code_lens(params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        doc = server.doc(params.text_document.uri)
        if doc is None:
            return lsp_layers.code_lens(server, params, SHOW_REFERENCES)  # memory-layers/
        out = []
        uri = server.uri_of(doc.path)
        hints = server.settings.coverage_hints
        for lens in ide_structure.code_lenses(doc.project, doc.path, hints):
            rng = convert.to_range(doc.index, lens.range)
            refs = (
                list(lens.locations)
                if lens.locations is not None
                else ide_locate.reference_locations(doc.project, lens.key, False)
            )
            command = lsp.Command(title=lens.title, command="")
            if refs and lens.title != ide_structure.NEVER_READ:
                command = lsp.Command(
                    title=lens.title,
                    command=SHOW_REFERENCES,
                    arguments=[uri, rng.start, locations(refs)],
                )
            out.append(lsp.CodeLens(range=rng, command=command))
        return out

    # -- code actions -------------------------------------------------------------------
    @server.request(
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
    )
    def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
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
            found = server.diagnostics.compute(doc.project, [doc.path]).get(doc.path, [])
            st = server.diagnostics.configs.settings_for(doc.project.root)
            found = [d for d in found if st.fixable(d.code)]  # `unfixable`, as --fix
            batch = ide_fixes.fix_all(doc.project, found)
            if batch.count:
                try:
                    edit = workspace_edit(batch.workspace_edit(), [doc.project.root])
                except FeatureFailed:
                    edit = None
                if edit is not None:
                    title = f"Fix all safe problems in this file ({batch.count})"
                    out.append(lsp.CodeAction(title=title, kind=FIX_ALL_KIND, edit=edit))
        lazy = "edit" in _resolvable(server)
        offered: set[str] = set()
        config = _config_file(server, doc.project.root)
        found_actions = ide_code_actions.code_actions(
            doc.project, doc.path, rng, diags, config=config
        )
        for action in found_actions:
            if not wanted(action.kind):
                continue
            try:
                edit = workspace_edit(action.edit, [doc.project.root])
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

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    def code_action_resolve(action: lsp.CodeAction) -> lsp.CodeAction:
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
            action.edit = workspace_edit(batch.workspace_edit(), [proj.root])
        except FeatureFailed:
            action.edit = lsp.WorkspaceEdit()
        return action

    # -- graphs (docs/features/graphs.md) -------------------------------------------------
    def graph_json(graph: ide_graphs.Graph, params: Any = None) -> dict[str, Any]:
        def where(loc: Location) -> dict[str, Any]:
            at = convert.to_location(loc, server.index_of, server.uri_of)
            start, end = at.range.start, at.range.end
            return {
                "uri": at.uri,
                "range": {
                    "start": {"line": start.line, "character": start.character},
                    "end": {"line": end.line, "character": end.character},
                },
            }

        return ide_graphs.to_json(graph, where, _layout(graph, params))

    @server.request(FLOW_GRAPH)
    def flow_graph(params: Any) -> dict[str, Any] | None:
        """The flow of the ordered block at ``position`` of ``textDocument`` (a skill.md),
        or of ``block`` (of ``skill``, else of the document's skill); None when there is
        no such block there."""
        m = FLOW_GRAPH
        object_params(
            m, params, "{textDocument: {uri}, position} or {textDocument, block}, layout?"
        )
        uri = required_string(m, params, "textDocument", "uri")
        sid, block = string(m, params, "skill"), string(m, params, "block")
        if block is None:
            if _param(params, "position") is None:
                raise InvalidParams(f"{m} takes a position or a block id")
            line = integer(m, params, "position", "line")
            char = integer(m, params, "position", "character")
        doc = server.doc(uri)
        if doc is None:
            return None
        if block is None:
            offset = convert.to_offset(doc.index, lsp.Position(line=line, character=char))
            found = ide_graphs.block_at(doc.project, doc.path, offset)
            if found is None:
                return None
            sid, block = found
        if not isinstance(sid, str):
            sid = (doc.project.classify(doc.path) or (None, None))[1]
            if sid is None:
                return None
        diags = server.diagnostics.compute(doc.project, _skill_md(doc.project, sid))
        try:
            graph = ide_graphs.flow_graph(
                doc.project, sid, block, [d for ds in diags.values() for d in ds]
            )
        except ide_graphs.GraphError as e:
            raise FeatureFailed(str(e)) from None
        return graph_json(graph, params)

    @server.request(AGENT_MAP)
    def agent_map(params: Any) -> dict[str, Any] | None:
        """The agent map of the project of ``textDocument`` (only ``skill``'s part when
        given, ``hops`` 1 or 2 from it); None outside a project."""
        object_params(AGENT_MAP, params, "{textDocument: {uri}, skill?, hops?, layout?}")
        uri = required_string(AGENT_MAP, params, "textDocument", "uri")
        sid = string(AGENT_MAP, params, "skill")
        hops = field(params, "hops")
        if hops is not None and (isinstance(hops, bool) or hops not in (1, 2)):
            raise InvalidParams(f"{AGENT_MAP}: `hops` is 1 or 2")
        doc = server.doc(uri)
        if doc is None:
            return None
        proj = doc.project
        # the problems the editor shows: recomputing every file's on each request would
        # be too slow in a large project
        diags = server.diagnostics.problems_of(proj)
        try:
            graph = ide_graphs.agent_map(
                proj, sid if isinstance(sid, str) else None, diags, hops if hops else 1
            )
        except ide_graphs.GraphError as e:
            raise FeatureFailed(str(e)) from None
        return graph_json(graph, params)

    @server.request(PREVIEW_PROMPT)
    def preview_prompt(params: Any) -> dict[str, Any] | None:
        """The prompt preview of the skill of ``textDocument`` for the memory state
        ``memory`` (YAML or JSON text; absent: everything None): of the ordered-block step
        ``step`` (of ``block``), else of the step at ``position`` when ``textDocument`` is
        the skill.md, else of the prose; None outside a skill."""
        m = PREVIEW_PROMPT
        object_params(m, params, "{textDocument: {uri}, memory?, step?, block?, position?}")
        uri = required_string(m, params, "textDocument", "uri")
        memory = string(m, params, "memory")  # YAML or JSON text
        step, block = string(m, params, "step"), string(m, params, "block")
        if block is not None and step is None:
            raise InvalidParams(f"{m}: `block` needs `step` (a step id)")
        doc = server.doc(uri)
        if doc is None:
            return None
        sid = (doc.project.classify(doc.path) or (None, None))[1]
        if sid is None:
            return None
        try:
            state = ide_preview.parse_state(memory) if isinstance(memory, str) else {}
        except ValueError as e:
            raise FeatureFailed(f"mantle/previewPrompt: memory: {e}") from None
        offset = None
        sk = doc.project.skill(sid)
        in_skill_md = sk is not None and sk.skill_md is not None and sk.skill_md.path == doc.path
        if step is None and in_skill_md and field(params, "position") is not None:
            line, char = (
                integer(m, params, "position", "line"),
                integer(m, params, "position", "character"),
            )
            offset = convert.to_offset(doc.index, lsp.Position(line=line, character=char))
        try:
            pv = ide_preview.preview_skill(doc.project, sid, state, step, block, offset)
        except ide_preview.StepNotFound as e:
            raise FeatureFailed(f"mantle/previewPrompt: {e}") from None
        return pv.to_json() if pv is not None else None


def _layout(graph: ide_graphs.Graph, params: Any) -> Any:
    """The layout a graph request asks for with ``layout: {fontSize, charWidth?}`` (the
    size of the viewer's text and the advance width of its monospace font, px), or None."""
    size = _param(params, "layout", "fontSize") if params is not None else None
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not size > 0:
        return None
    width = _param(params, "layout", "charWidth")
    ok = isinstance(width, (int, float)) and not isinstance(width, bool) and width > 0
    metrics = ide_layout.Metrics.for_font(float(size), float(width) if ok else None)
    # most edits change no node's text and no edge (only problems): the same layout, at
    # once (a map of 1,000 skills takes ~1 s to lay out), and nothing moves
    key = (
        graph.kind,
        metrics,
        tuple((n.id, ide_graphs.node_lines(graph, n)) for n in graph.nodes),
        tuple((e.source, e.target, ide_graphs.edge_lines(graph, e)) for e in graph.edges),
    )
    found = _LAYOUTS.pop(key, None)
    if found is None:
        found = ide_graphs.layout_of(graph, metrics)
    _LAYOUTS[key] = found
    while len(_LAYOUTS) > 8:
        _LAYOUTS.pop(next(iter(_LAYOUTS)))
    return found


_LAYOUTS: dict[Any, ide_layout.Layout] = {}  # the last layouts, oldest first


def _skill_md(project: Any, sid: str) -> list[Path]:
    sk = project.skill(sid)
    return [sk.skill_md.path] if sk is not None and sk.skill_md is not None else []


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


def _param(params: Any, *path: str) -> Any:
    """A field of a custom request's parameters (a dict, or pygls' object for one)."""
    for name in path:
        if params is None:
            return None
        params = params.get(name) if isinstance(params, dict) else getattr(params, name, None)
    return params


def get_resource_operations(server: MantleServer) -> list[str]:
    caps = server.client_capabilities.workspace
    edit = caps.workspace_edit if caps is not None else None
    return list(edit.resource_operations or ()) if edit is not None else []


def completion_list(
    server: MantleServer,
    uri: str,
    offset: int,
    result: ide_completion.CompletionResult,
    index: LineIndex,
) -> lsp.CompletionList:
    """The protocol's list for what ``complete`` found at ``offset`` of ``uri``."""
    snippets = server.client_supports("text_document.completion.completion_item.snippet_support")
    # A client that resolves the documentation of items gets it from completionItem/resolve
    # (built for the one item it shows); any other gets it with every item.
    caps = server.client_capabilities.text_document
    completion = caps.completion if caps is not None else None
    options = completion.completion_item if completion is not None else None
    resolve = options.resolve_support if options is not None else None
    lazy = resolve is not None and "documentation" in resolve.properties
    data = {"uri": uri, "offset": offset} if lazy else None
    # a text of several lines is indented for where it goes: a client that would indent it
    # again (VS Code adds the line's indentation) is told to insert it as it is
    modes = options.insert_text_mode_support if options is not None else None
    as_is = modes is not None and lsp.InsertTextMode.AsIs in modes.value_set
    # What the items share (their edit range, the data) is said once, in itemDefaults, to
    # a client that reads them.
    found = completion.completion_list if completion is not None else None
    shared = frozenset(found.item_defaults or ()) if found is not None else frozenset()
    edits = [it.edit for it in result.items]
    default_range = None
    if "editRange" in shared and edits and all(e is not None for e in edits):
        default_range = edits[0].range if edits[0] is not None else None
    shared_data = data is not None and "data" in shared
    ranges: dict[TextRange, lsp.Range] = {}  # the items of a list share one or two
    items = [
        completion_item(
            it,
            index,
            snippets,
            lazy=lazy,
            data=None if shared_data else data,
            ranges=ranges,
            default_range=default_range,
            as_is=as_is,
        )
        for it in result.items
    ]
    defaults = None
    if default_range is not None or shared_data:
        defaults = lsp.CompletionItemDefaults(
            edit_range=(
                convert.to_range(index, default_range) if default_range is not None else None
            ),
            data=data if shared_data else None,
        )
    return lsp.CompletionList(
        is_incomplete=result.is_incomplete, items=items, item_defaults=defaults
    )


def _utf16(text: str, offset: int) -> int:
    """A code-point offset into ``text`` in UTF-16 code units (LSP label offsets)."""
    return len(text[:offset].encode("utf-16-le")) // 2


def completion_item(
    it: ide_completion.CompletionItem,
    index: LineIndex,
    snippets: bool,
    *,
    lazy: bool = False,
    data: dict[str, Any] | None = None,
    ranges: dict[TextRange, lsp.Range] | None = None,
    default_range: TextRange | None = None,
    as_is: bool = False,
) -> lsp.CompletionItem:
    """The protocol's item. ``lazy``: the documentation is left for
    ``completionItem/resolve`` (``data``, here or in the list's itemDefaults, says where
    the item was offered). An edit of ``default_range`` (the list's itemDefaults.editRange)
    becomes ``textEditText`` (nothing when it inserts the label). ``ranges`` caches
    converted edit ranges across the items of one list. ``as_is``: the client inserts a
    text of several lines as it is when told so (the server indents it for its place)."""
    text_edit = None
    edit_text = None
    fmt = lsp.InsertTextFormat.PlainText
    mode = None
    if it.edit is not None:
        new_text = it.edit.new_text
        if as_is and "\n" in new_text:
            mode = lsp.InsertTextMode.AsIs
        if it.snippet:
            if snippets:
                fmt = lsp.InsertTextFormat.Snippet
            else:
                new_text = plain_snippet(new_text)
        if it.edit.range == default_range:
            edit_text = new_text if new_text != it.label else None
        else:
            rng = ranges.get(it.edit.range) if ranges is not None else None
            if rng is None:
                rng = convert.to_range(index, it.edit.range)
                if ranges is not None:
                    ranges[it.edit.range] = rng
            text_edit = lsp.TextEdit(range=rng, new_text=new_text)
    documentation = None
    if not lazy:
        markdown = it.documentation
        if markdown:
            documentation = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
    return lsp.CompletionItem(
        label=it.label,
        kind=convert.completion_kind(it.kind),
        detail=it.detail or None,
        documentation=documentation,
        sort_text=it.sort_text,
        filter_text=it.filter_text,
        text_edit=text_edit,
        text_edit_text=edit_text,
        insert_text_format=fmt,
        insert_text_mode=mode,
        data=data,
        command=RETRIGGER if it.retrigger else None,
    )


def document_symbol_of(sym: ide_outline.DocSymbol, index: LineIndex) -> lsp.DocumentSymbol:
    rng = sym.range
    sel = sym.selection_range
    if not (rng.start <= sel.start and sel.end <= rng.end):
        sel = TextRange(rng.start, rng.start)  # clients reject a selection outside the range
    return lsp.DocumentSymbol(
        name=sym.name or "?",
        kind=convert.symbol_kind(sym.kind),
        range=convert.to_range(index, rng),
        selection_range=convert.to_range(index, sel),
        detail=sym.detail or None,
        children=[document_symbol_of(c, index) for c in sym.children],
    )
