"""Tests for ``mantle_lsp.syntax.yaml_tree``: positioned YAML nodes and value-to-source maps."""

from __future__ import annotations

import datetime
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax.errors import SyntaxIssue
from mantle_lsp.syntax.sites import SITE_LABELS, site_from_scalar, site_from_text
from mantle_lsp.syntax.text import TextRange
from mantle_lsp.syntax.yaml_tree import (
    YAML_DUPLICATE_KEY,
    YAML_SYNTAX,
    ValueMap,
    YMap,
    YNode,
    YScalar,
    YSeq,
    anchor_empty_ranges,
    describe,
    empty_value_keys,
    parse_yaml,
    scalar_value_map,
    to_python,
)
from support import marked


def parse_ok(text: str, base: int = 0) -> YNode:
    root, issues = parse_yaml(text, base)
    assert issues == []
    assert root is not None
    return root


def mapping(text: str) -> YMap:
    root = parse_ok(text)
    assert isinstance(root, YMap)
    return root


def scalar_at(root: YNode, *path: str | int) -> YScalar:
    node: YNode | None = root
    for p in path:
        if isinstance(p, int):
            assert isinstance(node, YSeq)
            node = node.items[p]
        else:
            assert isinstance(node, YMap)
            node = node.get(p)
    assert isinstance(node, YScalar)
    return node


# ---------------------------------------------------------------------------------------------
# Nodes and ranges


def test_node_ranges_values_and_styles() -> None:
    text, r = marked(
        """\
        «a»: «1»
        «b»: «yes»
        «c»: «'x'»
        «d»: «[«p», «q»]»
        «e»: «{«f»: «null»}»
        «g»: «|
          block
        »"""
    )
    root = mapping(text)
    assert root.range == TextRange(0, len(text))
    (ka, va), (kb, vb), (kc, vc), (kd, vd), (ke, ve), (kg, vg) = root.items
    assert [k.range for k in (ka, kb, kc, kd, ke, kg)] == [r[0], r[2], r[4], r[6], r[10], r[14]]
    assert isinstance(va, YScalar) and va.range == r[1] and va.value == 1 and va.raw == "1"
    assert isinstance(vb, YScalar) and vb.value is True and vb.raw == "yes"  # YAML 1.1
    assert isinstance(vc, YScalar) and vc.range == r[5] and vc.style == "'" and vc.value == "x"
    assert isinstance(vd, YSeq) and vd.range == r[7]
    assert [i.range for i in vd.items] == [r[8], r[9]]
    assert isinstance(ve, YMap) and ve.range == r[11]
    assert ve.items[0][0].range == r[12] and ve.items[0][1].range == r[13]
    assert isinstance(vg, YScalar) and vg.style == "|" and vg.range == r[15]
    assert vg.value == "block\n"
    assert va.style is None and va.tag == "tag:yaml.org,2002:int"


def test_block_collections_end_at_their_last_child() -> None:
    text, r = marked(
        """\
        a:
          «b: 1
          c: [x,
            y]»
          # a comment that follows

        d: «{e: 1}»
        f:
        «- x
        - |
          block
        »# trailing comment

        g: «[1, 2]»   # flow collections end at their bracket
        """
    )
    root = mapping(text)
    a, d, f, g = (root.get(k) for k in "adfg")
    assert isinstance(a, YMap) and not a.flow and a.range == r[0]
    assert isinstance(d, YMap) and d.flow and d.range == r[1]
    assert isinstance(f, YSeq) and not f.flow and f.range == r[2]
    assert isinstance(g, YSeq) and g.flow and g.range == r[3]
    assert root.range == TextRange(0, r[3].end)


def test_base_offset_shifts_every_range() -> None:
    root = parse_ok("a: [1, x]\n", base=100)
    assert isinstance(root, YMap)
    assert root.range.start == 100
    assert root.items[0][0].range == TextRange(100, 101)
    seq = root.items[0][1]
    assert isinstance(seq, YSeq)
    assert [i.range for i in seq.items] == [TextRange(104, 105), TextRange(107, 108)]


def test_empty_document_is_none_without_issues() -> None:
    assert parse_yaml("") == (None, [])
    assert parse_yaml("# only a comment\n\n") == (None, [])


