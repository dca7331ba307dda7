"""Parsers for the evaluation's files: ``eval/scenarios/**/*.yml`` and ``eval/conftest.yml``.

rasa-pro reads a scenario with ``load_scenario`` (a schema with extension rules, then a
pydantic model) and, before it runs a batch, rejects assertion keys of the other engine;
each assertion is built again when a run evaluates it, and some entries fail only there.
This module reports, at its exact range, everything the engine rejects in one file
(docs/language/eval.md): the rules are written here from the engine's behaviour, in our
own words, and ``make oracle`` holds them to the engine's own loader on every fixture.

Both files are YAML **1.2** for the engine (ruamel.yaml), unlike the agent's files: values
come from :mod:`.yaml12`, and a duplicate key is an error, not a later-wins.

The parsed scenario keeps every name an assertion holds (:class:`EvalRef`: a skill, step,
block, memory key, tool, MCP server, tool argument, response, initial slot or expected
tool), with its exact range and what kind of thing it names: the reference checks
(``ide/rules/eval.py``) and the editor features resolve them against the agent.
"""

from __future__ import annotations

import bisect
import math
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import SyntaxIssue
from .text import TextRange
from .yaml12 import UNREADABLE, key12, to_python12, value12
from .yaml_tree import (
    YAML_DUPLICATE_KEY,
    YAML_SYNTAX,
    YMap,
    YNode,
    YScalar,
    YSeq,
    nodes,
    parse_yaml,
)

__all__ = [
    "CALM_ONLY_KEYS",
    "C_ABORTS_RUN",
    "C_CONFTEST",
    "C_DUPLICATE_KEY",
    "C_INVALID",
    "C_NOT_A_SCENARIO",
    "MANTLE_ONLY_KEYS",
    "Assertion",
    "ConftestDoc",
    "EvalRef",
    "MemoryItem",
    "Name",
    "ScenarioDoc",
    "SlotItem",
    "ToolCall",
    "parse_conftest",
    "parse_scenario",
]

C_INVALID = "eval.scenario.invalid"
C_NOT_A_SCENARIO = "eval.scenario.not_a_scenario"
C_ABORTS_RUN = "eval.assertion.aborts_run"
C_DUPLICATE_KEY = "eval.yaml.duplicate_key"
C_CONFTEST = "eval.conftest.invalid"

# Assertion keys only one engine accepts (the other rejects the whole batch); shared:
# bot_uttered, bot_did_not_utter, sequencing (rasa e2e_test/assertions.py).
MANTLE_ONLY_KEYS = frozenset(
    {
        "skill_activated",
        "skill_completed",
        "skill_cancelled",
        "skill_interrupted",
        "skill_resumed",
        "ordered_block_entered",
        "ordered_block_completed",
        "ordered_block_cancelled",
        "ordered_block_interrupted",
        "ordered_block_resumed",
        "memory_was_set",
        "memory_was_not_set",
        "memory_was_cleared",
        "tool_executed",
        "tools_within_one_turn",
    }
)
CALM_ONLY_KEYS = frozenset(
    {
        "flow_started",
        "flow_completed",
        "flow_cancelled",
        "flow_interrupted",
        "pattern_clarification_contains",
        "action_executed",
        "slot_was_set",
        "slot_was_not_set",
        "generative_response_is_relevant",
        "generative_response_is_grounded",
    }
)
SKILL_KEYS = ("skill_activated", "skill_completed", "skill_cancelled", "skill_interrupted",
              "skill_resumed")  # fmt: skip
BLOCK_KEYS = ("ordered_block_entered", "ordered_block_completed", "ordered_block_cancelled",
              "ordered_block_interrupted", "ordered_block_resumed")  # fmt: skip
MEMORY_KEYS = ("memory_was_set", "memory_was_not_set", "memory_was_cleared")
# the assertions that allow a `step_id` (the others forbid it)
STEP_KEYS = frozenset({"skill_cancelled", "skill_interrupted", "skill_resumed", *BLOCK_KEYS[1:]})
# assertions that pass when nothing happens: a name that never occurs makes them vacuous
NEGATIVE_KEYS = frozenset({"memory_was_not_set", "bot_did_not_utter"})


# -- the schema the engine validates a scenario with, in our own notation ------------------


@dataclass(frozen=True)
class _Rule:
    """One node of the scenario schema: its type (``map``, ``seq``, ``str``, ``bool``,
    ``float``, ``any``), whether it must be present and may be null, and its children."""

    type: str
    required: bool = False
    nullable: bool = True
    keys: tuple[tuple[str, _Rule], ...] = ()  # map: the keys it allows
    any_key: bool = False  # map: any non-empty key, any value (and no other check)
    items: tuple[_Rule, ...] = ()  # seq: the rules an item may match (any one of them)
    min: int | None = None  # size of a map / length of a seq
    max: int | None = None
    enum: tuple[str, ...] = ()
    what: str = ""  # seq: how messages name an item (`assertion`)
    entry: str = ""  # map: what its keys are, for a single-key entry (`assertion`)

    def key(self, name: object) -> _Rule | None:
        for k, r in self.keys:
            if k == name:
                return r
        return None


def _map(*keys: tuple[str, _Rule], **kw: Any) -> _Rule:
    return _Rule("map", keys=keys, **kw)


def _str(**kw: Any) -> _Rule:
    return _Rule("str", **kw)


_REQ_STR = _str(required=True)
_NN_STR = _str(nullable=False)
_ANY_MAP = _Rule("map", any_key=True)
_TOOL = _map(
    ("tool_name", _REQ_STR),
    ("source", _str(required=True, enum=("local", "mcp"))),
    ("mcp_server", _str()),
    ("skill_id", _str()),
    ("arguments", _ANY_MAP),
    ("is_error", _Rule("bool")),
)
_SKILL = _map(("skill_id", _REQ_STR))
_SKILL_STEP = _map(("skill_id", _REQ_STR), ("step_id", _str()))
_BLOCK = _map(("skill_id", _REQ_STR), ("block_id", _REQ_STR))
_BLOCK_STEP = _map(("skill_id", _REQ_STR), ("block_id", _REQ_STR), ("step_id", _str()))
_BUTTONS = _Rule(
    "seq",
    nullable=False,
    items=(_map(("title", _NN_STR), ("payload", _NN_STR)),),
    what="button",
)
_UTTER = _map(
    ("utter_name", _NN_STR), ("buttons", _BUTTONS), ("text_matches", _NN_STR), nullable=False
)
_FLOW_END = _map(("flow_id", _REQ_STR), ("flow_step_id", _str()))
_SLOTS = _Rule(
    "seq", nullable=False, items=(_map(("name", _REQ_STR), ("value", _Rule("any"))),), what="slot"
)
_MEMORY = _Rule(
    "seq",
    items=(_map(("name", _REQ_STR), ("value", _Rule("any", nullable=False))),),
    what="memory entry",
)
_MEMORY_CLEARED = _Rule("seq", items=(_map(("name", _REQ_STR)),), what="memory entry")
_THRESHOLD = _Rule("float", required=True)

