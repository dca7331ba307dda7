"""Condition expressions: accepted/rejected lists from the specs, exact error ranges,
memory references, literal decoding, precedence, and a differential property test against
a reference checker built on Python's own parser."""

from __future__ import annotations

import ast
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    LiteralExpr,
    MemoryRef,
    NotExpr,
    ParsedCondition,
    RefExpr,
    parse_condition,
)
from mantle_lsp.syntax.text import TextRange
from support import marked


def unmark(text: str) -> tuple[str, TextRange]:
    """``"a «b» c"`` → ``("a b c", TextRange(2, 3))``: one mark (``support.marked``)."""
    source, (rng,) = marked(text, dedent=False)
    return source, rng


def check_ok(source: str) -> ParsedCondition:
    result = parse_condition(source)
    assert result.ok, [(e.code, e.message, e.range) for e in result.errors]
    assert result.tree is not None
    assert result.errors == ()
    return result


def check_error(fixture: str, code: str) -> ParsedCondition:
    """Expect an issue with ``code`` covering exactly the «marked» part."""
    source, expected = unmark(fixture)
    result = parse_condition(source)
    assert not result.ok
    assert result.tree is None
    found = [(e.code, e.range) for e in result.errors]
    assert (code, expected) in found, (source, found, [e.message for e in result.errors])
    for issue in result.errors:
        assert issue.severity == "error"
        assert issue.message.strip()
    return result


def message_of(fixture: str, code: str) -> str:
    _, expected = unmark(fixture)
    result = check_error(fixture, code)
    return next(e.message for e in result.errors if e.code == code and e.range == expected)


# ---------------------------------------------------------------------------------------
# Accepted (docs/language/conditions.md#grammar, #what-is-rejected)

