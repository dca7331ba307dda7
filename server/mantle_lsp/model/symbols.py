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

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..syntax.conditions import RefExpr, parse_condition
from ..syntax.config_yml import AgentDoc, IntegrationsDoc
from ..syntax.memory_yml import MemoryDoc, MemoryField
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.sites import ConditionSite
from ..syntax.skill_md import GateTool, SkillDoc, Step
from ..syntax.text import TextRange, new_range
from ..syntax.tools_py import ImportedKey, ToolDef, ToolModule
from ..syntax.yaml_tree import YMap, YScalar, scalar_value_map
from .defaults import DEFAULT_SKILLS, STEP_ACTIONS, SYSTEM_RESPONSES
from .files import ParsedFile, Skill
from .layout import FileKind


class ProjectView(Protocol):
    """What the index reads of a project (:class:`.project.Project` is one)."""

    @property
    def root(self) -> Path: ...
    @property
    def files(self) -> Mapping[Path, ParsedFile]: ...
    @property
    def skills(self) -> Mapping[str, Skill]: ...
    def skill(self, sid: str) -> Skill | None: ...
    def has_skill(self, sid: str) -> bool: ...
    def project_field(self, name: str) -> MemoryField | None: ...


SymbolKey = tuple[str, ...]


@dataclass(eq=False, slots=True)
class Symbol:
    key: SymbolKey
    path: Path | None  # None for symbols bundled with the engine
    range: TextRange | None
    obj: Any = None  # the parsed object (MemoryField, Block, Step, Response, ToolDef, …)


# reference forms that write the field they name, those that read it, and those that only
# name it: `session.<ns>.<entry>` in prose (the engine refuses it and substitutes nothing)
# and a backticked mention (soft). Every form of a field reference is in one of them.
WRITE_FORMS = frozenset({"collect", "set_memory", "tool_set", "set_payload"})
READ_FORMS = frozenset(
    {"condition", "memory_token", "placeholder", "bare_placeholder", "tool_get", "execute_param"}
)
NAME_FORMS = frozenset({"session_in_prose", "backticked"})


