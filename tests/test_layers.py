"""Cadenya memory layers kept as files (docs/memory-layers.md): the entry format, cascade
resolution, the diagnostics, the editor features, ``check`` and ``layers manifest``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantle_lsp.cli.code_docs import parse_page
from mantle_lsp.cli.main import main
from mantle_lsp.ide import layers as ide
from mantle_lsp.ide.codes import REGISTRY
from mantle_lsp.ide.types import FeatureError, WorkspaceEdit
from mantle_lsp.model.layers import (
    LayerSet,
    find_layer_roots,
    load_layer_set,
    resolve,
    scan_layer_folder,
    standings,
)
from mantle_lsp.syntax.layers import parse_cascades, parse_entry, render_entry
from mantle_lsp.syntax.text import TextRange
from support import Coverage, assert_silent, issue_list, marked, parse_fixture

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "docs" / "diagnostics"
LAYER_CODES = sorted(c for c in REGISTRY if c.startswith("lsp.layers."))

# The example of Cadenya's documentation: high-touch-customer at position 0 over
# base-customer at position 1.
CADENYA_DOCS = """\
//- memory-layers/cascades.yml
cascades:
  high-touch:
    variation: support-agent/high-touch
    layers:
      - high-touch-customer
      - base-customer
//- memory-layers/high-touch-customer/prose.md
---
description: How to write to a high-touch customer
---
Warmly and personally.
//- memory-layers/high-touch-customer/very-upset-customer-procedures.md
---
description: What to do when a high-touch customer is very upset
---
Apologise once, then act.
//- memory-layers/base-customer/prose.md
---
description: How to write to a customer
---
Friendly, clear and short.
//- memory-layers/base-customer/customer-support-procedures.md
---
description: The standard support procedure
---
Confirm, restate, solve, close.
"""


def write(tmp_path: Path, fixture: str) -> tuple[dict[str, str], list[tuple[str, str, int, int]]]:
    files, marks, _ = parse_fixture(fixture)
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return files, [(m.path, m.label, m.start, m.end) for m in marks]


def layer_set(tmp_path: Path, fixture: str) -> LayerSet:
    write(tmp_path, fixture)
    return load_layer_set(tmp_path / "memory-layers")


def check_layers(
    tmp_path: Path, fixture: str, silent: tuple[str, ...] = ()
) -> list[tuple[str, int, int, str, str, str]]:
    """The layer diagnostics are exactly the marked ranges (labels: code ends)."""
    files, marks = write(tmp_path, fixture)
    ls = load_layer_set(tmp_path / "memory-layers")
    got = sorted(
        (
            p.relative_to(tmp_path).as_posix(),
            d.range.start,
            d.range.end,
            d.code,
            d.severity,
            d.message,
        )
        for p, ds in ide.layer_diagnostics(ls).items()
        for d in ds
    )
    keys = [g[:4] for g in got]
    want = []
    for path, label, start, end in marks:
        code = "lsp.layers." + label if "lsp.layers." + label in REGISTRY else label
        want.append((path, start, end, code))
    assert sorted(keys) == sorted(want), "\n".join(
        f"{g[0]}:{g[1]}-{g[2]} {g[3]} {files.get(g[0], '')[g[1] : g[2]]!r}: {g[5]}" for g in got
    )
    assert_silent(silent, got, set(want))
    Coverage.fired |= {w[3] for w in want}
    return got


# -- the entry format ----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_render_then_parse_gives_back_description_and_content_exactly(d: str, c: str) -> None:
    p = parse_entry(render_entry(d, c))
    assert (p.description, p.content) == (d, c)


def test_render_quotes_the_description_only_when_plain_yaml_would_change_it() -> None:
    assert render_entry("Refund procedure", "x") == "---\ndescription: Refund procedure\n---\nx"
    assert render_entry("yes", "") == '---\ndescription: "yes"\n---\n'
    assert render_entry("a: b", "") == '---\ndescription: "a: b"\n---\n'
    assert render_entry("", "") == '---\ndescription: ""\n---\n'


def test_content_is_everything_after_the_closing_line_byte_for_byte() -> None:
    p = parse_entry("---\ndescription: d\n---\n\n  body\n---\nmore\n")
    assert p.content == "\n  body\n---\nmore\n"
    assert p.content_range == TextRange(23, 23 + len(p.content))


def test_entry_parser_issues() -> None:
    text, (rng,) = marked("«no frontmatter»\n")
    assert issue_list(parse_entry(text).issues) == [
        ("lsp.layers.missing_description", "warning", rng)
    ]
    text, (key, val) = marked(
        """\
        ---
        «descripton»: x
        «-»--
        """
    )
    assert issue_list(parse_entry(text).issues) == [
        ("lsp.layers.missing_description", "warning", TextRange(0, 3)),
        ("lsp.layers.unknown_key", "warning", key),
        ("lsp.layers.empty_content", "warning", TextRange(val.start, val.start + 3)),
    ]


def test_cascades_parser_reads_layers_pins_and_variation() -> None:
    text, (name, var, a, b, pin_layer, pin_entry) = marked(
        """\
        cascades:
          «vip-support»:
            variation: «support-agent/vip»
            layers:
              - «high-touch-customer»
              - «base-customer»
              - {layer: «faq», entry: «refunds.md»}
        """
    )
    got = parse_cascades(text)
    assert got.issues == []
    (c,) = got.cascades
    assert (c.name, c.name_range, c.variation, c.variation_range) == (
        "vip-support",
        name,
        "support-agent/vip",
        var,
    )
    assert [(i.layer, i.entry, i.layer_range, i.entry_range) for i in c.items] == [
        ("high-touch-customer", None, a, None),
        ("base-customer", None, b, None),
        ("faq", "refunds.md", pin_layer, pin_entry),
    ]


@pytest.mark.parametrize(
    "text",
    ["", "[", "cascades: 3", "cascades:\n  a: [1, {x: 2}, {layer: [1]}]\n", "- -\n", "\0"],
)
def test_parsers_never_raise(text: str) -> None:
    parse_cascades(text)
    parse_entry(text)
    parse_entry("---\n" + text + "\n---\n")


_YAMLISH = st.text(alphabet=st.sampled_from(list("-:{}[],#&*!|>'\" \nabcl0y.")), max_size=120)


@settings(max_examples=300, deadline=None)
@given(_YAMLISH, _YAMLISH)
def test_parsers_and_checks_never_raise_on_any_text(cascades: str, entry: str) -> None:
    from mantle_lsp.model.layers import build_layer_set
    from mantle_lsp.syntax.layers import parse_layer_yml

    parse_layer_yml(entry)
    root = Path("/nowhere/memory-layers")
    ls = build_layer_set(
        root,
        {
            root / "cascades.yml": "cascades:\n  c:\n    layers:\n" + cascades,
            root / "a" / "e.md": entry,
            root / "a" / "layer.yml": entry,
            root / "b" / "f.md": "---\n" + entry,
        },
    )
    ide.layer_diagnostics(ls)
    for c in ls.cascades.values():
        ide.manifest_text(ls, c)
    text = ls.texts[root / "cascades.yml"]
    for off in range(0, len(text) + 1, 7):
        ide.complete(ls, root / "cascades.yml", off)
        ide.hover(ls, root / "cascades.yml", off)
        ide.definition(ls, root / "cascades.yml", off)
        ide.rename(ls, root / "cascades.yml", off, "z")


# -- resolution and the manifest -----------------------------------------------------------


def test_cadenya_docs_example_gives_three_entries_prose_from_the_most_specific(
    tmp_path: Path,
) -> None:
    ls = layer_set(tmp_path, CADENYA_DOCS)
    got = [(m.key, m.layer, m.position) for m in ide.manifest(ls, ls.cascades["high-touch"])]
    assert got == [
        ("prose.md", "high-touch-customer", 0),
        ("very-upset-customer-procedures.md", "high-touch-customer", 0),
        ("customer-support-procedures.md", "base-customer", 1),
    ]
    assert ide.manifest(ls, ls.cascades["high-touch"])[0].shadows == ("base-customer",)


def test_pinned_entry_brings_only_that_entry_and_episodic_layers_bring_nothing(
    tmp_path: Path,
) -> None:
    ls = layer_set(
        tmp_path,
        CADENYA_DOCS.replace(
            "      - base-customer\n",
            "      - {layer: base-customer, entry: customer-support-procedures.md}\n"
            "      - journal\n",
        )
        + "//- memory-layers/journal/layer.yml\nepisodic: true\n"
        + "//- memory-layers/journal/notes.md\n---\ndescription: n\n---\nx\n",
    )
    keys = [(r.key, r.winner.entry.layer) for r in resolve(ls, ls.cascades["high-touch"])]
    assert keys == [
        ("prose.md", "high-touch-customer"),
        ("very-upset-customer-procedures.md", "high-touch-customer"),
        ("customer-support-procedures.md", "base-customer"),
    ]


def test_standings_say_who_wins_and_who_is_shadowed(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, CADENYA_DOCS)
    base = ls.layers["base-customer"].entries["prose.md"]
    top = ls.layers["high-touch-customer"].entries["prose.md"]
    (sb,) = standings(ls, base)
    (st_,) = standings(ls, top)
    assert (sb.wins, sb.shadowed_by) == (False, top)
    assert (st_.wins, st_.shadows) == (True, [base])


# -- diagnostics ---------------------------------------------------------------------------


def test_entry_diagnostics_fire_on_their_ranges(tmp_path: Path) -> None:
    long = "x" * 151
    check_layers(
        tmp_path,
        f"""\
