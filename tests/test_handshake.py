"""`mantle-lsp serve` answers the editor's `initialize` before it imports the server
(lsp/handshake.py): the answer is the one the server itself would give, for every client;
the server then reads the same message as if nobody had; a first message that is not
such a request is left to the server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities

from mantle_lsp import workers
from mantle_lsp.cli.main import build_parser
from mantle_lsp.lsp import capabilities, handshake
from mantle_lsp.lsp.app import create_server

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[1]
ENTRY = [sys.executable, "-c", "import sys; from mantle_lsp.cli.entry import entry; entry()"]


def frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(caps: dict[str, Any], msg_id: int | str = 1) -> dict[str, Any]:
    params = {"processId": None, "rootUri": None, "capabilities": caps}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


class Client:
    """A client on the server's pipes, reading its answers in order."""

    def __init__(self, *args: str, extra: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*(extra or ENTRY), "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        out = self.proc.stdout
        assert out is not None
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            byte = out.read(1)
            assert byte, "the server closed its output"
            head += byte
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        msg: dict[str, Any] = json.loads(out.read(length))
        return msg

    def answer(self, msg_id: int | str) -> dict[str, Any]:
        while True:
            msg = self.read()
            if msg.get("id") == msg_id and "method" not in msg:
                return msg

    def finish(self) -> str:
        self.send(frame({"jsonrpc": "2.0", "id": "end", "method": "shutdown"}))
        self.answer("end")
        self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        self.proc.wait(10)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


# -- the answer is the server's ---------------------------------------------------------------


def test_capabilities_json_is_up_to_date() -> None:
    """`make capabilities` regenerates it from the server; a new feature, option or
    version needs it."""
    assert handshake.CAPABILITIES.read_text(encoding="utf-8") == capabilities.render(
        capabilities.generate()
    ), "server/mantle_lsp/lsp/capabilities.json is out of date: run make capabilities"


def _client_json(caps: lsp.ClientCapabilities) -> dict[str, Any]:
    converter = create_server().protocol._converter
    out: dict[str, Any] = converter.unstructure(caps)
    return out


REAL_CLIENTS = [
    "visual-studio-code",
    "neovim",
    "neovim@v0.6.1",
    "emacs",
]


@pytest.mark.parametrize("name", REAL_CLIENTS)
def test_the_early_answer_is_the_servers_for_real_clients(name: str) -> None:
    caps = _client_json(client_capabilities(name))
    early = handshake._answer_to(initialize(caps))
    assert early is not None
    assert early == capabilities.pygls_answer(caps)


# Every client capability pygls' capability builder or this server's initialize reads.
SWITCHABLE = [
    ("textDocument", "diagnostic"),
    ("textDocument", "rename", "prepareSupport"),
    ("textDocument", "synchronization", "willSave"),
    ("textDocument", "synchronization", "willSaveWaitUntil"),
    ("workspace", "fileOperations", "willRename"),
    ("workspace", "fileOperations", "didRename"),
    ("workspace", "fileOperations", "willCreate"),
    ("workspace", "fileOperations", "didCreate"),
    ("workspace", "fileOperations", "willDelete"),
    ("workspace", "fileOperations", "didDelete"),
    ("workspace", "configuration"),
    ("workspace", "workspaceFolders"),
    ("notebookDocument", "synchronization", "dynamicRegistration"),
    ("window", "workDoneProgress"),
]


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.sampled_from([None, True, False]), min_size=len(SWITCHABLE),
                       max_size=len(SWITCHABLE)))  # fmt: skip
def test_the_early_answer_is_the_servers_for_any_mix_of_capabilities(
    values: list[bool | None],
) -> None:
    """Each capability missing, true or false (an object for `diagnostic`, which is one)."""
    caps: dict[str, Any] = {"general": {"positionEncodings": ["utf-8", "utf-16"]}}
    for path, value in zip(SWITCHABLE, values, strict=True):
        if value is None or (value is False and path[-1] == "diagnostic"):
            continue
        node = caps
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = {} if path[-1] == "diagnostic" else value
    assert handshake._answer_to(initialize(caps)) == capabilities.pygls_answer(caps)


