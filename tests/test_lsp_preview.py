"""``mantle/previewPrompt`` (docs/lsp.md): the prompt preview of docs/features/preview.md
over LSP, following unsaved edits of the skill and the memory state sent with the request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from support import write_fixture
from test_lsp_graphs import plain
from test_lsp_support import lsp_session, position_of, uri
from test_preview import CARD

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


async def test_preview_prompt_follows_edits_and_state(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, CARD)
    md = fx.root / "skills/card/skill.md"
    text = md.read_text(encoding="utf-8")
    async with lsp_session(fx.root) as s:
        s.open(md)
        params: dict[str, Any] = {
            "textDocument": {"uri": uri(md)},
            "memory": "card: {reason: stolen}\nproject: {card_number: '4111'}",
        }
        got = plain(await s.client.protocol.send_request_async("mantle/previewPrompt", params))
        assert got["skill"] == "card"
        assert got["text"].startswith(
            "Replace the customer's card.\nTheir reason: stolen.\n\n"
            "Lock the card first with @tool.lock_card.\n\n"
            "Card on file: [set]; notes: @memory.card.notes."
        )
        assert [d["condition"] for d in got["dropped"]] == [
            "session.card.amount > 100",
            "session.project.tier == 'gold' or session.other.shown",
            "session.card.reason == 'lost'",
        ]
        # an unsaved edit of the skill: the first line changes
        at = position_of(text, "Replace the customer's card.")
        s.change(md, (at.line, 0), (at.line, 7), "Renew")
        got = plain(await s.client.protocol.send_request_async("mantle/previewPrompt", params))
        assert got["text"].startswith("Renew the customer's card.\n")
        # no state: everything None
        del params["memory"]
        got = plain(await s.client.protocol.send_request_async("mantle/previewPrompt", params))
        assert "Their reason: @memory.card.reason." in got["text"]
        params["memory"] = "[1, 2]"
        with pytest.raises(JsonRpcException, match="expected a mapping"):
            await s.client.protocol.send_request_async("mantle/previewPrompt", params)
        # outside a skill: null
        agent = {"textDocument": {"uri": uri(fx.root / "agent.yml")}}
        assert await s.client.protocol.send_request_async("mantle/previewPrompt", agent) is None
