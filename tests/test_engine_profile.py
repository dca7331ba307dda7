"""The engine-version profile: detection from a rasa-pro pin, --engine, and 3.22 rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantle_lsp.cli.main import main
from mantle_lsp.model.engine import detect_profile
from mantle_lsp.syntax.language_tag import tag_problem
from support import check_clean, check_diagnostics, write_fixture

P322 = """\
//- requirements.txt
rasa-pro==3.22.0.dev1
"""


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"requirements.txt": "rasa-pro==3.22.0.dev1\n"}, "3.22"),
        ({"requirements-dev.txt": "pytest\nrasa_pro[full] >= 3.21.0\n"}, "3.21"),
        ({"pyproject.toml": '[project]\ndependencies = ["rasa-pro~=3.23.1"]\n'}, "3.22"),
        ({"pyproject.toml": '[tool.poetry.dependencies]\nrasa-pro = "^3.21"\n'}, "3.21"),
        ({"README.md": "rasa-pro 3.22\n"}, None),
    ],
)
def test_detect_profile(tmp_path: Path, files: dict[str, str], expected: str | None) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert detect_profile(tmp_path) == expected


def test_322_attributes_warn_on_321(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- memory.yml
plan:
  type: text
  «engine_3_22_attribute:mutable»: true
  «engine_3_22_attribute:writable_by»: [card]
//- skills/card/skill.md
---
description: Card.
---
Show @memory.project.plan.
""",
    )


def test_322_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        P322
        + """\
//- memory.yml
plan:
  type: text
  mutable: true
  writable_by: [card, «writable_by_lists_unknown_skill:crad»]
shared:
  type: text
//- skills/card/memory.yml
schema:
  public:
    note:
      type: text
      «skill_field_mutable_not_allowed:mutable»: true
    shared:
      type: text
  private:
    secret:
      type: text
      «skill_field_writable_by_not_allowed:writable_by»: [card]
//- skills/card/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Write.")
async def write(context=None):
    context.memory.set("plan", "x")
    context.memory.set(«tool_bare_memory_set_writes_skill_not_project_warning:"shared"», "y")
    context.memory.set("note", "z")
    return None
//- skills/other/tools.py
from rasa.mantle.tools.decorator import tool


@tool(description="Write.")
async def other_write(context=None):
    context.memory.set(«tool_sets_project_field_skill_not_in_writable_by:"project.plan"», "x")
    return None
//- skills/other/skill.md
---
description: Other.
---
Use @tool.other_write and @memory.project.shared.

:::ordered_block id=main
steps:
  - id: s
    set_memory:
      «set_memory_skill_not_in_writable_by:plan»: y
  - id: h
    execute_tool: record_handoff
    «unexpected_parameters:parameters»:
      reason: x
:::
//- skills/card/skill.md
---
description: Card.
---
Use @tool.write; read @memory.card.note, @memory.card.secret and @memory.project.plan.
""",
    )


def test_cli_engine_flag_overrides_detection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fx = write_fixture(
        tmp_path,
        P322
        + """\
//- memory.yml
plan:
  type: text
  mutable: true
//- skills/card/skill.md
---
description: Card.
---
Show @memory.project.plan.
""",
    )
    assert main(["check", str(fx.root)]) == 0
    assert "engine_3_22_attribute" not in capsys.readouterr().out
    assert main(["check", str(fx.root), "--engine", "3.21"]) == 0
    assert "warning[lsp.memory.engine_3_22_attribute]" in capsys.readouterr().out


