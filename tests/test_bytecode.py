"""Bytecode in the user's cache folder when Python would not keep it (bytecode.py,
issue 32): with ``PYTHONDONTWRITEBYTECODE`` and no ``__pycache__`` beside the package (the
.vsix bundle, ``uv pip install``), the first start compiles and keeps what it compiled,
and a second start compiles nothing of the package; the package's folder is not written.
Counted with the interpreter's own audit events (``compile``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_lsp_support import TELECOM

pytestmark = pytest.mark.timeout(180)

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "mantle_lsp"

# Records every module compiled from a file below the bundle, then runs the console
# script's entry with the given arguments (it leaves with os._exit: written as it goes).
RUN = """\
import sys
bundle, log = sys.argv[1], sys.argv[2]
def hook(event, args):
    if event == "compile" and isinstance(args[1], str) and args[1].startswith(bundle):
        with open(log, "a", encoding="utf-8") as f:
            f.write(args[1] + "\\n")
sys.addaudithook(hook)
sys.argv = ["mantle-lsp", *sys.argv[3:]]
from mantle_lsp.cli.entry import entry
entry()
"""


def _bundle(tmp_path: Path) -> Path:
    """The package alone in a folder, without bytecode (as the .vsix bundles it)."""
    libs = tmp_path / "libs"
    shutil.copytree(PACKAGE, libs / "mantle_lsp", ignore=shutil.ignore_patterns("__pycache__"))
    return libs


def _env(tmp_path: Path, libs: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTLE_LSP_")}
    env.update(
        PYTHONPATH=str(libs),
        PYTHONDONTWRITEBYTECODE="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        **extra,
    )
    return env


# what runs before the cache is in use: compiled at every start (~2 ms)
BOOTSTRAP = {"__init__.py", "cli/__init__.py", "cli/entry.py", "bytecode.py"}


def _compiled(
    tmp_path: Path, libs: Path, args: list[str], stdin: bytes = b"", **env: str
) -> list[str]:
    """The package's modules compiled by one run, but the bootstrap's."""
    log = tmp_path / "compiled.log"
    log.unlink(missing_ok=True)
    subprocess.run(
        [sys.executable, "-c", RUN, str(libs), str(log), *args],
        input=stdin,
        env=_env(tmp_path, libs, **env),
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )
    compiled = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    package = libs / "mantle_lsp"
    return [c for c in compiled if Path(c).relative_to(package).as_posix() not in BOOTSTRAP]


def _frame(msg: dict[str, object]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _session(root: Path) -> bytes:
    """An editor's session: start, open a skill, index, quit."""
    skill = root / "skills" / "plan_change" / "skill.md"
    td = {"uri": skill.as_uri(), "languageId": "mantle-skill", "version": 1,
          "text": skill.read_text(encoding="utf-8")}  # fmt: skip
    caps = {"textDocument": {"publishDiagnostics": {}}}
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": caps}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": td}},
        {"jsonrpc": "2.0", "id": 2, "method": "mantle/status", "params": None},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]  # fmt: skip
    return b"".join(_frame(m) for m in msgs)


def test_a_second_check_compiles_nothing_of_the_package(tmp_path: Path) -> None:
    libs = _bundle(tmp_path)
    first = _compiled(tmp_path, libs, ["check", str(TELECOM)])
    assert len(first) > 50  # the package's modules, compiled once
    assert _compiled(tmp_path, libs, ["check", str(TELECOM)]) == []
    assert not list(libs.rglob("__pycache__"))  # PYTHONDONTWRITEBYTECODE: not beside it
    kept = list((tmp_path / "cache" / "mantle-lsp" / "pycache").rglob("*.pyc"))
    assert len(kept) >= len(set(first))


def test_a_second_server_start_compiles_nothing_of_the_package(tmp_path: Path) -> None:
    libs = _bundle(tmp_path)
    root = TELECOM.resolve()
    assert len(_compiled(tmp_path, libs, ["serve"], _session(root))) > 50
    assert _compiled(tmp_path, libs, ["serve"], _session(root)) == []


def test_a_changed_module_is_compiled_again_once(tmp_path: Path) -> None:
    libs = _bundle(tmp_path)
    args = ["check", str(TELECOM)]
    _compiled(tmp_path, libs, args)
    changed = libs / "mantle_lsp" / "model" / "engine.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert _compiled(tmp_path, libs, args) == [str(changed)]
    assert _compiled(tmp_path, libs, args) == []


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    libs = _bundle(tmp_path)
    args = ["check", str(TELECOM)]
    off = {"MANTLE_LSP_NO_BYTECODE_CACHE": "1"}
    assert _compiled(tmp_path, libs, args, **off)
    assert _compiled(tmp_path, libs, args, **off)  # compiled again: nothing kept
    assert not (tmp_path / "cache").exists()


def test_a_torn_cache_file_is_compiled_again(tmp_path: Path) -> None:
    libs = _bundle(tmp_path)
    args = ["check", str(TELECOM)]
    _compiled(tmp_path, libs, args)
    kept = sorted((tmp_path / "cache").rglob("engine.*.pyc"))
    assert kept
    kept[0].write_bytes(kept[0].read_bytes()[:40])  # cut short
    assert _compiled(tmp_path, libs, args) == [str(libs / "mantle_lsp" / "model" / "engine.py")]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_cache_folder_others_may_write_to_is_not_used(tmp_path: Path) -> None:
    """Bytecode read from the cache runs in the process: a folder another user could plant
    it in is left alone (the modules are compiled every time, nothing is written)."""
    libs = _bundle(tmp_path)
    cache = tmp_path / "cache" / "mantle-lsp" / "pycache"
    cache.mkdir(parents=True)
    cache.chmod(0o777)
    args = ["check", str(TELECOM)]
    assert _compiled(tmp_path, libs, args)
    assert _compiled(tmp_path, libs, args)
    assert not list(cache.rglob("*.pyc"))
