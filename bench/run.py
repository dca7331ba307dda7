"""`make bench`: speed and memory of mantle-lsp on generated projects of three profiles:
"dense" (every skill has fields, routing, an ordered block and a small tool),
"realistic" (prose-heavy skill.md files with many `if:` paragraphs and non-ASCII text,
one to three fields per skill, 1–10 KB tool modules, responses with many variants) and
"agent" (the shape of a public 75-skill production agent replicated: Markdown prose, few
conditions, half the skills with a tool module, few memory.yml and responses.yml files,
shared tools and lib/ helpers; ``bench/generate.py``).

Every figure is measured in the same run, so ratios hold on a noisy machine:

- floor: reading every file of the project, libyaml-composing every YAML document
  (memory.yml, responses.yml, agent.yml, integrations.yml, each skill.md frontmatter and
  ordered-block body), `ast.parse` of every Python file and one regex pass over each
  skill.md — the least any checker must do; sampled before every timed run, and the best
  sample is the floor (see :class:`Floor`);
- the document a user opens as the editor starts (:func:`open_first_session`): from
  spawning the server to correct diagnostics of that document (a planted undeclared field
  flagged, a valid read of another skill's field not), pushed and pulled, with the time
  `initialize` was answered and the first `$/progress`;
- the same, pulled as VS Code does, for the server as users install it, at the largest
  size (issue 32): installed from the wheel into a fresh virtual environment without
  bytecode, and bundled as the .vsix bundles it (run by the machine's Python with the
  bundle on PYTHONPATH), both with ``PYTHONDONTWRITEBYTECODE=1`` and a user cache folder
  of their own: every run's figure is a second start (the server's bytecode cache
  written, bytecode.py); the .vsix's first start (an empty cache) is measured once;
- completion and hover in that document, asked as soon as its diagnostics are right
  (completion of the other skill's field the planted read names, hover on it): when
  each is answered, from spawn, and whether the completion offered that field;
- `mantle-lsp check` wall time (a subprocess, as a CI would run it) and its ratio to the
  floor, with the default `--jobs auto` and with `--jobs 1`;
- the real server over stdio (`mantle-lsp serve`): time from spawning it to diagnostics
  published for every file, and — for a client that pulls diagnostics, like VS Code — to
  the answer of its first `workspace/diagnostic` request; to the index being complete in
  the server (after a spread index the server parses the other workers' files; requests
  wait for that); then, with the index complete, completion
  latency as a VS Code client sees it (the list, then `completionItem/resolve` of the
  focused item) and hover latency (p50/p95), edit-to-fresh-diagnostics for an edit in a
  skill.md and in a memory.yml whose field another skill reads (p50/p95), and the
  server's peak RSS (and its largest worker's).

Before each run the bench also measures how many cores' worth of work two processes
get (:func:`parallel_capacity`): on this machine it swings between ~1 and ~2, and a
spread `check` or index can only be as fast as it allows. Every timing is the best of
``--runs`` (7) runs, interleaved with the others' (see
:func:`measure`): like `timeit`, the best run is the one least disturbed by the rest of
the machine.

    python bench/run.py [--sizes 100 1000] [--profiles dense realistic agent]
                        [--installs wheel vsix] [--out FILE]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contextlib

from generate import AGENT_FIELD, agent_has_memory, generate, generate_agent, generate_realistic
from vscode import load as load_vscode
from vscode import section as vscode_section_of

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench"
FENCE = re.compile(r":::ordered_block[^\n]*\n(.*?)^:::[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Install:
    """The server as a user runs it: the command before ``serve``, the environment added
    to the bench's, the working directory."""

    name: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None

    def spawn_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}


# this checkout's editable install, its bytecode written first (compile_bytecode)
DEV = Install("dev", (str(Path(sys.executable).with_name("mantle-lsp")),))


_SPIN = (
    "import time\nt = time.perf_counter()\nfor _ in range(3_000_000): pass\n"
    "print(time.perf_counter() - t)"
)


