"""Inline suppressions: ``# mantle-lsp: ignore[CODE, …]`` and
``# mantle-lsp: ignore-file[CODE, …]``.

A comment at the end of a YAML or Python line silences those codes (or code prefixes) for
the diagnostics that start on that line; a comment alone on its line silences them on the
next line that is neither blank nor only a comment. ``ignore-file`` silences them in the
whole file, wherever the comment is. In ``skill.md`` the comment works where the file is
YAML: the frontmatter and the bodies of ``:::ordered_block`` fences. Prose has no form:
the engine hands HTML comments to the model verbatim (docs/decisions.md).

A suppression that silenced nothing gets ``lsp.suppression.unused`` (a hint); an unknown
code or a malformed comment gets ``lsp.suppression.invalid`` (a warning).

:func:`apply_suppressions` is applied exactly once to every freshly computed result (the
serial and spread paths of ``check``, and the language server), never to its own output.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..model.files import parse_file
from ..model.layout import FileKind
from ..model.project import ParsedFile, Project
from ..model.settings import code_matches, known_pattern
from ..model.source import source_from_text
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YMap, YNode, YScalar, YSeq, nodes, parse_yaml
from .codes import REGISTRY, info
from .diagnostics import Diagnostic
from .types import TextEdit

MARK = "mantle-lsp:"
UNUSED = "lsp.suppression.unused"
INVALID = "lsp.suppression.invalid"

_COMMENT = re.compile(r"#\s*mantle-lsp:")
_IGNORE = re.compile(r"\s*ignore(-file)?\[([^\]\n]*)\]")
WHOLE_FILE = -1  # the line of an `ignore-file` suppression: every line
_YAML_KINDS = frozenset(
    {
        FileKind.AGENT,
        FileKind.INTEGRATIONS,
        FileKind.PROJECT_MEMORY,
        FileKind.PROJECT_RESPONSES,
        FileKind.SKILL_MEMORY,
        FileKind.SKILL_RESPONSES,
        FileKind.EVAL_CONFTEST,
        FileKind.EVAL_SCENARIO,
    }
)
_PY_KINDS = frozenset({FileKind.SKILL_TOOLS, FileKind.SHARED_TOOLS, FileKind.HOOKS})


@dataclass
class Suppression:
    comment: TextRange  # from `#` to the end of the comment
    line: int  # 0-based line whose diagnostics it silences (WHOLE_FILE: all)
    codes: list[tuple[str, TextRange]] = field(default_factory=list)
    used: set[int] = field(default_factory=set)  # indexes into codes


def _lines(text: str) -> list[int]:
    starts = [0]
    starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")
    return starts


def _scalar_ranges(root: YNode | None) -> list[TextRange]:
    return [n.range for n in nodes(root) if isinstance(n, YScalar)]


def _yaml_comments(text: str, start: int, end: int) -> Iterable[int]:
    """Offsets of the `#` that opens each comment holding the mark in ``text[start:end]``
    (YAML): a `#` at a line start or after a blank, outside every scalar."""
    if MARK not in text[start:end]:
        return []
    root, _ = parse_yaml(text[start:end], base=start)
    scalars = sorted(_scalar_ranges(root))
    starts = [r.start for r in scalars]
    out: list[int] = []
    pos = start
    while pos < end:
        eol = text.find("\n", pos, end)
        eol = end if eol < 0 else eol
        if MARK in text[pos:eol]:
            for k in range(pos, eol):
                if text[k] != "#" or (k > pos and text[k - 1] not in " \t"):
                    continue
                i = bisect.bisect_right(starts, k) - 1
                if i >= 0 and scalars[i].start <= k < scalars[i].end:
                    continue
                out.append(k)
                break
        pos = eol + 1
    return out


def _python_comments(text: str) -> Iterable[int]:
    starts = _lines(text)
    out: list[int] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and MARK in tok.string:
                row, col = tok.start
                out.append(starts[row - 1] + col)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # the comments before the error still count
    return out


def find_suppressions(pf: ParsedFile) -> tuple[list[Suppression], list[tuple[TextRange, str]]]:
    """The suppressions of a file, and its malformed ones (range, why)."""
    text = pf.source.text
    if MARK not in text:
        return [], []
    if pf.kind in _YAML_KINDS:
        hashes = list(_yaml_comments(text, 0, len(text)))
    elif pf.kind in _PY_KINDS:
        hashes = list(_python_comments(text))
    elif pf.kind is FileKind.SKILL_MD:
        doc = pf.doc
        regions = [doc.frontmatter_range] if doc and doc.frontmatter_range else []
        regions += [b.body_range for b in (doc.blocks if doc else ())]
        hashes = [h for r in regions for h in _yaml_comments(text, r.start, r.end)]
    else:
        return [], []
    starts = _lines(text)
    found: list[Suppression] = []
    bad: list[tuple[TextRange, str]] = []
    for h in hashes:
        eol = text.find("\n", h)
        eol = len(text) if eol < 0 else eol
        m = _COMMENT.search(text, h, eol)
        if m is None:
            continue
        row = bisect.bisect_right(starts, h) - 1
        comment = TextRange(m.start(), eol)
        ig = _IGNORE.match(text, m.end(), eol)
        if ig is None:
            expected = "expected `# mantle-lsp: ignore[CODE, …]` or `ignore-file[CODE, …]`"
            bad.append((comment, expected))
            continue
        comment = TextRange(m.start(), ig.end())
        line = row
        if ig.group(1):
            line = WHOLE_FILE
        elif not text[starts[row] : h].strip():  # alone on its line: the next code line
            line = _next_code_line(text, starts, row)
        sup = Suppression(comment, line)
        pos = ig.start(2)
        for part in ig.group(2).split(","):
            code = part.strip()
            if code:
                s = pos + part.index(code)
                sup.codes.append((code, TextRange(s, s + len(code))))
            pos += len(part) + 1
        if not sup.codes:
            bad.append((comment, "the suppression names no code"))
            continue
        found.append(sup)
    return found, bad


def _next_code_line(text: str, starts: list[int], row: int) -> int:
    for r in range(row + 1, len(starts)):
        end = starts[r + 1] - 1 if r + 1 < len(starts) else len(text)
        s = text[starts[r] : end].strip()
        if s and not s.startswith("#"):
            return r
    return row


def apply_suppressions(
    project: Project, found: dict[Path, list[Diagnostic]], paths: Iterable[Path]
) -> dict[Path, list[Diagnostic]]:
    """``found`` (the raw diagnostics of ``paths``, files of ``project``) without what the
    files' suppressions silence, plus the diagnostics of the suppressions themselves."""
    out = found
    for path in paths:
        pf = project.files.get(path)
        if pf is None:
            continue
        try:
            if MARK not in pf.source.text:
                continue
        except OSError:  # a pending file that can no longer be read
            continue
        sups, bad = find_suppressions(pf)
        if sups or bad:
            if out is found:
                out = dict(found)
            out[path] = suppressed(pf, found.get(path, []), sups, bad)
    return out


