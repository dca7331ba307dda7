"""Instruction text: ``@memory`` tokens and the other ``@`` forms, ``session.`` references
written where only ``@memory`` is substituted, skill ids written as plain words, and lists
that fall out of the `if:` scope that announces them."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

from ...model.defaults import DEFAULT_SKILLS
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...syntax.skill_md import Paragraph, SkillDoc
from ...syntax.text import TextRange
from ..edits import ws_edit
from ..types import CodeAction, TextEdit
from .base import Checker, Diagnostic, rule
from .fix import DECLARE_FIELD, Fix, Fixes


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


class Mentions(NamedTuple):
    """How to find skill ids written as whole words in prose: every run of word
    characters looked up in ``ids`` (ids that are all word characters, nearly always),
    else one alternation of every id, longest first."""

    ids: frozenset[str]
    alternation: re.Pattern[str] | None

    def find(self, text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
        if self.alternation is not None:
            for m in self.alternation.finditer(text, start, end):
                yield m.group(1), m.start(1), m.end(1)
            return
        ids = self.ids
        for m in _WORD_RUN.finditer(text, start, end):
            if m.group() in ids:
                yield m.group(), m.start(), m.end()


# a whole word: not after a word character or `x.`, not before one or `.x` (the same
# boundaries as the alternation)
_WORD_RUN = re.compile(r"(?<!\w)(?<!\w\.)\w+(?!\w)(?!\.\w)")


def mention_pattern(ck: Checker) -> Mentions | None:
    """Every project skill's id as a whole word. (Engine-managed skills and skills the
    engine fails to load are left out at each match, by :func:`check_bare_mentions`:
    deciding it for every skill up front would read every skill.md.)"""
    ids = tuple(sorted((s for s in ck.p.skills if s not in DEFAULT_SKILLS), key=len, reverse=True))
    if not ids:
        return None
    if all(_WORD_ONLY.fullmatch(i) for i in ids):
        return Mentions(frozenset(ids), None)
    return Mentions(frozenset(ids), _mention_regex(ids))


_WORD_ONLY = re.compile(r"\w+")


@functools.lru_cache(maxsize=16)
def _mention_regex(ids: tuple[str, ...]) -> re.Pattern[str]:
    """Compiled once per set of skill ids (an edit rarely changes the set)."""
    alt = "|".join(re.escape(i) for i in ids)
    return re.compile(rf"(?<!\w)(?<!\w\.)({alt})(?!\w)(?!\.\w)")


def check_bare_mentions(
    ck: Checker, sid: str, sk: Skill, doc: SkillDoc, pattern: Mentions | None
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
        for name, start, end in pattern.find(text, rng.start, rng.end):
            if name == sid or name in seen:
                continue
            seen.add(name)
            if ck.p.engine_managed(name) or ck.sem.dropped(name) is not None:
                continue  # the engine leaves both out (a dropped skill is not in its catalog)
            ck.emit(
                sk.skill_md.path,
                TextRange(start, end),
                "skill.prose.bare_skill_mention",
                f"`{name}` names another skill as a plain word: writing it does not start "
                f"that skill; write `@skill.{name}` to delegate to it (or ignore this code "
                "if the word is meant as plain text)",
            )


# -- lists that leak out of an `if:` scope --------------------------------------------------

C_LIST_OUTSIDE_SCOPE = "lsp.prose.list_outside_scope"
# a Markdown list item: a bullet (`-`, `*`, `+`) or a number (`1.`, `1)`), a space, text
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
# a line that announces what follows: it ends with a colon (inside emphasis: `**Steps:**`)
_ANNOUNCES = re.compile(r"[:\uff1a][*_]*[ \t]*\Z")


def _is_list(doc: SkillDoc, p: Paragraph) -> bool:
    """An always-shown paragraph whose first line is a list item."""
    if p.kind != "text" or p.body_range is None:
        return False
    return _LIST_ITEM.match(doc.text, p.body_range.start, p.range.end) is not None


def _announces(doc: SkillDoc, p: Paragraph) -> bool:
    """A valid scoped paragraph whose last line ends with a colon."""
    if p.kind != "if" or not p.condition or p.body_range is None:
        return False
    body = doc.text[p.body_range.start : p.body_range.end]
    return _ANNOUNCES.search(body.rsplit("\n", 1)[-1]) is not None


def _adjacent(doc: SkillDoc, a: Paragraph, b: Paragraph) -> bool:
    """Only blank lines between ``a`` and ``b``: no ordered block."""
    return not any(a.range.end <= blk.range.start < b.range.start for blk in doc.blocks)


def leaking_lists(doc: SkillDoc) -> Iterator[tuple[Paragraph, list[Paragraph]]]:
    """Each scoped paragraph that ends with a colon, with the list paragraphs right after it
    that its scope does not cover (several when the list has blank lines between items)."""
    paras = doc.paragraphs
    i = 0
    while i < len(paras):
        intro = paras[i]
        i += 1
        if not _announces(doc, intro):
            continue
        run: list[Paragraph] = []
        while i < len(paras) and _is_list(doc, paras[i]):
            if not _adjacent(doc, run[-1] if run else intro, paras[i]):
                break
            run.append(paras[i])
            i += 1
        if run:
            yield intro, run


@rule(
    codes=(C_LIST_OUTSIDE_SCOPE,),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD,),
)
def list_outside_scope(ck: Checker, sid: str, sk: Skill) -> None:
    """A list right after a scoped paragraph that announces it (ends with a colon) is not
    in that scope: a scope ends at the blank line, so the list goes into every prompt."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    for intro, run in leaking_lists(doc):
        first = run[0].body_range or run[0].range
        line = doc.text.count("\n", 0, intro.range.start) + 1
        what = "this list is" if len(run) == 1 else f"these {len(run)} list paragraphs are"
        ck.emit(
            sk.skill_md.path,
            TextRange(first.start, run[-1].range.end),
            C_LIST_OUTSIDE_SCOPE,
            f"{what} not in the `if:` scope of line {line}, which ends at the blank line: "
            f"the model sees {'it' if len(run) == 1 else 'them'} whatever "
            f"`{intro.condition or ''}` is; scope {'it' if len(run) == 1 else 'each'} under the "
            "same condition (or remove the blank line, if the list belongs to that paragraph)",
            data={"condition": intro.condition or ""},
        )


