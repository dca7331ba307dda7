"""Code actions: quick fixes for the diagnostics the editor shows in a range.

Plain data in (the project, a file, a range and the diagnostics of that range), plain data
out (:class:`CodeAction` with a :class:`~mantle_lsp.ide.types.WorkspaceEdit`). A fix reads
what it needs from the diagnostic's ``data`` (the name written and the one meant, the
replacement, the type compared with), which the rule that made the diagnostic attached,
and from the model (the index, the parsed files and their YAML trees); never from the
message text.

Edits insert or delete whole lines of YAML and never re-dump a file, so comments and
formatting elsewhere stay untouched.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..model.files import parse_file
from ..model.layout import FileKind, inside
from ..model.project import ParsedFile, Project, Skill
from ..model.semantics import Semantics, writes
from ..model.source import source_from_text
from ..model.symbols import Reference, SymbolKey, content_range
from ..syntax.conditions import (
    BoolOpExpr,
    CompareExpr,
    Expr,
    LiteralExpr,
    MemoryRef,
    NotExpr,
    RefExpr,
    parse_condition,
)
from ..syntax.config_tables import LEGACY_PROMPT_KEYS
from ..syntax.config_yml import AgentDoc, parse_agent_yml
from ..syntax.errors import C_LEGACY
from ..syntax.memory_yml import MemoryDoc, MemoryField, Scope, parse_memory_yml
from ..syntax.responses_yml import ResponsesDoc
from ..syntax.sites import ConditionSite
from ..syntax.skill_md import FRONTMATTER_KEYS, SkillDoc
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq, to_python
from .codes import REGISTRY
from .diagnostics import Diagnostic
from .suppression import MARK, find_suppressions
from .types import TextEdit, WorkspaceEdit

ActionKind = Literal["quickfix", "refactor.rewrite", "source", "source.fixAll.mantle"]


@dataclass(frozen=True)
class NameFix:
    """What a fix decides about a name the project does not declare (for fixing many
    findings at once, ide/fixes.py): ``to`` None — it declares ``name``, guessing the
    declaration from its uses; else it changes the mention of ``name`` to ``to`` (a "did you
    mean")."""

    name: SymbolKey
    to: SymbolKey | None = None


@dataclass(frozen=True)
class CodeAction:
    title: str
    kind: ActionKind
    edit: WorkspaceEdit
    diagnostic_codes: tuple[str, ...] = ()
    preferred: bool = False
    # Safe: the edit keeps what the author evidently meant and deletes no comment, so
    # `mantle-lsp check --fix` applies it unasked (docs/cli.md#fixes lists the decisions);
    # the others (a guessed name, type or target, placeholder text) need --unsafe-fixes.
    safe: bool = False
    # Writes an inline suppression instead of fixing: never chosen by a fix-all or `check
    # --fix`, never listed as a help line.
    suppresses: bool = False
    # The name the fix declares or replaces by another (None: it fixes no name).
    name: NameFix | None = None


# Diagnostics about a memory field that no memory.yml declares (a declaration fixes them).
DECLARE_CODES = frozenset(
    {
        "mantle.validation.prose.unknown_memory_key",
        "mantle.validation.response.unknown_memory_key",
        "mantle.validation.execute_step.unknown_memory_key",
        "mantle.validation.prose.unknown_memory_reference",
        "mantle.validation.memory.undeclared_entry",
        "mantle.validation.tools.undeclared_memory_write",
        "lsp.condition.unknown_memory_key",
        "lsp.responses.unknown_placeholder",
        "lsp.tools.undeclared_memory_write",
        "lsp.tools.unknown_memory_read",
    }
)
C_SESSION_IN_PROSE = "mantle.validation.prose.session_reference_in_instructions"
C_MISSING_ELSE = "mantle.validation.flow.next_missing_else"
C_UNRESOLVED_NEXT = "mantle.validation.flow.unresolved_next"
C_DESC_NOT_EXPOSED = "mantle.validation.memory.description_not_exposed"
C_DESC_REQUIRED = "mantle.validation.memory.description_required"
C_PROJECT_LLM = "mantle.validation.memory.project_llm_settable"
C_SKILL_SEED = "mantle.validation.memory.skill_seed"
C_UNKNOWN_ATTR = "lsp.memory.unknown_attribute"
C_FORCE = "skill.step.outdated_force_collection"
C_ENUM_VALUE = "lsp.condition.enum_value"
C_TYPE_MISMATCH = "lsp.condition.type_mismatch"
C_BARE_MENTION = "skill.prose.bare_skill_mention"
C_UNKNOWN_FM_KEY = "skill.markdown.unknown_frontmatter_key"
C_UNKNOWN_TOP = "lsp.memory.unknown_top_level_key"
C_UNKNOWN_PARAM = "lsp.tools.unknown_parameter"
C_MISSING_PARAM = "lsp.tools.missing_parameter"
C_LIST_OUTSIDE_SCOPE = "lsp.prose.list_outside_scope"

# Files where `# mantle-lsp: ignore[…]` works (skill.md: its frontmatter and block bodies)
_SUPPRESSIBLE = frozenset(
    {
        FileKind.AGENT,
        FileKind.INTEGRATIONS,
        FileKind.PROJECT_MEMORY,
        FileKind.PROJECT_RESPONSES,
        FileKind.SKILL_MEMORY,
        FileKind.SKILL_RESPONSES,
        FileKind.SKILL_TOOLS,
        FileKind.SHARED_TOOLS,
        FileKind.HOOKS,
        FileKind.SKILL_MD,
    }
)
_PLAIN_SAFE = re.compile(r"[A-Za-z_][\w-]*(?: [\w-]+)*\Z")
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


@dataclass(frozen=True)
class ConfigFile:
    """The project's configuration file as the editor has it (``path`` None: there is
    none; ``text`` None: it cannot be read), for "Ignore … in this file"."""

    path: Path | None
    text: str | None = None


def code_actions(
    project: Project,
    path: Path,
    rng: TextRange,
    diagnostics: list[Diagnostic],
    suppressions: bool = True,
    config: ConfigFile | None = None,
) -> list[CodeAction]:
    """The code actions for ``rng`` in ``path``; ``diagnostics`` are the diagnostics the
    editor shows there (others are ignored). Without ``suppressions``, no "Ignore …
    here" (a fix-all never takes one: it need not re-read the file to place it). With
    ``config``, a warning (or hint) in skill.md prose, which has no inline form, gets
    "Ignore … in this file": it adds the code to the configuration's ``per-file-ignores``."""
    pf = project.files.get(path)
    if pf is None:
        return []
    fixer = _Fixer(project, pf)
    out: list[CodeAction] = []
    seen: set[tuple[str, str]] = set()
    ignores: list[CodeAction] = []
    for d in diagnostics:
        if d.path != path:
            continue
        ignore = ignore_here(pf, d) if suppressions else None
        # in prose, not for an error: the engine refuses the skill whatever the editor shows
        prose = pf.kind is FileKind.SKILL_MD and d.severity != "error"
        if ignore is None and suppressions and config and prose:
            ignore = ignore_in_file(project, config, path, d.code)
        if ignore is not None:
            ignores.append(ignore)
        for action in fixer.fixes(d):
            if not _stays_inside(project, action.edit):
                continue  # e.g. a skill folder that is a symlink to elsewhere
            key = (action.title, repr(sorted(action.edit.edits.items())))
            if key not in seen:
                seen.add(key)
                out.append(action)
    out.sort(key=lambda a: not a.preferred)  # stable: preferred fixes first
    for action in ignores:  # after every fix: silencing is the last resort
        key = (action.title, repr(sorted(action.edit.edits.items())))
        if key not in seen:
            seen.add(key)
            out.append(action)
    return out


_PFI = "per-file-ignores"
_TOOL_PFI_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*(?:"mantle-lsp"|'mantle-lsp'|mantle-lsp)[ \t]*\.[ \t]*"""
    r"""(?:"per-file-ignores"|'per-file-ignores'|per-file-ignores)[ \t]*\][ \t]*(?:#.*)?$""",
    re.M,
)
_PFI_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*(?:"per-file-ignores"|'per-file-ignores'|per-file-ignores)[ \t]*\]"""
    r"""[ \t]*(?:#.*)?$""",
    re.M,
)
_TOML_ENTRY = re.compile(
    r"""^[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[A-Za-z0-9_-]+)[ \t]*=[ \t]*(.*)$""", re.M
)


