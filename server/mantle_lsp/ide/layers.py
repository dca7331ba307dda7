"""Editor features for Cadenya memory layers kept as files (docs/memory-layers.md).

Plain data in (a :class:`~mantle_lsp.model.layers.LayerSet`, a path, an offset), plain
data out; no IO. Diagnostics, hover, code lenses, completion, go to definition, rename
and the manifest of a cascade all ask the questions of ``model/layers.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..model.layers import (
    CASCADES_FILE,
    LAYER_META,
    MAX_LAYERS,
    Cascade,
    CascadeItem,
    Layer,
    LayerEntry,
    LayerSet,
    classify,
    counted_layers,
    references_to_entry,
    references_to_layer,
    resolve,
    standings,
)
from ..syntax.errors import closest
from ..syntax.text import TextRange
from .rules.base import Diagnostic, Related
from .types import FeatureError, Location, TextEdit, WorkspaceEdit

C_TOO_MANY = "lsp.layers.too_many_layers"
C_DUPLICATE = "lsp.layers.duplicate_layer"
C_UNKNOWN_LAYER = "lsp.layers.unknown_layer"
C_UNKNOWN_ENTRY = "lsp.layers.unknown_entry"
C_EPISODIC = "lsp.layers.episodic_reference"

_NOWHERE = TextRange(0, 0)


# -- diagnostics -------------------------------------------------------------------------


def layer_diagnostics(ls: LayerSet) -> dict[Path, list[Diagnostic]]:
    """Every finding of the layer set, per file; every file of the set has an entry (an
    empty list when it is clean)."""
    out: dict[Path, list[Diagnostic]] = {p: [] for p in ls.texts}
    for layer in ls.layers.values():
        for entry in layer.entries.values():
            if entry.parsed is not None:
                out.setdefault(entry.path, []).extend(_issues(entry.path, entry.parsed.issues))
        if layer.meta is not None and layer.meta_path is not None:
            out.setdefault(layer.meta_path, []).extend(_issues(layer.meta_path, layer.meta.issues))
    if ls.cascades_path is not None:
        found = out.setdefault(ls.cascades_path, [])
        if ls.cascades_parsed is not None:
            found.extend(_issues(ls.cascades_path, ls.cascades_parsed.issues))
        for cascade in ls.cascades.values():
            found.extend(_cascade_findings(ls, ls.cascades_path, cascade))
    for ds in out.values():
        ds.sort(key=lambda d: (d.range, d.code))
    return out


def _issues(path: Path, issues: Any) -> list[Diagnostic]:
    return [Diagnostic(path, i.range, i.code, i.severity, i.message, i.data) for i in issues]


def _cascade_findings(ls: LayerSet, path: Path, cascade: Cascade) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    first: dict[tuple[str, str | None], CascadeItem] = {}
    whole: dict[str, CascadeItem] = {}
    for item in cascade.items:
        where = item.layer_range or item.range
        layer = ls.layers.get(item.layer)
        if layer is None:
            meant = closest(item.layer, ls.layers)
            hint = f"; did you mean `{meant}`?" if meant else ""
            out.append(
                Diagnostic(
                    path,
                    where,
                    C_UNKNOWN_LAYER,
                    "error",
                    f"no layer `{item.layer}`: no folder `{item.layer}/` next to "
                    f"{CASCADES_FILE}{hint}",
                    {"wrong": item.layer, "meant": meant} if meant else None,
                )
            )
            continue
        if layer.episodic:
            out.append(
                Diagnostic(
                    path,
                    where,
                    C_EPISODIC,
                    "error",
                    f"`{item.layer}` is an episodic layer: the system manages it and places it "
                    "at the most specific end of every cascade by itself; leave it out",
                    None,
                    _related_layer(layer, "the episodic layer"),
                )
            )
            continue
        key = (item.layer, item.entry)
        earlier = first.get(key) or (whole.get(item.layer) if item.entry is not None else None)
        if earlier is not None:
            what = (
                f"`{item.layer}` is listed twice in cascade `{cascade.name}`"
                if item.entry is None or earlier.entry is not None
                else f"the entry `{item.entry}` of `{item.layer}` is pinned, but cascade "
                f"`{cascade.name}` already lists the whole layer"
            )
            out.append(
                Diagnostic(
                    path,
                    where,
                    C_DUPLICATE,
                    "warning",
                    f"{what}; the later listing brings nothing (the earlier one wins)",
                    None,
                    (Related(Location(path, earlier.layer_range or earlier.range), "listed here"),),
                )
            )
            continue
        first[key] = item
        if item.entry is None:
            whole[item.layer] = item
        elif item.entry not in layer.entries:
            meant = closest(item.entry, layer.entries)
            hint = f"; did you mean `{meant}`?" if meant else ""
            out.append(
                Diagnostic(
                    path,
                    item.entry_range or where,
                    C_UNKNOWN_ENTRY,
                    "error",
                    f"layer `{item.layer}` has no entry `{item.entry}` (no file "
                    f"`{item.layer}/{item.entry}`){hint}",
                    {"wrong": item.entry, "meant": meant} if meant else None,
                )
            )
    counted = counted_layers(cascade, ls)
    if len(counted) > MAX_LAYERS:
        out.append(
            Diagnostic(
                ls.cascades_path or path,
                cascade.name_range,
                C_TOO_MANY,
                "error",
                f"cascade `{cascade.name}` uses {len(counted)} layers; a cascade holds at most "
                f"{MAX_LAYERS} (the episodic layer aside): drop or merge "
                f"{len(counted) - MAX_LAYERS}",
            )
        )
    return out


def _related_layer(layer: Layer, what: str) -> tuple[Related, ...]:
    if layer.meta_path is not None:
        rng = layer.meta.episodic_range if layer.meta is not None else None
        return (Related(Location(layer.meta_path, rng or _NOWHERE), what),)
    return ()


# -- the manifest ------------------------------------------------------------------------


@dataclass(frozen=True)
class ManifestLine:
    key: str
    description: str | None
    layer: str
    position: int  # of the cascade item that brings it
    path: Path
    shadows: tuple[str, ...] = ()  # the layers whose entry of the same key it hides


def manifest(ls: LayerSet, cascade: Cascade) -> list[ManifestLine]:
    """The entries the agent sees through ``cascade``, in resolution order."""
    return [
        ManifestLine(
            r.key,
            r.winner.entry.description,
            r.winner.entry.layer,
            r.winner.position,
            r.winner.entry.path,
            tuple(c.entry.layer for c in r.shadowed if c.entry is not r.winner.entry),
        )
        for r in resolve(ls, cascade)
    ]


def manifest_json(ls: LayerSet, cascade: Cascade) -> dict[str, Any]:
    """The manifest as plain JSON data (the CLI's ``--format json`` and the editor's
    ``mantle/layersManifest``)."""
    episodic = [lid for lid, layer in ls.layers.items() if layer.episodic]
    return {
        "cascade": cascade.name,
        "variation": cascade.variation,
        "layers": [
            {"layer": i.layer, "entry": i.entry, "position": n} for n, i in enumerate(cascade.items)
        ],
        "episodic": episodic,
        "entries": [
            {
                "key": m.key,
                "description": m.description,
                "layer": m.layer,
                "position": m.position,
                "path": _rel(ls, m.path),
                "shadows": list(m.shadows),
            }
            for m in manifest(ls, cascade)
        ],
    }


def _rel(ls: LayerSet, path: Path) -> str:
    try:
        return path.relative_to(ls.root).as_posix()
    except ValueError:
        return str(path)


def manifest_text(ls: LayerSet, cascade: Cascade) -> str:
    """The manifest as text: one line per entry (key, layer, description)."""
    lines = manifest(ls, cascade)
    head = f"cascade {cascade.name}"
    if cascade.variation:
        head += f" (variation {cascade.variation})"
    out = [f"{head}: {len(lines)} entr{'y' if len(lines) == 1 else 'ies'}"]
    width_k = max((len(m.key) for m in lines), default=0)
    width_l = max((len(m.layer) for m in lines), default=0)
    for m in lines:
        desc = m.description if m.description is not None else "(no description)"
        out.append(f"  {m.key:<{width_k}}  {m.layer:<{width_l}}  {desc}")
    return "\n".join(out) + "\n"


# -- hover and code lenses ---------------------------------------------------------------


@dataclass(frozen=True)
class LayerHover:
    range: TextRange
    markdown: str


def _entry_header(entry: LayerEntry) -> TextRange:
    p = entry.parsed
    if p is not None and p.frontmatter is not None:
        return p.frontmatter
    return TextRange(0, 0)


def _standing_lines(ls: LayerSet, entry: LayerEntry) -> list[str]:
    out: list[str] = []
    for st in standings(ls, entry):
        name = st.cascade.name
        if st.wins:
            shadows = ", ".join(f"`{e.layer}`" for e in st.shadows)
            tail = f"; shadows {shadows}" if shadows else ""
            out.append(f"- cascade `{name}`: **wins** (position {st.contribution.position}){tail}")
        else:
            by = st.shadowed_by
            assert by is not None
            out.append(
                f"- cascade `{name}`: shadowed by `{by.layer}` (position "
                f"{st.resolution.winner.position})"
            )
    return out


def hover(ls: LayerSet, path: Path, offset: int) -> LayerHover | None:
    """On an entry file's frontmatter: its key and where it stands in each cascade. On a
    cascade item: the layer (its name, entries) or the pinned entry."""
    entry = ls.entry_at(path)
    if entry is not None:
        header = _entry_header(entry)
        if header.length and not header.contains(offset):
            return None
        md = [f"**{entry.key}** (layer `{entry.layer}`)"]
        if entry.description:
            md += ["", entry.description]
        lines = _standing_lines(ls, entry)
        md += ["", *lines] if lines else ["", "_no cascade in cascades.yml uses this entry_"]
        return LayerHover(header if header.length else TextRange(0, 0), "\n".join(md))
    if path != ls.cascades_path:
        return None
    found = _item_at(ls, offset)
    if found is None:
        return None
    cascade, item, on_entry = found
    layer = ls.layers.get(item.layer)
    if layer is None:
        return None
    if on_entry and item.entry is not None:
        e = layer.entries.get(item.entry)
        if e is None or item.entry_range is None:
            return None
        md = [f"**{e.key}** (layer `{e.layer}`, pinned)"]
        if e.description:
            md += ["", e.description]
        return LayerHover(item.entry_range, "\n".join(md))
    rng = item.layer_range or item.range
    title = f"**{layer.id}**" + (f" — {layer.name}" if layer.name else "")
    md = [title]
    if layer.description:
        md += ["", layer.description]
    if layer.episodic:
        md += ["", "episodic layer (system-managed)"]
    keys = list(layer.entries)
    md += ["", f"{len(keys)} entr{'y' if len(keys) == 1 else 'ies'}:"]
    winners = {r.key: r.winner.entry.layer for r in resolve(ls, cascade)}
    for k in keys[:30]:
        won = winners.get(k)
        tail = "" if won in (None, layer.id) else f" (shadowed by `{won}`)"
        md.append(f"- `{k}`{tail}")
    if len(keys) > 30:
        md.append(f"- … and {len(keys) - 30} more")
    return LayerHover(rng, "\n".join(md))


@dataclass(frozen=True)
class LayerLens:
    range: TextRange
    title: str
    target: Location | None  # what clicking it opens


def code_lenses(ls: LayerSet, path: Path) -> list[LayerLens]:
    """On an entry file that some cascade shadows: "shadowed by X in cascade Y"."""
    entry = ls.entry_at(path)
    if entry is None:
        return []
    out: list[LayerLens] = []
    for st in standings(ls, entry):
        by = st.shadowed_by
        if by is not None:
            out.append(
                LayerLens(
                    TextRange(0, 0),
                    f"shadowed by {by.layer} in cascade {st.cascade.name}",
                    Location(by.path, TextRange(0, 0)),
                )
            )
    return out


# -- cascades.yml: what is under the cursor, definition, completion ----------------------


def _item_at(ls: LayerSet, offset: int) -> tuple[Cascade, CascadeItem, bool] | None:
    """The cascade item at ``offset`` in cascades.yml, and whether the cursor is on its
    pinned entry key (else on the layer id)."""
    for cascade in ls.cascades.values():
        for item in cascade.items:
            if item.entry_range is not None and item.entry_range.contains(offset):
                return cascade, item, True
            if item.layer_range is not None and item.layer_range.contains(offset):
                return cascade, item, False
    return None


def definition(ls: LayerSet, path: Path, offset: int) -> list[Location]:
    """From a cascade item: the entry file it pins, else the layer's layer.yml (or its
    first entry)."""
    if path != ls.cascades_path:
        return []
    found = _item_at(ls, offset)
    if found is None:
        return []
    _, item, on_entry = found
    layer = ls.layers.get(item.layer)
    if layer is None:
        return []
    if on_entry and item.entry is not None:
        e = layer.entries.get(item.entry)
        return [Location(e.path, _NOWHERE)] if e is not None else []
    if layer.meta_path is not None:
        return [Location(layer.meta_path, _NOWHERE)]
    first = next(iter(layer.entries.values()), None)
    return [Location(first.path, _NOWHERE)] if first is not None else []


@dataclass(frozen=True)
class LayerCompletion:
    label: str
    kind: str  # "layer" | "entry"
    detail: str
    edit: TextEdit


_WORD = r"[^\s,{}\[\]:#'\"]*"
_ITEM_RE = re.compile(rf"^(\s*)-\s+({_WORD})$")
_LAYER_RE = re.compile(rf"\blayer:\s*({_WORD})$")
_ENTRY_RE = re.compile(rf"\bentry:\s*({_WORD})$")
_LAYER_ON_LINE = re.compile(r"\blayer:\s*['\"]?([^\s,{}'\"]+)")


def complete(ls: LayerSet, path: Path, offset: int) -> list[LayerCompletion]:
    """In cascades.yml: layer ids in a `layers:` list item or after `layer:`, the entry
    keys of the item's layer after `entry:`."""
    if path != ls.cascades_path:
        return []
    text = ls.texts.get(path, "")
    offset = min(max(offset, 0), len(text))
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    m = _ENTRY_RE.search(prefix)
    if m is not None:
        layer_id = _item_layer(text, line_start, offset)
        layer = ls.layers.get(layer_id) if layer_id else None
        if layer is None:
            return []
        rng = TextRange(offset - len(m.group(1)), offset)
        return [
            LayerCompletion(k, "entry", e.description or "", TextEdit(rng, _scalar(k)))
            for k, e in layer.entries.items()
        ]
    m = _LAYER_RE.search(prefix) or _ITEM_RE.match(prefix)
    if m is None:
        return []
    if m.re is _ITEM_RE and not _under_layers(text, line_start, len(m.group(1))):
        return []
    word = m.group(m.lastindex or 1)
    rng = TextRange(offset - len(word), offset)
    return [
        LayerCompletion(
            lid,
            "layer",
            (layer.name or "") + (" (episodic)" if layer.episodic else ""),
            TextEdit(rng, _scalar(lid)),
        )
        for lid, layer in ls.layers.items()
        if not layer.episodic
    ]


