"""``mantle-lsp layers diff|push|pull`` never loses data: the faults of issue 28, items 1-9,
each against the stand-in Cadenya (tests/cadenya_standin.py).

The rules they hold the sync to (docs/memory-layers.md, "Sync"): what pull writes, diff and
push see, and what pull does not write, push does not touch; a prune deletes only what the
folder can see and this repository made; nothing is read or written through a link that
leaves the folder; every write is atomic; a round trip is byte-exact; one bad key or
entry is reported and the rest goes on; every loop over the service's answers is bounded;
nothing the service or a file says can drive the terminal.
"""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cadenya_standin import KEY, WS, Service, running
from mantle_lsp.cli.main import main
from support import write_fixture

pytest.importorskip("cadenya")


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Service]:
    monkeypatch.chdir(tmp_path)  # paths are printed relative to it
    state = Service()
    with running(state) as url:
        monkeypatch.setenv("CADENYA_API_KEY", KEY)
        monkeypatch.setenv("CADENYA_WORKSPACE_ID", WS)
        monkeypatch.setenv("CADENYA_BASE_URL", url)
        yield state


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["layers", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def entry(description: str, content: str) -> str:
    return f"---\ndescription: {description}\n---\n{content}"


def folder(tmp_path: Path, files: dict[str, str]) -> Path:
    write_fixture(
        tmp_path,
        "".join(f"//- memory-layers/{rel}\n{text}" for rel, text in files.items()),
        defaults=False,
    )
    return tmp_path / "memory-layers"


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def deletes(service: Service) -> list[str]:
    return [path for method, path in service.writes if method == "DELETE"]


# -- 1. push --prune never deletes what the folder holds ---------------------------------


def test_what_pull_writes_diff_and_push_see(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    """Keys under folders git ignores or that dependency folders are named like, and layers
    named `build`, `dist`, `venv`…: pulled, then seen by diff, so a prune deletes none."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("tmp/\nbuild/\ndist/\nvenv/\n__pycache__/\n")
    faq = service.add_layer("faq", "faq")
    for key in ("tmp/notes.md", "node_modules/x.md", "__pycache__/y.md", "ok.md"):
        service.add_entry(faq, key, "An entry", f"{key}\n")
    for ext in ("build", "dist", "venv", "node_modules", "__pycache__"):
        lid = service.add_layer(ext, ext)
        service.add_entry(lid, "a.md", "A", f"{ext}\n")
    root = tmp_path / "memory-layers"
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 0, out
    assert (root / "faq" / "tmp" / "notes.md").is_file()
    assert (root / "build" / "a.md").is_file()

    code, out, _ = run(capsys, "diff", "--prune", str(root))
    assert (code, out.splitlines()[0]) == (
        0,
        "No changes: the service already holds what the folder says.",
    )
    service.calls.clear()
    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert code == 0, out
    assert service.writes == []
    assert service.entries_of("faq")["tmp/notes.md"] == ("An entry", "tmp/notes.md\n")


def test_a_key_deeper_than_the_folder_walk_is_skipped_and_never_pruned(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    deep = "/".join(f"d{i}" for i in range(13)) + "/deep.md"
    service.add_entry(faq, deep, "Deep", "deep\n")
    service.add_entry(faq, "ok.md", "Fine", "ok\n")
    root = tmp_path / "memory-layers"
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 1
    assert f"skipped: entry faq/{deep}: its key has 14 parts; a layer folder is read 12 deep" in out
    assert not (root / "faq" / "d0").exists()
    assert (root / "faq" / "ok.md").is_file()
    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert code == 1
    assert f"skipped: entry faq/{deep}" in out
    assert deletes(service) == []
    assert deep in service.entries_of("faq")


def test_a_symlinked_layer_folder_is_left_alone(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    """diff/push saw a linked layer folder as empty (a prune deleted all its entries) while
    pull wrote through it."""
    faq = service.add_layer("faq", "faq", labels={"managed-by": "mantle-lsp"})
    service.add_entry(faq, "a.md", "A", "service a\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.md").write_text(entry("A", "local a\n"))
    root = tmp_path / "repo" / "memory-layers"
    root.mkdir(parents=True)
    (root / "faq").symlink_to(elsewhere)

    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert code == 1
    assert "skipped: layer faq: memory-layers/faq is a symbolic link (not followed)" in out
    assert service.writes == []
    code, out, _ = run(capsys, "pull", "--prune", "--yes", str(root))
    assert code == 1
    assert "skipped: layer faq: memory-layers/faq is a symbolic link (not followed)" in out
    assert (elsewhere / "a.md").read_text() == entry("A", "local a\n")


def test_a_layer_folder_named_inside_a_git_ignored_folder_shows_its_files(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("scratch/\n")
    root = folder(tmp_path / "scratch", {"faq/a.md": entry("A", "a\n")})
    assert run(capsys, "push", str(root))[0] == 0
    assert service.entries_of("faq") == {"a.md": ("A", "a\n")}
    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert code == 0 and out.startswith("No changes")
    assert deletes(service) == []


# -- 2. prune deletes only this repository's layers ---------------------------------------


def test_prune_never_deletes_another_repositorys_layers(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    a = folder(tmp_path / "a", {"faq/a.md": entry("A", "a\n"), "old/x.md": entry("X", "x\n")})
    b = folder(tmp_path / "b", {"billing/b.md": entry("B", "b\n")})
    assert run(capsys, "push", str(a))[0] == 0
    assert run(capsys, "push", str(b))[0] == 0
    ida = (a / "sync.yml").read_text()
    assert "repository: " in ida and ida != (b / "sync.yml").read_text()

    # repository A drops `old`; its prune deletes `old` (its own) and never `billing` (B's)
    for f in (a / "old").iterdir():
        f.unlink()
    (a / "old").rmdir()
    code, out, _ = run(capsys, "diff", str(a))
    assert "billing" not in out
    code, out, _ = run(capsys, "push", "--prune", str(a))
    assert code == 0, out
    assert "- layer old: delete (with its 1 entries)" in out
    assert service.external_ids() == {"faq", "billing"}

    # a fresh clone keeps the id: its prune still knows the layers A made
    clone = tmp_path / "clone" / "memory-layers"
    clone.mkdir(parents=True)
    (clone / "sync.yml").write_text(ida)
    code, out, _ = run(capsys, "diff", "--prune", str(clone))
    assert "- layer faq: delete" in out and "billing" not in out
    # a pull never writes it
    (tmp_path / "c").mkdir()
    assert run(capsys, "pull", str(tmp_path / "c"))[0] == 0
    assert not (tmp_path / "c" / "memory-layers" / "sync.yml").exists()


def test_a_layer_with_only_the_old_label_is_pruned_only_when_named(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    old = service.add_layer("legacy", "legacy", labels={"managed-by": "mantle-lsp"})
    service.add_entry(old, "a.md", "A", "a\n")
    root = folder(tmp_path, {"faq/a.md": entry("A", "a\n")})
    code, out, _ = run(capsys, "push", "--prune", str(root))
    assert code == 0
    assert (
        "layer legacy (made by an earlier mantle-lsp, with no repository id: "
        "--prune-layer legacy deletes it)" in out
    )
    assert "legacy" in service.external_ids()
    code, out, _ = run(capsys, "push", "--prune", "--prune-layer", "legacy", str(root))
    assert code == 0, out
    assert "- layer legacy: delete (with its 1 entries)" in out
    assert "legacy" not in service.external_ids()
    # a layer made by hand is never deleted, named or not
    service.add_layer("by-hand", "by hand")
    code, out, _ = run(capsys, "push", "--prune", "--prune-layer", "by-hand", str(root))
    assert code == 1
    assert "problem: --prune-layer by-hand: the layer was not made by mantle-lsp" in out
    assert "by-hand" in service.external_ids()


# -- 3. links never lead out of the folder ---------------------------------------------------


def test_pull_never_writes_through_a_link_out_of_the_folder(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "linked.md", "L", "service text\n")
    service.add_entry(faq, "sub/new.md", "S", "service text\n")
    service.add_entry(faq, "ok.md", "OK", "fine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("mine\n")
    root = tmp_path / "repo" / "memory-layers"
    (root / "faq").mkdir(parents=True)
    (root / "faq" / "linked.md").symlink_to(outside / "precious")
    (root / "faq" / "sub").symlink_to(outside)

    code, out, _ = run(capsys, "pull", str(root))
    assert code == 1
    assert "skipped: entry faq/linked.md: a symbolic link that leads out of the folder" in out
    assert "skipped: entry faq/sub/new.md: memory-layers/faq/sub is a symbolic link" in out
    assert (root / "faq" / "ok.md").is_file()
    assert sorted(p.name for p in outside.iterdir()) == ["precious"]
    assert (outside / "precious").read_text() == "mine\n"


def test_a_symlinked_memory_layers_folder_is_followed_only_when_named(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_entry(service.add_layer("faq", "faq"), "a.md", "A", "a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "memory-layers").symlink_to(outside)
    code, _, err = run(capsys, "pull", str(repo))
    assert code == 2
    assert "memory-layers is a symbolic link: name it to sync through it" in err
    assert list(outside.iterdir()) == []
    code, out, _ = run(capsys, "pull", str(repo / "memory-layers"))
    assert code == 0, out
    assert (outside / "faq" / "a.md").is_file()


def test_push_never_reads_through_a_link_out_of_the_folder(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    root = folder(tmp_path / "repo", {"faq/ok.md": entry("OK", "ok\n")})
    (root / "faq" / "key.md").symlink_to(secret)
    (root / "faq" / "alias.md").symlink_to("ok.md")  # a link inside the folder is read
    code, out, _ = run(capsys, "push", str(root))
    assert code == 1
    assert "skipped: entry faq/key.md: a symbolic link that leads out of the folder" in out
    assert service.entries_of("faq") == {"ok.md": ("OK", "ok\n"), "alias.md": ("OK", "ok\n")}
    assert not any("PRIVATE" in str(b) for b in service.bodies)


# -- 4. writes are atomic ----------------------------------------------------------------------


def test_content_that_cannot_be_a_file_leaves_the_old_file_whole(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "a.md", "A", "lone \ud800 surrogate\n")
    service.add_entry(faq, "b.md", "B", "fine\n")
    root = folder(tmp_path, {"faq/a.md": entry("A", "the user's work\n")})
    (root / "faq" / "a.md").chmod(0o600)
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 1
    assert "skipped: entry faq/a.md: its content is not valid Unicode (a lone surrogate)" in out
    assert (root / "faq" / "a.md").read_text() == entry("A", "the user's work\n")
    assert (root / "faq" / "b.md").read_text() == entry("B", "fine\n")
    assert not [p for p in (root / "faq").iterdir() if p.name.endswith(".mantle-tmp")]


def test_pull_keeps_modes_and_links_inside_the_folder(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "a.md", "A", "new a\n")
    service.add_entry(faq, "shared/b.md", "B", "new b\n")
    root = folder(
        tmp_path, {"faq/a.md": entry("A", "old a\n"), "faq/shared/b.md": entry("B", "old b\n")}
    )
    (root / "faq" / "a.md").chmod(0o640)
    (root / "faq" / "b-link.md").symlink_to("shared/b.md")
    service.add_entry(faq, "b-link.md", "B", "new b\n")
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 0, out
    assert stat.S_IMODE((root / "faq" / "a.md").stat().st_mode) == 0o640
    assert (root / "faq" / "b-link.md").is_symlink()
    assert (root / "faq" / "shared" / "b.md").read_text() == entry("B", "new b\n")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
def test_a_file_size_limit_leaves_the_old_bytes_and_the_pull_goes_on(
    tmp_path: Path, service: Service
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "a.md", "A", "small\n")
    service.add_entry(faq, "big.md", "Big", "x" * 5000)
    service.add_entry(faq, "c.md", "C", "small too\n")
    root = folder(tmp_path, {"faq/big.md": entry("Big", "old\n")})
    script = textwrap.dedent(
        f"""
        import resource, sys
        from mantle_lsp.cli.main import main
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
        sys.exit(main(["layers", "pull", {str(root)!r}]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "could not write memory-layers/faq/big.md: File too large" in done.stderr
    assert (root / "faq" / "big.md").read_text() == entry("Big", "old\n")
    assert (root / "faq" / "a.md").is_file() and (root / "faq" / "c.md").is_file()
    assert not [p for p in (root / "faq").iterdir() if p.name.startswith(".")]


# -- 5. round trips are byte-exact; what a file cannot hold is left alone ---------------------


def test_crlf_and_lone_cr_content_round_trips(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "crlf.md", "Windows", "one\r\ntwo\r\n")
    service.add_entry(faq, "cr.md", "Old Mac", "one\rtwo\r")
    root = tmp_path / "memory-layers"
    assert run(capsys, "pull", str(root))[0] == 0
    assert (root / "faq" / "crlf.md").read_bytes().endswith(b"---\none\r\ntwo\r\n")
    code, out, _ = run(capsys, "diff", str(root))
    assert (code, out) == (0, "No changes: the service already holds what the folder says.\n")
    # a file written with CRLF throughout sends its content as it is
    (root / "faq" / "win.md").write_bytes(b"---\r\ndescription: W\r\n---\r\nbody\r\n")
    assert run(capsys, "push", str(root))[0] == 0
    assert service.entries_of("faq")["win.md"] == ("W", "body\r\n")
    code, out, _ = run(capsys, "pull", str(root))
    assert "0 files changed" in out


def test_an_entry_file_that_is_not_utf8_is_never_sent_mangled(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    root = folder(tmp_path, {"faq/ok.md": entry("OK", "ok\n")})
    (root / "faq" / "latin1.md").write_bytes(b"---\ndescription: caf\xe9\n---\n\xe0 la carte\n")
    code, out, err = run(capsys, "push", str(root))
    assert code == 1
    assert "skipped: entry faq/latin1.md: invalid UTF-8 at byte 20" in out
    assert "1 skipped" in err
    assert service.entries_of("faq") == {"ok.md": ("OK", "ok\n")}


def test_what_a_file_cannot_hold_is_skipped_by_pull_and_left_alone_by_push(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "nul.md", "NUL", "a\x00b\n")
    service.add_entry(faq, "huge.md", "Huge", "x" * (4 * 1024 * 1024 + 1))
    service.add_entry(faq, "surrogate.md", "lone \udc80", "body\n")
    service.add_entry(faq, "ok.md", "OK", "ok\n")
    root = tmp_path / "memory-layers"
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 1
    assert "skipped: entry faq/nul.md: its content has a NUL character" in out
    assert (
        "skipped: entry faq/huge.md: its file would be 4,194,331 bytes (the limit is 4,194,304)"
        in out
    )
    assert "skipped: entry faq/surrogate.md: its description is not valid Unicode" in out
    assert sorted(p.name for p in (root / "faq").iterdir()) == ["ok.md"]
    # pull -> diff shows nothing; a push with prune changes nothing and keeps what it skips
    code, out, _ = run(capsys, "diff", "--prune", str(root))
    assert code == 1
    assert "No changes" in out and "skipped: entry faq/nul.md" in out
    (root / "faq" / "new.md").write_text(entry("New", "new\n"))
    service.calls.clear()
    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert code == 1
    assert [m for m, _ in service.writes] == ["POST"]  # the new entry; nothing deleted
    assert {"nul.md", "huge.md", "surrogate.md", "ok.md", "new.md"} == set(
        service.entries_of("faq")
    )


def test_keys_that_differ_only_in_case_or_normalisation_are_never_written_over_each_other(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "Readme.md", "1", "one\n")
    service.add_entry(faq, "README.md", "2", "two\n")
    service.add_entry(faq, "caf\u00e9.md", "3", "nfc\n")
    service.add_entry(faq, "cafe\u0301.md", "4", "nfd\n")
    service.add_entry(faq, "ok.md", "OK", "ok\n")
    root = tmp_path / "memory-layers"
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 1
    assert (
        "skipped: entry faq/README.md: its key and faq/Readme.md differ only in case or "
        "Unicode normalisation (one file on macOS and Windows)" in out
    )
    assert "skipped: entry faq/caf\u00e9.md: its key and faq/cafe\u0301.md differ only" in out
    assert sorted(p.name for p in (root / "faq").iterdir()) == ["ok.md"]
    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert deletes(service) == []


# -- 6. one bad key never stops the pull ------------------------------------------------------


def test_a_bad_key_is_reported_and_the_pull_goes_on(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "0-first.md", "F", "first\n")
    service.add_entry(faq, "a", "A file", "a\n")
    service.add_entry(faq, "a/b", "Below a", "b\n")
    service.add_entry(faq, "x" * 300 + "/y.md", "Long", "long\n")
    service.add_entry(faq, "twice.md", "One", "one\n")
    service.add_entry(faq, "twice.md", "Two", "two\n")
    service.add_entry(faq, "z-last.md", "L", "last\n")
    root = tmp_path / "memory-layers"
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 1
    assert (
        "skipped: entry faq/a: a file and a folder of the layer (faq/a/b) cannot share a name"
        in out
    )
    assert (
        "skipped: entry faq/a/b: a file and a folder of the layer (faq/a) cannot share a name"
        in out
    )
    assert f"skipped: entry faq/{'x' * 300}/y.md: a part of its key is over 255 bytes" in out
    assert "skipped: entry faq/twice.md: the service has 2 entries with this key" in out
    assert sorted(p.name for p in (root / "faq").iterdir()) == ["0-first.md", "z-last.md"]
    code, out, _ = run(capsys, "push", "--prune", "--yes", str(root))
    assert (code, deletes(service)) == (1, [])


# -- 7. every loop over the service's answers is bounded ----------------------------------


@pytest.mark.parametrize("cursor", ["repeat", "fresh"])
def test_a_pagination_that_never_ends_stops(
    tmp_path: Path,
    service: Service,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cursor: str,
) -> None:
    import mantle_lsp.sync.service as sync_service

    monkeypatch.setattr(sync_service, "MAX_PAGES", 50)
    service.add_layer("faq", "faq")
    service.cursor = cursor
    start = time.monotonic()
    code, _, err = run(capsys, "pull", str(tmp_path))
    assert code == 2
    assert time.monotonic() - start < 20
    assert service.gets <= 51
    if cursor == "repeat":
        assert "listing memory layers: the service gave the same page cursor twice" in err
    else:
        assert "listing memory layers: more than 50 pages" in err
    assert not (tmp_path / "memory-layers").exists()


# -- 8. output: no secrets, nothing that drives the terminal ---------------------------------


def test_a_password_in_the_base_url_is_never_echoed(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("CADENYA_BASE_URL", "https://me:hunter2@api.example.invalid")
    code, out, err = run(capsys, "pull", str(tmp_path))
    assert code == 2
    assert "hunter2" not in out + err
    assert "https://me:***@api.example.invalid" in err


def test_keys_with_control_and_bidi_characters_are_escaped(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "esc\x1b[31mred.md", "E", "e\n")
    service.add_entry(faq, "bidi\u202egnp.md", "B", "b\n")
    service.add_entry(faq, "new\nline.md", "N", "\x1b]0;title\x07\n")
    root = tmp_path / "memory-layers"
    code, out, _ = run(capsys, "pull", str(root))
    assert code == 0, out
    for raw in ("\x1b", "\u202e", "\x07"):
        assert raw not in out
    assert "wrote memory-layers/faq/esc\ufffd[31mred.md" in out
    assert "wrote memory-layers/faq/new\ufffdline.md" in out
    (root / "faq" / "new\nline.md").write_text(entry("N", "\x1b[2J changed\n"))
    code, out, _ = run(capsys, "diff", str(root))
    assert "  ~ new\ufffdline.md (content)" in out
    assert "\x1b" not in out


# -- 9. pull --dry-run; a large prune asks ---------------------------------------------------


def test_pull_dry_run_writes_nothing(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    faq = service.add_layer("faq", "faq")
    service.add_entry(faq, "new.md", "N", "n\n")
    service.add_entry(faq, "changed.md", "C", "new\n")
    root = folder(
        tmp_path, {"faq/changed.md": entry("C", "old\n"), "faq/stale.md": entry("S", "s\n")}
    )
    before = files_of(root)
    code, out, _ = run(capsys, "pull", "--dry-run", "--prune", str(root))
    assert code == 0
    assert "would write memory-layers/faq/changed.md" in out
    assert "would write memory-layers/faq/new.md" in out
    assert "would delete memory-layers/faq/stale.md" in out
    assert "Dry run: 3 files would change, 0 unchanged; nothing written." in out
    assert files_of(root) == before


def _many(tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]) -> Path:
    root = folder(tmp_path, {f"faq/e{i:02}.md": entry(f"E{i}", f"{i}\n") for i in range(12)})
    assert run(capsys, "push", str(root))[0] == 0
    for i in range(11):
        (root / "faq" / f"e{i:02}.md").unlink()
    return root


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_prune_of_more_than_ten_entries_needs_yes_off_a_terminal(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _many(tmp_path, service, capsys)
    service.calls.clear()
    code, out, err = run(capsys, "push", "--prune", str(root))
    assert code == 1
    assert "  - e00.md" in out and "  - e10.md" in out  # the list of what it deletes
    assert "push refused: it would delete 11 entries; add --yes to confirm" in err
    assert service.writes == []
    code, out, err = run(capsys, "push", "--prune", "--yes", str(root))
    assert code == 0
    assert len(deletes(service)) == 11


def test_a_prune_of_more_than_ten_entries_asks_on_a_terminal(
    tmp_path: Path,
    service: Service,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _many(tmp_path, service, capsys)
    service.calls.clear()
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    code, _, err = run(capsys, "push", "--prune", str(root))
    assert "Delete 11 entries on the service? [y/N] " in err
    assert (code, service.writes) == (1, [])
    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    code, _, _ = run(capsys, "push", "--prune", str(root))
    assert code == 0 and len(deletes(service)) == 11


def test_a_pull_prune_of_more_than_ten_files_needs_yes(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    service.add_layer("faq", "faq")
    root = folder(tmp_path, {f"faq/e{i:02}.md": entry(f"E{i}", f"{i}\n") for i in range(11)})
    code, _, err = run(capsys, "pull", "--prune", str(root))
    assert code == 1
    assert "pull refused: it would delete 11 files; add --yes to confirm" in err
    assert len(list((root / "faq").iterdir())) == 11
    code, _out, _ = run(capsys, "pull", "--prune", "--yes", str(root))
    assert code == 0 and list((root / "faq").iterdir()) == []
