"""The configuration file in the server: the same ``[tool.mantle-lsp]`` /
``mantle-lsp.toml`` / ``.mantle-lsp.toml`` as ``check`` (model/settings.py), per project.

- The diagnostics the server publishes go through :func:`settings.apply` with the
  project's settings, as ``check`` filters them; the editor's ``mantle.diagnostics.ignore``
  adds to the file's ``ignore`` and a ``mantle.engineVersion`` other than ``auto`` wins over
  the file's ``engine`` (the editor is a command line). Hints are shown unless the file sets
  ``min-severity``.
- A malformed file is reported as ``lsp.config.invalid_settings_file`` diagnostics on the
  file (pushed, whatever the client's diagnostic mode) and once in a ``window/showMessage``
  (also logged with ``window/logMessage``, so that it stays in the editor's output) that
  says exactly what still applies (:func:`settings.effect`): nothing of a file that cannot
  be read (invalid TOML), else every value but the ones with errors.
- :meth:`ProjectConfigs.reload` runs when a configuration file changes on disk (the
  watched globs in sync.py) or the editor settings change; the projects whose settings
  changed are published again.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Protocol

from ..ide.codes import REGISTRY
from ..ide.diagnostics import Diagnostic
from ..model import layout
from ..model.engine import PROFILES
from ..model.project import Project
from ..model.settings import (
    CONFIG_NAMES,
    Overrides,
    Settings,
    SettingsError,
    apply,
    effect,
    load,
)
from ..model.workspace import Workspace
from ..syntax.text import LineIndex, TextRange
from .editor_settings import Settings as EditorSettings

INVALID_SETTINGS = "lsp.config.invalid_settings_file"
# watched (sync.py): the configuration files, and the files they `extend` (any name)
CONFIG_GLOBS = (*(f"**/{name}" for name in CONFIG_NAMES), "**/*.toml")


def is_config_file(path: Path) -> bool:
    return path.name in CONFIG_NAMES


class Host(Protocol):
    """What of the server the configuration files need: the editor settings and the
    projects (and, to report a malformed file, the client). The first look
    (``early.py``) passes a stand-in that has only the first two: this module does not
    import the protocol library until it reports something."""

    settings: EditorSettings
    model: Workspace

    def uri_of(self, path: Path) -> str: ...
    def log(self, message: str, kind: Any = ...) -> None: ...
    def log_exception(self, what: str, exc: BaseException) -> None: ...
    def window_show_message(self, params: Any) -> None: ...
    def text_document_publish_diagnostics(self, params: Any) -> None: ...


class ProjectConfigs:
    def __init__(self, server: Host) -> None:
        self.server = server
        self._settings: dict[Path, Settings] = {}
        self._errors: dict[Path, list[SettingsError]] = {}  # per project root
        self.shown: dict[Path, tuple[SettingsError, ...]] = {}  # per config file: published

    def overrides(self) -> Overrides:
        """The editor's settings, as a command line over the file."""
        s = self.server.settings
        engine = s.engine_version if s.engine_version in PROFILES else None
        return Overrides(ignore=tuple(s.ignore), engine=engine, origin="editor settings")

    def settings_for(self, root: Path) -> Settings:
        st = self._settings.get(root)
        if st is None:
            try:
                st, errors = load(root, REGISTRY, self.overrides())
            except Exception as exc:  # never stop the server over a file: the defaults
                self.server.log_exception(f"reading the configuration of {root}", exc)
                st, errors = load(root, REGISTRY, self.overrides(), isolated=True)
            if "min-severity" not in st.origins:  # the editor shows hints by default
                st = dataclasses.replace(st, min_severity="hint")
            self._settings[root] = st
            self._errors[root] = errors
        return st

    def prepare(self, project: Project) -> Settings:
        """The project's settings, its engine profile set from them."""
        st = self.settings_for(project.root)
        project.engine_override = st.engine_override
        return st

    def is_source(self, path: Path) -> bool:
        """``path`` is a configuration file some project's settings were read from (its
        own, or one its ``extend`` brings in)."""
        return is_config_file(path) or any(path in st.sources for st in self._settings.values())

    def engine_for(self, root: Path) -> str | None:
        return self.settings_for(root).engine_override

    def filter(self, project: Project, path: Path, diags: list[Diagnostic]) -> list[Diagnostic]:
        return apply(self.prepare(project), path, diags, root=project.root)

    def reload(self) -> set[Path]:
        """Read every project's configuration again; the roots whose settings changed."""
        before = self._settings
        self._settings, self._errors = {}, {}
        changed = set()
        for root in list(self.server.model.projects):
            if before.get(root) != self.settings_for(root):
                changed.add(root)
        return changed

    # -- reporting a malformed file -----------------------------------------------------------
    def publish_errors(self) -> None:
        """Push the errors of every configuration file in use (and clear the ones fixed);
        show a message for errors not shown before."""
        from lsprotocol import types as lsp

        for root in list(self.server.model.projects):
            self.settings_for(root)
        now: dict[Path, tuple[SettingsError, ...]] = {}
        for errors in self._errors.values():
            for e in errors:
                now.setdefault(e.path, ())
                if e not in now[e.path]:
                    now[e.path] += (e,)
        for path in set(self.shown) | set(now):
            errs = now.get(path, ())
            if self.shown.get(path, ()) == errs:
                continue
            self._push(path, errs)
            if errs:
                first = errs[0]
                more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
                keys = next((s.file_keys for s in self._settings.values() if s.config == path), ())
                message = f"mantle-lsp: {first.render()}{more}. {effect(errs, keys)}"
                self.server.window_show_message(
                    lsp.ShowMessageParams(type=lsp.MessageType.Error, message=message)
                )
                self.server.log(message, lsp.MessageType.Error)  # stays in the output
        self.shown = now

    def _push(self, path: Path, errors: tuple[SettingsError, ...]) -> None:
        from lsprotocol import types as lsp

        from . import convert

        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        index = LineIndex(text)
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        diags = []
        for e in errors:
            base = starts[e.line] if e.line < len(starts) else len(text)
            eol = text.find("\n", base)
            eol = len(text) if eol < 0 else eol
            rng = TextRange(min(base + e.start, eol), min(base + e.end, eol))
            d = Diagnostic(path, rng, INVALID_SETTINGS, "error", e.message)
            diags.append(convert.to_diagnostic(d, index))
        self.server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=self.server.uri_of(path), diagnostics=diags)
        )


def configured_roots(configs: ProjectConfigs, folders: list[Path], roots: list[Path]) -> list[Path]:
    """The projects to index for workspace ``folders`` as ``check`` would take them: a
    project found below a folder that its configuration excludes is left out, and the
    nested projects its ``include`` names are added (model/settings.py)."""
    out: list[Path] = []
    queue = list(roots)
    while queue:
        root = queue.pop(0)
        st = configs.settings_for(root)
        if root not in folders and st.excluded(root, is_dir=True):
            continue
        out.append(root)
        if st.include:
            queue.extend(
                n
                for n in layout.nested_projects(root)
                if n not in out and n not in queue and st.included(n)
            )
    return out
