"""Document outline (document symbols) and workspace symbol search.

Plain data in, plain data out: :func:`document_symbols` builds a tree of
:class:`DocSymbol` for one file, :func:`workspace_symbols` searches the symbol index of
several projects by fuzzy subsequence matching on qualified names (``card.reason``,
``card:main``).

The small YAML range helpers at the end (:func:`yaml_span`, :func:`pair_span`,
:func:`frontmatter_span`) are shared with :mod:`mantle_lsp.ide.structure`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..model.layout import FileKind
from ..model.project import Project
from ..model.symbols import SymbolKey, qualified_name
from ..syntax.config_yml import AgentDoc, IntegrationsDoc
from ..syntax.memory_yml import MemoryDoc, MemoryField
from ..syntax.responses_yml import Response, ResponsesDoc, Variant
from ..syntax.skill_md import Block, GateTool, Paragraph, SkillDoc, Step, UtterTrigger
from ..syntax.text import TextRange, first_line
from ..syntax.tools_py import ToolDef, ToolModule
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq
from .types import Location, SymbolKind

if TYPE_CHECKING:  # the eval parser is imported only by projects with eval files
    from ..syntax.eval_yml import Assertion, ScenarioDoc

MAX_WORKSPACE_SYMBOLS = 200
_NAME_WIDTH = 60


@dataclass(frozen=True)
class DocSymbol:
    name: str
    kind: SymbolKind
    range: TextRange
    selection_range: TextRange
    detail: str = ""
    children: tuple[DocSymbol, ...] = ()


@dataclass(frozen=True)
class WorkspaceSym:
    name: str  # the qualified name: ``card.reason``, ``card:main``, ``card:main.ask``
    kind: SymbolKind
    location: Location
    container: str = ""


# ---------------------------------------------------------------------------------------
# Document symbols


def document_symbols(project: Project, path: Path) -> list[DocSymbol]:
    """The outline of one file of ``project`` (empty for unknown or unparsed files)."""
    pf = project.files.get(path)
    if pf is None or pf.doc is None:
        return []
    doc = pf.doc
    text = pf.text
    if isinstance(doc, SkillDoc):
        return _skill_md(text, doc, pf.skill_id or "")
    if isinstance(doc, MemoryDoc):
        return _memory(text, doc)
    if isinstance(doc, ResponsesDoc):
        return [_response(text, r) for r in doc.responses]
    if isinstance(doc, ToolModule):
        return [_tool(t) for t in doc.tools]
    if isinstance(doc, AgentDoc):
        return _agent(text, doc)
    if isinstance(doc, IntegrationsDoc):
        return _integrations(text, doc)
    if pf.kind is FileKind.EVAL_SCENARIO:
        return _scenario(text, doc)
    return []


def _sym(
    name: str,
    kind: SymbolKind,
    rng: TextRange,
    sel: TextRange,
    detail: str = "",
    children: Iterable[DocSymbol] = (),
) -> DocSymbol:
    """A symbol whose selection range is kept inside its range (an LSP requirement)."""
    start = min(rng.start, sel.start)
    end = max(rng.end, sel.end)
    kids = tuple(sorted(children, key=lambda c: (c.range.start, c.range.end)))
    return DocSymbol(_short(name) or "?", kind, TextRange(start, end), sel, detail, kids)


def _short(s: str, width: int = _NAME_WIDTH) -> str:
    """One line of at most ``width`` characters."""
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 1].rstrip() + "…"


# -- skill.md ------------------------------------------------------------------------------


def _skill_md(text: str, doc: SkillDoc, skill_id: str) -> list[DocSymbol]:
    out: list[DocSymbol] = []
    fm = frontmatter_span(text, doc)
    if fm is not None:
        children = [_gate_tool(text, gt, "tool constraint") for gt in doc.gate_tools]
        children += [_utter(text, u) for u in doc.utter]
        sel = first_line(text, fm)
        if doc.frontmatter is not None:
            name_key = doc.frontmatter.key_node("name")
            name_value = doc.frontmatter.get("name")
            if isinstance(name_value, YScalar) and name_value.range.length > 0:
                sel = name_value.range
            elif name_key is not None:
                sel = name_key.range
        out.append(_sym(skill_id, "skill", fm, sel, doc.fm_str("name") or "", children))
    body: list[DocSymbol] = []
    for para in doc.paragraphs:
        if para.kind == "if":
            body.append(_if_paragraph(para))
    for blk in doc.blocks:
        body.append(_block(text, blk))
    skip = [blk.range for blk in doc.blocks]
    if fm is not None:
        skip.append(fm)
    out += _sections(text, _headings(text, skip), body)
    out.sort(key=lambda s: s.range.start)
    return out


_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)", re.M)


_Heading = tuple[int, str, TextRange, TextRange]  # level, title, its line, the title


def _headings(text: str, skip: list[TextRange]) -> list[_Heading]:
    """The Markdown ATX headings (``## Title``) of the prose: outside the frontmatter,
    the ordered blocks (``skip``) and fenced code."""
    fences = [m.start() for m in _FENCE_RE.finditer(text)]
    out = []
    for m in _HEADING_RE.finditer(text):
        at = m.start()
        if any(r.start <= at <= r.end for r in skip):
            continue
        if sum(1 for f in fences if f < at) % 2:
            continue  # inside a fenced code block
        title = m.group(2).strip()
        if title:
            start = at + len(m.group(0)) - len(m.group(0).lstrip(" "))
            sel = TextRange(m.start(2), m.start(2) + len(m.group(2).rstrip()))
            out.append((len(m.group(1)), title, TextRange(start, m.end()), sel))
    return out


def _sections(text: str, heads: list[_Heading], body: list[DocSymbol]) -> list[DocSymbol]:
    """Headings as outline sections (a ``##`` inside the ``#`` before it), each holding
    the ``if:`` paragraphs and blocks that follow it up to the next heading of the same or
    a higher level; symbols before the first heading stay at the top."""
    end = len(text.rstrip())

    def build(i: int, stop: int) -> tuple[DocSymbol, int]:
        level, title, line, sel = heads[i]
        j = i + 1
        kids: list[DocSymbol] = []
        while j < len(heads) and heads[j][0] > level:
            child, j = build(j, stop)
            kids.append(child)
        until = heads[j][2].start if j < len(heads) else stop
        until = max(trim_end(text, line.end, until), line.end)
        span = TextRange(line.start, until)
        kids += [
            b
            for b in body
            if span.start <= b.range.start < span.end
            and not any(k.range.start <= b.range.start < k.range.end for k in kids)
        ]
        return _sym(title, "heading", span, sel, "#" * level, kids), j

    out: list[DocSymbol] = []
    i = 0
    while i < len(heads):
        sym, i = build(i, end)
        out.append(sym)
    placed = _all_starts(out)
    out += [b for b in body if (b.range.start, b.name) not in placed]
    return out


def _all_starts(syms: list[DocSymbol]) -> set[tuple[int, str]]:
    found: set[tuple[int, str]] = set()
    for sym in syms:
        found.add((sym.range.start, sym.name))
        found |= _all_starts(list(sym.children))
    return found


def _gate_tool(text: str, gt: GateTool, detail: str) -> DocSymbol:
    rng = gt.name_node.range
    parent = _item_of(gt)
    if parent is not None:
        rng = parent
    return _sym(gt.name, "tool", rng, gt.name_node.range, detail)


def _item_of(gt: GateTool) -> TextRange | None:
    """The extent of a gate tool's options (its `requires`, …), when it has some."""
    ends = [
        n.range.end
        for n in (gt.requires, gt.confirmation, gt.on_success, gt.on_failure)
        if n is not None
    ]
    if not ends:
        return None
    return TextRange(gt.name_node.range.start, max(ends))


def _utter(text: str, u: UtterTrigger) -> DocSymbol:
    ends = [n.range.end for n in (u.on_node, u.when_node) if n is not None]
    rng = TextRange(u.name_node.range.start, max([u.name_node.range.end, *ends]))
    parts = []
    if u.on_node is not None:
        parts.append("on activate")
    if isinstance(u.when_node, YScalar) and isinstance(u.when_node.value, str):
        parts.append("when " + u.when_node.value.strip())
    return _sym(u.name, "response", rng, u.name_node.range, _short(", ".join(parts)))


def _if_paragraph(para: Paragraph) -> DocSymbol:
    sel = para.condition_range or para.marker or para.first_line
    if sel.length == 0:
        sel = para.marker or para.first_line
    return _sym(para.condition or "if:", "keyword", para.range, sel, "if")


def _block(text: str, blk: Block) -> DocSymbol:
    children = [_step(text, st) for st in blk.steps]
    children += [_gate_tool(text, gt, "block tool") for gt in blk.tools]
    sel = blk.id_range or blk.open_range
    return _sym(blk.id or ":::ordered_block", "block", blk.range, sel, "ordered block", children)


def _step(text: str, st: Step) -> DocSymbol:
    rng = yaml_span(text, st.node)
    sel = st.id_node.range if st.id_node is not None else first_line(text, rng)
    name = st.id or f"#{st.index + 1}"
    return _sym(name, "step", rng, sel, st.kind or "")


# -- memory.yml ----------------------------------------------------------------------------


def _memory(text: str, doc: MemoryDoc) -> list[DocSymbol]:
    if doc.kind == "project":
        return [_field(text, f) for f in doc.fields]
    out: list[DocSymbol] = []
    schema = doc.root.get("schema") if isinstance(doc.root, YMap) else None
    if not isinstance(schema, YMap):
        return [_field(text, f) for f in doc.fields]
    for key, value in schema.pairs():
        if key.value not in ("public", "private") or not isinstance(value, YMap):
            continue
        members = {id(k) for k, _ in value.pairs()}
        fields = [_field(text, f) for f in doc.fields if id(f.key) in members]
        out.append(
            _sym(str(key.value), "namespace", pair_span(text, key, value), key.range, "", fields)
        )
    return out


def _field(text: str, f: MemoryField) -> DocSymbol:
    rng = pair_span(text, f.key, f.node)
    t = f.attrs.get("type")
    detail = t.raw if isinstance(t, YScalar) and t.raw else f.type
    return _sym(f.name, "field", rng, f.key.range, detail)


# -- responses.yml -------------------------------------------------------------------------


def _response(text: str, r: Response) -> DocSymbol:
    n = len(r.variants)
    detail = f"{n} variant" + ("" if n == 1 else "s")
    children = [_variant(text, v) for v in r.variants]
    return _sym(r.name, "response", pair_span(text, r.key, r.node), r.key.range, detail, children)


def _variant(text: str, v: Variant) -> DocSymbol:
    rng = yaml_span(text, v.node)
    sel = v.text_node.range if v.text_node is not None else first_line(text, rng)
    name = v.text.strip() if v.text and v.text.strip() else f"variant {v.index + 1}"
    cond = v.condition
    if isinstance(cond, YScalar) and isinstance(cond.value, str):
        detail = "if " + _short(cond.value.strip())
    else:
        detail = "default"
    return _sym(name, "value", rng, sel, detail)


# -- tools.py ------------------------------------------------------------------------------


def _tool(t: ToolDef) -> DocSymbol:
    detail = f"({', '.join(t.params)})"
    if t.kind == "possible":
        detail = "possible tool"
    elif t.is_async:
        detail = "async " + detail
    return _sym(t.name, "tool", t.def_range, t.name_range, detail)


# -- agent.yml, integrations.yml -----------------------------------------------------------


def _agent(text: str, doc: AgentDoc) -> list[DocSymbol]:
    out = []
    for name, pre in doc.preconditions.items():
        sw = pre.satisfied_when
        detail = _short(sw.value.strip()) if sw is not None and isinstance(sw.value, str) else ""
        out.append(_sym(name, "precondition", pair_span(text, pre.key, pre.node), pre.key.range,
                        detail))  # fmt: skip
    return out


def _integrations(text: str, doc: IntegrationsDoc) -> list[DocSymbol]:
    out: list[DocSymbol] = []
    if doc.root is None:
        return out
    sections: tuple[tuple[str, str, SymbolKind, str], ...] = (
        ("model_groups", "id", "model_group", "model group"),
        ("mcp_servers", "name", "mcp", "MCP server"),
    )
    for section, attr, kind, detail in sections:
        seq = doc.root.get(section)
        if not isinstance(seq, YSeq):
            continue
        for item in seq.items:
            if not isinstance(item, YMap):
                continue
            n = item.get(attr)
            if isinstance(n, YScalar) and isinstance(n.value, str):
                out.append(_sym(n.value, kind, yaml_span(text, item), n.range, detail))
    out.sort(key=lambda s: s.range.start)
    return out


# -- eval/scenarios/** ---------------------------------------------------------------------


def _scenario(text: str, doc: ScenarioDoc) -> list[DocSymbol]:
    """The scenario's outline: its name, the initial slots, each assertion (with the
    steps of a `sequencing` and the calls of a `tools_within_one_turn`), the criteria and
    the expected tools."""
    root = doc.root
    scenario = root.get("scenario") if isinstance(root, YMap) else None
    if not isinstance(root, YMap) or not isinstance(scenario, YMap):
        return []
    key = next(k for k, _ in root.items if isinstance(k, YScalar) and k.value == "scenario")
    children: list[DocSymbol] = []
    for s in doc.initial_slots:
        if s.key is not None:
            children.append(_sym(s.key.text, "field", pair_span(text, s.key.node, s.value),
                                 s.key.range, "initial slot"))  # fmt: skip
    for a in doc.assertions:
        children.append(_assertion_symbol(text, a))
    goals = scenario.get("goals")
    criteria = goals.get("criteria") if isinstance(goals, YMap) else None
    for item in criteria.items if isinstance(criteria, YSeq) else ():
        if isinstance(item, YScalar) and isinstance(item.value, str):
            children.append(_sym(item.value, "heading", yaml_span(text, item), item.range,
                                 "criterion"))  # fmt: skip
    for n in doc.expected_tools:
        children.append(_sym(n.text, "tool", n.range, n.range, "expected tool"))
    name = doc.name.text if doc.name is not None else "scenario"
    sel = doc.name.range if doc.name is not None else key.range
    return [_sym(name, "file", yaml_span(text, root), sel, "scenario", children)]


def _assertion_symbol(text: str, a: Assertion) -> DocSymbol:
    names = []
    if a.skill is not None:
        names.append(a.skill.text + (f":{a.block.text}" if a.block is not None else ""))
    if a.step is not None:
        names.append(a.step.text)
    names += [m.name.text for m in a.memory if m.name is not None]
    if a.tool is not None and a.tool.tool is not None:
        names.append(a.tool.tool.text)
    if a.response is not None:
        names.append(a.response.text)
    kids = [_assertion_symbol(text, c) for c in a.children]
    detail = _short(" ".join(names), 40)
    rng = TextRange(a.entry.range.start, yaml_span(text, a.entry).end)
    return _sym(a.key, "keyword", rng, a.key_node.range, detail, kids)


# ---------------------------------------------------------------------------------------
# Workspace symbols


def workspace_symbols(projects: Iterable[Project], query: str) -> list[WorkspaceSym]:
    """Symbols defined in the projects' files whose qualified name contains ``query`` as a
    case-insensitive subsequence; best matches first, at most
    :data:`MAX_WORKSPACE_SYMBOLS`."""
    q = query.strip().lower()
    scored: list[tuple[tuple[int, int, int, str], WorkspaceSym]] = []
    seen: set[tuple[str, Path, int]] = set()
    for project in projects:
        for key, syms in project.index.symbols.items():
            name = qualified_name(key)
            score = match_score(q, name)
            if score is None:
                continue
            for sym in syms:
                if sym.path is None or sym.range is None:
                    continue
                ident = (name, sym.path, sym.range.start)
                if ident in seen:
                    continue
                seen.add(ident)
                ws = WorkspaceSym(
                    name,
                    _kind_of(key),
                    Location(sym.path, sym.range),
                    _container(project, key, sym.path),
                )
                scored.append(((*score, len(name), name), ws))
    scored.sort(key=lambda x: (x[0], str(x[1].location.path)))
    return [ws for _, ws in scored[:MAX_WORKSPACE_SYMBOLS]]


_KINDS: dict[str, SymbolKind] = {
    "skill": "skill",
    "field": "field",
    "block": "block",
    "step": "step",
    "response": "response",
    "tool": "tool",
    "precondition": "precondition",
    "mcp": "mcp",
    "model_group": "model_group",
}


def _kind_of(key: SymbolKey) -> SymbolKind:
    return _KINDS.get(key[0], "value")


def _container(project: Project, key: SymbolKey, path: Path) -> str:
    kind = key[0]
    if kind in ("field", "block"):
        return key[1]
    if kind == "step":
        return f"{key[1]}:{key[2]}"
    if kind == "tool":
        return key[1] or "shared tools"
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return path.name


_SEPARATORS = "._:/-"


def match_score(query: str, name: str) -> tuple[int, int] | None:
    """How well lower-case ``query`` matches ``name`` (lower is better), or None.

    Tiers: 0 exact (whole name or its last segment), 1 prefix (of the name or of any
    segment), 2 contiguous substring, 3 subsequence. The second number orders within a
    tier (for a subsequence: the number of separate runs, then where it starts).
    """
    if not query:
        return (0, 0)
    low = name.lower()
    last = low
    for sep in ":./":
        last = last.rsplit(sep, 1)[-1]
    if low == query or last == query:
        return (0, 0)
    if low.startswith(query):
        return (1, 0)
    pos = low.find(query)
    while pos > 0 and low[pos - 1] not in _SEPARATORS:
        pos = low.find(query, pos + 1)
    if pos > 0:
        return (1, pos)
    pos = low.find(query)
    if pos >= 0:
        return (2, pos)
    runs = 0
    first = -1
    i = 0
    prev = -2
    for ch in query:
        i = low.find(ch, i)
        if i < 0:
            return None
        if first < 0:
            first = i
        if i != prev + 1:
            runs += 1
        prev = i
        i += 1
    return (3, runs * 1000 + first)


# ---------------------------------------------------------------------------------------
# Range helpers (shared with structure.py)


def trim_end(text: str, start: int, end: int) -> int:
    """``end`` moved back over trailing white space, never before ``start``."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def yaml_span(text: str, node: YNode) -> TextRange:
    """The extent of a YAML node without the trailing blank lines and, for collections, the
    trailing comment lines that libyaml counts into a block collection."""
    start, end = node.range.start, trim_end(text, node.range.start, node.range.end)
    if isinstance(node, (YMap, YSeq)):
        column = start - (text.rfind("\n", 0, start) + 1)
        while True:
            line_start = text.rfind("\n", start, end) + 1
            if line_start <= start:
                break
            line = text[line_start:end]
            stripped = line.lstrip(" \t")
            if not stripped.startswith("#") or len(line) - len(stripped) > column:
                break
            end = trim_end(text, start, line_start)
    return TextRange(start, end)


def pair_span(text: str, key: YNode, value: YNode | None) -> TextRange:
    """A mapping entry from its key to the end of its value."""
    if value is None:
        return key.range
    return TextRange(key.range.start, max(key.range.end, yaml_span(text, value).end))


def frontmatter_span(text: str, doc: SkillDoc) -> TextRange | None:
    """The frontmatter with its two ``---`` lines, or None when it is not framed."""
    fm = doc.frontmatter_range
    if fm is None or not doc.framed:
        return None
    open_end = fm.start - 1 if fm.start > 0 and text[fm.start - 1] == "\n" else fm.start
    open_start = text.rfind("\n", 0, open_end) + 1
    while open_start < open_end and text[open_start] in " \t":
        open_start += 1
    close_end = text.find("\n", fm.end)
    close_end = len(text) if close_end < 0 else close_end
    return TextRange(open_start, trim_end(text, fm.end, close_end))