def test_ymap_accessors_and_later_duplicate_wins() -> None:
    root, issues = parse_yaml("a: 1\nb: 2\na: 3\n5: five\n[x]: list-key\n")
    assert isinstance(root, YMap)
    assert [i.code for i in issues] == [YAML_DUPLICATE_KEY]
    v = root.get("a")
    assert isinstance(v, YScalar) and v.value == 3
    k = root.key_node("a")
    assert k is not None and k.range == TextRange(10, 11)
    assert root.has("b") and not root.has("zz") and root.get("zz") is None
    # pairs() skips the non-scalar key
    assert [k.raw for k, _ in root.pairs()] == ["a", "b", "a", "5"]


def test_describe() -> None:
    root = mapping("n:\ns: x\nb: true\ni: 3\nf: 1.5\nl: []\nm: {}\nd: 2020-01-02\n")
    got = {k.raw: describe(v) for k, v in root.pairs()}
    assert got == {
        "n": "null",
        "s": "a string",
        "b": "a boolean",
        "i": "a number",
        "f": "a number",
        "l": "a list",
        "m": "a mapping",
        "d": "date",
    }
    assert describe(None) == "nothing"
    n = root.get("n")
    assert isinstance(n, YScalar) and n.is_null and n.str_value is None
    s = root.get("s")
    assert isinstance(s, YScalar) and s.str_value == "x"


# ---------------------------------------------------------------------------------------------
# Issues


def test_duplicate_key_warning_on_the_later_key() -> None:
    text, r = marked(
        """\
        a: 1
        b:
          x: 1
          «x»: 2
        «a»: 3
        m: {<<: {p: 1}, <<: {q: 2}}
        """
    )
    root, issues = parse_yaml(text)
    assert root is not None
    assert all(i.code == YAML_DUPLICATE_KEY and i.severity == "warning" for i in issues)
    assert sorted(i.range for i in issues) == [r[0], r[1]]  # merge keys `<<` never count


def test_duplicate_keys_compare_values_not_spelling() -> None:
    # `on` and `true` are the same YAML 1.1 boolean key; `1` and `"1"` are not the same
    text, r = marked("on: a\n«true»: b\n2: c\n'2': d\n")
    _, issues = parse_yaml(text)
    assert [(i.code, i.range) for i in issues] == [(YAML_DUPLICATE_KEY, r[0])]


def test_merge_keys_are_applied_like_the_engine_loader() -> None:
    text = """\
base: &b {x: 1, y: 2}
other: &o {y: 3, z: 4}
one:
  <<: *b
  y: 9
many:
  <<: [*b, *o]
  x: 0
chain: &c {<<: *b, w: 5}
top: {<<: *c}
self: &s {<<: *s, k: 1}
"""
    root, issues = parse_yaml(text)
    assert issues == []
    assert to_python(root) == yaml.safe_load(text)
    assert isinstance(root, YMap)
    one = root.get("one")
    assert isinstance(one, YMap)
    assert [k.raw for k, _ in one.pairs()] == ["x", "y", "y"]  # merged pairs come first
    y = one.get("y")
    assert isinstance(y, YScalar) and y.value == 9  # own keys win
    many = root.get("many")
    assert isinstance(many, YMap)
    assert {k.raw: to_python(v) for k, v in many.pairs()} == {"x": 0, "y": 2, "z": 4}


def test_merge_chains_and_merge_bombs_stay_fast() -> None:
    chain = "a0: &a0 {k0: 0}\n" + "".join(
        f"a{i}: &a{i} {{<<: *a{i - 1}, k{i}: {i}}}\n" for i in range(1, 300)
    )
    root, issues = parse_yaml(chain)
    assert issues == []
    assert to_python(root) == yaml.safe_load(chain)
    bomb = "a0: &a0 {k: 1}\n" + "".join(
        f"a{i}: &a{i} {{<<: [" + ", ".join([f"*a{i - 1}"] * 9) + "]}\n" for i in range(1, 10)
    )
    t0 = time.perf_counter()
    root, issues = parse_yaml(bomb)
    assert time.perf_counter() - t0 < 1.0
    assert issues == []
    assert isinstance(root, YMap)
    a9 = root.get("a9")
    assert isinstance(a9, YMap) and len(a9.items) == 1  # one winning pair per merged key
    assert to_python(a9) == {"k": 1}


def test_a_very_long_merge_chain_is_cut_not_a_crash() -> None:
    chain = "a0: &a0 {k0: 0}\n" + "".join(
        f"a{i}: &a{i} {{<<: *a{i - 1}, k{i}: {i}}}\n" for i in range(1, 3000)
    )
    t0 = time.perf_counter()
    root, issues = parse_yaml(chain)  # was a RecursionError
    assert time.perf_counter() - t0 < 5.0
    assert issues == [] and isinstance(root, YMap)
    first = root.get("a100")
    assert isinstance(first, YMap) and len(first.items) == 101
    last = root.get("a2999")
    assert isinstance(last, YMap) and [k.raw for k, _ in last.pairs()] == ["k2999"]


