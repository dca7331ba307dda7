"""Context-aware completion (docs/features/completion.md).

:func:`complete` looks at the text around the cursor and offers what may be written
there: memory namespaces and entries in conditions, ``@`` tokens in prose, placeholders in
responses, names of steps, skills, tools, responses, fields and preconditions after the
keys that take them, and the keys of every YAML mapping Mantle defines.

The document is usually half-written while the user types, so it often does not parse.
Completion therefore works from the raw text: the current line for prose, ``if:`` lines,
``@`` tokens, placeholders and Python literals; the current line plus the indentation of
the lines above it for YAML (:func:`..syntax.yaml_tree.yaml_context_at`, the tolerant reader of
half-written YAML). Parsed condition sites are used when
the cursor is inside one (they map folded or escaped YAML strings exactly), and the
project model supplies the names.

Every item replaces exactly the partial word typed so far (``CompletionItem.edit``), so
the client filters on what the user typed.

Documentation is built only when asked for (``CompletionItem.documentation``): a list of
1,000 namespaces builds none of it when the client resolves items lazily, and only the
documentation of the items sent otherwise. :func:`item_at` finds one item again for
``completionItem/resolve``.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeAlias

from ..model.defaults import (
    AUTONOMOUS_STEP,
    DEFAULT_SKILLS,
    FRAMEWORK_TOOLS,
    STEP_ACTIONS,
    SYSTEM_MEMORY_ENTRIES,
)
from ..model.layout import FileKind
from ..model.project import ParsedFile, Project, Skill
from ..model.semantics import FieldType, Semantics
from ..syntax.config_yml import AgentDoc
from ..syntax.memory_yml import ATTRIBUTES, CANONICAL_TYPES, MemoryDoc, MemoryField
from ..syntax.responses_yml import VARIANT_KEYS, Response, ResponsesDoc
from ..syntax.sites import ConditionSite
from ..syntax.skill_md import (
    ALL_STEP_KEYS,
    BLOCK_KEYS,
    BLOCK_TOOL_KEYS,
    CONFIRMATION_KEYS,
    FRONTMATTER_KEYS,
    STEP_KEYS,
    TOOL_CONSTRAINT_OPTIONS,
    SkillDoc,
)
from ..syntax.text import TextRange
from ..syntax.tools_py import ToolDef, ToolParam
from ..syntax.yaml12 import plain12
from ..syntax.yaml_tree import ITEM_WORD, YamlContext, yaml_context_at
from .types import SymbolKind, TextEdit

if TYPE_CHECKING:  # imported when a scenario asks (most projects have none)
    from . import eval_files as ef

Doc: TypeAlias = str | Callable[[], str]  # markdown, or a function that builds it


@dataclass(frozen=True)
class CompletionItem:
    label: str
    kind: SymbolKind
    detail: str = ""
    doc: Doc = ""  # read it through `documentation`
    edit: TextEdit | None = None  # replaces the partial word at the cursor; None = insert label
    sort_text: str | None = None
    filter_text: str | None = None
    snippet: bool = False  # edit.new_text is an LSP snippet ($1, ${1:x}, $0)
    retrigger: bool = False  # accepting it opens the suggestions again (`@skill.`, `type: `)

    @property
    def documentation(self) -> str:
        """The item's Markdown documentation (built now when it is built lazily)."""
        d = self.doc
        return d if isinstance(d, str) else d()


@dataclass(frozen=True)
class CompletionResult:
    items: tuple[CompletionItem, ...]
    is_incomplete: bool = False


EMPTY = CompletionResult(())


def complete(project: Project, path: Path, offset: int) -> CompletionResult:
    """What may be written at ``offset`` (a code-point offset into the file's text)."""
    pf = project.files.get(path)
    if pf is None or not pf.source.analyzable:
        return EMPTY
    offset = min(max(offset, 0), len(pf.text))
    c = _Ctx.make(project, pf, offset)
    unique = _unique(_items(c))
    if len(unique) > MAX_ITEMS or c.capped:
        return _capped(unique, pf.text, offset)
    return CompletionResult(tuple(unique))


def item_at(project: Project, path: Path, offset: int, label: str) -> CompletionItem | None:
    """The item labelled ``label`` that :func:`complete` offers at ``offset``, whether or
    not it was among the best ``MAX_ITEMS`` (for ``completionItem/resolve``); None when
    the file is gone or nothing with that label is offered there (any more)."""
    pf = project.files.get(path)
    if pf is None or not pf.source.analyzable or not 0 <= offset <= len(pf.text):
        return None
    c = _Ctx.make(project, pf, offset)
    c.only = label
    return next((it for it in _unique(_items(c)) if it.label == label), None)


def _items(c: _Ctx) -> list[CompletionItem]:
    kind = c.pf.kind
    items: list[CompletionItem]
    if kind is FileKind.SKILL_MD:
        items = _skill_md(c)
    elif kind in (FileKind.SKILL_MEMORY, FileKind.PROJECT_MEMORY):
        items = _memory_yml(c)
    elif kind in (FileKind.SKILL_RESPONSES, FileKind.PROJECT_RESPONSES):
        items = _responses_yml(c)
    elif kind in (FileKind.SKILL_TOOLS, FileKind.SHARED_TOOLS):
        items = _tools_py(c)
    elif kind is FileKind.AGENT:
        items = _agent_yml(c)
    elif kind is FileKind.EVAL_SCENARIO:
        items = _eval_scenario(c)
    else:
        items = []
    return items


def _unique(items: list[CompletionItem]) -> list[CompletionItem]:
    """The first item of each label."""
    seen: set[str] = set()
    unique: list[CompletionItem] = []
    for it in items:
        if it.label not in seen:
            seen.add(it.label)
            unique.append(it)
    return unique


MAX_ITEMS = 100


def _capped(items: list[CompletionItem], text: str, offset: int) -> CompletionResult:
    """A long list (1,000 skills as namespaces) is cut to the best ``MAX_ITEMS`` matches of
    what is typed so far and marked incomplete, so the editor asks again as the user
    types instead of receiving (and filtering) everything on every keystroke."""

    def typed(it: CompletionItem) -> str:
        if it.edit is None:
            return ""
        return text[it.edit.range.start : min(offset, it.edit.range.end)].lower()

    def rank(it: CompletionItem) -> tuple[int, str]:
        return (_match((it.filter_text or it.label).lower(), typed(it)), it.sort_text or it.label)

    ranked = sorted(items, key=rank)
    return CompletionResult(tuple(ranked[:MAX_ITEMS]), is_incomplete=True)


def _match(label: str, typed: str) -> int:
    """How well ``label`` (lower case) matches ``typed`` (lower case), as :func:`_capped`
    ranks: 0 prefix, 1 substring, 2 neither."""
    return 0 if label.startswith(typed) else 1 if typed in label else 2


def _best(labels: Sequence[str], typed: str) -> list[int]:
    """The positions of the best ``MAX_ITEMS`` of ``labels`` (lower case, in sort order,
    unique) for ``typed``, in :func:`_capped`'s order, without building an item for
    every one of them."""
    if not typed:
        return list(range(min(len(labels), MAX_ITEMS)))
    buckets: tuple[list[int], list[int], list[int]] = ([], [], [])
    for i, label in enumerate(labels):
        buckets[_match(label, typed)].append(i)
    return [*buckets[0], *buckets[1], *buckets[2]][:MAX_ITEMS]


# ---------------------------------------------------------------------------------------
# Context and item helpers
# ---------------------------------------------------------------------------------------


@dataclass
class _Ctx:
    project: Project
    pf: ParsedFile
    text: str
    offset: int
    sid: str | None
    line_start: int
    line_before: str  # the current line up to the cursor
    line_after: str  # the rest of the current line
    capped: bool = False  # a long list was cut to its best MAX_ITEMS: it is incomplete
    only: str | None = None  # only this label is wanted (long lists may leave out others)

    @staticmethod
    def make(project: Project, pf: ParsedFile, offset: int) -> _Ctx:
        text = pf.text
        ls = text.rfind("\n", 0, offset) + 1
        le = text.find("\n", offset)
        le = len(text) if le < 0 else le
        return _Ctx(project, pf, text, offset, pf.skill_id, ls, text[ls:offset], text[offset:le])

    def back(self, n: int) -> TextRange:
        """The range of the ``n`` characters before the cursor (the partial word)."""
        return TextRange(self.offset - n, self.offset)

    @property
    def skill(self) -> Skill | None:
        return self.project.skill(self.sid) if self.sid else None

    @property
    def skill_doc(self) -> SkillDoc | None:
        sk = self.skill
        return sk.doc if sk else None


# what _Out.add was given: label, kind, detail, doc, new text, sort, filter text, snippet,
# retrigger
_Args: TypeAlias = tuple[str, SymbolKind, str, Doc, str, str | None, str | None, bool, bool]


class _Out:
    """Items that all replace the same range, built when read: all of them (``items``),
    or only the best ``MAX_ITEMS`` of a long list (``best``)."""

    def __init__(self, rng: TextRange) -> None:
        self.rng = rng
        self.args: list[_Args] = []

    def add(
        self,
        label: str,
        kind: SymbolKind,
        detail: str = "",
        doc: Doc = "",
        text: str | None = None,
        sort: str | None = None,
        filter_text: str | None = None,
        snippet: bool = False,
        retrigger: bool = False,
    ) -> None:
        new_text = label if text is None else text
        self.args.append(
            (label, kind, detail, doc, new_text, sort, filter_text, snippet, retrigger)
        )

    def _item(self, a: _Args) -> CompletionItem:
        label, kind, detail, doc, new_text, sort, filter_text, snippet, retrigger = a
        edit = TextEdit(self.rng, new_text)
        return CompletionItem(label, kind, detail, doc, edit, sort, filter_text, snippet, retrigger)

    @property
    def items(self) -> list[CompletionItem]:
        return [self._item(a) for a in self.args]

    def best(self, c: _Ctx) -> list[CompletionItem]:
        """The items, when they are the whole answer: with more than ``MAX_ITEMS`` labels,
        only the best ones as :func:`_capped` ranks them (``c.capped`` is then set), built
        without building the others."""
        seen: set[str] = set()
        args: list[_Args] = []
        for a in self.args:
            if a[0] not in seen:
                seen.add(a[0])
                args.append(a)
        if c.only is not None:
            args = [a for a in args if a[0] == c.only]
        elif len(args) > MAX_ITEMS:
            typed = c.text[self.rng.start : min(c.offset, self.rng.end)].lower()
            args.sort(key=lambda a: (_match((a[6] or a[0]).lower(), typed), a[5] or a[0]))
            del args[MAX_ITEMS:]
            c.capped = True
        return [self._item(a) for a in args]


def _rel(project: Project, path: Path | None) -> str:
    if path is None:
        return "bundled with the engine"
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return path.as_posix()


_WORD_RE = re.compile(r"[\w-]*\Z")


def _partial(before: str, pattern: re.Pattern[str] = _WORD_RE) -> str:
    m = pattern.search(before)
    return m.group(0) if m else ""