def parallel_capacity() -> float:
    """How many cores' worth of work two processes get right now (2.0: two whole cores;
    1.0: they share one). This machine's second core comes and goes; a spread `check`
    or index can only be as fast as it allows."""

    def spin(k: int) -> list[float]:
        procs = [
            subprocess.Popen([sys.executable, "-c", _SPIN], stdout=subprocess.PIPE, text=True)
            for _ in range(k)
        ]
        return [float(p.communicate()[0]) for p in procs]

    one = min(spin(1)[0], spin(1)[0])
    return min(2.0, 2 * one / max(spin(2)))


# one pass over a skill.md for what a checker must find in prose: @-tokens, `session.a.b`
# and `if:` lines
TOKENS = re.compile(r"@\w+(?:\.\w+)*|\bsession\.\w+\.\w+|^if:.*$", re.M)


def floor_once(project: Path) -> float:
    """The least any checker must do: read every file, libyaml-compose every YAML document
    (frontmatter and ordered blocks included), `ast.parse` every Python file and make one
    regex pass over each skill.md."""
    t = time.perf_counter()
    for p in sorted(project.rglob("*")):
        if not p.is_file():
            continue
        text = p.read_text(encoding="utf-8")
        if p.suffix == ".yml":
            yaml.compose(text, Loader=yaml.CSafeLoader)
        elif p.suffix == ".py":
            ast.parse(text)
        elif p.name == "skill.md":
            _, fm, body = text.split("---", 2)
            yaml.compose(fm, Loader=yaml.CSafeLoader)
            for m in FENCE.finditer(body):
                yaml.compose(m.group(1), Loader=yaml.CSafeLoader)
            sum(1 for _ in TOKENS.finditer(body))
    return time.perf_counter() - t


class Floor:
    """The floor, sampled before every timed run: this machine's speed drifts (by up to
    1.5x over minutes), so the floor is the best of all samples of the whole run, taken
    next to the runs it is compared with. (The best sample is the fastest the machine
    was: the ratios can only come out higher, never flattered.)"""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.samples: list[float] = []

    def sample(self) -> None:
        self.samples.append(floor_once(self.project))

    @property
    def best(self) -> float:
        return min(self.samples)


def check_once(project: Path, *options: str) -> float:
    exe = Path(sys.executable).with_name("mantle-lsp")
    t = time.perf_counter()
    proc = subprocess.run(
        [str(exe), "check", *options, str(project)], capture_output=True, text=True
    )
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"check failed on the generated project:\n{proc.stdout[-2000:]}")
    return took


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


# What VS Code announces for completion: documentation is resolved lazily for the focused
# item, and the shared edit range and data come once per list (itemDefaults).
VSCODE_TEXT_DOCUMENT = types.TextDocumentClientCapabilities(
    completion=types.CompletionClientCapabilities(
        completion_item=types.ClientCompletionItemOptions(
            snippet_support=True,
            documentation_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText],
            resolve_support=types.ClientCompletionItemResolveOptions(
                properties=["documentation", "detail", "additionalTextEdits"]
            ),
        ),
        completion_list=types.CompletionListCapabilities(
            item_defaults=["commitCharacters", "editRange", "insertTextFormat", "data"]
        ),
    )
)


VSCODE_PULL_TEXT_DOCUMENT = types.TextDocumentClientCapabilities(
    completion=VSCODE_TEXT_DOCUMENT.completion,
    diagnostic=types.DiagnosticClientCapabilities(related_document_support=True),
)


@dataclass
class ServerFigures:
    first_diagnostics: float = 0.0
    index_complete: float = 0.0  # every file parsed in the server (after a spread index)
    completion: list[float] = field(default_factory=list)
    resolve: list[float] = field(default_factory=list)
    hover: list[float] = field(default_factory=list)
    edit_skill: list[float] = field(default_factory=list)
    edit_memory: list[float] = field(default_factory=list)
    dependent: list[float] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    worker_rss_mb: float = 0.0  # the largest worker process of a spread index
    first_pulled: float = 0.0  # a pulling client's first workspace/diagnostic answer
    opened: OpenFirst | None = None  # the document opened at start-up, pushed (best run)
    opened_pulled: OpenFirst | None = None  # the same for a client that pulls (VS Code)
    # the same (pulled, as VS Code), for the server as users install it (issue 32): every
    # run's time to correct diagnostics, the wheel's and the .vsix's (a second start: its
    # bytecode cache written), and the .vsix's first start (an empty cache), once
    installed: dict[str, list[float]] = field(default_factory=dict)
    vsix_first: float = 0.0
    # completion and hover there, asked as soon as its diagnostics were right (best of
    # both kinds of client; whether every completion offered the other skill's field)
    opened_completion: float = 0.0
    opened_completion_ok: bool = False
    opened_hover: float = 0.0
    capacity: tuple[float, float] = (0.0, 0.0)  # parallel_capacity(), lowest and highest


