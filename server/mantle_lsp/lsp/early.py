"""The first look at the documents an editor opens with the workspace, published before
the server is imported (issue 32).

An editor starts the server and, in the same breath, opens the skill.md the user was
looking at. Its diagnostics need the project's model and rules, not the protocol library:
pygls and lsprotocol take ~0.5 s to import (lsprotocol makes ~1,000 attrs classes at import
time), more than reading the whole project. So, once ``handshake.py`` has answered
``initialize``, ``mantle-lsp serve`` goes on with the standard library and the analysis:

1. A thread (:class:`Inbox`) reads the client's messages from then on.
2. On ``initialized``, the server asks for the editor's ``mantle`` settings
   (``workspace/configuration``) and creates the index's progress
   (``window/workDoneProgress/create``), as the server itself would; while the client
   answers, the analysis is imported.
3. The documents opened meanwhile (``textDocument/didOpen``) that are skill.md files of
   a project in a workspace folder get their first look, exactly as the server takes it
   (``sync.first_look_at``: the project loaded around the skill, the configuration file
   and the editor settings applied): pushed as ``textDocument/publishDiagnostics``, or,
   for a client that pulls, as the answer to its ``textDocument/diagnostic`` requests —
   the ones that came already, and, while the server is imported, the ones that come then
   (answered by the inbox thread; a document edited or closed meanwhile is left to the
   server).
4. Everything else is handed to the server (:class:`Stream`), in order, with what was
   learnt: the settings, the progress token, and each look (its project and diagnostics),
   so that the server neither asks again nor publishes the same diagnostics twice.

The look stops at the first message it does not expect (anything but ``initialized``,
``didOpen``, pulls, cancellations, trace and configuration notifications and the answers
to its own requests) and waits at most :data:`ANSWER_TIMEOUT` for the client's answers:
the server then does what it always did. Nothing here imports pygls (but ``pygls.uris``)
or lsprotocol.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .editor_settings import Settings
from .handshake import frame, read_message
from .wire import diagnostic_json, path_to_uri, result_id, uri_to_path

if TYPE_CHECKING:
    from ..ide.diagnostics import Diagnostic
    from ..model.project import Project
    from ..model.workspace import Workspace
    from .config import ProjectConfigs

ANSWER_TIMEOUT = 2.0  # seconds to wait for the client's answers to the two requests
MAX_MESSAGES = 200  # read before the look, at most
CONFIG_ID = "mantle-lsp/early/configuration"
PROGRESS_ID = "mantle-lsp/early/progress"
OUR_IDS = frozenset({CONFIG_ID, PROGRESS_ID})
PROGRESS_TITLE = "Mantle: indexing"  # as sync.begin_progress

# the notifications a look reads past (kept for the server, in order)
_PASS = frozenset({"$/setTrace", "$/cancelRequest", "workspace/didChangeConfiguration"})
# the notifications about one document (a look at it would be out of date)
_DOCUMENT = frozenset({"textDocument/didChange", "textDocument/didClose", "textDocument/didSave"})

Item = tuple[bytes, "dict[str, Any] | None"]  # a message: its bytes, its JSON object
DONE: Item = (b"", None)  # the inbox thread stopped reading (Inbox.forward)


@dataclass
class Look:
    """One document looked at before the server was imported."""

    path: Path
    uri: str
    version: int | None
    project: Project
    diagnostics: list[Diagnostic]
    items: list[dict[str, Any]]  # on the wire
    result_id: str
    pushed: bool = False


@dataclass
class Handover:
    """What the look hands to the server: the input to read (the messages the look read
    and kept, then the rest), and what it learnt."""

    inbox: Inbox
    outbox: Outbox
    head: bytes = b""
    settings: Settings | None = None  # the editor's settings, when the client told them
    progress: str | None = None  # the index's progress token, created and begun
    looks: dict[Path, Look] = field(default_factory=dict)
    pulled: int = 0  # pulls answered before the server started (by the inbox thread too)

    def stream(self) -> Stream:
        """The client's input for the server. From now on the server alone writes to the
        client: the inbox thread stops answering."""
        self.inbox.forward()
        self.outbox.close()
        return Stream(self.head, self.inbox)


_taken: Handover | None = None


def taken() -> Handover | None:
    """What :func:`look_first` handed over in this process, once."""
    global _taken
    handover, _taken = _taken, None
    return handover


def _get(node: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _response_to_us(msg: dict[str, Any] | None) -> bool:
    return msg is not None and "method" not in msg and msg.get("id") in OUR_IDS


class Outbox:
    """The client's output before the server runs: one writer at a time."""

    def __init__(self, stdout: BinaryIO) -> None:
        self._out = stdout
        self._lock = threading.Lock()
        self._closed = False

    def send(self, msg: dict[str, Any]) -> bool:
        with self._lock:
            if self._closed:
                return False
            try:
                self._out.write(frame(msg))
                self._out.flush()
            except (OSError, ValueError):
                return False
            return True

    def close(self) -> None:
        """The server writes from now on."""
        with self._lock:
            self._closed = True