# ---------------------------------------------------------------------------------------
# Memory: the readable set (docs/language/memory.md#visibility)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    ns: str
    name: str
    type: str
    scope: str  # public, private, project, bundled
    description: str | None
    enum: tuple[object, ...]
    where: str

    @property
    def detail(self) -> str:
        return self.type

    def documentation(self) -> str:
        if self.scope == "project":
            what = "project field"
        elif self.scope == "bundled":
            what = f"public field of the bundled skill `{self.ns}`"
        else:
            what = f"{self.scope} field of `{self.ns}`"
        out = [f"**{self.ns}.{self.name}** · `{self.type}` · {what}"]
        if self.description:
            out.append(self.description)
        if self.enum:
            out.append("Values: " + ", ".join(f"`{_quote(v)}`" for v in self.enum))
        out.append(f"Declared in `{self.where}`.")
        return "\n\n".join(out)


def _quote(v: object, q: str = "'") -> str:
    if isinstance(v, str):
        return f"{q}{v}{q}" if q not in v else repr(v)
    return repr(v)


def _from_memory(mf: MemoryField, ns: str, where: str) -> _Field:
    return _Field(ns, mf.name, mf.type, mf.scope, mf.description, tuple(mf.enum_values), where)


def _fields(md: MemoryDoc, ns: str, where: str) -> list[_Field]:
    """The fields ``md`` declares, each once, as it takes effect."""
    out = []
    for name in dict.fromkeys(f.name for f in md.fields):
        mf = md.field(name)
        if mf is not None:
            out.append(_from_memory(mf, ns, where))
    return out


def _all_fields(project: Project, sk: Skill) -> list[_Field]:
    lists = _skill_lists(project, sk)
    return lists.fields if lists is not None else []


def _project_fields(project: Project) -> list[_Field]:
    pmf = project.project_memory_file()
    pm = pmf.doc if pmf is not None else None
    if pmf is None or not isinstance(pm, MemoryDoc):
        return []
    return _fields(pm, "project", _rel(project, pmf.path))


def _readable(project: Project, sid: str | None, ns: str) -> list[_Field]:
    """Entries of ``ns`` readable from skill ``sid`` (None: the project-wide files, which
    read every skill's public fields and the project fields): the declarations
    :meth:`Semantics.readable_declarations` gives, as completion candidates."""
    scope = Semantics(project).scope(sid, ns)
    if scope == "project":
        return _project_fields(project)
    if scope == "bundled":
        return [
            _Field(ns, d.name, d.type, "bundled", d.description, (), "bundled with the engine")
            for d in DEFAULT_SKILLS[ns].public_fields
        ]
    sk = project.skill(ns)
    lists = _skill_lists(project, sk) if sk is not None else None
    if lists is None or scope not in ("own", "other"):
        return []
    if scope == "own" or not lists.fields:
        return lists.fields
    if lists.public is None:  # what any other skill may read
        public = {f.name for f in Semantics(project).readable_declarations(sid, ns)}
        lists.public = [f for f in lists.fields if f.name in public]
    return lists.public


def _declared(project: Project, ns: str, entry: str) -> _Field | None:
    """The declaration of ``ns.entry`` whoever may read it (for value completion)."""
    if ns == "project":
        fields = _project_fields(project)
    else:
        sk = project.skill(ns)
        fields = _all_fields(project, sk) if sk else _readable(project, None, ns)
    return next((f for f in fields if f.name == entry), None)


class _Ns(NamedTuple):
    """A namespace as a completion candidate."""

    ns: str
    detail: str
    sort: str
    lower: str  # ns in lower case, for ranking


def _namespaces(project: Project, sid: str | None) -> list[_Ns]:
    """The namespaces readable from ``sid``, in sort order: the skill itself first, then
    ``project``, then the skills with public fields (the project's, then the bundled
    ones)."""
    shared = _shared_namespaces(project)
    if not sid:
        return shared
    own = [_Ns(sid, "this skill", f"0{sid}", sid.lower())] if project.skill(sid) else []
    return [*own, *(n for n in shared if n.ns != sid)]


# -- What completion keeps between requests ------------------------------------------------
# Lists made from every skill's memory.yml or skill.md, which a 1,000-skill project would
# otherwise make again on each request. Each entry is used only while the project holds
# exactly the parse it was made from (an edit makes a new ParsedFile), and the cache goes
# with the project (test_completion.py: test_completion_after_edits_is_as_after_a_load).
# The figures: p95 of the request with the entry and without it, on the dense 1,000-skill
# bench project, in-process (docs/performance.md, tenth round).


@dataclass(eq=False)
class _SkillLists:
    """Completion's lists of one skill, made from one parse of its memory.yml."""

    memory: ParsedFile  # the parse they were made from
    # every field: `{` in responses.yml 27 -> 88 ms without, `memory.get("` 24 -> 82 ms
    fields: list[_Field]
    # what other skills read (on first use): `{` 27 -> 48 ms without, `memory.get("` 24 -> 44
    public: list[_Field] | None = None
    # its detail as a namespace: `session.` after another memory.yml's edit 7 -> 10 ms without
    detail: tuple[str | None] | None = None


@dataclass(eq=False)
class _Cache:
    """What completion keeps for one project."""

    skills: dict[str, _SkillLists] = field(default_factory=dict)
    # each skill's `@skill.` item detail, per parse of its skill.md: 10 -> 22 ms without
    summaries: dict[str, tuple[ParsedFile | None, tuple[str, bool]]] = field(default_factory=dict)
    # the namespaces after `session.` (the request bench/run.py times): 2 -> 23 ms without
    ns_made_from: list[object] = field(default_factory=list)  # see _shared_namespaces
    shared: list[_Ns] = field(default_factory=list)
    unique_sid: str | None = None  # the skill `unique` is for (the one being edited)
    unique: tuple[list[_Ns], list[str]] | None = None  # see _unique_namespaces


_CACHES: weakref.WeakKeyDictionary[Project, _Cache] = weakref.WeakKeyDictionary()
_last: tuple[weakref.ref[Project], _Cache] | None = None  # asked for 1,000 times a request


def _cache(project: Project) -> _Cache:
    global _last
    if _last is not None and _last[0]() is project:
        return _last[1]
    found = _CACHES.get(project)
    if found is None:
        found = _CACHES[project] = _Cache()
    _last = (weakref.ref(project), found)
    return found


def _skill_lists(project: Project, sk: Skill) -> _SkillLists | None:
    """``sk``'s lists (None without a memory.yml that parses into one)."""
    pf = sk.memory
    if pf is None or not isinstance(pf.doc, MemoryDoc):
        return None
    cache = _cache(project).skills
    lists = cache.get(sk.id)
    if lists is None or lists.memory is not pf:
        lists = cache[sk.id] = _SkillLists(pf, _fields(pf.doc, sk.id, _rel(project, pf.path)))
    return lists


def _shared_namespaces(project: Project) -> list[_Ns]:
    """``project`` and every skill with public fields (the project's, then the bundled
    ones), in sort order; made again when the set of skills or a memory.yml changes."""
    cache = _cache(project)
    skills = project.skills
    made_from: list[object] = [skills, project.project_memory_file()]
    made_from.extend([sk.memory for sk in skills.values()])
    old = cache.ns_made_from
    if len(old) == len(made_from) and all(a is b for a, b in zip(old, made_from, strict=True)):
        return cache.shared
    out: list[_Ns] = []
    for i, other in enumerate(project.catalog_ids()):
        detail = _public_summary(project, other)
        if detail is None:
            continue
        rank = "3" if project.skill(other) is None else "2"  # project skills first
        out.append(_Ns(other, detail, f"{rank}{i:04d}", other.lower()))
    if _project_fields(project):  # before the other skills and the bundled defaults
        out.append(_Ns("project", "project memory", "1", "project"))
    out.sort(key=lambda n: n.sort)
    cache.ns_made_from, cache.shared, cache.unique = made_from, out, None
    return out


def _unique_namespaces(project: Project, sid: str | None) -> tuple[list[_Ns], list[str]]:
    """:func:`_namespaces` without repeated labels, and their labels in lower case; kept
    for the last skill asked for (the one being edited) with the namespaces."""
    _shared_namespaces(project)  # made again first if what it is made from changed
    cache = _cache(project)
    if cache.unique is not None and cache.unique_sid == sid:
        return cache.unique
    seen: set[str] = set()
    unique: list[_Ns] = []
    for n in _namespaces(project, sid):
        if n.ns not in seen:
            seen.add(n.ns)
            unique.append(n)
    cache.unique_sid, cache.unique = sid, (unique, [n.lower for n in unique])
    return cache.unique


def _public_summary(project: Project, ns: str) -> str | None:
    """The detail of another skill as a namespace, or None when it has no public field."""
    sk = project.skill(ns)
    lists = _skill_lists(project, sk) if sk is not None else None
    if lists is not None and lists.detail is not None:
        return lists.detail[0]
    fields = _readable(project, None, ns)
    detail = None
    if fields:
        n = len(fields)
        kind = "bundled skill" if sk is None else "skill"
        detail = f"{kind} · {n} public field{'s' * (n != 1)}"
    if lists is not None:
        lists.detail = (detail,)
    return detail


def _namespace_doc(project: Project, sid: str | None, ns: str) -> str:
    """The documentation of namespace ``ns`` as read from ``sid``."""
    return _ns_doc(project, ns, _readable(project, sid, ns))


def _ns_doc(project: Project, ns: str, fields: list[_Field]) -> str:
    out = []
    if ns == "project":
        out.append("**project** · project memory (`memory.yml` at the project root)")
    else:
        sk = project.skill(ns)
        desc: str | None
        if sk is not None:
            desc = sk.doc.description if sk.doc else None
            out.append(f"**{ns}** · skill")
        else:
            dflt = DEFAULT_SKILLS.get(ns)
            desc = dflt.summary if dflt else None
            out.append(f"**{ns}** · bundled default skill")
        if desc:
            out.append(desc.strip())
    if fields:
        out.append("Readable: " + ", ".join(f"`{f.name}`" for f in fields))
    return "\n\n".join(out)


def _add_namespaces(c: _Ctx, o: _Out, sid: str | None) -> None:
    """The namespaces readable from ``sid``; when there are more than ``MAX_ITEMS``, only
    the best of them for what is typed (``complete`` then marks the list incomplete)."""
    p = c.project
    unique, lowers = _unique_namespaces(p, sid)
    if c.only is not None:
        unique = [n for n in unique if n.ns == c.only]
    elif len(unique) > MAX_ITEMS:
        typed = c.text[o.rng.start : min(c.offset, o.rng.end)].lower()
        unique = [unique[i] for i in _best(lowers, typed)]
        c.capped = True
    for n in unique:
        doc = functools.partial(_namespace_doc, p, sid, n.ns)
        o.add(n.ns, "namespace", n.detail, doc, sort=n.sort)