_SEQUENCING_STEP = _map(
    ("action_executed", _NN_STR),
    ("slot_was_set", _NN_STR),
    ("flow_started", _NN_STR),
    ("flow_completed", _NN_STR),
    ("flow_cancelled", _NN_STR),
    ("flow_interrupted", _NN_STR),
    ("skill_activated", _SKILL),
    ("skill_completed", _SKILL),
    ("skill_cancelled", _SKILL_STEP),
    ("skill_interrupted", _SKILL_STEP),
    ("skill_resumed", _SKILL_STEP),
    ("ordered_block_entered", _BLOCK),
    ("ordered_block_completed", _BLOCK_STEP),
    ("ordered_block_cancelled", _BLOCK_STEP),
    ("ordered_block_interrupted", _BLOCK_STEP),
    ("ordered_block_resumed", _BLOCK_STEP),
    ("memory_was_set", _NN_STR),
    ("memory_was_cleared", _NN_STR),
    ("tool_executed", _TOOL),
    min=1,
    max=1,
    entry="sequencing step",
)
_ASSERTION = _map(
    ("flow_started", _Rule("any", nullable=False)),
    ("flow_completed", _FLOW_END),
    ("flow_cancelled", _FLOW_END),
    ("pattern_clarification_contains", _Rule("any", nullable=False)),
    ("action_executed", _NN_STR),
    ("slot_was_set", _SLOTS),
    ("slot_was_not_set", _SLOTS),
    ("bot_uttered", _UTTER),
    ("bot_did_not_utter", _UTTER),
    (
        "generative_response_is_relevant",
        _map(("threshold", _THRESHOLD), ("utter_name", _NN_STR), ("utter_source", _NN_STR)),
    ),
    (
        "generative_response_is_grounded",
        _map(
            ("threshold", _THRESHOLD),
            ("utter_name", _NN_STR),
            ("ground_truth", _NN_STR),
            ("utter_source", _NN_STR),
        ),
    ),
    ("skill_activated", _SKILL),
    ("skill_completed", _SKILL),
    ("skill_cancelled", _SKILL_STEP),
    ("skill_interrupted", _SKILL_STEP),
    ("skill_resumed", _SKILL_STEP),
    ("memory_was_set", _MEMORY),
    ("memory_was_not_set", _MEMORY),
    ("memory_was_cleared", _MEMORY_CLEARED),
    ("ordered_block_entered", _BLOCK),
    ("ordered_block_completed", _BLOCK_STEP),
    ("ordered_block_cancelled", _BLOCK_STEP),
    ("ordered_block_interrupted", _BLOCK_STEP),
    ("ordered_block_resumed", _BLOCK_STEP),
    ("tool_executed", _TOOL),
    (
        "tools_within_one_turn",
        _map(
            ("ordered", _Rule("bool")),
            ("allow_extra_calls", _Rule("bool", required=True)),
            (
                "calls",
                _Rule(
                    "seq",
                    required=True,
                    min=2,
                    items=(
                        _map(
                            ("tool_executed", _map(*_TOOL.keys, required=True)),
                            min=1,
                            max=1,
                            entry="call",
                        ),
                    ),
                    what="call",
                ),
            ),
        ),
    ),
    ("sequencing", _Rule("seq", items=(_SEQUENCING_STEP,), what="sequencing step")),
    min=1,
    max=1,
    entry="assertion",
)
_TOOL_CALLED = _Rule("any", nullable=False)
_EXPECTED = _Rule(
    "seq",
    items=(
        _map(("tool_called", _Rule("any", nullable=False, required=True)), ("gate", _Rule("bool"))),
        _map(
            (
                "tool_group",
                _Rule(
                    "seq",
                    required=True,
                    items=(
                        _map(
                            ("ordered", _Rule("bool")),
                            ("gate", _Rule("bool")),
                            ("tool_called", _TOOL_CALLED),
                            min=1,
                            max=1,
                            entry="tool_group entry",
                        ),
                    ),
                    what="tool_group entry",
                ),
            ),
            min=1,
            max=1,
        ),
    ),
    what="expected tool",
)
_SCENARIO = _map(
    ("name", _REQ_STR),
    ("simulation_context", _REQ_STR),
    ("setup", _map(("initial_slots", _ANY_MAP))),
    (
        "goals",
        _map(
            ("assertions", _Rule("seq", items=(_ASSERTION,), what="assertion")),
            ("criteria", _Rule("seq", items=(_str(),), what="criterion")),
            ("expected_tools", _EXPECTED),
        ),
    ),
    required=True,
)
_ROOT = _map(("scenario", _SCENARIO))


# -- the parsed model ------------------------------------------------------------------------

RefKind = Literal[
    "skill",  # a skill id (folder name, or a bundled default)
    "step",  # a step id of a skill (``qualifier``: the skill id), or `autonomous`
    "block",  # an ordered block id of a skill (``qualifier``: the skill id)
    "memory",  # a tracker memory key: `project.f`, `<skill>.f`, `system.e`
    "tool",  # a tool name (``qualifier``: the MCP server for `source: mcp`)
    "mcp_server",  # an `mcp_servers[].name` of integrations.yml
    "argument",  # a parameter of a tool (``qualifier``: the tool name)
    "response",  # a response name
    "initial_slot",  # a key of `setup.initial_slots`
    "expected_tool",  # a tool name of `goals.expected_tools`
]