def _under_layers(text: str, line_start: int, indent: int) -> bool:
    """The list item starting at ``line_start`` (indented by ``indent``) is an item of a
    ``layers:`` key (the nearest less-indented key above it)."""
    pos = line_start - 1
    while pos > 0:
        start = text.rfind("\n", 0, pos) + 1
        line = text[start:pos]
        stripped = line.strip()
        ind = len(line) - len(line.lstrip())
        if (stripped and not stripped.startswith("#")) and (
            ind < indent or (ind == indent and not stripped.startswith("-"))
        ):
            return stripped.rstrip().endswith(":") and stripped.split(":")[0] == "layers"
        pos = start - 1
    return False


def _item_layer(text: str, line_start: int, offset: int) -> str | None:
    """The `layer:` of the cascade item the cursor is in (same line, else the item's other
    lines)."""
    line_end = text.find("\n", offset)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    m = _LAYER_ON_LINE.search(line)
    if m is not None:
        return m.group(1)
    lines = text.split("\n")
    row = text.count("\n", 0, line_start)
    here = lines[row]
    indent = len(here) - len(here.lstrip(" -"))
    # upwards to the item's `-`, then downwards to the next item
    r = row
    while r >= 0:
        ln = lines[r]
        m = _LAYER_ON_LINE.search(ln)
        if m is not None:
            return m.group(1)
        if ln.lstrip().startswith("-") or (ln.strip() and len(ln) - len(ln.lstrip()) < indent):
            break
        r -= 1
    r = row + 1
    while r < len(lines):
        ln = lines[r]
        ind = len(ln) - len(ln.lstrip())
        if ln.strip() and (ind < indent or ln.lstrip().startswith("-")):
            break
        m = _LAYER_ON_LINE.search(ln)
        if m is not None:
            return m.group(1)
        r += 1
    return None


