"""Tests for the ``responses.yml`` parser (``mantle_lsp.syntax.responses_yml``),
docs/language/responses.md."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax import responses_yml as R
from mantle_lsp.syntax.responses_yml import ResponsesDoc, parse_responses_yml
from mantle_lsp.syntax.text import TextRange
from mantle_lsp.syntax.yaml_tree import YAML_DUPLICATE_KEY, YAML_SYNTAX
from support import FRAGMENTS, issue_list, marked


def parse(fixture: str) -> tuple[ResponsesDoc, list[TextRange]]:
    text, r = marked(fixture)
    return parse_responses_yml(text), r


def clean(doc: ResponsesDoc) -> None:
    assert doc.issues == [], [(i.code, i.range, i.message) for i in doc.issues]


# =============================================================================================
# File shape


def test_valid_file() -> None:
    doc, r = parse(
        """\
        responses:
          «utter_fee»:
            - text: Standard replacement is free.
            - text: A fee applies.
              condition: 'session.s.reason == "lost"'
              metadata: {rephrase: false}
          utter_plain:
            - "A plain string is also a variant"
          utter_pick:
            - text: Which card?
              buttons:
                source: list_card_buttons
          utter_ask:
            - text: Rush or standard?
              buttons:
                - title: Rush
                  payload: set:session.s.shipping=rush
                - title: Standard
          utter_numbers:
            - 42
            - true
        """
    )
    clean(doc)
    assert [x.name for x in doc.responses] == [
        "utter_fee",
        "utter_plain",
        "utter_pick",
        "utter_ask",
        "utter_numbers",
    ]
    fee = doc.get("utter_fee")
    assert fee is not None and fee.key.range == r[0]
    assert [v.text for v in fee.variants] == ["Standard replacement is free.", "A fee applies."]
    assert [v.condition is not None for v in fee.variants] == [False, True]
    plain = doc.get("utter_plain")
    assert plain is not None and plain.variants[0].text == "A plain string is also a variant"
    pick = doc.get("utter_pick")
    assert pick is not None and pick.variants[0].source is not None
    assert pick.variants[0].source.value == "list_card_buttons"
    ask = doc.get("utter_ask")
    assert ask is not None
    b1, b2 = ask.variants[0].buttons
    assert b1.title is not None and b1.title.value == "Rush" and b1.set_payload is not None
    assert b2.payload is None and b2.set_payload is None
    nums = doc.get("utter_numbers")
    assert nums is not None and [v.text for v in nums.variants] == ["42", "True"]
    assert doc.get("missing") is None
    (site,) = doc.conditions
    assert (site.kind, site.text, site.context) == (
        "response_condition",
        'session.s.reason == "lost"',
        "utter_fee",
    )


def test_later_duplicate_response_wins() -> None:
    doc, r = parse("responses:\n  utter_a:\n    - one\n  «utter_a»:\n    - two\n")
    assert issue_list(doc.issues) == [(YAML_DUPLICATE_KEY, "warning", r[0])]
    a = doc.get("utter_a")
    assert a is not None and a.variants[0].text == "two"


@pytest.mark.parametrize("text", ["", "# nothing\n", "responses:\n", "responses: {}\n"])
def test_empty_files(text: str) -> None:
    doc = parse_responses_yml(text)
    clean(doc)
    assert doc.responses == []


@pytest.mark.parametrize("fixture", ["«- a\n- b»\n", "«text»\n"])
def test_top_level_must_be_a_mapping(fixture: str) -> None:
    doc, r = parse(fixture)
    assert issue_list(doc.issues) == [(R.C_FILE, "error", r[0])]


def test_yaml_error() -> None:
    doc, r = parse("responses:\n  utter_a: «[»\n")
    assert issue_list(doc.issues) == [(YAML_SYNTAX, "error", r[0])]
    assert doc.root is None and doc.responses == []


def test_other_top_level_keys_and_responses_not_a_mapping() -> None:
    doc, r = parse("«version»: '3.1'\nresponses: «[utter_a]»\n")
    assert issue_list(doc.issues) == [(R.C_FILE, "warning", r[0]), (R.C_FILE, "warning", r[1])]
    assert doc.responses == []


# =============================================================================================
# Variants (§6.2)


def test_response_must_be_a_non_empty_list() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a: «text»
          utter_b: «[]»
          «utter_c»:
          utter_d: «{text: hi}»
          utter_ok:
            - hi
        """
    )
    assert issue_list(doc.issues) == [(R.C_SHAPE, "error", rng) for rng in r]
    assert [x.name for x in doc.responses] == [
        "utter_a",
        "utter_b",
        "utter_c",
        "utter_d",
        "utter_ok",
    ]


