"""``check --watch``: check, then check again whenever a file changes, until Ctrl-C
(SIGINT) or SIGTERM, which end it with status 0.

The files are polled (no watcher library, nothing to install): every :data:`POLL`
seconds the Mantle files under the named paths (their names and kinds as
:func:`~mantle_lsp.model.layout.classify` knows them, configuration files, the baseline)
are listed and stat-ed; a change in any size or modification time, a file created or one
removed, starts a new check once the files have been still for one more poll. The walk
is bounded (:data:`MAX_FILES` files, :data:`MAX_DEPTH` folders deep) and skips the folders
every check skips (VCS data, virtual environments, caches, ``node_modules``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..model.settings import DEFAULT_EXCLUDE

POLL = 0.3  # seconds between two looks at the files
MAX_FILES = 100_000  # files looked at on each poll (a larger tree: the first ones)
MAX_DEPTH = 24
_WATCHED_SUFFIXES = (".md", ".yml", ".yaml", ".py", ".toml", ".json")

Snapshot = dict[str, tuple[int, int]]


def _walk(top: str) -> Iterator[str]:
    """The files worth watching at or under ``top`` (bounded)."""
    if os.path.isfile(top):
        yield top
        return
    stack = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH and e.name not in DEFAULT_EXCLUDE:
                        stack.append((e.path, depth + 1))
                elif e.name.endswith(_WATCHED_SUFFIXES):
                    yield e.path
            except OSError:
                continue


def snapshot(paths: list[str], extra: list[str]) -> Snapshot:
    """Size and modification time of each watched file (at most MAX_FILES)."""
    out: Snapshot = {}
    for top in [*paths, *extra]:
        for path in _walk(top):
            if len(out) >= MAX_FILES:
                return out
            try:
                st = os.stat(path)
            except OSError:
                continue
            out[path] = (st.st_mtime_ns, st.st_size)
    return out


def run(
    args: argparse.Namespace,
    check: Callable[[argparse.Namespace], int],
    poll: float = POLL,
    rounds: int | None = None,
) -> int:
    """Check, then wait for a change and check again; Ctrl-C (SIGINT) ends it with status
    0. ``rounds``: stop after that many checks (tests)."""
    paths = [str(Path(p)) for p in args.paths]
    extra = [p for p in (args.baseline, *args.config) if p and os.path.isfile(p)]
    quiet = args.quiet or args.silent
    done = 0
    # Ctrl-C (SIGINT) and SIGTERM end the watch, also when started where SIGINT is
    # ignored (a background job of a script)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in handlers:
        signal.signal(sig, _interrupt)
    try:
        if not quiet:
            print("mantle-lsp: watching for file changes (Ctrl-C to stop)", file=sys.stderr)
        before = snapshot(paths, extra)
        while True:
            check(args)
            sys.stdout.flush()
            done += 1
            if rounds is not None and done >= rounds:
                return 0
            before = _wait(paths, extra, before, poll)
            if not quiet:
                if sys.stdout.isatty():
                    sys.stdout.write("\x1b[2J\x1b[H")  # a fresh screen, as ruff does
                stamp = time.strftime("%H:%M:%S")
                print(f"[{stamp}] File change detected; checking again.", file=sys.stderr)
    except KeyboardInterrupt:
        return 0
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _wait(paths: list[str], extra: list[str], before: Snapshot, poll: float) -> Snapshot:
    """The snapshot once the files changed and then stayed still for one poll."""
    while True:
        time.sleep(poll)
        now = snapshot(paths, extra)
        if now == before:
            continue
        while True:  # an editor writing several files: wait until they are all written
            time.sleep(poll)
            settled = snapshot(paths, extra)
            if settled == now:
                return now
            now = settled