_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*\Z")


def _scalar(name: str) -> str:
    """``name`` as a YAML scalar that reads back unchanged in block and flow context."""
    return name if _PLAIN.match(name) and name not in _YAML_WORDS else json.dumps(name)


_YAML_WORDS = {"yes", "no", "on", "off", "true", "false", "null", "y", "n", "~"}


# -- rename ------------------------------------------------------------------------------

_LAYER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True)
class RenameTarget:
    kind: str  # "layer" | "entry"
    layer: str
    key: str | None
    range: TextRange  # the name under the cursor
    text: str  # what the name reads now


def rename_target(ls: LayerSet, path: Path, offset: int) -> RenameTarget | FeatureError:
    """What a rename at ``offset`` renames: a layer id or pinned entry key in cascades.yml,
    or the entry whose file is open (its key, from anywhere in its frontmatter)."""
    if path == ls.cascades_path:
        found = _item_at(ls, offset)
        if found is None:
            return FeatureError("nothing to rename here: put the cursor on a layer id or entry")
        _, item, on_entry = found
        if item.layer not in ls.layers:
            return FeatureError(f"there is no layer `{item.layer}` to rename")
        if on_entry and item.entry is not None and item.entry_range is not None:
            if item.entry not in ls.layers[item.layer].entries:
                return FeatureError(f"layer `{item.layer}` has no entry `{item.entry}` to rename")
            return RenameTarget("entry", item.layer, item.entry, item.entry_range, item.entry)
        rng = item.layer_range or item.range
        return RenameTarget("layer", item.layer, None, rng, item.layer)
    kind, layer, key = classify(ls.root, path)
    if kind == "entry" and layer is not None and key is not None and layer in ls.layers:
        entry = ls.layers[layer].entries.get(key)
        if entry is not None:
            header = _entry_header(entry)
            if header.length and not header.contains(offset):
                return FeatureError("rename an entry from its frontmatter (or a cascade)")
            return RenameTarget("entry", layer, key, TextRange(0, 0), key)
    if kind == "layer_meta" and layer is not None and layer in ls.layers:
        return RenameTarget("layer", layer, None, TextRange(0, 0), layer)
    return FeatureError("nothing to rename here")


