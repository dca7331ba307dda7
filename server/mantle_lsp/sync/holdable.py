"""What the folder and the service cannot hold of each other, decided once for both
directions (pure: the folder as read, the service as fetched).

The rule a sync keeps: **what a pull does not write, a push does not touch, and what the
folder cannot send faithfully, a pull does not write over.** So a layer or an entry lands
in :class:`Skips` when

- the folder cannot hold it as a file the folder walk reads back the same: an external id
  or key that is not a plain relative path, too deep or too long, content with a NUL or a
  lone surrogate, a file over the size limit, a description that does not read back;
- it would share a file with another: keys that differ only in case or Unicode
  normalisation (one file on macOS and Windows), a key that is a file where another needs
  a folder (``a`` and ``a/b``), two entries (or layers) the service holds under one key;
- the folder's side of it cannot be read: a file that is not UTF-8, has a NUL or is over
  the limit, an entry whose frontmatter is broken, a symbolic link out of the folder, a
  linked folder (never followed), a folder deeper than the walk reads.

A skipped entry is neither written by a pull nor created, updated or deleted by a push;
the commands list each with its reason and exit with status 1.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from ..model.layer_paths import LAYER_META, is_unicode, key_problem, layer_id_problem
from ..model.source import MAX_FILE_BYTES
from ..syntax.layers import parse_entry, parse_layer_yml, render_entry, yaml_scalar
from .state import Desired, LayerState, Remote


@dataclass
class Skips:
    layers: dict[str, str] = field(default_factory=dict)  # external id -> why
    entries: dict[tuple[str, str], str] = field(default_factory=dict)  # (layer, key) -> why
    metas: dict[str, str] = field(default_factory=dict)  # layer.yml (name, description)
    places: list[str] = field(default_factory=list)  # unread folders nothing above names

    def entry(self, layer: str, key: str) -> str | None:
        """Why the entry is left alone (its layer's reason first), or None."""
        return self.layers.get(layer) or self.entries.get((layer, key))

    def lines(self) -> list[str]:
        """One line per thing left alone, for people: ``layer x: why``, ``entry x/k: why``."""
        out = [f"layer {lid}: {why}" for lid, why in sorted(self.layers.items())]
        out += [
            f"layer {lid}: its name and description are left alone: {why}"
            for lid, why in sorted(self.metas.items())
            if lid not in self.layers
        ]
        out += [
            f"entry {lid}/{key}: {why}"
            for (lid, key), why in sorted(self.entries.items())
            if lid not in self.layers
        ]
        return out + self.places


def entry_problem(description: str, content: str) -> str | None:
    """Why the entry file :func:`render_entry` writes would not read back as exactly this
    description and content, or None."""
    if not is_unicode(description):
        return "its description is not valid Unicode (a lone surrogate), which a file cannot hold"
    if not is_unicode(content):
        return "its content is not valid Unicode (a lone surrogate), which a file cannot hold"
    if "\0" in content:
        return "its content has a NUL character, which an entry file cannot hold"
    text = render_entry(description, content)
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        return f"its file would be {size:,} bytes (the limit is {MAX_FILE_BYTES:,})"
    back = parse_entry(text)
    if (
        any(i.severity == "error" for i in back.issues)
        or (back.description or "") != description
        or back.content != content
    ):
        return "its description cannot be written so that it reads back the same"
    return None


def layer_yml_text(layer: LayerState, full: bool) -> str | None:
    """``layer.yml`` for a layer of the service, or None when the folder name says it all
    (``full``: the folder has one already, so both lines are written)."""
    lines = []
    name = layer.name or layer.external_id
    if full or name != layer.external_id:
        lines.append(f"name: {yaml_scalar(name)}\n")
    if full or layer.description:
        lines.append(f"description: {yaml_scalar(layer.description or '')}\n")
    return "".join(lines) or None


def meta_problem(layer: LayerState, text: str) -> str | None:
    if not is_unicode(text):
        return "not valid Unicode (a lone surrogate), which a file cannot hold"
    meta = parse_layer_yml(text)
    name = layer.name or layer.external_id
    if (
        any(i.severity == "error" for i in meta.issues)
        or (meta.name or layer.external_id) != name
        or (meta.description or "") != (layer.description or "")
    ):
        return "they cannot be written in layer.yml so that they read back the same"
    return None


def fold(path: str) -> str:
    """``path`` as a case-insensitive, normalisation-insensitive file system compares it
    (macOS, Windows): canonical caseless matching."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", path).casefold())


def _under(rel: str, folder: str) -> bool:
    return rel == folder or rel.startswith(folder + "/")


def compute(remote: Remote, local: Desired) -> Skips:
    """What a pull skips and a push leaves alone (see the module)."""
    out = Skips()
    unread: list[tuple[str, str]] = []  # folders of a layer the walk did not read
    for b in local.blind:
        lid, _, rest = b.rel.partition("/")
        if not rest:
            out.layers.setdefault(lid, b.why)
        elif b.kind == "folder":
            unread.append((b.rel, b.why))
        else:
            out.entries.setdefault((lid, rest), b.why)
    for rel, reason in sorted(local.skipped.items()):
        lid, _, key = rel.partition("/")
        if key:
            out.entries.setdefault((lid, key), reason)
        else:
            out.layers.setdefault(lid, reason)
    used: set[str] = set()
    for ext in sorted(remote.layers):
        layer = remote.layers[ext]
        why = layer_id_problem(ext)
        if why is None and ext in remote.duplicate_layers:
            why = f"the service has {remote.duplicate_layers[ext]} layers with this external id"
        if why is None and ext in local.episodic:
            why = f"the folder's {LAYER_META} marks it episodic, the service's layer is not"
        if why is not None:
            out.layers.setdefault(ext, why)
            continue
        text = layer_yml_text(layer, f"{ext}/{LAYER_META}" in local.paths)
        meta_why = meta_problem(layer, text) if text is not None else None
        if meta_why is not None:
            out.metas[ext] = meta_why
        for key in sorted(layer.entries):
            e = layer.entries[key]
            why = key_problem(key)
            if why is None and (ext, key) in remote.duplicate_entries:
                why = f"the service has {remote.duplicate_entries[ext, key]} entries with this key"
            if why is None:
                place = next((p for p in unread if _under(f"{ext}/{key}", p[0])), None)
                if place is not None:
                    why = place[1]
                    used.add(place[0])
            if why is None:
                why = entry_problem(e.description, e.content)
            if why is not None:
                out.entries.setdefault((ext, key), why)
    _collisions(out, remote, local)
    out.places = [why for rel, why in unread if rel not in used]
    return out


def _collisions(out: Skips, remote: Remote, local: Desired) -> None:
    """Paths that would be one file (or a file and a folder) on some file system."""
    files: set[str] = set(local.paths)
    metas: set[str] = set()
    layer_folders: set[str] = set(local.layers) | set(local.episodic)
    layer_folders |= {p.partition("/")[0] for p in local.paths if "/" in p}
    for ext, layer in remote.layers.items():
        if ext in out.layers:
            continue
        layer_folders.add(ext)
        files.update(f"{ext}/{key}" for key in layer.entries if key_problem(key) is None)
        if layer_yml_text(layer, f"{ext}/{LAYER_META}" in local.paths) is not None:
            metas.add(f"{ext}/{LAYER_META}")
    files |= metas
    # layer folders first: two that are one folder elsewhere are both skipped whole
    by_fold: dict[str, set[str]] = {}
    for name in layer_folders:
        by_fold.setdefault(fold(name), set()).add(name)
    for rel in files:
        if "/" not in rel:  # cascades.yml, sync.yml
            by_fold.setdefault(fold(rel), set()).add(rel)
    for names in by_fold.values():
        if len(names) > 1:
            for name in names - {r for r in files if "/" not in r}:
                other = min(names - {name})
                out.layers.setdefault(
                    name,
                    f"its external id and {other} differ only in case or Unicode "
                    "normalisation (one folder on macOS and Windows)",
                )
    file_folds: dict[str, set[str]] = {}
    folder_folds: dict[str, set[str]] = {}
    below: dict[str, str] = {}  # folded folder -> a file below it (for the message)
    for rel in sorted(files):
        file_folds.setdefault(fold(rel), set()).add(rel)
        parts = rel.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            folder_folds.setdefault(fold(folder), set()).add(folder)
            below.setdefault(fold(folder), rel)
    for rel in sorted(files):
        lid, _, key = rel.partition("/")
        if not key or lid in out.layers:
            continue
        why = _collision(rel, file_folds, folder_folds, below)
        if why is None:
            continue
        if rel in metas:
            out.metas.setdefault(lid, why)
        else:
            out.entries.setdefault((lid, key), why)


def _collision(
    rel: str,
    file_folds: dict[str, set[str]],
    folder_folds: dict[str, set[str]],
    below: dict[str, str],
) -> str | None:
    f = fold(rel)
    others = file_folds.get(f, set()) - {rel}
    if others:
        return (
            f"its key and {min(others)} differ only in case or Unicode normalisation "
            "(one file on macOS and Windows)"
        )
    if f in folder_folds:
        return f"a file and a folder of the layer ({below[f]}) cannot share a name"
    parts = rel.split("/")
    for n in range(2, len(parts)):
        folder = "/".join(parts[:n])
        ff = fold(folder)
        if ff in file_folds:
            return f"a file and a folder of the layer ({min(file_folds[ff])}) cannot share a name"
        twins = folder_folds.get(ff, set()) - {folder}
        if twins:
            return (
                f"its folder {folder} and {min(twins)} differ only in case or Unicode "
                "normalisation (one folder on macOS and Windows)"
            )
    return None
