"""The semantic core asked directly: ``model/semantics.py`` is the one place that answers
who may read and write a field, who does, which steps run, which profile applies. These
tests ask it the questions the rules, hover, graphs and fixes ask, on fixture projects,
and check the answers agree with each other."""

from __future__ import annotations

from pathlib import Path

from mantle_lsp.model.engine import PROFILES, profile_named
from mantle_lsp.model.project import Project
from mantle_lsp.model.semantics import Semantics
from support import write_fixture


def load(tmp_path: Path, fixture: str) -> Semantics:
    write_fixture(tmp_path, fixture)
    return Semantics(Project.load(tmp_path))


# -- the engine profile ------------------------------------------------------------------------


def test_the_profile_is_a_fact_of_the_project_with_named_capabilities(tmp_path: Path) -> None:
    sem = load(tmp_path, "//- requirements.txt\nrasa-pro==3.22.0\n")
    p = sem.profile
    assert (p.name, p.has_mutable, p.has_writable_by) == ("3.22", True, True)
    assert p.execute_only_tools == ("record_handoff",)
    assert p.checks_agent_language and p.warns_shadowed_bare_set
    sem.p.engine_override = "3.21"
    p = Semantics(sem.p).profile
    assert (p.name, p.field_attributes, p.execute_only_tools) == ("3.21", (), ())
    assert not (p.has_mutable or p.has_writable_by or p.checks_agent_language)


def test_every_profile_has_its_capabilities_and_an_unknown_name_the_default() -> None:
    assert [profile_named(n).name for n in PROFILES] == list(PROFILES)
    assert profile_named("9.99") == profile_named("3.21")


# -- who may write a field ----------------------------------------------------------------------

WRITABLE_BY = """\
//- requirements.txt
rasa-pro==3.22.0
//- memory.yml
tier:
  type: text
  writable_by: [billing]
  mutable: true
note:
  type: text
//- skills/billing/skill.md
---
description: Billing.
---
Offer the plans.

:::ordered_block id=main
steps:
  - id: offer
    action: utter_pick
:::
//- skills/billing/memory.yml
schema:
  private:
    plan:
      type: text
//- skills/support/skill.md
---
description: Support.
---
Help.
//- responses.yml
responses:
  utter_pick:
    - text: Pick.
      buttons:
        - title: Gold
          payload: "set:session.project.tier=gold"
"""


def test_writable_by_answers_who_may_write_a_project_field(tmp_path: Path) -> None:
    sem = load(tmp_path, WRITABLE_BY)
    assert sem.writable_by("tier") == ("billing",)
    assert sem.writable_by("note") is None  # no attribute: anyone
    assert sem.project_write_refused("billing", "tier", ["billing"]) is None
    refused = sem.project_write_refused("support", "tier", ["support"])
    assert refused is not None and (refused.kind, refused.allowed) == ("writable_by", ("billing",))
    assert refused.refused == ("support",)
    shared = sem.project_write_refused(None, "tier", [None])  # shared code is never listed
    assert shared is not None and shared.refused == (None,)
    nobody = sem.project_write_refused(None, "tier", [])  # no skill could ever write it
    assert nobody is not None and nobody.refused == ()
    assert not sem.keeps_first_value("tier") and sem.keeps_first_value("note")
    # 3.21 reads neither attribute: anyone may write, and the first value stays
    sem.p.engine_override = "3.21"
    sem = Semantics(sem.p)
    assert sem.writable_by("tier") is None and sem.keeps_first_value("tier")
    assert sem.project_write_refused("support", "tier", ["support"]) is None


def test_a_button_writes_what_the_skills_that_deliver_it_may_write(tmp_path: Path) -> None:
    sem = load(tmp_path, WRITABLE_BY)
    # the root response is delivered by billing only
    assert sem.response_users("utter_pick") == {"billing"}
    assert sem.button_unwritable(None, "utter_pick", "project", "tier") is None
    assert sem.button_unwritable(None, "utter_pick", "billing", "plan") is None
    u = sem.button_unwritable(None, "utter_nobody", "project", "tier")
    assert u is not None and (u.kind, u.refused) == ("writable_by", ())  # nobody delivers it
    u = sem.button_unwritable(None, "utter_nobody", "billing", "plan")
    assert u is not None and u.kind == "other_skill"
    assert sem.button_unwritable("billing", "utter_pick", "project", "tier") is None
    u = sem.button_unwritable("support", "utter_pick", "project", "tier")
    assert u is not None and u.refused == ("support",)
    assert sem.button_unwritable("support", "utter_pick", "project", "note") is None
    # a skill field: only from that skill's own responses
    assert sem.button_unwritable("billing", "utter_pick", "billing", "plan") is None
    u = sem.button_unwritable("support", "utter_pick", "billing", "plan")
    assert u is not None and u.kind == "other_skill"
    assert sem.button_writable_skills("support", ["billing"]) == ["support"]
    assert sem.button_writable_skills(None, ["billing", "billing"]) == ["billing"]
    assert sem.button_writable_skills(None, ["billing", "support"]) == []