@dataclass(eq=False, slots=True)
class Name:
    """A string an assertion holds: its value (as the engine reads it) and its scalar."""

    text: str
    node: YScalar

    @property
    def range(self) -> TextRange:
        """The scalar as written (quotes included): where a finding is reported."""
        return self.node.range

    @property
    def content_range(self) -> TextRange:
        """The text without its quotes: what an edit of the name replaces."""
        r = self.node.range
        if self.node.style in ("'", '"') and r.length >= 2:
            return TextRange(r.start + 1, r.end - 1)
        return r

    @property
    def spelled(self) -> bool:
        """The name is written as it reads (no escape, no folded line): each character of
        :attr:`content_range` is one of its text, so a part of it has an exact range."""
        return self.content_range.length == len(self.text)


@dataclass(eq=False)
class MemoryItem:
    name: Name | None
    value: YNode | None  # the `value:` node, None when omitted
    node: YNode  # the item (a mapping; in a sequencing step, the name's scalar)


@dataclass(eq=False)
class ToolCall:
    tool: Name | None
    source: str | None  # `local` / `mcp` (None when missing or not one of them)
    server: Name | None  # `mcp_server`
    skill: Name | None  # `skill_id`
    arguments: list[tuple[Name, YNode]] = field(default_factory=list)
    has_server: bool = False  # an `mcp_server:` key is present (even null)


@dataclass(eq=False)
class Assertion:
    """One assertion entry (``- <key>: …``), or a child of a `sequencing` or a call of a
    `tools_within_one_turn`."""

    key: str
    key_node: YScalar
    entry: YMap  # the single-key mapping
    body: YNode  # the value of the key
    # the entry this one is a child of, held weakly: a tree with no cycle is freed by
    # reference counting alone (the server freezes its heap: tests/test_frozen_heap.py)
    parent_ref: weakref.ref[Assertion] | None = field(default=None, repr=False, compare=False)
    children: list[Assertion] = field(default_factory=list)
    valid: bool = True  # the schema accepts the entry (its reference checks are meaningful)
    skill: Name | None = None
    step: Name | None = None
    block: Name | None = None
    memory: list[MemoryItem] = field(default_factory=list)
    tool: ToolCall | None = None
    response: Name | None = None  # bot_uttered / bot_did_not_utter `utter_name`
    # CALM keys: the name they hold (an action, slot or flow) for the Mantle rewrite
    calm_names: list[Name] = field(default_factory=list)

    @property
    def range(self) -> TextRange:
        """From the key to the end of its value."""
        return TextRange(
            self.key_node.range.start, max(self.body.range.end, self.key_node.range.end)
        )

    @property
    def parent(self) -> Assertion | None:
        return self.parent_ref() if self.parent_ref is not None else None

    @property
    def in_sequencing(self) -> bool:
        return self.parent is not None and self.parent.key == "sequencing"

    @property
    def negative(self) -> bool:
        return self.key in NEGATIVE_KEYS

    def walk(self) -> Iterator[Assertion]:
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass(eq=False)
class SlotItem:
    """One `setup.initial_slots` entry."""

    key: Name | None  # None: the key is not a string
    key_node: YNode
    value: YNode


@dataclass(frozen=True, eq=False)
class EvalRef:
    """A name a scenario holds, what kind of thing it names, and where."""

    kind: RefKind
    name: Name
    assertion: Assertion | None  # None for initial slots and expected tools
    qualifier: str | None = None  # the skill of a step/block, the tool of an argument, the
    # server of an MCP tool

    @property
    def text(self) -> str:
        return self.name.text

    @property
    def range(self) -> TextRange:
        return self.name.content_range


@dataclass(eq=False)
class ScenarioDoc:
    root: YNode | None = None
    is_scenario: bool = False  # the file has a `scenario:` mapping
    name: Name | None = None
    assertions: list[Assertion] = field(default_factory=list)  # top level, in order
    initial_slots: list[SlotItem] = field(default_factory=list)
    expected_tools: list[Name] = field(default_factory=list)
    # the prose the evaluation's models read: `simulation_context` and each criterion
    texts: list[YScalar] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)

    def all_assertions(self) -> Iterator[Assertion]:
        for a in self.assertions:
            yield from a.walk()

    def refs(self) -> Iterator[EvalRef]:
        """Every name the scenario holds, in file order per assertion."""
        for a in self.all_assertions():
            if a.skill is not None:
                yield EvalRef("skill", a.skill, a)
            sid = a.skill.text if a.skill is not None else None
            if a.block is not None:
                yield EvalRef("block", a.block, a, sid)
            if a.step is not None:
                yield EvalRef("step", a.step, a, sid)
            for m in a.memory:
                if m.name is not None:
                    yield EvalRef("memory", m.name, a)
            t = a.tool
            if t is not None:
                server = t.server.text if t.server is not None and t.source == "mcp" else None
                if t.tool is not None:
                    yield EvalRef("tool", t.tool, a, server)
                if t.server is not None:
                    yield EvalRef("mcp_server", t.server, a)
                if t.skill is not None:
                    yield EvalRef("skill", t.skill, a)
                for arg, _ in t.arguments:
                    yield EvalRef("argument", arg, a, t.tool.text if t.tool else None)
            if a.response is not None:
                yield EvalRef("response", a.response, a)
        for s in self.initial_slots:
            if s.key is not None:
                yield EvalRef("initial_slot", s.key, None)
        for e in self.expected_tools:
            yield EvalRef("expected_tool", e, None)


@dataclass(eq=False)
class PromptPath:
    key: str  # simulated_user_prompt / criteria_judge_prompt / metrics_judge_prompt
    name: Name


@dataclass(eq=False)
class ConftestDoc:
    root: YNode | None = None
    prompts: list[PromptPath] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)


# -- helpers -------------------------------------------------------------------------------------


def _describe(node: YNode | None) -> str:
    if node is None:
        return "nothing"
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YSeq):
        return "a list"
    assert isinstance(node, YScalar)
    v = value12(node)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean `{node.raw}`"
    if isinstance(v, (int, float)):
        return f"the number `{node.raw}`"
    if isinstance(v, str):
        return "a string"
    return "a value"


def _is_null(node: YNode | None) -> bool:
    return node is None or (isinstance(node, YScalar) and value12(node) is None)


