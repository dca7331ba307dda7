"""The pygls server object's state and request guard: the lowest layer of ``lsp/``.

The services built on it (``config.py``, ``diagnostics.py``, ``watch.py``) take a
:class:`ServerBase`; :class:`.server.MantleServer` adds them to it; the handlers
(``sync.py`` and the feature modules) take the whole server; ``app.py`` wires them and
runs it.

State kept here: the model :class:`~mantle_lsp.model.workspace.Workspace` (projects with
open-buffer overlays), the editor URIs of open documents and the settings. Handlers live
in ``sync.py`` (documents, files, folders, configuration, initial index),
``diagnostics.py`` (pull) and one module per feature area (``completion.py``,
``hover.py``, ``navigation.py``, ``rename.py``, ``symbols.py``, ``lenses.py``,
``structure.py``, ``actions.py``, ``views.py``: ``app.FEATURE_AREAS``); each one only
converts and delegates to ``mantle_lsp.ide``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from .. import __version__, workers
from ..model.layout import Layout
from ..model.project import Project
from ..model.source import Source
from ..model.workspace import Workspace
from ..syntax.text import LineIndex
from . import convert, handshake
from .editor_settings import Settings as Settings
from .params import InvalidParams

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Doc:
    """A Mantle file of a known project, as the model currently has it."""

    project: Project
    path: Path
    source: Source
    # from a first look (``partial_ok``): the project loaded around the document's skill,
    # before the index; its other skills' files are read on use, its index is partial
    early: bool = False

    @property
    def index(self) -> LineIndex:
        return self.source.index


class FeatureFailed(Exception):
    """A request that cannot be served; the message is shown to the user."""


class Gate(Protocol):
    """What holds messages while the index loads (``gate.Gate``)."""

    def holds(self, message: Any) -> bool: ...

    def open(self, handle: Callable[[Any], None]) -> None: ...


class _Unreadable:
    """A message that could not be read; already answered (a request) or logged."""


_UNREADABLE = _Unreadable()


class MantleProtocol(LanguageServerProtocol):
    """Always negotiates UTF-16 positions (``convert`` speaks UTF-16 only), applies
    document changes itself, and answers every request, even one it cannot read."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls drops a request whose params do not fit its method without answering it
        (the client would wait forever) and pops up "Error in server" for each one: answer
        it with the error instead; a notification that cannot be read is logged."""
        method = data.get("method")
        # JSON-RPC lets a request or notification leave its params out: for one of ours
        # (untyped, e.g. `mantle/status`) that is null; a typed one says so itself
        if isinstance(method, str) and "params" not in data and not self.get_message_type(method):
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id = data.get("id")
            is_id = isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)
            if isinstance(method, str) and isinstance(msg_id, (int, str)) and is_id:
                # the envelope was read (jsonrpc, id, method): what does not fit is the params
                error = lsp.ResponseError(
                    code=JsonRpcInvalidParams.CODE,
                    message=f"{JsonRpcInvalidParams.MESSAGE}: the params of {method} are not valid",
                )
                self._send_response(msg_id, error=error)
            log.warning("ignored a message (%.40r): %s", method, exc.message)
            return _UNREADABLE

    def handle_message(self, message: Any) -> None:
        if message is _UNREADABLE:
            return
        if not hasattr(message, "jsonrpc"):  # valid JSON, not a JSON-RPC message (`[]`, `42`)
            log.warning("ignored a message that is not JSON-RPC: %.80r", message)
            return
        gate = self.gate
        if gate is not None and gate.holds(message):
            return  # handled when the index is loaded (gate.py)
        super().handle_message(message)

    # while the initial index loads: the messages that wait for it (gate.py)
    gate: Gate | None = None

    def open_gate(self) -> None:
        """Stop holding messages; handle those held, in order."""
        gate, self.gate = self.gate, None
        if gate is not None:
            gate.open(super().handle_message)

    # the initialize request answered before the server was imported (handshake.py): its
    # id, what was sent; and whether the server's own answer agreed (None: not compared)
    early: handshake.Early | None = None
    early_agreed: bool | None = None

    def _send_response(
        self, msg_id: Any, result: Any = None, error: lsp.ResponseError | None = None
    ) -> None:
        early = self.early
        if early is not None and early.answer is not None and msg_id == early.msg_id:
            self.early = None  # answered once: this is the server's own answer to it
            self._compare_early(early.answer, result, error)
            return
        super()._send_response(msg_id, result, error)

    def _compare_early(
        self, sent: dict[str, Any], result: Any, error: lsp.ResponseError | None
    ) -> None:
        if error is not None:
            self.early_agreed = False
            log.error("the initialize request, answered early, failed here: %s", error.message)
            return
        mine = json.loads(json.dumps(result, default=self._serialize_message))
        self.early_agreed = mine == sent
        if not self.early_agreed:
            log.warning(
                "the initialize answer sent early differs from the server's: sent %s, "
                "the server would have sent %s (regenerate capabilities.json: make "
                "capabilities)",
                json.dumps(sent, sort_keys=True),
                json.dumps(mine, sort_keys=True),
            )

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(
        self, params: lsp.InitializeParams
    ) -> Generator[Any, Any, lsp.InitializeResult]:
        general = params.capabilities.general
        if general is not None:
            general.position_encodings = [lsp.PositionEncodingKind.Utf16]
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        return result

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Callable[..., Any],
        callback: Callable[[Any], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """pygls 2.1 keeps the future of a generator or ``async`` handler in
        ``_request_futures`` under a fresh id and only a *response* removes it: every
        notification handled that way (didOpen, didClose, initialized, the folders
        notification, and an ``async`` handler a generator yields to) left one behind, for
        the life of the server (docs/upstream/pygls-notification-futures.md). The entry
        goes once its handler is done, whatever answered it."""

        def done(future: Any) -> None:
            try:
                callback(future)
            finally:
                if self._request_futures.get(msg_id) is future:
                    if self._cancelling_all:  # pygls is iterating over them: after it
                        self._forgotten += (msg_id,)
                    else:
                        del self._request_futures[msg_id]

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    _cancelling_all = False
    _forgotten: tuple[Any, ...] = ()

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls cancels every pending handler while iterating over ``_request_futures``;
        a handler still running then (the initial index, when the editor quits during it)
        is forgotten by :meth:`_execute_handler`'s callback, which must wait until the
        iteration is over ("dictionary changed size during iteration" otherwise)."""
        self._cancelling_all, self._forgotten = True, ()
        try:
            yield from super().lsp_shutdown(*args)
        finally:
            self._cancelling_all = False
            forgotten: tuple[Any, ...] = self._forgotten
            for msg_id in forgotten:
                self._request_futures.pop(msg_id, None)
            self._forgotten = ()

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """A ``$/cancelRequest`` for a request already answered is routine (VS Code cancels
        its diagnostic pulls on every keystroke, often after the answer went out): pygls
        logs each one as a warning, which VS Code shows as an error line. Debug here."""
        if msg_id not in self._request_futures:
            log.debug("cancel for %r: already answered", msg_id)
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> None:
        """Apply the changes with the protocol's line breaks (``convert.apply_change``),
        not pygls' own; a change to a document that was never opened is ignored. A plain
        function, not a generator like pygls' own: the commonest message needs no future
        and no bookkeeping (see :meth:`_execute_handler`)."""
        uri = params.text_document.uri
        doc = self.workspace.text_documents.get(unquote(uri))
        if doc is None:
            log.warning("didChange for %s, which is not open: ignored", uri)
            return
        text = doc.source
        for change in params.content_changes:
            text = convert.apply_change(text, change)
        self.workspace.put_text_document(
            lsp.TextDocumentItem(
                uri=uri,
                language_id=doc.language_id or "",
                version=params.text_document.version,
                text=text,
            )
        )
        handler = self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:  # sync.did_change: a plain function too
            handler(params)


