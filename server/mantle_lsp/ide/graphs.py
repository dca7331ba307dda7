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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..model.project import Project
from ..model.semantics import Semantics, reads, writes
from ..syntax.skill_md import Block, SkillDoc
from ..syntax.text import TextRange
from .diagnostics import Diagnostic
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
    "to_dot",
    "to_json",
    "to_mermaid",
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
    project: Project, skill: str | None = None, diagnostics: Sequence[Diagnostic] = ()
) -> Graph:
    """Skills, their public and private fields, the project's fields, each skill's tools;
    who writes and who reads each field, which skills call or link which. With ``skill``:
    that skill and what it touches."""
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
    if skill is not None:
        graph = _around(graph, skill)
        graph.title = f"agent map: {skill}"
    return graph


def _span(key: Any, f: Any) -> TextRange:
    node = getattr(f, "node", None)
    end = node.range.end if node is not None else key.range.end
    return TextRange(key.range.start, max(end, key.range.end))


def _around(graph: Graph, sid: str) -> Graph:
    """The part of an agent map about skill ``sid``: it, its fields and tools, and what
    they are connected to."""
    own = {f"skill:{sid}"} | {
        n.id for n in graph.nodes if n.attrs.get("owner") == sid and n.kind in ("field", "tool")
    }
    edges = [e for e in graph.edges if e.source in own or e.target in own]
    keep = own | {e.source for e in edges} | {e.target for e in edges}
    return Graph(
        graph.kind, graph.title, [n for n in graph.nodes if n.id in keep], edges, sid, None
    )


# -- rendering --------------------------------------------------------------------------
Where = Callable[[Location], dict[str, Any]]


def to_json(graph: Graph, where: Where) -> dict[str, Any]:
    """The graph as JSON data (docs/features/graphs.md); ``where`` renders a location
    (the CLI: a project-relative path and code-point positions; LSP: a URI and a range)."""
    out: dict[str, Any] = {"kind": graph.kind, "title": graph.title}
    if graph.skill is not None:
        out["skill"] = graph.skill
    if graph.block is not None:
        out["block"] = graph.block
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
