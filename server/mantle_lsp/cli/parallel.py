"""A whole-project check spread over several processes (``mantle-lsp check --jobs``).

Parsing dominates a check, and parsed trees cannot cheaply cross process boundaries
(pickling them costs as much as parsing them). So the project is partitioned, not the
work on it: each worker owns some skills (worker 0 also owns the project-level files),
parses only its own files up front, and builds the index entries of those files. The
workers then exchange their entries reduced to plain tuples (``model.symbols.
export_entries``: keys, places, skill, soft — what the checks read of other files'
entries), and each computes the diagnostics of its own files. A file of another worker
that a check does look at (a neighbour's memory.yml, a routing target's skill.md) is
parsed on first use (``model.project.PendingFile``).

The result equals the serial :func:`~mantle_lsp.ide.diagnostics.project_diagnostics`,
which is what a worker's :func:`~mantle_lsp.ide.diagnostics.file_diagnostics` promises
for its files; a test compares both on every fixture project. Any failure of a worker
(an exception, a crash, a platform without ``fork``) falls back to the serial check.

Only the CLI uses this: it is single-threaded, so forking it is safe. The language server
never forks, and a worker only runs this package's own code (docs/security.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO

from ..ide.diagnostics import Diagnostic, file_diagnostics, project_diagnostics
from ..model import layout
from ..model.project import Project, SkillFacts, bulk_work
from ..model.symbols import build_index, export_entries, import_entries
from ..syntax.text import TextRange, new_range

MIN_SKILLS = 100  # below this, forking and exchanging cost more than they save

Entries = tuple[list[Any], list[Any], dict[str, SkillFacts]]  # symbols, references, facts
Row = tuple[int, int, int, str, str, str]  # a Diagnostic as plain data (file, start, end, …)


def default_jobs() -> int:
    """Worker processes for ``--jobs auto``: the CPUs this process may use."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def check_project(
    root: Path, jobs: int, engine: str | None = None, min_skills: int = MIN_SKILLS
) -> tuple[Project, dict[Path, list[Diagnostic]]]:
    """Every diagnostic of the project at ``root``, per file, like
    ``project_diagnostics(Project.load(root))``, using up to ``jobs`` processes; and the
    project (partial when the work was spread: other workers' files are read on use)."""
    with bulk_work():
        files = list(layout.project_files(root))
        sids = sorted({sid for _, _, sid in files if sid is not None})
        workers = min(jobs, len(sids))
        if workers < 2 or len(sids) < min_skills or not hasattr(os, "fork"):
            return _serial(root, engine)
        try:
            return _parallel(root, files, sids, workers, engine)
        except _WorkerFailed as exc:
            last = (str(exc).strip().splitlines() or ["?"])[-1]
            print(
                f"mantle-lsp: note: a worker process failed ({last}); "
                f"checking {root} in one process",
                file=sys.stderr,
            )
            return _serial(root, engine)


def _serial(root: Path, engine: str | None) -> tuple[Project, dict[Path, list[Diagnostic]]]:
    proj = Project.load(root)
    proj.engine_override = engine
    return proj, project_diagnostics(proj)


class _WorkerFailed(Exception):
    pass


def _parallel(
    root: Path,
    files: list[tuple[Path, Any, str | None]],
    sids: list[str],
    workers: int,
    engine: str | None,
) -> tuple[Project, dict[Path, list[Diagnostic]]]:
    # Round-robin over the sorted skills balances neighbours; worker 0 (this process)
    # also owns every file outside a skill.
    owner_of = {sid: i % workers for i, sid in enumerate(sids)}
    owned: list[set[Path]] = [set() for _ in range(workers)]
    for path, _, sid in files:
        owned[owner_of[sid] if sid is not None else 0].add(path)

    children: list[tuple[int, BinaryIO, BinaryIO]] = []  # (pid, from child, to child)
    try:
        for w in range(1, workers):
            up_r, up_w = os.pipe()
            down_r, down_w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                os.close(up_r)
                os.close(down_w)
                for _, from_child, to_child in children:  # earlier workers' pipes
                    from_child.close()
                    to_child.close()
                _worker(root, files, owned[w], engine, up_w, down_r)
            os.close(up_w)
            os.close(down_r)
            children.append((pid, os.fdopen(up_r, "rb"), os.fdopen(down_w, "wb")))

        proj, idx = _load(root, files, owned[0], engine)
        mine = _export(proj, idx, owned[0], files)
        theirs = [_receive(from_child) for _, from_child, _ in children]
        everyone = [mine, *theirs]
        for w, (_, _, to_child) in enumerate(children, start=1):
            _send(to_child, [e for i, e in enumerate(everyone) if i != w])
            to_child.close()
        _import(proj, idx, theirs, files)
        out = file_diagnostics(proj, owned[0])
        for _, from_child, _ in children:
            for where, start, end, code, severity, message in _receive(from_child):
                path = files[where][0]
                rng: TextRange = new_range(TextRange, (start, end))
                out.setdefault(path, []).append(Diagnostic(path, rng, code, severity, message))
        return proj, out
    finally:
        for pid, from_child, to_child in children:
            from_child.close()
            if not to_child.closed:
                to_child.close()
            with contextlib.suppress(ChildProcessError):  # already reaped
                os.waitpid(pid, 0)