@dataclass(eq=False, slots=True)
class Reference:
    key: SymbolKey
    path: Path
    range: TextRange
    form: str  # how it is written: condition, memory_token, placeholder, collect, …
    skill: str | None = None  # the skill whose context resolves it
    site: ConditionSite | None = None
    soft: bool = False  # an inferred mention (e.g. backticked name), not a real reference
    # For tool code (tool_get / tool_set): how the key is known. "literal" (written in the
    # call), "constant" (a string constant, in the module or imported from a project
    # module), "loop" (a loop over a literal container), "parameter" (a literal key on a
    # receiver only guessed to be memory: a helper's `memory`/`mem` parameter). Only
    # "literal" keys are counted by the engine (engine_counted) or reported on.
    via: str = "literal"


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
    """Symbols and references, stored per file so that one file's entries can be
    replaced without rebuilding the rest (see :meth:`update_files`)."""

    def __init__(self) -> None:
        self.symbols: dict[SymbolKey, list[Symbol]] = {}
        self._defs_by_path: dict[Path | None, list[Symbol]] = {}
        self._refs_by_path: dict[Path, list[Reference]] = {}
        self._refs_by_key: dict[SymbolKey, dict[Path, list[Reference]]] = {}
        self._keys: dict[SymbolKey, SymbolKey] = {}  # see shared_key
        # the keys referred to, by kind of symbol (see unresolved_referencing_files)
        self._referred_by_kind: dict[str, set[SymbolKey]] = {}

    # -- building ---------------------------------------------------------------------
    def define(self, sym: Symbol) -> None:
        self.symbols.setdefault(sym.key, []).append(sym)
        self._defs_by_path.setdefault(sym.path, []).append(sym)

    def shared_key(self, key: SymbolKey) -> SymbolKey:
        """``key``, as one tuple shared by every reference to the same symbol (a huge
        skill.md names the same field hundreds of thousands of times)."""
        return self._keys.setdefault(key, key)

    def refer_file(self, path: Path, refs: list[Reference]) -> None:
        """Add ``refs``, references that ``path`` makes, in order: by file and by symbol
        (the path looked up once per symbol, not once per reference: a project of 1,000
        skills makes ~35,000 references)."""
        if not refs:
            return
        mine = self._refs_by_path.get(path)
        if mine is None:
            self._refs_by_path[path] = list(refs)
        else:
            mine.extend(refs)
        grouped: dict[SymbolKey, list[Reference]] = {}
        for ref in refs:
            same = grouped.get(ref.key)
            if same is None:
                grouped[ref.key] = [ref]
            else:
                same.append(ref)
        by_key = self._refs_by_key
        for key, group in grouped.items():
            per = by_key.get(key)
            if per is None:
                by_key[key] = {path: group}
                self._referred_by_kind.setdefault(key[0], set()).add(key)
            else:
                have = per.get(path)
                if have is None:
                    per[path] = group
                else:
                    have.extend(group)

    def remove(self, path: Path | None) -> None:
        """Forget everything ``path`` defines and refers to (None: the bundled symbols)."""
        for sym in self._defs_by_path.pop(path, ()):
            syms = self.symbols.get(sym.key)
            if syms is not None:
                syms[:] = [x for x in syms if x is not sym]
                if not syms:
                    del self.symbols[sym.key]
        if path is None:
            return
        for ref in self._refs_by_path.pop(path, ()):
            per = self._refs_by_key.get(ref.key)
            if per is not None:
                per.pop(path, None)
                if not per:
                    del self._refs_by_key[ref.key]
                    self._referred_by_kind[ref.key[0]].discard(ref.key)
                    self._keys.pop(ref.key, None)  # no reference left to share it

    # -- queries ----------------------------------------------------------------------
    @property
    def references(self) -> list[Reference]:
        return [r for refs in self._refs_by_path.values() for r in refs]

    def lookup(self, key: SymbolKey) -> list[Symbol]:
        return self.symbols.get(key, [])

    def references_to(self, key: SymbolKey) -> list[Reference]:
        per = self._refs_by_key.get(key)
        return [r for refs in per.values() for r in refs] if per else []

    def referencing_files(self, key: SymbolKey) -> set[Path]:
        return set(self._refs_by_key.get(key, ()))

    def unresolved_referencing_files(self, kinds: set[str]) -> set[Path]:
        """The files referring to a symbol of one of ``kinds`` that nothing defines: what
        they are told (did you mean …?) reads the names of that kind that do exist."""
        out: set[Path] = set()
        for kind in kinds:
            for key in self._referred_by_kind.get(kind, ()):
                if key not in self.symbols:
                    out.update(self._refs_by_key[key])
        return out

    def files_reading_fields(self, names: AbstractSet[str] | None = None) -> set[Path]:
        """The files referring to a field named ``name`` or ``namespace.name`` for a name
        in ``names`` (the keys shared or lib code names: they may be any skill's); with
        no ``names``, to any field."""
        out: set[Path] = set()
        for key in self._referred_by_kind.get("field", ()):
            if names is None or key[2] in names or f"{key[1]}.{key[2]}" in names:
                out.update(self._refs_by_key[key])
        return out

    def signature_of(self, path: Path) -> set[tuple[SymbolKey, tuple[object, ...]]]:
        """What other files may depend on in ``path``: each symbol it defines, with the
        facts that other files' diagnostics read (a field's scope and type, …)."""
        return {(s.key, _facts(s.obj)) for s in self._defs_by_path.get(path, ())}

    def references_in(self, path: Path) -> list[Reference]:
        return self._refs_by_path.get(path, [])

    def definitions_in(self, path: Path) -> list[Symbol]:
        return list(self._defs_by_path.get(path, ()))


