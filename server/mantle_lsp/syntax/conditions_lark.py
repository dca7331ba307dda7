"""The full condition parser: lark's LALR parser with Python's layout rules, and the
allow-list applied to its tree (see :mod:`mantle_lsp.syntax.conditions` for the design).

Imported on first use by :func:`~mantle_lsp.syntax.conditions.parse_condition`: the fast
path (Python's ``ast``) takes nearly every condition of a project, so most runs never
need lark.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

from lark import Lark, Token
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)
from lark.lark import PostLex
from lark.lexer import LexerThread
from lark.visitors import Transformer_NonRecursive

from .condition_tree import (
    _REF_FORM,
    _SUPPORTED,
    CODE_EMPTY,
    CODE_INCOMPLETE_REFERENCE,
    CODE_INVALID_REFERENCE,
    CODE_UNKNOWN_NAME,
    CODE_UNSUPPORTED_COMPARISON,
    CODE_UNSUPPORTED_EXPRESSION,
    CODE_UNSUPPORTED_UNARY,
    MAX_NESTING,
    BoolOpExpr,
    CompareExpr,
    Expr,
    LiteralExpr,
    LiteralKind,
    MemoryRef,
    NotExpr,
    ParsedCondition,
    RefExpr,
    syntax_issue,
)
from .errors import SyntaxIssue
from .text import TextRange

# ---------------------------------------------------------------------------------------
# Layout post-lexer

_OPENERS = {"LPAR": "(", "LSQB": "[", "LBRACE": "{"}
_CLOSERS = {"RPAR": ")", "RSQB": "]", "RBRACE": "}"}
_MATCHING = {"RPAR": "LPAR", "RSQB": "LSQB", "RBRACE": "LBRACE"}
_CLOSER_FOR = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}

# Error token types produced by the post-lexer. The grammar never accepts them, so the
# parser stops right there with an UnexpectedToken.
_BAD_NEWLINE = "BAD_NEWLINE"
_BAD_INDENT = "BAD_INDENT"
_BAD_TRAILING_INDENT = "BAD_TRAILING_INDENT"
_BAD_CONTINUATION = "BAD_CONTINUATION"
_BAD_CHARACTER = "BAD_CHARACTER"
_BAD_NUMBER = "BAD_NUMBER"
_TOO_DEEP = "TOO_DEEP"
_BAD_TYPES = frozenset(
    {
        _BAD_NEWLINE,
        _BAD_INDENT,
        _BAD_TRAILING_INDENT,
        _BAD_CONTINUATION,
        _BAD_CHARACTER,
        _BAD_NUMBER,
        _TOO_DEEP,
    }
)


def _start(tok: Token) -> int:
    return tok.start_pos if tok.start_pos is not None else 0


def _end(tok: Token) -> int:
    if tok.end_pos is not None:
        return tok.end_pos
    return _start(tok) + len(tok.value)


def _error_token(kind: str, value: str, start: int, end: int) -> Token:
    return Token(kind, value, start_pos=start, end_pos=end)


def _advance_column(col: int, ws: str) -> int:
    for ch in ws:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col = (col // 8 + 1) * 8
        else:  # form feed resets the column, as in CPython
            col = 0
    return col


class _LayoutPostLexer(PostLex):
    """Applies Python's layout rules to the raw token stream (stateless between calls)."""

    always_accept = ("WS", "COMMENT", "CONTINUATION", "NEWLINE", "OTHER_KEYWORD")

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        started = False  # a significant token has been seen
        line_start = True  # only whitespace / continuations so far on this logical line
        col = 0
        indent_from = -1
        pending_newline: Token | None = None
        last: Token | None = None
        prev: Token | None = None
        for tok in stream:
            kind = tok.type
            last = tok
            if kind == "WS":
                if line_start:
                    if indent_from < 0:
                        indent_from = _start(tok)
                    col = _advance_column(col, tok.value)
                continue
            if kind in ("CONTINUATION", "COMMENT"):
                continue
            if kind == "NEWLINE":
                if depth == 0:
                    if started and pending_newline is None:
                        pending_newline = tok
                    line_start, col, indent_from = True, 0, -1
                continue
            if pending_newline is not None:
                yield _error_token(
                    _BAD_NEWLINE,
                    pending_newline.value,
                    _start(pending_newline),
                    _end(pending_newline),
                )
                pending_newline = None
            elif line_start and col > 0 and not started:
                yield _error_token(_BAD_INDENT, "", indent_from, _start(tok))
            line_start = False
            started = True
            if kind == "NAME" and not tok.value.isidentifier():
                bad = _first_invalid_identifier_char(tok.value)
                pos = _start(tok) + bad
                yield _error_token(_BAD_CHARACTER, tok.value[bad], pos, pos + 1)
                prev = None
                continue
            if (
                kind == "OR"
                and prev is not None
                and prev.type == "NUMBER"
                and prev.value == "0"
                and _end(prev) == _start(tok)
            ):
                # CPython reads "0o" as the start of an octal literal: "0or" is an error.
                yield _error_token(_BAD_NUMBER, "0or", _start(prev), _end(tok))
            if kind in _OPENERS:
                if depth >= MAX_NESTING:
                    yield _error_token(_TOO_DEEP, tok.value, _start(tok), _end(tok))
                depth += 1
            elif kind in _CLOSERS:
                depth = max(depth - 1, 0)
            prev = tok
            yield tok
        if not started or last is None:
            return
        if last.type == "CONTINUATION":
            # A backslash-newline right at the end: CPython says "unexpected EOF".
            yield _error_token(_BAD_CONTINUATION, "\\", _start(last), _start(last) + 1)
        elif line_start and col > 0 and last.type == "WS":
            # A last line that holds nothing but indentation: "unexpected indent".
            yield _error_token(_BAD_TRAILING_INDENT, last.value, indent_from, _end(last))


