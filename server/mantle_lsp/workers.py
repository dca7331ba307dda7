"""Worker interpreters for a spread index, started ahead of time (see ``parallel.py``).

Apart from ``parallel.py`` so that the language server can start them before it imports
anything else (``lsp/handshake.py``: as soon as the ``initialize`` request names a large
workspace folder): this module imports only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import subprocess

MIN_SKILLS = 100  # below this, starting workers and exchanging cost more than they save


def large_project(folder: Path) -> bool:
    """Whether the project at ``folder`` has enough skills for a spread index."""
    from .model.layout import skill_dirs  # the standard library only, as this module

    return len(skill_dirs(folder)) >= MIN_SKILLS


def default_jobs() -> int:
    """Worker processes for ``auto``: the CPUs this process may use."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


@dataclass
class Channel:
    """A worker as worker 0 sees it: what it says, and what worker 0 tells it."""

    answers: BinaryIO
    orders: BinaryIO


@dataclass
class Spawned:
    """A worker interpreter started ahead of time; it waits for its share on stdin."""

    proc: subprocess.Popen[bytes]
    channel: Channel


def spawn_workers(n: int) -> list[Spawned]:
    """Start ``n`` worker interpreters. They import this package, then wait for
    :func:`assign` (or exit when their stdin closes). ``-I``: the working directory,
    which may be the user's project, is not on their path; ``sys.path`` is this
    process's."""
    # a worker's objects all live until it exits: no cyclic collector, from its imports on;
    # the server's bytecode cache, when it keeps one (bytecode.py)
    from . import bytecode

    cache, roots = bytecode.in_use()
    keep = (
        f"from mantle_lsp import bytecode; bytecode.adopt({str(cache)!r}, "
        f"{[str(r) for r in roots]!r}); "
        if cache is not None
        else ""
    )
    boot = (
        f"import gc, sys; gc.disable(); sys.path[:] = {[p for p in sys.path if p]!r}; {keep}"
        "from mantle_lsp.parallel import _spawned_worker_main; _spawned_worker_main()"
    )
    import subprocess  # the server's only: check forks

    started: list[Spawned] = []
    try:
        for _ in range(n):
            proc = subprocess.Popen(
                [sys.executable, "-I", "-c", boot],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
            assert proc.stdin is not None and proc.stdout is not None
            started.append(Spawned(proc, Channel(proc.stdout, proc.stdin)))  # type: ignore[arg-type]
    except BaseException:
        reap(started)
        raise
    return started


def release(workers: Sequence[Spawned]) -> None:
    """Close the pipes of spawned workers: idle ones exit, busy ones fail their next
    message. They are not waited for (see :func:`reap`)."""
    for sp in workers:
        for stream in (sp.channel.orders, sp.channel.answers):
            with contextlib.suppress(OSError):
                stream.close()


def kill(workers: Sequence[Spawned]) -> None:
    for sp in workers:
        with contextlib.suppress(OSError):
            sp.proc.kill()


def reap(workers: Sequence[Spawned]) -> None:
    """:func:`release` the workers and wait for their exit (killing a stuck one). A
    worker that has answered needs a few dozen milliseconds to exit (the kernel frees its
    memory), so a caller in a hurry releases now and reaps later."""
    import subprocess

    release(workers)
    for sp in workers:
        try:
            sp.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            sp.proc.kill()
            sp.proc.wait()