# ---------------------------------------------------------------------------------------


def _facts(obj: Any) -> tuple[object, ...]:
    if isinstance(obj, MemoryField):
        enum = tuple(str(v) for v in obj.enum_values)
        # what gives it a value without a writer elsewhere: conditions on a field nothing
        # writes are reported where they are (constant_never_written)
        return (obj.scope, obj.type, enum, obj.given_by)
    doc = getattr(obj, "doc", None)
    if isinstance(doc, SkillDoc):  # a Skill
        return (doc.hidden, doc.has_prose, tuple(b.id for b in doc.blocks))
    blank = getattr(obj, "blank_variants", None)
    if callable(blank):  # a Response
        return (len(blank()),)
    if isinstance(obj, ToolDef):  # what execute_tool parameters are checked against
        params = tuple((p.name, p.required, p.positional_only) for p in obj.signature)
        return (obj.kind, obj.exact, obj.var_keyword, params)
    return ()


def resolve_code_name(project: ProjectView, skill: str | None, name: str) -> SymbolKey:
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


def module_for_import(
    project: ProjectView, importer: Path, module: str, level: int
) -> ParsedFile | None:
    """The parsed project file a ``from <module> import …`` in ``importer`` names (``level``
    leading dots), when the project has it (``x.py`` or ``x/__init__.py``)."""
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
    else:
        base = project.root
    parts = [p for p in module.split(".") if p]
    target = base.joinpath(*parts) if parts else base
    for cand in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
        if cand is not None:
            pf = project.files.get(cand)
            if pf is not None:
                return pf
    return None


def resolve_imported(project: ProjectView, importer: Path, ik: ImportedKey) -> str | None:
    """The string an imported memory-key constant holds, when the module it comes from is
    a project file that binds it once at top level to a string literal."""
    pf = module_for_import(project, importer, ik.module, ik.level)
    doc = pf.doc if pf is not None else None
    if not isinstance(doc, ToolModule):
        return None
    for name, value in doc.constants:
        if name == ik.name:
            return value
    return None


class CodeMemory(NamedTuple):
    """What one tool or helper module shows of its memory use: every key it names
    (literal, through a constant or a loop, resolved imports), and whether it also uses
    memory in a way whose key is unknown (then it may touch any field it can reach)."""

    entries: frozenset[str]
    dynamic: bool


def memory_keys_unknown(project: ProjectView, path: Path, mod: ToolModule) -> bool:
    """``code_memory(...).dynamic``, without collecting the keys."""
    if mod.dynamic_keys:
        return True
    return any(resolve_imported(project, path, ik) is None for ik in mod.imported_keys)


def code_memory(project: ProjectView, path: Path, mod: ToolModule) -> CodeMemory:
    entries = {c.entry for c in mod.memory_calls}
    entries.update(c.entry for c in mod.indirect_calls)
    for ik in mod.imported_keys:
        value = resolve_imported(project, path, ik)
        if value is not None:
            entries.add(value)
    return CodeMemory(frozenset(entries), memory_keys_unknown(project, path, mod))


def build_index(project: ProjectView, owned: set[Path] | None = None) -> Index:
    """The index of every file, or with ``owned`` of those files only (one worker of a
    parallel check; the other workers' entries are added with :func:`import_entries`)."""
    idx = Index()
    define_bundled(project, idx)
    files = [pf for path, pf in project.files.items() if owned is None or path in owned]
    for pf in files:
        define_file(project, idx, pf)
    for pf in files:
        _Refs(project, idx, pf).collect()
    return idx


# A symbol or reference reduced to plain tuples of strings and ints, cheap to serialise:
# what the checks read of another worker's entries (keys, where, which skill, soft or not).
# A file is its number in a list of paths both sides share. The parsed objects the entries
# point at (``obj``, ``site``) stay with the worker that parsed them.
SymbolEntry = tuple[SymbolKey, int, int, int]
ReferenceEntry = tuple[SymbolKey, int, int, int, str, str | None, bool, str]