def _load(
    root: Path, files: list[tuple[Path, Any, str | None]], owned: set[Path], engine: str | None
) -> tuple[Project, Any]:
    proj = Project.load_partial(root, files, owned)
    proj.engine_override = engine
    return proj, build_index(proj, owned)


def _export(
    proj: Project, idx: Any, owned: set[Path], files: list[tuple[Path, Any, str | None]]
) -> Entries:
    """What other workers need of this worker's files: index entries, and the facts of its
    skills that checks of every other skill read (``Project.skill_facts``)."""
    syms, refs = export_entries(idx, owned, _file_ids(files))
    sids = {sid for path, _, sid in files if path in owned and sid is not None}
    return syms, refs, {sid: proj.skill_facts(sid) for sid in sids}


def _file_ids(files: list[tuple[Path, Any, str | None]]) -> dict[Path, int]:
    """A file's number in the list every worker shares: how messages name files."""
    return {path: i for i, (path, _, _) in enumerate(files)}


def _import(
    proj: Project, idx: Any, others: list[Entries], files: list[tuple[Path, Any, str | None]]
) -> None:
    """Add the other workers' entries (decoded from JSON: keys come back as lists)."""
    paths = [path for path, _, _ in files]
    for syms, refs, facts in others:
        import_entries(
            idx,
            paths,
            [(tuple(key), *rest) for key, *rest in syms],
            [(tuple(key), *rest) for key, *rest in refs],
        )
        proj.known_facts.update((sid, SkillFacts(*f)) for sid, f in facts.items())
    proj._index = idx


def _worker(
    root: Path,
    files: list[tuple[Path, Any, str | None]],
    owned: set[Path],
    engine: str | None,
    up_fd: int,
    down_fd: int,
) -> None:
    code = 0
    try:
        with os.fdopen(up_fd, "wb") as up, os.fdopen(down_fd, "rb") as down:
            try:
                proj, idx = _load(root, files, owned, engine)
                _send(up, _export(proj, idx, owned, files))
                _import(proj, idx, _receive(down), files)
                ids = _file_ids(files)
                rows: list[Row] = [
                    (ids[d.path], d.range.start, d.range.end, d.code, d.severity, d.message)
                    for ds in file_diagnostics(proj, owned).values()
                    for d in ds
                ]
                _send(up, rows)
            except BaseException:
                code = 1
                _send(up, _FAILED, traceback.format_exc())
    except BaseException:  # pragma: no cover - the pipe itself failed
        code = 1
    finally:
        os._exit(code)  # never run the parent's cleanup (atexit, buffered output) twice


_FAILED = "failed"
_HEADER = struct.Struct("!Q")


# Messages are JSON (never pickle: nothing here deserialises code objects), ASCII-escaped so
# that paths with undecodable bytes (lone surrogates) survive the trip.
def _send(stream: BinaryIO, obj: Any, detail: str = "") -> None:
    data = json.dumps([obj, detail], separators=(",", ":")).encode("ascii")
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) != _HEADER.size:
        raise _WorkerFailed("a worker ended without an answer")
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) != size:
        raise _WorkerFailed("a worker's answer was cut short")
    obj, detail = json.loads(data)
    if isinstance(obj, str) and obj == _FAILED:
        raise _WorkerFailed(detail)
    return obj
