"""Data-flow checks over the whole project: fields that are read but that nothing can ever
write, and project fields that more than one skill writes (on rasa-pro 3.21 a project field
keeps its first value: a later write to it is refused while it holds a value).

Both must never be wrong, so every writer the project shows counts (the index's write
references, whatever their key form; ``llm_settable``; ``seed``; ``initial_value``;
``run_after_setting_<entry>`` tools) and code that uses memory with keys that cannot be
known silences every field it could reach, like ``lsp.memory.unused_field`` does.

"Written, never read" is deliberately not a check: the engine lists every set field the
active skill can see in the system prompt's memory section, so the model reads every field
its skill writes (docs/decisions.md).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, NamedTuple

from ...model.defaults import DEFAULT_SKILLS
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.semantics import READ_FORMS, WRITE_FORMS
from ...model.symbols import Reference
from ...syntax.conditions import BoolOpExpr, CompareExpr, Expr, LiteralExpr, NotExpr, RefExpr
from ...syntax.memory_yml import MemoryField
from ...syntax.responses_yml import ResponsesDoc
from ...syntax.sites import SITE_LABELS, ConditionSite
from .base import Checker, rule

V322 = "3.22"
MAX_RELATED = 10  # read sites listed as related information
_ALL_CODE = (K.SKILL_TOOLS, K.SHARED_TOOLS, K.HELPER)
_EVERYTHING = (K.SKILL_MD, K.SKILL_MEMORY, K.SKILL_RESPONSES, K.PROJECT_MEMORY,
               K.PROJECT_RESPONSES, K.AGENT, *_ALL_CODE)  # fmt: skip
_READ_WORDS = {
    "condition": "condition",
    "memory_token": "`@memory` token",
    "placeholder": "placeholder",
    "bare_placeholder": "placeholder",
    "tool_get": "tool read",
    "execute_param": "execute parameter",
}
_WRITE_WORDS = {
    "collect": "`collect:` step",
    "set_memory": "`set_memory` step",
    "tool_set": "tool write",
    "set_payload": "`set:` button",
}


@rule(
    codes=("lsp.memory.never_written",),
    scope="skill",
    reports_on=(K.SKILL_MEMORY,),
    reads=_EVERYTHING,
)
def skill_never_written(ck: Checker, sid: str, sk: Skill) -> None:
    """A warning on a skill's fields that are read but that nothing can write."""
    never_written(ck, sk)


@rule(
    codes=("lsp.memory.never_written",),
    scope="project",
    reports_on=(K.PROJECT_MEMORY,),
    reads=_EVERYTHING,
)
def project_never_written(ck: Checker) -> None:
    """A warning on project fields that are read but that nothing can write."""
    never_written(ck, None)


def where(ck: Checker, r: Reference) -> str:
    """``path:line`` of a reference, relative to the project root (1-based line)."""
    pf = ck.p.files.get(r.path)
    line = pf.source.index.line_of(r.range.start) + 1 if pf is not None else 0
    try:
        rel = r.path.relative_to(ck.p.root).as_posix()
    except ValueError:
        rel = r.path.as_posix()
    return f"{rel}:{line}"


def reachable_by_unknown_keys(ck: Checker, sk: Skill | None, scope: str) -> bool:
    """Code that uses memory with keys that cannot be known, or buttons made at run time,
    may reach a field of ``sk`` (None: the project) declared with ``scope``."""
    facts = ck.sem.code_memory_facts()
    if facts.anything:
        return True
    sources, root_source = ck.sem.button_source_skills()
    if root_source or (sources and sk is None) or (sk is not None and sk.id in sources):
        return True
    if sk is not None:
        if sk.id in facts.dynamic_skills:
            return True
        return scope == "public" and bool(facts.dynamic_skills - {sk.id})
    return bool(facts.dynamic_skills)


def _writer_hooks(ck: Checker, sk: Skill | None) -> set[str]:
    """The tool names that may be ``run_after_setting_<entry>`` hooks of ``sk``'s fields
    (any tool of the project for project fields)."""
    if sk is not None:
        return {t.name for _, mod in sk.tool_modules() for t in mod.tools}
    return set(ck.sem.code_memory_facts().tool_names)


