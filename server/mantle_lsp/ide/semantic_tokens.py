"""Semantic tokens: what the TextMate grammars cannot know.

Conditions (prose ``if:`` lines and every YAML condition string, through the site's value
map), @-tokens and ``if:`` markers in instruction text, ``:::ordered_block`` fences,
placeholders and ``set:`` payloads in responses, field names in ``memory.yml`` and the
literal names of ``context.memory.get/set`` calls in tool modules.

Conditions are tokenized with the condition parser's own lexer, so a condition that does
not parse is still coloured token by token (an unterminated string up to the end of its
line, a comment to the end of its line).

Tokens come back sorted, non-overlapping and each on one line (the LSP encoding cannot
carry a token across a line break).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..model.layout import FileKind
from ..model.project import Project
from ..syntax.conditions import _lex as _lex_condition
from ..syntax.config_yml import AgentDoc
from ..syntax.memory_yml import MemoryDoc
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.sites import ConditionSite
from ..syntax.skill_md import SkillDoc, Token
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolModule

if TYPE_CHECKING:  # the eval parser is imported only by projects with eval files
    from ..syntax.eval_yml import ScenarioDoc

TOKEN_TYPES: tuple[str, ...] = (
    "namespace",  # a skill id: session.<ns>, @memory.<ns>, @skill.<id>, {session.<ns>…}
    "property",  # a memory entry (declared in memory.yml, or referenced)
    "enumMember",  # a block id (@block.<id>, the fence id=), and True / False / None
    "function",  # a tool: @tool.<name>
    "decorator",  # the @memory / @skill / @tool / @block prefix
    "keyword",  # session, and / or / not / in / is, the `if:` marker, the block fence
    "operator",  # == != < <= > >= (and the unsupported ones)
    "string",  # string literals in conditions
    "number",  # numbers in conditions
    "variable",  # any other name in a condition (an error)
    "comment",  # a `# …` comment in a condition
)
TOKEN_MODIFIERS: tuple[str, ...] = ("declaration", "readonly", "defaultLibrary", "deprecated")

# A field where it is read (a condition, `@memory`, a placeholder) is `property` +
# `readonly`: the default themes colour that (Light+ #0070C1, Dark+ #4FC1FF, through
# `variable.other.constant`), while a plain `property` is near-black in the light themes.
_READ = ("readonly",)


@dataclass(frozen=True)
class SemToken:
    range: TextRange
    type: str
    modifiers: tuple[str, ...] = ()


def semantic_tokens(project: Project, path: Path, rng: TextRange | None = None) -> list[SemToken]:
    """The semantic tokens of one file (only those intersecting ``rng`` when given)."""
    pf = project.files.get(path)
    if pf is None or pf.doc is None:
        return []
    text = pf.text
    doc = pf.doc
    raw: list[SemToken] = []
    if isinstance(doc, SkillDoc):
        raw = _skill_md(text, doc)
    elif isinstance(doc, ResponsesDoc):
        raw = _responses(text, doc)
    elif isinstance(doc, MemoryDoc):
        raw = [SemToken(f.key.range, "property", ("declaration",)) for f in doc.fields]
    elif isinstance(doc, ToolModule):
        raw = _tools(doc)
    elif isinstance(doc, AgentDoc):
        for site in doc.conditions:
            raw.extend(condition_tokens(site))
    elif pf.kind is FileKind.EVAL_SCENARIO:
        raw = _scenario(doc)
    out = _normalize(text, raw)
    if rng is not None:
        out = [
            t
            for t in out
            if (t.range.start < rng.end and t.range.end > rng.start)
            or (rng.start == rng.end and t.range.contains(rng.start))
        ]
    return out


# ---------------------------------------------------------------------------------------
# Conditions


_KEYWORDS = frozenset(
    {"AND", "OR", "NOT", "IN", "IS", "IF", "ELSE", "FOR", "LAMBDA", "AWAIT", "OTHER_KEYWORD"}
)
_CONSTANTS = frozenset({"TRUE", "FALSE", "NONE"})
_OPERATORS = frozenset(
    {"EQ", "NE", "LT", "LE", "GT", "GE", "EQUAL", "WALRUS", "PLUS", "MINUS", "STAR", "POWER"}
    | {"SLASH", "DSLASH", "PERCENT", "AT", "TILDE", "VBAR", "AMPERSAND", "CIRCUMFLEX"}
    | {"LSHIFT", "RSHIFT"}
)

# (start, end, type, modifiers) relative to the condition text
_Rel = tuple[int, int, str, tuple[str, ...]]


@functools.lru_cache(maxsize=2048)
def classify_condition(source: str) -> tuple[_Rel, ...]:
    """Tokens of a condition's text, with offsets relative to ``source``."""
    toks, _ = _lex_condition(source)
    toks = [t for t in toks if t.end > t.start]
    out: list[_Rel] = []
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if t.type == "NAME" and t.value == "session":
            out.append((t.start, t.end, "keyword", ("defaultLibrary",)))
            i += 1
            # session . <ns[-ns…]> . <entry> (. <more>…)
            segment = 0
            while i + 1 < n and toks[i].type == "DOT" and toks[i + 1].type == "NAME":
                start = toks[i + 1].start
                end = toks[i + 1].end
                i += 2
                if segment == 0:  # a hyphenated skill id lexes as a subtraction
                    while (
                        i + 1 < n
                        and toks[i].type == "MINUS"
                        and toks[i + 1].type == "NAME"
                        and toks[i].start == end
                        and toks[i + 1].start == toks[i].end
                    ):
                        end = toks[i + 1].end
                        i += 2
                if segment == 0:
                    out.append((start, end, "namespace", ()))
                else:
                    out.append((start, end, "property", _READ))
                segment += 1
            continue
        kind = t.type
        if kind == "NAME":
            out.append((t.start, t.end, "variable", ()))
            i += 1
            while i + 1 < n and toks[i].type == "DOT" and toks[i + 1].type == "NAME":
                out.append((toks[i + 1].start, toks[i + 1].end, "property", ()))
                i += 2
            continue
        elif kind in _KEYWORDS:
            out.append((t.start, t.end, "keyword", ()))
        elif kind in _CONSTANTS:
            out.append((t.start, t.end, "enumMember", ("readonly", "defaultLibrary")))
        elif kind == "STRING":
            out.append((t.start, t.end, "string", ()))
        elif kind == "NUMBER":
            out.append((t.start, t.end, "number", ()))
        elif kind in _OPERATORS:
            out.append((t.start, t.end, "operator", ()))
        i += 1
    # What the lexer skipped: comments, and strings left unterminated.
    covered = sorted((t.start, t.end) for t in toks)
    pos = 0
    gaps: list[tuple[int, int]] = []
    for s, e in covered:
        if s > pos:
            gaps.append((pos, s))
        pos = max(pos, e)
    gaps.append((pos, len(source)))
    for s, e in gaps:
        j = s
        while j < e:
            ch = source[j]
            if ch in "#'\"":
                nl = source.find("\n", j, e)
                stop = e if nl < 0 else nl
                out.append((j, stop, "comment" if ch == "#" else "string", ()))
                j = stop
            j += 1
    out.sort()
    return tuple(out)


