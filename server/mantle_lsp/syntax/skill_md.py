"""Parser for ``skills/<id>/skill.md``: frontmatter, prose paragraphs, tokens, ordered blocks.

The framing follows the engine exactly (docs/language/skill-md.md#framing): the whole file is
stripped, the
first line must be ``---``, the frontmatter runs to the next line that strips to ``---``,
the body is split into prose chunks and ``:::ordered_block`` fences, prose chunks into
paragraphs at blank lines, and each paragraph is classified by its first line.

Compile-time problems of this one file (what the engine folds into
``mantle.validation.skill.failed_to_load``) are reported here individually, under their own
codes, and parsing continues so that every problem shows at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from sys import intern
from typing import Any, Literal

from .cached import cached_property
from .errors import C_LEGACY, SyntaxIssue
from .sites import ConditionSite, SiteKind, site_from_scalar, site_from_text
from .text import TextRange, first_line
from .yaml_tree import (
    YMap,
    YNode,
    YScalar,
    YSeq,
    anchor_empty_ranges,
    describe,
    lax_bool,
    parse_yaml,
)

# ---------------------------------------------------------------------------------------
# Codes (registered with explanations in mantle_lsp.ide.codes)
# ---------------------------------------------------------------------------------------
C_DELIM = "skill.markdown.invalid_frontmatter_delimiter"
C_FM = "skill.markdown.invalid_frontmatter"
C_UNKNOWN_KEY = "skill.markdown.unknown_frontmatter_key"
C_REQUIRES = "skill.requires.removed"
C_PRECONDITION = "skill.precondition.invalid"
C_BOOL = "skill.markdown.invalid_boolean_frontmatter"
C_ROUTING = "skill.markdown.invalid_routing"
C_IMPORT = "skill.markdown.invalid_import_tools"
C_TC = "skill.markdown.invalid_tool_constraints"
C_UTTER = "skill.markdown.invalid_utter"
C_KA = "skill.markdown.invalid_knowledge_answering"
C_CW_MAP = "skill.complete_when.mapping_required"
C_CW = "skill.complete_when.invalid"
C_CW_PROSE = "skill.complete_when.requires_prose"
C_MISSING = "skill.markdown.missing_instructions"
C_ELSE = "skill.markdown.unsupported_prose_else"
C_ELIF = "skill.markdown.unsupported_prose_elif"
C_EMPTY_IF = "skill.markdown.empty_prose_if_condition"
C_EMPTY_BODY = "skill.markdown.empty_prose_if_body"
C_BLOCK_REF = "skill.markdown.invalid_block_reference"
C_BLOCK = "skill.markdown.invalid_ordered_block"
C_BLOCK_DESC = "skill.markdown.ordered_block_description_forbidden"
C_BLOCK_ROUTABLE = "skill.markdown.ordered_block_routable_forbidden"
C_STEP_TARGET = "skill.markdown.invalid_step_target"
C_STEP = "skill.step.invalid"
C_FORCE = "skill.step.outdated_force_collection"
C_COLLECT_TOOL = "skill.step.outdated_collect_tool"
C_DUP_STEP = "lsp.flow.duplicate_step_id"
C_BRANCH_IF_LOST = "lsp.flow.branch_if_ignored"
C_FENCE_IGNORED = "lsp.markdown.fence_not_recognised"

# The compile errors: on any of them rasa-pro fails to load the whole skill (and reports
# the first as ``mantle.validation.skill.failed_to_load``). ``ide/codes.py`` notes each as
# such (a test holds the two equal); ``Skill.load_failure`` asks this set.
COMPILE_CODES = frozenset(
    {
        C_DELIM, C_FM, C_UNKNOWN_KEY, C_REQUIRES, C_PRECONDITION, C_BOOL, C_ROUTING,
        C_IMPORT, C_TC, C_UTTER, C_KA, C_CW_MAP, C_CW, C_CW_PROSE, C_MISSING, C_ELSE,
        C_ELIF, C_EMPTY_IF, C_EMPTY_BODY, C_BLOCK_REF, C_BLOCK, C_BLOCK_DESC,
        C_BLOCK_ROUTABLE, C_STEP_TARGET, C_STEP, C_FORCE, C_COLLECT_TOOL,
    }
)  # fmt: skip
# The conditions rasa-pro parses when it compiles skill.md, by site, with the compile
# error a condition that does not parse is (the rules parse them on use, not the parser).
COMPILED_CONDITIONS: dict[SiteKind, str] = {"utter_when": C_UTTER, "skill_complete_when": C_CW}

FRONTMATTER_KEYS = (
    "name",
    "description",
    "precondition",
    "hidden",
    "disabled",
    "always_include_in_prompt",
    "complete_when",
    "import_tools",
    "tool_constraints",
    "utter",
    "knowledge_answering",
    "routing",
)
_LEGACY_KEY_HINTS = {
    "constraints": "`constraints:` is a 3.20-era key; move each rule into the prose body",
    "id": "the skill id is always the folder name; remove `id:`",
    "memory": "declare memory in this skill's memory.yml under `schema:`",
    "engine": "`engine:` is not a Mantle key; remove it",
    "metadata": "`metadata:` is not a Mantle frontmatter key",
    "license": "`license:` belongs to the agent-skills SKILL.md format, not to Mantle",
    "disabled_when": "`disabled_when:` does not exist; use `disabled: true` or a precondition",
    "ask_confirmation": "write `requires_confirmation: {enabled: true}` under `tool_constraints`",
}
STEP_KIND_KEYS = ("instructions", "collect", "action", "execute_tool", "set_memory", "call", "link")
STEP_KEYS: dict[str, tuple[str, ...]] = {
    "instructions": ("id", "instructions", "complete_when", "optional", "next"),
    "collect": (
        "id",
        "collect",
        "utterance",
        "description",
        "dtmf",
        "ask_before_filling",
        "next",
    ),
    "action": ("id", "action", "next"),
    "utter": ("id", "utter", "next"),
    "route": ("id", "noop", "next"),
    "execute_tool": ("id", "execute_tool", "parameters", "next"),
    "set_memory": ("id", "set_memory", "next"),
    "call": ("id", "call", "next"),
    "link": ("id", "link"),
}
# the keys of each kind of step whose value must be a non-empty string
_STEP_STR_KEYS: dict[str, tuple[str, ...]] = {
    "instructions": ("instructions",),
    "collect": ("collect", "utterance", "description"),
    "action": ("action",),
    "utter": ("utter",),
    "execute_tool": ("execute_tool",),
    "call": ("call",),
    "link": ("link",),
}
ALL_STEP_KEYS = sorted({k for keys in STEP_KEYS.values() for k in keys})
BLOCK_KEYS = ("steps", "tools", "complete_when")
TOOL_CONSTRAINT_OPTIONS = ("requires", "requires_confirmation", "on_success", "on_failure")
CONFIRMATION_KEYS = ("enabled", "utter_for_confirmation", "utter_on_user_denial")
BLOCK_TOOL_KEYS = ("name", "requires", "requires_confirmation", "on_success", "on_failure")

_MCP_RE = re.compile(r"mcp/([A-Za-z0-9][A-Za-z0-9_.-]*):([A-Za-z0-9][A-Za-z0-9_-]{0,63})\Z")
_FENCE_RE = re.compile(
    r":::ordered_block(?:\s+id=([\w-]+))?[^\S\n]*\n(.*?)^:::[^\S\n]*$", re.S | re.M
)
_FENCE_WORD_RE = re.compile(r":::ordered_block")
_PARA_BREAK_RE = re.compile(r"\n[ \t]*\n+")

# Instruction-text tokens (docs/language/skill-md.md#tokens), in our own words.
#
# Each starts where the character before it is not a word character (``(?<!\w)@memory``),
# but is written with that test after the literal it starts with (``@memory(?<!\w@memory)``,
# the same test): a pattern that starts with a literal is searched for by that literal,
# one that starts with a lookbehind is tried at every character of the text, ~20 times
# slower on prose (``test_token_patterns_find_what_their_plain_forms_find``).
_ID = r"[\w-]+"
MEMORY_TOKEN_RE = re.compile(rf"@memory(?<!\w@memory)\.({_ID})\.({_ID})(?![\w-])(?!\.[\w-])")
MEMORY_LOOKALIKE_RE = re.compile(rf"@memory(?<!\w@memory)(?:\.{_ID})*")
AT_TOKEN_RE = re.compile(rf"@(?<!\w@)(skill|block|tool)\.({_ID})(?![\w-])(?!\.[\w-])")
AT_LOOKALIKE_RE = re.compile(rf"@(?<!\w@)(skill|block|tool)(?:\.{_ID})*(?![\w-])")
SESSION_IN_PROSE_RE = re.compile(rf"session(?<![\w.]session)\.({_ID})\.({_ID})")

TokenKind = Literal[
    "memory", "skill", "block", "tool", "incomplete_memory", "incomplete_at", "session"
]


@dataclass(eq=False, slots=True)  # a huge skill.md has hundreds of thousands
class Token:
    """An @-token or a bare ``session.a.b`` in instruction text."""

    kind: TokenKind
    text: str
    range: TextRange
    where: Literal["prose", "instructions"]
    # memory/session: (namespace, entry); skill/block/tool: (target,)
    parts: tuple[tuple[str, TextRange], ...] = ()


@dataclass(eq=False, slots=True)
class Paragraph:
    kind: Literal["text", "if", "else", "elif"]
    range: TextRange
    first_line: TextRange
    marker: TextRange | None = None
    condition: str | None = None
    condition_range: TextRange | None = None
    body_range: TextRange | None = None  # the instruction text of the paragraph


@dataclass(eq=False, slots=True)
class Branch:
    item: YNode
    if_node: YNode | None
    then_node: YNode | None
    else_node: YNode | None


@dataclass(eq=False)
class Step:
    node: YNode
    index: int
    id: str | None = None
    id_node: YScalar | None = None
    kind: str | None = None  # instructions, collect, action, execute_tool, set_memory,
    # call, link, route, end
    next_node: YNode | None = None
    branches: list[Branch] = field(default_factory=list)

    def get(self, key: str) -> YNode | None:
        return self._values.get(key)

    @cached_property
    def _values(self) -> dict[Any, YNode]:
        """The step's attributes by name (the last of duplicates, as the engine's loader
        keeps): rules read several of every step."""
        node = self.node
        if not isinstance(node, YMap):
            return {}
        return {k.value: v for k, v in node.items if isinstance(k, YScalar)}

    def str_field(self, key: str) -> tuple[str, YScalar] | None:
        n = self.get(key)
        if isinstance(n, YScalar) and isinstance(n.value, str):
            return n.value, n
        return None

    def next_targets(self) -> list[YScalar]:
        """Every step-id target named by ``next`` (string form, ``then`` and ``else``)."""
        out: list[YScalar] = []
        if isinstance(self.next_node, YScalar) and isinstance(self.next_node.value, str):
            out.append(self.next_node)
        for b in self.branches:
            for n in (b.then_node, b.else_node):
                if isinstance(n, YScalar) and isinstance(n.value, str):
                    out.append(n)
        return out


@dataclass(eq=False)
class GateTool:
    """A tool named in frontmatter ``tool_constraints`` or in a block's ``tools:``."""

    name: str
    name_node: YScalar
    requires: YNode | None = None
    confirmation: YNode | None = None
    confirmation_enabled: bool = False
    on_success: YNode | None = None
    on_failure: YNode | None = None
    utter_for_confirmation: YNode | None = None
    utter_on_user_denial: YNode | None = None
    in_block: str | None = None


