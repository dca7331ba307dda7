"""What every fix shares, and the fixes several rules share.

A fix is a function ``fix(fx, d)`` that yields the :class:`CodeAction` s for one diagnostic
``d``, reading what it needs from ``d.data`` (which the rule that emitted it attached) and
from the model through the context ``fx`` (:class:`Fix`), never from the message text. A
rule module exports its fixes by code (``FIXES = {"<code>": (fix, …)}``, next to the rule
that emits the code; ``rules/parsed.py`` for the codes a parser emits), and
:mod:`mantle_lsp.ide.code_actions` asks them. On top of a code's own fixes, a diagnostic
whose data names the name meant (``meant``) or a replacement (``replace_with``) gets the
change it asks for (:func:`data_fixes`), unless one of the code's fixes reads that data
itself (:func:`own_data`).

Shared here: declaring an undeclared field (the codes of every rule that reports a key no
memory.yml declares: :data:`DECLARE_FIELD`) and making another skill's private field
public.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from ...model.layout import FileKind
from ...model.project import ParsedFile, Project, Skill
from ...model.semantics import Semantics, writes
from ...model.symbols import Reference, SymbolKey, content_range
from ...syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    Expr,
    LiteralExpr,
    NotExpr,
    RefExpr,
    parse_condition,
)
from ...syntax.memory_yml import MemoryDoc, MemoryField, Scope
from ...syntax.responses_yml import ResponsesDoc
from ...syntax.skill_md import SkillDoc
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YNode, YScalar
from ..edits import (
    content_end,
    declare_project_field,
    declare_skill_field,
    delete_lines,
    inside,
    is_flow,
    line_start,
    make_field_public,
    ws_edit,
    yaml_scalar,
)
from ..types import CodeAction, NameFix, TextEdit, WorkspaceEdit
from .base import Diagnostic


class Fix:
    """What a fix reads: the project, the file the diagnostic is in (and its text), the
    semantic answers; and what several fixes share (building the action, the memory.yml
    field at a range)."""

    def __init__(self, project: Project, pf: ParsedFile) -> None:
        self.p = project
        self.pf = pf
        self.path = pf.path
        self.text = pf.text
        self._sem: Semantics | None = None

    @property
    def sem(self) -> Semantics:
        if self._sem is None:
            self._sem = Semantics(self.p)
        return self._sem

    def action(
        self,
        title: str,
        d: Diagnostic,
        edit: WorkspaceEdit,
        preferred: bool = False,
        safe: bool = False,
        name: NameFix | None = None,
    ) -> CodeAction:
        return CodeAction(title, "quickfix", edit, (d.code,), preferred, safe, name=name)

    def memdoc(self) -> MemoryDoc | None:
        doc = self.pf.doc
        return doc if isinstance(doc, MemoryDoc) else None

    def attribute_at(self, rng: TextRange) -> tuple[MemoryField, str] | None:
        md = self.memdoc()
        if md is None:
            return None
        for f in md.fields:
            for attr, k in f.attr_keys.items():
                if k.range == rng:
                    return f, attr
        return None

    def remove_attr_edit(self, f: MemoryField, attr: str) -> TextEdit | None:
        k = f.attr_keys[attr]
        if not isinstance(f.node, YMap) or is_flow(self.text, f.node):
            return None
        if len(f.attrs) == 1 and self.pf.kind is FileKind.SKILL_MEMORY:
            return None  # `name:` with nothing after it fails to load in a skill
        return delete_lines(self.text, k.range.start, content_end(self.text, f.attrs[attr]))


Fixer = Callable[[Fix, Diagnostic], Iterator[CodeAction]]
# what a rule module exports: its codes, each with the fixes tried in turn
Fixes = Mapping[str, tuple[Fixer, ...]]


def own_data(fn: Fixer) -> Fixer:
    """Mark a fix that reads the diagnostic's ``meant`` / ``replace_with`` itself: the
    code gets no :func:`data_fixes` besides its own fixes."""
    fn.own_data = True  # type: ignore[attr-defined]
    return fn


def reads_own_data(fixers: tuple[Fixer, ...]) -> bool:
    return any(getattr(fn, "own_data", False) for fn in fixers)


def replace_with(fx: Fix, d: Diagnostic, value: str) -> Iterator[CodeAction]:
    """Replace the diagnostic's whole range (memory.yml `name: text` → `{type: text}`)."""
    key = fx.text[line_start(fx.text, d.range.start) : d.range.start].strip()
    edit = ws_edit(fx.path, TextEdit(d.range, value))
    yield fx.action(f"Change to `{key} {value}`", d, edit, preferred=True)


