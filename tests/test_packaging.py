"""What a user installs: the wheel and sdist from ``python -m build`` (installed into a
fresh venv and run), the pre-commit hook (through ``pre-commit try-repo``) and the GitHub
Actions workflow that docs/ci.md tells people to copy.

The build and pre-commit tests work on a copy of the working tree (tracked and untracked
files git does not ignore, committed in a scratch repository): the checkout is shared,
so nothing is built in it, and ``try-repo`` on the checkout itself would leave out new
files that are not committed yet. They need a package index (setuptools, the
dependencies): ``-m "not network"`` skips them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import re
import select
import shlex
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import venv
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from mantle_lsp import __version__

REPO = Path(__file__).resolve().parents[1]
GIT = ["git", "-c", "user.name=mantle-lsp tests", "-c", "user.email=tests@example.invalid"]


def _git_files(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout
    return [f for f in out.decode().split("\0") if f and (root / f).is_file()]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working tree, committed in a scratch git repository."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout of mantle-lsp")
    dst = tmp_path_factory.mktemp("src") / "mantle-lsp"
    for rel in _git_files(REPO):
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    subprocess.run([*GIT, "init", "-q", str(dst)], check=True)
    subprocess.run([*GIT, "-C", str(dst), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(dst), "commit", "-qm", "snapshot"], check=True)
    return dst


# ---- the wheel and the sdist ----------------------------------------------------------


@pytest.fixture(scope="module")
def dists(source: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel); ``python -m build`` builds the wheel from the sdist, so a file
    missing from the sdist breaks the wheel."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "deprecated" not in r.stdout + r.stderr, "setuptools warns about the metadata"
    (sdist,) = out.glob("mantle_lsp-*.tar.gz")
    (wheel,) = out.glob("mantle_lsp-*-py3-none-any.whl")
    return sdist, wheel


@pytest.mark.network
@pytest.mark.timeout(300)  # builds and installs; longer on a cold cache
def test_sdist_has_what_the_build_needs(dists: tuple[Path, Path]) -> None:
    sdist, _ = dists
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    pages = {p.name for p in (REPO / "docs/diagnostics").glob("*.md")}
    assert {"LICENSE", "README.md", "pyproject.toml", "grammars/conditions.lark"} <= names
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("docs/diagnostics/")} == pages
    assert "server/mantle_lsp/cli/main.py" in names


@pytest.mark.network
@pytest.mark.timeout(300)  # builds and installs; longer on a cold cache
def test_wheel_metadata_names_licence_urls_and_classifiers(dists: tuple[Path, Path]) -> None:
    _, wheel = dists
    assert wheel.name == f"mantle_lsp-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = Parser().parsestr(zf.read(f"mantle_lsp-{__version__}.dist-info/METADATA").decode())
        licence = zf.read(f"mantle_lsp-{__version__}.dist-info/licenses/LICENSE").decode()
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["License-File"] == "LICENSE"
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Repository", "Issues", "Documentation"} <= set(urls)
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.10" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "mantle_lsp/grammars/conditions.lark" in names
    assert "mantle_lsp/py.typed" in names
    pages = {p.name for p in (REPO / "docs/diagnostics").glob("*.md")}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("mantle_lsp/code_docs/")} >= pages


def _frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class _Reader:
    """LSP messages from a pipe, with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.buf = b""

    def _more(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([self.fd], [], [], max(left, 0))
        if not ready:
            raise TimeoutError("no message from the server")
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise EOFError("the server closed its output")
        self.buf += chunk

    def next(self, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            self._more(deadline)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        m = re.search(rb"Content-Length: *(\d+)", head, re.I)
        assert m, head
        n = int(m.group(1))
        while len(self.buf) < n:
            self._more(deadline)
        body, self.buf = self.buf[:n], self.buf[n:]
        msg: dict[str, Any] = json.loads(body)
        return msg

    def until(self, pred: Any, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            msg = self.next(max(deadline - time.monotonic(), 0.01))
            if pred(msg):
                return msg


CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def installed(dists: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``mantle-lsp`` script of a fresh venv with the wheel (and its dependencies)."""
    _, wheel = dists
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", str(wheel)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run(
        [str(py), "-c", "import mantle_lsp; print(mantle_lsp.__file__)"],
        capture_output=True,
        text=True,
        cwd=env_dir,
        env=CLEAN_ENV,
    )
    assert r.stdout.startswith(str(env_dir)), r.stdout + r.stderr  # not the checkout
    return env_dir / "bin" / "mantle-lsp"


@pytest.mark.network
@pytest.mark.timeout(300)  # builds and installs; longer on a cold cache
def test_installed_wheel_runs_version_check_and_explain(installed: Path, tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(installed), *args], capture_output=True, text=True, cwd=tmp_path, env=CLEAN_ENV
        )

    r = run("--version")
    assert (r.returncode, r.stdout.strip()) == (0, f"mantle-lsp {__version__}")
    r = run("check", str(REPO / "examples/telecom"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("All checks passed")
    r = run("check", str(REPO / "examples/telecom-broken"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "error[mantle.validation.prose.unknown_memory_key]" in r.stdout
    r = run("explain", "lsp.flow.unreachable_step")  # a page shipped as package data
    assert r.returncode == 0 and r.stdout.startswith("# lsp.flow.unreachable_step"), r.stderr


class _Server:
    """``mantle-lsp serve`` over stdio, driven message by message."""

    def __init__(self, exe: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [str(exe), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=CLEAN_ENV,
        )
        self.reader = _Reader(self.proc)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frame({"jsonrpc": "2.0", **msg}))
        self.proc.stdin.flush()

    def initialize(self, root: Path) -> dict[str, Any]:
        self.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": os.getpid(),
                    "rootUri": root.as_uri(),
                    "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                    "capabilities": {},
                },
            }
        )
        init = self.reader.until(lambda m: m.get("id") == 1)
        self.send({"method": "initialized", "params": {}})
        return init

    def shutdown_and_exit(self) -> int:
        self.send({"id": 2, "method": "shutdown"})
        assert self.reader.until(lambda m: m.get("id") == 2)["result"] is None
        self.send({"method": "exit"})
        return self.proc.wait(timeout=30)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


@pytest.mark.network
@pytest.mark.timeout(300)
def test_installed_server_answers_initialize_and_publishes_diagnostics(
    installed: Path, tmp_path: Path
) -> None:
    root = REPO / "examples/telecom-broken"
    skill = root / "skills/plan_change/skill.md"
    server = _Server(installed, tmp_path)
    try:
        init = server.initialize(root)
        assert init["result"]["serverInfo"] == {"name": "mantle-lsp", "version": __version__}
        assert "completionProvider" in init["result"]["capabilities"]
        server.send(
            {
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": skill.as_uri(),
                        "languageId": "mantle-skill",
                        "version": 1,
                        "text": skill.read_text(encoding="utf-8"),
                    }
                },
            }
        )
        pub = server.reader.until(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == skill.as_uri()
            )
        )
        codes = {d["code"] for d in pub["params"]["diagnostics"]}
        assert "mantle.validation.prose.unknown_memory_key" in codes
        # initialize was answered before the server was imported, from the wheel's
        # capabilities.json, and the server's own answer agreed (lsp/handshake.py)
        server.send({"id": "status", "method": "mantle/status", "params": None})
        status = server.reader.until(lambda m: m.get("id") == "status")
        assert status["result"]["earlyInitialize"] is True
        server.shutdown_and_exit()
    finally:
        server.close()


@pytest.mark.network
@pytest.mark.timeout(300)
def test_installed_server_exits_with_status_0_after_shutdown_and_exit(
    installed: Path, tmp_path: Path
) -> None:
    server = _Server(installed, tmp_path)
    try:
        server.initialize(tmp_path)
        assert server.shutdown_and_exit() == 0  # the LSP spec: 0 after a shutdown request
    finally:
        server.close()


# ---- pre-commit -----------------------------------------------------------------------

AGENT = """\
agent:
  id: card-agent
  persona: A careful assistant.
orchestrator:
  model_group: main
"""
INTEGRATIONS = """\
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
"""
MEMORY = """\
schema:
  public:
    reason:
      type: text
"""
SKILL = """\
---
description: Replace a card.
---
if: session.card.{field} == 'lost'
Ask for the card number.
"""


def _pre_commit() -> list[str]:
    exe = Path(sys.executable).with_name("pre-commit")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("pre-commit")
    if found is None:
        pytest.skip("pre-commit is not installed (it is in the `test` extra)")
    return [found]


@pytest.mark.network
@pytest.mark.timeout(300)  # builds and installs; longer on a cold cache
def test_pre_commit_hook_fails_on_a_finding_and_passes_on_a_clean_agent(
    source: Path, tmp_path: Path
) -> None:
    pre_commit = _pre_commit()
    agent = tmp_path / "agent-repo"
    files = {
        "agent.yml": AGENT,
        "integrations.yml": INTEGRATIONS,
        "skills/card/memory.yml": MEMORY,
        "skills/card/skill.md": SKILL.format(field="reasn"),
        # not a Mantle file: never passed to the hook
        "notes/README.md": "if: session.card.reasn\n",
    }
    for rel, text in files.items():
        (agent / rel).parent.mkdir(parents=True, exist_ok=True)
        (agent / rel).write_text(text, encoding="utf-8")
    subprocess.run([*GIT, "init", "-q", str(agent)], check=True)

    def try_repo() -> subprocess.CompletedProcess[str]:
        subprocess.run([*GIT, "-C", str(agent), "add", "-A"], check=True)
        return subprocess.run(
            [*pre_commit, "try-repo", str(source), "mantle-lsp", "--all-files", "--color=never"],
            cwd=agent,
            capture_output=True,
            text=True,
            env=CLEAN_ENV,
        )

    r = try_repo()
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"mantle-lsp check\.+Failed", r.stdout), r.stdout
    assert (
        "skills/card/skill.md:4:5: error[mantle.validation.prose.unknown_memory_key] prose "
        "`if:` condition reads `card.reasn`" in r.stdout
    ), r.stdout
    assert "notes/README.md" not in r.stdout

    (agent / "skills/card/skill.md").write_text(SKILL.format(field="reason"), encoding="utf-8")
    r = try_repo()
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"mantle-lsp check\.+Passed", r.stdout), r.stdout


def test_hook_manifest_matches_mantle_files_only() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "mantle-lsp"
    assert hook["entry"] == "mantle-lsp check --force-exclude"
    assert hook["language"] == "python"
    files = re.compile(hook["files"])
    for path in (
        "skills/card/skill.md",
        "agents/a/skills/card/memory.yml",
        "memory.yml",
        "responses.yml",
        "skills/card/responses.yml",
        "agent.yml",
        "integrations.yml",
        "skills/card/tools.py",
        "skills/card/tools/lookup.py",
        "tools/billing.py",
        "memory-layers/cascades.yml",
        "memory-layers/base-customer/procedures/refunds.md",
    ):
        assert files.search(path), path
    for path in ("README.md", "skills/card/notes.md", "setup.py", "my_agent.yml", "tools.pyc"):
        assert not files.search(path), path


# ---- the workflows and configurations docs/ci.md and the README give ------------------

FENCE = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)


def _yaml_blocks(*docs: str) -> list[dict[str, Any]]:
    out = []
    for doc in docs:
        for m in FENCE.finditer((REPO / doc).read_text(encoding="utf-8")):
            data = yaml.safe_load(m.group(1))
            assert isinstance(data, dict), m.group(1)
            out.append(data)
    return out


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    from mantle_lsp.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def _check_command(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``mantle-lsp`` command line names a subcommand and options that exist, with
    allowed values; ``pip install mantle-lsp==X`` names this version."""
    argv = shlex.split(line)
    if ">" in argv:
        argv = argv[: argv.index(">")]
    if argv[:2] == ["pip", "install"]:
        assert f"mantle-lsp=={__version__}" in argv, line
        return
    assert argv[0] == "mantle-lsp", line
    usage = _help(capsys, argv[1])
    for i, arg in enumerate(argv[2:], start=2):
        if not arg.startswith("--"):
            continue
        opt = arg.split("=", 1)[0]
        # an option, or its alias after `, ` (`--output-format {…}, --format {…}`)
        m = re.search(
            rf"(?m)(?:^\s+(?:-\w, )?|, ){re.escape(opt)}(?: \{{([^}}]*)\}}| (\S+))?", usage
        )
        assert m, f"{line}: `mantle-lsp {argv[1]}` has no option {opt}"
        if m.group(1):  # a choice
            value = arg.split("=", 1)[1] if "=" in arg else argv[i + 1]
            assert value in m.group(1).split(","), f"{line}: {opt} {value}"


def test_ci_docs_workflows_parse_and_name_real_commands_and_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocks = _yaml_blocks("docs/ci.md", "README.md")
    workflows = [b for b in blocks if "jobs" in b]
    configs = [b for b in blocks if "repos" in b]
    assert len(workflows) >= 2 and configs
    hook_ids = {
        h["id"]
        for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    }
    for cfg in configs:
        (repo,) = cfg["repos"]
        assert repo["rev"] == f"v{__version__}"
        assert {h["id"] for h in repo["hooks"]} <= hook_ids
    formats = set()
    for wf in workflows:
        assert wf.get(True) or wf.get("on")  # PyYAML reads the key `on` as True
        for job in wf["jobs"].values():
            runs = [s["run"] for s in job["steps"] if "run" in s]
            uses = [s["uses"] for s in job["steps"] if "uses" in s]
            assert all(re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", u) for u in uses), uses
            for run in runs:
                for line in run.strip().splitlines():
                    _check_command(line, capsys)
            checks = [r for r in runs if r.startswith("mantle-lsp check")]
            assert checks, job
            fmt = re.search(r"--(?:output-)?format[ =](\w+)", checks[0])
            formats.add(fmt.group(1) if fmt else "text")
            if fmt and fmt.group(1) == "sarif":
                out = checks[0].split(">", 1)[1].strip()
                (upload,) = (s for s in job["steps"] if "upload-sarif" in s.get("uses", ""))
                assert upload["with"]["sarif_file"] == out
                assert "failure()" in upload["if"]  # uploads also when the check fails
                assert wf["permissions"]["security-events"] == "write"
    assert {"sarif", "github"} <= formats


# ---- the VS Code extension: what a marketplace (VS Code's, Open VSX) is given ---------

CLIENT = REPO / "client-vscode"
PACKAGE: dict[str, Any] = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))
SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?"
)
# the categories VS Code's marketplace offers
CATEGORIES = {
    "AI", "Azure", "Chat", "Data Science", "Debuggers", "Education", "Extension Packs",
    "Formatters", "Keymaps", "Language Packs", "Linters", "Machine Learning", "Notebooks",
    "Other", "Programming Languages", "SCM Providers", "Snippets", "Testing", "Themes",
    "Visualization",
}  # fmt: skip


def _settings_table() -> Any:
    spec = importlib.util.spec_from_file_location(
        "settings_table", CLIENT / "scripts/settings_table.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_extension_readme_settings_table_is_package_json() -> None:
    readme = (CLIENT / "README.md").read_text(encoding="utf-8")
    assert _settings_table().render(readme, PACKAGE) == readme, (
        "client-vscode/README.md: run `python client-vscode/scripts/settings_table.py`"
    )
    for name in PACKAGE["contributes"]["configuration"]["properties"]:
        assert f"| `{name}` |" in readme


def test_extension_version_is_the_server_version() -> None:
    lock = json.loads((CLIENT / "package-lock.json").read_text(encoding="utf-8"))
    with (REPO / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert PACKAGE["version"] == lock["version"] == project["version"] == __version__
    changelog = (CLIENT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {__version__}\n" in changelog


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_extension_manifest_has_what_marketplaces_ask_for() -> None:
    """The checks vsce and Open VSX make on package.json (Open VSX's server rejects an
    invalid name, version, URL or gallery banner; its CLI wants a licence)."""
    p = PACKAGE
    for key in ("publisher", "name", "version", "displayName", "description", "license"):
        assert p.get(key), key
    for key in ("publisher", "name"):
        assert re.fullmatch(r"[\w\-+$~]+", p[key]) and len(p[key]) <= 255, key
    assert SEMVER.fullmatch(p["version"])
    assert p["license"] == "Apache-2.0"
    assert (CLIENT / "LICENSE").read_text(encoding="utf-8") == (REPO / "LICENSE").read_text(
        encoding="utf-8"
    )
    for url in (p["homepage"], p["bugs"]["url"], p["repository"]["url"]):
        assert re.fullmatch(r"https://[\w.-]+/\S*", url), url
    assert len(p["description"]) <= 2048 and len(p["displayName"]) <= 255
    assert set(p["categories"]) <= CATEGORIES
    assert 0 < len(p["keywords"]) <= 30  # vsce refuses more than 30
    assert p["galleryBanner"]["theme"] in ("dark", "light")
    assert re.fullmatch(r"#[0-9A-Fa-f]{6}", p["galleryBanner"]["color"])
    assert "enabledApiProposals" not in p  # neither marketplace takes proposed APIs
    # vsce: @types/vscode must not be newer than engines.vscode
    types = p["devDependencies"]["@types/vscode"]
    assert tuple(map(int, types.split("."))) <= tuple(
        map(int, p["engines"]["vscode"].lstrip("^~>=").split("."))
    )
    assert p["icon"] == "icon.png"
    width, height = _png_size((CLIENT / "icon.png").read_bytes())
    assert width == height >= 128
    ignore = (CLIENT / ".vscodeignore").read_text(encoding="utf-8").split()
    for f in ("LICENSE", "CHANGELOG.md", "README.md", "icon.png"):
        assert f"!{f}" in ignore, f


def _repo_path(url: str, kind: str) -> Path:
    """The file of this repository a packaged README's URL points at."""
    base = PACKAGE["repository"]["url"].removesuffix(".git") + f"/{kind}/HEAD/"
    parts = urlsplit(url)
    path = posixpath.normpath(parts.path)  # the `..` a browser resolves
    prefix = urlsplit(base).path
    assert url.startswith(base) and path.startswith(prefix), url
    return REPO / path.removeprefix(prefix)


def test_vsix_is_valid_for_the_marketplace_and_open_vsx() -> None:
    vsix = CLIENT / f"mantle-{__version__}.vsix"
    if not vsix.exists():
        pytest.skip("no .vsix: `make vsix` builds it (`make test` does, before the unit tests)")
    sources = [CLIENT / f for f in ("package.json", "README.md", "icon.png", "CHANGELOG.md")]
    assert vsix.stat().st_mtime >= max(f.stat().st_mtime for f in sources), (
        f"{vsix.name} is older than its sources: run `make vsix`"
    )
    with zipfile.ZipFile(vsix) as zf:
        names = zf.namelist()
        manifest = zf.read("extension.vsixmanifest").decode()
        packaged = json.loads(zf.read("extension/package.json"))
        readme = zf.read("extension/readme.md").decode()
        icon = zf.read("extension/icon.png")
    assert not [n for n in names if n.startswith("/") or ".." in n.split("/")]
    for n in ("[Content_Types].xml", "extension/changelog.md", "extension/LICENSE.txt"):
        assert n in names, n
    assert f'Version="{__version__}"' in manifest
    assert "<License>extension/LICENSE.txt</License>" in manifest
    assert "<Icon>extension/icon.png</Icon>" in manifest
    assert icon == (CLIENT / "icon.png").read_bytes()
    assert packaged["version"] == __version__ and packaged["license"] == "Apache-2.0"
    assert f"extension/server/libs/mantle_lsp-{__version__}.dist-info/METADATA" in names
    # every image is an https URL into the repository, of a file that exists there
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert len(images) >= 3
    for url in images:
        assert url.startswith("https://"), url
        assert _repo_path(url, "raw").is_file(), url
    links = [u for u in re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)", readme) if "/blob/" in u]
    for url in links:
        assert _repo_path(url, "blob").exists(), url