def _pairs(m: YMap) -> Iterator[tuple[YNode, Any, YNode]]:
    """(key node, key value in YAML 1.2, value node) of each pair."""
    for k, v in m.items:
        yield k, key12(k), v


def _get(m: YMap, key: str) -> YNode | None:
    found = None
    for _, kv, v in _pairs(m):
        if kv == key:
            found = v
    return found


def _has(m: YMap, key: str) -> bool:
    return any(kv == key for _, kv, _ in _pairs(m))


def _str_of(node: YNode | None) -> Name | None:
    """The node as a :class:`Name` when the engine reads a string there."""
    if isinstance(node, YScalar):
        v = value12(node)
        if isinstance(v, str):
            return Name(v, node)
    return None


def _is_float(v: object) -> bool:
    """The schema's `float`: a float, an int (not a bool), or a string `float()` reads."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    if isinstance(v, str):
        try:
            float(v)
        except ValueError:
            return False
        return True
    return False


_TYPE_WORDS = {
    "str": "text",
    "bool": "a boolean (`true`/`false`)",
    "float": "a number",
    "map": "a mapping",
    "seq": "a list",
}


def _a(what: str) -> str:
    return f"an {what}" if what[:1] in "aeiou" else f"a {what}"


class _Checker:
    """Walks a document against :data:`_ROOT` and collects the engine's objections.

    ``label`` arguments name the value being checked as a message says it: a key in
    backticks (`` `name` ``) or an item in words (``an assertion``)."""

    def __init__(self, text: str, issues: list[SyntaxIssue]) -> None:
        self.text = text
        self.issues = issues
        self.reported: set[tuple[int, int]] = set()
        self.starts: list[tuple[int, int]] = []  # the schema's problems, sorted

    def index_reported(self) -> None:
        self.starts = sorted(self.reported)

    def err(self, rng: TextRange, message: str, code: str = C_INVALID) -> None:
        if not rng.length:
            rng = TextRange(rng.start, min(rng.start + 1, len(self.text)))
        if (rng.start, rng.end) in self.reported:
            return
        self.reported.add((rng.start, rng.end))
        self.issues.append(SyntaxIssue(code, message, rng))

    def check(self, node: YNode | None, rule: _Rule, anchor: TextRange, label: str) -> bool:
        """Check ``node`` (None: the key is absent) against ``rule``. ``anchor`` is where
        a problem of the whole value is reported (its key, or the item itself)."""
        if _is_null(node):
            if rule.required:
                self.err(anchor, f"{label} needs a value")
                return False
            if not rule.nullable:
                self.err(anchor, f"{label} must not be empty (null)")
                return False
            if rule.type == "map":
                self.err(anchor, f"{label} must be a mapping, not empty")
                return False
            return True
        assert node is not None
        where = node.range if node.range.length else anchor
        if rule.type == "any":
            return True
        if rule.type == "map":
            if not isinstance(node, YMap):
                self.err(where, f"{label} must be a mapping (found {_describe(node)})")
                return False
            return self.check_map(node, rule, anchor, label)
        if rule.type == "seq":
            if not isinstance(node, YSeq):
                self.err(where, f"{label} must be a list (found {_describe(node)})")
                return False
            return self.check_seq(node, rule, anchor, label)
        if not isinstance(node, YScalar):
            self.err(where, f"{label} must be {_TYPE_WORDS[rule.type]} (found {_describe(node)})")
            return False
        v = value12(node)
        if rule.enum and v not in rule.enum:
            allowed = " or ".join(f"`{e}`" for e in rule.enum)
            self.err(where, f"{label} must be {allowed} (found `{node.raw}`)")
            return False
        if rule.type == "str":
            ok = isinstance(v, str)
        elif rule.type == "bool":
            ok = isinstance(v, bool)
        else:
            ok = _is_float(v)
        if not ok:
            hint = ""
            if rule.type == "bool" and isinstance(v, str) and v.lower() in _YAML11_BOOLS:
                hint = (
                    " (the evaluation reads YAML 1.2, where `yes`, `no`, `on` and `off` are "
                    "text: write `true` or `false`)"
                )
            elif rule.type == "str" and node.style is None:
                hint = f'; quote it: `"{node.raw}"`'
            self.err(
                where, f"{label} must be {_TYPE_WORDS[rule.type]} (found {_describe(node)}){hint}"
            )
            return False
        return True

    def check_map(self, m: YMap, rule: _Rule, anchor: TextRange, label: str) -> bool:
        ok = True
        n = len(m.items)
        if rule.max is not None and n > rule.max:
            keys = ", ".join(f"`{_key_text(k)}`" for k, _ in m.items)
            self.err(
                m.range if m.range.length else anchor,
                f"{label} holds {n} keys ({keys}): one per list entry, each after its own `- `",
            )
            return False
        if rule.min is not None and n < rule.min:
            self.err(anchor, f"{label} is an empty mapping")
            return False
        if rule.any_key:
            for k, kv, _ in _pairs(m):
                if re.search(".+", str(kv)) is None:
                    self.err(k.range if k.range.length else anchor, f"{label} has an empty key")
                    ok = False
            return ok
        present = {kv for _, kv, _ in _pairs(m)}
        missing = [name for name, sub in rule.keys if sub.required and name not in present]
        if missing:
            self.err(anchor, f"{label} needs " + " and ".join(f"`{n}`" for n in missing))
            ok = False
        allowed = [name for name, _ in rule.keys]
        for k, kv, v in _pairs(m):
            child = rule.key(kv)
            if child is None:
                if rule.entry:
                    why = f"`{_key_text(k)}` is not {_a(rule.entry)} rasa-pro knows"
                else:
                    why = (
                        f"`{_key_text(k)}` is not a key of {label} (allowed: {', '.join(allowed)})"
                    )
                self.err(k.range, why + _did_you_mean(str(kv), allowed))
                ok = False
                continue
            ok = self.check(v, child, k.range, f"`{kv}`") and ok
        return ok

    def check_seq(self, s: YSeq, rule: _Rule, anchor: TextRange, label: str) -> bool:
        ok = True
        for item in s.items:
            ok = self.check_item(item, rule, anchor) and ok
        n = len(s.items)
        if rule.min is not None and n < rule.min:
            self.err(anchor, f"{label} needs at least {rule.min} entries (found {n})")
            ok = False
        return ok

    def item_range(self, item: YNode, anchor: TextRange) -> TextRange:
        """Where a problem of a list item is reported: the item, or for an empty one its
        `-`."""
        if item.range.length:
            return item.range
        j = item.range.start
        while j > 0 and self.text[j - 1] in " \t":
            j -= 1
        if j > 0 and self.text[j - 1] == "-":
            return TextRange(j - 1, j)
        return anchor

    def check_item(self, item: YNode, rule: _Rule, anchor: TextRange) -> bool:
        where = self.item_range(item, anchor)
        alts = rule.items
        label = _a(rule.what)
        if len(alts) == 1:
            return self.check(item, alts[0], where, label)
        # several shapes (expected_tools): judge by the key that says which one is meant
        if isinstance(item, YMap):
            for alt in alts:
                lead = alt.keys[0][0]
                if _has(item, lead):
                    return self.check(item, alt, where, label)
        shapes = " or ".join(f"`{a.keys[0][0]}:`" for a in alts)
        self.err(where, f"{label} is a mapping with {shapes} (found {_describe(item)})")
        return False


_YAML11_BOOLS = frozenset({"yes", "no", "on", "off", "y", "n"})


def _key_text(k: YNode) -> str:
    return k.raw if isinstance(k, YScalar) else "…"


def _did_you_mean(name: str, options: list[str]) -> str:
    from .errors import closest

    m = closest(name, options)
    return f"; did you mean `{m}`?" if m else ""


def _duplicates(root: YNode | None, issues: list[SyntaxIssue]) -> None:
    """Keys written twice in one mapping, compared as YAML 1.2 reads them (rasa-pro's
    reader refuses them). Pairs a merge key (`<<`) brought in are not the mapping's own."""
    for n in nodes(root):
        if not isinstance(n, YMap):
            continue
        seen: set[Any] = set()
        for k, _ in n.items:
            own = n.range.start <= k.range.start and k.range.end <= n.range.end
            if own and isinstance(k, YScalar):
                kv = key12(k)
                try:
                    hash(kv)
                except TypeError:
                    kv = k.raw
                if kv in seen:
                    issues.append(
                        SyntaxIssue(
                            C_DUPLICATE_KEY,
                            f"`{k.raw}` is given twice in this mapping: the evaluation's "
                            "YAML reader refuses the whole file",
                            k.range,
                        )
                    )
                seen.add(kv)


