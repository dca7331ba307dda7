"""Lifecycle and state: initialize, the initial index (with progress), settings, open
documents, files changed outside the editor and workspace folders."""

from __future__ import annotations

import asyncio
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from .. import parallel
from ..ide.diagnostics import Diagnostic
from ..model import layout
from ..model.engine import PROFILES
from ..model.project import Project, bulk_work
from ..model.workspace import resolve
from ..workers import Spawned, large_project
from . import convert
from . import layers as lsp_layers
from .base import Settings
from .config import CONFIG_GLOBS, configured_roots
from .diagnostics import register_pull
from .early import Handover
from .gate import Gate
from .server import MantleServer
from .watch import SelfWatcher

WATCHED_GLOBS = (
    "**/skill.md",
    "**/memory.yml",
    "**/responses.yml",
    "**/agent.yml",
    "**/integrations.yml",
    "**/*.py",
    "**/eval/**/*.yml",  # the evaluation's files (docs/language/eval.md)
    "**/eval/**/*.yaml",
    lsp_layers.WATCH_GLOB,  # Cadenya memory layers (lsp/layers.py)
    *CONFIG_GLOBS,
    "**/.gitignore",  # what the walks for projects skip (the layout keeps it, model/layout.py)
)
SKILL_FOLDER_GLOB = "**/skills/*"  # a skill folder created, deleted or renamed
CONFIG_TIMEOUT = 5.0


