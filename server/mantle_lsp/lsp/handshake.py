"""The editor's ``initialize`` request, answered before the server is imported.

Importing pygls, lsprotocol and the analysis takes ~0.4 s, and the ``initialize`` answer
needs none of it: it is the server's capabilities, which depend only on this version of
the server and on a few things the client declares (does it pull diagnostics, prepare
renames, announce file renames: :data:`SWITCHES`). So ``mantle-lsp serve`` over stdio
reads the first message itself, answers it from ``capabilities.json`` and only then
imports the server. The server is given the same message (:class:`Replay`) and handles
it as usual (its ``initialize`` handler reads the workspace folders, registers the pull
handlers); its own answer is compared with the one sent, never sent twice
(``MantleProtocol._send_response``). A difference is logged as a warning and shown by
``mantle/status``; a test compares both for every combination of the client capabilities
that pygls or this server reads (``tests/test_handshake.py``).

``capabilities.json`` is generated from the server itself (``capabilities.py``, ``make
capabilities``); a test fails when it is out of date.

Nothing here imports pygls or lsprotocol at module level: this module runs first.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import unquote, urlsplit

from .. import __version__

if TYPE_CHECKING:
    from ..workers import Spawned

CAPABILITIES = Path(__file__).with_name("capabilities.json")

# What of the client's capabilities the answer depends on: name -> (path in the
# `capabilities` object of the initialize params, what turns it on: "set" for a value
# that is there at all, even false; "true" for a true one (or an object)).
SWITCHES: dict[str, tuple[tuple[str, ...], str]] = {
    "pull": (("textDocument", "diagnostic"), "true"),
    "prepareRename": (("textDocument", "rename", "prepareSupport"), "true"),
    "willRenameFiles": (("workspace", "fileOperations", "willRename"), "true"),
    "willSave": (("textDocument", "synchronization", "willSave"), "set"),
    "willSaveWaitUntil": (("textDocument", "synchronization", "willSaveWaitUntil"), "set"),
}


@dataclass
class Early:
    """The first message as read from the client, and what was answered to it."""

    raw: bytes  # every byte read, to be read again by the server (Replay)
    msg_id: int | str | None = None  # the initialize request's id, when it was answered
    answer: dict[str, Any] | None = None  # the `result` sent
    params: dict[str, Any] = field(default_factory=dict)  # the request's params
    workers: list[Spawned] = field(default_factory=list)  # index workers started already


_taken: Early | None = None


def taken() -> Early | None:
    """What :func:`answer_first` read and answered in this process, once."""
    global _taken
    early, _taken = _taken, None
    return early


# -- the command line ------------------------------------------------------------------------

_LEVELS = ("debug", "info", "warning", "error")


def stdio_jobs(argv: Sequence[str]) -> int | None:
    """The ``--jobs`` of a command line that starts the server over stdio with options
    the parser accepts (``serve``, ``--stdio``, ``--log-level``, ``--log-file``,
    ``--jobs``; ``auto``: the CPUs), else None. Anything else (``--tcp``, ``--help``, a
    typo) takes the normal path, where argparse has its say before anything is answered.
    A test checks that every command line accepted here parses."""
    if not argv or argv[0] != "serve":
        return None
    jobs = "auto"
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg == "--stdio":
            continue
        name, eq, value = arg.partition("=")
        if name not in ("--log-level", "--log-file", "--jobs"):
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        if name == "--log-level" and value not in _LEVELS:
            return None
        if name == "--log-file" and (not value or value.startswith("-")):
            return None
        if name == "--jobs":
            if value != "auto" and not (value.isdigit() and int(value) >= 1):
                return None
            jobs = value
    if jobs != "auto":
        return int(jobs)
    from ..workers import default_jobs

    return default_jobs()


# -- reading and answering -------------------------------------------------------------------


def answer_first(stdin: BinaryIO, stdout: BinaryIO, jobs: int = 1) -> Early:
    """Read the client's first message; when it is an ``initialize`` request this module
    can answer, answer it, and when a workspace folder it names is a project of
    ``workers.large_project``, start ``jobs - 1`` index workers (``workers.py``) at
    once: their start-up then overlaps the server's. Either way, what was read is kept
    for the server (:func:`taken`)."""
    global _taken
    raw, body = read_message(stdin)
    early = Early(raw)
    _taken = early
    if body is None:
        return early
    try:
        msg = json.loads(body)
    except (ValueError, RecursionError):
        return early
    answer = _answer_to(msg)
    if answer is None:
        return early
    early.msg_id, early.answer, early.params = msg["id"], answer, msg["params"]
    data = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": answer}).encode("utf-8")
    try:
        stdout.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
        stdout.flush()
    except OSError:
        early.msg_id, early.answer = None, None  # the server will answer, or find it gone
        return early
    if jobs >= 2:
        from .. import workers

        if any(workers.large_project(folder) for folder in _folders(msg["params"])):
            with contextlib.suppress(OSError):  # the server tries again, and says if it cannot
                early.workers = workers.spawn_workers(jobs - 1)
    return early


def _folders(params: dict[str, Any]) -> list[Path]:
    """The local folders ``initialize`` names (POSIX ``file:`` URIs and ``rootPath``; the
    server reads them properly later, this is only to start workers early)."""
    uris = [f.get("uri") for f in params.get("workspaceFolders") or () if isinstance(f, dict)]
    if not uris:
        uris = [params.get("rootUri")]
    out = []
    for uri in uris:
        if isinstance(uri, str) and uri.startswith("file://") and os.sep == "/":
            out.append(Path(unquote(urlsplit(uri).path)))
    root_path = params.get("rootPath")
    if not out and isinstance(root_path, str):
        out.append(Path(root_path))
    return out


# -- messages --------------------------------------------------------------------------

MAX_HEADER_LINES = 16
MAX_BODY = 16 * 1024 * 1024  # a message larger than this is left to the server to read


def read_message(stdin: BinaryIO) -> tuple[bytes, bytes | None]:
    """One message as the server's reader would read it: header lines up to an empty
    one, then Content-Length bytes. Returns every byte read, and the body (None when the
    message is not a plain one: the server reads it again and decides)."""
    raw = bytearray()
    length: int | None = None
    for _ in range(MAX_HEADER_LINES):
        line = stdin.readline()
        raw += line
        if not line.endswith(b"\n"):
            return bytes(raw), None  # the end of input
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return bytes(raw), None
    else:
        return bytes(raw), None
    if length is None or not 0 < length <= MAX_BODY:
        return bytes(raw), None
    body = stdin.read(length)
    raw += body
    if len(body) != length:
        return bytes(raw), None
    return bytes(raw), body


def frame(msg: dict[str, Any]) -> bytes:
    """A JSON-RPC message with its header, as pygls writes it."""
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


def _answer_to(msg: Any) -> dict[str, Any] | None:
    """The ``initialize`` result for ``msg``, or None when it is not an initialize
    request this module can judge (the server then answers it itself)."""
    if not isinstance(msg, dict) or msg.get("method") != "initialize":
        return None
    msg_id = msg.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
        return None
    params = msg.get("params")
    if not isinstance(params, dict):
        return None
    caps = params.get("capabilities")
    if not isinstance(caps, dict):
        return None
    on = switches(caps)
    if on is None:
        return None
    try:
        table = json.loads(CAPABILITIES.read_text(encoding="utf-8"))
        info = table["serverInfo"]
        if info["version"] != __version__:
            return None  # a capabilities.json of another version (a stale install)
        capabilities = table["base"]
        for name in on:
            capabilities = merge(capabilities, table["switches"][name]["patch"])
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return None  # no file, or not one this version wrote: the server answers
    return {"capabilities": capabilities, "serverInfo": info}


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``patch`` laid over it, object by object."""
    out = dict(base)
    for key, value in patch.items():
        old = out.get(key)
        out[key] = merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def switches(caps: dict[str, Any]) -> list[str] | None:
    """The :data:`SWITCHES` these client capabilities turn on; None when one of them has
    a shape the server may read differently (it answers that client itself)."""
    on: list[str] = []
    for name, (path, when) in SWITCHES.items():
        node: Any = caps
        for part in path:
            if node is None:
                break
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        if node is None:
            continue
        if not isinstance(node, (bool, dict)):
            return None
        if when == "set" or node is True or isinstance(node, dict):
            on.append(name)
    return on


class Replay(io.RawIOBase):
    """The client's input with the bytes :func:`answer_first` took put back in front:
    the server reads the first message as if nobody had."""

    def __init__(self, taken: bytes, stream: BinaryIO) -> None:
        super().__init__()
        self._head = io.BytesIO(taken)
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        line = self._head.readline()
        if line.endswith(b"\n"):
            return line
        return line + self._stream.readline()

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            return self._head.read() + self._stream.read()
        data = self._head.read(size)
        if len(data) < size:
            data += self._stream.read(size - len(data))
        return data