def test_variant_rows() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - «[nested, list]»
            - «text: ''»
            - «"   "»
            «-»
            - «metadata: {rephrase: true}»
            - text: «[a]»
            - text: ok
              «channel»: voice
            - text: ok
              buttons: «text»
          utter_b:
            - text: ok
              condition: «5»
            - default
        """
    )
    # row 4 is empty (null) and is reported on its dash
    assert issue_list(doc.issues) == [
        (R.C_SHAPE, "error", r[0]),
        (R.C_EMPTY, "error", TextRange(r[1].start + 6, r[1].end)),
        (R.C_EMPTY, "error", r[2]),
        (R.C_EMPTY, "error", r[3]),
        (R.C_EMPTY, "error", r[4]),
        (R.C_SHAPE, "error", r[5]),
        (R.C_KEY, "error", r[6]),
        (R.C_SHAPE, "error", r[7]),
        (R.C_SHAPE, "error", r[8]),
    ]
    assert "`condition` must be a string (found a number)" in doc.issues[-1].message
    a = doc.get("utter_a")
    assert a is not None
    assert len(a.variants) == 7  # the list row is dropped
    assert len(a.blank_variants()) == 4


def test_empty_condition_and_default_rules() -> None:
    doc, r = parse(
        """\
        responses:
          «utter_no_default»:
            - text: a
              condition: session.s.a
            - text: b
              condition: «"  "»
          utter_two_defaults:
            - text: a
              condition: session.s.a
            - text: default one
            - «text: default two»
            - «plain default three»
          utter_one_default:
            - text: a
              condition: session.s.a
            - text: b
          utter_no_conditions:
            - a
            - b
        """
    )
    assert issue_list(doc.issues) == [
        (R.C_DEFAULT, "error", r[0]),
        (R.C_COND, "error", r[1]),
        (R.C_MULTI, "error", r[2]),
        (R.C_MULTI, "error", r[3]),
    ]
    assert "(variants 2, 3, 4)" in doc.issues[-1].message


def test_null_condition_is_not_a_string() -> None:
    doc, r = parse("responses:\n  utter_a:\n    - text: a\n      «condition»:\n    - text: b\n")
    assert issue_list(doc.issues) == [(R.C_SHAPE, "error", r[0])]


# =============================================================================================
# Buttons (§6.2, §6.5)


def test_button_errors() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: pick
              buttons:
                - «just a string»
                - title: «Yes»
                - title: «42»
                - title: «"  "»
                - «payload: x»
                - title: ok
                  «icon»: star
                - title: ok
                  «payload»:
                - title: ok
                  payload: «"   "»
                - «title»:
          utter_b:
            - text: pick
              buttons:
                «colour»: red
                source: «"  "»
          utter_c:
            - text: pick
              buttons: «{other: 1}»
        """
    )
    expected = [
        (R.C_SHAPE, "error", r[0]),
        (R.C_BUTTON, "error", r[1]),
        (R.C_BUTTON, "error", r[2]),
        (R.C_BUTTON, "error", r[3]),
        (R.C_BUTTON, "error", r[4]),
        (R.C_KEY, "error", r[5]),
        (R.C_BUTTON, "error", r[6]),
        (R.C_BUTTON, "error", r[7]),
        (R.C_BUTTON, "error", r[8]),
        (R.C_KEY, "error", r[9]),
        (R.C_SHAPE, "error", r[10]),
    ]
    got = issue_list(doc.issues)
    # utter_c: `other` is not a source key, and the source is missing
    c_map = r[11]
    expected += [
        (R.C_KEY, "error", TextRange(c_map.start + 1, c_map.start + 6)),
        (R.C_SHAPE, "error", c_map),
    ]
    assert got == sorted(expected, key=lambda t: (t[2], t[0], t[1]))
    msgs = {i.range: i.message for i in doc.issues}
    assert 'quote it, e.g. "Yes"' in msgs[r[1]]
    a = doc.get("utter_a")
    assert a is not None
    assert len(a.variants[0].buttons) == 8  # the string item is dropped