def rename(ls: LayerSet, path: Path, offset: int, new_name: str) -> WorkspaceEdit | FeatureError:
    t = rename_target(ls, path, offset)
    if isinstance(t, FeatureError):
        return t
    if t.kind == "layer":
        return rename_layer(ls, t.layer, new_name)
    assert t.key is not None
    return rename_entry(ls, t.layer, t.key, new_name)


def rename_layer(ls: LayerSet, old: str, new: str) -> WorkspaceEdit | FeatureError:
    """Rename layer ``old``: its folder, and every cascade item that names it."""
    if new == old:
        return FeatureError(f"the layer is already called `{old}`")
    if not _LAYER_ID.match(new):
        return FeatureError(
            f"`{new}` is not a usable layer id: letters, digits, `_`, `.` and `-`, "
            "starting with a letter or digit"
        )
    if new in ls.layers:
        return FeatureError(f"there is already a layer `{new}`")
    if old not in ls.layers:
        return FeatureError(f"there is no layer `{old}`")
    edits: list[TextEdit] = []
    for _, item in references_to_layer(ls, old):
        if item.layer_range is not None:
            edits.append(TextEdit(item.layer_range, _scalar(new)))
    out: dict[Path, tuple[TextEdit, ...]] = {}
    if edits and ls.cascades_path is not None:
        out[ls.cascades_path] = tuple(sorted(edits, key=lambda e: e.range))
    return WorkspaceEdit(out, ((ls.root / old, ls.root / new),))


