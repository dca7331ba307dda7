"""The eval-file part of ``make oracle``: the engine's verdict on each scenario and
conftest (``engine_scenarios.py``) against ours, file by file (docs/oracle.md#eval-files).

A file is *rejected* by the engine when ``load_scenario`` / ``load_conftest`` (or the
checks ``evaluate_agent`` makes before and while it runs: the slug, the assertion keys,
building each assertion, the prompt templates) fails on it. We reject it when we report
one of :data:`REJECTING` on it. The two must agree on every file, and each engine error
must be *located*: one of our rejecting diagnostics lies in the part of the file the
engine's message names (a schema path, a pydantic location, a line, an assertion index,
a rejected key). Where the message names no place, any rejecting diagnostic of ours in
the file counts.

Pure functions on plain data, like ``oracle_compare.py``; the YAML trees come in as
``Located`` spans computed by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# our codes for what the engine rejects (warnings included: another tool's file, an unsafe
# file name — the engine refuses those files when asked to run them)
REJECTING = frozenset(
    {
        "lsp.file.unreadable",
        "lsp.file.invalid_utf8",
        "lsp.file.binary",
        "lsp.yaml.syntax_error",
        "eval.yaml.duplicate_key",
        "eval.scenario.invalid",
        "eval.scenario.not_a_scenario",
        "eval.scenario.calm_assertion",
        "eval.scenario.unsafe_slug",
        "eval.assertion.aborts_run",
        "eval.conftest.invalid",
        "eval.conftest.prompt_template",
    }
)


@dataclass(frozen=True)
class Ours:
    start: int
    end: int
    code: str
    line: int  # 1-based
    message: str


@dataclass(frozen=True)
class Where:
    """What the engine's message says about the place: a path of keys and (0-based)
    list indexes from the document root, lines (1-based), or assertion keys."""

    path: tuple[str | int, ...] | None = None
    lines: tuple[int, ...] = ()
    keys: tuple[str, ...] = ()
    code: str | None = None  # a code of ours that must be there (any place)


@dataclass
class FileResult:
    rel: str
    stage: str  # the engine's: ok, load, slug, keys, runtime, conftest, prompt
    message: str
    ours: list[Ours]
    status: str = "agree"  # agree | missed | extra | unlocated
    note: str = ""


@dataclass
class EvalReport:
    files: list[FileResult] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status != "agree"]


_SCHEMA_PATH = re.compile(r"(?:Value path|Path|novalue) ?: ?'?(/[^'\n]*|)'?\s*$", re.M)
_LINE = re.compile(r"line (\d+), column \d+")
_PYDANTIC = re.compile(r"validation errors? for (?:Scenario|ConftestConfig)\n(\S[^\n]*)")
_INDEXED = re.compile(r"^([a-z_]+)\[(\d+)\]")
_RUNTIME = re.compile(r"^assertions\[(\d+)\](?:\.sequencing\[(\d+)\])?")
_REJECTED = re.compile(r"rejected keys: \[([^\]]*)\]")


def where(stage: str, message: str) -> Where:
    """The place an engine message names (see :class:`Where`)."""
    if stage == "slug":
        return Where(code="eval.scenario.unsafe_slug")
    if stage == "prompt":
        return Where(code="eval.conftest.prompt_template")
    if stage == "keys":
        m = _REJECTED.search(message)
        if m:
            return Where(keys=tuple(re.findall(r"'([^']+)'", m.group(1))))
        return Where()
    if stage == "runtime":
        m = _RUNTIME.match(message)
        if m:
            path: list[str | int] = ["scenario", "goals", "assertions", int(m.group(1))]
            if m.group(2) is not None:
                path += [0, int(m.group(2))]  # the entry's value (a list), then the step
            return Where(path=tuple(path))
        return Where()
    m = _PYDANTIC.search(message)
    if m:
        base: list[str | int] = ["scenario"] if "for Scenario" in message else []
        for part in m.group(1).split("."):
            if part == "[key]":
                break
            base.append(int(part) if part.isdigit() else part)
        return Where(path=tuple(base))
    m = _SCHEMA_PATH.search(message)
    if m is not None and ("Path" in message or "novalue" in message):
        parts = [p for p in m.group(1).split("/") if p]
        return Where(path=tuple(int(p) - 1 if p.isdigit() else p for p in parts))
    lines = tuple(int(x) for x in _LINE.findall(message))
    if lines:
        return Where(lines=lines)
    m = re.search(r"EvalScenarioError: expected_tools\[(\d+)\]", message)
    if m:
        return Where(path=("scenario", "goals", "expected_tools", int(m.group(1))))
    return Where()


Resolver = Callable[[tuple[str | int, ...]], tuple[int, int] | None]
KeyAt = Callable[[Ours], str | None]


def judge(
    rel: str,
    stage: str,
    message: str,
    ours: Sequence[Ours],
    resolve: Resolver,
    key_at: KeyAt,
) -> FileResult:
    """Compare one file. ``resolve`` gives the span (from its key) of the deepest node a
    path reaches; ``key_at`` the assertion key a diagnostic of ours sits on."""
    rejecting = [d for d in ours if d.code in REJECTING]
    res = FileResult(rel, stage, message, list(rejecting))
    if stage == "ok":
        if rejecting:
            res.status = "extra"
        return res
    if not rejecting:
        res.status = "missed"
        return res
    w = where(stage, message)
    if w.code is not None:
        ok = any(d.code == w.code for d in rejecting)
    elif w.keys:
        ok = all(
            any(d.code == "eval.scenario.calm_assertion" and key_at(d) == k for d in rejecting)
            for k in w.keys
        )
    elif w.lines:
        ok = any(d.line in w.lines for d in rejecting)
    elif w.path is not None:
        span = resolve(w.path)
        ok = span is None or any(
            (d.start < span[1] and span[0] < d.end) or d.start == span[0] for d in rejecting
        )
    else:
        ok, res.note = True, "the message names no place"
    if not ok:
        res.status = "unlocated"
    return res
