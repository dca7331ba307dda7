"""One Mantle project: its parsed files, skills, and the symbol/reference index.

Files are parsed one at a time (:meth:`Project.set_source`), so an edit re-parses only the
edited file. The index (symbols and references) is derived from the parsed files and
rebuilt lazily after a change; :meth:`Project.set_source` reports which files'
diagnostics may have changed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..syntax.config_yml import AgentDoc, IntegrationsDoc
from ..syntax.memory_yml import FieldFacts, MemoryDoc, MemoryField
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.tools_py import ToolModule
from . import layout
from .defaults import DEFAULT_SKILLS
from .engine import DEFAULT_PROFILE, PROFILES, detect_profile
from .files import LoadFailure as LoadFailure
from .files import ParsedFile as ParsedFile
from .files import PendingFile as PendingFile
from .files import Reader as Reader
from .files import Skill as Skill
from .files import parse_file as parse_file
from .layout import DISK, FileKind, Layout
from .source import C_UNREADABLE, Source, read_source
from .symbols import (
    WRITE_FORMS,
    CodeMemory,
    Index,
    SymbolKey,
    build_index,
    code_memory,
    memory_keys_unknown,
    update_files,
)

if TYPE_CHECKING:
    from ..syntax.hooks_py import HookModule


@contextlib.contextmanager
def bulk_work(keep: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while many long-lived objects are created
    (parsing a whole project, building its index): otherwise each collection rescans the
    growing heap, which more than doubled the load time of a 1,000-skill project.
    Reference counting still frees everything that is not in a cycle.

    With ``keep``, the objects alive at the end are frozen (``gc.freeze``) before the
    collector resumes: they are meant to live on (a server's index, a check's projects
    until the process exits). Otherwise the first collection after the batch would scan
    all of them once only to find them alive: the first edit after a 1,000-skill index
    took 1.2 s without the freeze, 0.09 s with it (docs/performance.md, tenth round). A
    frozen object is freed by reference counting only: tests/test_frozen_heap.py holds
    that nothing a project keeps forms a cycle."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if keep:
                gc.freeze()
            gc.enable()


def _referred_keys(index: Index, paths: Iterable[Path]) -> set[tuple[SymbolKey, Path, int, str]]:
    """Where ``paths`` refer to which symbol (soft mentions included: they count
    elsewhere): a finding on a definition may list its uses (`lsp.memory.never_written`
    names the places that read a field), so any use that appears, vanishes or moves
    counts."""
    return {(r.key, p, r.range.start, r.form) for p in paths for r in index.references_in(p)}


def _written_fields(refs: Iterable[tuple[SymbolKey, Path, int, str]]) -> set[SymbolKey]:
    """The fields written by some of ``refs``, wherever in their files."""
    return {key for key, _, _, form in refs if form in WRITE_FORMS and key[0] == "field"}


class SkillFacts(NamedTuple):
    engine_managed: bool  # routing: engine_managed (or a bundled default that is)
    precondition: str | None  # the frontmatter's `precondition:` string, as written
    # its tools use memory with keys that cannot be known statically (symbols.code_memory)
    dynamic_memory: bool = False
    # its responses.yml takes buttons from a tool (see Semantics.button_source_skills)
    tool_buttons: bool = False
    # why rasa-pro fails to load it (Skill.load_failure), as a JSON-friendly row
    load_failure: LoadFailure | None = None

    @classmethod
    def from_json(cls, row: Sequence[Any]) -> SkillFacts:
        """The facts as another process sent them (tuples arrive as lists)."""
        failure = LoadFailure(*row[4]) if row[4] else None
        return cls(row[0], row[1], row[2], row[3], failure)


# a skill's fields by name: (the public declaration, the effective one), see field_decls
FieldTable = dict[str, tuple[FieldFacts | None, FieldFacts | None]]


def _declarations(sk: Skill, name: str) -> tuple[FieldFacts | None, FieldFacts | None]:
    """(public declaration, effective declaration) of field ``name`` of ``sk``, as facts."""
    public, effective = sk.public_field(name), sk.field(name)
    return (
        public.facts if public is not None else None,
        effective.facts if effective is not None else None,
    )


# the kinds of file whose change may change dynamic_memory_skills or tool_button_sources
_FACT_KINDS = frozenset(
    {
        FileKind.SKILL_TOOLS,
        FileKind.SHARED_TOOLS,
        FileKind.HELPER,
        FileKind.SKILL_RESPONSES,
        FileKind.PROJECT_RESPONSES,
    }
)


class Project:
    def __init__(self, root: Path, reader: Reader = read_source, fs: Layout = DISK) -> None:
        self.root = root
        # the two doors to the disk: file contents (open editor buffers first) and what
        # exists (listings, stats; the server's is kept current from its file events)
        self.reader = reader
        self.fs = fs
        # see sees_file: each path asked, with the kind of thing it was (stat.S_IFMT; None:
        # nothing), so that a layout taking the project over knows what its rules saw
        self.disk_questions: dict[str, int | None] = {}
        self.files: dict[Path, ParsedFile] = {}
        self.skill_dir_names: list[str] = []
        self._skills: dict[str, Skill] | None = None
        self._index: Index | None = None
        # the files the index holds when it is not all of them (load_around)
        self.indexed: set[Path] | None = None
        self._shared_tools: list[tuple[ParsedFile, ToolModule]] | None = None
        self.engine_override: str | None = None  # "3.21" / "3.22", set by the CLI or editor
        self._detected_engine: tuple[str | None] | None = None
        self.known_facts: dict[str, SkillFacts] = {}  # see skill_facts
        self.known_fields: dict[str, FieldTable] = {}  # see field_decls
        self._pending: list[Path] = []  # files left as PendingFile (see materialize)
        # facts of every skill that data-flow checks read on each run: computed once, and
        # again after a change to code, responses or the set of skills (facts_changed)
        self._dynamic_skills: frozenset[str] | None = None
        self._by_kind: tuple[dict[FileKind, list[Path]], dict[FileKind, list[Path]]] | None = None
        self._modules: dict[str, bool] = {}  # module_exists, until a file appears or vanishes
        self._folders: frozenset[str] | None = None  # the folders holding project files
        self._button_sources: tuple[frozenset[str], bool] | None = None

    # -- loading -----------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        root: Path,
        reader: Reader = read_source,
        new: Iterable[Path] = (),
        fs: Layout = DISK,
    ) -> Project:
        """The project at ``root``, its files read through ``reader``; ``new``: files not
        on disk that ``reader`` has (created by ``check --fix``), taken as the project's."""
        p = cls(root, reader, fs)
        files = list(layout.project_files(root, fs))
        have = {path for path, _, _ in files}
        for path in new:
            c = layout.classify(path, root)
            if c is not None and path not in have:
                files.append((path, *c))
        p._read(files, None)
        return p

    @classmethod
    def load_partial(
        cls,
        root: Path,
        files: list[tuple[Path, FileKind, str | None]],
        owned: set[Path],
        reader: Reader = read_source,
        fs: Layout = DISK,
        read_now: bool = True,
    ) -> Project:
        """A project whose ``owned`` files are parsed now and the others on first use
        (:class:`PendingFile`): what one worker of a parallel check needs. The others are
        read now, unless ``read_now`` is False: a project no file event will reach (one
        ``check`` run, a worker's share, a first look) reads them on first use too."""
        p = cls(root, reader, fs)
        p._read(files, owned, read_now)
        return p

    @classmethod
    def load_around(
        cls,
        root: Path,
        files: list[tuple[Path, FileKind, str | None]],
        sid: str,
        reader: Reader = read_source,
        fs: Layout = DISK,
    ) -> Project:
        """What the diagnostics of skill ``sid``'s files need, and no more: that skill's
        files and the project-level files are parsed now, with the responses.yml files of
        other skills whose text names a response the skill uses (all of them when one of
        those responses is defined nowhere: the did-you-mean needs every name); the other
        files on first use (a neighbour's memory.yml a condition reads, a routing target's
        skill.md). Its index holds the entries of the files parsed now only, so the rules
        that read every file's references (``Rule.whole_project``) cannot run on it: the
        server uses it for the documents open at start-up, until the whole project is
        loaded."""
        owned = {path for path, _, owner in files if owner == sid or owner is None}
        # a look taken at once and dropped when the whole project is loaded (no file
        # event is handled meanwhile: they wait for the index, lsp/gate.py): the files it
        # never touches are not even read
        p = cls.load_partial(root, files, owned, reader, fs, read_now=False)
        idx = build_index(p, owned)
        used = {r.key[1] for r in idx.references if r.key[0] == "response"}
        others = [
            path
            for path, kind, owner in files
            if kind == FileKind.SKILL_RESPONSES and path not in owned
        ]
        if used:
            named = {path for path in others if any(n in p.files[path].source.text for n in used)}
            if named:
                owned |= named
                idx = build_index(p, owned)
            if not all(("response", n) in idx.symbols for n in used):
                owned |= set(others)
                idx = build_index(p, owned)
        p._index = idx
        p.indexed = owned
        p._pending = []  # never materialized as a whole: it is dropped after the index
        return p

    def index_more(self, paths: Iterable[Path]) -> None:
        """Add the entries of more files to the index of a project loaded around one
        skill (:meth:`load_around`), parsing them (``first_look_complete`` looks for the
        writers of a field this way)."""
        if self.indexed is None:
            return  # a whole project: everything is indexed
        new = {p for p in paths if p in self.files and p not in self.indexed}
        if new:
            with bulk_work():
                update_files(self, self.index, new, bundled=False)
            self.indexed |= new

    def rescan(self) -> None:
        """(Re)read every file of the project from ``reader``."""
        self._read(list(layout.project_files(self.root, self.fs)), None)

    def _read(
        self,
        files: list[tuple[Path, FileKind, str | None]],
        owned: set[Path] | None,
        read_now: bool = True,
    ) -> None:
        """Parse ``files`` (only the ``owned`` ones now, when given; the others on use)."""
        with bulk_work():
            self.files = {}
            self.skill_dir_names = [d.name for d in layout.skill_dirs(self.root, self.fs)]
            for path, kind, sid in files:
                if owned is None or path in owned:
                    self.files[path] = parse_file(path, kind, sid, self.reader(path))
                else:
                    self.files[path] = PendingFile(path, kind, sid, self.reader, read_now)
            self._pending = [p for p in self.files if owned is not None and p not in owned]
            if owned is None:
                self.known_facts = {}
                self.known_fields = {}
            self._invalidate()

    @property
    def has_pending(self) -> bool:
        """Whether some files are not parsed yet (a partial project's other workers')."""
        return bool(self._pending)

    def materialize(self, limit: int | None = None) -> int:
        """Parse up to ``limit`` pending files (all by default) and replace the index
        entries another process made for them by this process's own, which also carry
        the parsed objects (a field's type, a condition's tree) that editor features
        read. Once none is pending the project equals a whole one: the facts other
        processes reported (:attr:`known_facts`) are dropped. Returns how many remain."""
        todo = [p for p in self._pending if type(self.files.get(p)) is PendingFile]
        batch = todo if limit is None else todo[:limit]
        self._pending = todo[len(batch) :]
        if batch:
            with bulk_work(keep=True):
                for path in batch:
                    pending = self.files[path]
                    assert isinstance(pending, PendingFile)
                    parsed = pending._file()
                    self.files[path] = parsed
                    self._replace_in_skill(path, parsed.kind, parsed.skill_id, parsed)
                if self._index is not None:
                    update_files(self, self._index, set(batch), bundled=False)
        remaining = len(todo) - len(batch)
        if remaining == 0:
            self.known_facts = {}
            self.known_fields = {}
            self.facts_changed()
        return remaining

    def _invalidate(self) -> None:
        self._skills = None
        self._index = None
        self._shared_tools = None
        self._by_kind = None
        self._modules = {}
        self._folders = None
        self.facts_changed()

    def paths_by_kind(self, project_level: bool = False) -> dict[FileKind, list[Path]]:
        """The project's files by kind (with ``project_level``, only those outside every
        skill), kept until a file appears or vanishes."""
        if self._by_kind is None:
            every: dict[FileKind, list[Path]] = {}
            outside: dict[FileKind, list[Path]] = {}
            for path, pf in self.files.items():
                every.setdefault(pf.kind, []).append(path)
                if pf.skill_id is None:
                    outside.setdefault(pf.kind, []).append(path)
            self._by_kind = (every, outside)
        return self._by_kind[1 if project_level else 0]

    def facts_changed(self) -> None:
        """Forget :meth:`dynamic_memory_skills` and :meth:`tool_button_sources` (a file they
        read changed, or other workers' facts arrived)."""
        self._dynamic_skills = None
        self._button_sources = None

    def classify(self, path: Path) -> tuple[FileKind, str | None] | None:
        return layout.classify(path, self.root)

    def set_source(self, path: Path, source: Source | None) -> set[Path]:
        """Replace (or with ``None`` remove) one file; return the files whose diagnostics
        may change as a result.

        Only that file is parsed again. The index is updated for the file and the other
        files of its skill (their references resolve against each other); a change in the
        set of skills or in the project memory.yml rebuilds it.
        """
        c = self.classify(path)
        if c is None:
            return set()
        kind, sid = c
        index = self.index
        old_signature = index.signature_of(path)
        before = self._related(path, sid)
        old_refs = _referred_keys(index, before)
        existed = path in self.files
        old_code = self._code_facts_of(path)
        skills_before = (
            set(self.skills) if sid is not None and existed != (source is not None) else None
        )
        # whether rasa-pro loads the skill: references to it elsewhere fail when it does not
        decides_load = sid is not None and kind in (FileKind.SKILL_MD, FileKind.SKILL_MEMORY)
        old_failure = self.load_failure(sid) if decides_load and sid is not None else None
        if sid is not None:  # what other processes reported of this skill is stale now
            self.known_facts.pop(sid, None)
            self.known_fields.pop(sid, None)
        if source is None:
            self.files.pop(path, None)
        else:
            self.files[path] = parse_file(path, kind, sid, source)
        if existed != (source is not None):
            self._by_kind = None
            self._modules, self._folders = {}, None
        pf = self.files.get(path)
        skills_changed = False
        if skills_before is not None:
            # a file of a skill appeared or vanished: the skills are read again
            self.skill_dir_names = self._skill_names()
            self._skills = None
            skills_changed = kind is FileKind.SKILL_MD or set(self.skills) != skills_before
        if skills_changed:
            self._invalidate()
        else:
            self._replace_in_skill(path, kind, sid, pf)
            if kind is FileKind.SHARED_TOOLS:
                self._shared_tools = None
            if kind in _FACT_KINDS:
                self.facts_changed()
            if kind is FileKind.PROJECT_MEMORY:
                self._index = None  # bare names everywhere may now resolve differently
            else:
                owner = self.skill(sid) if sid is not None else None
                paths = {path, *(f.path for f in owner.files())} if owner else {path}
                bundled = sid in DEFAULT_SKILLS and kind in (
                    FileKind.SKILL_MD,
                    FileKind.SKILL_MEMORY,
                )
                update_files(self, index, paths, bundled)
        new_index = self.index
        affected = {path}
        owner = self.skill(sid) if sid is not None else None
        if owner is not None:
            affected.update(f.path for f in owner.files())
        new_signature = new_index.signature_of(path)
        for key, _ in old_signature ^ new_signature:
            affected.update(new_index.referencing_files(key))
        # a name that appeared or vanished changes the suggestions for unknown names of
        # its kind anywhere (`utter_x`, which no responses.yml defines; did you mean …?)
        born = {k for k, _ in old_signature} ^ {k for k, _ in new_signature}
        if born:
            affected.update(new_index.unresolved_referencing_files({k[0] for k in born}))
        # the other way round: a symbol that gained or lost a reference here (a field
        # now used, or no longer: lsp.memory.unused_field) may change its own file's
        # findings; the references of the whole skill were resolved again
        new_refs = _referred_keys(new_index, before | self._related(path, sid))
        moved = old_refs ^ new_refs
        for key, *_ in moved:
            affected.update(s.path for s in new_index.lookup(key) if s.path is not None)
        # a field that gained or lost a writer: what reads it may change (a condition a
        # never-written field decides, lsp.condition.constant_never_written)
        for key in _written_fields(old_refs) ^ _written_fields(new_refs):
            affected.update(new_index.referencing_files(key))
            affected.update(s.path for s in index.lookup(key) if s.path is not None)
        # a project field's writers are judged against each other (a second writer in
        # another skill: lsp.memory.project_field_written_twice): a write that appears or
        # vanishes re-checks every other writer
        for key in {k for k, _, _, form in moved if k[:2] == ("field", "project") and
                    form in WRITE_FORMS}:  # fmt: skip
            for idx in (index, new_index):
                affected.update(r.path for r in idx.references_to(key) if r.form in WRITE_FORMS)
        if decides_load and sid is not None and not skills_changed:
            # the references name the cause (and point at it); a bare mention of the skill
            # counts only while it loads
            new_failure = self.load_failure(sid)
            if new_failure != old_failure:
                affected.update(new_index.referencing_files(("skill", sid)))
            if (new_failure is None) != (old_failure is None):
                affected.update(self._mentioning(sid))
        if skills_before is not None and not skills_changed and owner is not None:
            # a skill folder without skill.md is reported on its first file; with none
            # left (or the first one back) on the project's anchor file
            n = len(owner.files())
            if (n == 0 or (n == 1 and source is not None)) and (af := self.anchor_file()):
                affected.add(af.path)
        if skills_changed or kind in (
            FileKind.AGENT,
            FileKind.INTEGRATIONS,
            FileKind.PROJECT_MEMORY,
        ):
            affected.update(self.files)  # project-wide facts (the set of skills is one)
        if kind is FileKind.HOOKS:  # one modify hook per point, across the hook modules
            affected.update(p for p, f in self.files.items() if f.kind is FileKind.HOOKS)
        affected.update(self._code_changes(path, old_code, old_signature))
        return {p for p in affected if p in self.files or p == path}

    def _code_facts_of(self, path: Path) -> tuple[CodeMemory, tuple[tuple[str, str], ...]] | None:
        """What the memory-field hints read of a tool or helper module (see _code_changes)."""
        pf = self.files.get(path)
        if pf is None or not isinstance(pf.doc, ToolModule):
            return None
        return code_memory(self, path, pf.doc), pf.doc.constants

    def _code_changes(
        self,
        path: Path,
        old: tuple[CodeMemory, tuple[tuple[str, str], ...]] | None,
        old_signature: set[tuple[SymbolKey, tuple[object, ...]]],
    ) -> set[Path]:
        """The files whose unused-field and never-written hints (ide/rules/memory.py,
        dataflow.py) may change when the tool or helper module at ``path`` changed:
        memory keys named by shared or lib code (by bare name, for any skill), a module
        whose keys became unknown or known, constants other modules import (those
        modules are indexed again), and `run_after_setting_*` tools. A field that may now
        be written, or no longer, changes the conditions that read it too
        (lsp.condition.constant_never_written). (References a skill's own tools make are
        handled by the reference diff above.)"""
        new = self._code_facts_of(path)
        if old == new:
            hooks = {
                key for key, _ in old_signature ^ self.index.signature_of(path)
                if key[0] == "tool" and key[-1].startswith("run_after_setting_")
            }  # fmt: skip
            pm = self.file_of_kind(FileKind.PROJECT_MEMORY)
            return {pm.path} if hooks and pm is not None else set()
        memory_files = {
            p
            for p, f in self.files.items()
            if f.kind in (FileKind.SKILL_MEMORY, FileKind.PROJECT_MEMORY)
        }
        old_memory, old_constants = old if old is not None else (None, ())
        new_memory, new_constants = new if new is not None else (None, ())
        out: set[Path] = set()
        if old_constants != new_constants:
            importers = {
                p
                for p, f in self.files.items()
                if p != path and isinstance(f.doc, ToolModule) and f.doc.imported_keys
            }
            if importers and self._index is not None:
                update_files(self, self._index, importers, bundled=False)
            out |= importers | memory_files
        if (old_memory is not None and old_memory.dynamic) or (
            new_memory is not None and new_memory.dynamic
        ):
            # any field may be reached: whatever reads one (a condition it decides)
            return out | memory_files | self.index.files_reading_fields()
        kind = self.files[path].kind if path in self.files else None
        if kind is FileKind.SKILL_TOOLS or (kind is None and "skills" in path.parts):
            return out
        names = (old_memory.entries if old_memory else frozenset()) ^ (
            new_memory.entries if new_memory else frozenset()
        )
        if names:
            for p, f in self.files.items():
                doc = f.doc if p in memory_files else None
                if isinstance(doc, MemoryDoc) and any(fd.name in names for fd in doc.fields):
                    out.add(p)
            out |= self.index.files_reading_fields(names)
        return out

    def replace_files(self, changes: dict[Path, Source | None]) -> set[Path]:
        """Several files replaced (or, with ``None``, removed) at once, e.g. a folder
        moved or checked out: one index rebuild instead of one per file. Returns the
        files whose diagnostics may change (with several changes, all of them)."""
        changes = {p: s for p, s in changes.items() if self.classify(p) is not None}
        if len(changes) <= 1:
            return set().union(*(self.set_source(p, s) for p, s in changes.items()))
        gone = set()
        for path, source in changes.items():
            c = self.classify(path)
            assert c is not None
            if source is None:
                if self.files.pop(path, None) is not None:
                    gone.add(path)
            else:
                self.files[path] = parse_file(path, c[0], c[1], source)
        self.skill_dir_names = self._skill_names()
        self._detected_engine = None
        self._invalidate()
        return set(self.files) | gone

    def _skill_names(self) -> list[str]:
        """The skills as a fresh load sees them (the folders under skills/), plus those
        of files held that are not on disk (an open buffer not saved yet)."""
        names = {d.name for d in layout.skill_dirs(self.root, self.fs)}
        names |= {pf.skill_id for pf in self.files.values() if pf.skill_id is not None}
        return sorted(names)

    def resync_skill_folders(self) -> bool:
        """After a folder changed on disk: whether the set of skills changed without any
        of its files doing so (an empty skill folder created, deleted or moved); if so it
        is taken in."""
        names = self._skill_names()
        if names == sorted(self.skill_dir_names):
            return False
        self.skill_dir_names = names
        self._invalidate()
        return True

    def _mentioning(self, sid: str) -> set[Path]:
        """The skill.md files whose text holds ``sid`` (a bare mention of the skill, which
        the index does not keep as a reference)."""
        return {
            p for p in self.paths_by_kind().get(FileKind.SKILL_MD, ()) if sid in self.files[p].text
        }

    def _related(self, path: Path, sid: str | None) -> set[Path]:
        """``path`` and the other files of its skill: their references are resolved
        again together (see :meth:`set_source`)."""
        sk = self.skills.get(sid) if sid is not None else None
        return {path, *(f.path for f in sk.files())} if sk is not None else {path}

    def _replace_in_skill(
        self, path: Path, kind: FileKind, sid: str | None, pf: ParsedFile | None
    ) -> None:
        """Keep the cached Skill objects current without rebuilding them."""
        if self._skills is None or sid is None:
            return
        sk = self._skills.get(sid)
        if sk is None:
            self._skills = None
            return
        if kind is FileKind.SKILL_MD:
            sk.skill_md = pf
        elif kind is FileKind.SKILL_MEMORY:
            sk.memory = pf
        elif kind is FileKind.SKILL_RESPONSES:
            sk.responses = pf
        elif kind is FileKind.SKILL_TOOLS:
            sk.tools = [t for t in sk.tools if t.path != path] + ([pf] if pf else [])
            sk.tools.sort(key=lambda f: (f.path.name != "tools.py", str(f.path)))

    @property
    def engine(self) -> str:
        """The engine-version profile whose rules apply (see model/engine.py)."""
        if self.engine_override in PROFILES:
            return self.engine_override
        if self._detected_engine is None:
            self._detected_engine = (detect_profile(self.root, fs=self.fs),)
        return self._detected_engine[0] or DEFAULT_PROFILE

    # -- skills ------------------------------------------------------------------------
    @property
    def skills(self) -> dict[str, Skill]:
        if self._skills is None:
            skills: dict[str, Skill] = {}
            folder = self.root / "skills"
            for name in self.skill_dir_names:
                skills[name] = Skill(name, layout.child(folder, name))
            for pf in self.files.values():
                if pf.skill_id is None:
                    continue
                sk = skills.get(pf.skill_id)
                if sk is None:
                    sk = skills[pf.skill_id] = Skill(pf.skill_id, pf.path.parent)
                if pf.kind is FileKind.SKILL_MD:
                    sk.skill_md = pf
                elif pf.kind is FileKind.SKILL_MEMORY:
                    sk.memory = pf
                elif pf.kind is FileKind.SKILL_RESPONSES:
                    sk.responses = pf
                elif pf.kind is FileKind.SKILL_TOOLS:
                    sk.tools.append(pf)
            for sk in skills.values():
                # tools/*.py shadows tools.py: keep tools.py first
                sk.tools.sort(key=lambda f: (f.path.name != "tools.py", str(f.path)))
            self._skills = dict(sorted(skills.items()))
        return self._skills

    def skill(self, sid: str) -> Skill | None:
        return self.skills.get(sid)

    def file_of_kind(self, kind: FileKind) -> ParsedFile | None:
        paths = self.paths_by_kind().get(kind)
        return self.files[paths[0]] if paths else None

    @property
    def agent(self) -> AgentDoc | None:
        pf = self.file_of_kind(FileKind.AGENT)
        return pf.doc if pf and isinstance(pf.doc, AgentDoc) else None

    @property
    def integrations(self) -> IntegrationsDoc | None:
        pf = self.file_of_kind(FileKind.INTEGRATIONS)
        return pf.doc if pf and isinstance(pf.doc, IntegrationsDoc) else None

    @property
    def project_memory(self) -> MemoryDoc | None:
        pf = self.file_of_kind(FileKind.PROJECT_MEMORY)
        return pf.doc if pf and isinstance(pf.doc, MemoryDoc) else None

    def project_memory_file(self) -> ParsedFile | None:
        return self.file_of_kind(FileKind.PROJECT_MEMORY)

    @property
    def project_responses(self) -> ParsedFile | None:
        return self.file_of_kind(FileKind.PROJECT_RESPONSES)

    def shared_tool_files(self) -> list[tuple[ParsedFile, ToolModule]]:
        if self._shared_tools is None:
            self._shared_tools = [
                (pf, pf.doc)
                for pf in sorted(self.files.values(), key=lambda f: str(f.path))
                if pf.kind is FileKind.SHARED_TOOLS and isinstance(pf.doc, ToolModule)
            ]
        return self._shared_tools

    def helper_files(self) -> list[tuple[ParsedFile, ToolModule]]:
        """The helper modules (``lib/**/*.py``) that parse, by path."""
        pfs = [self.files[p] for p in self.paths_by_kind().get(FileKind.HELPER, ())]
        pfs.sort(key=lambda pf: str(pf.path))
        return [(pf, pf.doc) for pf in pfs if isinstance(pf.doc, ToolModule)]

    def hook_files(self) -> list[tuple[ParsedFile, HookModule]]:
        """The hook modules (``hooks.py``, ``hooks/**/*.py``) in the engine's loading order;
        a module that does not parse has an empty :class:`HookModule` with ``ok=False``."""
        pfs = [pf for pf in self.files.values() if pf.kind is FileKind.HOOKS]
        if not pfs:
            return []
        from ..syntax.hooks_py import HookModule  # most projects have no hooks

        pfs.sort(key=lambda pf: layout.hook_module_key(self.root, pf.path))
        return [(pf, pf.doc if isinstance(pf.doc, HookModule) else HookModule(ok=False))
                for pf in pfs]  # fmt: skip

    def project_field(self, name: str) -> MemoryField | None:
        md = self.project_memory
        return md.field(name) if md else None

    def catalog_ids(self) -> list[str]:
        """The merged catalog: bundled defaults (unless overridden) then project skills."""
        return [d for d in DEFAULT_SKILLS if d not in self.skills] + list(self.skills)

    def skill_facts(self, sid: str) -> SkillFacts:
        """What checks of *other* skills read of skill ``sid``'s skill.md, tools and
        responses.yml (a parallel
        check's worker knows it for other workers' skills from :attr:`known_facts`,
        without parsing their files)."""
        known = self.known_facts.get(sid)
        if known is not None:
            return known
        sk = self.skill(sid)
        flag = self._engine_managed(sid, sk)
        dynamic = sk is not None and self._uses_dynamic_memory(sk)
        respdoc = sk.respdoc if sk is not None else None
        buttons = respdoc is not None and respdoc.takes_tool_buttons()
        failure = sk.load_failure(self.engine) if sk is not None else None
        return SkillFacts(flag, self._precondition(sk), dynamic, buttons, failure)

    def _uses_dynamic_memory(self, sk: Skill) -> bool:
        return any(memory_keys_unknown(self, pf.path, mod) for pf, mod in sk.tool_modules())

    def dynamic_memory_skills(self) -> frozenset[str]:
        """The skills whose tools use memory with keys that cannot be known statically
        (``SkillFacts.dynamic_memory``), for every skill."""
        if self._dynamic_skills is None:
            out = set()
            for sid, sk in self.skills.items():
                known = self.known_facts.get(sid)
                if known.dynamic_memory if known is not None else self._uses_dynamic_memory(sk):
                    out.add(sid)
            self._dynamic_skills = frozenset(out)
        return self._dynamic_skills

    def tool_button_sources(self) -> tuple[frozenset[str], bool]:
        """The skills whose responses take their buttons from a tool, and whether the
        project-root responses do (``SkillFacts.tool_buttons``; another worker's skills
        from its facts, without parsing their responses.yml)."""
        if self._button_sources is None:
            skills: set[str] = set()
            root = False
            by_kind = self.paths_by_kind()
            for path in (*by_kind.get(FileKind.SKILL_RESPONSES, ()),
                         *by_kind.get(FileKind.PROJECT_RESPONSES, ())):  # fmt: skip
                pf = self.files[path]
                sid = pf.skill_id
                facts = self.known_facts.get(sid) if sid is not None else None
                if facts is not None:
                    if facts.tool_buttons and sid is not None:
                        skills.add(sid)
                    continue
                doc = pf.doc
                if isinstance(doc, ResponsesDoc) and doc.takes_tool_buttons():
                    if sid is None:
                        root = True
                    else:
                        skills.add(sid)
            self._button_sources = (frozenset(skills), root)
        return self._button_sources

    def field_table(self, sid: str) -> FieldTable:
        """Skill ``sid``'s fields as other skills' checks see them (parses its memory.yml)."""
        sk = self.skill(sid)
        return {name: _declarations(sk, name) for name in sk.field_names()} if sk else {}

    def field_decls(self, sid: str, name: str) -> tuple[FieldFacts | None, FieldFacts | None]:
        """Field ``name`` of skill ``sid`` as a check of *another* skill needs it: its
        public declaration and its effective one (private wins), as facts. A worker of a
        spread load knows them for other workers' skills (:attr:`known_fields`) without
        parsing their memory.yml."""
        known = self.known_fields.get(sid)
        if known is not None:
            return known.get(name, (None, None))
        sk = self.skill(sid)
        return _declarations(sk, name) if sk is not None else (None, None)

    def field_names(self, sid: str) -> list[str]:
        """The names skill ``sid`` declares (from :attr:`known_fields` when known)."""
        known = self.known_fields.get(sid)
        if known is not None:
            return list(known)
        sk = self.skill(sid)
        return sk.field_names() if sk is not None else []

    def engine_managed(self, sid: str) -> bool:
        """Whether the engine itself routes to skill ``sid``: its ``routing:
        engine_managed`` flag, else the bundled default's."""
        known = self.known_facts.get(sid)
        return known.engine_managed if known is not None else self._engine_managed(sid)

    def precondition(self, sid: str) -> str | None:
        """The ``precondition:`` string of skill ``sid``'s frontmatter, as written."""
        known = self.known_facts.get(sid)
        return known.precondition if known is not None else self._precondition(self.skill(sid))

    @staticmethod
    def _precondition(sk: Skill | None) -> str | None:
        doc = sk.doc if sk is not None else None
        return doc.fm_str("precondition") if doc is not None else None

    def _engine_managed(self, sid: str, sk: Skill | None = None) -> bool:
        sk = sk if sk is not None else self.skill(sid)
        flag = sk.doc.routing_flag("engine_managed") if sk is not None and sk.doc else None
        if flag is None:
            return sid in DEFAULT_SKILLS and DEFAULT_SKILLS[sid].engine_managed
        return flag

    def has_skill(self, sid: str) -> bool:
        return sid in self.skills or sid in DEFAULT_SKILLS

    def load_failure(self, sid: str) -> LoadFailure | None:
        """Why rasa-pro fails to load the project's skill folder ``sid`` (None: it loads,
        or there is no such folder); see :meth:`Skill.load_failure`. A worker of a spread
        check knows it for other workers' skills from :attr:`known_facts`."""
        known = self.known_facts.get(sid)
        if known is not None:
            return known.load_failure
        sk = self.skill(sid)
        return sk.load_failure(self.engine) if sk is not None else None

    def anchor_file(self) -> ParsedFile | None:
        """Where problems of the project as a whole are reported (no file is at fault):
        agent.yml, else integrations.yml, else the first skill.md, else any file."""
        for kind in (FileKind.AGENT, FileKind.INTEGRATIONS):
            pf = self.file_of_kind(kind)
            if pf:
                return pf
        for sk in self.skills.values():
            if sk.skill_md:
                return sk.skill_md
        return next(iter(self.files.values()), None)

    def project_text_file(self, rel: str) -> str:
        """What the evaluation finds at ``rel`` (relative to the project root, as a
        conftest prompt path is): ``ok``, ``outside`` (it leads out of the project, links
        resolved), ``missing``, ``directory``, ``unreadable`` or ``empty`` (blank text).
        Read through the project's reader, so an open buffer counts like a saved file."""
        try:
            path = self.fs.resolve(self.root / rel)
            root = self.fs.resolve(self.root)
        except ValueError:
            return "missing"
        if path != root and root not in path.parents:
            return "outside"
        if self.fs.is_dir(path):
            return "directory"
        src = self.reader(path)
        if any(i.code == C_UNREADABLE for i in src.issues):
            return "missing" if not self.fs.exists(path) else "unreadable"
        if not src.analyzable:
            return "ok"  # too large or binary: not ours to judge (the engine reads it as text)
        return "ok" if src.text.strip() else "empty"

    def has_root_file(self, name: str) -> bool:
        """Whether the project root holds a file ``name`` (``domain.yml``): read through the
        project's reader, so an editor's open buffer counts like a saved file."""
        path = self.root / name
        if path in self.files:
            return True
        src = self.reader(path)  # an open buffer, else the disk
        return not any(i.code == C_UNREADABLE for i in src.issues)

    def sees_file(self, path: Path) -> bool:
        """Whether ``path`` is a file on disk, as the layout interface says: what a rule
        learns of the disk beyond the project's own files (a module an import names). The
        paths asked are kept (:attr:`disk_questions`): when a file event says one of them
        changed, the whole project is checked again (``Workspace.disk_changed``)."""
        kind = self.disk_questions[str(path)] = self.fs.kind(path)  # one stat
        return kind == stat.S_IFREG

    def disk_answers_changed(self) -> None:
        """A path :meth:`sees_file` or :meth:`sees_dir` was asked about changed on disk:
        the answers kept from it (:meth:`module_exists`) are asked again."""
        self._modules = {}

    def sees_dir(self, path: Path) -> bool:
        """Whether ``path`` is a folder on disk (see :meth:`sees_file`)."""
        kind = self.disk_questions[str(path)] = self.fs.kind(path)
        return kind == stat.S_IFDIR

    def module_file(self, dotted: str) -> ParsedFile | None:
        """The project file an import ``dotted`` (``lib.helpers.keys``) loads, if it is one
        of the project's files (``lib/helpers/keys.py`` or ``…/keys/__init__.py``)."""
        base = self.root.joinpath(*dotted.split("."))
        return self.files.get(base.with_suffix(".py")) or self.files.get(base / "__init__.py")

    def module_exists(self, dotted: str) -> bool:
        """Whether the import ``dotted`` (``lib.helpers.keys``) names a module of the
        project: ``lib/helpers/keys.py`` or a package folder ``lib/helpers/keys/``, saved or
        open in the editor. Each name is looked up once until a project file appears or
        vanishes (a tool module's imports are asked about for every tool it binds)."""
        known = self._modules.get(dotted)
        if known is None:
            base = self.root.joinpath(*dotted.split("."))
            py, init = base.with_suffix(".py"), base / "__init__.py"
            known = self._modules[dotted] = (
                py in self.files
                or init in self.files
                or str(base) in self._project_folders()  # a namespace package
                or self.sees_file(py)
                or self.sees_dir(base)
            )
        return known

    def _project_folders(self) -> frozenset[str]:
        """Every folder below the root that holds a project file, at any depth."""
        if self._folders is None:
            root = str(self.root)
            out: set[str] = set()
            for path in self.files:
                folder = os.path.dirname(str(path))
                while folder not in out and len(folder) > len(root):
                    out.add(folder)
                    folder = os.path.dirname(folder)
            self._folders = frozenset(out)
        return self._folders

    # -- index -------------------------------------------------------------------------
    @property
    def index(self) -> Index:
        if self._index is None:
            with bulk_work():
                self._index = build_index(self)
        return self._index