def export_entries(
    idx: Index,
    owned: set[Path],
    file_ids: dict[Path, int],
    keep: Callable[[SymbolKey, str], bool] | None = None,
    local_kinds: AbstractSet[str] = frozenset(),
) -> tuple[list[SymbolEntry], list[ReferenceEntry]]:
    """The symbols and references of the ``owned`` files as plain tuples: the symbols but
    those of ``local_kinds``; with ``keep``, only the references for which
    ``keep(key, form)`` holds."""
    syms: list[SymbolEntry] = []
    refs: list[ReferenceEntry] = []
    for path in owned:
        where = file_ids[path]
        for s in idx._defs_by_path.get(path, ()):
            if s.key[0] in local_kinds:
                continue
            r = s.range
            syms.append((s.key, where, r.start, r.end) if r else (s.key, where, -1, -1))
        for ref in idx._refs_by_path.get(path, ()):
            if keep is None or keep(ref.key, ref.form):
                rr = ref.range
                refs.append(
                    (ref.key, where, rr.start, rr.end, ref.form, ref.skill, ref.soft, ref.via)
                )
    return syms, refs


def import_entries(
    idx: Index,
    paths: Sequence[Path],
    syms: Iterable[SymbolEntry],
    refs: Iterable[ReferenceEntry],
) -> None:
    """Add another worker's entries; ``paths`` is the shared list their numbers index.
    Keys may come as lists (decoded JSON): they are made tuples (a reference's shared
    with the other references to its symbol, as :meth:`_Refs.ref` does)."""
    shared = idx.shared_key
    for key, where, start, end in syms:
        sym_range: TextRange | None = new_range(TextRange, (start, end)) if start >= 0 else None
        idx.define(Symbol(tuple(key), paths[where], sym_range))
    run: list[Reference] = []  # consecutive references of one file, added together
    run_of = -1
    for key, where, start, end, form, skill, soft, via in refs:
        if where != run_of:
            if run:
                idx.refer_file(paths[run_of], run)
            run, run_of = [], where
        rng: TextRange = new_range(TextRange, (start, end))
        run.append(Reference(shared(tuple(key)), paths[where], rng, form, skill, None, soft, via))
    if run:
        idx.refer_file(paths[run_of], run)


def update_files(project: ProjectView, idx: Index, paths: set[Path], bundled: bool) -> None:
    """Replace the entries of ``paths`` (and, with ``bundled``, of the bundled symbols)
    by what the project's current parsed files give."""
    if bundled:
        idx.remove(None)
        define_bundled(project, idx)
    for path in paths:
        idx.remove(path)
    present = [project.files[p] for p in paths if p in project.files]
    for pf in present:
        define_file(project, idx, pf)
    for pf in present:
        _Refs(project, idx, pf).collect()


def content_range(node: YScalar) -> TextRange:
    """The range of a scalar's text without its quotes (what a rename replaces)."""
    if node.style in ("'", '"') and node.range.length >= 2:
        return TextRange(node.range.start + 1, node.range.end - 1)
    return node.range


def define_bundled(project: ProjectView, idx: Index) -> None:
    """The engine's bundled default skills (unless overridden) and responses."""
    for sid, dflt in DEFAULT_SKILLS.items():
        # bundled responses stay in the registry even when a project overrides the skill
        for rname in dflt.responses:
            idx.define(Symbol(("response", rname), None, None, None))
        sk = project.skills.get(sid)
        if sk is not None and sk.skill_md is not None:
            continue
        idx.define(Symbol(("skill", sid), None, None, dflt))
        if sk is None or sk.memory is None:
            for df in dflt.public_fields:
                idx.define(Symbol(("field", sid, df.name), None, None, df))
    for rname in SYSTEM_RESPONSES:
        idx.define(Symbol(("response", rname), None, None, None))