def ignore_in_file(
    project: Project, config: ConfigFile, path: Path, code: str
) -> CodeAction | None:
    """ "Ignore `CODE` in this file": ``"<path>" = ["CODE"]`` under the configuration's
    ``per-file-ignores`` (added to the file's entry, to the table, or in a new table; a
    new ``mantle-lsp.toml`` at the project root when there is no configuration). None
    when the file is written in a way this cannot edit safely (an inline table, an entry
    over several lines, a file that is not valid TOML)."""
    if code not in REGISTRY or code.startswith("lsp.suppression."):
        return None  # an unknown code makes the configuration invalid
    cfg = config.path if config.path is not None else project.root / "mantle-lsp.toml"
    try:
        glob = path.relative_to(cfg.parent).as_posix()
    except ValueError:
        return None
    if any(c in glob for c in '*?[]!\\"\n') or "/" not in glob:
        return None
    entry = f"{json.dumps(glob)} = [{json.dumps(code)}]"
    pyproject = cfg.name == "pyproject.toml"
    header = "[tool.mantle-lsp.per-file-ignores]" if pyproject else "[per-file-ignores]"
    title = f"Ignore `{code}` in this file ({cfg.name} per-file-ignores)"
    if config.path is None:
        created = WorkspaceEdit(new_files={cfg: f"{header}\n{entry}\n"})
        return CodeAction(title, "quickfix", created, (code,), suppresses=True)
    text = config.text
    if text is None or not _pfi_lists(text, pyproject, glob, code, present=False):
        return None
    edit = _pfi_edit(text, pyproject, glob, code, f"{header}\n{entry}\n")
    if edit is None:
        return None
    after = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
    if not _pfi_lists(after, pyproject, glob, code, present=True):
        return None
    return CodeAction(title, "quickfix", _ws_edit(cfg, edit), (code,), suppresses=True)


def _pfi_edit(text: str, pyproject: bool, glob: str, code: str, table: str) -> TextEdit | None:
    """The edit adding ``code`` for ``glob``: to its entry, as a new entry at the end of
    the per-file-ignores table, or ``table`` (header and entry) at the end of the file."""
    entry = table.splitlines()[1]
    found = (_TOOL_PFI_HEADER if pyproject else _PFI_HEADER).search(text)
    if found is None:
        if _PFI in text:
            return None  # an inline table or a dotted key: leave it to the author
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return TextEdit(TextRange(len(text), len(text)), sep + table)
    body_start = _after_line(text, found.end())
    nxt = re.compile(r"^[ \t]*\[", re.M).search(text, body_start)
    body_end = nxt.start() if nxt else len(text)
    for m in _TOML_ENTRY.finditer(text, body_start, body_end):
        key = m.group(1)
        name = json.loads(key) if key.startswith('"') else key.strip("'")
        if name != glob:
            continue
        value = m.group(2)
        close = value.rfind("]")
        if not value.startswith("[") or close < 0:
            return None  # over several lines: leave it to the author
        inner = value[1:close].strip().rstrip(",").strip()
        at = m.start(2) + close
        return TextEdit(TextRange(at, at), f", {json.dumps(code)}" if inner else json.dumps(code))
    last = found.end()  # after the table's last line that is neither blank nor a comment
    for line in re.finditer(r"^[ \t]*[^\s#].*$", text[body_start:body_end], re.M):
        last = body_start + line.end()
    return _insert_lines(text, last, [entry])


def _pfi_lists(text: str, pyproject: bool, glob: str, code: str, present: bool) -> bool:
    """Whether ``text`` is valid TOML whose per-file-ignores lists ``code`` for ``glob``
    (with ``present``) or does not yet (without)."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # nested too deeply for the parser
        return False
    table: object = data
    for key in (["tool", "mantle-lsp"] if pyproject else []) + [_PFI]:
        table = table.get(key, {}) if isinstance(table, dict) else None
    if not isinstance(table, dict):
        return False
    codes = table.get(glob, [])
    listed = isinstance(codes, list) and code in codes
    return listed if present else not listed


def ignore_here(pf: ParsedFile, d: Diagnostic) -> CodeAction | None:
    """ "Ignore `CODE` here": ``# mantle-lsp: ignore[CODE]`` at the end of the diagnostic's
    first line, added to the suppression already there, or alone on the line above when
    the line cannot take a comment; None where no comment can silence it (skill.md prose,
    inside a block scalar or a multi-line string). Each candidate is checked by reading
    the edited file's suppressions back."""
    code = d.code
    if code not in REGISTRY or code.startswith("lsp.suppression.") or not pf.source.analyzable:
        return None  # an unknown code in a suppression is itself reported
    if pf.kind not in _SUPPRESSIBLE:
        return None
    text = pf.text
    if d.range.start > len(text):
        return None
    row = text.count("\n", 0, d.range.start)
    sups, bad_before = find_suppressions(pf)
    candidates: list[tuple[TextEdit, int]] = []
    for sup in sups:
        if sup.line == row and all(c != code for c, _ in sup.codes):
            close = sup.comment.end - 1
            candidates.append((TextEdit(TextRange(close, close), f", {code}"), row))
    start = _line_start(text, d.range.start)
    eol = text.find("\n", start)
    eol = len(text) if eol < 0 else eol
    line = text[start:eol]
    end = start + len(line.rstrip())
    comment = f"{MARK} ignore[{code}]"
    if line.strip():
        candidates.append((TextEdit(TextRange(end, eol), f"  # {comment}"), row))
    pad = line[: len(line) - len(line.lstrip())]
    candidates.append((TextEdit(TextRange(start, start), f"{pad}# {comment}\n"), row + 1))
    for edit, target in candidates:
        new_text = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
        new_pf = parse_file(pf.path, pf.kind, pf.skill_id, source_from_text(pf.path, new_text))
        found, bad = find_suppressions(new_pf)
        if len(bad) > len(bad_before):
            continue
        if any(s.line == target and any(c == code for c, _ in s.codes) for s in found):
            return CodeAction(
                f"Ignore `{code}` here",
                "quickfix",
                _ws_edit(pf.path, edit),
                (code,),
                suppresses=True,
            )
    return None


def _stays_inside(project: Project, edit: WorkspaceEdit) -> bool:
    paths = [*edit.edits, *edit.new_files, *(p for pair in edit.renames for p in pair)]
    return all(inside(project.root, p) for p in paths)


# ---------------------------------------------------------------------------------------
# Text helpers


_IF_LINE = re.compile(r"\s*if:")  # a line that starts a prose condition


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _after_line(text: str, offset: int) -> int:
    """The offset just after the line break ending the line of ``offset`` (or the end)."""
    nl = text.find("\n", offset)
    return len(text) if nl == -1 else nl + 1


def _column(text: str, offset: int) -> int:
    return offset - _line_start(text, offset)


def _is_flow(text: str, node: YNode) -> bool:
    return text[node.range.start : node.range.start + 1] in ("{", "[")


def _content_end(text: str, node: YNode | None) -> int:
    """The end of the last character that belongs to ``node`` (block mappings and block
    scalars end at the next token in the YAML tree; this trims them)."""
    if node is None:
        return 0
    if isinstance(node, YScalar):
        end = node.range.end
        while end > node.range.start and text[end - 1] in " \t\n":
            end -= 1
        return end
    if _is_flow(text, node):
        return node.range.end
    if isinstance(node, YMap) and node.items:
        k, v = node.items[-1]
        return max(_content_end(text, k), _content_end(text, v))
    if isinstance(node, YSeq) and node.items:
        return _content_end(text, node.items[-1])
    return node.range.start


