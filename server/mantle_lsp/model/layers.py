"""Cadenya memory layers kept as files: the index of one ``memory-layers/`` folder and the
questions asked of it (see docs/memory-layers.md).

Layout::

    memory-layers/
      cascades.yml                 the cascades to check (optional)
      <layer-external-id>/
        layer.yml                  optional: name, description, episodic
        <key>                      one file per entry; its key is its POSIX path here

A cascade lists layers most specific first (position 0 wins, as in CSS): a key resolves to
the entry of the earliest item that has it; later ones are shadowed. An item may pin one
entry of a layer (``{layer: faq, entry: refunds.md}``); it then brings that entry only.

Nothing here imports ``ide`` or the Mantle model: this is its own vertical.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..syntax.layers import (
    ParsedCascades,
    ParsedEntry,
    ParsedLayerMeta,
    parse_cascades,
    parse_entry,
    parse_layer_yml,
)
from ..syntax.text import TextRange
from .layer_paths import CASCADES_FILE as CASCADES_FILE
from .layer_paths import LAYER_META as LAYER_META
from .layer_paths import LAYERS_DIR as LAYERS_DIR
from .layer_paths import MAX_KEY_PARTS, inside
from .layer_paths import classify as classify
from .layer_paths import find_layer_roots as find_layer_roots
from .layer_paths import layer_root_of as layer_root_of
from .layout import DISK, Entry, Layout

MAX_LAYERS = 10  # Cadenya's cap on the layers of one effective cascade
_NOWHERE = TextRange(0, 0)


@dataclass
class LayerEntry:
    layer: str
    key: str
    path: Path
    description: str | None
    content: str
    parsed: ParsedEntry | None = field(default=None, repr=False, compare=False)


@dataclass
class Layer:
    id: str
    path: Path
    name: str | None
    entries: dict[str, LayerEntry]  # key -> entry, keys sorted
    description: str | None = None
    episodic: bool = False  # `episodic: true` in layer.yml: system-managed, never referenced
    meta_path: Path | None = None  # layer.yml, when there is one
    meta: ParsedLayerMeta | None = field(default=None, repr=False, compare=False)


@dataclass
class CascadeItem:
    layer: str
    entry: str | None  # a pinned single entry's key
    range: TextRange  # in cascades.yml
    layer_range: TextRange | None = None
    entry_range: TextRange | None = None


@dataclass
class Cascade:
    name: str
    variation: str | None
    items: list[CascadeItem]
    name_range: TextRange = _NOWHERE
    variation_range: TextRange | None = None


@dataclass
class LayerSet:
    root: Path
    layers: dict[str, Layer]
    cascades: dict[str, Cascade]
    cascades_path: Path | None = None
    cascades_parsed: ParsedCascades | None = field(default=None, repr=False, compare=False)
    texts: dict[Path, str] = field(default_factory=dict, repr=False, compare=False)

    def entry_at(self, path: Path) -> LayerEntry | None:
        kind, layer, key = classify(self.root, path)
        if kind != "entry" or layer is None or key is None:
            return None
        lay = self.layers.get(layer)
        return lay.entries.get(key) if lay is not None else None

    def layer_for(self, path: Path) -> Layer | None:
        _, layer, _ = classify(self.root, path)
        return self.layers.get(layer) if layer is not None else None


# -- where files belong ------------------------------------------------------------------


@dataclass
class Blind:
    """A place the folder walk did not read: ``rel`` (POSIX, relative to the layer
    folder's root) is a ``"file"`` or a ``"folder"``; ``why`` says why, in words."""

    rel: str
    kind: str
    why: str


@dataclass
class LayerScan:
    files: list[Path]  # cascades.yml, layer.yml files, entry files
    folders: list[Path]  # the layer folders (those with no file yet too)
    blind: list[Blind]


def scan_layer_folder(root: Path, fs: Layout = DISK) -> LayerScan:
    """The files of the layer set in the ``memory-layers/`` folder ``root``, read as the
    folder format says and nothing else: every file of a layer folder, at most
    :data:`MAX_KEY_PARTS` deep, is an entry; names starting with a dot are not part of the
    set. Git's ignore rules and the dependency-folder names that the search for layer
    folders skips do not apply inside one (a layer named ``build`` is a layer).

    Symbolic links: a link to a file inside ``root`` is read; a link to a folder is not
    followed, and a link that leads out of ``root`` is not read. Those, a folder that
    cannot be listed and folders deeper than the limit are ``blind``: what they hold is
    unknown, so ``layers push`` and ``pull`` leave it alone (sync/holdable.py)."""
    out = LayerScan([], [], [])
    try:
        real_root = fs.realpath(root)
    except (OSError, ValueError):
        return out

    def rel(path: str) -> str:
        return Path(path).relative_to(root).as_posix()

    def shown(path: str) -> str:
        return f"{root.name}/{rel(path)}"

    def take_file(e: Entry) -> None:
        if not e.is_link:
            if e.is_own_file:
                out.files.append(Path(e.path))
            return
        try:
            real = fs.realpath(Path(e.path))
        except (OSError, ValueError):
            return
        if fs.is_dir(real):
            out.blind.append(
                Blind(rel(e.path), "folder", f"{shown(e.path)} is a symbolic link (not followed)")
            )
        elif not inside(real, real_root):
            out.blind.append(
                Blind(rel(e.path), "file", "a symbolic link that leads out of the folder")
            )
        elif fs.is_file(real):
            out.files.append(Path(e.path))
        else:
            out.blind.append(Blind(rel(e.path), "file", "a symbolic link to nothing"))

    def walk(d: str, depth: int) -> None:
        try:
            entries = sorted(fs.listing(d), key=lambda e: e.name)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            out.blind.append(Blind(rel(d), "folder", f"{shown(d)} cannot be read: {why}"))
            return
        for e in entries:
            if e.name.startswith("."):
                continue
            if not (e.is_own_dir and not e.is_link):
                take_file(e)
            elif depth < MAX_KEY_PARTS:
                walk(e.path, depth + 1)
            else:
                out.blind.append(
                    Blind(
                        rel(e.path),
                        "folder",
                        f"{shown(e.path)} is deeper than the {MAX_KEY_PARTS} levels a "
                        "layer folder is read",
                    )
                )

    try:
        tops = sorted(fs.listing(str(root)), key=lambda e: e.name)
    except OSError:
        return out
    for e in tops:
        if e.name.startswith("."):
            continue
        if e.is_link:
            if e.name == CASCADES_FILE:
                take_file(e)
            elif fs.is_dir(e.path):
                out.blind.append(
                    Blind(e.name, "folder", f"{shown(e.path)} is a symbolic link (not followed)")
                )
        elif e.is_own_dir:
            out.folders.append(Path(e.path))
            walk(e.path, 1)
        elif e.name == CASCADES_FILE:
            take_file(e)
    return out


def layer_files(root: Path, fs: Layout = DISK) -> list[Path]:
    """Every file of the layer set on disk (cascades.yml, layer.yml files, entry files):
    :func:`scan_layer_folder`'s."""
    return scan_layer_folder(root, fs).files


# -- building ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _parse_entry(text: str) -> ParsedEntry:
    """An entry file parsed once per text (the editor rebuilds a layer set on every
    keystroke; its other entries have not changed). Treat the result as read-only."""
    return parse_entry(text)


def load_layer_set(root: Path) -> LayerSet:
    """The layer set of the folder ``root`` (a ``memory-layers/`` folder), read from disk
    (texts normalized as the editor sees them)."""
    from .source import read_source

    scan = scan_layer_folder(root)
    texts: dict[Path, str] = {}
    for p in scan.files:
        src = read_source(p)
        texts[p] = src.text if src.analyzable else ""
    return build_layer_set(root, texts, scan.folders)


def build_layer_set(
    root: Path, files: Mapping[Path, str], folders: Iterable[Path] = ()
) -> LayerSet:
    """The layer set made of ``files`` (path -> normalized text, all below ``root``);
    ``folders`` adds layers with no file yet (an empty layer folder)."""
    layers: dict[str, Layer] = {}
    cascades_text: str | None = None
    cascades_path: Path | None = None
    metas: dict[str, tuple[Path, str]] = {}
    entries: dict[str, dict[str, LayerEntry]] = {}
    for d in folders:
        kind, layer, _ = classify(root, d / "x")
        if kind is not None and layer is not None and (d.parent == root):
            entries.setdefault(layer, {})
    for path in sorted(files):
        kind, layer, key = classify(root, path)
        text = files[path]
        if kind == "cascades":
            cascades_text, cascades_path = text, path
        elif kind == "layer_meta" and layer is not None:
            metas[layer] = (path, text)
            entries.setdefault(layer, {})
        elif kind == "entry" and layer is not None and key is not None:
            parsed = _parse_entry(text)
            entries.setdefault(layer, {})[key] = LayerEntry(
                layer, key, path, parsed.description, parsed.content, parsed
            )
    for lid in sorted(entries):
        lay = Layer(lid, root / lid, None, dict(sorted(entries[lid].items())))
        if lid in metas:
            mpath, mtext = metas[lid]
            meta = parse_layer_yml(mtext)
            lay.meta, lay.meta_path = meta, mpath
            lay.name, lay.description, lay.episodic = meta.name, meta.description, meta.episodic
        layers[lid] = lay
    cascades: dict[str, Cascade] = {}
    parsed_c: ParsedCascades | None = None
    if cascades_text is not None:
        parsed_c = parse_cascades(cascades_text)
        for pc in parsed_c.cascades:
            cascades[pc.name] = Cascade(
                pc.name,
                pc.variation,
                [
                    CascadeItem(i.layer, i.entry, i.range, i.layer_range, i.entry_range)
                    for i in pc.items
                    if i.layer is not None
                ],
                pc.name_range,
                pc.variation_range,
            )
    return LayerSet(root, layers, cascades, cascades_path, parsed_c, dict(files))


# -- the semantic questions --------------------------------------------------------------


@dataclass(frozen=True)
class Contribution:
    """One entry as one cascade item brings it (``position`` is the item's index)."""

    entry: LayerEntry
    position: int
    item: CascadeItem


@dataclass
class KeyResolution:
    """Key ``key`` in one cascade: the contribution that wins and those it shadows (in
    position order)."""

    key: str
    winner: Contribution
    shadowed: list[Contribution] = field(default_factory=list)


def contributions(ls: LayerSet, cascade: Cascade) -> list[Contribution]:
    """Every entry the cascade's items bring, in position order (keys sorted within a
    layer). Unknown layers, missing pinned entries and episodic layers bring nothing."""
    out: list[Contribution] = []
    for pos, item in enumerate(cascade.items):
        lay = ls.layers.get(item.layer)
        if lay is None or lay.episodic:
            continue
        if item.entry is not None:
            e = lay.entries.get(item.entry)
            if e is not None:
                out.append(Contribution(e, pos, item))
            continue
        out.extend(Contribution(e, pos, item) for e in lay.entries.values())
    return out


def resolve(ls: LayerSet, cascade: Cascade) -> list[KeyResolution]:
    """The effective entries of ``cascade`` in resolution order: the most specific layer
    first, then the next one's keys that no earlier layer has, and so on."""
    by_key: dict[str, KeyResolution] = {}
    order: list[KeyResolution] = []
    for c in contributions(ls, cascade):
        got = by_key.get(c.entry.key)
        if got is None:
            res = KeyResolution(c.entry.key, c)
            by_key[c.entry.key] = res
            order.append(res)
        else:
            got.shadowed.append(c)
    return order


def resolve_key(ls: LayerSet, cascade: Cascade, key: str) -> KeyResolution | None:
    for res in resolve(ls, cascade):
        if res.key == key:
            return res
    return None


def counted_layers(cascade: Cascade, ls: LayerSet | None = None) -> list[str]:
    """The distinct layers a cascade uses, in order, as Cadenya's cap counts them: a pinned
    entry counts as its layer, a layer listed twice once, an episodic layer not at all."""
    seen: list[str] = []
    for item in cascade.items:
        if ls is not None:
            lay = ls.layers.get(item.layer)
            if lay is not None and lay.episodic:
                continue
        if item.layer not in seen:
            seen.append(item.layer)
    return seen


@dataclass(frozen=True)
class EntryStanding:
    """Where one entry stands in one cascade that uses it."""

    cascade: Cascade
    resolution: KeyResolution
    contribution: Contribution  # this entry's own contribution

    @property
    def wins(self) -> bool:
        return self.resolution.winner.entry is self.contribution.entry

    @property
    def shadowed_by(self) -> LayerEntry | None:
        return None if self.wins else self.resolution.winner.entry

    @property
    def shadows(self) -> list[LayerEntry]:
        if not self.wins:
            return []
        return [c.entry for c in self.resolution.shadowed if c.entry is not self.contribution.entry]


def standings(ls: LayerSet, entry: LayerEntry) -> list[EntryStanding]:
    """For each cascade (in file order) that brings ``entry``: does it win its key, what it
    shadows, what shadows it."""
    out: list[EntryStanding] = []
    for cascade in ls.cascades.values():
        res = resolve_key(ls, cascade, entry.key)
        if res is None:
            continue
        mine = next(
            (c for c in [res.winner, *res.shadowed] if c.entry is entry),
            None,
        )
        if mine is not None:
            out.append(EntryStanding(cascade, res, mine))
    return out


def references_to_layer(ls: LayerSet, layer: str) -> list[tuple[Cascade, CascadeItem]]:
    return [(c, i) for c in ls.cascades.values() for i in c.items if i.layer == layer]


def references_to_entry(ls: LayerSet, layer: str, key: str) -> list[tuple[Cascade, CascadeItem]]:
    return [
        (c, i) for c in ls.cascades.values() for i in c.items if i.layer == layer and i.entry == key
    ]
