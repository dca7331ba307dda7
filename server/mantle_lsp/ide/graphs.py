"""Pictures of an agent as plain data: the flow of an ordered block and the agent map.

Both are built from the semantic core (``model/semantics.py``: step exits, readers and
writers in the index, calls and links between skills, visible tools) and rendered here as
JSON-ready dicts, Mermaid or Graphviz DOT. The JSON shape is documented in
docs/features/graphs.md; ``mantle-lsp graph``, the custom requests ``mantle/flowGraph`` /
``mantle/agentMap`` and the VS Code webview all show these same graphs.

Node ids are stable across edits that do not rename what they show: ``step:<id>`` (a
step without an id: ``step#<n>``, 1-based; a repeated id: ``step:<id>#<n>``), ``END``,
``skill:<id>``, ``field:<ns>.<entry>`` (``ns`` is a skill id or ``project``),
``tool:<skill>/<name>`` (a skill's own tool), ``tool:<name>`` (a shared tool),
``tool:mcp/<server>:<name>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..model.project import Project
from ..model.semantics import Semantics, reads, writes
from ..syntax.skill_md import Block, SkillDoc
from ..syntax.text import TextRange
from .diagnostics import Diagnostic
from .layout import Layout, LEdge, LNode, Metrics, layered, text_width, wrap
from .types import Location

__all__ = [
    "Edge",
    "Graph",
    "GraphError",
    "Node",
    "Problem",
    "agent_map",
    "block_at",
    "flow_graph",
    "focus",
    "layout_of",
    "to_dot",
    "to_json",
    "to_mermaid",
    "to_svg",
]

GraphKind = Literal["flow", "map"]
# how a step kind is shown (the parser's `route` is a `noop: true` step)
_STEP_KIND = {"route": "noop"}


class GraphError(ValueError):
    """What was asked for does not exist (an unknown skill or block): the message says
    what does."""


@dataclass(frozen=True)
class Problem:
    code: str
    severity: str
    message: str


@dataclass
class Node:
    id: str
    kind: str
    label: str
    detail: str = ""
    location: Location | None = None
    problems: list[Problem] = field(default_factory=list)
    unreachable: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str
    label: str = ""


@dataclass
class Graph:
    kind: GraphKind
    title: str
    nodes: list[Node]
    edges: list[Edge]
    skill: str | None = None
    block: str | None = None
    hops: int | None = None  # a map of one skill: how far from it (1 or 2)
    omitted: int = 0  # a map of one skill: the skills two hops away left out (MAX_SECOND_HOP)


def _problems(diags: Iterable[Diagnostic], path: Path, rng: TextRange) -> list[Problem]:
    return [
        Problem(d.code, d.severity, d.message)
        for d in diags
        if d.path == path and rng.start <= d.range.start and d.range.end <= rng.end
    ]


def _by_path(diags: Iterable[Diagnostic]) -> dict[Path, list[Diagnostic]]:
    out: dict[Path, list[Diagnostic]] = {}
    for d in diags:
        out.setdefault(d.path, []).append(d)
    return out


# -- flow of an ordered block -----------------------------------------------------------
def block_at(project: Project, path: Path, offset: int) -> tuple[str, str] | None:
    """The (skill, block id) of the ordered block around ``offset`` of a skill.md."""
    for sid, sk in project.skills.items():
        if sk.skill_md is None or sk.skill_md.path != path or sk.doc is None:
            continue
        for blk in sk.doc.blocks:
            if blk.id and blk.range.start <= offset <= blk.range.end:
                return sid, blk.id
    return None


def _skill_doc(project: Project, sid: str) -> tuple[Path, SkillDoc]:
    sk = project.skill(sid)
    if sk is None or sk.skill_md is None or sk.doc is None:
        known = ", ".join(sorted(project.skills)) or "none"
        raise GraphError(f"no skill '{sid}' in this project (skills: {known})")
    return sk.skill_md.path, sk.doc


def flow_graph(
    project: Project, sid: str, block: str | None = None, diagnostics: Sequence[Diagnostic] = ()
) -> Graph:
    """The flow of ordered block ``block`` of skill ``sid`` (None: its first block): its
    steps, where each may go next, ``END``; unreachable steps and steps with one of
    ``diagnostics`` marked."""
    path, doc = _skill_doc(project, sid)
    blocks = [b for b in doc.blocks if b.id]
    chosen: Block | None
    if block is None:
        chosen = blocks[0] if blocks else None
        if chosen is None:
            raise GraphError(f"skill '{sid}' has no ordered block")
    else:
        chosen = next((b for b in blocks if b.id == block), None)
        if chosen is None:
            known = ", ".join(b.id or "" for b in blocks) or "none"
            raise GraphError(f"skill '{sid}' has no ordered block '{block}' (blocks: {known})")
    blk = chosen
    reachable = Semantics.reachable_steps(blk)
    ids: list[str] = []
    seen: set[str] = set()
    nodes: list[Node] = []
    end_node: Node | None = None
    for j, st in enumerate(blk.steps):
        if st.kind == "end":
            nid = "END"
        elif st.id:
            nid = f"step:{st.id}" if f"step:{st.id}" not in seen else f"step:{st.id}#{j + 1}"
        else:
            nid = f"step#{j + 1}"
        ids.append(nid)
        if nid in seen:  # a second `END` step
            continue
        seen.add(nid)
        loc = Location(path, st.node.range)
        if st.kind == "end":
            end_node = Node("END", "end", "END", location=loc)
            nodes.append(end_node)
            continue
        kind = _STEP_KIND.get(st.kind or "", st.kind or "unknown")
        nodes.append(
            Node(
                nid,
                kind,
                st.id or f"step {j + 1}",
                _step_detail(kind, st.get(kind if kind != "noop" else "noop")),
                loc,
                _problems(diagnostics, path, st.node.range),
                reachable is not None and j not in reachable,
            )
        )
    edges: list[Edge] = []
    for j in range(len(blk.steps)):
        for ex in Semantics.step_exits(blk, j):
            if ex.missing:
                continue
            if ex.target is None:
                target = "END"
                if end_node is None:
                    close = TextRange(max(blk.range.end - 3, blk.range.start), blk.range.end)
                    end_node = Node("END", "end", "END", location=Location(path, close))
                    nodes.append(end_node)
            else:
                target = ids[ex.target]
            label = ex.condition if ex.kind == "if" else ("else" if ex.kind == "else" else "")
            edge = Edge(ids[j], target, ex.kind, label or "")
            if edge not in edges:
                edges.append(edge)
    return Graph("flow", f"{sid}: {blk.id}", nodes, edges, sid, blk.id)


def _step_detail(kind: str, node: Any) -> str:
    """What a step does, in a few words (the target of a collect, tool, call, …)."""
    value = getattr(node, "value", None)
    if kind in ("collect", "action", "execute_tool", "call", "link") and isinstance(value, str):
        return f"{kind} {value}"
    if kind == "set_memory":
        keys = [str(k.value) for k, _ in node.pairs()] if hasattr(node, "pairs") else []
        return "set_memory " + ", ".join(keys) if keys else "set_memory"
    return kind


# -- agent map --------------------------------------------------------------------------
def agent_map(
    project: Project,
    skill: str | None = None,
    diagnostics: Sequence[Diagnostic] = (),
    hops: int = 1,
) -> Graph:
    """Skills, their public and private fields, the project's fields, each skill's tools;
    who writes and who reads each field, which skills call or link which. With ``skill``:
    that skill and what it touches (``hops=2``: and the skills one step further, see
    :func:`focus`)."""
    if skill is not None:
        _skill_doc(project, skill)
    sem = Semantics(project)
    by_path = _by_path(diagnostics)  # a map of 1,000 skills may carry thousands of problems
    nodes: dict[str, Node] = {}
    edges: dict[Edge, None] = {}
    extra: list[Node] = []  # shared and MCP tools, bundled skills: after the skills

    def field_node(ns: str, kind: str, owner: str | None, scope: str) -> None:
        for f in sem.readable_declarations(owner, ns):
            mf = getattr(f, "key", None)
            pf = project.project_memory_file() if ns == "project" else project.skills[ns].memory
            loc = Location(pf.path, mf.range) if mf is not None and pf is not None else None
            nid = f"field:{ns}.{f.name}"
            nodes[nid] = Node(
                nid,
                kind,
                f"{ns}.{f.name}",
                f"{getattr(f, 'scope', scope)} {f.type}",
                loc,
                _problems(by_path.get(pf.path, ()), pf.path, _span(mf, f)) if pf and mf else [],
                attrs={
                    "owner": ns,
                    "scope": getattr(f, "scope", scope),
                    "type": f.type,
                    "writers": list(sem.field_writers(ns, f.name)),
                },
            )

    for sid, sk in project.skills.items():
        doc = sk.doc
        loc = None
        if sk.skill_md is not None:
            fm = doc.frontmatter_range if doc is not None else None
            loc = Location(sk.skill_md.path, fm or TextRange(0, 0))
        probs = [
            Problem(d.code, d.severity, d.message)
            for pf in sk.files()
            for d in by_path.get(pf.path, ())
            if d.severity in ("error", "warning")
        ]
        nodes[f"skill:{sid}"] = Node(f"skill:{sid}", "skill", sid, "", loc, probs)
        field_node(sid, "field", sid, "private")
        mcp = sem.mcp_tools(doc)
        local = sem.local_tools(sk)
        for name in sorted(sem.visible_tools(sk, doc)):
            if name in local:
                tid, kind, tfiles = f"tool:{sid}/{name}", "tool", sk.tool_modules()
            elif name in mcp:
                tid, kind, tfiles = f"tool:mcp/{mcp[name]}:{name}", "mcp_tool", []
            else:
                tid, kind, tfiles = f"tool:{name}", "shared_tool", project.shared_tool_files()
            if tid not in nodes and all(n.id != tid for n in extra):
                tloc = next(
                    (
                        Location(pf.path, t.name_range)
                        for pf, mod in tfiles
                        for t in sem.tools_in(pf, mod)
                        if t.name == name
                    ),
                    None,
                )
                node = Node(tid, kind, name, kind.replace("_", " "), tloc)
                if kind == "tool":
                    node.attrs["owner"] = sid
                    nodes[tid] = node
                else:
                    extra.append(node)
            edges[Edge(f"skill:{sid}", tid, "uses")] = None
    field_node("project", "project_field", None, "project")
    for node in extra:
        nodes[node.id] = node
    for sid in project.skills:
        targets = sem.skill_targets(sid)
        for kind in ("call", "link"):
            for t in sorted(targets[kind]):
                if f"skill:{t}" not in nodes:
                    nodes[f"skill:{t}"] = Node(f"skill:{t}", "bundled_skill", t, "bundled")
                edges[Edge(f"skill:{sid}", f"skill:{t}", kind)] = None
    forms: dict[tuple[str, str, str], set[str]] = {}
    for ref in project.index.references:
        if ref.key[0] != "field" or ref.soft or ref.skill is None or len(ref.key) < 3:
            continue
        fid, sid_node = f"field:{ref.key[1]}.{ref.key[2]}", f"skill:{ref.skill}"
        if fid not in nodes or sid_node not in nodes:
            continue
        if writes(ref):
            forms.setdefault((sid_node, fid, "writes"), set()).add(ref.form)
        elif reads(ref):
            forms.setdefault((fid, sid_node, "reads"), set()).add(ref.form)
    for (src, dst, kind), how in sorted(forms.items()):
        edges[Edge(src, dst, kind, ", ".join(sorted(how)))] = None
    graph = Graph("map", "agent map", list(nodes.values()), list(edges), skill)
    return focus(graph, skill, hops) if skill is not None else graph


def _span(key: Any, f: Any) -> TextRange:
    node = getattr(f, "node", None)
    end = node.range.end if node is not None else key.range.end
    return TextRange(key.range.start, max(end, key.range.end))


MAX_SECOND_HOP = 40  # skills two hops away shown around one skill (the rest: omitted)


def focus(graph: Graph, sid: str, hops: int = 1) -> Graph:
    """The part of the whole agent map ``graph`` about skill ``sid`` (titled
    ``agent map: <sid>``): it, its fields and tools, and what they are connected to (one
    hop: the fields it reads and writes, the skills that read or write its fields, the
    skills it calls or links and that call or link it).

    Two hops follow the data one step further, in its direction: the skills that write
    what it reads, the skills that read what it writes (a field of another skill or of the
    project), the skills its callees call and the callers of its callers; at most
    :data:`MAX_SECOND_HOP` of them (``omitted`` counts the others)."""
    me = f"skill:{sid}"
    own = {me} | {
        n.id for n in graph.nodes if n.attrs.get("owner") == sid and n.kind in ("field", "tool")
    }
    edges = [e for e in graph.edges if e.source in own or e.target in own]
    keep = own | {e.source for e in edges} | {e.target for e in edges}
    omitted = 0
    if hops >= 2:
        reads = {e.source for e in edges if e.kind == "reads" and e.target == me}
        writes = {e.target for e in edges if e.kind == "writes" and e.source == me} - own
        callees = {e.target for e in edges if e.kind in ("call", "link") and e.source == me}
        callers = {e.source for e in edges if e.kind in ("call", "link") and e.target == me}
        more: dict[str, None] = {}
        second: list[Edge] = []
        for e in graph.edges:
            if e.source in own or e.target in own:
                continue
            if e.kind == "writes" and e.target in reads:
                far = e.source  # writes what it reads
            elif e.kind == "reads" and e.source in writes:
                far = e.target  # reads what it writes
            elif e.kind in ("call", "link") and e.source in callees:
                far = e.target
            elif e.kind in ("call", "link") and e.target in callers:
                far = e.source
            else:
                continue
            if far not in keep and far not in more:
                if len(more) >= MAX_SECOND_HOP:
                    omitted += 1
                    more[far] = None  # counted once
                    continue
                more[far] = None
            second.append(e)
        shown = set(list(more)[:MAX_SECOND_HOP]) | keep
        second = [e for e in second if e.source in shown and e.target in shown]
        keep = shown
        edges = edges + second
    return Graph(
        graph.kind,
        f"agent map: {sid}",
        [n for n in graph.nodes if n.id in keep],
        edges,
        sid,
        None,
        hops=2 if hops >= 2 else 1,
        omitted=omitted,
    )


# -- rendering --------------------------------------------------------------------------
Where = Callable[[Location], dict[str, Any]]


def to_json(graph: Graph, where: Where, layout: Layout | None = None) -> dict[str, Any]:
    """The graph as JSON data (docs/features/graphs.md); ``where`` renders a location
    (the CLI: a project-relative path and code-point positions; LSP: a URI and a range);
    with ``layout``, where everything goes (``layout``)."""
    out: dict[str, Any] = {"kind": graph.kind, "title": graph.title}
    if graph.skill is not None:
        out["skill"] = graph.skill
    if graph.block is not None:
        out["block"] = graph.block
    if graph.hops is not None:
        out["hops"] = graph.hops
    if graph.omitted:
        out["omitted"] = graph.omitted
    nodes = []
    for n in graph.nodes:
        d: dict[str, Any] = {"id": n.id, "kind": n.kind, "label": n.label}
        if n.detail:
            d["detail"] = n.detail
        d.update(n.attrs)
        if graph.kind == "flow":
            d["unreachable"] = n.unreachable
        d["problems"] = [
            {"code": p.code, "severity": p.severity, "message": p.message} for p in n.problems
        ]
        d["location"] = where(n.location) if n.location is not None else None
        nodes.append(d)
    out["nodes"] = nodes
    out["edges"] = [
        {
            "source": e.source,
            "target": e.target,
            "kind": e.kind,
            **({"label": e.label} if e.label else {}),
        }
        for e in graph.edges
    ]
    if layout is not None:
        out["layout"] = layout.to_json()
    return out


def _edge_text(graph: Graph, e: Edge) -> str:
    """An edge's caption: a flow's condition (or ``else``); a map's kind and forms."""
    if graph.kind == "flow":
        return e.label
    return f"{e.kind}: {e.label}" if e.label else e.kind