def _scalar_problems(root: YNode | None, issues: list[SyntaxIssue]) -> list[SyntaxIssue]:
    """``issues`` with the scalar problems judged by the YAML 1.2 reader: a plain scalar
    the YAML 1.1 constructor failed on (a bad date) is fine when 1.2 reads it as text, and
    one whose number has no digits makes the 1.2 reader fail."""
    fine: set[TextRange] = set()
    out: list[SyntaxIssue] = []
    for n in nodes(root):
        if isinstance(n, YScalar):
            fine.add(n.range)  # the constructor's verdict is replaced by the 1.2 reader's
            if value12(n) is UNREADABLE:
                out.append(
                    SyntaxIssue(
                        YAML_SYNTAX,
                        f"YAML error: `{n.raw}` has no digits after its prefix; the "
                        "evaluation's YAML reader fails on it (quote it if it is text)",
                        n.range,
                    )
                )
    kept = [i for i in issues if not (i.code == YAML_SYNTAX and i.range in fine)]
    return kept + out


def _read(text: str) -> tuple[YNode | None, list[SyntaxIssue]]:
    """The tree and the reading problems of an evaluation file (YAML 1.2 rules)."""
    root, issues = parse_yaml(text)
    issues = [i for i in issues if i.code != YAML_DUPLICATE_KEY]
    _duplicates(root, issues)
    if root is not None:
        issues = _scalar_problems(root, issues)
    return root, issues


# -- scenarios -------------------------------------------------------------------------------------


def parse_scenario(text: str) -> ScenarioDoc:
    """Parse normalized scenario text. Never raises."""
    doc = ScenarioDoc()
    root, issues = _read(text)
    doc.root = root
    doc.issues = issues
    if any(i.code == YAML_SYNTAX for i in issues):
        return doc
    scenario = root.get("scenario") if isinstance(root, YMap) else None
    if not isinstance(root, YMap) or not _has(root, "scenario"):
        doc.issues.append(_not_a_scenario(root, text))
        return doc
    doc.is_scenario = True
    ck = _Checker(text, doc.issues)
    top = next(k for k, kv, _ in _pairs(root) if kv == "scenario")
    scenario = _get(root, "scenario")
    ck.check(root, _ROOT, top.range, "the file")
    ck.index_reported()
    if not isinstance(scenario, YMap):
        return doc
    doc.name = _str_of(_get(scenario, "name"))
    context = _str_of(_get(scenario, "simulation_context"))
    if context is not None:
        doc.texts.append(context.node)
    goals = _get(scenario, "goals")
    setup = _get(scenario, "setup")
    if isinstance(setup, YMap):
        _initial_slots(doc, ck, _get(setup, "initial_slots"))
    if isinstance(goals, YMap):
        _goals(doc, ck, goals)
    return doc


def _not_a_scenario(root: YNode | None, text: str) -> SyntaxIssue:
    if root is None or (isinstance(root, YScalar) and _is_null(root)):
        what = "an empty file"
        rng = TextRange(0, min(1, len(text)))
    elif isinstance(root, YMap):
        keys = [_key_text(k) for k, _ in root.items]
        shown = ", ".join(f"`{k}`" for k in keys[:5]) + (", …" if len(keys) > 5 else "")
        what = f"a mapping with the keys {shown}" if keys else "an empty mapping"
        rng = root.items[0][0].range if root.items else root.range
    else:
        what = _describe(root)
        rng = root.range
    if not rng.length:
        rng = TextRange(rng.start, min(rng.start + 1, len(text)))
    return SyntaxIssue(
        C_NOT_A_SCENARIO,
        f"not a scenario: {what}, without the `scenario:` key rasa-pro's scenarios start "
        "with (another tool's file?); the evaluation rejects it if it is run",
        rng,
        "warning",
    )