async def measure(
    project: Path,
    n: int,
    rounds: int,
    runs: int = 5,
    public_field: str = "status",
    neighbour: int | None = None,
    installs: tuple[Install, ...] = (),
) -> tuple[float, float, float, ServerFigures]:
    """Every figure of one size: (floor, check, check --jobs 1, server figures).

    The timed runs are interleaved — `check`, `check --jobs 1`, a server start with pushed
    diagnostics, one with pulled diagnostics, the document opened first (pushed, pulled,
    and pulled from each of ``installs``), ``runs`` times over — each after a floor
    sample, and each figure is its best run: the machine's slow and fast phases last
    longer than one measurement, and interleaving gives every figure the same chances.
    Requests and edits are then timed in one more session, once its index is complete."""
    floor = Floor(project)
    check: list[float] = []
    serial: list[float] = []
    pushed: list[ServerFigures] = []
    pulled: list[float] = []
    opened: list[OpenFirst] = []
    opened_pulled: list[OpenFirst] = []
    capacity: list[float] = []
    installed: dict[str, list[float]] = {i.name: [] for i in installs}
    vsix_first = 0.0
    for inst in installs:  # a first start: the user's bytecode cache is empty
        if inst.name == "vsix":
            clear_user_cache(inst)
            floor.sample()
            first = await open_first_session(project, n, public_field, True, inst, neighbour)
            vsix_first = first.diagnostics
    for _ in range(runs):
        capacity.append(parallel_capacity())
        floor.sample()
        check.append(check_once(project))
        floor.sample()
        serial.append(check_once(project, "--jobs", "1"))
        floor.sample()
        pushed.append(await _server_session(project, n, 0))
        floor.sample()
        pulled.append((await _server_session(project, n, 0, pull=True)).first_diagnostics)
        floor.sample()
        opened.append(
            await open_first_session(project, n, public_field, False, neighbour=neighbour)
        )
        floor.sample()
        opened_pulled.append(
            await open_first_session(project, n, public_field, True, neighbour=neighbour)
        )
        for inst in installs:
            floor.sample()
            o = await open_first_session(project, n, public_field, True, inst, neighbour)
            installed[inst.name].append(o.diagnostics)
    figs = await _server_session(project, n, rounds, public_field=public_field)
    figs.installed, figs.vsix_first = installed, vsix_first
    best = min(pushed, key=lambda f: f.first_diagnostics)
    figs.first_diagnostics, figs.index_complete = best.first_diagnostics, best.index_complete
    figs.first_pulled = min(pulled)
    figs.opened = min(opened, key=lambda o: o.diagnostics)
    figs.opened_pulled = min(opened_pulled, key=lambda o: o.diagnostics)
    both = opened + opened_pulled
    figs.opened_completion = min(o.completion for o in both)
    figs.opened_completion_ok = all(o.completion_ok for o in both)
    figs.opened_hover = min(o.hover for o in both)
    figs.capacity = (min(capacity), max(capacity))
    return floor.best, min(check), min(serial), figs


def _initialize_params(project: Path, pull: bool, watch: bool) -> types.InitializeParams:
    """What the bench client announces: VS Code's completion capabilities, progress,
    configuration; with ``pull`` diagnostics it pulls, with ``watch`` file watchers it
    registers for the server (else the server watches the files itself)."""
    root_uri = project.as_uri()
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True),
            workspace=types.WorkspaceClientCapabilities(
                configuration=True,
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=True
                )
                if watch
                else None,
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
                if pull
                else None,
            ),
            text_document=VSCODE_PULL_TEXT_DOCUMENT if pull else VSCODE_TEXT_DOCUMENT,
        ),
        root_uri=root_uri,
        workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="bench")],
    )


