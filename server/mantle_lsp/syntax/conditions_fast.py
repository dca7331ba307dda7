"""A fast path for the common case of :func:`mantle_lsp.syntax.conditions.parse_condition`.

A condition is a restricted Python expression, and most conditions are simple: one line,
ASCII, no parentheses, comments or continuations. For those, Python's own parser (the one
the engine uses) builds the same tree as the lark grammar about ten times faster. Anything
else — and anything Python or the whitelist rejects — returns ``None`` so the caller uses
the lark parser, which also gives the precise error messages. A differential test checks
that both parsers agree on every input the fast path accepts.

The commonest conditions of all — references, comparisons with plain quoted strings,
decimal integers, ``True`` / ``False`` / ``None``, joined by ``and`` / ``or`` / ``not``,
with single spaces — do not even need Python's parser: :func:`_parse_plain` reads them
with one regular expression and a four-rule descent (~3x faster, which matters at
thousands of conditions per project). Any other token or any token sequence it does not
expect hands the text on to Python's parser, so it only ever decides inputs whose tree is
certain; the differential tests hold it to the same trees.
"""

from __future__ import annotations

import ast
import keyword
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
    plain = _parse_plain(source)
    return plain if plain is not None else _parse_python(source)


def _parse_python(source: str) -> ParsedCondition | None:
    """The tree through Python's own parser (``parse_fast`` has checked the text is
    simple), or None."""
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


# -- the plainest conditions, without Python's parser ------------------------------------

# One token per match, after any spaces: a whole `session.<ns>.<entry>` reference (not
# followed by another name character or dot), a comparison operator, a keyword or
# constant name, a quoted string without backslashes, or a decimal integer (no leading
# zeros, underscores or suffix). Anything else stops the scan.
_PLAIN_TOKEN = re.compile(
    r" *(?:"
    r"(session\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*))(?![A-Za-z0-9_.])"
    r"|(==|!=|<=|>=|<|>)"
    r"|(and|or|not|True|False|None)(?![A-Za-z0-9_])"
    r"|('[^'\\\n]*'|\"[^\"\\\n]*\")(?![A-Za-z0-9_'\"])"
    r"|(0|[1-9][0-9]*)(?![A-Za-z0-9_.])"
    r")"
)
_KEYWORDS = frozenset(keyword.kwlist)
# a plain token: its kind, text, start, end and the match that found it
Token = tuple[int, str, int, int, "re.Match[str]"]
_REF, _OP, _WORD, _STR, _INT = range(5)
_KIND_OF_GROUP = (-1, _REF, -1, -1, _OP, _WORD, _STR, _INT)  # by the regex's group number
_CONSTANTS: dict[str, tuple[object, str]] = {
    "True": (True, "bool"),
    "False": (False, "bool"),
    "None": (None, "none"),
}


def _parse_plain(source: str) -> ParsedCondition | None:
    """The tree of a condition made only of plain tokens (see :data:`_PLAIN_TOKEN`), or
    None: anything else is for Python's parser."""
    if source[:1] == " ":
        return None  # Python: an unexpected indent
    toks: list[Token] = []
    pos, n = 0, len(source)
    match = _PLAIN_TOKEN.match
    while pos < n:
        m = match(source, pos)
        if m is None or m.end() == pos:
            if source[pos:].strip(" "):
                return None
            break
        kind = m.lastindex or 0
        if kind == 1:  # a reference (groups 1-3)
            if m.group(2) in _KEYWORDS or m.group(3) in _KEYWORDS:
                return None  # `session.not.x` is a syntax error
            toks.append((_REF, m.group(1), m.start(1), m.end(1), m))
        else:
            toks.append((_KIND_OF_GROUP[kind], m.group(kind), m.start(kind), m.end(kind), m))
        pos = m.end()
    if not toks:
        return None
    refs: list[MemoryRef] = []
    expr = _plain_tree(toks, refs)
    return None if expr is None else _c.ParsedCondition(source, expr, tuple(refs), ())


# Without parentheses, Python's grammar for these tokens is flat: ``or`` separates
# ``and`` groups, ``and`` separates terms, a term is ``not`` words then one comparison
# chain ``atom (op atom)*``. ``a and b and c`` is one operation with three operands.


def _plain_tree(toks: list[Token], refs: list[MemoryRef]) -> Expr | None:
    """The tree of the plain tokens ``toks`` (references collected into ``refs``, in
    order), or None when they are not a condition (``a ==``, ``and b``, ``a not b``)."""
    ors: list[Expr] = []
    ands: list[Expr] = []
    term: list[Token] = []
    for tok in toks:
        if tok[0] == _WORD and (tok[1] == "and" or tok[1] == "or"):
            expr = _term(term, refs)
            if expr is None:
                return None
            ands.append(expr)
            term = []
            if tok[1] == "or":
                ors.append(_joined("and", ands))
                ands = []
        else:
            term.append(tok)
    expr = _term(term, refs)  # the last term (None when empty: a trailing `and` / `or`)
    if expr is None:
        return None
    ands.append(expr)
    ors.append(_joined("and", ands))
    return _joined("or", ors)


def _joined(op: str, operands: list[Expr]) -> Expr:
    if len(operands) == 1:
        return operands[0]
    rng: TextRange = new_range(TextRange, (operands[0].range.start, operands[-1].range.end))
    return _c.BoolOpExpr(op, tuple(operands), rng)  # type: ignore[arg-type]


def _term(term: list[Token], refs: list[MemoryRef]) -> Expr | None:
    """``not``* then ``atom (op atom)*``."""
    nots = 0
    while nots < len(term) and term[nots][0] == _WORD and term[nots][1] == "not":
        nots += 1
    chain = term[nots:]
    if len(chain) % 2 == 0:  # empty, or ends with an operator
        return None
    left = _atom(chain[0], refs)
    if left is None:
        return None
    expr: Expr = left
    if len(chain) > 1:
        ops: list[str] = []
        op_ranges: list[TextRange] = []
        comps: list[Expr] = []
        for k in range(1, len(chain), 2):
            op, atom = chain[k], chain[k + 1]
            if op[0] != _OP:
                return None
            comp = _atom(atom, refs)
            if comp is None:
                return None
            ops.append(op[1])
            op_ranges.append(new_range(TextRange, (op[2], op[3])))
            comps.append(comp)
        rng: TextRange = new_range(TextRange, (left.range.start, comps[-1].range.end))
        expr = _c.CompareExpr(left, tuple(ops), tuple(comps), tuple(op_ranges), rng)
    for k in range(nots - 1, -1, -1):
        not_rng: TextRange = new_range(TextRange, (term[k][2], expr.range.end))
        expr = _c.NotExpr(expr, not_rng)
    return expr


def _atom(tok: Token, refs: list[MemoryRef]) -> Expr | None:
    kind, text, start, end, m = tok
    rng: TextRange = new_range(TextRange, (start, end))
    if kind == _REF:
        ref = _c.MemoryRef(
            m.group(2),
            m.group(3),
            rng,
            new_range(TextRange, (m.start(2), m.end(2))),
            new_range(TextRange, (m.start(3), m.end(3))),
        )
        refs.append(ref)
        return _c.RefExpr(ref, rng)
    if kind == _STR:
        return _c.LiteralExpr(text[1:-1], "str", rng)
    if kind == _INT:
        return _c.LiteralExpr(int(text), "int", rng)
    if kind == _WORD and text in _CONSTANTS:
        value, lit = _CONSTANTS[text]
        return _c.LiteralExpr(value, lit, rng)  # type: ignore[arg-type]
    return None
