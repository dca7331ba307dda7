"""Scenario coverage (docs/features/eval.md#coverage): what counts as asserted, and
`mantle-lsp coverage` through the real command line on examples/telecom; `mantle-lsp
preview --scenario`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.ide.coverage import coverage
from mantle_lsp.model.project import Project
from support import write_fixture
from test_eval_editor import AGENT, HEAD

REPO = Path(__file__).resolve().parent.parent
TELECOM = REPO / "examples" / "telecom"


def asserted(tmp_path: Path, *scenarios: str) -> dict[str, list[str]]:
    """What each item's scenarios are (by file name), for the agent of test_eval_editor."""
    fixture = AGENT + "".join(f"//- eval/scenarios/s{i}.yml\n{s}" for i, s in enumerate(scenarios))
    fx = write_fixture(tmp_path, fixture)
    cov = coverage(Project.load(fx.root))
    return {i.name: [p.name for p in i.scenarios] for i in (*cov.items, *cov.steps)}


def test_positive_assertions_assert_what_they_name(tmp_path: Path) -> None:
    got = asserted(
        tmp_path,
        HEAD + "  goals:\n    assertions:\n"
        "      - ordered_block_entered: {skill_id: card, block_id: main}\n"
        "      - memory_was_cleared:\n          - name: card.reason\n"
        "      - tools_within_one_turn:\n          allow_extra_calls: true\n          calls:\n"
        "            - tool_executed: {tool_name: notify, source: local}\n"
        "            - tool_executed: {tool_name: lookup_customer, source: mcp, mcp_server: crm}\n",
        HEAD + "  goals:\n    assertions:\n      - sequencing:\n"
        "          - tool_executed: {tool_name: block_card, source: local, skill_id: travel}\n"
        "          - memory_was_set: project.tier\n",
    )
    assert got == {
        "card": ["s0.yml"],  # the skill of a block assertion
        "travel": ["s1.yml"],  # the skill of a tool run
        "card:main": ["s0.yml"],
        "block_card": ["s1.yml"],  # in a sequencing
        "notify": ["s0.yml"],  # among the calls of one turn
        "mcp/crm:lookup_customer": ["s0.yml"],
        "project.customer_verified": [],
        "project.account_number": [],
        "project.tier": ["s1.yml"],
        "card.reason": ["s0.yml"],  # cleared
        "card.blocked": [],
        "card.card_id": [],
    }


def test_what_asserts_nothing(tmp_path: Path) -> None:
    got = asserted(
        tmp_path,
        "scenario:\n  name: Nothing asserted\n  simulation_context: >\n"
        "    You want card and card.reason and block_card, said in prose.\n"
        "  setup:\n    initial_slots:\n      account_number: DE-1\n      card.card_id: x\n"
        "  goals:\n    assertions:\n"
        "      - memory_was_not_set:\n          - name: card.blocked\n"
        "      - bot_did_not_utter: {utter_name: utter_card_blocked}\n"
        "      - bot_uttered: {utter_name: utter_card_blocked}\n"
        "      - slot_was_set:\n          - name: tier\n"  # a CALM key: the batch is refused
        "    criteria:\n      - The agent names card.blocked and calls notify.\n"
        "    expected_tools:\n      - tool_called: notify\n",
        # the evaluation cannot load this one: nothing in it counts
        HEAD + "  goals:\n    assertions:\n      - skill_activated: {skill_id: card, extra: 1}\n"
        "      - skill_completed: {skill_id: travel}\n",
        "not_a_scenario: true\n",
    )
    assert all(v == [] for v in got.values()), got


