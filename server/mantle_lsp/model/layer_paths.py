"""Where Cadenya memory layers live on disk (``memory-layers/`` folders) and what each
file of such a folder is: the part of :mod:`.layers` that ``check`` needs on every
project, without the layer files' parsers (most projects have no layer folder)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .layout import listing

if TYPE_CHECKING:
    from .ignore import IgnoreRules

LAYERS_DIR = "memory-layers"
CASCADES_FILE = "cascades.yml"
LAYER_META = "layer.yml"
_SKIP_DIRS = {"node_modules", "__pycache__", ".git", ".venv", "venv", "build", "dist"}
_MAX_DEPTH = 12


def classify(root: Path, path: Path) -> tuple[str | None, str | None, str | None]:
    """What ``path`` is in the layer folder ``root``: ``("cascades", None, None)``,
    ``("layer_meta", layer, None)``, ``("entry", layer, key)`` or ``(None, …)`` (not part
    of the layer set: hidden files, files directly in ``root`` other than cascades.yml)."""
    try:
        rel = PurePosixPath(*path.relative_to(root).parts)
    except ValueError:
        return None, None, None
    parts = rel.parts
    if not parts:
        return None, None, None
    if any(p.startswith(".") for p in parts):
        return None, None, None
    if len(parts) == 1:
        return ("cascades", None, None) if parts[0] == CASCADES_FILE else (None, None, None)
    layer = parts[0]
    if len(parts) == 2 and parts[1] == LAYER_META:
        return "layer_meta", layer, None
    return "entry", layer, "/".join(parts[1:])


def layer_root_of(path: Path) -> Path | None:
    """The innermost ``memory-layers/`` folder holding ``path`` (or ``path`` itself)."""
    for cand in (path, *path.parents):
        if cand.name == LAYERS_DIR:
            return cand
    return None


def find_layer_roots(path: Path) -> list[Path]:
    """``memory-layers/`` folders at or under ``path`` (or holding ``path``), skipping what
    git ignores, hidden folders and dependency folders; a layer folder is not searched for
    others inside it."""
    held = layer_root_of(path)
    if held is not None:
        return [held] if held.is_dir() else []
    if not path.is_dir():
        return []
    # Ignore rules only ever remove folders: a quick first walk without them looks for
    # any candidate, and most trees have none (then git's rules are never read: `check`
    # of a project without layers does not import pathspec).
    if not _any_layer_root(str(path), 0):
        return []
    from .ignore import IgnoreRules  # pathspec: only for walks

    return _walk_layer_roots(path, IgnoreRules(path))


def _any_layer_root(d: str, depth: int) -> bool:
    """Whether the walk of :func:`_walk_layer_roots` could find a layer folder below
    ``d``: the same folders skipped, in any order, stopping at the first. (Symbolic links
    are not followed, so only a bind mount could make a loop, and the depth limit ends
    it.)"""
    try:
        entries = listing(d)
    except OSError:
        return False
    for e in entries:
        name = e.name
        if name in _SKIP_DIRS or name.startswith("."):
            continue
        try:
            if not e.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        if name == LAYERS_DIR or (depth < _MAX_DEPTH and _any_layer_root(e.path, depth + 1)):
            return True
    return False


def _walk_layer_roots(path: Path, rules: IgnoreRules) -> list[Path]:
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def walk(d: str, depth: int) -> None:
        try:
            entries = sorted(listing(d), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            if e.name in _SKIP_DIRS or e.name.startswith("."):
                continue
            try:
                if not e.is_dir(follow_symlinks=False):
                    continue
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen or rules.ignored_dir(e.path):
                continue
            seen.add((st.st_dev, st.st_ino))
            if e.name == LAYERS_DIR:
                found.append(Path(e.path))
            elif depth < _MAX_DEPTH:
                walk(e.path, depth + 1)

    walk(str(path), 0)
    return found
