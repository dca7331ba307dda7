"""The symbol table and every reference occurrence of a project.

Symbols are keyed by tuples:

* ``("skill", id)`` — a skill (folder) or bundled default skill
* ``("field", ns, entry)`` — a memory field; ``ns`` is a skill id or ``project``
* ``("block", skill, block)`` and ``("step", skill, block, step)``
* ``("response", name)`` — responses share one global namespace
* ``("tool", skill, name)`` for skill-local tools, ``("tool", "", name)`` for shared ones
* ``("precondition", name)``, ``("mcp", server)``, ``("model_group", id)``

:func:`qualified_name` renders a key the way authors write it (``card_replace.reason``,
``project.authenticated``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..syntax.conditions import parse_condition
from ..syntax.memory_yml import MemoryField
from ..syntax.sites import ConditionSite
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YScalar
from .defaults import DEFAULT_SKILLS
from .layout import FileKind

if TYPE_CHECKING:
    from .project import ParsedFile, Project

SymbolKey = tuple[str, ...]


@dataclass(eq=False)
class Symbol:
    key: SymbolKey
    path: Path | None  # None for symbols bundled with the engine
    range: TextRange | None
    obj: Any = None  # the parsed object (MemoryField, Block, Step, Response, ToolDef, …)


@dataclass(eq=False)
class Reference:
    key: SymbolKey
    path: Path
    range: TextRange
    form: str  # how it is written: condition, memory_token, placeholder, collect, …
    skill: str | None = None  # the skill whose context resolves it
    site: ConditionSite | None = None
    soft: bool = False  # an inferred mention (e.g. backticked name), not a real reference


def qualified_name(key: SymbolKey) -> str:
    kind = key[0]
    if kind == "field":
        return f"{key[1]}.{key[2]}"
    if kind == "block":
        return f"{key[1]}:{key[2]}"
    if kind == "step":
        return f"{key[1]}:{key[2]}.{key[3]}"
    if kind == "tool":
        return f"{key[1]}/{key[2]}" if key[1] else key[2]
    return key[-1]


class Index:
    def __init__(self) -> None:
        self.symbols: dict[SymbolKey, list[Symbol]] = defaultdict(list)
        self.references: list[Reference] = []
        self._by_key: dict[SymbolKey, list[Reference]] | None = None
        self._exports: dict[Path, set[SymbolKey]] = defaultdict(set)

    def define(self, sym: Symbol) -> None:
        self.symbols[sym.key].append(sym)
        if sym.path is not None:
            self._exports[sym.path].add(sym.key)

    def refer(self, ref: Reference) -> None:
        self.references.append(ref)
        self._by_key = None

    def lookup(self, key: SymbolKey) -> list[Symbol]:
        return self.symbols.get(key, [])

    def references_to(self, key: SymbolKey) -> list[Reference]:
        if self._by_key is None:
            by: dict[SymbolKey, list[Reference]] = defaultdict(list)
            for r in self.references:
                by[r.key].append(r)
            self._by_key = by
        return self._by_key.get(key, [])

    def referencing_files(self, key: SymbolKey) -> set[Path]:
        return {r.path for r in self.references_to(key)}

    def exports_of(self, path: Path) -> set[SymbolKey]:
        return set(self._exports.get(path, ()))

    def references_in(self, path: Path) -> Iterator[Reference]:
        return (r for r in self.references if r.path == path)


# ---------------------------------------------------------------------------------------


def resolve_code_name(project: Project, skill: str | None, name: str) -> SymbolKey:
    """The field a tool-code name (``context.memory.get/set("…")``) or a bare response
    placeholder names: bare → the skill's own field, else the project field; ``project.x``
    → project; ``<skill>.<x>`` → that skill; an unknown prefix is part of a bare name."""
    if "." in name:
        ns, _, entry = name.partition(".")
        if ns == "project" or ns == "system" or project.has_skill(ns):
            return ("field", ns, entry)
    if skill is not None:
        sk = project.skill(skill)
        if sk is not None and sk.field(name) is not None:
            return ("field", skill, name)
    if project.project_field(name) is not None:
        return ("field", "project", name)
    return ("field", skill or "project", name)


def build_index(project: Project) -> Index:
    idx = Index()
    _define(project, idx)
    for pf in list(project.files.values()):
        _collect_refs(project, idx, pf)
    return idx


def _define(project: Project, idx: Index) -> None:
    for sid, dflt in DEFAULT_SKILLS.items():
        if sid in project.skills:
            continue
        idx.define(Symbol(("skill", sid), None, None, dflt))
        for df in dflt.public_fields:
            idx.define(Symbol(("field", sid, df.name), None, None, df))
        for rname in dflt.responses:
            idx.define(Symbol(("response", rname), None, None, None))
    from .defaults import SYSTEM_RESPONSES

    for rname in SYSTEM_RESPONSES:
        idx.define(Symbol(("response", rname), None, None, None))
    for sid, sk in project.skills.items():
        if sk.skill_md is not None:
            doc = sk.doc
            rng = TextRange(0, 0)
            if doc is not None and doc.frontmatter is not None:
                name_key = doc.frontmatter.key_node("name")
                rng = name_key.range if name_key else TextRange(0, 0)
            idx.define(Symbol(("skill", sid), sk.skill_md.path, rng, sk))
            if doc is not None:
                for b in doc.blocks:
                    if b.id:
                        idx.define(Symbol(("block", sid, b.id), sk.skill_md.path, b.id_range, b))
                        for st in b.steps:
                            if st.id and st.id_node is not None and st.id != "END":
                                idx.define(
                                    Symbol(
                                        ("step", sid, b.id, st.id),
                                        sk.skill_md.path,
                                        st.id_node.range,
                                        st,
                                    )
                                )
        elif sid in DEFAULT_SKILLS:
            idx.define(Symbol(("skill", sid), None, None, DEFAULT_SKILLS[sid]))
        md = sk.memdoc
        if md is not None and sk.memory is not None:
            for f in md.fields:
                idx.define(Symbol(("field", sid, f.name), sk.memory.path, f.key.range, f))
        rd = sk.respdoc
        if rd is not None and sk.responses is not None:
            for r in rd.responses:
                idx.define(Symbol(("response", r.name), sk.responses.path, r.key.range, r))
        for pf, mod in sk.tool_modules():
            for t in mod.tools:
                idx.define(Symbol(("tool", sid, t.name), pf.path, t.name_range, t))
    pm = project.project_memory
    pmf = project.file_of_kind(FileKind.PROJECT_MEMORY)
    if pm is not None and pmf is not None:
        for f in pm.fields:
            idx.define(Symbol(("field", "project", f.name), pmf.path, f.key.range, f))
    prf = project.project_responses
    if prf is not None and prf.doc is not None:
        for r in prf.doc.responses:
            idx.define(Symbol(("response", r.name), prf.path, r.key.range, r))
    for pf, mod in project.shared_tool_files():
        for t in mod.tools:
            idx.define(Symbol(("tool", "", t.name), pf.path, t.name_range, t))
    agent = project.agent
    apf = project.file_of_kind(FileKind.AGENT)
    if agent is not None and apf is not None:
        for name, pre in agent.preconditions.items():
            idx.define(Symbol(("precondition", name), apf.path, pre.key.range, pre))
    integ = project.integrations
    ipf = project.file_of_kind(FileKind.INTEGRATIONS)
    if integ is not None and ipf is not None:
        for name, node in integ.mcp_servers.items():
            idx.define(Symbol(("mcp", name), ipf.path, node.range, node))
        for name, node in integ.model_groups.items():
            idx.define(Symbol(("model_group", name), ipf.path, node.range, node))


def _condition_refs(idx: Index, path: Path, site: ConditionSite, skill: str | None) -> None:
    parsed = parse_condition(site.text)
    for ref in parsed.refs:
        r = site.file_range(ref.range.start, ref.range.end)
        idx.refer(Reference(("field", ref.namespace, ref.entry), path, r, "condition", skill, site))


def _scalar(node: object) -> YScalar | None:
    return node if isinstance(node, YScalar) and isinstance(node.value, str) else None


def _collect_refs(project: Project, idx: Index, pf: ParsedFile) -> None:
    from ..syntax.config_yml import AgentDoc
    from ..syntax.responses_yml import ResponsesDoc
    from ..syntax.skill_md import SkillDoc
    from ..syntax.tools_py import ToolModule

    path, sid, doc = pf.path, pf.skill_id, pf.doc
    if isinstance(doc, SkillDoc) and sid is not None:
        for site in doc.conditions:
            _condition_refs(idx, path, site, sid)
        for tok in doc.tokens:
            if tok.kind in ("memory", "session") and len(tok.parts) == 2:
                (ns, _), (entry, _) = tok.parts
                form = "memory_token" if tok.kind == "memory" else "session_in_prose"
                idx.refer(Reference(("field", ns, entry), path, tok.range, form, sid))
            elif tok.kind == "skill" and tok.parts:
                idx.refer(
                    Reference(("skill", tok.parts[0][0]), path, tok.parts[0][1], "skill_token", sid)
                )
            elif tok.kind == "block" and tok.parts:
                idx.refer(
                    Reference(
                        ("block", sid, tok.parts[0][0]), path, tok.parts[0][1], "block_token", sid
                    )
                )
            elif tok.kind == "tool" and tok.parts:
                idx.refer(
                    Reference(
                        _tool_key(project, sid, tok.parts[0][0]),
                        path,
                        tok.parts[0][1],
                        "tool_token",
                        sid,
                    )
                )
        for gt in doc.gate_tools:
            idx.refer(
                Reference(
                    _tool_key(project, sid, gt.name),
                    path,
                    gt.name_node.range,
                    "tool_constraint",
                    sid,
                )
            )
            _gate_responses(idx, path, sid, gt)
        for item in doc.import_tools:
            name = item.value
            if name.startswith("mcp/"):
                server = name[4:].split(":", 1)[0]
                idx.refer(Reference(("mcp", server), path, item.range, "import_tools", sid))
            else:
                idx.refer(Reference(("tool", "", name), path, item.range, "import_tools", sid))
        for trig in doc.utter:
            idx.refer(
                Reference(("response", trig.name), path, trig.name_node.range, "utter_trigger", sid)
            )
        pre = _scalar(doc.fm("precondition"))
        if pre is not None:
            idx.refer(
                Reference(("precondition", pre.value.strip()), path, pre.range, "precondition", sid)
            )
        for blk in doc.blocks:
            for gt in blk.tools:
                idx.refer(
                    Reference(
                        _tool_key(project, sid, gt.name),
                        path,
                        gt.name_node.range,
                        "block_tool",
                        sid,
                    )
                )
                _gate_responses(idx, path, sid, gt)
            for st in blk.steps:
                _step_refs(project, idx, path, pf.text, sid, blk.id or "", st)
    elif isinstance(doc, ResponsesDoc):
        for site in doc.conditions:
            _condition_refs(idx, path, site, sid)
        for ph in doc.placeholders:
            if ph.kind == "qualified" and ph.namespace is not None:
                idx.refer(
                    Reference(("field", ph.namespace, ph.entry), path, ph.range, "placeholder", sid)
                )
            elif ph.kind == "bare":
                key = resolve_code_name(project, sid, ph.entry)
                idx.refer(Reference(key, path, ph.range, "bare_placeholder", sid))
        for r in doc.responses:
            for v in r.variants:
                for b in v.buttons:
                    sp = b.set_payload
                    if sp is not None:
                        idx.refer(
                            Reference(
                                ("field", sp.namespace, sp.entry),
                                path,
                                sp.range,
                                "set_payload",
                                sid,
                            )
                        )
                if v.source is not None:
                    idx.refer(
                        Reference(
                            _tool_key(project, sid or "", v.source.value),
                            path,
                            v.source.range,
                            "button_source",
                            sid,
                        )
                    )
    elif isinstance(doc, ToolModule):
        for call in doc.memory_calls:
            key = resolve_code_name(project, sid, call.entry)
            form = "tool_set" if call.method == "set" else "tool_get"
            idx.refer(Reference(key, path, call.entry_range, form, sid))
        for act in doc.activations:
            if act.skill_id is not None and act.skill_id_range is not None:
                idx.refer(
                    Reference(
                        ("skill", act.skill_id), path, act.skill_id_range, "activate_skill", sid
                    )
                )
    elif isinstance(doc, AgentDoc):
        for site in doc.conditions:
            _condition_refs(idx, path, site, None)
        for binding in doc.preconditions.values():
            if binding.resolve_with is not None:
                idx.refer(
                    Reference(
                        ("skill", binding.resolve_with.value),
                        path,
                        binding.resolve_with.range,
                        "resolve_with",
                    )
                )
        for n in doc.cancel_confirmation:
            idx.refer(Reference(("response", n.value), path, n.range, "gate_response"))
        if doc.model_group is not None:
            idx.refer(
                Reference(
                    ("model_group", doc.model_group.value),
                    path,
                    doc.model_group.range,
                    "model_group",
                )
            )


def _tool_key(project: Project, sid: str, name: str) -> SymbolKey:
    sk = project.skill(sid)
    if sk is not None:
        for _, mod in sk.tool_modules():
            if any(t.name == name for t in mod.tools):
                return ("tool", sid, name)
    return ("tool", "", name)


def _gate_responses(idx: Index, path: Path, sid: str, gt: Any) -> None:
    for attr in ("on_success", "on_failure", "utter_for_confirmation", "utter_on_user_denial"):
        n = getattr(gt, attr)
        if isinstance(n, YScalar) and isinstance(n.value, str):
            idx.refer(Reference(("response", n.value), path, n.range, "gate_response", sid))


def _step_refs(
    project: Project, idx: Index, path: Path, text: str, sid: str, bid: str, st: Any
) -> None:
    for tgt in st.next_targets():
        if tgt.value != "END":
            idx.refer(Reference(("step", sid, bid, tgt.value), path, tgt.range, "next", sid))
    kind = st.kind
    if kind == "collect":
        c = st.str_field("collect")
        if c:
            key = ("field", sid, c[0])
            sk = project.skill(sid)
            if (sk is None or sk.field(c[0]) is None) and project.project_field(c[0]):
                key = ("field", "project", c[0])
            idx.refer(Reference(key, path, c[1].range, "collect", sid))
        u = st.str_field("utterance")
        if u:
            idx.refer(Reference(("response", u[0]), path, u[1].range, "utterance", sid))
    elif kind == "action":
        a = st.str_field("action") or st.str_field("utter")
        if a and a[0] not in ("action_listen", "hangup"):
            idx.refer(Reference(("response", a[0]), path, a[1].range, "action", sid))
    elif kind == "set_memory":
        sm = st.get("set_memory")
        from ..syntax.yaml_tree import YMap

        if isinstance(sm, YMap):
            for k, _ in sm.pairs():
                if isinstance(k.value, str):
                    key = ("field", sid, k.value)
                    sk = project.skill(sid)
                    if (sk is None or sk.field(k.value) is None) and project.project_field(k.value):
                        key = ("field", "project", k.value)
                    idx.refer(Reference(key, path, k.range, "set_memory", sid))
    elif kind == "execute_tool":
        t = st.str_field("execute_tool")
        if t:
            idx.refer(
                Reference(_tool_key(project, sid, t[0]), path, t[1].range, "execute_tool", sid)
            )
        for _, _, ref_key, rng in execute_param_refs(text, st):
            if ref_key is not None:
                idx.refer(Reference(ref_key, path, rng, "execute_param", sid))
    elif kind in ("call", "link"):
        t = st.str_field(kind)
        if t:
            target = t[0]
            owner = project.skill(sid)
            doc = owner.doc if owner is not None else None
            own = f"{sid}__"
            if target.startswith(own):
                target = target[len(own) :]
            if doc is not None and doc.block(target) is not None:
                idx.refer(Reference(("block", sid, target), path, t[1].range, kind, sid))
            else:
                idx.refer(Reference(("skill", target), path, t[1].range, kind, sid))


def execute_param_refs(
    text: str, st: Any
) -> list[tuple[str, YScalar, SymbolKey | None, TextRange]]:
    """``execute_tool`` parameter values that start with ``session.``.

    Returns (parameter name, value node, field key or None, range). The key is None when
    the value is not exactly one ``session.<ns>.<entry>`` reference (the engine's
    ``invalid_session_parameter``); the range is then the whole value.
    """
    from ..syntax.yaml_tree import YMap, scalar_value_map

    out: list[tuple[str, YScalar, SymbolKey | None, TextRange]] = []
    params = st.get("parameters")
    if not isinstance(params, YMap):
        return out
    for k, v in params.pairs():
        if not (isinstance(v, YScalar) and isinstance(v.value, str)):
            continue
        stripped = v.raw.strip()
        if not stripped.startswith("session."):
            continue
        parsed = parse_condition(stripped)
        tree = parsed.tree
        from ..syntax.conditions import RefExpr

        if parsed.ok and isinstance(tree, RefExpr):
            lead = len(v.raw) - len(v.raw.lstrip())
            ref = tree.ref
            vm = scalar_value_map(text, v)
            rng = vm.range(lead + ref.range.start, lead + ref.range.end)
            out.append((str(k.value), v, ("field", ref.namespace, ref.entry), rng))
        else:
            out.append((str(k.value), v, None, v.range))
    return out


def field_symbol(project: Project, key: SymbolKey) -> MemoryField | None:
    for s in project.index.lookup(key):
        if isinstance(s.obj, MemoryField):
            return s.obj
    return None
