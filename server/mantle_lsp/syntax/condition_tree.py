"""The tree of a parsed condition (:class:`ParsedCondition`, :data:`Expr`) and the issue
codes its parsers report. Both parsers build it: :mod:`conditions_fast` (Python's own
parser, for simple conditions) and :mod:`conditions_lark` (everything else);
:mod:`conditions` chooses between them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from .errors import SyntaxIssue
from .text import TextRange

CODE_EMPTY = "lsp.condition.empty"
CODE_SYNTAX = "lsp.condition.syntax"
CODE_INCOMPLETE_REFERENCE = "lsp.condition.incomplete_reference"
CODE_UNKNOWN_NAME = "lsp.condition.unknown_name"
CODE_INVALID_REFERENCE = "lsp.condition.invalid_reference"
CODE_UNSUPPORTED_UNARY = "lsp.condition.unsupported_unary"
CODE_UNSUPPORTED_COMPARISON = "lsp.condition.unsupported_comparison"
CODE_UNSUPPORTED_EXPRESSION = "lsp.condition.unsupported_expression"

# Python's tokenizer refuses more than this many open brackets (MAXLEVEL in tokenizer.c).
MAX_NESTING = 200

_REF_FORM = "`session.<skill_id|project>.<entry>`"
_SUPPORTED = (
    "Conditions support memory references "
    + _REF_FORM
    + ", literals (strings, numbers, True, False, None), comparisons "
    "(`==`, `!=`, `<`, `<=`, `>`, `>=`) and `and` / `or` / `not`."
)


# ---------------------------------------------------------------------------------------
# Public AST


@dataclass(frozen=True, slots=True)
class MemoryRef:
    """One ``session.<namespace>.<entry>`` reference (names NFKC-normalised, as Python does)."""

    namespace: str
    entry: str
    range: TextRange  # from the "s" of session to the end of the entry
    namespace_range: TextRange
    entry_range: TextRange

    @property
    def key(self) -> str:
        """The slot name the engine reads: ``<namespace>.<entry>``."""
        return f"{self.namespace}.{self.entry}"


LiteralKind = Literal["str", "bytes", "int", "float", "complex", "bool", "none", "ellipsis"]


@dataclass(frozen=True, slots=True)
class RefExpr:
    ref: MemoryRef
    range: TextRange


@dataclass(frozen=True, slots=True)
class LiteralExpr:
    value: object  # str | bytes | int | float | complex | bool | None | Ellipsis
    kind: LiteralKind
    range: TextRange


@dataclass(frozen=True, slots=True)
class NotExpr:
    operand: Expr
    range: TextRange


@dataclass(frozen=True, slots=True)
class BoolOpExpr:
    op: Literal["and", "or"]
    operands: tuple[Expr, ...]
    range: TextRange


@dataclass(frozen=True, slots=True)
class CompareExpr:
    left: Expr
    ops: tuple[str, ...]  # "==", "!=", "<", "<=", ">", ">="
    comparators: tuple[Expr, ...]
    op_ranges: tuple[TextRange, ...]
    range: TextRange


Expr: TypeAlias = RefExpr | LiteralExpr | NotExpr | BoolOpExpr | CompareExpr


@dataclass(frozen=True, slots=True)
class ParsedCondition:
    source: str
    tree: Expr | None  # None when there is any error
    refs: tuple[MemoryRef, ...]  # in source order; also recovered when the parse fails
    errors: tuple[SyntaxIssue, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def syntax_issue(message: str, start: int, end: int) -> SyntaxIssue:
    return SyntaxIssue(CODE_SYNTAX, message, TextRange(start, max(end, start)))