def change_to(
    fx: Fix,
    d: Diagnostic,
    suggestion: str,
    safe: bool = False,
    names: NameFix | None = None,
) -> Iterator[CodeAction]:
    """The name written changed to ``suggestion``; the action says which name it changes
    into which (for ide/fixes.Names): the reference's, else ``names`` (a name no index
    reference holds, e.g. a scenario's memory key)."""
    found = wrong_name_range(fx, d, suggestion)
    if found is None:
        return
    target, key = found
    name = NameFix(key, (*key[:-1], suggestion)) if key else names
    edit = ws_edit(fx.path, TextEdit(target, suggestion))
    yield fx.action(f"Change to `{suggestion}`", d, edit, preferred=True, safe=safe, name=name)


def wrong_name_range(
    fx: Fix, d: Diagnostic, suggestion: str
) -> tuple[TextRange, SymbolKey | None] | None:
    """The range of the misspelt name inside the diagnostic's range, and the name it
    stands for (a symbol key whose last part is the name written; None when the name
    is no reference)."""
    text = fx.text
    refs = [r for r in fx.p.index.references_in(fx.path) if inside(r.range, d.range) and not r.soft]
    cands: dict[TextRange, SymbolKey | None] = {}
    for r in refs:
        if r.key[0] == "field":
            ns = r.key[1]
            if ns in ("project", "system") or fx.p.has_skill(ns):
                cands.setdefault(r.range, r.key)
            else:  # the namespace is the wrong segment
                for n in refs:
                    if n.form == "namespace" and n.key == ("skill", ns):
                        cands.setdefault(n.range, n.key)
        elif r.form != "namespace":
            cands.setdefault(r.range, r.key)
    wrong = (d.data or {}).get("wrong")
    if not cands and isinstance(wrong, str) and wrong != suggestion:
        body = text[d.range.start : d.range.end]
        for hit in re.finditer(rf"(?<![\w.-]){re.escape(wrong)}(?![\w-])", body):
            hit_range = TextRange(d.range.start + hit.start(), d.range.start + hit.end())
            cands.setdefault(hit_range, None)
    ranges = [c for c in cands if text[c.start : c.end] != suggestion]
    if not ranges:
        return None

    def score(c: TextRange) -> float:
        return difflib.SequenceMatcher(None, text[c.start : c.end], suggestion).ratio()

    best = max(ranges, key=score)
    key = cands[best]
    if key is not None and key[-1] != text[best.start : best.end]:
        key = None  # the mention is not the name's last part: no name to follow
    return best, key


