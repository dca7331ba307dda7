"""Where Cadenya memory layers live on disk (``memory-layers/`` folders) and what each
file of such a folder is: the part of :mod:`.layers` that ``check`` needs on every
project, without the layer files' parsers (most projects have no layer folder)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .layout import DISK, Layout

if TYPE_CHECKING:
    from .ignore import IgnoreRules

LAYERS_DIR = "memory-layers"
CASCADES_FILE = "cascades.yml"
LAYER_META = "layer.yml"
# this folder's id on Cadenya (`layers push` writes it, nothing else does): the layers a
# push creates carry it, and `push --prune` deletes only those (docs/memory-layers.md)
SYNC_FILE = "sync.yml"
# skipped when looking for memory-layers/ folders (never inside one: a layer named
# `build` is a layer)
_SKIP_DIRS = {"node_modules", "__pycache__", ".git", ".venv", "venv", "build", "dist"}
_MAX_DEPTH = 12
# a layer folder is read this deep: an entry key has at most this many parts
MAX_KEY_PARTS = 12
MAX_NAME_BYTES = 255  # a file name's limit on the common file systems


def _plain_part(part: str) -> bool:
    return (
        bool(part)
        and part not in (".", "..")
        and not part.startswith(".")
        and "\\" not in part
        and "\0" not in part
        and part.strip() == part
    )


def is_unicode(text: str) -> bool:
    """``text`` is valid Unicode (no lone surrogate): it can be a UTF-8 file name."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def key_problem(key: str) -> str | None:
    """Why an entry key cannot be a file inside its layer folder that the folder walk
    reads back as that key (:func:`~.layers.scan_layer_folder`), or None."""
    if not is_unicode(key):
        return "its key is not valid Unicode (a lone surrogate)"
    parts = key.split("/")
    if not all(_plain_part(p) for p in parts):
        return (
            "its key is not a plain relative path (an empty part, `.`, `..`, a leading "
            "`.`, a `\\`, or spaces around a part)"
        )
    if parts == [LAYER_META]:
        return "its key is the layer folder's own layer.yml"
    if len(parts) > MAX_KEY_PARTS:
        return f"its key has {len(parts)} parts; a layer folder is read {MAX_KEY_PARTS} deep"
    if any(len(p.encode("utf-8")) > MAX_NAME_BYTES for p in parts):
        return f"a part of its key is over {MAX_NAME_BYTES} bytes (too long for a file name)"
    return None


def layer_id_problem(ext: str) -> str | None:
    """Why a layer's external id cannot be the name of its folder, or None."""
    if not is_unicode(ext):
        return "its external id is not valid Unicode (a lone surrogate)"
    if "/" in ext or not _plain_part(ext):
        return "its external id cannot be a folder name"
    if ext in (CASCADES_FILE, SYNC_FILE):
        return f"its external id is the name of the folder's own {ext}"
    if len(ext.encode("utf-8")) > MAX_NAME_BYTES:
        return f"its external id is over {MAX_NAME_BYTES} bytes (too long for a folder name)"
    return None


def inside(real: str, real_root: str) -> bool:
    """Is the resolved path ``real`` the resolved folder ``real_root`` or below it?"""
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


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


def find_layer_roots(path: Path, fs: Layout = DISK) -> list[Path]:
    """``memory-layers/`` folders at or under ``path`` (or holding ``path``), skipping what
    git ignores, hidden folders and dependency folders; a layer folder is not searched for
    others inside it."""
    held = layer_root_of(path)
    if held is not None:
        return [held] if fs.is_dir(held) else []
    if not fs.is_dir(path):
        return []
    # Ignore rules only ever remove folders: a quick first walk without them looks for
    # any candidate, and most trees have none (then git's rules are never read: `check`
    # of a project without layers does not import pathspec).
    if not _any_layer_root(str(path), 0, fs):
        return []
    from .ignore import IgnoreRules  # pathspec: only for walks

    return _walk_layer_roots(path, IgnoreRules(path, fs), fs)


def _any_layer_root(d: str, depth: int, fs: Layout) -> bool:
    """Whether the walk of :func:`_walk_layer_roots` could find a layer folder below
    ``d``: the same folders skipped, in any order, stopping at the first. (Symbolic links
    are not followed, so only a bind mount could make a loop, and the depth limit ends
    it.)"""
    try:
        entries = fs.listing(d)
    except OSError:
        return False
    for e in entries:
        name = e.name
        if name in _SKIP_DIRS or name.startswith(".") or not e.is_own_dir:
            continue
        if name == LAYERS_DIR or (depth < _MAX_DEPTH and _any_layer_root(e.path, depth + 1, fs)):
            return True
    return False


def _walk_layer_roots(path: Path, rules: IgnoreRules, fs: Layout) -> list[Path]:
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def walk(d: str, depth: int) -> None:
        try:
            entries = sorted(fs.listing(d), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            if e.name in _SKIP_DIRS or e.name.startswith(".") or not e.is_own_dir:
                continue
            ident = e.ident
            if ident is None or ident in seen or rules.ignored_dir(e.path):
                continue
            seen.add(ident)
            if e.name == LAYERS_DIR:
                found.append(Path(e.path))
            elif depth < _MAX_DEPTH:
                walk(e.path, depth + 1)

    walk(str(path), 0)
    return found
