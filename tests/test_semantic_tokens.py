"""Semantic tokens: conditions, @-tokens, fences, placeholders, field names, tool literals."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantle_lsp.ide.semantic_tokens import (
    TOKEN_MODIFIERS,
    TOKEN_TYPES,
    SemToken,
    classify_condition,
    semantic_tokens,
)
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.text import TextRange
from support import write_fixture


def tokens_of(
    tmp_path: Path, fixture: str, rel: str, rng: TextRange | None = None
) -> tuple[str, list[SemToken]]:
    fx = write_fixture(tmp_path, fixture)
    text = fx.files[rel]
    toks = semantic_tokens(Project.load(fx.root), fx.root / rel, rng)
    # invariants of the LSP encoding: sorted, disjoint, one line each, in the legend
    last = -1
    for t in toks:
        assert t.range.start >= last, f"overlap or disorder at {t}"
        assert t.range.end > t.range.start
        assert "\n" not in text[t.range.start : t.range.end]
        assert t.type in TOKEN_TYPES and set(t.modifiers) <= set(TOKEN_MODIFIERS)
        last = t.range.end
    return text, toks


def check_semantic_tokens(tmp_path: Path, fixture: str, rel: str, expected: str) -> None:
    """Each token rendered ``type:text`` in order, separated by spaces, equals ``expected``
    (white space in ``expected`` is normalized)."""
    text, toks = tokens_of(tmp_path, fixture, rel)
    got = " ".join(f"{t.type}:{text[t.range.start : t.range.end]}" for t in toks)
    assert got == " ".join(expected.split())


SKILL_HEAD = "//- skills/card/skill.md\n---\ndescription: d\n---\n"


def test_prose_if_condition(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "if: session.card.reason == 'lost' and not session.project.vip\nGo.\n",
        "skills/card/skill.md",
        """keyword:if: keyword:session namespace:card property:reason operator:== string:'lost'
        keyword:and keyword:not keyword:session namespace:project property:vip""",
    )


def test_numbers_constants_comparisons(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "if: 0 < session.card.n <= 10.5 or session.card.ok == True != None\nGo.\n",
        "skills/card/skill.md",
        """keyword:if: number:0 operator:< keyword:session namespace:card property:n
        operator:<= number:10.5 keyword:or keyword:session namespace:card property:ok
        operator:== enumMember:True operator:!= enumMember:None""",
    )


def test_condition_that_does_not_parse_is_still_coloured(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "if: session.card.reason == and x in ('a' 'b'\nGo.\n",
        "skills/card/skill.md",
        """keyword:if: keyword:session namespace:card property:reason operator:==
        keyword:and variable:x keyword:in string:'a' string:'b'""",
    )


def test_unterminated_string_and_comment(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "if: session.card.reason == 'lost\nGo.\n\nif: session.card.x  # why\nGo.\n",
        "skills/card/skill.md",
        """keyword:if: keyword:session namespace:card property:reason operator:== string:'lost
        keyword:if: keyword:session namespace:card property:x comment:# why""",
    )


def test_hyphenated_skill_id_is_one_namespace(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "if: session.card-replace.reason\nGo.\n",
        "skills/card/skill.md",
        "keyword:if: keyword:session namespace:card-replace property:reason",
    )


def test_at_tokens_in_prose(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "Use @tool.lock_card, read @memory.card.reason, run @skill.other "
        "or @block.main; mail @Alan. Incomplete: @memory.card here.\n",
        "skills/card/skill.md",
        """decorator:@tool function:lock_card decorator:@memory namespace:card property:reason
        decorator:@skill namespace:other decorator:@block enumMember:main
        decorator:@memory""",
    )


def test_session_reference_in_prose(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        SKILL_HEAD + "Say session.card.reason to them.\n",
        "skills/card/skill.md",
        "keyword:session namespace:card property:reason",
    )


def test_ordered_block_fence_and_yaml_conditions(tmp_path: Path) -> None:
    fixture = SKILL_HEAD + (
        ":::ordered_block id=main\n"
        "steps:\n"
        "  - id: a\n"
        "    instructions: Ask, then call @tool.lock_card.\n"
        "    complete_when: \"session.card.done == 'yes'\"\n"
        "    next:\n"
        "      - if: session.card.n > 1\n"
        "        then: END\n"
        "      - else: END\n"
        ":::\n"
    )
    check_semantic_tokens(
        tmp_path,
        fixture,
        "skills/card/skill.md",
        """keyword::::ordered_block property:id enumMember:main
        decorator:@tool function:lock_card
        keyword:session namespace:card property:done operator:== string:'yes'
        keyword:session namespace:card property:n operator:> number:1
        keyword::::""",
    )


def test_modifiers(tmp_path: Path) -> None:
    text, toks = tokens_of(
        tmp_path,
        SKILL_HEAD + "if: session.card.x == None\nGo.\n\n"
        ":::ordered_block id=main\nsteps: []\n:::\n",
        "skills/card/skill.md",
    )
    mods = {text[t.range.start : t.range.end]: t.modifiers for t in toks}
    assert mods["main"] == ("declaration",)
    assert mods["session"] == ("defaultLibrary",)
    assert mods["None"] == ("readonly", "defaultLibrary")
    assert mods["card"] == ()


def test_frontmatter_conditions_through_folded_scalar_split_per_line(tmp_path: Path) -> None:
    fixture = (
        "//- skills/card/skill.md\n---\ndescription: d\n"
        "tool_constraints:\n"
        "  - lock_card:\n"
        "      requires: >\n"
        "        session.card.reason == 'stolen' and\n"
        "        session.card.confirmed\n"
        "utter:\n"
        "  - utter_hi:\n"
        "      when: 'session.card.reason == \"it''s\"'\n"
        "---\nGo.\n"
    )
    check_semantic_tokens(
        tmp_path,
        fixture,
        "skills/card/skill.md",
        """keyword:session namespace:card property:reason operator:== string:'stolen'
        keyword:and keyword:session namespace:card property:confirmed
        keyword:session namespace:card property:reason operator:== string:"it''s\"""",
    )