//- memory-layers/a/none.md
«missing_description:Just text.»
//- memory-layers/a/empty.md
---
«missing_description:description»:
---
Body.
//- memory-layers/a/multi.md
---
description: «multiline_description:|
  one
  two»
---
Body.
//- memory-layers/a/long.md
---
description: «long_description:{long}»
---
Body.
//- memory-layers/a/nothing.md
---
description: Nothing inside
«empty_content:---»
//- memory-layers/a/open.md
«invalid_frontmatter:---»
description: never closed
//- memory-layers/a/layer.yml
name: A
«unknown_key:owner»: me
episodic: «invalid_layer_yml:maybe»
""",
    )


def test_cascade_diagnostics_fire_on_their_ranges(tmp_path: Path) -> None:
    eleven = "\n".join(f"      - l{i}" for i in range(11))
    layers = "".join(
        f"//- memory-layers/l{i}/e.md\n---\ndescription: E {i}\n---\nBody.\n" for i in range(11)
    )
    got = check_layers(
        tmp_path,
        f"""\
//- memory-layers/cascades.yml
cascades:
  one:
    layers:
      - l0
      - «duplicate_layer:l0»
      - «unknown_layer:l00»
      - {{layer: l1, entry: «unknown_entry:f.md»}}
      - {{layer: «duplicate_layer:l0», entry: e.md}}
      - «episodic_reference:journal»
  «too_many_layers:big»:
    layers:
{eleven}
  bad:
    «invalid_cascades:layers»:
  odd:
    variation: x
    «unknown_key:layer»: [l0]
    layers: «invalid_cascades:l0»
