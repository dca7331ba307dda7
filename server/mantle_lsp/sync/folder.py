"""Write a ``memory-layers/`` folder from what the service holds (``layers pull``).

Each entry becomes ``<layer external id>/<key>`` in the canonical form of
:func:`~mantle_lsp.syntax.layers.render_entry`; a layer whose name is not its external id,
or that has a description, gets a ``layer.yml``. A file that already says the same thing
(same description and content, however it is written) is left alone, so a pull into a
folder in sync changes nothing, and a pull into an empty folder gives exactly the files a
push of them would send. ``cascades.yml`` is the folder's own: a pull never writes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..model.layers import CASCADES_FILE, LAYER_META, LayerSet
from ..syntax.layers import parse_entry, parse_layer_yml, render_entry, yaml_scalar
from .state import LayerState, Remote


@dataclass
class PullResult:
    written: list[str] = field(default_factory=list)  # paths relative to the root, POSIX
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # what the folder cannot hold, and why
    kept: list[str] = field(default_factory=list)  # local files only --prune deletes


def render_layer_yml(layer: LayerState) -> str | None:
    """``layer.yml`` for a layer, or None when the folder name says it all."""
    lines = []
    if layer.name and layer.name != layer.external_id:
        lines.append(f"name: {yaml_scalar(layer.name)}\n")
    if layer.description:
        lines.append(f"description: {yaml_scalar(layer.description)}\n")
    return "".join(lines) or None


def _safe_segment(part: str) -> bool:
    return (
        bool(part)
        and part not in (".", "..")
        and not part.startswith(".")
        and "\\" not in part
        and "\0" not in part
        and part.strip() == part
    )


def unsafe_layer_id(ext: str) -> str | None:
    """Why the external id cannot be a folder name here, or None."""
    if "/" in ext or not _safe_segment(ext) or ext == CASCADES_FILE:
        return f"layer {ext!r}: its external id cannot be a folder name"
    return None


def unsafe_key(key: str) -> str | None:
    """Why an entry key cannot be a file path inside its layer folder, or None."""
    parts = key.split("/")
    if not all(_safe_segment(p) for p in parts):
        return f"entry {key!r}: its key cannot be a file path inside the layer folder"
    if parts == [LAYER_META]:
        return f"entry {key!r}: its key is the layer folder's own layer.yml"
    return None


def pull_files(remote: Remote) -> tuple[dict[str, str], list[str]]:
    """The files of the folder (relative POSIX path -> text), and what was skipped."""
    files: dict[str, str] = {}
    skipped: list[str] = []
    for ext in sorted(remote.layers):
        layer = remote.layers[ext]
        why = unsafe_layer_id(ext)
        if why:
            skipped.append(why)
            continue
        meta = render_layer_yml(layer)
        if meta is not None:
            files[f"{ext}/{LAYER_META}"] = meta
        for key in sorted(layer.entries):
            why = unsafe_key(key)
            if why:
                skipped.append(f"layer {ext}: {why}")
                continue
            entry = layer.entries[key]
            files[f"{ext}/{key}"] = render_entry(entry.description, entry.content)
    return files, skipped


def _same(existing: LayerSet | None, rel: str, text: str, on_disk: str | None) -> bool:
    """Does the file at ``rel`` already say what ``text`` says?"""
    if on_disk is None:
        return False
    if on_disk == text:
        return True
    if existing is None:
        return False
    layer_id, _, key = rel.partition("/")
    layer = existing.layers.get(layer_id)
    if layer is None:
        return False
    if key == LAYER_META:
        if layer.meta is None or layer.meta.issues or layer.episodic:
            return False
        meta = parse_layer_yml(text)
        return (layer.name, layer.description) == (meta.name, meta.description)
    entry = layer.entries.get(key)
    if entry is None or entry.parsed is None or entry.parsed.issues:
        return False
    want = parse_entry(text)
    return (entry.description, entry.content) == (want.description, want.content)


def write_folder(
    root: Path, remote: Remote, existing: LayerSet | None, *, prune: bool = False
) -> PullResult:
    """Write ``root`` from ``remote``; with ``prune``, delete the entry files of pulled
    layers that the service does not have."""
    files, skipped = pull_files(remote)
    out = PullResult(skipped=skipped)
    for rel, text in files.items():
        path = root.joinpath(*rel.split("/"))
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                on_disk: str | None = fh.read()
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if _same(existing, rel, text, on_disk):
            out.unchanged += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        out.written.append(rel)
    if existing is not None:
        for lid, layer in sorted(existing.layers.items()):
            if lid not in remote.layers:
                continue
            stale = [f"{lid}/{key}" for key in layer.entries if f"{lid}/{key}" not in files]
            if layer.meta_path is not None and f"{lid}/{LAYER_META}" not in files:
                stale.append(f"{lid}/{LAYER_META}")
            for rel in sorted(stale):
                if prune:
                    os.remove(root.joinpath(*rel.split("/")))
                    out.deleted.append(rel)
                else:
                    out.kept.append(rel)
    return out
