"""In-process checks of the protocol conversions (lsp/convert.py) and the settings."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp
from pygls import uris

from mantle_lsp.ide.diagnostics import Diagnostic
from mantle_lsp.ide.types import TextEdit, WorkspaceEdit
from mantle_lsp.lsp import convert
from mantle_lsp.lsp.base import Settings
from mantle_lsp.lsp.completion import plain_snippet
from mantle_lsp.syntax.text import LineIndex, TextRange, normalize_newlines


def test_positions_are_utf16_on_normalized_text() -> None:
    editor = "a: 1\r\n😀x: 𝄞y\r\n"
    index = LineIndex(normalize_newlines(editor))
    x = index.text.index("x")
    assert convert.to_position(index, x) == lsp.Position(line=1, character=2)
    assert convert.to_offset(index, lsp.Position(line=1, character=2)) == x
    y = index.text.index("y")
    assert convert.to_position(index, y) == lsp.Position(line=1, character=7)
    assert convert.to_offset(index, lsp.Position(line=1, character=7)) == y
    # past the end of a line: clamped to the line end, never into the next line
    assert convert.to_offset(index, lsp.Position(line=0, character=99)) == 4
    assert convert.to_offset(index, lsp.Position(line=9, character=0)) == len(index.text)
    rng = convert.to_text_range(
        index,
        lsp.Range(start=lsp.Position(line=1, character=7), end=lsp.Position(line=1, character=2)),
    )
    assert rng == TextRange(y, y)  # an inverted range becomes empty, not negative


def test_diagnostic_round_trip() -> None:
    index = LineIndex("if: session.a.b\n")
    d = Diagnostic(Path("/p/skill.md"), TextRange(4, 15), "x.y.z", "warning", "msg")
    wire = convert.to_diagnostic(d, index)
    assert wire.severity == lsp.DiagnosticSeverity.Warning
    assert (wire.code, wire.source, wire.message) == ("x.y.z", "mantle-lsp", "msg")
    assert convert.from_diagnostic(wire, Path("/p/skill.md"), index) == d


def test_a_diagnostic_code_links_to_its_page() -> None:
    index = LineIndex("if: session.a.b\n")
    d = Diagnostic(
        Path("/p/skill.md"), TextRange(4, 15), "lsp.tools.unknown_parameter", "warning", "msg"
    )
    wire = convert.to_diagnostic(d, index)
    assert wire.code_description is not None
    href = wire.code_description.href
    assert href.startswith("file://") and href.endswith("/lsp.tools.unknown_parameter.md")
    assert (
        Path(uris.to_fs_path(href) or "")
        .read_text(encoding="utf-8")
        .startswith("# lsp.tools.unknown_parameter\n")
    )
    # a code without a page (not registered): no link
    bare = Diagnostic(Path("/p/skill.md"), TextRange(4, 15), "x.y.z", "warning", "msg")
    assert convert.to_diagnostic(bare, index).code_description is None


def test_code_patterns() -> None:
    assert convert.code_matches("mantle.validation.prose.x", ["mantle.validation.prose"])
    assert convert.code_matches("mantle.validation.prose.x", ["mantle.validation.prose."])
    assert convert.code_matches("lsp.legacy.syntax", ["lsp.legacy.syntax"])
    assert not convert.code_matches("mantle.validation.prosey", ["mantle.validation.prose"])
    assert not convert.code_matches("lsp.a", ["", " "])


def test_settings_from_the_client() -> None:
    assert Settings.from_client(None) == Settings("auto", ())
    nested = {"engineVersion": "3.22", "diagnostics": {"ignore": ["a.b", " c "]}}
    assert Settings.from_client(nested) == Settings("3.22", ("a.b", "c"))
    assert Settings.from_client({"diagnostics.ignore": "a, b"}).ignore == ("a", "b")


def test_semantic_tokens_encoding() -> None:
    text = "ab 😀cd\nef\n"
    index = LineIndex(text)
    types_ = ["keyword", "property"]
    mods = ["declaration", "readonly"]
    cd = text.index("cd")
    data = convert.encode_semantic_tokens(
        [
            (TextRange(cd, cd + 2), "property", ("readonly",)),
            (TextRange(0, 2), "keyword", ()),
            (TextRange(0, 1), "keyword", ()),  # overlaps: dropped
            (TextRange(1, 2), "unknown", ()),  # not in the legend: dropped
            (TextRange(cd, text.index("f") + 1), "keyword", ("declaration",)),  # 2 lines
        ],
        index,
        types_,
        mods,
    )
    assert data == [
        0, 0, 2, 0, 0,  # "ab"
        0, 5, 2, 1, 2,  # "cd" after an astral character (UTF-16 column 5)
        1, 0, 2, 0, 1,  # "ef": the second line of the multi-line token (its "cd" overlaps)
    ]  # fmt: skip


def test_plain_snippets() -> None:
    assert plain_snippet("${1:reason}: $0") == "reason: "
    assert plain_snippet("{session.$1}") == "{session.}"
    assert plain_snippet(r"cost \$5 ${2:x}") == "cost $5 x"


def test_workspace_edit_order_and_forms() -> None:
    a, b = Path("/p/skills/a/skill.md"), Path("/p/skills/a")
    index = LineIndex("x\n")
    edit = WorkspaceEdit(
        edits={a: (TextEdit(TextRange(0, 1), "y"),)},
        renames=((b, Path("/p/skills/b")),),
        new_files={Path("/p/memory.yml"): "k: v\n"},
    )
    got = convert.to_workspace_edit(
        edit, lambda p: index, lambda p: p.as_uri(), lambda p: 7 if p == a else None, True
    )
    kinds = [type(c).__name__ for c in got.document_changes or ()]
    assert kinds == ["CreateFile", "TextDocumentEdit", "TextDocumentEdit", "RenameFile"]
    text_edit = (got.document_changes or ())[2]
    assert isinstance(text_edit, lsp.TextDocumentEdit)
    assert text_edit.text_document.version == 7
    plain = convert.to_workspace_edit(
        WorkspaceEdit(edits=edit.edits),
        lambda p: index,
        lambda p: p.as_uri(),
        lambda p: None,
        False,
    )
    assert plain.changes == {
        a.as_uri(): [
            lsp.TextEdit(
                range=lsp.Range(
                    start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=1)
                ),
                new_text="y",
            )
        ]
    }


def test_the_wire_json_of_a_diagnostic_is_what_pygls_sends(tmp_path: Path) -> None:
    """The first look before the server is imported (lsp/early.py) writes diagnostics as
    plain JSON (lsp/wire.py): the same, key for key, as pygls' serialization of
    ``convert.to_diagnostic``, for every diagnostic of the broken example (fix data,
    engine codes, pages) and one with related information, with non-ASCII text."""
    from pygls.protocol import default_converter

    from mantle_lsp.ide.codes import REGISTRY
    from mantle_lsp.ide.diagnostics import project_diagnostics
    from mantle_lsp.ide.rules.base import Related
    from mantle_lsp.ide.types import Location
    from mantle_lsp.lsp import wire
    from mantle_lsp.model.project import Project
    from test_lsp_support import TELECOM

    converter = default_converter()
    proj = Project.load(TELECOM.parent / "telecom-broken")
    found = [
        (d, proj.files[p].source.index) for p, ds in project_diagnostics(proj).items() for d in ds
    ]
    assert len(found) > 20
    index = LineIndex("😀 é\nline two 𝄞 x\n")
    other = Path("/p/other.md")
    related = Related(Location(other, TextRange(9, 11)), "defined here")
    code = next(iter(REGISTRY))
    found.append(
        (
            Diagnostic(
                Path("/p/skill.md"), TextRange(2, 12), code, "hint", "m é", {"a": 1}, (related,)
            ),
            index,
        )
    )

    def target(path: Path) -> tuple[str, LineIndex] | None:
        return ("file:///p/other.md", index) if path == other else None

    for d, idx in found:
        for rel in (None, target):
            sent = converter.unstructure(convert.to_diagnostic(d, idx, rel))
            assert wire.diagnostic_json(d, idx, rel) == sent, d
