"""The semantic questions about a project, each answered in exactly one place.

Who may read a memory key, who may write one, which tools a skill sees, which responses
exist and who delivers them, how the blocks and steps of a skill connect, what type and
values a field has, who reads and who writes a field, which skills rasa-pro loads (and so
which are in its catalog). Diagnostics, completion, hover,
navigation, rename and code actions all ask these functions; none re-derives an answer.

Answers are plain data. Where the answer is "no", it says why as a structured verdict
(:class:`Unreadable`, :class:`Unwritable`, :class:`LoadFailure`) with the names the author
may have meant, so a diagnostic can word it and a quick fix can act on it without reading
any message text.

A :class:`Semantics` is cheap to make and caches only for its own lifetime: make one per
check run or per request (``Semantics(project)``), never keep one across edits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..syntax.memory_yml import FieldFacts, MemoryField
from ..syntax.responses_yml import Response, ResponsesDoc
from ..syntax.skill_md import Block, SkillDoc, Step
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolDef, ToolModule
from ..syntax.yaml_tree import YScalar
from .defaults import (
    AUTONOMOUS_STEP,
    DEFAULT_SKILLS,
    FRAMEWORK_TOOLS,
    SYSTEM_MEMORY_ENTRIES,
    DefaultField,
)
from .engine import Profile, profile_named
from .project import LoadFailure, ParsedFile, Project, Skill
from .symbols import NAME_FORMS, READ_FORMS, WRITE_FORMS, Reference, SymbolKey, code_memory

# the name of a memory validation tool: `run_after_setting_<entry>`
HOOK_PREFIX = "run_after_setting_"

if TYPE_CHECKING:  # the eval parser is imported only by projects that have eval files
    from ..syntax.eval_yml import EvalRef

__all__ = [
    "HOOK_PREFIX",
    "NAME_FORMS",
    "READ_FORMS",
    "WRITE_FORMS",
    "CodeMemoryFacts",
    "EvalTools",
    "FieldType",
    "LoadFailure",
    "Profile",
    "Semantics",
    "StepExit",
    "TrackerKey",
    "Unreadable",
    "Unwritable",
    "in_order",
    "reads",
    "writes",
]


Scope = Literal["own", "other", "project", "bundled", "system", "unknown"]
UnreadableKind = Literal[
    "system",  # the engine-internal namespace
    "no_project_field",  # project.<entry>: not declared (or no project memory.yml)
    "undeclared",  # <skill>.<entry>: the skill declares no such field
    "private",  # another skill's private field
    "bundled_no_field",  # a bundled default skill has no such public field
    "unknown_namespace",  # no skill of that id, not `project`
]
UnwritableKind = Literal[
    "no_project_field",  # project.<entry> is not declared
    "system",  # writes the engine-internal namespace
    "other_skill",  # a tool of one skill (or a button it delivers) writing another's field
    "undeclared",  # <skill>.<entry> names no field of that skill
    "bare_undeclared",  # a bare name neither the skill nor the project declares
    "nowhere",  # a bare name (shared code) that no skill and not the project declares
    "writable_by",  # a project field whose `writable_by` lists none of the writers (3.22)
]


@dataclass(frozen=True)
class Unreadable:
    """Why ``ns.entry`` cannot be read from skill ``sid`` (None: a project-wide file)."""

    kind: UnreadableKind
    sid: str | None
    ns: str
    entry: str
    candidates: tuple[str, ...] = ()  # what the author may have meant
    has_project_memory: bool = True  # for `no_project_field`


@dataclass(frozen=True)
class Unwritable:
    """Why a writer in skill ``sid`` (None: shared code, or the project-root responses
    file) cannot write memory key ``name``."""

    kind: UnwritableKind
    sid: str | None
    name: str  # as written: `entry` or `ns.entry`
    ns: str
    entry: str
    candidates: tuple[str, ...] = ()
    # `writable_by`: the skills the field's `writable_by` lists, and the writing skills it
    # refuses (None: shared code; none at all: no skill writes through this writer)
    allowed: tuple[str, ...] = ()
    refused: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class FieldType:
    """What a condition on a field can compare it with."""

    type: str
    enum_values: tuple[str, ...]  # as strings
    enum_booleans: dict[str, bool]  # unquoted enum items YAML 1.1 read as booleans


TrackerKeyKind = Literal[
    "ok",  # a key the agent writes
    "system_unknown",  # `system.<entry>` for an entry the engine does not know
    "bare",  # `<field>`: the namespace is missing
    "session",  # `session.…`: the condition syntax, not the tracker key
    "wrong_scope",  # `project.<f>` for a skill field, `<skill>.<f>` for another's field
    "undeclared",  # the namespace exists, the field does not
    "unknown_namespace",  # neither a skill, `project` nor `system`
]


@dataclass(frozen=True)
class TrackerKey:
    """What a scenario's memory name (a tracker key) names (:meth:`Semantics.tracker_key`)."""

    kind: TrackerKeyKind
    meant: str | None = None  # the one key the name stands for, when there is exactly one
    candidates: tuple[str, ...] = ()  # keys of that namespace (for a did-you-mean)
    field: FieldType | None = None  # the field's type, for a key that is `ok`
    owner: str | None = None  # the namespace of the key that is `ok` (a skill, `project`)


@dataclass(frozen=True)
class EvalTools:
    """The tools a scenario's `tool_executed` may name (:meth:`Semantics.eval_tools`)."""

    local: frozenset[str]  # defined in the project's tool modules (or framework tools)
    possible: frozenset[str]  # bindings that may hold a tool (factory-made, imported)
    complete: bool  # every tool module parses: a name outside `local` is not a tool
    mcp: dict[str, frozenset[tuple[str, str]]]  # tool -> {(server, importing skill)}


ExitKind = Literal["sequence", "next", "if", "else"]


@dataclass(frozen=True)
class StepExit:
    """One way out of a step (:meth:`Semantics.step_exits`): on to the following step
    (``sequence``), a plain ``next:``, a branch's ``then`` (``if``, with its condition) or
    its ``else``. ``target`` is the step index, None for ``END`` (or a missing step)."""

    kind: ExitKind
    target: int | None
    condition: str | None
    name: str  # the target as written ("" for `sequence`)
    node: YScalar | None  # where it is written
    missing: bool = False  # `next` names no step of the block (and not END)


