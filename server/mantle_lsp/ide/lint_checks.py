"""Checks the engine does not make, about things that are legal but almost certainly
mistakes: names no reference form can reach, fields nothing refers to, steps no route
reaches, and Maestro-era tool names that no longer do anything."""

from __future__ import annotations

import keyword
import re
import weakref
from typing import TYPE_CHECKING, NamedTuple

from ..model.defaults import DEFAULT_SKILLS
from ..model.layout import FileKind
from ..model.project import Skill
from ..model.semantics import Semantics
from ..model.symbols import code_memory
from ..syntax.skill_md import SkillDoc

if TYPE_CHECKING:
    from .diagnostics import Checker

C_UNREACHABLE_NAME = "lsp.memory.unreachable_name"
C_UNUSED = "lsp.memory.unused_field"
C_UNREACHABLE_STEP = "lsp.flow.unreachable_step"
C_LEGACY = "lsp.legacy.syntax"
C_PREFIX = "lsp.tools.reserved_prefix"

_PLACEHOLDER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN_NAME = re.compile(r"[\w-]+\Z")


def check_field_names(ck: Checker, sk: Skill | None) -> None:
    """Entry names that some reference form can never reach (authoring-language §2.3)."""
    md = sk.memdoc if sk is not None else ck.p.project_memory
    pf = sk.memory if sk is not None else ck.p.file_of_kind(FileKind.PROJECT_MEMORY)
    if md is None or pf is None:
        return
    for f in md.fields:
        name = f.name
        problems = []
        if not name.isidentifier():
            problems.append("conditions (`session.<ns>.<entry>` needs a Python identifier)")
        elif keyword.iskeyword(name):
            problems.append(f"conditions (`{name}` is a Python keyword)")
        if not _PLACEHOLDER_NAME.match(name):
            problems.append("response placeholders (`{entry}` takes ASCII letters, digits, _)")
        if not _TOKEN_NAME.match(name):
            problems.append("`@memory` tokens")
        if problems:
            ck.emit(
                pf.path,
                f.key.range,
                C_UNREACHABLE_NAME,
                f"`{name}` can never be referenced from " + "; nor from ".join(problems),
            )


class _CodeFacts(NamedTuple):
    """What the project's code shows of its memory use, for the unused-field hint."""

    anything: bool  # a shared tool or lib helper uses memory with unknown keys
    shared_entries: frozenset[str]  # every key shared tools and lib helpers name
    dynamic_skills: frozenset[str]  # skills whose own tools use memory with unknown keys
    tool_names: frozenset[str]  # every tool of the project (run_after_setting_ hooks)


_CODE_FACTS: weakref.WeakKeyDictionary[Checker, _CodeFacts] = weakref.WeakKeyDictionary()


def _code_facts(ck: Checker) -> _CodeFacts:
    facts = _CODE_FACTS.get(ck)
    if facts is None:
        p = ck.p
        anything = False
        entries: set[str] = set()
        for pf, mod in [*p.shared_tool_files(), *p.helper_files()]:
            found = code_memory(p, pf.path, mod)
            anything = anything or found.dynamic
            entries |= found.entries
        facts = _CodeFacts(
            anything,
            frozenset(entries),
            frozenset(sid for sid in p.skills if p.skill_facts(sid).dynamic_memory),
            frozenset(key[2] for key in p.index.symbols if key[0] == "tool"),
        )
        _CODE_FACTS[ck] = facts
    return facts


def check_unused_fields(ck: Checker, sk: Skill | None) -> None:
    """A hint on declared fields that no file of the project refers to by name.

    It must never be wrong, so every writer and reader the code shows counts: references
    in the index (literal keys, keys through constants and loops, `collect`, `set_memory`,
    buttons, …), any key a shared tool or `lib/` helper names (a bare name there may be
    any skill's field), `run_after_setting_<field>` tools; and where code uses memory with
    keys that cannot be known, no field it could reach is reported: a shared tool or
    helper reaches every field, a skill's tools its own fields, the project fields and
    other skills' public fields."""
    md = sk.memdoc if sk is not None else ck.p.project_memory
    pf = sk.memory if sk is not None else ck.p.file_of_kind(FileKind.PROJECT_MEMORY)
    if md is None or pf is None or (sk is not None and sk.id in DEFAULT_SKILLS):
        return
    facts = _code_facts(ck)
    if facts.anything:
        return
    ns = sk.id if sk is not None else "project"
    if sk is not None:
        hooks = {t.name for _, mod in sk.tool_modules() for t in mod.tools}
        own_dynamic = sk.id in facts.dynamic_skills
        others_dynamic = bool(facts.dynamic_skills - {sk.id})
    else:
        hooks = set(facts.tool_names)
        own_dynamic = others_dynamic = bool(facts.dynamic_skills)
    for f in md.fields:
        if f.llm_settable or f.seed or f"run_after_setting_{f.name}" in hooks:
            continue  # the model or the session start writes it
        if own_dynamic or (others_dynamic and f.scope == "public"):
            continue  # tools that use computed keys may reach it
        if f.name in facts.shared_entries or f"{ns}.{f.name}" in facts.shared_entries:
            continue
        refs = ck.p.index.references_to(("field", ns, f.name))
        if any(not r.soft for r in refs):
            continue
        ck.emit(
            pf.path,
            f.key.range,
            C_UNUSED,
            f"no condition, token, placeholder, step, button or tool code of this project "
            f"refers to `{ns}.{f.name}`",
            "hint",
        )


def check_unreachable_steps(ck: Checker, sk: Skill, doc: SkillDoc) -> None:
    if sk.skill_md is None:
        return
    for blk in doc.blocks:
        ids = {s.id for s in blk.steps if s.id}
        if not blk.steps or any(
            t.value != "END" and t.value not in ids for s in blk.steps for t in s.next_targets()
        ):
            continue  # a broken `next` target is reported; guessing reachability would mislead
        seen = {0}
        todo = [0]
        while todo:
            cur = todo.pop()
            for nxt in Semantics.step_successors(blk, cur):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        for j, st in enumerate(blk.steps):
            if j in seen or st.id_node is None or st.kind == "end":
                continue
            ck.emit(
                sk.skill_md.path,
                st.id_node.range,
                C_UNREACHABLE_STEP,
                f"step '{st.id}' can never run: no `next` and no preceding step leads to it",
            )


def check_legacy_tool_names(ck: Checker, sk: Skill | None) -> None:
    if sk is None:
        for pf, mod in ck.p.shared_tool_files():
            for t in mod.tools:
                if t.name.startswith("set_") and t.kind != "possible":
                    ck.emit(
                        pf.path,
                        t.name_range,
                        C_PREFIX,
                        f"shared tools named `set_*` are dropped when the engine loads tools "
                        f"(the prefix is reserved for collect setters): rename `{t.name}`",
                    )
        return
    fields = set(sk.field_names())
    for pf, mod in sk.tool_modules():
        for t in mod.tools:
            for prefix in ("set_", "ask_"):
                if t.name.startswith(prefix) and t.name[len(prefix) :] in fields:
                    entry = t.name[len(prefix) :]
                    ck.emit(
                        pf.path,
                        t.name_range,
                        C_LEGACY,
                        f"`{t.name}` is a Maestro-era {prefix[:-1]} hook name, which the "
                        f"engine no longer calls for `{entry}`; validate writes in "
                        f"`run_after_setting_{entry}` instead",
                    )
