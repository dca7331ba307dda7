"""Hover: a compact Markdown card for the symbol under the cursor (docs/features/navigation.md,
"Hover").

Memory fields, skills (also when hovering the namespace part of ``session.card.x``),
ordered blocks, steps, responses, tools, preconditions, MCP servers and model groups.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.defaults import DEFAULT_SKILLS, FRAMEWORK_TOOLS, DefaultField, DefaultSkill
from ..model.layout import FileKind
from ..model.project import Project, Skill
from ..model.semantics import HOOK_PREFIX, Semantics, in_order
from ..model.symbols import Reference, Symbol, SymbolKey, qualified_name
from ..syntax.config_yml import Precondition
from ..syntax.memory_yml import MemoryField
from ..syntax.responses_yml import Response, Variant
from ..syntax.skill_md import Block, SkillDoc, Step
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolDef, ToolModule
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq
from .completion import FRONTMATTER_DOCS, tool_signature_label
from .locate import target_at
from .navigation import line_of, relative, where
from .semantic_tokens import classify_condition

PREVIEW = 60  # characters of a condition or step detail shown in a hover
DESCRIPTION = 400
MAX_LIST = 6  # steps, … listed before "and N more"
MAX_PLACES = 40  # places a field is written or read, listed before "and N more"
FOLD = 120  # a response text longer than this (or on several lines) is folded


@dataclass(frozen=True)
class Hover:
    range: TextRange
    markdown: str


def hover(project: Project, path: Path, offset: int, html: bool = False) -> Hover | None:
    """The card for what is at ``offset``. ``html``: the client renders HTML in hovers
    (then a long response text is folded in a ``<details>``)."""
    t = target_at(project, path, offset)
    if t is None:
        pf = project.files.get(path)
        if pf is not None and pf.kind is FileKind.EVAL_SCENARIO:
            from . import eval_files  # only projects with scenarios get here

            found = eval_files.hover(project, path, offset)
            return Hover(found.range, found.markdown) if found is not None else None
        return _enum_value(project, path, offset) or _frontmatter_key(project, path, offset)
    md = describe(project, t.key, html)
    if md is None:
        return None
    return Hover(t.range, md)


def describe(project: Project, key: SymbolKey, html: bool = False) -> str | None:
    """The Markdown hover text for ``key`` (None for kinds without a hover)."""
    kind = key[0]
    lines: list[str] | None = None
    if kind == "field":
        lines = _field(project, key)
    elif kind == "skill":
        lines = _skill(project, key[1])
    elif kind == "block":
        lines = _block(project, key)
    elif kind == "step":
        lines = _step(project, key)
    elif kind == "response":
        lines = _response(project, key[1], html)
    elif kind == "tool":
        lines = _tool(project, key)
    elif kind == "precondition":
        lines = _precondition(project, key[1])
    elif kind in ("mcp", "model_group"):
        lines = _config_entry(project, key)
    if lines is None:
        return None
    return "\n\n".join(line for line in lines if line)


# -- helpers --------------------------------------------------------------------------------


def _code(s: object) -> str:
    text = str(s)
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def _preview(text: str, limit: int = PREVIEW) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def _link(project: Project, path: Path | None, offset: int) -> str:
    """``rel/path:line`` as a Markdown link that opens the place (``file:///…#L<line>``)."""
    if path is None:
        return "bundled with the engine"
    at = where(project, path, offset)
    line = line_of(project, path, offset)
    target = path.as_uri() + (f"#L{line}" if line else "")
    return f"[{at}]({target})"


def _places(items: list[str]) -> str:
    """Every place, one per line (a very long list ends with how many more there are)."""
    shown = items[:MAX_PLACES]
    rows = [f"- {item}" for item in shown]
    if len(items) > MAX_PLACES:
        rows.append(f"- … and {len(items) - MAX_PLACES} more (Find All References lists them)")
    return "\n".join(rows)


def _listing(items: list[str]) -> str:
    if len(items) <= MAX_LIST:
        return ", ".join(items)
    return ", ".join(items[:MAX_LIST]) + f", and {len(items) - MAX_LIST} more"


def _defs(project: Project, key: SymbolKey) -> list[Symbol]:
    return list(project.index.lookup(key))


def _real_refs(project: Project, key: SymbolKey) -> list[Reference]:
    return [r for r in project.index.references_to(key) if not r.soft]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _scalar_text(node: YNode | None) -> str | None:
    if isinstance(node, YScalar) and node.value is not None:
        return str(node.value)
    return None


# -- memory fields ----------------------------------------------------------------------------


def _field(project: Project, key: SymbolKey) -> list[str]:
    ns, entry = key[1], key[2]
    name = qualified_name(key)
    if ns == "system":
        return [f"**{_code(name)}** — engine-reserved `system` field; authors cannot read it"]
    syms = _defs(project, key)
    for s in syms:
        if isinstance(s.obj, DefaultField):
            return _default_field(ns, s.obj)
    fields = [s for s in syms if isinstance(s.obj, MemoryField)]
    if not fields:
        owner = "project memory" if ns == "project" else f"skill {_code(ns)}"
        return [f"**{_code(name)}** — not declared in {owner}"]
    decl = fields[-1]
    for s in fields:  # the effective declaration: private wins over public
        if isinstance(s.obj, MemoryField) and s.obj.scope == "private":
            decl = s
    f: MemoryField = decl.obj
    if ns == "project":
        scope = "project field (lives for the whole session)"
    else:
        scope = f"{f.scope} field of skill {_code(ns)} (reset when the skill starts a new run)"
    out = [f"**{_code(name)}** — {scope}"]
    type_line = f"type {_code(f.type)}"
    if f.enum_values:
        type_line += " · values " + ", ".join(_code(v) for v in f.enum_values)
    out.append(type_line)
    refs = in_order(project.index.references_to(key))
    flags = []
    if f.llm_settable:
        flags.append("llm_settable")
    if any(r.form == "collect" for r in refs):
        flags.append("collect-owned")
    if f.pii:
        flags.append("pii")
    if f.seed:
        flags.append("seed")
    if f.value("mutable") is True:
        flags.append("mutable")
    wb = f.value("writable_by")
    if isinstance(wb, list) and wb:
        flags.append("writable_by " + ", ".join(_code(x) for x in wb))
    if f.initial_value is not None:
        flags.append(f"initial_value {_code(f.initial_value)}")
    if flags:
        out.append(" · ".join(flags))
    if f.description:
        out.append(_preview(f.description, DESCRIPTION))
    places = [_link(project, s.path, s.range.start) for s in fields if s.path and s.range]
    out.append("Declared in " + ", ".join(places))
    sem = Semantics(project)
    writers = list(dict.fromkeys(_writer(project, r) for r in sem.writers(ns, entry)))
    if writers:
        out.append(f"Written by {_plural(len(writers), 'place')}:\n" + _places(writers))
    reads = sem.readers(ns, entry)
    soft = [r for r in refs if r.soft]
    readers = list(dict.fromkeys(_reader(project, r) for r in reads))
    read_line = f"Read in {_plural(len(readers), 'place')}"
    if soft:
        read_line += f" (and mentioned in {_plural(len(soft), 'backticked name')})"
    out.append(read_line + (":\n" + _places(readers) if readers else ""))
    hook = sem.validation_hook(ns, entry)
    if hook is not None:
        out.append(f"Validated by the hook {_code(hook[2])}")
    return out


def _default_field(ns: str, df: DefaultField) -> list[str]:
    return [
        f"**{_code(f'{ns}.{df.name}')}** — public field of the bundled skill {_code(ns)}",
        f"type {_code(df.type)}",
        df.description,
        "Bundled with the engine",
    ]


_WRITER_LABELS = {
    "collect": "collect step",
    "set_memory": "set_memory step",
    "set_payload": "set: button",
}


def _writer(project: Project, ref: Reference) -> str:
    at = _link(project, ref.path, ref.range.start)
    if ref.form == "tool_set":
        tool = _enclosing_tool(project, ref.path, ref.range)
        if tool is not None:
            return f"tool {_code(tool)} ({at})"
        return f"tool code ({at})"
    return f"{_WRITER_LABELS.get(ref.form, ref.form)} ({at})"


_READER_LABELS = {
    "condition": "condition",
    "memory_token": "`@memory`",
    "placeholder": "placeholder",
    "bare_placeholder": "placeholder",
    "execute_param": "`execute_tool` parameter",
}


def _reader(project: Project, ref: Reference) -> str:
    at = _link(project, ref.path, ref.range.start)
    if ref.form == "tool_get":
        tool = _enclosing_tool(project, ref.path, ref.range)
        return f"tool {_code(tool)} ({at})" if tool is not None else f"tool code ({at})"
    return f"{_READER_LABELS.get(ref.form, ref.form.replace('_', ' '))} ({at})"


def _enclosing_tool(project: Project, path: Path, rng: TextRange) -> str | None:
    pf = project.files.get(path)
    if pf is None or not isinstance(pf.doc, ToolModule):
        return None
    for t in pf.doc.tools:
        if t.def_range.start <= rng.start and rng.end <= t.def_range.end:
            return t.name
    return None


# -- skills ----------------------------------------------------------------------------------


def _skill(project: Project, sid: str) -> list[str]:
    sk = project.skill(sid)
    if sk is None:
        dflt = DEFAULT_SKILLS.get(sid)
        if dflt is not None:
            return _default_skill(dflt)
        return [f"**skill {_code(sid)}** — no such skill"]
    doc = sk.doc
    kind = "no body"
    if doc is not None:
        if doc.has_prose and doc.blocks:
            kind = "hybrid (prose and ordered blocks)"
        elif doc.blocks:
            kind = "blocks-only"
        elif doc.has_prose:
            kind = "prose"
    title = f"**skill {_code(sid)}** — {kind}"
    if sk.is_default_override:
        title += " · overrides the bundled default"
    out = [title]
    if doc is None:
        out.append("no skill.md")
        return out
    if doc.description:
        out.append(_preview(doc.description, DESCRIPTION))
    flags = [k for k in ("hidden", "disabled") if doc.fm_bool(k)]
    for rk in ("is_default", "engine_managed"):
        v = doc.routing_flag(rk)
        if v is not None:
            flags.append(f"routing.{rk}: {str(v).lower()}")
    if flags:
        out.append(" · ".join(flags))
    pre = doc.fm_str("precondition")
    if pre and pre.strip():
        out.append(f"precondition {_code(pre.strip())}")
    counts = [_plural(len(sk.field_names()), "memory field")]
    if doc.blocks:
        counts.append(_plural(len(doc.blocks), "block"))
    tools = sorted(Semantics(project).local_tools(sk))
    if tools:
        counts.append(_plural(len(tools), "tool"))
    out.append(" · ".join(counts))
    if sk.skill_md is not None:
        rel = relative(project, sk.skill_md.path)
        out.append(f"[{rel}]({sk.skill_md.path.as_uri()})")
    return out


def _default_skill(d: DefaultSkill) -> list[str]:
    out = [f"**skill {_code(d.id)}** — bundled default skill", d.summary]
    if d.public_fields:
        out.append("public fields " + ", ".join(_code(f.name) for f in d.public_fields))
    return out


def _skill_doc_of(project: Project, sid: str) -> tuple[Skill | None, Any]:
    sk = project.skill(sid)
    return sk, (sk.doc if sk is not None else None)


# -- blocks and steps ------------------------------------------------------------------------


def _block(project: Project, key: SymbolKey) -> list[str]:
    sid, bid = key[1], key[2]
    syms = [s for s in _defs(project, key) if isinstance(s.obj, Block)]
    if not syms:
        return [f"**block {_code(bid)}** — no such block in skill {_code(sid)}"]
    blk: Block = syms[0].obj
    out = [f"**ordered block {_code(bid)}** of skill {_code(sid)}"]
    steps = [f"{_code(st.id or f'#{st.index + 1}')} ({st.kind or '?'})" for st in blk.steps]
    if steps:
        out.append(f"{_plural(len(steps), 'step')}: " + _listing(steps))
    if blk.tools:
        out.append("tools " + ", ".join(_code(t.name) for t in blk.tools))
    cw = _scalar_text(blk.complete_when)
    if cw:
        out.append(f"complete_when {_code(_preview(cw))}")
    callers = in_order([r for r in _real_refs(project, key) if r.form in ("call", "link")])
    if callers:
        rows = [f"{r.form} ({_link(project, r.path, r.range.start)})" for r in callers]
        out.append(f"called from {_plural(len(callers), 'step')}:\n" + _places(rows))
    s = syms[0]
    if s.path is not None and s.range is not None:
        out.append(_link(project, s.path, s.range.start))
    return out


def _step(project: Project, key: SymbolKey) -> list[str]:
    sid, bid, step_id = key[1], key[2], key[3]
    syms = [s for s in _defs(project, key) if isinstance(s.obj, Step)]
    if not syms:
        return [f"**step {_code(step_id)}** — no such step in block {_code(f'{sid}:{bid}')}"]
    st: Step = syms[0].obj
    out = [f"**step {_code(step_id)}** ({st.kind or 'unknown kind'}) in block {_code(bid)}"]
    detail = _step_detail(st)
    if detail:
        out.append(detail)
    targets = [t.value for t in st.next_targets()]
    if targets:
        out.append("next " + ", ".join(_code(t) for t in dict.fromkeys(targets)))
    elif st.kind != "link":
        follower = _following_step(project, sid, bid, st)
        out.append(f"next (implicit) {_code(follower)}")
    s = syms[0]
    if s.path is not None and s.range is not None:
        out.append(_link(project, s.path, s.range.start))
    return out


def _step_detail(st: Step) -> str | None:
    for k in ("collect", "execute_tool", "action", "utter", "call", "link"):
        v = st.str_field(k)
        if v:
            return f"{k} {_code(v[0])}"
    return None


def _following_step(project: Project, sid: str, bid: str, st: Step) -> str:
    _, doc = _skill_doc_of(project, sid)
    blk = doc.block(bid) if doc is not None else None
    if blk is not None:
        for i, other in enumerate(blk.steps):
            if other is st and i + 1 < len(blk.steps):
                return blk.steps[i + 1].id or f"#{i + 2}"
    return "END"


# -- responses -------------------------------------------------------------------------------


def _response_rank(project: Project, sym: Symbol) -> tuple[int, str]:
    """Precedence of a defining place (docs/language/responses.md#registry-and-precedence): bundled
    < skill files in
    folder order < the root file."""
    if sym.path is None:
        return (0, "")
    pf = project.files.get(sym.path)
    if pf is not None and pf.kind is FileKind.PROJECT_RESPONSES:
        return (2, "")
    return (1, (pf.skill_id or "") if pf is not None else "")


def _response(project: Project, name: str, html: bool = False) -> list[str]:
    syms = _defs(project, ("response", name))
    if not syms:
        return [f"**response {_code(name)}** — not defined"]
    ordered = sorted(enumerate(syms), key=lambda p: (_response_rank(project, p[1]), p[0]))
    winner = ordered[-1][1]
    out = [f"**response {_code(name)}**"]
    multi = len(syms) > 1
    for _, s in reversed(ordered):
        tag = " — **wins**" if multi and s is winner else (" — overridden" if multi else "")
        if s.path is None:
            out.append(f"bundled with the engine{tag}")
            continue
        at = _link(project, s.path, s.range.start if s.range else 0)
        out.append(f"{at}{tag}")
        if isinstance(s.obj, Response):
            out.extend(_variant(v, len(s.obj.variants), html) for v in s.obj.variants)
    return out


def _variant(v: Variant, count: int, html: bool) -> str:
    """One variant: its conditions and buttons, then its whole text (folded in a
    ``<details>`` when it is long and the client renders HTML)."""
    head = f"variant {v.index + 1}" if count > 1 else "text"
    cond = _scalar_text(v.condition)
    if cond:
        head += f" — if {_code(' '.join(cond.split()))}"
    if v.buttons:
        titles = [_scalar_text(b.title) for b in v.buttons]
        head += f" · {_plural(len(v.buttons), 'button')}"
        if all(titles):
            head += ": " + ", ".join(_code(t) for t in titles)
    if v.source is not None:
        head += f" · buttons from tool {_code(v.source.value)}"
    if v.text is None:
        return f"{head}: (no text)"
    body = _quoted(v.text)
    if not html or (len(v.text) <= FOLD and "\n" not in v.text.strip()):
        return f"{head}:\n{body}"
    first = _preview(v.text)
    return f"{head}:\n<details><summary>{_escape(first)}</summary>\n\n{body}\n\n</details>"


def _quoted(text: str) -> str:
    """A text as a Markdown block quote, its lines kept."""
    lines = text.strip("\n").split("\n") or [""]
    return "\n".join(f"> {line.rstrip()}" if line.strip() else ">" for line in lines)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- tools -----------------------------------------------------------------------------------


def _tool(project: Project, key: SymbolKey) -> list[str]:
    sid, name = key[1], key[2]
    syms = [s for s in _defs(project, key) if isinstance(s.obj, ToolDef)]
    if not syms:
        if name in FRAMEWORK_TOOLS:
            return [f"**tool {_code(name)}** — framework tool", FRAMEWORK_TOOLS[name]]
        if name == "record_handoff":
            return [f"**tool {_code(name)}** — engine tool, only as an `execute_tool` step"]
        return [f"**tool {_code(name)}** — not defined"]
    s = syms[-1]
    t: ToolDef = s.obj
    scope = f"tool of skill {_code(sid)}" if sid else "shared tool (`import_tools`)"
    if name.startswith(HOOK_PREFIX) and sid:
        entry = name[len(HOOK_PREFIX) :]
        scope = f"memory validation hook for {_code(f'{sid}.{entry}')}"
    out = [f"**tool {_code(name)}** — {scope}"]
    if t.kind == "possible":
        out[0] += " (possibly a tool: built by a factory or imported)"
    if t.description:
        out.append(_preview(t.description, DESCRIPTION))
    sig = tool_signature_label(t) if t.signature else f"{name}({', '.join(t.params)})"
    out.append(f"{'async ' if t.is_async else ''}{_code(sig.replace(t.name, name, 1))}")
    if s.path is not None and s.range is not None:
        out.append(_link(project, s.path, s.range.start))
    return out


# -- agent.yml / integrations.yml ------------------------------------------------------------


def _precondition(project: Project, name: str) -> list[str]:
    syms = [s for s in _defs(project, ("precondition", name)) if isinstance(s.obj, Precondition)]
    if not syms:
        return [f"**precondition {_code(name)}** — not bound in agent.yml"]
    pre: Precondition = syms[-1].obj
    out = [f"**precondition {_code(name)}**"]
    sw = _scalar_text(pre.satisfied_when)
    if sw:
        out.append(f"satisfied_when {_code(_preview(sw, DESCRIPTION))}")
    rw = _scalar_text(pre.resolve_with)
    if rw:
        out.append(f"resolve_with skill {_code(rw)}")
    users = sorted({r.skill for r in _real_refs(project, ("precondition", name)) if r.skill})
    if users:
        out.append("required by " + _listing([_code(u) for u in users]))
    s = syms[-1]
    if s.path is not None and s.range is not None:
        out.append(_link(project, s.path, s.range.start))
    return out


def _config_entry(project: Project, key: SymbolKey) -> list[str]:
    label = "MCP server" if key[0] == "mcp" else "model group"
    syms = _defs(project, key)
    out = [f"**{label} {_code(key[1])}**"]
    if not syms:
        out[0] += " — not declared in integrations.yml"
        return out
    s = syms[-1]
    if s.path is not None and s.range is not None:
        out.append(_link(project, s.path, s.range.start))
    return out


# -- enum values in conditions ----------------------------------------------------------------


def _enum_value(project: Project, path: Path, offset: int) -> Hover | None:
    """A string compared with a categorical field (``session.card.reason == 'lost'``): the
    field's values, and whether this one is among them."""
    pf = project.files.get(path)
    sites = getattr(pf.doc, "conditions", None) if pf is not None else None
    if pf is None or not sites:
        return None
    for site in sites:
        if not (site.anchor.start <= offset <= site.anchor.end):
            continue
        idx = site.map.index_of(offset)
        if idx is None:
            continue
        toks = classify_condition(site.text)
        at = next((i for i, t in enumerate(toks) if t[2] == "string" and t[0] <= idx < t[1]), None)
        if at is None or at < 4:
            continue
        op, entry_t, ns_t = toks[at - 1], toks[at - 2], toks[at - 3]
        if site.text[op[0] : op[1]] not in ("==", "!=") or entry_t[2] != "property":
            continue
        if ns_t[2] != "namespace":
            continue
        ns, entry = site.text[ns_t[0] : ns_t[1]], site.text[entry_t[0] : entry_t[1]]
        raw = site.text[toks[at][0] : toks[at][1]]
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            continue
        if not isinstance(value, str):
            continue
        ft = Semantics(project).field_type(pf.skill_id, ns, entry)
        if ft is None or not ft.enum_values:
            continue
        name = f"{ns}.{entry}"
        out = [f"**{_code(raw)}** — a value of {_code(name)} ({ft.type})"]
        out.append("values " + ", ".join(_code(v) for v in ft.enum_values))
        if value not in ft.enum_values:
            out.append(f"{_code(value)} is not one of them: the comparison never holds")
        return Hover(site.file_range(toks[at][0], toks[at][1]), "\n\n".join(out))
    return None


# -- frontmatter keys ---------------------------------------------------------------------------

_NESTED_DOCS = {
    "requires": "A condition: while it does not hold, the tool is hidden from the model "
    "(and an `execute_tool` step of it waits).",
    "requires_confirmation": "Ask the user before the tool runs: `enabled`, "
    "`utter_for_confirmation`, `utter_on_user_denial`.",
    "on_success": "A response said after the tool succeeds.",
    "on_failure": "A response said after the tool fails.",
    "enabled": "`true`: the confirmation is asked.",
    "utter_for_confirmation": "The response that asks for the confirmation.",
    "utter_on_user_denial": "The response said when the user declines.",
    "on": "`activate`: say the response when the skill starts.",
    "when": "A condition: say the response while it holds.",
    "is_default": "`true`: the skill the router falls back to.",
    "engine_managed": "`true`: the engine starts the skill itself; routing never offers it.",
    "condition": "A condition: the skill is complete when it holds.",
    "criteria": "Criteria the model checks to decide that the skill is complete.",
    "instructions": "How to answer from the knowledge base.",
}
_NESTED_PARENTS = frozenset(
    {"tool_constraints", "utter", "routing", "complete_when", "knowledge_answering"}
)


def _frontmatter_key(project: Project, path: Path, offset: int) -> Hover | None:
    """What a frontmatter key of skill.md means (and the keys of its nested mappings)."""
    pf = project.files.get(path)
    doc = pf.doc if pf is not None else None
    if not isinstance(doc, SkillDoc) or doc.frontmatter is None:
        return None
    found = _key_at(doc.frontmatter, offset, (), set())
    if found is None:
        return None
    keys, node = found
    if len(keys) == 1:
        text = FRONTMATTER_DOCS.get(keys[0])
        where_ = "frontmatter key"
    elif keys[0] in _NESTED_PARENTS:
        text = _NESTED_DOCS.get(keys[-1])
        where_ = f"key of `{keys[0]}`"
    else:
        text = None
    if text is None:
        return None
    return Hover(node.range, f"**{_code(keys[-1])}** — {where_}\n\n{text}")


def _key_at(
    node: YNode | None, offset: int, keys: tuple[str, ...], seen: set[int]
) -> tuple[tuple[str, ...], YScalar] | None:
    """The mapping key at ``offset`` and the keys above it; descends only into nodes that
    contain the offset, each once (YAML aliases share nodes: no alias is expanded)."""
    if node is None or id(node) in seen or len(keys) > 6:
        return None
    seen.add(id(node))
    if isinstance(node, YMap):
        for k, v in node.pairs():
            name = k.value if isinstance(k.value, str) else None
            if name is None:
                continue
            if k.range.length and k.range.start <= offset <= k.range.end:
                return (*keys, name), k
            if v.range.start <= offset <= v.range.end:
                inner = _key_at(v, offset, (*keys, name), seen)
                if inner is not None:
                    return inner
    elif isinstance(node, YSeq):
        for item in node.items:
            if item.range.start <= offset <= item.range.end:
                inner = _key_at(item, offset, keys, seen)
                if inner is not None:
                    return inner
    return None
