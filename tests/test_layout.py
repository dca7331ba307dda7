"""``ide/layout.py``, the layered layout the SVG and the VS Code view draw: nothing overlaps,
every text fits its box, flows go top-down with their captions between the steps, a map
of one skill wraps into columns; on hand-made graphs, random ones and the 75-skill agent
the graph views were tried on (tests/e2e/agent75.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from mantle_lsp.ide import graphs
from mantle_lsp.ide.layout import (
    Box,
    Layout,
    LEdge,
    LNode,
    Metrics,
    layered,
    text_width,
    wrap,
)
from mantle_lsp.model.project import Project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import agent75


def boxes(lay: Layout) -> list[tuple[str, Box]]:
    """Every box that holds text: the nodes and the edge captions."""
    out = [(f"node {k}", b) for k, b in lay.nodes.items()]
    out += [(f"label of edge {i}", r.label) for i, r in enumerate(lay.edges) if r and r.label]
    return out


def overlaps(lay: Layout) -> list[str]:
    """The pairs of boxes that overlap (a sweep over x)."""
    found: list[str] = []
    items = sorted(boxes(lay), key=lambda kb: kb[1].x)
    active: list[tuple[str, Box]] = []
    for name, b in items:
        active = [(n, a) for n, a in active if a.x + a.width > b.x + 0.01]
        for n, a in active:
            if min(a.y + a.height, b.y + b.height) - max(a.y, b.y) > 0.01:
                found.append(f"{n} / {name}")
        active.append((name, b))
    return found


def check_picture(lay: Layout) -> None:
    """What every picture must be: no two boxes overlap; every line of text fits its box;
    everything inside the picture; each edge starts on its source's box and ends on its
    target's (checked by the callers that know them)."""
    m = lay.metrics
    assert overlaps(lay) == []
    for name, b in boxes(lay):
        assert b.x >= 0 and b.y >= 0, name
        assert b.x + b.width <= lay.width + 0.01 and b.y + b.height <= lay.height + 0.01, name
        for line in b.lines:
            assert text_width(line, m) + 2 * m.pad_x <= b.width + 0.01, (name, line)
        assert len(b.lines) * m.line_height + 2 * m.pad_y <= b.height + 0.01, name


def on_border(p: tuple[float, float], b: Box) -> bool:
    x, y = p
    inside_x = b.x - 0.5 <= x <= b.x + b.width + 0.5
    inside_y = b.y - 0.5 <= y <= b.y + b.height + 0.5
    at_x = abs(x - b.x) < 0.5 or abs(x - b.x - b.width) < 0.5
    at_y = abs(y - b.y) < 0.5 or abs(y - b.y - b.height) < 0.5
    return (inside_x and at_y) or (inside_y and at_x)


def test_wrap_breaks_at_spaces_then_after_dots_then_anywhere() -> None:
    assert wrap("session.project.customer_verified == True", 30) == [
        "session.project.",
        "customer_verified == True",
    ]
    assert wrap("a  b\nc", 30) == ["a b c"]
    assert wrap("x" * 65, 30) == ["x" * 30, "x" * 30, "x" * 5]
    long = wrap(" ".join(["word"] * 100), 10)
    assert len(long) == 8 and long[-1].endswith("…") and len(long[-1]) <= 10
    assert wrap("", 30) == [""]


def test_text_width_counts_wide_characters_twice_and_combining_ones_not() -> None:
    m = Metrics(char_width=8.0)
    assert text_width("abc", m) == 24.0
    assert text_width("日本", m) == 32.0
    assert text_width("e\u0301", m) == 8.0  # é as e + a combining accent


def test_a_flow_goes_down_with_each_caption_between_its_steps() -> None:
    nodes = [LNode(i, (i, f"collect {i}")) for i in ("ask", "check", "yes", "no", "end")]
    edges = [
        LEdge("ask", "check"),
        LEdge("check", "yes", ("session.project.customer_verified == True",)),
        LEdge("check", "no", ("else",)),
        LEdge("yes", "end"),
        LEdge("no", "end"),
        LEdge("no", "ask", ("retry",)),  # a loop back
        LEdge("no", "no", ("again",)),  # a step that goes to itself
    ]
    lay = layered(nodes, edges, "TB")
    check_picture(lay)
    n = lay.nodes
    assert n["ask"].y + n["ask"].height < n["check"].y
    assert n["check"].y + n["check"].height < min(n["yes"].y, n["no"].y)
    assert max(n["yes"].y, n["no"].y) + n["yes"].height < n["end"].y
    label = lay.edges[1].label
    assert label is not None and label.lines == ("session.project.customer_verified == True",)
    # the caption sits between the step and the one it leads to
    assert n["check"].y + n["check"].height <= label.y
    assert label.y + label.height <= n["yes"].y
    for i, e in enumerate(edges):
        r = lay.edges[i]
        assert r is not None and r.path.startswith("M ")
        if e.source != e.target:  # from the source's border to the target's
            assert on_border(r.points[0], n[e.source]), e
            assert on_border(r.points[-1], n[e.target]), e
    # the loop back is drawn from `no` up to `ask`: its arrow ends at `ask`
    back = lay.edges[5]
    assert back is not None and back.points[0][1] < n["no"].y + n["no"].height
    assert back.points[-1][1] >= n["ask"].y + n["ask"].height - 0.5
    self_loop = lay.edges[6]
    assert self_loop is not None and self_loop.label is not None
    assert self_loop.label.x >= n["no"].x + n["no"].width  # beside the step


