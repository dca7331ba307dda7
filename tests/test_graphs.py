"""``mantle-lsp graph`` and ``ide/graphs.py``: the flow of an ordered block and the agent
map, as JSON, Mermaid and DOT, on a small project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide import graphs
from mantle_lsp.model.project import Project
from support import write_fixture

FIXTURE = """\
//- memory.yml
verified:
  type: bool
//- skills/order/memory.yml
schema:
  public:
    size:
      type: text
      description: The pizza size.
  private:
    confirmed:
      type: bool
//- skills/order/tools.py
from rasa.mantle import tool

@tool
def place_order(size: str, context) -> str:
    context.memory.set("order.confirmed", True)
    return "ok"
//- skills/order/skill.md
---
description: Takes a pizza order.
---
Take the order.

:::ordered_block id=main
steps:
  - id: ask_size
    collect: size
    utterance: utter_ask_size
  - id: check
    noop: true
    next:
      - if: "session.project.verified == True"
        then: place
      - else: END
  - id: orphan
    action: utter_nope
  - id: place
    execute_tool: place_order
    parameters:
      size: session.order.size
    next: END
:::
//- skills/greet/skill.md
---
description: Greets the user.
---
if: session.order.size != None
Say hello.

:::ordered_block id=main
steps:
  - id: mark
    set_memory:
      verified: true
  - id: hello
    link: order
:::
//- skills/order/responses.yml
responses:
  utter_ask_size:
    - text: Which size?
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_fixture(tmp_path, FIXTURE).root


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["graph", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_flow_as_mermaid_marks_branches_end_unreachable_and_problem_steps(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        [str(root), "--skill", "order", "--block", "main", "--format", "mermaid"], capsys
    )
    assert code == 0
    assert out == (
        "%% order: main\n"
        "flowchart TD\n"
        '  n0[/"ask_size<br/>collect size"/]\n'
        '  n1{"check<br/>noop"}\n'
        '  n2["orphan<br/>action utter_nope"]\n'
        '  n3["place<br/>execute_tool place_order"]\n'
        '  n4(("END"))\n'
        "  n0 --> n1\n"
        '  n1 -->|"session.project.verified == True"| n3\n'
        '  n1 -->|"else"| n4\n'
        "  n2 --> n3\n"
        "  n3 --> n4\n"
        "  classDef unreachable stroke-dasharray: 5 5,opacity:0.6\n"
        "  class n2 unreachable\n"
        "  classDef problem stroke:#d33,stroke-width:3px\n"
        "  class n2 problem\n"
    )


def test_flow_as_dot_from_the_skill_folder(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [str(root / "skills" / "order"), "--kind", "flow", "--format", "dot"], capsys
    )
    assert code == 0
    assert out == (
        'digraph "order: main" {\n'
        "  rankdir=TB;\n"
        '  node [shape=box, fontname="Helvetica"];\n'
        '  "step:ask_size" [label="ask_size\\ncollect size", shape=parallelogram];\n'
        '  "step:check" [label="check\\nnoop", shape=diamond];\n'
        '  "step:orphan" [label="orphan\\naction utter_nope", shape=box, '
        "style=dashed, color=red];\n"
        '  "step:place" [label="place\\nexecute_tool place_order", shape=box];\n'
        '  "END" [label="END", shape=doublecircle];\n'
        '  "step:ask_size" -> "step:check";\n'
        '  "step:check" -> "step:place" [label="session.project.verified == True"];\n'
        '  "step:check" -> "END" [label="else"];\n'
        '  "step:orphan" -> "step:place";\n'
        '  "step:place" -> "END";\n'
        "}\n"
    )


def test_flow_as_json_has_ids_kinds_and_source_locations(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(root / "skills" / "greet" / "skill.md"), "--kind", "flow"], capsys)
    assert code == 0

    def loc(l1: int, c1: int, l2: int, c2: int) -> dict[str, object]:
        return {
            "path": "skills/greet/skill.md",
            "range": {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}},
        }

    assert json.loads(out) == {
        "kind": "flow",
        "title": "greet: main",
        "skill": "greet",
        "block": "main",
        "nodes": [
            {
                "id": "step:mark",
                "kind": "set_memory",
                "label": "mark",
                "detail": "set_memory verified",
                "unreachable": False,
                "problems": [],
                "location": loc(8, 4, 10, 20),
            },
            {
                "id": "step:hello",
                "kind": "link",
                "label": "hello",
                "detail": "link order",
                "unreachable": False,
                "problems": [],
                "location": loc(11, 4, 12, 15),
            },
        ],
        "edges": [{"source": "step:mark", "target": "step:hello", "kind": "sequence"}],
    }