def _first_invalid_identifier_char(name: str) -> int:
    for i in range(len(name)):
        if not name[: i + 1].isidentifier():
            return i
    return 0


@functools.cache
def _parser() -> Lark:
    from importlib.resources import files  # only when a condition needs the full parser

    grammar = (files("mantle_lsp.grammars") / "conditions.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="basic",
        postlex=_LayoutPostLexer(),
        keep_all_tokens=True,
        maybe_placeholders=False,
        propagate_positions=False,
    )


# ---------------------------------------------------------------------------------------
# Tokens (for references on failed parses and for error messages)


class _Tok(NamedTuple):
    type: str
    value: str
    start: int
    end: int


@functools.cache
def _token_lexer() -> Any:
    """One lexer for :func:`_lex`, built once (``Lark.lex`` builds a new one per call)."""
    return _parser()._build_lexer()


_POSTLEX = _LayoutPostLexer()


def _lex_stream(text: str) -> Iterator[Token]:
    stream: Iterator[Token] = LexerThread.from_text(_token_lexer(), text).lex(None)  # type: ignore[no-untyped-call]
    return _POSTLEX.process(stream)


def _lex(text: str) -> tuple[list[_Tok], bool]:
    """All significant tokens (error tokens included), skipping over lexer errors."""
    out: list[_Tok] = []
    offset = 0
    had_error = False
    while offset <= len(text):
        try:
            for tok in _lex_stream(text[offset:]):
                start = _start(tok) + offset
                end = _end(tok) + offset
                out.append(_Tok(tok.type, str(tok.value), start, end))
            break
        except UnexpectedCharacters as exc:
            had_error = True
            pos = offset + (exc.pos_in_stream or 0)
            if text[pos] in "'\"":
                # Unterminated string: resume after the end of its line.
                nl = _line_end(text, pos)
                offset = nl if nl > pos else pos + 1
            else:
                offset = pos + 1
    return out, had_error


def _line_end(text: str, pos: int) -> int:
    ends = [i for i in (text.find("\n", pos), text.find("\r", pos)) if i >= 0]
    return min(ends) if ends else len(text)


def _nfkc(name: str) -> str:
    return unicodedata.normalize("NFKC", name)


def _refs_from_tokens(toks: Sequence[_Tok]) -> tuple[MemoryRef, ...]:
    refs: list[MemoryRef] = []
    for i in range(len(toks) - 4):
        a, d1, b, d2, c = toks[i : i + 5]
        if (
            a.type == "NAME"
            and d1.type == "DOT"
            and b.type == "NAME"
            and d2.type == "DOT"
            and c.type == "NAME"
            and _nfkc(a.value) == "session"
            and not (i > 0 and toks[i - 1].type == "DOT")
        ):
            refs.append(
                MemoryRef(
                    namespace=_nfkc(b.value),
                    entry=_nfkc(c.value),
                    range=TextRange(a.start, c.end),
                    namespace_range=TextRange(b.start, b.end),
                    entry_range=TextRange(c.start, c.end),
                )
            )
    return tuple(refs)


# ---------------------------------------------------------------------------------------
# Parse errors → issues

_TOKEN_TEXT = {
    "AND": "and",
    "OR": "or",
    "NOT": "not",
    "IN": "in",
    "IS": "is",
    "IF": "if",
    "ELSE": "else",
    "FOR": "for",
    "LAMBDA": "lambda",
    "AWAIT": "await",
    "TRUE": "True",
    "FALSE": "False",
    "NONE": "None",
    "ELLIPSIS": "...",
    "DOT": ".",
    "COMMA": ",",
    "COLON": ":",
    "WALRUS": ":=",
    "LPAR": "(",
    "RPAR": ")",
    "LSQB": "[",
    "RSQB": "]",
    "LBRACE": "{",
    "RBRACE": "}",
    "EQ": "==",
    "NE": "!=",
    "LE": "<=",
    "GE": ">=",
    "LT": "<",
    "GT": ">",
    "EQUAL": "=",
    "PLUS": "+",
    "MINUS": "-",
    "STAR": "*",
    "POWER": "**",
    "SLASH": "/",
    "DSLASH": "//",
    "PERCENT": "%",
    "AT": "@",
    "TILDE": "~",
    "VBAR": "|",
    "AMPERSAND": "&",
    "CIRCUMFLEX": "^",
    "LSHIFT": "<<",
    "RSHIFT": ">>",
}
_KEYWORD_TYPES = frozenset(
    {"AND", "OR", "NOT", "IN", "IS", "IF", "ELSE", "FOR", "LAMBDA", "AWAIT"}
    | {"TRUE", "FALSE", "NONE", "OTHER_KEYWORD"}
)
_CONNECTIVES = frozenset({"AND", "OR", "EQ", "NE", "LT", "LE", "GT", "GE"})
# Tokens after which an operand must follow (for "the condition ends after ...").
_NEEDS_OPERAND = frozenset(
    {"AND", "OR", "NOT", "IN", "IS", "IF", "ELSE", "LAMBDA", "AWAIT", "COLON", "WALRUS"}
    | {"COMMA", "EQ", "NE", "LE", "GE", "LT", "GT", "EQUAL", "PLUS", "MINUS", "STAR"}
    | {"POWER", "SLASH", "DSLASH", "PERCENT", "AT", "TILDE", "VBAR", "AMPERSAND"}
    | {"CIRCUMFLEX", "LSHIFT", "RSHIFT", "FOR"}
)


