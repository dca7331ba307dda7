"""Parser for condition expressions (prose ``if:``, ``requires``, ``complete_when``, ``when``,
response ``condition``, precondition ``satisfied_when``, branch ``if``).

The engine parses a condition with Python's ``ast.parse(expr, mode="eval")`` and walks the
tree with an allow-list: ``or`` / ``and`` / ``not``, chained ``== != < <= > >=``, memory
references ``session.<namespace>.<entry>`` (exactly three segments) and constants. This
module accepts exactly that language (docs/language/conditions.md) and
explains everything else with a precise range.

How it works (this module holds the public tree and the entry point; simple conditions
go through Python's own parser in :mod:`conditions_fast`, everything else through the
lark parser in :mod:`conditions_lark`, imported on first use):

1. ``grammars/conditions.lark`` is an LALR grammar for a *superset* of the language (most of
   Python's expression syntax) with Python's own token definitions. A small post-lexer
   (:class:`_LayoutPostLexer`) applies Python's layout rules (paren depth, line breaks,
   comments, line continuations, "unexpected indent", invalid identifier characters) and
   turns layout errors into error tokens, so the first problem always surfaces as a parse
   error at the right place. The lexer is lark's *basic* (context-free) one, like Python's
   tokenizer: a contextual lexer could split text into tokens differently from Python.
2. A non-recursive transformer (:class:`_Builder`) turns the parse tree into the public
   AST while applying the engine's allow-list bottom-up; constructs outside it become
   issues with the engine's error category and a message that says what is allowed.
3. Memory references are collected from the tree, or, when the text does not parse, from
   the token stream, so editor features keep working on half-written conditions.

Known, deliberate differences from CPython 3.11 (the engine's interpreter):

* CPython also gives up on some absurdly deep nesting that has no parentheses limit of its
  own: about 190 nested parenthesised comparisons exhaust its parser stack (MemoryError)
  and about 3000 nested ``not`` or attribute levels exceed its AST recursion limit. We
  accept those; only the limit of 200 nested brackets is reproduced exactly.
* Every f-string is reported as ``unsupported_expression``; CPython reports a malformed
  f-string (``f'{'``) as a syntax error instead. Both reject the input.
* Some constructs that Python rejects are rejected with a different category than the
  engine would use (e.g. starred expressions, ``yield``): rejection itself always agrees.
"""

from __future__ import annotations

import functools
from typing import Any

from .condition_tree import (
    CODE_EMPTY,
    CODE_INCOMPLETE_REFERENCE,
    CODE_INVALID_REFERENCE,
    CODE_SYNTAX,
    CODE_UNKNOWN_NAME,
    CODE_UNSUPPORTED_COMPARISON,
    CODE_UNSUPPORTED_EXPRESSION,
    CODE_UNSUPPORTED_UNARY,
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
from .conditions_fast import parse_fast

__all__ = [
    "CODE_EMPTY",
    "CODE_INCOMPLETE_REFERENCE",
    "CODE_INVALID_REFERENCE",
    "CODE_SYNTAX",
    "CODE_UNKNOWN_NAME",
    "CODE_UNSUPPORTED_COMPARISON",
    "CODE_UNSUPPORTED_EXPRESSION",
    "CODE_UNSUPPORTED_UNARY",
    "BoolOpExpr",
    "CompareExpr",
    "Expr",
    "LiteralExpr",
    "LiteralKind",
    "MemoryRef",
    "NotExpr",
    "ParsedCondition",
    "RefExpr",
    "parse_condition",
]


def _parse_lark(source: str) -> ParsedCondition:
    """The full parser (lark), for everything the fast path does not take; lark is
    imported on first use, which keeps it out of the start-up of most checks."""
    from .conditions_lark import parse_lark

    return parse_lark(source)


def _lex(text: str) -> tuple[list[Any], bool]:
    """The condition's significant tokens (see :func:`conditions_lark.lex`)."""
    from .conditions_lark import lex

    return lex(text)


# ---------------------------------------------------------------------------------------
# Entry point


@functools.lru_cache(maxsize=32768)
def parse_condition(source: str) -> ParsedCondition:
    """Parse one condition. Never raises; offsets are relative to ``source``."""
    try:
        return _parse(source)
    except RecursionError:
        issue = syntax_issue("The condition is nested too deeply.", 0, len(source))
        return ParsedCondition(source, None, (), (issue,))


def _parse(source: str) -> ParsedCondition:
    fast = parse_fast(source)
    return fast if fast is not None else _parse_lark(source)
