"""The differential test's own logic (``make oracle`` needs rasa-pro; these tests do not):
where an engine finding is, what the allow-list accepts, what counts as a difference.
Messages are real rasa-pro 3.21.0 messages (normalised as scripts/oracle_findings.py does).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle_compare import (
    AllowListError,
    EngineFinding,
    OurDiagnostic,
    Scope,
    compare,
    failed_skills,
    is_knock_on,
    load_allow_list,
    locate,
    parse_allow_list,
    used_allowances,
)

FAILED = "mantle.validation.skill.failed_to_load"
CRASH = "oracle.exception"


def check_locate(code: str, message: str, paths: tuple[str, ...], rule: str) -> None:
    scope = locate(code, message)
    assert (scope.paths, scope.rule) == (paths, rule)


@pytest.mark.parametrize(
    ("code", "message", "paths", "rule"),
    [
        (
            "mantle.validation.response.unknown_memory_key",
            "<project>/skills/card/responses.yml: response 'utter_speed', variant 0, button 0 "
            "references memory key 'card.speed' that is not readable while skill 'card' is active.",
            ("skills/card/responses.yml",),
            "path",
        ),
        (
            "mantle.validation.response.unbound_button_source",
            "<project>/responses.yml: response 'utter_orphan', variant 0 uses button source "
            "'card_buttons', but no skill references this project-level response.",
            ("responses.yml",),
            "path",
        ),
        (
            "mantle.validation.tools.undeclared_memory_write",
            "A tool in skills/card/tools.py writes undeclared memory entry 'blocked_at' via "
            "memory.set(...) at line 6. Declare it under the skill's schema.",
            ("skills/card/tools.py",),
            "path",
        ),
        (
            "mantle.validation.tools.memory_manager_bypass",
            "A tool in tools/shared.py reaches the internal memory manager via memory._memory "
            "at line 10.",
            ("tools/shared.py",),
            "path",
        ),
        (
            FAILED,
            "Skill directory 'skills/card' failed to load and would be silently skipped: "
            "Unknown key(s): constraints. Fix the skill so it parses, or remove it.",
            ("skills/card/",),
            "skill-dir",
        ),
        (
            "mantle.validation.config.invalid_model_group",
            "Model group at index 0 in 'integrations.yml' is invalid: Models cannot be empty.",
            ("integrations.yml",),
            "config",
        ),
        (
            "mantle.validation.config.unknown_model_group",
            "'orchestrator.model_group' in 'agent.yml' references model group 'mian', which is "
            "not declared in 'integrations.yml'.",
            ("agent.yml",),
            "config",
        ),
        (
            "mantle.validation.config.unknown_model_group",
            "'knowledge_stores[6].embeddings' in 'integrations.yml' references model group "
            "'mian', which is not declared in 'integrations.yml'.",
            ("integrations.yml",),
            "config",
        ),
        (
            "mantle.validation.config.invalid_agent_privacy",
            "Invalid agent configuration: 'privacy' must be a YAML mapping.",
            ("agent.yml",),
            "config",
        ),
        (
            "mantle.validation.config.invalid_tracing",
            "Invalid 'tracing' configuration: 2 validation errors.",
            ("integrations.yml",),
            "config",
        ),
        (
            "mantle.validation.hooks.invalid_signature",
            "<project>/hooks.py: 'same' must accept ToolCallPayload, not 'str'.",
            ("hooks.py",),
            "path",
        ),
        (
            "mantle.validation.hooks.import_failed",
            "Failed to import hook module <project>/hooks/audit.py: No module named 'lib'",
            ("hooks/audit.py",),
            "path",
        ),
        (
            "mantle.validation.hooks.duplicate_modifier",
            "Duplicate modify hook for point 'tool_call': 'first' and 'second'.",
            ("hooks.py", "hooks/"),
            "hooks",
        ),
        (
            "mantle.validation.config.missing_agent_yml",
            "The project has no agent.yml.",
            ("",),
            "config",
        ),
        (
            "mantle.validation.memory.project_llm_settable",
            "Project memory field 'authenticated' declares llm_settable: true. Project fields "
            "cannot be written by the LLM.",
            ("memory.yml",),
            "project-memory",
        ),
        (
            "mantle.validation.unsupported_request_handler.missing_entry",
            "Project override of 'default_unsupported_request_handler': it must define an entry "
            "flow.",
            ("skills/default_unsupported_request_handler/",),
            "skill",
        ),
        (
            "mantle.validation.skill.reserved_id",
            "A skill may not be named 'project'; 'project' and 'system' are reserved memory "
            "namespaces.",
            ("skills/project/",),
            "skill",
        ),
        (
            "mantle.validation.skill.invalid_id",
            "Skill id 'card.v2' must not contain a '.'; it is used as a memory namespace prefix.",
            ("skills/card.v2/",),
            "skill",
        ),
        (
            "mantle.validation.prose.unknown_memory_reference",
            "Skill 'billing' references '@memory.card.fee' in instruction prose, but that memory "
            "is not readable while this skill is active.",
            ("skills/billing/",),
            "skill",
        ),
        (
            "mantle.validation.flow.unresolved_next",
            "Step 'greet' of flow 'card__main' (skill 'card', flow 'card__main') routes to "
            "'confrim', which is not a step in the flow.",
            ("skills/card/",),
            "skill",
        ),
        (
            "mantle.validation.precondition.nested_resolver",
            "Resolver skill 'login' for precondition 'verified' must not declare its own "
            "precondition ('fresh').",
            ("skills/login/", "agent.yml"),
            "precondition",
        ),
        (
            "mantle.validation.precondition.missing_binding",
            "Skill 'card' declares precondition 'cust', but agent.yml has no matching entry "
            "under 'orchestrator.preconditions'.",
            ("skills/card/",),
            "skill",
        ),
        (CRASH, "ToolLoadingError: Failed to import tool module", ("",), "crash"),
        ("mantle.validation.something_new", "Something is wrong.", ("",), "unmapped"),
    ],
)
def test_locate(code: str, message: str, paths: tuple[str, ...], rule: str) -> None:
    check_locate(code, message, paths, rule)


def test_scope_contains_files_folders_and_the_whole_project() -> None:
    s = Scope(("skills/card/", "agent.yml"), "x")
    assert s.contains("skills/card/skill.md")
    assert s.contains("skills/card/tools/a.py")
    assert s.contains("agent.yml")
    assert not s.contains("skills/card_replace/skill.md")
    assert not s.contains("skills/agent.yml")
    assert Scope(("",), "x").contains("anything/at/all.yml")
    assert not Scope(("memory.yml",), "x").contains("skills/card/memory.yml")


LOAD_FAILED_CARD = EngineFinding(
    FAILED,
    "error",
    "Skill directory 'skills/card' failed to load and would be silently skipped: Unknown "
    "key(s): constraints. Fix the skill so it parses, or remove it.",
)


def test_knock_on_names_the_failed_skill_as_a_whole_word() -> None:
    assert failed_skills([LOAD_FAILED_CARD]) == {"card"}

    def knock(message: str) -> bool:
        return is_knock_on(EngineFinding("x.code", "error", message), {"card"})

    assert knock("Skill 'plan' references external call/link target 'card', which does not")
    assert knock("has a prose 'if:' condition referencing memory key 'card.reason' that is")
    assert knock("Step 'a' of flow 'plan__main' uses 'call: card__main', but")
    assert not knock("Skill 'plan' references external call/link target 'card_replace'")
    assert not knock("Skill 'plan' references external call/link target 'discard'")
    assert not is_knock_on(LOAD_FAILED_CARD, {"card"})


# -- allow-list ----------------------------------------------------------------------------------


def test_the_allow_list_in_the_repository_is_valid_and_short() -> None:
    allow = load_allow_list(Path(__file__).with_name("known_differences.yml"))
    assert {a.id for a in allow} >= {
        "compile-errors-fold-into-failed-to-load",
        "knock-on-after-load-failure",
        "engine-crash",
    }
    assert len(allow) <= 12, "keep the allow-list short: fix the checker instead"


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ({"id": "a", "accept": "missing", "code": "x", "fixtures": ["f"]}, "reason"),
        ({"id": "a", "accept": "maybe", "code": "x", "reason": "because it is so"}, "accept"),
        ({"id": "a", "accept": "missing", "code": "x", "reason": "because it is so"}, "fixtures"),
        (
            {
                "id": "a",
                "accept": "extra",
                "code": "x",
                "fixtures": "*",
                "reason": "because it is so",
            },
            "fixtures",
        ),
        ({"accept": "knock_on", "code": "x", "reason": "because it is so"}, "id"),
        ({"id": "a", "accept": "knock_on", "reason": "because it is so"}, "code"),
        (
            {"id": "a", "accept": "knock_on", "code": "x", "reason": "because it is so", "x": 1},
            "unknown keys",
        ),
        (
            {
                "id": "a",
                "accept": "knock_on",
                "code": "x",
                "reason": "because it is so",
                "message": "(",
            },
            "pattern",
        ),
    ],
)
def test_bad_allow_list_entries_are_refused(entry: dict[str, object], error: str) -> None:
    with pytest.raises(AllowListError, match=error):
        parse_allow_list([entry])


def test_an_entry_can_be_limited_to_engine_versions() -> None:
    base = {"id": "a", "accept": "knock_on", "code": "x", "reason": "because it is so"}
    (both,) = parse_allow_list([base])
    (only,) = parse_allow_list([{**base, "engine": "3.22.*"}])
    assert both.applies_to_engine("3.21.0") and both.applies_to_engine("3.22.0.dev1")
    assert only.applies_to_engine("3.22.0.dev1") and not only.applies_to_engine("3.21.0")
    with pytest.raises(AllowListError, match="engine"):
        parse_allow_list([{**base, "engine": 3.22}])


def test_allow_list_ids_are_unique() -> None:
    e = {"id": "a", "accept": "knock_on", "code": "*", "reason": "because it is so"}
    with pytest.raises(AllowListError, match="unique"):
        parse_allow_list([e, e])


ALLOW = parse_allow_list(
    [
        {
            "id": "fold",
            "accept": "error_in_scope",
            "code": FAILED,
            "reason": "folded compile errors.",
        },
        {"id": "knock", "accept": "knock_on", "code": "*", "reason": "the catalogue drops it."},
        {
            "id": "crash",
            "accept": "error_in_project",
            "code": CRASH,
            "reason": "the engine raised.",
        },
        {
            "id": "gap",
            "accept": "missing",
            "code": "mantle.validation.tools.unresolved_tool",
            "fixtures": ["tests_test_x.py__test_y*"],
            "message": "'record_handoff'",
            "reason": "a deliberate difference.",
        },
        {
            "id": "ours",
            "accept": "extra",
            "code": "lsp.tools.syntax_error",
            "fixtures": ["tests_test_x.py__test_z"],
            "reason": "a deliberate difference.",
        },
    ]
)


def ours(path: str, code: str, severity: str = "error") -> OurDiagnostic:
    return OurDiagnostic(path, 1, code, severity, "msg")


def engine(code: str, message: str) -> EngineFinding:
    return EngineFinding(code, "error", message)


NEXT = engine(
    "mantle.validation.flow.unresolved_next",
    "Step 'greet' of flow 'card__main' (skill 'card', flow 'card__main') routes to 'x'.",
)


def statuses(name: str, eng: list[EngineFinding], our: list[OurDiagnostic]) -> list[str]:
    r = compare(name, "g", eng, our, ALLOW, {"skill.markdown.unknown_frontmatter_key"})
    return [f"{f.status}:{f.allowance}" if f.allowance else f.status for f in r.findings]


def test_same_code_in_the_scope_matches_elsewhere_does_not() -> None:
    assert statuses("p", [NEXT], [ours("skills/card/skill.md", NEXT.code)]) == ["matched"]
    assert statuses("p", [NEXT], [ours("skills/other/skill.md", NEXT.code)]) == ["missed"]
    assert statuses("p", [NEXT], [ours("skills/card/skill.md", "lsp.flow.x")]) == ["missed"]
    # a warning with the same code matches too: the brief compares (code, file)
    assert statuses("p", [NEXT], [ours("skills/card/skill.md", NEXT.code, "warning")]) == [
        "matched"
    ]


def test_failed_to_load_is_matched_by_any_error_in_that_skill() -> None:
    compile_error = ours("skills/card/skill.md", "skill.markdown.unknown_frontmatter_key")
    assert statuses("p", [LOAD_FAILED_CARD], [compile_error]) == ["allowed:fold"]
    warning = ours("skills/card/skill.md", "skill.markdown.unknown_frontmatter_key", "warning")
    assert statuses("p", [LOAD_FAILED_CARD], [warning]) == ["missed"]
    elsewhere = ours("skills/plan/skill.md", "skill.markdown.unknown_frontmatter_key")
    assert statuses("p", [LOAD_FAILED_CARD], [elsewhere]) == ["missed"]


def test_knock_on_findings_of_a_skill_that_failed_to_load_are_allowed() -> None:
    knock = engine(
        "skill.referenced.invalid_target",
        "Skill 'plan' references external call/link target 'card', which does not resolve.",
    )
    compile_error = ours("skills/card/skill.md", "skill.markdown.unknown_frontmatter_key")
    assert statuses("p", [LOAD_FAILED_CARD, knock], [compile_error]) == [
        "allowed:fold",
        "allowed:knock",
    ]
    # without the load failure the same finding is a miss
    assert statuses("p", [knock], [compile_error]) == ["missed"]


def test_an_engine_crash_needs_one_error_of_ours_anywhere() -> None:
    crash = engine(CRASH, "ToolLoadingError: Failed to import tool module")
    assert statuses("p", [crash], [ours("skills/a/tools.py", "lsp.tools.syntax_error")]) == [
        "allowed:crash"
    ]
    assert statuses("p", [crash], [ours("skills/a/tools.py", "lsp.x", "warning")]) == ["missed"]
    assert statuses("p", [crash], []) == ["missed"]


def test_missing_entries_apply_only_to_their_fixtures_and_messages() -> None:
    f = engine(
        "mantle.validation.tools.unresolved_tool",
        "Skill 'other' references tool 'record_handoff', but it is not visible",
    )
    assert statuses("tests_test_x.py__test_y-2", [f], []) == ["allowed:gap"]
    assert statuses("tests_test_x.py__test_w", [f], []) == ["missed"]
    g = engine("mantle.validation.tools.unresolved_tool", "Skill 'other' references tool 'a'")
    assert statuses("tests_test_x.py__test_y", [g], []) == ["missed"]


def test_errors_on_a_project_the_engine_accepts_fail_warnings_do_not() -> None:
    r = compare(
        "p",
        "g",
        [],
        [
            ours("agent.yml", "mantle.validation.precondition.unknown_resolver"),
            ours("a", "b", "warning"),
        ],
        ALLOW,
    )
    assert [d.code for d in r.extra_errors] == ["mantle.validation.precondition.unknown_resolver"]
    assert r.failed
    ok = compare("p", "g", [], [ours("a", "lsp.x", "warning"), ours("a", "lsp.y", "hint")], ALLOW)
    assert not ok.failed and not ok.extra_errors


def test_allowed_extra_errors_are_listed_but_do_not_fail() -> None:
    r = compare("tests_test_x.py__test_z", "g", [], [ours("t.py", "lsp.tools.syntax_error")], ALLOW)
    assert [(d.code, a) for d, a in r.allowed_extra] == [("lsp.tools.syntax_error", "ours")]
    assert not r.failed
    assert used_allowances([r]) == {"ours"}


def test_a_load_error_in_a_skill_the_engine_loads_is_a_disagreement() -> None:
    compile_error = ours("skills/plan/skill.md", "skill.markdown.unknown_frontmatter_key")
    own = ours("skills/plan/memory.yml", "lsp.memory.missing_schema")
    other = ours("skills/plan/skill.md", "mantle.validation.response.missing")
    matched = ours("skills/card/skill.md", NEXT.code)
    r = compare("p", "g", [NEXT], [matched, compile_error, own, other], ALLOW, {compile_error.code})
    assert r.load_disagreements == [compile_error, own]
    # an engine error we do not explain, on a project the engine rejects anyway: information
    assert r.unexplained_errors == [other]
    assert r.failed


def test_errors_in_a_skill_the_engine_could_not_load_are_explained() -> None:
    compile_error = ours("skills/card/skill.md", "skill.markdown.unknown_frontmatter_key")
    inside = ours("skills/card/memory.yml", "mantle.validation.memory.skill_seed")
    r = compare("p", "g", [LOAD_FAILED_CARD], [compile_error, inside], ALLOW, {compile_error.code})
    assert not r.load_disagreements and not r.unexplained_errors and not r.failed


# -- eval files (eval_compare.py) ---------------------------------------------------------

from eval_compare import Ours, Where, judge, where  # noqa: E402

SCHEMA_ERROR = (
    "EvalScenarioError: Invalid scenario in '<project>/eval/scenarios/a.yml':\n"
    "Error found. Failed to validate YAML. Please make sure the file is correct and all "
    "mandatory parameters are specified. Here are the errors found during validation:\n"
    "  in Line 6:\n\n    4 |   goals:\n    5 |     assertions:\n"
    ">>> 6 |       - skill_activated: {skill_id: x, step_id: y}\n"
    "Key 'step_id' was not defined. Path: '/scenario/goals/assertions/1/skill_activated'\n"
)
EXTENSION_ERROR = (
    "<SchemaError: error code 2: 'mcp_server' is required when source is 'mcp': Path: '/'>. "
    "Path: /scenario/goals/assertions\n"
)
PYDANTIC_ERROR = (
    "EvalScenarioError: Invalid scenario in '<project>/eval/scenarios/a.yml':\n"
    "1 validation error for Scenario\nsetup.initial_slots.1.[key]\n"
    "  Input should be a valid string [type=string_type, input_value=1, input_type=int]\n"
)
PARSE_ERROR = (
    "EvalScenarioError: Could not parse '<project>/eval/scenarios/a.yml': Error found. "
    'Failed to read YAML. while constructing a mapping\n  in "<unicode string>", line 2, '
    'column 3:\n      name: a\n      ^ (line: 2)\nfound duplicate key "name" with value "b" '
    '(original value: "a")\n  in "<unicode string>", line 3, column 3:\n'
)


@pytest.mark.parametrize(
    ("stage", "message", "want"),
    [
        (
            "load",
            SCHEMA_ERROR,
            Where(path=("scenario", "goals", "assertions", 0, "skill_activated")),
        ),
        ("load", EXTENSION_ERROR, Where(path=("scenario", "goals", "assertions"))),
        (
            "load",
            "nullable.novalue : '/scenario/goals/assertions/2/memory_was_set/1/value'",
            Where(path=("scenario", "goals", "assertions", 1, "memory_was_set", 0, "value")),
        ),
        ("load", PYDANTIC_ERROR, Where(path=("scenario", "setup", "initial_slots", 1))),
        ("load", PARSE_ERROR, Where(lines=(2, 3))),
        (
            "load",
            "EvalScenarioError: expected_tools[1]: tool_called must be a non-empty tool "
            "name string",
            Where(path=("scenario", "goals", "expected_tools", 1)),
        ),
        (
            "keys",
            "rejected keys: ['action_executed', 'slot_was_set']",
            Where(keys=("action_executed", "slot_was_set")),
        ),
        (
            "runtime",
            "assertions[3].sequencing[1]: InvalidAssertionType: …",
            Where(path=("scenario", "goals", "assertions", 3, 0, 1)),
        ),
        (
            "slug",
            "ValueError: Unsafe path component: 'a:b'",
            Where(code="eval.scenario.unsafe_slug"),
        ),
    ],
)
def test_where_an_engine_message_says_the_problem_is(stage: str, message: str, want: Where) -> None:
    assert where(stage, message) == want


def test_an_eval_file_is_judged_on_its_verdict_and_where_we_report() -> None:
    ours = [
        Ours(40, 47, "eval.scenario.invalid", 6, "…"),
        Ours(0, 8, "lsp.eval.unknown_skill", 1, "…"),
    ]

    def resolve(path: tuple[str | int, ...]) -> tuple[int, int]:
        return (30, 60) if len(path) > 3 else (0, 100)

    def key_at(d: Ours) -> str | None:
        return "slot_was_set"

    assert judge("a", "load", SCHEMA_ERROR, ours, resolve, key_at).status == "agree"
    far = [Ours(80, 85, "eval.scenario.invalid", 9, "…")]
    assert judge("a", "load", SCHEMA_ERROR, far, resolve, key_at).status == "unlocated"
    assert judge("a", "ok", "", ours, resolve, key_at).status == "extra"
    refs_only = [ours[1]]  # our reference checks never reject a file
    assert judge("a", "ok", "", refs_only, resolve, key_at).status == "agree"
    assert judge("a", "load", SCHEMA_ERROR, refs_only, resolve, key_at).status == "missed"
    calm = [Ours(10, 22, "eval.scenario.calm_assertion", 3, "…")]
    keys = "rejected keys: ['slot_was_set']"
    assert judge("a", "keys", keys, calm, resolve, key_at).status == "agree"