def never_written_reads(
    ck: Checker, sk: Skill | None, name: str, scope: str, written: bool
) -> list[Reference] | None:
    """The places that read field ``name`` of ``sk`` (None: the project), sorted, when
    nothing in the project can ever write it; else None (a writer, a form this check does
    not know, code that may reach it, or no reader at all). ``written``: its declaration
    or a hook gives it a value (llm_settable, seed, initial_value,
    run_after_setting_<name>)."""
    ns = sk.id if sk is not None else "project"
    if (sk is not None and sk.id in DEFAULT_SKILLS) or written:
        return None
    facts = ck.sem.code_memory_facts()
    if name in facts.shared_entries or f"{ns}.{name}" in facts.shared_entries:
        return None  # a bare key in shared code may be this field: it may write it
    if reachable_by_unknown_keys(ck, sk, scope):
        return None
    refs = [r for r in ck.p.index.references_to(("field", ns, name)) if not r.soft]
    if any(r.form not in READ_FORMS for r in refs):
        return None  # a writer, or a form this check does not know: stay silent
    reads = sorted(refs, key=lambda r: (str(r.path), r.range.start))
    return reads or None  # nothing reads it: lsp.memory.unused_field says so


def _given(ck: Checker, ns: str, f: MemoryField, hooks: set[str]) -> bool:
    """Field ``f`` of ``ns`` has a value without a writer: its declaration or a hook."""
    if f.given:
        return True
    return f"run_after_setting_{f.name}" in hooks or bool(ck.sem.field_writers(ns, f.name))


def is_never_written(ck: Checker, ns: str, entry: str) -> bool:
    """Whether ``lsp.memory.never_written`` holds for the field ``ns.entry``: declared,
    read, and nothing in the project can write it (so every read sees None). Memoised
    per check run. Another skill's files are not parsed for it (a spread check's worker
    knows their fields as facts, ``Project.field_decls``)."""
    memo: dict[tuple[str, str], bool] = ck.cache.setdefault("never_written", {})
    if (ns, entry) in memo:
        return memo[(ns, entry)]
    found = False
    refs = [r for r in ck.p.index.references_to(("field", ns, entry)) if not r.soft]
    if not refs or any(r.form not in READ_FORMS for r in refs):
        pass  # written (or a form this check does not know)
    elif ns == "project":
        md = ck.p.project_memory
        decls = md.declarations(entry) if md is not None else []
        if len(decls) == 1:
            hooks = set(ck.sem.code_memory_facts().tool_names)
            written = _given(ck, ns, decls[0], hooks)
            found = never_written_reads(ck, None, entry, "project", written) is not None
    elif (sk := ck.p.skill(ns)) is not None:
        decl = ck.p.field_decls(ns, entry)[1]
        if decl is not None:
            written = decl.given or ("tool", ns, f"run_after_setting_{entry}") in ck.p.index.symbols
            found = never_written_reads(ck, sk, entry, decl.scope, written) is not None
    memo[(ns, entry)] = found
    return found


def written_for_certain(ck: Checker, ns: str, entry: str) -> bool:
    """Whether the files loaded so far show that :func:`is_never_written` does not hold
    for ``ns.entry``, with evidence that more files can only confirm: a writer (or a form
    this check does not know), no single declaration, a declaration or hook that gives it
    a value. A project loaded around one skill (``Project.load_around``) answers this
    without the facts of every code file (which would parse them all). A test holds it to
    :func:`is_never_written` on whole projects."""
    refs = [r for r in ck.p.index.references_to(("field", ns, entry)) if not r.soft]
    if not refs or any(r.form not in READ_FORMS for r in refs):
        return True
    if ns == "project":
        md = ck.p.project_memory
        decls = md.declarations(entry) if md is not None else []
        if len(decls) != 1:
            return True
        # the tools loaded so far: some of those code_memory_facts() names
        hooks = {key[2] for key in ck.p.index.symbols if key[0] == "tool"}
        return _given(ck, ns, decls[0], hooks)
    if ck.p.skill(ns) is None or ns in DEFAULT_SKILLS:
        return True
    decl = ck.p.field_decls(ns, entry)[1]
    if decl is None:
        return True
    return decl.given or ("tool", ns, f"run_after_setting_{entry}") in ck.p.index.symbols


