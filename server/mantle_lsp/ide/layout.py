"""A small layered (Sugiyama-style) graph layout: where each node, edge and edge label of a
picture goes, at the picture's natural size.

Pure data, no IO. ``ide/graphs.py`` lays out its flows and agent maps with it; the SVG of
``mantle-lsp graph --format svg`` and the VS Code view (``mantle/flowGraph`` and
``mantle/agentMap`` with a ``layout`` parameter) draw the same layout, so the picture is
the same in both places.

The steps, each bounded by the size of the graph:

1. cycles: the edges a depth-first walk (nodes in their given order) finds going back are
   turned round for the layering (and drawn the right way round);
2. ranks: the longest path from the sources, sources pulled down next to what they feed;
   when any edge has a label every edge spans two ranks, and the label sits on the rank
   between (just after the edge's source), as a box of its own;
3. a dummy box on each rank a long edge crosses;
4. order within each rank: the given order first, then barycentre sweeps (the order with
   the fewest crossings is kept);
5. positions across the ranks: each box pulled toward its neighbours, in order and never
   closer than the separation (a weighted isotonic regression, rank by rank);
6. edge routes through their boxes, as smooth SVG paths.

Because labels and nodes are all boxes of a rank, kept in order and apart, no two of them
overlap, and no edge crosses a label: the property ``tests/test_layout.py`` checks.
Text widths are estimated as ``chars × char_width`` (a wide East Asian character counts
two): exact for the monospace fonts both renderers use, given the font's advance width.
"""

from __future__ import annotations

import itertools
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Box",
    "LEdge",
    "LNode",
    "Layout",
    "Metrics",
    "Route",
    "layered",
    "text_width",
    "wrap",
]

Direction = Literal["TB", "LR"]


@dataclass(frozen=True)
class Metrics:
    """Sizes in px: the font size of every text, the advance width of one character (a
    monospace font: 0.6 em for most), the line height, paddings and separations."""

    font_size: float = 13.0
    char_width: float = 13.0 * 0.62
    line_height: float = 13.0 * 1.4
    pad_x: float = 10.0
    pad_y: float = 6.0
    node_sep: float = 28.0  # between boxes of a rank
    edge_sep: float = 12.0  # beside an edge's dummy box
    rank_sep: float = 44.0  # between ranks (half of it around a label rank)
    margin: float = 16.0
    min_width: float = 48.0

    @classmethod
    def for_font(cls, font_size: float, char_width: float | None = None) -> Metrics:
        """Metrics scaled for ``font_size`` (and a measured ``char_width``)."""
        fs = min(max(float(font_size), 6.0), 64.0)
        cw = char_width if char_width is not None else fs * 0.62
        cw = min(max(float(cw), fs * 0.3), fs * 1.5)
        k = fs / 13.0
        return cls(
            font_size=fs,
            char_width=cw,
            line_height=round(fs * 1.4, 2),
            pad_x=round(10 * k, 2),
            pad_y=round(6 * k, 2),
            node_sep=round(28 * k, 2),
            edge_sep=round(12 * k, 2),
            rank_sep=round(44 * k, 2),
            margin=round(16 * k, 2),
            min_width=round(48 * k, 2),
        )


def _char_cells(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str, m: Metrics) -> float:
    """The width of ``text`` in the monospace font of ``m``."""
    return sum(_char_cells(c) for c in text) * m.char_width


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces, a long dotted
    name (``session.project.customer_verified``) after a dot, a longer word anywhere.
    Whitespace runs collapse; at most 8 lines (the last one ends with "…")."""
    pieces: list[tuple[str, bool]] = []  # (text, glued to the piece before)
    for w in text.split():
        glued = False
        while len(w) > width and "." in w[1:width]:
            cut = w.rindex(".", 1, width) + 1
            pieces.append((w[:cut], glued))
            w, glued = w[cut:], True
        while len(w) > width:
            pieces.append((w[:width], glued))
            w, glued = w[width:], True
        pieces.append((w, glued))
    lines: list[str] = []
    cur = ""
    for w, glued in pieces:
        sep = "" if glued or not cur else " "
        if cur and len(cur) + len(sep) + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur += sep + w
    if cur:
        lines.append(cur)
    if len(lines) > 8:
        lines = lines[:8]
        lines[-1] = lines[-1][: max(width - 1, 1)] + "…"
    return lines or [""]


@dataclass(frozen=True)
class LNode:
    id: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class LEdge:
    source: str
    target: str
    label: tuple[str, ...] = ()


@dataclass
class Box:
    """A rectangle (top-left corner, size) and the lines of text it holds."""

    x: float
    y: float
    width: float
    height: float
    lines: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "x": round(self.x, 1),
            "y": round(self.y, 1),
            "width": round(self.width, 1),
            "height": round(self.height, 1),
            "lines": list(self.lines),
        }


@dataclass
class Route:
    """An edge's route: its points (source to target), the SVG path through them, and
    its label's box (None without a label)."""

    points: list[tuple[float, float]]
    path: str
    label: Box | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "points": [[round(x, 1), round(y, 1)] for x, y in self.points],
            "path": self.path,
        }
        if self.label is not None:
            out["label"] = self.label.to_json()
        return out