# -- the command lines it takes ---------------------------------------------------------------

TOKENS = ["--stdio", "--log-level", "debug", "warning", "loud", "--log-file", "log.txt",
          "--jobs", "2", "0", "auto", "x", "--tcp", "1:2", "--help", "-h", "--jobs=3",
          "--log-level=info", "--log-file=", "--verbose"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(args=st.lists(st.sampled_from(TOKENS), max_size=5))
def test_every_command_line_answered_early_is_one_the_parser_accepts(args: list[str]) -> None:
    if handshake.stdio_jobs(["serve", *args]) is None:
        return
    parsed = build_parser().parse_args(["serve", *args])  # exits on an error: the test fails
    assert parsed.tcp is None


def test_the_usual_command_lines_are_answered_early() -> None:
    for args in ([], ["--stdio"], ["--jobs", "2", "--stdio"], ["--log-level=debug"]):
        assert handshake.stdio_jobs(["serve", *args]) is not None, args
    for args in (["--tcp", "127.0.0.1:9"], ["--help"], ["--jobs", "0"], ["--log-level"]):
        assert handshake.stdio_jobs(["serve", *args]) is None, args
    assert handshake.stdio_jobs(["check"]) is None


# -- the server, end to end -------------------------------------------------------------------


SPY = """\
import sys
from mantle_lsp.lsp import handshake
real = handshake.answer_first
def spy(stdin, stdout, jobs=1):
    early = real(stdin, stdout, jobs)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in
                    ("mantle_lsp", "pygls", "lsprotocol", "yaml", "lark", "attrs", "cattrs"))
    print("LOADED " + " ".join(loaded), file=sys.stderr, flush=True)
    return early
handshake.answer_first = spy
from mantle_lsp.cli.entry import entry
entry()
"""


def test_initialize_is_answered_before_the_server_is_imported() -> None:
    client = Client("--stdio", extra=[sys.executable, "-c", SPY])
    client.send(frame(initialize({"textDocument": {"rename": {"prepareSupport": True}}})))
    answer = client.answer(1)
    assert answer["result"]["serverInfo"]["name"] == "mantle-lsp"
    assert answer["result"]["capabilities"]["renameProvider"] == {"prepareProvider": True}
    client.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "mantle/status", "params": None}))
    status = client.answer(2)
    err = client.finish()
    loaded = next(line for line in err.splitlines() if line.startswith("LOADED")).split()[1:]
    assert set(loaded) <= {
        "mantle_lsp",
        "mantle_lsp.bytecode",  # the standard library only: the bytecode cache
        "mantle_lsp.cli",
        "mantle_lsp.cli.entry",
        "mantle_lsp.lsp",
        "mantle_lsp.lsp.handshake",
        "mantle_lsp.workers",  # the standard library only: to start index workers early
    }, loaded
    assert status["result"]["earlyInitialize"] is True  # the server's own answer agreed
    assert "differs" not in err


def test_the_server_answers_once_and_then_serves_as_usual(tmp_path: Path) -> None:
    (tmp_path / "agent.yml").write_text("name: a\n")
    skill = tmp_path / "skills" / "s" / "skill.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: S.\n---\nRead @memory.s.nope.\n")
    client = Client()
    caps = {"textDocument": {"publishDiagnostics": {}}}
    msg = initialize(caps, msg_id="init")
    msg["params"]["rootUri"] = tmp_path.as_uri()
    client.send(frame(msg))
    client.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    doc = {"uri": skill.as_uri(), "languageId": "mantle-skill", "version": 1,
           "text": skill.read_text()}  # fmt: skip
    client.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": doc}}))  # fmt: skip
    answers = 0
    deadline = time.monotonic() + 60
    found: list[dict[str, Any]] = []
    while not found and time.monotonic() < deadline:
        m = client.read()
        if m.get("id") == "init":
            answers += 1
        if (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == doc["uri"]
        ):
            found = [d for d in m["params"]["diagnostics"] if "nope" in d["message"]]
        if m.get("method") in ("client/registerCapability", "window/workDoneProgress/create"):
            client.send(frame({"jsonrpc": "2.0", "id": m["id"], "result": None}))
        if m.get("method") == "workspace/configuration":
            client.send(frame({"jsonrpc": "2.0", "id": m["id"], "result": [{}]}))
    assert found, "the opened document's diagnostics"
    client.finish()
    assert answers == 1