def test_steps_only_where_assertions_name_one(tmp_path: Path) -> None:
    fixture = AGENT + "//- eval/scenarios/s.yml\n" + HEAD + (
        "  goals:\n    assertions:\n"
        "      - skill_interrupted: {skill_id: card, step_id: ask_reason}\n"
        "      - ordered_block_completed: {skill_id: card, block_id: main, step_id: END}\n"
    )  # fmt: skip
    fx = write_fixture(tmp_path, fixture)
    cov = coverage(Project.load(fx.root))
    assert [(i.name, i.asserted) for i in cov.steps] == [
        ("card:main.ask_reason", True),
        ("card:main.block", False),
        ("card:main.done", False),
    ]
    # steps are not in the percentage: the skill and its block, of 12
    assert (cov.asserted, len(cov.items)) == (2, 12)
    body = "  goals:\n    assertions:\n      - skill_completed: {skill_id: card}\n"
    no_step = write_fixture(tmp_path / "b", AGENT + "//- eval/scenarios/s.yml\n" + HEAD + body)
    assert coverage(Project.load(no_step.root)).steps == []


def test_the_skipped_scenarios_say_why(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        AGENT
        + "//- eval/scenarios/bad.yml\n"
        + HEAD
        + "  goals:\n    assertions:\n      - skill_activated: {skill_id: card, extra: 1}\n"
        + "//- eval/scenarios/notes.yml\ntitle: my notes\n",
    )
    cov = coverage(Project.load(fx.root))
    assert cov.scenarios == []
    assert [(p.name, why) for p, why in cov.skipped] == [
        ("bad.yml", "line 6: eval.scenario.invalid"),
        ("notes.yml", "not a scenario (no `scenario:` key)"),
    ]


# -- the command line ------------------------------------------------------------------------


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mantle_lsp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cov") / "examples"
    (root / "telecom").parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(TELECOM, root / "telecom")
    return root


def test_cli_text(examples: Path) -> None:
    r = run("coverage", "telecom", cwd=examples)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:5] == [
        "telecom: 4 scenarios assert 19 of 50 (38.0%)",
        "  skills             3/5      60.0%",
        "  ordered blocks     3/5      60.0%",
        "  tools              4/10     40.0%",
        "  memory fields      9/30     30.0%",
    ]
    assert "not asserted by any scenario:" in lines
    missing = [line.split() for line in lines[lines.index("not asserted by any scenario:") + 1 :]]
    assert ["skill", "bill_dispute", "skills/bill_dispute/skill.md:2"] in missing
    assert [
        "ordered",
        "block",
        "plan_change:apply_change",
        "skills/plan_change/skill.md:58",
    ] in missing
    assert ["tool", "lookup_account_summary", "tools/account_lookup.py:38"] in missing
    assert ["field", "project.customer_tier", "memory.yml:5"] in missing
    # asserted things are not listed; an initial slot or a negative check asserts nothing
    names = {m[-2] for m in missing}
    assert "roaming_pass.destination" not in names and "add_roaming_pass" not in names
    assert "project.account_number" in names  # only an initial slot names it
    assert "roaming_pass.pass_name" in names


def test_cli_json(examples: Path) -> None:
    r = run("coverage", "telecom", "--format", "json", cwd=examples)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    (p,) = data["projects"]
    assert (p["asserted"], p["total"], p["percent"]) == (19, 50, 38.0)
    assert p["kinds"] == {
        "skill": {"asserted": 3, "total": 5},
        "block": {"asserted": 3, "total": 5},
        "tool": {"asserted": 4, "total": 10},
        "field": {"asserted": 9, "total": 30},
    }
    assert sorted(p["scenarios"]) == [
        "eval/scenarios/edge_cases/roaming_declined.yml",
        "eval/scenarios/edge_cases/verification_locked.yml",
        "eval/scenarios/happy_path/plan_change_flex_25.yml",
        "eval/scenarios/happy_path/roaming_week_pass.yml",
    ]
    item = next(i for i in p["items"] if i["name"] == "roaming_pass")
    assert item == {
        "kind": "skill",
        "name": "roaming_pass",
        "path": "skills/roaming_pass/skill.md",
        "line": 2,
        "asserted": True,
        "scenarios": [
            "eval/scenarios/edge_cases/roaming_declined.yml",
            "eval/scenarios/happy_path/roaming_week_pass.yml",
        ],
    }
    assert p["steps"] == [] and p["skipped"] == []
    assert data["passed"] is True and data["fail_under"] is None


