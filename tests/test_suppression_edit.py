"""ide/suppression_edit.py: the one `# mantle-lsp: ignore[CODE]` comment of "Ignore `CODE`
here", written where a comment is a comment (read back: it must silence the code on the
finding's line), never into a string, a block scalar or skill.md prose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mantle_lsp.ide.suppression_edit import ignore_comment
from mantle_lsp.model.project import Project
from support import write_fixture

CODE = "lsp.memory.unknown_attribute"


def _pf(tmp_path: Path, rel: str, text: str) -> Any:
    fx = write_fixture(tmp_path, f"//- {rel}\n{text}")
    return Project.load(fx.root).files[fx.root / rel]


def edited(tmp_path: Path, rel: str, text: str, at: str, code: str = CODE) -> str | None:
    """The file once the comment for a finding at ``at`` is written (None: no edit)."""
    pf = _pf(tmp_path, rel, text)
    edit = ignore_comment(pf, pf.text.index(at), code)
    if edit is None:
        return None
    return pf.text[: edit.range.start] + edit.new_text + pf.text[edit.range.end :]


def test_at_the_end_of_the_line_after_its_comment(tmp_path: Path) -> None:
    text = "reason:\n  type: text\n  correctable: true   # kept\n"
    assert edited(tmp_path, "memory.yml", text, "correctable") == text.replace(
        "# kept\n", f"# kept  # mantle-lsp: ignore[{CODE}]\n"
    )


def test_joins_the_suppression_of_the_line(tmp_path: Path) -> None:
    text = "a: {type: bool, x: 1}  # mantle-lsp: ignore[lsp.legacy]\n"
    assert edited(tmp_path, "memory.yml", text, "x: 1") == text.replace(
        "ignore[lsp.legacy]", f"ignore[lsp.legacy, {CODE}]"
    )


def test_above_a_line_that_ends_inside_a_string(tmp_path: Path) -> None:
    text = 'reason:\n  correctable: "yes,\n    always"\n'
    assert edited(tmp_path, "memory.yml", text, "correctable") == text.replace(
        "  correctable", f"  # mantle-lsp: ignore[{CODE}]\n  correctable"
    )


def test_in_python_never_inside_a_string(tmp_path: Path) -> None:
    text = 'from rasa_sdk import tool\nNOTE = """first\nsecond\n"""\n'
    rel = "skills/card/tools.py"
    assert edited(tmp_path, rel, text, "from", "lsp.tools") == text.replace(
        "import tool\n", "import tool  # mantle-lsp: ignore[lsp.tools]\n"
    )
    assert edited(tmp_path, rel, text, "second", "lsp.tools") is None


def test_none_in_skill_md_prose(tmp_path: Path) -> None:
    text = "---\ndescription: Replace a card.\n---\nHand over to billing.\n"
    rel = "skills/card/skill.md"
    assert edited(tmp_path, rel, text, "billing", "skill.prose.bare_skill_mention") is None
    assert edited(
        tmp_path, rel, text, "description", "skill.markdown.unknown_frontmatter_key"
    ) == text.replace(
        "card.\n", "card.  # mantle-lsp: ignore[skill.markdown.unknown_frontmatter_key]\n"
    )