def _add_entries(o: _Out, fields: Iterable[_Field], prefix: str = "", suffix: str = "") -> None:
    for i, f in enumerate(fields):
        label = prefix + f.name
        o.add(label, "field", f.detail, f.documentation, text=label + suffix, sort=f"{i:04d}")


# ---------------------------------------------------------------------------------------
# Conditions (docs/language/conditions.md)
# ---------------------------------------------------------------------------------------

_COND_KEYS = frozenset({"requires", "if", "complete_when", "when", "condition", "satisfied_when"})
_NS_RE = re.compile(r"(?<![\w.])session\.(\w*)\Z")
_ENTRY_RE = re.compile(r"(?<![\w.])session\.(\w+)\.(\w*)\Z")
_COND_TOKEN_RE = re.compile(
    r"""
     (?P<ws>\s+)
    |(?P<str>[rRbBuU]{0,2}(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))
    |(?P<num>\d[\w.]*)
    |(?P<name>[^\W\d]\w*(?:\.\w+)*\.?)
    |(?P<op>==|!=|<=|>=|<|>|=|!)
    |(?P<lpar>\()
    |(?P<rpar>\))
    |(?P<other>.)
    """,
    re.X | re.S,
)
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_OPERATOR_DOCS = {
    "==": "equal to",
    "!=": "not equal to",
    "<": "less than",
    "<=": "less than or equal to",
    ">": "greater than",
    ">=": "greater than or equal to",
    "and": "both sides must hold",
    "or": "either side must hold",
}


def _condition(
    c: _Ctx, sid: str | None, before: str, yaml_quote: str | None
) -> list[CompletionItem]:
    """Completion inside a condition; ``before`` is the condition text up to the cursor.

    ``yaml_quote`` is the quote of the YAML string holding the condition (values are then
    written with the other quote)."""
    p = c.project
    m = _ENTRY_RE.search(before)
    if m:
        o = _Out(c.back(len(m.group(2))))
        _add_entries(o, _readable(p, sid, m.group(1)))
        return o.best(c)
    m = _NS_RE.search(before)
    if m:
        o = _Out(c.back(len(m.group(1))))
        _add_namespaces(c, o, sid)
        return o.best(c)

    toks: list[tuple[str, str]] = []
    partial = ""
    for tm in _COND_TOKEN_RE.finditer(before):
        kind = tm.lastgroup or "other"
        if kind == "other" and tm.group() in "'\"":
            partial = before[tm.start() :]  # an unclosed string: the value being typed
            break
        if kind != "ws":
            toks.append((kind, tm.group()))
    else:
        if toks and not before[-1:].isspace():
            kind, value = toks[-1]
            word = kind in ("name", "num") and "." not in value
            if word or (kind == "op" and value in ("=", "!")):
                partial = value
                toks.pop()
    prefix_space = ""
    end = len(before) - len(partial)
    spaced = end == 0 or before[end - 1 : end].isspace() or before[end - 1 : end] == "("
    last = toks[-1] if toks else None
    o = _Out(c.back(len(partial)))
    if yaml_quote == "'":
        value_q = '"'
    elif yaml_quote == '"':
        value_q = "'"
    else:  # free to choose: the file's own style
        value_q = _file_quote(c.text)
    if partial[:1] in ("'", '"'):
        value_q = partial[0]

    def operand_start() -> None:
        o.add(
            "session.",
            "keyword",
            "memory reference",
            "`session.<skill_id|project>.<entry>`",
            retrigger=True,
        )
        o.add("not", "keyword", "negation", text="not ")

    if last is None or last[0] == "lpar" or (last[0] == "name" and last[1] in ("and", "or", "not")):
        if partial[:1] in ("'", '"', "=", "!"):
            return []
        operand_start()
        return o.best(c)
    if last[0] == "op":
        if last[1] in ("=", "!"):
            return []
        if not spaced and not partial:
            prefix_space = " "
        if last[1] in ("==", "!=") and len(toks) >= 2 and toks[-2][0] == "name":
            ref = toks[-2][1].split(".")
            if len(ref) == 3 and ref[0] == "session":
                f = _declared(c.project, ref[1], ref[2])
                _values(o, f, value_q, prefix_space, strings_only=partial[:1] in ("'", '"'))
                return o.best(c)
        if partial[:1] in ("'", '"'):
            return o.best(c)
        o.add(
            "None", "value", "unset", "`None`: the field has no value", text=prefix_space + "None"
        )
        if not partial:
            o.add(
                "session.",
                "keyword",
                "memory reference",
                "`session.<skill_id|project>.<entry>`",
                text=prefix_space + "session.",
                retrigger=True,
            )
        return o.best(c)
    # after a complete operand: comparison operators and connectives
    if partial[:1] in ("'", '"') or (not spaced and partial[:1] not in ("=", "!")):
        return []
    for i, op in enumerate((*_COMPARISONS, "and", "or")):
        o.add(op, "keyword", _OPERATOR_DOCS[op], text=op + " ", sort=f"{i:02d}")
    return o.best(c)


_COMPARED_RE = re.compile(r"""(?:==|!=)[ \t]*(['"])""")


def _file_quote(text: str) -> str:
    """The quote the file writes compared strings with (``== "x"`` or ``== 'x'``): the
    more frequent one, ``'`` when neither is used."""
    single = double = 0
    for m in _COMPARED_RE.finditer(text):
        if m.group(1) == "'":
            single += 1
        else:
            double += 1
    return '"' if double > single else "'"


def _values(o: _Out, f: _Field | None, q: str, prefix: str, strings_only: bool) -> None:
    """The values ``f`` may be compared with (enum values, booleans, ``None``)."""
    i = 0
    if f is not None:
        for v in f.enum:
            label = _quote(v, q)
            o.add(label, "value", f"{f.ns}.{f.name}", f.documentation, prefix + label, f"{i:04d}")
            i += 1
        if f.type == "bool" and not strings_only:
            for v in ("True", "False"):
                o.add(v, "value", "bool", text=prefix + v, sort=f"{i:04d}")
                i += 1
    if not strings_only:
        o.add("None", "value", "unset", "`None`: the field has no value", prefix + "None", "9999")


def _site_at(sites: Sequence[ConditionSite], text: str, offset: int) -> tuple[str, str] | None:
    """(condition text before the cursor, YAML quote) when ``offset`` is inside a parsed
    condition site."""
    for site in sites:
        a = site.anchor
        if not (a.start <= offset <= a.end):
            continue
        idx = site.map.index_of(offset)
        if idx is None:
            continue
        q = text[a.start] if a.length and text[a.start] in "'\"" else None
        if q is not None and offset <= a.start:
            continue
        return site.text[:idx], (q or "")
    return None


# ---------------------------------------------------------------------------------------
# YAML keys and values (the cursor's place comes from syntax.yaml_tree.yaml_context_at)
# ---------------------------------------------------------------------------------------

_MAP_KEYS = frozenset(
    {
        "routing",
        "knowledge_answering",
        "requires_confirmation",
        "set_memory",
        "parameters",
        "dtmf",
        "anonymization",
        "schema",
        "public",
        "private",
        "responses",
        "preconditions",
    }
)
_LIST_KEYS = frozenset(
    {
        "steps",
        "tools",
        "tool_constraints",
        "import_tools",
        "utter",
        "criteria",
        "buttons",
        "privacy_rules",
    }
)


def _keys(
    c: _Ctx,
    y: YamlContext,
    keys: Iterable[str],
    docs: dict[str, str] | None = None,
    maps: Iterable[str] = (),
    lists: Iterable[str] = (),
) -> list[CompletionItem]:
    """Mapping keys not yet present, inserted as ``key: `` (or a nested block)."""
    word = y.line.value if y.at_key else ""
    o = _Out(c.back(len(word)))
    maps = frozenset(maps) | _MAP_KEYS
    lists = frozenset(lists) | _LIST_KEYS
    rest = c.line_after.strip()
    pad = " " * (y.line.col + 2)
    for i, k in enumerate(keys):
        if k in y.siblings and k != word:
            continue
        if rest:
            new = k
        elif k in maps:
            new = f"{k}:\n{pad}"
        elif k in lists:
            new = f"{k}:\n{pad}- "
        else:
            new = f"{k}: "
        again = k in _VALUE_KEYS and new.endswith(": ")
        o.add(k, "property", "", (docs or {}).get(k, ""), new, f"{i:03d}", retrigger=again)
    return o.best(c)


# keys whose values completion offers: accepting one opens the suggestions for the value
_VALUE_KEYS = frozenset(
    {
        "type",
        "next",
        "then",
        "else",
        "execute_tool",
        "call",
        "link",
        "action",
        "utter",
        "utterance",
        "collect",
        "precondition",
        "on_success",
        "on_failure",
        "utter_for_confirmation",
        "utter_on_user_denial",
        "hidden",
        "disabled",
        "always_include_in_prompt",
        "enabled",
        "is_default",
        "engine_managed",
        "optional",
        "ask_before_filling",
        "noop",
        "allow_audio_input",
        "llm_settable",
        "pii",
        "seed",
        "on",
    }
)


def _bools(c: _Ctx, y: YamlContext) -> list[CompletionItem]:
    o = _Out(c.back(len(_partial(y.value))))
    o.add("true", "value")
    o.add("false", "value")
    return o.best(c)


def _yaml_value_quote(y: YamlContext) -> tuple[str, str] | None:
    """(value text before the cursor, quote) of an inline value, None when the value is a
    closed quoted string (the cursor is after it)."""
    v = y.value
    if v[:1] in ("'", '"'):
        q = v[0]
        body = v[1:]
        if q == "'":
            body = body.replace("''", "\0")
        if q in body:
            return None
        return body.replace("\0", "'"), q
    return v, ""


def _value_word(c: _Ctx, y: YamlContext) -> _Out | None:
    """An output replacing the partial scalar value at the cursor (names)."""
    vq = _yaml_value_quote(y)
    if vq is None:
        return None
    body, _ = vq
    if not ITEM_WORD.fullmatch(body):
        return None
    return _Out(c.back(len(body)))


# ---------------------------------------------------------------------------------------
# Names: skills, tools, responses, steps, preconditions
# ---------------------------------------------------------------------------------------


def _add_skills(o: _Out, project: Project, exclude: str | None = None) -> None:
    for i, sid in enumerate(project.catalog_ids()):
        if sid == exclude:
            continue
        sk = project.skill(sid)
        doc = sk.doc if sk else None
        if sk is None:
            dflt = DEFAULT_SKILLS[sid]
            o.add(sid, "skill", "bundled default skill", dflt.summary, sort=f"2{i:04d}")
            continue
        detail, flagged = _skill_summary(project, sk)
        o.add(
            sid,
            "skill",
            detail,
            functools.partial(_skill_doc, sid, doc),
            sort=f"{flagged:d}{i:04d}",
        )


def _skill_flags(doc: SkillDoc | None) -> tuple[str | None, list[str]]:
    """A skill's display name and its flags (hidden, disabled)."""
    name = doc.fm_str("name") if doc else None
    flags = [f for f in ("hidden", "disabled") if doc is not None and doc.fm_bool(f)]
    return name, flags