def test_a_map_goes_left_to_right_and_an_unknown_node_is_left_out() -> None:
    nodes = [LNode("skill:a", ("a",)), LNode("field:a.x", ("a.x", "public text"))]
    edges = [LEdge("skill:a", "field:a.x"), LEdge("skill:a", "nowhere")]
    lay = layered(nodes, edges, "LR")
    check_picture(lay)
    a, x = lay.nodes["skill:a"], lay.nodes["field:a.x"]
    assert a.x + a.width < x.x
    assert lay.edges[1] is None
    empty = layered([], [], "TB")
    assert (empty.nodes, empty.edges) == ({}, [])


def test_the_same_graph_always_gets_the_same_layout() -> None:
    nodes = [LNode(f"n{i}", (f"node {i}",)) for i in range(30)]
    rnd = random.Random(7)
    edges = [LEdge(f"n{rnd.randrange(30)}", f"n{rnd.randrange(30)}") for _ in range(60)]
    first = layered(nodes, edges, "TB").to_json()
    assert layered(nodes, edges, "TB").to_json() == first


@pytest.mark.parametrize("seed", range(25))
def test_random_graphs_never_overlap(seed: int) -> None:
    rnd = random.Random(seed)
    n = rnd.randrange(1, 40)
    words = ["ask", "session.project.x", "noop", "collect destination", "日本語", "é", "END"]
    nodes = [
        LNode(
            f"n{i}",
            tuple(rnd.choice(words) * rnd.randrange(1, 3) for _ in range(rnd.randrange(1, 4))),
        )
        for i in range(n)
    ]
    edges = [
        LEdge(
            f"n{rnd.randrange(n)}",
            f"n{rnd.randrange(n)}",
            tuple(wrap(rnd.choice([*words, ""]), 12)) if rnd.random() < 0.4 else (),
        )
        for _ in range(rnd.randrange(0, 3 * n))
    ]
    direction = rnd.choice(["TB", "LR"])
    lay = layered(nodes, edges, direction, wrap=rnd.choice([None, 3]))  # type: ignore[arg-type]
    check_picture(lay)
    for e, r in zip(edges, lay.edges, strict=True):
        assert r is not None
        if e.source != e.target:
            assert on_border(r.points[0], lay.nodes[e.source])
            assert on_border(r.points[-1], lay.nodes[e.target])


def test_metrics_scale_with_the_font_and_keep_sane_bounds() -> None:
    m = Metrics.for_font(26, 15.6)
    assert (m.font_size, m.char_width, m.line_height) == (26.0, 15.6, 36.4)
    assert Metrics.for_font(1000).font_size == 64.0
    assert Metrics.for_font(13, 0.01).char_width == 13 * 0.3
    small, big = Metrics.for_font(13), Metrics.for_font(26)
    nodes = [LNode("a", ("a label",)), LNode("b", ("b",))]
    a, b = (
        layered(nodes, [LEdge("a", "b")], "TB", small),
        layered(nodes, [LEdge("a", "b")], "TB", big),
    )
    assert b.nodes["a"].width == pytest.approx(2 * a.nodes["a"].width)


# -- the 75-skill agent ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = agent75.generate(tmp_path_factory.mktemp("a75") / "agent75")
    return Project.load(root)


def test_the_33_step_flow_reads_top_down(agent: Project) -> None:
    g = graphs.flow_graph(agent, "payroll_payslip", "main")
    assert len(g.nodes) == 34
    lay = graphs.layout_of(g)
    check_picture(lay)
    by_id = lay.nodes
    # every edge that goes on to a later step goes down the page
    order = {n.id: i for i, n in enumerate(g.nodes)}
    for e in g.edges:
        if order[e.target] > order[e.source]:
            assert by_id[e.target].y > by_id[e.source].y, e
    captions = [r.label for r in lay.edges if r is not None and r.label is not None]
    assert len(captions) == sum(1 for e in g.edges if e.label)
    assert max(len(line) for c in captions for line in c.lines) <= graphs.LABEL_WRAP


def test_the_map_of_one_skill_wraps_its_fields_into_columns(agent: Project) -> None:
    g = graphs.agent_map(agent, "payroll_payslip")
    lay = graphs.layout_of(g)
    check_picture(lay)
    own = [n.id for n in g.nodes if n.attrs.get("owner") == "payroll_payslip"]
    assert len(own) == 14
    columns: dict[float, int] = {}
    for nid in own:
        columns[round(lay.nodes[nid].x)] = columns.get(round(lay.nodes[nid].x), 0) + 1
    assert len(columns) >= 2 and max(columns.values()) <= graphs.FOCUS_WRAP + 1
    # its own fields without the skill's prefix (the whole map keeps it)
    assert lay.nodes["field:payroll_payslip.employee_id"].lines[0] == "employee_id"
    whole = graphs.layout_of(graphs.agent_map(agent))
    check_picture(whole)
    assert whole.nodes["field:payroll_payslip.employee_id"].lines[0] == (
        "payroll_payslip.employee_id"
    )
