"""The documents an editor opens with the workspace get their diagnostics before the
whole project is indexed (issue 14): a first look from the project loaded around their
skill (``Project.load_around``), without the rules that read every file; the index then
publishes them whole. And an editor that quits during the index gets its answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mantle_lsp.ide.diagnostics import first_look
from mantle_lsp.model import layout
from mantle_lsp.model.project import Project
from support import first_look_differences, write_fixture
from test_lsp_support import TELECOM, lsp_session, vscode_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate

pytestmark = pytest.mark.timeout(120)

TOOLS = "from rasa.mantle.tools.decorator import ToolContext, tool\n"

# `zeta` reads a field it does not declare (an error any look finds) and writes a project
# field that `alpha`'s tool writes first (a hint only the whole project shows), reads a
# neighbour's public field and a response another skill defines (both fine). `eta` makes
# the same mistake and nothing else: its first look is all there is to say.
PROJECT = (
    """\
//- memory.yml
customer_id:
  type: text
//- skills/alpha/memory.yml
schema:
  public:
    tier:
      type: text
      llm_settable: true
      description: The tier.
//- skills/alpha/responses.yml
responses:
  utter_shared:
    - text: Shared.
//- skills/alpha/tools.py
"""
    + TOOLS
    + """
@tool(description="Log in.")
async def log_in(context: ToolContext = None):
    context.memory.set("project.customer_id", "c-1")
    return None
//- skills/alpha/skill.md
---
description: Alpha.
---
Use @tool.log_in.
//- skills/eta/skill.md
---
description: Eta.
---
Read @memory.eta.nope and @memory.alpha.tier.

if: session.project.customer_id
Greet the customer by name.
//- skills/zeta/skill.md
---
description: Zeta.
---
Read @memory.zeta.nope and @memory.alpha.tier for @memory.project.customer_id.

:::ordered_block id=main
steps:
  - id: reset
    set_memory:
      customer_id: guest
  - id: say
    action: utter_shared
