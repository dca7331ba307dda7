"""While the initial index loads, the editor is answered as soon as what a request reads
is ready (issue 14, lsp/gate.py): completion in a document opened with the workspace
comes from its first look, marked incomplete; hover, which reads every file's references,
waits for the index, and so does every message after one that waits; an edit made while
the index ran is in what the index publishes."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from mantle_lsp import parallel, workers
from mantle_lsp.lsp.base import MantleProtocol
from mantle_lsp.lsp.gate import Gate
from mantle_lsp.lsp.server import MantleServer
from mantle_lsp.model import layout
from support import write_fixture
from test_lsp_open_first import PROJECT
from test_lsp_support import Session, lsp_session, position_of, uri
from test_parallel_check import _broken_generated

pytestmark = pytest.mark.timeout(120)

N = workers.MIN_SKILLS
# a server with two processes whose worker starts its part only after a pause: the index
# stays unfinished long enough for the editor's requests to come in during it
SLOW_WORKER = "import time; time.sleep({pause}); from mantle_lsp import parallel; " + (
    "parallel._spawned_worker_main()"
)


def _slow_server(pause: float) -> list[str]:
    code = f"""
import subprocess, sys
from mantle_lsp import parallel, workers
def spawn_workers(n):
    return [
        workers.Spawned(p, workers.Channel(p.stdout, p.stdin))
        for p in (
            subprocess.Popen([sys.executable, "-c", {SLOW_WORKER.format(pause=pause)!r}],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for _ in range(n)
        )
    ]
workers.spawn_workers = spawn_workers
from mantle_lsp.cli.main import main
raise SystemExit(main(["serve", "--jobs", "2"]))
"""
    return [sys.executable, "-c", code]


def _labels(items: Any) -> list[str]:
    listed = items.items if isinstance(items, lsp.CompletionList) else items or []
    return [i.label for i in listed]


def _indexed(s: Session) -> bool:
    return any(m.startswith("initial index") for m in s.logs())


def _complete(s: Session, path: Path, text: str) -> Any:
    """Completion after ``session.s8.`` (s8's fields), asked now."""
    at = position_of(text, "session.s8.", len("session.s8."))
    return s.client.text_document_completion_async(lsp.CompletionParams(s.doc(path), at))


@contextlib.asynccontextmanager
async def _started(
    tmp_path: Path, pause: float, capabilities: lsp.ClientCapabilities | None = None
) -> AsyncIterator[tuple[Session, Path, str]]:
    """A session on a generated project whose index takes ``pause`` seconds more, with
    skill s7's skill.md opened as the editor starts."""
    root = _broken_generated(tmp_path, N).resolve()
    path = root / "skills" / "s7" / "skill.md"
    async with lsp_session(
        root, server=_slow_server(pause), wait_index=False, capabilities=capabilities
    ) as s:
        s.open(path)
        yield s, path, path.read_text(encoding="utf-8")


def _hover(s: Session, path: Path, text: str) -> Any:
    """Hover on ``s8.status``, asked now."""
    at = position_of(text, "session.s8.status", 12)
    return s.client.text_document_hover_async(lsp.HoverParams(s.doc(path), at))


@pytest.mark.asyncio
async def test_completion_during_the_index_comes_from_the_first_look(tmp_path: Path) -> None:
    async with _started(tmp_path, 3.0) as (s, path, text):
        items = await _complete(s, path, text)
        answered_during_index = not _indexed(s)
        hover = await _hover(s, path, text)
        hover_after_index = _indexed(s)
        full = await _complete(s, path, text)
    assert answered_during_index
    assert isinstance(items, lsp.CompletionList) and items.is_incomplete
    assert "status" in _labels(items)
    assert set(_labels(items)) <= set(_labels(full))
    assert isinstance(full, lsp.CompletionList) and not full.is_incomplete
    # hover lists every place that reads and writes the field: it waits for the index
    assert hover_after_index and hover is not None
    assert "Read in" in str(hover.contents)


@pytest.mark.asyncio
async def test_a_message_after_one_that_waits_waits_too(tmp_path: Path) -> None:
    async with _started(tmp_path, 2.0) as (s, path, text):
        when: dict[str, bool] = {}

        async def ask(name: str, request: Any) -> Any:
            got = await request
            when[name] = _indexed(s)
            return got

        hover, items = await asyncio.gather(
            ask("hover", _hover(s, path, text)), ask("completion", _complete(s, path, text))
        )
    assert when == {"hover": True, "completion": True}
    assert hover is not None
    assert isinstance(items, lsp.CompletionList) and not items.is_incomplete


@pytest.mark.asyncio
async def test_an_edit_during_the_index_is_in_the_indexed_project(tmp_path: Path) -> None:
    async with _started(tmp_path, 2.0) as (s, path, text):
        # its first look: the index has begun; the worker is still in its pause
        await s.until(lambda: s.published_for(path), what="the first look")
        await asyncio.sleep(0.5)
        at = position_of(text, "@memory.s7.reference", len("@memory.s7."))
        v = s.change(path, (at.line, at.character), (at.line, at.character + 9), "attempts")
        # the edit gets its first look at once, while the index still runs
        await s.until(lambda: any(p.version == v for p in s.published_for(path)))
        assert not _indexed(s)
        await s.until(lambda: _indexed(s), what="the initial index")
        hover = await s.client.text_document_hover_async(lsp.HoverParams(s.doc(path), at))
    # the index had read the text before the edit: the project has the edited text now
    assert hover is not None
    assert "attempts" in str(hover.contents) and "reference" not in str(hover.contents)


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_during_the_index_is_seen_by_the_servers_own_watcher(
    tmp_path: Path,
) -> None:
    """A client that cannot watch files (no dynamic registration): the server watches
    the folders itself, and a change it sees while the index runs waits for the index,
    like the client's own file events (gate.py)."""
    async with _started(tmp_path, 2.0, lsp.ClientCapabilities()) as (s, path, _):
        root = path.parents[2]
        files = list(layout.project_files(root))
        owned = parallel.partition(files, 2, pinned={"s7"})
        assert owned is not None
        # a skill this process reads as the index begins, before the change
        sid = sorted({p.parent.name for p in owned[0] if p.name == "skill.md"} - {"s7"})[0]
        changed = root / "skills" / sid / "skill.md"
        # opened after `initialized`, while the index runs: its first look comes at once
        await s.until(lambda: s.published_for(path), what="the first look")
        assert not _indexed(s)
        await asyncio.sleep(0.5)
        with changed.open("a", encoding="utf-8") as fh:
            fh.write(f"\nRead @memory.{sid}.seen_on_disk aloud.\n")
        await s.until(lambda: _indexed(s), what="the initial index")
        await s.until(
            lambda: any("seen_on_disk" in d.message for d in s.diagnostics(changed)),
            what="the change on disk in the diagnostics",
        )


@pytest.mark.asyncio
async def test_a_completion_asked_as_the_editor_starts_is_not_empty(tmp_path: Path) -> None:
    """Asked before the index (which a small project finishes at once) or after it, the
    list offers the other skill's public field; it used to come back empty when it came
    in while the server was still asking the editor for its settings."""
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    path = root / "skills" / "zeta" / "skill.md"
    text = path.read_text(encoding="utf-8")
    async with lsp_session(root, wait_index=False) as s:
        s.open(path)
        items = await s.client.text_document_completion_async(
            lsp.CompletionParams(s.doc(path), position_of(text, "@memory.alpha.", 14))
        )
        hover = await s.client.text_document_hover_async(
            lsp.HoverParams(s.doc(path), position_of(text, "@memory.alpha.tier", 16))
        )
    assert "tier" in _labels(items)
    assert hover is not None and "tier" in str(hover.contents)


# -- the gate's policy, message by message ----------------------------------------------------


def _message(protocol: MantleProtocol, method: str, params: dict[str, Any], msg_id: int | None):
    data: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        data["id"] = msg_id
    return protocol.structure_message(data)


def _gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> tuple[MantleServer, MantleProtocol, list[str], Path]:
    """A server (no client) holding messages, with zeta's skill.md opened before the
    index; what reaches the handlers is listed as ``method:skill``."""
    root = write_fixture(tmp_path, PROJECT).root.resolve()
    opened = root / "skills" / "zeta" / "skill.md"
    server = MantleServer()
    protocol = server.protocol
    assert isinstance(protocol, MantleProtocol)
    handled: list[str] = []
    monkeypatch.setattr(
        "pygls.protocol.JsonRPCProtocol.handle_message",
        lambda self, m: handled.append(f"{m.method}:{m.params.text_document.uri.rsplit('/')[-2]}"),
    )
    server.folders = [root]
    server.opened_early = [opened]
    server.indexed = indexed
    assert server.hold_messages(Gate(server))
    return server, protocol, handled, opened


def _at(path: Path) -> dict[str, Any]:
    return {"textDocument": {"uri": uri(path)}, "position": {"line": 0, "character": 0}}


def test_the_gate_lets_through_what_a_first_look_answers_and_keeps_the_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, handled, opened = _gated(tmp_path, monkeypatch, indexed=False)
    assert not server.hold_messages(Gate(server))  # held already: the first holder lets go
    doc, elsewhere = _at(opened), _at(opened.parent.parent / "alpha" / "skill.md")
    for method, params, msg_id in [
        (lsp.TEXT_DOCUMENT_COMPLETION, doc, 1),  # answered from the first look
        (lsp.TEXT_DOCUMENT_FOLDING_RANGE, {"textDocument": doc["textDocument"]}, 2),
        (lsp.TEXT_DOCUMENT_COMPLETION, elsewhere, 3),  # no first look there: waits
        (lsp.TEXT_DOCUMENT_COMPLETION, doc, 4),  # after one that waits: waits
        (lsp.TEXT_DOCUMENT_HOVER, doc, 5),
    ]:
        protocol.handle_message(_message(protocol, method, params, msg_id))
    assert handled == [
        "textDocument/completion:zeta",
        "textDocument/foldingRange:zeta",
    ]
    server.let_go()
    assert handled[2:] == [
        "textDocument/completion:alpha",
        "textDocument/completion:zeta",
        "textDocument/hover:zeta",
    ]
    # once let go, nothing waits
    protocol.handle_message(_message(protocol, lsp.TEXT_DOCUMENT_HOVER, doc, 6))
    assert handled[-1] == "textDocument/hover:zeta"


def test_after_the_initial_index_an_added_folders_index_holds_every_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, handled, opened = _gated(tmp_path, monkeypatch, indexed=True)
    protocol.handle_message(_message(protocol, lsp.TEXT_DOCUMENT_COMPLETION, _at(opened), 1))
    assert handled == []
    server.let_go()
    assert handled == ["textDocument/completion:zeta"]
