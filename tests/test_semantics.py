"""The semantic core asked directly: ``model/semantics.py`` is the one place that answers
who may read and write a field, who does, which steps run, which profile applies. These
tests ask it the questions the rules, hover, graphs and fixes ask, on fixture projects,
and check the answers agree with each other."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mantle_lsp.model.engine import PROFILES, profile_named
from mantle_lsp.model.evaluation import evaluate
from mantle_lsp.model.project import Project
from mantle_lsp.model.semantics import Semantics
from mantle_lsp.syntax.conditions import parse_condition
from support import write_fixture


def load(tmp_path: Path, fixture: str) -> Semantics:
    write_fixture(tmp_path, fixture)
    return Semantics(Project.load(tmp_path))


def skill(sid: str, prose: str = "Help.") -> str:
    """A fixture's ``skills/<sid>/skill.md``: a description, then ``prose``."""
    return f"//- skills/{sid}/skill.md\n---\ndescription: The {sid} skill.\n---\n{prose}\n"


def tool_module(path: str, **tools: str) -> str:
    """A fixture's tool module at ``path``: one ``@tool`` per keyword, its name and the
    one statement before ``return None``."""
    out = [f"//- {path}", "from rasa.mantle.tools.decorator import ToolContext, tool", ""]
    for name, body in tools.items():
        out += ["", f'@tool(description="{name}")', f"async def {name}("]
        out += ["    context: ToolContext = None, name: str = '', value: str = ''", "):"]
        out += [f"    {body}", "    return None"]
    return "\n".join(out) + "\n"


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

WRITABLE_BY = (
    """\
//- requirements.txt
rasa-pro==3.22.0
//- memory.yml
tier: {type: text, writable_by: [billing], mutable: true}
note: {type: text}
//- skills/billing/memory.yml
schema: {private: {plan: {type: text}}}
//- responses.yml
responses:
  utter_pick:
    - text: Pick.
      buttons: [{title: Gold, payload: "set:session.project.tier=gold"}]
"""
    + skill("billing", "Offer.\n\n:::ordered_block id=main\nsteps: [{action: utter_pick}]\n:::")
    + skill("support")
)


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


# -- who writes a field without a reference ------------------------------------------------------

GIVEN = (
    """\
//- memory.yml
seeded: {type: text, seed: true}
started: {type: text, initial_value: 0}
plain: {type: text}
//- skills/card/memory.yml
schema:
  public: {said: {type: text, llm_settable: true, description: Said.}, checked: {type: text}}
  private: {secret: {type: text}}
//- skills/default_customer_satisfaction/memory.yml
schema: {public: {reason: {type: text}}}
"""
    + tool_module("skills/card/tools.py", run_after_setting_checked="pass")
    + skill("card")
    + skill("default_customer_satisfaction")
)


def test_field_writers_names_what_gives_a_field_a_value_without_a_reference(
    tmp_path: Path,
) -> None:
    sem = load(tmp_path, GIVEN)
    got = {
        key: sem.field_writers(*key)
        for key in [
            ("project", "seeded"),
            ("project", "started"),
            ("project", "plain"),
            ("card", "said"),
            ("card", "checked"),
            ("card", "secret"),
            ("default_customer_satisfaction", "reason"),
            ("card", "nothing"),
        ]
    }
    assert got == {
        ("project", "seeded"): ("seed",),
        ("project", "started"): ("initial_value",),
        ("project", "plain"): (),
        ("card", "said"): ("llm_settable",),
        ("card", "checked"): (),  # its hook runs after a write, never in its place
        ("card", "secret"): (),
        ("default_customer_satisfaction", "reason"): ("engine",),  # an override of a bundled skill
        ("card", "nothing"): (),
    }
    assert sem.validation_hook("card", "checked") == ("tool", "card", "run_after_setting_checked")
    assert sem.validation_hook("card", "said") is None
    assert sem.validation_hook("project", "plain") is None


def test_field_writers_is_the_same_from_another_workers_facts(tmp_path: Path) -> None:
    """A worker of a spread check knows other workers' skills as facts only
    (``Project.field_table``): it answers as a check of the whole project does."""
    sem = load(tmp_path, GIVEN)
    keys = [(sid, name) for sid, sk in sem.p.skills.items() for name in sk.field_names()]
    serial = {k: sem.field_writers(*k) for k in keys}
    other = Project.load(tmp_path)
    other.known_fields = {sid: sem.p.field_table(sid) for sid in sem.p.skills}
    assert {k: Semantics(other).field_writers(*k) for k in keys} == serial