def test_merge_of_a_scalar_is_an_error() -> None:
    text, r = marked("a:\n  <<: «5»\n  k: 1\n")
    root, issues = parse_yaml(text)
    assert [(i.code, i.range) for i in issues] == [(YAML_SYNTAX, r[0])]
    assert "merge key" in issues[0].message
    assert to_python(root) == {"a": {"k": 1}}


def test_no_duplicate_warning_for_distinct_keys() -> None:
    _, issues = parse_yaml("a: 1\nb: 2\nc: {a: 1}\nd: [{a: 1}, {a: 2}]\n")
    assert issues == []


@pytest.mark.parametrize(
    ("fixture", "fragment"),
    [
        ("a: b«:» c\n", "mapping values are not allowed in this context"),
        ("a: [1, 2\nb«:» 3\n", "did not find expected ',' or ']'"),
        ("a:\n«\t»b: 1\n", "cannot start any token"),
        ("a: 1\n b«:» 2\n", "mapping values are not allowed"),
        ("- a\n«b»: 1\n", "did not find expected '-' indicator"),
        ("a: «*»unknown\n", "found undefined alias"),
        # at the end of the input the last non-blank character is underlined
        ("a: 'unterminate«d»\n\n", "found unexpected end of stream"),
        ("a: [1, «2»\n", ""),
    ],
)
def test_yaml_error_ranges(fixture: str, fragment: str) -> None:
    text, r = marked(fixture)
    expected = [m for m in r if m.length == 1]
    root, issues = parse_yaml(text, base=7)
    assert root is None
    assert len(issues) == 1
    issue = issues[0]
    assert issue.code == YAML_SYNTAX and issue.severity == "error"
    assert issue.message.startswith("YAML error: ")
    assert fragment in issue.message
    # a one-character range, shifted by base
    assert issue.range == expected[-1].shift(7)


def test_multiple_documents_are_an_error() -> None:
    text, r = marked("a: 1\n«-»--\nb: 2\n")
    root, issues = parse_yaml(text)
    assert root is None
    assert [(i.code, i.range) for i in issues] == [(YAML_SYNTAX, r[0])]
    assert "single document" in issues[0].message


def test_bad_typed_scalar_keeps_its_text_and_reports() -> None:
    text, r = marked("a: «!!int nope»\nb: «2020-13-45»\nc: ok\n")
    root, issues = parse_yaml(text)
    assert isinstance(root, YMap)
    assert [(i.code, i.severity, i.range) for i in issues] == [
        (YAML_SYNTAX, "error", r[0]),
        (YAML_SYNTAX, "error", r[1]),
    ]
    a = root.get("a")
    assert isinstance(a, YScalar) and a.value == "nope"
    b = root.get("b")
    assert isinstance(b, YScalar) and b.value == "2020-13-45"
    assert "month must be in 1..12" in issues[1].message
    c = root.get("c")
    assert isinstance(c, YScalar) and c.value == "ok"


# ---------------------------------------------------------------------------------------------
# Aliases, bombs, depth


def test_aliases_share_nodes() -> None:
    root = mapping("a: &x {k: 1}\nb: *x\n")
    assert root.get("a") is root.get("b")
    assert to_python(root) == {"a": {"k": 1}, "b": {"k": 1}}


def test_an_alias_as_a_key_keeps_the_shared_mapping_as_written() -> None:
    # `? *x` used the mapping anchored at `a` as a key: it was walked a second time and
    # got its pairs twice ({k: 1, k: 1}), under both names
    root = mapping("a: &x {k: 1}\n? *x\n: v\n")
    shared = root.get("a")
    assert isinstance(shared, YMap) and len(shared.items) == 1
    assert root.items[1][0] is shared
    assert to_python(root) == {"a": {"k": 1}, "{'k': 1}": "v"}


def test_recursive_alias_terminates() -> None:
    root = mapping("a: &a [*a, 1]\nm: &m {self: *m, v: 2}\n")
    seq = root.get("a")
    assert isinstance(seq, YSeq) and seq.items[0] is seq  # a real cycle
    assert to_python(root) == {"a": [None, 1], "m": {"self": None, "v": 2}}


def _billion_laughs(levels: int = 9) -> str:
    out = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        out.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(out) + "\n"


