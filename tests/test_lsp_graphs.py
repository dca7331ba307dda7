"""``mantle/flowGraph`` and ``mantle/agentMap`` (docs/lsp.md): the graphs of
docs/features/graphs.md over LSP, with URIs and UTF-16 ranges, following unsaved edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from support import write_fixture
from test_graphs import FIXTURE
from test_lsp_support import lsp_session, position_of, uri

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


def plain(obj: Any) -> Any:
    """A result as plain dicts and lists (pygls hands back objects for our requests)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_asdict"):
        return [plain(v) for v in obj]
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    return obj


async def test_flow_graph_of_the_block_under_the_cursor_follows_edits(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    md = fx.root / "skills/order/skill.md"
    text = md.read_text(encoding="utf-8")
    async with lsp_session(fx.root) as s:
        s.open(md)
        pos = position_of(text, "collect: size")
        params = {
            "textDocument": {"uri": uri(md)},
            "position": {"line": pos.line, "character": pos.character},
        }
        got = plain(await s.client.protocol.send_request_async("mantle/flowGraph", params))
        assert (got["kind"], got["skill"], got["block"]) == ("flow", "order", "main")
        nodes = {n["id"]: n for n in got["nodes"]}
        assert list(nodes) == ["step:ask_size", "step:check", "step:orphan", "step:place", "END"]
        assert nodes["step:orphan"]["unreachable"] is True
        assert "mantle.validation.response.missing" in [
            p["code"] for p in nodes["step:orphan"]["problems"]
        ]
        assert nodes["step:ask_size"]["location"] == {
            "uri": uri(md),
            "range": {"start": {"line": 7, "character": 4}, "end": {"line": 9, "character": 29}},
        }
        assert {"source": "step:check", "target": "END", "kind": "else", "label": "else"} in got[
            "edges"
        ]
        # an unsaved edit: the orphan step is renamed and reached from `check`
        at = position_of(text, "      - else: END")
        s.change(md, (at.line, 14), (at.line, 17), "orphan")
        got = plain(await s.client.protocol.send_request_async("mantle/flowGraph", params))
        nodes = {n["id"]: n for n in got["nodes"]}
        assert nodes["step:orphan"]["unreachable"] is False
        assert {
            "source": "step:check",
            "target": "step:orphan",
            "kind": "else",
            "label": "else",
        } in got["edges"]
        # by block id; outside any block: null
        by_id = {"textDocument": {"uri": uri(md)}, "block": "main"}
        got = plain(await s.client.protocol.send_request_async("mantle/flowGraph", by_id))
        assert got["block"] == "main"
        outside = {"textDocument": {"uri": uri(md)}, "position": {"line": 0, "character": 0}}
        assert await s.client.protocol.send_request_async("mantle/flowGraph", outside) is None


async def test_agent_map_and_an_unknown_skill(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    mem = fx.root / "skills/order/memory.yml"
    async with lsp_session(fx.root) as s:
        params: dict[str, Any] = {"textDocument": {"uri": uri(mem)}}
        got = plain(await s.client.protocol.send_request_async("mantle/agentMap", params))
        assert got["kind"] == "map"
        assert [n["id"] for n in got["nodes"]] == [
            "skill:greet",
            "skill:order",
            "field:order.size",
            "field:order.confirmed",
            "tool:order/place_order",
            "field:project.verified",
        ]
        assert {
            "source": "skill:greet",
            "target": "field:project.verified",
            "kind": "writes",
            "label": "set_memory",
        } in got["edges"]
        size = next(n for n in got["nodes"] if n["id"] == "field:order.size")
        assert size["location"]["uri"] == uri(mem)
        params["skill"] = "nope"
        with pytest.raises(JsonRpcException, match="no skill 'nope'"):
            await s.client.protocol.send_request_async("mantle/agentMap", params)
