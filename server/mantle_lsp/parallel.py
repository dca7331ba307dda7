"""A project's first load spread over several processes: ``mantle-lsp check --jobs`` and
the language server's initial index of a large project.

Parsing dominates both, and parsed trees cannot cheaply cross process boundaries
(pickling them costs as much as parsing them). So the project is partitioned, not the
work on it: each worker owns some skills (worker 0, the calling process, also owns the
project-level files), parses only its own files up front, and builds the index entries
of those files. The workers then exchange their entries reduced to plain tuples
(``model.symbols.export_entries``: keys, places, skill, soft — what the checks read of
other files' entries), and each computes the diagnostics of its own files. A file of
another worker that a check does look at (a neighbour's memory.yml, a routing target's
skill.md) is parsed on first use (``model.files.PendingFile``).

The result equals the serial :func:`~mantle_lsp.ide.diagnostics.project_diagnostics`,
which is what a worker's :func:`~mantle_lsp.ide.diagnostics.file_diagnostics` promises
for its files; a test compares both on every fixture project. Any failure of a worker
(an exception, a crash, a platform without ``fork``) falls back to the serial load.

Workers come from one of two places (the only processes this package creates; both run
only this package's own code, see docs/security.md):

- ``check`` forks them (:func:`check_project`): the CLI is single-threaded, so forking is
  safe, and a forked worker needs no imports;
- the language server has threads and pipes to the editor, so it never forks: it starts
  fresh interpreters (``workers.spawn_workers``, ``python -I -c`` with the server's own
  ``sys.path``) early, while the editor is still handshaking, so that their imports are
  done when the index starts; :func:`assign` then tells each its share, and each lists
  the project itself (:func:`_spawned_worker_main`).

Messages are length-prefixed JSON over pipes (never pickle).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
import zlib
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, BinaryIO

from .ide.diagnostics import Diagnostic, file_diagnostics, project_diagnostics
from .ide.rules.base import Related
from .ide.suppression import apply_suppressions
from .ide.types import Location
from .model import layout
from .model.layout import FileKind
from .model.project import Project, SkillFacts, bulk_work
from .model.source import Source, read_source
from .model.symbols import READ_FORMS, build_index, export_entries, import_entries
from .syntax.memory_yml import FieldFacts
from .syntax.text import TextRange, new_range
from .workers import MIN_SKILLS, Channel, Spawned, kill

WORKER_TIMEOUT = 120.0  # seconds a spawned worker may take for its share

Files = list[tuple[Path, FileKind, str | None]]
# symbols, references, skill facts, field tables, and the digest of the file list (everyone
# must share it); an Export has the references by receiving worker
Entries = tuple[list[Any], list[Any], dict[str, SkillFacts], dict[str, Any], str]
Export = tuple[list[Any], list[list[Any]], dict[str, SkillFacts], dict[str, Any], str]
# a Diagnostic as plain data (file, start, end, code, severity, message, fix data,
# related information as [file, start, end, message] lists)
Row = tuple[int, int, int, str, str, str, "dict[str, Any] | None", list[list[Any]], str | None]
Found = dict[Path, list[Diagnostic]]


def partition(
    files: Files,
    jobs: int,
    min_skills: int = MIN_SKILLS,
    pinned: AbstractSet[str] = frozenset(),
) -> list[set[Path]] | None:
    """The files each worker owns, or None when the project is too small to spread.
    Round-robin over the sorted skills balances neighbours; worker 0 also owns every
    file outside a skill, and the ``pinned`` skills."""
    sids = sorted({sid for _, _, sid in files if sid is not None})
    workers = min(jobs, len(sids))
    if workers < 2 or len(sids) < min_skills:
        return None
    owner_of = {sid: 0 if sid in pinned else i % workers for i, sid in enumerate(sids)}
    owned: list[set[Path]] = [set() for _ in range(workers)]
    for path, _, sid in files:
        owned[owner_of[sid] if sid is not None else 0].add(path)
    return owned


class WorkerFailed(Exception):
    pass


# -- the CLI: forked workers ---------------------------------------------------------------


def check_project(
    root: Path, jobs: int, engine: str | None = None, min_skills: int = MIN_SKILLS
) -> tuple[Project, Found]:
    """Every diagnostic of the project at ``root``, per file, like
    ``project_diagnostics(Project.load(root))``, using up to ``jobs`` processes; and the
    project (partial when the work was spread: other workers' files are read on use)."""
    with bulk_work():
        files = list(layout.project_files(root))
        owned = partition(files, jobs, min_skills) if hasattr(os, "fork") else None
        if owned is None:
            return serial(root, engine)
        try:
            return _forked(root, files, owned, engine)
        except WorkerFailed as exc:
            print(f"mantle-lsp: note: {failure_note(exc, root)}", file=sys.stderr)
            return serial(root, engine)


def serial(root: Path, engine: str | None) -> tuple[Project, Found]:
    proj = Project.load(root)
    proj.engine_override = engine
    return proj, apply_suppressions(proj, project_diagnostics(proj), proj.files)


def failure_note(exc: Exception, root: Path, doing: str = "checking") -> str:
    last = (str(exc).strip().splitlines() or ["?"])[-1]
    return f"a worker process failed ({last}); {doing} {root} in one process"


def _forked(
    root: Path, files: Files, owned: list[set[Path]], engine: str | None
) -> tuple[Project, Found]:
    children: list[tuple[int, Channel]] = []
    try:
        for w in range(1, len(owned)):
            up_r, up_w = os.pipe()
            down_r, down_w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0 and os.fork() != 0:
                # The first child leaves at once and its child, the worker, is adopted by
                # init: nobody waits while the kernel frees a worker's ~100 MB at its exit.
                os._exit(0)
            if pid == 0:  # the worker: never returns
                os.close(up_r)
                os.close(down_w)
                # It reports through its pipe only. Without the command's output streams,
                # the command's reader sees their end when the command exits, not when
                # this process has also finished exiting (the kernel freeing its memory
                # takes ~30 ms after its last answer).
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                os.close(null)
                for _, ch in children:  # earlier workers' pipes
                    ch.answers.close()
                    ch.orders.close()
                code = 0
                try:
                    with os.fdopen(up_w, "wb") as up, os.fdopen(down_r, "rb") as down:
                        work(root, files, owned, w, engine, up, down, _INHERITED)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)  # never run the parent's cleanup (atexit, buffers) twice
            os.close(up_w)
            os.close(down_r)
            children.append((pid, Channel(os.fdopen(up_r, "rb"), os.fdopen(down_w, "wb"))))
        return lead(root, files, owned, engine, read_source, [ch for _, ch in children], _INHERITED)
    finally:
        for pid, ch in children:
            ch.answers.close()
            if not ch.orders.closed:
                ch.orders.close()
            with contextlib.suppress(ChildProcessError):  # the first child, gone at once
                os.waitpid(pid, 0)