@dataclass(eq=False)
class Block:
    id: str | None
    id_range: TextRange | None
    open_range: TextRange  # the `:::ordered_block id=…` line
    range: TextRange  # from the fence to the end of the closing `:::`
    body_range: TextRange
    root: YNode | None = None
    steps: list[Step] = field(default_factory=list)
    tools: list[GateTool] = field(default_factory=list)
    complete_when: YNode | None = None


@dataclass(eq=False)
class UtterTrigger:
    name: str
    name_node: YScalar
    on_node: YNode | None
    when_node: YNode | None


@dataclass(eq=False)
class SkillDoc:
    text: str
    skill_id: str
    frontmatter: YMap | None = None
    frontmatter_range: TextRange | None = None
    body_range: TextRange | None = None
    paragraphs: list[Paragraph] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    tokens: list[Token] = field(default_factory=list)
    conditions: list[ConditionSite] = field(default_factory=list)
    gate_tools: list[GateTool] = field(default_factory=list)
    utter: list[UtterTrigger] = field(default_factory=list)
    import_tools: list[YScalar] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)
    framed: bool = False  # frontmatter delimiters were found

    # -- frontmatter accessors --------------------------------------------------------
    def fm(self, key: str) -> YNode | None:
        return self.frontmatter.get(key) if self.frontmatter is not None else None

    def fm_str(self, key: str) -> str | None:
        n = self.fm(key)
        return n.value if isinstance(n, YScalar) and isinstance(n.value, str) else None

    def fm_bool(self, key: str) -> bool:
        n = self.fm(key)
        return isinstance(n, YScalar) and n.value is True

    @property
    def description(self) -> str | None:
        return self.fm_str("description")

    @property
    def hidden(self) -> bool:
        return self.fm_bool("hidden")

    @property
    def has_prose(self) -> bool:
        return bool(self.paragraphs)

    @property
    def blocks_only(self) -> bool:
        return not self.paragraphs and bool(self.blocks)

    def routing_flag(self, key: str) -> bool | None:
        r = self.fm("routing")
        if isinstance(r, YMap):
            v = r.get(key)
            if isinstance(v, YScalar):
                return lax_bool(v.value)
        return None

    def block(self, block_id: str) -> Block | None:
        for b in self.blocks:
            if b.id == block_id:
                return b
        return None

    def steps(self) -> list[tuple[Block, Step]]:
        return [(b, s) for b in self.blocks for s in b.steps]


