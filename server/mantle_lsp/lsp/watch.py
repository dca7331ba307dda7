"""Our own file watcher, for clients that cannot watch files for us.

A client that does not offer ``workspace/didChangeWatchedFiles`` with dynamic
registration never tells the server about files changed outside the editor (a
``git checkout``, a generator, another editor). The server then watches its workspace
folders itself with `watchdog <https://pypi.org/project/watchdog/>`_: the platform's
native notifications (inotify, FSEvents, ReadDirectoryChangesW), or polling when they
are not available (e.g. no inotify watches left) or when ``MANTLE_LSP_WATCH=poll`` asks
for it. Only the paths that matter to a project are kept (Mantle files, tool and hook
modules, skill folders, the evaluation's files); ``.git``, ``.venv``, ``node_modules``
and the other folders :data:`layout.SKIP_DIRS` names are ignored. Events are gathered for
:data:`QUIET` seconds and handed to the server (:func:`sync.files_changed`) as one batch,
on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import layout
from . import convert
from .base import ServerBase

log = logging.getLogger(__name__)

QUIET = 0.1  # seconds without events before a batch goes to the model
POLL_INTERVAL = 1.0  # seconds between two scans when polling
MANTLE_NAMES = frozenset(
    {"skill.md", "memory.yml", "responses.yml", "agent.yml", "integrations.yml"}
)
FOLDER_NAMES = frozenset({"skills", "tools", "hooks"})


def relevant(path: str, is_dir: bool, roots: list[Path]) -> bool:
    """Whether a change of ``path`` may matter to a project under ``roots``."""
    p = Path(path)
    base = next((r for r in roots if r == p or r in p.parents), None)
    if base is None:
        return False
    parts = p.relative_to(base).parts
    if not parts:
        return False
    folders = parts[:-1] if parts[-1] == ".gitignore" else parts  # the layout keeps those
    if any(part in layout.SKIP_DIRS or part.startswith(".") for part in folders):
        return False
    if parts[-1] == ".gitignore":
        return not is_dir
    name = parts[-1]
    if "memory-layers" in parts:  # Cadenya memory layers (lsp/layers.py)
        return True
    if "eval" in parts:  # the evaluation's files and folders (docs/language/eval.md)
        return is_dir or name.endswith(layout.EVAL_SUFFIXES)
    if is_dir:
        return name in FOLDER_NAMES or (len(parts) >= 2 and parts[-2] == "skills")
    return name in MANTLE_NAMES or name.endswith(".py")


class SelfWatcher:
    """Watches folders with watchdog and feeds the changes to the server."""

    def __init__(
        self,
        server: ServerBase,
        loop: asyncio.AbstractEventLoop,
        on_changes: Callable[[list[str]], None],
    ) -> None:
        self.server = server
        self.on_changes = on_changes  # the changed files' URIs, one batch (sync.files_changed)
        self.loop = loop
        self.folders: list[Path] = []
        self.polling = False
        self._observer: Any = None
        self._pending: dict[str, None] = {}
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, folders: list[Path]) -> None:
        """Watch exactly ``folders`` (the workspace folders), replacing what was watched."""
        folders = list(dict.fromkeys(folders))
        if folders == self.folders and self._observer is not None:
            return
        self.stop()
        self.folders = folders
        if not folders:
            return
        try:
            self._start(poll=os.environ.get("MANTLE_LSP_WATCH", "") == "poll")
        except OSError as exc:  # e.g. no inotify watch left: polling always works
            self.server.log(f"native file watching failed ({exc}); polling instead")
            self.stop()
            self.folders = folders
            self._start(poll=True)
        how = "polling" if self.polling else "native events"
        self.server.log(f"watching {len(folders)} folder(s) for changes ({how})")

    def _start(self, poll: bool) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        if poll:
            from watchdog.observers.polling import PollingObserver

            observer: Any = PollingObserver(timeout=POLL_INTERVAL)
        else:
            from watchdog.observers import Observer

            observer = Observer()
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed", "closed_no_write"):
                    return
                if event.is_directory and event.event_type == "modified":
                    return  # its files' own events tell what changed
                paths = [event.src_path, getattr(event, "dest_path", "")]
                for p in paths:
                    if not p:
                        continue
                    p = os.fsdecode(p)
                    if relevant(p, event.is_directory, watcher.folders) or (
                        watcher.server.model.was_asked(p)  # a module an import names
                    ):
                        watcher.loop.call_soon_threadsafe(watcher._queue, p)

        for folder in self.folders:
            if folder.is_dir():
                observer.schedule(Handler(), str(folder), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self.polling = poll

    def _queue(self, path: str) -> None:
        self._pending[path] = None
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_later(QUIET, self._flush)

    def _flush(self) -> None:
        self._timer = None
        if self.server.holding_messages:
            # projects are being loaded (gate.py): the client's own file events wait for
            # them, and so do ours
            self._timer = self.loop.call_later(QUIET, self._flush)
            return
        paths, self._pending = list(self._pending), {}
        if not paths:
            return
        try:
            self.server.settle()
            self.on_changes([convert.path_to_uri(Path(p)) for p in paths])
        except Exception as exc:
            self.server.log_exception("watching files", exc)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._observer is not None:
            try:
                self._observer.stop()
            except Exception:  # pragma: no cover - an observer that failed to start
                log.debug("stopping the file watcher", exc_info=True)
            self._observer = None
        self.folders = []