def unproven_on_skill_md(ck: Checker, path: Path, sid: str) -> set[tuple[str, str]] | None:
    """What keeps this module's rules that read every file from being certainly silent on
    the skill.md at ``path`` (of skill ``sid``), as far as a project loaded around that
    skill shows: None when it writes a project field but by ``collect`` (another skill may
    write it too: :func:`project_written_twice`); else the fields its evaluated
    conditions read, readable there, that are not :func:`written_for_certain`
    (:func:`skill_constant_conditions`; empty: silent)."""
    for r in ck.p.index.references:
        if (
            r.path == path
            and not r.soft
            and r.key[0] == "field"
            and r.key[1] == "project"
            and r.form in WRITE_FORMS
            and r.form != "collect"
        ):
            return None
    sk = ck.p.skill(sid)
    out: set[tuple[str, str]] = set()
    if sk is None or sk.doc is None:
        return out
    for site in sk.doc.conditions:
        if site.parsed.tree is None or site.kind not in _EVALUATED_SITES:
            continue
        for ref in site.parsed.refs:
            key = (ref.namespace, ref.entry)
            if key in out or ck.sem.unreadable(sid, *key) is not None:
                continue  # its own error; the rule leaves it out
            if not written_for_certain(ck, *key):
                out.add(key)
    return out


# the rules :func:`unproven_on_skill_md` answers for
SKILL_MD_WHOLE_PROJECT_RULES = frozenset(
    {"dataflow.project_written_twice", "dataflow.skill_constant_conditions"}
)


def never_written(ck: Checker, sk: Skill | None) -> None:
    """Fields read somewhere that no writer of the project can ever give a value: each
    condition on them sees None, each token and placeholder renders nothing."""
    md = sk.memdoc if sk is not None else ck.p.project_memory
    pf = sk.memory if sk is not None else ck.p.file_of_kind(K.PROJECT_MEMORY)
    if md is None or pf is None or (sk is not None and sk.id in DEFAULT_SKILLS):
        return
    ns = sk.id if sk is not None else "project"
    hooks = _writer_hooks(ck, sk)
    for f in md.fields:
        reads = never_written_reads(ck, sk, f.name, f.scope, _given(ck, ns, f, hooks))
        if reads is None:
            continue
        conds = [r for r in reads if r.form == "condition"]
        shown = ", ".join(f"{_READ_WORDS.get(r.form, r.form)} at {where(ck, r)}" for r in reads[:4])
        more = f" and {len(reads) - 4} more" if len(reads) > 4 else ""
        constant = (
            " so every condition on it is decided by None (`== None` is always true, "
            "comparisons with values always false)"
            if conds
            else ""
        )
        ck.emit(
            pf.path,
            f.key.range,
            "lsp.memory.never_written",
            f"`{ns}.{f.name}` is read ({shown}{more}) but nothing in this project can write "
            f"it (not llm_settable, no seed or initial_value, no collect, set_memory, set: "
            f"button, tool write or run_after_setting_{f.name} hook): it is always None,"
            f"{constant}".rstrip(","),
            related=[
                ck.related(r.path, r.range, f"read here ({_READ_WORDS.get(r.form, r.form)})")
                for r in reads[:MAX_RELATED]
            ],
        )


# -- project fields written by more than one skill --------------------------------------


@rule(
    codes=("lsp.memory.project_field_written_twice",),
    scope="project",
    reports_on=(K.SKILL_MD, K.SKILL_RESPONSES, K.PROJECT_RESPONSES, K.SKILL_TOOLS, K.SHARED_TOOLS),
    reads=_EVERYTHING,
)
def project_written_twice(ck: Checker) -> None:
    """A project field that writers in more than one place may write in one session: the
    first write that gives it a value wins, the engine refuses the later ones."""
    md = ck.p.project_memory
    if md is None:
        return
    reportable = {K.SKILL_MD, K.SKILL_RESPONSES, K.PROJECT_RESPONSES, K.SKILL_TOOLS, K.SHARED_TOOLS}
    for f in md.fields:
        if ck.p.engine == V322 and f.value("mutable") is True:
            continue  # 3.22: a mutable project field may be overwritten
        writes = [
            r
            for r in ck.p.index.references_to(("field", "project", f.name))
            if not r.soft and r.form in WRITE_FORMS
        ]
        if not writes:
            continue
        writes.sort(key=lambda r: (str(r.path), r.range.start))
        first = writes[0]
        owner = _owner(ck, first)
        for r in writes:
            pf = ck.p.files.get(r.path)
            if pf is None or pf.kind not in reportable:
                continue
            if r.form == "collect":
                continue  # a collect of a field that has a value asks nothing
            if owner is None or _owner(ck, r) is None or _owner(ck, r) == owner:
                continue  # one skill's own writers (e.g. branches), or shared code
            else:
                why = (
                    f"`project.{f.name}` is also written by skill `{owner}` "
                    f"({_WRITE_WORDS.get(first.form, 'write')} at {where(ck, first)}); a project "
                    f"field keeps its first value in a session, so once that write has given it "
                    f"a value this {_WRITE_WORDS.get(r.form, 'write')} is refused"
                )
            ck.emit(
                r.path,
                r.range,
                "lsp.memory.project_field_written_twice",
                why,
                "hint",
                related=[
                    ck.related(
                        first.path,
                        first.range,
                        f"first written here by skill `{owner}` "
                        f"({_WRITE_WORDS.get(first.form, 'write')})",
                    )
                ],
            )


