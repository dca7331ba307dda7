"""The real server under hostile input.

* Incremental = from scratch: random sequences of incremental ``didChange`` edits (ranges
  and texts, multi-line, astral-plane characters, CRLF, form feeds and U+2028, several
  changes per notification) give the same diagnostics as a fresh index of the final
  text, and a hover is answered after every step. ``make fuzz`` (``MANTLE_FUZZ=1``) runs
  many more sequences.
* UTF-16 positions with astral characters in diagnostics, completion and rename edits;
  a 10 MB buffer; a file with invalid UTF-8 on disk; edits through a symlinked skill.
* Malformed protocol input over a raw JSON-RPC pipe (pytest-lsp's client refuses to send
  it): wrong params, unknown documents and methods, positions out of range,
  notifications for documents never opened or with stale versions, garbage on the wire.
  Every request gets an answer; the server stays up and a hover afterwards still works.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import random
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mantle_lsp.ide.diagnostics import file_diagnostics
from mantle_lsp.lsp import convert
from mantle_lsp.model.source import C_ENCODING, C_TOO_LARGE
from mantle_lsp.model.workspace import Workspace
from support import parse_fixture
from test_hostile_inputs import INSIDE_SKILL, outside_project, project_with
from test_lsp_support import SERVER, Session, copy_telecom, lsp_session, position_of, uri
from test_robustness import FUZZ

pytestmark = pytest.mark.timeout(0 if FUZZ else 60)

# ---------------------------------------------------------------------------------------
# A local model of the editor's document: LSP positions on raw text (any line breaks)

_BREAK = re.compile(r"\r\n|\r|\n")


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, ``end`` before its line break (``\\n``, ``\\r\\n``,
    ``\\r`` only, as the protocol says)."""
    spans = []
    start = 0
    for m in _BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def units(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def lsp_pos(text: str, offset: int) -> lsp.Position:
    for line, (start, end) in enumerate(line_spans(text)):
        if start <= offset <= end:
            return lsp.Position(line=line, character=units(text[start:offset]))
    raise AssertionError(f"offset {offset} is inside a line break")


def offset_of(text: str, pos: lsp.Position) -> int:
    spans = line_spans(text)
    if pos.line >= len(spans):
        return len(text)
    start, end = spans[pos.line]
    i, n = start, 0
    while i < end and n < pos.character:
        n += units(text[i])
        i += 1
    return i


def apply(text: str, change: lsp.TextDocumentContentChangeEvent) -> str:
    if isinstance(change, lsp.TextDocumentContentChangeWholeDocument):
        return change.text
    a, b = offset_of(text, change.range.start), offset_of(text, change.range.end)
    return text[:a] + change.text + text[b:]


INSERTS = [
    "", "x", "😀", "𝄞x😀", "\t", "\r\n", "\n", "\n\n", "\u2028", "\x0c", "\x85", "é", "\ud800",
    "session.", "session.roaming_pass.destination", "@memory.", "{", "}", ": ", "- ",
    "if: session.roaming_pass.pass_length == 'day'\n  Say so.\n",
    "\n  - id: extra\n    collect: destination\n", ":::", "---\n", "'", '"',
]  # fmt: skip


def random_change(rng: random.Random, text: str) -> lsp.TextDocumentContentChangeEvent:
    """A change an editor could send: a range between character boundaries (now and then
    past the end of its line), and a text that may span lines or hold astral characters."""
    if rng.random() < 0.03:
        return lsp.TextDocumentContentChangeWholeDocument(text=text[: len(text) // 2])
    boundaries = [i for i in range(len(text) + 1) if text[i - 1 : i + 1] != "\r\n"]
    a = rng.choice(boundaries)
    b = min([x for x in boundaries if x >= a][: rng.choice([1, 2, 5, 30, 200])][-1:] or [a])
    start, end = lsp_pos(text, a), lsp_pos(text, b)
    if rng.random() < 0.1:  # past the end of the line: the end of the line
        end = lsp.Position(line=end.line, character=end.character + rng.randint(1, 50))
    if rng.random() < 0.5:
        new = rng.choice(INSERTS)
    else:
        c = rng.randrange(len(text) + 1)
        new = text[c : c + rng.randint(0, 60)].replace("\r", "")
    return lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=new)


def send_changes(s: Session, path: Path, changes: list[lsp.TextDocumentContentChangeEvent]) -> int:
    u = uri(path)
    s.versions[u] += 1
    s.client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=s.versions[u]),
            content_changes=changes,
        )
    )
    return s.versions[u]