@pytest.mark.parametrize(
    "first",
    [
        frame({"jsonrpc": "2.0", "id": 7, "method": "mantle/status", "params": None}),
        frame({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"capabilities": 3}}),
        frame({"jsonrpc": "2.0", "method": "initialize", "params": {}}),  # no id
        b"Content-Length: 5\r\n\r\n[1,2]",  # JSON, not JSON-RPC
        b"Content-Type: x\r\n\r\n",  # no length
    ],
    ids=["not-initialize", "odd-capabilities", "notification", "not-json-rpc", "no-length"],
)
def test_a_first_message_it_does_not_answer_goes_to_the_server(first: bytes) -> None:
    """The server reads it as before: it answers a request with an id (once), ignores
    the others, and goes on reading."""
    client = Client()
    nxt = {"jsonrpc": "2.0", "id": "next", "method": "mantle/status", "params": None}
    client.send(first + frame(nxt))
    seen = []
    while not seen or seen[-1].get("id") != "next":
        seen.append(client.read())
    first_ids = [m.get("id") for m in seen if "method" not in m]
    assert first_ids == ([7, "next"] if b'"id": 7' in first else ["next"])
    client.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    client.proc.wait(10)


def test_a_difference_is_logged_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    server = create_server()
    proto = server.protocol
    sent: list[Any] = []
    proto._send_data = sent.append  # type: ignore[method-assign]
    proto.early = handshake.Early(b"", 1, {"capabilities": {}, "serverInfo": {}})  # type: ignore[attr-defined]
    result = lsp.InitializeResult(capabilities=lsp.ServerCapabilities(hover_provider=True))
    proto._send_response(1, result)
    assert sent == []  # never answered twice
    assert proto.early_agreed is False  # type: ignore[attr-defined]
    assert "differs from the server's" in caplog.text
    proto._send_response(2, None)
    assert len(sent) == 1  # other answers go out


def test_a_large_workspace_gets_its_index_workers_started_with_the_answer(
    tmp_path: Path,
) -> None:
    """`initialize` names a project of MIN_SKILLS skills: the index workers start right
    after the early answer (their start-up overlaps the server's), and the index is
    spread over them."""
    sys.path.insert(0, str(REPO / "bench"))
    from generate import generate

    root = generate(tmp_path / "big", workers.MIN_SKILLS)
    client = Client("--jobs", "2")
    msg = initialize({"window": {"workDoneProgress": False}})
    msg["params"]["workspaceFolders"] = [{"uri": root.as_uri(), "name": "big"}]
    client.send(frame(msg))
    client.answer(1)
    client.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    summary = ""
    deadline = time.monotonic() + 90
    while "initial index" not in summary and time.monotonic() < deadline:
        m = client.read()
        if m.get("method") == "window/logMessage":
            summary = m["params"]["message"]
        elif "method" in m and "id" in m:
            result: Any = [{}] if m["method"] == "workspace/configuration" else None
            client.send(frame({"jsonrpc": "2.0", "id": m["id"], "result": result}))
    assert "spread over 2 processes" in summary, summary
    client.send(frame({"jsonrpc": "2.0", "id": 2, "method": "mantle/status", "params": None}))
    status = client.answer(2)["result"]
    client.finish()
    assert status["earlyWorkers"] == 1
    assert status["earlyInitialize"] is True
