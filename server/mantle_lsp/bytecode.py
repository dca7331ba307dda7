"""Bytecode kept in the user's cache folder when Python would not keep it (issue 32).

Without bytecode every start compiles every module again from source: ~0.3 s of the
server's start for this package alone, more with pygls and lsprotocol. Python writes
bytecode beside the source, in ``__pycache__``, but not under ``PYTHONDONTWRITEBYTECODE``
(set on many machines and containers) or ``-B``, nor into a folder it cannot write; the
.vsix ships none (its bundle runs on any Python 3.10+), and ``uv pip install`` writes none.

So the entry points (``mantle-lsp``, ``python -m mantle_lsp``) call :func:`install`
before they import anything else. When Python would not write bytecode for the folder
that holds this package (site-packages, the extension's bundle, a checkout), every module
imported from that folder from then on — this package and the libraries beside it — is
loaded by :class:`CachingLoader`: the bytecode beside the source when it is there and
fresh (as Python reads it), else the copy in ``<user cache>/mantle-lsp/pycache/``
(written on the first start, the source folder's path mirrored below it, as
``sys.pycache_prefix`` lays it out), else the source, compiled and then written there. The
standard library and every other folder are left to Python. (``sys.pycache_prefix`` was
not taken: Python then reads only the prefix, so the standard library's own bytecode
would be ignored and compiled again into the prefix.)

A copy is used only when its header names this interpreter's bytecode version and the
source's modification time and size, as Python checks its own; anything unreadable is
compiled again. The cache is a cache: written with a temporary file and a rename, without
``fsync`` (a torn file fails the checks and is rewritten), and any error writing it is
ignored. Bytecode read from it runs in this process, as Python's own ``__pycache__``
does: the folder is made private to the user (0700), and not used when another user owns
it or may write to it. It only ever holds the bytecode of this package and the libraries
beside it, never a project's code. ``MANTLE_LSP_NO_BYTECODE_CACHE=1`` turns it off.

This module imports only the standard library: it runs before everything else.
"""

from __future__ import annotations

import contextlib
import importlib.machinery as machinery
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from typing import Any

_HEADER = 16  # magic, flags, source mtime, source size (PEP 552)

_cache: Path | None = None  # in use (install, adopt)
_roots: tuple[Path, ...] = ()  # the source folders it serves


