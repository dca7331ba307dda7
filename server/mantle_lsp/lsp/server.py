"""The whole server: :class:`.base.ServerBase` with the services built on it (the
diagnostics scheduler, each project's configuration file, our own file watcher)."""

from __future__ import annotations

from typing import Any

from .base import ServerBase, rss_kb
from .config import ProjectConfigs
from .diagnostics import DiagnosticsPublisher
from .watch import SelfWatcher


class MantleServer(ServerBase):
    def __init__(self) -> None:
        super().__init__()
        self.configs = ProjectConfigs(self)  # each project's configuration file
        self.diagnostics = DiagnosticsPublisher(self, self.configs)
        self.watcher: SelfWatcher | None = None  # see sync.watch_folders

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

    # -- state, for tests and bug reports (`mantle/status`) ------------------------------
    def status(self) -> dict[str, Any]:
        """What a long session could accumulate: the protocol's pending futures, this
        process's resident memory, the diagnostics batch still to go out, the projects."""
        return {
            "pendingFutures": len(self.protocol._request_futures),
            "rssKb": rss_kb(),
            "pendingDiagnostics": len(self.diagnostics.pending),
            "projects": sorted(str(r) for r in self.model.projects),
            "files": sum(len(p.files) for p in self.model.projects.values()),
            "openDocuments": len(self.open_uris),
            "watching": (
                ("polling" if self.watcher.polling else "native") if self.watcher else None
            ),
        }
