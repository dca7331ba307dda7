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
from test_preview import CARD, STEPS

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


async def test_preview_prompt_of_a_step_by_id_or_by_cursor(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, STEPS)
    md = fx.root / "skills/card/skill.md"
    text = md.read_text(encoding="utf-8")
    async with lsp_session(fx.root) as s:
        s.open(md)
        send = s.client.protocol.send_request_async
        base: dict[str, Any] = {"textDocument": {"uri": uri(md)}, "memory": "card: {reason: lost}"}
        got = plain(await send("mantle/previewPrompt", {**base, "step": "choose"}))
        assert got["step"] == {"block": "pick", "id": "choose", "kind": "instructions", "line": 10}
        assert got["text"].startswith("Show the cards and ask which one (reason: lost).\n")
        assert got["estimated_tokens"] == -(-got["characters"] // 4)
        # the cursor's step, as edited (unsaved)
        at = position_of(text, "Say goodbye.")
        s.change(md, (at.line, at.character), (at.line, at.character + 3), "Wave")
        got = plain(
            await send(
                "mantle/previewPrompt",
                {**base, "position": {"line": at.line, "character": at.character}},
            )
        )
        assert (got["step"]["id"], got["text"]) == ("done", "Wave goodbye.")
        # the cursor in the prose: the prose
        at = position_of(text, "Replace the customer")
        got = plain(
            await send(
                "mantle/previewPrompt",
                {**base, "position": {"line": at.line, "character": at.character}},
            )
        )
        assert got["step"] is None
        assert got["text"] == "Replace the customer's card, starting with @block.pick."
        # a step id in two blocks needs the block; `block` alone is an error
        with pytest.raises(JsonRpcException, match="is in blocks `pick` and `ship`"):
            await send("mantle/previewPrompt", {**base, "step": "confirm"})
        got = plain(
            await send("mantle/previewPrompt", {**base, "step": "confirm", "block": "ship"})
        )
        assert got["text"] == "Confirm the address for @memory.project.tier customers.\n"
        with pytest.raises(JsonRpcException, match="`block` needs `step`"):
            await send("mantle/previewPrompt", {**base, "block": "ship"})