def _skill_summary(project: Project, sk: Skill) -> tuple[str, bool]:
    """(detail, flagged) of a skill as a completion item (kept per parse of its skill.md)."""
    cache = _cache(project).summaries
    kept = cache.get(sk.id)
    if kept is not None and kept[0] is sk.skill_md:
        return kept[1]
    name, flags = _skill_flags(sk.doc)
    result = (" · ".join([*(f for f in [name] if f), *flags]) or "skill", bool(flags))
    cache[sk.id] = (sk.skill_md, result)
    return result


def _skill_doc(sid: str, doc: SkillDoc | None) -> str:
    name, flags = _skill_flags(doc)
    desc = (doc.description or "").strip() if doc else ""
    md = f"**{sid}**" + (f" · {name}" if name else "")
    if flags:
        md += f"\n\n*{', '.join(flags)}*: not offered to the model by routing"
    if desc:
        md += f"\n\n{desc}"
    return md


def _add_blocks(o: _Out, blocks: Iterable[str], sid: str | None) -> None:
    for i, b in enumerate(blocks):
        o.add(b, "block", f"ordered block of {sid}" if sid else "ordered block", sort=f"3{i:04d}")


@dataclass(frozen=True)
class _Tool:
    name: str
    detail: str
    doc: str


def _tools_of(c: _Ctx, which: Literal["visible", "attachable", "execute"]) -> list[_Tool]:
    """Tools for a skill: ``visible`` (what the model may call: local, declared shared,
    MCP, framework), ``attachable`` (what a gate may name: local, every shared tool, MCP
    imports), ``execute`` (what an ``execute_tool`` step may run)."""
    p = c.project
    sk = c.skill
    sem = Semantics(p)
    out: dict[str, _Tool] = {}
    if sk is not None:
        for pf, mod in sk.tool_modules():
            for t in sem.tools_in(pf, mod):
                out.setdefault(
                    t.name, _Tool(t.name, f"tool of {sk.id}", _tool_doc(p, t.description, pf.path))
                )
    shared: dict[str, _Tool] = {}
    for pf, mod in p.shared_tool_files():
        for t in sem.tools_in(pf, mod):
            shared.setdefault(
                t.name, _Tool(t.name, "shared tool", _tool_doc(p, t.description, pf.path))
            )
    doc = c.skill_doc
    mcp = {
        name: _Tool(name, f"MCP tool ({server})", f"Imported as `mcp/{server}:{name}`.")
        for name, server in Semantics.mcp_tools(doc).items()
    }
    if which == "attachable":
        visible = set(shared)
    elif sk is not None:
        visible = sem.visible_tools(sk, doc)
    else:
        visible = set()
    for name, tool in shared.items():
        if name in visible:
            out.setdefault(name, tool)
    for name, tool in mcp.items():
        out.setdefault(name, tool)
    if which == "visible":
        for name, desc in FRAMEWORK_TOOLS.items():
            out.setdefault(name, _Tool(name, "framework tool", desc))
    if which == "execute":  # 3.21 has no execute-only tools
        for name in sem.profile.execute_only_tools:
            out.setdefault(name, _Tool(name, "framework tool (execute_tool only)", ""))
    return list(out.values())


def _tool_doc(project: Project, description: str | None, path: Path) -> str:
    out = [description.strip()] if description else []
    out.append(f"Defined in `{_rel(project, path)}`.")
    return "\n\n".join(out)


def _add_tools(o: _Out, tools: Iterable[_Tool]) -> None:
    for i, t in enumerate(tools):
        o.add(t.name, "tool", t.detail, t.doc, sort=f"{i:04d}")


def _add_responses(o: _Out, project: Project, extra: Iterable[str] = ()) -> None:
    names = sorted(k[1] for k in project.index.symbols if k[0] == "response")
    for name in names:
        syms = project.index.lookup(("response", name))
        paths = [s.path for s in syms if s.path is not None]
        detail = "bundled response" if not paths else _rel(project, paths[0])
        sort = f"{'1' if not paths else '0'}{name}"  # the project's responses first
        doc = ""
        for s in syms:
            if isinstance(s.obj, Response):
                texts = [v.text for v in s.obj.variants if v.text]
                if texts:
                    doc = texts[0].strip()
                    break
        o.add(name, "response", detail, doc, sort=sort)
    for name in extra:
        o.add(name, "keyword", "step action", sort=f"2{name}")


def _add_preconditions(o: _Out, project: Project) -> None:
    agent = project.agent
    if agent is None:
        return
    for name, pre in agent.preconditions.items():
        parts = []
        if pre.satisfied_when is not None:
            parts.append(f"satisfied when `{pre.satisfied_when.value}`")
        if pre.resolve_with is not None:
            parts.append(f"resolved by `{pre.resolve_with.value}`")
        o.add(name, "precondition", "agent.yml", "; ".join(parts))


# ---------------------------------------------------------------------------------------
# skill.md
# ---------------------------------------------------------------------------------------

_BLOCK_OPEN_RE = re.compile(r":::ordered_block(?:\s+id=([\w-]+))?")
_BLOCK_CLOSE_RE = re.compile(r":::[ \t]*\Z")


@dataclass(frozen=True)
class _Region:
    kind: Literal["frontmatter", "block", "prose"]
    start: int
    end: int
    block_id: str | None = None


def _outline(text: str) -> list[_Region]:
    """Frontmatter, ordered blocks and prose of a skill.md, framed from raw lines so that a
    half-written file still has regions."""
    lines: list[tuple[int, str]] = []
    pos = 0
    for s in text.split("\n"):
        lines.append((pos, s))
        pos += len(s) + 1
    out: list[_Region] = []
    i = 0
    while i < len(lines) and not lines[i][1].strip():
        i += 1
    if i < len(lines) and lines[i][1].strip() == "---":
        j = i + 1
        while j < len(lines) and lines[j][1].strip() != "---":
            j += 1
        fm_start = lines[i + 1][0] if i + 1 < len(lines) else len(text)
        fm_end = lines[j][0] - 1 if j < len(lines) else len(text)
        out.append(_Region("frontmatter", fm_start, max(fm_end, fm_start)))
        if j >= len(lines):
            return out
        i = j + 1
    prose_start = lines[i][0] if i < len(lines) else len(text)
    while i < len(lines):
        ls, s = lines[i]
        m = _BLOCK_OPEN_RE.match(s)
        if m:
            if ls > prose_start:
                out.append(_Region("prose", prose_start, ls - 1))
            j = i + 1
            while j < len(lines) and not _BLOCK_CLOSE_RE.match(lines[j][1]):
                j += 1
            b_start = lines[i + 1][0] if i + 1 < len(lines) else len(text)
            b_end = lines[j][0] - 1 if j < len(lines) else len(text)
            out.append(_Region("block", b_start, max(b_end, b_start), m.group(1)))
            i = j + 1
            prose_start = lines[i][0] if i < len(lines) else len(text) + 1
            continue
        i += 1
    if prose_start <= len(text):
        out.append(_Region("prose", prose_start, len(text)))
    return out


def _region_at(regions: list[_Region], offset: int) -> _Region | None:
    for r in regions:
        if r.start <= offset <= r.end:
            return r
    return None


def _skill_md(c: _Ctx) -> list[CompletionItem]:
    regions = _outline(c.text)
    region = _region_at(regions, c.offset)
    if region is None:
        return []
    doc = c.pf.doc if isinstance(c.pf.doc, SkillDoc) else None
    if region.kind == "prose":
        return _prose(c, region)
    site = _site_at(doc.conditions, c.text, c.offset) if doc else None
    if site is not None:
        return _condition(c, c.sid, site[0], site[1])
    y = yaml_context_at(c.text, c.offset, region.start, region.end)
    if region.kind == "frontmatter":
        return _frontmatter(c, y)
    return _block(c, y, region, regions)


def _paragraph_start(c: _Ctx, region: _Region) -> bool:
    if not c.text[region.start : c.line_start].strip():
        return True
    prev_end = c.line_start - 1
    prev_start = c.text.rfind("\n", 0, prev_end) + 1
    return not c.text[prev_start:prev_end].strip()


_IF_SNIPPET_DOC = (
    "A conditional paragraph: the lines below the `if:` line (up to the next blank line) "
    "apply only while the condition holds, e.g. `if: session.<skill>.<entry> == 'value'`."
)


def _prose(c: _Ctx, region: _Region) -> list[CompletionItem]:
    para_start = _paragraph_start(c, region)
    stripped = c.line_before.lstrip(" \t")
    if para_start and stripped.startswith("if:"):
        return _condition(c, c.sid, stripped[3:], None)
    at = _at_items(c, "prose")
    if at is not None:
        return at
    word = re.fullmatch(r"[ \t]*([A-Za-z]*)", c.line_before)
    if para_start and word and not c.line_after.lstrip().startswith("if:"):
        o = _Out(c.back(len(word.group(1))))
        o.add(
            "if:", "snippet", "conditional paragraph", _IF_SNIPPET_DOC, "if: $1\n$0", snippet=True
        )
        return o.best(c)
    return []


_AT_RE = re.compile(r"(?<!\w)@([\w-]*(?:\.[\w-]*)*)\Z")
_AT_KINDS = {
    "memory": "insert a memory value: `@memory.<skill_id|project>.<entry>`",
    "skill": "refer to a skill: `@skill.<skill_id>`",
    "tool": "refer to a tool: `@tool.<tool_name>`",
    "block": "enter an ordered block of this skill: `@block.<block_id>`",
}


def _at_items(c: _Ctx, where: Literal["prose", "instructions"]) -> list[CompletionItem] | None:
    """``@`` tokens; None when the cursor is not in one."""
    m = _AT_RE.search(c.line_before)
    if m is None:
        return None
    parts = m.group(1).split(".")
    p = c.project
    o = _Out(c.back(len(parts[-1])))
    if len(parts) == 1:
        kinds = list(_AT_KINDS) if where == "prose" else ["memory", "tool"]
        for i, k in enumerate(kinds):
            o.add(
                f"{k}.",
                "keyword",
                f"@{k}",
                _AT_KINDS[k],
                sort=str(i),
                filter_text=k,
                retrigger=True,
            )
        return o.best(c)
    kind = parts[0]
    if kind == "memory":
        if len(parts) == 2:
            _add_namespaces(c, o, c.sid)
        elif len(parts) == 3:
            _add_entries(o, _readable(p, c.sid, parts[1]))
        return o.best(c)
    if len(parts) != 2:
        return o.best(c)
    if kind == "skill" and where == "prose":
        _add_skills(o, p)
    elif kind == "tool":
        _add_tools(o, _tools_of(c, "visible"))
    elif kind == "block" and where == "prose":
        _add_blocks(o, _block_ids(c), c.sid)
    return o.best(c)


def _block_ids(c: _Ctx) -> list[str]:
    return [r.block_id for r in _outline(c.text) if r.kind == "block" and r.block_id]


