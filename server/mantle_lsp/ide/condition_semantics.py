"""Type-aware warnings on conditions that parse: comparisons that can never be true or that
fail at runtime. The engine checks none of this."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    Expr,
    LiteralExpr,
    NotExpr,
    ParsedCondition,
    RefExpr,
)
from ..syntax.sites import ConditionSite

if TYPE_CHECKING:
    from .diagnostics import Checker

C_ENUM = "lsp.condition.enum_value"
C_TYPE = "lsp.condition.type_mismatch"
C_ORDER = "lsp.condition.ordering_on_non_numeric"
C_NEVER = "lsp.condition.never_equal"

_ORDERING = ("<", "<=", ">", ">=")


def _walk(e: Expr) -> Iterator[Expr]:
    stack = [e]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, NotExpr):
            stack.append(cur.operand)
        elif isinstance(cur, BoolOpExpr):
            stack.extend(cur.operands)
        elif isinstance(cur, CompareExpr):
            stack.append(cur.left)
            stack.extend(cur.comparators)


def check_semantics(
    ck: Checker, path: Path, site: ConditionSite, parsed: ParsedCondition, sid: str | None
) -> None:
    tree = parsed.tree
    if tree is None:
        return
    for node in _walk(tree):
        if isinstance(node, LiteralExpr) and node.kind in ("ellipsis", "bytes"):
            what = "`...`" if node.kind == "ellipsis" else "a bytes literal"
            ck.emit(
                path,
                site.file_range(node.range.start, node.range.end),
                C_NEVER,
                f"{what} never equals a memory value; compare with a string, number, True, "
                "False or None",
            )
        if not isinstance(node, CompareExpr):
            continue
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            a, b = operands[i], operands[i + 1]
            if isinstance(b, RefExpr) and isinstance(a, LiteralExpr):
                a, b = b, a
            if not isinstance(a, RefExpr):
                continue
            ref = a.ref
            info = ck.sem.field_type(sid, ref.namespace, ref.entry)
            if info is None:
                continue
            ftype, enum, enum_bools = info.type, info.enum_values, info.enum_booleans
            key = f"{ref.namespace}.{ref.entry}"
            if op in _ORDERING and ftype in ("bool", "text", "categorical"):
                orng = node.op_ranges[i]
                ck.emit(
                    path,
                    site.file_range(orng.start, orng.end),
                    C_ORDER,
                    f"`{op}` on `{key}` (type {ftype}): ordering only makes sense for numbers; "
                    "when the field is unset the comparison fails at runtime",
                )
            if not isinstance(b, LiteralExpr):
                continue
            lit_rng = site.file_range(b.range.start, b.range.end)
            if ftype == "categorical" and enum and b.kind == "str" and op in ("==", "!="):
                if b.value in enum_bools:
                    ck.emit(
                        path,
                        lit_rng,
                        C_ENUM,
                        f"`enum_values` of `{key}` lists `{b.value}` unquoted, which YAML 1.1 "
                        f"(the engine's reader) turns into the boolean {enum_bools[b.value]}, so "
                        f"this comparison with the string {b.value!r} is always "
                        f"{'false' if op == '==' else 'true'}; quote it in memory.yml "
                        f"(`'{b.value}'`)",
                    )
                elif str(b.value) not in enum:
                    from .diagnostics import did_you_mean

                    ck.emit(
                        path,
                        lit_rng,
                        C_ENUM,
                        f"{b.value!r} is not one of the `enum_values` of `{key}` "
                        f"({', '.join(enum)}), so this is always "
                        f"{'false' if op == '==' else 'true'}"
                        f"{did_you_mean(str(b.value), enum)}",
                    )
            elif ftype == "bool" and b.kind == "str":
                ck.emit(
                    path,
                    lit_rng,
                    C_TYPE,
                    f"`{key}` is a bool but is compared with the string {b.value!r}; write "
                    "True or False (unquoted)",
                )
            elif ftype in ("text", "categorical") and b.kind in ("int", "float", "bool"):
                ck.emit(
                    path,
                    lit_rng,
                    C_TYPE,
                    f"`{key}` holds text but is compared with {b.value!r}; a string never "
                    "equals a number or a boolean (quote the value)",
                )
            elif ftype in ("int", "float") and b.kind == "str":
                ck.emit(
                    path,
                    lit_rng,
                    C_TYPE,
                    f"`{key}` is a number but is compared with the string {b.value!r}; write "
                    "the number without quotes",
                )
