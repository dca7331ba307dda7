"""A fast path for the common case of :func:`mantle_lsp.syntax.conditions.parse_condition`.

A condition is a restricted Python expression, and most conditions are simple: one line,
ASCII, no parentheses, comments or continuations. For those, Python's own parser (the one
the engine uses) builds the same tree as the lark grammar about ten times faster. Anything
else — and anything Python or the whitelist rejects — returns ``None`` so the caller uses
the lark parser, which also gives the precise error messages. A differential test checks
that both parsers agree on every input the fast path accepts.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import TYPE_CHECKING

from . import condition_tree as _c
from .text import TextRange, new_range

if TYPE_CHECKING:
    from .condition_tree import Expr, MemoryRef, ParsedCondition


_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_OP_RE = re.compile(r"==|!=|<=|>=|<|>")
_ATTR_RE = re.compile(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_NOT_SIMPLE = re.compile(r"[()#\\\n\r\t\f\v]")


class _Reject(Exception):
    pass


def parse_fast(source: str) -> ParsedCondition | None:
    if (
        not source
        or not source.isascii()
        or source[0] == " "
        or _NOT_SIMPLE.search(source)
        or "session" not in source
    ):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    refs: list[MemoryRef] = []
    try:
        expr = _Build(source, refs).expr(tree.body)
    except _Reject:
        return None
    return _c.ParsedCondition(source, expr, tuple(sorted(refs, key=_ref_start)), ())


def _ref_start(ref: MemoryRef) -> int:
    return ref.range.start


class _Build:
    def __init__(self, source: str, refs: list[MemoryRef]) -> None:
        self.src = source
        self.refs = refs

    def rng(self, node: ast.expr) -> TextRange:
        end = node.end_col_offset
        if node.lineno != 1 or node.end_lineno != 1 or end is None:
            raise _Reject
        rng: TextRange = new_range(TextRange, (node.col_offset, end))
        return rng

    def expr(self, node: ast.expr) -> Expr:
        cls = node.__class__
        if cls is ast.Attribute:
            return self.ref(node)  # type: ignore[arg-type]
        if cls is ast.Constant:
            return self.constant(node)  # type: ignore[arg-type]
        if isinstance(node, ast.BoolOp):
            values = tuple(self.expr(v) for v in node.values)
            if isinstance(node.op, ast.And):
                return _c.BoolOpExpr("and", values, self.rng(node))
            return _c.BoolOpExpr("or", values, self.rng(node))
        if isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.Not):
                raise _Reject
            return _c.NotExpr(self.expr(node.operand), self.rng(node))
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            comps = tuple(self.expr(c) for c in node.comparators)
            ops: list[str] = []
            op_ranges: list[TextRange] = []
            prev = left.range.end
            for cmp_op, comp in zip(node.ops, comps, strict=True):
                sym = _OPS.get(type(cmp_op))
                if sym is None:
                    raise _Reject
                m = _OP_RE.search(self.src, prev, comp.range.start)
                if m is None or m.group() != sym:
                    raise _Reject
                ops.append(sym)
                op_ranges.append(TextRange(m.start(), m.end()))
                prev = comp.range.end
            return _c.CompareExpr(left, tuple(ops), comps, tuple(op_ranges), self.rng(node))
        raise _Reject

    def constant(self, node: ast.Constant) -> Expr:
        v = node.value
        kind: str
        if isinstance(v, bool):
            kind = "bool"
        elif v is None:
            kind = "none"
        elif v is Ellipsis:
            kind = "ellipsis"
        elif isinstance(v, str):
            kind = "str"
        elif isinstance(v, bytes):
            kind = "bytes"
        elif isinstance(v, int):
            kind = "int"
        elif isinstance(v, float):
            kind = "float"
        elif isinstance(v, complex):
            kind = "complex"
        else:
            raise _Reject
        return _c.LiteralExpr(v, kind, self.rng(node))  # type: ignore[arg-type]

    def ref(self, node: ast.Attribute) -> Expr:
        inner = node.value
        if not (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.value, ast.Name)
            and inner.value.id == "session"
        ):
            raise _Reject
        base = self.rng(inner.value)
        m1 = _ATTR_RE.match(self.src, base.end)
        if m1 is None or m1.group(1) != inner.attr:
            raise _Reject
        m2 = _ATTR_RE.match(self.src, m1.end())
        if m2 is None or m2.group(1) != node.attr:
            raise _Reject
        whole = self.rng(node)
        if whole.end != m2.end() or whole.start != base.start:
            raise _Reject
        ref = _c.MemoryRef(
            inner.attr,
            node.attr,
            whole,
            TextRange(m1.start(1), m1.end(1)),
            TextRange(m2.start(1), m2.end(1)),
        )
        self.refs.append(ref)
        return _c.RefExpr(ref, whole)