_FM_DOCS = {
    "name": "Display name of the skill.",
    "description": "What the skill is for: the router reads it to pick the skill.",
    "precondition": "Name of a binding in agent.yml `orchestrator.preconditions`.",
    "hidden": "`true`: never offered by routing; reachable through `call`/`link`/`@skill`.",
    "disabled": "`true`: the skill is not loaded.",
    "always_include_in_prompt": "`true`: always listed in the router prompt.",
    "complete_when": "When the skill is done: `condition:` and/or `criteria:`.",
    "import_tools": "Shared tools (tools/*.py) and `mcp/<server>:<tool>` to use here.",
    "tool_constraints": "Gates on tools: `requires`, `requires_confirmation`, responses.",
    "utter": "Responses said verbatim: `on: activate` and/or `when: <condition>`.",
    "knowledge_answering": "`instructions:` for answering from the knowledge base.",
    "routing": "`is_default` / `engine_managed` flags.",
}
FRONTMATTER_DOCS = _FM_DOCS  # what each frontmatter key means (hover shows it too)
_FM_MAPS = ("complete_when",)
_FM_BOOLS = frozenset({"hidden", "disabled", "always_include_in_prompt"})
_RESPONSE_VALUE_KEYS = frozenset(
    {"on_success", "on_failure", "utter_for_confirmation", "utter_on_user_denial"}
)


def _frontmatter(c: _Ctx, y: YamlContext) -> list[CompletionItem]:
    cond = _yaml_condition(c, y, top_level_complete_when=True)
    if cond is not None:
        return cond
    if y.at_key:
        return _frontmatter_keys(c, y)
    return _frontmatter_value(c, y)


def _frontmatter_keys(c: _Ctx, y: YamlContext) -> list[CompletionItem]:
    p = c.project
    path = y.path
    if not path and not y.dashes and y.line.col == 0:
        return _keys(c, y, FRONTMATTER_KEYS, _FM_DOCS, maps=_FM_MAPS)
    if path == ("tool_constraints", "-") and y.dashes:
        o = _Out(c.back(len(y.line.value)))
        _add_tools(o, _tools_of(c, "attachable"))
        return o.best(c)
    if len(path) == 3 and path[:2] == ("tool_constraints", "-"):
        return _keys(c, y, TOOL_CONSTRAINT_OPTIONS)
    if y.under("requires_confirmation"):
        return _keys(c, y, CONFIRMATION_KEYS)
    if path == ("utter", "-") and y.dashes:
        o = _Out(c.back(len(y.line.value)))
        _add_responses(o, p)
        return o.best(c)
    if len(path) == 3 and path[:2] == ("utter", "-"):
        return _keys(c, y, ("on", "when"))
    if path == ("import_tools", "-") and y.dashes:
        return _import_items(c, y)
    if path == ("complete_when",):
        return _keys(c, y, ("condition", "criteria"))
    if path == ("routing",):
        return _keys(c, y, ("is_default", "engine_managed"))
    if path == ("knowledge_answering",):
        return _keys(c, y, ("instructions",))
    return []


def _frontmatter_value(c: _Ctx, y: YamlContext) -> list[CompletionItem]:
    p = c.project
    path = y.path
    key = y.key
    if key is None:
        return []
    o = _value_word(c, y)
    if o is None:
        return []
    if key == "precondition" and not path:
        _add_preconditions(o, p)
    elif key in _RESPONSE_VALUE_KEYS:
        _add_responses(o, p)
    elif (key in _FM_BOOLS and not path) or key in ("enabled", "is_default", "engine_managed"):
        return _bools(c, y)
    elif key == "on" and y.under("utter", "-", "*"):
        o.add("activate", "value", "say it when the skill starts")
    return o.best(c)


def _import_items(c: _Ctx, y: YamlContext) -> list[CompletionItem]:
    o = _Out(c.back(len(y.line.value)))
    p = c.project
    sem = Semantics(p)
    for pf, mod in p.shared_tool_files():
        for t in sem.tools_in(pf, mod):
            o.add(t.name, "tool", "shared tool", _tool_doc(p, t.description, pf.path))
    integ = p.integrations
    if integ is not None:
        for server in integ.mcp_servers:
            o.add(f"mcp/{server}:", "mcp", "MCP server", f"Tools of MCP server `{server}`.")
    return o.best(c)


def _yaml_condition(
    c: _Ctx, y: YamlContext, top_level_complete_when: bool = False
) -> list[CompletionItem] | None:
    """Completion in a condition that the parser did not register (half-written YAML)."""
    sid = c.sid
    key = y.key
    if key in _COND_KEYS and not (
        top_level_complete_when and key == "complete_when" and not y.path
    ):
        vq = _yaml_value_quote(y)
        if vq is None:
            return []
        return _condition(c, sid, vq[0], vq[1])
    # a condition inside a one-line flow mapping: `- lock_card: {requires: "session.`
    m = re.search(r"[{,]\s*(requires|if|when|condition)\s*:\s+(.*)\Z", c.line_before)
    if m and "}" not in m.group(2):
        v = m.group(2)
        q = v[:1] if v[:1] in ("'", '"') else ""
        body = v[1:] if q else v
        if q and q in body:
            return []
        return _condition(c, sid, body, q)
    sk = y.scalar_key
    if sk in _COND_KEYS and y.line.key is None:
        before = c.text[y.scalar_start : c.offset]
        q = before.lstrip()[:1] if before.lstrip()[:1] in ("'", '"') else ""
        if q:
            before = before.lstrip()[1:]
        return _condition(c, sid, " ".join(before.split("\n")), q)
    return None


def _step_kind(keys: Iterable[str]) -> str | None:
    ks = set(keys)
    if "noop" in ks:
        return "route"
    if "utter" in ks:
        return "utter"
    return next((k for k in STEP_KEYS if k in ks and k not in ("utter", "route")), None)


_STEP_DOCS = {
    "id": "The step id (targets of `next`, `then`, `else`).",
    "instructions": "Free text for the model; the step runs until `complete_when` holds.",
    "collect": "Ask for one of this skill's fields.",
    "action": "Say a response (`utter_…`), or `action_listen` / `hangup`.",
    "utter": "Say a response.",
    "execute_tool": "Run a tool with `parameters`.",
    "set_memory": "Write fields: `entry: value`.",
    "call": "Run a skill (or a block of a blocks-only skill) and come back.",
    "link": "Hand off to a skill; never returns.",
    "noop": "`noop: true`: a routing step that only branches with `next`.",
    "next": "A step id, `END`, or a list of `- if:`/`then:` branches and `- else:`.",
    "complete_when": "A condition that ends an instructions step.",
    "optional": "`true`: the step may be skipped.",
    "utterance": "The response that asks for the value.",
    "description": "What to collect, for the model.",
    "dtmf": "Keypad input: `length` or `finish_on_key`.",
    "ask_before_filling": "`true`: always ask, even when the value is known.",
    "parameters": "Tool arguments: literals or `session.<ns>.<entry>`.",
}
_STEP_BOOLS = frozenset({"optional", "ask_before_filling", "noop", "allow_audio_input", "enabled"})


def _block(
    c: _Ctx, y: YamlContext, region: _Region, regions: list[_Region]
) -> list[CompletionItem]:
    cond = _yaml_condition(c, y)
    if cond is not None:
        return cond
    path = y.path
    in_step = len(path) >= 2 and path[:2] == ("steps", "-")
    if in_step and (y.scalar_key == "instructions" or path[2:] == ("instructions",)):
        return _at_items(c, "instructions") or []
    if y.at_key:
        return _block_keys(c, y, in_step, region)
    return _block_value(c, y, region, regions, in_step)


def _block_keys(
    c: _Ctx, y: YamlContext, in_step: bool, region: _Region | None = None
) -> list[CompletionItem]:
    p = c.project
    path = y.path
    if not path and not y.dashes:
        return _keys(c, y, BLOCK_KEYS)
    if path == ("steps", "-"):
        kind = _step_kind(y.siblings)
        keys = STEP_KEYS[kind] if kind else ("id", *[k for k in ALL_STEP_KEYS if k != "id"])
        return _keys(c, y, keys, _STEP_DOCS)
    if in_step and path[2:] in (("next", "-"),):
        return _keys(c, y, ("if", "then", "else"))
    if in_step and path[2:] == ("set_memory",):
        o = _Out(c.back(len(y.line.value)))
        sk = c.skill
        fields = [*(_all_fields(p, sk) if sk else []), *_project_fields(p)]
        rest = c.line_after.strip()
        for i, f in enumerate(fields):
            if f.name in y.siblings:
                continue
            new = f.name if rest else f.name + ": "
            o.add(f.name, "field", f.detail, f.documentation, new, f"{i:04d}")
        return o.best(c)
    if in_step and path[2:] == ("dtmf",):
        return _keys(c, y, ("length", "finish_on_key", "allow_audio_input"))
    if in_step and path[2:] == ("parameters",) and region is not None:
        return _parameter_names(c, y, region)
    if path == ("tools", "-") and y.dashes:
        o = _Out(c.back(len(y.line.value)))
        _add_tools(o, _tools_of(c, "attachable"))
        return o.best(c)
    if path == ("tools", "-"):
        return _keys(c, y, BLOCK_TOOL_KEYS)
    if y.under("tools", "-", "requires_confirmation"):
        return _keys(c, y, CONFIRMATION_KEYS)
    return []


def _parameter_names(c: _Ctx, y: YamlContext, region: _Region) -> list[CompletionItem]:
    """The parameters of the step's tool not given yet, required ones first (from the
    tool's ``def``; none for MCP, framework, factory-made or imported tools)."""
    tool = _step_tool(c, region)
    if tool is None:
        return []
    word = y.line.value
    o = _Out(c.back(len(word)))
    rest = c.line_after.strip()
    order = sorted(tool.signature, key=lambda p: not p.required)
    for i, prm in enumerate(order):
        if prm.positional_only or (prm.name in y.siblings and prm.name != word):
            continue
        o.add(
            prm.name,
            "property",
            _param_detail(prm),
            functools.partial(_signature_doc, c.project, tool, prm.name),
            prm.name if rest else f"{prm.name}: ",
            f"{i:03d}",
        )
    return o.best(c)


def _step_tool(c: _Ctx, region: _Region) -> ToolDef | None:
    """The definition of the tool the cursor's ``execute_tool`` step runs, when known."""
    sk = c.skill
    found = _current_step(c, region)
    if sk is None or found is None:
        return None
    m = _EXECUTE_RE.search(found[0])
    if m is None:
        return None
    return Semantics(c.project).tool_signature(sk, c.skill_doc, m.group(1))


def _param_detail(prm: ToolParam) -> str:
    parts = [prm.annotation] if prm.annotation else []
    parts.append("required" if prm.required else f"default {prm.default}")
    return " · ".join(parts)


def tool_signature_label(t: ToolDef) -> str:
    """``name(a: str, b: int = 3)``: how a tool's parameters read (``context`` aside)."""
    return f"{t.name}({', '.join(_param_text(p) for p in t.signature)})"