def test_cli_markdown(examples: Path) -> None:
    r = run("coverage", "telecom", "--format", "markdown", cwd=examples)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(
        "## Scenario coverage: `telecom`\n\n4 scenarios assert 19 of 50 (38.0%).\n\n"
        "| | Asserted | Total | % |\n| --- | ---: | ---: | ---: |\n| Skills | 3 | 5 | 60.0% |\n"
    )
    assert "- tool `open_dispute` (skills/bill_dispute/tools.py:10)\n" in r.stdout


def test_cli_fail_under(examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run("coverage", "telecom", "--fail-under", "38.1", cwd=examples)
    assert r.returncode == 1
    assert "coverage of telecom is 38.0%, under --fail-under 38.1%" in r.stderr
    assert r.stdout.startswith("telecom: 4 scenarios assert 19 of 50 (38.0%)\n")  # still shown
    for limit, status in [("38", 0), ("38.0", 0), ("100", 1), ("0", 0)]:
        assert main(["coverage", str(examples / "telecom"), "--fail-under", limit]) == status
        err = capsys.readouterr().err
        assert ("under --fail-under" in err) == bool(status)


def test_cli_folder_of_projects_and_bad_input(
    examples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(examples)
    assert main(["coverage", "--format", "json", "--fail-under", "50"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [p["root"] for p in data["projects"]] == ["telecom"]
    assert data["passed"] is False and data["fail_under"] == 50
    for argv, message in [
        (["coverage", str(examples / "missing")], "no such file or directory"),
        (["coverage", str(tmp_path)], "no Mantle project found"),
    ]:
        assert main(argv) == 2
        assert message in capsys.readouterr().err
    for bad in ("150", "-1", "half", "nan"):
        with pytest.raises(SystemExit) as exc:
            main(["coverage", str(examples), "--fail-under", bad])
        assert exc.value.code == 2
        assert "--fail-under" in capsys.readouterr().err


# -- preview --scenario --------------------------------------------------------------------------


def test_preview_starts_from_the_scenarios_initial_slots(examples: Path) -> None:
    prepaid = "Prepaid customers can move between Flex 10 and Flex 25 only."
    declined = "eval/scenarios/edge_cases/roaming_declined.yml"  # customer_tier: prepaid
    week = "eval/scenarios/happy_path/roaming_week_pass.yml"  # customer_tier: postpaid
    cwd = examples / "telecom"
    r = run("preview", "skills/plan_change", "--scenario", declined, cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert prepaid in r.stdout
    r = run("preview", "skills/plan_change", "--scenario", week, "--format", "json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    paragraphs = json.loads(r.stdout)["paragraphs"]
    cond = next(p for p in paragraphs if p["text"].startswith("Prepaid"))
    assert (cond["kept"], cond["reason"]) == (False, "false")
    assert r.stderr == ""


def test_preview_scenario_over_memory_and_its_errors(
    examples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = examples / "telecom"
    state = tmp_path / "state.yml"
    state.write_text("project: {customer_tier: prepaid}\n", encoding="utf-8")
    scenario = tmp_path / "s.yml"
    scenario.write_text(
        "scenario:\n  name: x\n  simulation_context: y\n  setup:\n    initial_slots:\n"
        "      project.customer_tier: business\n      nickname: Al\n",
        encoding="utf-8",
    )
    skill = str(cwd / "skills" / "plan_change")
    assert main(["preview", skill, "--memory", str(state), "--scenario", str(scenario)]) == 0
    out = capsys.readouterr()
    assert "Prepaid customers" not in out.out  # the scenario's business wins over prepaid
    assert "initial slots that set no memory field, left out: `nickname`" in out.err
    for text, message in [
        ("title: notes\n", "not a scenario"),
        ("scenario: [\n", "not valid YAML"),
    ]:
        scenario.write_text(text, encoding="utf-8")
        assert main(["preview", skill, "--scenario", str(scenario)]) == 2
        assert message in capsys.readouterr().err
    assert main(["preview", skill, "--scenario", str(tmp_path / "none.yml")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
