"""Text edits that keep a file as its author wrote it: whole lines of YAML inserted or
deleted at the right column, never a re-dumped file, so comments and formatting elsewhere
stay untouched; and the memory.yml edits several fixes share (declare a field, make a
private field public). Plain text and parsed nodes in, :class:`TextEdit` /
:class:`WorkspaceEdit` out."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from ..model.layout import FileKind
from ..model.project import Project, Skill
from ..syntax.memory_yml import MemoryDoc, Scope, parse_memory_yml
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq, to_python
from .types import TextEdit, WorkspaceEdit

# a YAML scalar written plain that reads back as the same string (and a safe tool
# parameter or field name)
PLAIN_SAFE = re.compile(r"[A-Za-z_][\w-]*(?: [\w-]+)*\Z")
_YAML11_WORDS = frozenset(
    [
        "y",
        "n",
        "yes",
        "no",
        "on",
        "off",
        "true",
        "false",
        "null",
        "none",
        "~",
    ]  # read as bool/null by YAML 1.1
)


def line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def after_line(text: str, offset: int) -> int:
    """The offset just after the line break ending the line of ``offset`` (or the end)."""
    nl = text.find("\n", offset)
    return len(text) if nl == -1 else nl + 1


def column(text: str, offset: int) -> int:
    return offset - line_start(text, offset)


def is_flow(text: str, node: YNode) -> bool:
    return text[node.range.start : node.range.start + 1] in ("{", "[")


def content_end(text: str, node: YNode | None) -> int:
    """The end of the last character that belongs to ``node`` (block mappings and block
    scalars end at the next token in the YAML tree; this trims them)."""
    if node is None:
        return 0
    if isinstance(node, YScalar):
        end = node.range.end
        while end > node.range.start and text[end - 1] in " \t\n":
            end -= 1
        return end
    if is_flow(text, node):
        return node.range.end
    if isinstance(node, YMap) and node.items:
        k, v = node.items[-1]
        return max(content_end(text, k), content_end(text, v))
    if isinstance(node, YSeq) and node.items:
        return content_end(text, node.items[-1])
    return node.range.start


def insert_lines(text: str, after: int, lines: list[str]) -> TextEdit:
    """Insert whole lines after the line holding offset ``after - 1``."""
    pos = after_line(text, max(after - 1, 0)) if after > 0 else 0
    body = "".join(line + "\n" for line in lines)
    if pos == len(text) and text and not text.endswith("\n"):
        body = "\n" + body
    return TextEdit(TextRange(pos, pos), body)


def delete_lines(text: str, start: int, end: int) -> TextEdit | None:
    """Delete the lines from the one holding ``start`` to the one holding ``end`` (where
    the content ends), when ``start`` is the first non-blank character of its line."""
    ls = line_start(text, start)
    if text[ls:start].strip():
        return None
    return TextEdit(TextRange(ls, after_line(text, max(end - 1, start))), "")


def yaml_scalar(value: object) -> str:
    """``value`` as a YAML scalar that reads back as the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    if PLAIN_SAFE.match(s) and s.lower() not in _YAML11_WORDS:
        return s
    return json.dumps(s, ensure_ascii=False)


def ws_edit(path: Path, *edits: TextEdit) -> WorkspaceEdit:
    return WorkspaceEdit({path: tuple(edits)})


def inside(inner: TextRange, outer: TextRange) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


def inside_line_comment(text: str, offset: int) -> bool:
    """Whether ``offset`` falls after a `#` comment start on its line (an insertion
    there would be commented out)."""
    before = text[line_start(text, offset) : offset]
    return bool(re.search(r"(?:^|\s)#", before))


def reindent(lines: list[str], delta: int) -> list[str]:
    """``lines`` shifted right by ``delta`` columns (left when negative; blank lines stay)."""
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
        elif delta >= 0:
            out.append(" " * delta + line)
        else:
            pad = len(line) - len(line.lstrip(" "))
            out.append(line[min(pad, -delta) :])
    return out


