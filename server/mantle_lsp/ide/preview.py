"""The prompt preview: a skill's instruction text as the engine puts it in the system prompt
for one memory state (docs/features/preview.md has the rules, observed on rasa-pro 3.21).

Plain data in, plain data out: :func:`render_preview` takes a parsed ``skill.md``, the
memory slots the skill may read (with their ``pii`` flag) and a memory state (namespace ->
entry -> value; anything absent is None) and returns the text, the paragraphs kept and
dropped (with the condition that dropped each), the ``@memory`` tokens left as written and
an estimate of its size in tokens (a character count, not a tokenizer). :func:`render_step`
does the same for the instructions of one ordered-block step (what the engine shows while
that step is active, instead of the prose). :func:`preview_skill` gathers the readable
slots of a skill from :class:`~mantle_lsp.model.semantics.Semantics`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..model.evaluation import evaluate
from ..model.project import Project
from ..model.semantics import Semantics
from ..syntax.conditions import Expr, parse_condition
from ..syntax.skill_md import MEMORY_TOKEN_RE, Block, Paragraph, SkillDoc, Step
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YScalar, parse_yaml, to_python

__all__ = [
    "CHARS_PER_TOKEN",
    "PII_PLACEHOLDER",
    "VALUE_LIMIT",
    "Preview",
    "PreviewParagraph",
    "PreviewStep",
    "StepNotFound",
    "Unresolved",
    "condition_holds",
    "find_step",
    "parse_state",
    "preview_skill",
    "readable_slots",
    "render_preview",
    "render_step",
    "render_value",
    "step_at",
]

PARAGRAPH_SEPARATOR = "\n\n"  # between the visible paragraphs
PII_PLACEHOLDER = "[set]"  # a set `pii: true` field: the value is withheld
VALUE_LIMIT = 100  # characters of a substituted value before it is cut
CUT_MARK = "... [truncated]"
CHARS_PER_TOKEN = 4  # the estimate: ceil(characters / 4); no tokenizer (nothing downloads)
ESTIMATE_RULE = f"ceil(characters / {CHARS_PER_TOKEN})"

DropReason = Literal["false", "error", "invalid"]


class EvalError(Exception):
    """The engine cannot evaluate the condition for these values (a TypeError in a
    comparison, e.g. ``None < 3``): it leaves the paragraph out."""


@dataclass(frozen=True)
class PreviewParagraph:
    """One paragraph of the skill's prose, in document order."""

    text: str  # the text the engine would show (before @memory substitution)
    start: int  # offset of the paragraph in the file
    line: int  # 0-based line of the paragraph's first line
    condition: str | None  # the `if:` condition, as written
    kept: bool
    reason: DropReason | None = None  # why it was dropped
    detail: str = ""  # e.g. the error that made the engine drop it


@dataclass(frozen=True)
class Unresolved:
    """An ``@memory`` token left as written: ``denied`` (the skill cannot read the field)
    or ``unset`` (its value is None)."""

    token: str
    reason: Literal["denied", "unset"]


@dataclass(frozen=True)
class PreviewStep:
    """The ordered-block step a preview is of: while it is active the engine shows its
    ``instructions`` (the text) instead of the skill's prose."""

    block: str
    id: str
    kind: str | None  # instructions, collect, action, execute_tool, ... (None: unknown)
    line: int  # 0-based line of the step's first line
    range: TextRange  # the step's YAML item in skill.md

    def to_json(self) -> dict[str, Any]:
        return {"block": self.block, "id": self.id, "kind": self.kind, "line": self.line + 1}


