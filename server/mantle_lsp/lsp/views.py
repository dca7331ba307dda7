"""The requests of ours behind the VS Code extension's views (docs/lsp.md): a skill's
flow graph (``mantle/flowGraph``), the agent map (``mantle/agentMap``), both laid out for
the viewer's font when asked, and the prompt preview (``mantle/previewPrompt``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide import graphs as ide_graphs
from ..ide import layout as ide_layout
from ..ide import preview as ide_preview
from ..ide.types import Location
from . import convert
from .base import FeatureFailed
from .params import InvalidParams, field, integer, object_params, required_string, string
from .results import param, wire_range
from .server import MantleServer

FLOW_GRAPH, AGENT_MAP = "mantle/flowGraph", "mantle/agentMap"  # ours (docs/lsp.md)
PREVIEW_PROMPT = "mantle/previewPrompt"  # ours too (docs/lsp.md)


def register(server: MantleServer) -> None:
    server.request(FLOW_GRAPH)(partial(flow_graph, server))
    server.request(AGENT_MAP)(partial(agent_map, server))
    server.request(PREVIEW_PROMPT)(partial(preview_prompt, server))


def _graph_json(server: MantleServer, graph: ide_graphs.Graph, params: Any) -> dict[str, Any]:
    def where(loc: Location) -> dict[str, Any]:
        at = convert.to_location(loc, server.index_of, server.uri_of)
        return {"uri": at.uri, "range": wire_range(at.range)}

    return ide_graphs.to_json(graph, where, _layout(graph, params))


def flow_graph(server: MantleServer, params: Any) -> dict[str, Any] | None:
    """The flow of the ordered block at ``position`` of ``textDocument`` (a skill.md),
    or of ``block`` (of ``skill``, else of the document's skill); None when there is
    no such block there."""
    m = FLOW_GRAPH
    object_params(m, params, "{textDocument: {uri}, position} or {textDocument, block}, layout?")
    uri = required_string(m, params, "textDocument", "uri")
    sid, block = string(m, params, "skill"), string(m, params, "block")
    if block is None:
        if param(params, "position") is None:
            raise InvalidParams(f"{m} takes a position or a block id")
        line = integer(m, params, "position", "line")
        char = integer(m, params, "position", "character")
    doc = server.doc(uri)
    if doc is None:
        return None
    if block is None:
        offset = convert.to_offset(doc.index, lsp.Position(line=line, character=char))
        found = ide_graphs.block_at(doc.project, doc.path, offset)
        if found is None:
            return None
        sid, block = found
    if not isinstance(sid, str):
        sid = (doc.project.classify(doc.path) or (None, None))[1]
        if sid is None:
            return None
    diags = server.diagnostics.compute(doc.project, _skill_md(doc.project, sid))
    try:
        graph = ide_graphs.flow_graph(
            doc.project, sid, block, [d for ds in diags.values() for d in ds]
        )
    except ide_graphs.GraphError as e:
        raise FeatureFailed(str(e)) from None
    return _graph_json(server, graph, params)


def agent_map(server: MantleServer, params: Any) -> dict[str, Any] | None:
    """The agent map of the project of ``textDocument`` (only ``skill``'s part when
    given, ``hops`` 1 or 2 from it); None outside a project."""
    object_params(AGENT_MAP, params, "{textDocument: {uri}, skill?, hops?, layout?}")
    uri = required_string(AGENT_MAP, params, "textDocument", "uri")
    sid = string(AGENT_MAP, params, "skill")
    hops = field(params, "hops")
    if hops is not None and (isinstance(hops, bool) or hops not in (1, 2)):
        raise InvalidParams(f"{AGENT_MAP}: `hops` is 1 or 2")
    doc = server.doc(uri)
    if doc is None:
        return None
    proj = doc.project
    # the problems the editor shows: recomputing every file's on each request would
    # be too slow in a large project
    diags = server.diagnostics.problems_of(proj)
    try:
        graph = ide_graphs.agent_map(
            proj, sid if isinstance(sid, str) else None, diags, hops if hops else 1
        )
    except ide_graphs.GraphError as e:
        raise FeatureFailed(str(e)) from None
    return _graph_json(server, graph, params)


def preview_prompt(server: MantleServer, params: Any) -> dict[str, Any] | None:
    """The prompt preview of the skill of ``textDocument`` for the memory state
    ``memory`` (YAML or JSON text; absent: everything None): of the ordered-block step
    ``step`` (of ``block``), else of the step at ``position`` when ``textDocument`` is
    the skill.md, else of the prose; None outside a skill."""
    m = PREVIEW_PROMPT
    object_params(m, params, "{textDocument: {uri}, memory?, step?, block?, position?}")
    uri = required_string(m, params, "textDocument", "uri")
    memory = string(m, params, "memory")  # YAML or JSON text
    step, block = string(m, params, "step"), string(m, params, "block")
    if block is not None and step is None:
        raise InvalidParams(f"{m}: `block` needs `step` (a step id)")
    doc = server.doc(uri)
    if doc is None:
        return None
    sid = (doc.project.classify(doc.path) or (None, None))[1]
    if sid is None:
        return None
    try:
        state = ide_preview.parse_state(memory) if isinstance(memory, str) else {}
    except ValueError as e:
        raise FeatureFailed(f"mantle/previewPrompt: memory: {e}") from None
    offset = None
    sk = doc.project.skill(sid)
    in_skill_md = sk is not None and sk.skill_md is not None and sk.skill_md.path == doc.path
    if step is None and in_skill_md and field(params, "position") is not None:
        line, char = (
            integer(m, params, "position", "line"),
            integer(m, params, "position", "character"),
        )
        offset = convert.to_offset(doc.index, lsp.Position(line=line, character=char))
    try:
        pv = ide_preview.preview_skill(doc.project, sid, state, step, block, offset)
    except ide_preview.StepNotFound as e:
        raise FeatureFailed(f"mantle/previewPrompt: {e}") from None
    return pv.to_json() if pv is not None else None


def _layout(graph: ide_graphs.Graph, params: Any) -> Any:
    """The layout a graph request asks for with ``layout: {fontSize, charWidth?}`` (the
    size of the viewer's text and the advance width of its monospace font, px), or None."""
    size = param(params, "layout", "fontSize") if params is not None else None
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not size > 0:
        return None
    width = param(params, "layout", "charWidth")
    ok = isinstance(width, (int, float)) and not isinstance(width, bool) and width > 0
    metrics = ide_layout.Metrics.for_font(float(size), float(width) if ok else None)
    # most edits change no node's text and no edge (only problems): the same layout, at
    # once (a map of 1,000 skills takes ~1 s to lay out), and nothing moves
    key = (
        graph.kind,
        metrics,
        tuple((n.id, ide_graphs.node_lines(graph, n)) for n in graph.nodes),
        tuple((e.source, e.target, ide_graphs.edge_lines(graph, e)) for e in graph.edges),
    )
    found = _LAYOUTS.pop(key, None)
    if found is None:
        found = ide_graphs.layout_of(graph, metrics)
    _LAYOUTS[key] = found
    while len(_LAYOUTS) > 8:
        _LAYOUTS.pop(next(iter(_LAYOUTS)))
    return found


_LAYOUTS: dict[Any, ide_layout.Layout] = {}  # the last layouts, oldest first


def _skill_md(project: Any, sid: str) -> list[Path]:
    sk = project.skill(sid)
    return [sk.skill_md.path] if sk is not None and sk.skill_md is not None else []