# -- the language server: spawned workers --------------------------------------------------


def assign(
    workers: Sequence[Spawned],
    root: Path,
    jobs: int,
    engine: str | None,
    pinned: set[str],
    min_skills: int = MIN_SKILLS,
) -> None:
    """Give spawned workers 1… their shares of the project at ``root``. The message is
    small: each worker lists the project itself and computes the same
    :func:`partition`; :func:`lead` checks that everyone saw the same files."""
    for w, sp in enumerate(workers, start=1):
        send(
            sp.channel.orders,
            {
                "root": str(root),
                "worker": w,
                "jobs": jobs,
                "min_skills": min_skills,
                "pinned": sorted(pinned),
                "engine": engine,
            },
        )


def lead_spawned(
    root: Path,
    files: Files,
    owned: list[set[Path]],
    engine: str | None,
    reader: Callable[[Path], Source],
    workers: Sequence[Spawned],
) -> tuple[Project, Found]:
    """:func:`lead` with spawned workers, under a watchdog: a worker that has not answered
    after :data:`WORKER_TIMEOUT` seconds is killed, which ends the wait with
    :class:`WorkerFailed` (a server must not hang on a stuck helper)."""
    import threading

    watchdog = threading.Timer(WORKER_TIMEOUT, kill, args=(workers,))
    watchdog.daemon = True
    watchdog.start()
    try:
        # the server keeps this project: its other files are read now, and from then on
        # change only by the server's events (model/files.PendingFile)
        channels = [w.channel for w in workers]
        return lead(root, files, owned, engine, reader, channels, read_now=True)
    finally:
        watchdog.cancel()