def register(server: MantleServer) -> None:
    server.request(lsp.INITIALIZE)(partial(initialize, server))
    server.notification(lsp.INITIALIZED)(partial(initialized, server))
    # no need to finish the index
    server.notification(lsp.SHUTDOWN, settle=False)(partial(shutdown, server))
    server.notification(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)(
        partial(did_change_configuration, server)
    )
    server.notification(lsp.TEXT_DOCUMENT_DID_OPEN)(partial(did_open, server))
    server.notification(lsp.TEXT_DOCUMENT_DID_CHANGE)(partial(did_change, server))
    server.notification(lsp.TEXT_DOCUMENT_DID_CLOSE)(partial(did_close, server))
    server.notification(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)(
        partial(did_change_watched_files, server)
    )
    server.notification(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(
        partial(did_change_workspace_folders, server)
    )


# -- lifecycle ---------------------------------------------------------------------------
def initialize(server: MantleServer, params: lsp.InitializeParams) -> None:
    folders: list[Path] = []
    for f in params.workspace_folders or ():
        p = convert.uri_to_path(f.uri)
        if p is not None:
            folders.append(p)
    if not folders:
        root = params.root_uri and convert.uri_to_path(params.root_uri)
        if not root and params.root_path:
            root = resolve(Path(params.root_path))
        if root:
            folders.append(root)
    server.folders = folders
    if server.jobs >= 2 and any(large_project(f) for f in folders):
        # a large project: its index will be spread, start the workers now
        server.start_workers(server.jobs - 1)
    if server.client_supports("text_document.diagnostic"):
        server.pull_diagnostics = True
        register_pull(server, server.diagnostics)
    # a request about a document opened before the index, that comes before the
    # first looks are taken (a pull, the outline), has it taken at once
    server.look_early = lambda path: (
        first_look_at(server, path) if path in server.opened_early else None
    )


async def initialized(server: MantleServer, params: lsp.InitializedParams) -> None:
    # until the projects are loaded, what needs them waits (gate.py)
    held = server.hold_messages(Gate(server))
    try:
        await load_settings(server)
        token = await begin_progress(server)
        first_looks(server)  # the documents the editor opened with the workspace
        await register_watchers(server)  # before the index: no change is missed
        await index_folders(server, list(server.folders), initial=True, token=token)
        server.indexed = True
        for path in server.opened_early:  # in a project no workspace folder lists
            if path in server.open_uris and server.model.project_for(path) is None:
                server.diagnostics.changed(path, ensure_project(server, path) | {path})
        server.opened_early = []
    finally:
        if held:
            server.let_go()


def shutdown(server: MantleServer, params: Any) -> None:
    server.diagnostics.cancel()
    server.stop_watching()
    server.stop_background()


# -- settings ---------------------------------------------------------------------------
async def did_change_configuration(
    server: MantleServer, params: lsp.DidChangeConfigurationParams
) -> None:
    before = server.settings
    if server.client_supports("workspace.configuration"):
        await load_settings(server)
    else:
        settings = params.settings
        section = settings.get("mantle") if isinstance(settings, dict) else None
        server.settings = Settings.from_client(section or {})
        server.log(f"settings: {server.settings}")
    apply_engine(server)
    server.configs.reload()  # the editor settings are layered over each project's file
    if server.settings != before and server.indexed:
        log_profiles(server, list(server.model.projects))
        server.diagnostics.seeded.clear()  # the engine profile may have changed
        if server.pull_diagnostics:
            server.diagnostics.request_refresh()
        else:
            server.diagnostics.publish_all()


# -- open documents -------------------------------------------------------------------
def did_open(server: MantleServer, params: lsp.DidOpenTextDocumentParams) -> None:
    td = params.text_document
    path = convert.uri_to_path(td.uri)
    if path is None:
        return
    server.open_uris[path] = td.uri
    doc = server.workspace.get_text_document(td.uri)
    affected = server.model.open_buffer(path, doc.source, doc.version)
    if not server.indexed and any(f == path or f in path.parents for f in server.folders):
        # the initial index loads its project (spread over processes when large);
        # until then it gets a first look (see first_looks): now, when the index is
        # under way (the settings are in)
        server.opened_early.append(path)
        if server.looked_early:
            first_look_at(server, path)
        return
    loaded = ensure_project(server, path)
    if loaded:
        affected |= loaded
    server.diagnostics.changed(path, affected)
    lsp_layers.changed(server, path)  # a file of a memory-layers/ folder


def did_change(server: MantleServer, params: lsp.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = convert.uri_to_path(uri)
    if path is None:
        return
    server.open_uris[path] = uri
    doc = server.workspace.get_text_document(uri)
    affected = server.model.open_buffer(path, doc.source, doc.version)
    if path in server.opened_early:  # before the index: a new first look
        server.diagnostics.forget_early(path)
        server.early_projects.pop(path, None)
        first_look_at(server, path)
        return
    server.diagnostics.changed(path, affected)
    lsp_layers.changed(server, path)  # a file of a memory-layers/ folder


def did_close(server: MantleServer, params: lsp.DidCloseTextDocumentParams) -> None:
    path = convert.uri_to_path(params.text_document.uri)
    if path is None:
        return
    server.open_uris.pop(path, None)
    affected = server.model.close_buffer(path)
    server.diagnostics.changed(path, affected)
    release_on_demand(server, path)
    lsp_layers.changed(server, path)  # a file of a memory-layers/ folder


# -- files changed outside the editor ---------------------------------------------------
def did_change_watched_files(server: MantleServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    files_changed(server, [ev.uri for ev in params.changes])


# -- workspace folders ------------------------------------------------------------------
async def did_change_workspace_folders(
    server: MantleServer, params: lsp.DidChangeWorkspaceFoldersParams
) -> None:
    cleared: set[Path] = set()
    for f in params.event.removed:
        folder = convert.uri_to_path(f.uri)
        if folder is None:
            continue
        if folder in server.folders:
            server.folders.remove(folder)
        # a project another folder still holds (the same folder twice, or a parent
        # and the project both) stays
        for root, proj in list(server.model.projects.items()):
            inside = root == folder or folder in root.parents
            if inside and not any(f == root or f in root.parents for f in server.folders):
                cleared |= set(proj.files)
                del server.model.projects[root]
        lsp_layers.forget(server, folder, server.folders)
        server.log(f"removed workspace folder {folder}")
    if cleared:
        server.diagnostics.refresh(sorted(cleared))
    added = [p for f in params.event.added if (p := convert.uri_to_path(f.uri)) is not None]
    server.folders.extend(p for p in added if p not in server.folders)
    if server.watcher is not None:
        watch_folders(server)
    if added:
        await index_folders(server, added, initial=False)
    elif cleared and server.pull_diagnostics:
        server.diagnostics.request_refresh()


def apply_engine(server: MantleServer) -> None:
    """`mantle.engineVersion`: "3.21"/"3.22" force that profile, "auto" detects it per
    project from its rasa-pro pin (model/engine.py)."""
    engine = server.settings.engine_version
    server.model.engine_override = engine if engine in PROFILES else None


def log_profiles(server: MantleServer, roots: list[Path]) -> None:
    """Say which rule profile applies to each project and why (model/engine.py)."""
    for root in roots:
        if root in server.model.projects:
            server.log(f"rule profile of {root}: {server.profile_reason(root)}")


async def load_settings(server: MantleServer) -> None:
    early, server.early_settings = server.early_settings, None
    if early is not None:  # asked already, before the server was imported (early.py)
        _set_settings(server, early)
        return
    if not server.client_supports("workspace.configuration"):
        return
    try:
        values = await asyncio.wait_for(
            server.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="mantle")])
            ),
            CONFIG_TIMEOUT,
        )
    except Exception as exc:
        server.log(f"workspace/configuration failed: {exc}", lsp.MessageType.Warning)
        return
    value = values[0] if values else None
    _set_settings(server, Settings.from_client(value or {}))


