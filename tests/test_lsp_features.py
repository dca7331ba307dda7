"""End to end: one request per language feature against one server on a copy of
examples/telecom (module-scoped: tests that change a document close it again)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from test_lsp_support import (
    Session,
    copy_telecom,
    lsp_session,
    position_of,
    uri,
    vscode_capabilities,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(30)]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def s(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    root = copy_telecom(tmp_path_factory.mktemp("features"))
    async with lsp_session(root) as sess:
        yield sess


def skill_md(s: Session, sid: str) -> Path:
    return s.root / "skills" / sid / "skill.md"


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def span(text: str, needle: str, nth: int = 0, inner: str | None = None) -> lsp.Range:
    """The range of ``inner`` (default: the whole needle) inside the nth ``needle``."""
    at = position_of(text, needle, nth=nth)
    start = needle.index(inner) if inner else 0
    width = len(inner or needle)
    return lsp.Range(
        start=lsp.Position(line=at.line, character=at.character + start),
        end=lsp.Position(line=at.line, character=at.character + start + width),
    )


def decode_tokens(data: tuple[int, ...] | list[int], text: str, legend: lsp.SemanticTokensLegend):
    lines = text.split("\n")
    out = []
    line = char = 0
    for i in range(0, len(data), 5):
        dl, dc, length, typ, _mods = data[i : i + 5]
        line += dl
        char = char + dc if dl == 0 else dc
        out.append((line, lines[line][char : char + length], legend.token_types[typ]))
    return out


async def test_capabilities(s: Session) -> None:
    assert s.init is not None
    caps = s.init.capabilities
    assert caps.position_encoding == lsp.PositionEncodingKind.Utf16
    sync = caps.text_document_sync
    assert isinstance(sync, lsp.TextDocumentSyncOptions)
    assert sync.change == lsp.TextDocumentSyncKind.Incremental
    assert caps.completion_provider is not None
    assert set(caps.completion_provider.trigger_characters or ()) == {
        ".", "@", "{", '"', "'", ":", " "
    }  # fmt: skip
    assert caps.completion_provider.resolve_provider is True
    assert caps.signature_help_provider is not None
    assert caps.diagnostic_provider is None  # VS Code 1.65 does not pull: we push
    assert caps.workspace is not None and caps.workspace.file_operations is not None
    will = caps.workspace.file_operations.will_rename
    assert will is not None and will.filters[0].pattern.glob == "**/skills/*"


async def test_completion_after_session_dot(s: Session) -> None:
    path = skill_md(s, "device_troubleshooting")
    text = text_of(path) + "\nif: session.\nSay hello.\n"
    s.open(path, text)
    pos = position_of(text, "if: session.\nSay", len("if: session."))
    result = await s.client.text_document_completion_async(
        lsp.CompletionParams(text_document=s.doc(path), position=pos)
    )
    s.close(path)
    assert isinstance(result, lsp.CompletionList)
    labels = [i.label for i in result.items]
    for sid in ("device_troubleshooting", "roaming_pass", "project"):
        assert sid in labels, labels
    item = next(i for i in result.items if i.label == "roaming_pass")
    assert item.kind == lsp.CompletionItemKind.Module
    assert isinstance(item.text_edit, lsp.TextEdit)
    assert item.text_edit.range == lsp.Range(start=pos, end=pos)
    assert item.text_edit.new_text == "roaming_pass"


async def test_accepting_a_token_kind_opens_the_suggestions_again(s: Session) -> None:
    path = skill_md(s, "device_troubleshooting")
    text = text_of(path) + "\nCall @\n"
    s.open(path, text)
    try:
        pos = position_of(text, "Call @\n", len("Call @"))
        result = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(path), position=pos)
        )
        assert isinstance(result, lsp.CompletionList)
        skill = next(i for i in result.items if i.label == "skill.")
        assert skill.command is not None
        assert skill.command.command == "editor.action.triggerSuggest"
    finally:
        s.close(path)


async def test_signature_help_in_execute_tool_parameters(s: Session) -> None:
    path = skill_md(s, "device_troubleshooting")
    text = text_of(path)
    needle = "      issue_type: session.device_troubleshooting.issue_type"
    pos = position_of(text, needle, len("      issue_type: "))
    s.open(path, text)
    try:
        got = await s.client.text_document_signature_help_async(
            lsp.SignatureHelpParams(text_document=s.doc(path), position=pos)
        )
        assert got is not None
        (sig,) = got.signatures
        assert sig.label == (
            "run_line_diagnostics(msisdn: str, issue_type: str, deep_scan: bool = False)"
        )
        assert sig.parameters is not None
        spans = [p.label for p in sig.parameters]
        assert [sig.label[a:b] for a, b in spans] == [  # type: ignore[misc]
            "msisdn: str",
            "issue_type: str",
            "deep_scan: bool = False",
        ]
        assert got.active_parameter == 1
        assert isinstance(sig.documentation, lsp.MarkupContent)
        assert "network-side diagnostic" in sig.documentation.value
        # outside a parameters mapping: nothing
        elsewhere = position_of(text, "  - id: ask_issue", 4)
        none = await s.client.text_document_signature_help_async(
            lsp.SignatureHelpParams(text_document=s.doc(path), position=elsewhere)
        )
        assert none is None
    finally:
        s.close(path)


async def test_completion_documentation_comes_from_resolve(s: Session) -> None:
    """A client that resolves items (VS Code) gets the list without documentation, and
    each item's documentation from completionItem/resolve; an item that is no longer
    offered where it was asked for comes back unchanged."""
    path = skill_md(s, "device_troubleshooting")
    line = "if: session.roaming_pass.\nSay hello.\n"
    text = text_of(path) + "\n" + line
    s.open(path, text)
    try:
        at_ns = position_of(text, line, len("if: session."))
        result = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(path), position=at_ns)
        )
        assert isinstance(result, lsp.CompletionList) and result.items
        assert all(i.documentation is None for i in result.items)
        item = next(i for i in result.items if i.label == "roaming_pass")
        resolved = await s.client.completion_item_resolve_async(item)
        assert isinstance(resolved.documentation, lsp.MarkupContent)
        assert resolved.documentation.kind == lsp.MarkupKind.Markdown
        doc = resolved.documentation.value
        assert "Sells a roaming pass" in doc and "`destination`" in doc
        assert "pass_length" not in doc  # private to roaming_pass
        assert (resolved.label, resolved.detail, resolved.text_edit) == (
            item.label,
            item.detail,
            item.text_edit,
        )

        at_entry = position_of(text, line, len("if: session.roaming_pass."))
        result = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(path), position=at_entry)
        )
        assert isinstance(result, lsp.CompletionList)
        entry = next(i for i in result.items if i.label == "destination")
        assert entry.documentation is None
        resolved = await s.client.completion_item_resolve_async(entry)
        assert isinstance(resolved.documentation, lsp.MarkupContent)
        assert "public field of `roaming_pass`" in resolved.documentation.value
        assert "skills/roaming_pass/memory.yml" in resolved.documentation.value

        # the condition became prose: the items are stale and come back as they were
        start = text.count("\n", 0, text.index(line))
        s.change(path, (start, 0), (start, len("if: session.roaming_pass.")), "Plain prose.")
        for stale in (item, entry):
            assert await s.client.completion_item_resolve_async(stale) == stale
        # data that is not ours
        foreign = lsp.CompletionItem(label="roaming_pass", data={"something": "else"})
        assert await s.client.completion_item_resolve_async(foreign) == foreign
    finally:
        s.close(path)


@pytest.mark.parametrize("resolves", [None, ["additionalTextEdits", "command"]])
async def test_completion_without_resolve_support_sends_documentation(
    tmp_path: Path, resolves: list[str] | None
) -> None:
    """A client that does not say it resolves the documentation of completion items (no
    completionItem.resolveSupport, or one without `documentation`, as Neovim's own)
    gets every item's documentation in the list."""
    root = copy_telecom(tmp_path)
    caps = vscode_capabilities()
    assert caps.text_document is not None and caps.text_document.completion is not None
    options = caps.text_document.completion.completion_item
    assert options is not None
    options.resolve_support = (
        lsp.ClientCompletionItemResolveOptions(properties=resolves) if resolves else None
    )
    path = root / "skills" / "device_troubleshooting" / "skill.md"
    line = "if: session.\nSay hello.\n"
    text = text_of(path) + "\n" + line
    async with lsp_session(root, capabilities=caps) as sess:
        sess.open(path, text)
        result = await sess.client.text_document_completion_async(
            lsp.CompletionParams(
                text_document=sess.doc(path), position=position_of(text, line, len("if: session."))
            )
        )
    assert isinstance(result, lsp.CompletionList)
    item = next(i for i in result.items if i.label == "roaming_pass")
    assert isinstance(item.documentation, lsp.MarkupContent)
    assert "Sells a roaming pass" in item.documentation.value
    assert all(i.data is None for i in result.items)


async def test_completion_item_defaults(tmp_path: Path) -> None:
    """A client that reads CompletionList.itemDefaults (Neovim) gets the shared edit range
    and data once: each item carries only the text it inserts when that is not its label,
    and resolves with the list's data, as the client merges it into the item."""
    root = copy_telecom(tmp_path)
    caps = client_capabilities("neovim")
    assert caps.text_document is not None and caps.text_document.completion is not None
    options = caps.text_document.completion.completion_item
    assert options is not None and options.resolve_support is not None
    # as nvim-cmp announces it (Neovim's own list leaves out `documentation`)
    options.resolve_support.properties = ["documentation", "detail", "additionalTextEdits"]
    path = root / "skills" / "device_troubleshooting" / "skill.md"
    line = "if: session.roaming_pass.zone \nSay hello.\n\nif: session.\nSay bye.\n"
    text = text_of(path) + "\n" + line
    async with lsp_session(root, capabilities=caps) as sess:
        sess.open(path, text)
        after_operand = position_of(text, line, len("if: session.roaming_pass.zone "))
        operators = await sess.client.text_document_completion_async(
            lsp.CompletionParams(text_document=sess.doc(path), position=after_operand)
        )
        at_ns = position_of(text, "if: session.\nSay bye", len("if: session."))
        namespaces = await sess.client.text_document_completion_async(
            lsp.CompletionParams(text_document=sess.doc(path), position=at_ns)
        )
        assert isinstance(namespaces, lsp.CompletionList)
        item = next(i for i in namespaces.items if i.label == "roaming_pass")
        assert namespaces.item_defaults is not None
        merged = lsp.CompletionItem(label=item.label, kind=item.kind, detail=item.detail)
        merged.data = namespaces.item_defaults.data
        resolved = await sess.client.completion_item_resolve_async(merged)
    assert isinstance(operators, lsp.CompletionList) and operators.item_defaults is not None
    assert operators.item_defaults.edit_range == lsp.Range(start=after_operand, end=after_operand)
    eq = next(i for i in operators.items if i.label == "==")
    assert eq.text_edit is None and eq.text_edit_text == "== "
    assert namespaces.item_defaults.edit_range == lsp.Range(start=at_ns, end=at_ns)
    assert item.text_edit is None and item.text_edit_text is None  # inserts its label
    assert item.data is None and item.documentation is None
    assert isinstance(resolved.documentation, lsp.MarkupContent)
    assert "Sells a roaming pass" in resolved.documentation.value


async def test_hover(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    h = await s.client.text_document_hover_async(
        lsp.HoverParams(text_document=s.doc(path), position=position_of(text, "pass_length", 3))
    )
    assert h is not None
    assert isinstance(h.contents, lsp.MarkupContent)
    assert h.contents.kind == lsp.MarkupKind.Markdown
    assert "pass_length" in h.contents.value and "categorical" in h.contents.value
    assert h.range == span(text, "collect: pass_length", inner="pass_length")


async def test_definition_and_declaration(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    memory = s.root / "skills" / "roaming_pass" / "memory.yml"
    pos = position_of(text, "session.roaming_pass.destination", len("session.roaming_pass.") + 2)
    want = [
        lsp.Location(
            uri=uri(memory), range=span(text_of(memory), "destination:", inner="destination")
        )
    ]
    got = await s.client.text_document_definition_async(
        lsp.DefinitionParams(text_document=s.doc(path), position=pos)
    )
    assert got == want
    got = await s.client.text_document_declaration_async(
        lsp.DeclarationParams(text_document=s.doc(path), position=pos)
    )
    assert got == want


async def test_references(s: Session) -> None:
    memory = s.root / "skills" / "roaming_pass" / "memory.yml"
    mtext = text_of(memory)
    pos = position_of(mtext, "destination:")
    params = lsp.ReferenceParams(
        text_document=s.doc(memory),
        position=pos,
        context=lsp.ReferenceContext(include_declaration=False),
    )
    refs = await s.client.text_document_references_async(params)
    assert refs is not None
    files = {Path(r.uri[len("file://") :]).relative_to(s.root).as_posix() for r in refs}
    assert "skills/device_troubleshooting/skill.md" in files
    assert "skills/roaming_pass/skill.md" in files
    dt = skill_md(s, "device_troubleshooting")
    assert (
        lsp.Location(
            uri=uri(dt),
            range=span(text_of(dt), "session.roaming_pass.destination", inner="destination"),
        )
        in refs
    )
    params.context.include_declaration = True
    with_decl = await s.client.text_document_references_async(params)
    assert with_decl is not None and len(with_decl) == len(refs) + 1


async def test_document_highlight(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    got = await s.client.text_document_document_highlight_async(
        lsp.DocumentHighlightParams(
            text_document=s.doc(path), position=position_of(text, "collect: destination", 10)
        )
    )
    assert got is not None
    kinds = {(h.range.start.line, h.kind) for h in got}
    write_line = position_of(text, "collect: destination").line
    assert (write_line, lsp.DocumentHighlightKind.Write) in kinds
    assert any(h.kind == lsp.DocumentHighlightKind.Read for h in got)


async def test_prepare_rename_and_rename_field(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    pos = position_of(text, "collect: pass_length", len("collect: p"))
    prep = await s.client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(text_document=s.doc(path), position=pos)
    )
    assert isinstance(prep, lsp.PrepareRenamePlaceholder)
    assert prep.placeholder == "pass_length"
    assert prep.range == span(text, "collect: pass_length", inner="pass_length")
    edit = await s.client.text_document_rename_async(
        lsp.RenameParams(text_document=s.doc(path), position=pos, new_name="trip_length")
    )
    assert edit is not None and edit.document_changes
    changed = {c.text_document.uri: c.edits for c in edit.document_changes}  # type: ignore[union-attr]
    memory = s.root / "skills" / "roaming_pass" / "memory.yml"
    assert (
        lsp.TextEdit(
            range=span(text_of(memory), "pass_length:", inner="pass_length"), new_text="trip_length"
        )
        in changed[uri(memory)]
    )
    assert all(e.new_text == "trip_length" for es in changed.values() for e in es)


async def test_prepare_rename_refusal_is_an_error_with_a_message(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    with pytest.raises(JsonRpcException) as err:
        await s.client.text_document_prepare_rename_async(
            lsp.PrepareRenameParams(
                text_document=s.doc(path), position=position_of(text, "name: Roaming", 2)
            )
        )
    assert "rename" in str(err.value).lower() or "nothing" in str(err.value)


async def test_rename_skill_moves_its_folder(s: Session) -> None:
    path = skill_md(s, "bill_dispute")
    text = text_of(path)
    pos = position_of(text, "session.roaming_pass.pass_active", len("session.ro"))
    edit = await s.client.text_document_rename_async(
        lsp.RenameParams(text_document=s.doc(path), position=pos, new_name="roaming")
    )
    assert edit is not None and edit.document_changes
    *edits, last = edit.document_changes
    assert isinstance(last, lsp.RenameFile)
    assert last.old_uri == uri(s.root / "skills" / "roaming_pass")
    assert last.new_uri == uri(s.root / "skills" / "roaming")
    assert all(isinstance(e, lsp.TextDocumentEdit) for e in edits)
    mine = next(e for e in edits if e.text_document.uri == uri(path))  # type: ignore[union-attr]
    assert (
        lsp.TextEdit(
            range=span(text, "session.roaming_pass.pass_active", inner="roaming_pass"),
            new_text="roaming",
        )
        in mine.edits
    )  # type: ignore[union-attr]


async def test_will_rename_files(s: Session) -> None:
    old, new = s.root / "skills" / "roaming_pass", s.root / "skills" / "roaming"
    edit = await s.client.workspace_will_rename_files_async(
        lsp.RenameFilesParams(files=[lsp.FileRename(old_uri=uri(old), new_uri=uri(new))])
    )
    assert edit is not None and edit.document_changes
    assert not any(isinstance(c, lsp.RenameFile) for c in edit.document_changes)
    bd = skill_md(s, "bill_dispute")
    mine = next(c for c in edit.document_changes if c.text_document.uri == uri(bd))  # type: ignore[union-attr]
    assert (
        lsp.TextEdit(
            range=span(text_of(bd), "session.roaming_pass.pass_active", inner="roaming_pass"),
            new_text="roaming",
        )
        in mine.edits
    )  # type: ignore[union-attr]


async def test_code_actions_for_a_diagnostic(s: Session) -> None:
    path = skill_md(s, "plan_change")
    text = text_of(path).replace("== 'prepaid'", "== 'prepayd'", 1)
    s.open(path, text)
    diags = await s.until(lambda: s.diagnostics(path), what="the enum-value diagnostic")
    (d,) = diags
    assert d.code == "lsp.condition.enum_value"
    actions = await s.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=s.doc(path),
            range=d.range,
            context=lsp.CodeActionContext(diagnostics=[d]),
        )
    )
    assert actions is not None
    first = actions[0]
    assert isinstance(first, lsp.CodeAction)
    assert first.title == "Change to `prepaid`"
    assert first.kind == lsp.CodeActionKind.QuickFix
    assert first.is_preferred is True
    assert first.diagnostics == (d,)
    assert first.edit is not None and first.edit.document_changes
    (change,) = first.edit.document_changes
    assert change.edits == (  # type: ignore[union-attr]
        lsp.TextEdit(range=span(text, "'prepayd'", inner="prepayd"), new_text="prepaid"),
    )
    only = await s.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=s.doc(path),
            range=d.range,
            context=lsp.CodeActionContext(diagnostics=[d], only=[lsp.CodeActionKind.Source]),
        )
    )
    assert only == ()
    s.close(path)


async def test_document_and_workspace_symbols(s: Session) -> None:
    memory = s.root / "skills" / "roaming_pass" / "memory.yml"
    mtext = text_of(memory)
    syms = await s.client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=s.doc(memory))
    )
    assert syms is not None
    public = syms[0]
    assert isinstance(public, lsp.DocumentSymbol)
    assert public.name == "public"
    assert [c.name for c in public.children or ()] == ["destination", "pass_active", "pass_name"]
    dest = (public.children or ())[0]
    assert dest.kind == lsp.SymbolKind.Field and dest.detail == "text"
    assert dest.selection_range == span(mtext, "destination:", inner="destination")
    found = await s.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="pass_len"))
    assert found is not None
    names = [f.name for f in found]
    assert "roaming_pass.pass_length" in names
    field = next(f for f in found if f.name == "roaming_pass.pass_length")
    assert field.location.uri == uri(memory)  # type: ignore[union-attr]