def test_flow_json_lists_the_problems_of_a_step(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(root), "--skill", "order", "--block", "main"], capsys)
    assert code == 0
    nodes = {n["id"]: n for n in json.loads(out)["nodes"]}
    assert [n for n in nodes if nodes[n]["unreachable"]] == ["step:orphan"]
    assert [p["code"] for p in nodes["step:orphan"]["problems"]] == [
        "lsp.flow.unreachable_step",
        "mantle.validation.response.missing",
    ]
    assert nodes["END"]["location"]["range"]["start"] == {"line": 23, "character": 0}


def test_agent_map_as_mermaid(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(root), "--format", "mermaid"], capsys)
    assert code == 0
    assert out == (
        "%% agent map\n"
        "flowchart LR\n"
        '  n0[["greet"]]\n'
        '  n1[["order"]]\n'
        '  n2(["order.size<br/>public text"])\n'
        '  n3(["order.confirmed<br/>private bool"])\n'
        '  n4{{"place_order<br/>tool"}}\n'
        '  n5(["project.verified<br/>project bool"])\n'
        '  n1 -->|"uses"| n4\n'
        '  n0 -.->|"link"| n1\n'
        '  n2 -.->|"reads: condition"| n0\n'
        '  n2 -.->|"reads: execute_param"| n1\n'
        '  n5 -.->|"reads: condition"| n1\n'
        '  n0 -->|"writes: set_memory"| n5\n'
        '  n1 -->|"writes: tool_set"| n3\n'
        '  n1 -->|"writes: collect"| n2\n'
        "  classDef problem stroke:#d33,stroke-width:3px\n"
        "  class n1 problem\n"
    )


def test_agent_map_of_one_skill_as_dot(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(root), "--skill", "greet", "--format", "dot"], capsys)
    assert code == 0
    assert out == (
        'digraph "agent map: greet" {\n'
        "  rankdir=LR;\n"
        '  node [shape=box, fontname="Helvetica"];\n'
        '  "skill:greet" [label="greet", shape=box3d];\n'
        '  "skill:order" [label="order", shape=box3d, color=red];\n'
        '  "field:order.size" [label="order.size\\npublic text", shape=ellipse];\n'
        '  "field:project.verified" [label="project.verified\\nproject bool", shape=ellipse];\n'
        '  "skill:greet" -> "skill:order" [label="link", style=dashed];\n'
        '  "field:order.size" -> "skill:greet" [label="reads: condition", style=dashed];\n'
        '  "skill:greet" -> "field:project.verified" [label="writes: set_memory"];\n'
        "}\n"
    )


