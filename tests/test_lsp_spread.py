"""The server's initial index of a large project spread over processes (`serve --jobs`,
parallel.py): what the editor sees equals the one-process server, before and after the
other workers' files are parsed here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from mantle_lsp import parallel, workers
from mantle_lsp.model import layout
from test_lsp_support import SERVER, Session, lsp_session, position_of, vscode_capabilities
from test_parallel_check import _broken_generated

pytestmark = pytest.mark.timeout(120)

N = workers.MIN_SKILLS


def _published(s: Session) -> dict[str, list[tuple[Any, ...]]]:
    """Every file's latest published diagnostics (only files that have some)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for p in s.published:
        out[p.uri] = [
            (str(d.code), d.range.start.line, d.range.start.character, d.range.end.character)
            for d in p.diagnostics
        ]
    return {u: ds for u, ds in out.items() if ds}


def _other_workers_skill(root: Path) -> str:
    """A skill that the spawned worker (not the server) parses first."""
    owned = parallel.partition(list(layout.project_files(root)), 2)
    assert owned is not None
    return sorted({p.parent.name for p in owned[1] if p.name == "skill.md"})[0]


async def _hover_and_complete(s: Session, skill_md: Path, sid: str) -> tuple[Any, ...]:
    text = skill_md.read_text()
    s.open(skill_md)
    hover = await s.client.text_document_hover_async(
        lsp.HoverParams(s.doc(skill_md), position_of(text, f"session.{sid}.status", 12))
    )
    items = await s.client.text_document_completion_async(
        lsp.CompletionParams(s.doc(skill_md), position_of(text, f"session.{sid}.", 9 + len(sid)))
    )
    labels = sorted(
        i.label for i in (items.items if isinstance(items, lsp.CompletionList) else items or [])
    )
    return (hover.contents if hover else None), labels


@pytest.mark.asyncio
async def test_a_spread_index_publishes_and_answers_like_one_process(tmp_path: Path) -> None:
    root = _broken_generated(tmp_path, N).resolve()
    sid = _other_workers_skill(root)
    skill_md = root / "skills" / sid / "skill.md"
    answers = []
    published = []
    after: list[tuple[list[str], list[str]]] = []
    mem = root / "skills" / sid / "memory.yml"
    reader = root / "skills" / f"s{(int(sid[1:]) - 1) % N}" / "skill.md"
    for server in ([*SERVER, "--jobs", "1"], [*SERVER, "--jobs", "2"]):
        async with lsp_session(root, server=server) as s:
            published.append(_published(s))
            answers.append(await _hover_and_complete(s, skill_md, sid))
            logs = s.logs()
            # an edit in a file the worker parsed: diagnostics follow it here, in that
            # file and in the one other skill whose condition reads the renamed field
            s.open(mem)
            text = mem.read_text()
            at = position_of(text, "status:")
            s.change(mem, (at.line, at.character), (at.line, at.character + 6), "state")
            await s.until(lambda: any(p.version == 2 for p in s.published_for(mem)))
            await s.until(lambda: s.codes(reader), what="the reader's diagnostics")
            after.append((s.codes(mem), s.codes(reader)))
            if server[-1] == "2":
                assert any(m.startswith("index complete") for m in logs) or await s.until(
                    lambda: any(m.startswith("index complete") for m in s.logs())
                )
            else:
                assert not any(m.startswith("index complete") for m in s.logs())
    assert published[0], "the planted mistakes are published"
    assert published[1] == published[0]
    assert answers[1] == answers[0]
    assert answers[0][0] is not None and "status" in answers[0][1]
    assert after[1] == after[0] and after[0][1]


def _server_with_workers(worker_code: str, timeout: float) -> str:
    """A server (``--jobs 2``) whose workers run ``worker_code`` instead of their part."""
    return f"""
import subprocess, sys
from mantle_lsp import parallel, workers
def spawn_workers(n):
    return [
        workers.Spawned(p, workers.Channel(p.stdout, p.stdin))
        for p in (
            subprocess.Popen([sys.executable, "-c", {worker_code!r}],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for _ in range(n)
        )
    ]
workers.spawn_workers = spawn_workers
parallel.WORKER_TIMEOUT = {timeout!r}
from mantle_lsp.cli.main import main
raise SystemExit(main(["serve", "--jobs", "2"]))
"""


CRASHING_WORKERS = _server_with_workers("import sys; sys.exit(3)", 120.0)
STUCK_WORKERS = _server_with_workers("import time; time.sleep(600)", 1.0)