def _spawned_worker_main() -> None:
    """A spawned worker: its share from stdin, its answers to stdout."""
    up, down = sys.stdout.buffer, sys.stdin.buffer
    sys.stdout = sys.stderr  # nothing else may write into the answer stream
    code = 0
    try:
        try:
            setup = receive(down)
        except WorkerFailed:  # stdin closed: not needed after all
            os._exit(0)
        root = Path(setup["root"])
        with bulk_work():
            files = list(layout.project_files(root))
            owned = partition(files, setup["jobs"], setup["min_skills"], set(setup["pinned"]))
            if owned is None or setup["worker"] >= len(owned):
                raise WorkerFailed("the project's files changed while it was being read")
            work(root, files, owned, setup["worker"], setup["engine"], up, down)
    except BaseException:
        code = 1
    finally:
        with contextlib.suppress(OSError):
            up.flush()
        os._exit(code)  # its objects die with it: no need to free ~10^6 of them one by one


# -- the protocol ----------------------------------------------------------------------------


def lead(
    root: Path,
    files: Files,
    owned: list[set[Path]],
    engine: str | None,
    reader: Callable[[Path], Source],
    others: Sequence[Channel],
    digest: str | None = None,
    read_now: bool = False,
) -> tuple[Project, Found]:
    """Worker 0's part: load its own files, trade entries with the ``others`` (workers
    1…), and gather everyone's diagnostics. Raises :class:`WorkerFailed`. ``digest``:
    what stands for the file list (by default :func:`listing_digest`). ``read_now``: the
    other workers' files are read now (a project that lives on), not on first use (one
    ``check`` run, which no file event reaches)."""
    proj, idx = _load(root, files, owned[0], engine, reader, read_now)
    mine = _export(proj, idx, owned, 0, files, digest)
    # Every worker's entries for worker v travel as one frame, encoded once by the worker
    # that made them: worker 0 passes the others' frames on as received (never decoded and
    # encoded again), and everyone encodes while the others do.
    n = len(owned)
    own_frames = {v: encode(_frame(mine, v)) for v in range(1, n)}
    relayed: list[dict[int, bytes]] = []
    for w, ch in enumerate(others, start=1):
        if receive(ch.answers) != mine[4]:  # the digest of its file list comes first
            raise WorkerFailed("the project's files changed while it was being read")
        relayed.append({v: receive_frame(ch.answers) for v in range(n) if v != w})
    for v, ch in enumerate(others, start=1):
        for u in range(n):
            if u != v:
                ch.orders.write(own_frames[v] if u == 0 else relayed[u - 1][v])
        ch.orders.flush()
        ch.orders.close()
    _import(proj, idx, [decode(got[0]) for got in relayed], files)
    out = apply_suppressions(proj, file_diagnostics(proj, owned[0]), owned[0])
    for ch in others:
        rows, asked = receive(ch.answers)
        for path, kind in asked:  # what its rules were told of the disk (Project.sees_file)
            proj.disk_questions.setdefault(path, kind)
        for where, start, end, code, severity, message, data, rel, folder in rows:
            path = files[where][0]
            rng: TextRange = new_range(TextRange, (start, end))
            related = tuple(
                Related(Location(files[f][0], TextRange(s, e)), m) for f, s, e, m in rel
            )
            out.setdefault(path, []).append(
                Diagnostic(
                    path,
                    rng,
                    code,
                    severity,
                    message,
                    data,
                    related,
                    Path(folder) if folder else None,
                )
            )
    return proj, out