def _owner(ck: Checker, r: Reference) -> str | None:
    """The skill a write runs in: its file's skill (None: shared code or the project-root
    responses file, which any skill may run)."""
    pf = ck.p.files.get(r.path)
    return pf.skill_id if pf is not None else None


# -- conditions decided by a never-written field ---------------------------------------

# Sites whose condition the engine evaluates (a block's `complete_when` is never used).
_EVALUATED_SITES = frozenset(
    {
        "prose_if",
        "response_condition",
        "utter_when",
        "skill_complete_when",
        "step_complete_when",
        "next_if",
        "tool_requires",
        "block_tool_requires",
        "satisfied_when",
    }
)
_UNKNOWN: object = object()  # a value that depends on memory this check cannot know
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Value(NamedTuple):
    """What an expression evaluates to: a known value, or ``_UNKNOWN``; ``raises``: its
    evaluation may fail (an ordering between incompatible values), which each site
    handles its own way, so such an outcome is never called decided; ``fails``: it
    certainly does (nothing in it is evaluated after the failure)."""

    value: object
    raises: bool = False
    fails: bool = False

    @property
    def decided(self) -> bool:
        return self.value is not _UNKNOWN and not self.raises


_UNDECIDED = Value(_UNKNOWN)


def evaluate(e: Expr, none_keys: AbstractSet[str]) -> Value:
    """A three-valued evaluation of a condition with the engine's semantics
    (docs/language/conditions.md#evaluation): the slots in ``none_keys`` are None, every
    other slot is unknown. ``and``/``or``/``not`` give booleans and short-circuit left to
    right; a comparison chain is the ``and`` of its links; ``==``/``!=`` never fail, an
    ordering may."""
    if isinstance(e, RefExpr):
        return Value(None) if e.ref.key in none_keys else _UNDECIDED
    if isinstance(e, LiteralExpr):
        return Value(e.value)
    if isinstance(e, NotExpr):
        v = evaluate(e.operand, none_keys)
        return Value(not v.value) if v.decided else Value(_UNKNOWN, v.raises, v.fails)
    if isinstance(e, BoolOpExpr):
        stop = e.op == "or"  # the truth value that ends the evaluation
        return _links((evaluate(x, none_keys) for x in e.operands), stop)
    return _links(_compare_links(e, none_keys), False)


def _links(values: Iterable[Value], stop: bool) -> Value:
    """``and`` (``stop`` False) or ``or`` (``stop`` True) of values evaluated in turn: the
    first decided ``stop`` value decides, unless an operand before it may fail; one that
    certainly fails, when every operand before it is decided, fails it all."""
    unknown = raises = False
    for v in values:
        if v.decided and bool(v.value) == stop:
            return Value(stop) if not raises else Value(_UNKNOWN, True)
        if v.fails and not unknown:
            return Value(_UNKNOWN, True, True)
        unknown |= not v.decided
        raises |= v.raises
    return Value(not stop) if not unknown else Value(_UNKNOWN, raises)


def _compare_links(e: CompareExpr, none_keys: AbstractSet[str]) -> Iterator[Value]:
    """Each link of a comparison chain, as its boolean value."""
    left = evaluate(e.left, none_keys)
    for op, comp in zip(e.ops, e.comparators, strict=True):
        right = evaluate(comp, none_keys)
        may_fail = left.raises or right.raises
        if left.fails or right.fails:
            yield Value(_UNKNOWN, True, True)
        elif left.decided and right.decided:
            try:
                yield Value(bool(_COMPARE[op](left.value, right.value)))
            except TypeError:  # it fails: the site decides what that means
                yield Value(_UNKNOWN, True, True)
        else:
            yield Value(_UNKNOWN, may_fail or op not in ("==", "!="))
        left = right


