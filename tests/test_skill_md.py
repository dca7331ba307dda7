"""Tests for the ``skill.md`` parser (``mantle_lsp.syntax.skill_md``), docs/language/skill-md.md.

Fixtures mark expected ranges with ``«…»`` (see ``tests/support.py``).
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax import skill_md as S
from mantle_lsp.syntax.skill_md import (
    SkillDoc,
    Token,
    parse_skill_md,
    scan_instruction_tokens,
)
from mantle_lsp.syntax.text import BOM, TextRange, normalize_newlines
from mantle_lsp.syntax.yaml_tree import YAML_DUPLICATE_KEY, YScalar
from support import FRAGMENTS, issue_list, marked, only

FM = "description: d"


def skill(fixture: str, sid: str = "s", dedent: bool = True) -> tuple[SkillDoc, list[TextRange]]:
    """Parse a whole marked skill.md fixture."""
    text, r = marked(fixture, dedent=dedent)
    return parse_skill_md(text, sid), r


def body(fixture: str, fm: str = FM, sid: str = "s") -> tuple[SkillDoc, list[TextRange]]:
    """Parse a marked body under a frontmatter (``fm`` is dedented separately)."""
    text = "---\n" + textwrap.dedent(fm).strip("\n") + "\n---\n" + textwrap.dedent(fixture)
    return skill(text, sid, dedent=False)


def front(fm: str, sid: str = "s") -> tuple[SkillDoc, list[TextRange]]:
    """Parse a marked frontmatter with a one-line prose body."""
    text = "---\n" + textwrap.dedent(fm).strip("\n") + "\n---\nDo the thing.\n"
    return skill(text, sid, dedent=False)


def errs(doc: SkillDoc, code: str, severity: str = "error") -> list[tuple[str, str, TextRange]]:
    return [(code, severity, i.range) for i in only(doc.issues, code)]


def clean(doc: SkillDoc) -> None:
    assert doc.issues == [], "\n".join(
        f"{i.code} {i.range} {doc.text[i.range.start : i.range.end]!r}: {i.message}"
        for i in doc.issues
    )


def tok(doc_or_list: SkillDoc | list[Token]) -> list[tuple[str, str, TextRange]]:
    tokens = doc_or_list.tokens if isinstance(doc_or_list, SkillDoc) else doc_or_list
    return [(t.kind, t.text, t.range) for t in tokens]


# =============================================================================================
# Framing (§3.1)


def test_minimal_skill_is_clean() -> None:
    doc, r = skill(
        """\
        ---
        «description: Help with bills.
        »---
        «Explain the bill.»
        """
    )
    clean(doc)
    assert doc.framed
    assert doc.frontmatter is not None and doc.description == "Help with bills."
    assert doc.frontmatter_range == r[0]
    assert doc.body_range == r[1]
    assert [p.kind for p in doc.paragraphs] == ["text"]
    assert doc.paragraphs[0].body_range == r[1]
    assert doc.has_prose and not doc.blocks_only


def test_leading_blank_lines_and_padded_delimiters_are_fine() -> None:
    doc, _ = skill("\n\n   \n  ---  \ndescription: x\n\t---\t\n\nBody.\n\n\n", dedent=False)
    clean(doc)
    assert doc.framed and doc.description == "x"


@pytest.mark.parametrize("text", ["", "  \n\n \t\n"])
def test_empty_file(text: str) -> None:
    doc = parse_skill_md(text, "s")
    assert issue_list(doc.issues) == [(S.C_DELIM, "error", TextRange(0, 0))]
    assert not doc.framed


def test_missing_opening_delimiter_still_reads_the_body() -> None:
    doc, r = skill(
        """\

        «description: x»
        Use «@tool.t».
        """
    )
    assert issue_list(doc.issues) == [(S.C_DELIM, "error", r[0])]
    assert not doc.framed and doc.frontmatter is None
    assert tok(doc) == [("tool", "@tool.t", r[1])]


def test_missing_closing_delimiter() -> None:
    doc, r = skill(
        """\
        «---»
        description: x
        Body text.
        """
    )
    assert issue_list(doc.issues) == [(S.C_DELIM, "error", r[0])]
    assert not doc.framed and doc.paragraphs == []


def test_only_the_opening_delimiter() -> None:
    doc, r = skill("«---»\n", dedent=False)
    assert issue_list(doc.issues) == [(S.C_DELIM, "error", r[0])]


def test_bom_is_removed_by_normalization_before_parsing() -> None:
    raw = BOM + "---\r\ndescription: x\r\n---\r\nBody.\r\n"
    doc = parse_skill_md(normalize_newlines(raw), "s")
    clean(doc)
    assert doc.description == "x"
    # the parser itself expects normalized text: a BOM left in is not a delimiter
    assert [i.code for i in parse_skill_md(raw.replace("\r", ""), "s").issues] == [S.C_DELIM]


def test_frontmatter_yaml_error() -> None:
    doc, r = body("Body.\n", fm="description: a«:» b")
    assert issue_list(doc.issues) == [(S.C_FM, "error", r[0])]
    assert "frontmatter YAML error" in doc.issues[0].message
    assert doc.frontmatter is None
    assert len(doc.paragraphs) == 1  # the body is still read


@pytest.mark.parametrize("fm", ["«- a\n- b»\n# trailing comment\n", "«just text»"])
def test_frontmatter_not_a_mapping(fm: str) -> None:
    doc, r = body("Body.\n", fm=fm)
    assert issue_list(doc.issues) == [(S.C_FM, "error", r[0])]
    assert doc.frontmatter is None


def test_empty_frontmatter_is_an_empty_mapping() -> None:
    doc, _ = skill("---\n---\nBody.\n", dedent=False)
    clean(doc)
    assert doc.framed and doc.frontmatter is None and doc.description is None


def test_frontmatter_duplicate_key_passes_through() -> None:
    doc, r = front("description: a\n«description»: b")
    assert issue_list(doc.issues) == [(YAML_DUPLICATE_KEY, "warning", r[0])]
    assert doc.description == "b"


def test_missing_instructions() -> None:
    doc, r = skill("---\ndescription: x\n«---»\n", dedent=False)
    assert issue_list(doc.issues) == [(S.C_MISSING, "error", r[0])]
    doc, r = skill("---\ndescription: x\n«---»\n\n   \n\t\n", dedent=False)
    assert issue_list(doc.issues) == [(S.C_MISSING, "error", r[0])]


def test_missing_instructions_is_silent_with_only_a_block() -> None:
    doc, _ = body(":::ordered_block id=main\nsteps:\n  - id: a\n    action: utter_x\n:::\n")
    clean(doc)
    assert doc.blocks_only and not doc.has_prose


# =============================================================================================
# Frontmatter keys (§3.2)


def test_every_valid_frontmatter_key_is_clean() -> None:
    doc, _ = front(
        """\
        name: Bills
        description: >-
          Help with bills.
        precondition: verified
        hidden: false
        disabled: no
        always_include_in_prompt: true
        complete_when:
          condition: "session.s.done == True"
          criteria: [paid, explained]
        import_tools: [lookup, "mcp/my.server-1:tool_a-b"]
        tool_constraints:
          - lock_card:
              requires: "session.s.ok"
              requires_confirmation:
                enabled: true
                utter_for_confirmation: utter_ask
                utter_on_user_denial: utter_no
              on_success: utter_ok
              on_failure: utter_fail
          - unlock_card:
        utter:
          - utter_hello: {on: activate}
          - utter_warn: {when: "session.s.late"}
          - utter_both: {"on": activate, when: "session.s.x"}
          - utter_empty_on: {on: }
        knowledge_answering:
          instructions: Be brief.
        routing:
          is_default: false
          engine_managed: "yes"
        """
    )
    clean(doc)
    assert doc.fm_str("name") == "Bills" and doc.description == "Help with bills."
    assert not doc.hidden and doc.fm_bool("always_include_in_prompt")
    assert doc.routing_flag("engine_managed") is True
    assert doc.routing_flag("is_default") is False
    assert doc.routing_flag("missing") is None
    assert [n.value for n in doc.import_tools] == ["lookup", "mcp/my.server-1:tool_a-b"]
    assert [g.name for g in doc.gate_tools] == ["lock_card", "unlock_card"]
    gate = doc.gate_tools[0]
    assert gate.confirmation_enabled and gate.in_block is None
    assert [
        n.value if isinstance(n, YScalar) else None
        for n in (
            gate.on_success,
            gate.on_failure,
            gate.utter_for_confirmation,
            gate.utter_on_user_denial,
        )
    ] == ["utter_ok", "utter_fail", "utter_ask", "utter_no"]
    assert [(u.name, u.on_node is not None, u.when_node is not None) for u in doc.utter] == [
        ("utter_hello", True, False),
        ("utter_warn", False, True),
        ("utter_both", True, True),
        ("utter_empty_on", True, False),
    ]
    kinds = sorted(c.kind for c in doc.conditions)
    assert kinds == ["skill_complete_when", "tool_requires", "utter_when", "utter_when"]


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("colour", "allowed: name, description"),
        ("constraints", "3.20-era"),
        ("id", "folder name"),
        ("memory", "memory.yml"),
        ("engine", "not a Mantle key"),
        ("metadata", "not a Mantle frontmatter key"),
        ("license", "agent-skills"),
        ("disabled_when", "does not exist"),
        ("ask_confirmation", "requires_confirmation"),
    ],
)
def test_unknown_frontmatter_key(key: str, hint: str) -> None:
    doc, r = front(f"description: x\n«{key}»: 1")
    assert issue_list(doc.issues) == [(S.C_UNKNOWN_KEY, "error", r[0])]
    assert hint in doc.issues[0].message


def test_unquoted_on_as_a_frontmatter_key_is_unknown() -> None:
    doc, r = front("description: x\n«on»: activate")
    assert issue_list(doc.issues) == [(S.C_UNKNOWN_KEY, "error", r[0])]
    assert "`on`" in doc.issues[0].message


def test_skill_level_requires_was_removed() -> None:
    doc, r = front("description: x\n«requires»: session.s.x")
    assert issue_list(doc.issues) == [(S.C_REQUIRES, "error", r[0])]


@pytest.mark.parametrize("value", ["«''»", "«'   '»", "«5»", "«[a]»"])
def test_precondition_must_be_a_non_empty_string(value: str) -> None:
    doc, r = front(f"description: x\nprecondition: {value}")
    assert issue_list(doc.issues) == [(S.C_PRECONDITION, "error", r[0])]


@pytest.mark.parametrize("value", ["verified", "~", ""])
def test_precondition_valid_or_null(value: str) -> None:
    doc, _ = front(f"description: x\nprecondition: {value}")
    clean(doc)


@pytest.mark.parametrize("key", ["hidden", "disabled", "always_include_in_prompt"])
@pytest.mark.parametrize("value", ["«'yes'»", "«'true'»", "«1»", "«0»", "«on-ish»", "«[true]»"])
def test_strict_boolean_frontmatter(key: str, value: str) -> None:
    doc, r = front(f"description: x\n{key}: {value}")
    assert issue_list(doc.issues) == [(S.C_BOOL, "error", r[0])]


@pytest.mark.parametrize("value", ["true", "false", "yes", "No", "off", "ON", "~", ""])
def test_strict_boolean_frontmatter_accepts_yaml_booleans_and_null(value: str) -> None:
    doc, _ = front(f"description: x\nhidden: {value}")
    clean(doc)
    assert doc.hidden is (value.lower() in ("true", "yes", "on"))


@pytest.mark.parametrize("value", ["«5»", "«[a]»", "«text»"])
def test_routing_must_be_a_mapping(value: str) -> None:
    doc, r = front(f"description: x\nrouting: {value}")
    assert issue_list(doc.issues) == [(S.C_ROUTING, "error", r[0])]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("'yes'", True),
        ("'Y'", True),
        ("'t'", True),
        ("1", True),
        ("1.0", True),
        ("'on'", True),
        ("false", False),
        ("'no'", False),
        ("'F'", False),
        ("0", False),
        ("0.0", False),
        ("'off'", False),
    ],
)
def test_routing_booleans_are_lax(value: str, expected: bool) -> None:
    doc, _ = front(f"description: x\nrouting:\n  engine_managed: {value}")
    clean(doc)
    assert doc.routing_flag("engine_managed") is expected


@pytest.mark.parametrize("value", ["«maybe»", "«2»", "«[true]»", "«0.5»"])
def test_routing_boolean_errors(value: str) -> None:
    doc, r = front(f"description: x\nrouting:\n  is_default: {value}")
    assert issue_list(doc.issues) == [(S.C_ROUTING, "error", r[0])]


def test_routing_unknown_key_and_null() -> None:
    doc, r = front("description: x\nrouting:\n  «default»: true\n  «is_default»:")
    assert issue_list(doc.issues) == [
        (S.C_UNKNOWN_KEY, "error", r[0]),
        (S.C_ROUTING, "error", r[1]),  # an empty value is reported on its key
    ]
    doc, _ = front("description: x\nrouting:")
    clean(doc)


@pytest.mark.parametrize("key", ["name", "description"])
@pytest.mark.parametrize("value", ["«5»", "«true»", "«[a]»", "«{a: 1}»"])
def test_name_and_description_must_be_strings(key: str, value: str) -> None:
    doc, r = front(f"{key}: {value}")
    assert issue_list(doc.issues) == [(S.C_FM, "error", r[0])]


def test_name_and_description_may_be_null() -> None:
    doc, _ = front("name:\ndescription:")
    clean(doc)
    assert doc.description is None


def test_knowledge_answering() -> None:
    doc, r = front("description: x\nknowledge_answering: «[a]»")
    assert issue_list(doc.issues) == [(S.C_KA, "error", r[0])]
    doc, r = front("description: x\nknowledge_answering:\n  «style»: x\n  instructions: «5»")
    assert issue_list(doc.issues) == [(S.C_KA, "error", r[0]), (S.C_KA, "error", r[1])]
    doc, r = front("description: x\nknowledge_answering:\n  «instructions»:")
    assert issue_list(doc.issues) == [(S.C_KA, "error", r[0])]  # anchored on the key
    doc, _ = front("description: x\nknowledge_answering:")
    clean(doc)


# -- import_tools -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["«shared_tool»", "«{a: 1}»"])
def test_import_tools_must_be_a_list(value: str) -> None:
    doc, r = front(f"description: x\nimport_tools: {value}")
    assert issue_list(doc.issues) == [(S.C_IMPORT, "error", r[0])]


def test_import_tools_entries() -> None:
    tool64 = "t" * 64
    doc, r = front(
        f"""\
        description: x
        import_tools:
          - lookup
          - «5»
          - «[a]»
          - «mcp/»
          - «mcp/server»
          - «mcp/:tool»
          - «mcp/-srv:tool»
          - «'mcp/srv:'»
          - «mcp/srv:-tool»
          - «mcp/srv:to.ol»
          - «mcp/srv:{tool64}x»
          - «mcp/sr v:tool»
          - mcp/srv:{tool64}
          - mcp/0.srv_x-y:T_1-2
          - MCP/not-an-mcp-entry
        """
    )
    assert issue_list(doc.issues) == [(S.C_IMPORT, "error", rng) for rng in r]
    assert [n.value for n in doc.import_tools] == [
        "lookup",
        f"mcp/srv:{tool64}",
        "mcp/0.srv_x-y:T_1-2",
        "MCP/not-an-mcp-entry",
    ]


def test_import_tools_null_is_empty() -> None:
    doc, _ = front("description: x\nimport_tools:")
    clean(doc)
    assert doc.import_tools == []


# -- tool_constraints -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["«lock_card»", "«{lock_card: {}}»"])
def test_tool_constraints_must_be_a_list(value: str) -> None:
    doc, r = front(f"description: x\ntool_constraints: {value}")
    assert issue_list(doc.issues) == [(S.C_TC, "error", r[0])]


def test_tool_constraints_item_shapes() -> None:
    doc, r = front(
        """\
        description: x
        tool_constraints:
          - «bare_tool»
          - «a: {}
            b: {}»
          - «{}»
          - «5»: {}
          - good: «5»
          - listed: «[requires]»
          - fine:
        """
    )
    assert issue_list(doc.issues) == [(S.C_TC, "error", rng) for rng in r]
    assert [g.name for g in doc.gate_tools] == ["good", "listed", "fine"]


def test_tool_constraint_options() -> None:
    doc, r = front(
        """\
        description: x
        tool_constraints:
          - t:
              «ask_confirmation»: true
              «colour»: red
              requires: «5»
              on_success: «[a]»
              on_failure:
          - u:
              «requires_confirmation»:
          - v:
              requires_confirmation: «true»
          - w:
              requires_confirmation:
                enabled: «'yes'»
                utter_for_confirmation: «5»
                «utter_on_user_denial»:
                «extra»: 1
          - x:
              requires: «{field: {exists: true}}»
        """
    )
    assert issue_list(doc.issues) == [(S.C_TC, "error", rng) for rng in r]
    msgs = [i.message for i in doc.issues]
    assert "write `requires_confirmation: {enabled: true}`" in msgs[0]
    assert "obsolete" in msgs[-1]
    assert [g.name for g in doc.gate_tools] == ["t", "u", "v", "w", "x"]
    assert not any(g.confirmation_enabled for g in doc.gate_tools)


def test_tool_constraint_requires_null_is_silent() -> None:
    doc, _ = front("description: x\ntool_constraints:\n  - t: {requires: }")
    clean(doc)
    assert doc.conditions == []


def test_tool_constraint_confirmation_disabled() -> None:
    doc, _ = front(
        "description: x\ntool_constraints:\n  - t: {requires_confirmation: {enabled: false}}"
    )
    clean(doc)
    assert doc.gate_tools[0].confirmation is not None
    assert doc.gate_tools[0].confirmation_enabled is False


# -- utter triggers ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["«utter_x»", "«{utter_x: {on: activate}}»"])
def test_utter_must_be_a_list(value: str) -> None:
    doc, r = front(f"description: x\nutter: {value}")
    assert issue_list(doc.issues) == [(S.C_UTTER, "error", r[0])]


def test_utter_triggers_errors() -> None:
    doc, r = front(
        """\
        description: x
        utter:
          - «utter_bare»
          - «{a: {on: activate}, b: {on: activate}}»
          - «5»: {on: activate}
          - utter_dup: {on: activate}
          - «utter_dup»: {on: activate}
          - «utter_null_opts»:
          - utter_list: «[on]»
          - «utter_empty»: {}
          - utter_bad_on: {on: «start»}
          - utter_bad_on2: {on: «[activate]»}
          - utter_when_empty: {when: «"  "»}
          - utter_when_num: {when: «5»}
          - utter_when_null: {«when»: }
          - utter_one: {«1»: activate}
          - utter_other: {on: activate, «colour»: red}
        """
    )
    expected = [(S.C_UTTER, "error", rng) for rng in r]
    # the `1:` key is not `on:`, so that trigger also has neither `on` nor `when`
    one_key = r[-2]
    name = doc.text.index("utter_one")
    expected.append((S.C_UTTER, "error", TextRange(name, name + len("utter_one"))))
    assert issue_list(doc.issues) == sorted(expected, key=lambda t: (t[2], t[0], t[1]))
    assert one_key in [i.range for i in doc.issues]


@pytest.mark.parametrize("on_key", ["on", "On", "ON", "'on'", '"on"', "true"])
def test_utter_on_key_spellings(on_key: str) -> None:
    """An unquoted `on` key loads as the YAML 1.1 boolean true, and is accepted."""
    doc, _ = front(f"description: x\nutter:\n  - utter_hi: {{{on_key}: activate}}")
    clean(doc)
    assert doc.utter[0].on_node is not None


def test_utter_when_site() -> None:
    doc, r = front("description: x\nutter:\n  - utter_hi:\n      when: '  «session.s.a»  '")
    clean(doc)
    (site,) = doc.conditions
    assert (site.kind, site.text, site.context) == ("utter_when", "session.s.a", "utter_hi")
    assert site.file_range(0, len(site.text)) == r[0]


# -- complete_when ----------------------------------------------------------------------------


def test_complete_when_bare_string() -> None:
    doc, r = front("description: x\ncomplete_when: «session.s.done»")
    assert issue_list(doc.issues) == [(S.C_CW_MAP, "error", r[0])]


@pytest.mark.parametrize("value", ["«[a]»", "«5»", "«true»"])
def test_complete_when_must_be_a_mapping(value: str) -> None:
    doc, r = front(f"description: x\ncomplete_when: {value}")
    assert issue_list(doc.issues) == [(S.C_CW, "error", r[0])]


def test_complete_when_errors() -> None:
    doc, r = front(
        """\
        description: x
        complete_when:
          condition: «''»
          criteria: [ok, «''», «5», «ok»]
          «extra»: 1
        """
    )
    assert issue_list(doc.issues) == [(S.C_CW, "error", rng) for rng in r]
    doc, r = front("description: x\n«complete_when»: {}")
    assert issue_list(doc.issues) == [(S.C_CW, "error", r[0])]
    doc, r = front("description: x\ncomplete_when:\n  criteria: «text»\n  «condition»:")
    assert issue_list(doc.issues) == [(S.C_CW, "error", r[0]), (S.C_CW, "error", r[1])]


def test_complete_when_requires_prose() -> None:
    doc, r = body(
        ":::ordered_block id=main\nsteps:\n  - id: a\n    action: utter_x\n:::\n",
        fm="description: x\n«complete_when»:\n  criteria: [done]",
    )
    assert issue_list(doc.issues) == [(S.C_CW_PROSE, "error", r[0])]
    doc, _ = body("Prose.\n", fm="description: x\ncomplete_when:\n  criteria: [done]")
    clean(doc)
    doc, _ = front("description: x\ncomplete_when:")
    clean(doc)


# =============================================================================================
# Paragraphs (§3.3.2)


def test_paragraph_splitting_and_kinds() -> None:
    doc, r = body(
        "«First paragraph\n  still first.»\n \t \n«if: «session.s.a == 1»\n«Scoped\nbody.»»\n\n\n"
        "«Third.»\n"
    )
    clean(doc)
    p1, p2, p3 = doc.paragraphs
    assert (p1.kind, p1.range, p1.body_range) == ("text", r[0], r[0])
    assert p2.kind == "if" and p2.range == r[1]
    assert p2.condition == "session.s.a == 1" and p2.condition_range == r[2]
    assert p2.body_range == r[3]
    assert p2.marker == TextRange(r[1].start, r[1].start + 3)
    assert (p3.kind, p3.range) == ("text", r[4])


def test_two_whitespace_only_lines_hide_the_if_marker() -> None:
    """docs/language/skill-md.md#prose-paragraphs: the split eats one blank line, the next
    paragraph starts blank."""
    doc, r = body("para\n  \n«  \nif: x\nbody»\n")
    clean(doc)
    assert [p.kind for p in doc.paragraphs] == ["text", "text"]
    assert doc.paragraphs[1].range == r[0]
    assert doc.conditions == []


@pytest.mark.parametrize("first", ["If: x", "if : x", "IF: x", "iff: x", "# if: x"])
def test_if_lookalikes_are_plain_text(first: str) -> None:
    doc, _ = body(f"{first}\nbody\n")
    clean(doc)
    assert [p.kind for p in doc.paragraphs] == ["text"]


def test_if_marker_variants() -> None:
    doc, r = body(
        "if:«x»\nbody one\n\n  \tif:   «session.s.a   and   b»  \nbody two\n\n"
        "text\nif: not a scope\n"
    )
    clean(doc)
    p1, p2, p3 = doc.paragraphs
    assert (p1.kind, p1.condition, p1.condition_range) == ("if", "x", r[0])
    assert (p2.kind, p2.condition, p2.condition_range) == ("if", "session.s.a   and   b", r[1])
    assert p3.kind == "text"  # an `if:` that is not the first line is ordinary text
    assert [(c.kind, c.text, c.file_range(0, len(c.text))) for c in doc.conditions] == [
        ("prose_if", "x", r[0]),
        ("prose_if", "session.s.a   and   b", r[1]),
    ]


def test_prose_else_and_elif() -> None:
    doc, r = body(
        "if: a\nbody\n\n«_:else:» fallback\n\n  «_:elif:» b\nmore @tool.t\n\nelsewhere: fine\n"
    )
    assert issue_list(doc.issues) == [(S.C_ELSE, "error", r[0]), (S.C_ELIF, "error", r[1])]
    assert [p.kind for p in doc.paragraphs] == ["if", "else", "elif", "text"]
    assert [t.text for t in doc.tokens] == ["@tool.t"]  # those paragraphs are still scanned


def test_empty_if_condition_and_body() -> None:
    doc, r = body("«_:if:»\nbody\n\n«if:   »\n\n«if: x»\n\n  «_:if:»  \n")
    assert issue_list(doc.issues) == [
        (S.C_EMPTY_IF, "error", r[0]),
        (S.C_EMPTY_BODY, "error", r[1]),
        (S.C_EMPTY_IF, "error", r[1]),
        (S.C_EMPTY_BODY, "error", r[2]),
        (S.C_EMPTY_BODY, "error", r[3]),  # the chunk is stripped: the line ends at `if:`
        (S.C_EMPTY_IF, "error", r[3]),
    ]


def test_if_condition_is_not_instruction_text() -> None:
    doc, r = body("if: @memory.s.a == 1 and session.s.b\nUse «@tool.t».\n")
    clean(doc)
    assert tok(doc) == [("tool", "@tool.t", r[0])]


def test_a_scope_ends_at_a_fence() -> None:
    doc, r = body(
        "«if: x\nscoped»\n:::ordered_block id=main\nsteps:\n  - id: a\n    action: u\n:::\n"
        "«after»\n"
    )
    clean(doc)
    assert [(p.kind, p.range) for p in doc.paragraphs] == [("if", r[0]), ("text", r[1])]


# =============================================================================================
# Tokens (§3.3.3)


def scan(fixture: str, where: str = "prose") -> tuple[list[tuple[str, str, TextRange]], str]:
    text, _ = marked(fixture, dedent=False)
    tokens = scan_instruction_tokens(text, 0, len(text), where)  # type: ignore[arg-type]
    return tok(tokens), text


def test_memory_tokens_and_lookalikes() -> None:
    text, r = marked(
        "«@memory.s.a» «@memory.my-skill.x_1». «@memory»? «@memory»stuff «@memory»_x "
        "«@memory»-x «@memory.ns» «@memory.a».. «@memory»..a «@memory.a.b.c» x@memory.a.b "
        "_@memory.a.b «@memory.é.ü»",
        dedent=False,
    )
    tokens = scan_instruction_tokens(text, 0, len(text), "prose")
    assert tok(tokens) == [
        ("memory", "@memory.s.a", r[0]),
        ("memory", "@memory.my-skill.x_1", r[1]),
        ("incomplete_memory", "@memory", r[2]),
        ("incomplete_memory", "@memory", r[3]),
        ("incomplete_memory", "@memory", r[4]),
        ("incomplete_memory", "@memory", r[5]),
        ("incomplete_memory", "@memory.ns", r[6]),
        ("incomplete_memory", "@memory.a", r[7]),
        ("incomplete_memory", "@memory", r[8]),
        ("incomplete_memory", "@memory.a.b.c", r[9]),
        ("memory", "@memory.é.ü", r[10]),
    ]
    first = tokens[0]
    assert [(name, rng) for name, rng in first.parts] == [
        ("s", TextRange(8, 9)),
        ("a", TextRange(10, 11)),
    ]
    assert first.where == "prose"


def test_memory_token_before_a_sentence_period_or_punctuation() -> None:
    got, _ = scan("Read @memory.s.a. Then @memory.s.b, and (@memory.s.c).")
    assert [(k, t) for k, t, _ in got] == [
        ("memory", "@memory.s.a"),
        ("memory", "@memory.s.b"),
        ("memory", "@memory.s.c"),
    ]


def test_at_tokens_and_lookalikes() -> None:
    text, r = marked(
        "«@skill.billing» «@block.main». «@tool.lookup-x» «@skill» «@tool.a.b» «@tool». "
        "«@block» @skills @skill_x @tools.a x@tool.y «@tool.ok»",
        dedent=False,
    )
    tokens = scan_instruction_tokens(text, 0, len(text), "prose")
    assert tok(tokens) == [
        ("skill", "@skill.billing", r[0]),
        ("block", "@block.main", r[1]),
        ("tool", "@tool.lookup-x", r[2]),
        ("incomplete_at", "@skill", r[3]),
        ("incomplete_at", "@tool.a.b", r[4]),
        ("incomplete_at", "@tool", r[5]),
        ("incomplete_at", "@block", r[6]),
        ("tool", "@tool.ok", r[7]),
    ]
    assert tokens[0].parts == (("billing", TextRange(7, 14)),)


def test_skill_and_block_are_not_tokens_in_step_instructions() -> None:
    text, r = marked(
        "@skill.x @block.y «@tool.z» «@skill» «@block.a.b» «@memory.s.a» «session.s.b»",
        dedent=False,
    )
    tokens = scan_instruction_tokens(text, 0, len(text), "instructions")
    assert tok(tokens) == [
        ("tool", "@tool.z", r[0]),
        ("incomplete_at", "@skill", r[1]),
        ("incomplete_at", "@block.a.b", r[2]),
        ("memory", "@memory.s.a", r[3]),
        ("session", "session.s.b", r[4]),
    ]
    assert {t.where for t in tokens} == {"instructions"}


def test_session_references_in_instructions() -> None:
    text, r = marked(
        "«session.a.b».c `«session.s.x»` @«session.s.y» -«session.s.z» x.session.a.b "
        "xsession.a.b _session.a.b session.only (« session.s.w»",
        dedent=False,
    )
    tokens = scan_instruction_tokens(text, 0, len(text), "prose")
    assert [(t.kind, t.text, t.range) for t in tokens] == [
        ("session", "session.a.b", r[0]),
        ("session", "session.s.x", r[1]),
        ("session", "session.s.y", r[2]),
        ("session", "session.s.z", r[3]),
        ("session", "session.s.w", TextRange(r[4].start + 1, r[4].end)),
    ]
    assert tokens[0].parts == (("a", TextRange(8, 9)), ("b", TextRange(10, 11)))


def test_scan_respects_start_and_end() -> None:
    text = "@tool.a @tool.b @tool.c"
    tokens = scan_instruction_tokens(text, 8, 15, "prose")
    assert [t.text for t in tokens] == ["@tool.b"]


def test_tokens_in_prose_bodies_of_the_document() -> None:
    doc, r = body(
        "Use «@tool.a» and «@memory.s.x».\n\nif: cond\nthen «@skill.other» and «@block.main».\n"
        ":::ordered_block id=main\nsteps:\n  - id: a\n    action: utter_x\n:::\n"
    )
    clean(doc)
    assert tok(doc) == [
        ("tool", "@tool.a", r[0]),
        ("memory", "@memory.s.x", r[1]),
        ("skill", "@skill.other", r[2]),
        ("block", "@block.main", r[3]),
    ]


def test_tokens_inside_yaml_instructions_map_to_file_positions() -> None:
    doc, r = body(
        ":::ordered_block id=main\n"
        "steps:\n"
        '  - id: a\n    instructions: "Use «@tool.t»\\tand\\u00e9 «@memory.s.x»"\n'
        "  - id: b\n    instructions: 'It''s «@tool.u»'\n"
        "  - id: c\n    instructions: |\n      Ask «@tool.v».\n        Read «@memory.s.y».\n"
        "  - id: d\n    instructions: >\n      Folded «@tool.w»\n      next «session.s.z»\n"
        "  - id: e\n    instructions: plain «@tool.p»\n      continued «@memory»\n"
        '  - id: f\n    instructions: "use «@to\\\n      ol.q» now"\n'
        ":::\n"
    )
    clean(doc)
    assert [(t.kind, t.range, t.where) for t in doc.tokens] == [
        ("tool", r[0], "instructions"),
        ("memory", r[1], "instructions"),
        ("tool", r[2], "instructions"),
        ("tool", r[3], "instructions"),
        ("memory", r[4], "instructions"),
        ("tool", r[5], "instructions"),
        ("session", r[6], "instructions"),
        ("tool", r[7], "instructions"),
        ("incomplete_memory", r[8], "instructions"),
        ("tool", r[9], "instructions"),  # joined across an escaped line break
    ]
    assert doc.tokens[-1].text == "@tool.q"
    mem = doc.tokens[1]
    assert [rng for _, rng in mem.parts] == [
        TextRange(r[1].start + 8, r[1].start + 9),
        TextRange(r[1].start + 10, r[1].start + 11),
    ]


# =============================================================================================
# Ordered-block fences (§3.3.1)

BLOCK = "steps:\n  - id: a\n    action: utter_x\n"


def test_fence_with_id_on_the_fence_line_and_on_the_next_line() -> None:
    doc, r = body(
        f"«:::ordered_block id=«one»  »\n{BLOCK}:::\n\n"
        f"«:::ordered_block»\n  id=«two»\n{BLOCK}:::  \n"
    )
    clean(doc)
    b1, b2 = doc.blocks
    assert (b1.id, b1.id_range, b1.open_range) == ("one", r[1], r[0])
    assert (b2.id, b2.id_range, b2.open_range) == ("two", r[3], r[2])
    assert [s.id for s in b1.steps] == ["a"]
    assert doc.block("two") is b2 and doc.block("zz") is None
    assert [(b.id, s.id) for b, s in doc.steps()] == [("one", "a"), ("two", "a")]


@pytest.mark.parametrize(
    "opening",
    [
        ":::ordered_block id=main extra",
        ':::ordered_block id="main"',
        ":::ordered_block id='main'",
        ":::ordered_block id=a.b",
        ":::ordered_block id=",
        ":::ordered_block main",
    ],
)
def test_unrecognised_fence_is_prose_with_a_warning(opening: str) -> None:
    doc, r = body(f"«{opening}»\n{BLOCK}:::\n")
    assert issue_list(doc.issues) == [(S.C_FENCE_IGNORED, "warning", r[0])]
    assert doc.blocks == []
    assert doc.paragraphs and doc.paragraphs[0].kind == "text"


def test_missing_closing_fence_is_prose() -> None:
    doc, r = body(f"Intro.\n\n«:::ordered_block id=main»\n{BLOCK}")
    assert issue_list(doc.issues) == [(S.C_FENCE_IGNORED, "warning", r[0])]
    assert doc.blocks == []


def test_indented_close_runs_on_to_the_next_real_close() -> None:
    doc, _ = body(f":::ordered_block id=main\n{BLOCK}  :::\n\nProse.\n:::\n")
    assert [i.code for i in doc.issues] == [S.C_BLOCK]
    assert "YAML error" in doc.issues[0].message
    assert len(doc.blocks) == 1 and doc.paragraphs == []


def test_four_colons_leave_a_lone_colon_as_prose() -> None:
    doc, r = body(f"«:»«:::ordered_block id=main»\n{BLOCK}:::\n")
    clean(doc)
    assert [p.range for p in doc.paragraphs] == [r[0]]
    assert doc.blocks[0].open_range == r[1]


def test_fence_in_the_middle_of_a_line() -> None:
    doc, r = body(f"«Some text» :::ordered_block id=main\n{BLOCK}:::\n")
    clean(doc)
    assert [p.range for p in doc.paragraphs] == [r[0]]
    assert doc.blocks[0].id == "main"


def test_closing_line_must_be_only_colons_and_space() -> None:
    doc, r = body(f":::ordered_block id=main\n«{BLOCK}::: end\n»:::\n")
    clean(doc)  # `::: end` is YAML inside the block (the key `::`), ignored like any key
    assert doc.blocks[0].body_range == r[0]


def test_block_errors() -> None:
    doc, r = body(
        f"«:::ordered_block»\n{BLOCK}:::\n"
        f":::ordered_block id=dup\n{BLOCK}:::\n"
        f":::ordered_block id=«dup»\n{BLOCK}:::\n"
        ":::ordered_block id=list\n«- a\n- b»\n:::\n"
        ":::ordered_block id=bad\nsteps: [«:»\n:::\n"
        ":::ordered_block id=tabs\nsteps:\n«\t»- id: a\n:::\n"
        ":::ordered_block id=empty\n:::\n"
    )
    assert issue_list(doc.issues) == [(S.C_BLOCK, "error", rng) for rng in r]
    msgs = [i.message for i in sorted(doc.issues, key=lambda i: i.range)]
    assert "must declare its id" in msgs[0]
    assert "already used" in msgs[1]
    assert "must be a YAML mapping" in msgs[2]
    assert "tabs cannot indent YAML" in msgs[4]
    assert [b.id for b in doc.blocks] == [None, "dup", "dup", "list", "bad", "tabs", "empty"]
    assert doc.block("empty") is not None and doc.block("empty").steps == []  # type: ignore[union-attr]


def test_block_keys() -> None:
    doc, r = body(
        ":::ordered_block id=main\n"
        "«description»: routing text\n"
        "«routable»: true\n"
        "«id»: main\n"
        "name: ignored\n"
        "anything: ignored\n"
        f"{BLOCK}"
        ":::\n"
    )
    assert issue_list(doc.issues) == [
        (S.C_BLOCK_DESC, "error", r[0]),
        (S.C_BLOCK_ROUTABLE, "error", r[1]),
        (S.C_LEGACY, "warning", r[2]),
    ]


def test_block_tools() -> None:
    doc, r = body(
        ":::ordered_block id=main\n"
        f"{BLOCK}"
        "tools:\n"
        "  - plain_tool\n"
        "  - name: gated\n"
        "    requires: «session.s.ok»\n"
        "    requires_confirmation: {enabled: true, utter_for_confirmation: utter_q}\n"
        "    on_success: utter_ok\n"
        "    on_failure: «5»\n"
        "    unknown_key: ignored\n"
        "  - «lock_card: {requires: x}»\n"
        "  - «5»\n"
        "  - «[a]»\n"
        ":::\n"
        ":::ordered_block id=other\n"
        f"{BLOCK}"
        "tools: «tool_a»\n"
        ":::\n"
        ":::ordered_block id=third\n"
        f"{BLOCK}"
        "tools:\n"
        ":::\n"
    )
    assert issue_list(doc.issues) == [(S.C_BLOCK, "error", rng) for rng in r[1:]]
    main = doc.blocks[0]
    assert [(t.name, t.in_block) for t in main.tools] == [
        ("plain_tool", "main"),
        ("gated", "main"),
    ]
    gated = main.tools[1]
    assert gated.confirmation_enabled and isinstance(gated.on_success, YScalar)
    (site,) = doc.conditions
    assert (site.kind, site.text, site.context) == (
        "block_tool_requires",
        "session.s.ok",
        "tool 'gated'",
    )
    assert site.file_range(0, len(site.text)) == r[0]


def test_block_complete_when() -> None:
    doc, r = body(
        ":::ordered_block id=main\n"
        f"{BLOCK}"
        "complete_when: «session.s.done»\n"
        ":::\n"
        ":::ordered_block id=b\n"
        f"{BLOCK}"
        "complete_when: «{done: {exists: true}}»\n"
        ":::\n"
        ":::ordered_block id=c\n"
        f"{BLOCK}"
        "complete_when: «5»\n"
        ":::\n"
    )
    assert issue_list(doc.issues) == [(S.C_BLOCK, "error", r[1]), (S.C_BLOCK, "error", r[2])]
    (site,) = doc.conditions
    assert (site.kind, site.text, site.context) == ("block_complete_when", "session.s.done", "main")
    assert site.file_range(0, len(site.text)) == r[0]
    assert doc.blocks[0].complete_when is not None


# =============================================================================================
# Steps (§3.3.4)


def steps(fixture: str, sid: str = "s") -> tuple[SkillDoc, list[TextRange]]:
    """Parse a marked ``steps:`` list inside a block ``main`` (fixture is the list)."""
    return body(":::ordered_block id=main\nsteps:\n" + textwrap.dedent(fixture) + ":::\n", sid=sid)


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        ("id: END\nfoo: bar\ncollect: x\nnext: nowhere", "end"),
        ("id: a\nnoop: true\nnext: END", "route"),
        ("id: a\nnoop: yes", "route"),
        ("id: a\nutter: utter_x", "action"),
        ("id: a\ninstructions: do it\noptional: true\ncomplete_when: x", "instructions"),
        (
            "id: a\ncollect: f\nutterance: utter_ask\ndescription: d\nask_before_filling: true",
            "collect",
        ),
        ("id: a\naction: utter_x", "action"),
        ("id: a\nexecute_tool: t\nparameters: {x: 1}", "execute_tool"),
        ("id: a\nexecute_tool: t\nparameters: {}", "execute_tool"),
        ("id: a\nset_memory: {f: 1}", "set_memory"),
        ("id: a\ncall: other", "call"),
        ("id: a\nlink: other", "link"),
    ],
)
def test_step_kinds(step: str, kind: str) -> None:
    doc, _ = steps("  - " + step.replace("\n", "\n    ") + "\n")
    clean(doc)
    (s,) = doc.blocks[0].steps
    assert s.kind == kind


def test_step_kind_inference_order() -> None:
    doc, r = steps(
        """\
          - id: a
            utter: utter_x
            «action»: utter_y
          - id: b
            instructions: x
            «collect»: f
          - id: c
            «collect»: f
            utter: utter_x
          - id: d
            noop: true
            «instructions»: x
          - id: e
            instructions: x
            «execute_tool»: t
          - id: f
            noop: false
            instructions: x
        """
    )
    noop_key = doc.text.index("noop: false")
    expected = [(S.C_STEP, "error", rng) for rng in r]
    expected.append((S.C_STEP, "error", TextRange(noop_key, noop_key + 4)))
    assert issue_list(doc.issues) == expected
    assert [s.kind for s in doc.blocks[0].steps] == [
        "action",
        "instructions",
        "action",
        "route",
        "instructions",
        "instructions",
    ]
    assert "cannot be combined" in doc.issues[0].message


def test_step_kind_cannot_be_inferred() -> None:
    doc, r = steps(
        """\
          - id: «a»
            noop: false
          - id: «b»
            noop: "true"
          - id: «c»
            next: END
        """
    )
    assert issue_list(doc.issues) == [(S.C_STEP, "error", rng) for rng in r]
    assert all("cannot tell" in i.message for i in doc.issues)
    assert [s.kind for s in doc.blocks[0].steps] == [None, None, None]


def test_step_shapes_and_ids() -> None:
    doc, r = steps(
        """\
          - «just a string»
          - «instructions: no id»
          - id: «5»
            action: utter_x
          - «id»:
            action: utter_x
          - id: «''»
            action: utter_x
        """
    )
    assert issue_list(doc.issues) == [(S.C_STEP, "error", rng) for rng in r]
    doc, r = body(":::ordered_block id=main\nsteps: «text»\n:::\n")
    assert issue_list(doc.issues) == [(S.C_STEP, "error", r[0])]
    doc, _ = body(":::ordered_block id=main\nsteps:\n:::\n")
    clean(doc)


def test_unknown_step_keys_and_removed_keys() -> None:
    doc, r = steps(
        """\
          - id: a
            collect: f
            «force_collection»: true
            «tool»: check
            «colour»: red
          - id: b
            instructions: x
            «force_collection»: true
            «utterance»: utter_x
          - id: c
            link: other
            «next»: END
          - id: d
            «action»: utter_x
            noop: true
        """
    )
    assert issue_list(doc.issues) == [
        (S.C_FORCE, "error", r[0]),
        (S.C_COLLECT_TOOL, "error", r[1]),
        *[(S.C_STEP, "error", rng) for rng in r[2:]],
    ]
    msgs = [i.message for i in doc.issues]
    assert "ask_before_filling" in msgs[0]
    assert "run_after_setting_" in msgs[1]
    assert "never returns" in msgs[5]
    link = doc.blocks[0].steps[2]
    assert link.next_node is None and link.next_targets() == []


def test_step_value_types() -> None:
    doc, r = steps(
        """\
          - id: a
            collect: «5»
            utterance: «[x]»
            description:
            ask_before_filling: «'yes'»
          - id: b
            «collect»:
          - id: c
            instructions: «'   '»
            optional: «maybe»
          - id: d
            action: «{a: 1}»
          - id: e
            utter: «5»
          - id: f
            execute_tool: «''»
            parameters: «[a]»
          - id: g
            «set_memory»:
          - id: h
            set_memory: «[a, b]»
          - id: i
            call: «5»
          - id: j
            link: «[x]»
          - id: k
            instructions: x
            complete_when: «{done: true}»
          - id: l
            instructions: x
            complete_when: «5»
        """
    )
    assert issue_list(doc.issues) == [(S.C_STEP, "error", rng) for rng in r]


def test_dtmf() -> None:
    doc, r = steps(
        """\
          - id: a
            collect: f
            dtmf: «4»
          - id: b
            collect: f
            dtmf: «{length: 4, finish_on_key: "#"}»
          - id: c
            collect: f
            dtmf: «{allow_audio_input: true}»
          - id: d
            collect: f
            dtmf: {length: 4, «beep»: true}
          - id: e
            collect: f
            dtmf: {finish_on_key: "#", allow_audio_input: false}
          - id: f
            collect: f
            dtmf: {length: 6}
        """
    )
    assert issue_list(doc.issues) == [(S.C_STEP, "error", rng) for rng in r]


def test_next_forms() -> None:
    doc, r = steps(
        """\
          - id: a
            action: utter_x
            next: «b»
          - id: b
            noop: true
            next:
              - if: «session.s.x == 1»
                then: «c»
              - if: '«session.s.y»'
                then: «END»
              - else: «a»
          - id: c
            action: utter_x
            next:
          - id: d
            action: utter_x
            next: «5»
          - id: e
            action: utter_x
            next: «{if: x, then: a}»
          - id: f
            noop: true
            next:
              - «just_a_step»
              - if: x
                then: a
                «when»: y
              - «if»: x
              - «if»: dropped
                else: a
        """
    )
    assert issue_list(doc.issues) == [
        *[(S.C_STEP, "error", rng) for rng in r[6:11]],
        (S.C_BRANCH_IF_LOST, "warning", r[11]),
    ]
    a, b, c, _d, _e, f = doc.blocks[0].steps
    assert [t.range for t in a.next_targets()] == [r[0]]
    assert [t.range for t in b.next_targets()] == [r[2], r[4], r[5]]
    assert c.next_targets() == [] and c.next_node is not None
    assert len(f.branches) == 3
    next_ifs = [(c.kind, c.text, c.context) for c in doc.conditions]
    assert next_ifs == [
        ("next_if", "session.s.x == 1", "step 'b'"),
        ("next_if", "session.s.y", "step 'b'"),
        ("next_if", "x", "step 'f'"),
        ("next_if", "x", "step 'f'"),
    ]
    assert doc.conditions[0].file_range(0, 16) == r[1]
    assert doc.conditions[1].file_range(0, 11) == r[3]


def test_duplicate_step_ids() -> None:
    doc, r = steps(
        """\
          - id: a
            action: utter_x
          - id: «a»
            action: utter_y
          - id: END
          - id: END
          - id: b
            action: utter_z
        """
    )
    assert issue_list(doc.issues) == [(S.C_DUP_STEP, "warning", r[0])]


def test_step_complete_when_site() -> None:
    doc, r = steps(
        """\
          - id: a
            instructions: x
            complete_when: >
              «session.s.a == 1
              and session.s.b»
        """
    )
    clean(doc)
    (site,) = doc.conditions
    assert (site.kind, site.text, site.context) == (
        "step_complete_when",
        "session.s.a == 1 and session.s.b",
        "step 'a'",
    )
    assert site.file_range(0, len(site.text)) == r[0]


def test_step_targets() -> None:
    doc, r = body(
        ":::ordered_block id=main\n"
        "steps:\n"
        "  - id: a\n    call: s__other\n"
        "  - id: b\n    link: «s__missing»\n"
        "  - id: c\n    call: «billing__main»\n"
        "  - id: d\n    call: billing\n"
        "  - id: e\n    call: other\n"
        "  - id: f\n    link: «s__»\n"
        ":::\n"
        ":::ordered_block id=other\n"
        f"{BLOCK}"
        ":::\n",
        sid="s",
    )
    assert issue_list(doc.issues) == [(S.C_STEP_TARGET, "error", rng) for rng in r]
    msgs = [i.message for i in sorted(doc.issues, key=lambda i: i.range)]
    assert "no block 'missing'" in msgs[0]
    assert "another skill's compiled block address" in msgs[1]


def test_block_references() -> None:
    doc, r = body(
        "See @block.main and «@block.nope».\n\n"
        ":::ordered_block id=main\nsteps:\n  - id: a\n    instructions: '@block.zzz'\n:::\n"
    )
    assert issue_list(doc.issues) == [(S.C_BLOCK_REF, "error", r[0])]
    assert "(blocks: main)" in doc.issues[0].message
    doc, r = body("See «@block.main».\n")
    assert issue_list(doc.issues) == [(S.C_BLOCK_REF, "error", r[0])]
    assert "(blocks: none)" in doc.issues[0].message


# =============================================================================================
# Condition sites


def test_condition_sites_in_every_scalar_style() -> None:
    doc, r = body(
        """\
        if:   «session.s.p == 'x'»
        body

        :::ordered_block id=main
        steps:
          - id: a
            instructions: x
            complete_when: «session.s.plain»
            next:
              - if: '«it''s == 1»'
                then: b
              - if: "«\\u0073ession.s.dq\\tand x»"
                then: b
              - if: >-
                  «session.s.folded
                  or   session.s.more»
                then: b
              - else: END
          - id: b
            action: utter_x
        tools:
          - name: t
            requires: "  «session.s.spaced»  "
        complete_when: |
          «session.s.literal»
        :::
        """,
        fm="""\
        description: x
        complete_when:
          condition: «session.s.cw»
        utter:
          - utter_hi: {when: «session.s.w»}
        tool_constraints:
          - t2: {requires: "«session.s.r»"}
        """,
    )
    clean(doc)
    got = [(c.kind, c.text, c.file_range(0, len(c.text))) for c in doc.conditions]
    # blocks are parsed first, then the prose chunks, then the frontmatter
    assert got == [
        ("step_complete_when", "session.s.plain", r[4]),
        ("next_if", "it's == 1", r[5]),
        ("next_if", "session.s.dq\tand x", r[6]),
        ("next_if", "session.s.folded or   session.s.more", r[7]),
        ("block_tool_requires", "session.s.spaced", r[8]),
        ("block_complete_when", "session.s.literal", r[9]),
        ("prose_if", "session.s.p == 'x'", r[3]),
        ("skill_complete_when", "session.s.cw", r[0]),
        ("utter_when", "session.s.w", r[1]),
        ("tool_requires", "session.s.r", r[2]),
    ]
    for c in doc.conditions:
        assert c.map.exact
        # every character maps inside the anchor (the scalar) and the whole text is covered
        full = c.file_range(0, len(c.text))
        assert c.anchor.start <= full.start <= full.end <= c.anchor.end
    dq = next(c for c in doc.conditions if c.text.startswith("session.s.dq"))
    s_char = dq.file_range(0, 1)
    assert doc.text[s_char.start : s_char.end] == "\\u0073"
    it = next(c for c in doc.conditions if c.text.startswith("it"))
    quote = it.file_range(2, 3)
    assert doc.text[quote.start : quote.end] == "''"


def test_condition_site_positions_inside_folded_text() -> None:
    doc, r = body(
        ":::ordered_block id=main\nsteps:\n  - id: a\n    instructions: x\n"
        "    complete_when: >-\n      «session.s.a»\n      «session.s.b»\n:::\n"
    )
    (site,) = doc.conditions
    assert site.text == "session.s.a session.s.b"
    assert site.file_range(0, 11) == r[0]
    assert site.file_range(12, 23) == r[1]
    fold = site.file_range(11, 12)
    assert doc.text[fold.start : fold.end] == "\n"


# ---------------------------------------------------------------------------------------------
# Robustness


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_never_raises_and_ranges_stay_inside(text: str) -> None:
    doc = parse_skill_md(text, "s")
    for i in doc.issues:
        assert 0 <= i.range.start <= i.range.end <= len(text), i
    for t in doc.tokens:
        assert 0 <= t.range.start <= t.range.end <= len(text)
    for c in doc.conditions:
        r = c.file_range(0, len(c.text))
        assert 0 <= r.start <= r.end <= len(text)


def test_execute_tool_parameters_with_no_value_fail_the_skill() -> None:
    """`parameters:` with nothing after it is null, which rasa-pro 3.21 and 3.22 refuse
    (the skill fails to load: "Input should be a valid dictionary")."""
    doc, _ = steps("  - id: a\n    execute_tool: t\n    parameters:\n")
    assert [(i.code, i.message) for i in doc.issues] == [
        ("skill.step.invalid", "`parameters` must be a mapping of name: value (found null)")
    ]


# The token patterns as the language defines them: each starts where the character before
# is not a word character (`session` also not after a dot). The parsers write the same
# test after the literal a pattern starts with, which is searched for much faster.
_PLAIN_TOKEN_FORMS = {
    "MEMORY_TOKEN_RE": r"(?<!\w)@memory\.([\w-]+)\.([\w-]+)(?![\w-])(?!\.[\w-])",
    "MEMORY_LOOKALIKE_RE": r"(?<!\w)@memory(?:\.[\w-]+)*",
    "AT_TOKEN_RE": r"(?<!\w)@(skill|block|tool)\.([\w-]+)(?![\w-])(?!\.[\w-])",
    "AT_LOOKALIKE_RE": r"(?<!\w)@(skill|block|tool)(?:\.[\w-]+)*(?![\w-])",
    "SESSION_IN_PROSE_RE": r"(?<![\w.])session\.([\w-]+)\.([\w-]+)",
}
_TOKEN_TEXT = st.lists(
    st.sampled_from(
        ["@", "memory", "session", "skill", "block", "tool", ".", "-", "_", "a", "b1", "é",
         "ß", "😀", " ", "\n", "x@", "@memory.", "session.", "(", "`", "{", "}",
         "session.a.b", "@memory.s.f", "@skill.k", "@tool.t-1", "@block.m"]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_TOKEN_TEXT, st.integers(0, 40), st.integers(0, 40))
def test_token_patterns_find_what_their_plain_forms_find(text: str, a: int, b: int) -> None:
    import re

    from mantle_lsp.syntax import responses_yml

    start, end = min(a, b), max(a, b)  # the parsers search within a paragraph's range
    pairs = [(getattr(S, name), re.compile(plain)) for name, plain in _PLAIN_TOKEN_FORMS.items()]
    pairs.append(
        (responses_yml._MEMORY_TOKEN_RE, re.compile(r"(?<!\w)@memory\.[\w-]+(?:\.[\w-]+)*"))
    )
    for fast, plain in pairs:
        for args in ((text,), (text, start, end)):
            got = [(m.span(), m.groups()) for m in fast.finditer(*args)]
            assert got == [(m.span(), m.groups()) for m in plain.finditer(*args)], fast.pattern
