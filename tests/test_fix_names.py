"""``check --fix --unsafe-fixes`` and names: a fix that declares a name (guessed from its
uses) and a "did you mean" that changes a name written into a declared one must agree.
A did-you-mean never leads to a name a fix declared, a name whose fixes disagree gets
none, files a fix created take part in later rounds, and a second run changes nothing."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from mantle_lsp.cli import fix
from mantle_lsp.cli.main import main
from mantle_lsp.ide.code_actions import CodeAction, NameFix
from mantle_lsp.ide.fixes import Names
from mantle_lsp.ide.types import WorkspaceEdit
from mantle_lsp.model.project import Project
from support import write_fixture

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _fix(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", str(root), "--fix", "--unsafe-fixes", "--output-format", "concise"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _telecom(tmp_path: Path, *remove: str, scenarios: bool = False) -> Path:
    """The example agent (without its eval suite unless ``scenarios``), less ``remove``."""
    root = tmp_path / "telecom"
    shutil.copytree(EXAMPLES / "telecom", root)
    if not scenarios:
        shutil.rmtree(root / "eval")
    for rel in remove:
        (root / rel).unlink()
    return root


def test_a_missing_memory_yml_is_declared_in_one_run_and_nothing_is_renamed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: the first run created memory.yml and stopped; the second renamed
    ten `customer_tier` mentions to `customer_verified`, a field the first had invented."""
    root = _telecom(tmp_path, "memory.yml")
    before = _snapshot(root)
    code, out, err = _fix(root, capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "Fixed 3 findings. All checks passed (1 project)."
    # the file a fix created took part in the later rounds: all three fields are in it
    assert (root / "memory.yml").read_text(encoding="utf-8") == (
        "customer_verified:\n  type: bool\n"
        "customer_tier:\n  type: categorical\n  enum_values: [business, prepaid]\n"
        "account_number:\n  type: text\n"
    )
    after = _snapshot(root)
    assert {k for k in after if after[k] != before.get(k)} == {"memory.yml"}
    _, out, err = _fix(root, capsys)
    assert err == "" and "Fixed" not in out
    assert _snapshot(root) == after


def test_a_scenario_is_never_pointed_at_a_name_a_fix_invented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the eval suite: memory.yml missing, a scenario's `project.customer_tier` was
    changed to `project.customer_verified`, the field a fix of the same run had declared
    (a did-you-mean in a scenario names no index reference, so it carried no names). Now
    a scenario's memory key changes only in form (the invented `account_number` is no seed
    field, so its bare initial slot gets its namespace), and a second run changes
    nothing."""
    root = _telecom(tmp_path, "memory.yml", scenarios=True)
    before = _snapshot(root)
    _fix(root, capsys)
    after = _snapshot(root)
    for rel in after:
        if rel.startswith("eval/") and after[rel] != before[rel]:
            assert after[rel] == before[rel].replace(
                b"  account_number:", b"  project.account_number:"
            ), rel
        if rel.startswith("eval/"):
            assert after[rel].count(b"customer_verified") == before[rel].count(b"customer_verified")
    _fix(root, capsys)
    assert _snapshot(root) == after


def test_fixes_of_one_name_that_disagree_are_not_applied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """memory.yml declares `customer_verified` only: most `customer_tier` mentions get "did
    you mean `customer_verified`", a `memory.set` gets "declare it". None is applied."""
    root = _telecom(tmp_path)
    (root / "memory.yml").write_text("customer_verified:\n  type: bool\n", encoding="utf-8")
    before = _snapshot(root)
    code, out, err = _fix(root, capsys)
    note = (
        "mantle-lsp: note: field `project.customer_tier`: its fixes disagree (change it to "
        "`project.customer_verified`, declare it), none was applied"
    )
    assert err.splitlines() == [note]
    assert code == 1
    after = _snapshot(root)
    assert {k for k in after if after[k] != before[k]} == {"memory.yml"}  # account_number
    assert "customer_tier" not in after["memory.yml"].decode()
    for rel, data in after.items():
        if rel != "memory.yml":
            assert data.count(b"customer_verified") == before[rel].count(b"customer_verified")
    # the [*] line does not count what the run just refused
    assert "fixable with" not in out
    code, out, err = _fix(root, capsys)
    assert err.splitlines() == [note] and "Fixed" not in out
    assert _snapshot(root) == after