@dataclass(frozen=True)
class CodeMemoryFacts:
    """What the project's code (tools, lib helpers) shows of its memory use."""

    anything: bool  # a shared tool or lib helper uses memory with unknown keys
    shared_entries: frozenset[str]  # every key shared tools and lib helpers name
    dynamic_skills: frozenset[str]  # skills whose own tools use memory with unknown keys


def reads(ref: Reference) -> bool:
    """``ref`` reads the field it names: a condition, an ``@memory`` token, a placeholder,
    an ``execute_tool`` parameter, ``memory.get`` in code (never a soft mention, nor
    ``session.`` in prose, which the engine refuses and never substitutes)."""
    return ref.form in READ_FORMS and not ref.soft and ref.key[0] == "field"


def writes(ref: Reference) -> bool:
    """``ref`` writes the field it names: ``collect:``, ``set_memory``, a ``set:``
    button, ``memory.set`` in code."""
    return ref.form in WRITE_FORMS and not ref.soft and ref.key[0] == "field"


class Semantics:
    """The answers for one state of ``project`` (see the module docstring)."""

    def __init__(self, project: Project) -> None:
        self.p = project
        self._shared: set[str] | None = None
        self._visible: dict[str, set[str]] = {}
        self._code: CodeMemoryFacts | None = None
        self._tools_in: dict[Path, list[ToolDef]] = {}
        self._local: dict[str, frozenset[str]] = {}  # local_tools by skill
        self._load: dict[str, LoadFailure | None] = {}  # load_failure by skill
        self._eval_tools: EvalTools | None = None
        self._tool_owners: dict[str, list[str]] | None = None  # eval_tool_key

    # -- the engine profile ----------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        """The engine profile whose rules apply (model/engine.py): what it enforces, as
        named capabilities. Nothing outside ``model/`` compares version strings."""
        return profile_named(self.p.engine)

    # -- reading memory ------------------------------------------------------------------
    def scope(self, sid: str | None, ns: str) -> Scope:
        """How skill ``sid`` sees namespace ``ns``: its own fields, another skill's
        public ones, the project's, a bundled skill's public ones, none (``system``), or
        an unknown namespace."""
        if ns == "system":
            return "system"
        if ns == "project":
            return "project"
        if self.p.skill(ns) is not None:
            return "own" if ns == sid else "other"
        if ns in DEFAULT_SKILLS:
            return "bundled"
        return "unknown"

    def unreadable(self, sid: str | None, ns: str, entry: str) -> Unreadable | None:
        """None when ``ns.entry`` is readable from skill ``sid`` (None: the project-root
        responses file, which every skill may deliver); else why not."""
        p = self.p
        scope = self.scope(sid, ns)
        if scope == "system":
            return Unreadable("system", sid, ns, entry)
        if scope == "project":
            if p.project_field(entry) is not None:
                return None
            pm = p.project_memory
            names = tuple(f.name for f in pm.fields) if pm else ()
            return Unreadable("no_project_field", sid, ns, entry, names, pm is not None)
        if scope == "own":
            sk = p.skill(ns)
            assert sk is not None
            if sk.field(entry) is not None:
                return None
            return Unreadable("undeclared", sid, ns, entry, tuple(sk.field_names()))
        if scope == "other":
            public, effective = p.field_decls(ns, entry)
            if public is not None:
                return None
            if effective is not None:
                return Unreadable("private", sid, ns, entry)
            return Unreadable("undeclared", sid, ns, entry, tuple(p.field_names(ns)))
        if scope == "bundled":
            names = tuple(f.name for f in DEFAULT_SKILLS[ns].public_fields)
            if entry in names:
                return None
            return Unreadable("bundled_no_field", sid, ns, entry, names)
        return Unreadable("unknown_namespace", sid, ns, entry, ("project", *p.catalog_ids()))

    def readable_declarations(
        self, sid: str | None, ns: str
    ) -> list[MemoryField] | list[DefaultField]:
        """The declarations of ``ns`` that skill ``sid`` may read, in declaration order
        (a name declared twice once, as it takes effect): exactly the entries for which
        :meth:`unreadable` answers None. A skill reads its own fields as they take effect
        (a private declaration wins over a public one of the same name); another skill
        reads only the public declarations, whatever a private twin says (as rasa-pro's
        memory manager does, and :meth:`field_type`)."""
        scope = self.scope(sid, ns)
        if scope == "project":
            md = self.p.project_memory
            return _effective(md.fields, md.field) if md is not None else []
        if scope in ("own", "other"):
            sk = self.p.skill(ns)
            md = sk.memdoc if sk is not None else None
            if sk is None or md is None:
                return []
            if scope == "own":
                return _effective(md.fields, md.field)
            return _effective(md.fields, sk.public_field)
        if scope == "bundled":
            return list(DEFAULT_SKILLS[ns].public_fields)
        return []

    def declaration(self, sid: str | None, ns: str, entry: str) -> MemoryField | None:
        """The declaration of ``ns.entry`` that skill ``sid`` reads (one of
        :meth:`readable_declarations`): its own field as it takes effect, another skill's
        public one, the project's; None when it may not read it, or for a bundled skill's
        field (no memory.yml of the project declares it)."""
        scope = self.scope(sid, ns)
        if scope == "project":
            return self.p.project_field(entry)
        sk = self.p.skill(ns) if scope in ("own", "other") else None
        if sk is None:
            return None
        return sk.field(entry) if scope == "own" else sk.public_field(entry)

    def bare_resolves(self, sid: str | None, name: str) -> bool:
        """A bare ``{entry}`` placeholder (or a bare tool key) names a field: of skill
        ``sid`` or the project; for a project-wide file, of any skill or the project."""
        if self.p.project_field(name) is not None:
            return True
        if sid is not None:
            sk = self.p.skill(sid)
            return sk is not None and sk.field(name) is not None
        return any(s.field(name) is not None for s in self.p.skills.values())

    def field_type(self, sid: str | None, ns: str, entry: str) -> FieldType | None:
        """Type and values of a field ``sid`` may read, or None (unknown, unreadable)."""
        scope = self.scope(sid, ns)
        decl: MemoryField | FieldFacts | None
        if scope == "project":
            decl = self.p.project_field(entry)
        elif scope == "own":
            sk = self.p.skill(ns)
            decl = sk.field(entry) if sk is not None else None
        elif scope == "other":
            decl, _ = self.p.field_decls(ns, entry)
        elif scope == "bundled":
            for df in DEFAULT_SKILLS[ns].public_fields:
                if df.name == entry:
                    return FieldType(df.type, (), {})
            return None
        else:
            return None
        if decl is None:
            return None
        facts = decl if isinstance(decl, FieldFacts) else decl.facts
        return FieldType(facts.type, facts.enum_values, facts.enum_booleans)

    # -- writing memory ------------------------------------------------------------------
    def unwritable(self, sid: str | None, name: str) -> Unwritable | None:
        """None when tool code of skill ``sid`` (None: shared tools) may write memory key
        ``name`` (``entry`` or ``ns.entry``, as given to ``memory.set``); else why not."""
        p = self.p
        if "." in name:
            ns, _, entry = name.partition(".")
            if ns == "project":
                if p.project_field(entry) is not None:
                    return None
                return Unwritable("no_project_field", sid, name, ns, entry)
            if ns == "system":
                return Unwritable("system", sid, name, ns, entry)
            sk = p.skill(ns)
            if sk is not None:
                if sid is not None and ns != sid:
                    return Unwritable("other_skill", sid, name, ns, entry)
                if sk.field(entry) is None:
                    return Unwritable("undeclared", sid, name, ns, entry)
                return None
        if sid is not None:
            sk = p.skill(sid)
            if sk is not None and sk.field(name) is not None:
                return None
            if p.project_field(name) is not None:
                return None
            cands = tuple(sk.field_names()) if sk else ()
            return Unwritable("bare_undeclared", sid, name, sid, name, cands)
        if p.project_field(name) is not None or any(
            s.field(name) is not None for s in p.skills.values()
        ):
            return None
        return Unwritable("nowhere", sid, name, "", name)

    def step_write_target(self, sk: Skill | None, name: str) -> Literal["skill", "project"] | None:
        """What a bare name written in a step of skill ``sk`` (a ``collect:`` /
        ``set_memory`` key, an ``execute_tool`` parameter) names: the skill's own field,
        else a project field, else nothing declared."""
        if sk is not None and sk.field(name) is not None:
            return "skill"
        if self.p.project_field(name) is not None:
            return "project"
        return None

    def write_candidates(self, sk: Skill) -> list[str]:
        """The bare names a step of ``sk`` may write (for did-you-mean)."""
        pm = self.p.project_memory
        return [*sk.field_names(), *(f.name for f in pm.fields)] if pm else sk.field_names()

    def button_writable_skills(self, sid: str | None, users: Iterable[str]) -> list[str]:
        """The skills whose own fields a ``set:`` button may write, besides project
        fields: the skill of the responses file, or for the project-root file the one
        skill that delivers the response (none when several or none do)."""
        if sid is not None:
            return [sid]
        us = sorted(set(users))
        return us if len(us) == 1 else []

    def button_unwritable(
        self, sid: str | None, response: str, ns: str, entry: str
    ) -> Unwritable | None:
        """None when a ``set:`` button of response ``response`` may write the readable
        field ``ns.entry``; else why not. The button is in the responses.yml of skill
        ``sid``, or (None) in the project-root file, whose responses run in every skill
        that delivers them: a skill field only the one skill delivering it may write, a
        project field only skills its ``writable_by`` lists (on a profile with it)."""
        if ns == "project" and self.writable_by(entry) is None:
            return None
        users = [sid] if sid is not None else sorted(self.response_users(response))
        if ns == "project":
            return self.project_write_refused(sid, entry, users)
        if ns in self.button_writable_skills(sid, users):
            return None
        return Unwritable("other_skill", sid, f"{ns}.{entry}", ns, entry)

    def writable_by(self, entry: str) -> tuple[str, ...] | None:
        """The skills project field ``entry``'s ``writable_by`` lists, on a profile that
        reads the attribute; None when any writer may write it (no such attribute or
        field, an empty list, a profile without it)."""
        if not self.profile.has_writable_by:
            return None
        f = self.p.project_field(entry)
        v = f.value("writable_by") if f is not None else None
        return tuple(str(x) for x in v) if isinstance(v, list) and v else None

    def project_write_refused(
        self, sid: str | None, entry: str, writers: Iterable[str | None]
    ) -> Unwritable | None:
        """Whether ``writable_by`` refuses a write of project field ``entry`` made by
        ``writers``: the skills it runs in (None: shared code, which is never listed; no
        writer at all: nothing could ever make the write). None when the write is allowed
        (or the field has no ``writable_by``); ``sid`` is the writer's own skill, as
        :class:`Unwritable` records it."""
        allowed = self.writable_by(entry)
        if allowed is None:
            return None
        ws = list(dict.fromkeys(writers))
        refused = tuple(w for w in ws if w is None or w not in allowed)
        if ws and not refused:
            return None
        return Unwritable(
            "writable_by", sid, f"project.{entry}", "project", entry, (), allowed, refused
        )

    def keeps_first_value(self, entry: str) -> bool:
        """Project field ``entry`` keeps its first value for the session (the engine
        refuses a later write while it holds one): on every profile, unless one with
        ``mutable`` declares it ``mutable: true``."""
        if not self.profile.has_mutable:
            return True
        f = self.p.project_field(entry)
        return not (f is not None and f.value("mutable") is True)

    def collect_steps(self, sk: Skill) -> dict[str, list[Step]]:
        """The ``collect:`` steps of ``sk`` by the field they fill, in document order."""
        out: dict[str, list[Step]] = {}
        doc = sk.doc
        if doc is None:
            return out
        for _, st in doc.steps():
            if st.kind == "collect":
                c = st.str_field("collect")
                if c:
                    out.setdefault(c[0], []).append(st)
        return out

    def settable_fields(self, sk: Skill) -> set[str]:
        """Fields of ``sk`` the model may set: ``llm_settable``, or filled by a collect."""
        md = sk.memdoc
        names = {f.name for f in md.fields if f.llm_settable} if md else set()
        return names | (set(self.collect_steps(sk)) & set(sk.field_names()))

    # -- backticked names in model-facing text ------------------------------------------
    def mention_order(self, sid: str | None, name: str) -> list[SymbolKey]:
        """What a backticked bare `` `name` `` in model-facing text of skill ``sid`` (None:
        a project-level file) may denote, nearest first: the skill's own field, its own
        tool, a project field, a shared tool, a skill of that id. The first that exists
        is what the mention denotes there (:meth:`mention_denotes`)."""
        out: list[SymbolKey] = []
        if sid is not None:
            out += [("field", sid, name), ("tool", sid, name)]
        out += [("field", "project", name), ("tool", "", name), ("skill", name)]
        return out

    def mention_denotes(self, sid: str | None, name: str) -> SymbolKey | None:
        """The symbol a backticked bare `` `name` `` denotes in model-facing text of skill
        ``sid`` (see :meth:`mention_order`); None when it denotes none of them (it may
        then name another skill's field, a tool parameter, or anything else)."""
        for key in self.mention_order(sid, name):
            if self._exists(key):
                return key
        return None

    def _exists(self, key: SymbolKey) -> bool:
        p = self.p
        kind = key[0]
        if kind == "field":
            if key[1] == "project":
                return p.project_field(key[2]) is not None
            sk = p.skill(key[1])
            return sk is not None and sk.field(key[2]) is not None
        if kind == "skill":
            return p.has_skill(key[1])
        return bool(p.index.lookup(key))

    # -- readers and writers ---------------------------------------------------------------
    def readers(self, ns: str, entry: str) -> list[Reference]:
        """The places that read field ``ns.entry`` (:func:`reads`), by file and position."""
        refs = self.p.index.references_to(("field", ns, entry))
        return in_order(r for r in refs if reads(r))

    def writers(self, ns: str, entry: str) -> list[Reference]:
        """The places that write field ``ns.entry`` (:func:`writes`), by file and position;
        what else gives it a value is :meth:`field_writers`."""
        refs = self.p.index.references_to(("field", ns, entry))
        return in_order(r for r in refs if writes(r))

    def field_writers(self, ns: str, entry: str) -> tuple[str, ...]:
        """What gives field ``ns.entry`` a value besides the references the index holds
        (the forms in :data:`WRITE_FORMS`), from its effective declaration:
        ``llm_settable`` (the model sets it), ``seed`` (the session start),
        ``initial_value`` (it holds one before any write), and ``engine`` for a field of
        a project skill that overrides a bundled default (the engine's handling of that
        skill may write it). A ``run_after_setting_<entry>`` tool is no writer: the
        engine runs it after a write of the field, never in its place."""
        if ns == "project":
            decl = self.p.project_field(entry)
            return decl.given_by if decl is not None else ()
        given = self.p.field_decls(ns, entry)[1]
        out = given.given_by if given is not None else ()
        return (*out, "engine") if ns in DEFAULT_SKILLS and ns in self.p.skills else out

    def unknown_keys_may_reach(self, ns: str, entry: str) -> bool:
        """Whether a writer whose key this analysis cannot know may write field
        ``ns.entry``: code that uses memory with computed keys (a shared tool or lib
        helper reaches every field; a skill's tools its own fields, the project's and
        other skills' public ones), a key that shared code names (a bare one may be any
        skill's field), or buttons a tool makes at run time (their ``set:`` payloads may
        write what a button of that skill may: its own fields and the project's). A
        data-flow finding (never written, unused) stays silent on such a field."""
        facts = self.code_memory_facts()
        if facts.anything:
            return True
        if entry in facts.shared_entries or f"{ns}.{entry}" in facts.shared_entries:
            return True
        sources, root_source = self.button_source_skills()
        if root_source:
            return True
        if ns == "project":
            return bool(sources) or bool(facts.dynamic_skills)
        if ns in sources or ns in facts.dynamic_skills:
            return True
        public = self.p.field_decls(ns, entry)[0] is not None
        return public and bool(facts.dynamic_skills - {ns})

    def validation_hook(self, ns: str, entry: str) -> SymbolKey | None:
        """The memory validation tool the engine runs after a settable write of field
        ``ns.entry``: the ``run_after_setting_<entry>`` tool of skill ``ns``, when it
        defines one (shared ones never run; project fields have none)."""
        if ns == "project":
            return None
        key: SymbolKey = ("tool", ns, f"{HOOK_PREFIX}{entry}")
        return key if key in self.p.index.symbols else None

    def code_memory_facts(self) -> CodeMemoryFacts:
        """Which keys shared tools and lib helpers name, and which code uses memory with
        keys that cannot be known (so no field it could reach may be called unused)."""
        if self._code is None:
            p = self.p
            anything = False
            entries: set[str] = set()
            for pf, mod in [*p.shared_tool_files(), *p.helper_files()]:
                found = code_memory(p, pf.path, mod)
                anything = anything or found.dynamic
                entries |= found.entries
            self._code = CodeMemoryFacts(
                anything,
                frozenset(entries),
                p.dynamic_memory_skills(),
            )
        return self._code

    def button_source_skills(self) -> tuple[frozenset[str], bool]:
        """The skills whose responses take their buttons from a tool, and whether the
        project-root responses do: such buttons are made at run time, and their ``set:``
        payloads may write any field a button of that skill may write."""
        return self.p.tool_button_sources()

    # -- tools ----------------------------------------------------------------------------
    def imports_module(self, importer: Path, t: ToolDef) -> bool:
        """``t`` is a name imported from a project package that is itself a module of the
        project (``from lib import user_location`` with ``lib/user_location.py``): a
        module, never a tool."""
        if t.imported is None:
            return False
        module, level, name = t.imported
        if not level:
            return self.p.module_exists(f"{module}.{name}" if module else name)
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        target = base.joinpath(*[part for part in module.split(".") if part], name)
        py, init = target.with_suffix(".py"), target / "__init__.py"
        p = self.p
        return py in p.files or init in p.files or p.sees_file(py) or p.sees_dir(target)

    def tools_in(self, pf: ParsedFile, mod: ToolModule) -> list[ToolDef]:
        """The tools (and possible tools) a tool module defines: its bindings that may hold
        a tool, without the project modules it imports by name."""
        cached = self._tools_in.get(pf.path)
        if cached is None:
            cached = self._tools_in[pf.path] = [
                t for t in mod.tools if not self.imports_module(pf.path, t)
            ]
        return cached

    def tool_defs(self, sk: Skill, doc: SkillDoc | None, name: str) -> list[ToolDef]:
        """The definitions ``name`` may stand for in skill ``sk``: its own tools of that
        name and the shared ones it declares (both, when it does both: which one runs is
        not known here); MCP and framework tools have none."""
        own = [t for pf, mod in sk.tool_modules() for t in self.tools_in(pf, mod) if t.name == name]
        if name not in self._declared_shared(doc):
            return own
        return own + [
            t
            for pf, mod in self.p.shared_tool_files()
            for t in self.tools_in(pf, mod)
            if t.name == name
        ]

    def tool_signature(self, sk: Skill, doc: SkillDoc | None, name: str) -> ToolDef | None:
        """The one definition of tool ``name`` (as skill ``sk`` sees it) whose parameters
        the module shows; None for an MCP or framework tool, a factory-made or imported
        one, or a name defined more than once (or also imported from an MCP server)."""
        defs = self.tool_defs(sk, doc, name)
        if len(defs) != 1 or defs[0].kind == "possible" or name in self.mcp_tools(doc):
            return None
        t = defs[0]
        return t if t.exact or t.signature else None

    @staticmethod
    def _declared_shared(doc: SkillDoc | None) -> set[str]:
        """The shared tool names a skill declares (gates, block tools, ``import_tools``)."""
        if doc is None:
            return set()
        names = {g.name for g in doc.gate_tools} | {g.name for b in doc.blocks for g in b.tools}
        return names | {i.value for i in doc.import_tools if not i.value.startswith("mcp/")}

    def local_tools(self, sk: Skill) -> frozenset[str]:
        """The tools defined in skill ``sk``'s own tool modules."""
        found = self._local.get(sk.id)
        if found is None:
            found = self._local[sk.id] = frozenset(
                t.name for pf, mod in sk.tool_modules() for t in self.tools_in(pf, mod)
            )
        return found

    def shared_tools(self) -> set[str]:
        """The tools defined in the project's ``tools/`` folder."""
        if self._shared is None:
            self._shared = {
                t.name for pf, mod in self.p.shared_tool_files() for t in self.tools_in(pf, mod)
            }
        return self._shared

    @staticmethod
    def mcp_tools(doc: SkillDoc | None) -> dict[str, str]:
        """``mcp/<server>:<tool>`` imports of a skill: tool name → server."""
        out: dict[str, str] = {}
        for item in doc.import_tools if doc is not None else ():
            v = item.value
            if v.startswith("mcp/") and ":" in v:
                server, _, name = v[4:].partition(":")
                out[name] = server
        return out

    def visible_tools(self, sk: Skill, doc: SkillDoc | None) -> set[str]:
        """The tools skill ``sk`` may use: its own, the shared tools it declares (through
        ``tool_constraints``, a block's ``tools`` or ``import_tools``) and its MCP imports.
        With ``doc`` None: its own tools only."""
        key = sk.id if doc is not None else f"{sk.id}/local"
        cached = self._visible.get(key)
        if cached is None:
            names = set(self.local_tools(sk))
            if doc is not None:
                declared = {g.name for g in doc.gate_tools}
                declared |= {g.name for b in doc.blocks for g in b.tools}
                declared |= {i.value for i in doc.import_tools if not i.value.startswith("mcp/")}
                names |= declared & self.shared_tools()
                names |= set(self.mcp_tools(doc))
            cached = self._visible[key] = names
        return cached

    def tool_visible(self, sk: Skill, doc: SkillDoc | None, name: str) -> bool:
        """``name`` is a tool ``sk`` may use, or may be one: factory-made tools
        ("possible" bindings) of its own or the shared modules are never reported missing."""
        if name in self.visible_tools(sk, doc):
            return True
        for pf, mod in [*sk.tool_modules(), *self.p.shared_tool_files()]:
            if any(t.name == name and t.kind == "possible" for t in self.tools_in(pf, mod)):
                return True
        return False

    # -- responses ------------------------------------------------------------------------
    def response_names(self) -> set[str]:
        """Every response the merged registry defines."""
        return {k[1] for k in self.p.index.symbols if k[0] == "response"}

    def response_exists(self, name: str) -> bool:
        return bool(self.p.index.lookup(("response", name)))

    def effective_response(self, name: str) -> Response | None:
        """The response that wins for ``name``: the root file, else the last skill file."""
        prf = self.p.project_responses
        if prf is not None and isinstance(prf.doc, ResponsesDoc):
            r = prf.doc.get(name)
            if r is not None:
                return r
        found = None
        for sk in self.p.skills.values():
            rd = sk.respdoc
            if rd is not None and rd.get(name) is not None:
                found = rd.get(name)
        return found

    def response_users(self, name: str) -> set[str]:
        """Project skills that deliver ``name`` (action, utterance, gates, triggers)."""
        if not name.startswith("utter_"):
            return set()
        return {
            ref.skill
            for ref in self.p.index.references_to(("response", name))
            if ref.skill is not None and ref.skill in self.p.skills
        }

    def used_preconditions(self) -> set[str]:
        """The precondition names some skill declares (the engine checks only the
        bindings of those)."""
        used: set[str] = set()
        for sid in self.p.skills:
            name = self.p.precondition(sid)
            if name is not None and name.strip():
                used.add(name.strip())
        return used

    # -- which skills load ----------------------------------------------------------------
    def load_failure(self, sid: str) -> LoadFailure | None:
        """Why rasa-pro fails to load the project's skill folder ``sid``: the first cause
        (no skill.md, a compile error, a memory.yml it cannot load, …), or None when it
        loads (or there is no such folder). See :meth:`Skill.load_failure`."""
        if sid not in self._load:
            self._load[sid] = self.p.load_failure(sid)
        return self._load[sid]

    def dropped(self, sid: str) -> LoadFailure | None:
        """Why skill ``sid`` is missing from rasa-pro's catalog although the project has a
        folder of that name: the folder fails to load, and no bundled default skill of
        that id stands in (an override that fails leaves the bundled skill in place).
        Every ``@skill`` / ``call`` / ``link`` to it then fails too."""
        if sid in DEFAULT_SKILLS or sid not in self.p.skills:
            return None
        return self.load_failure(sid)

    # -- skills and flows -------------------------------------------------------------------
    def skill_targets(self, sid: str) -> dict[str, set[str]]:
        """The skills that ``sid`` starts: ``call`` / ``link`` steps and ``@skill`` tokens,
        by form (``call``, ``link``, ``mention``)."""
        out: dict[str, set[str]] = {"call": set(), "link": set(), "mention": set()}
        sk = self.p.skill(sid)
        doc = sk.doc if sk is not None else None
        if doc is None:
            return out
        own = f"{sid}__"
        blocks = {b.id for b in doc.blocks if b.id}
        for _, st in doc.steps():
            for kind in ("call", "link"):
                t = st.str_field(kind)
                if t is None:
                    continue
                target = t[0]
                local = target[len(own) :] if target.startswith(own) else target
                if local in blocks or "__" in target or not self.p.has_skill(target):
                    continue
                out[kind].add(target)
        for tok in doc.tokens:
            if tok.kind == "skill" and self.p.has_skill(tok.parts[0][0]):
                out["mention"].add(tok.parts[0][0])
        return out

    @staticmethod
    def block_edges(sid: str, doc: SkillDoc) -> dict[str, set[str]]:
        """Same-skill block → block edges made by ``call:`` / ``link:`` steps."""
        ids = {b.id for b in doc.blocks if b.id}
        own = f"{sid}__"
        edges: dict[str, set[str]] = {b: set() for b in ids}
        for blk in doc.blocks:
            if not blk.id:
                continue
            for st in blk.steps:
                for kind in ("call", "link"):
                    t = st.str_field(kind)
                    if t is None:
                        continue
                    target = t[0][len(own) :] if t[0].startswith(own) else t[0]
                    if target in ids:
                        edges[blk.id].add(target)
        return edges

    @classmethod
    def entry_blocks(cls, sid: str, doc: SkillDoc) -> list[Block]:
        """The blocks no other block of the same skill calls or links."""
        edges = cls.block_edges(sid, doc)
        targeted = {t for src, ts in edges.items() for t in ts if t != src}
        return [b for b in doc.blocks if b.id and b.id not in targeted]

    @staticmethod
    def step_exits(blk: Block, i: int) -> list[StepExit]:
        """Where step ``i`` of ``blk`` may go, each way labelled: its ``next`` targets (a
        plain one, a branch's ``then`` or ``else``), or on to the following step; ``END``
        (``target`` None) where the block ends (a ``next: END``, the last step running
        on), and ``next`` targets that name no step (``missing``); none after ``link`` and
        an ``END`` step."""
        st = blk.steps[i]
        ids = {s.id: j for j, s in enumerate(blk.steps) if s.id}
        if st.kind in ("link", "end"):
            return []
        if st.next_node is None or (st.branches and not st.next_targets()):
            nxt = i + 1 if i + 1 < len(blk.steps) else None
            return [StepExit("sequence", nxt, None, "", None)]

        def to(kind: ExitKind, node: YScalar, cond: str | None) -> StepExit:
            name = str(node.value)
            if name in ids:
                return StepExit(kind, ids[name], cond, name, node)
            if name == "END":
                return StepExit(kind, None, cond, name, node)
            return StepExit(kind, None, cond, name, node, missing=True)

        if isinstance(st.next_node, YScalar) and isinstance(st.next_node.value, str):
            return [to("next", st.next_node, None)]
        out: list[StepExit] = []
        for b in st.branches:
            cond = None
            if isinstance(b.if_node, YScalar):
                cond = str(b.if_node.value)
            for kind, n in (("if", b.then_node), ("else", b.else_node)):
                if isinstance(n, YScalar) and isinstance(n.value, str):
                    out.append(to(kind, n, cond if kind == "if" else None))  # type: ignore[arg-type]
        return out

    @classmethod
    def reachable_steps(cls, blk: Block) -> set[int] | None:
        """The steps of ``blk`` (by index) some path from its first step reaches; None
        when a ``next`` of any step names no step of the block (which path was meant is
        unknown)."""
        if not blk.steps:
            return set()
        ids = {s.id for s in blk.steps if s.id}
        if any(
            t.value != "END" and t.value not in ids for s in blk.steps for t in s.next_targets()
        ):
            return None
        exits = [cls.step_exits(blk, j) for j in range(len(blk.steps))]
        seen, todo = {0}, [0]
        while todo:
            for e in exits[todo.pop()]:
                if e.target is not None and e.target not in seen:
                    seen.add(e.target)
                    todo.append(e.target)
        return seen

    # -- the evaluation's names (docs/language/eval.md#what-each-name-must-be) -------------
    def skills_named(self, name: str) -> list[str]:
        """Project skills whose frontmatter `name:` is ``name`` (a display label, never
        the id that events carry)."""
        out = []
        for sid, sk in self.p.skills.items():
            doc = sk.doc
            if doc is not None and doc.fm_str("name") == name and sid != name:
                out.append(sid)
        return out

    def eval_step_ids(self, sid: str, block: str | None = None) -> set[str] | None:
        """The step ids a skill event of ``sid`` can carry (``autonomous`` for prose, a step
        of one of its blocks, `END`); with ``block``, those of that block. None when not
        known here (a bundled skill, a skill whose skill.md does not parse)."""
        sk = self.p.skill(sid)
        doc = sk.doc if sk is not None else None
        if doc is None:
            return None
        out = {"END"} if block is not None else {AUTONOMOUS_STEP, "END"}
        for b in doc.blocks:
            if block is None or b.id == block:
                out.update(st.id for st in b.steps if st.id)
        return out

    def eval_block_ids(self, sid: str) -> list[str] | None:
        """The ordered blocks of skill ``sid`` by their authored id; None when not known
        here (a bundled skill, a skill whose skill.md does not parse)."""
        sk = self.p.skill(sid)
        doc = sk.doc if sk is not None else None
        if doc is None:
            return None
        return [b.id for b in doc.blocks if b.id]

    def _declaring(self, entry: str) -> list[str]:
        """The namespaces that declare a field ``entry``: `project`, then skills (bundled
        ones not overridden included)."""
        out = ["project"] if self.p.project_field(entry) is not None else []
        for sid in self.p.catalog_ids():
            if self._skill_field(sid, entry) is not None:
                out.append(sid)
        return out

    def _skill_field(self, sid: str, entry: str) -> FieldType | None:
        sk = self.p.skill(sid)
        if sk is not None:
            f = sk.field(entry)
            if f is None:
                return None
            facts = f.facts
            return FieldType(facts.type, facts.enum_values, facts.enum_booleans)
        dflt = DEFAULT_SKILLS.get(sid)
        for df in dflt.public_fields if dflt is not None else ():
            if df.name == entry:
                return FieldType(df.type, (), {})
        return None

    def tracker_key(self, name: str) -> TrackerKey:
        """What the tracker key ``name`` of a scenario names: `project.<f>` for a field of
        the project memory.yml, `<skill>.<f>` for a field of that skill (public or
        private, bundled skills included), `system.<entry>` for the engine's own entries.
        Anything else is never written, and the answer says what was probably meant."""
        ns, dot, entry = name.partition(".")
        if ns == "session" and dot:
            inner = self.tracker_key(entry)
            meant = entry if inner.kind == "ok" else inner.meant
            return TrackerKey("session", meant, inner.candidates)
        if not dot:
            owners = self._declaring(name)
            keys = tuple(f"{o}.{name}" for o in owners)
            return TrackerKey("bare", keys[0] if len(keys) == 1 else None, keys)
        if ns == "system":
            if entry in SYSTEM_MEMORY_ENTRIES:
                return TrackerKey("ok", owner="system")
            cands = tuple(f"system.{e}" for e in SYSTEM_MEMORY_ENTRIES)
            return TrackerKey("system_unknown", None, cands)
        if ns in ("project", *self.p.skills) and self._memory_unknown(ns):
            return TrackerKey("ok", owner=ns)  # its memory.yml does not load: not judged
        if ns == "project":
            f = self.p.project_field(entry)
            if f is not None:
                facts = f.facts
                ft = FieldType(facts.type, facts.enum_values, facts.enum_booleans)
                return TrackerKey("ok", field=ft, owner="project")
            names = self.p.project_memory.fields if self.p.project_memory else []
            cands = tuple(dict.fromkeys(f"project.{fd.name}" for fd in names))
            others = [o for o in self._declaring(entry) if o != "project"]
            if len(others) == 1:
                return TrackerKey("wrong_scope", f"{others[0]}.{entry}", cands)
            return TrackerKey("undeclared", None, cands)
        if self.p.has_skill(ns):
            found = self._skill_field(ns, entry)
            if found is not None:
                return TrackerKey("ok", field=found, owner=ns)
            sk = self.p.skill(ns)
            if sk is not None:
                fields = sk.field_names()
            else:
                fields = [df.name for df in DEFAULT_SKILLS[ns].public_fields]
            cands = tuple(f"{ns}.{n}" for n in fields)
            others = [o for o in self._declaring(entry) if o != ns]
            if len(others) == 1:
                return TrackerKey("wrong_scope", f"{others[0]}.{entry}", cands)
            return TrackerKey("undeclared", None, cands)
        owners = self._declaring(entry)
        meant = f"{owners[0]}.{entry}" if len(owners) == 1 else None
        return TrackerKey("unknown_namespace", meant, ("project", "system",
                                                      *self.p.catalog_ids()))  # fmt: skip

    def _memory_unknown(self, ns: str) -> bool:
        """The memory.yml of ``ns`` (`project` or a skill) exists but does not load: its
        fields are not known (the engine reports the file; nothing else is judged on it)."""
        if ns == "project":
            pf, doc = self.p.project_memory_file(), self.p.project_memory
        else:
            sk = self.p.skill(ns)
            pf, doc = (sk.memory, sk.memdoc) if sk is not None else (None, None)
        return pf is not None and (doc is None or not doc.loads)

    def eval_tools(self) -> EvalTools:
        """Every tool name a `tool_executed` may hold, by source."""
        if self._eval_tools is None:
            local: set[str] = set(FRAMEWORK_TOOLS)
            possible: set[str] = set()
            complete = True
            mcp: dict[str, set[tuple[str, str]]] = {}
            modules = [m for sk in self.p.skills.values() for m in sk.tool_modules()]
            modules += self.p.shared_tool_files()
            for pf, mod in modules:
                if pf.syntax_error() is not None:
                    complete = False
                for t in self.tools_in(pf, mod):
                    (possible if t.kind == "possible" else local).add(t.name)
            for sk in self.p.skills.values():
                if sk.tools and any(not isinstance(t.doc, ToolModule) for t in sk.tools):
                    complete = False
                for tool, server in self.mcp_tools(sk.doc).items():
                    mcp.setdefault(tool, set()).add((server, sk.id))
            self._eval_tools = EvalTools(
                frozenset(local),
                frozenset(possible),
                complete,
                {k: frozenset(v) for k, v in mcp.items()},
            )
        return self._eval_tools

    def eval_tool_params(self, name: str, sid: str | None) -> tuple[str, ...] | None:
        """The parameters of local tool ``name`` (as skill ``sid`` sees it, or the one
        definition of that name in the project), when its `def` shows them exactly; None
        when not known (defined several times, factory-made, takes ``**kwargs``, a
        framework or MCP tool)."""
        if name in FRAMEWORK_TOOLS:
            return None
        sk = self.p.skill(sid) if sid is not None else None
        if sk is not None:
            t = self.tool_signature(sk, sk.doc, name)
            defs = [t] if t is not None else []
        else:
            mods = [m for s in self.p.skills.values() for m in s.tool_modules()]
            mods += self.p.shared_tool_files()
            defs = [t for pf, mod in mods for t in self.tools_in(pf, mod) if t.name == name]
        if len(defs) != 1:
            return None
        t = defs[0]
        if t.kind == "possible" or not (t.exact or t.signature) or t.var_keyword:
            return None
        return t.params

    def eval_tool_seen_by(
        self, sid: str, name: str, source: str, server: str | None
    ) -> bool | None:
        """Whether skill ``sid`` can run tool ``name`` from ``source``, so that the event
        carries its id; None when not known here (a bundled skill, or no skill.md)."""
        sk = self.p.skill(sid)
        doc = sk.doc if sk is not None else None
        if sk is None or doc is None:
            return None
        if source == "mcp":
            return self.mcp_tools(doc).get(name) == server
        if name in FRAMEWORK_TOOLS:
            return True
        return self.tool_visible(sk, doc, name)

    # -- a scenario's names as the agent's symbols (hover, references, rename) -------------
    def eval_symbols(self, ref: EvalRef) -> list[tuple[SymbolKey, TextRange]]:
        """The symbols a name of a scenario stands for, each with the part of the name
        that spells it (`card.reason` names the skill `card` and its field `reason`),
        matched the way the runtime matches it. Nothing for what is no symbol (an
        argument, an MCP tool's name, `END`, `autonomous`) or does not resolve to one."""
        kind, text, rng = ref.kind, ref.text, ref.range
        if kind == "skill":
            return [(("skill", text), rng)]
        if kind == "response":
            return [(("response", text), rng)]
        if kind == "mcp_server":
            return [(("mcp", text), rng)]
        if kind == "block":
            return [(("block", ref.qualifier, text), rng)] if ref.qualifier else []
        if kind == "step":
            a = ref.assertion
            block = a.block.text if a is not None and a.block is not None else None
            key = self.eval_step_key(ref.qualifier, block, text) if ref.qualifier else None
            return [(key, rng)] if key is not None else []
        if kind in ("memory", "initial_slot"):
            spelled = ref.name.spelled
            return self.eval_memory_symbols(text, rng, spelled, kind == "initial_slot")
        if kind in ("tool", "expected_tool") and ref.qualifier is None:  # not an MCP tool
            call = ref.assertion.tool if ref.assertion is not None else None
            sid = call.skill.text if call is not None and call.skill is not None else None
            tool = self.eval_tool_key(text, sid)
            return [(tool, rng)] if tool is not None else []
        return []

    def eval_step_key(self, sid: str, block: str | None, step: str) -> SymbolKey | None:
        """The step ``step`` of skill ``sid`` a skill or block event names: in ``block``,
        or without one in the one ordered block of the skill that has such a step."""
        sk = self.p.skill(sid)
        doc = sk.doc if sk is not None else None
        if doc is None or step in ("END", AUTONOMOUS_STEP):
            return None
        blocks = [
            b.id
            for b in doc.blocks
            if b.id and (block is None or b.id == block) and any(st.id == step for st in b.steps)
        ]
        return ("step", sid, blocks[0], step) if len(blocks) == 1 else None

    def eval_memory_symbols(
        self, name: str, rng: TextRange, spelled: bool, slot: bool
    ) -> list[tuple[SymbolKey, TextRange]]:
        """The field a tracker key names (and the skill of its namespace, when each part
        has its own range: ``spelled``); for an initial slot ``slot`` also a bare seed
        project field, which the session start sets."""
        ns, dot, entry = name.partition(".")
        if not dot:
            f = self.p.project_field(name) if slot else None
            return [(("field", "project", name), rng)] if f is not None and f.seed else []
        if ns not in ("project", "system") and not self.p.has_skill(ns):
            return []
        if not spelled:
            return [(("field", ns, entry), rng)]
        at = rng.start + len(ns) + 1
        out: list[tuple[SymbolKey, TextRange]] = [(("field", ns, entry), TextRange(at, rng.end))]
        if ns not in ("project", "system"):
            out.insert(0, (("skill", ns), TextRange(rng.start, rng.start + len(ns))))
        return out

    def eval_tool_key(self, name: str, sid: str | None) -> SymbolKey | None:
        """The local tool a `tool_executed` names: the tool of skill ``sid`` (its own, or
        the shared one), else the one place that defines ``name``; a framework or unknown
        tool as a shared name; None when several skills define it (any of them matches)."""
        if self._tool_owners is None:
            owners: dict[str, list[str]] = {}
            for sk in self.p.skills.values():
                for pf, mod in sk.tool_modules():
                    for t in self.tools_in(pf, mod):
                        if sk.id not in owners.setdefault(t.name, []):
                            owners[t.name].append(sk.id)
            for pf, mod in self.p.shared_tool_files():
                for t in self.tools_in(pf, mod):
                    if "" not in owners.setdefault(t.name, []):
                        owners[t.name].append("")
            self._tool_owners = owners
        found = self._tool_owners.get(name, [])
        if sid is not None and sid in found:
            return ("tool", sid, name)
        if sid is not None and "" in found and self.p.skill(sid) is not None:
            return ("tool", "", name)
        if len(found) > 1:
            return None
        return ("tool", found[0] if found else "", name)


def in_order(refs: Iterable[Reference]) -> list[Reference]:
    """References by file and position: the same list however the index was built (one
    process, or several workers)."""
    return sorted(refs, key=lambda r: (str(r.path), r.range.start, r.range.end))


def _effective(fields: list[MemoryField], lookup: object) -> list[MemoryField]:
    """One declaration per name, as it takes effect (``lookup`` is ``MemoryDoc.field``)."""
    out = []
    for name in dict.fromkeys(f.name for f in fields):
        f = lookup(name)  # type: ignore[operator]
        if f is not None:
            out.append(f)
    return out
