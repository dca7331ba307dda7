"""Project-level diagnostics: structure, skill ids, preconditions, config references,
default-skill overrides, and files that cannot be read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mantle_lsp.model import source
from support import check_clean, check_diagnostics, diagnostics_of, shown, write_fixture


def test_missing_agent_and_integrations(tmp_path: Path) -> None:
    for missing, shown_on, code in (
        ("agent.yml", "integrations.yml", "mantle.validation.config.missing_agent_yml"),
        ("integrations.yml", "agent.yml", "mantle.validation.config.missing_integrations"),
    ):
        got = check_diagnostics(
            tmp_path / missing,
            """\
//- skills/a/skill.md
---
description: A.
---
Text.
""",
            prepare=lambda root, missing=missing: (root / missing).unlink(),
            unmarked=[(shown_on, 0, 0, code)],
        )
        assert len(got) == 1, got  # not even a hint besides


def test_skill_ids_and_default_flag(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card.v2/skill.md
---
«invalid_id:description»: Dotted.
---
Text.
//- skills/card/skill.md
---
description: Not a bundled default.
routing:
  «is_default_not_allowed:is_default»: true
---
Text.
""",
    )


def test_preconditions_missing_binding_and_self_resolve(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- agent.yml
agent:
  persona: Test.
orchestrator:
  model_group: «unknown_model_group:mian»
  preconditions:
    verified:
      satisfied_when: session.project.ok
      resolve_with: card
//- memory.yml
ok:
  type: bool
//- skills/card/skill.md
---
description: Card.
precondition: «self_resolve:verified»
---
Text.
//- skills/other/skill.md
---
description: Other.
precondition: «missing_binding:verifed»
---
Text.
""",
    )


def test_default_overrides_silence_timeout_and_unsupported_handler(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/default_silence_timeout/responses.yml
responses:
  utter_still_there:
    - text: Still there?
//- skills/default_silence_timeout/skill.md
---
description: Check in.
---
:::ordered_block id=main
steps:
  - id: ask
    action: utter_still_there
  - id: bye
    link: default_silence_timeout__hangup
:::

:::ordered_block id=«silence_timeout_hangup_block:hangup»
steps:
  - id: end
    action: hangup
:::
//- skills/default_unsupported_request_handler/memory.yml
schema:
  public:
    request_type:
      type: text
//- skills/default_unsupported_request_handler/skill.md
«not_engine_managed|missing_entry:---»
description: Decline.
routing:
  engine_managed: false
---
:::ordered_block id=«multiple_entry_blocks:a»
steps:
  - id: x
    action: utter_decline_in_domain_out_of_scope
:::

:::ordered_block id=«multiple_entry_blocks:b»
steps:
  - id: y
    action: utter_decline_in_domain_out_of_scope
:::
""",
    )


def test_obsolete_tool_import(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- skills/card/tools.py
from «obsolete_import:rasa.calm_v2.tools.decorator» import tool


@tool(description="Lock.")
async def lock(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
---
Use @tool.lock.
""",
    )


def test_valid_preconditions_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- agent.yml
agent:
  persona: Test.
orchestrator:
  model_group: main
  preconditions:
    verified:
      satisfied_when: session.project.ok == True
      resolve_with: login
//- memory.yml
ok:
  type: bool
//- skills/login/skill.md
---
description: Log in.
---
Log in.
//- skills/card/skill.md
---
description: Card.
precondition: verified
---
Text.
""",
        silent=[
            "missing_binding",
            "unknown_resolver",
            "self_resolve",
            "nested_resolver",
            "precondition.cycle",
            "invalid_satisfied_when",
            "unused_precondition",
            "skill.precondition.invalid",
        ],
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read files without permission")
def test_unreadable_file(tmp_path: Path) -> None:  # pragma: no cover - not as root
    fx = write_fixture(tmp_path, "//- skills/a/skill.md\n---\ndescription: A.\n---\nText.\n")
    mem = fx.root / "skills/a/memory.yml"
    mem.write_text("schema: {}\n")
    mem.chmod(0)
    got = diagnostics_of(fx.root)
    assert [g[3] for g in got if g[0] == "skills/a/memory.yml"] == ["lsp.file.unreadable"]


def test_unreadable_file_via_a_directory_in_its_place(tmp_path: Path) -> None:
    """A read error (here: a directory where a file is expected) is a diagnostic."""
    src = source.read_source(tmp_path)
    assert [i.code for i in src.issues] == ["lsp.file.unreadable"]
    assert not src.analyzable
    shown(fired=["lsp.file.unreadable"])


def test_too_large_file_is_not_analysed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_FILE_BYTES", 200)
    check_diagnostics(
        tmp_path,
        "//- skills/a/skill.md\n---\ndescription: A.\n---\n" + "Text @memory.x. " * 40 + "\n",
        severities={"lsp.file.too_large": "warning"},
        unmarked=[("skills/a/skill.md", 0, 0, "lsp.file.too_large")],
    )


def test_files_at_the_size_limit_in_utf8_and_readable_are_analysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Non-ASCII UTF-8 text (accents, an emoji) exactly at the size limit, readable: no
    file-level diagnostic."""
    skill = "---\ndescription: Café ☕ und Grüße 😀.\n---\n" + "Help with the café.\n" * 8
    monkeypatch.setattr(source, "MAX_FILE_BYTES", len(skill.encode()))
    check_clean(
        tmp_path,
        "//- skills/a/skill.md\n" + skill,
        silent=["lsp.file.too_large", "lsp.file.invalid_utf8", "lsp.file.binary", "unreadable"],
    )


def test_unresolved_lib_import(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- lib/__init__.py
//- lib/wallet.py
DATA = {}
//- skills/card/tools.py
from lib.wallet import DATA
from «unresolved_import:lib.missing» import thing
import «unresolved_import:lib.wallet.deeper»
from rasa.mantle.tools.decorator import tool


@tool(description="Lock.")
async def lock(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
---
Use @tool.lock.
""",
    )


def test_structure_mixed_layout_and_no_skills(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path / "a",
        "//- skills/_draft/skill.md\n---\ndescription: D.\n---\nT.\n",
        unmarked=[("agent.yml", 0, 0, "config.project_structure.missing_skills")],
    )
    assert len(got) == 1, got
    got = check_diagnostics(
        tmp_path / "b",
        "//- domain.yml\nslots: {}\n//- skills/a/skill.md\n---\ndescription: A.\n---\nT.\n",
        unmarked=[("agent.yml", 0, 0, "config.project_structure.mixed_layout")],
    )
    assert len(got) == 1, got


def test_a_byte_order_mark_hides_the_frontmatter_of_a_skill_md_only(tmp_path: Path) -> None:
    """rasa-pro reads skill.md as plain UTF-8 (the mark stays in front of `---` and the
    skill fails to load, `make oracle` showed it); YAML and Python readers skip a BOM."""
    fx = write_fixture(
        tmp_path,
        "//- skills/a/skill.md\n---\ndescription: A.\n---\nHelp.\n"
        "//- skills/a/memory.yml\nschema:\n  public:\n    note:\n      type: text\n",
    )
    for rel in ("skills/a/skill.md", "skills/a/memory.yml", "agent.yml"):
        path = tmp_path / rel
        path.write_text("\ufeff" + fx.files[rel], encoding="utf-8")
    got = [(g[0], g[1], g[2], g[3]) for g in diagnostics_of(tmp_path) if g[4] != "hint"]
    assert got == [("skills/a/skill.md", 0, 3, "skill.markdown.invalid_frontmatter_delimiter")]