def test_alias_bomb_parses_fast_and_to_python_terminates() -> None:
    text = _billion_laughs(9)
    t0 = time.perf_counter()
    root, issues = parse_yaml(text)
    assert issues == []
    assert isinstance(root, YMap)
    assert time.perf_counter() - t0 < 0.5
    t0 = time.perf_counter()
    value = to_python(root)
    assert time.perf_counter() - t0 < 2.0
    assert isinstance(value, dict) and value["l0"] == ["lol"] * 9
    # the expansion is cut off, not materialized
    assert len(repr(value)) < 10_000_000


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000,
        "{" * 3000 + "}" * 3000,
        "".join(" " * i + "k:\n" for i in range(2000)),
        "- " * 3000 + "x\n",
    ],
)
def test_deep_nesting_is_an_issue_not_a_crash(text: str) -> None:
    root, issues = parse_yaml(text)
    assert root is None
    assert [i.code for i in issues] == [YAML_SYNTAX]
    assert 0 <= issues[0].range.start <= issues[0].range.end <= len(text)


def test_nesting_below_the_limit_converts() -> None:
    depth = 900
    root = parse_ok("[" * depth + "x" + "]" * depth)
    node = root
    for _ in range(depth):
        assert isinstance(node, YSeq)
        node = node.items[0]
    assert isinstance(node, YScalar) and node.value == "x"
    value = to_python(root)  # deep values are cut, never a RecursionError
    while isinstance(value, list):
        value = value[0]
    assert value in ("x", None)


def test_to_python_values() -> None:
    root = mapping("d: 2021-03-04\nt: 2021-03-04 10:00:00\nb: !!binary aGk=\nn: ~\nf: .inf\n")
    value = to_python(root)
    assert value["d"] == "2021-03-04"  # dates stay text
    assert value["t"] == "2021-03-04 10:00:00"
    assert value["b"] == "aGk="
    assert value["n"] is None and value["f"] == float("inf")
    d = root.get("d")
    assert isinstance(d, YScalar) and d.value == datetime.date(2021, 3, 4)
    assert to_python(None) is None
    # non-scalar and unhashable keys become their repr
    assert to_python(mapping("? [a, b]\n: 1\n")) == {"['a', 'b']": 1}


# ---------------------------------------------------------------------------------------------
# empty values → key anchors


def test_empty_value_keys_and_anchor_empty_ranges() -> None:
    text, r = marked("«a»:\nb: 1\nc:\n  «d»:\n  e: [x]\n«f»: \n")
    root = parse_ok(text)
    anchors = empty_value_keys(root)
    assert sorted(anchors.values()) == [r[0], r[1], r[2]]
    a = root.get("a") if isinstance(root, YMap) else None
    assert a is not None and a.range.start == a.range.end
    moved = anchor_empty_ranges(
        [
            SyntaxIssue("x", "empty", a.range),
            SyntaxIssue("y", "not empty", TextRange(0, 1), "warning"),
            SyntaxIssue("z", "empty elsewhere", TextRange(1, 1)),
        ],
        None,
        root,
    )
    assert [(i.code, i.range, i.severity) for i in moved] == [
        ("x", r[0], "error"),
        ("y", TextRange(0, 1), "warning"),
        ("z", TextRange(1, 1), "error"),
    ]
    # without an empty range nothing is walked or moved
    kept = [SyntaxIssue("y", "not empty", TextRange(0, 1))]
    assert anchor_empty_ranges(kept, root) == kept
    assert empty_value_keys(None) == {}
    cyc = parse_ok("a: &a {k: *a, e: }\n")
    assert len(empty_value_keys(cyc)) == 1


# ---------------------------------------------------------------------------------------------
# Scalar value maps


def check_map(text: str, node: YScalar) -> ValueMap:
    """The map is exact and every value character points at the character it came from."""
    vm = scalar_value_map(text, node)
    assert vm.exact, (text, node.raw)
    assert len(vm.starts) == len(vm.ends) == len(node.raw)
    for i, (s, e) in enumerate(zip(vm.starts, vm.ends, strict=True)):
        assert node.range.start <= s < e <= node.range.end
        ch = node.raw[i]
        if e - s == 1:
            # a verbatim character, or a line break that folding turned into a space or kept
            assert text[s] == ch or (text[s] == "\n" and ch in " \n"), (i, ch, text[s])
        else:
            # an escape sequence or a doubled single quote
            assert text[s] in "\\'", (i, ch, text[s:e])
    starts = list(vm.starts)
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    return vm