async def _server_session(
    project: Path, n: int, rounds: int, pull: bool = False, public_field: str = "status"
) -> ServerFigures:
    """One server session. With ``pull`` the client pulls diagnostics like VS Code does
    (``workspace/diagnostic`` once the server asks for a refresh after its index), and
    only that answer is timed."""
    figs = ServerFigures()
    client = LanguageClient("mantle-bench", "1")
    published: dict[str, list[tuple[int | None, float, int]]] = {}
    waiters: list[tuple[str, int | None, asyncio.Future[float]]] = []

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diags(params: types.PublishDiagnosticsParams) -> None:
        now = time.perf_counter()
        published.setdefault(params.uri, []).append((params.version, now, len(params.diagnostics)))
        for uri, version, fut in list(waiters):
            if uri == params.uri and (version is None or params.version == version):
                if not fut.done():
                    fut.set_result(now)
                waiters.remove((uri, version, fut))

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_progress(params: types.WorkDoneProgressCreateParams) -> None:
        return None

    complete: list[float] = []
    logs: list[str] = []

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        logs.append(params.message)
        if params.message.startswith("index complete"):
            complete.append(time.perf_counter())

    index_done: list[float] = []

    @client.feature(types.PROGRESS)
    def on_progress_note(params: types.ProgressParams) -> None:
        # the initial index ends (WorkDoneProgressEnd) after every file's diagnostics went
        # out; a clean file has nothing to publish, so this is the "complete" signal
        value = params.value
        kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
        if kind == "end" and not index_done:
            index_done.append(time.perf_counter())

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def on_config(params: types.ConfigurationParams) -> list[object]:
        return [None for _ in params.items]

    @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
    def on_refresh(params: None) -> None:
        return None

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        return None

    exe = Path(sys.executable).with_name("mantle-lsp")
    # from spawn, like the open-first figure: `initialize` is answered before the server
    # is imported (lsp/handshake.py), so `initialized` no longer marks a ready server
    t0 = time.perf_counter()
    await client.start_io(str(exe), "serve")
    await client.initialize_async(_initialize_params(project, pull, watch=False))
    client.initialized(types.InitializedParams())
    deadline = t0 + 600
    while not index_done and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)
    if not index_done:
        raise SystemExit("the server never finished its initial index")
    figs.first_diagnostics = index_done[0] - t0
    if pull:
        report = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        figs.first_diagnostics = time.perf_counter() - t0
        if any(getattr(item, "items", None) for item in report.items):
            raise SystemExit("the workspace pull reported problems in the generated project")
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        return figs
    # A spread index (serve --jobs) ends with the server parsing the other workers' files;
    # requests wait for that, so they are timed once it is done.
    while not any(m.startswith("initial index") for m in logs) and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)
    if any(m.startswith("initial index") and "processes" in m for m in logs):
        while not complete and time.perf_counter() < deadline:
            await asyncio.sleep(0.005)
    figs.index_complete = (complete[0] if complete else index_done[0]) - t0
    m = re.search(r"workers' peak RSS (\d+) MB", " ".join(logs))
    figs.worker_rss_mb = float(m.group(1)) if m else 0.0
    if rounds == 0:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        return figs

    skill = project / "skills" / "s1" / "skill.md"
    text = skill.read_text()
    uri = skill.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="mantle-skill", version=1, text=text)
        )
    )
    lines = text.splitlines()
    if_line = next(i for i, ln in enumerate(lines) if ln.startswith("if: session."))
    comp_pos = types.Position(line=if_line, character=len("if: session."))
    hover_pos = types.Position(line=if_line, character=len("if: session.s1.st"))
    for _ in range(rounds):
        t = time.perf_counter()
        result = await client.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(uri), comp_pos)
        )
        figs.completion.append(time.perf_counter() - t)
        items = result.items if isinstance(result, types.CompletionList) else result or []
        if items:  # what VS Code asks for the focused item: its documentation
            t = time.perf_counter()
            await client.completion_item_resolve_async(items[0])
            figs.resolve.append(time.perf_counter() - t)
        t = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), hover_pos)
        )
        figs.hover.append(time.perf_counter() - t)

    async def edit(uri: str, version: int, new_text: str) -> float:
        fut: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        waiters.append((uri, version, fut))
        t = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )
        return await asyncio.wait_for(fut, 30) - t

    version = 1
    for k in range(rounds):
        version += 1
        figs.edit_skill.append(await edit(uri, version, text + f"\nMore prose {k}.\n"))

    mem = project / "skills" / "s0" / "memory.yml"
    mem_text = mem.read_text()
    mem_uri = mem.as_uri()
    reader = (project / "skills" / f"s{n - 1}" / "skill.md").as_uri()  # reads s0.status
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=mem_uri, language_id="yaml", version=1, text=mem_text)
        )
    )
    mversion = 1
    for k in range(rounds):
        mversion += 1
        # a public field another skill reads: renamed and back
        name = public_field if k % 2 else public_field[:-1]
        changed = mem_text.replace(f"{public_field}:", f"{name}:", 1)
        dep: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        waiters.append((reader, None, dep))
        t = time.perf_counter()
        figs.edit_memory.append(await edit(mem_uri, mversion, changed))
        with contextlib.suppress(TimeoutError):
            figs.dependent.append(await asyncio.wait_for(dep, 30) - t)
    pid = getattr(getattr(client, "_server", None), "pid", None)
    if pid:
        status = Path(f"/proc/{pid}/status").read_text()
        m = re.search(r"VmHWM:\s+(\d+) kB", status)
        figs.peak_rss_mb = int(m.group(1)) / 1024 if m else 0.0
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return figs


