"""Write a ``memory-layers/`` folder from what the service holds (``layers pull``).

Each entry becomes ``<layer external id>/<key>`` in the canonical form of
:func:`~mantle_lsp.syntax.layers.render_entry`, its content byte for byte; a layer whose
name is not its external id, or that has a description, gets a ``layer.yml`` (both lines
when the folder has one already). A file that already says the same thing (same
description and content, however it is written) is left alone, so a pull into a folder in
sync changes nothing, and a pull into an empty folder gives exactly the files a push of
them would send. ``cascades.yml`` and ``sync.yml`` are the folder's own: a pull never
writes them.

What :mod:`.holdable` skips is not written (and reported); every write goes through
:mod:`mantle_lsp.atomic` with the folder as its bound (a temporary file beside the target,
renamed over it: a failure leaves the old bytes), and a failed write is reported and the
pull goes on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import atomic
from ..model.layer_paths import LAYER_META, inside
from ..syntax.layers import render_entry
from .holdable import Skips, compute, layer_yml_text
from .state import Desired, Remote


@dataclass
class PullPlan:
    """What a pull does, before it does it (``pull --dry-run`` prints it)."""

    writes: list[tuple[str, str]] = field(default_factory=list)  # (relative path, text)
    deletes: list[str] = field(default_factory=list)  # only with --prune
    unchanged: int = 0
    skips: Skips = field(default_factory=Skips)
    skipped: list[str] = field(default_factory=list)  # what is not written, and why
    kept: list[str] = field(default_factory=list)  # local files only --prune deletes


@dataclass
class PullResult:
    written: list[str] = field(default_factory=list)  # paths relative to the root, POSIX
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (verb, path, why)


def pull_files(remote: Remote, local: Desired, skips: Skips) -> dict[str, str]:
    """The files a pull writes (relative POSIX path -> text), skips left out."""
    files: dict[str, str] = {}
    for ext in sorted(remote.layers):
        if ext in skips.layers:
            continue
        layer = remote.layers[ext]
        meta = layer_yml_text(layer, f"{ext}/{LAYER_META}" in local.paths)
        if meta is not None and ext not in skips.metas:
            files[f"{ext}/{LAYER_META}"] = meta
        for key in sorted(layer.entries):
            if skips.entry(ext, key) is None:
                entry = layer.entries[key]
                files[f"{ext}/{key}"] = render_entry(entry.description, entry.content)
    return files


def _same(local: Desired, remote: Remote, rel: str) -> bool:
    """Does the folder's file at ``rel`` already say what the service says?"""
    if rel not in local.paths:
        return False
    lid, _, key = rel.partition("/")
    mine, theirs = local.layers.get(lid), remote.layers[lid]
    if mine is None:
        return False
    if key == LAYER_META:
        return (mine.name or lid, mine.description or "") == (
            theirs.name or lid,
            theirs.description or "",
        )
    have, want = mine.entries.get(key), theirs.entries[key]
    return have is not None and (have.description, have.content) == (
        want.description,
        want.content,
    )


def pull_plan(root: Path, remote: Remote, local: Desired, *, prune: bool = False) -> PullPlan:
    """What a pull of ``remote`` into the folder ``root`` (read as ``local``) does."""
    skips = compute(remote, local)
    out = PullPlan(skips=skips, skipped=skips.lines())
    files = pull_files(remote, local, skips)
    real_root = os.path.realpath(root)
    for rel, text in files.items():
        if _same(local, remote, rel):
            out.unchanged += 1
            continue
        path = root.joinpath(*rel.split("/"))
        if os.path.islink(path):  # inside the folder (a link out of it is skipped)
            target = Path(os.path.realpath(path))
            if inside(str(target), real_root):
                other = target.relative_to(real_root).as_posix()
                if other != rel and other in files:
                    if files[other] == text:
                        out.unchanged += 1
                    else:
                        out.skipped.append(
                            f"entry {rel}: a symbolic link to {other}, which the pull writes "
                            "with other text"
                        )
                    continue
        out.writes.append((rel, text))
    for lid in sorted(set(local.layers) & set(remote.layers)):
        if lid in skips.layers:
            continue
        for key in sorted(local.layers[lid].entries):
            if key in remote.layers[lid].entries or skips.entry(lid, key) is not None:
                continue
            (out.deletes if prune else out.kept).append(f"{lid}/{key}")
    return out


def apply_pull(root: Path, plan: PullPlan) -> PullResult:
    """Make the writes and deletions of ``plan``; a failure is reported and the rest goes
    on (the old bytes of a file whose write failed are whole)."""
    out = PullResult()
    for rel, text in plan.writes:
        path = root.joinpath(*rel.split("/"))
        try:
            atomic.make_dirs(path.parent, within=root)
            atomic.write_text(path, text, within=root)
        except (OSError, UnicodeError) as exc:
            out.failed.append(("write", rel, _why(exc)))
            continue
        out.written.append(rel)
    for rel in plan.deletes:
        try:
            os.remove(root.joinpath(*rel.split("/")))
        except OSError as exc:
            out.failed.append(("delete", rel, _why(exc)))
            continue
        out.deleted.append(rel)
    return out


def _why(exc: BaseException) -> str:
    if isinstance(exc, atomic.OutsideFolder):
        return "a symbolic link leads out of the folder"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