def _mm(text: str) -> str:
    return text.replace('"', "#quot;").replace("\n", " ")


_MERMAID_SHAPE = {
    "end": ("((", "))"),
    "noop": ("{", "}"),
    "collect": ("[/", "/]"),
    "call": ("[[", "]]"),
    "link": ("[[", "]]"),
    "skill": ("[[", "]]"),
    "bundled_skill": ("[[", "]]"),
    "field": ("([", "])"),
    "project_field": ("([", "])"),
    "tool": ("{{", "}}"),
    "shared_tool": ("{{", "}}"),
    "mcp_tool": ("{{", "}}"),
}


def to_mermaid(graph: Graph) -> str:
    """A Mermaid flowchart (for Markdown docs and pull requests): unreachable steps
    dashed, nodes with an error or warning outlined in red."""
    num = {n.id: f"n{i}" for i, n in enumerate(graph.nodes)}
    lines = [f"%% {graph.title}", "flowchart " + ("TD" if graph.kind == "flow" else "LR")]
    for n in graph.nodes:
        left, right = _MERMAID_SHAPE.get(n.kind, ("[", "]"))
        text = n.label if not n.detail or n.kind in ("end",) else f"{n.label}<br/>{n.detail}"
        lines.append(f'  {num[n.id]}{left}"{_mm(text)}"{right}')
    for e in graph.edges:
        label = _edge_text(graph, e)
        arrow = "-.->" if e.kind in ("reads", "link") else "-->"
        mid = f'|"{_mm(label)}"|' if label else ""
        lines.append(f"  {num[e.source]} {arrow}{mid} {num[e.target]}")
    unreachable = [num[n.id] for n in graph.nodes if n.unreachable]
    problem = [
        num[n.id]
        for n in graph.nodes
        if any(p.severity in ("error", "warning") for p in n.problems)
    ]
    if unreachable:
        lines.append("  classDef unreachable stroke-dasharray: 5 5,opacity:0.6")
        lines.append(f"  class {','.join(unreachable)} unreachable")
    if problem:
        lines.append("  classDef problem stroke:#d33,stroke-width:3px")
        lines.append(f"  class {','.join(problem)} problem")
    return "\n".join(lines) + "\n"