def define_file(project: ProjectView, idx: Index, pf: ParsedFile) -> None:
    """The symbols one file defines."""
    path, sid, doc = pf.path, pf.skill_id, pf.doc
    kind = pf.kind
    if kind is FileKind.SKILL_MD and sid is not None:
        sk = project.skill(sid)
        rng = TextRange(0, 0)
        if isinstance(doc, SkillDoc) and doc.frontmatter is not None:
            name_key = doc.frontmatter.key_node("name")
            rng = name_key.range if name_key else TextRange(0, 0)
        idx.define(Symbol(("skill", sid), path, rng, sk))
        for b in doc.blocks if isinstance(doc, SkillDoc) else ():
            if not b.id:
                continue
            idx.define(Symbol(("block", sid, b.id), path, b.id_range, b))
            for st in b.steps:
                if st.id and st.id_node is not None and st.id != "END":
                    key = ("step", sid, b.id, st.id)
                    idx.define(Symbol(key, path, content_range(st.id_node), st))
    elif kind in (FileKind.SKILL_MEMORY, FileKind.PROJECT_MEMORY) and isinstance(doc, MemoryDoc):
        ns = sid if kind is FileKind.SKILL_MEMORY and sid is not None else "project"
        for f in doc.fields:
            idx.define(Symbol(("field", ns, f.name), path, content_range(f.key), f))
    elif isinstance(doc, ResponsesDoc):
        for r in doc.responses:
            idx.define(Symbol(("response", r.name), path, content_range(r.key), r))
    elif isinstance(doc, ToolModule) and kind is not FileKind.HELPER:  # lib/ defines no tool
        owner = sid if kind is FileKind.SKILL_TOOLS and sid is not None else ""
        for t in doc.tools:
            idx.define(Symbol(("tool", owner, t.name), path, t.name_range, t))
    elif isinstance(doc, AgentDoc):
        for name, pre in doc.preconditions.items():
            idx.define(Symbol(("precondition", name), path, content_range(pre.key), pre))
    elif kind is FileKind.INTEGRATIONS and doc is not None:
        for name, node in doc.mcp_servers.items():
            idx.define(Symbol(("mcp", name), path, content_range(node), node))
        for name, node in doc.model_groups.items():
            idx.define(Symbol(("model_group", name), path, content_range(node), node))


_BACKTICK_RE = re.compile(r"`([A-Za-z_][\w]*)`")


