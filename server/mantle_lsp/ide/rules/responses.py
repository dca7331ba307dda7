"""responses.yml: placeholders name readable fields, ``set:`` buttons write fields the
delivering skill may write with values the field accepts, and button sources are tools
the delivering skill may run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...model.layout import FileKind as K
from ...model.project import ParsedFile, Skill
from ...model.semantics import Unwritable
from ...syntax.memory_yml import MemoryField
from ...syntax.responses_yml import ResponsesDoc
from ...syntax.yaml_tree import YScalar
from .base import Checker, did_you_mean, meant, per_project, per_skill, rule
from .fix import DECLARE_FIELD, Fixes

CODES = (
    "lsp.responses.unknown_placeholder",
    "mantle.validation.response.unknown_memory_key",
    "mantle.validation.response.not_writable_memory_key",
    "mantle.validation.response.invalid_set_memory_value",
    "mantle.validation.response.unbound_button_source",
    "mantle.validation.response.mcp_button_source_tool",
    "mantle.validation.response.unknown_button_source_tool",
    "mantle.validation.response.confirming_button_source_tool",
)


_READS = (K.SKILL_MD, K.SKILL_MEMORY, K.PROJECT_MEMORY, K.SKILL_TOOLS, K.SHARED_TOOLS)


@rule(
    codes=CODES,
    scopes=(
        per_skill(reports_on=(K.SKILL_RESPONSES,), reads=(K.SKILL_RESPONSES, *_READS)),
        per_project(reports_on=(K.PROJECT_RESPONSES,), reads=(K.PROJECT_RESPONSES, *_READS)),
    ),
)
def responses(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """A responses.yml — a skill's, or the project-root one, which any skill may deliver:
    placeholders, ``set:`` buttons and button sources."""
    pf = sk.responses if sk is not None else ck.p.project_responses
    if pf is not None and isinstance(pf.doc, ResponsesDoc):
        check_responses(ck, pf, pf.doc, sid)


def check_responses(ck: Checker, pf: ParsedFile, doc: ResponsesDoc, sid: str | None) -> None:
    for ph in doc.placeholders:
        if ph.kind == "qualified" and ph.namespace is not None:
            why = ck.unreadable(sid, ph.namespace, ph.entry)
            if why is not None:
                ck.emit(
                    pf.path,
                    ph.range,
                    "lsp.responses.unknown_placeholder",
                    f"`{{{ph.text}}}` is sent literally: {why.text}",
                    data=why.data,
                )
        elif ph.kind == "bare" and not ck.sem.bare_resolves(sid, ph.entry):
            where = f"skill `{sid}`" if sid else "any skill"
            ck.emit(
                pf.path,
                ph.range,
                "lsp.responses.unknown_placeholder",
                f"`{{{ph.entry}}}` is sent literally: neither {where} nor the "
                f"project declares a field `{ph.entry}`",
            )
    for r in doc.responses:
        for v in r.variants:
            for b in v.buttons:
                if b.set_payload is not None:
                    check_set_payload(ck, pf.path, sid, r.name, b.set_payload)
    check_button_sources(ck, pf.path, doc, sid)


def check_set_payload(ck: Checker, path: Path, sid: str | None, response: str, sp: Any) -> None:
    why = ck.unreadable(sid, sp.namespace, sp.entry)
    if why is not None:
        ck.emit(
            path,
            sp.range,
            "mantle.validation.response.unknown_memory_key",
            f"button `set:` target {why.text}",
            data=why.data,
        )
        return
    refused = ck.sem.button_unwritable(sid, response, sp.namespace, sp.entry)
    if refused is not None:
        ck.emit(
            path,
            sp.range,
            "mantle.validation.response.not_writable_memory_key",
            f"a button tap cannot write `{sp.namespace}.{sp.entry}`: {_refusal(refused)}",
        )
        return
    fld: MemoryField | None
    if sp.namespace == "project":
        fld = ck.p.project_field(sp.entry)
    else:
        sk = ck.p.skill(sp.namespace)
        fld = sk.field(sp.entry) if sk else None
    if fld is None:
        return
    problem = _coerce_problem(fld, sp.value)
    if problem:
        ck.emit(
            path,
            sp.value_range,
            "mantle.validation.response.invalid_set_memory_value",
            f"`{sp.value}` is not a valid value for `{sp.namespace}.{sp.entry}`: {problem}",
            data=(
                meant(sp.value, [str(e) for e in fld.enum_values])
                if fld.type == "categorical"
                else None
            ),
        )


def _refusal(u: Unwritable) -> str:
    """Why a button may not write a field (after "a button tap cannot write `x`: ")."""
    if u.kind != "writable_by":
        who = f"skill `{u.sid}`" if u.sid else "the skills that deliver this response"
        return f"{who} may write only its own fields and project fields"
    if not u.refused:
        why = "no skill delivers this response"
    elif u.sid is not None:
        why = f"skill `{u.sid}` is not listed"
    else:
        why = f"it is delivered by {', '.join(f'`{w}`' for w in u.refused)}, not listed"
    return f"only {', '.join(u.allowed)} may write it (`writable_by`) and {why}"


def _coerce_problem(f: MemoryField, value: str) -> str | None:
    t = f.type
    v = value.strip()
    if t == "bool":
        if v.lower() in ("true", "yes", "1", "false", "no", "0"):
            return None
        return "a `bool` field takes true/false, yes/no or 1/0"
    if t == "int":
        try:
            int(v)
        except ValueError:
            return "an `int` field takes a whole number"
        return None
    if t == "float":
        try:
            float(v)
        except ValueError:
            return "a `float` field takes a number"
        return None
    if t == "categorical" and f.enum_values:
        allowed = [str(e) for e in f.enum_values]
        if value in allowed:
            return None
        return f"allowed values are {', '.join(allowed)}{did_you_mean(value, allowed)}"
    if t in ("list", "json"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return f"a `{t}` field takes JSON text"
        if t == "list" and not isinstance(parsed, list):
            return "a `list` field takes a JSON array"
    return None


def check_button_sources(ck: Checker, path: Path, doc: ResponsesDoc, sid: str | None) -> None:
    for r in doc.responses:
        for v in r.variants:
            if v.source is None:
                continue
            observers = [sid] if sid is not None else sorted(ck.sem.response_users(r.name))
            if sid is None and not observers:
                ck.emit(
                    path,
                    v.source.range,
                    "mantle.validation.response.unbound_button_source",
                    f"response `{r.name}` takes its buttons from `{v.source.value}`, but no "
                    "skill delivers it, so there is no skill whose tools could run",
                )
                continue
            for obs in observers:
                _check_source(ck, path, v.source, obs)


def _check_source(ck: Checker, path: Path, node: YScalar, sid: str) -> None:
    name = node.value
    sk = ck.p.skill(sid)
    if sk is None:
        return
    doc = sk.doc
    mcp = {i.value.rsplit(":", 1)[1] for i in (doc.import_tools if doc else ()) if ":" in i.value}
    if name in mcp:
        ck.emit(
            path,
            node.range,
            "mantle.validation.response.mcp_button_source_tool",
            f"`{name}` is an MCP tool; button sources must be local `@tool`s that call "
            "`context.set_buttons`",
        )
        return
    visible = ck.sem.local_tools(sk) | (ck.sem.visible_tools(sk, doc) & ck.sem.shared_tools())
    if name not in visible and not ck.sem.tool_visible(sk, None, name):
        ck.emit(
            path,
            node.range,
            "mantle.validation.response.unknown_button_source_tool",
            f"`{name}` is not a tool of skill `{sid}` (nor a shared tool it uses)",
        )
        return
    if doc is not None:
        for gt in [*doc.gate_tools, *(g for b in doc.blocks for g in b.tools)]:
            if gt.name == name and gt.confirmation_enabled:
                ck.emit(
                    path,
                    node.range,
                    "mantle.validation.response.confirming_button_source_tool",
                    f"`{name}` requires confirmation in skill `{sid}`, so it cannot build buttons",
                )
                return


# -- fixes ------------------------------------------------------------------------------------

FIXES: Fixes = {
    "mantle.validation.response.unknown_memory_key": DECLARE_FIELD,
    "lsp.responses.unknown_placeholder": DECLARE_FIELD,
}