def _set_settings(server: MantleServer, settings: Settings) -> None:
    server.settings = settings
    apply_engine(server)
    server.log(
        f"settings: engineVersion={server.settings.engine_version}, "
        f"diagnostics.ignore={list(server.settings.ignore)}"
    )


async def begin_progress(server: MantleServer) -> str | None:
    """Begin the index's ``$/progress`` (when the client shows progress): its token."""
    early, server.early_progress = server.early_progress, None
    if early is not None:  # begun before the server was imported (early.py)
        return early
    if not server.client_supports("window.work_done_progress"):
        return None
    token = f"mantle-lsp/index/{uuid.uuid4().hex}"
    try:
        await asyncio.wait_for(server.work_done_progress.create_async(token), CONFIG_TIMEOUT)
    except Exception as exc:
        server.log(f"cannot create progress: {exc}", lsp.MessageType.Warning)
        return None
    server.work_done_progress.begin(
        token,
        lsp.WorkDoneProgressBegin(title="Mantle: indexing", percentage=0, cancellable=False),
    )
    return token


def adopt_first_looks(server: MantleServer, handover: Handover) -> None:
    """What the look taken before the server was imported learnt (``early.py``): the
    editor's settings, the index's progress token and the documents' first looks."""
    server.early_settings = handover.settings
    if handover.settings is not None:  # for a look the server takes before it reads them
        server.settings = handover.settings
        apply_engine(server)
    server.early_progress = handover.progress
    for path, look in handover.looks.items():
        server.early_projects[path] = look.project
        server.diagnostics.adopt_early(look)
    server.early_looks = len(handover.looks)


def first_looks(server: MantleServer) -> None:
    """The diagnostics of the skill.md files the editor opened before the initial index,
    from their project loaded around their skill (``Project.load_around``: that skill's
    files, the project files, the responses.yml files naming its responses, and the
    neighbours' files its checks read), without the data-flow rules that need every file:
    ~0.03 s on 1,000 skills instead of the whole index. The index then publishes (or has
    the client pull) them whole."""
    server.looked_early = True
    for path in server.opened_early:
        first_look_at(server, path)


def first_look_at(server: MantleServer, path: Path) -> None:
    """The first look at one document opened before the initial index (once)."""
    if path not in server.open_uris or path in server.early_projects:
        return
    try:
        fs = server.model.fs
        root = layout.find_project_for(path, fs)
        kind = layout.classify(path, root) if root is not None else None
        if root is None or kind is None or kind[0] != layout.FileKind.SKILL_MD or not kind[1]:
            return
        files = list(layout.project_files(root, fs))
        if not any(p == path for p, _, _ in files):
            return  # an ignored file: the index does not load it either
        with bulk_work():
            proj = Project.load_around(root, files, kind[1], server.model.read, fs)
            server.diagnostics.first_look(proj, path, kind[1])
        server.early_projects[path] = proj
    except Exception as exc:  # the index still comes
        server.log_exception(f"the first look at {path}", exc)


async def index_folders(
    server: MantleServer, folders: list[Path], initial: bool, token: str | None = None
) -> None:
    """Load every project under ``folders``, reporting ``$/progress`` (begun by the
    caller when it passes ``token``), then publish (or ask a pulling client to pull) the
    diagnostics of every project file."""
    held = server.hold_messages(Gate(server))
    try:
        await _index_folders(server, folders, initial, token)
    finally:
        if held:
            server.let_go()