# -- set: payloads ----------------------------------------------------------------------------


def test_set_payload_ranges_in_plain_and_quoted_scalars() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: pick
              buttons:
                - title: A
                  payload: set:session.«card».«reason»=«lost=stolen»
                - title: B
                  payload: "set:  session.«project».«tier\\u0031»=«gold\\tplus»"
                - title: C
                  payload: 'set:session.«s».«it''s»=«it''s ok»'
                - title: D
                  payload: >-
                    set:session.«s».«x»=«long
                    value»
        """
    )
    clean(doc)
    a = doc.get("utter_a")
    assert a is not None
    payloads = [b.set_payload for b in a.variants[0].buttons]
    got = [
        (p.namespace, p.entry, p.value, p.namespace_range, p.entry_range, p.value_range)
        for p in payloads
        if p is not None
    ]
    assert got == [
        ("card", "reason", "lost=stolen", r[0], r[1], r[2]),
        ("project", "tier1", "gold\tplus", r[3], r[4], r[5]),
        ("s", "it's", "it's ok", r[6], r[7], r[8]),
        ("s", "x", "long value", r[9], r[10], r[11]),
    ]
    assert payloads[0] is not None
    assert payloads[0].range == TextRange(r[0].start - 8, r[1].end)


@pytest.mark.parametrize(
    "payload",
    [
        "'«set: reminder»'",
        "«_:set:session.a.b»",
        "«_:set:session.a.b=»",
        "set:«sess.a.b»=x",
        "set:«session.a»=x",
        "set:«session.a.b.c»=x",
        "set:«session..b»=x",
        "set:«session.a.»=x",
        "'set: «session»=x'",
        "'set:  «session.a b»  =x'",
    ],
)
def test_invalid_set_payloads(payload: str) -> None:
    doc, r = parse(
        f"responses:\n  utter_a:\n    - text: t\n      buttons:\n"
        f"        - title: t\n          payload: {payload}\n"
    )
    assert issue_list(doc.issues) == [(R.C_PAYLOAD, "error", r[0])]
    a = doc.get("utter_a")
    assert a is not None and a.variants[0].buttons[0].set_payload is None


@pytest.mark.parametrize(
    "payload", ["/inform", "Set:session.a.b=x", "' set:session.a.b=x'", "reset:x", "'set'"]
)
def test_other_payloads_are_plain_text(payload: str) -> None:
    doc, _ = parse(
        f"responses:\n  utter_a:\n    - text: t\n      buttons:\n"
        f"        - title: t\n          payload: {payload}\n"
    )
    clean(doc)
    a = doc.get("utter_a")
    assert a is not None and a.variants[0].buttons[0].set_payload is None


# =============================================================================================
# Placeholders (§6.7)


def test_placeholders_in_every_text_style() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: Fee «{session.«card».«fee»}» for «{«name»}».
            - text: "Quoted «{session.«project».«t\\u0069er»}»\\t«{«x»}»"
            - text: 'Single «{«it»}»'
            - text: |
                Block «{session.«s».«a»}»
                  and «{«b»}»
            - text: >
                Folded «{«c»}»
                «{session.«s».«d»}»
        """
    )
    clean(doc)
    got = [
        (p.kind, p.text, p.range, p.namespace, p.entry, p.namespace_range, p.entry_range)
        for p in doc.placeholders
    ]
    assert got == [
        ("qualified", "session.card.fee", r[0], "card", "fee", r[1], r[2]),
        ("bare", "name", r[3], None, "name", None, r[4]),
        ("qualified", "session.project.tier", r[5], "project", "tier", r[6], r[7]),
        ("bare", "x", r[8], None, "x", None, r[9]),
        ("bare", "it", r[10], None, "it", None, r[11]),
        ("qualified", "session.s.a", r[12], "s", "a", r[13], r[14]),
        ("bare", "b", r[15], None, "b", None, r[16]),
        ("bare", "c", r[17], None, "c", None, r[18]),
        ("qualified", "session.s.d", r[19], "s", "d", r[20], r[21]),
    ]