def _describe(tok: _Tok) -> str:
    if tok.type == "NAME":
        return f"name `{tok.value}`"
    if tok.type == "NUMBER":
        return f"number `{tok.value}`"
    if tok.type == "STRING":
        return "string literal"
    if tok.type in _KEYWORD_TYPES:
        return f"keyword `{tok.value}`"
    return f"`{tok.value}`"


def _expectation(expected: set[str], closer: str | None) -> str:
    """What may come instead of the offending token, in the language's own terms.

    ``closer`` is the bracket that closes the innermost open one (None at top level);
    LALR's merged states often list closers and the end that are not really possible.
    """
    # Operand positions always accept both names and numbers; an operator position may
    # still accept `(` (a call) or a string (implicit concatenation), which we don't offer.
    if {"NAME", "NUMBER"} <= expected or expected <= {"NAME"}:
        if expected <= {"NAME"}:
            return "a name"
        text = "an operand: a memory reference " + _REF_FORM
        text += ", a literal (string, number, True, False, None)"
        text += ", `not` or `(`" if "NOT" in expected else " or `(`"
        return text
    parts: list[str] = []
    if expected & _CONNECTIVES:
        parts.append("`and`, `or`, a comparison operator (`==`, `!=`, `<`, `<=`, `>`, `>=`)")
    if closer is not None:
        parts.append(f"`{closer}`")
    elif "$END" in expected:
        parts.append("the end of the condition")
    if not parts:
        shown = sorted(f"`{_TOKEN_TEXT[k]}`" for k in expected if k in _TOKEN_TEXT)
        if len(shown) == 1:
            return shown[0]
        return "one of " + ", ".join(shown) if shown else "something else"
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _closer(toks: Sequence[_Tok], upto: int) -> str | None:
    stack = _open_stack(toks, upto)
    return _CLOSER_FOR[stack[-1].type] if stack else None


def _char_name(ch: str) -> str:
    return f"U+{ord(ch):04X}"


_LOOKALIKES = {
    "≥": ">=",
    "≤": "<=",
    "≠": "!=",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
    "–": "-",
    "—": "-",
}


def _bad_char_issue(text: str, pos: int) -> SyntaxIssue:
    ch = text[pos]
    if ch in "'\"":
        triple = text.startswith(ch * 3, pos)
        end = len(text) if triple else _line_end(text, pos)
        start = pos
        m = re.search(
            r"(?:[rRuUbBfF]|[bB][rR]|[rR][bB]|[fF][rR]|[rR][fF])\Z", text[max(0, pos - 2) : pos]
        )
        if m and (pos - len(m.group()) == 0 or not _is_name_char(text[pos - len(m.group()) - 1])):
            start = pos - len(m.group())
        what = "triple-quoted string literal" if triple else "string literal"
        quote = ch * 3 if triple else ch
        return syntax_issue(
            f"Unterminated {what}: the closing `{quote}` is missing.",
            start,
            end,
        )
    if ch == "\\":
        return syntax_issue(
            "A backslash is only allowed as the very last character of a line (line "
            "continuation). Remove it, or break the line inside parentheses.",
            pos,
            pos + 1,
        )
    if ch == "!":
        return syntax_issue(
            "`!` is not an operator: negate with `not`, and write 'not equal' as `!=`.",
            pos,
            pos + 1,
        )
    if ch == ";":
        return syntax_issue(
            "`;` is not allowed: a condition is a single expression.",
            pos,
            pos + 1,
        )
    if ch.isprintable() and not ch.isspace():
        return syntax_issue(
            f"Unexpected character `{ch}` ({_char_name(ch)}). {_SUPPORTED}", pos, pos + 1
        )
    return syntax_issue(f"Invalid non-printable character {_char_name(ch)}.", pos, pos + 1)


def _is_name_char(ch: str) -> bool:
    return ch == "_" or ch.isalnum() or ord(ch) >= 0x80


def _open_stack(toks: Sequence[_Tok], upto: int) -> list[_Tok]:
    stack: list[_Tok] = []
    for t in toks:
        if t.start >= upto:
            break
        if t.type in _OPENERS:
            stack.append(t)
        elif t.type in _CLOSERS and stack:
            stack.pop()
    return stack


def _chain_start(toks: Sequence[_Tok], index: int) -> int:
    """Start of the dotted chain ``NAME . NAME . …`` that ends with the DOT at ``index``."""
    start = toks[index].start
    i = index
    while i >= 1 and toks[i].type == "DOT" and toks[i - 1].type == "NAME":
        start = toks[i - 1].start
        i -= 2
    return start