@pytest.mark.asyncio
@pytest.mark.parametrize("workers", [CRASHING_WORKERS, STUCK_WORKERS], ids=["crashed", "stuck"])
async def test_a_failed_worker_leaves_the_index_to_the_server(tmp_path: Path, workers: str) -> None:
    root = _broken_generated(tmp_path, N).resolve()
    async with lsp_session(root, server=[*SERVER, "--jobs", "1"]) as s:
        expected = _published(s)
    async with lsp_session(root, server=[sys.executable, "-c", workers]) as s:
        assert _published(s) == expected
        notes = [m for m in s.logs() if "worker process failed" in m]
        assert notes and "in one process" in notes[0]


def _workspace_items(report: lsp.WorkspaceDiagnosticReport) -> dict[str, list[tuple[Any, ...]]]:
    return {
        item.uri: [(str(d.code), d.range.start.line, d.range.start.character) for d in item.items]
        for item in report.items
        if isinstance(item, lsp.WorkspaceFullDocumentDiagnosticReport) and item.items
    }


@pytest.mark.asyncio
async def test_pulled_diagnostics_of_a_spread_index_equal_one_process(tmp_path: Path) -> None:
    """A pulling client (VS Code) gets the spread index's results at once, and after an
    edit the same as a one-process server."""
    root = _broken_generated(tmp_path, N).resolve()
    sid = _other_workers_skill(root)
    mem = root / "skills" / sid / "memory.yml"
    reader = root / "skills" / f"s{(int(sid[1:]) - 1) % N}" / "skill.md"
    seen = []
    for jobs in ("1", "2"):
        async with lsp_session(
            root, server=[*SERVER, "--jobs", jobs], capabilities=vscode_capabilities(pull=True)
        ) as s:
            first = await s.client.workspace_diagnostic_async(
                lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
            )
            one = await s.client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=s.doc(reader))
            )
            assert isinstance(one, lsp.RelatedFullDocumentDiagnosticReport)
            s.open(mem)
            at = position_of(mem.read_text(), "status:")
            refreshes = s.client.diagnostic_refresh_count
            s.change(mem, (at.line, at.character), (at.line, at.character + 6), "state")
            await s.until(
                lambda s=s, n=refreshes: s.client.diagnostic_refresh_count > n, what="refresh"
            )
            after = await s.client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=s.doc(reader))
            )
            assert isinstance(after, lsp.RelatedFullDocumentDiagnosticReport)
            again = await s.client.workspace_diagnostic_async(
                lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
            )
            seen.append(
                (
                    _workspace_items(first),
                    sorted(str(d.code) for d in one.items),
                    sorted(str(d.code) for d in after.items),
                    _workspace_items(again),
                )
            )
    assert seen[0][0], "the planted mistakes are reported"
    assert seen[0][2] != seen[0][1], "the edit changes the reader's diagnostics"
    assert seen[1] == seen[0]


SETTLE_RECORDING = """
import sys
from mantle_lsp.model.workspace import Workspace
record = open(sys.argv[1], "a")
real = Workspace.settle
def settle(self, limit=None):
    if limit is None and self.has_pending:
        record.write("barrier\\n")
        record.flush()
    return real(self, limit)
Workspace.settle = settle
from mantle_lsp.lsp.server import MantleServer
MantleServer.settle_in_background = lambda self: None  # only barriers parse
from mantle_lsp.cli.main import main
raise SystemExit(main(["serve", "--jobs", "2"]))
"""


@pytest.mark.asyncio
async def test_the_first_pull_does_not_wait_for_the_rest_of_the_index(tmp_path: Path) -> None:
    """The first pulls are answered from the workers' results: the server does not stop
    to parse the other workers' files for them (a hover does)."""
    root = _broken_generated(tmp_path, N).resolve()
    record = tmp_path / "settled.txt"
    record.write_text("")
    server = [sys.executable, "-c", SETTLE_RECORDING, str(record)]
    async with lsp_session(root, server=server, capabilities=vscode_capabilities(pull=True)) as s:
        report = await s.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        assert report.items  # the planted mistakes
        barrier_before_hover = record.read_text()
        skill_md = root / "skills" / _other_workers_skill(root) / "skill.md"
        await s.client.text_document_hover_async(
            lsp.HoverParams(s.doc(skill_md), lsp.Position(line=0, character=0))
        )
    assert barrier_before_hover == ""
    assert record.read_text() == "barrier\n"
