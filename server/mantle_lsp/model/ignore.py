"""git's ignore rules, for the walks that look for projects and memory-layers/ folders.

A folder that git ignores (a ``.gitignore`` pattern, in any ``.gitignore`` from the
repository's top down to the folder, negations included, or ``.git/info/exclude``) is not
searched: build output, vendored copies and scratch folders hold things that look like
agents but are no part of the repository. Patterns follow git's rules (``pathspec``'s
``GitIgnoreSpec``): a deeper ``.gitignore`` wins over a higher one, a later line over an
earlier one, and ``.git/info/exclude`` comes before every ``.gitignore``. Like git, a
folder below an ignored folder cannot be re-included (the walk never enters the ignored
one). Only discovery is affected: the files of a project that is checked are the files
the engine loads, ignored or not.

What the user names is searched, as ripgrep's and ruff's walkers do: the rules apply to
what lies *below* the folder a walk starts from (the folder named on the command line,
or a workspace folder), each entry matched on its own path. A pattern that matches the
named folder or one of its ancestors (``tmp/`` for ``check tmp/agent``, or ``*`` in
``tmp/.gitignore``) does not apply below it at all: it hides neither that folder nor
anything in it (ripgrep would still hide a ``tmp/agent/tmp/`` for ``tmp/``; we do not:
a scratch folder's ``*`` would otherwise hide everything in the folder named).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from pathspec import GitIgnoreSpec

__all__ = ["IgnoreRules"]


class Files(Protocol):
    """What the rules ask of the disk: the layout interface (``layout.Layout``)."""

    def lexists(self, path: Path | str) -> bool: ...

    def ignore_lines(self, path: Path) -> list[str] | None: ...


def _git_top(start: Path, fs: Files) -> Path | None:
    """The working tree that holds ``start``: the nearest folder with a ``.git`` entry."""
    for cand in (start, *start.parents):
        if fs.lexists(cand / ".git"):
            return cand
    return None


def _spec(lines: list[str] | None) -> GitIgnoreSpec | None:
    if not lines:
        return None
    try:
        return GitIgnoreSpec.from_lines(lines)
    except Exception:  # a pattern pathspec rejects: git would skip it; we skip the file
        return None


def _for_named(lines: list[str] | None, named: list[str]) -> GitIgnoreSpec | None:
    """The rules of a ``.gitignore`` (its ``lines``) above the named folder, which hide
    neither that folder nor what lies below it. ``named`` holds the folders from the
    ``.gitignore``'s own folder down to the named one, relative to it (``tmp/``,
    ``tmp/agent/``). An ignoring pattern that matches one of them is dropped (a
    ``pathspec`` pattern that matches a folder matches all its content too): ``tmp/``,
    or ``*`` in ``tmp/.gitignore``, does not apply below ``tmp/agent`` when that is the
    folder named. Every other pattern still applies, each entry matched on its own path."""
    if not lines or not named:
        return _spec(lines)
    out: list[str] = []
    try:
        for line in lines:
            pats = GitIgnoreSpec.from_lines([line]).patterns
            if not any(p.include and any(p.match_file(r) is not None for r in named) for p in pats):
                out.append(line)
    except Exception:  # as _spec: the file is skipped
        return None
    return _spec(out)


class IgnoreRules:
    """The ignore rules for a walk below ``start`` (the folder the user named), read
    through the layout interface ``fs``."""

    def __init__(self, start: Path, fs: Files) -> None:
        self.fs = fs
        top = _git_top(start, fs)
        self.top = top if top is not None else start
        self._specs: dict[str, GitIgnoreSpec | None] = {}
        # the named folder and its ancestors, relative to each folder from the top down
        # (a .gitignore there, or the top's info/exclude, may match them)
        rel = os.path.relpath(start, self.top)
        parts = [] if rel == "." or rel.startswith("..") else rel.split(os.sep)
        self._named: dict[str, list[str]] = {}
        base = str(self.top)
        for i in range(len(parts)):
            self._named[base] = ["/".join(parts[i:j]) + "/" for j in range(i + 1, len(parts) + 1)]
            base = os.path.join(base, parts[i])
        exclude = fs.ignore_lines(self.top / ".git" / "info" / "exclude") if top else None
        self._exclude = _for_named(exclude, self._named.get(str(self.top), []))

    def _dir_spec(self, d: str) -> GitIgnoreSpec | None:
        if d not in self._specs:
            lines = self.fs.ignore_lines(Path(d) / ".gitignore")
            self._specs[d] = _for_named(lines, self._named.get(d, []))
        return self._specs[d]

    def ignored_dir(self, path: str) -> bool:
        """Is the folder ``path`` (below the named folder) ignored by git?"""
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
