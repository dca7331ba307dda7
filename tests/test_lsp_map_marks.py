"""``mantle/agentMap`` marks the nodes with problems at any project size: the problems are
those the editor was given (reused, not recomputed), and files it was never given (a
client that pulls open documents only) are computed once, until the next change."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from test_lsp_graphs import plain
from test_lsp_support import lsp_session, position_of, uri, vscode_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]
SKILLS = 120  # above the 100 skills where marks used to be left out


def _broken(tmp_path: Path) -> Path:
    root = generate(tmp_path / "big", SKILLS)
    md = root / "skills/s7/skill.md"
    md.write_text(md.read_text(encoding="utf-8") + "\nAlso mind @memory.s7.nope.\n", "utf-8")
    mem = root / "skills/s9/memory.yml"
    text = mem.read_text(encoding="utf-8").replace(
        "note:\n      type: text", "note:\n      type: txt"
    )
    mem.write_text(text, "utf-8")
    return root


def _marks(graph: dict[str, Any]) -> dict[str, list[str]]:
    return {n["id"]: [p["code"] for p in n["problems"]] for n in graph["nodes"] if n["problems"]}


async def _map(s: Any, root: Path) -> dict[str, Any]:
    params = {"textDocument": {"uri": uri(root / "memory.yml")}}
    result: dict[str, Any] = plain(
        await s.client.protocol.send_request_async("mantle/agentMap", params)
    )
    return result


async def test_a_large_project_map_marks_the_published_problems(tmp_path: Path) -> None:
    root = _broken(tmp_path)
    async with lsp_session(root) as s:
        md = root / "skills/s7/skill.md"
        await s.until(lambda: s.diagnostics(md), what="the problem published")
        marks = _marks(await _map(s, root))
        assert marks == {
            "skill:s7": ["mantle.validation.prose.unknown_memory_reference"],
            "skill:s9": ["lsp.memory.unknown_type"],
            "field:s9.note": ["lsp.memory.unknown_type"],
        }


async def test_a_client_pulling_open_documents_only_gets_marks_that_follow_edits(
    tmp_path: Path,
) -> None:
    root = _broken(tmp_path)
    async with lsp_session(root, capabilities=vscode_capabilities(pull=True)) as s:
        assert "skill:s7" in _marks(await _map(s, root))  # nothing pulled: computed
        md = root / "skills/s7/skill.md"
        text = md.read_text(encoding="utf-8")
        s.open(md)
        at = position_of(text, "@memory.s7.nope")
        s.change(md, (at.line, at.character), (at.line, at.character + 15), "the rules")
        await s.until(lambda: s.client.diagnostic_refresh_count > 1, what="a refresh")
        assert set(_marks(await _map(s, root))) == {"skill:s9", "field:s9.note"}


@pytest.mark.timeout(300)  # indexing 1,000 skills and laying out their map
async def test_marks_and_layout_of_a_map_of_1000_skills(tmp_path: Path) -> None:
    """What the VS Code view asks for a large agent (the map with its layout, and one
    skill's part): the problem marks are there at 1,000 skills."""
    root = generate(tmp_path / "big", 1000)
    md = root / "skills/s777/skill.md"
    md.write_text(md.read_text(encoding="utf-8") + "\nAlso mind @memory.s777.nope.\n", "utf-8")
    async with lsp_session(root) as s:
        await s.until(lambda: s.diagnostics(md), what="the problem published", timeout=240)
        params: dict[str, Any] = {
            "textDocument": {"uri": uri(root / "memory.yml")},
            "layout": {"fontSize": 13, "charWidth": 7.8},
        }
        whole = plain(await s.client.protocol.send_request_async("mantle/agentMap", params))
        assert _marks(whole) == {"skill:s777": ["mantle.validation.prose.unknown_memory_reference"]}
        assert len(whole["layout"]["nodes"]) == len(whole["nodes"]) > 5000
        params["skill"] = "s777"
        part = plain(await s.client.protocol.send_request_async("mantle/agentMap", params))
        assert _marks(part) == _marks(whole)