ACCEPTED = [
    "session.project.authenticated",
    "not session.card_replace.replacement_reason",
    'session.card_replace.replacement_reason == "stolen"',
    "session.card_replace.replacement_reason == 'stolen'",
    "session.a.x < session.a.y < 10",
    "session.a.x == None",
    "session.a.x != None",
    "session.a.x == True",
    "(session.a.x or session.b.y) and not session.c.z",
    "session.a.x == 1.5e3",
    "session.a.x == 0x1F",
    "session.a.x == 1_000",
    "session.a.x == 1j",
    "session.a.x == r'raw'",
    "session.a.x == '''t'''",
    "session.a.x == 'a' 'b'",
    "session.a.x == b'x'",
    "session.a.x == ...",
    "session.a.x == (1)",
    "not not session.a.x",
    "session.system.language",
    "session . a . x",
    "session.a.x\t== 1",
    "(session.a.x ==\n 1)",
    "session.a.x==1and session.b.y",
    "session.café.x",
    "session.a.match",
    "session.a.type",
    "session.a.case",
    "session._.x",
    "session.a.x == 'x' # comment",
    "session.a.x == 1 == session.b.y",
    "session.a.x < session.b.y > 3",
    # §4.7 examples
    "session.card_replace.selected_card_id",
    "session.project.authenticated == True",
    "session.card_replace.replacement_reason == 'lost' or "
    "session.card_replace.replacement_reason == 'not_received'",
    "0 < session.transfer_money.amount <= 5000",
    "session.survey.score != None",
    "0 > session.accounts.balance",
    "session.card_disambiguation.selected_card_eligible and session.project.authenticated",
    "session.card_replace.replacement_submitted\n",
    # docs/language/conditions.md#grammar, #what-is-rejected
    "session.a.b",
    "not session.a.b",
    "session.a.b == 'x'",
    "1 < session.a.b < 5",
    "session.a.b == session.c.d",
    "True and 1",
    "session.a.b == b'x'",
    "session.a.b == ...",
    "session.a.b == 1j",
    "session.project.x",
    "session.system.y",
    "(session.a).b",
    "((session).a).b",
    "session.a.b >= 2 and session.a.b <= 10",
    "session.a.b == (not session.c.d)",
    # layout
    "\nsession.a.b",
    "\n\nsession.a.b\n\n",
    "# leading comment\nsession.a.b",
    "  \nsession.a.b",
    "session.a.b \\\n    == 1",
    "\\\nsession.a.b",
    "(session.a.b\n  # comment inside\n  and session.c.d)",
    "session.a.b\r\n",
    "session.a.b   ",
    "session.a.b\n  # trailing comment",
    "session.a.b\n  \n",
    "\fsession.a.b",
    # lexical corners
    "session.a.b == .5",
    "session.a.b == 1.",
    "session.a.b == 1e-3",
    "session.a.b == 0o17 == 0b1_0 == 0X_f",
    "session.a.b == 00",
    "session.a.b == 09.5",
    "session.a.b == 2J",
    "session.a.b == RB'x' == Br'y' == U'z' == R'w'",
    'session.a.b == """multi\nline"""',
    "session.a.b == 'a\\\nb'",
    "session.a.b == '\\d'",
    "session.a.b == \"q\\\"x\" == 'it\\'s' == \"\"\"a\\\"\"\"\" == '''b\\''''",
    "session.a.b == 0 or session.c.d",
    "session.a.b == 00or session.c.d",
    "session.a.b == 0x1for session.c.d",
    "session.a.b=='x'and session.c.d",
    "session.a.android",
    "session.a.ﬁ",
    "session.ａ.ｉｆ",
    "session.a.x·y",
    "session.a.b" + " and session.a.b" * 300,
    "(" * 200 + "session.a.b" + ")" * 200,
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_accepted(source: str) -> None:
    check_ok(source)


# ---------------------------------------------------------------------------------------
# Rejected, with code and exact range

SYNTAX = "lsp.condition.syntax"
EMPTY = "lsp.condition.empty"
INCOMPLETE = "lsp.condition.incomplete_reference"
UNKNOWN = "lsp.condition.unknown_name"
INVALID_REF = "lsp.condition.invalid_reference"
UNARY = "lsp.condition.unsupported_unary"
COMPARISON = "lsp.condition.unsupported_comparison"
EXPRESSION = "lsp.condition.unsupported_expression"

REJECTED = [
    # empty
    ("«»", EMPTY),
    ("«   »", EMPTY),
    ("«\n\n»", EMPTY),
    ("«# only a comment»", EMPTY),
    # bare names
    ("«authenticated»", UNKNOWN),
    ("session.a.x == «true»", UNKNOWN),
    ("session.a.x == «false»", UNKNOWN),
    ("session.a.x == «null»", UNKNOWN),
    ("session.a.x == «undefined»", UNKNOWN),
    ("«x» == 1", UNKNOWN),
    ("«session»", INCOMPLETE),
    ("«session» == 1", INCOMPLETE),
    # references
    ("«session.a»", INVALID_REF),
    ("«session.a.b.c»", INVALID_REF),
    ("«a.b»", INVALID_REF),
    ("«a.b.c»", INVALID_REF),
    ("«SESSION.a.b»", INVALID_REF),
    ("«SESSION.a.x»", INVALID_REF),
    ("«slots.x»", INVALID_REF),
    ("«session.a.b.__class__»", INVALID_REF),
    ("«(1).a.b»", INVALID_REF),
    ("session.a.x == 1 and «session.b»", INVALID_REF),
    # unary
    ("session.a.x == «-1»", UNARY),
    ("session.a.x == «+1»", UNARY),
    ("«~session.a.x»", UNARY),
    ("«-session.a.x» > 0", UNARY),
    ("session.a.x > «-1.5»", UNARY),
    # comparisons
    ("session.a.x «is» None", COMPARISON),
    ("session.a.x «is not» None", COMPARISON),
    ("session.a.x «in» ['a', 'b']", COMPARISON),
    ("session.a.x «not in» ('a', 'b')", COMPARISON),
    ("session.a.x «not  in» ('a', 'b')", COMPARISON),
    # other expression nodes
    ("session.a.x == «f'...'»", EXPRESSION),
    ("session.a.x == «'a' f'{1}'»", EXPRESSION),
    ("«count + 1» > 2", EXPRESSION),
    ("«session.a.x + 1» > 2", EXPRESSION),
    ("«session.a.x * 2» > 2", EXPRESSION),
    ("«session.a.x & session.b.y»", EXPRESSION),
    ("«session.a.x | session.b.y»", EXPRESSION),
    ("«x[0]»", EXPRESSION),
    ("«session.a.x[0]» == 1", EXPRESSION),
    ("«len(x)» > 0", EXPRESSION),
    ("«session.a.x.lower()» == 'a'", EXPRESSION),
    ("session.a.x == «[1, 2]»", EXPRESSION),
    ("session.a.x == «[]»", EXPRESSION),
    ("session.a.x == «{}»", EXPRESSION),
    ("session.a.x == «{1: 2}»", EXPRESSION),
    ("session.a.x == «{1, 2}»", EXPRESSION),
    ("session.a.x == «()»", EXPRESSION),
    ("session.a.x == «(1, 2)»", EXPRESSION),
    ("«session.a.x, session.b.y»", EXPRESSION),
    ("«session.a.x,»", EXPRESSION),
    ("«[x for x in y]»", EXPRESSION),
    ("«session.a.x if session.a.y else session.a.z»", EXPRESSION),
    ("«lambda: 1»", EXPRESSION),
    ("«lambda x: x»", EXPRESSION),
    ("«(x := 1)»", EXPRESSION),
    ("«session.A-b.x»", EXPRESSION),
    ("«session.my-skill.x» == 1", EXPRESSION),
    ("«await x»", EXPRESSION),
    # syntax: what Python itself refuses
    ("session.a.x «&&» session.b.y", SYNTAX),
    ("session.a.x «||» session.b.y", SYNTAX),
    ("«!»session.a.x", SYNTAX),
    ("session.a.x «=» 1", SYNTAX),
    ("a «=» 1", SYNTAX),
    ("session.a.x «===» 1", SYNTAX),
    ("session.a.x «<>» 1", SYNTAX),
    ("session.a.x «==»", SYNTAX),
    ("session.a.x «and»", SYNTAX),
    ("session.a.x or «not»", SYNTAX),
    ("«(»session.a.x == 1", SYNTAX),
    ("«(»session.a.x == 1 and (session.b.y)", SYNTAX),
    ("(session.a.x == 1 and «(»session.b.y", SYNTAX),
    ("session.a.x == 1«)»", SYNTAX),
    ("(session.a.x«]»", SYNTAX),
    ("session.a.x == «'abc»", SYNTAX),
    ('session.a.x == «"abc»', SYNTAX),
    ("session.a.x == «rb'abc»", SYNTAX),
    ("session.a.x == «'''abc' == 'b'»", SYNTAX),
    ("session.a.x == «'a»\nb'", SYNTAX),
    ("session.a.«from»", SYNTAX),
    ("session.a.«class»", SYNTAX),
    ("session.«not».x", SYNTAX),
    ("session.«None».x", SYNTAX),
    ("session.a.«True»", SYNTAX),
    ("session.«1a».x", SYNTAX),
    ("session.a.x«;»", SYNTAX),
    ("«  »session.a.x", SYNTAX),
    ("«\t»session.a.x", SYNTAX),
    ("\n«  »session.a.x", SYNTAX),
    ("\\\n«  »session.a.x", SYNTAX),
    ("session.a.x«\n»and session.b.y", SYNTAX),
    ("session.a.x«\r\n»and session.b.y", SYNTAX),
    ("session.a.x\n«  »", SYNTAX),
    ("session.a.x «\\»", SYNTAX),
    ("session.a.x «\\» == 1", SYNTAX),
    ("session.a.x «\\»\n", SYNTAX),
    ("session.a.x «:=» 1", SYNTAX),
    ("session.a.x == «1abc»", SYNTAX),
    ("session.a.x == «0or» 1", SYNTAX),
    ("session.a.x == «07»", SYNTAX),
    ("session.a.x «≥» 1", SYNTAX),
    ("session.a.x«¹»", SYNTAX),
    ("session.a.x«\u00a0»== 1", SYNTAX),
    ("session.a.x == «not» session.b.y", SYNTAX),
    ("session.a.x == «b'é'»", SYNTAX),
    ("session.a.x == «'a' b'b'»", SYNTAX),
    ("session.a.x == «'\\N{no such name}'»", SYNTAX),
    ("«session.a.»", SYNTAX),
    ("session.a.x == 1 «session».b.y", SYNTAX),
    ("session.a.x == «$»", SYNTAX),
    ("session.a.x «\x00»", SYNTAX),
    ("session.a.x # «\x00»", SYNTAX),
    ("session.a.x == '«\udc80»'", SYNTAX),
]


@pytest.mark.parametrize(("marked", "code"), REJECTED)
def test_rejected(marked: str, code: str) -> None:
    check_error(marked, code)


def test_too_deep_points_at_the_201st_bracket() -> None:
    source = "(" * 201 + "1" + ")" * 201
    (issue,) = parse_condition(source).errors
    assert issue.range == TextRange(200, 201)


def test_messages_say_what_is_wrong_and_what_is_allowed() -> None:
    assert "True" in message_of("session.a.x == «true»", UNKNOWN)
    assert "None" in message_of("session.a.x == «null»", UNKNOWN)
    assert "session.<skill_id|project>.<entry>" in message_of("«authenticated»", UNKNOWN)
    assert "0 > session.accounts.balance" in message_of("session.a.x == «-1»", UNARY)
    assert "negative numbers" in message_of("session.a.x == «-1»", UNARY)
    assert "== None" in message_of("session.a.x «is» None", COMPARISON)
    assert "!= None" in message_of("session.a.x «is not» None", COMPARISON)
    assert "or" in message_of("session.a.x «in» ['a', 'b']", COMPARISON)
    assert "Hyphenated skill ids" in message_of("«session.my-skill.x» == 1", EXPRESSION)
    assert "`and`" in message_of("session.a.x «&&» session.b.y", SYNTAX)
    assert "`not`" in message_of("«!»session.a.x", SYNTAX)
    assert "`==`" in message_of("session.a.x «=» 1", SYNTAX)
    assert "keyword" in message_of("session.a.«class»", SYNTAX)
    assert "never closed" in message_of("«(»session.a.x == 1", SYNTAX)
    assert "Unterminated" in message_of("session.a.x == «'abc»", SYNTAX)
    assert "indent" in message_of("«  »session.a.x", SYNTAX)
    assert "parentheses" in message_of("session.a.x«\n»and session.b.y", SYNTAX)
    assert "lower case" in message_of("«SESSION.a.b»", INVALID_REF)
    assert ">=" in message_of("session.a.x «≥» 1", SYNTAX)
    for fixture, code in [("«len(x)» > 0", EXPRESSION), ("session.a.x «==»", SYNTAX)]:
        assert "session.<skill_id|project>.<entry>" in message_of(fixture, code)


def test_independent_errors_are_all_reported() -> None:
    result = parse_condition("authenticated and session.a.x == -1 or session.b")
    assert [e.code for e in result.errors] == [UNKNOWN, UNARY, INVALID_REF]


def test_inner_errors_of_a_rejected_construct_are_not_repeated() -> None:
    result = parse_condition("len(foo, bar) > 0")
    assert [e.code for e in result.errors] == [EXPRESSION]


def test_never_raises_on_deep_nesting() -> None:
    # CPython itself gives up on ~3000 nested `not` (documented difference): we only
    # require that nothing raises and that the result is consistent.
    result = parse_condition("not " * 5000 + "session.a.b")
    assert result.ok == (result.tree is not None)
    assert not parse_condition("(" * 5000).ok
    assert not parse_condition("-" * 5000 + "1").ok


# ---------------------------------------------------------------------------------------
# Memory references


def ref_at(source: str, ref: MemoryRef) -> tuple[str, str, str]:
    return (
        source[ref.range.start : ref.range.end],
        source[ref.namespace_range.start : ref.namespace_range.end],
        source[ref.entry_range.start : ref.entry_range.end],
    )


def test_refs_exact_ranges() -> None:
    source = "session.card.id == 'x' and not session.project.auth"
    result = check_ok(source)
    assert [r.key for r in result.refs] == ["card.id", "project.auth"]
    first, second = result.refs
    assert first.range == TextRange(0, 15)
    assert first.namespace_range == TextRange(8, 12)
    assert first.entry_range == TextRange(13, 15)
    assert ref_at(source, second) == ("session.project.auth", "project", "auth")
    assert second.range == TextRange(31, 51)


def test_refs_with_whitespace_around_dots() -> None:
    source = "session . a\t.  x"
    (ref,) = check_ok(source).refs
    assert (ref.namespace, ref.entry) == ("a", "x")
    assert ref.range == TextRange(0, 16)
    assert ref.namespace_range == TextRange(10, 11)
    assert ref.entry_range == TextRange(15, 16)


def test_refs_across_lines_inside_parentheses() -> None:
    source = "(session\n  .a\n  .b)"
    (ref,) = check_ok(source).refs
    assert ref_at(source, ref) == ("session\n  .a\n  .b", "a", "b")


def test_parenthesised_prefix_reference() -> None:
    source = "(session.a).b == 1"
    result = check_ok(source)
    (ref,) = result.refs
    assert ref.key == "a.b"
    assert ref.range == TextRange(1, 13)
    assert isinstance(result.tree, CompareExpr)
    assert isinstance(result.tree.left, RefExpr)
    assert result.tree.left.ref == ref
    assert result.tree.left.range == TextRange(0, 13)  # the node spans the parentheses


def test_refs_are_nfkc_normalised() -> None:
    (ref,) = check_ok("session.ﬁle.ｘ").refs
    assert (ref.namespace, ref.entry) == ("file", "x")
    assert ref.namespace_range == TextRange(8, 11)


@pytest.mark.parametrize(
    ("source", "keys"),
    [
        ("session.a.x == ", ["a.x"]),
        ("session.a.x && session.b.y", ["a.x", "b.y"]),
        ("session.a.x == 'unterminated", ["a.x"]),
        ("session.a.x ! session.b.y", ["a.x", "b.y"]),
        ("(session.a.x or session.b.y", ["a.x", "b.y"]),
        ("session.a.x\nand session.b.y", ["a.x", "b.y"]),
        ("session.a.", []),
        ("session.a.x == session.", ["a.x"]),
        ("x.session.a.b ==", []),
        ("session.a.b.c ==", ["a.b"]),
        ("session.a.class == session.b.c ==", ["b.c"]),
    ],
)
def test_refs_recovered_from_failed_parse(source: str, keys: list[str]) -> None:
    result = parse_condition(source)
    assert not result.ok
    assert result.tree is None
    assert [r.key for r in result.refs] == keys
    for ref in result.refs:
        text = source[ref.range.start : ref.range.end]
        assert text.startswith("session") and text.endswith(ref.entry)


def test_refs_reported_when_checks_fail() -> None:
    result = parse_condition("session.a.x in [session.b.y] or len(session.c.z)")
    assert not result.ok
    assert [r.key for r in result.refs] == ["a.x", "b.y", "c.z"]


# ---------------------------------------------------------------------------------------
# Literals


@pytest.mark.parametrize(
    ("literal", "value", "kind"),
    [
        ("'a' 'b'", "ab", "str"),
        ('"x" \'y\' """z"""', "xyz", "str"),
        ("r'\\n'", "\\n", "str"),
        ("'\\n'", "\n", "str"),
        ("'\\u00e9'", "é", "str"),
        ("u'x'", "x", "str"),
        ("'''t'''", "t", "str"),
        ("b'x'", b"x", "bytes"),
        ("b'a' rb'\\n'", b"a\\n", "bytes"),
        ("42", 42, "int"),
        ("0x1F", 31, "int"),
        ("0o17", 15, "int"),
        ("0b101", 5, "int"),
        ("1_000", 1000, "int"),
        ("1.5e3", 1500.0, "float"),
        (".5", 0.5, "float"),
        ("1.", 1.0, "float"),
        ("2j", 2j, "complex"),
        ("True", True, "bool"),
        ("False", False, "bool"),
        ("None", None, "none"),
        ("...", ..., "ellipsis"),
    ],
)
def test_literal_decoding(literal: str, value: object, kind: str) -> None:
    source = "session.a.x == " + literal
    tree = check_ok(source).tree
    assert isinstance(tree, CompareExpr)
    lit = tree.comparators[0]
    assert isinstance(lit, LiteralExpr)
    assert lit.kind == kind
    assert lit.value == value
    assert type(lit.value) is type(value)
    assert lit.range == TextRange(15, len(source))


# ---------------------------------------------------------------------------------------
# Tree shape


def test_precedence_or_below_and() -> None:
    tree = check_ok("session.a.p or session.a.q and session.a.r").tree
    assert isinstance(tree, BoolOpExpr) and tree.op == "or"
    left, right = tree.operands
    assert isinstance(left, RefExpr) and left.ref.entry == "p"
    assert isinstance(right, BoolOpExpr) and right.op == "and"
    assert [o.ref.entry for o in right.operands if isinstance(o, RefExpr)] == ["q", "r"]
    assert right.range == TextRange(15, 42)


def test_not_binds_looser_than_comparison() -> None:
    tree = check_ok("not session.a.x == 'y'").tree
    assert isinstance(tree, NotExpr)
    assert isinstance(tree.operand, CompareExpr)
    assert tree.range == TextRange(0, 22)


def test_chained_comparison_and_op_ranges() -> None:
    source = "0 < session.a.x <= 10"
    tree = check_ok(source).tree
    assert isinstance(tree, CompareExpr)
    assert tree.ops == ("<", "<=")
    assert [source[r.start : r.end] for r in tree.op_ranges] == ["<", "<="]
    assert isinstance(tree.left, LiteralExpr) and tree.left.value == 0
    assert len(tree.comparators) == 2
    assert tree.range == TextRange(0, len(source))


def test_flat_and_nested_bool_ops() -> None:
    flat = check_ok("session.a.x or session.a.y or session.a.z").tree
    assert isinstance(flat, BoolOpExpr) and len(flat.operands) == 3
    nested = check_ok("(session.a.x or session.a.y) or session.a.z").tree
    assert isinstance(nested, BoolOpExpr) and len(nested.operands) == 2
    assert isinstance(nested.operands[0], BoolOpExpr)


def test_parentheses_do_not_create_nodes() -> None:
    tree = check_ok("((session.a.x))").tree
    assert isinstance(tree, RefExpr)
    assert tree.range == TextRange(2, 13)


def test_results_are_memoised_and_immutable() -> None:
    assert parse_condition("session.a.x == 1") is parse_condition("session.a.x == 1")
    result = parse_condition("session.a.x == 1")
    with pytest.raises(AttributeError):
        result.refs = ()  # type: ignore[misc]
    hash(result)


# ---------------------------------------------------------------------------------------
# Differential property test against Python's own parser
#
# The reference below restates the engine's rules (docs/language/conditions.md) on top of
# `ast.parse(src, mode="eval")`: a condition is accepted iff Python parses it and every
# node is a constant, an `and`/`or`, a `not`, a comparison with == != < <= > >= only, or an
# attribute node of exactly the shape session.<ns>.<entry> (whose inner nodes are not
# visited again). Known deliberate differences (documented in conditions.py) are limited
# to nesting deep enough to exhaust CPython's own parser stack, which these generators
# never produce.

_ALLOWED_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _reference_allowed(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.BoolOp):
        return all(_reference_allowed(value) for value in node.values)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not) and _reference_allowed(node.operand)
    if isinstance(node, ast.Compare):
        return all(isinstance(op, _ALLOWED_COMPARISONS) for op in node.ops) and all(
            _reference_allowed(x) for x in (node.left, *node.comparators)
        )
    if isinstance(node, ast.Attribute):
        inner = node.value
        return (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.value, ast.Name)
            and inner.value.id == "session"
        )
    return False