def test_agent_map_json_fields_carry_scope_type_and_location(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(root), "--kind", "map"], capsys)
    assert code == 0
    nodes = {n["id"]: n for n in json.loads(out)["nodes"]}
    assert nodes["field:order.confirmed"] == {
        "id": "field:order.confirmed",
        "kind": "field",
        "label": "order.confirmed",
        "detail": "private bool",
        "owner": "order",
        "scope": "private",
        "type": "bool",
        "writers": [],
        "problems": [],
        "location": {
            "path": "skills/order/memory.yml",
            "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 13}},
        },
    }
    assert nodes["tool:order/place_order"]["location"]["path"] == "skills/order/tools.py"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--skill", "nope"], "no skill 'nope' in this project (skills: greet, order)"),
        (["--skill", "order", "--block", "other"], "skill 'order' has no ordered block 'other'"),
        (["--kind", "flow"], "a flow needs a skill"),
        (["--block", "main", "--kind", "map"], "--block is for --kind flow"),
    ],
)
def test_errors_say_what_exists(
    root: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run([str(root), *args], capsys)
    assert code == 2
    assert out == ""
    assert message in err


def test_not_a_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([str(tmp_path)], capsys)
    assert code == 2
    assert "no Mantle project found" in err


def test_block_at_and_stable_ids_for_steps_without_ids(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/s/skill.md
---
description: Two blocks.
---
Text.

:::ordered_block id=first
steps:
  - id: a
    action: utter_a
    next: END
:::

:::ordered_block id=second
steps:
  - action: utter_b$0
  - id: b
    action: utter_b
:::
""",
    )
    project = Project.load(fx.root)
    assert fx.cursor is not None
    path = fx.root / fx.cursor[0]
    assert graphs.block_at(project, path, fx.cursor[1]) == ("s", "second")
    assert graphs.block_at(project, path, 0) is None
    g = graphs.flow_graph(project, "s", "second")
    assert [n.id for n in g.nodes] == ["step#1", "step:b", "END"]
    assert [(e.source, e.target, e.kind) for e in g.edges] == [
        ("step#1", "step:b", "sequence"),
        ("step:b", "END", "sequence"),
    ]


@pytest.mark.parametrize(
    "where", ["skills/greet", "skills/greet/skill.md", "skills/order/tools.py"]
)
def test_a_skill_path_picks_that_skill_for_the_map_too(
    root: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    # as `--help` says: a skill's folder or one of its files picks that skill
    sid = where.split("/")[1]
    code, out, _ = run([str(root / where), "--format", "dot"], capsys)
    assert code == 0
    assert out.startswith(f'digraph "agent map: {sid}" {{\n')
    code, expected, _ = run([str(root), "--skill", sid, "--format", "dot"], capsys)
    assert out == expected
    # --skill wins over the path; the project's folder keeps the whole map
    code, out, _ = run([str(root / where), "--skill", "order", "--format", "json"], capsys)
    assert json.loads(out)["title"] == "agent map: order"
    code, out, _ = run([str(root), "--format", "json"], capsys)
    assert json.loads(out)["title"] == "agent map"


def test_a_folder_of_several_projects_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_fixture(tmp_path / "one", FIXTURE)
    write_fixture(tmp_path / "two", FIXTURE)
    code, out, err = run([str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert "holds several projects; name one" in err and "/one, " in err and err.endswith("/two)\n")


# -- SVG (issue 33) ----------------------------------------------------------------------------
SVG_NS = "{http://www.w3.org/2000/svg}"


def svg_texts(svg: str) -> list[tuple[str, float, tuple[float, float, float, float]]]:
    """Each text of an SVG: its words, font size and box (from its position, anchor and an
    advance width of 0.62 em: what the layout assumes for a monospace font)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    out = []
    shift = 0.0
    for g in root.iter(f"{SVG_NS}g"):
        t = g.get("transform", "")
        if t.startswith("translate(0,"):
            shift = float(t[len("translate(0,") : -1])
    body = {id(e) for g in root.iter(f"{SVG_NS}g") if g.get("transform") for e in g.iter()}
    for t in root.iter(f"{SVG_NS}text"):
        size = float(t.get("font-size", "0"))
        x, y = float(t.get("x", "0")), float(t.get("y", "0")) + (shift if id(t) in body else 0)
        w = len(t.text or "") * size * 0.62
        left = x - w / 2 if t.get("text-anchor") == "middle" else x
        out.append((t.text or "", size, (left, y - size * 0.8, left + w, y + size * 0.25)))
    return out


def text_overlaps(texts: list[tuple[str, float, tuple[float, float, float, float]]]) -> list[str]:
    found = []
    for i, (a, _, (ax0, ay0, ax1, ay1)) in enumerate(texts):
        for b, _, (bx0, by0, bx1, by1) in texts[i + 1 :]:
            if min(ax1, bx1) - max(ax0, bx0) > 0.5 and min(ay1, by1) - max(ay0, by0) > 0.5:
                found.append(f"{a!r} / {b!r}")
    return found


def test_flow_as_svg_at_its_natural_size_readable_and_marked(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        [str(root), "--skill", "order", "--block", "main", "--format", "svg"], capsys
    )
    assert code == 0 and out.startswith("<svg ")
    texts = svg_texts(out)
    assert [t for t, _, _ in texts][:1] == ["order: main"]  # the title
    words = [t for t, _, _ in texts]
    for want in ("ask_size", "collect size", "session.project.verified ==", "True", "else", "END"):
        assert want in words, want
    assert min(size for _, size, _ in texts) >= graphs.SVG_MIN_FONT
    assert text_overlaps(texts) == []
    assert 'class="node kind-action problem-error unreachable" data-id="step:orphan"' in out
    assert "<title>orphan — action utter_nope\nunreachable" in out  # the tooltip
    # the natural size: width and height are the viewBox's, nothing scaled
    head = out.split(">", 1)[0]
    w, h = head.split('width="')[1].split('"')[0], head.split('height="')[1].split('"')[0]
    assert f'viewBox="0 0 {w} {h}"' in head


def test_map_as_svg_has_a_legend_and_marks_the_skill_with_a_problem(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([str(root), "--format", "svg"], capsys)
    assert code == 0 and err == ""  # a small map: no hint about --output-dir
    words = [t for t, _, _ in svg_texts(out)]
    assert "writes (skill → field)" in words and "reads (field → skill)" in words
    assert 'class="node kind-skill problem-error" data-id="skill:order"' in out
    assert text_overlaps(svg_texts(out)) == []


def test_svg_escapes_what_it_shows(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        """\
//- skills/s/skill.md
---
description: x
---
:::ordered_block id=main
steps:
  - id: a
    noop: true
    next:
      - if: "session.s.x < 3 and session.s.y == '<b>&'"
        then: END
      - else: END
:::
""",
    )
    import xml.etree.ElementTree as ET

    svg = graphs.to_svg(graphs.flow_graph(Project.load(fx.root), "s", "main"))
    ET.fromstring(svg)  # well-formed
    assert "session.s.x &lt; 3 and" in svg and "&lt;b&gt;&amp;" in svg


def test_output_dir_writes_one_svg_per_skill_and_an_index(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "pictures"
    code, out, err = run([str(root), "--output-dir", str(out_dir)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == ["greet.svg", "index.md", "order.svg"]
    greet = (out_dir / "greet.svg").read_text(encoding="utf-8")
    assert "<title>agent map: greet</title>" in greet
    assert 'problem-error" data-id="skill:order"' in greet  # as `check` reports it
    index = (out_dir / "index.md").read_text(encoding="utf-8")
    assert "## agent map: order\n\n![agent map: order](order.svg)\n" in index
    assert out.splitlines()[-1].endswith("index.md")
    # flows: one per ordered block, in a folder per skill; nothing else in DIR is touched
    (out_dir / "keep.txt").write_text("mine", encoding="utf-8")
    code, _, err = run([str(root), "--kind", "flow", "--output-dir", str(out_dir)], capsys)
    assert code == 0, err
    assert (out_dir / "order" / "main.svg").read_text(encoding="utf-8").startswith("<svg ")
    assert (out_dir / "greet" / "main.svg").exists()
    assert (out_dir / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert (out_dir / "greet.svg").exists()  # the map's pictures stay


def test_output_dir_refuses_a_link_out_of_it_and_other_formats(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir, outside = tmp_path / "pictures", tmp_path / "outside"
    out_dir.mkdir()
    outside.mkdir()
    (out_dir / "order").symlink_to(outside, target_is_directory=True)
    code, _, err = run([str(root), "--kind", "flow", "--output-dir", str(out_dir)], capsys)
    assert code == 2 and "could not write" in err and "a symbolic link leads outside" in err
    assert list(outside.iterdir()) == []
    code, _, err = run([str(root), "--format", "json", "--output-dir", str(out_dir)], capsys)
    assert code == 2 and "--output-dir writes SVG files" in err


HOPS = """\
//- memory.yml
flag:
  type: bool
note:
  type: text
//- skills/writer/skill.md
---
description: Sets the flag.
---
:::ordered_block id=main
steps:
  - id: set
    set_memory:
      flag: true
:::
//- skills/reader/skill.md
---
description: Reads the flag.
---
if: session.project.flag == True
Mind the flag.

:::ordered_block id=main
steps:
  - id: note
    set_memory:
      note: hello
  - id: help
    call: helper
:::
//- skills/consumer/skill.md
---
description: Reads the note.
---
if: session.project.note != None
Read the note.
//- skills/helper/skill.md
---
description: Helps.
---
:::ordered_block id=main
steps:
  - id: deeper
    call: deeper
:::
//- skills/deeper/skill.md
---
description: Deep.
---
Text.
//- skills/boss/skill.md
---
description: Calls the reader.
---
:::ordered_block id=main
steps:
  - id: go
    call: reader
:::
//- skills/top/skill.md
---
description: Calls the boss.
---
:::ordered_block id=main
steps:
  - id: go
    call: boss
:::
"""


def test_two_hops_follow_the_data_and_the_calls_one_step_further(tmp_path: Path) -> None:
    project = Project.load(write_fixture(tmp_path, HOPS).root)
    one = graphs.agent_map(project, "reader")
    assert one.hops == 1 and one.title == "agent map: reader"
    assert sorted(n.id for n in one.nodes if n.kind == "skill") == [
        "skill:boss",
        "skill:helper",
        "skill:reader",
    ]
    two = graphs.agent_map(project, "reader", hops=2)
    assert sorted(n.id for n in two.nodes if n.kind == "skill") == [
        "skill:boss",
        "skill:consumer",  # reads what it writes
        "skill:deeper",  # its callee calls it
        "skill:helper",
        "skill:reader",
        "skill:top",  # calls its caller
        "skill:writer",  # writes what it reads
    ]
    assert {"source": "skill:writer", "target": "field:project.flag", "kind": "writes"} in [
        {"source": e.source, "target": e.target, "kind": e.kind} for e in two.edges
    ]
    assert two.omitted == 0


def test_two_hops_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = Project.load(write_fixture(tmp_path, HOPS).root)
    monkeypatch.setattr(graphs, "MAX_SECOND_HOP", 1)
    two = graphs.agent_map(project, "reader", hops=2)
    assert two.omitted == 3
    assert len([n for n in two.nodes if n.kind == "skill"]) == 4
    data = graphs.to_json(two, lambda loc: {})
    assert (data["hops"], data["omitted"]) == (2, 3)


def test_hops_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_fixture(tmp_path, HOPS).root
    code, out, _ = run([str(root), "--skill", "reader", "--hops", "2"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["hops"] == 2 and "skill:writer" in [n["id"] for n in data["nodes"]]


@pytest.mark.timeout(300)  # 1,000 skills, and an SVG each: ~30 s on a quiet machine
def test_problem_marks_at_1000_skills(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole map and a skill's picture mark the skill with a problem, at 1,000 skills."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from generate import generate

    big = generate(tmp_path / "big", 1000)
    md = big / "skills/s777/skill.md"
    md.write_text(md.read_text(encoding="utf-8") + "\nAlso mind @memory.s777.nope.\n", "utf-8")
    code, out, err = run([str(big), "--format", "svg"], capsys)
    assert code == 0 and "--output-dir DIR" in err  # a large map: the hint
    marked = [line for line in out.splitlines() if "problem-error" in line and "data-id" in line]
    assert marked == ['<g class="node kind-skill problem-error" data-id="skill:s777">']
    code, out, _ = run([str(big), "--output-dir", str(tmp_path / "pics")], capsys)
    assert code == 0
    assert 'problem-error" data-id="skill:s777"' in (tmp_path / "pics/s777.svg").read_text("utf-8")
    assert (
        "problem-error" not in (tmp_path / "pics/s776.svg").read_text("utf-8").split("</style>")[1]
    )