STATUS = "mantle/status"  # a request: MantleServer.status (docs/lsp.md)

SETTLE_CHUNK = 16  # pending files parsed per turn of the event loop (~5 ms)
SETTLE_PAUSE = 0.0005  # seconds between two turns
SETTLE_DELAY = 0.05  # seconds after the index before the first turn


class ServerBase(LanguageServer):
    """The server's state and request guard, without the services built on it (the
    diagnostics publisher, the configuration files, the file watcher: see
    :class:`.server.MantleServer`)."""

    def __init__(self) -> None:
        super().__init__(
            "mantle-lsp",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=MantleProtocol,
        )
        # what exists on disk, kept until a file event says otherwise (lsp/sync.py)
        self.model = Workspace(Layout(keep=True))
        self.settings = Settings()
        self.open_uris: dict[Path, str] = {}
        self.folders: list[Path] = []
        self.on_demand: set[Path] = set()  # nested projects loaded for an open document
        self.pull_diagnostics = False
        self.indexed = False
        # documents opened before the initial index: their first look (sync.first_looks)
        self.opened_early: list[Path] = []
        self.early_projects: dict[Path, Project] = {}  # their first look's project
        self.looked_early = False  # the first looks were taken (sync.first_looks)
        # learnt before the server was imported (early.py), taken once by sync.py
        self.early_settings: Settings | None = None
        self.early_progress: str | None = None
        self.early_looks = 0  # documents looked at then
        self.look_early: Callable[[Path], None] = lambda path: None  # set by sync
        self.jobs = 1  # processes for the initial index of a large project (serve --jobs)
        self._settling: asyncio.Task[None] | None = None
        self.index_started = 0.0  # time.monotonic() when the last index_folders began
        self._workers: list[workers.Spawned] = []  # started ahead of a spread index
        self.early_workers = 0  # how many of them were started before the server was imported
        self._retired: list[workers.Spawned] = []  # done, their exit not yet awaited

    # -- worker processes (parallel.py) -------------------------------------------------
    def adopt_workers(self, started: list[workers.Spawned]) -> None:
        """Workers started before the server was imported (``handshake.py``)."""
        self._workers = [*self._workers, *started]
        self.early_workers = len(started)

    def start_workers(self, n: int) -> None:
        """Have ``n`` worker interpreters started now (those started before the server
        was imported count), so that their start-up overlaps the editor's handshake; a
        failure only means the index runs in one process."""
        try:
            if len(self._workers) < n:
                self._workers += workers.spawn_workers(n - len(self._workers))
        except OSError as exc:
            self.log(f"cannot start worker processes: {exc}", lsp.MessageType.Warning)

    def take_workers(self, n: int) -> list[workers.Spawned]:
        """``n`` idle workers: those started ahead, then new ones."""
        taken, self._workers = self._workers[:n], self._workers[n:]
        if len(taken) < n:
            taken += workers.spawn_workers(n - len(taken))
        return taken

    def retire_workers(self, done: list[workers.Spawned]) -> None:
        """Workers that have done their part: their pipes close now; their exit (the
        kernel freeing their memory takes a few dozen ms) is awaited once the index is
        complete, not before the diagnostics go out."""
        workers.release(done)
        self._retired.extend(done)

    def stop_workers(self, retired: bool = False) -> None:
        """Let the workers started ahead and not needed go (they exit when their stdin
        closes); with ``retired``, also wait for the retired ones."""
        workers.reap(self._workers)
        self._workers = []
        if retired:
            workers.reap(self._retired)
            self._retired = []

    # -- messages during the index (gate.py) ---------------------------------------------
    @property
    def _mantle(self) -> MantleProtocol:
        protocol = self.protocol
        assert isinstance(protocol, MantleProtocol)
        return protocol

    def hold_messages(self, gate: Gate) -> bool:
        """Hold the messages that must wait for the projects being loaded (``gate``'s
        policy); False when they are held already (by an outer caller, who lets go)."""
        if self.holding_messages:
            return False
        self._mantle.gate = gate
        return True

    @property
    def holding_messages(self) -> bool:
        """Whether messages are held while projects load (:meth:`hold_messages`)."""
        return self._mantle.gate is not None

    def let_go(self) -> None:
        """Handle the held messages, in order; from now on each is handled as it comes."""
        self._mantle.open_gate()

    # -- partial projects ---------------------------------------------------------------
    def settle(self) -> None:
        """Before any handler runs: parse the files a spread initial index left pending
        (see :func:`sync.index_folders`), so that every feature sees whole projects."""
        self._cancel_background()
        pending = self.model.has_pending
        if pending:
            self.model.settle()
        if self._retired:
            workers.reap(self._retired)
            self._retired = []
        if pending:
            self._index_completed("a request")

    def settle_in_background(self) -> None:
        """Parse the pending files a few at a time while the editor is idle."""
        if not self.model.has_pending:
            return

        async def run() -> None:
            # the requests that follow the index (a pulling client's first pulls) first
            await asyncio.sleep(SETTLE_DELAY)
            while not self.model.settle(SETTLE_CHUNK):
                # not sleep(0): the stdio reader is a thread that needs the GIL, and a
                # few loop turns, to hand over each incoming message
                await asyncio.sleep(SETTLE_PAUSE)
            self._settling = None
            self.stop_workers(retired=True)
            self._index_completed("the background")

        self._settling = asyncio.get_running_loop().create_task(run())

    def stop_background(self) -> None:
        """At shutdown: stop parsing pending files, let every worker go."""
        self._cancel_background()
        self.stop_workers(retired=True)

    def _cancel_background(self) -> None:
        if self._settling is not None:
            self._settling.cancel()
            self._settling = None

    def _index_completed(self, by: str) -> None:
        ms = int((time.monotonic() - self.index_started) * 1000)
        self.log(
            f"index complete: every file parsed in this process {ms} ms after the index "
            f"began (finished by {by}){_children_peak()}"
        )

    # -- client capabilities ------------------------------------------------------------
    def client_supports(self, field: str) -> bool:
        """Whether the client declared ``field`` (nothing before ``initialize``)."""
        caps = getattr(self.protocol, "client_capabilities", None)
        return caps is not None and bool(get_capability(caps, field, False))

    # -- documents and files ------------------------------------------------------------
    def doc(self, uri: str, partial_ok: bool = False) -> Doc | None:
        """The Mantle file behind ``uri``; None when it is not one (or is outside every
        project): such requests get empty results. With ``partial_ok`` (features that
        read only the file itself: outline, semantic tokens, folding, selection ranges,
        links), a document opened before the initial index is served from its first
        look's project (``sync.first_look_at``) instead of waiting for the index."""
        path = convert.uri_to_path(uri)
        if path is None:
            return None
        proj = self.model.project_for(path)
        early = False
        if proj is None and partial_ok:
            if path not in self.early_projects:
                self.look_early(path)  # asked before the first looks were taken
            proj = self.early_projects.get(path)
            early = True
        if proj is None:
            return None
        pf = proj.files.get(path)
        if pf is None:
            return None
        return Doc(proj, path, pf.source, early)

    def source_of(self, path: Path) -> Source:
        """The current text of any file: a project's parsed source, else overlay or disk."""
        proj = self.model.project_for(path)
        if proj is not None:
            pf = proj.files.get(path)
            if pf is not None:
                return pf.source
        return self.model.read(path)

    def index_of(self, path: Path) -> LineIndex:
        return self.source_of(path).index

    def on_demand_file(self, path: Path) -> bool:
        """Whether ``path`` belongs to a nested project loaded for an open document
        (:func:`sync.ensure_project`): only its open documents report diagnostics."""
        if not self.on_demand:
            return False
        proj = self.model.project_for(path)
        return proj is not None and proj.root in self.on_demand

    def uri_of(self, path: Path) -> str:
        return self.open_uris.get(path) or convert.path_to_uri(path)

    def open_version(self, path: Path) -> int | None:
        """The editor's current version of an open document (None when not open)."""
        uri = self.open_uris.get(path)
        if uri is None:
            return None
        doc = self.workspace.text_documents.get(uri)
        return doc.version if doc is not None else None

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside a request (e.g. a message that is not JSON) go to the log, not to
        a pop-up; unreadable JSON is answered with a parse error (id null, as JSON-RPC
        wants)."""
        if isinstance(error, json.JSONDecodeError):
            self.protocol._send_data(
                lsp.ResponseErrorMessage(
                    id=None, error=lsp.ResponseError(code=-32700, message=f"Parse error: {error}")
                )
            )
        if source is FeatureRequestError:
            return  # already answered to the request
        self.log(f"protocol error: {type(error).__name__}: {error}", lsp.MessageType.Error)

    # -- logging ------------------------------------------------------------------------
    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        log.info("%s", message)
        try:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))
        except Exception:  # pragma: no cover - no client connected
            log.debug("cannot send window/logMessage", exc_info=True)

    def log_exception(self, what: str, exc: BaseException) -> None:
        tb = traceback.extract_tb(exc.__traceback__)
        frames = "; ".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in tb[-4:])
        self.log(
            f"{what} failed: {type(exc).__name__}: {exc} (at {frames})",
            lsp.MessageType.Error,
        )

    def quietly(self, request: Any) -> None:
        """A server-to-client request whose answer does not matter (a refresh): an error
        answer is logged, not raised."""

        def done(fut: Any) -> None:
            if not fut.cancelled() and fut.exception() is not None:
                log.info("client answered with an error: %s", fut.exception())

        request.add_done_callback(done)

    # -- registration helpers -----------------------------------------------------------
    def request(
        self, method: str, options: Any = None, settle: bool = True
    ) -> Callable[[Callable[[P], R]], Callable[[P], R]]:
        """Register a request handler that answers errors with a ResponseError, logs
        them, and keeps serving. Unless ``settle`` is False (the handler does it when it
        must), pending files are parsed first (:meth:`settle`)."""

        def deco(fn: Callable[[P], R]) -> Callable[[P], R]:
            if _is_async(fn):
                afn: Callable[[P], Awaitable[Any]] = fn  # type: ignore[assignment]

                @functools.wraps(fn)
                async def awrapper(params: P) -> Any:
                    try:
                        if settle:
                            self.settle()
                        return await afn(params)
                    except Exception as exc:
                        raise self._response_error(method, exc) from exc

                self.feature(method, options)(awrapper)
                return fn

            @functools.wraps(fn)
            def wrapper(params: P) -> R:
                try:
                    if settle:
                        self.settle()
                    return fn(params)
                except Exception as exc:
                    raise self._response_error(method, exc) from exc

            self.feature(method, options)(wrapper)
            return fn

        return deco

    def notification(
        self, method: str, options: Any = None, settle: bool = True
    ) -> Callable[[Callable[[P], R]], Callable[[P], R]]:
        """Register a notification handler whose failures are logged, never fatal (and,
        unless ``settle`` is False, that runs on whole projects: see :meth:`settle`)."""

        def deco(fn: Callable[[P], R]) -> Callable[[P], R]:
            if _is_async(fn):
                afn: Callable[[P], Awaitable[Any]] = fn  # type: ignore[assignment]

                @functools.wraps(fn)
                async def awrapper(params: P) -> None:
                    try:
                        if settle:
                            self.settle()
                        await afn(params)
                    except Exception as exc:
                        self.log_exception(method, exc)

                self.feature(method, options)(awrapper)
                return fn

            @functools.wraps(fn)
            def wrapper(params: P) -> None:
                try:
                    if settle:
                        self.settle()
                    fn(params)
                except Exception as exc:
                    self.log_exception(method, exc)

            self.feature(method, options)(wrapper)
            return fn

        return deco

    def _response_error(self, method: str, exc: Exception) -> JsonRpcException:
        if isinstance(exc, InvalidParams):
            return JsonRpcInvalidParams(str(exc))
        if isinstance(exc, FeatureFailed):
            return JsonRpcException(str(exc), code=lsp.LSPErrorCodes.RequestFailed)
        if isinstance(exc, convert.InvalidUri):
            return JsonRpcInvalidParams(str(exc))
        if isinstance(exc, JsonRpcException):
            return exc
        self.log_exception(method, exc)
        return JsonRpcInternalError(f"mantle-lsp: {method} failed: {type(exc).__name__}: {exc}")


def _children_peak() -> str:
    """The largest peak memory of the worker processes waited for, where the platform
    tells it (not on Windows)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return ""
    return (
        f" (workers' peak RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024} MB)"
    )


def rss_kb() -> int:
    """This process's resident memory in KiB (Linux: now; elsewhere: the peak)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn)
