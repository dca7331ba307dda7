"""Data-flow checks over the whole project: fields that are read but that nothing can ever
write, and project fields that more than one skill writes (on rasa-pro 3.21 a project field
keeps its first value: a later write to it is refused while it holds a value).

Both must never be wrong, so every writer the project shows counts (the index's write
references, whatever their key form; what ``Semantics.field_writers`` names:
``llm_settable``, ``seed``, ``initial_value``) and a writer whose key cannot be known
silences every field it could reach (``Semantics.unknown_keys_may_reach``), as for
``lsp.memory.unused_field``.

"Written, never read" is deliberately not a check: the engine lists every set field the
active skill can see in the system prompt's memory section, so the model reads every field
its skill writes (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path

from ...model.evaluation import evaluate
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.semantics import writes
from ...model.symbols import Reference
from ...syntax.conditions import BoolOpExpr, CompareExpr, Expr, LiteralExpr, NotExpr, RefExpr
from ...syntax.responses_yml import ResponsesDoc
from ...syntax.sites import SITE_LABELS, ConditionSite
from .base import Checker, per_project, per_skill, rule

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
    scopes=(
        per_skill(reports_on=(K.SKILL_MEMORY,), reads=_EVERYTHING),
        per_project(reports_on=(K.PROJECT_MEMORY,), reads=_EVERYTHING),
    ),
)
def never_written(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """A hint on the fields (of a skill, of the project) that are read somewhere but that
    no writer of the project can ever give a value: each condition on them sees None,
    each token and placeholder renders nothing."""
    found = ck.memory_of(sk)
    if found is None:
        return
    md, pf = found
    ns = sk.id if sk is not None else "project"
    for f in md.fields:
        reads = never_written_reads(ck, ns, f.name)
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
            "it (not llm_settable, no seed or initial_value, no collect, set_memory, set: "
            "button or tool write): it is always None,"
            f"{constant}".rstrip(","),
            related=[
                ck.related(r.path, r.range, f"read here ({_READ_WORDS.get(r.form, r.form)})")
                for r in reads[:MAX_RELATED]
            ],
        )


def where(ck: Checker, r: Reference) -> str:
    """``path:line`` of a reference, relative to the project root (1-based line)."""
    pf = ck.p.files.get(r.path)
    line = pf.source.index.line_of(r.range.start) + 1 if pf is not None else 0
    try:
        rel = r.path.relative_to(ck.p.root).as_posix()
    except ValueError:
        rel = r.path.as_posix()
    return f"{rel}:{line}"


def never_written_reads(ck: Checker, ns: str, entry: str) -> list[Reference] | None:
    """The places that read the declared field ``ns.entry``, sorted, when nothing in the
    project can ever write it (so every read sees None); else None (a writer — a
    reference, ``Semantics.writers``, or a value without one, ``Semantics.field_writers``
    —, a writer whose key cannot be known — ``Semantics.unknown_keys_may_reach`` —, or
    no reader at all: ``lsp.memory.unused_field`` says so). Memoised per check run. Another
    skill's files are not parsed for it (a spread check's worker knows their fields as
    facts, ``Project.field_decls``)."""
    memo: dict[tuple[str, str], list[Reference] | None] = ck.cache.setdefault("never_written", {})
    if (ns, entry) in memo:
        return memo[(ns, entry)]
    found = None
    sem = ck.sem
    reads = sem.readers(ns, entry)
    if (
        reads
        and not sem.writers(ns, entry)
        and _declared(ck, ns, entry)
        and not sem.field_writers(ns, entry)
        and not sem.unknown_keys_may_reach(ns, entry)
    ):
        found = reads
    memo[(ns, entry)] = found
    return found


def _declared(ck: Checker, ns: str, entry: str) -> bool:
    if ns == "project":
        return ck.p.project_field(entry) is not None
    return ck.p.field_decls(ns, entry)[1] is not None


def is_never_written(ck: Checker, ns: str, entry: str) -> bool:
    """Whether ``lsp.memory.never_written`` holds for the field ``ns.entry``: declared,
    read, and nothing in the project can write it."""
    return never_written_reads(ck, ns, entry) is not None


def written_for_certain(ck: Checker, ns: str, entry: str) -> bool:
    """Whether the files loaded so far show that :func:`is_never_written` does not hold
    for ``ns.entry``, with evidence that more files can only confirm: no reader, a writer,
    no declaration, a declaration that gives it a value. A project loaded around one skill
    (``Project.load_around``) answers this without the facts of every code file (which
    would parse them all). A test holds it to :func:`is_never_written` on whole projects."""
    sem = ck.sem
    if not sem.readers(ns, entry) or sem.writers(ns, entry):
        return True
    if ns != "project" and ck.p.skill(ns) is None:
        return True
    return not _declared(ck, ns, entry) or bool(sem.field_writers(ns, entry))


def unproven_on_skill_md(ck: Checker, path: Path, sid: str) -> set[tuple[str, str]] | None:
    """What keeps this module's rules that read every file from being certainly silent on
    the skill.md at ``path`` (of skill ``sid``), as far as a project loaded around that
    skill shows: None when it writes a project field but by ``collect`` (another skill may
    write it too: :func:`project_written_twice`); else the fields its evaluated
    conditions read, readable there, that are not :func:`written_for_certain`
    (:func:`constant_never_written`; empty: silent)."""
    for r in ck.p.index.references:
        if (
            r.path == path
            and r.key[0] == "field"
            and r.key[1] == "project"
            and writes(r)
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
    {"dataflow.project_written_twice", "dataflow.constant_never_written"}
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
        if not ck.sem.keeps_first_value(f.name):
            continue  # 3.22: a mutable project field may be overwritten
        writes = ck.sem.writers("project", f.name)
        if not writes:
            continue
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
    value the None of ``none_keys`` decides (evaluated three-valued: those slots None,
    every other one unknown), each with that value and the keys that decide it. A part
    decided without them (literals only) is not one; a reference compared with something
    is judged with its comparison."""
    out: list[tuple[Expr, bool, set[str]]] = []
    nones = dict.fromkeys(none_keys)

    def visit(e: Expr, compared: bool) -> None:
        keys = _keys_in(e) & none_keys
        if not keys or isinstance(e, LiteralExpr):
            return
        v = evaluate(e, nones)
        if v.fails:
            return  # evaluating it fails: the parts after the failure are never evaluated
        if v.decided and not compared and not evaluate(e, {}).decided:
            out.append((e, bool(v.value), keys))
            return
        for c in _children(e):
            visit(c, isinstance(e, CompareExpr))
            if evaluate(c, nones).fails:
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
    scopes=(
        per_skill(reports_on=(K.SKILL_MD, K.SKILL_RESPONSES), reads=_EVERYTHING),
        per_project(reports_on=(K.PROJECT_RESPONSES, K.AGENT), reads=_EVERYTHING),
    ),
)
def constant_never_written(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """A hint on each condition (or the part of it) that a never-written field decides:
    always true or always false, and why (a skill's skill.md and responses.yml, the
    project-root responses.yml, agent.yml preconditions)."""
    if sk is not None:
        if sk.doc is not None and sk.skill_md is not None:
            constant_conditions(ck, sk.skill_md.path, sk.doc.conditions, sid)
        if sk.responses is not None and isinstance(sk.responses.doc, ResponsesDoc):
            constant_conditions(ck, sk.responses.path, sk.responses.doc.conditions, sid)
        return
    prf = ck.p.project_responses
    if prf is not None and isinstance(prf.doc, ResponsesDoc):
        constant_conditions(ck, prf.path, prf.doc.conditions, None)
    apf, agent = ck.p.file_of_kind(K.AGENT), ck.p.agent
    if apf is not None and agent is not None:
        constant_conditions(ck, apf.path, agent.conditions, None)