def _bad_token_issue(tok: _Tok, text: str) -> SyntaxIssue:
    kind = tok.type
    if kind == _BAD_NEWLINE:
        return syntax_issue(
            "Line break outside parentheses: a condition is one line, unless the break is "
            "inside `( … )` or the line ends with a backslash.",
            tok.start,
            tok.end,
        )
    if kind == _BAD_INDENT:
        return syntax_issue(
            "Unexpected indent: a condition must not start with spaces or tabs.",
            tok.start,
            tok.end,
        )
    if kind == _BAD_TRAILING_INDENT:
        return syntax_issue(
            "Unexpected indent: the last line holds only spaces or tabs (Python reads them "
            "as indentation). Remove them.",
            tok.start,
            tok.end,
        )
    if kind == _BAD_CONTINUATION:
        return syntax_issue(
            "The condition ends right after a line continuation `\\`: remove the backslash.",
            tok.start,
            tok.end,
        )
    if kind == _BAD_CHARACTER:
        ch = tok.value
        hint = ""
        if ch in _LOOKALIKES:
            hint = f" Did you mean `{_LOOKALIKES[ch]}`?"
        if ch.isprintable() and not ch.isspace():
            return syntax_issue(
                f"Invalid character `{ch}` ({_char_name(ch)}): names may contain only "
                f"letters, digits and `_`.{hint}",
                tok.start,
                tok.end,
            )
        return syntax_issue(
            f"Invalid non-printable character {_char_name(ch)}.{hint}", tok.start, tok.end
        )
    if kind == _BAD_NUMBER:
        return syntax_issue(
            "Invalid number `0or`: Python reads `0o` as the start of an octal literal. "
            "Put a space between `0` and `or`.",
            tok.start,
            tok.end,
        )
    # _TOO_DEEP
    return syntax_issue(
        f"Too many nested brackets: Python allows at most {MAX_NESTING} levels.",
        tok.start,
        tok.end,
    )


def _unexpected_end(toks: Sequence[_Tok], text: str, expected: set[str]) -> SyntaxIssue:
    real = [t for t in toks if t.type not in _BAD_TYPES]
    if not real:
        return SyntaxIssue(CODE_EMPTY, _EMPTY_MESSAGE, TextRange(0, len(text)))
    last = real[-1]
    stack = _open_stack(real, len(text) + 1)
    if last.type == "DOT":
        start = _chain_start(real, len(real) - 1)
        chain = text[start : last.end]
        return syntax_issue(
            f"`{chain}` is incomplete: a name must follow the `.` (memory is referenced "
            f"as {_REF_FORM}).",
            start,
            last.end,
        )
    if last.type in _NEEDS_OPERAND:
        return syntax_issue(
            f"The condition ends after `{last.value}`, which needs an operand after it: "
            f"a memory reference {_REF_FORM}, a literal or `(`.",
            last.start,
            last.end,
        )
    if stack:
        opener = stack[-1]
        closer = _CLOSER_FOR[opener.type]
        return syntax_issue(
            f"`{opener.value}` is never closed: add the matching `{closer}`.",
            opener.start,
            opener.end,
        )
    return syntax_issue(
        f"The condition ends unexpectedly after {_describe(last)}: expected "
        f"{_expectation(expected - {'$END'}, None)}.",
        last.start,
        last.end,
    )