def _initial_slots(doc: ScenarioDoc, ck: _Checker, slots: YNode | None) -> None:
    if not isinstance(slots, YMap):
        return
    for k, kv, v in _pairs(slots):
        name = Name(kv, k) if isinstance(kv, str) and isinstance(k, YScalar) else None
        if name is None:
            ck.err(
                k.range,
                f"an `initial_slots` key must be text (found {_describe(k)}); quote it",
            )
        doc.initial_slots.append(SlotItem(name, k, v))


def _goals(doc: ScenarioDoc, ck: _Checker, goals: YMap) -> None:
    for k, kv, v in _pairs(goals):
        if kv == "assertions":
            if _is_null(v):
                ck.err(
                    k.range,
                    "`assertions` must be a list (found nothing): remove the key "
                    "or list the assertions",
                )
            elif isinstance(v, YSeq):
                _assertions(doc, ck, v)
        elif kv == "criteria":
            if _is_null(v):
                ck.err(
                    k.range,
                    "`criteria` must be a list (found nothing): remove the key or "
                    "list the criteria",
                )
            elif isinstance(v, YSeq):
                for item in v.items:
                    if _is_null(item):
                        ck.err(
                            ck.item_range(item, k.range),
                            "a criterion must be text (found nothing)",
                        )
                    elif (criterion := _str_of(item)) is not None:
                        doc.texts.append(criterion.node)
        elif kv == "expected_tools" and isinstance(v, YSeq):
            _expected_tools(doc, ck, v)


def _assertions(doc: ScenarioDoc, ck: _Checker, seq: YSeq) -> None:
    for item in seq.items:
        a = _assertion(item, None, ck)
        if a is not None:
            doc.assertions.append(a)
            _extension_rules(a, ck)
    ck.index_reported()
    for a in doc.assertions:
        for x in a.walk():
            x.valid = x.valid and _entry_ok(ck, x.range)
            if x.valid:
                _runtime_rules(x, ck)


def _single(item: YNode) -> tuple[YScalar, str, YNode] | None:
    """(key node, key, value) of a single-key mapping whose key is text."""
    if isinstance(item, YMap) and len(item.items) == 1:
        k, v = item.items[0]
        kv = key12(k)
        if isinstance(k, YScalar) and isinstance(kv, str):
            return k, kv, v
    return None


def _entry_ok(ck: _Checker, rng: TextRange) -> bool:
    """No schema problem inside ``rng``."""
    i = bisect.bisect_left(ck.starts, (rng.start, -1))
    while i < len(ck.starts) and ck.starts[i][0] < rng.end:
        if ck.starts[i][1] <= rng.end:
            return False
        i += 1
    return True


def _assertion(item: YNode, parent: Assertion | None, ck: _Checker) -> Assertion | None:
    one = _single(item)
    if one is None:
        return None
    key_node, key, body = one
    assert isinstance(item, YMap)
    a = Assertion(key, key_node, item, body, weakref.ref(parent) if parent else None)
    a.valid = _entry_ok(ck, a.range) and (
        key in MANTLE_ONLY_KEYS
        or key in CALM_ONLY_KEYS
        or key in ("bot_uttered", "bot_did_not_utter", "sequencing")
    )
    if isinstance(body, YMap):
        a.skill = _str_of(_get(body, "skill_id")) if key in (*SKILL_KEYS, *BLOCK_KEYS) else None
        a.block = _str_of(_get(body, "block_id")) if key in BLOCK_KEYS else None
        a.step = _str_of(_get(body, "step_id")) if key in STEP_KEYS else None
        if key == "tool_executed":
            a.tool = _tool_call(body)
        elif key in ("bot_uttered", "bot_did_not_utter"):
            a.response = _str_of(_get(body, "utter_name"))
        elif key == "tools_within_one_turn":
            calls = _get(body, "calls")
            for c in calls.items if isinstance(calls, YSeq) else ():
                child = _assertion(c, a, ck)
                if child is not None and child.key == "tool_executed":
                    a.children.append(child)
        elif key in ("flow_completed", "flow_cancelled"):
            n = _str_of(_get(body, "flow_id"))
            a.calm_names = [n] if n is not None else []
    elif isinstance(body, YSeq):
        if key in MEMORY_KEYS or key in ("slot_was_set", "slot_was_not_set"):
            for m in body.items:
                if isinstance(m, YMap):
                    item_name = _str_of(_get(m, "name"))
                    value = _get(m, "value") if _has(m, "value") else None
                    mi = MemoryItem(item_name, value, m)
                    if key in MEMORY_KEYS:
                        a.memory.append(mi)
                    elif item_name is not None:
                        a.calm_names.append(item_name)
        elif key == "sequencing":
            for step in body.items:
                child = _assertion(step, a, ck)
                if child is not None:
                    a.children.append(child)
    elif isinstance(body, YScalar):
        n = _str_of(body)
        if n is not None:
            if parent is not None and key in ("memory_was_set", "memory_was_cleared"):
                a.memory.append(MemoryItem(n, None, body))
            elif key in CALM_ONLY_KEYS:
                a.calm_names = [n]
    return a


def _tool_call(body: YMap) -> ToolCall:
    src = _get(body, "source")
    source = value12(src) if isinstance(src, YScalar) else None
    args = _get(body, "arguments")
    arguments = []
    if isinstance(args, YMap):
        for k, kv, v in _pairs(args):
            if isinstance(k, YScalar) and isinstance(kv, str):
                arguments.append((Name(kv, k), v))
    return ToolCall(
        tool=_str_of(_get(body, "tool_name")),
        source=source if source in ("local", "mcp") else None,
        server=_str_of(_get(body, "mcp_server")),
        skill=_str_of(_get(body, "skill_id")),
        arguments=arguments,
        has_server=_has(body, "mcp_server"),
    )