SCALAR_CASES: list[tuple[str, str]] = [
    # plain
    ("k: plain text\n", "plain text"),
    ("k: «two\n  lines»\n", "two lines"),
    ("k: trailing   \n  spaces   dropped  \n", "trailing spaces   dropped"),
    ("k: para\n\n  graph\n\n\n  three\n", "para\ngraph\n\nthree"),
    ("k: a # comment\n", "a"),
    ("k: [a\n  b, c]\n", "a b"),
    ("k: é😀 x\n", "é😀 x"),
    # single-quoted
    ("k: 'it''s'\n", "it's"),
    ("k: 'one\n  two'\n", "one two"),
    ("k: 'a\n\n  b ''c'''\n", "a\nb 'c'"),
    ("k: '  lead\n \n  trail  '\n", "  lead\ntrail  "),
    ("k: ''\n", ""),
    # double-quoted
    ('k: "tab\\there"\n', "tab\there"),
    ('k: "say \\"hi\\""\n', 'say "hi"'),
    ('k: "\\u00e9\\x41\\U0001F600"\n', "éA😀"),
    (
        'k: "\\0\\a\\b\\v\\f\\r\\e\\ \\/\\\\\\N\\_\\L\\P"\n',
        "\0\a\b\v\f\r\x1b /\\\x85\xa0\u2028\u2029",
    ),
    ('k: "a\\\n   b"\n', "ab"),
    ('k: "a \\\n  b"\n', "a b"),
    ('k: "a\\\n\n  b"\n', "a\nb"),
    ('k: "x\\\n\n\n z"\n', "x\n\nz"),
    ('k: "a\\x20\n  b"\n', "a  b"),
    ('k: "a\\t\n  b"\n', "a\t b"),
    ('k: "a\t\n b"\n', "a b"),
    ('k: "one\n\n  two"\n', "one\ntwo"),
    ('k: "😀\\u00e9"\n', "😀é"),
    # literal
    ("k: |\n  a\n  b\n", "a\nb\n"),
    ("k: |-\n  a\n\n  b\n\n", "a\n\nb"),
    ("k: |+\n  a\n\n  b\n\n\n", "a\n\nb\n\n\n"),
    ("k: |\n  a\n   \n  b\n", "a\n \nb\n"),
    ("k: |\n  a\n   \n", "a\n \n"),
    ("k: |\n\n\n  a\n", "\n\na\n"),
    ("k: |\n  a", "a"),
    ("k: |2\n    a\n  b\n", "  a\nb\n"),
    ("k: |1\n  a\n", " a\n"),
    ("k: | # comment\n  a\n", "a\n"),
    ("k: |\n  😀é\n  b\n", "😀é\nb\n"),
    ("k: |\n  \n\n", ""),
    ("k: |+\n \n  \n\nz: 1\n", "\n\n\n"),
    # folded
    ("k: >\n  a\n  b\n", "a b\n"),
    ("k: >\n  a\n  b\n\n  c\n    d\n    e\n  f\n\n\n  g\n", "a b\nc\n  d\n  e\nf\n\ng\n"),
    ("k: >-\n  a\n\n\n    b\n  c\n", "a\n\n\n  b\nc"),
    ("k: >\n  a\n   \n  b\n", "a\n \nb\n"),
    ("k: >\n  a\n\n  \tb\n", "a\n\n\tb\n"),
    ("k: >\n  a \n  b\n", "a  b\n"),
    ("k: >+\n  a\n\n", "a\n\n"),
    ("k: >2-\n   a\n  b\n", " a\nb"),
    ("k: >-2\n   a\n  b\n", " a\nb"),
    ("k: >\n\n  a\n  b\n", "\na b\n"),
    # indentation indicators are relative to the enclosing block collection
    ("a:\n  k: |2\n      x\n    y\n", "  x\ny\n"),
    ("- |2\n   x\n  y\n", " x\ny\n"),
    ("a:\n  - k: >2-\n       x\n      y\n", " x\ny"),
    # node properties in front of the scalar
    ('k: &x "a\\tb"\n', "a\tb"),
    ("k: !!str\n  'q\n  r'\n", "q r"),
    ("k: !!str # c\n  'q\n  r'\n", "q r"),
    ("k: &a plain\n  more\n", "plain more"),
    ("k: &a1 |\n  x\n", "x\n"),
    ("k: &a !!str >\n  x\n  y\n", "x y\n"),
    ('k: !<tag:yaml.org,2002:str> "a\\tb"\n', "a\tb"),
]