def one_edit(text: str, edits: list[TextEdit]) -> TextEdit:
    """One edit doing all of ``edits`` (none overlapping; an insertion may touch a
    deletion), from the first to the last place they change."""
    ordered = sorted(edits, key=lambda e: (e.range.start, e.range.end))
    new = text
    for e in reversed(ordered):
        new = new[: e.range.start] + e.new_text + new[e.range.end :]
    lo = ordered[0].range.start
    hi = max(e.range.end for e in ordered)
    return TextEdit(TextRange(lo, hi), new[lo : len(new) - (len(text) - hi)])


def entry_lines(text: str, mapping: YMap, key: YScalar, after: int) -> tuple[int, int] | None:
    """The whole lines of the entry at ``key`` of the block ``mapping``: with the comment
    lines right above it at its column (after the entry before it, else after offset
    ``after``; a comment indented deeper ends the entry before), its value and a comment
    on its last line. None when something else starts the key's line."""
    index = next((i for i, (k, _) in enumerate(mapping.items) if k is key), None)
    if index is None:
        return None
    floor = content_end(text, mapping.items[index - 1][1]) if index else after
    start = line_start(text, key.range.start)
    pad = text[start : key.range.start]
    if pad.strip():
        return None
    while start > 0:
        above = line_start(text, start - 1)
        if above < floor or not text[above : start - 1].startswith(pad + "#"):
            break
        start = above
    end = after_line(text, max(content_end(text, mapping.items[index][1]), key.range.end) - 1)
    return start, end


def drop_section_key(text: str, key: YScalar, first: bool, end: int) -> tuple[TextEdit, int]:
    """The removal of the line of ``key``, a section the fix leaves empty (whose last
    entry's lines end at ``end``; ``first``: the first entry of its mapping): a comment on
    the line stays, as a line of its own at the key's column, and one run of the blank
    lines that set the section apart goes with it (:func:`drop_separator`). Returns the
    edit, and where the removal of the entry's lines should end."""
    ls, le = line_start(text, key.range.start), after_line(text, key.range.start)
    note = re.search(r"\s#.*", text[key.range.end : le])
    keep = f"{' ' * column(text, key.range.start)}{note.group(0).strip()}\n" if note else ""
    ls, end = drop_separator(text, ls, end, first)
    return TextEdit(TextRange(ls, le), keep), end


def drop_separator(text: str, start: int, end: int, first: bool) -> tuple[int, int]:
    """A section that goes (its lines from ``start`` to ``end``) takes one run of the
    blank lines that set it apart with it: those above when blank lines (or the end of the
    file) follow too, those below when it is the first entry of its mapping; else none,
    so that what was apart stays apart."""
    above = blank_lines_before(text, start)
    below = blank_lines_after(text, end)
    if above < start and (below > end or below == len(text)):
        return above, end
    if first:
        return start, below
    return start, end


def blank_lines_before(text: str, start: int) -> int:
    """The start of the blank lines right above the line starting at ``start``."""
    while start > 0:
        prev = line_start(text, start - 1)
        if text[prev:start].strip():
            break
        start = prev
    return start


def blank_lines_after(text: str, start: int) -> int:
    """The end of the blank lines from the line starting at ``start``."""
    while start < len(text):
        nxt = after_line(text, start)
        if text[start:nxt].strip():
            break
        start = nxt
    return start


def indent_unit(text: str, root: YNode | None) -> int:
    """The file's indentation step (the first nested mapping's offset), 2 by default."""
    if isinstance(root, YMap):
        for k, v in root.items:
            if isinstance(v, YMap) and v.items and not is_flow(text, v):
                step = column(text, v.items[0][0].range.start) - column(text, k.range.start)
                if step > 0:
                    return step
    return 2