async def _index_folders(
    server: MantleServer, folders: list[Path], initial: bool, token: str | None
) -> None:
    started = server.index_started = time.monotonic()
    if token is None:
        token = await begin_progress(server)
    roots: list[Path] = []
    for folder in folders:
        roots.extend(r for r in layout.find_projects(folder, server.model.fs) if r not in roots)
    roots = configured_roots(server.configs, folders, roots)
    if token is not None:
        server.work_done_progress.report(
            token,
            lsp.WorkDoneProgressReport(
                message=f"{len(roots)} project{'s' if len(roots) != 1 else ''}", percentage=0
            ),
        )
    # Loading, indexing and checking every project is one batch. The index is long-lived:
    # it is frozen out of the cyclic collector's sight before the collector resumes, so
    # that later collections (while typing) scan only new objects instead of ~10^6 old
    # ones. What a project keeps forms no reference cycle (tests/test_frozen_heap.py), so
    # replaced files are still freed.
    # No full collection first: it would block the next request for ~0.3 s to find a few
    # hundred cyclic objects (measured on 1,000 skills), which stay frozen instead.
    with bulk_work(keep=True):
        nfiles, spread = await _load_and_publish(server, roots, token)
    server.diagnostics.forget_early()  # the first looks: their projects are loaded now
    if server.early_projects:
        server.early_projects.clear()
        # what the editor asked of them before (code lenses, inlay hints, tokens) may
        # have needed the whole project: it asks again
        for cap, request in (
            ("workspace.code_lens.refresh_support", server.workspace_code_lens_refresh),
            ("workspace.inlay_hint.refresh_support", server.workspace_inlay_hint_refresh),
            (
                "workspace.semantic_tokens.refresh_support",
                server.workspace_semantic_tokens_refresh,
            ),
        ):
            if server.client_supports(cap):
                server.quietly(request(None))
    ms = int((time.monotonic() - started) * 1000)
    summary = f"indexed {len(roots)} project(s), {nfiles} file(s) in {ms} ms"
    if spread:
        summary += f" ({spread} of them spread over {server.jobs} processes)"
    if token is not None:
        server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=summary))
    where = ", ".join(str(f) for f in folders) or "no workspace folder"
    server.log(f"{'initial index' if initial else 'added folders'} ({where}): {summary}")
    log_profiles(server, roots)
    server.stop_workers()
    server.settle_in_background()
    server.configs.publish_errors()  # a malformed configuration file of these projects
    lsp_layers.index(server, folders)  # memory-layers/ folders (Cadenya)


async def _load_and_publish(
    server: MantleServer, roots: list[Path], token: str | None
) -> tuple[int, int]:
    """Load (or reuse) each project, then publish the diagnostics of every project file;
    returns how many files were loaded, and how many projects were spread over
    processes."""
    nfiles = spread = 0
    published: set[Path] = set()
    for i, root in enumerate(roots):
        if token is not None:
            server.work_done_progress.report(
                token,
                lsp.WorkDoneProgressReport(
                    message=root.name, percentage=int(100 * i / max(len(roots), 1))
                ),
            )
        server.on_demand.discard(root)  # a folder's project now, not one document's
        if root not in server.model.projects:
            try:
                loaded = await _load_spread(server, root)
                if loaded is not None:
                    spread += 1
                else:  # in a thread too: the editor is answered meanwhile (gate.py)
                    loaded = await asyncio.get_running_loop().run_in_executor(
                        None, _load_here, server, root
                    )
                    server.model.adopt(loaded[0])
                if server.pull_diagnostics:
                    loaded_proj, found = loaded
                    server.diagnostics.seed({p: found.get(p, []) for p in loaded_proj.files})
                else:  # now: an edit may come in next
                    server.diagnostics.publish_found(*loaded)
                    published.add(root)
            except Exception as exc:  # one broken project must not stop the others
                server.log_exception(f"loading the project {root}", exc)
        proj = server.model.projects.get(root)
        nfiles += len(proj.files) if proj else 0
        await asyncio.sleep(0)  # let progress out and queued messages in
    if server.pull_diagnostics:
        server.diagnostics.request_refresh()
    else:
        server.diagnostics.publish_all(published)
    return nfiles, spread


def _load_here(server: MantleServer, root: Path) -> tuple[Project, dict[Path, list[Diagnostic]]]:
    """Load a project and compute its diagnostics in this process alone (called in a
    thread, like the share of :func:`_load_spread`)."""
    proj = server.model.load_detached(root)
    return proj, server.diagnostics.raw_project(proj)


