"""Structure of one file: folding ranges, selection ranges, document links and code lenses.

All positions are code-point offsets into the file's normalized text; the ``lsp`` layer
converts folds to lines and ranges to UTF-16 positions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..model.layout import FileKind
from ..model.project import ParsedFile, Project
from ..model.semantics import Semantics, reads
from ..model.symbols import Symbol, SymbolKey, content_range
from ..syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    Expr,
    NotExpr,
)
from ..syntax.config_yml import AgentDoc, IntegrationsDoc
from ..syntax.memory_yml import MemoryDoc
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.sites import ConditionSite
from ..syntax.skill_md import SkillDoc
from ..syntax.text import LineIndex, TextRange
from ..syntax.tools_py import ToolDef, ToolModule
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq
from .locate import scenario_files, scenario_references_in
from .outline import frontmatter_span, pair_span, trim_end, yaml_span
from .types import Location

FoldKind = Literal["region", "comment", "imports"]


@dataclass(frozen=True)
class Fold:
    start: int  # an offset on the first line of the fold
    end: int  # just past the fold's last character, so on its last line
    kind: FoldKind | None = None


@dataclass(frozen=True)
class DocLink:
    range: TextRange
    target: Path
    tooltip: str = ""


@dataclass(frozen=True)
class Lens:
    range: TextRange
    title: str
    key: SymbolKey
    # the places the lens opens (None: the references of ``key``; empty: it opens nothing)
    locations: tuple[Location, ...] | None = None


# ---------------------------------------------------------------------------------------
# Folding


def folding_ranges(project: Project, path: Path) -> list[Fold]:
    """Foldable regions of one file, at most one per start line (the outermost)."""
    pf = project.files.get(path)
    if pf is None or pf.doc is None:
        return []
    text = pf.text
    doc = pf.doc
    raw: list[Fold] = []
    if isinstance(doc, SkillDoc):
        fm = frontmatter_span(text, doc)
        if fm is not None:
            raw.append(Fold(fm.start, fm.end))
            if doc.frontmatter_range is not None:
                raw.extend(_comment_folds(text, doc.frontmatter_range))
        raw.extend(_yaml_folds(text, doc.frontmatter))
        for para in doc.paragraphs:
            raw.append(Fold(para.range.start, trim_end(text, para.range.start, para.range.end)))
        for blk in doc.blocks:
            raw.append(Fold(blk.range.start, trim_end(text, blk.range.start, blk.range.end)))
            raw.extend(_yaml_folds(text, blk.root))
            raw.extend(_comment_folds(text, blk.body_range))
    elif isinstance(doc, (MemoryDoc, ResponsesDoc, AgentDoc, IntegrationsDoc)) or pf.kind in (
        FileKind.EVAL_SCENARIO,
        FileKind.EVAL_CONFTEST,
    ):
        raw.extend(_yaml_folds(text, getattr(doc, "root", None)))
        raw.extend(_comment_folds(text, TextRange(0, len(text))))
    return _one_per_line(pf.source.index, raw)


def _one_per_line(index: LineIndex, folds: list[Fold]) -> list[Fold]:
    best: dict[int, Fold] = {}
    for f in folds:
        first, last = index.line_of(f.start), index.line_of(max(f.end - 1, f.start))
        if last <= first:
            continue
        cur = best.get(first)
        if cur is None or f.end > cur.end:
            best[first] = f
    return [best[line] for line in sorted(best)]


def _walk_yaml(root: YNode | None) -> Iterator[YNode]:
    """Every node under ``root`` once (aliases are shared, cycles are cut)."""
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, YMap):
            for k, v in reversed(node.items):
                stack.append(v)
                stack.append(k)
        elif isinstance(node, YSeq):
            stack.extend(reversed(node.items))


def _yaml_folds(text: str, root: YNode | None) -> list[Fold]:
    out: list[Fold] = []
    for node in _walk_yaml(root):
        if isinstance(node, YMap):
            for k, v in node.items:
                span = pair_span(text, k, v)
                out.append(Fold(span.start, span.end))
        elif isinstance(node, YSeq):
            for item in node.items:
                span = yaml_span(text, item)
                out.append(Fold(span.start, span.end))
    return out


_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.M)


def _comment_folds(text: str, within: TextRange) -> list[Fold]:
    """Runs of two or more consecutive comment lines."""
    out: list[Fold] = []
    run_start = run_end = -1
    for m in _COMMENT_LINE.finditer(text, within.start, within.end):
        if run_end >= 0 and m.start() == run_end + 1:
            run_end = m.end()
            continue
        if run_end >= 0:
            out.append(Fold(run_start, run_end, "comment"))
        run_start, run_end = m.start(), m.end()
    if run_end >= 0:
        out.append(Fold(run_start, run_end, "comment"))
    return out


# ---------------------------------------------------------------------------------------
# Selection ranges


def selection_ranges(project: Project, path: Path, offsets: list[int]) -> list[list[TextRange]]:
    """For each offset, the ranges to grow the selection through, innermost first, each
    strictly containing the previous one (word → reference → condition → paragraph or
    YAML value → enclosing YAML entries → block → body → document)."""
    pf = project.files.get(path)
    return [_selection(project, pf, path, o) for o in offsets]


def _selection(project: Project, pf: ParsedFile | None, path: Path, offset: int) -> list[TextRange]:
    if pf is None:
        return [TextRange(offset, offset)]
    text = pf.text
    offset = min(max(offset, 0), len(text))
    cands: list[TextRange] = [TextRange(0, len(text))]
    word = _word_at(text, offset)
    if word is not None:
        cands.append(word)
    for ref in project.index.references_in(path):
        cands.append(ref.range)
    for sym in project.index.definitions_in(path):
        if sym.range is not None:
            cands.append(sym.range)
    doc = pf.doc
    if isinstance(doc, SkillDoc):
        cands.extend(_skill_md_ranges(text, doc, offset))
    elif isinstance(doc, ResponsesDoc):
        cands.extend(_yaml_ranges(text, doc.root, offset))
        for site in doc.conditions:
            cands.extend(_condition_ranges(site))
        for ph in doc.placeholders:
            cands.append(ph.range)
            if ph.namespace_range is not None and ph.entry_range is not None:
                cands.append(TextRange(ph.range.start + 1, ph.entry_range.end))
        for r in doc.responses:
            for v in r.variants:
                for b in v.buttons:
                    if b.set_payload is not None:
                        cands.append(b.set_payload.range)
                        cands.append(b.set_payload.value_range)
    elif isinstance(doc, (MemoryDoc, IntegrationsDoc)):
        cands.extend(_yaml_ranges(text, doc.root, offset))
    elif pf.kind in (FileKind.EVAL_SCENARIO, FileKind.EVAL_CONFTEST):
        cands.extend(_yaml_ranges(text, getattr(doc, "root", None), offset))
    elif isinstance(doc, AgentDoc):
        cands.extend(_yaml_ranges(text, doc.root, offset))
        for site in doc.conditions:
            cands.extend(_condition_ranges(site))
    elif isinstance(doc, ToolModule):
        for call in doc.memory_calls:
            cands.extend((call.entry_range, call.literal_range, call.call_range))
        for tool in doc.tools:
            cands.extend((tool.name_range, tool.def_range))
    return _chain(cands, offset)


def _chain(cands: list[TextRange], offset: int) -> list[TextRange]:
    inside = sorted(
        {TextRange(*r) for r in cands if r.start <= offset <= r.end},
        key=lambda r: (r.length, -r.start),
    )
    chain: list[TextRange] = []
    for r in inside:
        if not chain:
            if r.length > 0 or len(inside) == 1:
                chain.append(r)
            continue
        prev = chain[-1]
        if r.start <= prev.start and r.end >= prev.end and r != prev:
            chain.append(r)
    return chain or [TextRange(offset, offset)]


_WORD_CHARS = re.compile(r"[\w-]")


def _word_at(text: str, offset: int) -> TextRange | None:
    def is_word(i: int) -> bool:
        return 0 <= i < len(text) and _WORD_CHARS.match(text[i]) is not None

    if not is_word(offset) and not is_word(offset - 1):
        return None
    start = offset
    while is_word(start - 1):
        start -= 1
    end = offset
    while is_word(end):
        end += 1
    return TextRange(start, end)


def _skill_md_ranges(text: str, doc: SkillDoc, offset: int) -> list[TextRange]:
    out: list[TextRange] = []
    if doc.body_range is not None:
        out.append(TextRange(doc.body_range.start, trim_end(text, *doc.body_range)))
    fm = frontmatter_span(text, doc)
    if fm is not None:
        out.append(fm)
    if doc.frontmatter_range is not None:
        start, end = doc.frontmatter_range
        out.append(TextRange(start, trim_end(text, start, end)))
    out.extend(_yaml_ranges(text, doc.frontmatter, offset))
    for tok in doc.tokens:
        out.append(tok.range)
    for site in doc.conditions:
        out.extend(_condition_ranges(site))
    for para in doc.paragraphs:
        out.append(TextRange(para.range.start, trim_end(text, *para.range)))
        for r in (para.first_line, para.body_range):
            if r is not None:
                out.append(r)
    for blk in doc.blocks:
        out.append(blk.range)
        out.append(blk.open_range)
        start, end = blk.body_range
        while start < end and text[start].isspace():
            start += 1
        out.append(TextRange(start, trim_end(text, start, end)))
        out.extend(_yaml_ranges(text, blk.root, offset))
    return out


def _condition_ranges(site: ConditionSite) -> list[TextRange]:
    out = [site.file_range(0, len(site.text)), site.anchor]
    parsed = site.parsed
    for ref in parsed.refs:
        out.append(site.file_range(ref.range.start, ref.range.end))
    stack: list[Expr] = [parsed.tree] if parsed.tree is not None else []
    while stack:
        e = stack.pop()
        out.append(site.file_range(e.range.start, e.range.end))
        if isinstance(e, NotExpr):
            stack.append(e.operand)
        elif isinstance(e, BoolOpExpr):
            stack.extend(e.operands)
        elif isinstance(e, CompareExpr):
            stack.append(e.left)
            stack.extend(e.comparators)
    return out


def _yaml_ranges(text: str, root: YNode | None, offset: int) -> list[TextRange]:
    """The nodes and entries on the path from ``root`` down to ``offset``."""
    out: list[TextRange] = []
    node = root
    seen: set[int] = set()
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        span = yaml_span(text, node)
        if not span.start <= offset <= span.end:
            break
        out.append(span)
        nxt: YNode | None = None
        if isinstance(node, YMap):
            for k, v in node.items:
                entry = pair_span(text, k, v)
                if entry.start <= offset <= entry.end:
                    out.append(entry)
                    on_key = k.range.start <= offset <= k.range.end
                    nxt = k if on_key else v
                    break
        elif isinstance(node, YSeq):
            for item in node.items:
                item_span = yaml_span(text, item)
                if item_span.start <= offset <= item_span.end:
                    nxt = item
                    break
        elif isinstance(node, YScalar):
            out.append(content_range(node))
        node = nxt
    return out


# ---------------------------------------------------------------------------------------
# Document links


def document_links(project: Project, path: Path) -> list[DocLink]:
    """``import_tools`` entries of a skill.md: shared tools link to the module defining
    them, ``mcp/<server>:<tool>`` imports to integrations.yml."""
    pf = project.files.get(path)
    if pf is None or not isinstance(pf.doc, SkillDoc):
        return []
    out: list[DocLink] = []
    integrations = project.file_of_kind(FileKind.INTEGRATIONS)
    for item in pf.doc.import_tools:
        value = item.value
        if not isinstance(value, str):
            continue
        rng = content_range(item)
        if value.startswith("mcp/"):
            if integrations is None:
                continue
            server = value[4:].split(":", 1)[0]
            out.append(
                DocLink(
                    rng,
                    integrations.path,
                    f"MCP server `{server}` in {_rel(project, integrations.path)}",
                )
            )
            continue
        for tf, mod in project.shared_tool_files():
            if any(t.name == value for t in mod.tools):
                out.append(
                    DocLink(rng, tf.path, f"shared tool `{value}` in {_rel(project, tf.path)}")
                )
                break
    return out


def _rel(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return path.name


# ---------------------------------------------------------------------------------------
# Code lenses

NEVER_READ = "never read by name"
NOT_ASSERTED = "no scenario asserts this"


def _entry_blocks(project: Project, sid: str | None) -> set[str]:
    """The entry block of a blocks-only skill (the one no other block calls or links):
    the skill starts there, so no reference to it is expected."""
    sk = project.skill(sid) if sid else None
    doc = sk.doc if sk is not None else None
    if sid is None or doc is None or doc.has_prose:
        return set()
    entries = Semantics.entry_blocks(sid, doc)
    return {b.id for b in entries if b.id} if len(entries) == 1 else set()


def code_lenses(project: Project, path: Path, coverage_hints: bool = False) -> list[Lens]:
    """Reference counts on each memory field, response, tool and block definition (with
    the scenarios' references apart), and a hint on memory fields that nothing reads by
    name. Only literal references count (a tool may read or write memory through a
    computed name); writes are never judged. When the project has scenarios, a skill's
    skill.md says how many assert it, and with ``coverage_hints`` each skill, block, tool
    and field no scenario asserts says so (docs/features/eval.md#coverage)."""
    pf = project.files.get(path)
    if pf is None:
        return []
    idx = project.index
    out: list[Lens] = []
    entry = _entry_blocks(project, pf.skill_id) if isinstance(pf.doc, SkillDoc) else set()
    tested = _scenario_counts(project)
    asserted = _asserted(project) if coverage_hints and tested is not None else None
    for sym in idx.definitions_in(path):
        if sym.range is None:
            continue
        if asserted is not None and sym.key[0] != "skill" and asserted.get(sym.key) is False:
            out.append(Lens(sym.range, NOT_ASSERTED, sym.key, ()))
        if sym.key[0] not in ("field", "response", "tool", "block"):
            continue
        refs = idx.references_to(sym.key)
        if not refs and isinstance(sym.obj, ToolDef) and sym.obj.kind == "possible":
            continue  # a binding that may not be a tool at all (an import, a factory call)
        if not refs and sym.key[0] == "block" and sym.key[-1] in entry:
            continue  # the block a blocks-only skill starts with: nothing refers to it
        hard = sum(1 for r in refs if not r.soft)
        soft = len(refs) - hard
        title = f"{hard} reference" + ("" if hard == 1 else "s")
        if soft:
            title += f", {soft} mention" + ("" if soft == 1 else "s")
        in_scenarios = tested.get(sym.key, 0) if tested is not None else 0
        if in_scenarios:
            title += f", {in_scenarios} in " + ("a scenario" if in_scenarios == 1 else "scenarios")
        out.append(Lens(sym.range, title, sym.key))
        if sym.key[0] == "field" and not any(reads(r) for r in refs):
            out.append(Lens(sym.range, NEVER_READ, sym.key))
    if tested is not None and pf.kind is FileKind.SKILL_MD and pf.skill_id is not None:
        out.append(_skill_scenarios(project, pf.skill_id, idx.lookup(("skill", pf.skill_id))))
    out.sort(key=lambda lens: (lens.range.start, lens.title in (NEVER_READ, NOT_ASSERTED)))
    return out


def _scenario_counts(project: Project) -> dict[SymbolKey, int] | None:
    """How many references the scenarios make to each symbol; None without scenarios."""
    paths = scenario_files(project)
    if not paths:
        return None
    sem = Semantics(project)
    counts: dict[SymbolKey, int] = {}
    for p in paths:
        for r in scenario_references_in(project, p, sem):
            counts[r.key] = counts.get(r.key, 0) + 1
    return counts


def _asserted(project: Project) -> dict[SymbolKey, bool]:
    """Whether some scenario asserts each skill, block, tool and field (ide/coverage.py)."""
    from .coverage import coverage  # only for projects with scenarios

    return {i.key: i.asserted for i in coverage(project).items}


def _skill_scenarios(project: Project, sid: str, syms: list[Symbol]) -> Lens:
    """ "3 scenarios": the scenarios that assert skill ``sid``, on its skill.md."""
    from .coverage import scenario_count  # only for projects with scenarios

    found = scenario_count(project, sid)
    n, places = found if found is not None else (0, [])
    rng = next((s.range for s in syms if s.range is not None), None) or TextRange(0, 0)
    title = "no scenario" if n == 0 else f"{n} scenario" + ("" if n == 1 else "s")
    return Lens(rng, title, ("skill", sid), tuple(places))