def field_block(name: str, lines: Iterable[str], indent: int, unit: int) -> list[str]:
    pad = " " * indent
    return [f"{pad}{name}:", *(f"{pad}{' ' * unit}{line}" for line in lines)]


def attr_step(text: str, section: YMap, unit: int) -> int:
    for k, v in section.items:
        if isinstance(v, YMap) and v.items and not is_flow(text, v):
            step = column(text, v.items[0][0].range.start) - column(text, k.range.start)
            if step > 0:
                return step
    return unit


def declare_skill_field(
    sk: Skill, name: str, scope: Scope, lines: list[str]
) -> WorkspaceEdit | None:
    """Insert ``name:`` with attribute ``lines`` under ``schema: <scope>:`` of the skill's
    memory.yml (creating the sections, or the file, when missing)."""
    pf = sk.memory
    if pf is None:
        body = ["schema:", f"  {scope}:", *field_block(name, lines, 4, 2)]
        return WorkspaceEdit(new_files={sk.dir / "memory.yml": "".join(x + "\n" for x in body)})
    md = pf.doc if isinstance(pf.doc, MemoryDoc) else None
    text = pf.text
    if md is None or not pf.source.analyzable:
        return None
    root = md.root
    unit = indent_unit(text, root)
    if root is None or (isinstance(root, YScalar) and root.is_null):
        body = ["schema:", f"{' ' * unit}{scope}:", *field_block(name, lines, 2 * unit, unit)]
        return ws_edit(pf.path, insert_lines(text, len(text), body))
    if not isinstance(root, YMap) or is_flow(text, root):
        return None
    schema_key = root.key_node("schema")
    schema = root.get("schema")
    if schema_key is None:
        body = ["schema:", f"{' ' * unit}{scope}:", *field_block(name, lines, 2 * unit, unit)]
        return ws_edit(pf.path, insert_lines(text, len(text), body))
    base = column(text, schema_key.range.start)
    if isinstance(schema, YScalar) and schema.is_null:
        body = [f"{' ' * (base + unit)}{scope}:", *field_block(name, lines, base + 2 * unit, unit)]
        return ws_edit(pf.path, insert_lines(text, schema_key.range.end, body))
    if not isinstance(schema, YMap) or is_flow(text, schema) or not schema.items:
        return None
    sec_col = column(text, schema.items[0][0].range.start)
    section_key = schema.key_node(scope)
    section = schema.get(scope)
    if section_key is None:
        body = [f"{' ' * sec_col}{scope}:", *field_block(name, lines, sec_col + unit, unit)]
        private = schema.key_node("private")
        if scope == "public" and private is not None:
            pos = line_start(text, private.range.start)
            return ws_edit(pf.path, TextEdit(TextRange(pos, pos), "".join(b + "\n" for b in body)))
        return ws_edit(pf.path, insert_lines(text, content_end(text, schema), body))
    if isinstance(section, YScalar) and section.is_null:
        block = field_block(name, lines, sec_col + unit, unit)
        return ws_edit(pf.path, insert_lines(text, section_key.range.end, block))
    if not isinstance(section, YMap) or is_flow(text, section) or not section.items:
        return None
    col = column(text, section.items[0][0].range.start)
    block = field_block(name, lines, col, attr_step(text, section, unit))
    return ws_edit(pf.path, insert_lines(text, content_end(text, section), block))


