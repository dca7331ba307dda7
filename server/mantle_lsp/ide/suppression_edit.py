"""The edit that writes one ``# mantle-lsp: ignore[CODE]`` comment for a finding (the
"Ignore `CODE` here" code action): the code added to the suppression already on the
finding's line, else a comment at the end of that line, else one alone on the line
above. YAML (skill.md's frontmatter and ordered-block bodies included) and Python share
the ``#`` form; skill.md prose has none (``suppression.py`` says why).

Each candidate is checked by reading the edited file's suppressions back: it must silence
the code on the finding's line and make no suppression invalid (a ``#`` inside a block
scalar or a string is no comment). ``check --add-noqa`` writes many at once with
:func:`.suppression.add_suppressions`.
"""

from __future__ import annotations

from ..model.files import parse_file
from ..model.project import ParsedFile
from ..model.source import source_from_text
from ..syntax.text import TextRange
from .edits import line_start
from .suppression import MARK, find_suppressions
from .types import TextEdit

__all__ = ["ignore_comment"]


def ignore_comment(pf: ParsedFile, offset: int, code: str) -> TextEdit | None:
    """The edit of ``pf`` that silences ``code`` for a finding starting at ``offset``, or
    None where no comment can (prose, inside a block scalar or a multi-line string)."""
    text = pf.text
    if offset > len(text):
        return None
    row = text.count("\n", 0, offset)
    sups, bad_before = find_suppressions(pf)
    candidates: list[tuple[TextEdit, int]] = []
    for sup in sups:
        if sup.line == row and all(c != code for c, _ in sup.codes):
            close = sup.comment.end - 1
            candidates.append((TextEdit(TextRange(close, close), f", {code}"), row))
    start = line_start(text, offset)
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
            return edit
    return None