@dataclass
class OpenFirst:
    """The document a user opens right after start-up: from spawning the server to its
    correct diagnostics (a planted undeclared field flagged, a valid read of another
    skill's public field not flagged), and to the first `$/progress` of the index."""

    diagnostics: float = 0.0
    progress: float | None = None
    initialize: float = 0.0  # the answer to `initialize`
    wrong_first: bool = False  # diagnostics published for it before the correct ones
    # completion (of the other skill's field in the planted read) and hover (on the planted
    # read), both asked as soon as the diagnostics were correct: answered, from spawn
    completion: float = 0.0
    completion_ok: bool = False  # the other skill's public field was offered
    hover: float = 0.0


async def open_first_session(
    project: Path,
    n: int,
    public_field: str,
    pull: bool,
    install: Install = DEV,
    neighbour: int | None = None,
) -> OpenFirst:
    """One server session as an editor starts it with a file open: `initialize`, then
    `initialized` and `didOpen` of a skill.md at once (plus, for a client that pulls,
    `textDocument/diagnostic` right after, as VS Code does; a report that is not yet
    correct is pulled again, as after a `workspace/diagnostic/refresh`). ``neighbour``: the
    skill whose public field the opened document reads (the next one by default)."""
    figs = OpenFirst()
    client = LanguageClient("mantle-bench", "1")
    mid = n // 2
    other = (mid + 1) % n if neighbour is None else neighbour
    path = project / "skills" / f"s{mid}" / "skill.md"
    text = path.read_text(encoding="utf-8") + (
        f"\nAlso read @memory.s{mid}.planted_missing and @memory.s{other}.{public_field}.\n"
    )
    uri = path.as_uri()
    loop = asyncio.get_running_loop()
    correct: asyncio.Future[float] = loop.create_future()
    refreshed = asyncio.Event()

    def judge(diags: list[types.Diagnostic]) -> bool:
        ok = len(diags) == 1 and "planted_missing" in diags[0].message
        if ok and not correct.done():
            correct.set_result(time.perf_counter())
        elif not ok and not correct.done():
            figs.wrong_first = figs.wrong_first or bool(diags)
        return ok

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diags(params: types.PublishDiagnosticsParams) -> None:
        if params.uri == uri:
            judge(list(params.diagnostics))

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_progress_create(params: types.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(types.PROGRESS)
    def on_progress(params: types.ProgressParams) -> None:
        if figs.progress is None:
            figs.progress = time.perf_counter()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def on_config(params: types.ConfigurationParams) -> list[object]:
        return [None for _ in params.items]

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        return None

    @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
    def on_refresh(params: None) -> None:
        refreshed.set()

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        return None

    t0 = time.perf_counter()
    await client.start_io(
        *install.command,
        "serve",
        *os.environ.get("BENCH_SERVER_ARGS", "").split(),
        env=install.spawn_env(),
        cwd=install.cwd,
    )
    await client.initialize_async(_initialize_params(project, pull, watch=True))
    figs.initialize = time.perf_counter() - t0
    client.initialized(types.InitializedParams())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="mantle-skill", version=1, text=text)
        )
    )
    deadline = time.perf_counter() + 120
    if pull:
        while not correct.done() and time.perf_counter() < deadline:
            refreshed.clear()
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
            )
            if judge(list(getattr(report, "items", None) or [])):
                break
            await asyncio.wait_for(refreshed.wait(), 120)
    left = max(1.0, deadline - time.perf_counter())
    figs.diagnostics = await asyncio.wait_for(correct, left) - t0
    line = text.count("\n") - 1
    where = text.splitlines()[line]
    at = where.index(f"@memory.s{other}.") + len(f"@memory.s{other}.")
    doc = types.TextDocumentIdentifier(uri)
    asked = [
        client.text_document_completion_async(
            types.CompletionParams(doc, types.Position(line=line, character=at))
        ),
        client.text_document_hover_async(
            types.HoverParams(doc, types.Position(line=line, character=at + 1))
        ),
    ]

    async def answered(k: int) -> tuple[float, object]:
        got = await asyncio.wait_for(asked[k], left)
        return time.perf_counter() - t0, got

    (figs.completion, items), (figs.hover, _) = await asyncio.gather(answered(0), answered(1))
    listed = items.items if isinstance(items, types.CompletionList) else items or []
    labels = [it.label for it in listed]
    figs.completion_ok = public_field in labels
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    if figs.progress is not None:
        figs.progress -= t0
    return figs


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def compile_bytecode() -> None:
    """Write the package's bytecode first, as installing a wheel does: an editable install
    under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module from source at
    each start (~0.1 s of every `check`)."""
    import compileall

    compileall.compile_dir(str(ROOT / "server" / "mantle_lsp"), quiet=1)