async def test_semantic_tokens_full_and_range(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    assert s.init is not None
    legend = s.init.capabilities.semantic_tokens_provider.legend  # type: ignore[union-attr]
    full = await s.client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(text_document=s.doc(path))
    )
    assert full is not None
    tokens = decode_tokens(full.data, text, legend)
    line = position_of(text, "session.roaming_pass.zone").line
    on_line = [(t, k) for ln, t, k in tokens if ln == line]
    assert on_line == [
        ("session", "keyword"),
        ("roaming_pass", "namespace"),
        ("zone", "property"),
        ("==", "operator"),
        ("'world'", "string"),
    ]
    ranged = await s.client.text_document_semantic_tokens_range_async(
        lsp.SemanticTokensRangeParams(
            text_document=s.doc(path),
            range=lsp.Range(
                start=lsp.Position(line=line, character=0),
                end=lsp.Position(line=line + 1, character=0),
            ),
        )
    )
    assert ranged is not None
    assert [(t, k) for _, t, k in decode_tokens(ranged.data, text, legend)] == on_line


async def test_folding_ranges(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    folds = await s.client.text_document_folding_range_async(
        lsp.FoldingRangeParams(text_document=s.doc(path))
    )
    assert folds is not None
    pairs = {(f.start_line, f.end_line) for f in folds}
    fm_end = position_of(text, "---", nth=1).line
    assert any(a == 0 and b >= fm_end - 1 for a, b in pairs), pairs
    block = position_of(text, ":::ordered_block").line
    assert any(a == block for a, _ in pairs), pairs
    assert all(f.end_line > f.start_line for f in folds)


async def test_selection_ranges(s: Session) -> None:
    path = skill_md(s, "roaming_pass")
    text = text_of(path)
    pos = position_of(text, "session.roaming_pass.zone", len("session.roaming_pass.z"))
    (sel,) = await s.client.text_document_selection_range_async(
        lsp.SelectionRangeParams(text_document=s.doc(path), positions=[pos])
    ) or [None]
    assert sel is not None
    assert sel.range == span(text, "session.roaming_pass.zone", inner="zone")
    assert sel.parent is not None
    assert sel.parent.range == span(text, "session.roaming_pass.zone")
    chain = []
    node: lsp.SelectionRange | None = sel
    while node is not None:
        chain.append(node.range)
        node = node.parent
    assert chain[-1].start == lsp.Position(line=0, character=0)
    assert len(chain) >= 5


async def test_document_links(s: Session) -> None:
    path = skill_md(s, "bill_dispute")
    text = text_of(path)
    links = await s.client.text_document_document_link_async(
        lsp.DocumentLinkParams(text_document=s.doc(path))
    )
    assert links is not None
    (link,) = links
    assert link.range == span(text, "lookup_account_summary")
    assert link.target == uri(s.root / "tools" / "account_lookup.py")
    assert "lookup_account_summary" in (link.tooltip or "")


async def test_code_lens(s: Session) -> None:
    memory = s.root / "skills" / "roaming_pass" / "memory.yml"
    mtext = text_of(memory)
    lenses = await s.client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=s.doc(memory))
    )
    assert lenses is not None
    first = lenses[0]
    assert first.range == span(mtext, "destination:", inner="destination")
    assert first.command is not None
    # seven in the agent, one in a scenario (memory_was_set: roaming_pass.destination)
    assert first.command.title == "7 references, 1 in a scenario"
    assert first.command.command == "editor.action.showReferences"
    doc_uri, position, locations = first.command.arguments  # type: ignore[misc]
    assert doc_uri == uri(memory)
    assert position == {"line": first.range.start.line, "character": first.range.start.character}
    assert len(locations) == 8
    assert sum("/eval/scenarios/" in loc["uri"] for loc in locations) == 1


async def test_unknown_documents_get_empty_results(s: Session) -> None:
    readme = s.root / "README.md"
    readme.write_text("# notes\nsession.\n", encoding="utf-8")
    s.open(readme)
    doc = s.doc(readme)
    pos = lsp.Position(line=1, character=8)
    assert (
        await s.client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=pos))
        is None
    )
    completion = await s.client.text_document_completion_async(
        lsp.CompletionParams(text_document=doc, position=pos)
    )
    assert isinstance(completion, lsp.CompletionList) and completion.items == ()
    assert (
        await s.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=doc)
        )
        == []
    )
    outside = lsp.TextDocumentIdentifier(uri="untitled:Untitled-1")
    assert (
        await s.client.text_document_definition_async(
            lsp.DefinitionParams(text_document=outside, position=pos)
        )
        == []
    )
    s.close(readme)
    assert s.published_for(readme) == []