def _extension_rules(a: Assertion, ck: _Checker) -> None:
    """The schema's extension rules on one top-level entry (rasa-pro checks them on the
    whole list before it looks at the entries)."""
    body = a.body
    if a.key == "bot_uttered" and isinstance(body, YMap):
        if not body.items:
            ck.err(
                a.key_node.range, "`bot_uttered` needs `utter_name`, `text_matches` or `buttons`"
            )
        elif _has(body, "buttons"):
            b = _get(body, "buttons")
            if _is_null(b) or (isinstance(b, YSeq) and not b.items):
                k = next(k for k, kv, _ in _pairs(body) if kv == "buttons")
                ck.err(k.range, "`buttons` in `bot_uttered` must list at least one button")
    elif a.key == "flow_started":
        if isinstance(body, YScalar):
            v = value12(body)
            if isinstance(v, str) and not v.strip():
                ck.err(
                    body.range if body.range.length else a.key_node.range,
                    "`flow_started` must not be blank",
                )
            elif v is not None and not isinstance(v, str):
                ck.err(body.range, "`flow_started` must be a string or a mapping")
        elif isinstance(body, YSeq):
            ck.err(body.range, "`flow_started` must be a string or a mapping")
        elif isinstance(body, YMap):
            _flow_ids_rules(body, a, ck)
    elif a.key == "pattern_clarification_contains":
        if isinstance(body, YSeq):
            if not body.items:
                ck.err(body.range, "`pattern_clarification_contains` must not be an empty list")
            for item in body.items:
                v = value12(item) if isinstance(item, YScalar) else None
                if not (isinstance(v, str) and v.strip()):
                    ck.err(
                        item.range if item.range.length else body.range,
                        "every item of `pattern_clarification_contains` must be non-empty text",
                    )
        elif isinstance(body, YMap):
            _flow_ids_rules(body, a, ck)
        elif isinstance(body, YScalar) and not _is_null(body):
            ck.err(body.range, "`pattern_clarification_contains` must be a list or a mapping")
    for x in a.walk():
        if x.key == "tool_executed" and isinstance(x.body, YMap) and x.tool is not None:
            src = _get(x.body, "source")
            source = value12(src) if isinstance(src, YScalar) else None
            if source == "mcp" and not x.tool.has_server:
                ck.err(
                    x.key_node.range,
                    "`source: mcp` needs `mcp_server` (the name of the MCP "
                    "server in integrations.yml)",
                )
            elif source == "local" and x.tool.has_server:
                k = next(k for k, kv, _ in _pairs(x.body) if kv == "mcp_server")
                ck.err(
                    k.range, "`mcp_server` is only for `source: mcp`; remove it for a local tool"
                )


def _flow_ids_rules(body: YMap, a: Assertion, ck: _Checker) -> None:
    """The `{operator, flow_ids}` form of the CALM keys (checked before the keys are
    rejected, so it decides whether the file loads at all)."""
    if not body.items:
        ck.err(a.key_node.range, f"`{a.key}` is an empty mapping")
        return
    op = _get(body, "operator")
    opv = value12(op) if isinstance(op, YScalar) else None
    if not _has(body, "operator") or opv is None:
        ck.err(a.key_node.range, f"`{a.key}` needs `operator` (`all` or `any`)")
        return
    if not isinstance(opv, str) or opv.lower() not in ("all", "any"):
        assert op is not None
        ck.err(op.range, "`operator` must be `all` or `any`")
        return
    ids = _get(body, "flow_ids")
    if _is_null(ids):
        ck.err(a.key_node.range, f"`{a.key}` needs `flow_ids`")
        return
    if not isinstance(ids, YSeq):
        assert ids is not None
        ck.err(ids.range, "`flow_ids` must be a list")
        return
    if not ids.items:
        ck.err(ids.range, "`flow_ids` must not be empty")
        return
    if a.key == "flow_started" and opv.lower() == "all" and len(ids.items) != 1:
        ck.err(ids.range, "with `operator: all`, `flow_started` takes exactly one flow id")


def _runtime_rules(a: Assertion, ck: _Checker) -> None:
    """What fails only when a run builds the assertion (the run then errors out)."""
    body = a.body
    key = a.key
    where = a.key_node.range

    def fail(rng: TextRange, why: str) -> None:
        ck.err(
            rng,
            f"{why}: the evaluation fails on this assertion at run time (the run errors out)",
            C_ABORTS_RUN,
        )

    if key in (*SKILL_KEYS, *BLOCK_KEYS) and isinstance(body, YMap):
        for name in ("skill_id", "block_id") if key in BLOCK_KEYS else ("skill_id",):
            v = _get(body, name)
            if isinstance(v, YScalar) and value12(v) == "":
                fail(v.range, f"`{name}` is empty")
    elif key in MEMORY_KEYS and a.parent is None:
        if _is_null(body) or (isinstance(body, YSeq) and not body.items):
            fail(where, f"`{key}` lists no memory entry")
    elif key == "tool_executed" and isinstance(body, YMap):
        v = _get(body, "tool_name")
        if isinstance(v, YScalar) and value12(v) == "":
            fail(v.range, "`tool_name` is empty")
    elif key in ("bot_uttered", "bot_did_not_utter") and isinstance(body, YMap):
        u = _get(body, "utter_name")
        t = _get(body, "text_matches")
        b = _get(body, "buttons")
        if body.items or key == "bot_did_not_utter":
            empty = all(
                _is_null(n)
                or (isinstance(n, YScalar) and value12(n) == "")
                or (isinstance(n, YSeq) and not n.items)
                for n in (u, t, b)
            )
            if empty:
                fail(where, f"`{key}` has no `utter_name`, `text_matches` or `buttons` to check")
        if isinstance(t, YScalar) and isinstance(value12(t), str):
            try:
                re.compile(value12(t))
            except (re.error, RecursionError, OverflowError) as exc:
                fail(t.range, f"`text_matches` is not a valid regular expression ({exc})")
    elif key == "tools_within_one_turn" and isinstance(body, YMap):
        for k, kv, v in _pairs(body):
            if kv == "ordered" and _is_null(v):
                fail(k.range, "`ordered` needs `true` or `false` (found nothing)")
    elif key == "sequencing" and _is_null(body):
        ck.err(
            where,
            "`sequencing` lists no steps: the evaluation fails on it before any run "
            "starts (remove it, or list the steps)",
            C_ABORTS_RUN,
        )


def _expected_tools(doc: ScenarioDoc, ck: _Checker, seq: YSeq) -> None:
    """The expected tools' own rules (checked after the schema) and their tool names."""
    for item in seq.items:
        if not isinstance(item, YMap):
            continue
        if _has(item, "tool_group"):
            group = _get(item, "tool_group")
            if isinstance(group, YSeq):
                called = [e for e in group.items if isinstance(e, YMap) and _has(e, "tool_called")]
                if not called:
                    k = next(k for k, kv, _ in _pairs(item) if kv == "tool_group")
                    ck.err(k.range, "a `tool_group` needs at least one `tool_called` entry")
                for e in called:
                    _tool_called(doc, ck, e)
                for g in group.items:
                    if isinstance(g, YMap):
                        _null_flags(ck, g)
        elif _has(item, "tool_called"):
            _tool_called(doc, ck, item)
            _null_flags(ck, item)


