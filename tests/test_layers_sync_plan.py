"""The push plan (server/mantle_lsp/sync/plan.py), pure: which changes, in which order,
and what stops a push. The end-to-end tests with the SDK are in test_layers_sync.py."""

from __future__ import annotations

import ast
from pathlib import Path

from mantle_lsp.model.layers import load_layer_set
from mantle_lsp.sync.plan import (
    Assign,
    CreateLayer,
    DeleteLayer,
    Move,
    Unassign,
    UpdateLayer,
    plan,
    render_diff,
)
from mantle_lsp.sync.state import (
    Assignment,
    Desired,
    EntryState,
    LayerState,
    Remote,
    VariationState,
    desired,
)
from support import write_fixture


def _remote(*assigned: tuple[str, int], layers: tuple[str, ...] = ()) -> Remote:
    names = {lid for lid, _ in assigned} | set(layers)
    remote = Remote(layers={lid: LayerState(lid, lid, "", id=f"id-{lid}") for lid in names})
    remote.variations["a/v"] = VariationState(
        "a/v", "agent", "var", [Assignment(lid, pos, f"id-{lid}") for lid, pos in assigned]
    )
    return remote


def _want(*layers: str) -> Desired:
    return Desired(
        layers={lid: LayerState(lid, None, None) for lid in layers},
        variations={"a/v": list(layers)},
    )


def _apply(remote: Remote, ops: list[object]) -> dict[str, int]:
    """Replay the variation ops the way the service checks them: a position in use is
    refused."""
    held = {a.layer: a.position for a in remote.variations["a/v"].assignments}
    for op in ops:
        if isinstance(op, Unassign):
            del held[op.layer]
        elif isinstance(op, (Assign, Move)):
            others = {p for lid, p in held.items() if lid != op.layer}
            assert op.position not in others, f"{op} collides"
            held[op.layer] = op.position
    return held


def test_a_rotation_of_three_layers_goes_through_a_free_position() -> None:
    remote = _remote(("a", 0), ("b", 1), ("c", 2))
    p = plan(_want("c", "a", "b"), remote)
    assert p.problems == []
    assert _apply(remote, list(p.ops)) == {"c": 0, "a": 1, "b": 2}
    assert len(p.ops) == 4  # one step aside, three moves


def test_layers_in_place_are_not_touched_and_new_ones_fill_their_positions() -> None:
    remote = _remote(("a", 0))
    p = plan(_want("a", "b"), remote)
    assert p.ops == [CreateLayer("b", "b", ""), Assign("a/v", "b", 1, "")]


def test_assigning_an_existing_layer_carries_its_id() -> None:
    remote = _remote(layers=("b",))
    want = _want("b")
    want.layers = {}
    assert plan(want, remote).ops == [Assign("a/v", "b", 0, "id-b")]


def test_more_than_ten_assignments_is_a_problem() -> None:
    remote = _remote(*((f"old{i}", i + 20) for i in range(5)))
    p = plan(_want(*(f"l{i}" for i in range(6))), remote)
    assert any("more than 10 layers" in m for m in p.problems)
    assert not any(isinstance(op, Assign) for op in p.ops)


def test_an_unknown_layer_or_variation_is_a_problem() -> None:
    remote = _remote()
    want = _want("a")
    want.variations["a/v"].append("nowhere")
    assert plan(want, remote).problems == [
        "variation a/v: layer nowhere is neither in the folder nor on the service"
    ]
    remote.variations["a/v"].missing = "no agent `a` in the workspace"
    assert plan(_want("a"), remote).problems == ["variation a/v: no agent `a` in the workspace"]


def test_a_system_managed_layer_is_never_written() -> None:
    remote = _remote()
    remote.system_layers.add("a")
    p = plan(_want("a"), remote)
    assert p.ops == []
    assert p.problems[0].startswith("layer a: the service has a system-managed layer")


def test_an_entry_update_masks_only_what_changed() -> None:
    remote = _remote(layers=("a",))
    remote.layers["a"].entries["k.md"] = EntryState("k.md", "Same", "old\n", "e1")
    want = Desired(layers={"a": LayerState("a", "a", "")})
    want.layers["a"].entries["k.md"] = EntryState("k.md", "Same", "new\n")
    (op,) = plan(want, remote).ops
    assert op.mask == ["spec.content"]  # type: ignore[union-attr]
    assert "  ~ k.md (content)" in render_diff(plan(want, remote))