def _unexpected_token(
    tok: _Tok, expected: set[str], toks: Sequence[_Tok], text: str
) -> SyntaxIssue:
    if tok.type in _BAD_TYPES:
        return _bad_token_issue(tok, text)
    real = [t for t in toks if t.type not in _BAD_TYPES]
    index = next((i for i, t in enumerate(real) if t.start == tok.start), -1)
    prev = real[index - 1] if index > 0 else None
    adjacent = prev is not None and prev.end == tok.start
    kind = tok.type
    if prev is not None and prev.type == "DOT" and kind in _KEYWORD_TYPES:
        return syntax_issue(
            f"`{tok.value}` is a Python keyword, so it can't be a segment of a memory "
            f"reference ({_REF_FORM}).",
            tok.start,
            tok.end,
        )
    if (
        kind == "NUMBER"
        and tok.value.startswith(".")
        and prev is not None
        and prev.type in ("NAME", "RPAR")
        and adjacent
    ):
        # `session.1a.x`: Python reads `.1` as a number.
        nxt = real[index + 1] if index + 1 < len(real) else None
        end = (
            nxt.end if nxt is not None and nxt.type == "NAME" and nxt.start == tok.end else tok.end
        )
        segment = text[tok.start + 1 : end]
        return syntax_issue(
            f"`{segment}` is not a valid name: names can't start with a digit "
            f"(memory is referenced as {_REF_FORM}).",
            tok.start + 1,
            end,
        )
    if kind == "NUMBER" and prev is not None and prev.type == "NUMBER" and adjacent:
        if prev.value.strip("0_") == "" and tok.value[:1].isdigit():
            return syntax_issue(
                f"Invalid number `{prev.value}{tok.value}`: leading zeros are not allowed in "
                "decimal numbers (write `0o…` for an octal number).",
                prev.start,
                tok.end,
            )
        return syntax_issue(f"Invalid number `{prev.value}{tok.value}`.", prev.start, tok.end)
    if kind == "NAME" and prev is not None and prev.type == "NUMBER" and adjacent:
        return syntax_issue(
            f"Invalid number `{prev.value}{tok.value}`.",
            prev.start,
            tok.end,
        )
    if kind == "EQUAL":
        if prev is not None and prev.type == "EQ" and adjacent:
            return syntax_issue("`===` is not an operator: use `==`.", prev.start, tok.end)
        return syntax_issue(
            "`=` assigns, and conditions can't assign: compare with `==`.",
            tok.start,
            tok.end,
        )
    if adjacent and prev is not None:
        for ptype, ctype, written, use in (
            ("AMPERSAND", "AMPERSAND", "&&", "and"),
            ("VBAR", "VBAR", "||", "or"),
            ("LT", "GT", "<>", "!="),
        ):
            if prev.type == ptype and kind == ctype:
                return syntax_issue(
                    f"`{written}` is not an operator: use `{use}`.", prev.start, tok.end
                )
    if kind in _CLOSERS:
        stack = _open_stack(real, tok.start)
        if not stack:
            return syntax_issue(f"Unmatched `{tok.value}`.", tok.start, tok.end)
        if _MATCHING[kind] != stack[-1].type:
            return syntax_issue(
                f"`{tok.value}` does not match the opening `{stack[-1].value}`.",
                tok.start,
                tok.end,
            )
    if kind == "NOT" and "NAME" in expected and "NOT" not in expected:
        return syntax_issue(
            "`not` can't appear here without parentheses: write e.g. "
            "`session.a.x == (not session.a.y)`.",
            tok.start,
            tok.end,
        )
    return syntax_issue(
        f"Unexpected {_describe(tok)}: expected "
        f"{_expectation(expected, _closer(real, tok.start))}.",
        tok.start,
        tok.end,
    )


# ---------------------------------------------------------------------------------------
# Tree building with the engine's allow-list


@dataclass(frozen=True)
class _Op:
    text: str
    range: TextRange


Segment = tuple[str, TextRange]


@dataclass(frozen=True)
class _W:
    """Result of one (wide) parse-tree node."""

    range: TextRange
    expr: Expr | None = None
    errors: tuple[SyntaxIssue, ...] = ()  # allow-list errors (dropped by an outer rejection)
    syntax: tuple[SyntaxIssue, ...] = ()  # Python syntax errors (always reported)
    refs: tuple[MemoryRef, ...] = ()
    chain: tuple[Segment, ...] | None = None  # attribute chain rooted at a Name
    outer: TextRange | None = None  # range including enclosing parentheses, if any

    @property
    def full(self) -> TextRange:
        return self.outer or self.range


def _span(children: Sequence[object]) -> TextRange:
    starts: list[int] = []
    ends: list[int] = []
    for child in children:
        if isinstance(child, _W):
            starts.append(child.full.start)
            ends.append(child.full.end)
        elif isinstance(child, _Op):
            starts.append(child.range.start)
            ends.append(child.range.end)
        elif isinstance(child, Token):
            starts.append(_start(child))
            ends.append(_end(child))
    if not starts:
        return TextRange(0, 0)
    return TextRange(min(starts), max(ends))


def _ws(children: Sequence[object]) -> list[_W]:
    return [c for c in children if isinstance(c, _W)]


def _mergesyntax_issue(ws: Sequence[_W]) -> tuple[SyntaxIssue, ...]:
    return tuple(issue for w in ws for issue in w.syntax)


def _merge_refs(ws: Sequence[_W]) -> tuple[MemoryRef, ...]:
    return tuple(ref for w in ws for ref in w.refs)


_NODE_MESSAGES = {
    "call": "Function calls are not supported.",
    "subscript": "Subscripts (`x[…]`) are not supported.",
    "list_display": "Lists are not supported; to test membership, compare with `==` "
    "for each value and join the tests with `or`.",
    "tuple_display": "Tuples are not supported; to test membership, compare with `==` "
    "for each value and join the tests with `or`.",
    "top_tuple": "A top-level `,` makes a tuple, which is not supported: a condition is "
    "a single expression (join tests with `and` / `or`).",
    "dict_display": "Dicts are not supported.",
    "set_display": "Sets are not supported; to test membership, compare with `==` "
    "for each value and join the tests with `or`.",
    "generator": "Generator expressions are not supported.",
    "list_comprehension": "Comprehensions are not supported.",
    "set_comprehension": "Comprehensions are not supported.",
    "dict_comprehension": "Comprehensions are not supported.",
    "ifexp": "Conditional expressions (`x if c else y`) are not supported; combine tests "
    "with `and` / `or` instead.",
    "lambdef": "`lambda` is not supported.",
    "namedexpr": "Assignment expressions (`:=`) are not supported.",
    "await_expr": "`await` is not supported.",
}

_BINOP_NAMES = {
    "+": "addition",
    "-": "subtraction",
    "*": "multiplication",
    "/": "division",
    "//": "floor division",
    "%": "modulo",
    "**": "exponentiation",
    "@": "matrix multiplication",
    "<<": "shifting",
    ">>": "shifting",
    "^": "bitwise xor",
}

