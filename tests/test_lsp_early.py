"""The first look before the server is imported (lsp/early.py, issue 32): an editor that
opens a skill.md as it starts the server (as VS Code does: `initialized`, `didOpen` and,
when it pulls, `textDocument/diagnostic` at once) gets that document's diagnostics from
the analysis alone, before pygls and lsprotocol are imported; and they are exactly what
the server publishes for it once the whole project is loaded, the configuration file and
the editor's settings applied."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from support import write_fixture
from test_lsp_support import TELECOM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import AGENT_FIELD, generate_agent

pytestmark = pytest.mark.timeout(180)

SERVER = [sys.executable, "-m", "mantle_lsp", "serve"]


def frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Editor:
    """A client as VS Code talks: every message the server sends is kept (with when it
    came), its requests are answered (the ``mantle`` settings, or null)."""

    def __init__(
        self, root: Path, pull: bool, settings: dict[str, Any] | None = None, answer: bool = True
    ) -> None:
        self.root = root
        self.pull = pull
        self.settings = settings or {}
        self.answering = answer
        self.proc = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.got: list[dict[str, Any]] = []
        self.lock = threading.RLock()
        self.news: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 100

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.news.put(None)
                    return
                if not line.strip():
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            assert length is not None
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg and self.answering:
                if msg["method"] == "workspace/configuration":
                    result: Any = [self.settings for _ in msg["params"]["items"]]
                else:
                    result = None
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            with self.lock:
                self.got.append(msg)
            self.news.put(msg)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(frame(msg))
            self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def until(self, test: Any, what: str, timeout: float = 90) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                found = test(list(self.got))
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            try:
                if self.news.get(timeout=min(left, 0.5)) is None:
                    raise AssertionError(f"the server exited while waiting for {what}")
            except queue.Empty:
                pass

    def answer(self, msg_id: int) -> dict[str, Any]:
        return self.until(
            lambda got: next((m for m in got if m.get("id") == msg_id and "method" not in m), None),
            f"the answer to {msg_id}",
        )

    def start(self, docs: list[Path], change: Path | None = None) -> dict[Path, int | None]:
        """initialize; then, at once, initialized, the didOpens (and the pulls)."""
        caps: dict[str, Any] = {
            "workspace": {
                "configuration": True,
                "didChangeWatchedFiles": {"dynamicRegistration": True},
                **({"diagnostics": {"refreshSupport": True}} if self.pull else {}),
            },
            "window": {"workDoneProgress": True},
            "textDocument": {
                "publishDiagnostics": {"relatedInformation": True},
                **(
                    {"diagnostic": {"relatedDocumentSupport": True, "relatedInformation": True}}
                    if self.pull
                    else {}
                ),
            },
        }
        uri = self.root.as_uri()
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": self.root.name}],
                    "capabilities": caps,
                },
            }
        )
        self.answer(1)
        burst = [{"jsonrpc": "2.0", "method": "initialized", "params": {}}]
        pulls: dict[Path, int | None] = {}
        for path in docs:
            td = {"uri": path.as_uri(), "languageId": "mantle-skill", "version": 1,
                  "text": path.read_text(encoding="utf-8")}  # fmt: skip
            burst.append(
                {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": td}}
            )
            if path == change:
                burst.append(self.did_change(path, 2, td["text"] + "\nMore @memory.x.y here.\n"))
        self.send_all(burst)
        for path in docs:
            pulls[path] = self.request(
                "textDocument/diagnostic", {"textDocument": {"uri": path.as_uri()}}
            ) if self.pull else None  # fmt: skip
        return pulls

    def send_all(self, msgs: list[dict[str, Any]]) -> None:
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(b"".join(frame(m) for m in msgs))
            self.proc.stdin.flush()

    @staticmethod
    def did_change(path: Path, version: int, text: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": path.as_uri(), "version": version},
                "contentChanges": [{"text": text}],
            },
        }

    def published(self, path: Path) -> list[dict[str, Any]]:
        with self.lock:
            return [
                m["params"]
                for m in self.got
                if m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == path.as_uri()
            ]

    def indexed(self) -> None:
        self.until(
            lambda got: any(
                m.get("method") == "window/logMessage"
                and m["params"]["message"].startswith("initial index")
                for m in got
            ),
            "the initial index",
        )

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = self.answer(self.request("mantle/status", None))["result"]
        return result

    def finish(self) -> None:
        self.answer(self.request("shutdown", None))
        self.send({"jsonrpc": "2.0", "method": "exit"})
        self.proc.wait(10)


def _loaded_server_says(ed: Editor, path: Path) -> list[dict[str, Any]]:
    """What the server, its whole project loaded, publishes (or answers) for ``path``."""
    if ed.pull:
        report = ed.answer(
            ed.request("textDocument/diagnostic", {"textDocument": {"uri": path.as_uri()}})
        )["result"]
        assert report["kind"] == "full"
        items: list[dict[str, Any]] = report["items"]
        return items
    text = path.read_text(encoding="utf-8")
    ed.send(Editor.did_change(path, 9, text))  # the same text: computed again, published
    found = ed.until(
        lambda got: [p for p in ed.published(path) if p["version"] == 9], f"{path.name} again"
    )
    return list(found[-1]["diagnostics"])


def _early(ed: Editor, path: Path, pull_id: int | None) -> dict[str, Any]:
    """The first publication of ``path`` (push), or the answer to its first pull."""
    if pull_id is None:
        found = ed.until(lambda got: ed.published(path), f"the diagnostics of {path.name}")
        return {"items": found[0]["diagnostics"], "version": found[0]["version"]}
    answer = ed.answer(pull_id)
    assert "result" in answer, answer
    return dict(answer["result"])


def _agent(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = generate_agent(tmp_path / "agent", 120)
    # a planted mistake next to a valid read of another skill's field
    skill = root / "skills" / "s50" / "skill.md"
    skill.write_text(
        skill.read_text(encoding="utf-8")
        + f"\nAlso read @memory.s50.planted and @memory.s54.{AGENT_FIELD}.\n",
        encoding="utf-8",
    )
    return root, [skill, root / "skills" / "s1" / "skill.md", root / "skills" / "s6" / "skill.md"]


def _configured(tmp_path: Path) -> tuple[Path, list[Path]]:
    """telecom-broken with a configuration file that silences one code and shows hints,
    and (below, in the editor settings) another code ignored."""
    root = tmp_path / "configured"
    import shutil

    shutil.copytree(TELECOM.parent / "telecom-broken", root)
    (root / "mantle-lsp.toml").write_text(
        'ignore = ["mantle.validation.prose.unknown_memory_reference"]\nmin-severity = "hint"\n',
        encoding="utf-8",
    )
    return root, sorted(root.glob("skills/*/skill.md"))


RELATED = """\
//- agent.yml
agent:
  id: rel
  persona: A test.