# -- the server as users install it (issue 32) -----------------------------------------------
# Both with PYTHONDONTWRITEBYTECODE=1, as on these machines and in many containers, and each
# with a user cache folder of its own (XDG_CACHE_HOME) where the server may keep bytecode.

NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}


def _wheel() -> Path:
    """This checkout's wheel (built once per bench run)."""
    out = CACHE / "wheel"
    if out.exists():
        shutil.rmtree(out)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out),
         str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    return next(out.glob("mantle_lsp-*.whl"))


def _dependencies() -> list[str]:
    """The distributions the server needs at run time (its requirements, recursively), as
    installed in this environment."""
    from importlib import metadata

    from packaging.requirements import Requirement

    seen: list[str] = []
    todo = ["mantle-lsp"]
    while todo:
        name = todo.pop()
        for req in metadata.requires(name) or ():
            r = Requirement(req)
            if r.marker is not None and not r.marker.evaluate({"extra": ""}):
                continue
            if r.name.lower() not in (s.lower() for s in seen):
                seen.append(r.name)
                todo.append(r.name)
    return seen


def wheel_install(wheel: Path) -> Install:
    """The wheel installed into a fresh virtual environment without bytecode (as ``uv pip
    install`` leaves it; pip writes bytecode at install time), its dependencies taken from
    this environment (with their bytecode, as any installer writes it for them)."""
    import site

    venv = CACHE / "wheel-venv"
    if venv.exists():
        shutil.rmtree(venv)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
         "--no-compile", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    # the dependencies: this environment's site-packages, after the venv's own
    Path(purelib, "bench-dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    cache = CACHE / "user-cache-wheel"
    shutil.rmtree(cache, ignore_errors=True)
    return Install(
        "wheel", (str(venv / "bin" / "mantle-lsp"),), {**NO_BYTECODE, "XDG_CACHE_HOME": str(cache)}
    )


def clear_user_cache(install: Install) -> None:
    """Empty the user cache folder an install keeps its bytecode in (bytecode.py)."""
    folder = install.env.get("XDG_CACHE_HOME")
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def vsix_install(wheel: Path) -> Install:
    """The server as the .vsix bundles it (client-vscode/scripts/build.sh): the wheel and
    its dependencies in one folder, no bytecode, PyYAML without its libyaml extension;
    run by the machine's Python with that folder on PYTHONPATH, from another folder, as
    the extension does (resolve.ts)."""
    import zipfile
    from importlib import metadata

    libs = CACHE / "vsix" / "libs"
    if libs.parent.exists():
        shutil.rmtree(libs.parent)
    libs.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(libs)
    for name in _dependencies():
        dist = metadata.distribution(name)
        tops = {
            Path(str(f)).parts[0]
            for f in dist.files or ()
            if not str(f).startswith("..") and ".dist-info" not in str(f)
        }
        for top in tops:
            src = Path(str(dist.locate_file(top)))
            if src.is_dir():
                shutil.copytree(src, libs / top, dirs_exist_ok=True)
            elif src.is_file():
                shutil.copy2(src, libs / top)
    for p in sorted(libs.rglob("*"), reverse=True):
        if p.name == "__pycache__":
            shutil.rmtree(p)
        elif p.suffix in (".so", ".pyd", ".dylib"):
            p.unlink()
    cache = CACHE / "user-cache-vsix"
    shutil.rmtree(cache, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    env = {**NO_BYTECODE, "PYTHONPATH": str(libs), "PYTHONSAFEPATH": "1",
           "XDG_CACHE_HOME": str(cache)}  # fmt: skip
    return Install("vsix", (base, "-m", "mantle_lsp"), env, libs.parent)


def _agent_neighbour(n: int) -> int:
    """The first skill after the middle one that has a memory.yml (agent profile)."""
    return next(i for i in range(n // 2 + 1, n) if agent_has_memory(i))


PROFILES: dict[str, tuple[Any, str, Any]] = {
    # name: (generator, a public field another skill may read, the skill whose field the
    # document opened first reads: a function of the size, None for the next skill)
    "dense": (generate, "status", None),
    "realistic": (generate_realistic, "topic", None),
    "agent": (generate_agent, AGENT_FIELD, _agent_neighbour),
}


def _cold(times: list[float] | None, floor: float) -> str:
    """Best and median of an install's cold starts, and their ratios to the floor."""
    if not times:
        return "n/a | n/a"
    best, median = min(times), statistics.median(times)
    return f"{best:.2f} s, {median:.2f} s | {best / floor:.1f}×, {median / floor:.1f}×"


def vscode_section() -> str:
    """Issue 32's real-VS-Code targets, from the e2e test's figures (bench/vscode.py)."""
    return vscode_section_of(load_vscode())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--profiles", nargs="+", choices=sorted(PROFILES), default=list(PROFILES))
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=7, help="timed runs per figure (best of)")
    ap.add_argument(
        "--installs",
        nargs="*",
        choices=["wheel", "vsix"],
        default=["wheel", "vsix"],
        help="the installs whose cold start is measured at the largest size (issue 32)",
    )
    args = ap.parse_args()
    compile_bytecode()
    installs: tuple[Install, ...] = ()
    if args.installs:
        wheel = _wheel()
        made = {"wheel": wheel_install, "vsix": vsix_install}
        installs = tuple(made[name](wheel) for name in args.installs)
    rows = []
    for profile in args.profiles:
        make, public_field, neighbour_of = PROFILES[profile]
        for n in args.sizes:
            project = make(CACHE / f"{profile}-{n}", n)
            neighbour = neighbour_of(n) if neighbour_of is not None else None
            at = installs if n == max(args.sizes) else ()
            floor, check, serial, figs = asyncio.run(
                measure(project, n, args.rounds, args.runs, public_field, neighbour, at)
            )
            rows.append((profile, n, floor, check, serial, figs))
            print(
                f"{profile} N={n}: floor {floor:.3f}s, check {check:.3f}s ({check / floor:.2f}x)",
                flush=True,
            )
    table = [
        "| profile | skills | floor | check | check/floor | check --jobs 1 | /floor "
        "| opened file (push) | /floor | opened file (pull) | /floor "
        "| completion there | hover there | initialize answered "
        "| first progress | first diagnostics "
        "| /floor | pulled (VS Code) | /floor | index complete | completion p50/p95 "
        "| resolve p95 | hover p50/p95 "
        "| edit skill.md p50/p95 | edit memory.yml p50/p95 "
        "| dependent file p95 | peak RSS (worker) | 2 processes got "
        "| opened file, wheel (pull): best, median | /floor "
        "| opened file, .vsix (pull): best, median | /floor | .vsix first start |",
        "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: "
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for profile, n, floor, check, serial, f in rows:
        op, opp = f.opened or OpenFirst(), f.opened_pulled or OpenFirst()
        table.append(
            # the check's ratio to two places: its targets (2.5x, 3x) are close to it
            f"| {profile} | {n} | {floor:.3f} s | {check:.3f} s | {check / floor:.2f}x | "
            f"{serial:.2f} s | {serial / floor:.1f}x | "
            f"{op.diagnostics:.2f} s{' (wrong first)' if op.wrong_first else ''} | "
            f"{op.diagnostics / floor:.1f}x | "
            f"{opp.diagnostics:.2f} s{' (wrong first)' if opp.wrong_first else ''} | "
            f"{opp.diagnostics / floor:.1f}x | "
            f"{f.opened_completion:.2f} s{'' if f.opened_completion_ok else ' (wrong)'} | "
            f"{f.opened_hover:.2f} s | {op.initialize:.2f} s | "
            f"{f'{op.progress:.2f} s' if op.progress is not None else 'none'} | "
            f"{f.first_diagnostics:.2f} s | {f.first_diagnostics / floor:.1f}x | "
            f"{f.first_pulled:.2f} s | {f.first_pulled / floor:.1f}x | "
            f"{f.index_complete:.2f} s | "
            f"{ms(pct(f.completion, 0.5))} / {ms(pct(f.completion, 0.95))} | "
            f"{ms(pct(f.resolve, 0.95)) if f.resolve else 'n/a'} | "
            f"{ms(pct(f.hover, 0.5))} / {ms(pct(f.hover, 0.95))} | "
            f"{ms(pct(f.edit_skill, 0.5))} / {ms(pct(f.edit_skill, 0.95))} | "
            f"{ms(pct(f.edit_memory, 0.5))} / {ms(pct(f.edit_memory, 0.95))} | "
            f"{ms(pct(f.dependent, 0.95)) if f.dependent else 'n/a'} | {f.peak_rss_mb:.0f} MB"
            f"{f' ({f.worker_rss_mb:.0f} MB)' if f.worker_rss_mb else ''} | "
            f"{f.capacity[0]:.1f}–{f.capacity[1]:.1f} cores | "
            f"{_cold(f.installed.get('wheel'), floor)} | "
            f"{_cold(f.installed.get('vsix'), floor)} | "
            f"{f'{f.vsix_first:.2f} s' if f.vsix_first else 'n/a'} |"
        )
    machine = f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores"
    report = "\n".join(table)
    print(report)
    print(f"\nmachine: {machine}")
    print(f"\n{vscode_section()}")
    if args.out:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        header = (
            "# Benchmark results\n\n"
            f"Written by `make bench` (`bench/run.py --sizes {' '.join(map(str, args.sizes))} "
            f"--profiles {' '.join(args.profiles)} "
            f"--rounds {args.rounds} --runs {args.runs}`) on {time.strftime('%Y-%m-%d')}; "
            f"load average {load:.1f} when it ended. Each row's figures come from the same "
            f"run; every timing is the best of {args.runs} interleaved runs, each next to a "
            "sample of the floor, and the floor is the best of those samples, so the ratios "
            "hold even when the machine is busy. Requests are timed once the server's index "
            "is complete. See "
            "performance.md for what they mean and the targets.\n\n"
        )
        args.out.write_text(
            header + report + f"\n\nMachine: {machine}.\n\n" + vscode_section(), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