def _null_flags(ck: _Checker, entry: YMap) -> None:
    """`gate:` / `ordered:` with no value: the schema lets it through, the expected tools'
    own parser wants a boolean."""
    for k, kv, v in _pairs(entry):
        if kv in ("gate", "ordered") and _is_null(v):
            ck.err(k.range, f"`{kv}` needs `true` or `false` (found nothing)")


def _tool_called(doc: ScenarioDoc, ck: _Checker, entry: YMap) -> None:
    key = next(k for k, kv, _ in _pairs(entry) if kv == "tool_called")
    v = _get(entry, "tool_called")
    if _is_null(v):
        return  # the schema's problem
    assert v is not None
    if isinstance(v, YScalar):
        val = value12(v)
        if not isinstance(val, str):
            ck.err(
                v.range,
                f"`tool_called` must be a tool name or a mapping with `tool_name` "
                f"(found {_describe(v)})",
            )
        elif not val.strip():
            ck.err(v.range if v.range.length else key.range, "`tool_called` must not be blank")
        else:
            doc.expected_tools.append(Name(val.strip() if val.strip() == val else val, v))
        return
    if isinstance(v, YMap):
        name = _get(v, "tool_name")
        nv = value12(name) if isinstance(name, YScalar) else None
        if not isinstance(nv, str) or not nv.strip():
            ck.err(key.range, "`tool_called` needs a non-blank `tool_name`")
        else:
            assert isinstance(name, YScalar)
            doc.expected_tools.append(Name(nv, name))
        args = _get(v, "arguments")
        if args is not None and not _is_null(args) and not isinstance(args, YMap):
            ck.err(args.range, "`arguments` must be a mapping of parameter names to values")
        return
    ck.err(v.range, "`tool_called` must be a tool name or a mapping with `tool_name`")


# -- conftest --------------------------------------------------------------------------------

_LLM = ("provider", "model")
_PROMPTS = {
    "simulation": ("simulated_user_prompt",),
    "evaluation": ("criteria_judge_prompt", "metrics_judge_prompt"),
}


def parse_conftest(text: str) -> ConftestDoc:
    """Parse normalized ``eval/conftest.yml`` text (what ``load_conftest`` requires).
    Never raises."""
    doc = ConftestDoc()
    root, issues = _read(text)
    doc.root = root
    doc.issues = issues
    if any(i.code == YAML_SYNTAX for i in issues):
        return doc

    def err(rng: TextRange, message: str) -> None:
        if not rng.length:
            rng = TextRange(rng.start, min(rng.start + 1, len(text)))
        doc.issues.append(SyntaxIssue(C_CONFTEST, message, rng))

    if not isinstance(root, YMap):
        what = "an empty file" if _is_null(root) else _describe(root)
        rng = root.range if root is not None else TextRange(0, min(1, len(text)))
        err(
            rng,
            f"eval/conftest.yml must be a mapping with `simulation:` and `evaluation:` "
            f"(found {what})",
        )
        return doc
    first = root.items[0][0].range if root.items else root.range
    for section in ("simulation", "evaluation"):
        node = _get(root, section)
        key = next((k for k, kv, _ in _pairs(root) if kv == section), None)
        if key is None:
            err(first, f"`{section}:` is missing (with its `llm:` `provider` and `model`)")
            continue
        if not isinstance(node, YMap):
            err(key.range, f"`{section}` must be a mapping with `llm:` (found {_describe(node)})")
            continue
        _conftest_section(doc, node, key, section, err)
    return doc


def _conftest_section(doc: ConftestDoc, node: YMap, key: YNode, section: str, err: Any) -> None:
    llm = _get(node, "llm")
    llm_key = next((k for k, kv, _ in _pairs(node) if kv == "llm"), None)
    if llm_key is None:
        err(key.range, f"`{section}` needs `llm:` with `provider` and `model`")
    elif not isinstance(llm, YMap):
        err(
            llm_key.range,
            f"`{section}.llm` must be a mapping with `provider` and `model` "
            f"(found {_describe(llm)})",
        )
    else:
        for name in _LLM:
            v = _get(llm, name)
            k = next((k for k, kv, _ in _pairs(llm) if kv == name), None)
            if k is None:
                err(llm_key.range, f"`{section}.llm` needs `{name}`")
            elif not isinstance(v, YScalar) or not isinstance(value12(v), str):
                err(
                    v.range if v is not None and v.range.length else k.range,
                    f"`{section}.llm.{name}` must be text (found {_describe(v)})",
                )
    for k, kv, v in _pairs(node):
        if kv in _PROMPTS[section]:
            if _is_null(v):
                continue  # None: no override
            n = _str_of(v)
            if n is None:
                err(v.range, f"`{kv}` must be a path (text), found {_describe(v)}")
            elif n.text:
                doc.prompts.append(PromptPath(str(kv), n))
        elif kv == "max_concurrent_llm_calls":
            _positive_int(v, k, f"{section}.max_concurrent_llm_calls", err)


def _positive_int(v: YNode, k: YNode, label: str, err: Any) -> None:
    """An `int` field with `ge=1` (pydantic's lax mode: a whole float or an integer
    string counts, a boolean does not)."""
    val = value12(v) if isinstance(v, YScalar) else v
    num: int | None = None
    if isinstance(val, bool):
        num = None
    elif isinstance(val, int):
        num = val
    elif isinstance(val, float) and math.isfinite(val) and val.is_integer():
        num = int(val)
    elif isinstance(val, str):
        try:
            num = int(val.strip())
        except ValueError:
            num = None
    if num is None:
        err(v.range if v.range.length else k.range, f"`{label}` must be a whole number")
    elif num < 1:
        err(v.range, f"`{label}` must be at least 1")


def conftest_value(doc: ConftestDoc) -> Any:
    """The conftest as Python data (YAML 1.2), for hover and completion."""
    return to_python12(doc.root)