def suppressed(
    pf: ParsedFile,
    diags: list[Diagnostic],
    sups: list[Suppression],
    bad: list[tuple[TextRange, str]],
) -> list[Diagnostic]:
    """One file's diagnostics once its suppressions (:func:`find_suppressions`) apply."""
    starts = _lines(pf.source.text)
    by_line: dict[int, list[Suppression]] = {}
    for sup in sups:
        by_line.setdefault(sup.line, []).append(sup)
    kept: list[Diagnostic] = []
    whole = by_line.get(WHOLE_FILE, [])
    for d in diags:
        line = bisect.bisect_right(starts, d.range.start) - 1
        hit = False
        for sup in (*by_line.get(line, ()), *whole):
            for i, (code, _) in enumerate(sup.codes):
                if code_matches(d.code, code):
                    sup.used.add(i)
                    hit = True
        if not hit:
            kept.append(d)
    new: list[tuple[TextRange, str, str]] = [
        (rng, INVALID, f"malformed suppression: {why}") for rng, why in bad
    ]
    for sup in sups:
        unknown = {i for i, (c, _) in enumerate(sup.codes) if not known_pattern(c, REGISTRY)}
        for i in sorted(unknown):
            c, r = sup.codes[i]
            new.append((r, INVALID, f"`{c}` is no diagnostic code nor a prefix of one"))
        unused = [i for i in range(len(sup.codes)) if i not in sup.used and i not in unknown]
        if not sup.used and not unknown:
            new.append((sup.comment, UNUSED, "unused suppression: nothing here is reported"))
        else:
            for i in unused:
                c, r = sup.codes[i]
                new.append((r, UNUSED, f"unused suppression: nothing here is reported as `{c}`"))
    kept.extend(Diagnostic(pf.path, r, c, info(c).severity, m) for r, c, m in new)
    kept.sort(key=lambda d: (d.range.start, d.range.end, d.code))
    return kept


# ---------------------------------------------------------------------------------------
# Adding suppressions (`check --add-noqa`)


def add_suppressions(pf: ParsedFile, wanted: dict[int, set[str]]) -> tuple[str, set[int]]:
    """The text of ``pf`` with a suppression for each line of ``wanted`` (0-based line →
    codes of the diagnostics that start there), and the lines that got none.

    A code is added to the suppression that already applies to the line; else a comment
    is appended to the line; else (a line that ends inside a string, a block scalar's
    header, a Python line continued with ``\\``) one is put alone on the line above. Only
    where a comment is a comment: never in a YAML scalar (block scalars included), a
    Python string or skill.md prose. Each edit is checked by parsing the result: the
    file's values (YAML nodes, Python tokens, skill.md prose and fences) must be the same
    and the suppression must apply to its line, else the edit is not made.
    """
    text = pf.source.text
    failed: set[int] = set()
    if not pf.source.analyzable or _regions(pf) is None:
        return text, set(wanted)
    shape = _shape(pf)
    if pf.kind in _PY_KINDS and shape is None:  # no tokens to compare: no comment
        return text, set(wanted)
    for line in sorted(wanted, reverse=True):  # from the end: a line added moves none left
        codes = sorted(wanted[line])
        done = False
        for edit in _candidates(pf, text, line, codes):
            new = text[: edit.range.start] + edit.new_text + text[edit.range.end :]
            npf = parse_file(pf.path, pf.kind, pf.skill_id, source_from_text(pf.path, new))
            if _shape(npf) == shape and _covers(npf, _moved(line, edit, text), codes):
                pf, text, done = npf, new, True
                break
        if not done:
            failed.add(line)
    return text, failed