def _dq(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_DOT_SHAPE = {
    "end": "doublecircle",
    "noop": "diamond",
    "collect": "parallelogram",
    "skill": "box3d",
    "bundled_skill": "box3d",
    "field": "ellipse",
    "project_field": "ellipse",
    "tool": "hexagon",
    "shared_tool": "hexagon",
    "mcp_tool": "hexagon",
}


def to_dot(graph: Graph) -> str:
    """A Graphviz digraph: the node ids as they are in the JSON."""
    lines = [
        f"digraph {_dq(graph.title)} {{",
        "  rankdir=" + ("TB" if graph.kind == "flow" else "LR") + ";",
        '  node [shape=box, fontname="Helvetica"];',
    ]
    for n in graph.nodes:
        text = n.label if not n.detail or n.kind == "end" else f"{n.label}\n{n.detail}"
        attrs = [f"label={_dq(text)}", f"shape={_DOT_SHAPE.get(n.kind, 'box')}"]
        if n.unreachable:
            attrs.append("style=dashed")
        if any(p.severity in ("error", "warning") for p in n.problems):
            attrs.append("color=red")
        lines.append(f"  {_dq(n.id)} [{', '.join(attrs)}];")
    for e in graph.edges:
        label = _edge_text(graph, e)
        attrs = [f"label={_dq(label)}"] if label else []
        if e.kind in ("reads", "link"):
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  {_dq(e.source)} -> {_dq(e.target)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- layout and SVG ---------------------------------------------------------------------------
DETAIL_WRAP = 40  # characters per line of a node's detail
LABEL_WRAP = 30  # characters per line of a flow edge's condition


def node_lines(graph: Graph, n: Node) -> tuple[str, ...]:
    """The text of a node in a picture: its label, then its detail (wrapped). A map of one
    skill names its own fields without the skill's prefix (the tooltip has it)."""
    label = n.label
    if graph.skill is not None and n.kind == "field" and n.attrs.get("owner") == graph.skill:
        label = label.removeprefix(f"{graph.skill}.")
    if not n.detail or n.kind == "end" or n.kind == "skill":
        return (label,)
    return (label, *wrap(n.detail, DETAIL_WRAP))


def edge_lines(graph: Graph, e: Edge) -> tuple[str, ...]:
    """The caption of an edge in a picture: a flow's condition (or ``else``), wrapped. A
    map's edges say what they are by their style (the legend), not by a caption."""
    if graph.kind != "flow" or not e.label:
        return ()
    return tuple(wrap(e.label, LABEL_WRAP))


FOCUS_WRAP = 6  # a map of one skill: columns of at most this many of its fields and tools


def layout_of(graph: Graph, metrics: Metrics | None = None) -> Layout:
    """Where every node, edge and caption of ``graph`` goes (``ide/layout.py``): a flow top
    to bottom, a map left to right (a map of one skill in columns of at most
    :data:`FOCUS_WRAP`, so that it fits a screen)."""
    return layered(
        [LNode(n.id, node_lines(graph, n)) for n in graph.nodes],
        [LEdge(e.source, e.target, edge_lines(graph, e)) for e in graph.edges],
        "TB" if graph.kind == "flow" else "LR",
        metrics,
        wrap=FOCUS_WRAP if graph.kind == "map" and graph.skill is not None else None,
    )


def _x(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


SVG_FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
SVG_STYLE = """
.node rect.box { fill: #ffffff; stroke: #6b7280; stroke-width: 1.2; }
.node .label { font-weight: 600; fill: #1f2328; }
.node .detail { fill: #57606a; }
.kind-collect rect.box, .kind-field rect.box, .kind-project_field rect.box { stroke: #1f6feb; }
.kind-execute_tool rect.box, .kind-tool rect.box, .kind-shared_tool rect.box,
.kind-mcp_tool rect.box { stroke: #8250df; }
.kind-call rect.box, .kind-link rect.box, .kind-skill rect.box,
.kind-bundled_skill rect.box { stroke: #1a7f37; }
.kind-noop rect.box, .kind-set_memory rect.box { stroke: #bc4c00; }
.kind-end rect.box { fill: #57606a; stroke: #57606a; }
.kind-end .label { fill: #ffffff; }
.kind-project_field rect.box { stroke-dasharray: 6 2; }
.unreachable { opacity: 0.55; }
.unreachable rect.box { stroke-dasharray: 4 3; }
.problem-warning rect.box { stroke: #9a6700; stroke-width: 2.5; }
.problem-error rect.box { stroke: #cf222e; stroke-width: 2.5; }
.badge-error { fill: #cf222e; }
.badge-warning { fill: #9a6700; }
.edge path { fill: none; stroke: #6e7781; stroke-width: 1.2; }
.edge-reads path, .edge-link path { stroke-dasharray: 5 3; }
.edge-writes path { stroke: #1f6feb; }
.edge-else path { stroke-dasharray: 2 3; }
.edge-label rect { fill: #ffffff; fill-opacity: 0.9; }
.edge-label text { fill: #57606a; }
.arrowhead { fill: #6e7781; }
.title { font-weight: 600; fill: #1f2328; }
.legend text { fill: #57606a; }
"""
SVG_MIN_FONT = 11.0  # no text of an SVG is smaller (px)


def _legend(graph: Graph) -> list[tuple[str, str]]:
    """The edge kinds a map shows, as (kind, words) for the legend."""
    words = {
        "writes": "writes (skill → field)",
        "reads": "reads (field → skill)",
        "call": "calls",
        "link": "links",
        "uses": "uses (tool)",
    }
    present = {e.kind for e in graph.edges}
    return [(k, w) for k, w in words.items() if k in present]


def to_svg(graph: Graph, layout: Layout | None = None) -> str:
    """A standalone SVG of ``graph`` at its natural size (no text under
    :data:`SVG_MIN_FONT` px, no caption over another: ``ide/layout.py``), for docs and pull
    requests; node tooltips carry the detail and the problems."""
    lay = layout or layout_of(graph)
    m = lay.metrics
    fs = max(m.font_size, SVG_MIN_FONT)
    head = round(fs * 2.4, 1)  # the title band
    legend = _legend(graph) if graph.kind == "map" else []
    foot = round(fs * 2.4, 1) if legend else 0.0
    title_w = text_width(graph.title, m) + 2 * m.margin
    legend_w = sum(text_width(w, m) + 60 for _, w in legend) + 2 * m.margin
    width = math.ceil(max(lay.width, title_w, legend_w))
    height = math.ceil(lay.height + head + foot)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{_x(SVG_FONT)}" font-size="{fs:g}">',
        f"<title>{_x(graph.title)}</title>",
        f"<style>{SVG_STYLE}</style>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'class="arrowhead"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="#f6f8fa"/>',
        f'<text class="title" x="{m.margin:g}" y="{head * 0.62:.1f}" font-size="{fs:g}">'
        f"{_x(graph.title)}</text>",
        f'<g transform="translate(0,{head:g})">',
    ]
    for e, route in zip(graph.edges, lay.edges, strict=True):
        if route is None:
            continue
        out.append(
            f'<g class="edge edge-{_x(e.kind)}" data-source="{_x(e.source)}" '
            f'data-target="{_x(e.target)}">'
        )
        out.append(f"<title>{_x(_edge_tip(graph, e))}</title>")
        out.append(f'<path d="{route.path}" marker-end="url(#arrow)"/>')
        if route.label is not None:
            b = route.label
            out.append(
                f'<g class="edge-label"><rect x="{b.x:.1f}" y="{b.y:.1f}" '
                f'width="{b.width:.1f}" height="{b.height:.1f}" rx="3"/>'
            )
            for i, line in enumerate(b.lines):
                out.append(
                    f'<text x="{b.x + m.pad_x:.1f}" y="{lay.baseline(b, i):.1f}" '
                    f'font-size="{fs:g}">{_x(line)}</text>'
                )
            out.append("</g>")
        out.append("</g>")
    for n in graph.nodes:
        b = lay.nodes[n.id]
        bad = _worst(n)
        classes = ["node", f"kind-{n.kind}"]
        if bad:
            classes.append(f"problem-{bad}")
        if n.unreachable:
            classes.append("unreachable")
        out.append(f'<g class="{_x(" ".join(classes))}" data-id="{_x(n.id)}">')
        out.append(f"<title>{_x(_node_tip(n))}</title>")
        r = b.height / 2 if n.kind == "end" else 14 if "field" in n.kind else 4
        out.append(
            f'<rect class="box" x="{b.x:.1f}" y="{b.y:.1f}" width="{b.width:.1f}" '
            f'height="{b.height:.1f}" rx="{r:g}"/>'
        )
        for i, line in enumerate(b.lines):
            cls = "label" if i == 0 else "detail"
            out.append(
                f'<text class="{cls}" x="{b.x + b.width / 2:.1f}" y="{lay.baseline(b, i):.1f}" '
                f'text-anchor="middle" font-size="{fs:g}">{_x(line)}</text>'
            )
        if bad in ("error", "warning"):
            out.append(
                f'<circle class="badge-{bad}" cx="{b.x + b.width - 2:.1f}" '
                f'cy="{b.y + 2:.1f}" r="6"/>'
            )
        out.append("</g>")
    out.append("</g>")
    if legend:
        y = head + lay.height + foot * 0.55
        x = m.margin
        out.append('<g class="legend">')
        for kind, words in legend:
            out.append(
                f'<g class="edge edge-{kind}"><path d="M {x:.1f} {y - fs * 0.35:.1f} '
                f'h 40" marker-end="url(#arrow)"/></g>'
            )
            out.append(f'<text x="{x + 48:.1f}" y="{y:.1f}" font-size="{fs:g}">{_x(words)}</text>')
            x += 60 + text_width(words, m)
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _worst(n: Node) -> str:
    sev = {p.severity for p in n.problems}
    for s in ("error", "warning", "information", "hint"):
        if s in sev:
            return s
    return ""


def _node_tip(n: Node) -> str:
    lines = [f"{n.label} — {n.detail}" if n.detail else n.label]
    if n.unreachable:
        lines.append("unreachable: no path from the first step leads here")
    lines += [f"{p.severity}: {p.message} [{p.code}]" for p in n.problems]
    return "\n".join(lines)


def _edge_tip(graph: Graph, e: Edge) -> str:
    text = _edge_text(graph, e)
    return f"{e.source} → {e.target}" + (f": {text}" if text else "")