class Inbox:
    """The client's messages, read by a thread of their own: the look takes them one by
    one (:meth:`get`); the server reads the rest through :class:`Stream`. Between the two
    (while the server is imported) the thread answers the pulls of looked-at documents
    itself (:meth:`serve`)."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._in = stdin
        self._q: queue.Queue[Item | None] = queue.Queue()
        self._lock = threading.Lock()
        self._answer: Callable[[dict[str, Any]], bool] | None = None
        self._ended = False
        self._done = False  # set by forward(): the thread stops after the message it reads
        self._thread = threading.Thread(target=self._run, name="mantle-lsp inbox", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        framed = True
        while not self._done:
            if not framed:  # after a message this reader could not frame: bytes as they come
                try:
                    chunk = self._in.read1(65536)  # type: ignore[attr-defined]
                except (OSError, ValueError):
                    chunk = b""
                self._q.put((chunk, None) if chunk else None)
                if not chunk:
                    return
                continue
            try:
                raw, body = read_message(self._in)
            except (OSError, ValueError):
                raw, body = b"", None
            if not raw:
                self._q.put(None)
                return
            msg = None
            if body is None:
                framed = False
            else:
                with contextlib.suppress(ValueError, RecursionError):
                    parsed = json.loads(body)
                    msg = parsed if isinstance(parsed, dict) else None
            with self._lock:
                answer = self._answer
                if answer is not None and msg is not None and answer(msg):
                    continue  # answered here (a pull of a looked-at document)
            self._q.put((raw, msg))
        self._q.put(DONE)  # the server reads its input itself from now on (Stream)

    def get(self, timeout: float | None) -> Item | None:
        """The next message; None at the end of input (or :data:`DONE`, after
        :meth:`forward`). Raises ``queue.Empty`` after ``timeout`` seconds."""
        if self._ended:
            return None
        item = self._q.get(timeout=timeout)
        self._ended = item is None
        return item

    def ready(self) -> list[Item | None]:
        """The messages read already (none waited for)."""
        out: list[Item | None] = []
        while not self._ended:
            try:
                item = self._q.get_nowait()
            except queue.Empty:
                break
            self._ended = item is None
            out.append(item)
        return out

    def serve(self, answer: Callable[[dict[str, Any]], bool]) -> None:
        """From now on ``answer`` sees each message first (True: it answered it, the
        message goes no further)."""
        with self._lock:
            self._answer = answer

    def forward(self) -> None:
        """Stop answering (waits for an answer being written to be done), and reading
        after the message the thread is waiting for: the server then reads the input
        itself, with no thread between (:class:`Stream`)."""
        with self._lock:
            self._answer = None
            self._done = True

    @property
    def input(self) -> BinaryIO:
        return self._in


class Stream:
    """The client's input as the server reads it: ``head`` (the messages the look read and
    kept, in order), then what the inbox thread read until it stopped (without the
    client's answers to the look's requests, should one come late), then the input
    itself."""

    def __init__(self, head: bytes, inbox: Inbox) -> None:
        self._buf = bytearray(head)
        self._inbox = inbox
        self._direct = False  # the inbox thread has stopped: read the input itself

    def _more(self) -> bool:
        """Another message from the inbox thread into the buffer; False at the end of
        input or once the thread has stopped (then ``_direct``)."""
        while not self._direct:
            item = self._inbox.get(None)
            if item is None:
                return False
            if item is DONE:
                self._direct = True
                return False
            if not _response_to_us(item[1]):
                self._buf += item[0]
                return True
        return False

    def readline(self, size: int | None = -1) -> bytes:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[: nl + 1])
                del self._buf[: nl + 1]
                return line
            if not self._more():
                line = bytes(self._buf)
                self._buf.clear()
                if self._direct:
                    return line + self._inbox.input.readline()
                return line

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            while self._more():
                pass
            data = bytes(self._buf)
            self._buf.clear()
            return data + (self._inbox.input.read() if self._direct else b"")
        while len(self._buf) < size and self._more():
            pass
        data = bytes(self._buf[:size])
        del self._buf[:size]
        if len(data) < size and self._direct:
            data += self._inbox.input.read(size - len(data))
        return data


class _Host:
    """What ``config.ProjectConfigs`` reads of the server, for the look."""

    def __init__(self, settings: Settings, model: Workspace) -> None:
        self.settings = settings
        self.model = model

    def uri_of(self, path: Path) -> str:  # pragma: no cover - the look reports no file
        return path_to_uri(path)

    def log(self, message: str, kind: Any = None) -> None:  # pragma: no cover
        pass

    def log_exception(self, what: str, exc: BaseException) -> None:  # pragma: no cover
        pass  # the loaded server meets the same file and logs it

    def window_show_message(self, params: Any) -> None:  # pragma: no cover
        pass

    def text_document_publish_diagnostics(self, params: Any) -> None:  # pragma: no cover
        pass


def folders_of(params: dict[str, Any]) -> list[Path]:
    """The workspace folders of ``initialize`` as the server reads them (``sync.py``)."""
    from ..model.workspace import resolve

    out: list[Path] = []
    for f in params.get("workspaceFolders") or ():
        uri = f.get("uri") if isinstance(f, dict) else None
        if isinstance(uri, str) and (p := uri_to_path(uri)) is not None:
            out.append(p)
    if not out:
        root_uri = params.get("rootUri")
        root = uri_to_path(root_uri) if isinstance(root_uri, str) and root_uri else None
        root_path = params.get("rootPath")
        if not root and isinstance(root_path, str) and root_path:
            root = resolve(Path(root_path))
        if root:
            out.append(root)
    return out


def first_look_diagnostics(
    configs: ProjectConfigs, project: Project, path: Path, sid: str
) -> list[Diagnostic] | None:
    """The first look's diagnostics of the skill.md ``path`` of skill ``sid`` (its project
    loaded around it): every rule but those that read every file, inline suppressions,
    then the project's settings (the configuration file with the editor's over it); None
    when the rules left out may report on it (``ide.diagnostics.first_look_complete``):
    then only the whole project tells. The server's own first look is this function too
    (``diagnostics.DiagnosticsPublisher.first_look``)."""
    from ..ide.diagnostics import first_look, first_look_complete
    from ..ide.suppression import apply_suppressions

    configs.prepare(project)
    found = apply_suppressions(project, first_look(project, [path]), [path])
    if not first_look_complete(project, path, sid):
        return None
    return configs.filter(project, path, found.get(path, []))


def related_in(project: Project, uri_of: Callable[[Path], str]) -> Callable[[Path], Any]:
    """Related information's targets in a first look's project: each file's URI and line
    index (a file the look did not parse is read, not parsed)."""

    def target(path: Path) -> tuple[str, Any] | None:
        pf = project.files.get(path)
        if pf is None:
            return None
        return uri_of(path), pf.source.index

    return target


def look_first(stdin: BinaryIO, stdout: BinaryIO, params: dict[str, Any], raw: bytes) -> None:
    """After ``initialize`` was answered (its bytes: ``raw``), take the first looks (see
    the module); the server takes over with :func:`taken`."""
    global _taken
    handover = Handover(Inbox(stdin), Outbox(stdout))
    order: list[Item] = [(raw, None)]
    try:
        _look(params, handover, order)
    except Exception:  # the server takes the first looks, as it always did
        handover.looks.clear()
        handover.settings = None
    answered = {id(item) for item in order if item[1] is not None and item[1].get("_answered")}
    handover.head = b"".join(item[0] for item in order if id(item) not in answered)
    _taken = handover


def _look(params: dict[str, Any], handover: Handover, order: list[Item]) -> None:
    inbox, outbox = handover.inbox, handover.outbox
    caps = params.get("capabilities") or {}
    opened: dict[str, dict[str, Any]] = {}  # uri -> didOpen's textDocument
    touched: set[str] = set()  # changed or closed since: no look
    pulls: list[dict[str, Any]] = []
    answers: dict[str, dict[str, Any]] = {}
    cancelled: set[Any] = set()

    def take(item: Item | None) -> bool:
        """Note one message; False when the look reads no further."""
        if item is None:
            return False
        msg = item[1]
        if _response_to_us(msg):
            assert msg is not None
            answers[msg["id"]] = msg
            return True
        order.append(item)
        if msg is None:
            return False
        method = msg.get("method")
        uri = _get(msg, "params", "textDocument", "uri")
        if method == "textDocument/didOpen":
            td = _get(msg, "params", "textDocument")
            if isinstance(uri, str) and isinstance(td.get("text"), str):
                opened[uri] = td
                touched.discard(uri)
                return True
            return False
        if method in _DOCUMENT and isinstance(uri, str):
            touched.add(uri)
            return False
        if method == "textDocument/diagnostic" and "id" in msg:
            pulls.append(msg)
            return True
        if method == "$/cancelRequest":
            cancelled.add(_get(msg, "params", "id"))
        return method in _PASS

    # 1. up to `initialized`
    for _ in range(MAX_MESSAGES):
        item = inbox.get(None)
        if item is not None and item[1] is not None and item[1].get("method") == "initialized":
            order.append(item)
            break
        if not take(item) or (item is not None and item[1] is not None and "id" in item[1]):
            return  # a request (or anything else) before `initialized`: the server's
    else:
        return
    # 2. the settings and the progress, as the server asks for them
    asked: set[str] = set()
    token = f"mantle-lsp/index/{uuid.uuid4().hex}"
    if _get(caps, "workspace", "configuration"):
        asked.add(CONFIG_ID)
        outbox.send(
            {
                "jsonrpc": "2.0",
                "id": CONFIG_ID,
                "method": "workspace/configuration",
                "params": {"items": [{"section": "mantle"}]},
            }
        )
    if _get(caps, "window", "workDoneProgress"):
        asked.add(PROGRESS_ID)
        outbox.send(
            {
                "jsonrpc": "2.0",
                "id": PROGRESS_ID,
                "method": "window/workDoneProgress/create",
                "params": {"token": token},
            }
        )
    _import_the_analysis()  # while the client answers
    deadline = time.monotonic() + ANSWER_TIMEOUT
    reading = True
    while reading and not asked <= set(answers) and len(order) < MAX_MESSAGES:
        try:
            item = inbox.get(max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        reading = take(item)
    if reading:  # what came with them (a pull right after its didOpen)
        for item in inbox.ready():
            if not take(item):
                break
    if CONFIG_ID in asked:
        answer = answers.get(CONFIG_ID)
        result = answer.get("result") if answer is not None else None
        if answer is None or "error" in answer or not isinstance(result, list):
            return  # the settings are not known: the server asks again
        handover.settings = Settings.from_client(result[0] if result else None)
    else:
        handover.settings = Settings()
    progress = answers.get(PROGRESS_ID)
    if progress is not None and "error" not in progress:
        begin = {"kind": "begin", "title": PROGRESS_TITLE, "cancellable": False, "percentage": 0}
        note = {
            "jsonrpc": "2.0",
            "method": "$/progress",
            "params": {"token": token, "value": begin},
        }
        if outbox.send(note):
            handover.progress = token
    # 3. the looks
    _take_looks(params, caps, {u: td for u, td in opened.items() if u not in touched}, handover)
    pull = bool(_get(caps, "textDocument", "diagnostic"))
    if not pull:
        for look in handover.looks.values():
            look.pushed = outbox.send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/publishDiagnostics",
                    "params": {"uri": look.uri, "diagnostics": look.items, "version": look.version},
                }
            )
        return
    answerer = _Answerer(handover, outbox, touched)
    for msg in pulls:
        if msg.get("id") not in cancelled and answerer(msg):
            msg["_answered"] = True  # left out of what the server reads
    inbox.serve(answerer)


def _import_the_analysis() -> None:
    """What a look needs (the server needs it too)."""
    from ..ide import diagnostics, suppression  # noqa: F401
    from ..model import project, workspace  # noqa: F401
    from . import config  # noqa: F401


class _Answerer:
    """Answers a pull of a looked-at document (in the look, then in the inbox thread);
    stops answering for a document once it is changed, closed or opened again."""

    def __init__(self, handover: Handover, outbox: Outbox, touched: set[str]) -> None:
        self.handover = handover
        self.outbox = outbox
        self.by_uri = {
            u: look for look in handover.looks.values() if (u := look.uri) not in touched
        }

    def __call__(self, msg: dict[str, Any]) -> bool:
        method = msg.get("method")
        uri = _get(msg, "params", "textDocument", "uri")
        if method in _DOCUMENT or method == "textDocument/didOpen":
            self.by_uri.pop(uri, None)
            return False
        if method != "textDocument/diagnostic" or "id" not in msg:
            return False
        look = self.by_uri.get(uri)
        if look is None:
            return False
        if _get(msg, "params", "previousResultId") == look.result_id:
            report: dict[str, Any] = {"kind": "unchanged", "resultId": look.result_id}
        else:
            report = {"kind": "full", "resultId": look.result_id, "items": look.items}
        if not self.outbox.send({"jsonrpc": "2.0", "id": msg["id"], "result": report}):
            return False
        self.handover.pulled += 1
        return True


def _take_looks(
    params: dict[str, Any],
    caps: dict[str, Any],
    opened: dict[str, dict[str, Any]],
    handover: Handover,
) -> None:
    """The first look at each opened skill.md of a project in a workspace folder (as
    ``sync.first_look_at`` takes it)."""
    from ..model import layout
    from ..model.engine import PROFILES
    from ..model.project import Project, bulk_work
    from ..model.workspace import Workspace
    from .config import ProjectConfigs

    settings = handover.settings
    assert settings is not None
    folders = folders_of(params)
    model = Workspace()
    model.engine_override = settings.engine_version if settings.engine_version in PROFILES else None
    docs: dict[Path, dict[str, Any]] = {}
    for uri, td in opened.items():
        path = uri_to_path(uri)
        if path is None:
            continue
        version = td.get("version")
        model.open_buffer(path, td["text"], version if isinstance(version, int) else None)
        docs[path] = td
    uris = {p: td["uri"] for p, td in docs.items()}

    def uri_of(p: Path) -> str:
        return uris.get(p) or path_to_uri(p)

    configs = ProjectConfigs(_Host(settings, model))
    related = bool(
        _get(caps, "textDocument", "publishDiagnostics", "relatedInformation")
        or _get(caps, "textDocument", "diagnostic", "relatedInformation")
    )
    for path, td in docs.items():
        if not any(f == path or f in path.parents for f in folders):
            continue
        root = layout.find_project_for(path)
        kind = layout.classify(path, root) if root is not None else None
        if root is None or kind is None or kind[0] != layout.FileKind.SKILL_MD or not kind[1]:
            continue
        files = list(layout.project_files(root))
        if not any(p == path for p, _, _ in files):
            continue  # an ignored file: the index does not load it either
        with bulk_work():
            proj = Project.load_around(root, files, kind[1], model.read)
            diags = first_look_diagnostics(configs, proj, path, kind[1])
        if diags is None:
            continue  # the server takes it (and waits for the whole project)
        target = related_in(proj, uri_of) if related else None
        source = proj.files[path].source
        items = [diagnostic_json(d, source.index, target) for d in diags]
        handover.looks[path] = Look(
            path, td["uri"], source.version, proj, diags, items, result_id(diags)
        )