@dataclass(frozen=True)
class Preview:
    skill_id: str
    text: str
    paragraphs: list[PreviewParagraph]
    unresolved: list[Unresolved] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # state slots the skill cannot read
    step: PreviewStep | None = None  # None: the skill's prose

    @property
    def dropped(self) -> list[PreviewParagraph]:
        return [p for p in self.paragraphs if not p.kept]

    @property
    def estimated_tokens(self) -> int:
        """An estimate, not a count: characters / 4, rounded up (no tokenizer)."""
        return math.ceil(len(self.text) / CHARS_PER_TOKEN)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (docs/features/preview.md#output)."""
        return {
            "skill": self.skill_id,
            "step": self.step.to_json() if self.step is not None else None,
            "text": self.text,
            "characters": len(self.text),
            "estimated_tokens": self.estimated_tokens,
            "estimate_rule": ESTIMATE_RULE,
            "paragraphs": [_paragraph_json(p) for p in self.paragraphs],
            "dropped": [_paragraph_json(p) for p in self.dropped],
            "unresolved": [{"token": u.token, "reason": u.reason} for u in self.unresolved],
            "ignored_state": list(self.ignored),
        }


def _paragraph_json(p: PreviewParagraph) -> dict[str, Any]:
    out: dict[str, Any] = {
        "line": p.line + 1,
        "condition": p.condition,
        "kept": p.kept,
        "text": p.text,
    }
    if not p.kept:
        out["reason"] = p.reason
        if p.detail:
            out["detail"] = p.detail
    return out


# -- values ---------------------------------------------------------------------------------


def render_value(value: object) -> str:
    """A memory value as the engine writes it into instruction text: strings as they are,
    booleans and numbers with ``str``, anything else as JSON (``, `` and ``: ``, non-ASCII
    escaped; objects JSON cannot write by their ``str``); every run of whitespace becomes one
    space, and more than :data:`VALUE_LIMIT` characters are cut and marked."""
    if isinstance(value, str):
        out = value
    elif isinstance(value, (bool, int, float)):
        out = str(value)
    else:
        try:
            out = json.dumps(value, default=str)
        except (TypeError, ValueError):
            out = str(value)
    out = " ".join(out.split())
    return out if len(out) <= VALUE_LIMIT else out[:VALUE_LIMIT] + CUT_MARK


# -- conditions -----------------------------------------------------------------------------


def condition_holds(tree: Expr, values: Mapping[str, object]) -> bool:
    """Whether a parsed condition holds for ``values`` (slot ``ns.entry`` -> value; a slot
    not in ``values`` is None), as the engine evaluates it (``model/evaluation.py``).
    Raises :class:`EvalError` where the engine fails."""
    v = evaluate(tree, values, None)
    if v.fails:
        raise EvalError(v.error)
    return bool(v.value)


# -- the preview ----------------------------------------------------------------------------


def _engine_text(raw: str) -> str:
    """Line breaks as the engine has them (it splits lines with ``str.splitlines`` and joins
    them with ``\\n``), without surrounding whitespace."""
    return "\n".join(raw.splitlines()).strip()


def _paragraph(
    doc: SkillDoc, p: Paragraph, values: Mapping[str, object], line: int
) -> PreviewParagraph:
    raw = doc.text[p.range.start : p.range.end]
    if p.kind == "text":
        return PreviewParagraph(_engine_text(raw), p.range.start, line, None, True)
    if p.kind != "if":
        return PreviewParagraph(
            _engine_text(raw),
            p.range.start,
            line,
            None,
            False,
            "invalid",
            f"prose has no `{p.kind}:`: the engine refuses the skill",
        )
    body = _engine_text("\n".join(raw.splitlines()[1:]))
    cond = p.condition or ""

    def dropped(reason: DropReason, detail: str = "") -> PreviewParagraph:
        return PreviewParagraph(body, p.range.start, line, cond, False, reason, detail)

    if not cond or not body:
        return dropped("invalid", "an `if:` needs a condition and a body: the engine refuses it")
    parsed = parse_condition(cond)
    if parsed.tree is None:
        msg = parsed.errors[0].message if parsed.errors else "invalid condition"
        return dropped("invalid", msg)
    try:
        holds = condition_holds(parsed.tree, values)
    except EvalError as exc:
        return dropped("error", f"cannot be evaluated: {exc}")
    if not holds:
        return dropped("false")
    return PreviewParagraph(body, p.range.start, line, cond, True)


def render_preview(
    doc: SkillDoc,
    readable: Mapping[str, bool],
    state: Mapping[str, Mapping[str, object]],
) -> Preview:
    """The instruction text of ``doc`` for ``state``.

    ``readable`` maps every slot (``ns.entry``) the skill may read to its ``pii`` flag;
    ``state`` maps namespaces to entries and values. A value the skill cannot read counts
    as None (and is listed in :attr:`Preview.ignored`)."""
    values, ignored = _readable_values(readable, state)
    paragraphs: list[PreviewParagraph] = []
    line, pos = 0, 0
    for p in doc.paragraphs:
        line += doc.text.count("\n", pos, p.range.start)
        pos = p.range.start
        paragraphs.append(_paragraph(doc, p, values, line))
    joined = PARAGRAPH_SEPARATOR.join(p.text for p in paragraphs if p.kept)
    text, unresolved = _substitute(joined, readable, values)
    return Preview(doc.skill_id, text, paragraphs, unresolved, ignored)


def _readable_values(
    readable: Mapping[str, bool], state: Mapping[str, Mapping[str, object]]
) -> tuple[dict[str, object], list[str]]:
    """The values of ``state`` the skill may read (slot -> value), and the slots it cannot."""
    values: dict[str, object] = {}
    ignored: list[str] = []
    for ns, entries in state.items():
        for entry, value in entries.items():
            slot = f"{ns}.{entry}"
            if slot in readable:
                values[slot] = value
            else:
                ignored.append(slot)
    return values, ignored


def _substitute(
    text: str, readable: Mapping[str, bool], values: Mapping[str, object]
) -> tuple[str, list[Unresolved]]:
    """``@memory`` tokens of instruction text replaced by their values (the same rule for
    prose and step instructions)."""
    unresolved: list[Unresolved] = []

    def substitute(m: Any) -> str:
        slot = f"{m.group(1)}.{m.group(2)}"
        token: str = m.group(0)
        if slot not in readable:
            unresolved.append(Unresolved(token, "denied"))
            return token
        value = values.get(slot)
        if value is None:
            unresolved.append(Unresolved(token, "unset"))
            return token
        return PII_PLACEHOLDER if readable[slot] else render_value(value)

    return MEMORY_TOKEN_RE.sub(substitute, text), unresolved


# -- steps ----------------------------------------------------------------------------------


class StepNotFound(ValueError):
    """No step answers the request, or several do (the message says which exist)."""


def _steps(doc: SkillDoc) -> Iterator[tuple[Block, Step]]:
    for blk in doc.blocks:
        if blk.id is None:
            continue
        for st in blk.steps:
            if st.id is not None:
                yield blk, st


def find_step(doc: SkillDoc, step_id: str, block: str | None = None) -> tuple[Block, Step]:
    """The step ``step_id`` (of block ``block``, needed when the id is in several blocks).
    Within one block the first step of that id, as the engine looks steps up. Raises
    :class:`StepNotFound` with a message naming what there is."""
    blocks = {b.id: b for b in reversed(doc.blocks) if b.id is not None}  # the first of an id
    if block is not None:
        blk = blocks.get(block)
        if blk is None:
            known = ", ".join(f"`{b}`" for b in sorted(blocks)) or "none"
            raise StepNotFound(f"skill `{doc.skill_id}` has no block `{block}` (blocks: {known})")
        found = [(blk, st) for b, st in _steps(doc) if b is blk and st.id == step_id]
        if not found:
            ids = ", ".join(dict.fromkeys(f"`{st.id}`" for b, st in _steps(doc) if b is blk))
            raise StepNotFound(
                f"block `{block}` of skill `{doc.skill_id}` has no step `{step_id}` "
                f"(steps: {ids or 'none'})"
            )
        return found[0]
    found = [(b, st) for b, st in _steps(doc) if st.id == step_id]
    in_blocks = list(dict.fromkeys(str(b.id) for b, _ in found))
    if not found:
        ids = ", ".join(dict.fromkeys(f"`{st.id}`" for _, st in _steps(doc)))
        raise StepNotFound(
            f"skill `{doc.skill_id}` has no step `{step_id}` (steps: {ids or 'none'})"
        )
    if len(in_blocks) > 1:
        names = " and ".join(f"`{b}`" for b in in_blocks)
        raise StepNotFound(
            f"step `{step_id}` is in blocks {names} of skill `{doc.skill_id}`: name the block too"
        )
    return found[0]


def step_at(doc: SkillDoc, offset: int) -> tuple[Block, Step] | None:
    """The step whose YAML item holds ``offset`` (a cursor), or None."""
    for blk, st in _steps(doc):
        if st.node.range.start <= offset <= st.node.range.end:
            # the first step of its id in its block is the one the engine runs
            return blk, next(s for b, s in _steps(doc) if b is blk and s.id == st.id)
    return None


def render_step(
    doc: SkillDoc,
    block: Block,
    step: Step,
    readable: Mapping[str, bool],
    state: Mapping[str, Mapping[str, object]],
) -> Preview:
    """The step instructions the engine shows while ``step`` of ``block`` is active: its
    ``instructions`` string exactly as YAML reads it (no `if:` scoping: an `if:` line in it
    is text), with ``@memory`` tokens replaced. A step without instructions (collect,
    action, execute_tool, ...) shows none: the text is empty."""
    values, ignored = _readable_values(readable, state)
    node = step.get("instructions") if step.kind == "instructions" else None
    raw = node.value if isinstance(node, YScalar) and isinstance(node.value, str) else ""
    text, unresolved = _substitute(raw, readable, values)
    start = step.node.range.start
    info = PreviewStep(
        str(block.id),
        str(step.id),
        step.kind,
        doc.text.count("\n", 0, start),
        step.node.range,
    )
    return Preview(doc.skill_id, text, [], unresolved, ignored, info)


def parse_state(text: str) -> dict[str, dict[str, object]]:
    """A memory state from YAML (JSON is YAML): ``{namespace: {entry: value}}``. Raises
    ValueError when it has another shape."""
    root, issues = parse_yaml(text)
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise ValueError(f"not valid YAML: {errors[0].message}")
    data = to_python(root)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("expected a mapping of namespaces to entries")
    out: dict[str, dict[str, object]] = {}
    for ns, entries in data.items():
        if entries is None:
            entries = {}
        if not isinstance(entries, dict):
            raise ValueError(f"`{ns}`: expected a mapping of entries to values")
        out[str(ns)] = {str(k): v for k, v in entries.items()}
    return out


def scenario_state(project: Project, text: str) -> tuple[dict[str, dict[str, object]], list[str]]:
    """The memory state a scenario starts with (its ``setup.initial_slots``), and the
    slots that set no memory field (a bare name that is no seed project field, an unknown
    key: the engine sets a slot nothing reads). Raises ValueError when ``text`` is no
    scenario the evaluation can read."""
    from ..syntax.eval_yml import parse_scenario  # only this preview reads scenarios
    from ..syntax.yaml12 import to_python12

    doc = parse_scenario(text)
    unreadable = [i for i in doc.issues if i.code in ("lsp.yaml.syntax_error",
                                                      "eval.yaml.duplicate_key")]  # fmt: skip
    if unreadable:
        raise ValueError(f"not valid YAML: {unreadable[0].message}")
    if not doc.is_scenario:
        raise ValueError("not a scenario (no `scenario:` key)")
    sem = Semantics(project)
    state: dict[str, dict[str, object]] = {}
    ignored: list[str] = []
    for slot in doc.initial_slots:
        if slot.key is None:
            continue
        keys = sem.eval_memory_symbols(slot.key.text, slot.key.range, True, slot=True)
        fields = [k for k, _ in keys if k[0] == "field" and k[1] != "system"]
        if not fields:
            ignored.append(slot.key.text)
            continue
        _, ns, entry = fields[0]
        state.setdefault(ns, {})[entry] = to_python12(slot.value)
    return state, ignored


def readable_slots(project: Project, sid: str) -> dict[str, bool]:
    """Every slot skill ``sid`` may read (its own fields, other skills' public ones, the
    project's), with its ``pii`` flag: what the engine lists for the active skill."""
    sem = Semantics(project)
    out: dict[str, bool] = {}
    for ns in ("project", *project.catalog_ids()):
        for f in sem.readable_declarations(sid, ns):
            out.setdefault(f"{ns}.{f.name}", bool(getattr(f, "pii", False)))
    return out


def preview_skill(
    project: Project,
    sid: str,
    state: Mapping[str, Mapping[str, object]],
    step: str | None = None,
    block: str | None = None,
    offset: int | None = None,
) -> Preview | None:
    """The preview of skill ``sid`` of ``project`` (None: no such skill or no skill.md):
    of its prose, or of the step ``step`` (in block ``block``; :func:`find_step`, which
    raises :class:`StepNotFound`), or of the step at ``offset`` in skill.md (a cursor; the
    prose when the cursor is in no step)."""
    sk = project.skill(sid)
    doc = sk.doc if sk is not None else None
    if doc is None:
        return None
    readable = readable_slots(project, sid)
    found = (
        find_step(doc, step, block)
        if step is not None
        else step_at(doc, offset)
        if offset is not None
        else None
    )
    if found is not None:
        return render_step(doc, found[0], found[1], readable, state)
    return render_preview(doc, readable, state)