def work(
    root: Path,
    files: Files,
    owned: list[set[Path]],
    w: int,
    engine: str | None,
    up: BinaryIO,
    down: BinaryIO,
    digest: str | None = None,
) -> None:
    """Worker ``w``'s part (1…): load its own files, send their entries, add the
    others', send its files' diagnostics. A failure is reported to worker 0, then
    re-raised."""
    try:
        proj, idx = _load(root, files, owned[w], engine, read_source)
        mine = _export(proj, idx, owned, w, files, digest)
        frames = [encode(_frame(mine, v)) for v in range(len(owned)) if v != w]
        send(up, mine[4])
        for frame in frames:  # worker 0 passes each on to its worker (see lead)
            up.write(frame)
        up.flush()
        _import(proj, idx, [receive(down) for _ in frames], files)
        ids = file_ids(files)
        rows: list[Row] = [
            (
                ids[d.path],
                d.range.start,
                d.range.end,
                d.code,
                d.severity,
                d.message,
                d.data,
                [
                    [ids[r.location.path], r.location.range.start, r.location.range.end, r.message]
                    for r in d.related
                    if r.location.path in ids
                ],
                str(d.folder) if d.folder is not None else None,
            )
            for ds in apply_suppressions(proj, file_diagnostics(proj, owned[w]), owned[w]).values()
            for d in ds
        ]
        send(up, [rows, sorted(proj.disk_questions.items())])
    except BaseException:
        with contextlib.suppress(BaseException):
            import traceback  # the failure's story, for worker 0's note

            send(up, _FAILED, traceback.format_exc())
        raise


def _load(
    root: Path,
    files: Files,
    owned: set[Path],
    engine: str | None,
    reader: Callable[[Path], Source],
    read_now: bool = False,
) -> tuple[Project, Any]:
    proj = Project.load_partial(root, files, owned, reader, read_now=read_now)
    proj.engine_override = engine
    return proj, build_index(proj, owned)


def _export(
    proj: Project,
    idx: Any,
    owned: list[set[Path]],
    w: int,
    files: Files,
    digest: str | None = None,
) -> Export:
    """What other workers need of worker ``w``'s files: their symbols (but blocks and
    steps, :data:`_SKILL_LOCAL`); the references
    each other worker's checks read, by worker; the facts of its skills that checks of
    every other skill read (``Project.skill_facts``) and their fields
    (``Project.field_table``: other workers need not parse its memory.yml files to know
    what a condition may read); the digest of the file list.

    Of another file's references a check reads only three kinds: those to a field its own
    memory.yml declares (is the field read anywhere? ``ide/rules/memory.py``), those
    that write a field (can a field a condition reads ever be written?
    ``lsp.condition.constant_never_written``) and those to a response (which skills
    deliver it? ``Semantics.response_users``). So a reference that reads a field goes to
    the owner of the field's skill (the project's fields: worker 0), one that writes it
    (any form but a read) and one to a response to everyone, and the others stay here:
    ~1/6 of them leave. The server's index gets them all when it parses those files itself
    (``Project.materialize``)."""
    worker_of = {path: v for v, paths in enumerate(owned) for path in paths}
    owner = {sid: worker_of[path] for path, _, sid in files if sid is not None}

    everyone = range(len(owned))

    def readers(key: tuple[str, ...], form: str) -> Sequence[int]:
        """The workers whose checks read a reference of this key and form, each once
        (tuples: this is asked of every reference)."""
        kind = key[0]
        if kind == "response" or (kind == "field" and form not in READ_FORMS):
            return everyone
        if kind == "field":
            v = owner.get(key[1], 0)
            return (v, 0) if key[1] == "project" and v != 0 else (v,)
        return ()

    def leaves(key: tuple[str, ...], form: str) -> bool:
        rs = readers(key, form)
        return len(rs) > 1 or (len(rs) == 1 and rs[0] != w)

    syms, refs = export_entries(idx, owned[w], file_ids(files), leaves, _SKILL_LOCAL)
    routed: list[list[Any]] = [[] for _ in owned]
    for ref in refs:
        for v in readers(ref[0], ref[4]):
            if v != w:
                routed[v].append(ref)
    sids = {sid for path, _, sid in files if path in owned[w] and sid is not None}
    facts = {sid: proj.skill_facts(sid) for sid in sids}
    fields = {sid: proj.field_table(sid) for sid in sids}
    return syms, routed, facts, fields, digest if digest is not None else listing_digest(files)


