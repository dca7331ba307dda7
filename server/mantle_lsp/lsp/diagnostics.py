"""Diagnostics: pushed (``textDocument/publishDiagnostics``) or pulled
(``textDocument/diagnostic``, ``workspace/diagnostic``) when the client supports pulling.

Push schedule:

- the edited (opened, closed) document is recomputed at once and published with the
  version it was computed for;
- the other files the change may affect (what ``Workspace.open_buffer`` returns) are
  recomputed after :data:`DELAY`; a newer edit restarts the delay and merges its files
  into the pending batch (the batch never waits longer than :data:`MAX_WAIT`);
- a result computed for an older version than the editor's current one is dropped;
- a file whose diagnostics did not change is not published again; a file that had
  diagnostics and has none now gets an empty list.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from ..ide.diagnostics import (
    Diagnostic,
    file_diagnostics,
    project_diagnostics,
    rechecked,
)
from ..ide.suppression import apply_suppressions
from ..model.project import PendingFile, Project
from . import convert
from . import layers as lsp_layers
from .base import ServerBase
from .config import ProjectConfigs
from .early import Look, first_look_diagnostics, related_in
from .wire import _Key, diagnostics_key, result_id

DELAY = 0.1  # seconds: coalescing delay for the files an edit affects
MAX_WAIT = 0.5  # seconds: a pending batch is never postponed beyond this

_key = diagnostics_key
_NONE_ID = result_id(())  # most files have nothing to report


class DiagnosticsPublisher:
    def __init__(self, server: ServerBase, configs: ProjectConfigs) -> None:
        self.server = server
        self.configs = configs
        self.last: dict[Path, tuple[int | None, _Key]] = {}  # what the client shows
        # Pull mode: diagnostics a spread initial index computed (unfiltered), served to
        # pulls until a change may affect them (see seed).
        self.seeded: dict[Path, list[Diagnostic]] = {}
        # Documents opened before the initial index: their first look (filtered), served
        # to pulls until the index has their project (see first_look), and where their
        # related information points.
        self.early: dict[Path, list[Diagnostic]] = {}
        self.early_related: dict[Path, convert.RelatedTarget | None] = {}
        self.incomplete: set[Path] = set()  # their first look may miss something
        # Pull mode: files whose last workspace report had diagnostics. A workspace report
        # leaves out a file with nothing to report that the client does not know either
        # (no previous result id, nothing reported before): most files, most of the time.
        self.reported: set[Path] = set()
        # What the client was last given for each file (filtered), and the diagnostics of
        # files it was never given, computed for an agent map until the next change: the
        # map's problem marks (see problems_of).
        self.shown: dict[Path, list[Diagnostic]] = {}
        self.for_map: dict[Path, list[Diagnostic]] = {}
        self.pending: set[Path] = set()
        self.stale_dropped = 0
        self._timer: asyncio.TimerHandle | None = None
        self._pending_since = 0.0

    # -- computing ----------------------------------------------------------------------
    def filtered(self, project: Project, path: Path, diags: list[Diagnostic]) -> list[Diagnostic]:
        """What the project's settings let through (the configuration file with the editor
        settings over it, lsp/config.py), as ``check`` filters."""
        return self.configs.filter(project, path, diags)

    def raw(self, project: Project, paths: Iterable[Path]) -> dict[Path, list[Diagnostic]]:
        """Some files' diagnostics, their inline suppressions applied (once, here)."""
        self.configs.prepare(project)  # the engine profile
        paths = list(paths)
        return apply_suppressions(project, file_diagnostics(project, paths), paths)

    def raw_project(self, project: Project) -> dict[Path, list[Diagnostic]]:
        self.configs.prepare(project)
        return apply_suppressions(project, project_diagnostics(project), project.files)

    def compute(self, project: Project, paths: Iterable[Path]) -> dict[Path, list[Diagnostic]]:
        found = self.raw(project, paths)
        return {p: self.filtered(project, p, ds) for p, ds in found.items()}

    def related(self, pull: bool = False) -> convert.RelatedTarget | None:
        """How related information is put on the wire: None when the client did not
        declare it supports it (the message already names the other places); else each
        entry's file as URI and line index, None for a file no project holds."""
        caps = "text_document.publish_diagnostics.related_information"
        if not self.server.client_supports(caps) and not (
            pull and self.server.client_supports("text_document.diagnostic.related_information")
        ):
            return None

        def target(path: Path) -> tuple[str, Any] | None:
            proj = self.server.model.project_for(path)
            pf = proj.files.get(path) if proj is not None else None
            if pf is None:
                return None
            return self.server.uri_of(path), pf.source.index

        return target

    def first_look(self, project: Project, path: Path, sid: str) -> None:
        """Publish (or keep for a pull) the first look at a document opened before the
        initial index: ``project`` is loaded around its skill (``Project.load_around``).
        A first look that the whole project may add to is not shown: the document's
        diagnostics come with the index (a pull is answered "ask again later")."""
        diags = first_look_diagnostics(self.configs, project, path, sid)
        if diags is None:
            self.incomplete.add(path)
            return
        self.early[path] = diags
        self.early_related[path] = self._related_early(project)
        if not self.server.pull_diagnostics:
            version = project.files[path].source.version
            self.publish(path, diags, version, self.early_related[path])

    def _related_early(self, project: Project) -> convert.RelatedTarget | None:
        """Related information of a first look: its files as the look's project has them
        (none of the server's projects holds them yet)."""
        if self.related(self.server.pull_diagnostics) is None:
            return None
        return related_in(project, self.server.uri_of)

    def forget_early(self, path: Path | None = None) -> None:
        """Drop the first look of ``path`` (an edit makes a new one), or of every document
        (the index has their projects)."""
        for table in (self.early, self.early_related):
            if path is None:
                table.clear()
            else:
                table.pop(path, None)
        if path is None:
            self.incomplete.clear()
        else:
            self.incomplete.discard(path)

    def adopt_early(self, look: Look) -> None:
        """A first look taken before the server was imported (``early.py``): what was
        published (or is answered to pulls) is what this publisher would have sent."""
        self.early[look.path] = look.diagnostics
        self.early_related[look.path] = self._related_early(look.project)
        if look.pushed:
            self.shown[look.path] = look.diagnostics
            if look.diagnostics or look.version is not None:
                self.last[look.path] = (look.version, _key(look.diagnostics))

    def problems_of(self, project: Project) -> list[Diagnostic]:
        """Every diagnostic of ``project`` as the editor shows it (what it was last
        given); the files it was never given (a pulling client that asks for open
        documents only) are computed once, until the next change."""
        missing = [p for p in project.files if p not in self.shown and p not in self.for_map]
        if missing:
            found = self.compute(project, missing)
            for p in missing:
                self.for_map[p] = found.get(p, [])
        return [
            d
            for p in project.files
            for d in (self.shown[p] if p in self.shown else self.for_map.get(p, []))
        ]

    # -- pushing ------------------------------------------------------------------------
    def refresh(self, paths: Iterable[Path]) -> None:
        """Recompute ``paths`` and publish what changed, now."""
        self.for_map.clear()
        if self.server.pull_diagnostics:
            for p in paths:
                self.seeded.pop(p, None)
            return
        groups: dict[Path, tuple[Project, list[Path]]] = {}
        orphans: list[Path] = []
        for path in paths:
            proj = self.server.model.project_for(path)
            if proj is None or path not in proj.files:
                orphans.append(path)
                continue
            groups.setdefault(proj.root, (proj, []))[1].append(path)
        for proj, ps in groups.values():
            versions = {p: proj.files[p].source.version for p in ps}
            found = self.compute(proj, ps)
            for p in ps:
                self.publish(p, found.get(p, []), versions[p])
        for p in orphans:
            self.publish(p, [], None)

    def publish_all(self, done: Iterable[Path] = ()) -> None:
        """Every file of every project (after the initial index or a settings change);
        files that no longer belong to a project are cleared. The projects whose roots
        are in ``done`` were just published by :meth:`publish_found`."""
        self.for_map.clear()  # settings may have changed
        if self.server.pull_diagnostics:
            return
        skip = set(done)
        seen: set[Path] = set()
        for proj in list(self.server.model.projects.values()):
            if proj.root in skip:
                seen.update(proj.files)
                continue
            seen.update(self.publish_found(proj, self.raw_project(proj)))
        for p in list(self.last):
            if p not in seen:
                self.publish(p, [], None)

    def publish_found(self, proj: Project, found: dict[Path, list[Diagnostic]]) -> set[Path]:
        """Publish a project's diagnostics computed just now (by :meth:`raw_project` or
        a spread load); returns its files."""
        for p, pf in proj.files.items():
            # a file another process parsed is not open in the editor (open ones stay here)
            version = None if isinstance(pf, PendingFile) else pf.source.version
            self.publish(p, self.filtered(proj, p, found.get(p, [])), version)
        return set(proj.files)

    def publish(
        self,
        path: Path,
        diags: list[Diagnostic],
        version: int | None,
        related: convert.RelatedTarget | None = None,
    ) -> bool:
        """Publish one file's diagnostics, computed for ``version`` of its text (their
        related information's files looked up in ``related``, else in the projects).
        Returns False when nothing was sent (stale or unchanged)."""
        current = self.server.open_version(path)
        if current is not None and version is not None and version < current:
            self.stale_dropped += 1
            return False
        if current is None and self.server.on_demand_file(path):
            diags = []  # a nested project opened for one document: only open ones report
        if current is None:
            version = None
        self.shown[path] = diags
        state = (version, _key(diags))
        if self.last.get(path, (None, ())) == state:
            return False
        if diags or current is not None:
            self.last[path] = state
        else:
            self.last.pop(path, None)
        index = self.server.index_of(path)
        if any(d.related for d in diags):
            related = related or self.related()
        self.server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=self.server.uri_of(path),
                diagnostics=[convert.to_diagnostic(d, index, related) for d in diags],
                version=version,
            )
        )
        return True

    def seed(self, found: dict[Path, list[Diagnostic]]) -> None:
        """Pull mode: keep what a spread initial index computed, so that the first pulls
        are answered without parsing the other workers' files first. A file's entry is
        dropped when a change may affect it (the files :meth:`changed` and
        :meth:`refresh` get, as in push mode), and all of them when settings change."""
        self.seeded.update(found)

    # -- scheduling ---------------------------------------------------------------------
    def schedule(self, paths: Iterable[Path]) -> None:
        """Recompute ``paths`` after the coalescing delay (a newer call supersedes)."""
        new = set(paths)
        if not new and not self.pending:
            return
        now = time.monotonic()
        if not self.pending:
            self._pending_since = now
        self.pending |= new
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        if self._timer is not None:
            if now - self._pending_since >= MAX_WAIT:
                return  # keep the timer that is already due
            self._timer.cancel()
        self._timer = loop.call_later(DELAY, self.flush)

    def flush(self) -> None:
        self._timer = None
        paths, self.pending = self.pending, set()
        if not paths:
            return
        try:
            if self.server.pull_diagnostics:
                self.request_refresh()
            else:
                self.refresh(sorted(paths))
            # reference counts in code lenses of other files may have changed too
            if self.server.client_supports("workspace.code_lens.refresh_support"):
                self.server.quietly(self.server.workspace_code_lens_refresh(None))
        except Exception as exc:
            self.server.log_exception("diagnostics", exc)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.pending.clear()

    def request_refresh(self) -> None:
        """Ask a pulling client to pull again (other files may have changed)."""
        if self.server.client_supports("workspace.diagnostics.refresh_support"):
            self.server.quietly(self.server.workspace_diagnostic_refresh(None))

    def changed(self, edited: Path | None, affected: Iterable[Path]) -> None:
        """After an edit: the edited document now, the rest after the delay. The rest is
        what the index says may be affected, plus what the rules reading those kinds of
        file report on (:func:`ide.diagnostics.rechecked`)."""
        self.for_map.clear()
        others = self.with_rule_readers({*affected, *([edited] if edited else [])})
        if self.seeded:
            for p in others | ({edited} if edited is not None else set()):
                self.seeded.pop(p, None)
        if edited is not None:
            others.discard(edited)
            self.refresh([edited])
        self.schedule(others)

    def with_rule_readers(self, paths: set[Path]) -> set[Path]:
        groups: dict[Path, tuple[Project, list[Path]]] = {}
        for p in paths:
            proj = self.server.model.project_for(p)
            if proj is not None:
                groups.setdefault(proj.root, (proj, []))[1].append(p)
        out = set(paths)
        for proj, ps in groups.values():
            out |= rechecked(proj, ps)
        return out

    # -- pulling ------------------------------------------------------------------------
    def document_report(
        self, params: lsp.DocumentDiagnosticParams
    ) -> lsp.RelatedFullDocumentDiagnosticReport | lsp.RelatedUnchangedDocumentDiagnosticReport:
        seeded = (
            self.seeded.get(p) if (p := convert.uri_to_path(params.text_document.uri)) else None
        )
        if seeded is None:
            self.server.settle()
        doc = self.server.doc(params.text_document.uri)
        if doc is None:
            layers = lsp_layers.document_report(self.server, p) if p is not None else None
            if layers is not None:  # a file of a memory-layers/ folder
                return layers
            if p is not None and p not in self.early:
                self.server.look_early(p)  # pulled before the first looks were taken
            if p is not None and p in self.incomplete:
                # only the whole project tells: the client asks again (and is asked to
                # pull after the index)
                raise JsonRpcException(
                    "mantle-lsp: this document's diagnostics come with the index",
                    code=lsp.LSPErrorCodes.ServerCancelled,
                    data={"retriggerRequest": True},
                )
            early = self.early.get(p) if p is not None else None
            if early is None or p is None:
                return lsp.RelatedFullDocumentDiagnosticReport(items=[])
            index = self.server.index_of(p)
            related = self.early_related.get(p)
            return lsp.RelatedFullDocumentDiagnosticReport(
                items=[convert.to_diagnostic(d, index, related) for d in early],
                result_id=result_id(early),
            )
        if seeded is not None:
            diags = self.filtered(doc.project, doc.path, seeded)
        else:
            diags = self.compute(doc.project, [doc.path]).get(doc.path, [])
        self.shown[doc.path] = diags
        rid = result_id(diags)
        if params.previous_result_id == rid:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return lsp.RelatedFullDocumentDiagnosticReport(
            items=[convert.to_diagnostic(d, doc.index, self.related(True)) for d in diags],
            result_id=rid,
        )

    def workspace_report(
        self, params: lsp.WorkspaceDiagnosticParams
    ) -> lsp.WorkspaceDiagnosticReport:
        previous = {p.uri: p.value for p in params.previous_result_ids or ()}
        known = {path for u in previous if (path := convert.uri_to_path(u)) is not None}
        items: list[Any] = []
        related = self.related(True)
        projects = list(self.server.model.projects.values())
        if not all(p in self.seeded for proj in projects for p in proj.files):
            self.server.settle()
        for proj in projects:
            seeded = {p: self.seeded[p] for p in proj.files if p in self.seeded}
            if not seeded:
                found = self.raw_project(proj)
            else:
                missing = [p for p in proj.files if p not in seeded]
                found = {**(self.raw(proj, missing) if missing else {}), **seeded}
            for path in sorted(proj.files):
                diags = self.filtered(proj, path, found.get(path, []))
                if diags and self.server.on_demand_file(path) and path not in self.server.open_uris:
                    diags = []  # see publish
                self.shown[path] = diags
                if not diags and path not in known and path not in self.reported:
                    continue  # the client shows nothing for it, and there is nothing
                if diags:
                    self.reported.add(path)
                else:
                    self.reported.discard(path)
                uri = self.server.uri_of(path)
                version = self.server.open_version(path)
                rid = result_id(diags) if diags else _NONE_ID
                if previous.get(uri) == rid:
                    items.append(
                        lsp.WorkspaceUnchangedDocumentDiagnosticReport(
                            uri=uri, version=version, result_id=rid
                        )
                    )
                    continue
                index = proj.files[path].source.index if diags else None
                items.append(
                    lsp.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri,
                        version=version,
                        items=[convert.to_diagnostic(d, index, related) for d in diags]
                        if index
                        else [],
                        result_id=rid,
                    )
                )
        # a file reported before whose project is gone (its folder removed, deleted, no
        # longer a project): reported empty once, to clear what the client shows
        held = {p for proj in projects for p in proj.files}
        for path in sorted(self.reported - held):
            self.reported.discard(path)
            items.append(
                lsp.WorkspaceFullDocumentDiagnosticReport(
                    uri=self.server.uri_of(path), version=None, items=[], result_id=_NONE_ID
                )
            )
        items.extend(lsp_layers.workspace_items(self.server))  # memory-layers/ folders
        return lsp.WorkspaceDiagnosticReport(items=items)


def register_pull(server: ServerBase, publisher: DiagnosticsPublisher) -> None:
    """The pull handlers, added during ``initialize`` when the client supports pulling
    (push needs none)."""

    @server.request(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(
            identifier="mantle-lsp", inter_file_dependencies=True, workspace_diagnostics=True
        ),
        settle=False,  # answered from the spread index's results when it can
    )
    def document_diagnostic(
        params: lsp.DocumentDiagnosticParams,
    ) -> lsp.RelatedFullDocumentDiagnosticReport | lsp.RelatedUnchangedDocumentDiagnosticReport:
        return publisher.document_report(params)

    @server.request(lsp.WORKSPACE_DIAGNOSTIC, settle=False)
    def workspace_diagnostic(
        params: lsp.WorkspaceDiagnosticParams,
    ) -> lsp.WorkspaceDiagnosticReport:
        return publisher.workspace_report(params)
