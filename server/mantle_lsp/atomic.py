"""The one way mantle-lsp writes a file (``check --fix``, baselines, ``layers pull``).

:func:`write_bytes` writes a temporary file beside the target — its name starts with a
dot, so no walk takes it for a project file or a layer entry — flushes it to disk, gives
it the target's mode (and owner, where the process may), and renames it over the target.
A failure at any point (a full disk, a file-size limit, a text that cannot be encoded)
removes the temporary file and leaves the target's old bytes as they were.

Links: a target that is a symbolic link stays one — its target is written — and nothing is
written through a link (of the file or of a folder above it) that leads outside the folder
``within`` names: :class:`OutsideFolder` is raised instead. ``within`` is the folder the
user named (a project, a ``memory-layers/`` folder).

A hard link to the target is not kept: the rename gives the path a new file, as editors
that save atomically do (docs/security.md).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = ["OutsideFolder", "make_dirs", "real_target", "write_bytes", "write_text"]


class OutsideFolder(OSError):
    """A write that would go through a link to a place outside the named folder."""


def _within(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def real_target(path: Path, within: Path | None) -> Path:
    """The file a write of ``path`` changes: ``path`` with its links resolved. Raises
    :class:`OutsideFolder` when that file, or ``path`` as written, is not inside
    ``within`` (itself resolved)."""
    real = os.path.realpath(path)
    if within is not None:
        if not _within(os.path.abspath(path), os.path.abspath(within)):
            raise OutsideFolder(f"{path}: not inside {within}")
        if not _within(real, os.path.realpath(within)):
            raise OutsideFolder(f"{path}: a symbolic link leads outside {within}")
    return Path(real)


def make_dirs(folder: Path, within: Path | None) -> None:
    """Create ``folder`` and its missing parents, refusing a link that leads outside
    ``within`` (checked before anything is created)."""
    real_target(folder, within)
    folder.mkdir(parents=True, exist_ok=True)
    real_target(folder, within)  # a link made meanwhile is refused before any write


def write_bytes(path: Path, data: bytes, *, within: Path | None = None) -> None:
    """Replace the contents of ``path`` with ``data`` atomically (see the module)."""
    target = real_target(path, within)
    folder = target.parent
    tmp = folder / f".{target.name}.{secrets.token_hex(4)}.mantle-tmp"
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    # O_EXCL: never follow or reuse a file of that name; 0o666 less the umask, as open()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                done = os.write(fd, view)
                view = view[done:]
            if st is not None:
                os.chmod(tmp, st.st_mode & 0o7777)
                if hasattr(os, "chown"):
                    with contextlib.suppress(OSError):  # another owner: only root may
                        os.chown(tmp, st.st_uid, st.st_gid)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(
    path: Path, text: str, *, within: Path | None = None, encoding: str = "utf-8"
) -> None:
    """:func:`write_bytes` of ``text`` encoded (``newline`` as written: no translation).
    A text that cannot be encoded raises before any file is touched."""
    write_bytes(path, text.encode(encoding), within=within)
