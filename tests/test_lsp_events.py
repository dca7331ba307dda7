"""The server after any sequence of events (issue 19): long sessions do not grow, files
changed outside the editor (one event at a time, per folder, or none at all) end where
``check`` does, and one bad event never costs the others."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from test_lsp_support import Session, copy_telecom, lsp_session

pytestmark = pytest.mark.timeout(60)


async def status(s: Session) -> dict[str, Any]:
    result = await s.client.protocol.send_request_async("mantle/status", {})
    return dict(result if isinstance(result, dict) else result._asdict())


async def flat(s: Session, before: int, timeout: float = 5.0) -> dict[str, Any]:
    """Wait until the server's pending futures are back to ``before`` (+1: the status
    request being answered); server-to-client requests still waiting for the client's
    answer (a code-lens refresh) count for a moment, a leaked future forever."""
    now = await status(s)  # answered after every message sent before it
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if now["pendingFutures"] <= before + 1:
            return now
        assert asyncio.get_running_loop().time() < deadline, f"futures pile up: {now}"
        await asyncio.sleep(0.1)
        now = await status(s)


def edit(s: Session, path: Path, n: int) -> int:
    """Edit ``n`` of a burst: insert an `x` at the start, or take it out again."""
    if n % 2 == 0:
        return s.change(path, (0, 0), (0, 0), "x")
    return s.change(path, (0, 0), (0, 1), "")


async def test_thousands_of_changes_leave_no_pending_futures(tmp_path: Path) -> None:
    """pygls 2.1 kept one future per didChange (and per didOpen, didClose, ...) forever:
    10,006 after 10,000 changes."""
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    other = root / "skills" / "bill_dispute" / "memory.yml"
    async with lsp_session(root) as s:
        s.open(path)
        before = (await status(s))["pendingFutures"]
        for n in range(3000):
            edit(s, path, n)
            if n % 500 == 0:  # opening and closing documents goes through pygls too
                s.open(other)
                s.close(other)
        await flat(s, before)
        for _ in range(200):  # async notification handlers: folders, configuration
            s.client.workspace_did_change_workspace_folders(
                lsp.DidChangeWorkspaceFoldersParams(
                    event=lsp.WorkspaceFoldersChangeEvent(added=[], removed=[])
                )
            )
            s.client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=None)
            )
        await flat(s, before)