# Symbols only the checks of their own skill look up: a block or a step is named by its
# skill's own steps and tokens only (``("block", sid, …)``, ``("step", sid, …)``; a
# `call: other__block` names a skill), so they stay with the worker that owns the skill.
_SKILL_LOCAL = frozenset({"block", "step"})


def _frame(export: Export, w: int) -> Entries:
    """What worker ``w`` receives of one other worker's export: its symbols and facts,
    and the references routed to ``w``."""
    syms, routed, facts, fields, digest = export
    return syms, routed[w], facts, fields, digest


# forked workers share worker 0's file list itself: nothing to compare
_INHERITED = "inherited"


def listing_digest(files: Files) -> str:
    """What identifies the shared file list (file numbers in messages index it): its
    length and a CRC of its entries, which any added, removed or renamed file changes."""
    text = "".join(f"{path}\0{kind.value}\0{sid}\n" for path, kind, sid in files)
    return f"{len(files)}:{zlib.crc32(text.encode('utf-8', 'surrogateescape')):08x}"


def file_ids(files: Files) -> dict[Path, int]:
    """A file's number in the list every worker shares: how messages name files."""
    return {path: i for i, (path, _, _) in enumerate(files)}


def _import(proj: Project, idx: Any, others: list[Entries], files: Files) -> None:
    """Add the other workers' entries (decoded from JSON: keys come back as lists)."""
    paths = [path for path, _, _ in files]
    for syms, refs, facts, fields, _ in others:
        import_entries(idx, paths, syms, refs)  # keys arrive as JSON lists
        proj.known_facts.update((sid, SkillFacts.from_json(f)) for sid, f in facts.items())
        proj.known_fields.update(
            (sid, {name: (_facts(p), _facts(e)) for name, (p, e) in table.items()})
            for sid, table in fields.items()
        )
    proj.facts_changed()
    proj._index = idx


def _facts(row: Any) -> FieldFacts | None:
    return (
        None
        if row is None
        else FieldFacts(row[0], row[1], tuple(row[2]), dict(row[3]), tuple(row[4]))
    )


_FAILED = "failed"
_HEADER = struct.Struct("!Q")


# JSON, ASCII-escaped so that paths with undecodable bytes (lone surrogates) survive the trip.
def encode(obj: Any, detail: str = "") -> bytes:
    """One message, framed: its length, then its JSON."""
    # plain lists, tuples and dicts built here, never cyclic: no cycle bookkeeping
    data = json.dumps([obj, detail], separators=(",", ":"), check_circular=False).encode("ascii")
    return _HEADER.pack(len(data)) + data


def send(stream: BinaryIO, obj: Any, detail: str = "") -> None:
    stream.write(encode(obj, detail))
    stream.flush()


def receive_frame(stream: BinaryIO) -> bytes:
    """The next message as :func:`encode` made it (not decoded)."""
    try:
        head = stream.read(_HEADER.size)
    except OSError as exc:
        raise WorkerFailed(f"cannot read a worker's answer: {exc}") from exc
    if len(head) != _HEADER.size:
        raise WorkerFailed("a worker ended without an answer")
    (size,) = _HEADER.unpack(head)
    try:
        data = stream.read(size)
    except OSError as exc:
        raise WorkerFailed(f"cannot read a worker's answer: {exc}") from exc
    if len(data) != size:
        raise WorkerFailed("a worker's answer was cut short")
    return head + data


def decode(frame: bytes) -> Any:
    obj, detail = json.loads(frame[_HEADER.size :])
    if isinstance(obj, str) and obj == _FAILED:
        raise WorkerFailed(detail)
    return obj


def receive(stream: BinaryIO) -> Any:
    return decode(receive_frame(stream))