def test_multi_line_string_is_split_per_line(tmp_path: Path) -> None:
    # a single-quoted YAML scalar folds its line break into a space inside the string
    fixture = (
        "//- skills/card/skill.md\n---\ndescription: d\n"
        "complete_when:\n"
        "  condition: 'session.card.x == \"a\n"
        "    b\"'\n"
        "---\nGo.\n"
    )
    check_semantic_tokens(
        tmp_path,
        fixture,
        "skills/card/skill.md",
        'keyword:session namespace:card property:x operator:== string:"a string:b"',
    )


def test_responses_placeholders_conditions_and_set_payloads(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        """\
//- skills/card/responses.yml
responses:
  utter_x:
    - text: "Card {session.card.last4} for {name}, {session.nope}"
      condition: session.card.last4 != None
      buttons:
        - title: Yes
          payload: set:session.card.ok=true
    - text: Plain.
""",
        "skills/card/responses.yml",
        """keyword:session namespace:card property:last4 property:name keyword:session
        property:nope
        keyword:session namespace:card property:last4 operator:!= enumMember:None
        keyword:session namespace:card property:ok""",
    )


def test_memory_field_names_are_property_declarations(tmp_path: Path) -> None:
    _, toks = tokens_of(
        tmp_path,
        """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
  private:
    attempts:
      type: int
""",
        "skills/card/memory.yml",
    )
    assert [(t.type, t.modifiers) for t in toks] == [("property", ("declaration",))] * 2
    check_semantic_tokens(
        tmp_path / "b",
        "//- memory.yml\nauthenticated:\n  type: bool\n",
        "memory.yml",
        "property:authenticated",
    )


def test_tool_memory_literals(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        """\
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="x")
async def lock(context=None):
    a = context.memory.get("reason")
    b = context.memory.get("project.tier")
    context.memory.set('done', True)
    context.memory.set("a" "b", 1)
    return a, b
""",
        "skills/card/tools.py",
        """property:reason namespace:project property:tier property:done
        property:"a" "b\"""",
    )


def test_agent_precondition_condition(tmp_path: Path) -> None:
    check_semantic_tokens(
        tmp_path,
        """\
//- agent.yml
agent:
  persona: P.
orchestrator:
  model_group: main
  preconditions:
    verified:
      satisfied_when: session.project.verified == True
      resolve_with: verify
""",
        "agent.yml",
        "keyword:session namespace:project property:verified operator:== enumMember:True",
    )


def test_range_request_returns_only_intersecting_tokens(tmp_path: Path) -> None:
    fixture = SKILL_HEAD + "if: session.card.a\nGo.\n\nif: session.card.b == 1\nGo.\n"
    text, all_toks = tokens_of(tmp_path, fixture, "skills/card/skill.md")
    second = text.index("if: session.card.b")
    _, some = tokens_of(
        tmp_path / "r", fixture, "skills/card/skill.md", TextRange(second, len(text))
    )
    assert [text[t.range.start : t.range.end] for t in some] == [
        "if:", "session", "card", "b", "==", "1",
    ]  # fmt: skip
    assert some == [t for t in all_toks if t.range.start >= second]
    # a range cutting a token in half still returns it
    mid = text.index("card.b") + 2
    _, cut = tokens_of(tmp_path / "c", fixture, "skills/card/skill.md", TextRange(mid, mid + 1))
    assert [text[t.range.start : t.range.end] for t in cut] == ["card"]


def test_unknown_file_has_no_tokens(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, SKILL_HEAD + "Go.\n")
    assert semantic_tokens(Project.load(fx.root), fx.root / "missing.md") == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("session.a.b", ["keyword", "namespace", "property"]),
        ("session", ["keyword"]),
        ("session.a", ["keyword", "namespace"]),
        ("session.a.b.c", ["keyword", "namespace", "property", "property"]),
        ("Session.a.b", ["variable", "property", "property"]),
        ("not (x)", ["keyword", "variable"]),
        ("'a' is b", ["string", "keyword", "variable"]),
        ("1 + -2", ["number", "operator", "operator", "number"]),
        ("", []),
    ],
)
def test_classify_condition(source: str, expected: list[str]) -> None:
    assert [kind for _, _, kind, _ in classify_condition(source)] == expected


def test_a_field_where_it_is_read_is_a_readonly_property(tmp_path: Path) -> None:
    """The default light themes leave a plain `property` near-black; `property` +
    `readonly` is coloured in every default theme (variable.other.constant)."""
    text, toks = tokens_of(
        tmp_path,
        SKILL_HEAD + "if: session.card.reason == 'lost'\nSay @memory.card.reason.\n"
        "//- skills/card/memory.yml\nschema:\n  public:\n    reason:\n      type: text\n",
        "skills/card/skill.md",
    )
    fields = [
        (text[t.range.start : t.range.end], t.modifiers) for t in toks if t.type == "property"
    ]
    assert fields == [("reason", ("readonly",)), ("reason", ("readonly",))]
    _, declared = tokens_of(
        tmp_path / "m",
        "//- skills/card/memory.yml\nschema:\n  public:\n    reason:\n      type: text\n",
        "skills/card/memory.yml",
    )
    assert [(t.type, t.modifiers) for t in declared] == [("property", ("declaration",))]
