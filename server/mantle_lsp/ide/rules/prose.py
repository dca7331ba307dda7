"""Instruction text: ``@memory`` tokens and the other ``@`` forms, ``session.`` references
written where only ``@memory`` is substituted, and skill ids written as plain words."""

from __future__ import annotations

import functools
import re

from ...model.defaults import DEFAULT_SKILLS
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...syntax.skill_md import SkillDoc
from ...syntax.text import TextRange
from .base import Checker, rule


@rule(
    codes=(
        "mantle.validation.prose.unknown_memory_reference",
        "mantle.validation.prose.incomplete_memory_reference",
        "mantle.validation.prose.incomplete_at_reference",
        "mantle.validation.prose.session_reference_in_instructions",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.SKILL_MEMORY, K.PROJECT_MEMORY),
)
def prose_tokens(ck: Checker, sid: str, sk: Skill) -> None:
    """``@memory.<ns>.<entry>`` names a readable key; ``@…`` tokens are complete;
    ``session.a.b`` in instruction text is not substituted."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for tok in doc.tokens:
        if tok.kind == "memory":
            (ns, _), (entry, _) = tok.parts
            why = ck.unreadable(sid, ns, entry)
            if why is not None:
                ck.emit(
                    path,
                    tok.range,
                    "mantle.validation.prose.unknown_memory_reference",
                    f"`{tok.text}` cannot be substituted: {why.text}",
                    data=why.data,
                )
        elif tok.kind == "incomplete_memory":
            ck.emit(
                path,
                tok.range,
                "mantle.validation.prose.incomplete_memory_reference",
                f"`{tok.text}` is incomplete: write `@memory.<skill_id|project>."
                "<entry>` (exactly two segments)",
            )
        elif tok.kind == "incomplete_at":
            kind = tok.text[1:].split(".", 1)[0]
            ck.emit(
                path,
                tok.range,
                "mantle.validation.prose.incomplete_at_reference",
                f"`{tok.text}` is incomplete: write `@{kind}.<{kind}_id>` with exactly one id",
            )
        elif tok.kind == "session":
            (ns, _), (entry, _) = tok.parts
            where = "step instructions" if tok.where == "instructions" else "prose"
            ck.emit(
                path,
                tok.range,
                "mantle.validation.prose.session_reference_in_instructions",
                f"`{tok.text}` in {where} is not substituted: write "
                f"`@memory.{ns}.{entry}` to insert the value (`session.` is the "
                "condition form)",
            )


@rule(
    codes=("skill.prose.bare_skill_mention",),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD,),
)
def bare_mentions(ck: Checker, sid: str, sk: Skill) -> None:
    """Another skill's id written as a plain word (once per skill, at its first mention):
    writing it does not start that skill."""
    doc = sk.doc
    if doc is None:
        return
    if "mentions" not in ck.cache:
        ck.cache["mentions"] = mention_pattern(ck)
    check_bare_mentions(ck, sid, sk, doc, ck.cache["mentions"])


def mention_pattern(ck: Checker) -> re.Pattern[str] | None:
    """Every project skill's id as a whole word. (Engine-managed skills are left out at
    each match, by :func:`check_bare_mentions`: deciding it for every skill up front
    would read every skill.md's frontmatter.)"""
    ids = sorted((s for s in ck.p.skills if s not in DEFAULT_SKILLS), key=len, reverse=True)
    return _mention_regex(tuple(ids)) if ids else None


@functools.lru_cache(maxsize=16)
def _mention_regex(ids: tuple[str, ...]) -> re.Pattern[str]:
    """Compiled once per set of skill ids (an edit rarely changes the set)."""
    alt = "|".join(re.escape(i) for i in ids)
    return re.compile(rf"(?<!\w)(?<!\w\.)({alt})(?!\w)(?!\.\w)")


def check_bare_mentions(
    ck: Checker, sid: str, sk: Skill, doc: SkillDoc, pattern: re.Pattern[str] | None
) -> None:
    """Warn once per mentioned skill id (like the engine) at its first mention."""
    if pattern is None or sk.skill_md is None or sid in DEFAULT_SKILLS or ck.p.engine_managed(sid):
        return
    text = sk.skill_md.text
    seen: set[str] = set()
    for para in doc.paragraphs:
        rng = para.body_range
        if rng is None:
            continue
        for m in pattern.finditer(text, rng.start, rng.end):
            name = m.group(1)
            if name == sid or name in seen:
                continue
            seen.add(name)
            if ck.p.engine_managed(name):
                continue
            ck.emit(
                sk.skill_md.path,
                TextRange(m.start(1), m.end(1)),
                "skill.prose.bare_skill_mention",
                f"`{name}` names another skill as a plain word: writing it does not start "
                f"that skill; write `@skill.{name}` to delegate to it (or ignore this code "
                "if the word is meant as plain text)",
            )