def _case_scalar(node: YNode) -> YScalar | None:
    """The value of the first key ``k``, or the first scalar sequence item."""
    if isinstance(node, YMap):
        for k, v in node.items:
            if isinstance(k, YScalar) and k.value == "k":
                return _case_scalar(v) if not isinstance(v, YScalar) else v
            found = _case_scalar(v)
            if found is not None:
                return found
    elif isinstance(node, YSeq):
        for item in node.items:
            found = item if isinstance(item, YScalar) else _case_scalar(item)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize(("fixture", "value"), SCALAR_CASES)
def test_scalar_value_map_is_exact(fixture: str, value: str) -> None:
    text, _ = marked(fixture, dedent=False)
    root = parse_ok(text)
    node = _case_scalar(root)
    assert node is not None
    assert node.raw == value
    check_map(text, node)


def test_value_map_points_at_escapes_and_folds() -> None:
    text, r = marked('k: "«\\u00e9»«\\t»x«\\\n  »«y»\n  «z»"\n', dedent=False)
    node = scalar_at(parse_ok(text), "k")
    assert node.raw == "é\txy z"
    vm = check_map(text, node)
    assert vm.range(0, 1) == r[0]
    assert vm.range(1, 2) == r[1]
    assert vm.range(3, 4) == r[3]  # the escaped line break produced nothing
    assert text[vm.starts[4]] == "\n"  # the folded line break is the space
    assert vm.range(5, 6) == r[4]


def test_value_map_of_a_folded_block_scalar() -> None:
    text, r = marked("k: >-\n  «first»\n  «second»\n\n  «third»\n", dedent=False)
    node = scalar_at(parse_ok(text), "k")
    assert node.raw == "first second\nthird"
    vm = check_map(text, node)
    assert vm.range(0, 5) == r[0]
    assert vm.range(6, 12) == r[1]
    assert vm.range(13, 18) == r[2]
    assert vm.range(0, 18) == TextRange(r[0].start, r[2].end)


def test_value_map_methods() -> None:
    vm = ValueMap.contiguous(10, 3)
    assert vm.exact and vm.content == TextRange(10, 13)
    assert vm.range(0, 3) == TextRange(10, 13)
    assert vm.range(1, 1) == TextRange(11, 11)
    assert vm.range(3, 3) == TextRange(13, 13)  # an empty slice at the end
    assert vm.range(-5, 99) == TextRange(10, 13)  # clamped
    assert vm.offset(0) == 10 and vm.offset(2) == 12 and vm.offset(3) == 13
    assert vm.offset(-1) == 10 and vm.offset(99) == 13
    assert [vm.index_of(o) for o in (9, 10, 12, 13, 14)] == [None, 0, 2, 3, None]
    sub = vm.sub(1, 3)
    assert list(sub.starts) == [11, 12] and sub.range(0, 2) == TextRange(11, 13)
    empty = ValueMap((), (), True, TextRange(5, 7))
    assert empty.range(0, 0) == TextRange(5, 5)
    assert empty.offset(3) == 5
    assert empty.index_of(5) == 0 and empty.index_of(6) is None


@pytest.mark.parametrize(
    ("line", "spans"),
    [
        ("k: plain text", ["p", "l", "a", "i", "n", " ", "t", "e", "x", "t"]),
        ("k: 'single'", list("single")),
        ('k: "double"', list("double")),
        ("k: 'it''s'", ["i", "t", "''", "s"]),  # the doubled quote is one character
        ('k: "a\\tb"', ["a", "\\t", "b"]),  # an escape is one character
        ("k: &x anchored", list("anchored")),  # the range starts at the anchor
        ("k: folded\n  line", [*"folded", "\n", *"line"]),  # the line break is a space
    ],
)
def test_value_map_points_each_character_at_its_source(line: str, spans: list[str]) -> None:
    text = line + "\n"
    node = scalar_at(parse_ok(text), "k")
    vm = scalar_value_map(text, node)
    assert vm.exact
    assert [text[s:e] for s, e in zip(vm.starts, vm.ends, strict=True)] == spans