def condition_tokens(site: ConditionSite) -> list[SemToken]:
    """The tokens of one condition site, in file offsets."""
    return [
        SemToken(site.file_range(s, e), kind, mods)
        for s, e, kind, mods in classify_condition(site.text)
    ]


# ---------------------------------------------------------------------------------------
# skill.md


_AT_PART_TYPES = {"memory": "namespace", "skill": "namespace", "tool": "function"}


def _skill_md(text: str, doc: SkillDoc) -> list[SemToken]:
    out: list[SemToken] = []
    for site in doc.conditions:
        out.extend(condition_tokens(site))
    for para in doc.paragraphs:
        if para.marker is not None:
            out.append(SemToken(para.marker, "keyword"))
    for blk in doc.blocks:
        fence = text.find(":::ordered_block", blk.range.start, blk.open_range.end)
        if fence >= 0:
            out.append(SemToken(TextRange(fence, fence + 16), "keyword"))
        if blk.id_range is not None:
            eq = text.rfind("id=", blk.open_range.start, blk.id_range.start)
            if eq >= 0:
                out.append(SemToken(TextRange(eq, eq + 2), "property"))
            out.append(SemToken(blk.id_range, "enumMember", ("declaration",)))
        close = blk.range.end
        line_start = text.rfind("\n", blk.range.start, close) + 1
        if text.startswith(":::", line_start):
            out.append(SemToken(TextRange(line_start, line_start + 3), "keyword"))
    for tok in doc.tokens:
        out.extend(_at_token(text, tok))
    return out


def _at_token(text: str, tok: Token) -> list[SemToken]:
    rng = tok.range
    out: list[SemToken] = []
    if tok.kind == "session":
        if len(tok.parts) == 2 and tok.text.startswith("session"):
            (_, ns), (_, entry) = tok.parts
            out.append(
                SemToken(
                    TextRange(rng.start, min(rng.start + 7, ns.start)),
                    "keyword",
                    ("defaultLibrary",),
                )
            )
            out.append(SemToken(ns, "namespace"))
            out.append(SemToken(entry, "property", _READ))
        return out
    # @memory / @skill / @tool / @block and their incomplete lookalikes
    word_end = 1
    while word_end < len(tok.text) and (tok.text[word_end].isalnum()):
        word_end += 1
    prefix_end = rng.start + word_end
    if tok.parts:
        prefix_end = min(prefix_end, tok.parts[0][1].start)
    out.append(SemToken(TextRange(rng.start, prefix_end), "decorator"))
    if tok.kind == "memory" and len(tok.parts) == 2:
        out.append(SemToken(tok.parts[0][1], "namespace"))
        out.append(SemToken(tok.parts[1][1], "property", _READ))
    elif tok.kind in ("skill", "tool") and tok.parts:
        out.append(SemToken(tok.parts[0][1], _AT_PART_TYPES[tok.kind]))
    elif tok.kind == "block" and tok.parts:
        out.append(SemToken(tok.parts[0][1], "enumMember"))
    return out