class _Refs:
    """Collects the references of one file. Every reference range covers exactly the
    referenced name, so that renaming a symbol is replacing each of its ranges."""

    def __init__(self, project: ProjectView, idx: Index, pf: ParsedFile) -> None:
        self.p = project
        self.idx = idx
        self.pf = pf
        self.path = pf.path
        self.sid = pf.skill_id
        self.found: list[Reference] = []  # added to the index at the end (Index.refer_file)

    def ref(
        self, key: SymbolKey, rng: TextRange, form: str, site: ConditionSite | None = None,
        soft: bool = False, via: str = "literal",
    ) -> None:  # fmt: skip
        key = self.idx.shared_key(key)
        self.found.append(Reference(key, self.path, rng, form, self.sid, site, soft, via))

    def field(
        self, ns: str, entry: str, ns_rng: TextRange | None, entry_rng: TextRange, form: str,
        site: ConditionSite | None = None, via: str = "literal",
    ) -> None:  # fmt: skip
        self.ref(("field", ns, entry), entry_rng, form, site, via=via)
        if ns_rng is not None and ns not in ("project", "system"):
            self.ref(("skill", ns), ns_rng, "namespace", site, via=via)

    def name(self, key: SymbolKey, node: YScalar, form: str) -> None:
        self.ref(key, content_range(node), form)

    def collect(self) -> None:
        self._collect()
        self.idx.refer_file(self.path, self.found)

    def _collect(self) -> None:
        doc = self.pf.doc
        if isinstance(doc, SkillDoc) and self.sid is not None:
            self.skill_doc(doc, self.sid)
        elif isinstance(doc, ResponsesDoc):
            self.responses(doc)
        elif isinstance(doc, ToolModule):
            self.tools(doc)
        elif isinstance(doc, AgentDoc):
            self.agent(doc)
        elif isinstance(doc, IntegrationsDoc):
            for _, node in doc.store_embeddings:
                self.model_group_ref(node, "embeddings")

    # -- conditions -------------------------------------------------------------------
    def condition(self, site: ConditionSite) -> None:
        for r in site.parsed.refs:
            self.field(
                r.namespace,
                r.entry,
                site.file_range(r.namespace_range.start, r.namespace_range.end),
                site.file_range(r.entry_range.start, r.entry_range.end),
                "condition",
                site,
            )

    # -- skill.md ---------------------------------------------------------------------
    def skill_doc(self, doc: SkillDoc, sid: str) -> None:
        for site in doc.conditions:
            self.condition(site)
        for tok in doc.tokens:
            if tok.kind in ("memory", "session") and len(tok.parts) == 2:
                (ns, ns_rng), (entry, entry_rng) = tok.parts
                form = "memory_token" if tok.kind == "memory" else "session_in_prose"
                self.field(ns, entry, ns_rng, entry_rng, form)
            elif tok.kind in ("skill", "block", "tool") and tok.parts:
                name, rng = tok.parts[0]
                key: SymbolKey
                if tok.kind == "skill":
                    key = ("skill", name)
                elif tok.kind == "block":
                    key = ("block", sid, name)
                else:
                    key = _tool_key(self.p, sid, name)
                self.ref(key, rng, f"{tok.kind}_token")
        for gt in doc.gate_tools:
            self.name(_tool_key(self.p, sid, gt.name), gt.name_node, "tool_constraint")
            self.gate_responses(gt)
        for item in doc.import_tools:
            value = item.value
            if value.startswith("mcp/"):
                server = value[4:].split(":", 1)[0]
                start = content_range(item).start + 4
                self.ref(("mcp", server), TextRange(start, start + len(server)), "import_tools")
            else:
                self.name(("tool", "", value), item, "import_tools")
        for trig in doc.utter:
            self.name(("response", trig.name), trig.name_node, "utter_trigger")
        pre = doc.fm("precondition")
        if isinstance(pre, YScalar) and isinstance(pre.value, str) and pre.value.strip():
            self.name(("precondition", pre.value.strip()), pre, "precondition")
        for blk in doc.blocks:
            for gt in blk.tools:
                self.name(_tool_key(self.p, sid, gt.name), gt.name_node, "block_tool")
                self.gate_responses(gt)
            for st in blk.steps:
                self.step(doc, sid, blk.id or "", st)
        self.soft_refs(doc, sid)

    def gate_responses(self, gt: GateTool) -> None:
        for attr in ("on_success", "on_failure", "utter_for_confirmation", "utter_on_user_denial"):
            n = getattr(gt, attr)
            if isinstance(n, YScalar) and isinstance(n.value, str):
                self.name(("response", n.value), n, "gate_response")

    def written_field(self, sid: str, name: str) -> str:
        """The namespace a bare `collect:` / `set_memory` name writes."""
        sk = self.p.skill(sid)
        if (sk is None or sk.field(name) is None) and self.p.project_field(name) is not None:
            return "project"
        return sid

    def step(self, doc: SkillDoc, sid: str, bid: str, st: Step) -> None:
        for tgt in st.next_targets():
            if tgt.value != "END":
                self.name(("step", sid, bid, tgt.value), tgt, "next")
        kind = st.kind
        if kind == "collect":
            c = st.str_field("collect")
            if c:
                self.field(self.written_field(sid, c[0]), c[0], None, content_range(c[1]),
                           "collect")  # fmt: skip
            u = st.str_field("utterance")
            if u:
                self.name(("response", u[0]), u[1], "utterance")
        elif kind == "action":
            a = st.str_field("action") or st.str_field("utter")
            if a and a[0] not in STEP_ACTIONS:
                self.name(("response", a[0]), a[1], "action")
        elif kind == "set_memory":
            sm = st.get("set_memory")
            if isinstance(sm, YMap):
                for k, _ in sm.pairs():
                    if isinstance(k.value, str):
                        ns = self.written_field(sid, k.value)
                        self.field(ns, k.value, None, content_range(k), "set_memory")
        elif kind == "execute_tool":
            t = st.str_field("execute_tool")
            if t:
                self.name(_tool_key(self.p, sid, t[0]), t[1], "execute_tool")
            for param in execute_params(self.pf.text, st):
                if param.ref is not None:
                    ns, entry, ns_rng, entry_rng = param.ref
                    self.field(ns, entry, ns_rng, entry_rng, "execute_param")
        elif kind in ("call", "link"):
            t = st.str_field(kind)
            if t:
                target = t[0]
                own = f"{sid}__"
                rng = content_range(t[1])
                if target.startswith(own):
                    target = target[len(own) :]
                    rng = TextRange(rng.start + len(own), rng.end)
                if doc.block(target) is not None:
                    self.ref(("block", sid, target), rng, kind)
                else:
                    self.ref(("skill", target), rng, kind)

    def soft_refs(self, doc: SkillDoc, sid: str) -> None:
        """Backticked names of the skill's own fields and tools in prose (soft references:
        authors name fields and tools this way far more often than with @-tokens)."""
        sk = self.p.skill(sid)
        if sk is None:
            return
        fields = set(sk.field_names())
        tools = {t.name for _, mod in sk.tool_modules() for t in mod.tools}
        text = self.pf.text
        for para in doc.paragraphs:
            rng = para.body_range
            if rng is None:
                continue
            for m in _BACKTICK_RE.finditer(text, rng.start, rng.end):
                name = m.group(1)
                r = TextRange(m.start(1), m.end(1))
                if name in fields:
                    self.ref(("field", sid, name), r, "backticked", soft=True)
                elif name in tools:
                    self.ref(("tool", sid, name), r, "backticked", soft=True)

    # -- responses.yml ------------------------------------------------------------------
    def responses(self, doc: ResponsesDoc) -> None:
        for site in doc.conditions:
            self.condition(site)
        for ph in doc.placeholders:
            if ph.kind == "qualified" and ph.namespace is not None and ph.entry_range:
                self.field(ph.namespace, ph.entry, ph.namespace_range, ph.entry_range,
                           "placeholder")  # fmt: skip
            elif ph.kind == "bare" and ph.entry_range is not None:
                key = resolve_code_name(self.p, self.sid, ph.entry)
                self.ref(key, ph.entry_range, "bare_placeholder")
        for r in doc.responses:
            for v in r.variants:
                for b in v.buttons:
                    sp = b.set_payload
                    if sp is not None:
                        self.field(sp.namespace, sp.entry, sp.namespace_range, sp.entry_range,
                                   "set_payload")  # fmt: skip
                if v.source is not None:
                    key = _tool_key(self.p, self.sid or "", v.source.value)
                    self.name(key, v.source, "button_source")

    # -- tools ------------------------------------------------------------------------------
    def tools(self, mod: ToolModule) -> None:
        for call in mod.memory_calls:
            self.tool_key(call.method, call.entry, call.entry_range, "literal")
        if mod.indirect_calls or mod.imported_keys:
            # a constant used by several calls is one literal: one reference per use kind
            seen: set[tuple[str, str, TextRange]] = set()
            for call in mod.indirect_calls:
                if (call.method, call.entry, call.entry_range) not in seen:
                    seen.add((call.method, call.entry, call.entry_range))
                    self.tool_key(call.method, call.entry, call.entry_range, call.via)
            for ik in mod.imported_keys:
                value = resolve_imported(self.p, self.path, ik)
                if value is not None:
                    self.tool_key(ik.method, value, ik.range, "constant", spelled=False)
        for act in mod.activations:
            if act.skill_id is not None and act.skill_id_range is not None:
                self.ref(("skill", act.skill_id), act.skill_id_range, "activate_skill")

    def tool_key(
        self, method: str, entry: str, rng: TextRange, via: str, spelled: bool = True
    ) -> None:
        """A memory key in tool code at ``rng``: the literal spelling it (or, not
        ``spelled``, the expression naming an imported constant at the call site)."""
        key = resolve_code_name(self.p, self.sid, entry)
        form = "tool_set" if method == "set" else "tool_get"
        exact = spelled and rng.length == len(entry)
        if exact and "." in entry and key[2] != entry:
            ns_len = len(entry) - len(key[2]) - 1
            self.field(key[1], key[2], TextRange(rng.start, rng.start + ns_len),
                       TextRange(rng.start + ns_len + 1, rng.end), form, via=via)  # fmt: skip
        else:
            self.ref(key, rng, form, via=via)

    # -- agent.yml --------------------------------------------------------------------------
    def agent(self, doc: AgentDoc) -> None:
        for site in doc.conditions:
            self.condition(site)
        for binding in doc.preconditions.values():
            if binding.resolve_with is not None:
                self.name(("skill", binding.resolve_with.value), binding.resolve_with,
                          "resolve_with")  # fmt: skip
        for n in doc.cancel_confirmation:
            self.name(("response", n.value), n, "gate_response")
        if doc.model_group is not None:
            self.name(("model_group", doc.model_group.value), doc.model_group, "model_group")
        for _, node in doc.embeddings:
            self.model_group_ref(node, "embeddings")

    def model_group_ref(self, node: YScalar, form: str) -> None:
        """A model-group id written as a scalar (the engine strips it; a reference covers
        exactly the name, so a padded value is not indexed)."""
        if isinstance(node.value, str) and node.value and node.value == node.value.strip():
            self.name(("model_group", node.value), node, form)