def test_a_name_a_did_you_mean_would_lead_to_is_not_declared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pass_length` cannot be declared (private or public: the author decides). Had the
    run declared `pass_name` from its uses, the next run would change `pass_length` into
    it: neither is touched, and the run says why."""
    fx = write_fixture(
        tmp_path,
        "//- skills/roaming/skill.md\n---\ndescription: Sell a pass.\n---\n"
        "Tell the customer about @memory.roaming.pass_length.\n"
        "//- skills/roaming/responses.yml\nresponses:\n  utter_done:\n"
        "    - text: '{session.roaming.pass_name} is active.'\n"
        "//- skills/other/skill.md\n---\ndescription: Other.\n---\n"
        "Mention @memory.roaming.pass_name.\n",
    )
    before = _snapshot(fx.root)
    code, out, err = _fix(fx.root, capsys)
    assert err.splitlines() == [
        "mantle-lsp: note: field `roaming.pass_name`: not declared: `roaming.pass_length` "
        "would then be changed to it, and either may be the name meant"
    ]
    assert _snapshot(fx.root) == before
    assert "Fixed" not in out and code == 1


# -- the property: over several projects, run twice -------------------------------------

CARD = """\
//- skills/card/skill.md
---
description: Replace a card.
---
Tell them session.card.reason (and session.card.reasn again).

if: session.card.reasn == 'x'
Say sorry.

:::ordered_block id=main
steps:
  - id: a
    collect: reason
    next:
      - if: session.card.reason == 'lost'
        then: end
:::
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
      seed: true
//- skills/shop/skill.md
---
description: Shop.
---
if: session.project.tier == 'gold' and session.project.teir == 'x'
Be nice. Read @memory.project.tier and session.project.region.
"""


def _fixture_card(tmp_path: Path) -> Path:
    return write_fixture(tmp_path / "card", CARD).root


def _copy(name: str, *remove: str) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        root = tmp_path / name
        shutil.copytree(EXAMPLES / name, root)
        for rel in remove:
            (root / rel).unlink()
        return root

    return make


def _all_memory_removed(tmp_path: Path) -> Path:
    root = _copy("telecom")(tmp_path)
    for p in root.rglob("memory.yml"):
        p.unlink()
    return root


PROJECTS: dict[str, Callable[[Path], Path]] = {
    "telecom without memory.yml": _copy("telecom", "memory.yml"),
    "telecom without any memory.yml": _all_memory_removed,
    "telecom-broken": _copy("telecom-broken"),
    "telecom-broken without memory.yml": _copy("telecom-broken", "memory.yml"),
    "a card and a shop": _fixture_card,
}


@pytest.mark.parametrize("name", list(PROJECTS))
def test_a_second_run_changes_nothing_and_no_did_you_mean_leads_to_an_invented_name(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = PROJECTS[name](tmp_path)
    declared = set(Project.load(root).index.symbols)  # the names in the user's files
    results: list[fix.FixResult] = []
    real = fix.run

    def keep(collect: fix.Collect, unsafe: bool, *args, **kw) -> fix.FixResult:  # type: ignore[no-untyped-def]
        results.append(real(collect, unsafe, *args, **kw))
        return results[-1]

    monkeypatch.setattr(fix, "run", keep)
    _fix(root, capsys)
    first = _snapshot(root)
    assert results[0].fixed > 0  # every project here has something to fix
    for names in results[0].names.values():
        invented = {k for k, to in names.decided.items() if to is None}
        for key, to in names.decided.items():
            if to is not None:  # a did-you-mean the run applied
                assert to not in invented, (key, to)
                if to[0] == "field":
                    assert to in declared, (key, to)
    _, out, _ = _fix(root, capsys)
    assert results[1].fixed == 0 and "Fixed" not in out
    assert _snapshot(root) == first


def test_names_ledger() -> None:
    field = ("field", "project")

    def act(name: NameFix) -> CodeAction:
        return CodeAction("x", "quickfix", WorkspaceEdit(), name=name)

    declare_b = act(NameFix((*field, "b")))
    a_to_b = act(NameFix((*field, "a"), (*field, "b")))
    a_to_c = act(NameFix((*field, "a"), (*field, "c")))
    declare_a = act(NameFix((*field, "a")))
    names = Names()
    assert names.allows(a_to_b)
    names.took(declare_b)
    assert names.invented((*field, "b"))
    assert not names.allows(a_to_b)  # b was invented by a fix
    assert names.allows(a_to_c)
    assert names.disagreements([a_to_c, a_to_c]) == {}
    assert names.disagreements([a_to_c, declare_a]) == {
        (*field, "a"): {
            "its fixes disagree (change it to `project.c`, declare it), none was applied"
        }
    }
    names.took(a_to_c)
    assert (*field, "a") in names.disagreements([declare_a])  # with one taken before
    banned = Names({(*field, "a"): {"why"}})
    assert not banned.allows(declare_a) and not banned.allows(a_to_c)
    assert banned.messages() == ["field `project.a`: why"]


def test_no_did_you_mean_where_the_declaring_file_is_missing(tmp_path: Path) -> None:
    """A name unknown only because its memory.yml does not exist is no typo to correct."""
    from mantle_lsp.ide.fixes import declaring_file_missing

    fx = write_fixture(
        tmp_path,
        "//- skills/card/skill.md\n---\ndescription: Card.\n---\nHelp.\n"
        "//- skills/shop/skill.md\n---\ndescription: Shop.\n---\nHelp.\n"
        "//- skills/shop/memory.yml\nschema:\n  public:\n    item:\n      type: text\n",
    )
    project = Project.load(fx.root)

    def did_you_mean(ns: str) -> CodeAction:
        name = NameFix(("field", ns, "itme"), ("field", ns, "item"))
        return CodeAction("x", "quickfix", WorkspaceEdit(), name=name)

    assert declaring_file_missing(project, did_you_mean("project"))  # no memory.yml
    assert declaring_file_missing(project, did_you_mean("card"))  # no skills/card/memory.yml
    assert not declaring_file_missing(project, did_you_mean("shop"))
    declare = CodeAction("x", "quickfix", WorkspaceEdit(), name=NameFix(("field", "card", "a")))
    assert not declaring_file_missing(project, declare)  # declaring it is what is left
    (fx.root / "memory.yml").write_text("item:\n  type: text\n", encoding="utf-8")
    assert not declaring_file_missing(Project.load(fx.root), did_you_mean("project"))