def _children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, NotExpr):
        return (e.operand,)
    if isinstance(e, BoolOpExpr):
        return e.operands
    if isinstance(e, CompareExpr):
        return (e.left, *e.comparators)
    return ()


def _keys_in(e: Expr) -> set[str]:
    if isinstance(e, RefExpr):
        return {e.ref.key}
    return {k for c in _children(e) for k in _keys_in(c)}


def constant_parts(tree: Expr, none_keys: AbstractSet[str]) -> list[tuple[Expr, bool, set[str]]]:
    """The largest parts of a condition (the whole condition first of all) whose truth
    value the None of ``none_keys`` decides, each with that value and the keys that decide
    it. A part decided without them (literals only) is not one; a reference compared with
    something is judged with its comparison."""
    out: list[tuple[Expr, bool, set[str]]] = []

    def visit(e: Expr, compared: bool) -> None:
        keys = _keys_in(e) & none_keys
        if not keys or isinstance(e, LiteralExpr):
            return
        v = evaluate(e, none_keys)
        if v.fails:
            return  # evaluating it fails: the parts after the failure are never evaluated
        if v.decided and not compared and not evaluate(e, frozenset()).decided:
            out.append((e, bool(v.value), keys))
            return
        for c in _children(e):
            visit(c, isinstance(e, CompareExpr))
            if evaluate(c, none_keys).fails:
                break  # what follows it is never evaluated

    visit(tree, False)
    return out


def constant_conditions(
    ck: Checker, path: Path, sites: Iterable[ConditionSite], sid: str | None
) -> None:
    """``sid``: the skill whose files hold the sites (None: project-level files, read
    with what every skill may read)."""
    for site in sites:
        tree = site.parsed.tree
        if tree is None or site.kind not in _EVALUATED_SITES:
            continue
        none_keys = {
            r.key
            for r in site.parsed.refs
            if is_never_written(ck, r.namespace, r.entry)
            and ck.sem.unreadable(sid, r.namespace, r.entry) is None  # else: its own error
        }
        if not none_keys:
            continue
        for part, value, keys in constant_parts(tree, none_keys):
            names = " and ".join(f"`{k}`" for k in sorted(keys))
            verb = "is" if len(keys) == 1 else "are"
            why = f"{names} {verb} never written, so {'it is' if len(keys) == 1 else 'they are'}"
            if part is tree:
                what = f"this {SITE_LABELS.get(site.kind, 'condition')} is"
            else:
                text = site.text[part.range.start : part.range.end]
                what = f"`{text if len(text) <= 60 else text[:57] + '…'}` is"
            ck.emit(
                path,
                site.file_range(part.range.start, part.range.end),
                "lsp.condition.constant_never_written",
                f"{what} always {'true' if value else 'false'}: {why} always None",
            )


@rule(
    codes=("lsp.condition.constant_never_written",),
    scope="skill",
    reports_on=(K.SKILL_MD, K.SKILL_RESPONSES),
    reads=_EVERYTHING,
)
def skill_constant_conditions(ck: Checker, sid: str, sk: Skill) -> None:
    """A hint on each condition of a skill (or the part of it) that a never-written field
    decides: always true or always false, and why."""
    if sk.doc is not None and sk.skill_md is not None:
        constant_conditions(ck, sk.skill_md.path, sk.doc.conditions, sid)
    if sk.responses is not None and isinstance(sk.responses.doc, ResponsesDoc):
        constant_conditions(ck, sk.responses.path, sk.responses.doc.conditions, sid)


@rule(
    codes=("lsp.condition.constant_never_written",),
    scope="project",
    reports_on=(K.PROJECT_RESPONSES, K.AGENT),
    reads=_EVERYTHING,
)
def project_constant_conditions(ck: Checker) -> None:
    """The same, for the project-root responses.yml and agent.yml preconditions."""
    prf = ck.p.project_responses
    if prf is not None and isinstance(prf.doc, ResponsesDoc):
        constant_conditions(ck, prf.path, prf.doc.conditions, None)
    apf, agent = ck.p.file_of_kind(K.AGENT), ck.p.agent
    if apf is not None and agent is not None:
        constant_conditions(ck, apf.path, agent.conditions, None)