Row = tuple[int, int, int, int, str, str, int]


def rows(diags: Any) -> list[Row]:
    return sorted(
        (
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            str(d.code),
            d.message,
            int(d.severity or 0),
        )
        for d in diags
    )


def fresh_rows(root: Path, buffers: dict[Path, str]) -> dict[Path, list[Row]]:
    """Diagnostics of every project file from a fresh index, with ``buffers`` open."""
    ws = Workspace()
    for p, text in buffers.items():
        ws.open_buffer(p, text, 1)
    ws.add_folder(root)
    project = ws.projects[root]
    out = {}
    for p, ds in file_diagnostics(project, list(project.files)).items():
        index = project.files[p].source.index
        out[p] = rows(convert.to_diagnostic(d, index) for d in ds)
    return out


async def settle(s: Session, path: Path, version: int) -> None:
    await s.until(
        lambda: any(p.version == version for p in s.published_for(path)),
        what=f"diagnostics for version {version}",
    )
    await asyncio.sleep(0.7)  # the cross-file batch (MAX_WAIT 0.5 s)


def assert_same_as_fresh(s: Session, root: Path, buffers: dict[Path, str]) -> None:
    want = fresh_rows(root, buffers)
    for p, expected in want.items():
        got = rows(s.diagnostics(p))
        assert got == expected, f"{p.relative_to(root)}: incremental differs from fresh"


SEQUENCES = 200 if FUZZ else 3
STEPS = 25 if FUZZ else 10


