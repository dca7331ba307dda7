"""A model-based test of the real server (issue 19): a Hypothesis state machine drives
``mantle-lsp serve`` through random sequences of edits in open documents, files and
skill folders created, changed, deleted and moved on disk (with the events a client
would send: per file, per folder, both, reordered, duplicated), workspace folders
removed and added again, and field renames applied and undone. After every step every
published diagnostic must equal what ``check`` reports on the same files (a fresh load,
with the open buffers laid over the disk), and the server's pending futures must stay
flat. A second machine gives the server no file events at all: it must see the changes
with its own watcher.

``make test`` runs a few short sequences, derandomized; ``make fuzz`` many long ones
(``MANTLE_FUZZ=1``; ``MANTLE_FUZZ_EXAMPLES=N`` sequences).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import shutil
import tempfile
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mantle_lsp.model.layout import is_project_root
from test_lsp_events import (
    CHANGED,
    CREATED,
    DELETED,
    apply_edit_on_disk,
    assert_agrees_with_check,
    flat,
    no_watcher_capabilities,
    notify_files,
    snapshot,
    status,
)
from test_lsp_fuzz import apply, random_change
from test_lsp_support import Session, copy_telecom, lsp_session, position_of, uri
from test_robustness import _FUZZ_EXAMPLES, FUZZ

pytestmark = pytest.mark.timeout(0 if FUZZ else 120)

T = TypeVar("T")

EVENT_MODES = ("per file", "per folder", "both", "reordered", "duplicated")
# short additions that make or remove cross-file findings
LINES = [
    "\nRead @memory.roaming_pass.destination aloud.\n",
    "\nRead @memory.roaming_pass.nope aloud.\n",
    "\nif: session.project.customer_tier == 'business'\n  Say so.\n",
    "\nCall @skill.verify_customer first.\n",
    "\nCall @skill.no_such_skill first.\n",
    "\nSay {session.plan_change.new_plan}.\n",
]


class Loop:
    """An event loop in a thread: Hypothesis' state machines are synchronous."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class ServerMachine(RuleBasedStateMachine):
    """The server with a client that reports file events (VS Code's capabilities)."""

    self_watch = False

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="mantle-stateful-"))
        self.root = copy_telecom(self.tmp)
        self.buffers: dict[Path, str] = {}
        self.removed: set[Path] = set()  # workspace folders taken away
        self.renamed: list[tuple[Path, str, str, dict[str, bytes]]] = []
        self.renamed_at = -1
        self.disk_changes = 0  # rules that changed files on disk
        self.loop = Loop()
        self._cm: Any = None
        self.s: Session = self.loop.run(self._start())

    async def _start(self) -> Session:
        caps = no_watcher_capabilities() if self.self_watch else None
        self._cm = lsp_session(self.root, capabilities=caps, folders=[self.root, self.tmp])
        return await self._cm.__aenter__()

    def teardown(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run(self._cm.__aexit__(None, None, None), timeout=20)
        self.loop.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------
    def files(self) -> list[Path]:
        return sorted(
            p
            for p in self.root.rglob("*")
            if p.is_file() and p.suffix in (".md", ".yml", ".py") and ".git" not in p.parts
        )

    def skill_dirs(self) -> list[Path]:
        return sorted(p for p in (self.root / "skills").glob("*") if p.is_dir())

    def events(self, mode: str, created: list[Path], deleted: list[Path], folders: list[Path]):
        """The events a client sends for a change of ``folders`` that created and deleted
        these files, in the given mode."""
        if self.self_watch:
            return
        per_file = [(p, CREATED) for p in created] + [(p, DELETED) for p in deleted]
        per_folder = [(f, CREATED if f.exists() else DELETED) for f in folders]
        batch = {
            "per file": per_file,
            "per folder": per_folder or per_file,
            "both": per_folder + per_file,
            "reordered": list(reversed(per_folder + per_file)),
            "duplicated": per_file + per_folder + per_file,
        }[mode]
        if mode == "per file" and len(batch) > 1:  # one notification each
            for ev in batch:
                notify_files(self.s, ev)
        elif batch:
            notify_files(self.s, *batch)

    def changed(self, path: Path) -> None:
        if not self.self_watch:
            notify_files(self.s, (path, CHANGED))

    # -- rules: open documents ----------------------------------------------------------
    # a file opened outside every workspace folder loads its project: not modelled here
    @precondition(lambda self: not ({self.root, self.tmp} <= self.removed))
    @rule(data=st.data())
    def open_document(self, data: st.DataObject) -> None:
        files = [p for p in self.files() if p not in self.buffers]
        if not files:
            return
        path = data.draw(st.sampled_from(files))
        text = path.read_text(encoding="utf-8")
        self.s.open(path, text)
        self.buffers[path] = text

    @precondition(lambda self: bool(self.buffers))
    @rule(data=st.data(), seed=st.integers(0, 2**32), n=st.integers(1, 4))
    def edit_document(self, data: st.DataObject, seed: int, n: int) -> None:
        path = data.draw(st.sampled_from(sorted(self.buffers)))
        rng = random.Random(seed)
        text = self.buffers[path]
        for _ in range(n):
            if rng.random() < 0.4:
                change: lsp.TextDocumentContentChangeEvent = lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(
                        start=lsp.Position(line=text.count("\n"), character=0),
                        end=lsp.Position(line=text.count("\n"), character=0),
                    ),
                    text=rng.choice(LINES),
                )
            else:
                change = random_change(rng, text)
            u = uri(path)
            self.s.versions[u] += 1
            self.s.client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(
                        uri=u, version=self.s.versions[u]
                    ),
                    content_changes=[change],
                )
            )
            text = apply(text, change)
        self.buffers[path] = text

    @precondition(lambda self: bool(self.buffers))
    @rule(data=st.data(), save=st.booleans())
    def close_document(self, data: st.DataObject, save: bool) -> None:
        self.disk_changes += 1
        path = data.draw(st.sampled_from(sorted(self.buffers)))
        text = self.buffers.pop(path)
        if save and path.exists() and text == text.encode("utf-8", "replace").decode():
            path.write_text(text, encoding="utf-8")
            self.changed(path)
        self.s.close(path)

    # -- rules: files and skill folders on disk -----------------------------------------
    @rule(data=st.data(), line=st.sampled_from(LINES))
    def write_file(self, data: st.DataObject, line: str) -> None:
        self.disk_changes += 1
        files = [p for p in self.files() if p not in self.buffers]
        if not files:
            return
        path = data.draw(st.sampled_from(files))
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        if path.suffix == ".md" or len(lines) < 3:
            text += line
        else:  # drop a line: a declaration or a reference disappears
            del lines[data.draw(st.integers(0, len(lines) - 1))]
            text = "".join(lines)
        path.write_text(text, encoding="utf-8")
        self.changed(path)

    @rule(data=st.data(), mode=st.sampled_from(EVENT_MODES))
    def delete_file(self, data: st.DataObject, mode: str) -> None:
        self.disk_changes += 1
        files = [p for p in self.files() if p not in self.buffers]
        if not files:
            return
        path = data.draw(st.sampled_from(files))
        path.unlink()
        self.events("per file", [], [path], [])

    @rule(data=st.data(), mode=st.sampled_from(EVENT_MODES), name=st.sampled_from(["x", "y"]))
    def copy_skill(self, data: st.DataObject, mode: str, name: str) -> None:
        self.disk_changes += 1
        dirs = self.skill_dirs()
        if not dirs:
            return
        src = data.draw(st.sampled_from(dirs))
        dst = self.root / "skills" / f"{src.name}_{name}"
        if dst.exists():
            return
        shutil.copytree(src, dst)
        created = sorted(p for p in dst.rglob("*") if p.is_file())
        self.events(mode, created, [], [dst])

    @rule(data=st.data(), mode=st.sampled_from(EVENT_MODES))
    def delete_skill(self, data: st.DataObject, mode: str) -> None:
        self.disk_changes += 1
        dirs = [d for d in self.skill_dirs() if not any(d in p.parents for p in self.buffers)]
        if not dirs:
            return
        gone = data.draw(st.sampled_from(dirs))
        deleted = sorted(p for p in gone.rglob("*") if p.is_file())
        shutil.rmtree(gone)
        self.events(mode, [], deleted, [gone])

    @rule(data=st.data(), mode=st.sampled_from(EVENT_MODES), suffix=st.sampled_from(["2", "b"]))
    def move_skill(self, data: st.DataObject, mode: str, suffix: str) -> None:
        self.disk_changes += 1
        dirs = [d for d in self.skill_dirs() if not any(d in p.parents for p in self.buffers)]
        if not dirs:
            return
        src = data.draw(st.sampled_from(dirs))
        dst = src.with_name(src.name + suffix)
        if dst.exists():
            return
        names = sorted(p.relative_to(src) for p in src.rglob("*") if p.is_file())
        shutil.move(src, dst)
        self.events(mode, [dst / n for n in names], [src / n for n in names], [dst, src])

    # -- rules: workspace folders -------------------------------------------------------
    @rule(which=st.sampled_from(["root", "parent"]))
    def toggle_folder(self, which: str) -> None:
        folder = self.root if which == "root" else self.tmp
        wf = lsp.WorkspaceFolder(uri=uri(folder), name=folder.name)
        if folder in self.removed:
            self.removed.discard(folder)
            event = lsp.WorkspaceFoldersChangeEvent(added=[wf], removed=[])
        else:
            self.removed.add(folder)
            event = lsp.WorkspaceFoldersChangeEvent(added=[], removed=[wf])
        self.s.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(event=event)
        )

    # -- rules: renames, and undoing them -----------------------------------------------
    @precondition(lambda self: not self.buffers and not self.removed and not self.self_watch)
    @rule(
        which=st.sampled_from(
            [
                ("memory.yml", "customer_tier", "tier_of_customer"),  # a project field
                ("skills/plan_change/skill.md", "roaming_pass.", "roaming"),  # a skill
                ("skills/plan_change/skill.md", "roaming_pass.", "roaming_passes"),
            ]
        )
    )
    def rename(self, which: tuple[str, str, str]) -> None:
        rel, old, new = which
        path = self.root / rel
        if not path.exists() or old not in path.read_text(encoding="utf-8"):
            return
        before = snapshot(self.root)
        if self._rename(path, old, new):
            self.renamed.append((path, new + old[len(old.rstrip(".")) :], old, before))
            self.renamed_at = self.disk_changes

    @precondition(lambda self: bool(self.renamed) and not self.buffers and not self.removed)
    @rule()
    def undo_rename(self) -> None:
        path, name, back, before = self.renamed.pop()
        if not path.exists() or name not in path.read_text(encoding="utf-8"):
            return
        if self._rename(path, name, back.rstrip(".")) and self.renamed_at == self.disk_changes:
            # nothing else touched the files since: every byte is back
            assert snapshot(self.root) == before, "a rename and its inverse changed bytes"

    def _rename(self, path: Path, old: str, new: str) -> bool:
        """Rename what is at the first ``old`` in ``path`` to ``new`` through the server,
        and apply the edit on disk as a client does; False when the server refuses."""

        async def go() -> bool:
            text = path.read_text(encoding="utf-8")
            try:
                edit = await self.s.client.text_document_rename_async(
                    lsp.RenameParams(
                        text_document=self.s.doc(path),
                        position=position_of(text, old, 1),
                        new_name=new,
                    )
                )
            except JsonRpcException:
                return False  # a name that collides, say: refused with a message
            if edit is None:
                return False
            notify_files(self.s, *apply_edit_on_disk(edit))
            return True

        return self.loop.run(go())

    # -- the property -------------------------------------------------------------------
    @invariant()
    def agrees_with_check(self) -> None:
        async def check() -> None:
            await flat(self.s, 0, timeout=15)
            covered = not ({self.root, self.tmp} <= self.removed)
            covered = covered and is_project_root(self.root)  # else check finds no project
            if self.self_watch:  # our own watcher: give it time to see the disk
                await asyncio.sleep(0.3)
                await flat(self.s, 0, timeout=15)
            if covered:
                assert_agrees_with_check(self.s, self.root, self.buffers, what="after a step")
            else:
                left = {u: d for u, d in self.s.client.diagnostics.items() if d}
                assert not left, f"no project, yet diagnostics: {sorted(left)}"
            now = await status(self.s)
            assert now["pendingFutures"] <= 1, now

        self.loop.run(check())


class SelfWatchMachine(ServerMachine):
    """The server with a client that cannot watch files: no events at all."""

    self_watch = True


def _settings(examples: int, steps: int) -> settings:
    n = (_FUZZ_EXAMPLES or 60) if FUZZ else examples
    return settings(
        max_examples=n,
        stateful_step_count=40 if FUZZ else steps,
        deadline=None,
        derandomize=not FUZZ,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def test_the_server_agrees_with_check_after_any_events() -> None:
    ServerMachine.TestCase.settings = _settings(4, 12)
    ServerMachine.TestCase().runTest()


def test_the_server_watching_for_itself_agrees_with_check() -> None:
    SelfWatchMachine.TestCase.settings = _settings(2, 8)
    SelfWatchMachine.TestCase().runTest()
