"""`make bench` measures a generated project that must be clean (its first workspace pull is
refused otherwise): every check, hints included, stays silent on it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model.project import Project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate, generate_realistic


@pytest.mark.parametrize("make", [generate, generate_realistic], ids=["dense", "realistic"])
def test_the_generated_bench_project_has_no_diagnostic_at_all(
    tmp_path: Path, make: Callable[[Path, int], Path]
) -> None:
    root = make(tmp_path / "gen", 12)
    found = {
        (p.relative_to(root).as_posix(), d.code)
        for p, ds in project_diagnostics(Project.load(root)).items()
        for d in ds
    }
    assert found == set()