def test_the_cli_says_which_profile_a_pin_without_its_own_gets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # what both real agents pin: a 3.20 development build, checked with the 3.21 rules
    write_fixture(tmp_path / "agent", "//- requirements.txt\nflask\nrasa-pro==3.20.0.dev3\n")
    monkeypatch.chdir(tmp_path)
    for fmt in ("json", "sarif", "concise"):
        code = main(["check", "agent", "--format", fmt])
        out, err = capsys.readouterr()
        assert code == 0
        assert err == (
            "mantle-lsp: note: agent: rasa-pro 3.20.0.dev3 pinned in agent/requirements.txt:2 "
            "has no rules of its own (3.20): checked with the 3.21 rules (choose with "
            "--engine, or `engine` in the configuration)\n"
        )
        if fmt != "concise":
            json.loads(out)  # stdout stays parseable
    assert main(["check", "agent", "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "Rule profile: rasa-pro 3.20.0.dev3 pinned in requirements.txt:2 → 3.21 rules "
        "(3.20 not supported)\n"
    )
    # a profile chosen, or a pin that has its own: no note; --show-settings says why
    assert main(["check", "agent", "--engine", "3.21"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["check", "agent", "--engine", "3.22", "--show-settings"]) == 0
    assert capsys.readouterr().out.endswith("Rule profile: 3.22 rules (--engine 3.22)\n")
    (tmp_path / "agent/requirements.txt").write_text("rasa-pro==3.22.0.dev1\n")
    assert main(["check", "agent"]) == 0
    assert capsys.readouterr().err == ""
    (tmp_path / "agent/mantle-lsp.toml").write_text('engine = "3.21"\n')
    assert main(["check", "agent", "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        'Rule profile: 3.21 rules (engine = "3.21" in agent/mantle-lsp.toml:1)\n'
    ), out


# -- the rest of the 3.22 profile, measured against rasa-pro 3.22.0.dev1 -------------------------
P321 = """\
//- requirements.txt
rasa-pro==3.21.0
"""


def _agent(language: str) -> str:
    return f"""\
//- agent.yml
agent:
  id: test-agent
  language: {language}
  persona: A careful test assistant.
orchestrator:
  model_group: main
"""


@pytest.mark.parametrize(
    "tag", ["english", "en_US", "EN", "en-us", "x-zz-pirate", "en-Latn", "' en'"]
)
def test_322_agent_language_is_an_exact_bcp47_tag(tmp_path: Path, tag: str) -> None:
    got = check_diagnostics(tmp_path / "a", P322 + _agent(f"«invalid_agent_language:{tag}»"), {})
    assert got[0][4] == "warning"
    check_clean(tmp_path / "b", P321 + _agent(tag))  # 3.21 takes any string


@pytest.mark.parametrize(
    "tag", ["pt-BR", "zh-Hant-TW", "x-en-pirate", "en", "de-CH-1901", "es-419", "''", "~", "42"]
)
def test_322_agent_language_accepted(tmp_path: Path, tag: str) -> None:
    check_clean(tmp_path, P322 + _agent(tag), silent=["invalid_agent_language"])


def test_322_agent_language_missing_is_the_default(tmp_path: Path) -> None:
    check_clean(tmp_path, P322)


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("en_US", "not `_`"),
        ("EN", "write `en`"),
        ("en-us", "write `en-US`"),
        ("xx", "`xx` is not a language code"),
        ("eng", "`eng` is written differently"),
        ("zh-yue", "`yue` on its own"),
        ("en-Latn-US", "`en` implies `Latn`"),
        ("en-UK", "`UK` is not a region code"),
        ("en-840", "`840`"),
        ("de-1996-1901", "alphabetical order"),
        ("en-u-ca-gregory-u-nu-thai", "appears twice"),
        ("x-en", "`x-<language>-<label>`"),
        ("x-en-us-formal", "in the custom language, `en-us`"),
        ("art-lojban", "modern replacement"),
    ],
)
def test_language_tag_problems(tag: str, why: str) -> None:
    problem = tag_problem(tag)
    assert problem is not None and why in problem


@pytest.mark.parametrize(
    "tag",
    ["en", "pt-BR", "zh-Hant-TW", "sr-Latn-RS", "yue-HK", "abc", "en-001", "de-1901-1996",
     "en-US-u-ca-gregory", "en-x-twain", "x-en-US-formal", "x-en-Formal", "und", "qaa"],
)  # fmt: skip
def test_language_tags_accepted(tag: str) -> None:
    assert tag_problem(tag) is None


MCP = """\
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: bank
    url: http://localhost
"""


def test_322_mcp_import_of_an_execute_only_name(tmp_path: Path) -> None:
    body = """\
//- skills/card/skill.md
---
description: Card.
import_tools:
  - {mark}
  - mcp/bank:lookup
---
Use the tools.
"""
    check_diagnostics(
        tmp_path / "a",
        P322 + MCP + body.format(mark="«invalid_shared_tool:mcp/bank:record_handoff»"),
    )
    check_clean(tmp_path / "b", P321 + MCP + body.format(mark="mcp/bank:record_handoff"))


def test_project_tool_named_record_handoff(tmp_path: Path) -> None:
    body = """\
//- tools/shared.py
from rasa.mantle.tools.decorator import tool


@tool(description="Record.")
async def {mark}(context=None):
    return None
//- skills/card/skill.md
---
description: Card.
import_tools: [record_handoff]
---
Use @tool.record_handoff.
"""
    check_clean(tmp_path / "a", P321 + body.format(mark="record_handoff"))  # 3.21 accepts it
    check_diagnostics(tmp_path / "b", P322 + body.format(mark="«reserved_name:record_handoff»"))


def test_322_record_handoff_parameters(tmp_path: Path) -> None:
    # any parameters are refused, and not checked further (rasa-pro 3.22 stops there)
    check_diagnostics(
        tmp_path,
        P322
        + """\
//- skills/card/skill.md
---
description: Card.
---
Card.

:::ordered_block id=main
steps:
  - id: h
    execute_tool: record_handoff
    «unexpected_parameters:parameters»:
      reason: session.nope.x
  - id: i
    execute_tool: record_handoff
    parameters: {}
  - id: j
    execute_tool: record_handoff
:::
""",
    )


WRITABLE = """\
//- memory.yml
plan:
  type: text
  writable_by: [card]
//- skills/card/skill.md
---
description: Card.
---
Show @memory.project.plan.
"""
DELIVER = """
:::ordered_block id=main
steps:
  - id: s
    utter: utter_pick
:::
"""


def _buttons(path: str, mark: str) -> str:
    return f"""\
//- {path}
responses:
  utter_pick:
    - text: Pick.
      buttons:
        - title: A
          payload: set:{mark}
"""


def test_322_button_writes_a_project_field_from_an_unlisted_skill(tmp_path: Path) -> None:
    other = "//- skills/other/skill.md\n---\ndescription: Other.\n---\nOther.\n" + DELIVER
    bad = "«not_writable_memory_key:session.project.plan»=a"
    # a skill's own responses.yml: that skill must be listed
    check_diagnostics(
        tmp_path / "a", P322 + WRITABLE + other + _buttons("skills/other/responses.yml", bad)
    )
    # the root responses.yml: every skill that delivers it must be listed
    check_diagnostics(tmp_path / "b", P322 + WRITABLE + other + _buttons("responses.yml", bad))
    # ... and some skill must deliver it
    check_diagnostics(tmp_path / "c", P322 + WRITABLE + _buttons("responses.yml", bad))
    ok = "session.project.plan=a"
    on_321 = WRITABLE.replace("writable_by", "«engine_3_22_attribute:writable_by»")
    check_diagnostics(tmp_path / "d", P321 + on_321 + other + _buttons("responses.yml", ok))
    check_clean(tmp_path / "e", P322 + WRITABLE + _buttons("skills/card/responses.yml", ok))
    card = WRITABLE + DELIVER + _buttons("responses.yml", ok)
    check_clean(tmp_path / "f", P322 + card)


def test_322_set_memory_with_the_project_prefix(tmp_path: Path) -> None:
    step = """\
//- skills/{sid}/skill.md
---
description: Writer.
---
Writer.

:::ordered_block id=main
steps:
  - id: s
    set_memory:
      «{codes}:project.plan»: y
:::
"""
    # both engines refuse the `project.` prefix in set_memory (undeclared_entry); 3.22 also
    # refuses the write from a skill `writable_by` does not list
    both = "undeclared_entry|set_memory_skill_not_in_writable_by"
    check_diagnostics(tmp_path / "a", P322 + WRITABLE + step.format(sid="other", codes=both))
    card = WRITABLE.replace("skills/card/skill.md", "skills/unused/skill.md")
    check_diagnostics(
        tmp_path / "b", P322 + card + step.format(sid="card", codes="undeclared_entry")
    )
    on_321 = WRITABLE.replace("writable_by", "«engine_3_22_attribute:writable_by»")
    check_diagnostics(
        tmp_path / "c", P321 + on_321 + step.format(sid="other", codes="undeclared_entry")
    )


@pytest.mark.parametrize(
    ("attr", "value"),
    [("mutable", "3"), ("mutable", "~"), ("writable_by", "card"), ("writable_by", "[card, 2]")],
)
def test_322_wrongly_typed_attributes_crash_the_engine(
    tmp_path: Path, attr: str, value: str
) -> None:
    marked = "[card, «invalid_shape:2»]" if value == "[card, 2]" else f"«invalid_shape:{value}»"
    body = """\
//- memory.yml
plan:
  type: text
  seed: true
  {attr}: {value}
//- skills/card/skill.md
---
description: Card.
---
Show @memory.project.plan.
"""
    got = check_diagnostics(tmp_path / "a", P322 + body.format(attr=attr, value=marked))
    assert all(g[4] == "error" for g in got)
    check_diagnostics(
        tmp_path / "b", P321 + body.format(attr=f"«engine_3_22_attribute:{attr}»", value=value)
    )
    check_clean(
        tmp_path / "c",
        P322 + body.format(attr=attr, value="[card]" if attr == "writable_by" else "yes"),
    )


@pytest.mark.parametrize(
    "attr",
    [
        "«skill_field_mutable_not_allowed:mutable»: yes",
        "«skill_field_writable_by_not_allowed:writable_by»: [card]",
        "mutable: «failed_to_load:~»",  # the skill's memory.yml does not load
        "writable_by: «failed_to_load:card»",
        "mutable: false",  # changes nothing: rasa-pro 3.22 accepts it
        "writable_by: []",
    ],
)
def test_322_attributes_on_a_skill_field(tmp_path: Path, attr: str) -> None:
    check_diagnostics(
        tmp_path,
        P322
        + f"""\
//- skills/card/memory.yml
schema:
  public:
    note:
      type: text
      {attr}
//- skills/card/skill.md
---
description: Card.
---
Show @memory.card.note.
""",
    )