REACH = (
    """\
//- memory.yml
tier: {type: text}
//- skills/card/memory.yml
schema: {public: {shown: {type: text}}, private: {kept: {type: text}}}
"""
    + skill("card")
    + skill("other")
)


def test_unknown_keys_reach_what_the_code_using_them_may_write(tmp_path: Path) -> None:
    keys = [("project", "tier"), ("card", "shown"), ("card", "kept")]

    def reach(name: str, extra: str) -> dict[tuple[str, str], bool]:
        sem = load(tmp_path / name, REACH + extra)
        return {k: sem.unknown_keys_may_reach(*k) for k in keys}

    none = dict.fromkeys(keys, False)
    assert reach("plain", "") == none
    # another skill's tools with computed keys: the project's fields, public ones of others
    dynamic = {"remember": "context.memory.set(name, value)"}
    other = reach("other", tool_module("skills/other/tools.py", **dynamic))
    assert other == {("project", "tier"): True, ("card", "shown"): True, ("card", "kept"): False}
    # the skill's own tools: every field of its own
    assert reach("own", tool_module("skills/card/tools.py", **dynamic)) == dict.fromkeys(keys, True)
    # shared code: everything
    assert reach("shared", tool_module("tools/common.py", **dynamic)) == dict.fromkeys(keys, True)
    # a key shared code names may be any skill's field
    named = reach(
        "named",
        "//- lib/__init__.py\n//- lib/keys.py\nKEPT = 'kept'\n"
        + tool_module("tools/common.py", remember="context.memory.set('kept', value)"),
    )
    assert named[("card", "kept")]
    # buttons a tool of `other` makes: what a button of `other` may write (the project's)
    buttons = reach(
        "buttons",
        "//- skills/other/responses.yml\nresponses:\n  utter_pick:\n    - text: Pick.\n"
        "      buttons:\n        source: pick\n",
    )
    assert buttons == {("project", "tier"): True, ("card", "shown"): False, ("card", "kept"): False}


# -- readers and writers -----------------------------------------------------------------------

NOTE_IT = 'context.memory.set("note", context.memory.get("reason"))'
EVERY_FORM = (
    """\
//- memory.yml
tier: {type: text}
//- skills/card/memory.yml
schema: {public: {reason: {type: text, description: Why.}, note: {type: text}}}
//- skills/card/responses.yml
responses:
  utter_ask_reason:
    - text: "Why, {reason}? {session.project.tier}"
      buttons: [{title: Lost, payload: "set:session.card.reason=lost"}]
"""
    + tool_module("skills/card/tools.py", note_it=NOTE_IT)
    + skill(
        "card",
        """\
Mind `note`, @memory.card.note and session.card.reason.

if: session.project.tier == "gold"
  Be polite.

:::ordered_block id=main
steps:
  - {id: ask, collect: reason, utterance: utter_ask_reason}
  - {id: keep, set_memory: {note: kept}}
  - {id: run, execute_tool: note_it, parameters: {why: session.card.reason}}
:::""",
    )
)


def test_every_form_of_a_field_reference_reads_writes_or_only_names_it(tmp_path: Path) -> None:
    """A new reference form must say what it does: readers and writers (hover, graphs,
    code lenses, highlights, data flow) are built from these sets and nothing else."""
    from mantle_lsp.model.semantics import NAME_FORMS, READ_FORMS, WRITE_FORMS

    assert not (READ_FORMS & WRITE_FORMS or READ_FORMS & NAME_FORMS or WRITE_FORMS & NAME_FORMS)
    sem = load(tmp_path, EVERY_FORM)
    forms = {r.form for r in sem.p.index.references if r.key[0] == "field"}
    assert forms == READ_FORMS | WRITE_FORMS | NAME_FORMS


def test_readers_and_writers_of_a_field(tmp_path: Path) -> None:
    sem = load(tmp_path, EVERY_FORM)
    assert [r.form for r in sem.readers("card", "reason")] == [
        "bare_placeholder",  # responses.yml
        "execute_param",  # skill.md (session.card.reason in prose only names it)
        "tool_get",  # tools.py
    ]
    assert [r.form for r in sem.writers("card", "reason")] == ["set_payload", "collect"]
    assert [r.form for r in sem.readers("card", "note")] == ["memory_token"]  # not `note`
    assert [r.form for r in sem.writers("card", "note")] == ["set_memory", "tool_set"]
    assert [r.form for r in sem.readers("project", "tier")] == ["placeholder", "condition"]
    assert sem.writers("project", "tier") == []


