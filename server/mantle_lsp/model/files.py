"""A project's files as parsed, and a skill's files: the pieces the project
(:mod:`.project`) and its index (:mod:`.symbols`) share, below both.

:func:`parse_file` picks the parser for a file's kind; :class:`PendingFile` defers it
until first use; :class:`Skill` groups one skill folder's files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..syntax.config_yml import parse_agent_yml, parse_integrations_yml
from ..syntax.errors import SyntaxIssue
from ..syntax.memory_yml import (
    C_SKILL_LOAD,
    MemoryDoc,
    MemoryField,
    attribute_type_problems,
    parse_memory_yml,
)
from ..syntax.responses_yml import ResponsesDoc, parse_responses_yml
from ..syntax.sites import SITE_LABELS
from ..syntax.skill_md import COMPILE_CODES, COMPILED_CONDITIONS, SkillDoc, parse_skill_md
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolModule, parse_tools_module
from .defaults import DEFAULT_SKILLS
from .engine import profile_named
from .layout import FileKind
from .source import C_ENCODING, C_UNREADABLE, Source

Reader = Callable[[Path], Source]


@dataclass(eq=False)
class ParsedFile:
    path: Path
    kind: FileKind
    skill_id: str | None
    source: Source
    doc: Any = None
    issues: list[SyntaxIssue] = field(default_factory=list)
    # problems kept but never reported on this file (a lib helper that does not parse:
    # reported where a tool imports it, ide/rules/tools.py)
    quiet_issues: list[SyntaxIssue] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.source.text

    def syntax_error(self) -> SyntaxIssue | None:
        """The Python syntax error of a tool or helper module, if it has one."""
        return next(
            (i for i in (*self.issues, *self.quiet_issues) if i.code == "lsp.tools.syntax_error"),
            None,
        )


def parse_file(path: Path, kind: FileKind, skill_id: str | None, source: Source) -> ParsedFile:
    pf = ParsedFile(path, kind, skill_id, source, issues=list(source.issues))
    if not source.analyzable:
        return pf
    text = source.text
    doc: Any
    if kind is FileKind.SKILL_MD:
        doc = parse_skill_md(text, skill_id or "")
        if source.bom and doc.framed:
            # rasa-pro reads skill.md as plain UTF-8: the mark stays in front of `---`
            pf.issues.append(
                SyntaxIssue(
                    "skill.markdown.invalid_frontmatter_delimiter",
                    "the file starts with a byte-order mark (U+FEFF), which rasa-pro reads as "
                    "text before the opening `---`, so it finds no frontmatter; save the file "
                    "as UTF-8 without a BOM",
                    TextRange(0, 3),
                )
            )
        pf.issues.extend(doc.issues)
    elif kind is FileKind.SKILL_MEMORY:
        doc = parse_memory_yml(text, "skill")
        pf.issues.extend(doc.issues)
    elif kind is FileKind.PROJECT_MEMORY:
        doc = parse_memory_yml(text, "project")
        pf.issues.extend(doc.issues)
    elif kind in (FileKind.SKILL_RESPONSES, FileKind.PROJECT_RESPONSES):
        doc = parse_responses_yml(text)
        pf.issues.extend(doc.issues)
    elif kind in (FileKind.SKILL_TOOLS, FileKind.SHARED_TOOLS):
        doc, issues = parse_tools_module(text)
        pf.issues.extend(issues)
    elif kind is FileKind.HELPER:
        # read for its memory use only: never reported on (its syntax error is kept quiet)
        doc, quiet = parse_tools_module(text)
        pf.quiet_issues.extend(quiet)
    elif kind is FileKind.AGENT:
        doc = parse_agent_yml(text)
        pf.issues.extend(doc.issues)
    elif kind is FileKind.INTEGRATIONS:
        doc = parse_integrations_yml(text)
        pf.issues.extend(doc.issues)
    elif kind is FileKind.EVAL_SCENARIO:
        from ..syntax.eval_yml import parse_scenario  # most projects have no eval suite

        doc = parse_scenario(text)
        pf.issues.extend(doc.issues)
    elif kind is FileKind.EVAL_CONFTEST:
        from ..syntax.eval_yml import parse_conftest

        # reported by the conftest rule, for the file the evaluation reads (of conftest.yml
        # and conftest.yaml, the first): the other is never read
        doc = parse_conftest(text)
        pf.quiet_issues.extend(doc.issues)
    elif kind is FileKind.HOOKS:
        from ..syntax.hooks_py import parse_hooks_module  # most projects have no hooks

        doc, issues = parse_hooks_module(text)
        pf.issues.extend(issues)
    else:
        doc = None
    pf.doc = doc
    return pf


class PendingFile(ParsedFile):
    """A project file read now and parsed only when first used.

    A partial project (:meth:`Project.load_partial`, one worker of a parallel check) holds
    the files of the other workers this way: most are never parsed, and the few that are
    (a neighbour's memory.yml, a routing target's skill.md) are parsed on demand. In a
    project that lives on (the server's), the text is read (through the project's reader)
    when the file is made, never later: what a rule sees of the file does not depend on
    when it first asks (a change on disk reaches the project as a file event, like any
    other). A project no file event reaches (one ``check`` run, a worker's share, the
    server's first look) is made with ``read_now=False``: it reads on first use, and the
    files it never touches are not read at all. Reading ``source`` does not parse;
    reading ``doc`` or ``issues`` does.
    """

    def __init__(
        self,
        path: Path,
        kind: FileKind,
        skill_id: str | None,
        reader: Reader,
        read_now: bool = True,
    ) -> None:
        # not ParsedFile.__init__: its fields are the properties below
        self.path = path
        self.kind = kind
        self.skill_id = skill_id
        self._reader = reader
        self._source: Source | None = reader(path) if read_now else None
        self._parsed: ParsedFile | None = None

    def _file(self) -> ParsedFile:
        if self._parsed is None:
            self._parsed = parse_file(self.path, self.kind, self.skill_id, self.source)
        return self._parsed

    # The fields of ParsedFile, as properties (writable, like the fields they replace).
    @property
    def source(self) -> Source:
        if self._source is None:  # made with read_now=False (Project.load_around)
            self._source = self._reader(self.path)
        return self._source

    @source.setter
    def source(self, value: Source) -> None:
        self._source = value

    @property
    def doc(self) -> Any:
        return self._file().doc

    @doc.setter
    def doc(self, value: Any) -> None:
        self._file().doc = value

    @property
    def issues(self) -> list[SyntaxIssue]:
        return self._file().issues

    @issues.setter
    def issues(self, value: list[SyntaxIssue]) -> None:
        self._file().issues = value

    @property
    def quiet_issues(self) -> list[SyntaxIssue]:
        return self._file().quiet_issues

    @quiet_issues.setter
    def quiet_issues(self, value: list[SyntaxIssue]) -> None:
        self._file().quiet_issues = value


class LoadFailure(NamedTuple):
    """Why rasa-pro fails to load a skill folder, and so drops the skill from its catalog
    (the first cause found; :meth:`Skill.load_failure`). Plain data (it travels between
    the processes of a spread check as JSON)."""

    code: str  # our code for the cause (a compile error's own code, lsp.file.*, …)
    message: str  # the cause's own message
    path: str | None  # the file at fault; None: the folder has no skill.md
    start: int = 0  # the cause's range in that file
    end: int = 0

    @property
    def range(self) -> TextRange:
        return TextRange(self.start, self.end)


# what a file's reader reports when rasa-pro cannot read it either (it fails on the skill)
_UNREADABLE = frozenset({C_ENCODING, C_UNREADABLE})


@dataclass(eq=False)
class Skill:
    id: str
    dir: Path
    skill_md: ParsedFile | None = None
    memory: ParsedFile | None = None
    responses: ParsedFile | None = None
    tools: list[ParsedFile] = field(default_factory=list)

    @property
    def doc(self) -> SkillDoc | None:
        d = self.skill_md.doc if self.skill_md else None
        return d if isinstance(d, SkillDoc) else None

    @property
    def memdoc(self) -> MemoryDoc | None:
        d = self.memory.doc if self.memory else None
        return d if isinstance(d, MemoryDoc) else None

    @property
    def respdoc(self) -> ResponsesDoc | None:
        d = self.responses.doc if self.responses else None
        return d if isinstance(d, ResponsesDoc) else None

    @property
    def is_default_override(self) -> bool:
        return self.id in DEFAULT_SKILLS

    def field(self, name: str) -> MemoryField | None:
        md = self.memdoc
        return md.field(name) if md else None

    def field_names(self) -> list[str]:
        md = self.memdoc
        return list(dict.fromkeys(f.name for f in md.fields)) if md else []

    def public_field(self, name: str) -> MemoryField | None:
        md = self.memdoc
        if not md:
            return None
        for f in md.fields:
            if f.name == name and f.scope == "public":
                return f
        return None

    def tool_modules(self) -> list[tuple[ParsedFile, ToolModule]]:
        return [(pf, pf.doc) for pf in self.tools if isinstance(pf.doc, ToolModule)]

    def files(self) -> list[ParsedFile]:
        out = [f for f in (self.skill_md, self.memory, self.responses) if f is not None]
        return out + list(self.tools)

    def load_failure(self, engine: str) -> LoadFailure | None:
        """Why rasa-pro (of the ``engine`` profile) fails to load this folder as a skill,
        or None when it loads it (or when that cannot be known: a file too large to
        analyse, binary data). The engine compiles skill.md, then loads memory.yml; any
        problem there drops the skill: no skill.md, a file it cannot read, a compile
        error (``syntax.skill_md.COMPILE_CODES``, incl. a trigger or ``complete_when``
        condition that does not parse), a memory.yml it cannot load, and on 3.22 a
        ``mutable`` / ``writable_by`` of the wrong type. The one answer to "does this
        skill load?": the rules, the index's updates and a spread check's facts ask it."""
        md = self.skill_md
        if md is None:
            return LoadFailure(C_SKILL_LOAD, "the folder has no skill.md", None)
        for pf in (md, self.memory):
            if pf is None:
                continue
            causes = [
                LoadFailure(i.code, i.message, str(pf.path), i.range.start, i.range.end)
                for i in pf.issues
                if i.severity == "error"
                and (i.code in COMPILE_CODES or i.code in _UNREADABLE or i.code == C_SKILL_LOAD)
            ]
            doc = pf.doc
            if isinstance(doc, SkillDoc):
                for site in doc.conditions:
                    code = COMPILED_CONDITIONS.get(site.kind)
                    if code is None or site.parsed.ok:
                        continue
                    err = site.parsed.errors[0]
                    rng = site.file_range(err.range.start, err.range.end)
                    rng = site.anchor if rng.start == rng.end else rng
                    label = SITE_LABELS.get(site.kind, "condition")
                    msg = f"{label}: {err.message}"
                    causes.append(LoadFailure(code, msg, str(pf.path), rng.start, rng.end))
            elif isinstance(doc, MemoryDoc):
                for f in doc.fields:
                    for attr in profile_named(engine).field_attributes:
                        node = f.attrs.get(attr)
                        for rng, why in attribute_type_problems(f, attr, node) if node else ():
                            causes.append(
                                LoadFailure(C_SKILL_LOAD, why, str(pf.path), rng.start, rng.end)
                            )
            if causes:
                return min(causes, key=lambda c: (c.start, c.end))
        return None