def _param_text(prm: ToolParam) -> str:
    out = prm.name + (f": {prm.annotation}" if prm.annotation else "")
    if prm.default is not None:
        out += f" = {prm.default}" if prm.annotation else f"={prm.default}"
    return out


def _signature_doc(project: Project, t: ToolDef, name: str | None = None) -> str:
    out = [f"```python\n{tool_signature_label(t)}\n```"]
    if name is not None:
        prm = next((p for p in t.signature if p.name == name), None)
        if prm is not None and prm.required:
            out.append(f"`{name}` has no default: the step must give it.")
    if t.description:
        out.append(t.description.strip())
    return "\n\n".join(out)


def _block_value(
    c: _Ctx, y: YamlContext, region: _Region, regions: list[_Region], in_step: bool
) -> list[CompletionItem]:
    p = c.project
    sid = c.sid
    path = y.path
    key = y.key
    if key is None:
        return []
    if in_step and key == "instructions":
        return _at_items(c, "instructions") or []
    if in_step and path[2:] == ("parameters",):
        vq = _yaml_value_quote(y)
        if vq is not None and vq[0].startswith("session."):
            return _condition(c, sid, vq[0], vq[1])
        return []
    o = _value_word(c, y)
    if o is None:
        return []
    if key in ("next", "then", "else") and in_step:
        ids = _step_ids(c.text, region)
        here = _current_step_id(c, region)
        for i, sid_ in enumerate(ids):
            if sid_ == here:  # a step that goes to itself loops: offered, but last
                o.add(sid_, "step", "this step (loops)", sort="9998")
            else:
                o.add(sid_, "step", f"step of block {region.block_id}", sort=f"{i:04d}")
        o.add("END", "keyword", "end of the block", "Finish the block.", sort="9999")
    elif key in ("call", "link") and in_step:
        _add_skills(o, p, exclude=sid)
        has_prose = any(r.kind == "prose" and c.text[r.start : r.end].strip() for r in regions)
        if not has_prose:
            _add_blocks(o, _block_ids(c), sid)
    elif key == "execute_tool" and in_step:
        _add_tools(o, _tools_of(c, "execute"))
    elif key == "name" and path == ("tools", "-"):
        _add_tools(o, _tools_of(c, "attachable"))
    elif key in ("action", "utter") and in_step:
        _add_responses(o, p, STEP_ACTIONS if key == "action" else ())
    elif key == "utterance" or key in _RESPONSE_VALUE_KEYS:
        _add_responses(o, p)
    elif key == "collect" and in_step:
        sk = c.skill
        _add_entries(o, _all_fields(p, sk) if sk else [])
    elif key in _STEP_BOOLS:
        return _bools(c, y)
    return o.best(c)


_STEP_ID_RE = re.compile(r"^[ \t]*(?:-[ \t]+)*id[ \t]*:[ \t]*[\"']?([\w-]+)", re.M)
_ITEM_RE = re.compile(r"^([ \t]*)-[ \t]", re.M)


_EXECUTE_RE = re.compile(r"^[ \t]*(?:-[ \t]+)?execute_tool[ \t]*:[ \t]*[\"']?([\w-]+)", re.M)


def _current_step(c: _Ctx, region: _Region) -> tuple[str, int] | None:
    """The text of the step the cursor is in and the column of its ``- ``, read from the
    raw lines (the block may not parse while it is written): the step item is the last
    ``- `` line before the cursor at the indentation of the block's ``steps`` items."""
    body = c.text[region.start : region.end]
    cut = c.offset - region.start
    items = list(_ITEM_RE.finditer(body))
    if not items:
        return None
    col = min(len(m.group(1)) for m in items)  # the steps list is the outermost list
    starts = [m.start() for m in items if len(m.group(1)) == col]
    before = [s_ for s_ in starts if s_ <= cut]
    if not before:
        return None
    start = before[-1]
    after = [s_ for s_ in starts if s_ > start]
    return body[start : after[0] if after else len(body)], col


def _current_step_id(c: _Ctx, region: _Region) -> str | None:
    """The id of the step the cursor is in (see :func:`_current_step`)."""
    found = _current_step(c, region)
    if found is None:
        return None
    step, col = found
    m = _STEP_ID_RE.search(step)
    if m is None:
        return None
    # the id of this step, not of a nested item: on the item line or at the item's keys
    line_start = step.rfind("\n", 0, m.start(1)) + 1
    indent = len(step[line_start:]) - len(step[line_start:].lstrip(" \t-"))
    return m.group(1) if indent <= col + 2 else None


def _step_ids(text: str, region: _Region) -> list[str]:
    body = text[region.start : region.end]
    return [i for i in dict.fromkeys(m.group(1) for m in _STEP_ID_RE.finditer(body)) if i != "END"]


# ---------------------------------------------------------------------------------------
# memory.yml
# ---------------------------------------------------------------------------------------

_TYPE_DOCS = {
    "text": "A string.",
    "int": "A whole number.",
    "float": "A number.",
    "bool": "`True` or `False`.",
    "list": "A list of values.",
    "json": "A JSON object (a mapping).",
    "categorical": "One of `enum_values`.",
    "any": "Any value, stored as given.",
}
_ATTR_DOCS = {
    "type": "The value type: " + ", ".join(CANONICAL_TYPES) + ".",
    "description": "What the value means; the model reads it when it may set the field.",
    "llm_settable": "`true`: the model may set this field (skill fields only).",
    "enum_values": "The allowed values of a `categorical` field.",
    "initial_value": "The value before anything writes the field.",
    "pii": "`true`: the value is personal data.",
    "anonymization": "How `pii` values are anonymised: `{type: redact|mask, …}`.",
    "privacy_rules": "Privacy rules for this value.",
    "seed": "`true`: filled from session-start metadata (project fields only).",
}


def _memory_yml(c: _Ctx) -> list[CompletionItem]:
    y = yaml_context_at(c.text, c.offset, 0, len(c.text))
    project_file = c.pf.kind is FileKind.PROJECT_MEMORY
    path = y.path
    field_path = len(path) == 1 if project_file else (len(path) == 3 and path[0] == "schema")
    if y.at_key and not y.dashes:
        if field_path:
            drop = "llm_settable" if project_file else "seed"
            return _keys(
                c, y, [a for a in ATTRIBUTES if a != drop], _ATTR_DOCS, lists=("enum_values",)
            )
        if path[-1:] == ("anonymization",):
            return _keys(c, y, ("type", "redaction_char", "keep_left", "keep_right"))
        if not project_file and path == ():
            return _keys(c, y, ("schema",))
        if not project_file and path == ("schema",):
            return _keys(c, y, ("public", "private"))
        return []
    key = y.key
    if key is None:
        return []
    if key == "type" and field_path:
        o = _value_word(c, y)
        if o is None:
            return []
        for i, t in enumerate(CANONICAL_TYPES):
            o.add(t, "value", "memory type", _TYPE_DOCS[t], sort=f"{i:02d}")
        return o.best(c)
    if key == "type" and path[-1:] == ("anonymization",):
        o = _value_word(c, y)
        if o is None:
            return []
        o.add("redact", "value")
        o.add("mask", "value")
        return o.best(c)
    if key in ("llm_settable", "pii", "seed") and field_path:
        return _bools(c, y)
    return []


# ---------------------------------------------------------------------------------------
# responses.yml
# ---------------------------------------------------------------------------------------

_PLACEHOLDER_RE = re.compile(r"\{([\w.]*)\Z")


def _responses_yml(c: _Ctx) -> list[CompletionItem]:
    doc = c.pf.doc if isinstance(c.pf.doc, ResponsesDoc) else None
    sid = c.sid
    site = _site_at(doc.conditions, c.text, c.offset) if doc else None
    if site is not None:
        return _condition(c, sid, site[0], site[1])
    y = yaml_context_at(c.text, c.offset, 0, len(c.text))
    cond = _yaml_condition(c, y)
    if cond is not None:
        return cond
    m = _SET_PAYLOAD_RE.search(c.line_before)
    if m:
        return _set_payload(c, y, m)
    m = _PLACEHOLDER_RE.search(c.line_before)
    content_start = y.line.value_col if y.in_value else y.line.col
    if m and (m.start() != content_start or y.scalar_key is not None):
        # (a `{` that starts a YAML value is a flow mapping, not a placeholder)
        return _placeholders(c, y, m.group(1))
    path = y.path
    if y.at_key:
        if not path and not y.dashes:
            return _keys(c, y, ("responses",))
        if len(path) == 2 and path[0] == "responses" and y.dashes:
            return _keys(c, y, VARIANT_KEYS, lists=("buttons",))
        if len(path) == 3 and path[0] == "responses" and path[2] == "-":
            return _keys(c, y, VARIANT_KEYS, lists=("buttons",))
        if y.under("buttons", "-"):
            return _keys(c, y, ("title", "payload"))
        return []
    return []


_SET_PAYLOAD_RE = re.compile(r"\bset:[ \t]*session\.(\w*)(?:\.(\w*)(?:=([^'\"]*))?)?\Z")


def _response_users(c: _Ctx, y: YamlContext) -> list[str]:
    """Skills that deliver the response at the cursor (for the project-root file)."""
    if len(y.path) < 2 or y.path[0] != "responses":
        return []
    return sorted(Semantics(c.project).response_users(y.path[1]))


def _set_payload(c: _Ctx, y: YamlContext, m: re.Match[str]) -> list[CompletionItem]:
    """``payload: "set:session.<ns>.<entry>=<value>"``: the fields a button tap may write
    (the skill's own and project fields; in the root file, project fields and the fields of
    the one skill that delivers the response), then the values of that field."""
    p = c.project
    sid = c.sid
    writable = Semantics(p).button_writable_skills(sid, _response_users(c, y) if not sid else ())
    ns, entry, value = m.group(1), m.group(2), m.group(3)

    def fields_of(name: str) -> list[_Field]:
        if name == "project":
            return _project_fields(p)
        if name not in writable:
            return []
        return _readable(p, sid, name)  # the root file reads only public fields

    if entry is None:
        o = _Out(c.back(len(ns)))
        for i, name in enumerate([*writable, "project"]):
            fields = fields_of(name)
            if fields:
                detail = "project memory" if name == "project" else "skill"
                o.add(name, "namespace", detail, _ns_doc(p, name, fields), sort=str(i))
        return o.best(c)
    fields = fields_of(ns)
    if value is None:
        o = _Out(c.back(len(entry)))
        _add_entries(o, fields, suffix="=")
        return o.best(c)
    f = next((x for x in fields if x.name == entry), None)
    o = _Out(c.back(len(value)))
    if f is not None:
        for i, v in enumerate(f.enum):
            o.add(str(v), "value", f"{ns}.{entry}", f.documentation, sort=f"{i:04d}")
        if f.type == "bool":
            o.add("true", "value", "bool")
            o.add("false", "value", "bool")
    return o.best(c)