def data_fixes(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """The change a diagnostic's data asks for: its whole range replaced
    (``replace_with``), or the name written changed to the one meant (``meant``; safe when
    it is the only reading, ``only_reading``: `end` → `END`)."""
    data = d.data or {}
    if isinstance(data.get("replace_with"), str):
        yield from replace_with(fx, d, data["replace_with"])
    elif isinstance(data.get("meant"), str):
        yield from change_to(fx, d, data["meant"], safe=bool(data.get("only_reading")))


def declare_field(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    sid = fx.pf.skill_id
    for ref in fx.p.index.references_in(fx.path):
        if ref.key[0] != "field" or not inside(ref.range, d.range) or ref.soft:
            continue
        ns, entry = ref.key[1], ref.key[2]
        if "." in entry:
            continue  # `set_memory: {card.reason: …}` is not a field name
        if ns == "project":
            if fx.p.project_field(entry) is not None:
                continue
            edit = declare_project_field(fx.p, entry, field_lines(fx, ref.key, None))
            if edit is not None:
                title = f"Declare `{entry}` in memory.yml (project)"
                yield fx.action(title, d, edit, name=NameFix(ref.key))
            continue
        sk = fx.p.skill(ns)
        if sk is None or sk.field(entry) is not None:
            continue
        if ns != sid and writes(ref):
            continue  # a skill may not write another skill's field: declaring won't help
        scopes: list[Scope] = ["private", "public"] if ns == sid else ["public"]
        if ns == sid and read_elsewhere(fx, ref.key, sid):
            scopes = ["public"]
        for scope in scopes:
            edit = declare_skill_field(sk, entry, scope, field_lines(fx, ref.key, sk))
            if edit is not None:
                title = f"Declare `{entry}` in skills/{ns}/memory.yml ({scope})"
                yield fx.action(title, d, edit, name=NameFix(ref.key))


def make_public(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """Another skill's private field read here (data ``why: private``): move its
    declaration from ``private:`` to ``public:`` in that skill's memory.yml. Not for a
    write (a button ``set:``): a skill may not write another skill's field, public or
    not. Unsafe: every other skill may then read the field (private may be on purpose,
    for PII say)."""
    data = d.data or {}
    key = data.get("key")
    if data.get("why") != "private" or not isinstance(key, list) or len(key) != 2:
        return
    ns, entry = key
    if not isinstance(ns, str) or not isinstance(entry, str):
        return
    for ref in fx.p.index.references_in(fx.path):
        here = ref.key == ("field", ns, entry) and inside(ref.range, d.range)
        if here and writes(ref):
            return
    sk = fx.p.skill(ns)
    edit = make_field_public(sk, entry) if sk is not None else None
    if edit is not None:
        yield fx.action(f"Make `{entry}` public in skills/{ns}/memory.yml", d, edit)


def read_elsewhere(fx: Fix, key: SymbolKey, sid: str) -> bool:
    return any(r.skill != sid for r in fx.p.index.references_to(key))


def field_lines(fx: Fix, key: SymbolKey, sk: Skill | None) -> list[str]:
    ftype, values = guess_type(fx.p, key)
    lines = [f"type: {ftype}"]
    if values:
        lines.append(f"enum_values: [{', '.join(yaml_scalar(v) for v in values)}]")
    if sk is not None and collected_without_description(fx.sem, sk, key[2]):
        lines.append(f"description: TODO describe {key[2]}")
    return lines


# the fixes of a key no memory.yml declares: declare it (guessing the declaration from
# its uses), or, for another skill's private field, make it public
DECLARE_FIELD: tuple[Fixer, ...] = (declare_field, make_public)


# -- what a new field's declaration guesses from its uses ----------------------------------


@dataclass
class _Usage:
    literals: list[object] = field(default_factory=list)
    truthy: bool = False


def _walk_usage(expr: Expr, ns: str, entry: str, use: _Usage, boolean: bool) -> None:
    def is_ref(e: Expr) -> bool:
        return isinstance(e, RefExpr) and e.ref.namespace == ns and e.ref.entry == entry

    if isinstance(expr, RefExpr):
        if boolean and is_ref(expr):
            use.truthy = True
    elif isinstance(expr, NotExpr):
        _walk_usage(expr.operand, ns, entry, use, True)
    elif isinstance(expr, BoolOpExpr):
        for o in expr.operands:
            _walk_usage(o, ns, entry, use, True)
    elif isinstance(expr, CompareExpr):
        chain = [expr.left, *expr.comparators]
        for a, b in itertools.pairwise(chain):
            for x, y in ((a, b), (b, a)):
                if is_ref(x) and isinstance(y, LiteralExpr) and y.kind != "none":
                    use.literals.append(y.value)


def literal_of_text(value: str) -> object:
    v = value.strip()
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def guess_type(project: Project, key: SymbolKey) -> tuple[str, list[object]]:
    """(type, enum values) for a new field, from how the project uses ``key``."""
    ns, entry = key[1], key[2]
    use = _Usage()
    for ref in project.index.references_to(key):
        if ref.site is not None:
            parsed = parse_condition(ref.site.text)
            if parsed.tree is not None:
                _walk_usage(parsed.tree, ns, entry, use, True)
        elif ref.form == "set_memory":
            value = _set_memory_value(project, ref)
            if isinstance(value, YScalar) and value.value is not None:
                use.literals.append(value.value)
        elif ref.form == "set_payload":
            pf = project.files.get(ref.path)
            if pf is not None and isinstance(pf.doc, ResponsesDoc):
                for r in pf.doc.responses:
                    for var in r.variants:
                        for b in var.buttons:
                            sp = b.set_payload
                            if sp is not None and sp.entry_range == ref.range:
                                use.literals.append(literal_of_text(sp.value))
    lits = use.literals
    if lits and all(isinstance(v, bool) for v in lits):
        return "bool", []
    if lits and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in lits):
        return ("float" if any(isinstance(v, float) for v in lits) else "int"), []
    if lits and all(isinstance(v, str) for v in lits):
        values = list(dict.fromkeys(lits))
        return ("categorical", values) if len(values) >= 2 else ("text", [])
    if not lits and use.truthy:
        return "bool", []
    return "text", []


def _set_memory_value(project: Project, ref: Reference) -> YNode | None:
    pf = project.files.get(ref.path)
    doc = pf.doc if pf else None
    if not isinstance(doc, SkillDoc):
        return None
    for _, st in doc.steps():
        sm = st.get("set_memory")
        if isinstance(sm, YMap):
            for k, v in sm.pairs():
                if content_range(k) == ref.range:
                    return v
    return None


def collected_without_description(sem: Semantics, sk: Skill, name: str) -> bool:
    """A collect step fills ``name`` and the last one (the one that counts) has no
    description."""
    mine = sem.collect_steps(sk).get(name)
    if not mine:
        return False
    desc = mine[-1].str_field("description")
    return not (desc and desc[0].strip())


def prepared(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """A rewrite the rule worked out (``data.fix``: its title and its edits, ``[start, end,
    new text]`` in the file), never safe: the target was resolved by name only."""
    fix = (d.data or {}).get("fix")
    if not isinstance(fix, dict):
        return
    title, edits = fix.get("title"), fix.get("edits")
    if not isinstance(title, str) or not isinstance(edits, list):
        return
    out = []
    for e in edits:
        if not (
            isinstance(e, list)
            and len(e) == 3
            and isinstance(e[0], int)
            and isinstance(e[1], int)
            and isinstance(e[2], str)
            and 0 <= e[0] <= e[1] <= len(fx.text)
        ):
            return
        out.append(TextEdit(TextRange(e[0], e[1]), e[2]))
    yield fx.action(title, d, ws_edit(fx.path, *out), preferred=True)
