"""Conditions, wherever they are written: syntax, readability of every key they read, and
comparisons that can never be true (type mismatches, values outside ``enum_values``,
ordering on text). Each condition site reports under the engine's code for that site where
the engine checks it, else under ``lsp.condition.*``."""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

from ...model.layout import FileKind
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    Expr,
    LiteralExpr,
    MemoryRef,
    NotExpr,
    ParsedCondition,
    RefExpr,
)
from ...syntax.memory_yml import MemoryField
from ...syntax.responses_yml import ResponsesDoc
from ...syntax.sites import SITE_LABELS, ConditionSite
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YScalar, YSeq
from ..edits import column, content_end, insert_lines, is_flow, line_start, ws_edit, yaml_scalar
from ..types import CodeAction, TextEdit, WorkspaceEdit
from .base import Checker, Diagnostic, did_you_mean, meant, per_project, per_skill, rule
from .fix import DECLARE_FIELD, Fix, Fixes, literal_of_text, own_data

# Which code a condition problem gets, per site: (syntax code, readability code).
_SITE_CODES: dict[str, tuple[str, str]] = {
    "prose_if": (
        "mantle.validation.prose.invalid_if_expression",
        "mantle.validation.prose.unknown_memory_key",
    ),
    "response_condition": (
        "mantle.validation.response.invalid_condition",
        "mantle.validation.response.unknown_memory_key",
    ),
    # compile errors: the engine fails to load the skill (syntax.skill_md.COMPILED_CONDITIONS)
    "utter_when": ("skill.markdown.invalid_utter", "lsp.condition.unknown_memory_key"),
    "skill_complete_when": ("skill.complete_when.invalid", "lsp.condition.unknown_memory_key"),
    "satisfied_when": (
        "mantle.validation.precondition.invalid_satisfied_when",
        "lsp.condition.unknown_memory_key",
    ),
}
_UNCHECKED_SITE = ("lsp.condition.invalid", "lsp.condition.unknown_memory_key")
_ORDERING = ("<", "<=", ">", ">=")
CODES = (
    *(c for pair in _SITE_CODES.values() for c in pair),
    *_UNCHECKED_SITE,
    "lsp.condition.enum_value",
    "lsp.condition.type_mismatch",
    "lsp.condition.ordering_on_non_numeric",
    "lsp.condition.never_equal",
)


