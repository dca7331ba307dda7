"""A corpus of scenario files with rasa-pro 3.21.0's verdict on each (tests/data/
eval_scenarios.txt: ``=== <stage>`` then the file; recorded with
``tests/oracle/engine_scenarios.py``): we reject exactly the files the evaluation rejects.
The corpus is a fixture project, so ``make oracle`` runs the engine's own loader on every
file again and also checks where we report each error (docs/oracle.md#eval-files)."""

from __future__ import annotations

from pathlib import Path

from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model.project import Project
from support import write_fixture

DATA = Path(__file__).parent / "data" / "eval_scenarios.txt"
# our codes for what the evaluation rejects (oracle/eval_compare.py holds the same list)
REJECTING = {
    "lsp.yaml.syntax_error",
    "eval.yaml.duplicate_key",
    "eval.scenario.invalid",
    "eval.scenario.not_a_scenario",
    "eval.scenario.calm_assertion",
    "eval.assertion.aborts_run",
}


def cases() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for chunk in DATA.read_text(encoding="utf-8").split("=== ")[1:]:
        stage, _, text = chunk.partition("\n")
        out.append((stage.strip(), text))
    return out


def test_the_corpus_covers_every_stage() -> None:
    stages = {stage for stage, _ in cases()}
    assert stages == {"ok", "load", "keys", "runtime"}
    assert len(cases()) >= 200


def test_we_reject_exactly_the_scenarios_the_evaluation_rejects(tmp_path: Path) -> None:
    corpus = cases()
    fixture = "".join(
        f"//- eval/scenarios/case_{i:03d}.yml\n{text}" for i, (_, text) in enumerate(corpus)
    )
    fx = write_fixture(tmp_path, fixture)
    found = project_diagnostics(Project.load(fx.root))
    wrong = []
    for i, (stage, text) in enumerate(corpus):
        path = fx.root / f"eval/scenarios/case_{i:03d}.yml"
        ours = {d.code for d in found.get(path, [])} & REJECTING
        if bool(ours) != (stage != "ok"):
            wrong.append(f"case {i} (engine: {stage}, ours: {sorted(ours)}):\n{text}")
    assert wrong == [], "\n".join(wrong)