def user_cache_dir() -> Path | None:
    """``<user cache>/mantle-lsp``: ``$XDG_CACHE_HOME`` (else ``~/.cache``) on Linux and
    the BSDs, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows; None when no
    home folder is known."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base, "mantle-lsp", "Cache") if base else None
    home = os.path.expanduser("~")
    if not home or home == "~":
        return None
    if sys.platform == "darwin":
        return Path(home, "Library", "Caches", "mantle-lsp")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path(home, ".cache")
    return base / "mantle-lsp"


def _package_root() -> Path:
    """The folder that holds this package (site-packages, a bundle, ``server/``)."""
    return Path(__file__).resolve().parent.parent


def needed(root: Path) -> bool:
    """Whether Python would not write bytecode for the modules under ``root``."""
    if os.environ.get("MANTLE_LSP_NO_BYTECODE_CACHE"):
        return False
    if sys.dont_write_bytecode:
        return True
    return not os.access(root / "mantle_lsp", os.W_OK)


def install(force: bool = False) -> Path | None:
    """Load the modules of this package's folder through :class:`CachingLoader` when
    Python would not keep their bytecode (or ``force``). Returns the cache folder in use,
    or None. Called once, by the entry points, before their imports."""
    if _cache is not None:
        return _cache
    root = _package_root()
    if not (force or needed(root)):
        return None
    base = user_cache_dir()
    if base is None or not _private(base / "pycache"):
        return None
    return adopt(base / "pycache", [root])


def _private(folder: Path) -> bool:
    """Make ``folder`` (and its parent) if need be, and say whether only this user may
    write there: bytecode read from it runs in this process, so a folder another user
    can write to (or owns) is not used. (Windows: its own ACLs, not checked here.)"""
    try:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        if os.name != "posix":
            return True
        uid = os.getuid()
        for f in (folder.parent, folder):
            st = os.stat(f)
            if st.st_uid != uid or st.st_mode & 0o022:
                return False
        return True
    except OSError:
        return False


def adopt(cache: str | Path, roots: list[str] | list[Path]) -> Path:
    """Use ``cache`` for the modules under ``roots`` (a worker takes its server's)."""
    global _cache, _roots
    folders = [Path(os.path.abspath(r)) for r in roots]
    _cache, _roots = Path(cache), tuple(folders)
    finder_for = machinery.FileFinder.path_hook(
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (CachingLoader, machinery.SOURCE_SUFFIXES),
        (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES),
    )

    def hook(entry: str) -> Any:
        if not _under(entry, folders):
            raise ImportError("not a folder whose bytecode mantle-lsp keeps")
        return finder_for(entry)

    sys.path_hooks.insert(0, hook)
    # the finders of those folders made already (the one that found this package)
    for entry in list(sys.path_importer_cache):
        if isinstance(entry, str) and _under(entry, folders):
            del sys.path_importer_cache[entry]
    return _cache


def in_use() -> tuple[Path | None, tuple[Path, ...]]:
    """The cache folder and the source folders it serves (None, () when not in use)."""
    return _cache, _roots


def _under(entry: str, roots: list[Path]) -> bool:
    try:
        p = os.path.abspath(entry or os.curdir)
    except (OSError, ValueError):
        return False
    return any(p == str(r) or p.startswith(str(r) + os.sep) for r in roots)


def cached_path(source: str) -> Path | None:
    """Where the bytecode of ``source`` is kept in the cache (None: not in use)."""
    cache = _cache
    if cache is None:
        return None
    try:
        standard = importlib.util.cache_from_source(source)
    except NotImplementedError:  # no cache tag: no bytecode at all
        return None
    folder = Path(os.path.abspath(source)).parent
    parts = [p.replace(":", "").strip("\\/") for p in folder.parts]
    return Path(cache, *[p for p in parts if p], os.path.basename(standard))


def _fresh(data: bytes, st: os.stat_result) -> bool:
    """A timestamp-checked header for this interpreter and this very source."""
    if len(data) < _HEADER or data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    if int.from_bytes(data[4:8], "little") != 0:
        return False
    mtime = int.from_bytes(data[8:12], "little")
    size = int.from_bytes(data[12:16], "little")
    return mtime == (int(st.st_mtime) & 0xFFFFFFFF) and size == (st.st_size & 0xFFFFFFFF)


def _read(path: str | Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _load(data: bytes) -> Any:
    try:
        return marshal.loads(memoryview(data)[_HEADER:])
    except (ValueError, EOFError, TypeError):
        return None


class CachingLoader(machinery.SourceFileLoader):
    """A source loader that reads bytecode from beside the source, else from the cache,
    and writes what it compiles to the cache (see the module)."""

    def get_code(self, fullname: str) -> Any:
        source = self.get_filename(fullname)
        mine = cached_path(source)
        try:
            st = os.stat(source)
        except OSError:
            mine = None
        if mine is None:
            return super().get_code(fullname)
        with contextlib.suppress(NotImplementedError):
            standard = importlib.util.cache_from_source(source)
            data = _read(standard)
            if data is not None:
                if len(data) >= 8 and int.from_bytes(data[4:8], "little") != 0:
                    return super().get_code(fullname)  # hash-based: Python checks those
                if _fresh(data, st) and (code := _load(data)) is not None:
                    return code
        data = _read(mine)
        if data is not None and _fresh(data, st) and (code := _load(data)) is not None:
            return code
        code = self.source_to_code(self.get_data(source), source)
        _write(mine, _pyc(code, st))
        return code


def _pyc(code: Any, st: os.stat_result) -> bytes:
    return b"".join(
        (
            importlib.util.MAGIC_NUMBER,
            (0).to_bytes(4, "little"),
            (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little"),
            (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"),
            marshal.dumps(code),
        )
    )


def _write(path: Path, data: bytes) -> None:
    """Write a cache file: a temporary file beside it, then a rename (no ``fsync``: a
    cache). Errors are ignored: the module is compiled again next time."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
