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
with one regular expression and one pass over its tokens (~3x faster, which matters at
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
# the regex's groups: a reference (1; its namespace 2 and entry 3), an operator (4), a
# keyword or constant name (5), a quoted string (6), a decimal integer (7)
_REF, _OP, _WORD, _STR, _INT = 1, 4, 5, 6, 7
_CONSTANTS: dict[str, tuple[object, str]] = {
    "True": (True, "bool"),
    "False": (False, "bool"),
    "None": (None, "none"),
}

# Without parentheses, Python's grammar for these tokens is flat: ``or`` separates
# ``and`` groups, ``and`` separates terms, a term is ``not`` words then one comparison
# chain ``atom (op atom)*``. ``a and b and c`` is one operation with three operands.


def _parse_plain(source: str) -> ParsedCondition | None:
    """The tree of a condition made only of plain tokens (see :data:`_PLAIN_TOKEN`), or
    None: anything else is for Python's parser, and so is a sequence of plain tokens that
    is not a condition (``a ==``, ``and b``, ``a not b``).

    One pass over the tokens, each taken as it comes: the term being read is its
    ``not`` words, its first atom and its (operator, atom) pairs; ``and`` closes the term,
    ``or`` the group of terms as well."""
    if source[:1] == " ":
        return None  # Python: an unexpected indent
    refs: list[MemoryRef] = []
    ors: list[Expr] = []  # the closed `and` groups
    ands: list[Expr] = []  # the closed terms of the open group
    nots: list[int] = []  # where the open term's `not` words start
    left: Expr | None = None  # the open term's first atom
    ops: list[str] = []
    op_ranges: list[TextRange] = []
    comps: list[Expr] = []
    want_atom = True  # at the start of a term, after `not` or after an operator
    pos, n = 0, len(source)
    match = _PLAIN_TOKEN.match
    while pos < n:
        m = match(source, pos)
        if m is None:
            if source[pos:].strip(" "):
                return None
            break
        pos = m.end()
        kind = m.lastindex or 0
        if kind == _OP:
            if want_atom:
                return None
            ops.append(m.group(_OP))
            op_ranges.append(new_range(TextRange, m.span(_OP)))
            want_atom = True
            continue
        if kind == _WORD:
            word = m.group(_WORD)
            if word == "not":
                if left is not None:  # `a not b`, `a == not b`
                    return None
                nots.append(m.start(_WORD))
                continue
            if word == "and" or word == "or":
                if want_atom or left is None:
                    return None
                ands.append(_term(left, ops, op_ranges, comps, nots))
                left, ops, op_ranges, comps, nots = None, [], [], [], []
                want_atom = True
                if word == "or":
                    ors.append(_joined("and", ands))
                    ands = []
                continue
        # an atom: a reference, a string, an integer, True / False / None
        if not want_atom:
            return None
        rng: TextRange = new_range(TextRange, m.span(kind))
        atom: Expr
        if kind == _REF:
            ns, entry = m.group(2), m.group(3)
            if ns in _KEYWORDS or entry in _KEYWORDS:
                return None  # `session.not.x` is a syntax error
            ref = _c.MemoryRef(
                ns, entry, rng, new_range(TextRange, m.span(2)), new_range(TextRange, m.span(3))
            )
            refs.append(ref)
            atom = _c.RefExpr(ref, rng)
        elif kind == _STR:
            atom = _c.LiteralExpr(source[rng[0] + 1 : rng[1] - 1], "str", rng)
        elif kind == _INT:
            atom = _c.LiteralExpr(int(source[rng[0] : rng[1]]), "int", rng)
        else:
            value, lit = _CONSTANTS[m.group(_WORD)]
            atom = _c.LiteralExpr(value, lit, rng)  # type: ignore[arg-type]
        if left is None:
            left = atom
        else:
            comps.append(atom)
        want_atom = False
    if want_atom or left is None:  # nothing, or it ends with an operator, `and`, `or`, `not`
        return None
    ands.append(_term(left, ops, op_ranges, comps, nots))
    ors.append(_joined("and", ands))
    return _c.ParsedCondition(source, _joined("or", ors), tuple(refs), ())


def _term(
    left: Expr, ops: list[str], op_ranges: list[TextRange], comps: list[Expr], nots: list[int]
) -> Expr:
    """A closed term: its comparison chain (or its one atom) under its ``not`` words."""
    expr = left
    if comps:
        rng: TextRange = new_range(TextRange, (left.range.start, comps[-1].range.end))
        expr = _c.CompareExpr(left, tuple(ops), tuple(comps), tuple(op_ranges), rng)
    for start in reversed(nots):
        not_rng: TextRange = new_range(TextRange, (start, expr.range.end))
        expr = _c.NotExpr(expr, not_rng)
    return expr


def _joined(op: str, operands: list[Expr]) -> Expr:
    if len(operands) == 1:
        return operands[0]
    rng: TextRange = new_range(TextRange, (operands[0].range.start, operands[-1].range.end))
    return _c.BoolOpExpr(op, tuple(operands), rng)  # type: ignore[arg-type]