@dataclass
class Layout:
    width: float
    height: float
    metrics: Metrics
    direction: Direction
    nodes: dict[str, Box] = field(default_factory=dict)
    edges: list[Route | None] = field(default_factory=list)  # one per given edge

    def to_json(self) -> dict[str, Any]:
        m = self.metrics
        return {
            "width": round(self.width, 1),
            "height": round(self.height, 1),
            "direction": self.direction,
            "fontSize": m.font_size,
            "lineHeight": m.line_height,
            "padX": m.pad_x,
            "padY": m.pad_y,
            "nodes": [{"id": k, **b.to_json()} for k, b in self.nodes.items()],
            "edges": [r.to_json() if r is not None else None for r in self.edges],
        }

    def baseline(self, box: Box, i: int) -> float:
        """The baseline of line ``i`` of ``box`` (the renderers' one formula)."""
        m = self.metrics
        return box.y + m.pad_y + i * m.line_height + (m.line_height + m.font_size * 0.7) / 2


def _text_box(lines: Sequence[str], m: Metrics, min_width: float) -> tuple[float, float]:
    w = max((text_width(t, m) for t in lines), default=0.0) + 2 * m.pad_x
    h = max(len(lines), 1) * m.line_height + 2 * m.pad_y
    return max(w, min_width), h


# -- the algorithm --------------------------------------------------------------------------
@dataclass
class _V:
    """A box of a rank: a node, an edge label or a dummy. ``across`` / ``along``: its size
    across the ranks (a rank's width in TB) and along them."""

    key: int  # a node's index; -1 for a dummy or a label
    across: float
    along: float
    rank: int = 0
    pos: float = 0.0  # centre, across the ranks
    order: int = 0
    edge: int = -1  # a dummy's or label's edge
    label: bool = False
    shift: float = 0.0  # where edges meet it: pos + shift (a node with a loop beside it)
    up: list[tuple[int, float]] = field(default_factory=list)  # (box, weight) a rank above
    down: list[tuple[int, float]] = field(default_factory=list)


