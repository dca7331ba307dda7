"""The editor on the evaluation's scenarios (``eval/scenarios/**``, docs/features/eval.md):
what completion knows of them, the cursor's place in their half-written YAML, and the
hover of what is not a symbol (assertion keys, scenario keys, `END`, `autonomous`, a tool
argument).

The names a scenario holds are the agent's symbols (``Semantics.eval_symbols``): hover,
go to definition, references, highlights and rename reach them through :mod:`.locate`.
Completion (:mod:`.completion`) works on half-written text like the rest, and also inside
the flow mappings scenarios are usually written with (``- skill_activated: {skill_id:
…}``): :func:`where` reads the keys down to the cursor, :func:`sibling` the names a value
depends on (the skill of a `block_id`, the tool of an argument, the `name` of a memory
`value`) from the list item the cursor is in. The outline and the semantic tokens of a
scenario are in :mod:`.outline` and :mod:`.semantic_tokens`.

Imported only when a scenario asks (most projects have none): it imports the eval parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..model.defaults import AUTONOMOUS_STEP
from ..model.project import Project
from ..model.semantics import Semantics
from ..syntax.eval_yml import (
    BLOCK_KEYS,
    CALM_ONLY_KEYS,
    MEMORY_KEYS,
    SKILL_KEYS,
    STEP_KEYS,
    Assertion,
    EvalRef,
    ScenarioDoc,
)

__all__ = [
    "ASSERTION_DOCS",
    "BLOCK_KEYS",
    "BODY_KEYS",
    "BOOL_KEYS",
    "COUNTED_FRAMEWORK_TOOLS",
    "FIELD_DOCS",
    "MEMORY_KEYS",
    "POSITIVE_KEYS",
    "SCENARIO_KEY_DOCS",
    "SEQUENCING_KEYS",
    "SKILL_KEYS",
    "STEP_WORDS",
    "EvalHover",
    "Where",
    "hover",
    "item_region",
    "sibling",
    "where",
]
from ..syntax.text import TextRange
from ..syntax.yaml_tree import ITEM_WORD, YMap, YScalar, YSeq, yaml_context_at, yaml_line

# -- what each key means (completion documentation and hover) --------------------------------

_SKILL = "`skill_id`: a skill folder's name"
_STEP = "`step_id` (optional): the step the event carries"
_BLOCK = "`block_id`: the `id=` of an ordered block of that skill"

ASSERTION_DOCS: dict[str, str] = {
    "skill_activated": f"Passes when the skill starts during the conversation. {_SKILL}.",
    "skill_completed": f"Passes when the skill completes. {_SKILL}.",
    "skill_cancelled": f"Passes when the skill is cancelled. {_SKILL}; {_STEP}.",
    "skill_interrupted": f"Passes when another skill interrupts the skill. {_SKILL}; {_STEP}.",
    "skill_resumed": f"Passes when the skill resumes after an interruption. {_SKILL}; {_STEP}.",
    "ordered_block_entered": f"Passes when the block is entered. {_SKILL}; {_BLOCK}.",
    "ordered_block_completed": f"Passes when the block completes. {_SKILL}; {_BLOCK}; {_STEP}.",
    "ordered_block_cancelled": f"Passes when the block is cancelled. {_SKILL}; {_BLOCK}; {_STEP}.",
    "ordered_block_interrupted": (
        f"Passes when the block is interrupted. {_SKILL}; {_BLOCK}; {_STEP}."
    ),
    "ordered_block_resumed": f"Passes when the block resumes. {_SKILL}; {_BLOCK}; {_STEP}.",
    "memory_was_set": (
        "Passes when each listed memory key is written (with `value`: that value). `name` is "
        "the tracker key: `project.<field>`, `<skill>.<field>`."
    ),
    "memory_was_not_set": (
        "Passes when no listed key is written (with `value`: not that value). A negative "
        "check: a name that never occurs makes it pass always."
    ),
    "memory_was_cleared": "Passes when each listed memory key is cleared (set to nothing).",
    "tool_executed": (
        "Passes when a tool runs: `tool_name`, `source` (`local` or `mcp`), `mcp_server` "
        "(with `source: mcp`), and optionally `skill_id`, `arguments`, `is_error`."
    ),
    "tools_within_one_turn": (
        "Passes when the listed `calls` (two or more `tool_executed`) run within one user "
        "turn; `allow_extra_calls`, `ordered` (optional)."
    ),
    "bot_uttered": (
        "Passes when the agent says a matching message: `utter_name` (a response), "
        "`text_matches` (a regular expression), `buttons`."
    ),
    "bot_did_not_utter": (
        "Passes when the agent never says a matching message (a negative check)."
    ),
    "sequencing": (
        "Passes when its steps happen in this order: skill and block assertions, "
        "`tool_executed`, and `memory_was_set` / `memory_was_cleared` with a plain key."
    ),
}
CALM_DOC = (
    "An assertion of the CALM engine: the evaluation of a Mantle agent rejects the whole "
    "batch of scenarios on it."
)
SCENARIO_KEY_DOCS: dict[str, str] = {
    "scenario": "One simulated conversation and the goals the agent must reach.",
    "name": "The scenario's title in the evaluation's report.",
    "simulation_context": "Who the simulated customer is and what they want (the simulated "
    "user's instructions).",
    "setup": "The state before the conversation.",
    "initial_slots": "Memory before the conversation: a seed project field bare or as "
    "`project.<field>`, any other field as `project.<field>` / `<skill>.<field>`.",
    "goals": "What the run must show: `assertions`, `criteria`, `expected_tools`.",
    "assertions": "Checks on the run's events (skills, blocks, memory, tools, messages).",
    "criteria": "Statements the evaluation model judges the conversation against.",
    "expected_tools": "Tool calls the evaluation scores (`tool_called`, `tool_group`).",
}
FIELD_DOCS: dict[str, str] = {
    "skill_id": "A skill folder's name (the id events carry).",
    "block_id": "The `id=` of an ordered block of the skill.",
    "step_id": "A step of the skill's ordered blocks, `END`, or `autonomous` (prose).",
    "tool_name": "The tool's function name (`@tool`), or the MCP tool's name.",
    "source": "`local` (a tool of the project's tool modules) or `mcp`.",
    "mcp_server": "The MCP server's `name` in integrations.yml (with `source: mcp`).",
    "arguments": "Arguments the call must have had (each compared with `==`).",
    "is_error": "`true`: the call must have failed; `false`: succeeded.",
    "name": "The memory key: `project.<field>`, `<skill>.<field>`, `system.<entry>`.",
    "value": "The value the key must hold (compared with `==`).",
    "utter_name": "A response of the agent.",
    "text_matches": "A regular expression the message must match.",
    "buttons": "Buttons the message must have (`title`, `payload`).",
    "calls": "Two or more `tool_executed` entries.",
    "allow_extra_calls": "`true`: other tool calls in that turn are allowed.",
    "ordered": "`true`: the calls must run in the listed order.",
    "tool_called": "A tool name the evaluation expects to be called.",
    "gate": "`true`: the scenario fails without this call.",
    "tool_group": "Tool calls scored together.",
}
STEP_WORDS = {
    "END": "`END` — the block (or skill) ended: the step id an event carries at the end.",
    AUTONOMOUS_STEP: "`autonomous` — the step id of a skill's prose (outside its ordered blocks).",
}

POSITIVE_KEYS = [k for k in ASSERTION_DOCS if k not in ("memory_was_not_set",
                                                         "bot_did_not_utter")]  # fmt: skip
SEQUENCING_KEYS = (*SKILL_KEYS, *BLOCK_KEYS, "tool_executed", "memory_was_set",
                    "memory_was_cleared")  # fmt: skip
_TOOL_FIELDS = ("tool_name", "source", "mcp_server", "skill_id", "arguments", "is_error")
BODY_KEYS: dict[str, tuple[str, ...]] = {
    **{k: ("skill_id",) for k in SKILL_KEYS},
    **{k: ("skill_id", "step_id") for k in SKILL_KEYS if k in STEP_KEYS},
    **{k: ("skill_id", "block_id") for k in BLOCK_KEYS},
    **{k: ("skill_id", "block_id", "step_id") for k in BLOCK_KEYS if k in STEP_KEYS},
    "tool_executed": _TOOL_FIELDS,
    "tools_within_one_turn": ("calls", "allow_extra_calls", "ordered"),
    "bot_uttered": ("utter_name", "text_matches", "buttons"),
    "bot_did_not_utter": ("utter_name", "text_matches", "buttons"),
}
BOOL_KEYS = frozenset({"is_error", "allow_extra_calls", "ordered", "gate"})
COUNTED_FRAMEWORK_TOOLS = ("search_knowledge", "cannot_help")


# -- where the cursor is ---------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    path: tuple[str, ...]  # the keys (and `-` for list items) down to the cursor's mapping
    key: str | None  # the key whose value the cursor is in; None: a key is being typed
    word: str  # the partial word before the cursor
    flow: bool  # inside `{…}` / `[…]`
    rest: str  # the rest of the line after the cursor
    col: int = 0  # the column the word starts at
    present: frozenset[str] = frozenset()  # keys the cursor's mapping already has


def where(text: str, offset: int) -> Where | None:
    """Where ``offset`` is, from the text alone (it is often half-written)."""
    y = yaml_context_at(text, offset)
    if y.scalar_key is not None:
        return None  # inside a multi-line text (simulation_context)
    le = text.find("\n", offset)
    rest = text[offset : len(text) if le < 0 else le]
    if y.in_value and y.line.key is not None:
        value = y.value
        if value.lstrip()[:1] in ("{", "["):
            return _flow((*y.path, y.line.key), value.lstrip(), rest)
        body = value[1:] if value[:1] in ("'", '"') else value
        if value[:1] in ("'", '"') and value[0] in body:
            return None  # after a closed quoted value
        if not ITEM_WORD.fullmatch(body):
            return None
        return Where(y.path, y.line.key, body, False, rest)
    if y.at_key:
        return Where(y.path, None, y.line.value, False, rest, y.line.col, y.siblings)
    return None


@dataclass
class _Open:
    """A flow collection open before the cursor."""

    seq: bool
    key: str | None = None  # the key whose value comes (a mapping)
    keys: set[str] | None = None  # the mapping's keys so far


def _flow(path: tuple[str, ...], value: str, rest: str) -> Where | None:
    """The cursor inside a flow collection: the keys down to it, from the text before it."""
    stack: list[_Open] = []
    keys: list[str] = []
    token = ""
    quote = ""
    expecting_key = False
    for ch in value:
        if quote:
            if ch == quote:
                quote = ""
            token += ch
            continue
        if ch in ("'", '"') and not token.strip():
            quote = ch
            token = ch
            continue
        if ch in "{[":
            if stack:
                keys.append("-" if stack[-1].seq else str(stack[-1].key))
            stack.append(_Open(ch == "[", keys=set()))
            expecting_key = ch == "{"
            token = ""
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            if keys and stack:
                keys.pop()
            token = ""
            expecting_key = False
        elif ch == ":" and stack and not stack[-1].seq and expecting_key:
            top = stack[-1]
            top.key = token.strip().strip("'\"")
            if top.keys is not None:
                top.keys.add(top.key)
            expecting_key = False
            token = ""
        elif ch == ",":
            expecting_key = bool(stack) and not stack[-1].seq
            token = ""
        else:
            token += ch
    if not stack:
        return None
    word = token.lstrip()
    if word[:1] in ("'", '"'):
        word = word[1:]
    if not ITEM_WORD.fullmatch(word):
        return None
    top = stack[-1]
    full = (*path, *keys)
    if top.seq:
        return Where((*full, "-"), None, word, True, rest)
    if expecting_key:
        return Where(full, None, word, True, rest, present=frozenset(top.keys or ()))
    return Where(full, top.key, word, True, rest)


def item_region(text: str, offset: int) -> tuple[int, int]:
    """The innermost block list item around ``offset`` (from its `- ` line to the line
    before the next one as indented or less), where the names a value depends on are."""
    ls = text.rfind("\n", 0, offset) + 1
    le = text.find("\n", offset)
    cur = yaml_line(text[ls : len(text) if le < 0 else le], full=False)
    start, dash = 0, -1
    if cur is not None and cur.dashes:
        start, dash = ls, cur.dashes[-1]
    else:
        limit = cur.col if cur is not None else 0
        pos = ls
        while pos > 0:
            ps = text.rfind("\n", 0, pos - 1) + 1
            info = yaml_line(text[ps : pos - 1])
            pos = ps
            if info is None:
                continue
            if info.dashes and info.dashes[-1] < limit:
                start, dash = ps, info.dashes[-1]
                break
            if info.first < limit:
                limit = info.first
    end = len(text)
    pos = text.find("\n", max(start, ls))
    while 0 <= pos < len(text):
        ns = pos + 1
        ne = text.find("\n", ns)
        ne = len(text) if ne < 0 else ne
        info = yaml_line(text[ns:ne])
        if info is not None and info.first <= dash:
            end = pos
            break
        pos = ne if ne < len(text) else -1
    return start, end


def sibling(text: str, offset: int, key: str) -> str | None:
    """The value of ``key`` in the list item around ``offset``: the nearest one before
    the cursor, else the first after it."""
    start, end = item_region(text, offset)
    pat = re.compile(rf"(?<![\w.-]){re.escape(key)}[ \t]*:[ \t]*([\"']?)([\w./:-]+)\1")
    before = [m.group(2) for m in pat.finditer(text, start, offset)]
    if before:
        return before[-1]
    after = pat.search(text, offset, end)
    return after.group(2) if after else None


# -- hover of what is no symbol -----------------------------------------------------------------


@dataclass(frozen=True)
class EvalHover:
    range: TextRange
    markdown: str


def hover(project: Project, path: Path, offset: int) -> EvalHover | None:
    """An assertion key, a key of the scenario, `END` / `autonomous`, a tool argument."""
    pf = project.files.get(path)
    doc = pf.doc if pf is not None else None
    if not isinstance(doc, ScenarioDoc):
        return None
    for a in doc.all_assertions():
        kr = a.key_node.range
        if kr.start <= offset <= kr.end and kr.length:
            return EvalHover(kr, _assertion_card(a))
    for ref in doc.refs():
        if not (ref.range.start <= offset <= ref.range.end):
            continue
        if ref.kind == "step" and ref.text in STEP_WORDS:
            return EvalHover(ref.range, STEP_WORDS[ref.text])
        if ref.kind == "argument" and ref.qualifier:
            return EvalHover(ref.range, _argument_card(project, ref.text, ref.qualifier, ref))
    return _structure_key(doc, offset)


def _assertion_card(a: Assertion) -> str:
    if a.key in CALM_ONLY_KEYS:
        return f"**`{a.key}`** — CALM assertion\n\n{CALM_DOC}"
    doc = ASSERTION_DOCS.get(a.key)
    if doc is None:
        return f"**`{a.key}`** — not an assertion rasa-pro knows"
    where = " (a step of `sequencing`)" if a.in_sequencing else ""
    kind = "negative assertion" if a.negative else "assertion"
    return f"**`{a.key}`** — {kind}{where}\n\n{doc}"


def _argument_card(project: Project, name: str, tool: str, ref: EvalRef) -> str:
    call = ref.assertion.tool if ref.assertion is not None else None
    sid = call.skill.text if call is not None and call.skill is not None else None
    params = Semantics(project).eval_tool_params(tool, sid if sid and project.skill(sid) else None)
    head = f"**`{name}`** — argument of tool `{tool}`"
    if params is None:
        return head + "\n\nThe tool's parameters are not known here."
    if name not in params:
        shown = ", ".join(f"`{p}`" for p in params) or "none"
        return head + f"\n\nThe tool takes no parameter `{name}` (its parameters: {shown})."
    return head + f"\n\n`{tool}({', '.join(params)})`"


# where each key of the scenario itself is (the other keys are an assertion's fields)
_SCENARIO_PLACES = {
    (): ("scenario",),
    ("scenario",): ("name", "simulation_context", "setup", "goals"),
    ("scenario", "setup"): ("initial_slots",),
    ("scenario", "goals"): ("assertions", "criteria", "expected_tools"),
}


def _structure_key(doc: ScenarioDoc, offset: int) -> EvalHover | None:
    """The scenario's own keys (`scenario`, `goals`, …) and an assertion field's key."""
    node = doc.root
    keys: tuple[str, ...] = ()
    while isinstance(node, (YMap, YSeq)) and len(keys) < 12:
        nxt = None
        if isinstance(node, YMap):
            for k, v in node.items:
                name = str(k.value) if isinstance(k, YScalar) else ""
                if isinstance(k, YScalar) and k.range.length and k.range.contains(offset):
                    if name in _SCENARIO_PLACES.get(keys, ()):
                        text = SCENARIO_KEY_DOCS.get(name)
                    elif keys[:2] == ("scenario", "goals") and len(keys) > 2:
                        text = FIELD_DOCS.get(name)
                    else:
                        text = None
                    return EvalHover(k.range, f"**`{name}`**\n\n{text}") if text else None
                if v.range.start <= offset <= v.range.end:
                    nxt, key = v, name
        else:
            nxt = next((i for i in node.items if i.range.start <= offset <= i.range.end), None)
            key = "-"
        if nxt is not None:
            keys = (*keys, key)
        node = nxt
    return None
