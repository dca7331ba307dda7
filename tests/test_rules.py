"""The rule package: every code is made in one place a newcomer can find with grep, every
rule says what it emits, reports on and reads, and runs exactly where it should."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from mantle_lsp.ide.codes import REGISTRY
from mantle_lsp.ide.diagnostics import file_diagnostics, project_diagnostics, rechecked
from mantle_lsp.ide.rules import RULES
from mantle_lsp.model.project import Project
from support import write_fixture

SERVER = Path(__file__).resolve().parents[1] / "server" / "mantle_lsp"
RULES_DIR = SERVER / "ide" / "rules"
CODE = re.compile(r'"((?:mantle|skill|responses|config|eval|lsp)\.[a-z_0-9.]+)"')

# Codes two rule modules emit, because the engine uses one code for two checks.
SHARED = {
    # a response variant's condition (conditions) and a `set:` button target (responses)
    "mantle.validation.response.unknown_memory_key": {"conditions", "responses"},
    # no skill.md (structure), and a 3.22 attribute of the wrong type (profile)
    "mantle.validation.skill.failed_to_load": {"structure", "profile"},
    # a wrongly typed 3.22 attribute in the project file (profile); the parser's shapes
    "lsp.memory.invalid_shape": {"profile"},
}


def _module(rule_name: str) -> str:
    return rule_name.split(".", 1)[0]


def test_each_code_is_declared_by_one_module_and_written_there_as_a_literal() -> None:
    owners: dict[str, set[str]] = defaultdict(set)
    for r in RULES:
        src = (RULES_DIR / f"{_module(r.name)}.py").read_text(encoding="utf-8")
        for code in r.codes:
            owners[code].add(_module(r.name))
            assert f'"{code}"' in src, f"{code} is not written as a literal in {r.name}"
            assert code in REGISTRY, f"{r.name} declares {code}, which is not registered"
    shared = {c: ms for c, ms in owners.items() if len(ms) > 1}
    assert shared == {c: ms for c, ms in SHARED.items() if len(ms) > 1}


def test_no_code_is_built_at_run_time() -> None:
    for path in RULES_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                head = node.values[0] if node.values else None
                if isinstance(head, ast.Constant) and isinstance(head.value, str):
                    assert not CODE.match(f'"{head.value}'), f"{path.name}: {head.value}"


def test_every_registered_code_has_a_maker() -> None:
    """A code is made by a rule, or by a parser, the settings or the suppressions."""
    declared = {c for r in RULES for c in r.codes}
    elsewhere = set()
    for path in SERVER.rglob("*.py"):
        if RULES_DIR in path.parents or path.name == "codes.py":
            continue
        elsewhere |= set(CODE.findall(path.read_text(encoding="utf-8")))
    orphans = sorted(set(REGISTRY) - declared - elsewhere)
    assert orphans == []


def test_rules_declare_what_they_report_on() -> None:
    for r in RULES:
        assert r.codes and r.scopes, r.name
        for scope in r.scopes:
            assert scope.reports_on and scope.reads, r.name
            assert scope.scope in ("skill", "project", "anchor"), r.name
        assert len({s.scope for s in r.scopes}) == len(r.scopes), r.name
        assert r.summary, f"{r.name} has no docstring"


def test_a_check_of_skills_and_of_the_project_is_one_rule_with_two_scopes() -> None:
    """No code is declared by two rules of one module unless they check different things
    the engine reports under one code (the twins of a skill check and a project check are
    one rule with its scopes)."""
    by_module: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in RULES:
        for code in r.codes:
            by_module[(_module(r.name), code)].add(r.name)
    twice = {k: v for k, v in by_module.items() if len(v) > 1}
    # a skill folder without skill.md, a project without skills (structure)
    assert twice == {
        ("structure", "mantle.validation.skill.failed_to_load"): {
            "structure.project_layout",
            "structure.skill_identity",
        }
    }


BROKEN = """\
//- memory.yml
tier:
  type: text
  description: Not exposed.
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/skill.md
---
description: Card.
---
Read @memory.card.reasn and @memory.project.tir.
//- skills/other/skill.md
---
description: Other.
---
if: session.card.nope
Text.
"""


def test_a_file_gets_the_same_diagnostics_alone_as_in_the_whole_project(tmp_path: Path) -> None:
    write_fixture(tmp_path, BROKEN)
    proj = Project.load(tmp_path)
    whole = project_diagnostics(proj)
    assert sum(len(ds) for ds in whole.values()) >= 4
    for path, ds in whole.items():
        assert file_diagnostics(proj, [path]).get(path, []) == ds, path


def test_what_rules_read_decides_which_project_files_are_rechecked(tmp_path: Path) -> None:
    write_fixture(
        tmp_path,
        "//- memory.yml\ntier:\n  type: text\n"
        "//- skills/card/skill.md\n---\ndescription: Card.\n---\nHelp.\n"
        "//- skills/card/tools.py\ndef helper():\n    pass\n"
        "//- skills/other/skill.md\n---\ndescription: Other.\n---\nHelp.\n",
    )
    proj = Project.load(tmp_path)
    rel = {p: p.relative_to(tmp_path).as_posix() for p in proj.files}

    def after(*changed: str) -> list[str]:
        return sorted(rel[p] for p in rechecked(proj, [tmp_path / c for c in changed]))

    # agent.yml's model groups are read against integrations.yml
    assert "agent.yml" in after("integrations.yml")
    # a tool module may be the only writer of a project field (the unused-field hint), and
    # of a field a precondition's `satisfied_when` reads (constant_never_written)
    assert after("skills/card/tools.py") == ["agent.yml", "memory.yml", "skills/card/tools.py"]
    # nothing reads project memory.yml's content but the rules of project files and skills
    # (the index adds the skills that refer to its fields)
    assert "skills/other/skill.md" not in after("memory.yml")


def test_a_lib_helper_edit_rechecks_every_tool_module(tmp_path: Path) -> None:
    """Which tool modules import a lib helper is not indexed: an edit of one re-checks all of
    them (a helper that stops parsing is reported where a tool imports it), and the files
    whose findings depend on what code may write (a condition on a field nothing writes,
    constant_never_written, in a skill.md)."""
    write_fixture(
        tmp_path,
        "//- lib/__init__.py\n//- lib/keys.py\nNOTE = 'note'\n"
        "//- skills/card/skill.md\n---\ndescription: Card.\n---\nHelp.\n"
        "//- skills/card/tools.py\nfrom lib.keys import NOTE\n"
        "//- tools/shared.py\nfrom lib.keys import NOTE\n",
    )
    proj = Project.load(tmp_path)
    got = rechecked(proj, [tmp_path / "lib/keys.py"])
    assert {tmp_path / "skills/card/tools.py", tmp_path / "tools/shared.py"} <= got


def test_a_project_fields_writers_are_rechecked_together(tmp_path: Path) -> None:
    """A write to a project field that appears or vanishes in one skill changes what the
    other skills' writers are told (lsp.memory.project_field_written_twice): an edit
    gives what a fresh check gives."""
    from mantle_lsp.model.source import source_from_text

    write_fixture(
        tmp_path,
        "//- memory.yml\ncustomer_id:\n  type: text\n"
        "//- skills/billing/skill.md\n---\ndescription: Billing.\n---\nBill.\n\n"
        ":::ordered_block id=main\nsteps:\n  - id: reset\n    set_memory:\n"
        "      customer_id: guest\n:::\n"
        "//- skills/login/skill.md\n---\ndescription: Log in.\n---\nUse @tool.log_in.\n"
        "//- skills/login/tools.py\nfrom rasa.mantle.tools.decorator import tool\n\n\n"
        '@tool(description="Log in.")\nasync def log_in(context=None):\n'
        '    context.memory.set("project.customer_id", "c-1")\n',
    )
    proj = Project.load(tmp_path)
    billing = tmp_path / "skills/billing/skill.md"
    tools = tmp_path / "skills/login/tools.py"

    def twice(found: dict[Path, list]) -> list[str]:  # type: ignore[type-arg]
        return [
            p.relative_to(tmp_path).as_posix()
            for p, ds in found.items()
            for d in ds
            if d.code == "lsp.memory.project_field_written_twice"
        ]

    assert twice(project_diagnostics(proj)) == ["skills/login/tools.py"]
    # billing's write goes away: login's write is the only one left
    text = billing.read_text().replace("    set_memory:\n      customer_id: guest\n", "")
    text = text.replace("  - id: reset\n", "  - id: reset\n    noop: true\n")
    affected = proj.set_source(billing, source_from_text(billing, text))
    assert tools in affected
    assert twice(file_diagnostics(proj, affected)) == twice(project_diagnostics(proj)) == []


def test_each_fix_is_beside_the_rule_that_emits_its_code() -> None:
    """A rule module's ``FIXES`` fix only codes a rule of that module emits; the codes a
    parser emits have theirs in ``rules/parsed.py``. Every fixed code is registered."""
    from mantle_lsp.ide import rules
    from mantle_lsp.ide.rules import FIXES

    declared: dict[str, set[str]] = defaultdict(set)
    for r in RULES:
        declared[_module(r.name)] |= r.codes
    parsers = set()
    for path in (SERVER / "syntax").glob("*.py"):
        parsers |= set(CODE.findall(path.read_text(encoding="utf-8")))
    seen = set()
    for name in ("conditions", "eval", "flow", "memory", "parsed", "prose", "references",
                 "responses", "tools"):  # fmt: skip
        module = getattr(rules, name)
        for code, fixers in module.FIXES.items():
            assert fixers, code
            assert code in REGISTRY, code
            mine = parsers if name == "parsed" else declared[name]
            assert code in mine, f"rules/{name}.py fixes {code}, which it does not emit"
            seen.add(code)
    # the modules that export no fixes emit no code a fix is for
    assert set(FIXES) == seen