def _placeholders(c: _Ctx, y: YamlContext, inner: str) -> list[CompletionItem]:
    p = c.project
    sid = c.sid
    after = c.text[c.offset : c.offset + 200]
    close = "" if re.match(r"[\w.]*\}", after) else "}"
    if inner.startswith("session."):
        rest = inner[len("session.") :]
        if "." in rest:
            ns, _, partial = rest.partition(".")
            if "." in partial:
                return []
            o = _Out(c.back(len(partial)))
            _add_entries(o, _readable(p, sid, ns), suffix=close)
            return o.best(c)
        o = _Out(c.back(len(rest)))
        _add_namespaces(c, o, sid)
        return o.best(c)
    if "." in inner:
        return []
    o = _Out(c.back(len(inner)))
    i = 0
    for ns, *_ in _namespaces(p, sid):
        for f in _readable(p, sid, ns):
            label = f"session.{ns}.{f.name}"
            o.add(label, "field", f.detail, f.documentation, label + close, f"0{i:04d}")
            i += 1
    # bare entries: the skill's own fields, then project fields
    owners: list[str] = [sid] if sid else _response_users(c, y)
    bare: list[_Field] = []
    for owner in owners:
        sk = p.skill(owner)
        if sk is not None:
            bare.extend(_all_fields(p, sk))
    bare.extend(_project_fields(p))
    for f in bare:
        o.add(f.name, "field", f.detail, f.documentation, f.name + close, f"1{i:04d}")
        i += 1
    return o.best(c)


# ---------------------------------------------------------------------------------------
# agent.yml
# ---------------------------------------------------------------------------------------


def _agent_yml(c: _Ctx) -> list[CompletionItem]:
    doc = c.pf.doc if isinstance(c.pf.doc, AgentDoc) else None
    site = _site_at(doc.conditions, c.text, c.offset) if doc else None
    if site is not None:
        return _condition(c, None, site[0], site[1])
    y = yaml_context_at(c.text, c.offset, 0, len(c.text))
    cond = _yaml_condition(c, y)
    if cond is not None:
        return cond
    if y.at_key and len(y.path) == 3 and y.path[:2] == ("orchestrator", "preconditions"):
        return _keys(c, y, ("satisfied_when", "resolve_with", "unmet_utterance"))
    key = y.key
    if key is None:
        return []
    o = _value_word(c, y)
    if o is None:
        return []
    if key == "resolve_with":
        _add_skills(o, c.project)
    elif key in _RESPONSE_VALUE_KEYS or key == "unmet_utterance":
        _add_responses(o, c.project)
    return o.best(c)


# ---------------------------------------------------------------------------------------
# eval/scenarios/** (docs/features/eval.md): the tables and the cursor's place in
# half-written flow or block YAML come from .eval_files, imported when a scenario asks
# ---------------------------------------------------------------------------------------


def _eval_scenario(c: _Ctx) -> list[CompletionItem]:
    """What may be written at the cursor of a scenario."""
    from . import eval_files as ef  # only projects with scenarios get here

    w = ef.where(c.text, c.offset)
    if w is None:
        return []
    path = w.path
    if w.key is None:
        return _scenario_keys(c, w)
    o = _Out(c.back(len(w.word)))
    key = w.key
    if path[:3] == ("scenario", "setup", "initial_slots") and len(path) == 3:
        _scenario_values(c, o, key, slot=True)
    elif key == "skill_id":
        _scenario_skills(c, o, w)
    elif key == "block_id":
        _scenario_blocks(c, o)
    elif key == "step_id":
        _scenario_steps(c, o, path)
    elif _memory_name_at(key, path):
        _memory_names(c, o)
    elif key == "value" and path[-2:-1] and path[-2] in ("memory_was_set", "memory_was_not_set"):
        name = ef.sibling(c.text, c.offset, "name")
        if name:
            _scenario_values(c, o, name, slot=False)
    elif key == "tool_name" or (key == "tool_called" and "expected_tools" in path):
        _scenario_tools(c, o, path)
    elif key == "source" and path[-1:] == ("tool_executed",):
        o.add("local", "value", "a tool of the project's tool modules", sort="0")
        o.add("mcp", "value", "a tool of an MCP server", sort="1")
    elif key == "mcp_server":
        integ = c.project.integrations
        for name in sorted(integ.mcp_servers) if integ is not None else ():
            o.add(name, "mcp", "MCP server (integrations.yml)")
    elif key == "utter_name":
        _add_responses(o, c.project)
    elif key in ef.BOOL_KEYS:
        o.add("true", "value")
        o.add("false", "value")
    return o.best(c)


def _memory_name_at(key: str, path: tuple[str, ...]) -> bool:
    """The value of ``key`` is a memory key: an entry's `name`, or a `sequencing` step's
    `memory_was_set` / `memory_was_cleared`."""
    from . import eval_files as ef  # only projects with scenarios get here

    if key == "name":
        return len(path) >= 2 and path[-2] in ef.MEMORY_KEYS
    return key in ("memory_was_set", "memory_was_cleared") and path[-2:] == ("sequencing", "-")


def _scenario_keys(c: _Ctx, w: ef.Where) -> list[CompletionItem]:
    from . import eval_files as ef  # only projects with scenarios get here

    path = w.path
    o = _Out(c.back(len(w.word)))
    k = _ScenarioKeys(o, w)
    if path == ():
        k.add(("scenario",), ef.SCENARIO_KEY_DOCS, nested=("scenario",))
    elif path == ("scenario",):
        k.add(("name", "simulation_context", "setup", "goals"), ef.SCENARIO_KEY_DOCS,
              nested=("setup", "goals"))  # fmt: skip
    elif path == ("scenario", "setup"):
        k.add(("initial_slots",), ef.SCENARIO_KEY_DOCS, nested=("initial_slots",))
    elif path == ("scenario", "goals"):
        k.add(("assertions", "criteria", "expected_tools"), ef.SCENARIO_KEY_DOCS,
              lists=("assertions", "criteria", "expected_tools"))  # fmt: skip
    elif path == ("scenario", "setup", "initial_slots"):
        _slot_keys(c, o, w.present)
    elif path == ("scenario", "goals", "assertions", "-"):
        keys = [*ef.POSITIVE_KEYS[:-1], "memory_was_not_set", "bot_did_not_utter", "sequencing"]
        _assertion_keys(o, w, keys)
    elif path[-2:] == ("sequencing", "-"):
        _assertion_keys(o, w, list(ef.SEQUENCING_KEYS), sequencing=True)
    elif path[-2:] == ("calls", "-"):
        _assertion_keys(o, w, ["tool_executed"])
    elif path[-1:] == ("arguments",) and path[-2:-1] == ("tool_executed",):
        _scenario_arguments(c, o, w.present)
    elif len(path) >= 2 and path[-1] == "-" and path[-2] in ef.MEMORY_KEYS:
        names = ("name",) if path[-2] == "memory_was_cleared" else ("name", "value")
        k.add(names, ef.FIELD_DOCS, again=("name",))
    elif path[-1:] and path[-1] in ef.BODY_KEYS:
        k.add(ef.BODY_KEYS[path[-1]], ef.FIELD_DOCS, lists=("calls", "buttons"),
              nested=("arguments",), again=tuple(ef.FIELD_DOCS))  # fmt: skip
    elif path[-2:] == ("expected_tools", "-"):
        k.add(("tool_called", "gate", "tool_group"), ef.FIELD_DOCS, lists=("tool_group",),
              again=("tool_called", "gate"))  # fmt: skip
    return o.best(c)


class _ScenarioKeys:
    """Keys not yet present, inserted as ``key: `` (or opening a nested block under the
    key, indented from its column, when nothing follows on the line)."""

    def __init__(self, o: _Out, w: ef.Where) -> None:
        self.o = o
        self.w = w
        self.plain = bool(w.rest.strip()) or w.flow

    def add(
        self,
        keys: tuple[str, ...],
        docs: dict[str, str],
        nested: tuple[str, ...] = (),
        lists: tuple[str, ...] = (),
        again: tuple[str, ...] = (),
    ) -> None:
        from . import eval_files as ef  # only projects with scenarios get here

        pad = " " * (self.w.col + 2)
        for i, k in enumerate(keys):
            if k in self.w.present and k != self.w.word:
                continue
            if self.plain or (k not in nested and k not in lists):
                new = f"{k}: "
            elif k in nested:
                new = f"{k}:\n{pad}"
            else:
                new = f"{k}:\n{pad}- "
            retrigger = new.endswith(": ") and (k in again or k in ef.BOOL_KEYS)
            self.o.add(k, "property", "", docs.get(k, ""), new, f"{i:03d}", retrigger=retrigger)


def _assertion_keys(o: _Out, w: ef.Where, keys: list[str], sequencing: bool = False) -> None:
    """Assertion keys, each with the fields it needs as a snippet (flow style; the
    suggestions for the first name open)."""
    from . import eval_files as ef  # only projects with scenarios get here

    plain = bool(w.rest.strip()) or w.flow
    for i, k in enumerate(keys):
        doc = ef.ASSERTION_DOCS[k]
        if plain:
            o.add(k, "keyword", "assertion", doc, f"{k}: ", f"{i:03d}")
            continue
        if sequencing and k in ef.MEMORY_KEYS:
            body = " $1"
        elif k in ef.SKILL_KEYS:
            body = " {skill_id: $1}"
        elif k in ef.BLOCK_KEYS:
            body = " {skill_id: $1, block_id: $2}"
        elif k == "tool_executed":
            body = " {tool_name: $1, source: local}"
        elif k in ("bot_uttered", "bot_did_not_utter"):
            body = " {utter_name: $1}"
        elif k == "memory_was_cleared":
            body = "\n  - name: $1"
        elif k in ef.MEMORY_KEYS:
            body = "\n  - name: $1\n    value: $2"
        elif k == "tools_within_one_turn":
            body = (
                "\n  calls:\n    - tool_executed: {tool_name: $1, source: local}"
                "\n    - tool_executed: {tool_name: $2, source: local}"
                "\n  allow_extra_calls: ${3|false,true|}"
            )
        else:  # sequencing
            body = "\n  - $0"
        body = body.replace("\n", "\n" + " " * w.col)  # lines under the key's column
        o.add(k, "keyword", "assertion", doc, f"{k}:{body}", f"{i:03d}", snippet=True,
              retrigger=k != "sequencing")  # fmt: skip


def _scenario_skills(c: _Ctx, o: _Out, w: ef.Where) -> None:
    from . import eval_files as ef  # only projects with scenarios get here

    tool = ef.sibling(c.text, c.offset, "tool_name") if w.path[-1:] == ("tool_executed",) else None
    if tool is None:
        _add_skills(o, c.project)
        return
    # a tool's run: the skills that see the tool first
    sem = Semantics(c.project)
    source = ef.sibling(c.text, c.offset, "source") or "local"
    server = ef.sibling(c.text, c.offset, "mcp_server")
    for i, sid in enumerate(c.project.catalog_ids()):
        sees = sem.eval_tool_seen_by(sid, tool, source, server)
        detail = f"sees {tool}" if sees else "skill"
        o.add(sid, "skill", detail, sort=f"{0 if sees else 1}{i:04d}")


