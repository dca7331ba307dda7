"""The semantic core asked directly: ``model/semantics.py`` is the one place that answers
who may read and write a field, who does, which steps run, which profile applies. These
tests ask it the questions the rules, hover, graphs and fixes ask, on fixture projects,
and check the answers agree with each other."""

from __future__ import annotations

from pathlib import Path

from mantle_lsp.model.engine import PROFILES, profile_named
from mantle_lsp.model.project import Project
from mantle_lsp.model.semantics import Semantics
from support import write_fixture


def load(tmp_path: Path, fixture: str) -> Semantics:
    write_fixture(tmp_path, fixture)
    return Semantics(Project.load(tmp_path))


# -- the engine profile ------------------------------------------------------------------------


def test_the_profile_is_a_fact_of_the_project_with_named_capabilities(tmp_path: Path) -> None:
    sem = load(tmp_path, "//- requirements.txt\nrasa-pro==3.22.0\n")
    p = sem.profile
    assert (p.name, p.has_mutable, p.has_writable_by) == ("3.22", True, True)
    assert p.execute_only_tools == ("record_handoff",)
    assert p.checks_agent_language and p.warns_shadowed_bare_set
    sem.p.engine_override = "3.21"
    p = Semantics(sem.p).profile
    assert (p.name, p.field_attributes, p.execute_only_tools) == ("3.21", (), ())
    assert not (p.has_mutable or p.has_writable_by or p.checks_agent_language)


def test_every_profile_has_its_capabilities_and_an_unknown_name_the_default() -> None:
    assert [profile_named(n).name for n in PROFILES] == list(PROFILES)
    assert profile_named("9.99") == profile_named("3.21")
