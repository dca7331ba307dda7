"""The fixes of what the parsers report (``syntax/``: they emit their codes with a file's
parse, and know nothing of edits): keys the engine ignores or refuses in a skill.md
frontmatter, a block or memory.yml; memory.yml attributes (misplaced, unknown, renamed);
3.20-era keys (``constraints:``, ``enum:``, ``force_collection``, agent.yml's
``prompts.ack_*``). No rules: a code's rule is its parser."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.symbols import content_range
from ...syntax.config_tables import LEGACY_PROMPT_KEYS
from ...syntax.config_yml import AgentDoc, parse_agent_yml
from ...syntax.memory_yml import MemoryDoc
from ...syntax.skill_md import FRONTMATTER_KEYS, SkillDoc
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YNode, YScalar, YSeq, to_python
from ..edits import (
    after_line,
    column,
    content_end,
    delete_lines,
    drop_section_key,
    entry_lines,
    insert_lines,
    is_flow,
    line_start,
    one_edit,
    reindent,
    ws_edit,
)
from ..types import CodeAction, TextEdit
from .base import Diagnostic
from .fix import Fix, Fixes


def remove_ignored_key(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """`id:` / `engine:` / `license:` … in the frontmatter, `id:` in a block's YAML,
    `access:` or an unknown scalar key in memory.yml: remove the key (all its lines).
    Only keys with a scalar value (and `access:`, which has no effect): a mapping under
    a misspelt key holds declarations a removal would lose."""
    text = fx.text
    doc = fx.pf.doc
    roots: list[tuple[YMap, str | None]] = []  # (mapping, the id a key `id:` repeats)
    if isinstance(doc, SkillDoc):
        if doc.frontmatter is not None:
            roots.append((doc.frontmatter, doc.skill_id))
        roots += [(b.root, b.id) for b in doc.blocks if isinstance(b.root, YMap)]
    elif isinstance(doc, MemoryDoc) and isinstance(doc.root, YMap):
        roots.append((doc.root, None))
        schema = doc.root.get("schema")
        if isinstance(schema, YMap):
            roots.append((schema, None))
    for mapping, own_id in roots:
        if is_flow(text, mapping) or len(mapping.items) < 2:
            continue
        for k, v in mapping.pairs():
            if k.range != d.range:
                continue
            name = str(k.value)
            if name in ("constraints", "memory", "schema") or name in FRONTMATTER_KEYS:
                return  # moved by its own fix, or declarations to keep
            if not isinstance(v, YScalar) and name != "access":
                return
            if isinstance(v, YScalar) and v.style in ("|", ">"):
                return
            rm = delete_lines(text, k.range.start, max(content_end(text, v), k.range.end))
            if rm is None:
                return
            # `id: <the id it has anyway>` says nothing: removing it is safe
            same = name == "id" and isinstance(v, YScalar) and v.value == own_id
            safe = same and "#" not in text[rm.range.start : rm.range.end]
            edit = ws_edit(fx.path, rm)
            yield fx.action(f"Remove `{name}`", d, edit, preferred=True, safe=safe)
            return


def constraints_to_prose(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """Each `- text: <rule>` becomes a bullet at the top of the prose body, and the key
    goes (3.21 refuses to load a skill with it)."""
    doc = fx.pf.doc
    text = fx.text
    if not isinstance(doc, SkillDoc) or doc.frontmatter is None:
        return
    if doc.frontmatter_range is None:
        return
    hit = next(((k, v) for k, v in doc.frontmatter.pairs() if k.range == d.range), None)
    if hit is None or hit[0].value != "constraints":
        return
    k, v = hit
    if is_flow(text, doc.frontmatter):
        return
    rules = _constraint_texts(v)
    if rules is None:
        return
    rm = delete_lines(text, k.range.start, max(content_end(text, v), k.range.end))
    if rm is None:
        return
    tail = text[max(content_end(text, v), k.range.end) : rm.range.end].strip()
    if tail and not tail.startswith("#"):
        return
    at = after_line(text, doc.frontmatter_range.end)
    bullets = "".join(f"- {r}\n" for r in rules)
    if bullets and at < len(text) and text[at : after_line(text, at)].strip():
        bullets += "\n"  # its own paragraph: the rules apply whatever follows
    if bullets and at == len(text) and not text.endswith("\n"):
        bullets = "\n" + bullets
    edits = [rm] + ([TextEdit(TextRange(at, at), bullets)] if bullets else [])
    safe = "#" not in text[rm.range.start : rm.range.end]
    title = "Move the constraints into the prose" if rules else "Remove `constraints:`"
    yield fx.action(title, d, ws_edit(fx.path, *edits), preferred=True, safe=safe)


def _constraint_texts(v: YNode | None) -> list[str] | None:
    """The rules of a 3.20 ``constraints:`` list (``- text: …`` items, or strings); None
    when an item is anything else (the author must move it by hand)."""
    if v is None or (isinstance(v, YScalar) and v.is_null):
        return []
    if not isinstance(v, YSeq):
        return None
    out: list[str] = []
    for item in v.items:
        node: YNode | None = item
        if isinstance(item, YMap):
            if [k.value for k, _ in item.items if isinstance(k, YScalar)] != ["text"]:
                return None
            node = item.get("text")
        if not isinstance(node, YScalar) or not isinstance(node.value, str):
            return None
        rule = " ".join(node.value.split())
        if rule:
            out.append(rule)
    return out


def remove_attribute(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """`llm_settable` on a project field, `seed` on a skill field: the engine refuses the
    attribute, so removing it keeps the meaning, unless the lines removed hold a
    comment."""
    yield from _remove_attribute(fx, d, guess=False)


def remove_unknown_attribute(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """`correctable: true`, `required:`, … : the engine ignores them. Removing one keeps
    the meaning; not when a known attribute was probably meant (a typo: "did you mean")."""
    yield from _remove_attribute(fx, d, guess=isinstance((d.data or {}).get("meant"), str))


def _remove_attribute(fx: Fix, d: Diagnostic, guess: bool) -> Iterator[CodeAction]:
    """Remove the attribute at the diagnostic's range (all its lines): safe, and preferred,
    unless the author may have meant another attribute (``guess``); never safe when the
    lines removed hold a comment."""
    hit = fx.attribute_at(d.range)
    rm = fx.remove_attr_edit(*hit) if hit is not None else None
    if hit is None or rm is None:
        return
    safe = not guess and "#" not in fx.text[rm.range.start : rm.range.end]
    edit = ws_edit(fx.path, rm)
    yield fx.action(f"Remove `{hit[1]}`", d, edit, preferred=not guess, safe=safe)


def rename_key(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    written = fx.text[d.range.start : d.range.end]
    renames = {"enum": "enum_values", "force_collection": "ask_before_filling"}
    new = renames.get(written)
    if new is None:
        return
    if new == "enum_values" and fx.memdoc() is None:
        return
    edit = ws_edit(fx.path, TextEdit(d.range, new))
    # force_collection's documented replacement means the same; `enum:` restricted
    # nothing, `enum_values:` does: a change of behaviour
    safe = new == "ask_before_filling"
    yield fx.action(f"Rename `{written}` to `{new}`", d, edit, preferred=True, safe=safe)


def legacy_prompt(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """Move `prompts.ack_enabled` to `fillers.enabled`, `prompts.ack_rule` to
    `fillers.instructions` (3.21 reads only those; `fillers.instructions` is the rule of
    the acknowledgement section, empty for the built-in one, exactly what `ack_rule`
    was). Only a boolean `ack_enabled` and a string `ack_rule` (the values the new
    keys take as they are). When `fillers` already sets the key, it decides: the legacy
    key can only be removed. Unsafe either way: the engine ignores the legacy key
    today, so moving it changes what the agent does (acknowledgements start or stop),
    and removing it loses what it says."""
    doc = fx.pf.doc
    text = fx.text
    if not isinstance(doc, AgentDoc) or doc.root is None or is_flow(text, doc.root):
        return
    root = doc.root
    prompts_key, prompts = root.key_node("prompts"), root.get("prompts")
    if prompts_key is None or not isinstance(prompts, YMap) or is_flow(text, prompts):
        return
    hit = next(((k, v) for k, v in prompts.pairs() if k.range == d.range), None)
    if hit is None or hit[0].value not in LEGACY_PROMPT_KEYS:
        return
    k, v = hit
    legacy = str(k.value)
    target = LEGACY_PROMPT_KEYS[legacy]
    attr = target.split(".", 1)[1]
    kind = bool if attr == "enabled" else str
    if not isinstance(v, YScalar) or not isinstance(v.value, kind):
        return  # no exact counterpart: left to the author
    span = entry_lines(text, prompts, k, prompts_key.range.end)
    if span is None:
        return
    start, end = span
    fillers_key, fillers = root.key_node("fillers"), root.get("fillers")
    only = len(prompts.items) == 1
    move = not (isinstance(fillers, YMap) and fillers.has(attr))
    if move:
        title = f"Move `prompts.{legacy}` to `{target}`"
    else:
        title = f"Remove `prompts.{legacy}` (`{target}` is set)"
    edits: list[TextEdit] = []
    if move and fillers_key is None and only:  # `prompts:` becomes `fillers:`
        edits += [
            TextEdit(content_range(prompts_key), "fillers"),
            TextEdit(content_range(k), attr),
        ]
    else:
        if move:
            name = content_range(k)  # the quotes of a quoted key stay
            lines = (text[start : name.start] + attr + text[name.end : end]).splitlines()
            col = column(text, k.range.start)
            added = fillers_entry(fx, root, prompts_key, col, lines, attr, v)
            if added is None:
                return
            edits.append(added)
        if only:  # `prompts:` with nothing under it is an error: it goes
            gone, end = drop_section_key(text, prompts_key, root.items[0][0] is prompts_key, end)
            edits.append(gone)
        edits.append(TextEdit(TextRange(start, end), ""))
    edit = one_edit(text, edits)
    after = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
    if not _moved_to_fillers(doc, after, legacy, attr, v if move else None):
        return
    yield fx.action(title, d, ws_edit(fx.path, edit), preferred=True)


def fillers_entry(
    fx: Fix, root: YMap, prompts_key: YScalar, key_col: int, lines: list[str], attr: str,
    value: YScalar,
) -> TextEdit | None:  # fmt: skip
    """The insertion of ``lines`` (the entry ``attr: …``, at column ``key_col``) into
    `fillers:`: at the end of its block, into a `{…}` (a one-line value), under an
    empty `fillers:`, or as a new `fillers:` section right before `prompts:`."""
    text = fx.text
    fillers_key, fillers = root.key_node("fillers"), root.get("fillers")
    if isinstance(fillers, YMap) and is_flow(text, fillers):
        close = fillers.range.end - 1
        raw = text[value.range.start : value.range.end]
        if text[close] != "}" or "\n" in raw or "#" in "".join(lines):
            return None
        sep = ", " if fillers.items else ""
        return TextEdit(TextRange(close, close), f"{sep}{attr}: {raw}")
    if isinstance(fillers, YMap) and fillers.items:
        col = column(text, fillers.items[0][0].range.start)
        return insert_lines(text, content_end(text, fillers), reindent(lines, col - key_col))
    if fillers_key is not None:
        if not (isinstance(fillers, YScalar) and fillers.range.length == 0):
            return None  # `fillers: ~` or another value: left to the author
        base = column(text, fillers_key.range.start)
        delta = base - column(text, prompts_key.range.start)
        return insert_lines(text, fillers_key.range.end, reindent(lines, delta))
    pos = line_start(text, prompts_key.range.start)
    head = " " * column(text, prompts_key.range.start) + "fillers:"
    return TextEdit(TextRange(pos, pos), "".join(x + "\n" for x in [head, *lines]))


def _moved_to_fillers(
    doc: AgentDoc, after: str, legacy: str, attr: str, value: YScalar | None
) -> bool:
    """Whether ``after`` (agent.yml once fixed) no longer has ``prompts.<legacy>``, has
    ``fillers.<attr>`` (with ``value``'s value, when given), and no finding the file did
    not have."""
    new = parse_agent_yml(after)
    if new.root is None:
        return False
    prompts, fillers = new.root.get("prompts"), new.root.get("fillers")
    if isinstance(prompts, YMap) and prompts.has(legacy):
        return False
    if not isinstance(fillers, YMap) or not fillers.has(attr):
        return False
    if value is not None and to_python(fillers.get(attr)) != to_python(value):
        return False
    was = [i.code for i in doc.issues]
    for issue in new.issues:
        if issue.code not in was:
            return False
        was.remove(issue.code)
    return True


FIXES: Fixes = {
    "lsp.legacy.syntax": (rename_key, legacy_prompt, remove_ignored_key),
    "lsp.memory.unknown_attribute": (rename_key, remove_unknown_attribute),
    "skill.step.outdated_force_collection": (rename_key,),
    "skill.markdown.unknown_frontmatter_key": (constraints_to_prose, remove_ignored_key),
    "lsp.memory.unknown_top_level_key": (remove_ignored_key,),
    "mantle.validation.memory.project_llm_settable": (remove_attribute,),
    "mantle.validation.memory.skill_seed": (remove_attribute,),
}