def make_field_public(sk: Skill, name: str) -> WorkspaceEdit | None:
    """Move the private field ``name`` of ``sk`` from ``schema: private:`` to ``public:``
    (created before ``private:`` when missing; ``private:`` itself goes when it held only
    this field, or is renamed to ``public:`` when there was none). The field's lines move
    whole — the comment lines right above it, its attributes, block scalars and trailing
    comments — re-indented to the column of the public fields. None for flow mappings,
    a name declared more than once, or a file that does not parse; the edited file is
    parsed back and must declare the same field, public, and the others as before."""
    pf = sk.memory
    md = pf.doc if pf is not None and isinstance(pf.doc, MemoryDoc) else None
    if pf is None or md is None or not pf.source.analyzable:
        return None
    decls = md.declarations(name)
    if len(decls) != 1 or decls[0].scope != "private" or not isinstance(decls[0].node, YMap):
        return None
    f = decls[0]
    text = pf.text
    root = md.root
    schema = root.get("schema") if isinstance(root, YMap) else None
    if not isinstance(root, YMap) or not isinstance(schema, YMap):
        return None
    priv_key, priv = schema.key_node("private"), schema.get("private")
    pub_key, pub = schema.key_node("public"), schema.get("public")
    if priv_key is None or not isinstance(priv, YMap):
        return None
    flows: list[YNode] = [root, schema, priv, decls[0].node]
    if isinstance(pub, YMap):
        flows.append(pub)
    if any(is_flow(text, n) for n in flows):
        return None
    span = entry_lines(text, priv, f.key, priv_key.range.end)
    if span is None:
        return None
    start, end = span
    lines = text[start:end].splitlines()
    only = len(priv.items) == 1
    edits: list[TextEdit] = []
    if pub_key is None and only:
        edits.append(TextEdit(priv_key.range, "public"))  # the section changes its name
    else:
        field_col = column(text, f.key.range.start)
        priv_col = column(text, priv_key.range.start)
        if isinstance(pub, YMap) and pub.items:
            col = column(text, pub.items[0][0].range.start)
            at = content_end(text, pub)
        elif pub_key is not None and isinstance(pub, YScalar) and pub.range.length == 0:
            col = field_col - priv_col + column(text, pub_key.range.start)
            at = pub_key.range.end
        elif pub_key is None:
            col, at = field_col, -1
        else:
            return None
        moved = reindent(lines, col - field_col)
        if at < 0:  # a new `public:` section before `private:`
            pos = line_start(text, priv_key.range.start)
            body = [" " * priv_col + "public:", *moved]
            edits.append(TextEdit(TextRange(pos, pos), "".join(x + "\n" for x in body)))
        else:
            edits.append(insert_lines(text, at, moved))
        if only:  # an empty `private:` fails to load: it goes
            gone, end = drop_section_key(text, priv_key, schema.items[0][0] is priv_key, end)
            edits.append(gone)
        edits.append(TextEdit(TextRange(start, end), ""))
    edit = one_edit(text, edits)
    after = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
    check = parse_memory_yml(after, "skill")
    now = check.declarations(name)
    if (
        (md.loads and not check.loads)
        or len(now) != 1
        or now[0].scope != "public"
        or to_python(now[0].node) != to_python(f.node)
        or [(x.name, x.scope) for x in check.fields if x.name != name]
        != [(x.name, x.scope) for x in md.fields if x.name != name]
    ):
        return None
    return ws_edit(pf.path, edit)


def declare_project_field(project: Project, name: str, lines: list[str]) -> WorkspaceEdit | None:
    """Insert ``name:`` with attribute ``lines`` at the end of the project memory.yml
    (creating the file when missing)."""
    pf = project.file_of_kind(FileKind.PROJECT_MEMORY)
    if pf is None:
        body = field_block(name, lines, 0, 2)
        return WorkspaceEdit(
            new_files={project.root / "memory.yml": "".join(x + "\n" for x in body)}
        )
    md = pf.doc if isinstance(pf.doc, MemoryDoc) else None
    text = pf.text
    if md is None or not pf.source.analyzable:
        return None
    root = md.root
    if root is None or (isinstance(root, YScalar) and root.is_null):
        return ws_edit(pf.path, insert_lines(text, len(text), field_block(name, lines, 0, 2)))
    if not isinstance(root, YMap) or is_flow(text, root) or not root.items:
        return None
    col = column(text, root.items[0][0].range.start)
    block = field_block(name, lines, col, attr_step(text, root, 2))
    return ws_edit(pf.path, insert_lines(text, content_end(text, root), block))
