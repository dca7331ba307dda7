"""The tolerant YAML reader (``syntax.yaml_tree.yaml_context_at``): where a cursor is in
half-written YAML that the parser rejects, which is what completion sees while the user types."""

from __future__ import annotations

from mantle_lsp.syntax.yaml_tree import YamlContext, parse_yaml, yaml_context_at


def at_end(text: str) -> YamlContext:
    return yaml_context_at(text, len(text))


def test_key_path_in_unparsable_text() -> None:
    text = 'steps:\n  - id: ask\n    collect: "unterminated\n    ne'
    assert parse_yaml(text)[1], "the text must not parse for this test to mean anything"
    y = at_end(text)
    assert y.path == ("steps", "-")
    assert y.at_key and y.line.value == "ne"
    assert y.siblings == {"id", "collect"}  # keys already in the step: not offered again


def test_inline_value_after_an_unclosed_flow_list() -> None:
    y = at_end("a:\n  b: [1,\n  c: x")
    assert y.path == ("a",)
    assert (y.in_value, y.key, y.value) == (True, "c", "x")
    assert "b" in y.siblings


def test_continuation_of_a_block_scalar() -> None:
    text = "a:\n  text: |\n    hello\n    wor"
    y = at_end(text)
    assert y.scalar_key == "text"
    assert text[y.scalar_start :] == "    hello\n    wor"
    assert not y.at_key and not y.in_value


def test_keys_below_the_cursor_count_as_siblings_within_bounds() -> None:
    text = "a:\n  x: 1\n  \n  y: 2\nb:\n  z: 3\n"
    cursor = text.index("  \n") + 2
    y = yaml_context_at(text, cursor)
    assert y.path == ("a",) and y.siblings == {"x", "y"}
    assert yaml_context_at(text, cursor, end=cursor + 1).siblings == {"x"}
