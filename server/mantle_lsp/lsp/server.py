"""The whole server: :class:`.base.ServerBase` with the services built on it (the
diagnostics scheduler, each project's configuration file, our own file watcher)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model.engine import explain_profile
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

    def profile_reason(self, root: Path) -> str:
        """Which rule profile applies to a project and why (the settings that force one,
        else its rasa-pro pin): for the log and the editor's status tooltip."""
        st = self.configs.settings_for(root)
        forced = st.engine_override
        origin = st.origins.get("engine", "")
        if origin == "editor settings":
            origin = "mantle.engineVersion in the editor settings"
        elif origin:
            origin = f'engine = "{forced}" in {origin}'
        return explain_profile(root, forced, origin)

    # -- state, for tests and bug reports (`mantle/status`) ------------------------------
    def status(self) -> dict[str, Any]:
        """What a long session could accumulate: the protocol's pending futures, this
        process's resident memory, the diagnostics batch still to go out, the projects;
        and, for the editor's status tooltip, whether the initial index is done and each
        project's rule profile with the reason for it."""
        return {
            "indexed": self.indexed,
            # the initialize answer sent before the server was imported agreed with its own
            # (None: not answered early, or not compared yet)
            "earlyInitialize": getattr(self.protocol, "early_agreed", None),
            "earlyWorkers": self.early_workers,  # index workers started before that
            "earlyLooks": self.early_looks,  # documents whose first look came before that
            "profiles": [
                {
                    "root": str(r),
                    "engine": self.configs.prepare(p).engine_override or p.engine,
                    "reason": self.profile_reason(r),
                }
                for r, p in sorted(self.model.projects.items())
            ],
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
