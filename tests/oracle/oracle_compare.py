"""Compare the engine's findings with ours: file mapping, allow-list, matching.

Pure functions on plain data (no rasa, no mantle_lsp, no IO except reading the
allow-list), so that ``test_oracle_compare.py`` can test them quickly and
``run_oracle.py`` only has to collect the two sides. docs/oracle.md describes the rules.

The engine's findings carry a code and a message but no file. :func:`locate` derives
where a finding is from its message (a *scope*: files and/or folders of the project);
an engine finding is *matched* when we report the same code in its scope.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ENGINE_CRASH = "oracle.exception"
FAILED_TO_LOAD = "mantle.validation.skill.failed_to_load"
WHOLE_PROJECT = ""  # a scope entry that contains every file of the project


@dataclass(frozen=True)
class EngineFinding:
    code: str
    severity: str
    message: str


@dataclass(frozen=True)
class OurDiagnostic:
    path: str  # relative to the project root, with "/"
    line: int  # 1-based
    code: str
    severity: str
    message: str


@dataclass(frozen=True)
class Scope:
    """Where an engine finding is: files (``memory.yml``), folders (``skills/card/``) or
    the whole project (``""``); ``rule`` names the mapping rule that produced it."""

    paths: tuple[str, ...]
    rule: str

    def contains(self, path: str) -> bool:
        return any(
            p == WHOLE_PROJECT or path == p or (p.endswith("/") and path.startswith(p))
            for p in self.paths
        )

    def __str__(self) -> str:
        return " | ".join(p or "<project>" for p in self.paths)


# -- file mapping ----------------------------------------------------------------------------

_LEADING_PATH = re.compile(r"^<project>/(?P<path>[^:\s]+): ")
_TOOL_PATH = re.compile(r"\bA tool in (?P<path>\S+\.py)\b")
_ANY_PATH = re.compile(r"<project>/(?P<path>[^:\s'\"]+\.(?:py|ya?ml|md))\b")
_SKILL_DIR = re.compile(r"^Skill directory '(?P<dir>skills/[^']+)'")
_SKILL_ID = re.compile(r"\b[Ss]kill(?: id)? '(?P<id>[^']+)'")
_OVERRIDE = re.compile(r"^(?:Project override of|Default skill) '(?P<id>[^']+)'")
_RESERVED = re.compile(r"may not be named '(?P<id>[^']+)'")
_CONFIG_NAME = re.compile(r"\b(?P<file>agent\.yml|integrations\.yml)\b")

# a missing file: wherever we put the diagnostic
_CONFIG_MISSING = (
    "mantle.validation.config.missing_agent_yml",
    "mantle.validation.config.missing_integrations",
)
# precondition findings name a skill, but the binding (satisfied_when, resolve_with)
# lives in agent.yml: either place is right
_PRECONDITION_BINDING = (
    "mantle.validation.precondition.invalid_satisfied_when",
    "mantle.validation.precondition.unknown_resolver",
    "mantle.validation.precondition.self_resolve",
    "mantle.validation.precondition.cycle",
    "mantle.validation.precondition.nested_resolver",
)
HOOK_FILES = ("hooks.py", "hooks/")


def _skill(skill_id: str) -> str:
    return f"skills/{skill_id}/"


def locate(code: str, message: str) -> Scope:
    """The scope of an engine finding, derived from its (normalised) message.

    The first rule that applies wins; ``Scope.rule`` names it (docs/oracle.md, "File
    mapping", has the same list).
    """
    if code == ENGINE_CRASH:
        return Scope((WHOLE_PROJECT,), "crash")
    # "Skill directory 'skills/x' failed to load ...": the whole skill folder
    m = _SKILL_DIR.match(message)
    if m:
        return Scope((_skill(m["dir"].removeprefix("skills/").rstrip("/")),), "skill-dir")
    # "<project>/skills/x/responses.yml: response ...", "<project>/hooks.py: 'h' must ..."
    m = _LEADING_PATH.match(message)
    if m:
        return Scope((m["path"],), "path")
    # "A tool in skills/x/tools.py writes ... at line 6"
    m = _TOOL_PATH.search(message)
    if m:
        return Scope((m["path"],), "path")
    # "Failed to import hook module <project>/hooks.py: ..."
    m = _ANY_PATH.search(message)
    if m:
        return Scope((m["path"],), "path")
    if code.startswith("mantle.validation.config."):
        if code in _CONFIG_MISSING:
            return Scope((WHOLE_PROJECT,), "config")
        # the first file named: "'orchestrator.model_group' in 'agent.yml' references model
        # group 'x', which is not declared in 'integrations.yml'" is about agent.yml
        m = _CONFIG_NAME.search(message)
        if m:
            return Scope((m["file"],), "config")
        if "_agent" in code or message.startswith("Invalid agent configuration"):
            return Scope(("agent.yml",), "config")
        return Scope(("integrations.yml",), "config")
    if code.startswith("mantle.validation.hooks."):
        return Scope(HOOK_FILES, "hooks")
    if message.startswith("Project memory field "):
        return Scope(("memory.yml",), "project-memory")
    m = _OVERRIDE.match(message) or _RESERVED.search(message)
    if m:
        return Scope((_skill(m["id"]),), "skill")
    m = _SKILL_ID.search(message)
    if m:
        if code in _PRECONDITION_BINDING:
            return Scope((_skill(m["id"]), "agent.yml"), "precondition")
        return Scope((_skill(m["id"]),), "skill")
    return Scope((WHOLE_PROJECT,), "unmapped")


def failed_skills(findings: Iterable[EngineFinding]) -> set[str]:
    """Ids of the skills the engine could not load (and so dropped from its catalogue)."""
    out = set()
    for f in findings:
        if f.code == FAILED_TO_LOAD:
            m = _SKILL_DIR.match(f.message)
            if m:
                out.add(m["dir"].rstrip("/").split("/", 1)[1])
    return out


def is_knock_on(finding: EngineFinding, failed: set[str]) -> bool:
    """Whether ``finding`` names, as a target, a skill the engine failed to load: the
    skill itself (``'x'``, ``'call: x'``), its memory (``'x.entry'``) or one of its flows
    (``'x__main'``)."""
    if finding.code in (FAILED_TO_LOAD, ENGINE_CRASH):
        return False
    return any(
        re.search(rf"'(?:(?:call|link): )?{re.escape(s)}(?:'|\.[A-Za-z_]|__)", finding.message)
        for s in failed
    )


# -- allow-list ---------------------------------------------------------------------------------

ACCEPT_KINDS = {
    # engine finding kinds (a finding we do not report with the same code)
    "error_in_scope": "matched by any error of ours in the finding's scope",
    "error_in_project": "matched by any error of ours in the project",
    "knock_on": "names a skill the engine failed to load",
    "missing": "allowed missing in the listed fixtures",
    # our side
    "extra": "our error allowed on a project the engine accepts, in the listed fixtures",
}
_SPECIFIC = ("missing", "extra")


@dataclass(frozen=True)
class Allowance:
    id: str
    accept: str
    reason: str
    codes: tuple[str, ...]  # fnmatch patterns
    fixtures: tuple[str, ...] = ()  # fnmatch patterns on fixture names; () = all
    message: str = ""  # regex the message must contain; "" = any
    engines: tuple[str, ...] = ()  # fnmatch patterns on the rasa-pro version; () = all

    @property
    def specific(self) -> bool:
        return self.accept in _SPECIFIC

    def applies_to_engine(self, version: str) -> bool:
        return not self.engines or any(fnmatch.fnmatchcase(version, e) for e in self.engines)

    def applies(self, fixture: str, code: str, message: str) -> bool:
        return (
            any(fnmatch.fnmatchcase(code, c) for c in self.codes)
            and (not self.fixtures or any(fnmatch.fnmatchcase(fixture, f) for f in self.fixtures))
            and (not self.message or re.search(self.message, message) is not None)
        )


class AllowListError(ValueError):
    pass


def parse_allow_list(data: Any, source: str = "known_differences.yml") -> list[Allowance]:
    """Validate the allow-list: every entry has an id, a known ``accept``, codes and a
    reason; ``missing`` / ``extra`` entries must name their fixtures."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise AllowListError(f"{source}: expected a list of entries")
    out: list[Allowance] = []
    seen: set[str] = set()
    for i, entry in enumerate(data):
        where = f"{source}: entry {i + 1}"
        if not isinstance(entry, dict):
            raise AllowListError(f"{where}: expected a mapping")
        unknown = set(entry) - {"id", "accept", "reason", "code", "fixtures", "message", "engine"}
        if unknown:
            raise AllowListError(f"{where}: unknown keys {sorted(unknown)}")
        ident = entry.get("id")
        if not isinstance(ident, str) or not ident or ident in seen:
            raise AllowListError(f"{where}: needs a unique string `id`")
        seen.add(ident)
        where = f"{source}: {ident}"
        accept = entry.get("accept")
        if accept not in ACCEPT_KINDS:
            raise AllowListError(f"{where}: `accept` must be one of {sorted(ACCEPT_KINDS)}")
        reason = entry.get("reason")
        if not isinstance(reason, str) or len(reason.split()) < 3:
            raise AllowListError(f"{where}: needs a `reason` (a sentence)")
        codes = entry.get("code")
        codes = [codes] if isinstance(codes, str) else codes
        if not codes or not all(isinstance(c, str) and c for c in codes):
            raise AllowListError(f"{where}: needs `code` (a code, a pattern or a list)")
        fixtures = entry.get("fixtures", [])
        fixtures = [fixtures] if isinstance(fixtures, str) else fixtures
        if not isinstance(fixtures, list) or not all(isinstance(f, str) for f in fixtures):
            raise AllowListError(f"{where}: `fixtures` must be a list of names or patterns")
        if accept in _SPECIFIC and (not fixtures or any(f.strip("*") == "" for f in fixtures)):
            raise AllowListError(f"{where}: `accept: {accept}` must list its fixtures")
        message = entry.get("message", "")
        if not isinstance(message, str):
            raise AllowListError(f"{where}: `message` must be a regular expression")
        try:
            re.compile(message)
        except re.error as exc:
            raise AllowListError(f"{where}: bad `message` pattern: {exc}") from exc
        engines = entry.get("engine", [])
        engines = [engines] if isinstance(engines, str) else engines
        if not isinstance(engines, list) or not all(isinstance(e, str) and e for e in engines):
            raise AllowListError(f"{where}: `engine` must be a rasa-pro version or a list")
        out.append(
            Allowance(
                ident,
                accept,
                " ".join(reason.split()),
                tuple(codes),
                tuple(fixtures),
                message,
                tuple(engines),
            )
        )
    return out


def load_allow_list(path: Path) -> list[Allowance]:
    return parse_allow_list(yaml.safe_load(path.read_text(encoding="utf-8")), path.name)


# -- comparison ---------------------------------------------------------------------------------


@dataclass
class FindingResult:
    finding: EngineFinding
    scope: Scope
    status: str  # "matched" | "allowed" | "missed"
    allowance: str = ""  # id of the allow-list entry, when allowed
    ours_in_scope: tuple[str, ...] = ()  # our codes in the scope (for the report)


@dataclass
class ProjectResult:
    name: str
    group: str
    engine_ok: bool
    findings: list[FindingResult] = field(default_factory=list)
    extra_errors: list[OurDiagnostic] = field(default_factory=list)  # fail the run
    load_disagreements: list[OurDiagnostic] = field(default_factory=list)  # fail the run
    allowed_extra: list[tuple[OurDiagnostic, str]] = field(default_factory=list)
    unexplained_errors: list[OurDiagnostic] = field(default_factory=list)  # informational

    def count(self, status: str) -> int:
        return sum(1 for f in self.findings if f.status == status)

    @property
    def failed(self) -> bool:
        return bool(self.count("missed") or self.extra_errors or self.load_disagreements)


def _first(
    allow: Sequence[Allowance], kinds: Sequence[str], fixture: str, code: str, message: str
) -> Allowance | None:
    return next((a for a in allow if a.accept in kinds and a.applies(fixture, code, message)), None)


def compare(
    name: str,
    group: str,
    engine: Sequence[EngineFinding],
    ours: Sequence[OurDiagnostic],
    allow: Sequence[Allowance],
    load_codes: Collection[str] = (),
) -> ProjectResult:
    """Match one project's engine findings against our diagnostics.

    ``load_codes`` are our codes for problems that make the engine fail to load a skill
    (the compile errors it folds into ``skill.failed_to_load``). Such an error, or an
    error under one of our own ``lsp.*`` codes (by docs/decisions.md #1 only ever an
    error where the engine crashes or fails to load), where the engine did neither, is
    a disagreement even when the project has other findings.
    """
    engine_ok = not any(f.code == ENGINE_CRASH for f in engine)
    result = ProjectResult(name, group, engine_ok)
    failed = failed_skills(engine)
    errors = [d for d in ours if d.severity == "error"]
    explained: set[OurDiagnostic] = set()
    for f in engine:
        scope = locate(f.code, f.message)
        in_scope = [d for d in ours if scope.contains(d.path)]
        same = [d for d in in_scope if d.code == f.code]
        res = FindingResult(
            f, scope, "missed", ours_in_scope=tuple(sorted({d.code for d in in_scope}))
        )
        if f.code == FAILED_TO_LOAD:
            # the engine analyses nothing else in a skill it cannot load
            explained.update(d for d in in_scope if d.severity == "error")
        if same:
            res.status = "matched"
            explained.update(same)
        else:
            a = _first(allow, ("error_in_scope",), name, f.code, f.message)
            if a and any(d.severity == "error" for d in in_scope):
                res.status, res.allowance = "allowed", a.id
                explained.update(d for d in in_scope if d.severity == "error")
            a = a if res.status == "allowed" else None
            if a is None:
                a = _first(allow, ("error_in_project",), name, f.code, f.message)
                if a and errors:
                    res.status, res.allowance = "allowed", a.id
                    explained.update(errors)
            if res.status == "missed":
                a = _first(allow, ("knock_on",), name, f.code, f.message)
                if a and is_knock_on(f, failed):
                    res.status, res.allowance = "allowed", a.id
            if res.status == "missed":
                a = _first(allow, ("missing",), name, f.code, f.message)
                if a:
                    res.status, res.allowance = "allowed", a.id
        result.findings.append(res)
    for d in errors:
        if d in explained:
            continue
        if engine and not engine_ok:
            result.unexplained_errors.append(d)
            continue
        if engine and (d.code in load_codes or d.code.startswith("lsp.")):
            a = _first(allow, ("extra",), name, d.code, d.message)
            if a:
                result.allowed_extra.append((d, a.id))
            else:
                result.load_disagreements.append(d)
            continue
        if engine:
            result.unexplained_errors.append(d)
            continue
        a = _first(allow, ("extra",), name, d.code, d.message)
        if a:
            result.allowed_extra.append((d, a.id))
        else:
            result.extra_errors.append(d)
    return result


def used_allowances(results: Iterable[ProjectResult]) -> set[str]:
    used: set[str] = set()
    for r in results:
        used.update(f.allowance for f in r.findings if f.allowance)
        used.update(a for _, a in r.allowed_extra)
    return used