# -- fixes ------------------------------------------------------------------------------------


_IF_LINE = re.compile(r"\s*if:")  # a line that starts a prose condition


def wrap_mention(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    name = fx.text[d.range.start : d.range.end]
    target = fx.p.skill(name)
    if target is None or (target.doc is not None and target.doc.hidden):
        return  # `@skill.` of a hidden skill is an error
    new = f"@skill.{name}"
    # the model then may switch to that skill: a change of behaviour, never unasked
    yield fx.action(f"Change to `{new}`", d, ws_edit(fx.path, TextEdit(d.range, new)))


def scope_list(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """An `if:` line with the announcing paragraph's condition above each list
    paragraph: the engine then shows the list exactly when it shows the paragraph, and
    the text it shows does not change."""
    cond = (d.data or {}).get("condition")
    sk = fx.p.skill(fx.pf.skill_id) if fx.pf.skill_id else None
    doc = sk.doc if sk is not None else None
    if not isinstance(cond, str) or not cond or doc is None or doc.text != fx.text:
        return
    for intro, run in leaking_lists(doc):
        first = run[0].body_range
        if intro.condition != cond or first is None or first.start != d.range.start:
            continue
        edits = []
        for para in run:
            content = (para.body_range or para.range).start
            line = fx.text.rfind("\n", 0, content) + 1
            # from the paragraph's start: a whitespace-only first line (two blank
            # lines in a row) would hide the `if:` from the engine, so it goes
            edits.append(TextEdit(TextRange(para.range.start, line), f"if: {cond}\n"))
        what = "this list" if len(run) == 1 else "each paragraph of this list"
        # the model then sees the list only under the condition: never unasked
        yield fx.action(
            f"Scope {what} under the same condition (`if: {cond}`)",
            d,
            ws_edit(fx.path, *edits),
            preferred=True,
        )


def session_to_memory(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    written = fx.text[d.range.start : d.range.end]
    if not written.startswith("session."):
        return
    new = "@memory." + written[len("session.") :]
    edit = ws_edit(fx.path, TextEdit(d.range, new))
    # on a line starting `if:`, a condition was probably meant (the blank line that
    # starts a prose condition is missing): inserting the value is then a guess
    index = fx.pf.source.index  # not a search back: a huge line has thousands
    start = index.line_start(index.line_of(d.range.start))
    safe = _IF_LINE.match(fx.text, start, d.range.start) is None
    yield fx.action(f"Change to `{new}`", d, edit, preferred=True, safe=safe)


FIXES: Fixes = {
    "mantle.validation.prose.unknown_memory_reference": DECLARE_FIELD,
    "mantle.validation.prose.session_reference_in_instructions": (session_to_memory,),
    "skill.prose.bare_skill_mention": (wrap_mention,),
    "lsp.prose.list_outside_scope": (scope_list,),
}