def test_value_map_fallbacks() -> None:
    text = 'k: "abc"\n'
    real = scalar_at(parse_ok(text), "k")
    # a value that the source does not decode to, but that occurs verbatim in it
    verbatim = YScalar(real.range, real.tag, value="bc", raw="bc", style='"')
    vm = scalar_value_map(text, verbatim)
    assert vm.exact and vm.range(0, 2) == TextRange(5, 7)
    # a value that cannot be found: everything points at the start, not exact
    lost = YScalar(real.range, real.tag, value="zz", raw="zz", style='"')
    vm = scalar_value_map(text, lost)
    assert not vm.exact
    assert vm.starts == (3, 3) and vm.ends == (4, 4)
    # an unknown escape never raises
    bad = YScalar(TextRange(3, 8), real.tag, value="Q", raw="Q", style='"')
    vm = scalar_value_map('k: "\\q1"\n', bad)
    assert vm.starts == (3,) and not vm.exact


STYLES = [None, "'", '"', "|", ">"]
TEXT = st.lists(
    st.sampled_from([*"ab c\n\t'\"\\#:-{}é😀", "  ", "\n\n", " \n", "\n "]), max_size=25
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, st.sampled_from(STYLES), st.sampled_from([80, 6]), st.integers(0, 2))
def test_scalar_value_map_property(value: str, style: str | None, width: int, nest: int) -> None:
    data: object = {"k": value}
    for _ in range(nest):
        data = {"wrap": [data]}
    text = yaml.safe_dump(data, default_style=style, allow_unicode=True, width=width)
    root = parse_ok(text)
    node: YNode = root
    for _ in range(nest):
        assert isinstance(node, YMap)
        seq = node.get("wrap")
        assert isinstance(seq, YSeq)
        node = seq.items[0]
    assert isinstance(node, YMap)
    k = node.get("k")
    assert isinstance(k, YScalar)
    # the engine's view of the same text (PyYAML's emitter does not always round-trip)
    loaded = yaml.load(text, Loader=yaml.CSafeLoader)
    for _ in range(nest):
        loaded = loaded["wrap"][0]
    assert k.value == loaded["k"]
    vm = scalar_value_map(text, k)
    assert len(vm.starts) == len(k.raw)
    for s, e in zip(vm.starts, vm.ends, strict=True):
        assert k.range.start <= s <= e <= k.range.end
    if vm.exact:
        check_map(text, k)


# ---------------------------------------------------------------------------------------------
# Condition sites (sites.py)


def test_site_from_scalar_strips_like_the_engine() -> None:
    text, r = marked('k: "  «session.s.a\\tand\\n b»  "\n', dedent=False)
    node = scalar_at(parse_ok(text), "k")
    site = site_from_scalar("response_condition", text, node, "utter_x")
    assert site.text == "session.s.a\tand\n b"
    assert (site.kind, site.context, site.anchor) == ("response_condition", "utter_x", node.range)
    assert site.file_range(0, len(site.text)) == r[0]
    tab = site.file_range(11, 12)
    assert text[tab.start : tab.end] == "\\t"
    assert site.map.exact


def test_site_from_scalar_of_a_blank_value() -> None:
    text = "k: '   '\n"
    node = scalar_at(parse_ok(text), "k")
    site = site_from_scalar("next_if", text, node)
    assert site.text == ""
    assert site.file_range(0, 0).start == site.file_range(0, 0).end


def test_site_from_text() -> None:
    site = site_from_text("prose_if", "session.s.a", 40, "ctx")
    assert site.anchor == TextRange(40, 51)
    assert site.file_range(8, 9) == TextRange(48, 49)
    assert site.file_range(0, 11) == TextRange(40, 51)
    assert site.context == "ctx"


def test_every_site_kind_has_a_label() -> None:
    assert set(SITE_LABELS) == {
        "prose_if",
        "tool_requires",
        "block_tool_requires",
        "next_if",
        "step_complete_when",
        "block_complete_when",
        "skill_complete_when",
        "utter_when",
        "response_condition",
        "satisfied_when",
    }


# ---------------------------------------------------------------------------------------------
# The composer: the safe loader's nodes and tags, without its constructor and path machinery

_SCALARS = [
    "", "~", "null", "Null", "NULL", "yes", "No", "on", "OFF", "y", "n", "true", "False",
    "1", "-1", "+1", "0", "007", "0o17", "0x1F", "0b101", "1_000", "1:30", "190:20:30",
    "1.5", "-.5", ".inf", "-.Inf", ".nan", "1e3", "6.8523015e+5", "2001-12-14",
    "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10", "=", "<<", "!", "-", "?",
    "text", "two words", "é", "session.a.b == 'x'",
]  # fmt: skip