def _moved(line: int, edit: TextEdit, text: str) -> int:
    """Where ``line`` is once ``edit`` (inserting whole lines above it, or not) is made."""
    if edit.range.start <= _line_start(text, line) and edit.new_text.endswith("\n"):
        return line + edit.new_text.count("\n")
    return line


def _line_start(text: str, line: int) -> int:
    pos = 0
    for _ in range(line):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return pos


def _covers(pf: ParsedFile, line: int, codes: list[str]) -> bool:
    sups, _ = find_suppressions(pf)
    have = {c for s in sups if s.line == line for c, _ in s.codes}
    return all(any(code_matches(c, h) for h in have) for c in codes)


def _regions(pf: ParsedFile) -> list[TextRange] | None:
    """The parts of the file where a `#` comment can be (None: nowhere)."""
    text = pf.source.text
    if pf.kind in _YAML_KINDS or pf.kind in _PY_KINDS:
        return [TextRange(0, len(text))]
    if pf.kind is FileKind.SKILL_MD and pf.doc is not None:
        doc = pf.doc
        out = [doc.frontmatter_range] if doc.frontmatter_range else []
        return out + [b.body_range for b in doc.blocks]
    return None


def _candidates(pf: ParsedFile, text: str, line: int, codes: list[str]) -> list[TextEdit]:
    """The edits that may suppress ``codes`` on ``line``, the best first."""
    starts = _lines(text)
    if line >= len(starts):
        return []
    start = starts[line]
    eol = text.find("\n", start)
    eol = len(text) if eol < 0 else eol
    regions = [r for r in _regions(pf) or [] if r.start <= start and eol <= r.end]
    if not regions:
        return []  # prose, a fence line: no comment form
    if pf.kind not in _PY_KINDS and parse_yaml(text[regions[0].start : regions[0].end])[1]:
        return []  # YAML that does not parse: where a comment would be is not known
    listed = ", ".join(codes)
    sups, bad = find_suppressions(pf)
    for sup in sups:
        if sup.line == line:  # add to the suppression that applies to the line
            close = sup.comment.end - 1
            return [TextEdit(TextRange(close, close), f", {listed}")]
    comment = f"# {MARK} ignore[{listed}]"
    body = text[start:eol]
    indent = body[: len(body) - len(body.lstrip())]
    out = []
    has_mark = MARK in body or any(start <= r.start <= eol for r, _ in bad)
    if not has_mark:
        end = start + len(body.rstrip())
        out.append(TextEdit(TextRange(end, eol), f"  {comment}"))
    if body.strip():
        out.append(TextEdit(TextRange(start, start), f"{indent}{comment}\n"))
    return out


def _shape(pf: ParsedFile) -> object:
    """What a comment must not change: the YAML nodes of each YAML part (their kinds,
    tags and string values), the tokens of a Python file but its comments, and the text of
    a skill.md outside its YAML parts."""
    text = pf.source.text
    if pf.kind in _PY_KINDS:
        return _python_shape(text)
    regions = _regions(pf) or []
    parts: list[object] = []
    pos = 0
    for r in sorted(regions):
        if pf.kind is FileKind.SKILL_MD:
            parts.append(text[pos : r.start])
        root, issues = parse_yaml(text[r.start : r.end])
        parts.append((_yaml_shape(root), len(issues)))
        pos = r.end
    if pf.kind is FileKind.SKILL_MD:
        parts.append(text[pos:])
        parts.append(len(pf.doc.blocks) if pf.doc is not None else -1)
    return parts


def _yaml_shape(root: YNode | None) -> list[object]:
    out: list[object] = []
    stack: list[YNode | None] = [root]
    while stack:  # bounded by the nodes of the document (a tree: no node twice)
        n = stack.pop()
        if n is None:
            out.append(None)
        elif isinstance(n, YScalar):
            out.append(("s", n.tag, n.raw, n.style))
        elif isinstance(n, YSeq):
            out.append(("l", n.tag, len(n.items)))
            stack.extend(reversed(n.items))
        elif isinstance(n, YMap):
            out.append(("m", n.tag, len(n.items)))
            for k, v in reversed(n.items):
                stack.extend((v, k))
    return out


def _python_shape(text: str) -> object:
    try:
        return [
            (t.type, t.string)
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL)
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None  # a file that does not tokenize gets no comment (compared equal: None)
