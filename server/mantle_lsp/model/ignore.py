"""git's ignore rules, for the walks that look for projects.

A folder that git ignores (a ``.gitignore`` pattern, in any ``.gitignore`` from the
repository's top down to the folder, negations included, or ``.git/info/exclude``) is not
searched for projects: build output, vendored copies and scratch folders hold things that
look like agents but are no part of the repository. Patterns follow git's rules
(``pathspec``'s ``GitIgnoreSpec``): a deeper ``.gitignore`` wins over a higher one, a later
line over an earlier one, and ``.git/info/exclude`` comes before every ``.gitignore``.
Like git, a folder below an ignored folder cannot be re-included (the walk never enters
the ignored one). Only discovery is affected: the files of a project that is checked are
the files the engine loads, ignored or not.
"""

from __future__ import annotations

import os
from pathlib import Path

from pathspec import GitIgnoreSpec

from .source import read_source

__all__ = ["IgnoreRules"]


def _git_top(start: Path) -> Path | None:
    """The working tree that holds ``start``: the nearest folder with a ``.git`` entry."""
    for cand in (start, *start.parents):
        if os.path.lexists(cand / ".git"):
            return cand
    return None


def _spec(path: Path) -> GitIgnoreSpec | None:
    if not os.path.isfile(path):
        return None
    src = read_source(path)
    if not src.analyzable or src.issues or not src.text.strip():
        return None
    try:
        return GitIgnoreSpec.from_lines(src.text.splitlines())
    except Exception:  # a pattern pathspec rejects: git would skip it; we skip the file
        return None


class IgnoreRules:
    """The ignore rules that apply below ``start`` (a folder)."""

    def __init__(self, start: Path) -> None:
        top = _git_top(start)
        self.top = top if top is not None else start
        self._specs: dict[str, GitIgnoreSpec | None] = {}
        self._exclude = _spec(self.top / ".git" / "info" / "exclude") if top else None

    def _dir_spec(self, d: str) -> GitIgnoreSpec | None:
        if d not in self._specs:
            self._specs[d] = _spec(Path(d) / ".gitignore")
        return self._specs[d]

    def ignored_dir(self, path: str) -> bool:
        """Is the folder ``path`` (below ``top``) ignored by git?"""
        top = str(self.top)
        rel = os.path.relpath(path, top)
        if rel == "." or rel.startswith(".."):
            return False
        parts = rel.split(os.sep)
        verdict: bool | None = None
        if self._exclude is not None:
            verdict = self._exclude.check_file("/".join(parts) + "/").include
        base = top
        for i in range(len(parts)):
            spec = self._dir_spec(base)
            if spec is not None:
                got = spec.check_file("/".join(parts[i:]) + "/").include
                if got is not None:
                    verdict = got
            base = os.path.join(base, parts[i])
        return bool(verdict)