def rename_entry(ls: LayerSet, layer: str, old: str, new: str) -> WorkspaceEdit | FeatureError:
    """Rename entry ``old`` of ``layer`` to key ``new``: its file, and every cascade item
    that pins it."""
    lay = ls.layers.get(layer)
    if lay is None or old not in lay.entries:
        return FeatureError(f"layer `{layer}` has no entry `{old}`")
    err = key_error(new)
    if err is not None:
        return FeatureError(err)
    if new == old:
        return FeatureError(f"the entry is already called `{old}`")
    if new in lay.entries:
        return FeatureError(f"layer `{layer}` already has an entry `{new}`")
    edits = [
        TextEdit(item.entry_range, _scalar(new))
        for _, item in references_to_entry(ls, layer, old)
        if item.entry_range is not None
    ]
    out: dict[Path, tuple[TextEdit, ...]] = {}
    if edits and ls.cascades_path is not None:
        out[ls.cascades_path] = tuple(sorted(edits, key=lambda e: e.range))
    return WorkspaceEdit(out, ((lay.entries[old].path, lay.path / new),))


def rename_files(ls: LayerSet, renames: list[tuple[Path, Path]]) -> WorkspaceEdit:
    """Text edits in cascades.yml for layer folders, entry files or folders of entries the
    client is about to rename (``workspace/willRenameFiles``): every item naming the layer,
    every pin of a moved entry. An entry moved to another layer is left alone."""
    edits: dict[TextRange, TextEdit] = {}
    for old, new in renames:
        if old.parent == ls.root and new.parent == ls.root:  # a layer folder
            if old.name in ls.layers and _LAYER_ID.match(new.name) and new.name not in ls.layers:
                for _, item in references_to_layer(ls, old.name):
                    if item.layer_range is not None:
                        edits[item.layer_range] = TextEdit(item.layer_range, _scalar(new.name))
            continue
        _, layer, old_key = classify(ls.root, old)
        _, new_layer, new_key = classify(ls.root, new)
        lay = ls.layers.get(layer) if layer is not None else None
        if lay is None or new_layer != layer or old_key is None or new_key is None:
            continue
        for key in lay.entries:
            if key != old_key and not key.startswith(old_key + "/"):
                continue  # not the entry moved, nor one inside the folder moved
            moved = new_key + key[len(old_key) :]
            if key_error(moved) is not None:
                continue
            for _, item in references_to_entry(ls, lay.id, key):
                if item.entry_range is not None:
                    edits[item.entry_range] = TextEdit(item.entry_range, _scalar(moved))
    out: dict[Path, tuple[TextEdit, ...]] = {}
    if edits and ls.cascades_path is not None:
        out[ls.cascades_path] = tuple(sorted(edits.values(), key=lambda e: e.range))
    return WorkspaceEdit(out)


def key_error(key: str) -> str | None:
    """Why ``key`` cannot be an entry key (a relative POSIX path inside the layer), or
    None."""
    p = PurePosixPath(key)
    if not key or key.startswith("/") or "\\" in key or key.endswith("/"):
        return f"`{key}` is not a relative file path such as `procedures/refunds.md`"
    if any(part in ("", ".", "..") or part.startswith(".") for part in key.split("/")):
        return f"`{key}` has an empty, hidden, `.` or `..` part"
    if str(p) == LAYER_META:
        return f"`{LAYER_META}` holds the layer's name; it cannot be an entry"
    return None


def cascade_names(ls: LayerSet) -> list[str]:
    return list(ls.cascades)
