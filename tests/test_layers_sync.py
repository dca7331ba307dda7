"""``mantle-lsp layers diff|push|pull`` end to end: the command line, the official SDK
(``cadenya``) and the stand-in Cadenya of tests/cadenya_standin.py on 127.0.0.1 (in a
thread), its state in memory. Every write the SDK makes is counted, so "nothing to do"
means no write. The faults the stand-in injects are tested in test_layers_sync_safety.py.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cadenya_standin import KEY, WS, Service, running
from mantle_lsp.cli.main import main
from support import write_fixture

pytest.importorskip("cadenya")


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    """The stand-in Cadenya, and the environment pointing the CLI at it."""
    state = Service()
    with running(state) as url:
        monkeypatch.setenv("CADENYA_API_KEY", KEY)
        monkeypatch.setenv("CADENYA_WORKSPACE_ID", WS)
        monkeypatch.setenv("CADENYA_BASE_URL", url)
        yield state


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["layers", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# the Cadenya documentation's example, with a variation to assign it to
FOLDER = """\
//- memory-layers/cascades.yml
cascades:
  vip-support:
    variation: support-agent/vip
    layers:
      - high-touch-customer
      - base-customer
      - {layer: faq, entry: refunds.md}
//- memory-layers/high-touch-customer/layer.yml
name: High-touch customer
//- memory-layers/high-touch-customer/prose.md
---
description: How to write to a customer who pays for the premium plan
---
Warm, unhurried, first names.
//- memory-layers/high-touch-customer/very-upset-customer-procedures.md
---
description: "What to do when a customer is very upset: apologise, escalate"
---
1. Apologise once.
2. Offer a call back within the hour.
//- memory-layers/base-customer/prose.md
---
description: How to write to any customer
---
Short, friendly sentences.
//- memory-layers/base-customer/customer-support-procedures.md
---
description: The support procedures every agent follows
---
Check the account first.
//- memory-layers/faq/refunds.md
---
description: Refund rules
---
Refunds within 30 days.
"""


def folder(tmp_path: Path, text: str = FOLDER) -> Path:
    write_fixture(tmp_path, text, defaults=False)
    return tmp_path / "memory-layers"


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_push_creates_layers_entries_and_assignments_then_a_second_push_writes_nothing(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip", "standard"])
    root = folder(tmp_path)

    code, out, err = run(capsys, "diff", str(root))
    assert (code, err) == (0, "")
    assert service.writes == []  # a diff writes nothing
    assert "+ layer high-touch-customer: create (name: 'High-touch customer')" in out
    assert "+++ folder/base-customer/prose.md" in out
    assert "    +Short, friendly sentences." in out
    assert "  + high-touch-customer at position 0" in out
    assert "  + base-customer at position 1" in out
    assert "pinned entry faq/refunds.md is not assigned" in out

    code, out, err = run(capsys, "push", str(root))
    assert (code, err) == (0, "")
    assert out.endswith("Pushed 10 changes.\n")
    assert service.entries_of("base-customer") == {
        "prose.md": ("How to write to any customer", "Short, friendly sentences.\n"),
        "customer-support-procedures.md": (
            "The support procedures every agent follows",
            "Check the account first.\n",
        ),
    }
    assert service.entries_of("high-touch-customer")["very-upset-customer-procedures.md"][0] == (
        "What to do when a customer is very upset: apologise, escalate"
    )
    layer = service.layer_by_external_id("high-touch-customer")
    assert layer["metadata"]["name"] == "High-touch customer"
    assert service.layer_by_external_id("faq")["metadata"]["name"] == "faq"
    assert service.assignments("support-agent", "vip") == [
        ("high-touch-customer", 0),
        ("base-customer", 1),
    ]
    assert service.assignments("support-agent", "standard") == []

    service.calls.clear()
    code, out, err = run(capsys, "push", str(root))
    assert (code, err) == (0, "")
    assert "No changes: the service already holds what the folder says." in out
    assert service.writes == []
    code, out, _ = run(capsys, "diff", str(root))
    assert code == 0 and "No changes" in out


def test_an_edit_is_one_update_of_the_changed_field_shown_as_a_diff(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip"])
    root = folder(tmp_path)
    assert run(capsys, "push", str(root))[0] == 0
    prose = root / "base-customer" / "prose.md"
    prose.write_text(prose.read_text().replace("Short", "Short and warm"), encoding="utf-8")

    code, out, _ = run(capsys, "diff", str(root))
    assert code == 0
    assert "  ~ prose.md (content)" in out
    assert "    -Short, friendly sentences." in out
    assert "    +Short and warm, friendly sentences." in out
    assert "1 change: 0 to create, 1 to update, 0 to delete" in out

    service.calls.clear()
    assert run(capsys, "push", str(root))[0] == 0
    assert [m for m, _ in service.writes] == ["PATCH"]
    assert service.entries_of("base-customer")["prose.md"] == (
        "How to write to any customer",
        "Short and warm, friendly sentences.\n",
    )


def test_a_removed_entry_is_deleted_only_with_prune(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip"])
    root = folder(tmp_path)
    assert run(capsys, "push", str(root))[0] == 0
    (root / "base-customer" / "customer-support-procedures.md").unlink()

    service.calls.clear()
    code, out, _ = run(capsys, "push", str(root))
    assert code == 0 and service.writes == []
    assert "Left in place (push --prune removes them):" in out
    assert "entry base-customer/customer-support-procedures.md" in out
    assert "customer-support-procedures.md" in service.entries_of("base-customer")

    code, out, _ = run(capsys, "diff", "--prune", str(root))
    assert "  - customer-support-procedures.md" in out
    assert service.writes == []

    code, out, _ = run(capsys, "push", "--prune", str(root))
    assert code == 0
    assert [m for m, _ in service.writes] == ["DELETE"]
    assert list(service.entries_of("base-customer")) == ["prose.md"]


def test_prune_deletes_a_whole_layer_only_when_a_push_made_it(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip"])
    by_hand = service.add_layer("made-by-hand", "Made by hand")
    service.add_entry(by_hand, "note.md", "A note", "Kept.\n")
    root = folder(tmp_path)
    assert run(capsys, "push", str(root))[0] == 0
    for f in (root / "faq").iterdir():
        f.unlink()
    (root / "faq").rmdir()
    cascades = root / "cascades.yml"
    cascades.write_text(
        cascades.read_text().replace("      - {layer: faq, entry: refunds.md}\n", "")
    )

    code, out, _ = run(capsys, "push", "--prune", str(root))
    assert code == 0, out
    assert "- layer faq: delete (with its 1 entries)" in out
    ids = {v["metadata"]["externalId"] for v in service.layers.values()}
    assert ids == {"made-by-hand", "high-touch-customer", "base-customer"}


def test_variation_positions_follow_the_cascade_and_a_swap_never_collides(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip"])
    root = folder(tmp_path)
    assert run(capsys, "push", str(root))[0] == 0
    cascades = root / "cascades.yml"
    text = cascades.read_text()
    cascades.write_text(
        text.replace(
            "      - high-touch-customer\n      - base-customer\n",
            "      - base-customer\n      - high-touch-customer\n",
        )
    )
    code, out, _ = run(capsys, "diff", str(root))
    assert "  ~ base-customer: position 1 -> 0" in out
    assert "  ~ high-touch-customer: position 2 -> 1" in out
    service.calls.clear()
    code, out, err = run(capsys, "push", str(root))
    assert (code, err) == (0, "")
    assert service.assignments("support-agent", "vip") == [
        ("base-customer", 0),
        ("high-touch-customer", 1),
    ]
    assert all(path.endswith(":updateMemoryLayer") for _, path in service.writes)
    assert run(capsys, "push", str(root))[1].startswith("No changes")


def test_an_assignment_the_cascade_does_not_list_is_removed_only_with_prune(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    aid = service.add_agent("support-agent", ["vip"])
    other = service.add_layer("seasonal", "Seasonal")
    vid = next(iter(service.variations[aid]))
    service.variations[aid][vid]["spec"]["memoryLayerAssignments"].append(
        {"memoryLayerId": other, "position": 0}
    )
    root = folder(tmp_path)
    code, out, err = run(capsys, "push", str(root))
    assert code == 1
    assert "problem: variation support-agent/vip: position 0 is held by layer seasonal" in out
    assert "push refused" in err
    assert service.writes == []

    code, out, err = run(capsys, "push", "--prune", str(root))
    assert (code, err) == (0, "")
    assert "  - seasonal (position 0)" in out
    assert service.assignments("support-agent", "vip") == [
        ("high-touch-customer", 0),
        ("base-customer", 1),
    ]


def test_an_unknown_variation_stops_the_push(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    root = folder(tmp_path)
    code, out, err = run(capsys, "push", str(root))
    assert code == 1
    assert "problem: variation support-agent/vip: no agent `support-agent` in the workspace" in out
    assert err == "mantle-lsp: push refused: fix the problems above first\n"
    assert service.writes == []


def test_pull_into_an_empty_folder_round_trips_byte_identical(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    service.add_agent("support-agent", ["vip"])
    root = folder(tmp_path / "a")
    (root / "nested" / "deeper").mkdir(parents=True)
    (root / "nested" / "layer.yml").write_text(
        'name: "Nested: keys with folders"\ndescription: Entries in sub-folders\n'
    )
    (root / "nested" / "deeper" / "x.md").write_text(
        '---\ndescription: "Quoted: because of the colon"\n---\nno final newline'
    )
    (root / "nested" / "empty-desc.md").write_text('---\ndescription: ""\n---\nbody\n')
    assert run(capsys, "push", str(root))[0] == 0

    empty = tmp_path / "b"
    empty.mkdir()
    monkeypatch.chdir(empty)
    code, out, err = run(capsys, "pull")
    assert (code, err) == (0, "")
    assert "wrote memory-layers/high-touch-customer/prose.md" in out
    mine = files_of(root)
    del mine["cascades.yml"], mine["sync.yml"]  # the folder's own: a pull never writes them
    assert files_of(empty / "memory-layers") == mine

    # a second pull changes nothing, and a push of the pulled folder neither
    code, out, _ = run(capsys, "pull")
    assert "0 files changed" in out
    service.calls.clear()
    assert run(capsys, "push")[1].startswith("No changes")
    assert service.writes == []


def test_pull_updates_changed_files_and_deletes_stale_ones_only_with_prune(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    lid = service.add_layer("faq", "faq")
    service.add_entry(lid, "refunds.md", "Refund rules", "Refunds within 60 days.\n")
    service.add_layer("system", "episodic", system=True)
    root = folder(tmp_path)
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 0
    assert "wrote memory-layers/faq/refunds.md" in out or "faq/refunds.md" in out
    assert (root / "faq" / "refunds.md").read_text().endswith("Refunds within 60 days.\n")
    assert (root / "base-customer" / "prose.md").exists()  # not on the service: untouched
    assert not (root / "system").exists()  # system-managed layers are never pulled

    (root / "faq" / "stale.md").write_text("---\ndescription: Old\n---\nOld.\n")
    code, out, _ = run(capsys, "pull", str(root))
    assert "Not on the service (pull --prune deletes them):" in out
    assert (root / "faq" / "stale.md").exists()
    code, out, _ = run(capsys, "pull", "--prune", str(root))
    assert not (root / "faq" / "stale.md").exists()


def test_pull_never_writes_outside_the_folder(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    lid = service.add_layer("faq", "faq")
    service.add_entry(lid, "../escape.md", "Nope", "x")
    service.add_entry(lid, "layer.yml", "Nope", "x")
    service.add_entry(lid, "ok.md", "Fine", "y\n")
    service.add_layer("..", "dots")
    root = tmp_path / "memory-layers"
    code, out, err = run(capsys, "pull", str(root))
    assert code == 1  # something was skipped
    assert "skipped: layer ..: its external id cannot be a folder name" in out
    assert "skipped: entry faq/../escape.md: its key is not a plain relative path" in out
    assert "skipped: entry faq/layer.yml: its key is the layer folder's own layer.yml" in out
    assert err == "mantle-lsp: 3 skipped (listed above); the rest was pulled\n"
    assert files_of(tmp_path) == {"memory-layers/faq/ok.md": b"---\ndescription: Fine\n---\ny\n"}


# -- failures: one line, exit status 2, never a traceback ------------------------------


def _one_line_error(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mantle-lsp: error: ")
    return lines[0]


def test_no_sdk_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cadenya", None)  # `import cadenya` fails
    monkeypatch.setenv("CADENYA_API_KEY", KEY)
    root = folder(tmp_path)
    for cmd in ("diff", "push", "pull"):
        code, _, err = run(capsys, cmd, str(root))
        assert code == 2
        assert "the Cadenya SDK is not installed: pip install 'mantle-lsp[cadenya]'" in (
            _one_line_error(err)
        )


@pytest.mark.parametrize("unset", ["CADENYA_API_KEY", "CADENYA_WORKSPACE_ID"])
def test_a_missing_credential_is_one_line(
    tmp_path: Path,
    service: Service,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: Any,
    unset: str,
) -> None:
    monkeypatch.delenv(unset)
    root = folder(tmp_path)
    code, _, err = run(capsys, "push", str(root))
    assert code == 2
    assert f"set {unset}" in _one_line_error(err)
    assert service.calls == []


def test_a_wrong_key_an_http_error_and_no_network_are_one_line(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    root = folder(tmp_path)
    monkeypatch.setenv("CADENYA_API_KEY", "wrong")
    code, _, err = run(capsys, "diff", str(root))
    assert code == 2
    assert _one_line_error(err) == (
        "mantle-lsp: error: listing memory layers: the service answered HTTP 401: invalid API key"
    )
    monkeypatch.setenv("CADENYA_API_KEY", KEY)
    service.fail = 500
    code, _, err = run(capsys, "pull", str(root))
    assert code == 2 and "HTTP 500: internal error" in _one_line_error(err)

    # a port nothing listens on
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("CADENYA_BASE_URL", f"http://127.0.0.1:{port}")
    code, _, err = run(capsys, "push", str(root))
    assert code == 2
    assert re.match(
        r"mantle-lsp: error: listing memory layers: cannot reach the service: ",
        _one_line_error(err),
    )


def test_a_failure_halfway_says_how_far_the_push_got(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip"])
    service.refuse_after_writes = 3
    code, _, err = run(capsys, "push", str(folder(tmp_path)))
    assert code == 2
    assert _one_line_error(err) == (
        "mantle-lsp: error: push stopped after 3 of 10 changes: creating layer faq: "
        "the service answered HTTP 403: permission denied"
    )


def test_a_bad_base_url_is_one_line(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("CADENYA_BASE_URL", "ftp://example.invalid")
    code, _, err = run(capsys, "diff", str(folder(tmp_path)))
    assert code == 2
    assert "cannot set up the Cadenya client" in _one_line_error(err)


def test_no_folder_is_one_line(tmp_path: Path, service: Service, capsys: Any) -> None:
    code, _, err = run(capsys, "diff", str(tmp_path))
    assert code == 2
    assert _one_line_error(err).endswith("no memory-layers/ folder found")


def test_an_entry_file_that_cannot_be_read_is_left_alone_and_the_rest_is_pushed(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_agent("support-agent", ["vip"])
    root = folder(tmp_path)
    assert run(capsys, "push", str(root))[0] == 0
    (root / "faq" / "refunds.md").write_bytes(b"---\ndescription: x\n---\n\x00\x01binary")
    prose = root / "base-customer" / "prose.md"
    prose.write_text(prose.read_text().replace("Short", "Brief"))
    service.calls.clear()
    code, out, err = run(capsys, "push", "--prune", str(root))
    assert code == 1
    assert (
        "skipped: entry faq/refunds.md: it has a NUL byte (binary data), which an entry "
        "cannot hold" in out
    )
    assert err == "mantle-lsp: 1 skipped (listed above); the rest was pushed\n"
    assert [m for m, _ in service.writes] == ["PATCH"]  # prose.md; refunds.md not emptied
    assert service.entries_of("faq")["refunds.md"] == ("Refund rules", "Refunds within 30 days.\n")


def test_layers_alone_is_the_diff_of_the_current_folder(
    tmp_path: Path,
    service: Service,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`diff` is the default: `mantle-lsp layers` with no subcommand changes nothing."""
    service.add_agent("support-agent", ["vip", "standard"])
    root = folder(tmp_path)
    monkeypatch.chdir(root)
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    assert "+ layer high-touch-customer: create (name: 'High-touch customer')" in out
    assert service.writes == []