async def _load_spread(
    server: MantleServer, root: Path
) -> tuple[Project, dict[Path, list[Diagnostic]]] | None:
    """Load a large project with ``server.jobs`` processes (parallel.py): this one parses
    its share, spawned workers the rest. Returns the project and every file's
    diagnostics; None when the project is small, one process is asked for, or a worker
    failed (the caller then loads it here). The other workers' files stay pending until
    :meth:`MantleServer.settle_in_background` (or the next message) parses them.

    This process's share runs in a thread: meanwhile the event loop answers what can be
    answered without the project (gate.py), and holds the rest. The project is taken
    over (``adopt``) back on the loop."""
    if server.jobs < 2:
        return None
    files = list(layout.project_files(root, server.model.fs))
    # open documents are read from the editor, not the disk: their skills stay here
    pinned = {sid for p, _, sid in files if p in server.model.overlays and sid is not None}
    owned = parallel.partition(files, server.jobs, pinned=pinned)
    if owned is None:
        return None
    engine = server.configs.engine_for(root)
    workers: list[Spawned] = []
    try:
        workers = server.take_workers(len(owned) - 1)
        parallel.assign(workers, root, server.jobs, engine, pinned)
        proj, found = await asyncio.get_running_loop().run_in_executor(
            None, parallel.lead_spawned, root, files, owned, engine, server.model.read, workers
        )
    except Exception as exc:  # a worker failed, or could not start: one process does it
        server.log(parallel.failure_note(exc, root, "indexing"), lsp.MessageType.Warning)
        return None
    finally:
        server.retire_workers(workers)
    server.model.adopt(proj)
    return proj, found


async def register_watchers(server: MantleServer) -> None:
    if not server.client_supports("workspace.did_change_watched_files.dynamic_registration"):
        # the client cannot watch files for us: we watch the workspace folders ourselves
        watch_folders(server)
        return
    watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in WATCHED_GLOBS]
    watchers.append(
        lsp.FileSystemWatcher(
            glob_pattern=SKILL_FOLDER_GLOB,
            kind=lsp.WatchKind.Create | lsp.WatchKind.Delete,
        )
    )
    try:
        await asyncio.wait_for(
            server.client_register_capability_async(
                lsp.RegistrationParams(
                    registrations=[
                        lsp.Registration(
                            id=f"mantle-lsp/watch/{uuid.uuid4().hex}",
                            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                                watchers=watchers
                            ),
                        )
                    ]
                )
            ),
            CONFIG_TIMEOUT,
        )
    except Exception as exc:
        server.log(f"cannot register file watchers: {exc}", lsp.MessageType.Warning)


def ensure_project(server: MantleServer, path: Path) -> set[Path]:
    """Load the project of a Mantle file opened outside every known project (a file
    opened without a workspace folder, or before the initial index reached it). Returns
    the files of a newly loaded project.

    A project nested in a workspace folder's project (a tutorial snippet, a template:
    :func:`layout.nested_projects`, never loaded with the folder) is loaded *on demand*:
    its open documents get their own project's analysis, its other files no diagnostics,
    and it is let go when its last open document closes (:func:`release_on_demand`)."""
    if server.model.project_for(path) is not None:
        return set()
    root = layout.find_project_for(path, server.model.fs)
    if root is None or root in server.model.projects or layout.classify(path, root) is None:
        return set()
    proj = server.model.ensure_project_for(path)
    if proj is None:
        return set()
    holders = [f for f in server.folders if f == proj.root or f in proj.root.parents]
    if holders and not any(proj.root in layout.find_projects(f, proj.fs) for f in holders):
        server.on_demand.add(proj.root)
        return {path}
    return set(proj.files)


def release_on_demand(server: MantleServer, path: Path) -> None:
    """After ``path`` closed: an on-demand project with no open document left goes."""
    for root in list(server.on_demand):
        if (root == path or root in path.parents) and not any(
            root in p.parents for p in server.open_uris
        ):
            server.on_demand.discard(root)
            server.model.projects.pop(root, None)


def files_changed(server: MantleServer, uris: list[str]) -> None:
    """Files or folders changed on disk (reported by the client, or seen by our own
    watcher): update the model and republish the files that may be affected. Each event
    on its own: one that fails is logged and costs none of the others; an event repeated
    in the batch is handled once."""
    affected: set[Path] = set()
    for u in dict.fromkeys(uris):
        try:
            path = _event_path(server, u)
            if path is not None:
                # what exists is seen anew from here on, not before (model/layout.py)
                affected |= server.model.disk_changed(path)
                resolved = convert.uri_to_path(u)
                if resolved is not None and resolved != path:
                    affected |= server.model.disk_changed(resolved)
                affected |= file_changed(server, path)
                lsp_layers.changed(server, path)  # a file of a memory-layers/ folder
        except Exception as exc:
            server.log_exception(f"the change of {u[:200]!r}", exc)
    # as after an edit: plus what the rules reading those kinds of file report on
    affected = server.diagnostics.with_rule_readers(affected)
    server.diagnostics.refresh(sorted(affected))
    if server.pull_diagnostics and affected:
        server.diagnostics.request_refresh()