_HYPHENATED = re.compile(r"session\s*\.\s*\w+(?:\s*-\s*\w+)+", re.UNICODE)

_KIND_BY_TYPE: dict[type, LiteralKind] = {
    str: "str",
    bytes: "bytes",
    int: "int",
    float: "float",
    complex: "complex",
}

_EMPTY_MESSAGE = (
    "Empty condition: write an expression such as `session.<skill_id|project>.<entry> == 'value'`."
)


def _string_prefix(literal: str) -> str:
    quote = min(i for i in (literal.find("'"), literal.find('"')) if i >= 0)
    return literal[:quote].lower()


def _literal_eval(source: str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(source)


def _literal_error_message(exc: BaseException) -> str:
    msg = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
    return msg.split(" (<unknown>")[0]


class _Builder(Transformer_NonRecursive[Token, Any]):
    """Bottom-up, non-recursive: deep nesting can't overflow the Python stack."""

    def __init__(self, text: str) -> None:
        super().__init__(visit_tokens=False)
        self._text = text

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        rule = str(data)
        if rule in _NODE_MESSAGES:
            return self._reject(
                children, CODE_UNSUPPORTED_EXPRESSION, _NODE_MESSAGES[rule] + " " + _SUPPORTED
            )
        handler = getattr(self, "_rule_" + rule, None)
        if handler is not None:
            return handler(children)
        # Helper rules (arguments, subscripts, comp_for, ...): only the range, syntax
        # errors and references matter to the enclosing (rejected) construct.
        ws = _ws(children)
        return _W(_span(children), syntax=_mergesyntax_issue(ws), refs=_merge_refs(ws))

    # -- entry points ---------------------------------------------------------------

    def _rule_start(self, children: list[Any]) -> _W:
        result: _W = children[0]
        return result

    def _rule_paren(self, children: list[Any]) -> _W:
        inner: _W = children[1]
        # Parentheses don't create nodes; enclosing constructs still span them.
        return replace(inner, outer=_span(children))

    def _rule_comp_op(self, children: list[Any]) -> _Op:
        toks: list[Token] = children
        return _Op(" ".join(str(t.value) for t in toks), _span(toks))

    # -- atoms ----------------------------------------------------------------------

    def _rule_name(self, children: list[Any]) -> _W:
        tok: Token = children[0]
        name = _nfkc(str(tok.value))
        rng = TextRange(_start(tok), _end(tok))
        if name == "session":
            issue = SyntaxIssue(
                CODE_INCOMPLETE_REFERENCE,
                f"Incomplete memory reference `session`: write {_REF_FORM}.",
                rng,
            )
        else:
            issue = SyntaxIssue(CODE_UNKNOWN_NAME, _unknown_name_message(name), rng)
        return _W(rng, errors=(issue,), chain=((name, rng),))

    def _rule_number(self, children: list[Any]) -> _W:
        tok: Token = children[0]
        rng = TextRange(_start(tok), _end(tok))
        try:
            value = _literal_eval(str(tok.value))
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            return _W(rng, syntax=(syntax_issue(_literal_error_message(exc), rng.start, rng.end),))
        kind = _KIND_BY_TYPE.get(type(value), "int")
        return _W(rng, expr=LiteralExpr(value, kind, rng))

    def _rule_strings(self, children: list[Any]) -> _W:
        toks: list[Token] = children
        rng = _span(toks)
        prefixes = [_string_prefix(str(t.value)) for t in toks]
        syntax: list[SyntaxIssue] = []
        values: list[object] = []
        for tok, prefix in zip(toks, prefixes, strict=True):
            if "f" in prefix:
                continue
            try:
                values.append(_literal_eval(str(tok.value)))
            except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
                syntax.append(
                    syntax_issue(
                        f"Invalid string literal: {_literal_error_message(exc)}.",
                        _start(tok),
                        _end(tok),
                    )
                )
        is_bytes = ["b" in p for p in prefixes]
        if any(is_bytes) and not all(is_bytes):
            syntax.append(
                syntax_issue(
                    "Bytes and text string literals can't be concatenated.", rng.start, rng.end
                )
            )
        if syntax:
            return _W(rng, syntax=tuple(syntax))
        if any("f" in p for p in prefixes):
            return _W(
                rng,
                errors=(
                    SyntaxIssue(
                        CODE_UNSUPPORTED_EXPRESSION,
                        "f-strings are not supported: use a plain string literal. " + _SUPPORTED,
                        rng,
                    ),
                ),
            )
        value: object
        if all(is_bytes):
            value = b"".join(v for v in values if isinstance(v, bytes))
            return _W(rng, expr=LiteralExpr(value, "bytes", rng))
        value = "".join(v for v in values if isinstance(v, str))
        return _W(rng, expr=LiteralExpr(value, "str", rng))

    def _rule_ellipsis(self, children: list[Any]) -> _W:
        rng = _span(children)
        return _W(rng, expr=LiteralExpr(..., "ellipsis", rng))

    def _rule_constant(self, children: list[Any]) -> _W:
        tok: Token = children[0]
        rng = _span(children)
        if tok.type == "NONE":
            return _W(rng, expr=LiteralExpr(None, "none", rng))
        return _W(rng, expr=LiteralExpr(tok.type == "TRUE", "bool", rng))

    # -- memory references ----------------------------------------------------------

    def _rule_attribute(self, children: list[Any]) -> _W:
        base: _W = children[0]
        tok: Token = children[2]
        seg_range = TextRange(_start(tok), _end(tok))
        rng = TextRange(base.full.start, seg_range.end)
        chain = base.chain
        if chain is not None and len(chain) < _MAX_CHAIN:
            chain = (*chain, (_nfkc(str(tok.value)), seg_range))
        elif chain is not None and chain[-1][0] != "…":
            # long past valid: stop copying the chain (quadratic on `session.a.a.a…`)
            chain = (*chain, ("…", seg_range))
        if chain is not None and len(chain) == 3 and chain[0][0] == "session":
            ref = MemoryRef(
                namespace=chain[1][0],
                entry=chain[2][0],
                range=TextRange(chain[0][1].start, seg_range.end),
                namespace_range=chain[1][1],
                entry_range=chain[2][1],
            )
            return _W(
                rng,
                expr=RefExpr(ref, rng),
                syntax=base.syntax,
                refs=(*base.refs, ref),
                chain=chain,
            )
        issue = SyntaxIssue(CODE_INVALID_REFERENCE, _invalid_reference_message(chain), rng)
        return _W(rng, errors=(issue,), syntax=base.syntax, refs=base.refs, chain=chain)

    # -- boolean structure ----------------------------------------------------------

    def _rule_not_op(self, children: list[Any]) -> _W:
        operand: _W = children[1]
        rng = _span(children)
        expr = None if operand.expr is None else NotExpr(operand.expr, rng)
        return _W(rng, expr, operand.errors, operand.syntax, operand.refs)

    def _rule_and_op(self, children: list[Any]) -> _W:
        return self._boolop("and", children)

    def _rule_or_op(self, children: list[Any]) -> _W:
        return self._boolop("or", children)

    def _boolop(self, op: Literal["and", "or"], children: list[Any]) -> _W:
        ws = _ws(children)
        rng = _span(children)
        exprs = [w.expr for w in ws if w.expr is not None]
        expr = BoolOpExpr(op, tuple(exprs), rng) if len(exprs) == len(ws) else None
        errors = tuple(issue for w in ws for issue in w.errors)
        return _W(rng, expr, errors, _mergesyntax_issue(ws), _merge_refs(ws))

    def _rule_compare(self, children: list[Any]) -> _W:
        rng = _span(children)
        ws = _ws(children)
        ops: list[_Op] = [c for c in children if isinstance(c, _Op)]
        errors: list[SyntaxIssue] = []
        skip: set[int] = set()
        for i, op in enumerate(ops):
            if op.text in ("in", "not in"):
                skip.add(i + 1)  # the container: the hint already says how to rewrite it
                errors.append(
                    SyntaxIssue(
                        CODE_UNSUPPORTED_COMPARISON,
                        f"`{op.text}` is not supported: test membership with `==` for each "
                        "value joined by `or`, e.g. `session.a.x == 'red' or session.a.x == "
                        "'blue'`. Supported comparisons: `==`, `!=`, `<`, `<=`, `>`, `>=`.",
                        op.range,
                    )
                )
            elif op.text in ("is", "is not"):
                use = "==" if op.text == "is" else "!="
                errors.append(
                    SyntaxIssue(
                        CODE_UNSUPPORTED_COMPARISON,
                        f"`{op.text}` is not supported: compare with `{use}` instead, e.g. "
                        f"`session.a.x {use} None`. Supported comparisons: `==`, `!=`, `<`, "
                        "`<=`, `>`, `>=`.",
                        op.range,
                    )
                )
        for i, w in enumerate(ws):
            if i not in skip:
                errors.extend(w.errors)
        expr: Expr | None = None
        if not errors and all(w.expr is not None for w in ws):
            operands = [w.expr for w in ws if w.expr is not None]
            expr = CompareExpr(
                left=operands[0],
                ops=tuple(op.text for op in ops),
                comparators=tuple(operands[1:]),
                op_ranges=tuple(op.range for op in ops),
                range=rng,
            )
        return _W(rng, expr, tuple(errors), _mergesyntax_issue(ws), _merge_refs(ws))

    # -- rejected constructs --------------------------------------------------------

    def _reject(self, children: list[Any], code: str, message: str) -> _W:
        ws = _ws(children)
        rng = _span(children)
        issue = SyntaxIssue(code, message, rng)
        return _W(rng, errors=(issue,), syntax=_mergesyntax_issue(ws), refs=_merge_refs(ws))

    def _rule_unary(self, children: list[Any]) -> _W:
        op = str(children[0].value)
        operand: _W = children[1]
        is_number = isinstance(operand.expr, LiteralExpr) and operand.expr.kind in (
            "int",
            "float",
            "complex",
        )
        if op == "-":
            message = (
                "Unary `-` is not supported, so negative numbers can't be written. "
                "Rewrite the comparison, e.g. `0 > session.accounts.balance` instead of "
                "`session.accounts.balance < 0`."
            )
            if not is_number:
                message = "Unary `-` is not supported. " + _SUPPORTED
        elif op == "+":
            message = "Unary `+` is not supported: write the number without a sign."
        else:
            message = "`~` (bitwise inversion) is not supported: negate a test with `not`."
        return self._reject(children, CODE_UNSUPPORTED_UNARY, message)

    def _rule_binop(self, children: list[Any]) -> _W:
        op = str(children[1].value)
        rng = _span(children)
        source = self._text[rng.start : rng.end]
        if op == "&":
            message = "`&` is not supported: join tests with `and`."
        elif op == "|":
            message = "`|` is not supported: join tests with `or`."
        elif op == "-" and _HYPHENATED.search(source):
            message = (
                "Hyphenated skill ids can't be used in conditions: Python reads "
                f"`{source}` as a subtraction. Only skills whose id is a Python identifier "
                "(letters, digits, `_`) can be referenced as "
                f"{_REF_FORM}."
            )
        else:
            message = f"Arithmetic ({_BINOP_NAMES.get(op, op)}, `{op}`) is not supported. "
            message += _SUPPORTED
        return self._reject(children, CODE_UNSUPPORTED_EXPRESSION, message)


def _unknown_name_message(name: str) -> str:
    lowered = name.lower()
    if lowered in ("true", "false") and name not in ("True", "False"):
        fix = "True" if lowered == "true" else "False"
        return (
            f"Unknown name `{name}`: literals are case-sensitive, write `{fix}`. "
            f"Memory is referenced as {_REF_FORM}."
        )
    if lowered in ("null", "none", "nil", "undefined") and name != "None":
        return (
            f"Unknown name `{name}`: the null literal is `None` (compare with `== None`). "
            f"Memory is referenced as {_REF_FORM}."
        )
    return (
        f"Unknown name `{name}`: memory is referenced as {_REF_FORM}; literals are strings, "
        "numbers, `True`, `False` and `None`."
    )


_MAX_CHAIN = 6  # attribute segments kept (and quoted in messages); a reference has three


def _invalid_reference_message(chain: tuple[Segment, ...] | None) -> str:
    if chain is None:
        return (
            "Invalid memory reference: attributes can only be read from `session`, as in "
            f"{_REF_FORM}."
        )
    written = ".".join(name for name, _ in chain)
    root = chain[0][0]
    if root != "session":
        if root.lower() == "session":
            return f"Invalid memory reference `{written}`: write `session` in lower case."
        return (
            f"Invalid memory reference `{written}`: memory is referenced as {_REF_FORM}, "
            "starting with `session`."
        )
    if len(chain) == 2:
        return (
            f"Invalid memory reference `{written}`: the entry is missing, write "
            f"`{written}.<entry>` ({_REF_FORM})."
        )
    return (
        f"Invalid memory reference `{written}`: a reference has exactly three segments, "
        f"{_REF_FORM}."
    )


_UNENCODABLE = re.compile("[\x00\ud800-\udfff]")


def _parse_lark(source: str) -> ParsedCondition:
    toks, lex_error = _lex(source)
    bad = _UNENCODABLE.search(source)
    if bad is not None:
        # CPython refuses such source text as a whole, even inside comments and strings.
        what = "a null character" if bad.group() == "\x00" else "an unpaired surrogate"
        issue = syntax_issue(
            f"The condition contains {what} ({_char_name(bad.group())}), which Python "
            "refuses anywhere in source text.",
            bad.start(),
            bad.end(),
        )
        return ParsedCondition(source, None, _refs_from_tokens(toks), (issue,))
    if not toks and not lex_error:
        issue = SyntaxIssue(CODE_EMPTY, _EMPTY_MESSAGE, TextRange(0, len(source)))
        return ParsedCondition(source, None, (), (issue,))
    try:
        tree = _parser().parse(source)
    except UnexpectedInput as exc:
        issue = _parse_error_issue(exc, source, toks)
        return ParsedCondition(source, None, _refs_from_tokens(toks), (issue,))
    except LarkError:  # pragma: no cover - defensive
        issue = syntax_issue("The condition could not be parsed.", 0, len(source))
        return ParsedCondition(source, None, _refs_from_tokens(toks), (issue,))
    result: _W = _Builder(source).transform(tree)
    errors = result.syntax or result.errors
    if not errors and result.expr is None:  # pragma: no cover - defensive
        errors = (syntax_issue("The condition could not be parsed.", 0, len(source)),)
    ordered = tuple(sorted(errors, key=lambda issue: (issue.range.start, issue.range.end)))
    refs = tuple(sorted(result.refs, key=lambda ref: ref.range.start))
    return ParsedCondition(source, None if ordered else result.expr, refs, ordered)


def _parse_error_issue(exc: UnexpectedInput, source: str, toks: Sequence[_Tok]) -> SyntaxIssue:
    if isinstance(exc, UnexpectedCharacters):
        return _bad_char_issue(source, exc.pos_in_stream or 0)
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            return _unexpected_end(toks, source, set(exc.expected))
        return _unexpected_token(
            _Tok(tok.type, str(tok.value), _start(tok), _end(tok)),
            set(exc.expected),
            toks,
            source,
        )
    if isinstance(exc, UnexpectedEOF):
        return _unexpected_end(toks, source, set(exc.expected))
    return syntax_issue("The condition could not be parsed.", 0, len(source))  # pragma: no cover


parse_lark = _parse_lark
lex = _lex