async def test_random_incremental_edits_equal_a_fresh_index(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    files = sorted(p for p in root.rglob("*") if p.suffix in (".md", ".yml", ".py"))
    rng = random.Random(int(os.environ.get("MANTLE_FUZZ_SEED", "0")) or None)
    seed = rng.randrange(1 << 30)
    rng = random.Random(seed)
    async with lsp_session(root) as s:
        for n in range(SEQUENCES):
            path = rng.choice(files)
            text = path.read_text(encoding="utf-8")
            if rng.random() < 0.3:
                text = text.replace("\n", "\r\n")
            s.open(path, text)
            for _ in range(STEPS):
                changes = [random_change(rng, text) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
                for c in changes:  # each applies to the text the previous one left
                    text = apply(text, c)
                send_changes(s, path, changes)
                off = rng.randrange(len(text) + 1) if text else 0
                while text[off - 1 : off + 1] == "\r\n":
                    off -= 1
                await s.client.text_document_hover_async(
                    lsp.HoverParams(text_document=s.doc(path), position=lsp_pos(text, off))
                )
            await settle(s, path, s.versions[uri(path)])
            context = f"seed {seed}, sequence {n}, {path.relative_to(root)}"
            try:
                assert_same_as_fresh(s, root, {path.resolve(): text})
            except AssertionError as exc:
                raise AssertionError(f"{context}: {exc}") from exc
            s.close(path)


def test_random_changes_are_applied_like_an_editor_does() -> None:
    """The local model above agrees with the server's own change application."""
    rng = random.Random(7)
    text = "a😀b\r\nc\x0cd\u2028e\rf\n\ng"
    for _ in range(500):
        c = random_change(rng, text)
        assert apply(text, c) == convert.apply_change(text, c), (text, c)
        text = apply(text, c) or "x\r\ny😀"


async def test_form_feeds_and_line_separators_are_not_line_breaks(tmp_path: Path) -> None:
    """pygls splits lines at \\f, \\x85 and U+2028 too: an edit below such a character
    used to land on the wrong line of the server's copy of the document."""
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    text = path.read_text(encoding="utf-8").replace("---\n", "---\n\x0c\u2028\x85\n", 2)
    text += "\nRead @memory.roaming_pass.destinatio aloud.\n"
    async with lsp_session(root) as s:
        s.open(path, text)
        await settle(s, path, 1)
        (bad,) = [d for d in s.diagnostics(path) if "destinatio`" in d.message]
        at = lsp_pos(text, text.index("destinatio aloud") + len("destinatio"))
        assert bad.range.end == at
        v = s.change(path, (at.line, at.character), (at.line, at.character), "n")
        text = text.replace("destinatio aloud", "destination aloud")
        await settle(s, path, v)
        assert not [d for d in s.diagnostics(path) if "destinatio" in d.message]
        assert_same_as_fresh(s, root, {path: text})


# ---------------------------------------------------------------------------------------
# Astral characters: UTF-16 positions everywhere

ASTRAL = """\
//- skills/s/memory.yml
schema:
  public:
    reason:
      type: text
      llm_settable: true
      description: Why 😀.
//- skills/s/skill.md
---
description: Greets 😀 everyone.
---
😀𝄞 Read @memory.s.reasn then 😀 @memory.s.reason and 𝄞 @memory.s.reason.

if: session.s.reason == '😀' and session.s.reason != '𝄞'
  Say 😀.
"""


async def test_astral_characters_in_diagnostics_completion_and_rename(tmp_path: Path) -> None:
    root = project_with(tmp_path, {"skills/s/memory.yml": "", "skills/s/skill.md": ""})
    files, _, _ = parse_fixture(ASTRAL)
    for rel, body in files.items():
        (root / rel).write_text(body, encoding="utf-8")
    path = root / "skills" / "s" / "skill.md"
    text = files["skills/s/skill.md"]
    async with lsp_session(root) as s:
        s.open(path)
        await settle(s, path, 1)
        (bad,) = [d for d in s.diagnostics(path) if "reasn" in d.message]
        start = text.index("@memory.s.reasn")
        assert bad.range == lsp.Range(
            start=lsp_pos(text, start), end=lsp_pos(text, start + len("@memory.s.reasn"))
        )
        assert bad.range.start.character == units("😀𝄞 Read ") == 10
        # completion after `@memory.s.` on the line with astral characters
        cursor = text.index("reason and 𝄞")
        result = await s.client.text_document_completion_async(
            lsp.CompletionParams(text_document=s.doc(path), position=lsp_pos(text, cursor + 2))
        )
        assert isinstance(result, lsp.CompletionList)
        item = next(i for i in result.items if i.label == "reason")
        assert isinstance(item.text_edit, lsp.TextEdit)
        assert item.text_edit.range == lsp.Range(
            start=lsp_pos(text, cursor), end=lsp_pos(text, cursor + 2)
        )
        # rename the field: every edit on the astral lines in UTF-16 units
        edit = await s.client.text_document_rename_async(
            lsp.RenameParams(
                text_document=s.doc(path), position=lsp_pos(text, cursor + 1), new_name="cause"
            )
        )
        assert edit is not None and edit.document_changes
        (skill_edit,) = [
            e
            for e in edit.document_changes
            if isinstance(e, lsp.TextDocumentEdit) and e.text_document.uri == uri(path)
        ]
        got = sorted((e.range.start.line, e.range.start.character) for e in skill_edit.edits)
        want = sorted(
            (lsp_pos(text, m.start(1)).line, lsp_pos(text, m.start(1)).character)
            for m in re.finditer(r"(?:@memory|session)\.s\.(reason)\b", text)
        )
        assert got == want and len(want) == 4
        new_text = text
        for e in sorted(
            skill_edit.edits,
            key=lambda e: (e.range.start.line, e.range.start.character),
            reverse=True,
        ):
            assert isinstance(e, lsp.TextEdit)
            new_text = apply(
                new_text, lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
            )
        assert new_text == re.sub(r"((?:@memory|session)\.s\.)reason\b", r"\1cause", text)


# ---------------------------------------------------------------------------------------
# Size, encodings, links


async def test_a_ten_megabyte_buffer_gets_one_diagnostic(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "skill.md"
    big = path.read_text(encoding="utf-8") + "Say @memory.roaming_pass.nope.\n" * 340_000
    assert len(big) > 10_000_000
    async with lsp_session(root) as s:
        started = time.monotonic()
        s.open(path, big)
        await s.until(lambda: any(p.version == 1 for p in s.published_for(path)), timeout=20)
        assert [d.code for d in s.diagnostics(path)] == [C_TOO_LARGE]
        v = s.change(path, (3, 0), (3, 0), "x")  # an edit of the huge buffer
        await s.until(lambda: any(p.version == v for p in s.published_for(path)), timeout=20)
        pos = lsp.Position(line=100, character=5)
        h = await s.client.text_document_hover_async(
            lsp.HoverParams(text_document=s.doc(path), position=pos)
        )
        assert h is None
        assert time.monotonic() - started < 20
        # the rest of the project is still served
        other = root / "skills" / "bill_dispute" / "skill.md"
        otext = other.read_text(encoding="utf-8")
        h = await s.client.text_document_hover_async(
            lsp.HoverParams(
                text_document=s.doc(other), position=position_of(otext, "disputed_amount > 100", 2)
            )
        )
        assert h is not None


async def test_invalid_utf8_on_disk_is_reported_at_its_utf16_position(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    path = root / "skills" / "roaming_pass" / "memory.yml"
    data = path.read_bytes()
    at = data.index(b"description")
    path.write_bytes(data[:at] + "😀".encode() + b"\xff" + data[at:])
    async with lsp_session(root) as s:
        await s.until(lambda: s.diagnostics(path), what="diagnostics of the undecodable file")
        (bad,) = [d for d in s.diagnostics(path) if d.code == C_ENCODING]
        text = data[:at].decode() + "😀"
        line = text.count("\n")
        col = units(text[text.rfind("\n") + 1 :])
        assert bad.range.start == lsp.Position(line=line, character=col)
        assert bad.range.end == lsp.Position(line=line, character=col + 1)


async def test_rename_and_code_actions_never_reach_through_a_symlink(tmp_path: Path) -> None:
    root, outside = outside_project(tmp_path)
    (outside / "memory.yml").unlink()
    path = root / "skills" / "s" / "skill.md"
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    async with lsp_session(root) as s:
        s.open(path)
        await settle(s, path, 1)
        diags = list(s.diagnostics(path))
        assert any("ext.nope" in d.message for d in diags)
        end = lsp_pos(INSIDE_SKILL, len(INSIDE_SKILL))
        actions = await s.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=s.doc(path),
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=end),
                context=lsp.CodeActionContext(diagnostics=diags),
            )
        )
        for a in actions or []:
            assert isinstance(a, lsp.CodeAction) and a.edit is not None
            for op in a.edit.document_changes or []:
                target = getattr(op, "uri", None) or op.text_document.uri  # type: ignore[union-attr]
                assert "elsewhere" not in target and "/ext/" not in target, (a.title, target)
        # renaming the project field would edit the skill that lives outside: refused
        memory = root / "memory.yml"
        mtext = memory.read_text(encoding="utf-8")
        with pytest.raises(JsonRpcException) as err:
            await s.client.text_document_rename_async(
                lsp.RenameParams(
                    text_document=s.doc(memory),
                    position=position_of(mtext, "authenticated", 2),
                    new_name="signed_in",
                )
            )
        assert "outside the project" in str(err.value)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


# ---------------------------------------------------------------------------------------
# Malformed protocol input, over a raw pipe


class RawClient:
    """A bare JSON-RPC peer: writes any bytes, reads every message (stderr drained)."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.received: list[dict[str, Any]] = []
        self.next_id = 100
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.inbox.put(json.loads(out.read(length)))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def send_bytes(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 10) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m, timeout)

    def wait(self, cond: Any, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.inbox.get(timeout=0.05)
            except queue.Empty:
                continue
            if m is None:
                raise AssertionError("the server closed its output (it died)")
            self.received.append(m)
            if cond(m):
                return m
        raise AssertionError("no answer: the request was dropped")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(5)


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawClient, Path, str]]:
    """One server for the malformed-input tests (each leaves it serving)."""
    tmp_path = tmp_path_factory.mktemp("raw")
    root = copy_telecom(tmp_path)
    client = RawClient(tmp_path)
    init = client.request(
        "initialize",
        {"capabilities": {}, "workspaceFolders": [{"uri": uri(root), "name": "telecom"}]},
    )
    assert "capabilities" in init["result"]
    client.notify("initialized", {})
    path = root / "skills" / "roaming_pass" / "skill.md"
    text = path.read_text(encoding="utf-8")
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri(path), "languageId": "markdown", "version": 1, "text": text}},
    )
    try:
        yield client, path, text
    finally:
        assert client.proc.poll() is None, "the server died"
        client.close()


def hover_works(client: RawClient, path: Path, text: str) -> None:
    pos = position_of(text, "collect: pass_length", len("collect: p"))
    answer = client.request(
        "textDocument/hover",
        {
            "textDocument": {"uri": uri(path)},
            "position": {"line": pos.line, "character": pos.character},
        },
    )
    assert "pass_length" in answer["result"]["contents"]["value"], answer


def where(path: Path, line: Any = 0, character: Any = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": character}}


BAD_PARAMS: list[tuple[str, Any]] = [
    ("textDocument/hover", {}),
    ("textDocument/hover", None),
    ("textDocument/hover", []),
    ("textDocument/hover", "text"),
    ("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}}),
    (
        "textDocument/hover",
        {"textDocument": {"uri": "x"}, "position": {"line": "a", "character": 0}},
    ),
    ("textDocument/completion", {"textDocument": {}}),
    ("textDocument/definition", {"position": {"line": 0, "character": 0}}),
    ("textDocument/references", {"textDocument": {"uri": "file:///x"}, "position": {}}),
    ("textDocument/rename", {"newName": 3}),
    ("textDocument/codeAction", {"range": None}),
    ("textDocument/semanticTokens/full", {}),
    ("textDocument/documentSymbol", {"textDocument": None}),
    ("workspace/symbol", {"query": ["a"]}),
    ("textDocument/foldingRange", {"textDocument": {"uri": None}}),
]


def test_requests_with_wrong_params_get_an_error_answer(
    raw: tuple[RawClient, Path, str],
) -> None:
    client, path, text = raw
    errors = 0
    for method, params in BAD_PARAMS:
        answer = client.request(method, params)
        if "error" in answer:
            assert answer["error"]["code"] == -32602, (method, params, answer)
            errors += 1
        else:  # lsprotocol's converter is lenient (a uri of 5 reads as "5"): an empty answer
            assert answer["result"] in (None, [], {}), (method, params, answer)
        hover_works(client, path, text)
    assert errors >= len(BAD_PARAMS) - 3
    popups = [m for m in client.received if m.get("method") == "window/showMessage"]
    assert popups == [], "a wrong request is answered, not shown as a pop-up"


def test_unknown_methods_and_documents_and_positions_out_of_range(
    raw: tuple[RawClient, Path, str],
) -> None:
    client, path, text = raw
    assert client.request("mantle/noSuchMethod", {})["error"]["code"] == -32601
    client.notify("$/noSuchNotification", {"x": 1})
    client.notify("mantle/whatever", None)
    lines = text.count("\n")
    for target in (
        where(Path("/nowhere/skills/a/skill.md")),
        {"textDocument": {"uri": "untitled:Untitled-1"}, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": "::not a uri::"}, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": "file:///"}, "position": {"line": 0, "character": 0}},
        where(path, lines + 5, 3),
        where(path, 3, 100_000),
        where(path, 2**31 - 1, 2**31 - 1),
    ):
        for method in (
            "textDocument/hover",
            "textDocument/completion",
            "textDocument/definition",
            "textDocument/documentHighlight",
            "textDocument/prepareRename",
        ):
            answer = client.request(method, target)
            assert "result" in answer or answer["error"]["code"] == -32803, (method, answer)
        answer = client.request(
            "textDocument/references", {**target, "context": {"includeDeclaration": True}}
        )
        assert "result" in answer
        answer = client.request("textDocument/rename", {**target, "newName": "x_y"})
        assert "result" in answer or answer["error"]["code"] == -32803, answer
        doc = {"textDocument": target["textDocument"]}
        far = {"start": target["position"], "end": {"line": 2**31 - 1, "character": 0}}
        for method, params in (
            ("textDocument/codeAction", {**doc, "range": far, "context": {"diagnostics": []}}),
            ("textDocument/semanticTokens/range", {**doc, "range": far}),
            ("textDocument/selectionRange", {**doc, "positions": [target["position"]]}),
            ("textDocument/semanticTokens/full", doc),
            ("textDocument/documentSymbol", doc),
            ("textDocument/foldingRange", doc),
            ("textDocument/documentLink", doc),
            ("textDocument/codeLens", doc),
        ):
            answer = client.request(method, params)
            assert "result" in answer, (method, answer)
    # negative positions are not LSP positions: an error answer, not a crash
    answer = client.request("textDocument/hover", where(path, -1, -5))
    assert answer["error"]["code"] == -32602
    hover_works(client, path, text)


def test_notifications_for_documents_never_opened_or_with_stale_versions(
    raw: tuple[RawClient, Path, str],
) -> None:
    client, path, text = raw
    never = path.parent / "memory.yml"
    edit = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri(never), "version": 7},
            "contentChanges": [{**edit, "text": "garbage: ["}],
        },
    )
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri(never)}})
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri(never)}})
    hover_works(client, path, text)
    # a stale version (lower than the current one) is still the client's text: applied
    for version in (5, 3):
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri(path), "version": version},
                "contentChanges": [{**edit, "text": "x"}],
            },
        )
    hover_works(client, path, "xx" + text)
    two = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 2}}}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri(path), "version": 9},
            "contentChanges": [{**two, "text": ""}],
        },
    )
    hover_works(client, path, text)
    # the change to the document that was never opened was not applied to anything
    for m in client.received:
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri(
            never
        ):
            assert not any("YAML" in d["message"] for d in m["params"]["diagnostics"])


GARBAGE = [
    b"{garbage",
    b"[]",
    b"42",
    b'"text"',
    b"null",
    b"\xff\xfe\x00",
    b'{"jsonrpc": "2.0", "id": 99}',
    b'{"jsonrpc": "2.0", "id": 77, "result": 1}',
    b'{"jsonrpc": "2.0", "id": 78, "error": {"code": 1, "message": "?"}}',
    b'{"jsonrpc": "1.0", "id": 5, "method": "textDocument/hover", "params": {}}',
    b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {}}}',
    b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {}}',
    b'{"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": 1}}',
    b'{"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": 5}}',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover", "params": {}}',
    b'{"jsonrpc": "2.0", "id": 1e999, "method": "x"}',
    b'{"jsonrpc": "2.0", "method": "\\ud800"}',
]


def test_garbage_on_the_wire_is_ignored_and_the_server_stays_up(
    raw: tuple[RawClient, Path, str],
) -> None:
    client, path, text = raw
    for body in GARBAGE:
        client.send_bytes(body)
        hover_works(client, path, text)
    parse_errors = [m for m in client.received if m.get("error", {}).get("code") == -32700]
    assert parse_errors and all(m.get("id") is None for m in parse_errors)
    popups = [m for m in client.received if m.get("method") == "window/showMessage"]
    assert popups == []