def _event_path(server: MantleServer, uri: str) -> Path | None:
    """The path of a changed file as the projects know it: as written (a skill folder
    that is a symbolic link is inside the project; once resolved it is elsewhere), else
    resolved (a workspace opened through a link)."""
    resolved = convert.uri_to_path(uri)
    if resolved is None:
        return None
    raw = convert.uri_to_raw_path(uri)
    if raw is not None and _owner(server, raw) is not None:
        return raw
    return resolved


def _owner(server: MantleServer, path: Path) -> Project | None:
    """The innermost loaded project whose folder holds ``path`` (or is it)."""
    owner: Project | None = None
    for root, proj in server.model.projects.items():
        if (root == path or root in path.parents) and (
            owner is None or len(root.parts) > len(owner.root.parts)
        ):
            owner = proj
    return owner


def file_changed(server: MantleServer, path: Path) -> set[Path]:
    """A file or folder changed on disk; the files whose diagnostics may change."""
    if server.configs.is_source(path):  # all that is needed is done here (lsp/config.py)
        config_changed(server)
        return set()
    model = server.model
    owner = _owner(server, path)
    if owner is None and not any(f == path or f in path.parents for f in server.folders):
        return set()  # outside every workspace folder: no project appears from it
    if owner is not None and layout.classify(path, owner.root) is None:
        # not a Mantle file: a folder created, deleted, moved or checked out (its files
        # may or may not be reported one by one, before or after it)?
        skills = owner.root / "skills"
        known = path == skills or (path.parent == skills and path.name in owner.skills)
        if known or path.is_dir() or any(path in p.parents for p in owner.files):
            return _still_a_project(server, owner, model.sync_folder(owner, path))
        return set()
    affected = model.file_changed(path)
    if owner is not None and path.name in ("agent.yml", "integrations.yml", "skill.md"):
        return _still_a_project(server, owner, affected)
    return affected


def _still_a_project(server: MantleServer, proj: Project, affected: set[Path]) -> set[Path]:
    """After a change that may have taken a project's markers away (agent.yml,
    integrations.yml, skills): a folder that is no longer a project is let go, as
    ``check`` would not find it; its files' diagnostics are cleared."""
    still = layout.is_project_root(proj.root, proj.fs)
    if still or server.model.projects.get(proj.root) is not proj:
        return affected
    del server.model.projects[proj.root]
    server.on_demand.discard(proj.root)
    server.log(f"{proj.root} is no longer a project (two of agent.yml, integrations.yml, skills)")
    return affected | set(proj.files)


def config_changed(server: MantleServer) -> None:
    """A configuration file changed (or the editor settings did): reload, republish."""
    configs = server.configs
    changed = configs.reload()
    configs.publish_errors()
    if server.indexed and not server.pull_diagnostics:
        # memory-layers/ folders: their ignores may have changed (unchanged ones are not
        # sent again)
        for root in sorted(lsp_layers.state(server).sets):
            lsp_layers.publish(server, root)
    if not changed or not server.indexed:
        return
    publisher = server.diagnostics
    publisher.seeded.clear()
    if server.pull_diagnostics:
        publisher.request_refresh()
        return
    for root in sorted(changed):
        proj = server.model.projects.get(root)
        if proj is not None:
            publisher.publish_found(proj, publisher.raw_project(proj))


def watch_folders(server: MantleServer) -> None:
    """Watch the workspace folders for changes made outside the editor (started when
    the client cannot do it for us; follows the folders)."""
    if server.watcher is None:
        loop = asyncio.get_running_loop()
        server.watcher = SelfWatcher(server, loop, lambda uris: files_changed(server, uris))
    try:
        server.watcher.watch(list(server.folders))
    except Exception as exc:
        server.log(
            f"cannot watch the workspace for changes ({exc}): changes made outside "
            "the editor are seen when the files are opened",
            lsp.MessageType.Warning,
        )