def _insert_lines(text: str, after: int, lines: list[str]) -> TextEdit:
    """Insert whole lines after the line holding offset ``after - 1``."""
    pos = _after_line(text, max(after - 1, 0)) if after > 0 else 0
    body = "".join(line + "\n" for line in lines)
    if pos == len(text) and text and not text.endswith("\n"):
        body = "\n" + body
    return TextEdit(TextRange(pos, pos), body)


def _delete_lines(text: str, start: int, content_end: int) -> TextEdit | None:
    """Delete the lines from the one holding ``start`` to the one holding ``content_end``,
    when ``start`` is the first non-blank character of its line."""
    ls = _line_start(text, start)
    if text[ls:start].strip():
        return None
    return TextEdit(TextRange(ls, _after_line(text, max(content_end - 1, start))), "")


def yaml_scalar(value: object) -> str:
    """``value`` as a YAML scalar that reads back as the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    if _PLAIN_SAFE.match(s) and s.lower() not in _YAML11_WORDS:
        return s
    return json.dumps(s, ensure_ascii=False)


def _ws_edit(path: Path, *edits: TextEdit) -> WorkspaceEdit:
    return WorkspaceEdit({path: tuple(edits)})


def _inside(inner: TextRange, outer: TextRange) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


# ---------------------------------------------------------------------------------------
# Type guesses for a new field


@dataclass
class _Usage:
    literals: list[object] = field(default_factory=list)
    truthy: bool = False


def _walk_usage(expr: Expr, ns: str, entry: str, use: _Usage, boolean: bool) -> None:
    def is_ref(e: Expr) -> bool:
        return isinstance(e, RefExpr) and e.ref.namespace == ns and e.ref.entry == entry

    if isinstance(expr, RefExpr):
        if boolean and is_ref(expr):
            use.truthy = True
    elif isinstance(expr, NotExpr):
        _walk_usage(expr.operand, ns, entry, use, True)
    elif isinstance(expr, BoolOpExpr):
        for o in expr.operands:
            _walk_usage(o, ns, entry, use, True)
    elif isinstance(expr, CompareExpr):
        chain = [expr.left, *expr.comparators]
        for a, b in itertools.pairwise(chain):
            for x, y in ((a, b), (b, a)):
                if is_ref(x) and isinstance(y, LiteralExpr) and y.kind != "none":
                    use.literals.append(y.value)


def _compares(expr: Expr) -> Iterator[CompareExpr]:
    stack = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, CompareExpr):
            yield cur
            stack.extend([cur.left, *cur.comparators])
        elif isinstance(cur, NotExpr):
            stack.append(cur.operand)
        elif isinstance(cur, BoolOpExpr):
            stack.extend(cur.operands)


def _literal_of_text(value: str) -> object:
    v = value.strip()
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def guess_type(project: Project, key: SymbolKey) -> tuple[str, list[object]]:
    """(type, enum values) for a new field, from how the project uses ``key``."""
    ns, entry = key[1], key[2]
    use = _Usage()
    for ref in project.index.references_to(key):
        if ref.site is not None:
            parsed = parse_condition(ref.site.text)
            if parsed.tree is not None:
                _walk_usage(parsed.tree, ns, entry, use, True)
        elif ref.form == "set_memory":
            value = _set_memory_value(project, ref)
            if isinstance(value, YScalar) and value.value is not None:
                use.literals.append(value.value)
        elif ref.form == "set_payload":
            pf = project.files.get(ref.path)
            if pf is not None and isinstance(pf.doc, ResponsesDoc):
                for r in pf.doc.responses:
                    for var in r.variants:
                        for b in var.buttons:
                            sp = b.set_payload
                            if sp is not None and sp.entry_range == ref.range:
                                use.literals.append(_literal_of_text(sp.value))
    lits = use.literals
    if lits and all(isinstance(v, bool) for v in lits):
        return "bool", []
    if lits and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in lits):
        return ("float" if any(isinstance(v, float) for v in lits) else "int"), []
    if lits and all(isinstance(v, str) for v in lits):
        values = list(dict.fromkeys(lits))
        return ("categorical", values) if len(values) >= 2 else ("text", [])
    if not lits and use.truthy:
        return "bool", []
    return "text", []


def _set_memory_value(project: Project, ref: Reference) -> YNode | None:
    pf = project.files.get(ref.path)
    doc = pf.doc if pf else None
    if not isinstance(doc, SkillDoc):
        return None
    for _, st in doc.steps():
        sm = st.get("set_memory")
        if isinstance(sm, YMap):
            for k, v in sm.pairs():
                if content_range(k) == ref.range:
                    return v
    return None


# ---------------------------------------------------------------------------------------
# The fixes


class _Fixer:
    def __init__(self, project: Project, pf: ParsedFile) -> None:
        self.p = project
        self.pf = pf
        self.path = pf.path
        self.text = pf.text

    def fixes(self, d: Diagnostic) -> Iterator[CodeAction]:
        code = d.code
        if code in DECLARE_CODES:
            yield from self.declare(d)
            yield from self.make_public(d)
        if code == C_SESSION_IN_PROSE:
            yield from self.session_to_memory(d)
        if code == C_MISSING_ELSE:
            yield from self.add_else(d)
        if code == C_DESC_NOT_EXPOSED:
            yield from self.description_not_exposed(d)
        if code == C_DESC_REQUIRED:
            yield from self.add_description(d)
        if code in (C_PROJECT_LLM, C_SKILL_SEED):
            yield from self.remove_attribute(d)
        if code in (C_LEGACY, C_UNKNOWN_ATTR, C_FORCE):
            yield from self.rename_key(d)
        if code == C_LEGACY:
            yield from self.legacy_prompt(d)
        if code == C_UNKNOWN_ATTR:
            yield from self.remove_unknown_attribute(d)
        if code == C_BARE_MENTION:
            yield from self.wrap_mention(d)
        if code == C_LIST_OUTSIDE_SCOPE:
            yield from self.scope_list(d)
        if code == C_UNKNOWN_FM_KEY:
            yield from self.constraints_to_prose(d)
        if code in (C_UNKNOWN_FM_KEY, C_LEGACY, C_UNKNOWN_TOP):
            yield from self.remove_ignored_key(d)
        data = d.data or {}
        if code == C_UNKNOWN_PARAM:
            yield from self.rename_parameter(d)
            return
        if code == C_MISSING_PARAM:
            yield from self.add_parameters(d)
            return
        if code == C_ENUM_VALUE:
            yield from self.enum_value(d)
        elif code == C_TYPE_MISMATCH:
            yield from self.literal_type(d)
        elif isinstance(data.get("replace_with"), str):
            yield from self.replace_with(d, data["replace_with"])
        elif isinstance(data.get("meant"), str):
            # `end` → `END` has only one reading: safe; any other guess is not
            yield from self.change_to(d, data["meant"], safe=bool(data.get("only_reading")))

    def action(
        self,
        title: str,
        d: Diagnostic,
        edit: WorkspaceEdit,
        preferred: bool = False,
        safe: bool = False,
        name: NameFix | None = None,
    ) -> CodeAction:
        return CodeAction(title, "quickfix", edit, (d.code,), preferred, safe, name=name)

    # -- did you mean -----------------------------------------------------------------
    def replace_with(self, d: Diagnostic, value: str) -> Iterator[CodeAction]:
        """Replace the diagnostic's whole range (memory.yml `name: text` → `{type: text}`)."""
        key = self.text[_line_start(self.text, d.range.start) : d.range.start].strip()
        edit = _ws_edit(self.path, TextEdit(d.range, value))
        yield self.action(f"Change to `{key} {value}`", d, edit, preferred=True)

    def change_to(self, d: Diagnostic, suggestion: str, safe: bool = False) -> Iterator[CodeAction]:
        found = self.wrong_name_range(d, suggestion)
        if found is None:
            return
        target, key = found
        name = NameFix(key, (*key[:-1], suggestion)) if key else None
        edit = _ws_edit(self.path, TextEdit(target, suggestion))
        yield self.action(
            f"Change to `{suggestion}`", d, edit, preferred=True, safe=safe, name=name
        )

    def wrong_name_range(
        self, d: Diagnostic, suggestion: str
    ) -> tuple[TextRange, SymbolKey | None] | None:
        """The range of the misspelt name inside the diagnostic's range, and the name it
        stands for (a symbol key whose last part is the name written; None when the name
        is no reference)."""
        text = self.text
        refs = [
            r
            for r in self.p.index.references_in(self.path)
            if _inside(r.range, d.range) and not r.soft
        ]
        cands: dict[TextRange, SymbolKey | None] = {}
        for r in refs:
            if r.key[0] == "field":
                ns = r.key[1]
                if ns in ("project", "system") or self.p.has_skill(ns):
                    cands.setdefault(r.range, r.key)
                else:  # the namespace is the wrong segment
                    for n in refs:
                        if n.form == "namespace" and n.key == ("skill", ns):
                            cands.setdefault(n.range, n.key)
            elif r.form != "namespace":
                cands.setdefault(r.range, r.key)
        wrong = (d.data or {}).get("wrong")
        if not cands and isinstance(wrong, str) and wrong != suggestion:
            body = text[d.range.start : d.range.end]
            for hit in re.finditer(rf"(?<![\w.-]){re.escape(wrong)}(?![\w-])", body):
                hit_range = TextRange(d.range.start + hit.start(), d.range.start + hit.end())
                cands.setdefault(hit_range, None)
        ranges = [c for c in cands if text[c.start : c.end] != suggestion]
        if not ranges:
            return None

        def score(c: TextRange) -> float:
            return difflib.SequenceMatcher(None, text[c.start : c.end], suggestion).ratio()

        best = max(ranges, key=score)
        key = cands[best]
        if key is not None and key[-1] != text[best.start : best.end]:
            key = None  # the mention is not the name's last part: no name to follow
        return best, key

    # -- literals in conditions ------------------------------------------------------------
    def compared_literal(
        self, rng: TextRange
    ) -> tuple[LiteralExpr, MemoryRef, ConditionSite] | None:
        """The literal at exactly ``rng`` in a condition, and the reference it is compared
        with."""
        sites = {id(r.site): r.site for r in self.p.index.references_in(self.path) if r.site}
        for site in sites.values():
            parsed = site.parsed
            if parsed.tree is None:
                continue
            for cmp in _compares(parsed.tree):
                chain = [cmp.left, *cmp.comparators]
                for a, b in itertools.pairwise(chain):
                    for x, y in ((a, b), (b, a)):
                        if (
                            isinstance(x, RefExpr)
                            and isinstance(y, LiteralExpr)
                            and site.file_range(y.range.start, y.range.end) == rng
                        ):
                            return y, x.ref, site
        return None

    def enum_value(self, d: Diagnostic) -> Iterator[CodeAction]:
        hit = self.compared_literal(d.range)
        if hit is None or hit[0].kind != "str":
            return
        lit, ref, site = hit
        f = Semantics(self.p).declaration(self.pf.skill_id, ref.namespace, ref.entry)
        if f is None:
            return
        values = [str(v) for v in f.enum_values]
        inner = site.file_range(lit.range.start + 1, lit.range.end - 1)
        if self.text[inner.start : inner.end] != lit.value:
            return  # an escape or a prefix inside the literal: leave it to the author
        best = difflib.get_close_matches(str(lit.value), values, n=1, cutoff=0.6)
        ordered = best + [v for v in values if v not in best]
        for v in ordered[:12]:
            if any(c in v for c in "'\"\\\n"):
                continue
            edit = _ws_edit(self.path, TextEdit(inner, v))
            yield self.action(f"Change to `{v}`", d, edit, preferred=v in best)
        add = self.add_enum_value(f, ref, str(lit.value))
        if add is not None:
            where = "" if ref.namespace == "project" else f"skills/{ref.namespace}/"
            title = f"Add `{lit.value}` to enum_values of `{f.name}` ({where}memory.yml)"
            yield self.action(title, d, add)

    def add_enum_value(self, f: MemoryField, ref: MemoryRef, value: str) -> WorkspaceEdit | None:
        """``value`` appended to ``f``'s ``enum_values`` list, written like its items (flow
        or block list, the quotes the items use)."""
        if ref.namespace == "project":
            pf = self.p.file_of_kind(FileKind.PROJECT_MEMORY)
        else:
            sk = self.p.skill(ref.namespace)
            pf = sk.memory if sk is not None else None
        seq = f.attrs.get("enum_values")
        if pf is None or not pf.source.analyzable or not isinstance(seq, YSeq) or not value:
            return None
        text = pf.text
        items = [i for i in seq.items if isinstance(i, YScalar)]
        if len(items) != len(seq.items):
            return None
        quotes = [i.style for i in items if i.style in ("'", '"')]
        if quotes and "\n" not in value:
            q = quotes[-1] or "'"
            written = q + (value.replace("'", "''") if q == "'" else json.dumps(value)[1:-1]) + q
        else:
            written = yaml_scalar(value)
        if _is_flow(text, seq):
            if not items:
                close = text.rfind("]", seq.range.start, seq.range.end)
                if close < 0:
                    return None
                return _ws_edit(pf.path, TextEdit(TextRange(close, close), written))
            end = items[-1].range.end
            return _ws_edit(pf.path, TextEdit(TextRange(end, end), f", {written}"))
        if not items:
            return None
        last = items[-1]
        dash = text.rfind("-", 0, last.range.start)
        if dash < 0 or text[_line_start(text, dash) : dash].strip():
            return None
        pad = " " * _column(text, dash)
        line = f"{pad}- {written}"
        return _ws_edit(pf.path, _insert_lines(text, _content_end(text, last), [line]))

    def literal_type(self, d: Diagnostic) -> Iterator[CodeAction]:
        hit = self.compared_literal(d.range)
        if hit is None:
            return
        lit = hit[0]
        if lit.kind != "str" or not isinstance(lit.value, str):
            return
        field_type = (d.data or {}).get("field_type")
        if field_type == "bool":
            low = lit.value.strip().lower()
            new = {"true": "True", "yes": "True", "1": "True"}.get(low)
            new = new or {"false": "False", "no": "False", "0": "False"}.get(low)
        else:
            number = _literal_of_text(lit.value)
            ok = isinstance(number, (int, float)) and not isinstance(number, bool)
            new = str(number) if ok and field_type == "number" else None
        if new is not None:
            edit = _ws_edit(self.path, TextEdit(d.range, new))
            yield self.action(f"Change to `{new}`", d, edit, preferred=True)

    # -- execute_tool parameters -------------------------------------------------------------
    def rename_parameter(self, d: Diagnostic) -> Iterator[CodeAction]:
        """`sauce:` → `source:` (data: the tool, the parameter written, the one meant)."""
        data = d.data or {}
        param, meant = data.get("param"), data.get("meant")
        if not isinstance(param, str) or not isinstance(meant, str) or param == meant:
            return
        written = self.text[d.range.start : d.range.end]
        if written == param:
            target = d.range
        elif written[:1] in ("'", '"') and written[1:-1] == param:
            target = TextRange(d.range.start + 1, d.range.end - 1)
        else:
            return  # an escape inside the key: leave it to the author
        edit = _ws_edit(self.path, TextEdit(target, meant))
        yield self.action(f"Change to `{meant}`", d, edit, preferred=True)

    def add_parameters(self, d: Diagnostic) -> Iterator[CodeAction]:
        """Give each missing parameter under `parameters:`: the field of that name when
        this skill (or the project) has one, else a `TODO` the author replaces."""
        missing = (d.data or {}).get("missing")
        doc = self.pf.doc
        if not isinstance(missing, list) or not missing or not isinstance(doc, SkillDoc):
            return
        if not all(isinstance(m, str) and _PLAIN_SAFE.match(m) for m in missing):
            return
        text = self.text
        step = None
        for _, st in doc.steps():
            node = st.node
            if not isinstance(node, YMap) or _is_flow(text, node):
                continue
            if any(k.range == d.range or (k.value == "execute_tool" and v.range == d.range)
                   for k, v in node.pairs()):  # fmt: skip
                step = node
                break
        if step is None:
            return
        sid = self.pf.skill_id
        sk = self.p.skill(sid) if sid else None
        sem = Semantics(self.p)
        lines: list[tuple[str, str]] = []
        for m in missing:
            target = sem.step_write_target(sk, m)
            ns = {"skill": sid, "project": "project"}.get(target or "")
            lines.append((m, f"session.{ns}.{m}" if ns else "TODO"))
        params_key = step.key_node("parameters")
        params = step.get("parameters")
        edit: TextEdit | None = None
        if params_key is None:
            tool_key = step.key_node("execute_tool")
            if tool_key is None:
                return
            col = _column(text, tool_key.range.start)
            body = [f"{' ' * col}parameters:", *(f"{' ' * (col + 2)}{k}: {v}" for k, v in lines)]
            edit = _insert_lines(text, _content_end(text, step.get("execute_tool")), body)
        elif isinstance(params, YScalar) and params.is_null:
            col = _column(text, params_key.range.start) + 2
            body = [f"{' ' * col}{k}: {v}" for k, v in lines]
            edit = _insert_lines(text, params_key.range.end, body)
        elif isinstance(params, YMap) and params.items:
            if _is_flow(text, params):
                close = params.range.end - 1
                if text[close] != "}":
                    return
                added = "".join(f", {k}: {v}" for k, v in lines)
                edit = TextEdit(TextRange(close, close), added)
            else:
                col = _column(text, params.items[0][0].range.start)
                body = [f"{' ' * col}{k}: {v}" for k, v in lines]
                edit = _insert_lines(text, _content_end(text, params), body)
        if edit is None or _inside_line_comment(text, edit.range.start):
            return
        names = ", ".join(f"`{m}`" for m in missing)
        yield self.action(f"Add {names} under `parameters`", d, _ws_edit(self.path, edit))

    # -- keys the engine refuses or ignores ---------------------------------------------------
    def remove_ignored_key(self, d: Diagnostic) -> Iterator[CodeAction]:
        """`id:` / `engine:` / `license:` … in the frontmatter, `id:` in a block's YAML,
        `access:` or an unknown scalar key in memory.yml: remove the key (all its lines).
        Only keys with a scalar value (and `access:`, which has no effect): a mapping under
        a misspelt key holds declarations a removal would lose."""
        text = self.text
        doc = self.pf.doc
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
            if _is_flow(text, mapping) or len(mapping.items) < 2:
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
                rm = _delete_lines(text, k.range.start, max(_content_end(text, v), k.range.end))
                if rm is None:
                    return
                # `id: <the id it has anyway>` says nothing: removing it is safe
                same = name == "id" and isinstance(v, YScalar) and v.value == own_id
                safe = same and "#" not in text[rm.range.start : rm.range.end]
                edit = _ws_edit(self.path, rm)
                yield self.action(f"Remove `{name}`", d, edit, preferred=True, safe=safe)
                return

    # -- frontmatter `constraints:` (3.20) -----------------------------------------------
    def constraints_to_prose(self, d: Diagnostic) -> Iterator[CodeAction]:
        """Each `- text: <rule>` becomes a bullet at the top of the prose body, and the key
        goes (3.21 refuses to load a skill with it)."""
        doc = self.pf.doc
        text = self.text
        if not isinstance(doc, SkillDoc) or doc.frontmatter is None:
            return
        if doc.frontmatter_range is None:
            return
        hit = next(((k, v) for k, v in doc.frontmatter.pairs() if k.range == d.range), None)
        if hit is None or hit[0].value != "constraints":
            return
        k, v = hit
        if _is_flow(text, doc.frontmatter):
            return
        rules = _constraint_texts(v)
        if rules is None:
            return
        rm = _delete_lines(text, k.range.start, max(_content_end(text, v), k.range.end))
        if rm is None:
            return
        tail = text[max(_content_end(text, v), k.range.end) : rm.range.end].strip()
        if tail and not tail.startswith("#"):
            return
        at = _after_line(text, doc.frontmatter_range.end)
        bullets = "".join(f"- {r}\n" for r in rules)
        if bullets and at < len(text) and text[at : _after_line(text, at)].strip():
            bullets += "\n"  # its own paragraph: the rules apply whatever follows
        if bullets and at == len(text) and not text.endswith("\n"):
            bullets = "\n" + bullets
        edits = [rm] + ([TextEdit(TextRange(at, at), bullets)] if bullets else [])
        safe = "#" not in text[rm.range.start : rm.range.end]
        title = "Move the constraints into the prose" if rules else "Remove `constraints:`"
        yield self.action(title, d, _ws_edit(self.path, *edits), preferred=True, safe=safe)

    # -- a skill id as a plain word --------------------------------------------------------
    def wrap_mention(self, d: Diagnostic) -> Iterator[CodeAction]:
        name = self.text[d.range.start : d.range.end]
        target = self.p.skill(name)
        if target is None or (target.doc is not None and target.doc.hidden):
            return  # `@skill.` of a hidden skill is an error
        new = f"@skill.{name}"
        # the model then may switch to that skill: a change of behaviour, never unasked
        yield self.action(f"Change to `{new}`", d, _ws_edit(self.path, TextEdit(d.range, new)))

    # -- a list that falls out of the `if:` scope announcing it ---------------------------
    def scope_list(self, d: Diagnostic) -> Iterator[CodeAction]:
        """An `if:` line with the announcing paragraph's condition above each list
        paragraph: the engine then shows the list exactly when it shows the paragraph, and
        the text it shows does not change."""
        from .rules.prose import leaking_lists

        cond = (d.data or {}).get("condition")
        sk = self.p.skill(self.pf.skill_id) if self.pf.skill_id else None
        doc = sk.doc if sk is not None else None
        if not isinstance(cond, str) or not cond or doc is None or doc.text != self.text:
            return
        for intro, run in leaking_lists(doc):
            first = run[0].body_range
            if intro.condition != cond or first is None or first.start != d.range.start:
                continue
            edits = []
            for para in run:
                content = (para.body_range or para.range).start
                line = self.text.rfind("\n", 0, content) + 1
                # from the paragraph's start: a whitespace-only first line (two blank
                # lines in a row) would hide the `if:` from the engine, so it goes
                edits.append(TextEdit(TextRange(para.range.start, line), f"if: {cond}\n"))
            what = "this list" if len(run) == 1 else "each paragraph of this list"
            # the model then sees the list only under the condition: never unasked
            yield self.action(
                f"Scope {what} under the same condition (`if: {cond}`)",
                d,
                _ws_edit(self.path, *edits),
                preferred=True,
            )

    # -- session.a.b in prose ------------------------------------------------------------
    def session_to_memory(self, d: Diagnostic) -> Iterator[CodeAction]:
        written = self.text[d.range.start : d.range.end]
        if not written.startswith("session."):
            return
        new = "@memory." + written[len("session.") :]
        edit = _ws_edit(self.path, TextEdit(d.range, new))
        # on a line starting `if:`, a condition was probably meant (the blank line that
        # starts a prose condition is missing): inserting the value is then a guess
        index = self.pf.source.index  # not a search back: a huge line has thousands
        start = index.line_start(index.line_of(d.range.start))
        safe = _IF_LINE.match(self.text, start, d.range.start) is None
        yield self.action(f"Change to `{new}`", d, edit, preferred=True, safe=safe)

    # -- declare a field -----------------------------------------------------------------
    def declare(self, d: Diagnostic) -> Iterator[CodeAction]:
        sid = self.pf.skill_id
        for ref in self.p.index.references_in(self.path):
            if ref.key[0] != "field" or not _inside(ref.range, d.range) or ref.soft:
                continue
            ns, entry = ref.key[1], ref.key[2]
            if "." in entry:
                continue  # `set_memory: {card.reason: …}` is not a field name
            if ns == "project":
                if self.p.project_field(entry) is not None:
                    continue
                edit = declare_project_field(self.p, entry, self.field_lines(ref.key, None))
                if edit is not None:
                    title = f"Declare `{entry}` in memory.yml (project)"
                    yield self.action(title, d, edit, name=NameFix(ref.key))
                continue
            sk = self.p.skill(ns)
            if sk is None or sk.field(entry) is not None:
                continue
            if ns != sid and writes(ref):
                continue  # a skill may not write another skill's field: declaring won't help
            scopes: list[Scope] = ["private", "public"] if ns == sid else ["public"]
            if ns == sid and self.read_elsewhere(ref.key, sid):
                scopes = ["public"]
            for scope in scopes:
                edit = declare_skill_field(sk, entry, scope, self.field_lines(ref.key, sk))
                if edit is not None:
                    title = f"Declare `{entry}` in skills/{ns}/memory.yml ({scope})"
                    yield self.action(title, d, edit, name=NameFix(ref.key))

    def make_public(self, d: Diagnostic) -> Iterator[CodeAction]:
        """Another skill's private field read here (data ``why: private``): move its
        declaration from ``private:`` to ``public:`` in that skill's memory.yml. Not for a
        write (a button ``set:``): a skill may not write another skill's field, public or
        not. Unsafe: every other skill may then read the field (private may be on purpose,
        for PII say)."""
        data = d.data or {}
        key = data.get("key")
        if data.get("why") != "private" or not isinstance(key, list) or len(key) != 2:
            return
        ns, entry = key
        if not isinstance(ns, str) or not isinstance(entry, str):
            return
        for ref in self.p.index.references_in(self.path):
            here = ref.key == ("field", ns, entry) and _inside(ref.range, d.range)
            if here and writes(ref):
                return
        sk = self.p.skill(ns)
        edit = make_field_public(sk, entry) if sk is not None else None
        if edit is not None:
            yield self.action(f"Make `{entry}` public in skills/{ns}/memory.yml", d, edit)

    def read_elsewhere(self, key: SymbolKey, sid: str) -> bool:
        return any(r.skill != sid for r in self.p.index.references_to(key))

    def field_lines(self, key: SymbolKey, sk: Skill | None) -> list[str]:
        ftype, values = guess_type(self.p, key)
        lines = [f"type: {ftype}"]
        if values:
            lines.append(f"enum_values: [{', '.join(yaml_scalar(v) for v in values)}]")
        if sk is not None and _collected_without_description(Semantics(self.p), sk, key[2]):
            lines.append(f"description: TODO describe {key[2]}")
        return lines

    # -- next: branches without else -------------------------------------------------------
    def add_else(self, d: Diagnostic) -> Iterator[CodeAction]:
        doc = self.pf.doc
        if not isinstance(doc, SkillDoc):
            return
        text = self.text
        for blk in doc.blocks:
            for i, st in enumerate(blk.steps):
                if not isinstance(st.node, YMap):
                    continue
                nk = st.node.key_node("next")
                if nk is None or nk.range != d.range:
                    continue
                seq = st.next_node
                if not isinstance(seq, YSeq) or not seq.items or _is_flow(text, seq):
                    return
                dash = text.rfind("-", 0, seq.items[0].range.start)
                indent = " " * _column(text, dash)
                following = blk.steps[i + 1].id if i + 1 < len(blk.steps) else None
                target = following or "END"
                edit = _insert_lines(text, _content_end(text, seq), [f"{indent}- else: {target}"])
                title = f"Add `- else: {target}` as the last branch"
                yield self.action(title, d, _ws_edit(self.path, edit), preferred=True)
                return

    # -- memory.yml attributes ---------------------------------------------------------------
    def memdoc(self) -> MemoryDoc | None:
        doc = self.pf.doc
        return doc if isinstance(doc, MemoryDoc) else None

    def attribute_at(self, rng: TextRange) -> tuple[MemoryField, str] | None:
        md = self.memdoc()
        if md is None:
            return None
        for f in md.fields:
            for attr, k in f.attr_keys.items():
                if k.range == rng:
                    return f, attr
        return None

    def remove_attr_edit(self, f: MemoryField, attr: str) -> TextEdit | None:
        k = f.attr_keys[attr]
        if not isinstance(f.node, YMap) or _is_flow(self.text, f.node):
            return None
        if len(f.attrs) == 1 and self.pf.kind is FileKind.SKILL_MEMORY:
            return None  # `name:` with nothing after it fails to load in a skill
        return _delete_lines(self.text, k.range.start, _content_end(self.text, f.attrs[attr]))

    def description_not_exposed(self, d: Diagnostic) -> Iterator[CodeAction]:
        hit = self.attribute_at(d.range)
        if hit is None:
            return
        f = hit[0]
        edit = self.description_to_comment(f)
        if edit is not None:
            # a project field's description has one reading (a note for the reader); a
            # skill field's may also mean "let the model set it"
            project = self.pf.kind is FileKind.PROJECT_MEMORY
            title = "Turn the description into a comment"
            action = self.action(title, d, _ws_edit(self.path, edit), project, project)
            yield action
        if self.pf.kind is FileKind.SKILL_MEMORY:
            edit = self.set_attribute(f, "llm_settable", "true")
            if edit is not None:
                yield self.action(f"Make `{f.name}` llm_settable", d, _ws_edit(self.path, edit))

    def description_to_comment(self, f: MemoryField) -> TextEdit | None:
        """Replace ``description: …`` (all its lines) by comment lines holding its text,
        at the column of the attribute."""
        text = self.text
        k, v = f.attr_keys["description"], f.attrs["description"]
        if not isinstance(f.node, YMap) or _is_flow(text, f.node) or not isinstance(v, YScalar):
            return None
        if len(f.attrs) == 1 and self.pf.kind is FileKind.SKILL_MEMORY:
            return None  # `name:` with nothing after it fails to load in a skill
        end = _content_end(text, v)
        rm = _delete_lines(text, k.range.start, end)
        if rm is None:
            return None
        tail = text[end : rm.range.end].strip()
        if tail and not tail.startswith("#"):
            return None  # something else follows on the last line
        pad = " " * _column(text, k.range.start)
        lines = [f"{pad}# {line}".rstrip() for line in _description_lines(text, v)]
        if v.style in ("|", ">"):  # a comment after the `>` / `|` header stays too
            header = text[v.range.start : _after_line(text, v.range.start)]
            note = re.search(r"\s#.*", header)
            if note is not None:
                lines.append(f"{pad}{note.group(0).strip()}")
        if tail:
            lines.append(f"{pad}{tail}")
        return TextEdit(rm.range, "".join(line + "\n" for line in lines))

    def add_description(self, d: Diagnostic) -> Iterator[CodeAction]:
        md = self.memdoc()
        if md is None:
            return
        f = next((f for f in md.fields if f.key.range == d.range), None)
        if f is None:
            return
        edit = self.set_attribute(f, "description", f"TODO describe {f.name}")
        if edit is not None:
            yield self.action("Add a description", d, _ws_edit(self.path, edit))

    def set_attribute(self, f: MemoryField, attr: str, value: str) -> TextEdit | None:
        """Set ``attr`` of ``f`` to ``value`` (replacing a scalar value, or adding a line)."""
        text = self.text
        node = f.node
        if attr in f.attrs:
            v = f.attrs[attr]
            if not isinstance(v, YScalar):
                return None
            if v.range.length == 0:  # `attr:` with nothing after it
                return TextEdit(v.range, " " + value)
            return TextEdit(v.range, value)
        if not isinstance(node, YMap) or not node.items:
            return None
        if _is_flow(text, node):
            close = node.range.end - 1
            if text[close] != "}":
                return None
            sep = ", " if node.items else ""
            return TextEdit(TextRange(close, close), f"{sep}{attr}: {value}")
        indent = " " * _column(text, node.items[0][0].range.start)
        return _insert_lines(text, _content_end(text, node), [f"{indent}{attr}: {value}"])

    def remove_attribute(self, d: Diagnostic) -> Iterator[CodeAction]:
        hit = self.attribute_at(d.range)
        if hit is None:
            return
        f, attr = hit
        rm = self.remove_attr_edit(f, attr)
        if rm is not None:
            # the attribute cannot take effect (the engine refuses it): removing it keeps
            # the meaning, unless the lines removed hold a comment
            safe = "#" not in self.text[rm.range.start : rm.range.end]
            edit = _ws_edit(self.path, rm)
            yield self.action(f"Remove `{attr}`", d, edit, preferred=True, safe=safe)

    def remove_unknown_attribute(self, d: Diagnostic) -> Iterator[CodeAction]:
        """`correctable: true`, `required:`, … : the engine ignores them."""
        hit = self.attribute_at(d.range)
        if hit is None:
            return
        f, attr = hit
        rm = self.remove_attr_edit(f, attr)
        if rm is None:
            return
        # removing what the engine ignores keeps the meaning; not when a known attribute
        # was probably meant (a typo: "did you mean") or a comment would go with it
        meant = isinstance((d.data or {}).get("meant"), str)
        safe = not meant and "#" not in self.text[rm.range.start : rm.range.end]
        edit = _ws_edit(self.path, rm)
        yield self.action(f"Remove `{attr}`", d, edit, preferred=not meant, safe=safe)

    # -- legacy attribute / key names -----------------------------------------------------
    def rename_key(self, d: Diagnostic) -> Iterator[CodeAction]:
        written = self.text[d.range.start : d.range.end]
        renames = {"enum": "enum_values", "force_collection": "ask_before_filling"}
        new = renames.get(written)
        if new is None:
            return
        if new == "enum_values" and self.memdoc() is None:
            return
        edit = _ws_edit(self.path, TextEdit(d.range, new))
        # force_collection's documented replacement means the same; `enum:` restricted
        # nothing, `enum_values:` does: a change of behaviour
        safe = new == "ask_before_filling"
        yield self.action(f"Rename `{written}` to `{new}`", d, edit, preferred=True, safe=safe)

    # -- agent.yml `prompts.ack_enabled` / `prompts.ack_rule` (3.20) -------------------------
    def legacy_prompt(self, d: Diagnostic) -> Iterator[CodeAction]:
        """Move `prompts.ack_enabled` to `fillers.enabled`, `prompts.ack_rule` to
        `fillers.instructions` (3.21 reads only those; `fillers.instructions` is the rule of
        the acknowledgement section, empty for the built-in one, exactly what `ack_rule`
        was). Only a boolean `ack_enabled` and a string `ack_rule` (the values the new
        keys take as they are). When `fillers` already sets the key, it decides: the legacy
        key can only be removed. Unsafe either way: the engine ignores the legacy key
        today, so moving it changes what the agent does (acknowledgements start or stop),
        and removing it loses what it says."""
        doc = self.pf.doc
        text = self.text
        if not isinstance(doc, AgentDoc) or doc.root is None or _is_flow(text, doc.root):
            return
        root = doc.root
        prompts_key, prompts = root.key_node("prompts"), root.get("prompts")
        if prompts_key is None or not isinstance(prompts, YMap) or _is_flow(text, prompts):
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
        span = _entry_lines(text, prompts, k, prompts_key.range.end)
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
                col = _column(text, k.range.start)
                added = self.fillers_entry(root, prompts_key, col, lines, attr, v)
                if added is None:
                    return
                edits.append(added)
            if only:  # `prompts:` with nothing under it is an error: it goes
                gone, end = _drop_section_key(
                    text, prompts_key, root.items[0][0] is prompts_key, end
                )
                edits.append(gone)
            edits.append(TextEdit(TextRange(start, end), ""))
        edit = _one_edit(text, edits)
        after = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
        if not _moved_to_fillers(doc, after, legacy, attr, v if move else None):
            return
        yield self.action(title, d, _ws_edit(self.path, edit), preferred=True)

    def fillers_entry(
        self, root: YMap, prompts_key: YScalar, key_col: int, lines: list[str], attr: str,
        value: YScalar,
    ) -> TextEdit | None:  # fmt: skip
        """The insertion of ``lines`` (the entry ``attr: …``, at column ``key_col``) into
        `fillers:`: at the end of its block, into a `{…}` (a one-line value), under an
        empty `fillers:`, or as a new `fillers:` section right before `prompts:`."""
        text = self.text
        fillers_key, fillers = root.key_node("fillers"), root.get("fillers")
        if isinstance(fillers, YMap) and _is_flow(text, fillers):
            close = fillers.range.end - 1
            raw = text[value.range.start : value.range.end]
            if text[close] != "}" or "\n" in raw or "#" in "".join(lines):
                return None
            sep = ", " if fillers.items else ""
            return TextEdit(TextRange(close, close), f"{sep}{attr}: {raw}")
        if isinstance(fillers, YMap) and fillers.items:
            col = _column(text, fillers.items[0][0].range.start)
            return _insert_lines(text, _content_end(text, fillers), _reindent(lines, col - key_col))
        if fillers_key is not None:
            if not (isinstance(fillers, YScalar) and fillers.range.length == 0):
                return None  # `fillers: ~` or another value: left to the author
            base = _column(text, fillers_key.range.start)
            delta = base - _column(text, prompts_key.range.start)
            return _insert_lines(text, fillers_key.range.end, _reindent(lines, delta))
        pos = _line_start(text, prompts_key.range.start)
        head = " " * _column(text, prompts_key.range.start) + "fillers:"
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