@rule(
    codes=CODES,
    scopes=(
        per_skill(
            reports_on=(K.SKILL_MD, K.SKILL_RESPONSES),
            reads=(K.SKILL_MD, K.SKILL_RESPONSES, K.SKILL_MEMORY, K.PROJECT_MEMORY),
        ),
        per_project(
            reports_on=(K.PROJECT_RESPONSES, K.AGENT),
            reads=(K.PROJECT_RESPONSES, K.AGENT, K.SKILL_MD, K.SKILL_MEMORY, K.PROJECT_MEMORY),
        ),
    ),
)
def conditions(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """Every condition: of a skill's skill.md and responses.yml, of the project-root
    responses.yml and of agent.yml preconditions (the engine checks a `satisfied_when`
    only when some skill uses its precondition)."""
    if sk is not None:
        doc = sk.doc
        if doc is not None and sk.skill_md is not None:
            for site in doc.conditions:
                check_condition(ck, sk.skill_md.path, site, sid)
        if sk.responses is not None and isinstance(sk.responses.doc, ResponsesDoc):
            for site in sk.responses.doc.conditions:
                check_condition(ck, sk.responses.path, site, sid)
        return
    prf = ck.p.project_responses
    if prf is not None and isinstance(prf.doc, ResponsesDoc):
        for site in prf.doc.conditions:
            check_condition(ck, prf.path, site, None)
    apf, agent = ck.p.file_of_kind(K.AGENT), ck.p.agent
    if apf is not None and agent is not None:
        used = ck.sem.used_preconditions()
        for site in agent.conditions:
            check_condition(ck, apf.path, site, None, engine_checked=site.context in used)


def check_condition(
    ck: Checker, path: Path, site: ConditionSite, sid: str | None, *, engine_checked: bool = True
) -> None:
    """``engine_checked=False``: a condition the engine skips although it checks its
    kind elsewhere (a `satisfied_when` no skill uses): reported under the lsp codes."""
    codes = _SITE_CODES.get(site.kind, _UNCHECKED_SITE)
    syntax_code, read_code = codes if engine_checked else _UNCHECKED_SITE
    parsed = site.parsed
    label = SITE_LABELS.get(site.kind, "condition")
    if not parsed.ok:
        tail = ""
        if not engine_checked:
            tail = " (the engine does not check it while no skill uses this precondition)"
        elif syntax_code.startswith("lsp."):
            tail = " (the engine never checks this condition"
            tail += (
                ": while it fails, the tool stays hidden)"
                if "requires" in site.kind
                else ": it fails when evaluated at runtime)"
            )
        for err in parsed.errors:
            rng = site.file_range(err.range.start, err.range.end)
            if rng.start == rng.end:
                rng = site.anchor
            ck.emit(path, rng, syntax_code, f"{label}: {err.message}{tail}")
        return
    for ref in parsed.refs:
        why = ck.unreadable(sid, ref.namespace, ref.entry)
        if why is None:
            continue
        rng = site.file_range(ref.range.start, ref.range.end)
        ck.emit(path, rng, read_code, f"{label} reads {why.text}", data=why.data)
    check_semantics(ck, path, site, parsed, sid)


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
                "lsp.condition.never_equal",
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
                    "lsp.condition.ordering_on_non_numeric",
                    f"`{op}` on `{key}` (type {ftype}): ordering only makes sense for numbers; "
                    "when the field is unset the comparison fails at runtime",
                )
            if not isinstance(b, LiteralExpr):
                continue
            lit = b.range  # in the condition; its place in the file only when reported
            if ftype == "categorical" and enum and b.kind == "str" and op in ("==", "!="):
                if b.value in enum_bools:
                    ck.emit(
                        path,
                        site.file_range(lit.start, lit.end),
                        "lsp.condition.enum_value",
                        f"`enum_values` of `{key}` lists `{b.value}` unquoted, which YAML 1.1 "
                        f"(the engine's reader) turns into the boolean {enum_bools[b.value]}, so "
                        f"this comparison with the string {b.value!r} is always "
                        f"{'false' if op == '==' else 'true'}; quote it in memory.yml "
                        f"(`'{b.value}'`)",
                    )
                elif str(b.value) not in enum:
                    ck.emit(
                        path,
                        site.file_range(lit.start, lit.end),
                        "lsp.condition.enum_value",
                        f"{b.value!r} is not one of the `enum_values` of `{key}` "
                        f"({', '.join(enum)}), so this is always "
                        f"{'false' if op == '==' else 'true'}"
                        f"{did_you_mean(str(b.value), enum)}",
                        data=meant(str(b.value), enum),
                    )
            elif ftype == "bool" and b.kind == "str":
                ck.emit(
                    path,
                    site.file_range(lit.start, lit.end),
                    "lsp.condition.type_mismatch",
                    f"`{key}` is a bool but is compared with the string {b.value!r}; write "
                    "True or False (unquoted)",
                    data={"field_type": "bool"},
                )
            elif ftype in ("text", "categorical") and b.kind in ("int", "float", "bool"):
                ck.emit(
                    path,
                    site.file_range(lit.start, lit.end),
                    "lsp.condition.type_mismatch",
                    f"`{key}` holds text but is compared with {b.value!r}; a string never "
                    "equals a number or a boolean (quote the value)",
                    data={"field_type": "text"},
                )
            elif ftype in ("int", "float") and b.kind == "str":
                ck.emit(
                    path,
                    site.file_range(lit.start, lit.end),
                    "lsp.condition.type_mismatch",
                    f"`{key}` is a number but is compared with the string {b.value!r}; write "
                    "the number without quotes",
                    data={"field_type": "number"},
                )


# -- fixes ------------------------------------------------------------------------------------


def _compares(expr: Expr) -> Iterator[CompareExpr]:
    stack = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, CompareExpr):
            yield cur
            stack.extend([cur.left, *cur.comparators])
        elif isinstance(cur, NotExpr):
            stack.append(cur.operand)
        elif isinstance(cur, BoolOpExpr):
            stack.extend(cur.operands)


def compared_literal(
    fx: Fix, rng: TextRange
) -> tuple[LiteralExpr, MemoryRef, ConditionSite] | None:
    """The literal at exactly ``rng`` in a condition, and the reference it is compared
    with."""
    sites = {id(r.site): r.site for r in fx.p.index.references_in(fx.path) if r.site}
    for site in sites.values():
        parsed = site.parsed
        if parsed.tree is None:
            continue
        for cmp in _compares(parsed.tree):
            chain = [cmp.left, *cmp.comparators]
            for a, b in itertools.pairwise(chain):
                for x, y in ((a, b), (b, a)):
                    if (
                        isinstance(x, RefExpr)
                        and isinstance(y, LiteralExpr)
                        and site.file_range(y.range.start, y.range.end) == rng
                    ):
                        return y, x.ref, site
    return None


