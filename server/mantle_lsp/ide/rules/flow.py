"""The flow of ordered blocks: ``next`` targets name steps of the same block (or
``END``), branch lists end in ``else``, and every step can be reached."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.semantics import Semantics
from ...syntax.skill_md import SkillDoc, Step
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YSeq
from ..edits import column, content_end, insert_lines, is_flow, ws_edit
from ..types import CodeAction
from .base import Checker, Diagnostic, did_you_mean, meant, rule
from .fix import Fix, Fixes


def where(st: Step) -> str:
    """How messages name a step: by id, else by position."""
    return f"step '{st.id}'" if st.id else f"step {st.index + 1}"


@rule(
    codes=(
        "mantle.validation.flow.unresolved_next",
        "mantle.validation.flow.next_missing_else",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD,),
)
def next_targets(ck: Checker, sid: str, sk: Skill) -> None:
    """``next:`` names a step of the same block or ``END``; a branch list has an ``else``."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for blk in doc.blocks:
        ids = {s.id for s in blk.steps if s.id}
        for st in blk.steps:
            for tgt in st.next_targets():
                if tgt.value != "END" and tgt.value not in ids:
                    upper = tgt.value.lower() == "end"
                    hint = " (`END` is upper-case)" if upper else did_you_mean(tgt.value, ids)
                    ck.emit(
                        path,
                        tgt.range,
                        "mantle.validation.flow.unresolved_next",
                        f"{where(st)}: `{tgt.value}` is not a step of block '{blk.id}' nor "
                        f"`END`{hint}",
                        data=(
                            {"wrong": tgt.value, "meant": "END", "only_reading": True}
                            if upper
                            else meant(tgt.value, ids)
                        ),
                    )
            if (
                st.branches
                and any(b.if_node is not None for b in st.branches)
                and not any(b.else_node is not None for b in st.branches)
            ):
                assert st.next_node is not None
                ck.emit(
                    path,
                    _key_range(st, "next"),
                    "mantle.validation.flow.next_missing_else",
                    f"{where(st)}: this branch list has no `- else: <step>` fallback",
                )


def _key_range(st: Step, key: str) -> TextRange:
    if isinstance(st.node, YMap):
        k = st.node.key_node(key)
        if k is not None:
            return k.range
    return st.node.range


@rule(
    codes=("lsp.flow.unreachable_step",),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD,),
)
def unreachable_steps(ck: Checker, sid: str, sk: Skill) -> None:
    """A step that no `next` and no preceding step leads to can never run (not judged in a
    block with a broken `next` target: that is reported, and guessing would mislead)."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    for blk in doc.blocks:
        seen = Semantics.reachable_steps(blk)
        if seen is None:
            continue  # a broken `next` target is reported; guessing reachability would mislead
        for j, st in enumerate(blk.steps):
            if j in seen or st.id_node is None or st.kind == "end":
                continue
            ck.emit(
                sk.skill_md.path,
                st.id_node.range,
                "lsp.flow.unreachable_step",
                f"step '{st.id}' can never run: no `next` and no preceding step leads to it",
            )


# -- fixes ------------------------------------------------------------------------------------


def add_else(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    doc = fx.pf.doc
    if not isinstance(doc, SkillDoc):
        return
    text = fx.text
    for blk in doc.blocks:
        for i, st in enumerate(blk.steps):
            if not isinstance(st.node, YMap):
                continue
            nk = st.node.key_node("next")
            if nk is None or nk.range != d.range:
                continue
            seq = st.next_node
            if not isinstance(seq, YSeq) or not seq.items or is_flow(text, seq):
                return
            dash = text.rfind("-", 0, seq.items[0].range.start)
            indent = " " * column(text, dash)
            following = blk.steps[i + 1].id if i + 1 < len(blk.steps) else None
            target = following or "END"
            edit = insert_lines(text, content_end(text, seq), [f"{indent}- else: {target}"])
            title = f"Add `- else: {target}` as the last branch"
            yield fx.action(title, d, ws_edit(fx.path, edit), preferred=True)
            return


FIXES: Fixes = {"mantle.validation.flow.next_missing_else": (add_else,)}