def layered(
    nodes: Sequence[LNode],
    edges: Sequence[LEdge],
    direction: Direction = "TB",
    metrics: Metrics | None = None,
    *,
    iterations: int | None = None,
    wrap: int | None = None,
) -> Layout:
    """Lay out ``nodes`` and ``edges`` (an edge naming an unknown node is left out: its
    route is None) top to bottom (``TB``) or left to right (``LR``). ``wrap``: a rank of
    more nodes than that puts its last nodes (those no edge leaves) in ranks of their own
    after it, so that a skill with 14 fields makes two columns of 7, not one of 14."""
    m = metrics or Metrics()
    index = {n.id: i for i, n in enumerate(nodes)}
    n = len(nodes)
    tb = direction == "TB"
    sizes = [_text_box(nd.lines, m, m.min_width) for nd in nodes]
    # self loops: drawn beside their node, which is made room for
    loops: dict[int, list[int]] = {}
    loop_extra = [0.0] * n
    label_sizes: list[tuple[float, float] | None] = []
    for ei, e in enumerate(edges):
        ls = _text_box(e.label, m, 0.0) if e.label else None
        label_sizes.append(ls)
        s, t = index.get(e.source), index.get(e.target)
        if s is not None and s == t:
            loops.setdefault(s, []).append(ei)
    for s, eis in loops.items():
        # the loop's width, and the widest label of the node's loops (TB: on the right)
        widest = max(
            ((ls[0] if tb else ls[1]) for i in eis if (ls := label_sizes[i]) is not None),
            default=0.0,
        )
        loop_extra[s] = 2 * m.edge_sep + 4 * len(eis) + widest
    labelled = any(label_sizes[i] is not None for i, e in enumerate(edges) if e.source != e.target)
    minlen = 2 if labelled else 1

    # 1. cycles: a depth-first walk in the given order; edges found going back are reversed
    out_edges: list[list[int]] = [[] for _ in range(n)]
    real: list[tuple[int, int, int]] = []  # (edge index, source, target), no self loops
    for ei, e in enumerate(edges):
        s, t = index.get(e.source), index.get(e.target)
        if s is None or t is None or s == t:
            continue
        real.append((ei, s, t))
        out_edges[s].append(len(real) - 1)
    reversed_ = [False] * len(real)
    state = [0] * n  # 0 new, 1 on the stack, 2 done
    for root in range(n):
        if state[root]:
            continue
        stack: list[tuple[int, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            a, k = stack[-1]
            if k < len(out_edges[a]):
                stack[-1] = (a, k + 1)
                ri = out_edges[a][k]
                b = real[ri][2]
                if state[b] == 1:
                    reversed_[ri] = True
                elif state[b] == 0:
                    state[b] = 1
                    stack.append((b, 0))
            else:
                state[a] = 2
                stack.pop()
    dag = [(ei, t, s) if reversed_[ri] else (ei, s, t) for ri, (ei, s, t) in enumerate(real)]

    # 2. ranks: longest path (Kahn, in the given order), sources pulled toward their targets
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for _, s, t in dag:
        succ[s].append(t)
        pred[t].append(s)
        indeg[t] += 1
    rank = [0] * n
    topo: list[int] = []
    ready = [a for a in range(n) if indeg[a] == 0]
    ready.reverse()  # a stack popped in the given order
    while ready:
        a = ready.pop()
        topo.append(a)
        nxt = []
        for b in succ[a]:
            rank[b] = max(rank[b], rank[a] + minlen)
            indeg[b] -= 1
            if indeg[b] == 0:
                nxt.append(b)
        ready.extend(reversed(nxt))
    for a in reversed(topo):
        if not pred[a] and succ[a]:
            rank[a] = min(rank[b] for b in succ[a]) - minlen
    low = min(rank, default=0)
    rank = [r - low for r in rank]
    nranks = max(rank, default=-1) + 1
    if wrap is not None and wrap > 0 and n:
        members: list[list[int]] = [[] for _ in range(nranks)]
        for a in range(n):
            members[rank[a]].append(a)
        for r in range(nranks - 1, -1, -1):
            if len(members[r]) <= wrap:
                continue
            sinks = [a for a in members[r] if not succ[a]]
            cols = min(math.ceil(len(members[r]) / wrap), len(sinks) + 1)
            if cols < 2:
                continue
            per = math.ceil(len(members[r]) / cols)
            stay = len(members[r]) - len(sinks)
            moved = sinks[max(per - stay, 0) :]
            extra = math.ceil(len(moved) / per) * minlen
            for a in range(n):
                if rank[a] > r:
                    rank[a] += extra
            for k, a in enumerate(moved):
                rank[a] = r + (k // per + 1) * minlen
        nranks = max(rank) + 1

    # 3. boxes of the ranks: nodes, then labels and dummies on the ranks edges cross
    vs: list[_V] = []
    for i in range(n):
        nw, nh = sizes[i]
        nw += loop_extra[i] if tb else 0.0
        nh += 0.0 if tb else loop_extra[i]
        vs.append(_V(i, nw if tb else nh, nh if tb else nw, rank[i], shift=-loop_extra[i] / 2))
    chains: dict[int, list[int]] = {}  # edge index -> its boxes, DAG direction
    shared: dict[tuple[int, int], list[int]] = {}  # unlabelled edges of a pair: one chain
    offset: dict[int, int] = {}  # the how-many-th edge on a shared chain
    sharers: dict[tuple[int, int], int] = {}
    for ei, s, t in dag:
        if label_sizes[ei] is None and (s, t) in shared:
            chains[ei] = shared[(s, t)]
            offset[ei] = sharers[(s, t)] = sharers.get((s, t), 0) + 1
            continue
        chain = [s]
        forward = s == index.get(edges[ei].source)
        label_rank = rank[s] + 1 if forward else rank[t] - 1
        ls = label_sizes[ei]
        for r in range(rank[s] + 1, rank[t]):
            if r == label_rank and ls is not None:
                lw, lh = ls
                across = (lw if tb else lh) + m.edge_sep
                vs.append(_V(-1, across, lh if tb else lw, r, edge=ei, label=True))
            else:
                vs.append(_V(-1, m.edge_sep, 0.0, r, edge=ei))
            chain.append(len(vs) - 1)
        chain.append(t)
        chains[ei] = chain
        if label_sizes[ei] is None:
            shared[(s, t)] = chain
        for a, b in itertools.pairwise(chain):
            wgt = (
                1.0
                if vs[a].key >= 0 and vs[b].key >= 0
                else (8.0 if vs[a].key < 0 and vs[b].key < 0 else 2.0)
            )
            vs[a].down.append((b, wgt))
            vs[b].up.append((a, wgt))
    layers: list[list[int]] = [[] for _ in range(nranks)]

    # 4. order: a depth-first walk from the boxes in rank and given order (what follows
    # a box comes next to it), then barycentre sweeps
    placed = [False] * len(vs)
    starts_order = sorted(
        range(len(vs)), key=lambda vi: (vs[vi].rank, vs[vi].key < 0, vs[vi].key, vi)
    )
    for root in starts_order:
        if placed[root]:
            continue
        todo = [root]
        while todo:
            vi = todo.pop()
            if placed[vi]:
                continue
            placed[vi] = True
            vs[vi].order = len(layers[vs[vi].rank])
            layers[vs[vi].rank].append(vi)
            todo.extend(b for b, _ in reversed(vs[vi].down) if not placed[b])
    best = [list(layer) for layer in layers]
    best_cross = _crossings(vs, layers)
    total = len(vs)
    rounds = (
        iterations if iterations is not None else (8 if total < 2000 else 3 if total < 8000 else 1)
    )
    for it in range(rounds):
        if best_cross == 0:
            break
        down = it % 2 == 0
        seq = range(1, nranks) if down else range(nranks - 2, -1, -1)
        for r in seq:
            layer = layers[r]
            layer.sort(
                key=lambda vi: (_bary(vs, vs[vi].up if down else vs[vi].down, vi), vs[vi].order)
            )
            for o, vi in enumerate(layer):
                vs[vi].order = o
        c = _crossings(vs, layers)
        if c < best_cross:
            best_cross = c
            best = [list(layer) for layer in layers]
    layers = best
    for layer in layers:
        for o, vi in enumerate(layer):
            vs[vi].order = o

    # 5. positions across: packed, then pulled toward the neighbours (in order, apart)
    node_sep = m.node_sep if tb else m.node_sep * 0.6  # LR: boxes one above the other

    def gap(a: _V, b: _V) -> float:
        sep = node_sep if a.key >= 0 and b.key >= 0 else m.edge_sep
        return (a.across + b.across) / 2 + sep

    for layer in layers:
        x = 0.0
        for o, vi in enumerate(layer):
            if o:
                x += gap(vs[layer[o - 1]], vs[vi])
            vs[vi].pos = x
    passes = 40 if total < 500 else 12 if total < 4000 else 4
    for it in range(passes):
        seq2 = range(nranks) if it % 2 == 0 else range(nranks - 1, -1, -1)
        for r in seq2:
            layer = layers[r]
            if not layer:
                continue
            targets, weights = [], []
            for vi in layer:
                v = vs[vi]
                nb = v.up + v.down
                sw = sum(w for _, w in nb)
                if sw:
                    targets.append(sum((vs[u].pos + vs[u].shift) * w for u, w in nb) / sw - v.shift)
                    weights.append(sw)
                else:
                    targets.append(v.pos)
                    weights.append(0.25)
            gaps = [gap(vs[layer[o - 1]], vs[layer[o]]) for o in range(1, len(layer))]
            for vi, p in zip(layer, _place(targets, weights, gaps), strict=True):
                vs[vi].pos = p
    # a box with one edge in, from a box with one edge out, nearly in line: in line (a
    # straight edge), when its neighbours in the rank leave room
    for r in range(1, nranks):
        layer = layers[r]
        for o, vi in enumerate(layer):
            v = vs[vi]
            if len(v.up) != 1 or len(vs[v.up[0][0]].down) != 1:
                continue
            u = vs[v.up[0][0]]
            want = u.pos + u.shift - v.shift
            if abs(want - v.pos) > 3 * node_sep:
                continue
            if o and want - vs[layer[o - 1]].pos < gap(vs[layer[o - 1]], v):
                continue
            if o + 1 < len(layer) and vs[layer[o + 1]].pos - want < gap(v, vs[layer[o + 1]]):
                continue
            v.pos = want
    lo = min((v.pos - v.across / 2 for v in vs), default=0.0)
    hi = max((v.pos + v.across / 2 for v in vs), default=0.0)
    for v in vs:
        v.pos += m.margin - lo

    # along: each rank as thick as its thickest box; half a separation around label ranks
    thick = [max((vs[vi].along for vi in layer), default=0.0) for layer in layers]
    starts: list[float] = []
    y = m.margin
    for r in range(nranks):
        if r:
            y += m.rank_sep / 2 if labelled else m.rank_sep
        starts.append(y)
        y += thick[r]
    along_size = (y + m.margin) if nranks else 2 * m.margin
    across_size = (hi - lo) + 2 * m.margin if vs else 2 * m.margin

    def centre(v: _V) -> float:
        return starts[v.rank] + thick[v.rank] / 2

    def pt(a: float, b: float) -> tuple[float, float]:
        """A point (across, along) on the page."""
        return (a, b) if tb else (b, a)

    # 6. the result: boxes, routes
    out = Layout(across_size if tb else along_size, along_size if tb else across_size, m, direction)
    for i, nd in enumerate(nodes):
        v = vs[i]
        w, h = sizes[i]
        cx, cy = pt(v.pos - loop_extra[i] / 2, centre(v))
        out.nodes[nd.id] = Box(cx - w / 2, cy - h / 2, w, h, nd.lines)
    routes: list[Route | None] = [None] * len(edges)
    for ei, chain in chains.items():
        s, t = chain[0], chain[-1]
        vs_s, vs_t = vs[s], vs[t]
        ext_s = sizes[s][1] / 2 if tb else sizes[s][0] / 2
        ext_t = sizes[t][1] / 2 if tb else sizes[t][0] / 2
        nodes_s = out.nodes[nodes[s].id]
        nodes_t = out.nodes[nodes[t].id]
        s_across = (nodes_s.x + nodes_s.width / 2) if tb else (nodes_s.y + nodes_s.height / 2)
        t_across = (nodes_t.x + nodes_t.width / 2) if tb else (nodes_t.y + nodes_t.height / 2)
        pts_ab: list[tuple[float, float]] = [(s_across, centre(vs_s) + ext_s)]
        label: Box | None = None
        for vi in chain[1:-1]:
            v = vs[vi]
            half = thick[v.rank] / 2
            if v.label:
                ls = label_sizes[ei]
                assert ls is not None
                line = v.pos - v.across / 2 + m.edge_sep / 2
                pts_ab += [(line, centre(v) - half), (line, centre(v) + half)]
                lw, lh = ls
                la, lb = line + m.edge_sep / 2, centre(v) - (lh if tb else lw) / 2
                lx, ly = pt(la, lb)
                label = Box(lx, ly, lw, lh, edges[ei].label)
            elif half:
                pts_ab += [(v.pos, centre(v) - half), (v.pos, centre(v) + half)]
            else:
                pts_ab.append((v.pos, centre(v)))
        pts_ab.append((t_across, centre(vs_t) - ext_t))
        beside = offset.get(ei, 0) * 4.0  # beside the other edges of its chain
        pts = [pt(a + beside, b) for a, b in pts_ab]
        if index.get(edges[ei].source) != s:  # a reversed edge: drawn source to target
            pts.reverse()
        routes[ei] = Route(pts, _path(pts), label)
    for s, eis in loops.items():
        box = out.nodes[nodes[s].id]
        for k, ei in enumerate(eis):
            d = m.edge_sep + 4 * k
            if tb:
                x0, y0, y1 = box.x + box.width, box.y + box.height * 0.3, box.y + box.height * 0.7
                pts = [(x0, y0), (x0 + d, y0), (x0 + d, y1), (x0, y1)]
            else:
                y0, x0, x1 = box.y + box.height, box.x + box.width * 0.3, box.x + box.width * 0.7
                pts = [(x0, y0), (x0, y0 + d), (x1, y0 + d), (x1, y0)]
            label = None
            ls = label_sizes[ei]
            if ls is not None:
                lw, lh = ls
                off = m.edge_sep + 4 * len(eis) + m.edge_sep / 2
                if tb:
                    label = Box(
                        box.x + box.width + off,
                        box.y + box.height / 2 - lh / 2,
                        lw,
                        lh,
                        edges[ei].label,
                    )
                else:
                    label = Box(
                        box.x + box.width / 2 - lw / 2,
                        box.y + box.height + off,
                        lw,
                        lh,
                        edges[ei].label,
                    )
            routes[ei] = Route(pts, _polyline(pts), label)
    out.edges = routes
    return out


def _bary(vs: list[_V], nb: list[tuple[int, float]], vi: int) -> float:
    if not nb:
        return float(vs[vi].order)
    sw = sum(w for _, w in nb)
    return sum(vs[u].order * w for u, w in nb) / sw


def _crossings(vs: list[_V], layers: list[list[int]]) -> int:
    """The number of edge crossings between consecutive ranks (a Fenwick-tree count of
    inversions)."""
    total = 0
    for r in range(len(layers) - 1):
        size = len(layers[r + 1])
        if size < 2:
            continue
        pairs = sorted(
            (vs[a].order, vs[b].order)
            for a in layers[r]
            for b, _ in vs[a].down
            if vs[b].rank == r + 1
        )
        tree = [0] * (size + 1)
        for seen, (_, lower) in enumerate(pairs):
            # the edges seen so far that end right of `lower`
            i, le = lower + 1, 0
            while i > 0:
                le += tree[i]
                i -= i & -i
            total += seen - le
            i = lower + 1
            while i <= size:
                tree[i] += 1
                i += i & -i
    return total


def _place(targets: list[float], weights: list[float], gaps: list[float]) -> list[float]:
    """Positions as close to ``targets`` as the order allows: minimise the weighted squared
    distance subject to ``p[i+1] - p[i] >= gaps[i]`` (pool adjacent violators on the
    positions shifted by the cumulative gaps)."""
    offs = [0.0]
    for g in gaps:
        offs.append(offs[-1] + g)
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for t, w, o in zip(targets, weights, offs, strict=True):
        blocks.append([(t - o) * w, w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, wt, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += wt
            blocks[-1][2] += c
    out: list[float] = []
    for s, wt, c in blocks:
        out.extend([s / wt] * int(c))
    return [p + o for p, o in zip(out, offs, strict=True)]


def _fmt(p: tuple[float, float]) -> str:
    return f"{p[0]:.1f} {p[1]:.1f}"


def _polyline(pts: list[tuple[float, float]]) -> str:
    return "M " + " L ".join(_fmt(p) for p in pts)


def _path(pts: list[tuple[float, float]]) -> str:
    """A smooth path through ``pts``: straight segments joined by rounded corners."""
    if len(pts) < 3:
        return _polyline(pts)
    out = [f"M {_fmt(pts[0])}"]
    for i in range(1, len(pts) - 1):
        (x0, y0), (x1, y1), (x2, y2) = pts[i - 1], pts[i], pts[i + 1]
        d0, d1 = math.hypot(x1 - x0, y1 - y0), math.hypot(x2 - x1, y2 - y1)
        r = min(12.0, d0 / 2, d1 / 2)
        if r < 0.5:
            out.append(f"L {_fmt(pts[i])}")
            continue
        a = (x1 - (x1 - x0) * r / d0, y1 - (y1 - y0) * r / d0)
        b = (x1 + (x2 - x1) * r / d1, y1 + (y2 - y1) * r / d1)
        out.append(f"L {_fmt(a)} Q {_fmt(pts[i])} {_fmt(b)}")
    out.append(f"L {_fmt(pts[-1])}")
    return " ".join(out)