# -- steps and conditions ------------------------------------------------------------------------

FLOW = skill(
    "card",
    """\
Help.

:::ordered_block id=main
steps:
  - id: ask
    action: utter_ask
    next: [{if: session.card.reason == "lost", then: block}, {else: END}]
  - {id: orphan, action: utter_orphan}
  - {id: block, collect: reason}
:::

:::ordered_block id=broken
steps:
  - {id: first, action: utter_first, next: nowhere}
  - {id: second, action: utter_second}
:::""",
)


def test_reachable_steps_and_collect_steps(tmp_path: Path) -> None:
    sem = load(tmp_path, FLOW)
    doc = sem.p.skills["card"].doc
    assert doc is not None
    main, broken = doc.blocks
    assert Semantics.reachable_steps(main) == {0, 2}  # `orphan` is never reached
    # a `next` naming no step: which path was meant is unknown
    assert Semantics.reachable_steps(broken) is None
    exits = [(e.kind, e.target, e.name) for e in Semantics.step_exits(main, 0)]
    assert exits == [("if", 2, "block"), ("else", None, "END")]
    collects = sem.collect_steps(sem.p.skills["card"])
    assert {k: [st.id for st in v] for k, v in collects.items()} == {"reason": ["block"]}


def test_unreachable_steps_are_what_reachable_steps_leaves_out(tmp_path: Path) -> None:
    from mantle_lsp.ide.diagnostics import project_diagnostics

    sem = load(tmp_path, FLOW)
    found = project_diagnostics(sem.p)
    flagged = {
        d.range.start for ds in found.values() for d in ds if d.code == "lsp.flow.unreachable_step"
    }
    doc = sem.p.skills["card"].doc
    assert doc is not None
    expected = set()
    for blk in doc.blocks:
        seen = Semantics.reachable_steps(blk)
        for j, step in enumerate(blk.steps):
            if seen is not None and j not in seen and step.id_node is not None:
                expected.add(step.id_node.range.start)
    assert flagged == expected and len(expected) == 1


CONDITIONS = [
    "session.card.reason == 'lost'",
    "not session.card.reason",
    "session.card.other == 'x' or session.card.reason == None",
    "session.card.reason == 'y' and session.card.other == 'x'",
    "session.card.reason < 3",
    "session.card.reason == None or session.card.reason > 3",
    "session.card.amount > 3 and session.card.reason == 'x'",
    "(session.card.reason or 0) == False",
    "session.card.reason == session.card.other == session.project.tier",
    "not (session.card.amount >= 2) or session.project.tier != 'gold'",
    "1 < session.card.amount <= 5 and session.card.other",
]
SLOTS = ("card.reason", "card.other", "card.amount", "project.tier")
VALUES = st.sampled_from([None, 0, 3, 1.5, "lost", "gold", "x", True, False])


@settings(max_examples=300, deadline=None)
@given(
    text=st.sampled_from(CONDITIONS),
    state=st.fixed_dictionaries({s: VALUES for s in SLOTS}),
    known=st.sets(st.sampled_from(SLOTS)),
)
def test_a_decided_three_valued_evaluation_is_what_every_state_gives(
    text: str, state: dict[str, object], known: set[str]
) -> None:
    """What the data-flow rules decide with some slots None and the others unknown is what
    the prompt preview's evaluation gives for every memory state with those slots None."""
    tree = parse_condition(text).tree
    assert tree is not None
    partial = evaluate(tree, dict.fromkeys(known))
    full = evaluate(tree, {**state, **dict.fromkeys(known)}, None)
    assert full.decided or full.fails  # every slot is known: decided, or it fails
    if partial.decided:
        assert not full.fails and bool(full.value) == bool(partial.value)
    if partial.fails:
        assert full.fails and full.error


# -- who may read a field ------------------------------------------------------------------------

READING = (
    """\
//- memory.yml
tier: {type: categorical, enum_values: [gold, silver]}
tier: {type: text}
//- skills/card/memory.yml
schema:
  public: {reason: {type: text}, twin: {type: text}}
  private: {note: {type: int}, twin: {type: bool}}
"""
    + skill("card")
    + skill("empty")
)