def test_placeholders_in_button_titles_and_payloads() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: t
              buttons:
                - title: "Keep «{«amount»}»"
                  payload: "/confirm«{session.«s».«id»}»"
        """
    )
    clean(doc)
    assert [(p.kind, p.range) for p in doc.placeholders] == [
        ("bare", r[0]),
        ("qualified", r[2]),
    ]


def test_placeholders_that_are_not_placeholders() -> None:
    doc, _ = parse("responses:\n  utter_a:\n    - 'x {1abc} {a-b} {é} { name } {} {a.b} {x'\n")
    clean(doc)
    assert doc.placeholders == []


def test_unqualified_and_odd_session_placeholders() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: "Hi «{session.name}» and «{session.}» and {session.a.b.c}"
        """
    )
    assert issue_list(doc.issues) == [
        (R.C_UNQUALIFIED, "warning", r[0]),
        (R.C_UNQUALIFIED, "warning", r[1]),
    ]
    kinds = [(p.kind, p.text, p.namespace, p.entry) for p in doc.placeholders]
    assert kinds == [
        ("unqualified", "session.name", None, ""),
        ("unqualified", "session.", None, ""),
        ("qualified", "session.a.b.c", "a", "b.c"),
    ]


def test_memory_token_in_a_response() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: "Your card «@memory.s.card» and «@memory.s»; not x@memory.s.card"
            - text: |
                Block «@memory.project.tier».
        """
    )
    assert issue_list(doc.issues) == [
        (R.C_MEMORY_TOKEN, "warning", r[0]),
        (R.C_MEMORY_TOKEN, "warning", r[1]),
        (R.C_MEMORY_TOKEN, "warning", r[2]),
    ]
    assert "{session.<ns>.<entry>}" in doc.issues[0].message


# =============================================================================================
# Condition sites


def test_response_condition_sites() -> None:
    doc, r = parse(
        """\
        responses:
          utter_a:
            - text: a
              condition: «session.s.a == 1»
            - text: b
              condition: "  «session.s.b\\tor session.s.c»  "
            - text: c
              condition: >-
                «session.s.d
                and session.s.e»
            - text: default
        """
    )
    clean(doc)
    got = [(c.kind, c.text, c.file_range(0, len(c.text)), c.context) for c in doc.conditions]
    assert got == [
        ("response_condition", "session.s.a == 1", r[0], "utter_a"),
        ("response_condition", "session.s.b\tor session.s.c", r[1], "utter_a"),
        ("response_condition", "session.s.d and session.s.e", r[2], "utter_a"),
    ]
    assert all(c.map.exact for c in doc.conditions)


# ---------------------------------------------------------------------------------------------
# Robustness


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_never_raises_and_ranges_stay_inside(text: str) -> None:
    doc = parse_responses_yml(text)
    for i in doc.issues:
        assert 0 <= i.range.start <= i.range.end <= len(text), i
    for p in doc.placeholders:
        assert 0 <= p.range.start <= p.range.end <= len(text)
    for c in doc.conditions:
        r = c.file_range(0, len(c.text))
        assert 0 <= r.start <= r.end <= len(text)
