"""Properties of ``layers pull|diff|push`` over random workspaces, against the stand-in
Cadenya (tests/cadenya_standin.py): keys with Unicode (both normalisations, both cases),
depth and over-long parts, content with every line end, NUL and lone surrogates, sizes
around the file limit, descriptions YAML would misread, two entries under one key.

- A pull into an empty folder, then ``diff`` shows no change, ``push`` (with ``--prune``)
  makes no write, and a second pull changes no byte. What the folder cannot hold is
  skipped by the pull and left alone by the push (exit status 1), never anything else.
- A crash (or a full disk) injected at any step of any file write of a pull leaves every
  file either as it was or as the complete pull writes it, and no temporary file.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import ssl
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadenya_standin import KEY, WS, Service, running
from mantle_lsp import atomic
from mantle_lsp.cli.main import main

pytest.importorskip("cadenya")

LIMIT = 3000  # the file-size limit, lowered so that random entries reach it


@pytest.fixture(scope="module")
def standin() -> Iterator[Service]:
    import mantle_lsp.model.source as source
    import mantle_lsp.sync.holdable as holdable

    state = Service(page=100)  # paging is tested elsewhere: fewer requests here
    tls = ssl.create_default_context()
    with running(state) as url, pytest.MonkeyPatch.context() as mp:
        # every run makes an SDK client, whose transport loads the CA certificates (0.2 s)
        # for TLS the stand-in (http://) never speaks: one context serves them all
        mp.setattr(ssl, "create_default_context", lambda *a, **k: tls)
        mp.setenv("CADENYA_API_KEY", KEY)
        mp.setenv("CADENYA_WORKSPACE_ID", WS)
        mp.setenv("CADENYA_BASE_URL", url)
        mp.setattr(source, "MAX_FILE_BYTES", LIMIT)
        mp.setattr(holdable, "MAX_FILE_BYTES", LIMIT)
        yield state


def run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["layers", *argv])
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue()


def snapshot(root: Path) -> dict[str, bytes]:
    if not root.exists():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _joined(pieces: list[str], max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


SEGMENT = st.one_of(
    st.lists(
        st.sampled_from(["a", "A", "b", "é", "e\u0301", "ß", "日", "-", " ", ".", "x.md"]),
        min_size=1,
        max_size=4,
    ).map("".join),
    st.sampled_from(["x" * 256, "..", "layer.yml", "\x1b[1m"]),
)
KEY_ = st.lists(SEGMENT, min_size=1, max_size=14).map("/".join)
DESCRIPTION = _joined(
    ["Refund", " rules", ":", " #", "'", '"', "é", "\r", "\n", "yes", "- ", "{", "\x00", "\ud800"],
    6,
)
CONTENT = _joined(
    ["line", "\n", "\r\n", "\r", "é", "日本", "---\n", "\x00", "\udc80", "\ufeff", "x" * 1000],
    8,
)
ENTRY = st.tuples(KEY_, DESCRIPTION, CONTENT)
LAYER = st.tuples(
    st.sampled_from(["faq", "FAQ", "base", "caf\u00e9", "cafe\u0301", "..", "sync.yml"]),
    _joined(["Name", " ", ":", "é", "\n"], 3),
    DESCRIPTION,
    st.lists(ENTRY, max_size=6),
)
WORKSPACE = st.lists(LAYER, min_size=1, max_size=3)


def seed(service: Service, workspace: list[Any]) -> None:
    service.reset()
    for ext, name, description, entries in workspace:
        lid = service.add_layer(ext, name or ext, description=description)
        for key, desc, content in entries:
            service.add_entry(lid, key, desc, content)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(workspace=WORKSPACE)
def test_pull_then_diff_shows_nothing_push_changes_nothing_and_a_second_pull_is_identical(
    standin: Service, workspace: list[Any]
) -> None:
    seed(standin, workspace)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory-layers"
        code, out = run("pull", str(root))
        skipped = "skipped: " in out
        assert code == (1 if skipped else 0), out
        first = snapshot(root)
        assert not [rel for rel in first if rel.rsplit("/", 1)[-1].startswith(".")]

        code, out = run("diff", "--prune", str(root))
        assert out.startswith("No changes: the service already holds what the folder says.")
        # a diff reads the entries of the folder's layers only: it skips a part of it
        assert code == 0 or (code == 1 and skipped), out
        standin.calls.clear()
        code, out = run("push", "--prune", "--yes", str(root))
        assert standin.writes == [], out

        code, out = run("pull", str(root))
        assert " 0 files changed" in out, out
        assert snapshot(root) == first


def _changed(workspace: list[Any], edit: int) -> list[Any]:
    """The workspace after a change on the service: every n-th entry's content edited,
    one entry more per layer."""
    out = []
    for ext, name, description, entries in workspace:
        new = [
            (key, desc, content + "\nedited" if i % edit == 0 else content)
            for i, (key, desc, content) in enumerate(entries)
        ]
        new.append(("added.md", "Added", "new\n"))
        out.append((ext, name + " 2", description, new))
    return out


class Crash(BaseException):
    """The process dying in the middle of a write (nothing catches it)."""


class _Faulty:
    """``os`` for mantle_lsp.atomic, failing the ``at``-th call of ``name``."""

    def __init__(self, name: str, at: int, fault: Callable[[], BaseException]) -> None:
        self.name, self.at, self.fault, self.calls = name, at, fault, 0

    def __getattr__(self, attr: str) -> Any:
        real = getattr(os, attr)
        if attr != self.name:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.at:
                raise self.fault()
            return real(*args, **kwargs)

        return call


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    workspace=WORKSPACE,
    edit=st.integers(1, 3),
    where=st.sampled_from(["write", "fsync", "chmod", "replace"]),
    at=st.integers(1, 12),
    crash=st.booleans(),
)
def test_a_crash_at_any_write_leaves_every_file_old_or_new(
    standin: Service, workspace: list[Any], edit: int, where: str, at: int, crash: bool
) -> None:
    seed(standin, workspace)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "a" / "memory-layers"
        run("pull", str(root))
        old = snapshot(root)
        seed(standin, _changed(workspace, edit))
        clean = Path(tmp) / "b" / "memory-layers"
        if root.exists():
            shutil.copytree(root, clean, symlinks=True)
        run("pull", str(clean))
        new = snapshot(clean)

        def fault() -> BaseException:
            return Crash() if crash else OSError(28, "No space left on device")

        faulty = _Faulty(where, at, fault)
        with mock.patch.object(atomic, "os", faulty):
            try:
                code, out = run("pull", str(root))
            except Crash:
                code, out = -1, ""
        after = snapshot(root)
        if faulty.calls < at:  # the pull had fewer writes: it ran clean
            assert after == new
            return
        assert code in (-1, 2), out
        for rel in sorted(set(old) | set(new) | set(after)):
            assert after.get(rel) in (old.get(rel), new.get(rel)), rel
        assert not [rel for rel in after if rel.endswith(".mantle-tmp")]
