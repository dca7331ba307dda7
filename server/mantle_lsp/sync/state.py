"""Both sides of a sync as plain data: what the folder asks for (:func:`desired`) and what
the service holds (:class:`Remote`, filled by :mod:`.service`).

A layer is known by its external id, which is its folder's name; an entry by its key,
which is its path inside the layer folder. The service also gives every layer and entry
a canonical id (``memlyr_…``); only :mod:`.service` needs those, to address them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.layers import CASCADES_FILE, LAYER_META, Blind, LayerSet

# the labels a push puts on the layers it creates: `push --prune` deletes a whole layer
# only when it carries this repository's id (memory-layers/sync.yml); a layer made by hand,
# by another tool or from another repository is never deleted, and one made by an earlier
# mantle-lsp (the first label alone) only when the user names it (--prune-layer)
MANAGED_LABEL = ("managed-by", "mantle-lsp")
REPOSITORY_LABEL = "mantle-lsp-repository"


@dataclass(frozen=True)
class EntryState:
    key: str
    description: str
    content: str
    id: str = ""  # the service's id (empty on the folder's side)


@dataclass
class LayerState:
    external_id: str
    # the folder's side: None when layer.yml does not say (a push then leaves the
    # service's value alone, and creates the layer named after its external id)
    name: str | None
    description: str | None
    entries: dict[str, EntryState] = field(default_factory=dict)
    id: str = ""  # the service's id
    type: str = ""  # the service's MemoryLayerSpec.type
    managed: bool = False  # carries MANAGED_LABEL (made by a push)
    repository: str = ""  # the REPOSITORY_LABEL it carries (the repository whose push made it)
    entry_count: int = 0  # the service's count (its entries may not have been read)


@dataclass(frozen=True)
class Assignment:
    """A whole layer in a variation's cascade. ``layer`` is the external id when the
    service gave the layer one, else ``id:<canonical id>``."""

    layer: str
    position: int
    id: str = ""


@dataclass
class VariationState:
    ref: str  # as cascades.yml writes it: `agent/variation`
    agent_id: str = ""
    variation_id: str = ""
    assignments: list[Assignment] = field(default_factory=list)
    missing: str | None = None  # why the variation could not be found


@dataclass
class Remote:
    """What the service holds. ``layers`` has the layers that have an external id and are
    not system-managed, with their entries when they were read (``entries_read``)."""

    layers: dict[str, LayerState] = field(default_factory=dict)
    variations: dict[str, VariationState] = field(default_factory=dict)
    entries_read: set[str] = field(default_factory=set)
    # external ids of system-managed (episodic) layers: never written, never assigned
    system_layers: set[str] = field(default_factory=set)
    # what the service holds more than once (a pull cannot tell which to write, a push
    # which to change): external id -> how many layers; (external id, key) -> entries
    duplicate_layers: dict[str, int] = field(default_factory=dict)
    duplicate_entries: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass
class Desired:
    """What the folder asks for: its layers (episodic ones left out: the service makes
    those) and, per variation, the layers of its cascade in position order."""

    layers: dict[str, LayerState] = field(default_factory=dict)
    variations: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # what the folder holds but cannot send faithfully: `layer` or `layer/key` -> why
    # (a push leaves the service's side of it alone, a pull does not write over it)
    skipped: dict[str, str] = field(default_factory=dict)
    blind: list[Blind] = field(default_factory=list)  # where the folder walk did not look
    paths: set[str] = field(default_factory=set)  # every file of the folder, relative
    episodic: set[str] = field(default_factory=set)
    root_name: str = "memory-layers"
    repository: str | None = None  # this folder's id (sync.yml), None when there is none


def desired(local: LayerSet) -> Desired:
    """The folder's layers and variation cascades, ready to compare with the service."""
    out = Desired(root_name=local.root.name)
    episodic = out.episodic
    for lid, layer in sorted(local.layers.items()):
        meta_error = next(
            (i.message for i in (layer.meta.issues if layer.meta else ()) if i.severity == "error"),
            None,
        )
        if meta_error is not None:
            out.skipped[lid] = f"its {LAYER_META} has an error: {meta_error}"
            continue
        if layer.episodic:
            episodic.add(lid)
            out.notes.append(f"layer {lid} is episodic (the service manages it): not pushed")
            continue
        state = LayerState(lid, layer.name or None, layer.description)
        for key, entry in sorted(layer.entries.items()):
            broken = [
                i.message
                for i in (entry.parsed.issues if entry.parsed else ())
                if i.severity == "error"
            ]
            if broken:
                out.skipped[f"{lid}/{key}"] = broken[0]
                continue
            state.entries[key] = EntryState(key, entry.description or "", entry.content)
        out.layers[lid] = state
    if local.cascades_parsed is not None:
        error = next((i for i in local.cascades_parsed.issues if i.severity == "error"), None)
        if error is not None:
            out.problems.append(
                f"{CASCADES_FILE}: {error.message} (`mantle-lsp check` shows where); the "
                "variations it names are not known until it is fixed"
            )
    by_variation: dict[str, tuple[str, list[str]]] = {}
    for cname, cascade in local.cascades.items():
        if not cascade.variation:
            continue
        ref = cascade.variation.strip()
        layers: list[str] = []
        for item in cascade.items:
            if item.entry is not None:
                out.notes.append(
                    f"cascade {cname}: the pinned entry {item.layer}/{item.entry} is not "
                    f"assigned to {ref} (a variation takes whole layers; pin entries in an "
                    "objective's memory cascade)"
                )
                continue
            if item.layer in episodic:
                continue
            if item.layer not in layers:
                layers.append(item.layer)
        if ref in by_variation and by_variation[ref][1] != layers:
            out.problems.append(
                f"cascades {by_variation[ref][0]} and {cname} both assign layers to {ref}, "
                "in different orders: keep one"
            )
            continue
        by_variation.setdefault(ref, (cname, layers))
        if ref.count("/") != 1 or not all(p.strip() for p in ref.split("/")):
            out.problems.append(
                f"cascade {cname}: variation `{ref}` should be `agent/variation` "
                "(their external ids or ids)"
            )
            continue
        out.variations[ref] = layers
    return out
