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