def _inside_line_comment(text: str, offset: int) -> bool:
    """Whether ``offset`` falls after a `#` comment start on its line (an insertion
    there would be commented out)."""
    before = text[_line_start(text, offset) : offset]
    return bool(re.search(r"(?:^|\s)#", before))


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


def _description_lines(text: str, v: YScalar) -> list[str]:
    """The lines of a description's text as the author wrote them: a block scalar's lines
    without their common indentation, a plain scalar's lines stripped, a quoted one's
    value."""
    if v.style in ("|", ">"):
        body = text[v.range.start : _content_end(text, v)].split("\n")[1:]
        width = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
        lines = [x[width:].rstrip() for x in body]
    elif v.style is None:
        lines = [x.strip() for x in text[v.range.start : _content_end(text, v)].split("\n")]
    else:
        lines = [x.strip() for x in str(v.value or "").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines or [""]


def _collected_without_description(sem: Semantics, sk: Skill, name: str) -> bool:
    """A collect step fills ``name`` and the last one (the one that counts) has no
    description."""
    mine = sem.collect_steps(sk).get(name)
    if not mine:
        return False
    desc = mine[-1].str_field("description")
    return not (desc and desc[0].strip())


# ---------------------------------------------------------------------------------------
# Declaring fields in memory.yml


def _indent_unit(text: str, root: YNode | None) -> int:
    """The file's indentation step (the first nested mapping's offset), 2 by default."""
    if isinstance(root, YMap):
        for k, v in root.items:
            if isinstance(v, YMap) and v.items and not _is_flow(text, v):
                step = _column(text, v.items[0][0].range.start) - _column(text, k.range.start)
                if step > 0:
                    return step
    return 2


def _field_block(name: str, lines: Iterable[str], indent: int, unit: int) -> list[str]:
    pad = " " * indent
    return [f"{pad}{name}:", *(f"{pad}{' ' * unit}{line}" for line in lines)]


def _attr_step(text: str, section: YMap, unit: int) -> int:
    for k, v in section.items:
        if isinstance(v, YMap) and v.items and not _is_flow(text, v):
            step = _column(text, v.items[0][0].range.start) - _column(text, k.range.start)
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
        body = ["schema:", f"  {scope}:", *_field_block(name, lines, 4, 2)]
        return WorkspaceEdit(new_files={sk.dir / "memory.yml": "".join(x + "\n" for x in body)})
    md = pf.doc if isinstance(pf.doc, MemoryDoc) else None
    text = pf.text
    if md is None or not pf.source.analyzable:
        return None
    root = md.root
    unit = _indent_unit(text, root)
    if root is None or (isinstance(root, YScalar) and root.is_null):
        body = ["schema:", f"{' ' * unit}{scope}:", *_field_block(name, lines, 2 * unit, unit)]
        return _ws_edit(pf.path, _insert_lines(text, len(text), body))
    if not isinstance(root, YMap) or _is_flow(text, root):
        return None
    schema_key = root.key_node("schema")
    schema = root.get("schema")
    if schema_key is None:
        body = ["schema:", f"{' ' * unit}{scope}:", *_field_block(name, lines, 2 * unit, unit)]
        return _ws_edit(pf.path, _insert_lines(text, len(text), body))
    base = _column(text, schema_key.range.start)
    if isinstance(schema, YScalar) and schema.is_null:
        body = [f"{' ' * (base + unit)}{scope}:", *_field_block(name, lines, base + 2 * unit, unit)]
        return _ws_edit(pf.path, _insert_lines(text, schema_key.range.end, body))
    if not isinstance(schema, YMap) or _is_flow(text, schema) or not schema.items:
        return None
    sec_col = _column(text, schema.items[0][0].range.start)
    section_key = schema.key_node(scope)
    section = schema.get(scope)
    if section_key is None:
        body = [f"{' ' * sec_col}{scope}:", *_field_block(name, lines, sec_col + unit, unit)]
        private = schema.key_node("private")
        if scope == "public" and private is not None:
            pos = _line_start(text, private.range.start)
            return _ws_edit(pf.path, TextEdit(TextRange(pos, pos), "".join(b + "\n" for b in body)))
        return _ws_edit(pf.path, _insert_lines(text, _content_end(text, schema), body))
    if isinstance(section, YScalar) and section.is_null:
        block = _field_block(name, lines, sec_col + unit, unit)
        return _ws_edit(pf.path, _insert_lines(text, section_key.range.end, block))
    if not isinstance(section, YMap) or _is_flow(text, section) or not section.items:
        return None
    col = _column(text, section.items[0][0].range.start)
    block = _field_block(name, lines, col, _attr_step(text, section, unit))
    return _ws_edit(pf.path, _insert_lines(text, _content_end(text, section), block))


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
    if any(_is_flow(text, n) for n in flows):
        return None
    span = _entry_lines(text, priv, f.key, priv_key.range.end)
    if span is None:
        return None
    start, end = span
    lines = text[start:end].splitlines()
    only = len(priv.items) == 1
    edits: list[TextEdit] = []
    if pub_key is None and only:
        edits.append(TextEdit(priv_key.range, "public"))  # the section changes its name
    else:
        field_col = _column(text, f.key.range.start)
        priv_col = _column(text, priv_key.range.start)
        if isinstance(pub, YMap) and pub.items:
            col = _column(text, pub.items[0][0].range.start)
            at = _content_end(text, pub)
        elif pub_key is not None and isinstance(pub, YScalar) and pub.range.length == 0:
            col = field_col - priv_col + _column(text, pub_key.range.start)
            at = pub_key.range.end
        elif pub_key is None:
            col, at = field_col, -1
        else:
            return None
        moved = _reindent(lines, col - field_col)
        if at < 0:  # a new `public:` section before `private:`
            pos = _line_start(text, priv_key.range.start)
            body = [" " * priv_col + "public:", *moved]
            edits.append(TextEdit(TextRange(pos, pos), "".join(x + "\n" for x in body)))
        else:
            edits.append(_insert_lines(text, at, moved))
        if only:  # an empty `private:` fails to load: it goes
            gone, end = _drop_section_key(text, priv_key, schema.items[0][0] is priv_key, end)
            edits.append(gone)
        edits.append(TextEdit(TextRange(start, end), ""))
    edit = _one_edit(text, edits)
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
    return _ws_edit(pf.path, edit)


def _entry_lines(text: str, mapping: YMap, key: YScalar, after: int) -> tuple[int, int] | None:
    """The whole lines of the entry at ``key`` of the block ``mapping``: with the comment
    lines right above it at its column (after the entry before it, else after offset
    ``after``; a comment indented deeper ends the entry before), its value and a comment
    on its last line. None when something else starts the key's line."""
    index = next((i for i, (k, _) in enumerate(mapping.items) if k is key), None)
    if index is None:
        return None
    floor = _content_end(text, mapping.items[index - 1][1]) if index else after
    start = _line_start(text, key.range.start)
    pad = text[start : key.range.start]
    if pad.strip():
        return None
    while start > 0:
        above = _line_start(text, start - 1)
        if above < floor or not text[above : start - 1].startswith(pad + "#"):
            break
        start = above
    end = _after_line(text, max(_content_end(text, mapping.items[index][1]), key.range.end) - 1)
    return start, end


def _drop_section_key(text: str, key: YScalar, first: bool, end: int) -> tuple[TextEdit, int]:
    """The removal of the line of ``key``, a section the fix leaves empty (whose last
    entry's lines end at ``end``; ``first``: the first entry of its mapping): a comment on
    the line stays, as a line of its own at the key's column, and one run of the blank
    lines that set the section apart goes with it (:func:`_drop_separator`). Returns the
    edit, and where the removal of the entry's lines should end."""
    ls, le = _line_start(text, key.range.start), _after_line(text, key.range.start)
    note = re.search(r"\s#.*", text[key.range.end : le])
    keep = f"{' ' * _column(text, key.range.start)}{note.group(0).strip()}\n" if note else ""
    ls, end = _drop_separator(text, ls, end, first)
    return TextEdit(TextRange(ls, le), keep), end


def _drop_separator(text: str, start: int, end: int, first: bool) -> tuple[int, int]:
    """A section that goes (its lines from ``start`` to ``end``) takes one run of the
    blank lines that set it apart with it: those above when blank lines (or the end of the
    file) follow too, those below when it is the first entry of its mapping; else none,
    so that what was apart stays apart."""
    above = _blank_lines_before(text, start)
    below = _blank_lines_after(text, end)
    if above < start and (below > end or below == len(text)):
        return above, end
    if first:
        return start, below
    return start, end


def _blank_lines_before(text: str, line_start: int) -> int:
    """The start of the blank lines right above the line starting at ``line_start``."""
    while line_start > 0:
        prev = _line_start(text, line_start - 1)
        if text[prev:line_start].strip():
            break
        line_start = prev
    return line_start


def _blank_lines_after(text: str, line_start: int) -> int:
    """The end of the blank lines from the line starting at ``line_start``."""
    while line_start < len(text):
        nxt = _after_line(text, line_start)
        if text[line_start:nxt].strip():
            break
        line_start = nxt
    return line_start


def _reindent(lines: list[str], delta: int) -> list[str]:
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


def _one_edit(text: str, edits: list[TextEdit]) -> TextEdit:
    """One edit doing all of ``edits`` (none overlapping; an insertion may touch a
    deletion), from the first to the last place they change."""
    ordered = sorted(edits, key=lambda e: (e.range.start, e.range.end))
    new = text
    for e in reversed(ordered):
        new = new[: e.range.start] + e.new_text + new[e.range.end :]
    lo = ordered[0].range.start
    hi = max(e.range.end for e in ordered)
    return TextEdit(TextRange(lo, hi), new[lo : len(new) - (len(text) - hi)])


def declare_project_field(project: Project, name: str, lines: list[str]) -> WorkspaceEdit | None:
    """Insert ``name:`` with attribute ``lines`` at the end of the project memory.yml
    (creating the file when missing)."""
    pf = project.file_of_kind(FileKind.PROJECT_MEMORY)
    if pf is None:
        body = _field_block(name, lines, 0, 2)
        return WorkspaceEdit(
            new_files={project.root / "memory.yml": "".join(x + "\n" for x in body)}
        )
    md = pf.doc if isinstance(pf.doc, MemoryDoc) else None
    text = pf.text
    if md is None or not pf.source.analyzable:
        return None
    root = md.root
    if root is None or (isinstance(root, YScalar) and root.is_null):
        return _ws_edit(pf.path, _insert_lines(text, len(text), _field_block(name, lines, 0, 2)))
    if not isinstance(root, YMap) or _is_flow(text, root) or not root.items:
        return None
    col = _column(text, root.items[0][0].range.start)
    block = _field_block(name, lines, col, _attr_step(text, root, 2))
    return _ws_edit(pf.path, _insert_lines(text, _content_end(text, root), block))