def reference_accepts(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
        return _reference_allowed(tree.body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False


def reference_keys(source: str) -> list[str]:
    tree = ast.parse(source, mode="eval")
    keys = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "session"
        ):
            keys.append(f"{node.value.attr}.{node.attr}")
    return sorted(keys)


_REFS = ["session.a.b", "session.project.x", "session . c . d", "session.ﬁ.y", "(session.a).b"]
_LITERALS = ["1", "0", "1.5", ".5", "0x1F", "1_000", "2j", "1e3", "'s'", '"d"', "b'x'"]
_LITERALS += ["r'r'", "'''t'''", "True", "False", "None", "...", "f'x'", "00", "1."]
_BAD_ATOMS = ["session", "session.a", "session.a.b.c", "x", "true", "SESSION.a.b", "a.b"]
_BAD_ATOMS += ["-1", "+1", "~session.a.b", "[1]", "()", "{}", "len(x)", "x[0]", "match"]
_BINARY = ["and", "or", "==", "!=", "<", "<=", ">", ">=", "and", "or", "=="]
_BINARY += ["in", "not in", "is", "is not", "+", "-", "*", "&", "|", ","]
_NOISE = ["(", ")", "[", "]", "not", "and", "or", "=", "==", "-", ".", "session", "a", "b"]
_NOISE += ["'", '"', "\\", "#", "!", "&&", ";", ":", ":=", "if", "else", "lambda", "class"]
_NOISE += ["None", "True", "1", "0", "j", "e", "é", "¹", "\u00a0", "in", "is", "x"]
_SEPARATORS = [" "] * 8 + ["", "", "\t", "\n", "  ", " # c\n", "\\\n", "\f", "\r\n"]


def _atoms() -> st.SearchStrategy[list[str]]:
    return st.sampled_from(_REFS * 3 + _LITERALS + _BAD_ATOMS).map(lambda a: [a])


def _combine(children: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    return st.one_of(
        st.tuples(children, st.sampled_from(_BINARY), children).map(lambda t: [*t[0], t[1], *t[2]]),
        children.map(lambda c: ["not", *c]),
        children.map(lambda c: ["(", *c, ")"]),
    )


_EXPRESSIONS = st.recursive(_atoms(), _combine, max_leaves=6)


@st.composite
def conditions(draw: st.DrawFn) -> str:
    tokens: list[str] = list(draw(_EXPRESSIONS))
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, len(tokens)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        if action == "insert":
            tokens.insert(where, draw(st.sampled_from(_NOISE)))
        elif tokens and where < len(tokens):
            if action == "delete":
                del tokens[where]
            else:
                tokens[where] = draw(st.sampled_from(_NOISE))
    parts = [draw(st.sampled_from(["", "", "", "\n", " ", "# c\n", "\\\n"]))]
    for i, token in enumerate(tokens):
        if i:
            parts.append(draw(st.sampled_from(_SEPARATORS)))
        parts.append(token)
    parts.append(draw(st.sampled_from(["", "", "", "\n", " ", " # c", "\n  ", "\\\n"])))
    return "".join(parts)


_FUZZ_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@_FUZZ_SETTINGS
@given(conditions())
def test_differential_against_python_parser(source: str) -> None:
    result = parse_condition(source)
    assert result.ok == reference_accepts(source), (source, result.errors)
    if result.ok:
        assert sorted(r.key for r in result.refs) == reference_keys(source)
    else:
        assert result.tree is None and result.errors


@_FUZZ_SETTINGS
@given(st.text(alphabet="session.abx01 ()'\"\\\n\t#=<>!-+jeoE_&|;,[]{}:~fr", max_size=24))
def test_differential_on_raw_characters(source: str) -> None:
    result = parse_condition(source)
    assert result.ok == reference_accepts(source), (source, result.errors)
    for issue in result.errors:
        assert 0 <= issue.range.start <= issue.range.end <= len(source)
