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


async def test_the_layout_for_the_viewers_font_and_a_focus_two_hops_away(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    md = fx.root / "skills/order/skill.md"
    async with lsp_session(fx.root) as s:
        params: dict[str, Any] = {
            "textDocument": {"uri": uri(md)},
            "skill": "greet",
            "hops": 2,
            "layout": {"fontSize": 20, "charWidth": 12},
        }
        got = plain(await s.client.protocol.send_request_async("mantle/agentMap", params))
        assert (got["title"], got["skill"], got["hops"]) == ("agent map: greet", "greet", 2)
        lay = got["layout"]
        assert (lay["fontSize"], lay["direction"]) == (20.0, "LR")
        assert [n["id"] for n in lay["nodes"]] == [n["id"] for n in got["nodes"]]
        assert len(lay["edges"]) == len(got["edges"])
        greet = lay["nodes"][0]
        assert greet["lines"] == ["greet"] and greet["width"] >= len("greet") * 12
        # without `layout`: the JSON as before; a wrong `hops`: an error saying so
        del params["layout"]
        assert "layout" not in plain(
            await s.client.protocol.send_request_async("mantle/agentMap", params)
        )
        params["hops"] = 3
        with pytest.raises(JsonRpcException, match=r"`?hops`? is 1 or 2"):
            await s.client.protocol.send_request_async("mantle/agentMap", params)


async def test_a_flow_layout_keeps_still_while_only_problems_change(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    md = fx.root / "skills/order/skill.md"
    text = md.read_text(encoding="utf-8")
    async with lsp_session(fx.root) as s:
        s.open(md)
        params = {
            "textDocument": {"uri": uri(md)},
            "block": "main",
            "layout": {"fontSize": 13, "charWidth": 7.8},
        }

        async def ask() -> dict[str, Any]:
            got: dict[str, Any] = plain(
                await s.client.protocol.send_request_async("mantle/flowGraph", params)
            )
            return got

        first = await ask()
        label = first["layout"]["edges"][1]["label"]
        assert label["lines"] == ["session.project.verified ==", "True"]
        # an edit that only changes a problem (the orphan's response is written): the same
        # picture, nothing moves
        responses = fx.root / "skills/order/responses.yml"
        end = len(responses.read_text(encoding="utf-8").splitlines())
        s.open(responses)
        s.change(responses, (end, 0), (end, 0), "  utter_nope:\n    - text: No.\n")
        second = await until_changed(ask, first)
        assert second["layout"] == first["layout"]
        # a new step: a new picture
        at = position_of(text, "  - id: orphan")
        s.change(md, (at.line, 0), (at.line, 0), "  - id: extra\n    action: utter_ask_size\n")
        third = await ask()
        assert "step:extra" in [n["id"] for n in third["layout"]["nodes"]]


async def until_changed(ask: Any, before: dict[str, Any]) -> dict[str, Any]:
    """Ask until the orphan step's problems change (the other file's edit is seen)."""
    import asyncio

    for _ in range(50):
        got: dict[str, Any] = await ask()
        if got["nodes"][2]["problems"] != before["nodes"][2]["problems"]:
            return got
        await asyncio.sleep(0.1)
    raise AssertionError("the problems of the orphan step did not change")
