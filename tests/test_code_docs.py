"""The per-code pages in docs/diagnostics/: one per registered code, a header that agrees
with the registry, and examples that really do (and, once fixed, do not) report the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mantle_lsp.cli import code_docs
from mantle_lsp.cli.code_docs import Page, load_page, page_codes, parse_page, resolve_code
from mantle_lsp.cli.main import main
from mantle_lsp.ide.codes import REGISTRY, markdown_table
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.model.project import Project
from support import DEFAULT_AGENT, DEFAULT_INTEGRATIONS, Coverage

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "docs" / "diagnostics"
CODES = sorted(p.name[:-3] for p in PAGES.glob("*.md"))
QUIET = ("hint", "information")  # other codes of these severities do not disturb an example


def page(code: str) -> Page:
    return parse_page((PAGES / f"{code}.md").read_text(encoding="utf-8"))


# -- coverage ---------------------------------------------------------------------------------


def test_every_registered_code_has_a_page_and_every_page_a_code() -> None:
    assert sorted(REGISTRY) == CODES, (
        f"codes without a page: {sorted(set(REGISTRY) - set(CODES))}; "
        f"pages without a registered code: {sorted(set(CODES) - set(REGISTRY))}"
    )
    assert page_codes() == CODES  # the loader finds the same folder


@pytest.mark.parametrize("code", CODES)
def test_page_header_agrees_with_the_registry(code: str) -> None:
    pg, info = page(code), REGISTRY.get(code)
    assert info is not None, f"{code}: not a registered code"
    assert pg.code == code, f"title {pg.code!r}"
    assert pg.severity == info.severity, f"page says {pg.severity}, registry {info.severity}"
    assert pg.engine, "no `- **rasa-pro 3.21:** …` line"
    if "failed_to_load" in info.engine_note:
        assert "failed_to_load" in pg.engine, "must say it is folded into failed_to_load"
    elif info.engine and not info.engine_note:
        assert "folded into" not in pg.engine
    else:
        assert not pg.engine.startswith("reported as itself"), "the engine does not report it"
    assert list(pg.sections) == list(code_docs.SECTIONS)
    for name in ("What it means", "Why it matters"):
        assert len(pg.sections[name].strip()) > 40, f"section {name!r} is (nearly) empty"


@pytest.mark.parametrize("code", CODES)
def test_page_links_point_to_pages(code: str) -> None:
    text = (PAGES / f"{code}.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+\.md)\)", text):
        assert (PAGES / target).is_file(), f"broken link {target}"


# -- examples ---------------------------------------------------------------------------------


def _codes(files: dict[str, str], root: Path) -> list[tuple[str, str, str, str]]:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    proj = Project.load(root)
    return sorted(
        (path.relative_to(root).as_posix(), d.code, d.severity, d.message)
        for path, ds in project_diagnostics(proj).items()
        for d in ds
    )


def check_examples(tmp_path: Path, pg: Page) -> None:
    """The Example project reports the page's code (and only the codes the page admits);
    the Fix applied on top of it reports nothing of note."""
    code = pg.code
    files = {"agent.yml": DEFAULT_AGENT, "integrations.yml": DEFAULT_INTEGRATIONS}
    for name in pg.without:
        files.pop(name)
    for s in pg.wrong:
        assert not s.path.startswith("/") and ".." not in s.path.split("/"), s.path
        files[s.path] = s.text
    if not any(path.startswith("skills/") for path in files):
        # a project needs a skill (else config.project_structure.missing_skills)
        files["skills/example/skill.md"] = "---\ndescription: An example skill.\n---\nHelp.\n"
    fixed = dict(files)
    for s in pg.fixed:
        fixed[s.path] = s.text
    for name in pg.delete:
        fixed.pop(name)
    wrong = _codes(files, tmp_path / "wrong")
    seen = {c for _, c, sev, _ in wrong if sev not in QUIET or c == code}
    assert code in seen, f"the Example does not report {code}: {wrong}"
    extra = seen - {code, *pg.also}
    assert not extra, f"the Example also reports {sorted(extra)} (list them in <!-- also: -->)"
    left = [d for d in _codes(fixed, tmp_path / "fixed") if d[2] not in QUIET or d[1] == code]
    assert not left, f"the Fix still reports: {left}"
    Coverage.silent.add(code)  # the Fix exercises the construct without the mistake


@pytest.mark.parametrize("code", CODES)
def test_examples_report_the_code_and_the_fix_does_not(tmp_path: Path, code: str) -> None:
    pg = page(code)
    for other in pg.also:
        assert other in REGISTRY and other != code, f"<!-- also: {other} -->"
    if pg.not_checked is not None:
        assert pg.not_checked.strip(), "say why the examples are not checked"
        return
    assert pg.wrong, 'the Example section has no ```lang title="path"``` block'
    assert pg.fixed or pg.delete, 'the Fix section has no ```lang title="path"``` block'
    check_examples(tmp_path, pg)


def test_the_example_check_can_fail(tmp_path: Path) -> None:
    good = page("mantle.validation.prose.unknown_memory_key")
    already_fixed = Page(**{**good.__dict__, "wrong": (*good.wrong[:-1], *good.fixed)})
    with pytest.raises(AssertionError, match="does not report"):
        check_examples(tmp_path / "a", already_fixed)
    other = Page(**{**good.__dict__, "code": "skill.markdown.missing_instructions"})
    with pytest.raises(AssertionError, match="does not report"):
        check_examples(tmp_path / "b", other)
    noisy = page("skill.markdown.invalid_frontmatter")
    assert noisy.also
    with pytest.raises(AssertionError, match="also reports"):
        check_examples(tmp_path / "c", Page(**{**noisy.__dict__, "also": ()}))
    unfixed = Page(**{**good.__dict__, "fixed": good.wrong})
    with pytest.raises(AssertionError, match="still reports"):
        check_examples(tmp_path / "d", unfixed)


# -- the page format --------------------------------------------------------------------------

SAMPLE = """\
# lsp.demo.code