//- memory-layers/journal/layer.yml
episodic: true
{layers}""",
    )
    msgs = {g[3]: g[5] for g in got}
    assert "uses 11 layers" in msgs["lsp.layers.too_many_layers"]
    assert "did you mean `l0`?" in msgs["lsp.layers.unknown_layer"]
    assert "did you mean `e.md`?" in msgs["lsp.layers.unknown_entry"]


def test_a_clean_layer_folder_reports_nothing(tmp_path: Path) -> None:
    ten = "\n".join(f"      - l{i}" for i in range(10))
    layers = "".join(
        f"//- memory-layers/l{i}/e.md\n---\ndescription: E {i}\n---\nBody.\n" for i in range(10)
    )
    check_layers(
        tmp_path,
        f"""\
//- memory-layers/cascades.yml
cascades:
  ten:
    variation: agent/main
    layers:
{ten}
  short: [l0, {{layer: l1, entry: e.md}}]
//- memory-layers/l0/layer.yml
name: Zero
description: The first layer
episodic: false
//- memory-layers/journal/layer.yml
episodic: true
//- memory-layers/l0/deep/er/key.md
---
description: "a: quoted description"
---
Body.
{layers}""",
        silent=tuple(LAYER_CODES),
    )


@pytest.mark.parametrize("code", LAYER_CODES)
def test_doc_page_examples_report_the_code_and_the_fix_does_not(tmp_path: Path, code: str) -> None:
    pg = parse_page((PAGES / f"{code}.md").read_text(encoding="utf-8"))
    assert pg.not_checked and "test_layers.py" in pg.not_checked
    files = {s.path: s.text for s in pg.wrong}
    fixed = {**files, **{s.path: s.text for s in pg.fixed}}
    for name in pg.delete:
        fixed.pop(name)

    def codes(where: Path, fs: dict[str, str]) -> set[str]:
        for rel, text in fs.items():
            p = where / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        ls = load_layer_set(where / "memory-layers")
        return {d.code for ds in ide.layer_diagnostics(ls).values() for d in ds}

    assert codes(tmp_path / "wrong", files) == {code, *pg.also}
    assert codes(tmp_path / "fixed", fixed) == set()
    Coverage.silent.add(code)


# -- check and layers manifest ---------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_check_reports_a_layer_folder_alone_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, CADENYA_DOCS.replace("      - base-customer\n", "      - base-custmer\n"))
    rc, out, _ = run(capsys, "check", str(tmp_path), "--format", "concise", "--color", "never")
    assert rc == 1
    assert "memory-layers/cascades.yml:6:9: error[lsp.layers.unknown_layer] " in out
    assert "no layer `base-custmer`" in out and "did you mean `base-customer`?" in out
    rc, out, _ = run(capsys, "check", str(tmp_path / "memory-layers"), "--format", "json")
    (row,) = json.loads(out)
    assert (row["code"], row["line"], row["column"]) == ("lsp.layers.unknown_layer", 6, 9)
    rc, out, _ = run(capsys, "check", str(tmp_path), "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["lsp.layers.unknown_layer"]
    rc, out, _ = run(capsys, "check", str(tmp_path), "--ignore", "lsp.layers", "--format", "json")
    assert (rc, json.loads(out)) == (0, [])


def test_check_reports_a_layer_folder_inside_a_mantle_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from support import DEFAULT_AGENT, DEFAULT_INTEGRATIONS, DEFAULT_SKILL

    write(
        tmp_path,
        f"//- agent.yml\n{DEFAULT_AGENT}//- integrations.yml\n{DEFAULT_INTEGRATIONS}"
        f"//- skills/example/skill.md\n{DEFAULT_SKILL}"
        "//- memory-layers/faq/refunds.md\nNo frontmatter.\n",
    )
    rc, out, _ = run(capsys, "check", str(tmp_path), "--format", "json")
    assert [
        (r["path"].endswith("memory-layers/faq/refunds.md"), r["code"]) for r in json.loads(out)
    ] == [(True, "lsp.layers.missing_description")]
    assert rc == 0  # a warning


def test_check_finds_the_example_folder_clean(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "check", str(REPO / "examples" / "memory-layers"), "--format", "json")
    assert (rc, json.loads(out)) == (0, [])
    assert find_layer_roots(REPO / "examples") == [REPO / "examples" / "memory-layers"]


def test_layers_manifest_prints_the_cadenya_docs_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, CADENYA_DOCS)
    rc, out, _ = run(capsys, "layers", "manifest", "high-touch", str(tmp_path))
    assert rc == 0
    assert [line.split(None, 2) for line in out.splitlines()[1:]] == [
        ["prose.md", "high-touch-customer", "How to write to a high-touch customer"],
        [
            "very-upset-customer-procedures.md",
            "high-touch-customer",
            "What to do when a high-touch customer is very upset",
        ],
        ["customer-support-procedures.md", "base-customer", "The standard support procedure"],
    ]
    assert (
        out.splitlines()[0] == "cascade high-touch (variation support-agent/high-touch): 3 entries"
    )
    assert out.splitlines()[1].index("high-touch") == out.splitlines()[3].index("base-customer")
    rc, out, _ = run(capsys, "layers", "manifest", "high-touch", str(tmp_path), "--format", "json")
    data = json.loads(out)
    assert [(e["key"], e["layer"], e["path"]) for e in data["entries"]] == [
        ("prose.md", "high-touch-customer", "high-touch-customer/prose.md"),
        (
            "very-upset-customer-procedures.md",
            "high-touch-customer",
            "high-touch-customer/very-upset-customer-procedures.md",
        ),
        (
            "customer-support-procedures.md",
            "base-customer",
            "base-customer/customer-support-procedures.md",
        ),
    ]
    rc, _, err = run(capsys, "layers", "manifest", "nope", str(tmp_path))
    assert rc == 2 and "no cascade `nope` (cascades: high-touch)" in err


# -- editor features -------------------------------------------------------------------------


def test_hover_on_an_entry_says_where_it_stands_in_each_cascade(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, CADENYA_DOCS)
    base = tmp_path / "memory-layers/base-customer/prose.md"
    top = tmp_path / "memory-layers/high-touch-customer/prose.md"
    h = ide.hover(ls, base, 5)
    assert h is not None
    assert h.markdown == (
        "**prose.md** (layer `base-customer`)\n\nHow to write to a customer\n\n"
        "- cascade `high-touch`: shadowed by `high-touch-customer` (position 0)"
    )
    h = ide.hover(ls, top, 5)
    assert h is not None and h.markdown.endswith(
        "- cascade `high-touch`: **wins** (position 0); shadows `base-customer`"
    )
    assert ide.hover(ls, top, len(ls.texts[top]) - 1) is None  # in the content


def test_code_lens_names_the_shadowing_layer_and_opens_it(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, CADENYA_DOCS)
    base = tmp_path / "memory-layers/base-customer/prose.md"
    (lens,) = ide.code_lenses(ls, base)
    assert lens.title == "shadowed by high-touch-customer in cascade high-touch"
    assert lens.target is not None
    assert lens.target.path == tmp_path / "memory-layers/high-touch-customer/prose.md"
    assert ide.code_lenses(ls, tmp_path / "memory-layers/high-touch-customer/prose.md") == []


def _at(ls: LayerSet, needle: str, delta: int = 0) -> int:
    assert ls.cascades_path is not None
    return ls.texts[ls.cascades_path].index(needle) + delta


PINNED = CADENYA_DOCS.replace(
    "      - base-customer\n",
    "      - {layer: base-customer, entry: prose.md}\n"
    "      - layer: base-customer\n"
    "        entry: customer-support-procedures.md\n",
)


def test_completion_offers_layer_ids_and_the_item_layers_entry_keys(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, PINNED)
    path = ls.cascades_path
    assert path is not None
    got = ide.complete(ls, path, _at(ls, "high-touch-customer", 4))
    assert [(c.label, c.edit.range) for c in got] == [
        (
            "base-customer",
            TextRange(_at(ls, "high-touch-customer"), _at(ls, "high-touch-customer", 4)),
        ),
        (
            "high-touch-customer",
            TextRange(_at(ls, "high-touch-customer"), _at(ls, "high-touch-customer", 4)),
        ),
    ]
    flow = _at(ls, "entry: prose.md", len("entry: pr"))
    assert [c.label for c in ide.complete(ls, path, flow)] == [
        "customer-support-procedures.md",
        "prose.md",
    ]
    block = _at(ls, "entry: customer", len("entry: cust"))
    labels = [c.label for c in ide.complete(ls, path, block)]
    assert labels == ["customer-support-procedures.md", "prose.md"]
    assert ide.complete(ls, path, _at(ls, "variation: ", 11)) == []


def test_definition_goes_to_the_layer_or_the_pinned_entry(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, PINNED)
    assert ls.cascades_path is not None
    (loc,) = ide.definition(ls, ls.cascades_path, _at(ls, "high-touch-customer", 2))
    assert loc.path == tmp_path / "memory-layers/high-touch-customer/prose.md"  # first entry
    (loc,) = ide.definition(ls, ls.cascades_path, _at(ls, "entry: prose.md", 9))
    assert loc.path == tmp_path / "memory-layers/base-customer/prose.md"


def test_rename_a_layer_renames_its_folder_and_every_reference(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, PINNED)
    path = ls.cascades_path
    assert path is not None
    edit = ide.rename(ls, path, _at(ls, "base-customer", 1), "everyone")
    assert isinstance(edit, WorkspaceEdit)
    root = tmp_path / "memory-layers"
    assert edit.renames == ((root / "base-customer", root / "everyone"),)
    text = ls.texts[path]
    new = text
    for e in sorted(edit.edits[path], key=lambda e: -e.range.start):
        new = new[: e.range.start] + e.new_text + new[e.range.end :]
    assert new == text.replace("base-customer", "everyone")
    assert isinstance(
        ide.rename(ls, path, _at(ls, "base-customer", 1), "high-touch-customer"), FeatureError
    )
    assert isinstance(ide.rename(ls, path, _at(ls, "base-customer", 1), "a/b"), FeatureError)


def test_rename_an_entry_renames_its_file_and_the_pins(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, PINNED)
    path = ls.cascades_path
    assert path is not None
    edit = ide.rename(ls, path, _at(ls, "entry: prose.md", 8), "procedures/tone.md")
    assert isinstance(edit, WorkspaceEdit)
    layer = tmp_path / "memory-layers/base-customer"
    assert edit.renames == ((layer / "prose.md", layer / "procedures/tone.md"),)
    (e,) = edit.edits[path]
    assert (e.range, e.new_text) == (
        TextRange(_at(ls, "prose.md}"), _at(ls, "prose.md}", 8)),
        "procedures/tone.md",
    )
    # from the entry file's frontmatter too
    from_file = ide.rename(ls, layer / "prose.md", 1, "tone.md")
    assert isinstance(from_file, WorkspaceEdit) and len(from_file.edits[path]) == 1
    assert isinstance(ide.rename(ls, path, _at(ls, "entry: prose.md", 8), "../x.md"), FeatureError)
    assert isinstance(
        ide.rename(ls, path, _at(ls, "entry: prose.md", 8), "layer.yml"), FeatureError
    )


def test_find_layer_roots_skips_what_git_ignores(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n", encoding="utf-8")
    for d in ("memory-layers/a", "build/memory-layers/a", "sub/memory-layers/b"):
        (tmp_path / d).mkdir(parents=True)
    assert find_layer_roots(tmp_path) == [
        tmp_path / "memory-layers",
        tmp_path / "sub" / "memory-layers",
    ]
    assert find_layer_roots(tmp_path / "memory-layers" / "a") == [tmp_path / "memory-layers"]


def test_renaming_in_the_file_explorer_updates_the_cascades(tmp_path: Path) -> None:
    ls = layer_set(tmp_path, PINNED)
    path = ls.cascades_path
    assert path is not None
    root = tmp_path / "memory-layers"
    text = ls.texts[path]

    def applied(edit: WorkspaceEdit) -> str:
        new = text
        for e in sorted(edit.edits.get(path, ()), key=lambda e: -e.range.start):
            new = new[: e.range.start] + e.new_text + new[e.range.end :]
        return new

    folder = ide.rename_files(ls, [(root / "base-customer", root / "everyone")])
    assert applied(folder) == text.replace("base-customer", "everyone")
    entry = ide.rename_files(
        ls, [(root / "base-customer/prose.md", root / "base-customer/tone/prose.md")]
    )
    assert applied(entry) == text.replace("entry: prose.md", "entry: tone/prose.md")
    # to another layer, or over the layer's name file: the cascades are left alone
    assert (
        ide.rename_files(ls, [(root / "base-customer/prose.md", root / "x/prose.md")]).edits == {}
    )
    assert (
        ide.rename_files(
            ls, [(root / "base-customer/prose.md", root / "base-customer/layer.yml")]
        ).edits
        == {}
    )


def test_check_counts_layer_folders_apart_from_projects(
    capsys: pytest.CaptureFixture[str],
) -> None:
    examples = Path(__file__).resolve().parents[1] / "examples"
    assert main(["check", str(examples / "memory-layers")]) == 0
    assert capsys.readouterr().out.endswith("All checks passed (1 memory-layers folder).\n")
    main(["check", str(examples)])
    assert "(2 projects, 1 memory-layers folder)." in capsys.readouterr().out


def test_inside_a_layer_folder_every_file_is_read_as_the_format_says(tmp_path: Path) -> None:
    """The folder format decides what a layer folder holds, not git's ignore rules or the
    dependency-folder names the search for layer folders skips: a layer named `build`, an
    entry under a git-ignored `tmp/` are entries (as `layers pull` writes them). Links
    to folders are not followed, links out of the folder not read; neither is hidden."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("tmp/\nbuild/\n", encoding="utf-8")
    root = tmp_path / "memory-layers"
    for rel in ("build/a.md", "faq/tmp/notes.md", "faq/node_modules/x.md", "faq/.hidden.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("---\ndescription: d\n---\nc\n", encoding="utf-8")
    (tmp_path / "secret").write_text("private", encoding="utf-8")
    (root / "faq" / "key.md").symlink_to(tmp_path / "secret")
    (root / "faq" / "alias.md").symlink_to("tmp/notes.md")
    (root / "faq" / "linked").symlink_to(root / "build")
    deep = root / "faq" / "/".join(f"d{i}" for i in range(12))
    deep.mkdir(parents=True)
    (deep / "too-deep.md").write_text("x", encoding="utf-8")
    (deep.parent / "deepest.md").write_text("x", encoding="utf-8")

    scan = scan_layer_folder(root)
    assert sorted(p.relative_to(root).as_posix() for p in scan.files) == [
        "build/a.md",
        "faq/alias.md",
        "faq/" + "/".join(f"d{i}" for i in range(11)) + "/deepest.md",
        "faq/node_modules/x.md",
        "faq/tmp/notes.md",
    ]
    assert [(b.rel, b.kind, b.why) for b in scan.blind] == [
        (
            "faq/" + "/".join(f"d{i}" for i in range(12)),
            "folder",
            "memory-layers/faq/" + "/".join(f"d{i}" for i in range(12)) + " is deeper than "
            "the 12 levels a layer folder is read",
        ),
        ("faq/key.md", "file", "a symbolic link that leads out of the folder"),
        ("faq/linked", "folder", "memory-layers/faq/linked is a symbolic link (not followed)"),
    ]
    assert sorted(load_layer_set(root).layers) == ["build", "faq"]