# ---------------------------------------------------------------------------------------


def parse_skill_md(text: str, skill_id: str) -> SkillDoc:
    """Parse normalized ``skill.md`` text. Never raises."""
    doc = SkillDoc(text=text, skill_id=skill_id)
    _Parser(doc).run()
    doc.issues = anchor_empty_ranges(doc.issues, doc.frontmatter, *(b.root for b in doc.blocks))
    return doc


class _Parser:
    def __init__(self, doc: SkillDoc) -> None:
        self.doc = doc
        self.text = doc.text

    def err(self, code: str, message: str, rng: TextRange, severity: str = "error") -> None:
        self.doc.issues.append(SyntaxIssue(code, message, rng, severity))  # type: ignore[arg-type]

    # -- framing ---------------------------------------------------------------------
    def run(self) -> None:
        text = self.text
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        if start >= end:
            self.err(
                C_DELIM,
                "skill.md is empty: it must start with a `---` line, YAML frontmatter "
                "(at least `description:`), a closing `---` line, then instructions",
                TextRange(0, 0),
            )
            return
        first_end = text.find("\n", start)
        if first_end < 0 or first_end > end:
            first_end = end
        if text[start:first_end].strip() != "---":
            self.err(
                C_DELIM,
                "skill.md must start with a `---` line that opens the YAML frontmatter",
                TextRange(start, first_end),
            )
            self._parse_body(start, end, framed=False)
            return
        # find the closing delimiter
        pos = first_end + 1
        close: tuple[int, int] | None = None
        while pos <= end:
            le = text.find("\n", pos)
            if le < 0 or le > end:
                le = end
            if text[pos:le].strip() == "---":
                close = (pos, le)
                break
            pos = le + 1
        if close is None:
            self.err(
                C_DELIM,
                "the frontmatter is never closed: add a line `---` after the YAML",
                TextRange(start, first_end),
            )
            return
        self.doc.framed = True
        fm_start = min(first_end + 1, close[0])
        fm_text = text[fm_start : close[0]]
        self.doc.frontmatter_range = TextRange(fm_start, close[0])
        root, issues = parse_yaml(fm_text, fm_start)
        for i in issues:
            if i.code.endswith("syntax_error"):
                self.err(C_FM, f"frontmatter {i.message}", i.range)
            else:
                self.doc.issues.append(i)
        if root is not None and not isinstance(root, YMap):
            self.err(
                C_FM,
                f"the frontmatter must be a YAML mapping of keys (found {describe(root)})",
                root.range,
            )
        elif isinstance(root, YMap):
            self.doc.frontmatter = root
        self._parse_body(close[1], end, framed=True)
        self._check_frontmatter()

    # -- body ------------------------------------------------------------------------
    def _parse_body(self, start: int, end: int, framed: bool) -> None:
        text = self.text
        # body is stripped
        while start < end and text[start].isspace():
            start += 1
        self.doc.body_range = TextRange(start, end)
        chunks: list[tuple[int, int]] = []
        pos = start
        body = text[:end]
        for m in _FENCE_RE.finditer(body, start):
            chunks.append((pos, m.start()))
            self._parse_block(m)
            pos = m.end()
        chunks.append((pos, end))
        for cs, ce in chunks:
            self._parse_prose_chunk(cs, ce)
        self._report_unrecognised_fences(chunks)
        self._check_block_ids()
        if framed and not self.doc.paragraphs and not self.doc.blocks:
            self.err(
                C_MISSING,
                "the skill has no instructions: write prose after the frontmatter or add an "
                "`:::ordered_block id=…` fence",
                TextRange(start, end) if end > start else TextRange(start - 3, start),
            )
        block_ids = {b.id for b in self.doc.blocks if b.id}
        for tok in self.doc.tokens:
            if tok.kind == "block" and tok.parts and tok.parts[0][0] not in block_ids:
                name = tok.parts[0][0]
                known = ", ".join(sorted(block_ids)) or "none"
                self.err(
                    C_BLOCK_REF,
                    f"`@block.{name}` names no ordered block of this skill (blocks: {known})",
                    tok.range,
                )

    def _report_unrecognised_fences(self, chunks: list[tuple[int, int]]) -> None:
        for cs, ce in chunks:
            for m in _FENCE_WORD_RE.finditer(self.text, cs, ce):
                line_end = self.text.find("\n", m.start())
                line_end = ce if line_end < 0 or line_end > ce else line_end
                self.err(
                    C_FENCE_IGNORED,
                    "this `:::ordered_block` is not recognised as a fence, so its YAML is read as "
                    "prose: the opening line must be exactly `:::ordered_block id=<id>` (id made "
                    "of letters, digits, `_`, `-`; nothing after it) and the block must end with "
                    "a line `:::` at column 0",
                    TextRange(m.start(), line_end),
                    "warning",
                )

    def _parse_prose_chunk(self, cs: int, ce: int) -> None:
        text = self.text
        while cs < ce and text[cs].isspace():
            cs += 1
        while ce > cs and text[ce - 1].isspace():
            ce -= 1
        if cs >= ce:
            return
        pos = cs
        for m in _PARA_BREAK_RE.finditer(text, cs, ce):
            self._paragraph(pos, m.start())
            pos = m.end()
        self._paragraph(pos, ce)

    def _paragraph(self, ps: int, pe: int) -> None:
        text = self.text
        if ps >= pe:
            return
        fl_end = text.find("\n", ps, pe)
        fl_end = pe if fl_end < 0 else fl_end
        line = text[ps:fl_end]
        lead = len(line) - len(line.lstrip(" \t"))
        stripped = line.strip(" \t")
        first = TextRange(ps, fl_end)
        ms = ps + lead
        if stripped.startswith("else:"):
            p = Paragraph("else", TextRange(ps, pe), first, TextRange(ms, ms + 5))
            self.err(
                C_ELSE,
                "prose has no `else:`: a paragraph is scoped only by its own `if:` line; write "
                "a second paragraph with the negated condition (`if: not …`)",
                p.marker or first,
            )
            self.doc.paragraphs.append(p)
            self._scan_tokens(ps, pe, "prose")
            return
        if stripped.startswith("elif:"):
            p = Paragraph("elif", TextRange(ps, pe), first, TextRange(ms, ms + 5))
            self.err(
                C_ELIF,
                "prose has no `elif:`: give each case its own paragraph starting with `if:`",
                p.marker or first,
            )
            self.doc.paragraphs.append(p)
            self._scan_tokens(ps, pe, "prose")
            return
        if stripped.startswith("if:"):
            cond_raw_start = ms + 3
            cond_raw = text[cond_raw_start:fl_end]
            c_lead = len(cond_raw) - len(cond_raw.lstrip())
            cond = cond_raw.strip()
            c_start = cond_raw_start + c_lead
            body_s = fl_end + 1 if fl_end < pe else pe
            body_text = text[body_s:pe]
            b_lead = len(body_text) - len(body_text.lstrip())
            b_start = body_s + b_lead
            b_end = body_s + len(body_text.rstrip())
            p = Paragraph(
                "if",
                TextRange(ps, pe),
                first,
                TextRange(ms, ms + 3),
                cond,
                TextRange(c_start, c_start + len(cond)),
                TextRange(b_start, b_end) if b_end > b_start else None,
            )
            self.doc.paragraphs.append(p)
            if not cond:
                self.err(
                    C_EMPTY_IF,
                    "`if:` needs a condition on the same line, e.g. "
                    "`if: session.<skill_id>.<entry> == 'value'`",
                    TextRange(ms, fl_end),
                )
            else:
                self.doc.conditions.append(site_from_text("prose_if", cond, c_start))
            if p.body_range is None:
                self.err(
                    C_EMPTY_BODY,
                    "this `if:` scopes nothing: write the scoped instructions on the lines right "
                    "below it, in the same paragraph (no blank line in between)",
                    TextRange(ms, fl_end),
                )
            else:
                self._scan_tokens(p.body_range.start, p.body_range.end, "prose")
            return
        # the engine uses the whole paragraph, stripped (it may start with a blank line)
        bs = ps + len(text[ps:pe]) - len(text[ps:pe].lstrip())
        p = Paragraph("text", TextRange(ps, pe), first, body_range=TextRange(bs, pe))
        self.doc.paragraphs.append(p)
        self._scan_tokens(ps, pe, "prose")

    # -- tokens ------------------------------------------------------------------------
    def _scan_tokens(self, start: int, end: int, where: Literal["prose", "instructions"]) -> None:
        self.doc.tokens.extend(scan_instruction_tokens(self.text, start, end, where))

    def _scan_tokens_in_scalar(self, node: YScalar) -> None:
        """Tokens in a YAML ``instructions:`` string, mapped back to the file."""
        from .yaml_tree import scalar_value_map

        vm = scalar_value_map(self.text, node)
        for tok in scan_instruction_tokens(node.raw, 0, len(node.raw), "instructions"):
            rng = vm.range(tok.range.start, tok.range.end)
            parts = tuple((name, vm.range(r.start, r.end)) for name, r in tok.parts)
            self.doc.tokens.append(Token(tok.kind, tok.text, rng, tok.where, parts))

    # -- ordered blocks ---------------------------------------------------------------
    def _parse_block(self, m: re.Match[str]) -> None:
        text = self.text
        open_end = text.find("\n", m.start())
        open_range = TextRange(m.start(), open_end if open_end >= 0 else m.end())
        body_start, body_end = m.start(2), m.end(2)
        block_id = m.group(1)
        id_range = TextRange(m.start(1), m.end(1)) if block_id else None
        blk = Block(
            block_id,
            id_range,
            open_range,
            TextRange(m.start(), m.end()),
            TextRange(body_start, body_end),
        )
        self.doc.blocks.append(blk)
        if block_id is None:
            self.err(
                C_BLOCK,
                "an ordered block must declare its id on the fence line: "
                "`:::ordered_block id=<block_id>`",
                open_range,
            )
        # body is stripped before YAML parsing
        bs = body_start
        while bs < body_end and text[bs].isspace():
            bs += 1
        be = body_end
        while be > bs and text[be - 1].isspace():
            be -= 1
        # The engine parses the stripped body; offsets stay exact because the substring
        # starts at the first non-blank character.
        yaml_text = text[bs:be]
        root, issues = parse_yaml(yaml_text, bs)
        for i in issues:
            if i.code.endswith("syntax_error"):
                tab_hint = " (tabs cannot indent YAML; use spaces)" if "\t" in yaml_text else ""
                self.err(C_BLOCK, f"ordered block {i.message}{tab_hint}", i.range)
            else:
                self.doc.issues.append(i)
        if root is None:
            return
        if not isinstance(root, YMap):
            self.err(
                C_BLOCK,
                f"the body of an ordered block must be a YAML mapping with `steps:` "
                f"(found {describe(root)})",
                root.range,
            )
            return
        blk.root = root
        for k, v in root.pairs():
            key = k.value
            if key == "description":
                self.err(
                    C_BLOCK_DESC,
                    "an ordered block has no `description:` (routing text belongs in the "
                    "skill's frontmatter `description`)",
                    k.range,
                )
            elif key == "routable":
                self.err(
                    C_BLOCK_ROUTABLE,
                    "`routable:` is set by the engine (false for skills with prose, true for "
                    "blocks-only skills); remove it",
                    k.range,
                )
            elif key == "id":
                self.err(
                    C_LEGACY,
                    "`id:` inside the block YAML does nothing: the block id is the fence "
                    "attribute `:::ordered_block id=<id>`",
                    k.range,
                    "warning",
                )
            elif key == "steps":
                self._parse_steps(blk, v)
            elif key == "tools":
                self._parse_block_tools(blk, v)
            elif key == "complete_when":
                blk.complete_when = v
                self._condition_value(v, "block_complete_when", C_BLOCK, block_id or "")

    def _condition_value(
        self, node: YNode | None, kind: SiteKind, code: str, context: str, what: str = ""
    ) -> None:
        """Register a YAML node that must be a condition string."""
        if node is None:
            return
        if isinstance(node, YScalar) and isinstance(node.value, str):
            self.doc.conditions.append(site_from_scalar(kind, self.text, node, context))
            return
        if isinstance(node, YMap):
            self.err(
                code,
                f"{what or 'a condition'} must be a condition string such as "
                "\"session.<skill_id>.<entry> == 'value'\"; the map form "
                "(`field: {exists: true}`) is obsolete",
                node.range,
            )
            return
        if isinstance(node, YScalar) and node.value is None:
            return
        self.err(
            code,
            f"{what or 'a condition'} must be a string (found {describe(node)}); quote it",
            node.range,
        )

    def _parse_steps(self, blk: Block, node: YNode) -> None:
        if isinstance(node, YScalar) and node.value is None:
            return
        if not isinstance(node, YSeq):
            self.err(
                C_STEP, f"`steps:` must be a list of steps (found {describe(node)})", node.range
            )
            return
        seen: dict[str, Step] = {}
        for idx, item in enumerate(node.items):
            step = self._parse_step(blk, item, idx)
            blk.steps.append(step)
            if step.id and step.id_node is not None and step.id != "END":
                if step.id in seen:
                    self.err(
                        C_DUP_STEP,
                        f"step id '{step.id}' is used twice in this block; `next` targets "
                        "become ambiguous (the engine does not detect this)",
                        step.id_node.range,
                        "warning",
                    )
                seen[step.id] = step

    def _parse_step(self, blk: Block, item: YNode, idx: int) -> Step:
        step = Step(item, idx)
        if not isinstance(item, YMap):
            self.err(
                C_STEP,
                f"a step must be a mapping with an `id:` (found {describe(item)})",
                item.range,
            )
            return step
        # the step's keys by name, read once (the last of duplicates, as YMap.get): the
        # checks below ask for a dozen of them, and rules ask again (Step.get)
        vals = step._values
        idn = vals.get("id")
        if isinstance(idn, YScalar) and isinstance(idn.value, str) and idn.value:
            step.id, step.id_node = idn.value, idn
        else:
            self.err(
                C_STEP,
                "every step needs a string `id:`"
                + ("" if idn is None else f" (found {describe(idn)})"),
                idn.range if idn is not None else first_line(self.text, item.range),
            )
        # kind inference (engine order)
        noop = vals.get("noop")
        kind: str | None
        if step.id == "END":
            step.kind = "end"
            return step
        if isinstance(noop, YScalar) and noop.value is True:
            kind = "route"
        elif "utter" in vals:
            kind = "utter"
        else:
            kind = next((k for k in STEP_KIND_KEYS if k in vals), None)
        if kind is None:
            self.err(
                C_STEP,
                "cannot tell what this step does: give it one of `instructions`, `collect`, "
                "`action`, `execute_tool`, `set_memory`, `call`, `link`, or `noop: true`",
                step.id_node.range if step.id_node else first_line(self.text, item.range),
            )
            return step
        step.kind = "action" if kind == "utter" else kind
        allowed = STEP_KEYS[kind]
        for k, _ in item.pairs():
            key = k.value
            if key in allowed:
                continue
            if key == "force_collection" and kind == "collect":
                self.err(
                    C_FORCE,
                    "`force_collection` was removed: use `ask_before_filling: true`",
                    k.range,
                )
            elif key == "tool" and kind == "collect":
                self.err(
                    C_COLLECT_TOOL,
                    "a collect step has no `tool:` any more: validate the value in a "
                    "`run_after_setting_<entry>` tool instead",
                    k.range,
                )
            elif key == "next" and kind == "link":
                self.err(
                    C_STEP,
                    "a `link` step hands off and never returns, so it cannot have `next`",
                    k.range,
                )
            else:
                article = "an" if str(step.kind)[:1] in "aeiou" else "a"
                what = f"`{key}` is not a property of {article} {step.kind} step"
                if key in STEP_KIND_KEYS or key in ("noop", "utter"):
                    what = f"a step does one thing: `{key}` cannot be combined with `{kind}`"
                self.err(
                    C_STEP,
                    f"{what} (allowed: {', '.join(f'`{a}`' for a in allowed)})",
                    k.range,
                )
        sid = step.id or f"#{idx + 1}"
        ctx = f"step '{sid}'"
        # value types
        for key in _STEP_STR_KEYS.get(kind, ()):
            v = vals.get(key)
            if v is None:
                continue
            if not (isinstance(v, YScalar) and isinstance(v.value, str) and v.value.strip()):
                required = key == kind
                if required or not (isinstance(v, YScalar) and v.value is None):
                    self.err(
                        C_STEP,
                        f"`{key}` of {ctx} must be a non-empty string (found {describe(v)})",
                        v.range,
                    )
        if kind == "instructions":
            ins = vals.get("instructions")
            if isinstance(ins, YScalar) and isinstance(ins.value, str):
                self._scan_tokens_in_scalar(ins)
            cw = vals.get("complete_when")
            self._condition_value(cw, "step_complete_when", C_STEP, ctx, "a step's `complete_when`")
            opt = vals.get("optional")
            if opt is not None and not (isinstance(opt, YScalar) and isinstance(opt.value, bool)):
                self.err(C_STEP, "`optional` must be true or false", opt.range)
        if kind == "collect":
            abf = vals.get("ask_before_filling")
            if abf is not None and not (isinstance(abf, YScalar) and isinstance(abf.value, bool)):
                self.err(C_STEP, "`ask_before_filling` must be true or false", abf.range)
            dtmf = vals.get("dtmf")
            if dtmf is not None:
                self._check_dtmf(dtmf)
        if kind == "execute_tool":
            params = vals.get("parameters")
            # `parameters:` with nothing after it is null, which rasa-pro refuses too
            if params is not None and not isinstance(params, YMap):
                self.err(
                    C_STEP,
                    f"`parameters` must be a mapping of name: value (found {describe(params)})",
                    params.range,
                )
        if kind == "set_memory":
            sm = vals.get("set_memory")
            if not isinstance(sm, YMap):
                self.err(
                    C_STEP,
                    "`set_memory` must be a mapping of entry: value",
                    sm.range if sm else item.range,
                )
        if kind in ("call", "link"):
            tgt = vals.get(kind)
            if isinstance(tgt, YScalar) and isinstance(tgt.value, str):
                self._check_step_target(kind, tgt)
        # next
        nxt = vals.get("next")
        if nxt is not None and kind != "link":
            step.next_node = nxt
            self._parse_next(step, nxt, ctx)
        return step

    def _check_dtmf(self, dtmf: YNode) -> None:
        if not isinstance(dtmf, YMap):
            self.err(
                C_STEP, "`dtmf` must be a mapping with `length` or `finish_on_key`", dtmf.range
            )
            return
        has_len, has_key = dtmf.has("length"), dtmf.has("finish_on_key")
        if has_len == has_key:
            self.err(C_STEP, "`dtmf` needs exactly one of `length` and `finish_on_key`", dtmf.range)
        for k, _ in dtmf.pairs():
            if k.value not in ("length", "finish_on_key", "allow_audio_input"):
                self.err(
                    C_STEP,
                    f"`{k.value}` is not a `dtmf` option (allowed: `length`, "
                    "`finish_on_key`, `allow_audio_input`)",
                    k.range,
                )

    def _check_step_target(self, kind: str, tgt: YScalar) -> None:
        value = tgt.value
        assert isinstance(value, str)
        if "__" not in value:
            return
        own = f"{self.doc.skill_id}__"
        if value.startswith(own):
            return  # checked once all blocks are known (_check_block_ids)
        self.err(
            C_STEP_TARGET,
            f"`{kind}: {value}` looks like another skill's compiled block address; a "
            "cross-skill target must be a skill id (it runs from that skill's entry)",
            tgt.range,
        )

    def _parse_next(self, step: Step, nxt: YNode, ctx: str) -> None:
        if isinstance(nxt, YScalar):
            if nxt.value is not None and not isinstance(nxt.value, str):
                self.err(
                    C_STEP,
                    f"`next` must be a step id, `END`, or a list of branches "
                    f"(found {describe(nxt)})",
                    nxt.range,
                )
            return
        if isinstance(nxt, YMap):
            self.err(
                C_STEP,
                "`next` must be a step id, `END`, or a LIST of branches "
                "(`- if: …` / `then: …`, and `- else: …`)",
                nxt.range,
            )
            return
        assert isinstance(nxt, YSeq)
        for item in nxt.items:
            if not isinstance(item, YMap):
                self.err(
                    C_STEP,
                    "each `next` branch must be a mapping: `- if: <condition>` "
                    "with `then: <step>`, or `- else: <step>`",
                    item.range,
                )
                continue
            br = Branch(item, item.get("if"), item.get("then"), item.get("else"))
            step.branches.append(br)
            for k, _ in item.pairs():
                if k.value not in ("if", "then", "else"):
                    self.err(
                        C_STEP,
                        f"`{k.value}` is not a branch key (allowed: `if`, `then`, `else`)",
                        k.range,
                    )
            for key, node in (("then", br.then_node), ("else", br.else_node)):
                if node is not None and not (
                    isinstance(node, YScalar) and isinstance(node.value, str) and node.value
                ):
                    kn = item.key_node(key)
                    self.err(
                        C_STEP,
                        f"`{key}:` needs a step id or `END` (found {describe(node)})",
                        kn.range if kn is not None else item.range,
                    )
            if br.else_node is not None:
                if br.if_node is not None:
                    ifk = item.key_node("if")
                    self.err(
                        C_BRANCH_IF_LOST,
                        "a branch with `else:` is the fallback: its `if:` is silently ignored "
                        "by the engine; split it into an `if:`/`then:` branch and an `else:`",
                        ifk.range if ifk else item.range,
                        "warning",
                    )
                continue
            if br.if_node is not None:
                self._condition_value(br.if_node, "next_if", C_STEP, ctx, "a branch `if:`")
                if br.then_node is None:
                    ifk = item.key_node("if")
                    self.err(
                        C_STEP,
                        "this branch has `if:` but no `then: <step id>`",
                        ifk.range if ifk else item.range,
                    )

    def _parse_block_tools(self, blk: Block, node: YNode) -> None:
        if isinstance(node, YScalar) and node.value is None:
            return
        if not isinstance(node, YSeq):
            self.err(
                C_BLOCK, f"the block's `tools:` must be a list (found {describe(node)})", node.range
            )
            return
        ctx = f"block '{blk.id}'"
        for item in node.items:
            if isinstance(item, YScalar) and isinstance(item.value, str):
                gt = GateTool(item.value, item, in_block=blk.id)
                blk.tools.append(gt)
                continue
            if not isinstance(item, YMap):
                self.err(
                    C_BLOCK,
                    "a block `tools:` item is a tool name or a mapping with `name:`",
                    item.range,
                )
                continue
            name = item.get("name")
            if not (isinstance(name, YScalar) and isinstance(name.value, str)):
                self.err(
                    C_BLOCK,
                    "a block `tools:` mapping needs `name: <tool>` (the frontmatter form "
                    "`- tool: {…}` is not accepted here)",
                    item.range,
                )
                continue
            gt = GateTool(name.value, name, in_block=blk.id)
            self._fill_gate_options(gt, item, C_BLOCK, "block_tool_requires", ctx, block=True)
            blk.tools.append(gt)

    def _fill_gate_options(
        self, gt: GateTool, opts: YMap, code: str, kind: SiteKind, ctx: str, block: bool
    ) -> None:
        allowed = BLOCK_TOOL_KEYS if block else TOOL_CONSTRAINT_OPTIONS
        for k, v in opts.pairs():
            key = k.value
            if key not in allowed:
                if block:
                    continue  # engine ignores unknown keys in block tools
                hint = ""
                if key == "ask_confirmation":
                    hint = "; write `requires_confirmation: {enabled: true}`"
                self.err(
                    code,
                    f"`{key}` is not a tool constraint option (allowed: "
                    f"{', '.join(f'`{a}`' for a in allowed)}){hint}",
                    k.range,
                )
                continue
            if key == "requires":
                gt.requires = v
                self._condition_value(v, kind, code, f"tool '{gt.name}'", "`requires`")
            elif key in ("on_success", "on_failure"):
                if isinstance(v, YScalar) and isinstance(v.value, str):
                    setattr(gt, key, v)
                elif not (isinstance(v, YScalar) and v.is_null):  # the engine accepts null
                    self.err(
                        code, f"`{key}` must be a response name (found {describe(v)})", v.range
                    )
            elif key == "requires_confirmation":
                gt.confirmation = v
                if not isinstance(v, YMap):
                    self.err(
                        code,
                        "`requires_confirmation` must be a mapping such as `{enabled: true}`",
                        v.range,
                    )
                    continue
                for ck, cv in v.pairs():
                    if ck.value == "enabled":
                        if isinstance(cv, YScalar) and isinstance(cv.value, bool):
                            gt.confirmation_enabled = cv.value
                        else:
                            self.err(code, "`enabled` must be true or false", cv.range)
                    elif ck.value in ("utter_for_confirmation", "utter_on_user_denial"):
                        if isinstance(cv, YScalar) and isinstance(cv.value, str):
                            setattr(gt, ck.value, cv)
                        else:
                            self.err(code, f"`{ck.value}` must be a response name", cv.range)
                    else:
                        self.err(
                            code,
                            f"`{ck.value}` is not a `requires_confirmation` option "
                            "(allowed: `enabled`, `utter_for_confirmation`, "
                            "`utter_on_user_denial`)",
                            ck.range,
                        )

    def _check_block_ids(self) -> None:
        seen: dict[str, Block] = {}
        for b in self.doc.blocks:
            if not b.id:
                continue
            if b.id in seen and b.id_range is not None:
                self.err(C_BLOCK, f"block id '{b.id}' is already used in this skill", b.id_range)
            seen[b.id] = b
        own = f"{self.doc.skill_id}__"
        for _, step in self.doc.steps():
            for key in ("call", "link"):
                t = step.str_field(key)
                if t and t[0].startswith(own) and t[0][len(own) :] not in seen:
                    self.err(
                        C_STEP_TARGET,
                        f"`{key}: {t[0]}`: this skill has no block '{t[0][len(own) :]}'",
                        t[1].range,
                    )

    # -- frontmatter ----------------------------------------------------------------
    def _check_frontmatter(self) -> None:
        fm = self.doc.frontmatter
        if fm is None:
            return
        for k, v in fm.pairs():
            key = k.value
            if key == "requires":
                self.err(
                    C_REQUIRES,
                    "skill-level `requires:` was removed: bind a `precondition:` name in "
                    "agent.yml `orchestrator.preconditions`, or use `hidden: true`",
                    k.range,
                )
                continue
            if key not in FRONTMATTER_KEYS:
                hint = _LEGACY_KEY_HINTS.get(str(key))
                msg = f"unknown frontmatter key `{k.raw}`"
                msg += f": {hint}" if hint else f" (allowed: {', '.join(FRONTMATTER_KEYS)})"
                self.err(C_UNKNOWN_KEY, msg, k.range)
                continue
            getattr(self, f"_fm_{key}")(k, v)

    def _fm_name(self, k: YScalar, v: YNode) -> None:
        self._fm_string(k, v, allow_null=True)

    def _fm_description(self, k: YScalar, v: YNode) -> None:
        self._fm_string(k, v, allow_null=True)

    def _fm_string(self, k: YScalar, v: YNode, allow_null: bool) -> None:
        if isinstance(v, YScalar) and (isinstance(v.value, str) or (allow_null and v.is_null)):
            return
        self.err(C_FM, f"`{k.raw}` must be a string (found {describe(v)}); quote it", v.range)

    def _fm_precondition(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if not (isinstance(v, YScalar) and isinstance(v.value, str) and v.value.strip()):
            self.err(
                C_PRECONDITION,
                "`precondition` must be the non-empty name of a binding "
                "in agent.yml `orchestrator.preconditions`",
                v.range,
            )

    def _fm_bool(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and (v.is_null or isinstance(v.value, bool)):
            return
        self.err(C_BOOL, f"`{k.raw}` must be true or false (found {describe(v)})", v.range)

    _fm_hidden = _fm_bool
    _fm_disabled = _fm_bool
    _fm_always_include_in_prompt = _fm_bool

    def _fm_routing(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YMap):
            self.err(
                C_ROUTING,
                "`routing` must be a mapping `{is_default: …, engine_managed: …}`",
                v.range,
            )
            return
        for rk, rv in v.pairs():
            if rk.value not in ("is_default", "engine_managed"):
                self.err(
                    C_UNKNOWN_KEY,
                    f"unknown `routing` key `{rk.raw}` (allowed: is_default, engine_managed)",
                    rk.range,
                )
            elif not isinstance(rv, YScalar) or lax_bool(rv.value) is None:
                self.err(C_ROUTING, f"`routing.{rk.raw}` must be true or false", rv.range)

    def _fm_knowledge_answering(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YMap):
            self.err(C_KA, "`knowledge_answering` must be a mapping `{instructions: …}`", v.range)
            return
        for kk, kv in v.pairs():
            if kk.value != "instructions":
                self.err(
                    C_KA,
                    f"`{kk.raw}` is not a `knowledge_answering` key (only `instructions`)",
                    kk.range,
                )
            elif not (isinstance(kv, YScalar) and isinstance(kv.value, str)):
                self.err(C_KA, "`instructions` must be a string", kv.range)

    def _fm_import_tools(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YSeq):
            self.err(
                C_IMPORT,
                f"`import_tools` must be a list of tool names (found {describe(v)})",
                v.range,
            )
            return
        for item in v.items:
            if not (isinstance(item, YScalar) and isinstance(item.value, str)):
                self.err(
                    C_IMPORT,
                    f"an `import_tools` entry must be a string (found {describe(item)})",
                    item.range,
                )
                continue
            if item.value.startswith("mcp/") and not _MCP_RE.match(item.value):
                self.err(
                    C_IMPORT,
                    f"malformed MCP import '{item.value}': write `mcp/<server>:<tool>` (server: "
                    "letters, digits, `_.-`; tool: letters, digits, `_-`, at most 64)",
                    item.range,
                )
                continue
            self.doc.import_tools.append(item)

    def _fm_tool_constraints(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YSeq):
            self.err(
                C_TC, "`tool_constraints` must be a list of `- <tool_name>: {…}` items", v.range
            )
            return
        for item in v.items:
            if not isinstance(item, YMap) or len(item.items) != 1:
                self.err(
                    C_TC,
                    "each `tool_constraints` item must be a mapping with exactly one key, the "
                    'tool name: `- lock_card: {requires: "…"}`',
                    item.range,
                )
                continue
            kn, opts = item.items[0]
            if not (isinstance(kn, YScalar) and isinstance(kn.value, str) and kn.value):
                self.err(C_TC, "the tool name must be a non-empty string", kn.range)
                continue
            gt = GateTool(kn.value, kn)
            self.doc.gate_tools.append(gt)
            if isinstance(opts, YScalar) and opts.is_null:
                continue
            if not isinstance(opts, YMap):
                self.err(
                    C_TC,
                    f"the options of `{kn.value}` must be a mapping (found {describe(opts)})",
                    opts.range,
                )
                continue
            self._fill_gate_options(gt, opts, C_TC, "tool_requires", "", block=False)

    def _fm_utter(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YSeq):
            self.err(
                C_UTTER,
                "`utter` must be a list of `- <response_name>: {on: activate | when: …}` items",
                v.range,
            )
            return
        seen: set[str] = set()
        for item in v.items:
            if not isinstance(item, YMap) or len(item.items) != 1:
                self.err(
                    C_UTTER,
                    "each `utter` item must be a mapping with exactly one key, the response name",
                    item.range,
                )
                continue
            kn, opts = item.items[0]
            if not (isinstance(kn, YScalar) and isinstance(kn.value, str) and kn.value):
                self.err(C_UTTER, "the response name must be a string", kn.range)
                continue
            if kn.value in seen:
                self.err(C_UTTER, f"response '{kn.value}' is listed twice under `utter`", kn.range)
            seen.add(kn.value)
            trig = UtterTrigger(kn.value, kn, None, None)
            self.doc.utter.append(trig)
            if not isinstance(opts, YMap):
                self.err(
                    C_UTTER,
                    f"`{kn.value}` needs `on: activate` and/or `when: <condition>`",
                    opts.range if opts else kn.range,
                )
                continue
            for ok, ov in opts.pairs():
                if ok.value is True or ok.value == "on":  # unquoted `on` is YAML 1.1 true
                    trig.on_node = ov
                    if not (isinstance(ov, YScalar) and ov.value in ("activate", None)):
                        self.err(C_UTTER, "`on:` accepts only `activate`", ov.range)
                elif ok.value == "when":
                    trig.when_node = ov
                    if isinstance(ov, YScalar) and isinstance(ov.value, str) and ov.value.strip():
                        self.doc.conditions.append(
                            site_from_scalar("utter_when", self.text, ov, kn.value)
                        )
                    else:
                        self.err(C_UTTER, "`when:` must be a non-empty condition string", ov.range)
                else:
                    self.err(
                        C_UTTER,
                        f"`{ok.raw}` is not an `utter` option (allowed: `on`, `when`)",
                        ok.range,
                    )
            if trig.on_node is None and trig.when_node is None:
                self.err(
                    C_UTTER,
                    f"`{kn.value}` needs `on: activate` and/or `when: <condition>`",
                    kn.range,
                )

    def _fm_complete_when(self, k: YScalar, v: YNode) -> None:
        if isinstance(v, YScalar) and v.is_null:
            return
        if isinstance(v, YScalar) and isinstance(v.value, str):
            self.err(
                C_CW_MAP,
                "skill-level `complete_when` is a mapping: write `complete_when: {condition: "
                '"…"}` (and/or `criteria: [...]`)',
                v.range,
            )
            return
        if not isinstance(v, YMap):
            self.err(C_CW, f"`complete_when` must be a mapping (found {describe(v)})", v.range)
            return
        if not self.doc.paragraphs and self.doc.blocks:
            self.err(
                C_CW_PROSE,
                "skill-level `complete_when` needs prose in the body; a "
                "blocks-only skill ends with its blocks",
                k.range,
            )
        has_any = False
        for ck, cv in v.pairs():
            if ck.value == "condition":
                has_any = True
                if isinstance(cv, YScalar) and isinstance(cv.value, str) and cv.value.strip():
                    self.doc.conditions.append(
                        site_from_scalar("skill_complete_when", self.text, cv)
                    )
                else:
                    self.err(
                        C_CW,
                        "`complete_when.condition` must be a non-empty condition string",
                        cv.range,
                    )
            elif ck.value == "criteria":
                has_any = True
                self._criteria(cv)
            else:
                self.err(
                    C_CW,
                    f"`{ck.raw}` is not a `complete_when` key (allowed: `condition`, `criteria`)",
                    ck.range,
                )
        if not has_any:
            self.err(C_CW, "`complete_when` needs `condition` and/or `criteria`", k.range)

    def _criteria(self, cv: YNode) -> None:
        if not isinstance(cv, YSeq):
            self.err(C_CW, "`criteria` must be a list of strings", cv.range)
            return
        seen: set[str] = set()
        for it in cv.items:
            if not (isinstance(it, YScalar) and isinstance(it.value, str) and it.value.strip()):
                self.err(C_CW, "each criterion must be a non-empty string", it.range)
            elif it.value in seen:
                self.err(C_CW, "this criterion is listed twice", it.range)
            else:
                seen.add(it.value)


def scan_instruction_tokens(
    text: str, start: int, end: int, where: Literal["prose", "instructions"]
) -> list[Token]:
    """All @-tokens, incomplete lookalikes and bare ``session.a.b`` in ``text[start:end]``.

    ``@skill`` and ``@block`` are only tokens in prose paragraph bodies; in step
    ``instructions`` the engine leaves them alone (their lookalikes are still checked).
    """
    out: list[Token] = []
    if text.find("@", start, end) < 0:  # every token but a bare session.a.b starts with @
        if text.find("session.", start, end) >= 0:
            out.extend(_session_tokens(text, start, end, where))
        return out
    complete_at: set[int] = set()
    for m in MEMORY_TOKEN_RE.finditer(text, start, end):
        complete_at.add(m.start())
        out.append(_two_part_token("memory", m, where))
    for m in MEMORY_LOOKALIKE_RE.finditer(text, start, end):
        if m.start() in complete_at:
            continue
        out.append(Token("incomplete_memory", m.group(0), TextRange(m.start(), m.end()), where))
    for m in AT_TOKEN_RE.finditer(text, start, end):
        complete_at.add(m.start())
        kind = m.group(1)
        if where == "instructions" and kind in ("skill", "block"):
            continue
        out.append(
            Token(
                kind,  # type: ignore[arg-type]
                m.group(0),
                TextRange(m.start(), m.end()),
                where,
                ((intern(m.group(2)), TextRange(m.start(2), m.end(2))),),
            )
        )
    for m in AT_LOOKALIKE_RE.finditer(text, start, end):
        if m.start() in complete_at:
            continue
        out.append(Token("incomplete_at", m.group(0), TextRange(m.start(), m.end()), where))
    out.extend(_session_tokens(text, start, end, where))
    out.sort(key=lambda t: t.range.start)
    return out


def _session_tokens(
    text: str, start: int, end: int, where: Literal["prose", "instructions"]
) -> Iterator[Token]:
    for m in SESSION_IN_PROSE_RE.finditer(text, start, end):
        yield _two_part_token("session", m, where)


def _two_part_token(
    kind: TokenKind, m: re.Match[str], where: Literal["prose", "instructions"]
) -> Token:
    """A ``<namespace>.<entry>`` token (``@memory.a.b``, bare ``session.a.b``)."""
    # names repeat (a namespace, a field): one string each, shared by every token and
    # reference that names it
    return Token(
        kind,
        m.group(0),
        TextRange(m.start(), m.end()),
        where,
        (
            (intern(m.group(1)), TextRange(m.start(1), m.end(1))),
            (intern(m.group(2)), TextRange(m.start(2), m.end(2))),
        ),
    )
