"""How the engine evaluates a condition (docs/language/conditions.md#evaluation), in one
place: the prompt preview evaluates it for a memory state where every value is known,
the data-flow rules for one where some slots are None and the others unknown.

``and`` / ``or`` / ``not`` give booleans and short-circuit left to right; a comparison
chain is the ``and`` of its links, evaluated one after the other; ``==`` / ``!=`` never
fail, an ordering between values Python cannot order fails (the engine then hides the
paragraph, skips the step, … : each site decides). With unknown slots the evaluation is
three-valued: a value, or :data:`UNKNOWN`, and whether it may or certainly does fail.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from ..syntax.conditions import BoolOpExpr, CompareExpr, Expr, LiteralExpr, NotExpr, RefExpr

__all__ = ["UNKNOWN", "Value", "evaluate"]

UNKNOWN: object = object()  # a value that depends on memory the caller does not know
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Value(NamedTuple):
    """What an expression evaluates to: a known value, or :data:`UNKNOWN`; ``raises``:
    its evaluation may fail (an ordering between incompatible values), so such an
    outcome is never called decided; ``fails``: it certainly does (nothing in it is
    evaluated after the failure), and ``error`` says why (Python's message)."""

    value: object
    raises: bool = False
    fails: bool = False
    error: str = ""

    @property
    def decided(self) -> bool:
        return self.value is not UNKNOWN and not self.raises


_UNDECIDED = Value(UNKNOWN)


def evaluate(e: Expr, slots: Mapping[str, object], default: object = UNKNOWN) -> Value:
    """``e`` evaluated with the engine's semantics for the memory ``slots`` (``ns.entry``
    -> value); a slot not in ``slots`` is ``default``: None for a whole memory state (an
    unset field), :data:`UNKNOWN` where the rest of memory is not known."""
    if isinstance(e, RefExpr):
        v = slots.get(e.ref.key, default)
        return _UNDECIDED if v is UNKNOWN else Value(v)
    if isinstance(e, LiteralExpr):
        return Value(e.value)
    if isinstance(e, NotExpr):
        v = evaluate(e.operand, slots, default)
        return Value(not v.value) if v.decided else v._replace(value=UNKNOWN)
    if isinstance(e, BoolOpExpr):
        stop = e.op == "or"  # the truth value that ends the evaluation
        return _links((evaluate(x, slots, default) for x in e.operands), stop)
    return _links(_compare_links(e, slots, default), False)


def _links(values: Iterable[Value], stop: bool) -> Value:
    """``and`` (``stop`` False) or ``or`` (``stop`` True) of values evaluated in turn: the
    first decided ``stop`` value decides, unless an operand before it may fail; one that
    certainly fails, when every operand before it is decided, fails it all."""
    unknown = raises = False
    for v in values:
        if v.decided and bool(v.value) == stop:
            return Value(stop) if not raises else Value(UNKNOWN, True)
        if v.fails and not unknown:
            return Value(UNKNOWN, True, True, v.error)
        unknown |= not v.decided
        raises |= v.raises
    return Value(not stop) if not unknown else Value(UNKNOWN, raises)


def _compare_links(e: CompareExpr, slots: Mapping[str, object], default: object) -> Iterator[Value]:
    """Each link of a comparison chain, as its boolean value."""
    left = evaluate(e.left, slots, default)
    for op, comp in zip(e.ops, e.comparators, strict=True):
        right = evaluate(comp, slots, default)
        may_fail = left.raises or right.raises
        if left.fails or right.fails:
            yield Value(UNKNOWN, True, True, left.error or right.error)
        elif left.decided and right.decided:
            try:
                yield Value(bool(_COMPARE[op](left.value, right.value)))
            except TypeError as exc:  # it fails: the site decides what that means
                yield Value(UNKNOWN, True, True, str(exc))
        else:
            yield Value(UNKNOWN, may_fail or op not in ("==", "!="))
        left = right
