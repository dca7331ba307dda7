"""Through the real server over stdio (the console script, a raw JSON-RPC client): the
params of our `mantle/*` requests, omitted (JSON-RPC allows it) or of the wrong shape,
and the exit status after `exit`, with or without `shutdown` before it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(120)

CONSOLE_SCRIPT = Path(sys.executable).parent / "mantle-lsp"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
INVALID_PARAMS = -32602

_OMIT = object()


class Client:
    """The server on pipes; answers its own requests (registrations, configuration)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [str(CONSOLE_SCRIPT), "serve"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.buf = b""
        self.next_id = 0
        self.skill = ""  # a document's URI, for the requests that take one
        result = self.request("initialize", {"processId": None, "rootUri": root.as_uri(),
                                             "capabilities": {}})  # fmt: skip
        assert "capabilities" in result["result"]
        self.notify("initialized", {})

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + 60
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                n = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(rest) >= n:
                    self.buf = rest[n:]
                    msg: dict[str, Any] = json.loads(rest[:n])
                    return msg
            assert time.monotonic() < deadline, "no answer"
            chunk = os.read(fd, 65536)
            assert chunk, "the server closed its output"
            self.buf += chunk

    def notify(self, method: str, params: Any = _OMIT) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not _OMIT:
            msg["params"] = params
        self.send(msg)

    def request(self, method: str, params: Any = _OMIT) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not _OMIT:
            msg["params"] = params
        self.send(msg)
        while True:
            m = self.read()
            if "method" in m and "id" in m:  # a request of the server's: answer it
                result: Any = [{}] if m["method"] == "workspace/configuration" else None
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
            elif m.get("id") == self.next_id:
                return m

    def exit_status(self, shutdown: bool) -> int:
        if shutdown:
            assert "error" not in self.request("shutdown")
        self.notify("exit")
        return self.proc.wait(30)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    root = tmp_path_factory.mktemp("params") / "telecom"
    shutil.copytree(EXAMPLES / "telecom", root)
    c = Client(root)
    c.skill = (root / "skills" / "roaming_pass" / "skill.md").as_uri()
    yield c
    if c.proc.poll() is None:
        c.exit_status(shutdown=True)


def test_status_with_params_omitted_or_empty_answers(client: Client) -> None:
    """JSON-RPC lets a request leave its params out; `mantle/status` answered -32603."""
    for params in (_OMIT, None, {}, []):
        answer = client.request("mantle/status", params)
        assert "error" not in answer, (params, answer)
        assert answer["result"]["indexed"] in (True, False)


SKILL = "$skill"  # replaced by the document's URI


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("mantle/status", 5, "mantle/status takes no params"),
        ("mantle/status", "x", "mantle/status takes no params"),
        ("mantle/flowGraph", _OMIT, "mantle/flowGraph takes {textDocument"),
        ("mantle/flowGraph", 5, "mantle/flowGraph takes {textDocument"),
        ("mantle/flowGraph", {"textDocument": 5}, "`textDocument.uri` must be a string"),
        ("mantle/flowGraph", {"textDocument": {"uri": SKILL}}, "takes a position or a block"),
        (
            "mantle/flowGraph",
            {"textDocument": {"uri": SKILL}, "position": {"line": "1", "character": 0}},
            "`position.line` must be an integer",
        ),
        ("mantle/flowGraph", {"textDocument": {"uri": SKILL}, "block": 3}, "`block` must be"),
        ("mantle/agentMap", _OMIT, "mantle/agentMap takes {textDocument"),
        ("mantle/agentMap", {"textDocument": {"uri": 5}}, "`textDocument.uri` must be a string"),
        ("mantle/agentMap", {"textDocument": {"uri": SKILL}, "skill": []}, "`skill` must be"),
        ("mantle/previewPrompt", [], "mantle/previewPrompt takes {textDocument"),
        (
            "mantle/previewPrompt",
            {"textDocument": {"uri": SKILL}, "memory": {"card": {}}},
            "`memory` must be a string",
        ),
        ("mantle/references", _OMIT, "mantle/references takes the params of"),
        ("mantle/references", {"textDocument": {"uri": SKILL}}, "`position.line` must be"),
        ("mantle/layersManifest", 5, "mantle/layersManifest takes {textDocument?"),
        ("mantle/layersManifest", {"cascade": 5}, "`cascade` must be a string"),
        ("textDocument/hover", {"textDocument": 5}, "the params of textDocument/hover"),
    ],
)
def test_wrong_params_answer_invalid_params(
    client: Client, method: str, params: Any, message: str
) -> None:
    """Wrong params to any `mantle/*` request answered -32603 Internal Error (or were
    ignored); they are -32602 Invalid Params, with what the request takes."""
    if params is not _OMIT:
        params = json.loads(json.dumps(params).replace(SKILL, client.skill))
    answer = client.request(method, params)
    assert "result" not in answer, answer
    assert answer["error"]["code"] == INVALID_PARAMS, answer
    assert message in answer["error"]["message"]


def test_right_params_still_answer(client: Client) -> None:
    skill = client.skill
    flow = client.request("mantle/flowGraph", {"textDocument": {"uri": skill}, "block": "main"})
    assert "error" not in flow and flow["result"]["nodes"]
    amap = client.request("mantle/agentMap", {"textDocument": {"uri": skill}})
    assert "error" not in amap and amap["result"]["nodes"]
    assert "error" not in client.request("mantle/layersManifest")  # params omitted: all


@pytest.mark.parametrize("shutdown", [True, False], ids=["after shutdown", "without shutdown"])
def test_exit_status_follows_the_spec(tmp_path: Path, shutdown: bool) -> None:
    """`exit` without `shutdown` exited 0; the spec says 1."""
    root = tmp_path / "telecom"
    shutil.copytree(EXAMPLES / "telecom", root)
    c = Client(root)
    assert "error" not in c.request("mantle/status")
    assert c.exit_status(shutdown) == (0 if shutdown else 1)