def test_the_folder_side_leaves_episodic_layers_and_pinned_entries_out(tmp_path: Path) -> None:
    write_fixture(
        tmp_path,
        """\
//- memory-layers/cascades.yml
cascades:
  one:
    variation: agent/v
    layers: [session, base, {layer: base, entry: a.md}]
  two:
    variation: agent/v
    layers: [base, other]
  three:
    variation: no-slash
    layers: [base]
//- memory-layers/session/layer.yml
episodic: true
//- memory-layers/base/a.md
---
description: A
---
a
//- memory-layers/other/broken.md
---
description: B
""",
        defaults=False,
    )
    want = desired(load_layer_set(tmp_path / "memory-layers"))
    assert sorted(want.layers) == ["base", "other"]
    assert want.variations == {"agent/v": ["base"]}
    # an entry that cannot be read is skipped (left alone on the service), not a problem
    assert want.skipped == {
        "other/broken.md": "the frontmatter is never closed: add a `---` line after `description:`"
    }
    assert want.problems == [
        "cascades one and two both assign layers to agent/v, in different orders: keep one",
        "cascade three: variation `no-slash` should be `agent/variation` (their external "
        "ids or ids)",
    ]
    assert any("episodic" in n for n in want.notes)
    assert any("pinned entry base/a.md" in n for n in want.notes)


def test_a_layer_yml_that_does_not_say_leaves_the_services_name_alone() -> None:
    remote = _remote(layers=("a",))
    remote.layers["a"].name = "Named in the web app"
    remote.layers["a"].description = "Set there too"
    want = Desired(layers={"a": LayerState("a", None, None)})
    assert plan(want, remote).ops == []
    want.layers["a"].name = "Renamed"
    want.layers["a"].description = ""  # `description: ""` clears it
    (op,) = plan(want, remote).ops
    assert op == UpdateLayer(
        "a", "id-a", "", "Renamed", "", "Named in the web app", "Set there too"
    )


def test_no_module_of_the_editor_reaches_the_sync_package_or_the_sdk() -> None:
    server = Path(__file__).resolve().parents[1] / "server" / "mantle_lsp"
    for sub in ("syntax", "model", "ide", "lsp"):
        for path in (server / sub).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [("." * node.level) + (node.module or "")]
                for name in names:
                    assert "sync" not in name.split(".") or (sub == "lsp" and name == ".sync"), (
                        path,
                        name,
                    )
                    assert not name.startswith("cadenya"), (path, name)


def test_prune_deletes_whole_layers_of_this_folder_only_and_named_legacy_ones() -> None:
    """The layers a prune may delete, as docs/memory-layers.md "What prune deletes" says:
    this folder's (its sync.yml id), an earlier mantle-lsp's only when named, never
    another repository's or one made by hand."""

    def layer(lid: str, managed: bool, repository: str = "") -> LayerState:
        return LayerState(lid, lid, "", id=f"id-{lid}", managed=managed, repository=repository)

    remote = Remote(
        layers={
            "ours": layer("ours", True, "repo-a-0001"),
            "theirs": layer("theirs", True, "repo-b-0002"),
            "legacy": layer("legacy", True),
            "by-hand": layer("by-hand", False),
        }
    )
    want = Desired(repository="repo-a-0001")
    deleted = [op.layer for op in plan(want, remote, prune=True).ops if isinstance(op, DeleteLayer)]
    assert deleted == ["ours"]
    p = plan(want, remote, prune=False)
    assert p.ops == []
    assert p.kept == [
        "layer legacy (made by an earlier mantle-lsp, with no repository id: "
        "--prune-layer legacy deletes it)",
        "layer ours (made by a push from this folder, no longer in it)",
    ]
    p = plan(want, remote, prune=True, prune_layers=["legacy", "by-hand"])
    assert [op.layer for op in p.ops if isinstance(op, DeleteLayer)] == ["legacy", "ours"]
    assert p.problems == [
        "--prune-layer by-hand: the layer was not made by mantle-lsp (delete it in Cadenya)"
    ]
    # a folder with no id (no sync.yml yet) owns no layer
    assert plan(Desired(), remote, prune=True).ops == []


def test_a_key_that_would_share_a_file_with_one_in_the_folder_is_left_alone() -> None:
    """The folder has `faq/a.md` and `faq/x` (files); the service has `faq/A.md` (one file
    with `a.md` on macOS) and `faq/x/y.md` (needs `x` to be a folder): all four are left
    alone by a push (and skipped by a pull), even with --prune."""
    remote = _remote(layers=("faq",))
    for key in ("A.md", "x/y.md", "ok.md"):
        remote.layers["faq"].entries[key] = EntryState(key, "D", "c\n", f"e-{key}")
    want = Desired(layers={"faq": LayerState("faq", None, None)})
    want.paths = {"faq/a.md", "faq/x", "faq/ok.md"}
    for key in ("a.md", "x", "ok.md"):
        want.layers["faq"].entries[key] = EntryState(key, "D", "c\n")
    p = plan(want, remote, prune=True)
    assert p.ops == []
    assert p.skipped == [
        "entry faq/A.md: its key and faq/a.md differ only in case or Unicode normalisation "
        "(one file on macOS and Windows)",
        "entry faq/a.md: its key and faq/A.md differ only in case or Unicode normalisation "
        "(one file on macOS and Windows)",
        "entry faq/x: a file and a folder of the layer (faq/x/y.md) cannot share a name",
        "entry faq/x/y.md: a file and a folder of the layer (faq/x) cannot share a name",
    ]