def _scenario_blocks(c: _Ctx, o: _Out) -> None:
    from . import eval_files as ef  # only projects with scenarios get here

    sid = ef.sibling(c.text, c.offset, "skill_id")
    if sid is None:
        return
    for i, b in enumerate(Semantics(c.project).eval_block_ids(sid) or ()):
        o.add(b, "block", f"ordered block of {sid}", sort=f"{i:04d}")


def _scenario_steps(c: _Ctx, o: _Out, path: tuple[str, ...]) -> None:
    from . import eval_files as ef  # only projects with scenarios get here

    sid = ef.sibling(c.text, c.offset, "skill_id")
    if sid is None:
        return
    in_block = bool(path) and path[-1] in ef.BLOCK_KEYS
    block = ef.sibling(c.text, c.offset, "block_id") if in_block else None
    steps = Semantics(c.project).eval_step_ids(sid, block)
    if steps is None:
        return
    sk = c.project.skill(sid)
    doc = sk.doc if sk is not None else None
    i = 0
    for b in doc.blocks if doc is not None else ():
        if block is not None and b.id != block:
            continue
        for st in b.steps:
            if st.id and st.id in steps and st.id != "END":
                o.add(st.id, "step", f"step of {sid}:{b.id} ({st.kind or '?'})", sort=f"0{i:04d}")
                i += 1
    o.add("END", "keyword", "the end of the block", ef.STEP_WORDS["END"], sort="1")
    if AUTONOMOUS_STEP in steps:
        o.add(AUTONOMOUS_STEP, "keyword", "the skill's prose", ef.STEP_WORDS[AUTONOMOUS_STEP],
              sort="2")  # fmt: skip


def _tracker_fields(project: Project) -> list[_Field]:
    """Every field by its tracker key: the project's, each skill's (public and private),
    then the bundled skills' public ones."""
    out = list(_project_fields(project))
    bundled: list[_Field] = []
    for sid in project.catalog_ids():
        sk = project.skill(sid)
        if sk is not None:
            out.extend(_all_fields(project, sk))
        elif sid in DEFAULT_SKILLS:
            bundled.extend(
                _Field(sid, d.name, d.type, "bundled", d.description, (), "bundled with the engine")
                for d in DEFAULT_SKILLS[sid].public_fields
            )
    return out + bundled


def _memory_names(c: _Ctx, o: _Out) -> None:
    for i, f in enumerate(_tracker_fields(c.project)):
        label = f"{f.ns}.{f.name}"
        o.add(label, "field", f.detail, f.documentation, sort=f"0{i:05d}")
    for e in SYSTEM_MEMORY_ENTRIES:
        o.add(f"system.{e}", "field", "engine entry", sort=f"1{e}")


def _slot_keys(c: _Ctx, o: _Out, present: frozenset[str]) -> None:
    """`setup.initial_slots` keys: a seed project field bare, every field by its key."""
    i = 0
    for f in _project_fields(c.project):
        mf = c.project.project_field(f.name)
        if mf is not None and mf.seed and f.name not in present:
            o.add(f.name, "field", f"{f.detail} · seed", f.documentation, f"{f.name}: ",
                  f"0{i:05d}", retrigger=True)  # fmt: skip
            i += 1
    for f in _tracker_fields(c.project):
        label = f"{f.ns}.{f.name}"
        if label in present:
            continue
        o.add(label, "field", f.detail, f.documentation, f"{label}: ", f"1{i:05d}",
              retrigger=True)  # fmt: skip
        i += 1


def _scenario_field_type(project: Project, name: str, slot: bool) -> FieldType | None:
    if slot and "." not in name:
        mf = project.project_field(name)
        if mf is None:
            return None
        facts = mf.facts
        return FieldType(facts.type, facts.enum_values, facts.enum_booleans)
    return Semantics(project).tracker_key(name).field


def _scenario_values(c: _Ctx, o: _Out, name: str, slot: bool) -> None:
    ft = _scenario_field_type(c.project, name, slot)
    if ft is None:
        return
    if ft.type == "bool":
        o.add("true", "value", "bool", sort="0")
        o.add("false", "value", "bool", sort="1")
    for i, v in enumerate(ft.enum_values):
        o.add(v, "value", name, text=_yaml12_text(v), sort=f"{i:04d}")


def _yaml12_text(s: str) -> str:
    """``s`` written so that YAML 1.2 reads it back as that text."""
    if s and isinstance(plain12(s), str) and re.fullmatch(r"[\w][\w .-]*", s) and s == s.strip():
        return s
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class _ToolItem:
    name: str
    detail: str
    doc: str


@functools.lru_cache(maxsize=8)
def _framework_tools() -> tuple[_ToolItem, ...]:
    return tuple(_ToolItem(n, "framework tool", d) for n, d in FRAMEWORK_TOOLS.items())


def _scenario_tools(c: _Ctx, o: _Out, path: tuple[str, ...]) -> None:
    from . import eval_files as ef  # only projects with scenarios get here

    p = c.project
    sem = Semantics(p)
    source = ef.sibling(c.text, c.offset, "source") if path[-1:] == ("tool_executed",) else None
    if source == "mcp":
        server = ef.sibling(c.text, c.offset, "mcp_server")
        for i, (name, imports) in enumerate(sorted(sem.eval_tools().mcp.items())):
            servers = sorted({s for s, _ in imports})
            if server is None or server in servers:
                o.add(name, "tool", f"MCP tool ({', '.join(servers)})", sort=f"{i:04d}")
        return
    sid = ef.sibling(c.text, c.offset, "skill_id")
    seen: set[str] = set()
    items: list[tuple[str, _ToolItem]] = []
    for sk in p.skills.values():
        for pf, mod in sk.tool_modules():
            for td in sem.tools_in(pf, mod):
                if td.name.startswith("run_after_setting_") or td.kind == "possible":
                    continue
                rank = "0" if sk.id == sid else "1"
                items.append((rank, _ToolItem(td.name, f"tool of {sk.id}", td.description or "")))
    for pf, mod in p.shared_tool_files():
        for td in sem.tools_in(pf, mod):
            if td.kind != "possible":
                items.append(("1", _ToolItem(td.name, "shared tool", td.description or "")))
    grouped = "calls" in path
    for fw in _framework_tools():
        if not grouped or fw.name in ef.COUNTED_FRAMEWORK_TOOLS:
            items.append(("2", fw))
    if source is None and "expected_tools" not in path and not grouped:
        for name, imports in sorted(sem.eval_tools().mcp.items()):
            shown = ", ".join(sorted({s for s, _ in imports}))
            items.append(("3", _ToolItem(name, f"MCP tool ({shown})", "")))
    for rank, it in sorted(items, key=lambda x: (x[0], x[1].name)):
        if it.name not in seen:
            seen.add(it.name)
            o.add(it.name, "tool", it.detail, it.doc, sort=f"{rank}{it.name}")


def _scenario_arguments(c: _Ctx, o: _Out, present: frozenset[str]) -> None:
    from . import eval_files as ef  # only projects with scenarios get here

    tool = ef.sibling(c.text, c.offset, "tool_name")
    if tool is None:
        return
    sid = ef.sibling(c.text, c.offset, "skill_id")
    sem = Semantics(c.project)
    params = sem.eval_tool_params(tool, sid if sid and c.project.skill(sid) else None)
    for i, name in enumerate(params or ()):
        if name in present:
            continue
        o.add(name, "property", f"parameter of {tool}", text=f"{name}: ", sort=f"{i:03d}")


# ---------------------------------------------------------------------------------------
# tools (Python)
# ---------------------------------------------------------------------------------------

_MEMORY_CALL_RE = re.compile(
    r"\.\s*memory\s*\.\s*(get|set)\s*\(\s*(?:key\s*=\s*)?[rRuU]?(['\"])([\w.]*)\Z"
)


def _tools_py(c: _Ctx) -> list[CompletionItem]:
    m = _MEMORY_CALL_RE.search(c.line_before)
    if m is None:
        return []
    method, partial = m.group(1), m.group(3)
    p = c.project
    sid = c.sid
    o = _Out(c.back(len(partial)))
    i = 0

    def add(label: str, f: _Field) -> None:
        nonlocal i
        o.add(label, "field", f.detail, f.documentation, sort=f"{i:04d}")
        i += 1

    sk = c.skill
    if sk is not None:
        for f in _all_fields(p, sk):
            add(f.name, f)
    for f in _project_fields(p):
        add(f"project.{f.name}", f)
    for other in p.catalog_ids():
        if other == sid:
            continue
        if method == "get":
            fields = _readable(p, sid, other)
        elif sid is None and p.skill(other) is not None:
            sko = p.skill(other)
            fields = _all_fields(p, sko) if sko else []
        else:
            fields = []
        for f in fields:
            add(f"{other}.{f.name}", f)
    return o.best(c)


# ---------------------------------------------------------------------------------------
# Signature help: the parameters of an execute_tool step's tool
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignatureHelp:
    """A tool's signature while its ``parameters`` are written: ``label`` reads
    ``name(a: str, b: int = 3)``; ``params`` are the ranges of each parameter in the label
    (start, end) with its documentation; ``active`` is the one the cursor's line names."""

    label: str
    doc: str
    params: tuple[tuple[int, int, str], ...]
    active: int | None


def signature_help(project: Project, path: Path, offset: int) -> SignatureHelp | None:
    """The signature of the tool an ``execute_tool`` step runs, when the cursor is in that
    step's ``parameters`` (or on the key): None elsewhere, and for tools whose ``def`` is
    not known (MCP, framework, factory-made or imported tools)."""
    pf = project.files.get(path)
    if pf is None or not pf.source.analyzable or pf.kind is not FileKind.SKILL_MD:
        return None
    offset = min(max(offset, 0), len(pf.text))
    c = _Ctx.make(project, pf, offset)
    region = _region_at(_outline(c.text), offset)
    if region is None or region.kind != "block":
        return None
    y = yaml_context_at(c.text, offset, region.start, region.end)
    path_ = y.path
    inside = len(path_) >= 3 and path_[:3] == ("steps", "-", "parameters")
    on_key = path_ == ("steps", "-") and y.line.key == "parameters"
    if not (inside or on_key):
        return None
    tool = _step_tool(c, region)
    if tool is None:
        return None
    label = tool_signature_label(tool)
    params = []
    at = len(tool.name) + 1
    active = None
    here = y.line.key if inside and len(path_) == 3 else None
    partial = y.line.value if inside and here is None and y.at_key else ""
    for i, prm in enumerate(tool.signature):
        text = _param_text(prm)
        doc = _param_detail(prm)
        params.append((at, at + len(text), doc))
        at += len(text) + 2
        if prm.name == here or (active is None and partial and prm.name.startswith(partial)):
            active = i
    doc = tool.description.strip() if tool.description else ""
    return SignatureHelp(label, doc, tuple(params), active)
