"""Rename (docs/features/navigation.md, "Rename"): one symbol, every place that spells it.

Every reference in the index covers exactly the referenced name, so a rename replaces
each range. On top of the index a rename also updates what the index does not model as
a reference of that symbol:

* a memory field: its hook tool ``run_after_setting_<entry>`` (definition and uses);
* a skill: the folder (``WorkspaceEdit.renames``), the ``<skill>__<block>`` prefix of
  its own ``call:``/``link:`` targets, project ``writable_by`` lists, and exact mentions
  of an id-like skill id (one with ``_`` or ``-``) in skill descriptions;
* a block: ``ActivateSkill(skill_id=…, ordered_block=…)`` in tool code;
* a field, a skill or a tool: its backticked mentions in model-facing text (prose, step
  instructions, descriptions, response texts, a scenario's `simulation_context` and
  `criteria`), as edits the user confirms (:func:`_prose_mentions`), and in a scenario's
  texts also the plain mentions of an id-like name (:func:`_scenario_mentions`);
* every name the evaluation's scenarios hold (``locate.scenario_references_to``): a
  skill, block or step id, a memory key (its field or its skill part), a tool, a
  response, an MCP server.

A rename is refused (:class:`FeatureError`) when the new name is invalid, collides with
a symbol of the same kind in the same scope, would change what an unchanged bare name
resolves to, touches something bundled with the engine, or changes nothing.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..model.defaults import DEFAULT_SKILLS, RESERVED_SKILL_IDS, RESERVED_TOOL_NAMES
from ..model.layout import FileKind, inside
from ..model.project import Project
from ..model.semantics import HOOK_PREFIX, Semantics
from ..model.symbols import (
    Reference,
    SymbolKey,
    content_range,
    module_for_import,
    qualified_name,
    resolve_imported,
)
from ..syntax.memory_yml import MemoryDoc
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.text import TextRange
from ..syntax.tools_py import (
    ToolDef,
    ToolModule,
    constant_literals,
)
from ..syntax.yaml_tree import YScalar, YSeq
from .locate import scenario_files, scenario_references_to, target_at
from .navigation import relative, where
from .types import ChangeNote, FeatureError, TextEdit, WorkspaceEdit

RENAMABLE = ("field", "skill", "block", "step", "response", "tool", "precondition", "mcp",
             "model_group")  # fmt: skip
_KIND_WORDS = {
    "field": "memory field",
    "skill": "skill",
    "block": "ordered block",
    "step": "step",
    "response": "response",
    "tool": "tool",
    "precondition": "precondition",
    "mcp": "MCP server",
    "model_group": "model group",
}
_STEP_RE = re.compile(r"[\w-]+\Z")
_MCP_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
# characters that would change the meaning of a plain YAML scalar (or of a flow list)
_YAML_SPECIAL = set(":#{}[],&*!|>'\"%@`")
# forms in which a field is written by its bare entry name (resolved skill-first)
_BARE_FORMS = ("bare_placeholder", "collect", "set_memory")


# -- public API -----------------------------------------------------------------------------


def prepare_rename(project: Project, path: Path, offset: int) -> TextRange | FeatureError:
    """The range of the renamable name at ``offset``, or why nothing can be renamed here."""
    t = target_at(project, path, offset)
    if t is None:
        return FeatureError("nothing to rename here")
    err = _renamable(project, t.key)
    if err is not None:
        return err
    if t.key[0] == "skill" and t.definition:
        return FeatureError(
            "the frontmatter `name:` is only a display label: the skill id is the folder "
            f"name; rename `{t.key[1]}` from a reference to it (e.g. `@skill.{t.key[1]}`) "
            "or rename its folder"
        )
    if _text(project, path, t.range) != t.key[-1]:
        return FeatureError(f"`{_text(project, path, t.range)}` is not a plain name")
    return t.range


def rename(
    project: Project, path: Path, offset: int, new_name: str
) -> WorkspaceEdit | FeatureError:
    """Rename the symbol at ``offset`` to ``new_name`` everywhere in the project."""
    t = target_at(project, path, offset)
    if t is None:
        return FeatureError("nothing to rename here")
    return rename_symbol(project, t.key, new_name)


def rename_symbol(project: Project, key: SymbolKey, new_name: str) -> WorkspaceEdit | FeatureError:
    """Rename ``key`` to ``new_name`` (see the module docstring for what is updated)."""
    err = _renamable(project, key)
    if err is not None:
        return err
    old = key[-1]
    word = _KIND_WORDS[key[0]]
    if new_name == old:
        return FeatureError(f"the {word} is already called `{old}`")
    err = _validate(project, key, new_name)
    if err is not None:
        return err
    if key[0] in _FOLLOWS_CODE:
        err = _unparsed_code(project)
        if err is not None:
            return err
    plan = _Plan(project)
    err = _plan(plan, key, new_name)
    if err is not None:
        return err
    return plan.result()


def rename_files(project: Project, renames: list[tuple[Path, Path]]) -> WorkspaceEdit:
    """Text edits for files or folders the client is about to rename
    (``workspace/willRenameFiles``): renaming ``skills/<a>`` to ``skills/<b>`` updates every
    reference to skill ``a``. The folder itself is moved by the client."""
    plan = _Plan(project)
    skills_dir = project.root / "skills"
    for old, new in renames:
        if old.parent != skills_dir or new.parent != skills_dir or old.name == new.name:
            continue
        sid = old.name
        if project.skill(sid) is None or sid in DEFAULT_SKILLS:
            continue
        _skill_edits(plan, sid, new.name)
    # an occurrence that does not spell the id literally is left alone: the folder moves anyway
    return plan.edit(include_renames=False)


# -- checks ---------------------------------------------------------------------------------

# the kinds whose names tool code spells (memory keys, tools, ActivateSkill)
_FOLLOWS_CODE = ("field", "skill", "block", "tool")


def _unparsed_code(project: Project) -> FeatureError | None:
    """A rename that follows names into tool code is refused while a tool or lib module
    does not parse: what it names cannot be known, so it would be skipped silently."""
    for pf in sorted(project.files.values(), key=lambda f: str(f.path)):
        if pf.kind not in (FileKind.SKILL_TOOLS, FileKind.SHARED_TOOLS, FileKind.HELPER):
            continue
        issue = pf.syntax_error()
        if issue is not None:
            return FeatureError(
                f"cannot rename: {where(project, pf.path, issue.range.start)} is not valid "
                f"Python ({issue.message}), so the names it uses cannot be followed; fix it "
                "first, then rename"
            )
    return None


def _renamable(project: Project, key: SymbolKey) -> FeatureError | None:
    kind = key[0]
    if kind not in RENAMABLE:
        return FeatureError("nothing to rename here")
    name = qualified_name(key)
    word = _KIND_WORDS[kind]
    if kind == "field" and key[1] == "system":
        return FeatureError(f"`{name}` is in the engine-reserved `system` namespace")
    syms = project.index.lookup(key)
    if any(s.path is None for s in syms):
        what = "overridden by this project but " if len(syms) > 1 else ""
        return FeatureError(
            f"the {word} `{name}` is {what}bundled with the engine; its name is fixed"
        )
    if kind == "skill":
        if key[1] in DEFAULT_SKILLS:
            return FeatureError(
                f"skill `{key[1]}` overrides a bundled default skill; its id is fixed by the engine"
            )
        if project.skill(key[1]) is None:
            return FeatureError(f"there is no skill `{key[1]}` in this project")
        return None
    if kind == "tool" and not syms and key[2] in RESERVED_TOOL_NAMES:
        return FeatureError(f"`{key[2]}` is a framework tool; its name is fixed")
    if not syms:
        return FeatureError(f"the {word} `{name}` is not defined, so it cannot be renamed")
    if kind == "tool":
        tools = [s for s in syms if isinstance(s.obj, ToolDef)]
        if not tools:
            return FeatureError(f"`{name}` is not a tool defined in this project")
        for s in tools:
            if s.path is not None and s.range is not None and _is_import(project, s.path, s.obj):
                return FeatureError(
                    f"tool `{key[2]}` is imported into its module "
                    f"({where(project, s.path, s.range.start)}); rename it where it is "
                    f"defined, or import it under another name (`import {key[2]} as …`)"
                )
    return None


def _is_import(project: Project, path: Path, t: ToolDef) -> bool:
    if t.kind != "possible":
        return False
    text = _file_text(project, path)
    stmt = text[t.def_range.start : t.def_range.end].lstrip()
    if not (stmt.startswith("from ") or stmt.startswith("import ")):
        return False
    before = text[t.def_range.start : t.name_range.start].rstrip()
    return not before.endswith(" as")


def _identifier_problem(name: str) -> str | None:
    if not name.isidentifier():
        return "it is not a Python identifier"
    if keyword.iskeyword(name):
        return "it is a Python keyword"
    return None


def _validate(project: Project, key: SymbolKey, new: str) -> FeatureError | None:
    kind = key[0]
    if kind == "field":
        why = _identifier_problem(new)
        if why:
            return FeatureError(
                f"`{new}` cannot be a memory field name: {why}, so "
                f"`session.{key[1]}.{new}` could not be written in a condition"
            )
        if project.index.lookup(("field", key[1], new)):
            return FeatureError(f"`{key[1]}.{new}` already exists")
    elif kind == "skill":
        why = _identifier_problem(new)
        if new in RESERVED_SKILL_IDS:
            why = f"`{new}` is a reserved namespace"
        elif "." in new:
            why = "a skill id cannot contain `.`"
        elif new.startswith("_"):
            why = "folders starting with `_` are skipped by the engine"
        if why:
            return FeatureError(
                f"`{new}` cannot be a skill id: {why} (skill ids are used in "
                f"`session.{new}.<field>` conditions)"
            )
        if new in DEFAULT_SKILLS:
            return FeatureError(f"`{new}` is a bundled default skill; a skill of that id "
                                "would override it")  # fmt: skip
        if project.has_skill(new):
            return FeatureError(f"skill `{new}` already exists")
    elif kind in ("block", "step"):
        if not _STEP_RE.match(new):
            return FeatureError(
                f"`{new}` cannot be a {_KIND_WORDS[kind]} id: use letters, digits, `_` and `-`"
            )
        if kind == "step" and new == "END":
            return FeatureError("`END` is the reserved end-of-block target")
        if project.index.lookup((*key[:-1], new)):
            scope = f"skill `{key[1]}`" if kind == "block" else f"block `{key[1]}:{key[2]}`"
            return FeatureError(f"{_KIND_WORDS[kind]} `{new}` already exists in {scope}")
    elif kind == "tool":
        why = _identifier_problem(new)
        if why:
            return FeatureError(f"`{new}` cannot be a tool name: {why} (tool names are "
                                "Python function names)")  # fmt: skip
        if new in RESERVED_TOOL_NAMES:
            return FeatureError(f"`{new}` is a framework tool name; nobody may define it")
        if not key[1] and new.startswith("set_"):
            return FeatureError("shared tools starting with `set_` are dropped by the engine "
                                "(the prefix is reserved)")  # fmt: skip
        if project.index.lookup(("tool", key[1], new)):
            scope = f"skill `{key[1]}`" if key[1] else "the shared tools"
            return FeatureError(f"tool `{new}` already exists in {scope}")
    else:  # response, precondition, mcp, model_group: names written as YAML scalars
        if not new or any(c.isspace() for c in new):
            return FeatureError(f"a {_KIND_WORDS[kind]} name must be non-empty, without spaces")
        bad = sorted(set(new) & _YAML_SPECIAL)
        if bad or new[0] in "-?":
            shown = " ".join(f"`{c}`" for c in (bad or [new[0]]))
            return FeatureError(
                f"`{new}` would need quoting in YAML (because of {shown}); choose a plainer name"
            )
        if kind == "mcp" and not _MCP_RE.match(new):
            return FeatureError(f"`{new}` is not a valid MCP server name")
        if project.index.lookup((kind, new)):
            return FeatureError(f"{_KIND_WORDS[kind]} `{new}` already exists")
    return None


# -- the plan --------------------------------------------------------------------------------


# the groups of edits a user confirms one by one (unticked in VS Code's refactor preview)
MENTIONS = "mentions"
NOT_RENAMED = "not_renamed"
MAX_NOT_RENAMED = 20


@dataclass
class _Plan:
    project: Project
    edits: dict[Path, dict[TextRange, tuple[str, str | None]]] = field(default_factory=dict)
    renames: list[tuple[Path, Path]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: dict[str, ChangeNote] = field(default_factory=dict)
    # what cannot be renamed safely: (path, range, why); listed, never edited
    skipped: list[tuple[Path, TextRange, str]] = field(default_factory=list)

    def replace(
        self, path: Path, rng: TextRange, expected: str, new: str, note: str | None = None
    ) -> None:
        """Replace ``rng`` (which must spell ``expected``) with ``new``."""
        actual = _text(self.project, path, rng)
        if actual != expected:
            self.problems.append(
                f"{where(self.project, path, rng.start)} writes `{actual}`, not `{expected}`"
            )
            return
        by_range = self.edits.setdefault(path, {})
        if note is None or by_range.get(rng, ("", None))[1] is not None:
            by_range[rng] = (new, note)  # a hard edit wins over a mention at the same place
        else:
            by_range.setdefault(rng, (new, note))

    def skip(self, path: Path, rng: TextRange, why: str) -> None:
        self.skipped.append((path, rng, why))

    def result(self, include_renames: bool = True) -> WorkspaceEdit | FeatureError:
        if self.problems:
            return FeatureError("cannot rename every occurrence: " + "; ".join(self.problems[:3]))
        root = self.project.root
        outside = [p for p in self.edits if not inside(root, p)]
        outside += [a for a, b in self.renames if not (inside(root, a) and inside(root, b))]
        if outside:
            return FeatureError(
                f"cannot rename: {outside[0]} is outside the project folder (reached through "
                "a symbolic link), and mantle-lsp never edits files outside the project"
            )
        return self.edit(include_renames)

    def edit(self, include_renames: bool) -> WorkspaceEdit:
        out: dict[Path, tuple[TextEdit, ...]] = {}
        root = self.project.root
        skipped = sorted(
            {(p, r, why) for p, r, why in self.skipped if inside(root, p)},
            key=lambda s: (str(s[0]), s[1]),
        )
        notices = [
            f"not renamed: {where(self.project, p, r.start)} ({why})" for p, r, why in skipped
        ]
        if len(notices) > MAX_NOT_RENAMED:
            rest = len(notices) - MAX_NOT_RENAMED
            notices = [*notices[:MAX_NOT_RENAMED], f"not renamed: {rest} more places"]
        # each place that is not renamed is shown as an edit that changes nothing, in its own
        # group (the label says why), unless a real edit covers it
        for path, rng, why in skipped[:MAX_NOT_RENAMED]:
            by_range = self.edits.setdefault(path, {})
            if any(r.start < rng.end and rng.start < r.end for r in by_range):
                continue
            note = f"{NOT_RENAMED}:{why}"
            self.notes[note] = ChangeNote(
                f"Not renamed: {why}",
                "mantle-lsp cannot rename these safely: change them by hand",
                needs_confirmation=True,
            )
            by_range[rng] = (_text(self.project, path, rng), note)
        for path, by_range in sorted(self.edits.items(), key=lambda p: str(p[0])):
            if not inside(root, path) or not by_range:
                continue
            ordered = sorted(by_range.items())
            kept: list[TextEdit] = []
            end = -1
            for rng, (text, edit_note) in ordered:
                if rng.start < end:  # overlapping edits: keep the first
                    continue
                kept.append(TextEdit(rng, text, edit_note))
                end = rng.end
            out[path] = tuple(kept)
        renames = tuple(
            (a, b)
            for a, b in self.renames
            if include_renames and inside(root, a) and inside(root, b)
        )
        used = {e.note for edits in out.values() for e in edits if e.note is not None}
        notes = {k: v for k, v in self.notes.items() if k in used}
        return WorkspaceEdit(out, renames, notes=notes, notices=tuple(notices))


def _file_text(project: Project, path: Path) -> str:
    pf = project.files.get(path)
    return pf.text if pf is not None else ""


def _text(project: Project, path: Path, rng: TextRange) -> str:
    return _file_text(project, path)[rng.start : rng.end]


def _plan(plan: _Plan, key: SymbolKey, new: str) -> FeatureError | None:
    kind = key[0]
    if kind == "field":
        err = _field_captures(plan.project, key, new)
        if err is not None:
            return err
        hook = Semantics(plan.project).validation_hook(key[1], key[2])
        if hook is not None:
            new_hook = HOOK_PREFIX + new
            if plan.project.index.lookup(("tool", key[1], new_hook)):
                return FeatureError(f"tool `{new_hook}` already exists in skill `{key[1]}`")
            _symbol_edits(plan, hook, new_hook)
        _symbol_edits(plan, key, new)
        _prose_mentions(plan, key, new)
        _scenario_mentions(plan, key, new)
    elif kind == "skill":
        sid = key[1]
        _skill_edits(plan, sid, new)
        _prose_mentions(plan, key, new)
        _scenario_mentions(plan, key, new)
        root = plan.project.root / "skills"
        plan.renames.append((root / sid, root / new))
    elif kind == "block":
        err = _block_captures(plan.project, key, new)
        if err is not None:
            return err
        _symbol_edits(plan, key, new)
        for path, mod in _tool_modules(plan.project):
            for act in mod.activations:
                if act.skill_id == key[1] and act.block == key[2] and act.block_range:
                    plan.replace(path, act.block_range, key[2], new)
    elif kind == "tool":
        err = _tool_captures(plan.project, key, new)
        if err is not None:
            return err
        _symbol_edits(plan, key, new)
        _prose_mentions(plan, key, new)
        _scenario_mentions(plan, key, new)
    elif kind == "response" and not new.startswith("utter_"):
        for ref in plan.project.index.references_to(key):
            if ref.form in ("action", "utterance"):
                where_ = where(plan.project, ref.path, ref.range.start)
                return FeatureError(
                    f"`{key[1]}` is used by a step's `{ref.form}:` ({where_}), which only "
                    "names responses starting with `utter_`"
                )
        _symbol_edits(plan, key, new)
    else:
        _symbol_edits(plan, key, new)
    return None


def _symbol_edits(plan: _Plan, key: SymbolKey, new: str) -> None:
    old = key[-1]
    p = plan.project
    for sym in p.index.lookup(key):
        if sym.path is not None and sym.range is not None:
            plan.replace(sym.path, sym.range, old, new)
    shared = _shared_constants(p) if key[0] == "field" else {}
    for ref in p.index.references_to(key):
        if ref.soft:
            plan.replace(ref.path, ref.range, old, new, _mentions(plan, key))
        elif ref.via == "constant" and key[0] == "field":
            site = _constant_site(p, ref)
            if isinstance(site, str):
                plan.skip(ref.path, ref.range, site)
                continue
            others = shared.get(site, set()) - {key}
            if others:
                plan.skip(ref.path, ref.range, _shared_why(p, site, sorted(others)[0]))
            else:
                plan.replace(site[0], site[1], old, new)
        else:
            plan.replace(ref.path, ref.range, old, new)
    _scenario_edits(plan, key, new)
    if key[0] == "field":
        _unfollowed_keys(plan, key)


def _scenario_edits(plan: _Plan, key: SymbolKey, new: str) -> None:
    """The names of ``key`` the scenarios hold (a memory key's part for a field or a
    skill); one written with YAML escapes is listed as not renamed."""
    old = key[-1]
    for ref in scenario_references_to(plan.project, key):
        if _text(plan.project, ref.path, ref.range) == old:
            plan.replace(ref.path, ref.range, old, new)
        else:
            plan.skip(ref.path, ref.range, "a scenario's name written with YAML escapes")


def _mentions(plan: _Plan, key: SymbolKey) -> str:
    plan.notes[MENTIONS] = ChangeNote(
        f"Mentions of `{key[-1]}` in prose",
        "backticked names in instructions, descriptions and response texts: they may name "
        "something else (a tool parameter, a word); tick the ones that mean this symbol",
        needs_confirmation=True,
    )
    return MENTIONS


# -- backticked mentions in model-facing text -------------------------------------------------

_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_MENTION_PART = re.compile(r"[A-Za-z_][\w-]*\Z")


def _prose_mentions(plan: _Plan, key: SymbolKey, new: str) -> None:
    """Backticked mentions of ``key`` in model-facing text (:func:`_prose_regions`), in
    the group the user confirms: `` `card.reason` `` / `` `project.user_country` `` (the
    field, or the skill's part), and a bare `` `user_country` `` where it denotes the
    symbol (``Semantics.mention_denotes``: the skill's own field or tool, a project field,
    a shared tool, a skill). A bare name that denotes nothing where it is written may
    still mean another skill's field: offered when the old or the new name is id-like
    (``_`` or ``-``), so that a rename and its inverse offer the same places. A mention
    that the new name would make denote something else there is left alone."""
    p = plan.project
    kind = key[0]
    if kind not in ("field", "skill", "tool"):
        return
    old = key[-1]
    sem = Semantics(p)
    guess = kind == "field" and (_id_like(old) or _id_like(new))
    verdicts: dict[str | None, bool] = {}  # a bare `old` in a context: a mention of key?
    for path, start, end, sid in _prose_regions(p):
        text = _file_text(p, path)
        for m in _BACKTICKED.finditer(text, start, end):
            parts = m.group(1).split(".")
            at = m.start(1)
            if len(parts) == 3 and parts[0] == "session":
                at += len("session.")
                parts = parts[1:]
            if not all(_MENTION_PART.match(x) for x in parts):
                continue
            if len(parts) == 1:
                if parts[0] != old:
                    continue
                if sid not in verdicts:
                    verdicts[sid] = _bare_mention_of(sem, sid, key, new, guess)
                if verdicts[sid]:
                    rng = TextRange(at, at + len(old))
                    plan.replace(path, rng, old, new, _mentions(plan, key))
            elif len(parts) == 2:
                ns, entry = parts
                if kind == "field" and (ns, entry) == (key[1], old):
                    rng = TextRange(at + len(ns) + 1, at + len(ns) + 1 + len(old))
                    plan.replace(path, rng, old, new, _mentions(plan, key))
                elif kind == "skill" and ns == old:
                    plan.replace(path, TextRange(at, at + len(old)), old, new, _mentions(plan, key))


def _bare_mention_of(
    sem: Semantics, sid: str | None, key: SymbolKey, new: str, guess: bool
) -> bool:
    """Whether a backticked bare `` `<old name>` `` in text of skill ``sid`` is a mention
    of ``key`` that still means it once renamed to ``new``."""
    old = key[-1]
    denoted = sem.mention_denotes(sid, old)
    order = sem.mention_order(sid, old)
    if denoted is None:  # another skill's field, perhaps
        if not (guess and key[0] == "field" and key[1] not in ("project", sid)):
            return False
        rank = len(order)
    elif denoted != key:
        return False
    else:
        rank = order.index(key)
    # after the rename, `new` there denotes the nearest of what it denotes today and the
    # renamed symbol (at the rank the old name had)
    now = sem.mention_denotes(sid, new)
    return now is None or sem.mention_order(sid, new).index(now) > rank


def _prose_regions(project: Project) -> Iterator[tuple[Path, int, int, str | None]]:
    """The model-facing text of the project, with the skill whose text it is (None: a
    project-level file): each skill's prose paragraphs, its steps' ``instructions`` and
    ``description``, its frontmatter ``description``; the field descriptions of every
    memory.yml and the variant texts of every responses.yml. Only files inside the
    project (a mention is never worth refusing the rename for)."""
    root = project.root
    for sk in project.skills.values():
        if not inside(root, sk.dir):
            continue
        doc = sk.doc
        if doc is not None and sk.skill_md is not None and inside(root, sk.skill_md.path):
            path = sk.skill_md.path
            for para in doc.paragraphs:
                rng = para.body_range or para.range
                yield path, rng.start, rng.end, sk.id
            scalars = [doc.fm("description")]
            for _, st in doc.steps():
                scalars += [st.get("instructions"), st.get("description")]
            for node in scalars:
                if isinstance(node, YScalar) and isinstance(node.value, str):
                    yield path, node.range.start, node.range.end, sk.id
        for pf in (sk.memory, sk.responses):
            if pf is not None and inside(root, pf.path):
                yield from _yaml_texts(pf.path, pf.doc, sk.id)
    for pf in (project.project_memory_file(), project.project_responses):
        if pf is not None and inside(root, pf.path):
            yield from _yaml_texts(pf.path, pf.doc, None)
    for path, node in _scenario_texts(project):
        yield path, node.range.start, node.range.end, None


def _scenario_texts(project: Project) -> Iterator[tuple[Path, YScalar]]:
    """The prose of the scenarios inside the project: `simulation_context` and each
    criterion (what the simulated user and the judge read)."""
    root = project.root
    for path in scenario_files(project):
        doc = project.files[path].doc
        for node in getattr(doc, "texts", ()):
            if inside(root, path):
                yield path, node


def _scenario_mentions(plan: _Plan, key: SymbolKey, new: str) -> None:
    """Plain (not backticked) mentions of an id-like name in a scenario's texts, where
    authors write the names they test as words ("then add_roaming_pass runs"): offered in
    the group the user confirms, only between id-like names (a plain word is prose, and
    the way back must find what the way there changed). A text that already holds the new
    name as a word is left alone."""
    old = key[-1]
    if not (_id_like(old) and _id_like(new)):
        return
    # a field also as `<namespace>.<name>`; the group is what is replaced
    ns = rf"(?:{re.escape(key[1])}\.)?" if key[0] == "field" else ""
    word = re.compile(rf"(?<![\w`.-]){ns}({re.escape(old)})(?![\w`-])")
    taken = re.compile(rf"(?<![\w-]){re.escape(new)}(?![\w-])")
    for path, node in _scenario_texts(plan.project):
        text = _file_text(plan.project, path)
        if taken.search(text, node.range.start, node.range.end):
            continue
        for m in word.finditer(text, node.range.start, node.range.end):
            if re.match(r"\.\w", text[m.end() : m.end() + 2]) and key[0] != "skill":
                continue  # `old.x`: a memory key of a skill called so
            plan.replace(path, TextRange(m.start(1), m.end(1)), old, new, _mentions(plan, key))


def _yaml_texts(
    path: Path, doc: object, sid: str | None
) -> Iterator[tuple[Path, int, int, str | None]]:
    nodes: list[object] = []
    if isinstance(doc, MemoryDoc):
        nodes = [f.attrs.get("description") for f in doc.fields]
    elif isinstance(doc, ResponsesDoc):
        nodes = [v.text_node for r in doc.responses for v in r.variants]
    for node in nodes:
        if isinstance(node, YScalar) and isinstance(node.value, str):
            yield path, node.range.start, node.range.end, sid


# -- memory keys in code that come through constants ---------------------------------------

Site = tuple[Path, TextRange]  # the key's text inside a constant's string literal


def _constant_site(project: Project, ref: Reference) -> Site | str:
    """Where the string a ``via="constant"`` key reference stands for is spelled: the
    reference itself (a constant of the same module or function), or the literal of the
    constant it imports from a project module; else why that is not known."""
    entry = ref.key[-1]
    pf = project.files.get(ref.path)
    mod = pf.doc if pf is not None else None
    keys = mod.imported_keys if isinstance(mod, ToolModule) else ()
    ik = next((k for k in keys if k.range == ref.range), None)
    if ik is None:  # a constant of this module or function: the reference is its string
        if _text(project, ref.path, ref.range) == entry:
            return (ref.path, ref.range)
        return "a memory key the model cannot follow"
    target = module_for_import(project, ref.path, ik.module, ik.level)
    if target is None:
        return f"`{ik.name}` comes from `{ik.module}`, which is not a project module"
    rng = _constant_literals(target.text).get(ik.name)
    if rng is None:
        return (
            f"the constant `{ik.name}` in {relative(project, target.path)} may be rebound, "
            "or is not a plain string"
        )
    value = target.text[rng.start : rng.end]
    if value != entry and not value.endswith("." + entry):
        return f"the constant `{ik.name}` holds `{value}`"
    return (target.path, TextRange(rng.end - len(entry), rng.end))


@functools.lru_cache(maxsize=64)
def _constant_literals(text: str) -> dict[str, TextRange]:
    return constant_literals(text)


def _shared_constants(project: Project) -> dict[Site, set[SymbolKey]]:
    """For every constant's literal that some tool code uses as a memory key: the fields it
    names (one literal may name different fields from different skills' code)."""
    out: dict[Site, set[SymbolKey]] = {}
    for ref in project.index.references:
        if ref.via == "constant" and ref.key[0] == "field" and not ref.soft:
            site = _constant_site(project, ref)
            if not isinstance(site, str):
                out.setdefault(site, set()).add(ref.key)
    return out


def _shared_why(project: Project, site: Site, other: SymbolKey) -> str:
    return (
        f"the string at {where(project, site[0], site[1].start)} also names "
        f"`{qualified_name(other)}`"
    )


_DYNAMIC_WHY = {
    "get": "a memory key computed at run time",
    "set": "a memory key computed at run time",
    "method": "memory used through another method",
    "escape": "memory passed around as a value",
}


def _unfollowed_keys(plan: _Plan, key: SymbolKey) -> None:
    """Tool and lib code that may name the field in a way the model cannot follow (a
    computed key, an import it cannot resolve): listed as not renamed."""
    p = plan.project
    ns = key[1]
    field_ = next((s.obj for s in p.index.lookup(key) if s.obj is not None), None)
    private = ns != "project" and getattr(field_, "scope", "") == "private"
    for pf in sorted(p.files.values(), key=lambda f: str(f.path)):
        mod = pf.doc
        if pf.kind not in (FileKind.SKILL_TOOLS, FileKind.SHARED_TOOLS, FileKind.HELPER):
            continue
        if not isinstance(mod, ToolModule):
            continue
        if private and pf.kind is FileKind.SKILL_TOOLS and pf.skill_id != ns:
            continue  # another skill's tools cannot reach a private field
        for d in mod.dynamic_keys:
            plan.skip(pf.path, d.range, _DYNAMIC_WHY.get(d.what, "memory used dynamically"))
        for ik in mod.imported_keys:
            if resolve_imported(p, pf.path, ik) is None:
                plan.skip(pf.path, ik.range, f"a key from `{ik.module}` that cannot be followed")


def _skill_edits(plan: _Plan, sid: str, new: str) -> None:
    p = plan.project
    for ref in p.index.references_to(("skill", sid)):
        plan.replace(ref.path, ref.range, sid, new)
    _scenario_edits(plan, ("skill", sid), new)
    # `call: <sid>__<block>` inside the skill itself
    prefix = f"{sid}__"
    for ref in p.index.references:
        if ref.key[0] == "block" and ref.key[1] == sid and ref.form in ("call", "link"):
            start = ref.range.start - len(prefix)
            if start >= 0 and _text(p, ref.path, TextRange(start, ref.range.start)) == prefix:
                plan.replace(ref.path, TextRange(start, start + len(sid)), sid, new)
    # `"<sid>.<entry>"` memory keys held in constants imported from another module
    for ref in p.index.references:
        if ref.key[0] != "field" or ref.key[1] != sid or ref.via != "constant" or ref.soft:
            continue
        site = _constant_site(p, ref)
        if not isinstance(site, str) and site == (ref.path, ref.range):
            continue  # spelled here: its `namespace` reference is renamed
        if isinstance(site, str):
            plan.skip(ref.path, ref.range, site)
            continue
        path, entry_rng = site
        start = entry_rng.start - len(sid) - 1
        if start >= 0 and _text(p, path, TextRange(start, entry_rng.start)) == f"{sid}.":
            plan.replace(path, TextRange(start, start + len(sid)), sid, new)
    # project fields' `writable_by:` lists
    pmf = p.file_of_kind(FileKind.PROJECT_MEMORY)
    pm = p.project_memory
    if pmf is not None and pm is not None:
        for f in pm.fields:
            wb = f.attrs.get("writable_by")
            items = wb.items if isinstance(wb, YSeq) else []
            for item in items:
                if isinstance(item, YScalar) and item.value == sid:
                    plan.replace(pmf.path, content_range(item), sid, new)
    # exact mentions in descriptions (routing exclusions), only between id-like ids: a
    # plain word is prose, and the way back must not miss (or invent) what the way there
    # changed, so that a rename and its inverse restore every byte
    if _id_like(sid) and _id_like(new):
        word = re.compile(rf"(?<![\w-]){re.escape(sid)}(?![\w-])")
        for sk in p.skills.values():
            doc = sk.doc
            node = doc.fm("description") if doc is not None else None
            if sk.skill_md is None or not isinstance(node, YScalar):
                continue
            text = sk.skill_md.text
            for m in word.finditer(text, node.range.start, node.range.end):
                plan.replace(sk.skill_md.path, TextRange(m.start(), m.end()), sid, new)


def _id_like(name: str) -> bool:
    """A name that cannot be an ordinary word of prose (``roaming_pass``, ``plan-change``)."""
    return "_" in name.strip("_") or "-" in name


def _tool_modules(project: Project) -> list[tuple[Path, ToolModule]]:
    return [
        (pf.path, pf.doc)
        for pf in project.files.values()
        if pf.kind in (FileKind.SKILL_TOOLS, FileKind.SHARED_TOOLS)
        and isinstance(pf.doc, ToolModule)
    ]


# -- capture checks: a rename must not change what an unchanged name means ----------------


def _is_bare(project: Project, ref: Reference) -> bool:
    if ref.form in _BARE_FORMS:
        return True
    if ref.form in ("tool_get", "tool_set"):
        start = ref.range.start
        return start == 0 or _file_text(project, ref.path)[start - 1] != "."
    return False


def _field_captures(project: Project, key: SymbolKey, new: str) -> FeatureError | None:
    ns = key[1]
    if ns == "project":
        # a bare `old` in skill S becomes `new`, which S's own field `new` would capture
        sem = Semantics(project)
        for ref in project.index.references_to(key):
            sk = project.skill(ref.skill) if ref.skill else None
            if (
                sk is not None
                and sem.step_write_target(sk, new) == "skill"
                and _is_bare(project, ref)
            ):
                return FeatureError(
                    f"in skill `{sk.id}` the bare name `{new}` means its own field "
                    f"`{sk.id}.{new}`, so {where(project, ref.path, ref.range.start)} would "
                    "change meaning"
                )
        return None
    # bare names of the project field `new` in this skill would start meaning `ns.new`
    for ref in project.index.references_to(("field", "project", new)):
        if ref.skill == ns and _is_bare(project, ref):
            return FeatureError(
                f"skill `{ns}` already uses the bare name `{new}` for the project field "
                f"`project.{new}` ({where(project, ref.path, ref.range.start)}); a field "
                f"`{ns}.{new}` would take it over"
            )
    return None


def _block_captures(project: Project, key: SymbolKey, new: str) -> FeatureError | None:
    # `call:`/`link:` resolve a same-skill block before a skill of the same id
    for ref in project.index.references_to(("skill", new)):
        if ref.skill == key[1] and ref.form in ("call", "link"):
            return FeatureError(
                f"skill `{key[1]}` already calls the skill `{new}` "
                f"({where(project, ref.path, ref.range.start)}); a block `{new}` would "
                "take that call over"
            )
    return None


def _tool_captures(project: Project, key: SymbolKey, new: str) -> FeatureError | None:
    sid, old = key[1], key[2]
    if sid:
        for ref in project.index.references_to(("tool", "", new)):
            if ref.skill == sid:
                return FeatureError(
                    f"skill `{sid}` uses the shared tool `{new}` "
                    f"({where(project, ref.path, ref.range.start)}); a local tool `{new}` "
                    "would shadow it"
                )
        return None
    for ref in project.index.references_to(("tool", "", old)):
        if ref.skill and project.index.lookup(("tool", ref.skill, new)):
            return FeatureError(
                f"skill `{ref.skill}` has its own tool `{new}`, which would shadow the "
                "renamed shared tool there"
            )
    return None