# ---------------------------------------------------------------------------------------
# responses.yml, tools


def _responses(text: str, doc: ResponsesDoc) -> list[SemToken]:
    out: list[SemToken] = []
    for site in doc.conditions:
        out.extend(condition_tokens(site))
    for ph in doc.placeholders:
        if ph.kind == "bare":
            if ph.entry_range is not None:
                out.append(SemToken(ph.entry_range, "property", _READ))
            continue
        out.extend(_session_word(text, ph.range.start + 1))
        if ph.kind == "qualified":
            if ph.namespace_range is not None:
                out.append(SemToken(ph.namespace_range, "namespace"))
            if ph.entry_range is not None:
                out.append(SemToken(ph.entry_range, "property", _READ))
        elif text[ph.range.start : ph.range.end] == "{" + ph.text + "}":
            start = ph.range.start + 1 + len("session.")
            out.append(SemToken(TextRange(start, ph.range.end - 1), "property", _READ))
    for r in doc.responses:
        for v in r.variants:
            for b in v.buttons:
                sp = b.set_payload
                if sp is None:
                    continue
                out.extend(_session_word(text, sp.range.start))
                out.append(SemToken(sp.namespace_range, "namespace"))
                out.append(SemToken(sp.entry_range, "property"))
    return out


def _session_word(text: str, start: int) -> list[SemToken]:
    if text.startswith("session.", start):
        return [SemToken(TextRange(start, start + 7), "keyword", ("defaultLibrary",))]
    return []


def _tools(mod: ToolModule) -> list[SemToken]:
    out: list[SemToken] = []
    for call in mod.memory_calls:
        rng = call.entry_range
        if rng.length != len(call.entry):  # not spelled verbatim: colour the literal
            out.append(SemToken(call.literal_range, "property"))
            continue
        ns, dot, entry = call.entry.rpartition(".")
        if dot and ns and entry and "." not in ns:
            out.append(SemToken(TextRange(rng.start, rng.start + len(ns)), "namespace"))
            out.append(SemToken(TextRange(rng.end - len(entry), rng.end), "property"))
        else:
            out.append(SemToken(rng, "property"))
    return out


# ---------------------------------------------------------------------------------------
# eval/scenarios/**

_SCENARIO_TOKENS = {
    "skill": "namespace",
    "block": "enumMember",
    "step": "enumMember",
    "tool": "function",
    "expected_tool": "function",
    "mcp_server": "namespace",
}


def _scenario(doc: ScenarioDoc) -> list[SemToken]:
    """Skill ids as namespaces, blocks and steps as enum members, memory keys as a
    namespace and a property, tools as functions (what the YAML grammar colours as plain
    strings)."""
    out: list[SemToken] = []
    for ref in doc.refs():
        rng = ref.range
        if ref.kind in _SCENARIO_TOKENS:
            out.append(SemToken(rng, _SCENARIO_TOKENS[ref.kind]))
        elif ref.kind in ("memory", "initial_slot"):
            ns, dot, entry = ref.text.partition(".")
            if dot and ref.name.spelled:
                out.append(SemToken(TextRange(rng.start, rng.start + len(ns)), "namespace"))
                out.append(SemToken(TextRange(rng.end - len(entry), rng.end), "property"))
            else:
                out.append(SemToken(rng, "property"))
    return out


# ---------------------------------------------------------------------------------------


def _normalize(text: str, tokens: list[SemToken]) -> list[SemToken]:
    """Split multi-line tokens per line, drop empty ones, sort, and drop overlaps (the token
    that starts first wins)."""
    pieces: list[SemToken] = []
    for t in tokens:
        start, end = t.range
        start = max(start, 0)
        end = min(end, len(text))
        while start < end:
            nl = text.find("\n", start, end)
            stop = end if nl < 0 else nl
            if stop > start:
                pieces.append(SemToken(TextRange(start, stop), t.type, t.modifiers))
            if nl < 0:
                break
            start = nl + 1
            while start < end and text[start] in " \t":  # a continuation line's indentation
                start += 1
    pieces.sort(key=lambda t: (t.range.start, -t.range.end))
    out: list[SemToken] = []
    last_end = -1
    for t in pieces:
        if t.range.start >= last_end:
            out.append(t)
            last_end = t.range.end
    return out
