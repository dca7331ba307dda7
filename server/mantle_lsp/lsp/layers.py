"""The protocol side of Cadenya memory layers (docs/memory-layers.md, docs/lsp.md).

Files under a ``memory-layers/`` folder are not Mantle files: the feature handlers
(``hover.py``, ``navigation.py``, …) and the diagnostics of ``diagnostics.py`` hand a
document that no project holds to the functions here, and ``sync.py`` reports every
change of such a file. Each
layer folder's :class:`~mantle_lsp.model.layers.LayerSet` is rebuilt from the open
buffers and the disk on every change (a layer folder holds a handful of files), and its
diagnostics are pushed (or the client asked to pull again).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..ide import layers as ide_layers
from ..ide.types import FeatureError, WorkspaceEdit
from ..model.layers import (
    LayerSet,
    build_layer_set,
    classify,
    find_layer_roots,
    layer_files,
    layer_root_of,
)
from ..model.settings import apply
from ..syntax.text import LineIndex
from . import convert
from .base import FeatureFailed, ServerBase
from .params import object_params, string

LAYERS_MANIFEST = "mantle/layersManifest"  # a request of ours (docs/lsp.md)
WATCH_GLOB = "**/memory-layers/**"


class LayerState:
    """The layer sets the server knows (one per ``memory-layers/`` folder) and the files
    whose diagnostics it pushed."""

    def __init__(self) -> None:
        self.sets: dict[Path, LayerSet] = {}
        self.shown: set[Path] = set()  # files with diagnostics on the client (push mode)
        self.sent: dict[Path, tuple[Any, ...]] = {}  # what was last pushed for each file


_STATES: weakref.WeakKeyDictionary[ServerBase, LayerState] = weakref.WeakKeyDictionary()


def state(server: ServerBase) -> LayerState:
    st = _STATES.get(server)
    if st is None:
        st = _STATES[server] = LayerState()
    return st


def is_layer_path(path: Path) -> bool:
    return layer_root_of(path) is not None


# -- the model ---------------------------------------------------------------------------


def _build(server: ServerBase, root: Path) -> LayerSet:
    """The layer set of ``root``: its files on disk, plus open buffers not saved yet."""
    paths = set(layer_files(root)) if root.is_dir() else set()
    for p in server.model.overlays:
        if (root in p.parents) and classify(root, p)[0] is not None:
            paths.add(p)
    texts: dict[Path, str] = {}
    for p in sorted(paths):
        src = server.model.read(p)
        texts[p] = src.text if src.analyzable else ""
    folders: list[Path] = []
    if root.is_dir():
        try:
            with os.scandir(root) as it:
                for e in it:
                    if not e.name.startswith(".") and e.is_dir(follow_symlinks=False):
                        folders.append(Path(e.path))
        except OSError:
            pass
    return build_layer_set(root, texts, folders)


def layer_set_for(server: ServerBase, path: Path) -> LayerSet | None:
    """The layer set holding ``path`` (built on first use), or None outside every
    ``memory-layers/`` folder."""
    root = layer_root_of(path)
    if root is None:
        return None
    st = state(server)
    ls = st.sets.get(root)
    if ls is None:
        ls = st.sets[root] = _build(server, root)
    return ls


def index(server: ServerBase, folders: list[Path]) -> None:
    """Find the layer folders under the workspace folders and report their findings."""
    st = state(server)
    for folder in folders:
        try:
            roots = find_layer_roots(folder)
        except OSError:
            continue
        for root in roots:
            st.sets[root] = _build(server, root)
            publish(server, root)


def forget(server: ServerBase, folder: Path, kept: list[Path]) -> None:
    """A workspace folder was removed: let go of its layer folders that no remaining
    folder holds, and clear their findings."""
    st = state(server)
    for root in sorted(st.sets):
        below = root == folder or folder in root.parents
        if below and not any(f == root or f in root.parents for f in kept):
            del st.sets[root]
            publish(server, root)  # nothing left: clears what the client shows


def _edited(server: ServerBase, ls: LayerSet | None, path: Path) -> LayerSet | None:
    """The layer set after an edit of an open document it already holds (no disk read:
    the other files are as they were), or None when the change needs a full rebuild."""
    src = server.model.overlays.get(path)
    if ls is None or src is None or path not in ls.texts:
        return None
    texts = dict(ls.texts)
    texts[path] = src.text if src.analyzable else ""
    return build_layer_set(ls.root, texts, [ls.root / lid for lid in ls.layers])


def changed(server: ServerBase, path: Path) -> bool:
    """A file or folder changed (edited, opened, closed, created, deleted, renamed):
    rebuild the layer sets it touches and report again. False when it touches none."""
    st = state(server)
    roots = {r for r in st.sets if r == path or r in path.parents or path in r.parents}
    root = layer_root_of(path)
    if root is not None:
        roots.add(root)
    if not roots:
        return False
    for r in roots:
        try:
            st.sets[r] = _edited(server, st.sets.get(r), path) or _build(server, r)
        except Exception as exc:  # one bad folder must not stop the others
            server.log_exception(f"memory layers of {r}", exc)
            continue
        publish(server, r)
    return True


# -- diagnostics -------------------------------------------------------------------------


def _filtered(server: ServerBase, ls: LayerSet) -> dict[Path, list[Any]]:
    found = ide_layers.layer_diagnostics(ls)
    configs = getattr(server, "configs", None)
    if configs is None:
        return found
    settings = configs.settings_for(ls.root)
    return {p: apply(settings, p, ds) for p, ds in found.items()}


def _related(server: ServerBase, ls: LayerSet) -> convert.RelatedTarget | None:
    if not server.client_supports("text_document.publish_diagnostics.related_information") and (
        not server.client_supports("text_document.diagnostic.related_information")
    ):
        return None

    def target(path: Path) -> tuple[str, LineIndex] | None:
        text = ls.texts.get(path)
        return (server.uri_of(path), LineIndex(text)) if text is not None else None

    return target


def publish(server: ServerBase, root: Path) -> None:
    """Push the findings of a layer folder (files that left it are cleared), or ask a
    pulling client to pull again."""
    if server.pull_diagnostics:
        if server.client_supports("workspace.diagnostics.refresh_support"):
            server.quietly(server.workspace_diagnostic_refresh(None))
        return
    st = state(server)
    ls = st.sets.get(root)
    found = _filtered(server, ls) if ls is not None else {}
    related = _related(server, ls) if ls is not None else None
    gone = {p for p in st.shown if p == root or root in p.parents} - set(found)
    for p in sorted(gone):
        st.shown.discard(p)
        st.sent.pop(p, None)
        server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=server.uri_of(p), diagnostics=[])
        )
    assert ls is not None or not found
    for p, ds in sorted(found.items()):
        if not ds and p not in st.shown:
            continue
        version = server.open_version(p)
        key = (version, tuple((d.range, d.code, d.severity, d.message) for d in ds))
        if st.sent.get(p) == key:
            continue  # the client shows exactly this
        st.sent[p] = key
        index = LineIndex(ls.texts.get(p, "")) if ls is not None else LineIndex("")
        server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=server.uri_of(p),
                diagnostics=[convert.to_diagnostic(d, index, related) for d in ds],
                version=version,
            )
        )
        if ds:
            st.shown.add(p)
        else:
            st.shown.discard(p)


def document_report(
    server: ServerBase, path: Path
) -> lsp.RelatedFullDocumentDiagnosticReport | None:
    """A pulled report for a layer file (None when ``path`` is none)."""
    ls = layer_set_for(server, path)
    if ls is None:
        return None
    ds = _filtered(server, ls).get(path, [])
    index = LineIndex(ls.texts.get(path, ""))
    return lsp.RelatedFullDocumentDiagnosticReport(
        items=[convert.to_diagnostic(d, index, _related(server, ls)) for d in ds]
    )


def workspace_items(server: ServerBase) -> list[lsp.WorkspaceFullDocumentDiagnosticReport]:
    """Every layer file's report, for a workspace pull (files with findings, and those
    that had some in the previous pull, to clear them)."""
    st = state(server)
    out: list[lsp.WorkspaceFullDocumentDiagnosticReport] = []
    now: set[Path] = set()
    for ls in list(st.sets.values()):
        related = _related(server, ls)
        for p, ds in sorted(_filtered(server, ls).items()):
            if not ds and p not in st.shown:
                continue
            index = LineIndex(ls.texts.get(p, ""))
            out.append(
                lsp.WorkspaceFullDocumentDiagnosticReport(
                    uri=server.uri_of(p),
                    version=server.open_version(p),
                    items=[convert.to_diagnostic(d, index, related) for d in ds],
                )
            )
            if ds:
                now.add(p)
    for p in sorted(st.shown - now):
        if not any(p in ls.texts for ls in st.sets.values()):
            out.append(
                lsp.WorkspaceFullDocumentDiagnosticReport(
                    uri=server.uri_of(p), version=None, items=[]
                )
            )
    st.shown = now
    return out


# -- features ----------------------------------------------------------------------------


def _doc(server: ServerBase, uri: str) -> tuple[LayerSet, Path, LineIndex] | None:
    path = convert.uri_to_path(uri)
    if path is None:
        return None
    ls = layer_set_for(server, path)
    if ls is None or path not in ls.texts:
        return None
    return ls, path, LineIndex(ls.texts[path])


def _index_of(ls: LayerSet) -> Callable[[Path], LineIndex]:
    def index_of(path: Path) -> LineIndex:
        return LineIndex(ls.texts.get(path, ""))

    return index_of


def hover(server: ServerBase, params: lsp.HoverParams) -> lsp.Hover | None:
    found = _doc(server, params.text_document.uri)
    if found is None:
        return None
    ls, path, index = found
    h = ide_layers.hover(ls, path, convert.to_offset(index, params.position))
    if h is None:
        return None
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=h.markdown),
        range=convert.to_range(index, h.range),
    )


def definition(server: ServerBase, params: Any) -> list[lsp.Location]:
    found = _doc(server, params.text_document.uri)
    if found is None:
        return []
    ls, path, index = found
    locs = ide_layers.definition(ls, path, convert.to_offset(index, params.position))
    return [convert.to_location(loc, _index_of(ls), server.uri_of) for loc in locs]


def code_lens(server: ServerBase, params: lsp.CodeLensParams, show: str) -> list[lsp.CodeLens]:
    """``show``: the command that shows a location (``editor.action.showReferences``)."""
    found = _doc(server, params.text_document.uri)
    if found is None:
        return []
    ls, path, index = found
    out = []
    for lens in ide_layers.code_lenses(ls, path):
        rng = convert.to_range(index, lens.range)
        command = lsp.Command(title=lens.title, command="")
        if lens.target is not None:
            where = convert.to_location(lens.target, _index_of(ls), server.uri_of)
            command = lsp.Command(
                title=lens.title, command=show, arguments=[server.uri_of(path), rng.start, [where]]
            )
        out.append(lsp.CodeLens(range=rng, command=command))
    return out


def completion(server: ServerBase, params: lsp.CompletionParams) -> lsp.CompletionList:
    found = _doc(server, params.text_document.uri)
    if found is None:
        return lsp.CompletionList(is_incomplete=False, items=[])
    ls, path, index = found
    items = []
    for n, c in enumerate(ide_layers.complete(ls, path, convert.to_offset(index, params.position))):
        kind = lsp.CompletionItemKind.Folder if c.kind == "layer" else lsp.CompletionItemKind.File
        items.append(
            lsp.CompletionItem(
                label=c.label,
                kind=kind,
                detail=c.detail or None,
                text_edit=lsp.TextEdit(
                    range=convert.to_range(index, c.edit.range), new_text=c.edit.new_text
                ),
                sort_text=f"{n:04d}",
            )
        )
    return lsp.CompletionList(is_incomplete=False, items=items)


def prepare_rename(
    server: ServerBase, params: lsp.PrepareRenameParams
) -> lsp.PrepareRenamePlaceholder | None:
    found = _doc(server, params.text_document.uri)
    if found is None:
        return None
    ls, path, index = found
    t = ide_layers.rename_target(ls, path, convert.to_offset(index, params.position))
    if isinstance(t, FeatureError):
        raise FeatureFailed(t.message)
    return lsp.PrepareRenamePlaceholder(range=convert.to_range(index, t.range), placeholder=t.text)


def rename(
    server: ServerBase,
    params: lsp.RenameParams,
    to_wire: Callable[[WorkspaceEdit, list[Path]], lsp.WorkspaceEdit],
) -> lsp.WorkspaceEdit | None:
    """``to_wire``: ``results.workspace_edit``'s conversion (it refuses edits outside ``roots`` and
    renames a client cannot do)."""
    found = _doc(server, params.text_document.uri)
    if found is None:
        return None
    ls, path, index = found
    edit = ide_layers.rename(ls, path, convert.to_offset(index, params.position), params.new_name)
    if isinstance(edit, FeatureError):
        raise FeatureFailed(edit.message)
    return to_wire(edit, [ls.root])


def will_rename(server: ServerBase, params: lsp.RenameFilesParams) -> dict[Path, Any]:
    """``workspace/willRenameFiles``: the cascades.yml edits that follow layer folders and
    entry files renamed in the file explorer (the client moves the files)."""
    by_root: dict[Path, list[tuple[Path, Path]]] = {}
    for f in params.files:
        old, new = convert.uri_to_path(f.old_uri), convert.uri_to_path(f.new_uri)
        if old is None or new is None:
            continue
        root = layer_root_of(old)
        if root is not None and root != old and layer_root_of(new) == root:
            by_root.setdefault(root, []).append((old, new))
    out: dict[Path, Any] = {}
    for root, renames in by_root.items():
        ls = layer_set_for(server, root / "cascades.yml")
        if ls is not None:
            out.update(ide_layers.rename_files(ls, renames).edits)
    return out


def roots_of(edits: dict[Path, Any]) -> list[Path]:
    return sorted({r for p in edits if (r := layer_root_of(p)) is not None})


# -- mantle/layersManifest -----------------------------------------------------------------


def manifest(server: ServerBase, params: Any) -> dict[str, Any]:
    """``{textDocument?: {uri}, cascade?}`` (docs/lsp.md): the cascades, or one's manifest."""
    m = LAYERS_MANIFEST
    object_params(m, params, "{textDocument?: {uri}, cascade?}", optional=True)
    uri = string(m, params, "textDocument", "uri")
    cascade = string(m, params, "cascade")  # a cascade name
    sets: list[LayerSet] = []
    if isinstance(uri, str):
        path = convert.uri_to_path(uri)
        ls = layer_set_for(server, path) if path is not None else None
        if ls is not None:
            sets = [ls]
    if not sets:
        st = state(server)
        sets = [st.sets[r] for r in sorted(st.sets)]
    if cascade is None:
        return {
            "cascades": [
                {"name": c.name, "variation": c.variation, "root": server.uri_of(ls.root)}
                for ls in sets
                for c in ls.cascades.values()
            ]
        }
    having = [ls for ls in sets if cascade in ls.cascades]
    if len(having) != 1:
        names = sorted({c for ls in sets for c in ls.cascades})
        why = "several memory-layers folders define" if having else "no cascade"
        raise FeatureFailed(
            f"{why} `{cascade}` (cascades: {', '.join(names) or 'none in cascades.yml'})"
        )
    ls = having[0]
    data = ide_layers.manifest_json(ls, ls.cascades[cascade])
    data["root"] = server.uri_of(ls.root)
    data["text"] = ide_layers.manifest_text(ls, ls.cascades[cascade])
    return data


def _param(params: Any, *keys: str) -> Any:
    cur = params
    for k in keys:
        if cur is None:
            return None
        cur = cur.get(k) if isinstance(cur, dict) else getattr(cur, k, None)
    return cur


def register(server: ServerBase) -> None:
    @server.request(LAYERS_MANIFEST)
    def layers_manifest(params: Any) -> dict[str, Any]:
        return manifest(server, params)