@own_data
def enum_value(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    hit = compared_literal(fx, d.range)
    if hit is None or hit[0].kind != "str":
        return
    lit, ref, site = hit
    f = fx.sem.declaration(fx.pf.skill_id, ref.namespace, ref.entry)
    if f is None:
        return
    values = [str(v) for v in f.enum_values]
    inner = site.file_range(lit.range.start + 1, lit.range.end - 1)
    if fx.text[inner.start : inner.end] != lit.value:
        return  # an escape or a prefix inside the literal: leave it to the author
    best = difflib.get_close_matches(str(lit.value), values, n=1, cutoff=0.6)
    ordered = best + [v for v in values if v not in best]
    for v in ordered[:12]:
        if any(c in v for c in "'\"\\\n"):
            continue
        edit = ws_edit(fx.path, TextEdit(inner, v))
        yield fx.action(f"Change to `{v}`", d, edit, preferred=v in best)
    add = add_enum_value(fx, f, ref, str(lit.value))
    if add is not None:
        where = "" if ref.namespace == "project" else f"skills/{ref.namespace}/"
        title = f"Add `{lit.value}` to enum_values of `{f.name}` ({where}memory.yml)"
        yield fx.action(title, d, add)


def add_enum_value(fx: Fix, f: MemoryField, ref: MemoryRef, value: str) -> WorkspaceEdit | None:
    """``value`` appended to ``f``'s ``enum_values`` list, written like its items (flow
    or block list, the quotes the items use)."""
    if ref.namespace == "project":
        pf = fx.p.file_of_kind(FileKind.PROJECT_MEMORY)
    else:
        sk = fx.p.skill(ref.namespace)
        pf = sk.memory if sk is not None else None
    seq = f.attrs.get("enum_values")
    if pf is None or not pf.source.analyzable or not isinstance(seq, YSeq) or not value:
        return None
    text = pf.text
    items = [i for i in seq.items if isinstance(i, YScalar)]
    if len(items) != len(seq.items):
        return None
    quotes = [i.style for i in items if i.style in ("'", '"')]
    if quotes and "\n" not in value:
        q = quotes[-1] or "'"
        written = q + (value.replace("'", "''") if q == "'" else json.dumps(value)[1:-1]) + q
    else:
        written = yaml_scalar(value)
    if is_flow(text, seq):
        if not items:
            close = text.rfind("]", seq.range.start, seq.range.end)
            if close < 0:
                return None
            return ws_edit(pf.path, TextEdit(TextRange(close, close), written))
        end = items[-1].range.end
        return ws_edit(pf.path, TextEdit(TextRange(end, end), f", {written}"))
    if not items:
        return None
    last = items[-1]
    dash = text.rfind("-", 0, last.range.start)
    if dash < 0 or text[line_start(text, dash) : dash].strip():
        return None
    pad = " " * column(text, dash)
    line = f"{pad}- {written}"
    return ws_edit(pf.path, insert_lines(text, content_end(text, last), [line]))


@own_data
def literal_type(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    hit = compared_literal(fx, d.range)
    if hit is None:
        return
    lit = hit[0]
    if lit.kind != "str" or not isinstance(lit.value, str):
        return
    field_type = (d.data or {}).get("field_type")
    if field_type == "bool":
        low = lit.value.strip().lower()
        new = {"true": "True", "yes": "True", "1": "True"}.get(low)
        new = new or {"false": "False", "no": "False", "0": "False"}.get(low)
    else:
        number = literal_of_text(lit.value)
        ok = isinstance(number, (int, float)) and not isinstance(number, bool)
        new = str(number) if ok and field_type == "number" else None
    if new is not None:
        edit = ws_edit(fx.path, TextEdit(d.range, new))
        yield fx.action(f"Change to `{new}`", d, edit, preferred=True)


FIXES: Fixes = {
    "mantle.validation.prose.unknown_memory_key": DECLARE_FIELD,
    "mantle.validation.response.unknown_memory_key": DECLARE_FIELD,
    "lsp.condition.unknown_memory_key": DECLARE_FIELD,
    "lsp.condition.enum_value": (enum_value,),
    "lsp.condition.type_mismatch": (literal_type,),
}
