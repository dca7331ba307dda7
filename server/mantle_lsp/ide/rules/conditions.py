"""Conditions, wherever they are written: syntax, readability of every key they read, and
comparisons that can never be true (type mismatches, values outside ``enum_values``,
ordering on text). Each condition site reports under the engine's code for that site where
the engine checks it, else under ``lsp.condition.*``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...model.layout import FileKind as K
from ...model.project import Skill
from ...syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    Expr,
    LiteralExpr,
    NotExpr,
    ParsedCondition,
    RefExpr,
)
from ...syntax.responses_yml import ResponsesDoc
from ...syntax.sites import SITE_LABELS, ConditionSite
from .base import Checker, did_you_mean, meant, per_project, per_skill, rule

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