:::
"""
)


def _messages(diags: list[lsp.Diagnostic]) -> list[str]:
    return sorted(f"{d.code}" for d in diags)


async def test_a_document_opened_at_start_gets_its_first_look_and_keeps_it(
    tmp_path: Path,
) -> None:
    """`eta`'s first look is complete (the field its condition reads is written by
    `alpha`'s tool, which the look finds): published before the index, and what the
    whole project says of it later is the same (so it is not published again)."""
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    path = root / "skills" / "eta" / "skill.md"
    async with lsp_session(root, wait_index=False) as s:
        s.open(path)
        await s.until(lambda: len(s.published_for(path)) >= 1, what="the first look")
        indexed = any(m.startswith("initial index") for m in s.logs())
        await s.until(
            lambda: (
                any(m.startswith("index complete") for m in s.logs())
                or any(m.startswith("initial index") for m in s.logs())
            )
        )
        published = s.published_for(path)
    assert not indexed, "published before the index"
    assert _messages(list(published[0].diagnostics)) == [
        "mantle.validation.prose.unknown_memory_reference"
    ]
    assert published[0].version == 1
    assert [list(p.diagnostics) for p in published[1:]] in ([], [list(published[0].diagnostics)])


async def test_a_first_look_the_whole_project_may_add_to_waits_for_it(tmp_path: Path) -> None:
    """`zeta` writes a project field another skill writes: whether that is a problem
    depends on every file, so its diagnostics come with the index, whole, once."""
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    path = root / "skills" / "zeta" / "skill.md"
    async with lsp_session(root, wait_index=False) as s:
        s.open(path)
        await s.until(lambda: len(s.published_for(path)) >= 1, what="a publication")
        published = s.published_for(path)
    assert _messages(list(published[0].diagnostics)) == [
        "lsp.memory.project_field_written_twice",
        "mantle.validation.prose.unknown_memory_reference",
    ]


async def test_a_pull_before_the_index_is_answered_with_a_complete_first_look(
    tmp_path: Path,
) -> None:
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    eta, zeta = (root / "skills" / sid / "skill.md" for sid in ("eta", "zeta"))
    async with lsp_session(root, wait_index=False, capabilities=vscode_capabilities(True)) as s:
        u, z = s.open(eta), s.open(zeta)
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=u))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        assert _messages(list(report.items)) == ["mantle.validation.prose.unknown_memory_reference"]
        early = report.result_id
        # zeta's is not known before the index: "ask again", as the protocol has it
        with pytest.raises(JsonRpcException) as failed:
            await s.client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=z))
            )
        assert failed.value.code == lsp.LSPErrorCodes.ServerCancelled
        assert failed.value.data == {"retriggerRequest": True}
        await s.until(lambda: any(m.startswith("initial index") for m in s.logs()))
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(
                text_document=lsp.TextDocumentIdentifier(uri=u), previous_result_id=early
            )
        )
        assert isinstance(report, lsp.RelatedUnchangedDocumentDiagnosticReport)
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=z))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        assert len(report.items) == 2


async def test_an_editor_that_quits_during_the_index_gets_its_shutdown_answer(
    tmp_path: Path,
) -> None:
    """pygls cancels pending handlers while iterating over them; the running index's
    handler used to be forgotten during that iteration ("dictionary changed size")."""
    root = generate(tmp_path / "gen", 150).resolve()
    async with lsp_session(root, wait_index=False) as s:
        s.open(root / "skills" / "s7" / "skill.md")
    # leaving the session sends shutdown and fails on an error answer


@pytest.mark.parametrize("example", ["telecom", "telecom-broken"])
def test_the_first_look_is_the_whole_check_less_the_data_flow_rules(example: str) -> None:
    """On every skill of the examples (``make oracle`` does it on the whole corpus)."""
    looked, differences = first_look_differences(TELECOM.parent / example)
    assert looked >= 5
    assert differences == []


def test_the_first_look_parses_only_what_its_skill_needs(tmp_path: Path) -> None:
    root = generate(tmp_path / "gen", 40)
    files = list(layout.project_files(root))
    proj = Project.load_around(root, files, "s7")
    first_look(proj, [root / "skills" / "s7" / "skill.md"])
    parsed = {
        p.relative_to(root).as_posix()
        for p, pf in proj.files.items()
        if type(pf).__name__ != "PendingFile" or pf._parsed is not None  # type: ignore[attr-defined]
    }
    # its own files, the project's, and the neighbour whose field a condition reads
    assert {p for p in parsed if p.startswith("skills/s7/")} == {
        "skills/s7/skill.md",
        "skills/s7/memory.yml",
        "skills/s7/responses.yml",
        "skills/s7/tools.py",
    }
    others = {p.split("/")[1] for p in parsed if p.startswith("skills/") and "/s7/" not in p}
    assert others <= {"s8"}


async def test_the_outline_and_folding_of_a_document_opened_at_start_do_not_wait(
    tmp_path: Path,
) -> None:
    """VS Code asks for them once, as it opens the document: an empty answer would stay."""
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    path = root / "skills" / "zeta" / "skill.md"
    async with lsp_session(root, wait_index=False) as s:
        u = s.open(path)
        doc = lsp.TextDocumentIdentifier(uri=u)
        symbols = await s.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=doc)
        )
        folds = await s.client.text_document_folding_range_async(
            lsp.FoldingRangeParams(text_document=doc)
        )
    # the outline was asked while the server waited for the client's settings, before
    # the index: it comes from the first look
    assert symbols and any("main" in getattr(sym, "name", "") for sym in symbols)
    assert folds


async def test_an_edit_before_the_index_gets_a_new_first_look(tmp_path: Path) -> None:
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    path = root / "skills" / "zeta" / "skill.md"
    async with lsp_session(root, wait_index=False) as s:
        s.open(path)
        # fix the undeclared read at once: `nope` -> `tier` of alpha, a public field
        line = (
            path.read_text(encoding="utf-8")
            .splitlines()
            .index("Read @memory.zeta.nope and @memory.alpha.tier for @memory.project.customer_id.")
        )
        v = s.change(path, (line, 5), (line, 22), "@memory.alpha.tier")
        await s.until(lambda: any(p.version == v for p in s.published_for(path)))
        await s.until(lambda: any(m.startswith("initial index") for m in s.logs()))
        await s.until(lambda: s.published_for(path)[-1].version == v)
        assert _messages(list(s.published_for(path)[-1].diagnostics)) == [
            "lsp.memory.project_field_written_twice"
        ]
        # a complete first look of the edited text would have come before the index:
        # this one (a project field written twice) came with it, whole
        assert all(p.version == v for p in s.published_for(path))


@pytest.mark.parametrize("example", ["telecom", "telecom-broken"])
def test_what_the_first_look_serves_equals_the_whole_projects_answer(example: str) -> None:
    """Outline, semantic tokens, folding, links and selection ranges read only the file
    (server.doc(partial_ok=True)). Hover and definition read other skills' declarations:
    they are not served from a first look."""
    root = TELECOM.parent / example
    full = Project.load(root)
    files = list(layout.project_files(root))
    for path, kind, sid in files:
        if kind != layout.FileKind.SKILL_MD or sid is None:
            continue
        part = Project.load_around(root, files, sid)
        offsets = list(range(0, len(full.files[path].text), 29))
        assert _file_answers(part, path, offsets) == _file_answers(full, path, offsets), path


def _file_answers(p: Project, path: Path, offsets: list[int]) -> tuple[object, ...]:
    from mantle_lsp.ide import outline, semantic_tokens, structure

    return (
        semantic_tokens.semantic_tokens(p, path),
        outline.document_symbols(p, path),
        structure.folding_ranges(p, path),
        structure.document_links(p, path),
        structure.selection_ranges(p, path, offsets),
    )


def _item(it: object) -> tuple[object, ...]:
    from mantle_lsp.ide.completion import CompletionItem

    assert isinstance(it, CompletionItem)
    return (
        it.label,
        it.kind,
        it.detail,
        it.documentation,
        it.edit,
        it.sort_text,
        it.filter_text,
        it.snippet,
        it.retrigger,
    )


@pytest.mark.parametrize("example", ["telecom", "telecom-broken"])
def test_what_the_first_look_completes_is_offered_by_the_whole_project(example: str) -> None:
    """Completion before the index comes from the first look (gate.py): each item equals
    the whole project's item of that label; some may be missing (the server marks the
    list incomplete), and on these examples only responses are."""
    from mantle_lsp.ide.completion import complete

    root = TELECOM.parent / example
    full = Project.load(root)
    files = list(layout.project_files(root))
    missing: set[str] = set()
    for path, kind, sid in files:
        if kind != layout.FileKind.SKILL_MD or sid is None:
            continue
        part = Project.load_around(root, files, sid)
        for offset in range(0, len(full.files[path].text), 7):
            whole = {it.label: _item(it) for it in complete(full, path, offset).items}
            for it in complete(part, path, offset).items:
                assert whole.get(it.label) == _item(it), (path, offset, it.label)
                del whole[it.label]
            missing.update(label for label, item in whole.items() if item[1] != "response")
    assert missing == set()
