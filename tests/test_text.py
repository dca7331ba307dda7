"""Tests for ``mantle_lsp.syntax.text``: ranges, newline normalization and LineIndex."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax.text import BOM, LineIndex, TextRange, normalize_newlines

# ---------------------------------------------------------------------------------------------
# TextRange


def test_text_range_basics() -> None:
    r = TextRange(3, 7)
    assert r.length == 4
    assert r.shift(10) == TextRange(13, 17)
    assert r.shift(-3) == TextRange(0, 4)
    # cursor semantics: both ends touch the range
    assert [r.contains(i) for i in (2, 3, 5, 7, 8)] == [False, True, True, True, False]
    assert TextRange(4, 4).contains(4)
    assert TextRange(4, 4).length == 0


# ---------------------------------------------------------------------------------------------
# normalize_newlines


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\r\nb\r\n", "a\nb\n"),
        ("a\rb\r", "a\nb\n"),
        ("a\r\rb", "a\n\nb"),
        ("a\r\r\nb", "a\n\nb"),  # a lone CR, then a CRLF
        ("a\n\rb", "a\n\nb"),
        (BOM + "a\r\nb", "a\nb"),
        ("a" + BOM + "b", "a" + BOM + "b"),  # only a leading BOM goes
        ("plain\n", "plain\n"),
        ("", ""),
    ],
)
def test_normalize_newlines(raw: str, expected: str) -> None:
    assert normalize_newlines(raw) == expected


def test_normalize_is_identity_on_normalized_text() -> None:
    s = "x\ny😀\n\tz"
    assert normalize_newlines(s) == s


def _lsp_positions(raw: str) -> list[tuple[int, int, str]]:
    """(line, UTF-16 character, char) of every non-line-break character of ``raw``,
    counting lines the way LSP does: ``\\r\\n``, ``\\r`` and ``\\n`` each end a line.
    A leading BOM is not part of the document an editor shows."""
    out = []
    line = col = 0
    i = 1 if raw.startswith(BOM) else 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\r":
            i += 2 if raw[i + 1 : i + 2] == "\n" else 1
            line, col = line + 1, 0
            continue
        if ch == "\n":
            i += 1
            line, col = line + 1, 0
            continue
        out.append((line, col, ch))
        col += 2 if ord(ch) > 0xFFFF else 1
        i += 1
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "é", "😀", " ", "\t", "\r", "\n", "\r\n"]), max_size=30).map(
        "".join
    ),
    st.booleans(),
)
def test_normalizing_keeps_every_characters_line_and_character(raw: str, bom: bool) -> None:
    if bom:
        raw = BOM + raw
    norm = normalize_newlines(raw)
    assert "\r" not in norm and not norm.startswith(BOM)
    idx = LineIndex(norm)
    chars = [(i, ch) for i, ch in enumerate(norm) if ch != "\n"]
    expected = _lsp_positions(raw)
    assert len(chars) == len(expected)
    for (offset, ch), (line, character, raw_ch) in zip(chars, expected, strict=True):
        assert ch == raw_ch
        assert idx.utf16_position(offset) == (line, character)
        assert idx.offset_from_utf16(line, character) == offset
    assert idx.line_count == norm.count("\n") + 1


# ---------------------------------------------------------------------------------------------
# LineIndex


def test_line_index_lines() -> None:
    text = "ab\n\ncd\n"
    idx = LineIndex(text)
    assert idx.text == text
    assert idx.line_count == 4  # the empty line after the final newline counts
    assert [idx.line_start(n) for n in range(4)] == [0, 3, 4, 7]
    assert [idx.line_end(n) for n in range(4)] == [2, 3, 6, 7]
    assert [idx.line_of(o) for o in range(8)] == [0, 0, 0, 1, 2, 2, 2, 3]
    # clamping
    assert idx.line_start(-5) == 0
    assert idx.line_start(99) == 7
    assert idx.line_of(-1) == 0
    assert idx.line_of(100) == 3


def test_line_index_empty_text() -> None:
    idx = LineIndex("")
    assert idx.line_count == 1
    assert idx.position(0) == (0, 0)
    assert idx.utf16_position(5) == (0, 0)
    assert idx.offset(0, 3) == 0
    assert idx.offset_from_utf16(0, 3) == 0


def test_positions_count_code_points_and_utf16_units() -> None:
    text = "a😀b\né😀😀c\n"
    idx = LineIndex(text)
    # code points: the emoji is one character
    assert idx.position(text.index("b")) == (0, 2)
    assert idx.position(text.index("c")) == (1, 3)
    # UTF-16: an astral character takes two code units, é takes one
    assert idx.utf16_position(text.index("b")) == (0, 3)
    assert idx.utf16_position(text.index("c")) == (1, 5)
    assert idx.utf16_position(text.index("é") + 1) == (1, 1)
    # end of line and end of text
    assert idx.utf16_position(3) == (0, 4)
    assert idx.utf16_position(len(text)) == (2, 0)
    assert idx.position(10_000) == (2, 0)
    assert idx.position(-3) == (0, 0)


def test_offset_from_code_point_column_clamps_into_the_line() -> None:
    text = "ab\ncdef\n"
    idx = LineIndex(text)
    assert idx.offset(1, 2) == 5
    assert idx.offset(1, 99) == 7  # end of line 1, before its newline
    assert idx.offset(0, -4) == 0
    assert idx.offset(-1, 3) == 0
    assert idx.offset(9, 0) == len(text)


def test_offset_from_utf16() -> None:
    text = "x😀y\nz"
    idx = LineIndex(text)
    assert idx.offset_from_utf16(0, 0) == 0
    assert idx.offset_from_utf16(0, 1) == 1  # before the emoji
    assert idx.offset_from_utf16(0, 3) == 2  # after the emoji (two units)
    assert idx.offset_from_utf16(0, 4) == 3
    assert idx.offset_from_utf16(0, 40) == 3  # clamped to the end of the line
    # a character inside a surrogate pair snaps to after the pair
    assert idx.offset_from_utf16(0, 2) == 2
    assert idx.offset_from_utf16(1, 1) == 5
    assert idx.offset_from_utf16(-1, 7) == 0
    assert idx.offset_from_utf16(5, 0) == len(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "\n", "😀", "é", "\t", "𝄞"]), max_size=40))
def test_utf16_round_trip(text: str) -> None:
    idx = LineIndex(text)
    for offset in range(len(text) + 1):
        line, character = idx.utf16_position(offset)
        assert idx.offset_from_utf16(line, character) == offset
        line2, column = idx.position(offset)
        assert line2 == line
        assert idx.offset(line, column) == offset
        prefix = text[idx.line_start(line) : offset]
        assert character == len(prefix.encode("utf-16-le")) // 2
