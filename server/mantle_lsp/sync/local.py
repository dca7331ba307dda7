"""Read a ``memory-layers/`` folder for a sync, byte for byte.

The editor and ``check`` read files with their line breaks normalized; a sync must not: an
entry's content is everything after its frontmatter exactly as the file holds it (CRLF
and lone CR included), so that a pull followed by a diff shows nothing and a push sends
what the file says. A file that cannot be read faithfully — not UTF-8, a NUL byte, over
the size limit — is not sent: it is reported, and the service's entry of that key is left
alone (never updated from a mangled text, never pruned). A leading byte-order mark is
taken off, as every editor does.

The folder walk is :func:`~mantle_lsp.model.layers.scan_layer_folder`'s (the editor's
and ``check``'s too), and what it does not read (links out of the folder, linked folders,
folders too deep) is kept as ``blind``: a sync leaves that part of the service alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..model.layer_paths import SYNC_FILE
from ..model.layers import build_layer_set, scan_layer_folder
from ..model.source import read_file_bytes
from ..syntax.text import BOM
from ..syntax.yaml_tree import YMap, YScalar, parse_yaml
from .state import Desired, desired

_REPOSITORY_ID = re.compile(r"[0-9a-z][0-9a-z-]{7,62}")


def read_exact(path: Path) -> tuple[str | None, str]:
    """The text of ``path`` exactly as it is (a leading BOM off), or None and why not."""
    data = read_file_bytes(path)
    if not isinstance(data, bytes):
        return None, data.issues[0].message if data.issues else "it cannot be read"
    if b"\0" in data:
        return None, "it has a NUL byte (binary data), which an entry cannot hold"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start} (save it as UTF-8)"
    return (text[1:] if text.startswith(BOM) else text), ""


def read_folder(root: Path) -> Desired:
    """What the folder ``root`` asks for (see :func:`~.state.desired`), read exactly, with
    what it cannot send (``skipped``), where it was not read (``blind``), every file's
    path and the repository id of ``sync.yml``."""
    scan = scan_layer_folder(root)
    texts: dict[Path, str] = {}
    unreadable: dict[str, str] = {}
    paths: set[str] = set()
    for p in scan.files:
        rel = p.relative_to(root).as_posix()
        paths.add(rel)
        text, why = read_exact(p)
        if text is None:
            unreadable[rel] = why
        else:
            texts[p] = text
    out = desired(build_layer_set(root, texts, scan.folders))
    out.blind = scan.blind
    out.paths = paths
    for rel, why in sorted(unreadable.items()):
        if rel == "cascades.yml":
            out.problems.append(f"cascades.yml cannot be read: {why}")
            continue
        layer, _, key = rel.partition("/")
        if key == "layer.yml":
            out.skipped[layer] = f"its layer.yml cannot be read: {why}"
            out.layers.pop(layer, None)
        else:
            out.skipped[rel] = why
    sync = root / SYNC_FILE
    if os.path.lexists(sync):
        paths.add(SYNC_FILE)
        repository, problem = read_repository(sync)
        if problem:
            out.problems.append(problem)
        out.repository = repository
    return out


def read_repository(path: Path) -> tuple[str | None, str]:
    """The ``repository:`` id of a ``sync.yml``, or None and what is wrong with it."""
    where = f"{path.parent.name}/{path.name}"
    if path.is_symlink():
        return None, f"{where} is a symbolic link; it should be the file a push wrote"
    text, why = read_exact(path)
    if text is None:
        return None, f"{where} cannot be read: {why}"
    root, issues = parse_yaml(text)
    node = root.get("repository") if isinstance(root, YMap) and not issues else None
    value = node.value if isinstance(node, YScalar) else None
    if not isinstance(value, str) or not _REPOSITORY_ID.fullmatch(value):
        return None, (
            f"{where}: `repository:` should be the id a push wrote there (lower-case "
            "letters, digits and `-`); restore the file from git"
        )
    return value, ""


def repository_file(repository: str) -> str:
    """The text of a new ``sync.yml``."""
    return (
        "# mantle-lsp layers: this folder's id on Cadenya. The layers a push creates carry\n"
        "# it (label mantle-lsp-repository), and `push --prune` deletes no other layer.\n"
        "# Commit this file; a pull never writes it.\n"
        f"repository: {repository}\n"
    )
