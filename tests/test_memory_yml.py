"""Tests for the ``memory.yml`` parser (``mantle_lsp.syntax.memory_yml``),
docs/language/memory.md."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax import memory_yml as M
from mantle_lsp.syntax.memory_yml import MemoryDoc, parse_memory_yml
from mantle_lsp.syntax.yaml_tree import YAML_DUPLICATE_KEY, YAML_SYNTAX
from support import FRAGMENTS, issue_list, marked


def project(fixture: str) -> tuple[MemoryDoc, list]:
    text, r = marked(fixture)
    return parse_memory_yml(text, "project"), r


def skill(fixture: str) -> tuple[MemoryDoc, list]:
    text, r = marked(fixture)
    return parse_memory_yml(text, "skill"), r


def clean(doc: MemoryDoc) -> None:
    assert doc.issues == [], [(i.code, i.range, i.message) for i in doc.issues]
    assert doc.loads


# =============================================================================================
# Project memory (§2.2)


def test_project_fields() -> None:
    doc, r = project(
        """\
        # project memory
        «customer_id»:
          type: text
          pii: true
          anonymization: {type: mask, redaction_char: "#", keep_left: 2, keep_right: 2}
          initial_value: unknown
          seed: true
        «tier»:
          type: categorical
          enum_values: [gold, silver]
          privacy_rules: [no logging]
        «p»:
        """
    )
    clean(doc)
    assert doc.kind == "project"
    assert [(f.name, f.scope, f.range) for f in doc.fields] == [
        ("customer_id", "project", r[0]),
        ("tier", "project", r[1]),
        ("p", "project", r[2]),
    ]
    cid, tier, p = doc.fields
    assert cid.type == "text" and cid.pii and cid.seed and not cid.llm_settable
    assert cid.initial_value == "unknown"
    assert cid.value("anonymization") == {
        "type": "mask",
        "redaction_char": "#",
        "keep_left": 2,
        "keep_right": 2,
    }
    assert tier.enum_values == ["gold", "silver"] and tier.type == "categorical"
    assert p.node is not None and p.type == "any" and p.enum_values == [] and not p.pii
    assert doc.field("tier") is tier and doc.field("zz") is None
    assert doc.declarations("p") == [p]


@pytest.mark.parametrize("text", ["", "# only comments\n\n", "~\n"])
def test_project_empty_file_declares_nothing(text: str) -> None:
    doc = parse_memory_yml(text, "project")
    clean(doc)
    assert doc.fields == []


@pytest.mark.parametrize("fixture", ["«- a\n- b»\n", "«just text»\n", "«42»\n"])
def test_project_top_level_must_be_a_mapping(fixture: str) -> None:
    doc, r = project(fixture)
    assert issue_list(doc.issues) == [(M.C_SHAPE, "error", r[0])]
    assert not doc.loads and doc.fields == []


def test_project_yaml_error_keeps_the_yaml_code() -> None:
    doc, r = project("a: {type: text\nb«:» 1\n")
    assert issue_list(doc.issues) == [(YAML_SYNTAX, "error", r[0])]
    assert not doc.loads


def test_project_duplicate_key_is_a_warning_only() -> None:
    doc, r = project("a: {type: text}\n«a»: {type: int}\n")
    assert issue_list(doc.issues) == [(YAML_DUPLICATE_KEY, "warning", r[0])]
    assert doc.loads
    assert doc.field("a") is doc.fields[-1] and doc.fields[-1].type == "int"


def test_project_file_in_the_skill_shape() -> None:
    doc, r = project(
        """\
        «schema»:
          public:
            p: {type: text}
        other: {type: bool}
        """
    )
    assert issue_list(doc.issues) == [(M.C_PROJECT_SKILL_SHAPE, "warning", r[0])]
    # declared like the engine does: one field named `schema`, the nested ones are not fields
    assert [f.name for f in doc.fields] == ["schema", "other"]


def test_project_schema_field_without_sections_is_an_ordinary_field() -> None:
    doc, _ = project("schema: {type: text}\n")
    clean(doc)
    assert [f.name for f in doc.fields] == ["schema"]


def test_project_field_not_a_mapping() -> None:
    doc, r = project("a: «text»\nb: «[x, y]»\nc: «5»\nd:\n")
    assert issue_list(doc.issues) == [(M.C_FIELD_NOT_MAP, "warning", rng) for rng in r]
    assert "did you mean `a: {type: text}`" in doc.issues[0].message
    assert "did you mean" not in doc.issues[1].message
    assert doc.loads
    assert [(f.name, f.type) for f in doc.fields] == [
        ("a", "any"),
        ("b", "any"),
        ("c", "any"),
        ("d", "any"),
    ]


def test_project_field_name_must_be_a_string() -> None:
    doc, r = project("«1»: {type: text}\nok: {type: int}\n")
    assert issue_list(doc.issues) == [(M.C_SHAPE, "error", r[0])]
    assert [f.name for f in doc.fields] == ["ok"]


@pytest.mark.parametrize("value", ["true", "yes", "'yes'", "1", "'t'", "'Y'", "1.0"])
def test_project_llm_settable(value: str) -> None:
    doc, r = project(f"a:\n  type: text\n  «llm_settable»: {value}\n")
    assert issue_list(doc.issues) == [(M.C_PROJECT_LLM, "error", r[0])]


@pytest.mark.parametrize("value", ["false", "no", "'off'", "0", "'f'", "~", ""])
def test_project_llm_settable_false_is_silent(value: str) -> None:
    doc, _ = project(f"a:\n  type: text\n  llm_settable: {value}\n")
    clean(doc)
    assert not doc.fields[0].llm_settable


def test_project_attribute_type_errors_crash_the_engine() -> None:
    doc, r = project(
        """\
        a:
          type: «5»
          description: «[x]»
          pii: «maybe»
          enum_values: «notalist»
          privacy_rules: [ok, «5»]
          «anonymization»: {type: redact}
        """
    )
    assert issue_list(doc.issues) == [(M.C_SHAPE, "error", rng) for rng in r]
    assert "the engine crashes" in doc.issues[-1].message
    assert not doc.loads


def test_project_seed_is_fine() -> None:
    doc, _ = project("a: {type: bool, seed: true}\n")
    clean(doc)
    assert doc.fields[0].seed


# =============================================================================================
# Attributes common to both files (§2.1)


@pytest.mark.parametrize(
    ("attr", "hint"),
    [
        ("colour", "allowed: type, description"),
        ("correctable", "3.20-era"),
        ("required", "collect:"),
        ("default", "initial_value"),
        ("descripton", "did you mean `description`?"),
        ("llm_setable", "did you mean `llm_settable`?"),
        ("enum_value", "did you mean `enum_values`?"),
    ],
)
def test_unknown_attribute(attr: str, hint: str) -> None:
    doc, r = project(f"a:\n  type: text\n  «{attr}»: x\n")
    assert issue_list(doc.issues) == [(M.C_UNKNOWN_ATTR, "warning", r[0])]
    assert hint in doc.issues[0].message
    assert doc.loads


def test_enum_attribute_is_legacy() -> None:
    doc, r = skill("schema:\n  public:\n    a:\n      type: categorical\n      «enum»: [x]\n")
    assert issue_list(doc.issues) == [(M.C_LEGACY, "warning", r[0])]
    assert "enum_values" in doc.issues[0].message
    assert doc.loads


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("str", "did you mean `text`?"),
        ("String", "did you mean `text`?"),
        ("integer", "did you mean `int`?"),
        ("number", "did you mean `float`?"),
        ("boolean", "did you mean `bool`?"),
        ("dict", "did you mean `json`?"),
        ("array", "did you mean `list`?"),
        ("enum", "did you mean `categorical`?"),
        ("txt", "did you mean `text`?"),
        ("categorial", "did you mean `categorical`?"),
        ("bogus", ""),
    ],
)
def test_unknown_type_name(name: str, hint: str) -> None:
    doc, r = project(f"a:\n  type: «{name}»\n")
    assert issue_list(doc.issues) == [(M.C_UNKNOWN_TYPE, "warning", r[0])]
    msg = doc.issues[0].message
    assert (hint in msg) if hint else ("did you mean" not in msg)
    assert doc.fields[0].type == name  # the engine accepts it as written


@pytest.mark.parametrize("name", M.CANONICAL_TYPES)
def test_canonical_types_are_silent(name: str) -> None:
    doc, _ = project(f"a:\n  type: {name}\n")
    clean(doc)


@pytest.mark.parametrize("kind", ["project", "skill"])
@pytest.mark.parametrize("attr", ["mutable", "writable_by"])
def test_engine_3_22_attributes(kind: str, attr: str) -> None:
    head = "" if kind == "project" else "schema:\n  private:\n"
    pad = "" if kind == "project" else "    "
    text, r = marked(f"{head}{pad}a:\n{pad}  type: text\n{pad}  «{attr}»: true\n")
    doc = parse_memory_yml(text, kind)  # type: ignore[arg-type]
    assert issue_list(doc.issues) == [(M.C_ENGINE_322, "warning", r[0])]
    assert "3.22" in doc.issues[0].message and "3.21 ignores it" in doc.issues[0].message
    assert doc.loads


def test_description_whitespace_counts_as_absent() -> None:
    doc, _ = project("a: {type: text, description: '   '}\nb: {type: text, description: Hi}\n")
    clean(doc)
    assert [f.description for f in doc.fields] == [None, "Hi"]


def test_attribute_values_are_cycle_and_bomb_safe() -> None:
    levels = ["l0: &l0 [a, a, a, a, a, a, a, a, a]"]
    for i in range(1, 9):
        levels.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    text = "\n".join(levels) + "\nf:\n  type: list\n  initial_value: *l8\n  enum_values: &e [*e]\n"
    doc = parse_memory_yml(text, "project")
    f = doc.field("f")
    assert f is not None
    assert isinstance(f.initial_value, list)  # expanded up to a budget, then cut
    assert f.enum_values == [None]


# =============================================================================================
# Skill memory (§2.3)


def test_later_duplicate_wins_within_a_section() -> None:
    doc, _ = skill(
        "schema:\n  private:\n    a: {type: int}\n  public:\n    a: {type: text}\n"
        "    a: {type: bool}\n"
    )
    f = doc.field("a")
    assert f is not None and (f.scope, f.type) == ("private", "int")
    doc, _ = skill("schema:\n  public:\n    a: {type: text}\n    a: {type: bool}\n")
    f = doc.field("a")
    assert f is not None and f.type == "bool"


def test_skill_fields_and_private_wins() -> None:
    doc, r = skill(
        """\
        schema:
          public:
            «card»:
              type: text
              description: The card.
              llm_settable: yes
            «both»: {type: text}
          private:
            «both»: {type: int, llm_settable: "true"}
            «secret»: {type: bool, initial_value: false}
        """
    )
    assert issue_list(doc.issues) == [(M.C_BOTH, "warning", r[2])]
    assert [(f.name, f.scope, f.range) for f in doc.fields] == [
        ("card", "public", r[0]),
        ("both", "public", r[1]),
        ("both", "private", r[2]),
        ("secret", "private", r[3]),
    ]
    both = doc.field("both")
    assert both is not None and both.scope == "private" and both.type == "int"
    assert both.llm_settable
    assert [f.scope for f in doc.declarations("both")] == ["public", "private"]
    card = doc.field("card")
    assert card is not None and card.llm_settable and card.description == "The card."
    secret = doc.field("secret")
    assert secret is not None and secret.initial_value is False
    assert doc.loads


@pytest.mark.parametrize("text", ["", "# nothing\n", "schema:\n", "schema:\n  public: {}\n"])
def test_skill_empty_forms(text: str) -> None:
    doc = parse_memory_yml(text, "skill")
    clean(doc)
    assert doc.fields == []


@pytest.mark.parametrize("fixture", ["«- a»\n", "«text»\n"])
def test_skill_top_level_must_be_a_mapping(fixture: str) -> None:
    doc, r = skill(fixture)
    assert issue_list(doc.issues) == [(M.C_SKILL_LOAD, "error", r[0])]
    assert not doc.loads


def test_skill_yaml_error_is_a_load_failure() -> None:
    doc, r = skill("schema:\n  public: «[»\n")
    assert issue_list(doc.issues) == [(M.C_SKILL_LOAD, "error", r[0])]
    assert doc.issues[0].message.startswith("memory.yml YAML error")
    assert not doc.loads


def test_skill_duplicate_key_keeps_loading() -> None:
    doc, r = skill("schema:\n  public:\n    a: {type: text}\n    «a»: {type: int}\n")
    assert issue_list(doc.issues) == [(YAML_DUPLICATE_KEY, "warning", r[0])]
    assert doc.loads


def test_skill_top_level_keys() -> None:
    doc, r = skill(
        """\
        schema:
          public:
            a: {type: text}
        «access»:
          deny_read: [x]
        «memory»:
          public: {}
        «extra»: 1
        """
    )
    assert issue_list(doc.issues) == [
        (M.C_LEGACY, "warning", r[0]),
        (M.C_LEGACY, "warning", r[1]),
        (M.C_UNKNOWN_TOP, "warning", r[2]),
    ]
    assert doc.loads and [f.name for f in doc.fields] == ["a"]


def test_skill_memory_key_without_schema() -> None:
    doc, r = skill("«memory»:\n  public:\n    a: {type: text}\n")
    assert issue_list(doc.issues) == [(M.C_LEGACY, "warning", r[0])]
    assert doc.fields == [] and doc.loads


def test_flat_skill_file_declares_nothing() -> None:
    doc, r = skill("«a»: {type: text}\nb: {type: int}\n")
    assert issue_list(doc.issues) == [(M.C_NO_SCHEMA, "warning", r[0])]
    assert doc.fields == [] and doc.loads


def test_flat_file_without_type_attributes_is_only_unknown_keys() -> None:
    doc, r = skill("«a»: {description: x}\n")
    assert issue_list(doc.issues) == [(M.C_UNKNOWN_TOP, "warning", r[0])]


def test_schema_shapes() -> None:
    doc, r = skill("schema: «[public]»\n")
    assert issue_list(doc.issues) == [(M.C_SKILL_LOAD, "error", r[0])]
    assert not doc.loads
    doc, r = skill("schema:\n  «secret»: {}\n  public:\n    a: {type: text}\n")
    assert issue_list(doc.issues) == [(M.C_UNKNOWN_TOP, "warning", r[0])]
    assert doc.loads and [f.name for f in doc.fields] == ["a"]


def test_section_must_be_a_mapping() -> None:
    doc, r = skill("schema:\n  «public»:\n  private: «[a]»\n")
    assert issue_list(doc.issues) == [
        (M.C_SKILL_LOAD, "error", r[0]),
        (M.C_SKILL_LOAD, "error", r[1]),
    ]
    assert "`public:` is empty" in doc.issues[0].message
    assert not doc.loads


def test_skill_field_not_a_mapping_is_a_load_failure() -> None:
    doc, r = skill("schema:\n  public:\n    a: «text»\n    «b»:\n    c: «[x]»\n")
    assert issue_list(doc.issues) == [(M.C_SKILL_LOAD, "error", rng) for rng in r]
    assert "did you mean `a: {type: text}`" in doc.issues[0].message
    assert not doc.loads
    assert [f.name for f in doc.fields] == ["a", "b", "c"]  # still declared for references


def test_skill_field_name_must_be_a_string() -> None:
    doc, r = skill("schema:\n  public:\n    «5»: {type: text}\n")
    assert issue_list(doc.issues) == [(M.C_SKILL_LOAD, "error", r[0])]


def test_skill_attribute_type_errors() -> None:
    doc, r = skill(
        """\
        schema:
          public:
            a:
              type: «5»
              description: «{x: 1}»
              llm_settable: «maybe»
              pii: «[true]»
              seed: «2»
              enum_values: «notalist»
              privacy_rules: «rule»
            b:
              pii: true
              anonymization:
                type: «hide»
                redaction_char: «"ab"»
                keep_left: «0»
                keep_right: «x»
                «colour»: red
            c:
              pii: yes
              anonymization: «text»
            d:
              «anonymization»: {type: redact}
            e:
              pii: true
              anonymization: «{keep_left: 1}»
        """
    )
    assert issue_list(doc.issues) == [(M.C_SKILL_LOAD, "error", rng) for rng in r]
    assert not doc.loads


def test_skill_valid_anonymization() -> None:
    doc, _ = skill(
        "schema:\n  private:\n    a:\n      pii: 'yes'\n"
        "      anonymization: {type: redact, redaction_char: '-', keep_left: 1, keep_right: ~}\n"
    )
    clean(doc)
    assert doc.fields[0].pii


@pytest.mark.parametrize("value", ["true", "'on'", "1", "'y'"])
def test_skill_seed(value: str) -> None:
    doc, r = skill(f"schema:\n  public:\n    a:\n      type: text\n      «seed»: {value}\n")
    assert issue_list(doc.issues) == [(M.C_SKILL_SEED, "error", r[0])]
    assert doc.loads  # a finding, not a load failure


def test_skill_seed_false_is_silent() -> None:
    doc, _ = skill("schema:\n  private:\n    a: {type: text, seed: false}\n")
    clean(doc)


def test_skill_llm_settable_on_skill_fields_is_fine() -> None:
    doc, _ = skill("schema:\n  private:\n    a: {type: text, llm_settable: true, description: d}\n")
    clean(doc)
    assert doc.fields[0].llm_settable


# ---------------------------------------------------------------------------------------------
# Robustness


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_never_raises_and_ranges_stay_inside(text: str) -> None:
    for kind in ("skill", "project"):
        doc = parse_memory_yml(text, kind)  # type: ignore[arg-type]
        for i in doc.issues:
            assert 0 <= i.range.start <= i.range.end <= len(text), i
        for f in doc.fields:
            _ = (f.type, f.description, f.llm_settable, f.seed, f.pii, f.enum_values)
