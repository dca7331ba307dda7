"""What every rule shares: the diagnostic record, the checker a rule emits through, and the
``@rule`` declaration that registers a rule with the codes it emits and the files it reads.

A rule is a function. Its declaration says:

* ``codes``: every code it may emit (each code is emitted by exactly one rule, as a
  literal in that rule's module, so ``grep CODE`` lands on it);
* ``scope``: ``"skill"`` — run once per skill, ``fn(ck, sid, skill)``, for the skills whose
  files are being checked; ``"project"`` — run once, ``fn(ck)``, when a file of a kind in
  ``reports_on`` is being checked; ``"anchor"`` — like project, but it reports on the
  project's anchor file (agent.yml, else integrations.yml, else the first skill.md);
* ``reports_on``: the kinds of file it may report on (the engine runs a project rule only
  when such a file is being checked);
* ``reads``: the kinds of file whose content its answer depends on. A change to a file of
  one of those kinds may change what the rule reports (see ``rules_reading``).

A rule that checks the same thing in each skill and in the project's own files (a
skill's memory.yml and the project memory.yml, a skill's tools and the shared ones) is
one rule with several scopes: ``scopes=(per_skill(reports_on=…, reads=…),
per_project(reports_on=…, reads=…))``, called ``fn(ck, sid, skill)`` for each skill and
``fn(ck, None, None)`` for the project.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from ...model.files import ParsedFile, Skill
from ...model.layout import FileKind
from ...model.project import Project
from ...model.semantics import Semantics, Unreadable, Unwritable
from ...syntax.errors import closest
from ...syntax.memory_yml import MemoryDoc
from ...syntax.text import TextRange
from ..codes import FAILED_TO_LOAD, Severity, info
from ..types import Location

__all__ = [
    "RULES",
    "Checker",
    "Diagnostic",
    "Related",
    "Rule",
    "RuleScope",
    "describe_unreadable",
    "describe_unwritable",
    "did_you_mean",
    "meant",
    "per_project",
    "per_skill",
    "rule",
    "rules_reading",
]

Scope = Literal["skill", "project", "anchor"]
F = TypeVar("F", bound=Callable[..., None])

# Tests run with MANTLE_LSP_STRICT_RULES=1: a rule that emits a code it did not declare
# fails loudly there (in an editor it is reported as usual).
STRICT = os.environ.get("MANTLE_LSP_STRICT_RULES") == "1"


@dataclass(frozen=True)
class Related:
    """Another place a diagnostic is about (the first declaration of a duplicate, the
    first writer of a field, a read site), with a short note: the editor lists it under
    the diagnostic and jumps there (LSP related information); ``check`` prints it as a
    ``note:`` line. It never changes a diagnostic's identity (suppression, baseline and
    fingerprints ignore it)."""

    location: Location
    message: str


@dataclass(frozen=True)
class Diagnostic:
    path: Path
    range: TextRange
    code: str
    severity: Severity
    message: str
    # what a quick fix needs (the key it is about, the name meant, …): plain JSON data,
    # never parsed from the message; carried to the editor as the LSP diagnostic's `data`
    data: dict[str, Any] | None = field(default=None, hash=False)
    # other places the finding is about (see Related); the message still names them, so a
    # client that cannot show related information loses nothing
    related: tuple[Related, ...] = field(default=(), hash=False)
    # the folder the finding is about when no file of it can carry it (a skill folder with
    # no Mantle file): an editor shows it on ``path`` (the project's anchor file), `check`
    # prints the folder as its place
    folder: Path | None = None

    @property
    def engine_code(self) -> str | None:
        """The code rasa-pro reports this problem under when it is not ``code`` (a skill's
        compile errors: ``mantle.validation.skill.failed_to_load``), else None."""
        return info(self.code).engine_code


@dataclass(frozen=True)
class RuleScope:
    """Where a rule runs (``skill``, ``project``, ``anchor``: see the module docstring),
    the kinds of file it reports on there, and the kinds whose content it reads."""

    scope: Scope
    reports_on: frozenset[FileKind]
    reads: frozenset[FileKind]

    @property
    def whole_project(self) -> bool:
        """Whether it reads the references of every file of the project (data flow: is a
        field written or read anywhere?). The others need only the files of what they
        check, the project-level files and the declarations they look up: they can run
        on a project loaded around one skill (``Project.load_around``)."""
        return self.reads >= WHOLE_PROJECT_READS


def per_skill(*, reports_on: Iterable[FileKind], reads: Iterable[FileKind]) -> RuleScope:
    """The skill scope of a rule with several (see :func:`rule`)."""
    return RuleScope("skill", frozenset(reports_on), frozenset(reads))


def per_project(*, reports_on: Iterable[FileKind], reads: Iterable[FileKind]) -> RuleScope:
    """The project scope of a rule with several (see :func:`rule`)."""
    return RuleScope("project", frozenset(reports_on), frozenset(reads))


@dataclass(frozen=True)
class Rule:
    name: str  # module.function
    codes: frozenset[str]
    scopes: tuple[RuleScope, ...]
    fn: Callable[..., None]

    @property
    def whole_project(self) -> bool:
        """Whether one of its scopes reads every file's references (see
        :attr:`RuleScope.whole_project`)."""
        return any(s.whole_project for s in self.scopes)

    @property
    def reads(self) -> frozenset[FileKind]:
        """The kinds of file any of its scopes reads."""
        return frozenset().union(*(s.reads for s in self.scopes))

    def run(self, ck: Checker, scope: RuleScope, sid: str | None = None, sk: Any = None) -> None:
        """Run it in ``scope`` (for a skill: ``sid`` and its ``Skill``). A rule with a skill
        scope is called ``fn(ck, sid, skill)`` everywhere (``None, None`` for the project);
        a project or anchor rule alone, ``fn(ck)``."""
        if scope.scope == "skill" or len(self.scopes) > 1:
            self.fn(ck, sid, sk)
        else:
            self.fn(ck)

    @property
    def summary(self) -> str:
        doc = (self.fn.__doc__ or "").strip()
        return doc.split("\n\n", 1)[0].replace("\n", " ")


RULES: list[Rule] = []

# A rule that reads every kind of file holding references reads the whole project.
WHOLE_PROJECT_READS = frozenset(
    {
        FileKind.SKILL_MD,
        FileKind.SKILL_TOOLS,
        FileKind.SHARED_TOOLS,
        FileKind.HELPER,
        FileKind.SKILL_RESPONSES,
    }
)


def rule(
    *,
    codes: Iterable[str],
    scope: Scope | None = None,
    reports_on: Iterable[FileKind] = (),
    reads: Iterable[FileKind] = (),
    scopes: Iterable[RuleScope] = (),
) -> Callable[[F], F]:
    """Register the decorated function as a rule (see the module docstring): in one
    ``scope`` with what it ``reports_on`` and ``reads``, or in several ``scopes``."""
    where = list(scopes)
    if scope is not None:
        where.insert(0, RuleScope(scope, frozenset(reports_on), frozenset(reads)))
    if not where or len({s.scope for s in where}) != len(where):
        raise ValueError("a rule runs in one or more distinct scopes")

    def register(fn: F) -> F:
        name = f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"
        RULES.append(Rule(name, frozenset(codes), tuple(where), fn))
        return fn

    return register


def rules_reading(kind: FileKind) -> list[Rule]:
    """The rules whose answer may change when a file of ``kind`` changes."""
    return [r for r in RULES if kind in r.reads]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    m = closest(name, candidates)
    return f"; did you mean `{m}`?" if m is not None else ""


def meant(name: str, candidates: Iterable[str]) -> dict[str, Any] | None:
    """The fix data of a did-you-mean: the name written and the one probably meant (what
    :func:`did_you_mean` suggests), or None when nothing is close."""
    m = closest(name, candidates)
    return {"wrong": name, "meant": m} if m is not None else None


def describe_unreadable(u: Unreadable) -> str:
    """Why a key cannot be read, in words (for messages)."""
    key = f"{u.ns}.{u.entry}"
    if u.kind == "system":
        return f"`{key}`: the `system` namespace is engine-internal and never readable"
    if u.kind == "no_project_field":
        where = "the project memory.yml declares no" if u.has_project_memory else "there is no"
        return f"`{key}`: {where} project field `{u.entry}`{did_you_mean(u.entry, u.candidates)}"
    if u.kind == "undeclared":
        return (
            f"`{key}`: skill `{u.ns}` declares no field `{u.entry}`"
            f"{did_you_mean(u.entry, u.candidates)}"
        )
    if u.kind == "private":
        who = f"skill `{u.sid}`" if u.sid else "a project-wide responses.yml"
        return (
            f"`{key}`, a private field of skill `{u.ns}`: {who} cannot read it (make it "
            "public in that skill's memory.yml, or read it from within that skill)"
        )
    if u.kind == "bundled_no_field":
        return f"`{key}`: bundled skill `{u.ns}` has no public field `{u.entry}`" + did_you_mean(
            u.entry, u.candidates
        )
    return (
        f"`{key}`: there is no skill `{u.ns}` (namespaces are skill ids and `project`)"
        f"{did_you_mean(u.ns, u.candidates)}"
    )


def unreadable_data(u: Unreadable) -> dict[str, Any]:
    """The fix data of a diagnostic about an unreadable key: the key, why, and the name
    the author probably meant (for did-you-mean and declare-the-field fixes)."""
    wrong = u.ns if u.kind == "unknown_namespace" else u.entry
    data: dict[str, Any] = {"key": [u.ns, u.entry], "why": u.kind}
    meant = closest(wrong, u.candidates)
    if meant is not None:
        data["meant"] = meant
        data["wrong"] = wrong
    return data


def describe_unwritable(u: Unwritable) -> str:
    """Why tool code cannot write a key, in words (for messages)."""
    if u.kind == "no_project_field":
        return f"names project field `{u.entry}`, which the project memory.yml does not declare"
    if u.kind == "system":
        return "writes the engine-internal `system` namespace"
    if u.kind == "other_skill":
        return (
            f"writes another skill's field: a tool of `{u.sid}` may write only "
            f"`{u.sid}` fields and project fields"
        )
    if u.kind == "undeclared":
        return f"names `{u.entry}`, which skill `{u.ns}` does not declare"
    if u.kind == "bare_undeclared":
        return (
            f"names `{u.name}`, which is declared neither in skill `{u.sid}` nor in the "
            f"project memory.yml{did_you_mean(u.name, u.candidates)}"
        )
    return f"names `{u.name}`, which no skill and not the project declares"


class Reason(NamedTuple):
    """Why something is not allowed: the words for the message, the data for a fix."""

    text: str
    data: dict[str, Any]


class Checker:
    """What a rule emits through, with the project and its semantic answers."""

    def __init__(self, project: Project) -> None:
        self.p = project
        self.sem = Semantics(project)
        self.out: dict[Path, list[Diagnostic]] = {}
        self.rule: Rule | None = None  # the rule running now
        self.cache: dict[str, Any] = {}  # per-run values rules share (e.g. a regex)

    def emit(
        self,
        path: Path,
        rng: TextRange,
        code: str,
        message: str,
        severity: Severity | None = None,
        data: dict[str, Any] | None = None,
        related: Iterable[Related] = (),
        folder: Path | None = None,
    ) -> None:
        if STRICT and self.rule is not None and code not in self.rule.codes:
            raise AssertionError(f"rule {self.rule.name} emits {code}, which it does not declare")
        ci = info(code)
        if ci.engine_code == FAILED_TO_LOAD:
            pf = self.p.files.get(path)
            sid = pf.skill_id if pf is not None else None
            message += (
                f" (rasa-pro fails to load skill `{sid}` on this and drops the whole skill)"
                if sid
                else " (rasa-pro fails to load the skill on this and drops it whole)"
            )
        sev = severity or ci.severity
        self.out.setdefault(path, []).append(
            Diagnostic(path, rng, code, sev, message, data, tuple(related), folder)
        )

    def memory_of(self, sk: Skill | None) -> tuple[MemoryDoc, ParsedFile] | None:
        """The memory.yml of skill ``sk`` (None: the project's), parsed, and its file; None
        when there is none or it is not readable as memory."""
        md = sk.memdoc if sk is not None else self.p.project_memory
        pf = sk.memory if sk is not None else self.p.file_of_kind(FileKind.PROJECT_MEMORY)
        return None if md is None or pf is None else (md, pf)

    def related(self, path: Path, rng: TextRange, message: str) -> Related:
        """A :class:`Related` entry (a shorthand for rules)."""
        return Related(Location(path, rng), message)

    def unreadable(self, sid: str | None, ns: str, entry: str) -> Reason | None:
        """None when ``ns.entry`` is readable from skill ``sid`` (None = the project-root
        responses file, which every skill may deliver); else why not, in words and as fix
        data."""
        u = self.sem.unreadable(sid, ns, entry)
        return Reason(describe_unreadable(u), unreadable_data(u)) if u is not None else None

    def unwritable(self, sid: str | None, name: str) -> Reason | None:
        """None when tool code of skill ``sid`` may write ``name``; else why not."""
        u = self.sem.unwritable(sid, name)
        if u is None:
            return None
        data: dict[str, Any] = {"key": [u.ns, u.entry], "why": u.kind}
        m = meant(u.name, u.candidates)
        return Reason(describe_unwritable(u), {**data, **m} if m else data)
