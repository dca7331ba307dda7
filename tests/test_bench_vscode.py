"""`make bench` gates issue 32's real-VS-Code targets on the figures `make e2e` measured
(.cache/e2e/cold-start.json, bench/vscode.py): met / not met per target, "not measured"
without the file, and `make bench-vscode` rewrites that section of the results alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import vscode


def _figures(activation: float, squiggle: float, references: float) -> dict:
    run = {
        "load": 1.2,
        "activate_call_to_server_s": activation,
        "first_squiggle_s": squiggle,
        "first_references_s": references,
        "server_to_squiggle_s": 0.7,
    }
    return {
        "measured": "2026-12-03T13:00:00Z",
        "server": "bundled server",
        "runs": [run, run, run],
        "median": {
            "activate_call_to_server_s": activation,
            "first_squiggle_s": squiggle,
            "first_references_s": references,
            "server_to_squiggle_s": 0.7,
        },
        "first_open": {"activate_call_to_server_s": 0.9},
    }


def test_without_the_e2e_figures_every_target_is_not_measured(tmp_path: Path) -> None:
    data = vscode.load(tmp_path / "missing.json")
    assert data is None
    text = vscode.section(data, tmp_path / "missing.json")
    assert text.startswith(vscode.HEADING)
    assert text.count("| not measured |") == 3
    assert "met" not in text.replace("not measured", "")


def test_each_target_is_met_or_not_met_on_its_median(tmp_path: Path) -> None:
    path = tmp_path / "cold-start.json"
    path.write_text(json.dumps(_figures(0.05, 2.4, 0.5)), encoding="utf-8")
    got = {t.key: met for t, _, met in vscode.verdicts(vscode.load(path))}
    assert got == {
        "activate_call_to_server_s": True,
        "first_squiggle_s": False,
        "first_references_s": True,  # at the limit counts as met
    }
    text = vscode.section(vscode.load(path), path)
    assert "| 2.40 s | 2.40, 2.40, 2.40 | **not met** |" in text
    assert text.count("**met**") == 2
    assert "| server process started → first squiggle | 0.70 s |" in text


def test_a_broken_file_is_not_measured(tmp_path: Path) -> None:
    path = tmp_path / "cold-start.json"
    path.write_text('{"runs": [', encoding="utf-8")
    assert vscode.load(path) is None


def test_bench_vscode_rewrites_its_section_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "cold-start.json"
    results = tmp_path / "performance-results.md"
    results.write_text("# Benchmark results\n\n| a | b |\n\nMachine: x.\n", encoding="utf-8")
    vscode.main(["--json", str(path), "--results", str(results)])  # not measured yet
    assert "not measured" in results.read_text(encoding="utf-8")
    path.write_text(json.dumps(_figures(0.05, 1.0, 0.2)), encoding="utf-8")
    vscode.main(["--json", str(path), "--results", str(results)])
    vscode.main(["--json", str(path), "--results", str(results)])
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Benchmark results\n\n| a | b |\n\nMachine: x.\n")
    assert text.count(vscode.HEADING) == 1
    assert "not measured" not in text
    assert text.count("**met**") == 3
    # a section followed by another keeps the one after it
    later = text + "\n## Later\n\nkept\n"
    assert vscode.replace_section(later, "NEW\n").endswith("NEW\n\n## Later\n\nkept\n")