def test_readable_declarations_are_exactly_what_unreadable_lets_through(tmp_path: Path) -> None:
    """For every reader (each skill, and the project-root responses file) and every
    namespace (own, other, project, bundled, system, unknown), the declarations
    ``readable_declarations`` lists are exactly the names ``unreadable`` answers None for,
    and each has the type ``field_type`` gives."""
    from mantle_lsp.model.defaults import DEFAULT_SKILLS

    sem = load(tmp_path, READING)
    bundled = next(iter(DEFAULT_SKILLS))
    names = {"tier", "reason", "twin", "note", "nothing"}
    names |= {f.name for f in DEFAULT_SKILLS[bundled].public_fields}
    readers: list[str | None] = [None, "card", "empty"]
    namespaces = ["card", "empty", "project", bundled, "system", "nowhere"]
    checked = 0
    for sid in readers:
        for ns in namespaces:
            decls = sem.readable_declarations(sid, ns)
            readable = [f.name for f in decls]
            assert len(readable) == len(set(readable)), (sid, ns)  # each name once
            for name in names:
                allowed = sem.unreadable(sid, ns, name) is None
                assert allowed == (name in readable), (sid, ns, name)
                checked += allowed
            for f in decls:
                ft = sem.field_type(sid, ns, f.name)
                assert ft is not None and ft.type == f.type, (sid, ns, f.name)
            # the declaration a fix edits is the one the reader reads
            declared = {n: sem.declaration(sid, ns, n) for n in names}
            if ns != bundled:
                assert {n for n, d in declared.items() if d is not None} == set(readable)
                assert all(declared[f.name] is f for f in decls), (sid, ns)
    assert checked > 10
    # the effective declaration: a private twin wins in its own skill, the public one
    # stays readable from elsewhere
    own = {f.name: f.type for f in sem.readable_declarations("card", "card")}
    assert own == {"reason": "text", "twin": "bool", "note": "int"}
    other = {f.name: f.type for f in sem.readable_declarations("empty", "card")}
    assert other == {"reason": "text", "twin": "text"}
    assert [f.type for f in sem.readable_declarations(None, "project")] == ["text"]


def test_a_backticked_name_denotes_the_nearest_symbol_that_exists(tmp_path: Path) -> None:
    sem = load(tmp_path, READING)
    assert sem.mention_denotes("card", "note") == ("field", "card", "note")
    assert sem.mention_denotes("empty", "tier") == ("field", "project", "tier")
    assert sem.mention_denotes(None, "card") == ("skill", "card")
    assert sem.mention_denotes("card", "unknown") is None
    for sid in ("card", "empty", None):
        for name in ("note", "tier", "card", "unknown"):
            found = sem.mention_denotes(sid, name)
            assert found is None or found in sem.mention_order(sid, name)


def test_what_tool_code_and_steps_may_write(tmp_path: Path) -> None:
    """``unwritable`` (a ``memory.set`` key of a skill's tools, or of shared code) and
    ``step_write_target`` (a bare ``collect:`` / ``set_memory`` key) agree on what a bare
    name names: the skill's own field first, else the project's."""
    sem = load(
        tmp_path,
        """\
//- memory.yml
tier: {type: text}
both: {type: text}
//- skills/card/memory.yml
schema: {public: {reason: {type: text}, both: {type: int}}}
"""
        + skill("card")
        + skill("other"),
    )
    card, other = sem.p.skills["card"], sem.p.skills["other"]
    assert [sem.step_write_target(card, n) for n in ("reason", "both", "tier", "x")] == [
        "skill",
        "skill",
        "project",
        None,
    ]
    assert sem.step_write_target(other, "reason") is None
    assert sem.step_write_target(None, "tier") == "project"
    for name in ("reason", "both", "tier", "card.reason", "project.tier"):
        assert sem.unwritable("card", name) is None, name
    kinds = {
        ("other", "card.reason"): "other_skill",
        ("other", "reason"): "bare_undeclared",
        ("card", "card.nope"): "undeclared",
        ("card", "project.nope"): "no_project_field",
        ("card", "system.x"): "system",
        (None, "nope"): "nowhere",
    }
    for (sid, name), kind in kinds.items():
        u = sem.unwritable(sid, name)
        assert u is not None and u.kind == kind, (sid, name)
    assert sem.unwritable(None, "reason") is None  # shared code: any skill's field