def _tool_key(project: ProjectView, sid: str, name: str) -> SymbolKey:
    sk = project.skill(sid)
    if sk is not None:
        for _, mod in sk.tool_modules():
            if any(t.name == name for t in mod.tools):
                return ("tool", sid, name)
    return ("tool", "", name)


@dataclass(frozen=True)
class ExecuteParam:
    """An ``execute_tool`` parameter whose value starts with ``session.``."""

    name: str
    node: YScalar
    # (namespace, entry, namespace range, entry range) when the value is exactly one
    # `session.<ns>.<entry>` reference; None otherwise (the engine's
    # `invalid_session_parameter`)
    ref: tuple[str, str, TextRange, TextRange] | None
    range: TextRange  # the reference, or the whole value


def execute_params(text: str, st: Step) -> list[ExecuteParam]:
    out: list[ExecuteParam] = []
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
        if parsed.ok and isinstance(tree, RefExpr):
            lead = len(v.raw) - len(v.raw.lstrip())
            r = tree.ref
            vm = scalar_value_map(text, v)
            ns_rng = vm.range(lead + r.namespace_range.start, lead + r.namespace_range.end)
            entry_rng = vm.range(lead + r.entry_range.start, lead + r.entry_range.end)
            ref_rng = vm.range(lead + r.range.start, lead + r.range.end)
            out.append(
                ExecuteParam(str(k.value), v, (r.namespace, r.entry, ns_rng, entry_rng), ref_rng)
            )
        else:
            out.append(ExecuteParam(str(k.value), v, None, v.range))
    return out