- **Severity:** warning
- **rasa-pro 3.21:** not reported (mantle-lsp only)

## What it means

Text, with a fence that is not a file:

```yaml
## not a section
key: value
```

## Why it matters

More text.

## Example

<!-- without: agent.yml -->
<!-- also: a.b  c.d -->

````markdown title="skills/card/skill.md"
---
description: Demo.
---
```yaml
inner: fence
```
````

```yaml title="skills/card/memory.yml"
schema: {}
```

## Fix

<!-- delete: skills/card/memory.yml -->

```python title="tools/x.py"
x = 1
```
"""


def test_parse_page_reads_header_sections_files_and_directives() -> None:
    pg = parse_page(SAMPLE)
    assert (pg.code, pg.severity, pg.engine) == (
        "lsp.demo.code",
        "warning",
        "not reported (mantle-lsp only)",
    )
    assert list(pg.sections) == ["What it means", "Why it matters", "Example", "Fix"]
    assert "## not a section" in pg.sections["What it means"]
    assert [(s.path, s.lang) for s in pg.wrong] == [
        ("skills/card/skill.md", "markdown"),
        ("skills/card/memory.yml", "yaml"),
    ]
    assert pg.wrong[0].text == "---\ndescription: Demo.\n---\n```yaml\ninner: fence\n```\n"
    assert pg.wrong[1].text == "schema: {}\n"
    assert [(s.path, s.text) for s in pg.fixed] == [("tools/x.py", "x = 1\n")]
    assert (pg.without, pg.also, pg.delete, pg.not_checked) == (
        ("agent.yml",),
        ("a.b", "c.d"),
        ("skills/card/memory.yml",),
        None,
    )
    assert parse_page(SAMPLE + "\n<!-- not-checked: too big -->\n").not_checked == "too big"


def test_resolve_code_exact_unique_suffix_or_candidates() -> None:
    codes = ["a.x.key", "b.x.key", "c.other", "d.y.other_key"]
    assert resolve_code("a.x.key", codes) == ("a.x.key", [])
    assert resolve_code("other", codes) == ("c.other", [])
    assert resolve_code("key", codes) == (None, ["a.x.key", "b.x.key"])
    assert resolve_code("y.other_key", codes) == ("d.y.other_key", [])
    assert resolve_code("ther", codes) == (None, [])  # a suffix ends at a dot
    assert resolve_code("", codes) == (None, [])


def test_load_page_finds_pages_and_refuses_paths() -> None:
    text = load_page("lsp.yaml.duplicate_key")
    assert text is not None and text.startswith("# lsp.yaml.duplicate_key\n")
    assert load_page("no.such.code") is None
    assert load_page("../diagnostics") is None


# -- the CLI and the index ----------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_explain_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "explain", "lsp.flow.branch_if_ignored")
    assert rc == 0
    assert out == (PAGES / "lsp.flow.branch_if_ignored.md").read_text(encoding="utf-8")
    rc, out, _ = run(capsys, "explain", "flow.branch_if_ignored")  # a unique suffix
    assert rc == 0 and out.startswith("# lsp.flow.branch_if_ignored\n")


def test_explain_ambiguous_or_unknown_code_exits_two(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out, err = run(capsys, "explain", "unknown_memory_key")
    assert rc == 2 and out == ""
    assert "matches several codes" in err
    assert "  mantle.validation.prose.unknown_memory_key" in err.splitlines()
    assert "  lsp.condition.unknown_memory_key" in err.splitlines()
    rc, out, err = run(capsys, "explain", "memory_key")  # not a dotted suffix of anything
    assert rc == 2 and "unknown code 'memory_key'" in err
    rc, _, err = run(capsys, "explain")
    assert rc == 2 and "needs a CODE" in err


def test_explain_without_a_page_prints_the_registry_entry(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mantle_lsp.cli.code_docs.load_page", lambda code: None)
    rc, out, _ = run(capsys, "explain", "lsp.flow.branch_if_ignored")
    assert rc == 0 and out.startswith("lsp.flow.branch_if_ignored  (warning; reported by")


def test_index_links_every_code_to_its_page() -> None:
    table = markdown_table()
    for code in REGISTRY:
        assert f"[`{code}`](diagnostics/{code}.md)" in table
    index = REPO / "docs" / "diagnostics.md"
    for target in re.findall(r"\]\((diagnostics/[^)]+\.md)\)", index.read_text(encoding="utf-8")):
        assert (REPO / "docs" / target).is_file(), target
