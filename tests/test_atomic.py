"""The one file writer (``mantle_lsp.atomic``): a failure leaves the old bytes, links stay
links and never lead a write out of the named folder, modes are kept."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mantle_lsp import atomic


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".mantle-tmp"))


def test_writes_a_new_file_with_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic.write_text(tmp_path / "a.yml", "x: 1\n", within=tmp_path)
    finally:
        os.umask(old)
    assert (tmp_path / "a.yml").read_bytes() == b"x: 1\n"
    assert stat.S_IMODE((tmp_path / "a.yml").stat().st_mode) == 0o644
    assert _leftovers(tmp_path) == []


def test_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    target.chmod(0o751)
    atomic.write_text(target, "new\n", within=tmp_path)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


def test_no_newline_translation(tmp_path: Path) -> None:
    atomic.write_text(tmp_path / "a.md", "a\r\nb\rc\n", within=tmp_path)
    assert (tmp_path / "a.md").read_bytes() == b"a\r\nb\rc\n"


def test_a_link_inside_the_folder_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("old")
    (tmp_path / "link.md").symlink_to("real.md")
    atomic.write_text(tmp_path / "link.md", "new", within=tmp_path)
    assert (tmp_path / "link.md").is_symlink()
    assert (tmp_path / "real.md").read_text() == "new"


def test_a_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    inside, outside = tmp_path / "proj", tmp_path / "secret"
    inside.mkdir()
    outside.mkdir()
    (outside / "key").write_text("private")
    (inside / "entry.md").symlink_to(outside / "key")
    (inside / "sub").symlink_to(outside)
    with pytest.raises(atomic.OutsideFolder):
        atomic.write_text(inside / "entry.md", "service text", within=inside)
    with pytest.raises(atomic.OutsideFolder):
        atomic.write_text(inside / "sub" / "new.md", "service text", within=inside)
    with pytest.raises(atomic.OutsideFolder):
        atomic.make_dirs(inside / "sub" / "deeper", within=inside)
    with pytest.raises(atomic.OutsideFolder):
        atomic.write_text(inside / ".." / "secret" / "key", "x", within=inside)
    assert (outside / "key").read_text() == "private"
    assert sorted(p.name for p in outside.iterdir()) == ["key"]


def test_a_failed_write_leaves_the_old_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "skill.md"
    target.write_bytes(b"the user's work\n" * 100)

    def full_disk(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError):
        atomic.write_text(target, "fixed\n", within=tmp_path)
    monkeypatch.undo()
    assert target.read_bytes() == b"the user's work\n" * 100
    assert _leftovers(tmp_path) == []


def test_text_that_cannot_be_encoded_touches_nothing(tmp_path: Path) -> None:
    target = tmp_path / "entry.md"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic.write_text(target, "lone \ud800 surrogate", within=tmp_path)
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
def test_a_file_size_limit_leaves_the_old_bytes(tmp_path: Path) -> None:
    """``ulimit -f 1``, the path a full disk or a quota takes: the write fails with EFBIG
    (Python ignores SIGXFSZ), the old file is whole."""
    target = tmp_path / "skill.md"
    target.write_bytes(b"old\n" * 10)
    script = textwrap.dedent(
        f"""
        import resource, sys
        from pathlib import Path
        from mantle_lsp import atomic
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
        try:
            atomic.write_text(Path({str(target)!r}), "x" * 5000, within=Path({str(tmp_path)!r}))
        except OSError as exc:
            print("failed", exc.errno)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.stdout.startswith("failed"), out.stderr
    assert target.read_bytes() == b"old\n" * 10
    assert _leftovers(tmp_path) == []