orchestrator:
  model_group: main
//- integrations.yml
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
mcp_servers:
  - name: bank
    url: https://example.com/mcp
//- tools/shared.py
from rasa.mantle.tools.decorator import ToolContext, tool


@tool(description="Look up.")
async def lookup(context: ToolContext = None):
    return None
//- skills/a/skill.md
---
description: A.
import_tools:
  - lookup
  - mcp/bank:lookup
---
Use @tool.lookup.
"""


def _related(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A finding that points into another file (related information)."""
    root = write_fixture(tmp_path, RELATED).root
    return root, [root / "skills" / "a" / "skill.md"]


def _examples(name: str) -> Any:
    def make(tmp_path: Path) -> tuple[Path, list[Path]]:
        root = TELECOM.parent / name
        return root, sorted(root.glob("skills/*/skill.md"))

    return make


FIXTURES = {
    "telecom": _examples("telecom"),
    "telecom-broken": _examples("telecom-broken"),
    "agent-120": _agent,
    "configured": _configured,
    "related": _related,
}
EDITOR_SETTINGS = {
    "diagnostics": {"ignore": ["mantle.validation.prose.session_reference_in_instructions"]}
}


@pytest.mark.parametrize("pull", [False, True], ids=["push", "pull"])
@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_the_early_diagnostics_are_what_the_loaded_server_publishes(
    tmp_path: Path, fixture: str, pull: bool
) -> None:
    root, docs = FIXTURES[fixture](tmp_path)
    root = root.resolve()
    docs = [d.resolve() for d in docs]
    ed = Editor(root, pull, EDITOR_SETTINGS)
    try:
        pulls = ed.start(docs)
        early = {path: _early(ed, path, pulls[path]) for path in docs}
        ed.indexed()
        status = ed.status()
        for path in docs:
            items = early[path]["items"]
            assert items == _loaded_server_says(ed, path), path
            if not pull:
                assert early[path]["version"] == 1
        assert status["earlyLooks"] == len(docs)  # taken before the server was imported
    finally:
        ed.finish()
    if fixture == "agent-120":
        planted = [d["message"] for d in early[docs[0]]["items"]]
        assert len(planted) == 1 and "planted" in planted[0]
    if fixture == "related":
        (found,) = early[docs[0]]["items"]
        (note,) = found["relatedInformation"]
        assert note["location"]["uri"].endswith("/tools/shared.py")
    if fixture == "configured":
        codes = {d["code"] for e in early.values() for d in e["items"]}
        assert "mantle.validation.prose.unknown_memory_reference" not in codes
        assert "mantle.validation.prose.session_reference_in_instructions" not in codes
        assert "mantle.validation.prose.unknown_memory_key" in codes  # what remains


def test_a_document_edited_at_once_is_left_to_the_server(tmp_path: Path) -> None:
    """An edit that comes with the burst makes the look out of date: the server takes it
    (its first publication is of the edited text)."""
    root = TELECOM.resolve()
    path = root / "skills" / "plan_change" / "skill.md"
    ed = Editor(root, pull=False)
    try:
        ed.start([path], change=path)
        first = ed.until(lambda got: ed.published(path), "a publication")[0]
        assert first["version"] == 2
        assert ed.status()["earlyLooks"] == 0
    finally:
        ed.finish()


def test_a_client_that_does_not_answer_at_once_is_served_as_before(tmp_path: Path) -> None:
    """The look waits for the editor's settings at most ANSWER_TIMEOUT; then the server
    asks again (and takes the first look itself)."""
    root = TELECOM.resolve()
    path = root / "skills" / "plan_change" / "skill.md"
    ed = Editor(root, pull=False, answer=False)
    try:
        ed.start([path])
        time.sleep(2.5)
        ed.answering = True
        asks = [
            m
            for m in ed.got
            if m.get("method") in ("workspace/configuration", "window/workDoneProgress/create")
        ]
        for m in asks:
            result = [{}] if m["method"] == "workspace/configuration" else None
            ed.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
        ed.until(lambda got: ed.published(path), "the diagnostics")
        ed.indexed()
        assert ed.status()["earlyLooks"] == 0
    finally:
        ed.finish()
