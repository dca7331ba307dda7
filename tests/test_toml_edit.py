"""ide/toml_edit.py: "Ignore `CODE` in this file" adds the code to the configuration's
per-file-ignores with one edit that leaves every other byte of the file as it was
(comments, formatting, key order, CRLF line ends); where it cannot do that safely, no
edit at all."""

from __future__ import annotations

import pytest

from mantle_lsp.ide.toml_edit import add_per_file_ignore, new_table

GLOB = "skills/card/skill.md"
CODE = "skill.prose.bare_skill_mention"
ENTRY = '"skills/card/skill.md" = ["skill.prose.bare_skill_mention"]'


def added(text: str, pyproject: bool = False) -> str | None:
    """The configuration once the edit is made (None: no edit)."""
    edit = add_per_file_ignore(text, pyproject, GLOB, CODE)
    if edit is None:
        return None
    return text[: edit.range.start] + edit.new_text + text[edit.range.end :]


def test_a_new_configuration_file() -> None:
    assert new_table(False, GLOB, CODE) == f"[per-file-ignores]\n{ENTRY}\n"
    assert new_table(True, GLOB, CODE) == f"[tool.mantle-lsp.per-file-ignores]\n{ENTRY}\n"


def test_a_new_entry_after_the_tables_last_line_comments_kept() -> None:
    config = """\
# team settings: see the wiki
ignore = ["lsp.legacy"]   # for now

[per-file-ignores]   # generated code
"tools/*.py" = ["lsp.tools.obsolete_import"]  # old helpers

# end of the file
"""
    assert added(config) == config.replace("# old helpers\n", f"# old helpers\n{ENTRY}\n")


def test_added_to_the_files_entry_in_pyproject() -> None:
    config = """\
[project]
name = "agent"

[tool.mantle-lsp]
engine = "3.21"

[tool.mantle-lsp.per-file-ignores]
"skills/card/skill.md" = [ "lsp.condition" ]  # the old condition form

[tool.black]
line-length = 100
"""
    assert added(config, pyproject=True) == config.replace(
        '"lsp.condition" ]', '"lsp.condition" , "skill.prose.bare_skill_mention"]'
    )


def test_added_to_an_empty_entry() -> None:
    config = '[per-file-ignores]\n"skills/card/skill.md" = []\n'
    assert added(config) == f"[per-file-ignores]\n{ENTRY}\n"


def test_a_missing_table_goes_at_the_end_with_a_blank_line() -> None:
    config = '[tool.mantle-lsp]\nengine = "3.21"'  # no line end at the end
    assert added(config, pyproject=True) == (
        f"{config}\n\n[tool.mantle-lsp.per-file-ignores]\n{ENTRY}\n"
    )
    config = 'ignore = ["lsp.legacy"]\n'
    assert added(config) == f"{config}\n[per-file-ignores]\n{ENTRY}\n"
    assert added("") == f"[per-file-ignores]\n{ENTRY}\n"


def test_a_multi_line_ignore_array_elsewhere_is_left_alone() -> None:
    config = """\
ignore = [
    "lsp.legacy",   # until the migration
    "lsp.tools",
]

[per-file-ignores]
"tools/*.py" = ["lsp.tools.obsolete_import"]
"""
    assert added(config) == f"{config}{ENTRY}\n"


def test_crlf_line_ends_are_kept() -> None:
    config = (
        "# settings\r\n"
        "[per-file-ignores]\r\n"
        '"tools/*.py" = ["lsp.tools"]  # old\r\n'
        "\r\n"
        "[lint]\r\n"
        "x = 1\r\n"
    )
    assert added(config) == config.replace("# old\r\n", f"# old\r\n{ENTRY}\r\n")
    entry = '[per-file-ignores]\r\n"skills/card/skill.md" = ["lsp.condition"]\r\n'
    assert added(entry) == entry.replace(
        '"lsp.condition"]', '"lsp.condition", "skill.prose.bare_skill_mention"]'
    )
    assert added('engine = "3.21"\r\n') == (
        f'engine = "3.21"\r\n\r\n[per-file-ignores]\r\n{ENTRY}\r\n'
    )


@pytest.mark.parametrize(
    "config",
    [
        # an inline table, a dotted key: leave them to the author
        'per-file-ignores = { "tools/*.py" = ["lsp.tools"] }\n',
        'per-file-ignores."tools/*.py" = ["lsp.tools"]\n',
        # the file's entry over several lines
        '[per-file-ignores]\n"skills/card/skill.md" = [\n  "lsp.condition",\n]\n',
        # listed already
        f"[per-file-ignores]\n{ENTRY}\n",
        # not TOML
        "[per-file-ignores\n",
    ],
)
def test_no_edit_where_it_is_not_safe(config: str) -> None:
    assert added(config) is None


def test_in_pyproject_only_the_tools_table_counts() -> None:
    config = '[per-file-ignores]\n"x/y.md" = ["lsp"]\n'
    assert added(config, pyproject=True) is None  # `per-file-ignores` is in it, not ours
    other = "[tool.ruff]\nline-length = 100\n"
    assert added(other, pyproject=True) == (
        f"{other}\n[tool.mantle-lsp.per-file-ignores]\n{ENTRY}\n"
    )