def _node_signature(node: yaml.Node) -> object:
    marks = (node.start_mark.index, node.end_mark.index)
    if isinstance(node, yaml.ScalarNode):
        return ("s", node.tag, node.value, node.style, marks)
    if isinstance(node, yaml.MappingNode):
        pairs = [(_node_signature(k), _node_signature(v)) for k, v in node.value]
        return ("m", node.tag, node.flow_style, marks, pairs)
    return ("q", node.tag, node.flow_style, marks, [_node_signature(i) for i in node.value])


def check_composes_like_the_safe_loader(text: str) -> None:
    from mantle_lsp.syntax.yaml_tree import _Composer

    try:
        want = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        with pytest.raises(yaml.YAMLError) as got:
            yaml.compose(text, Loader=_Composer)
        assert str(got.value) == str(exc)
        return
    got_node = yaml.compose(text, Loader=_Composer)
    assert (want is None) == (got_node is None)
    if want is not None:
        assert _node_signature(got_node) == _node_signature(want), text


@pytest.mark.parametrize("scalar", _SCALARS)
def test_every_implicit_tag_resolves_like_the_safe_loader(scalar: str) -> None:
    for text in (
        f"{scalar}\n",
        f"k: {scalar}\n",
        f"{scalar}: v\n",
        f"- {scalar}\n- '{scalar}'\n- \"{scalar}\"\n",
        f"[{scalar}, !!str {scalar}]\n",
    ):
        check_composes_like_the_safe_loader(text)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.recursive(
        st.sampled_from(_SCALARS),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
            st.dictionaries(st.sampled_from(["a", "b", "1", "yes", "~"]), inner, max_size=3).map(
                lambda d: "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}"
            ),
        ),
        max_leaves=8,
    )
)
def test_any_flow_document_composes_like_the_safe_loader(text: str) -> None:
    check_composes_like_the_safe_loader(text + "\n")


_REFUSED = object()  # not a value any document can hold (the word "error" is one)


def _safe_value(text: str) -> tuple[object, ...]:
    """The value the engine's loader builds for the single scalar document ``text``, as
    (value, its type), or (:data:`_REFUSED`, the exception's name)."""
    try:
        v = yaml.load(text, Loader=yaml.CSafeLoader)
    except Exception as exc:  # a bad typed scalar: ValueError, KeyError, …
        return (_REFUSED, type(exc).__name__)
    return (v, type(v))


_TAGS = ["", "!!bool ", "!!int ", "!!null ", "!!float ", "!!str "]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(_TAGS),
    st.one_of(
        st.sampled_from(
            [*_SCALARS, "010", "08", "0_1", "-0", "+12", "٣", "²", "1²", "TRUE", "9" * 5000]
        ),
        st.text(alphabet="0123456789_+-:.xobeEaAlnNuUyYsStTrRfFOo٣²", max_size=6),
    ),
    st.sampled_from(["", "'", '"']),
)
def test_scalar_values_are_what_the_safe_loader_builds(tag: str, word: str, quote: str) -> None:
    # the parser builds the common values (booleans, null, decimal integers) itself
    text = f"{tag}{quote}{word}{quote}\n"
    want = _safe_value(text)
    root, issues = parse_yaml(text)
    if isinstance(root, YScalar) and root.raw in ("<<", "="):
        return  # kept as text on purpose (a merge key, a `=` value key)
    if want[0] is _REFUSED:
        assert root is None or issues, text
        return
    if root is None:  # an empty document
        assert want == (None, type(None)), text
        return
    if isinstance(want[0], (dict, list)):  # `0:` is a mapping
        assert not isinstance(root, YScalar), text
        return
    assert isinstance(root, YScalar) and not issues, text
    if isinstance(want[0], float) and want[0] != want[0]:  # `.nan`: never == itself
        assert isinstance(root.value, float) and root.value != root.value, text
        return
    assert (root.value, type(root.value)) == want, text


def test_a_verbatim_value_maps_ranges_like_any_other() -> None:
    """The arithmetic shortcut for text copied verbatim (a ``range`` map) gives the ranges
    the general per-character map gives, for every slice, empty and out-of-bounds ones
    included, also after ``sub``."""
    verbatim = ValueMap.contiguous(10, 6)
    listed = ValueMap(tuple(verbatim.starts), tuple(verbatim.ends), True, verbatim.content)
    for a, b in ((0, 6), (1, 6)):
        for start in range(-2, 9):
            for end in range(-2, 9):
                got = verbatim.sub(a, b).range(start, end)
                assert got == listed.sub(a, b).range(start, end), (a, b, start, end)
                assert isinstance(got, TextRange)
