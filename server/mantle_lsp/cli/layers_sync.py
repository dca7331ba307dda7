"""``mantle-lsp layers diff|push|pull``: sync a ``memory-layers/`` folder with Cadenya
through the official SDK (the optional extra ``mantle-lsp[cadenya]``; server/mantle_lsp/
sync/, docs/memory-layers.md "Sync").

- ``diff`` (what ``push`` would change, for review; changes nothing),
- ``push [--prune]`` (create or update layers by external id and their entries, delete
  only with ``--prune``, assign each cascade's layers to its ``variation:`` at positions
  0..n),
- ``pull [--prune]`` (write the folder from the service).

Credentials come from ``CADENYA_API_KEY`` and ``CADENYA_WORKSPACE_ID``;
``CADENYA_BASE_URL`` points the SDK at another address. A missing SDK or key, an error
status from the service or a network failure is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.layer_paths import LAYERS_DIR, find_layer_roots
from ..model.source import read_source

if TYPE_CHECKING:
    from ..model.layers import LayerSet
    from ..sync.plan import Plan

EXIT_OK, EXIT_PROBLEMS, EXIT_ERROR = 0, 1, 2

_ENV = (
    "Credentials: CADENYA_API_KEY and CADENYA_WORKSPACE_ID; CADENYA_BASE_URL sets another "
    "API address. Needs the optional extra: pip install 'mantle-lsp[cadenya]'."
)


def add_sync_commands(subparsers: Any) -> None:
    """Add ``diff``, ``push`` and ``pull`` to the ``layers`` group's ``subparsers``."""
    d = subparsers.add_parser(
        "diff",
        help="show what `layers push` would change on Cadenya (changes nothing)",
        description="Compare the memory-layers/ folder with the Cadenya workspace and "
        "print what `layers push` would change: layers and entries to create, update or "
        "delete (a unified diff of each entry file), and layer positions in the "
        "variations cascades.yml names. " + _ENV,
    )
    p = subparsers.add_parser(
        "push",
        help="make Cadenya hold what the memory-layers/ folder says",
        description="Create or update the folder's layers (by external id = folder name) "
        "and their entries, and assign each cascade's layers to its `variation:` at "
        "positions 0..n. Prints the diff first; refuses (exit 1) while it lists a "
        "problem. " + _ENV,
    )
    q = subparsers.add_parser(
        "pull",
        help="write the memory-layers/ folder from Cadenya",
        description="Write every layer of the workspace that has an external id (one "
        "folder each, one file per entry); files that already say the same are left "
        "alone, cascades.yml is never written. " + _ENV,
    )
    for sp, what in ((d, "compare"), (p, "push"), (q, "write")):
        sp.add_argument(
            "path",
            nargs="?",
            default=".",
            metavar="PATH",
            help=f"the memory-layers/ folder to {what}, or a folder holding one (default: .)",
        )
    d.add_argument("--prune", action="store_true", help="show what `push --prune` deletes")
    p.add_argument(
        "--prune",
        action="store_true",
        help="also delete what the folder no longer has: entries of its layers, layers a "
        "push made, and layer assignments its cascades do not list",
    )
    q.add_argument(
        "--prune",
        action="store_true",
        help="also delete the entry files of pulled layers that the service does not have",
    )
    d.set_defaults(layers_func=cmd_diff)
    p.set_defaults(layers_func=cmd_push)
    q.set_defaults(layers_func=cmd_pull)


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_ERROR


class _Usage(Exception):
    pass


def _root(raw: str, *, create: bool) -> Path:
    """The memory-layers/ folder PATH names: itself, the one holding it, the only one
    below it; for a pull into a folder that has none, ``PATH/memory-layers``."""
    path = Path(raw)
    if path.name == LAYERS_DIR and (create or path.is_dir()):
        return path.resolve()
    if not path.exists():
        raise _Usage(f"{raw}: no such file or directory")
    roots = [r.resolve() for r in find_layer_roots(path.resolve())]
    if len(roots) > 1:
        listed = ", ".join(str(r) for r in roots)
        raise _Usage(f"{raw}: several memory-layers/ folders ({listed}); name one")
    if roots:
        return roots[0]
    if create and path.is_dir():
        return (path / LAYERS_DIR).resolve()
    raise _Usage(f"{raw}: no memory-layers/ folder found")


def _unreadable(local: LayerSet) -> list[str]:
    """Entry files read as empty although they are not (binary, or over the size limit):
    pushing them would empty the entry on the service."""
    out = []
    for lid, layer in sorted(local.layers.items()):
        for key, entry in layer.entries.items():
            if local.texts.get(entry.path, "") != "":
                continue
            read = read_source(entry.path)
            if not read.analyzable:
                why = read.issues[0].message if read.issues else "it cannot be read as text"
                out.append(f"entry {lid}/{key}: {why}")
    return out


def _diff_plan(args: argparse.Namespace) -> tuple[Plan, Any]:
    from ..model.layers import load_layer_set
    from ..sync.plan import plan
    from ..sync.service import connect, fetch
    from ..sync.state import desired

    root = _root(args.path, create=False)
    local = load_layer_set(root)
    want = desired(local)
    want.problems.extend(_unreadable(local))
    client = connect()
    return plan(want, fetch(client, want), prune=args.prune), client


def _render_diff(p: Plan) -> str:
    from ..sync.plan import render_diff  # the sync commands only (keeps `check` start-up short)

    return render_diff(p)


def cmd_diff(args: argparse.Namespace) -> int:
    from ..sync.service import SyncError

    try:
        p, _client = _diff_plan(args)
    except (_Usage, SyncError) as exc:
        return _error(str(exc))
    sys.stdout.write(_render_diff(p))
    return EXIT_PROBLEMS if p.problems else EXIT_OK


def cmd_push(args: argparse.Namespace) -> int:
    from ..sync.service import SyncError, apply

    try:
        p, client = _diff_plan(args)
    except (_Usage, SyncError) as exc:
        return _error(str(exc))
    sys.stdout.write(_render_diff(p))
    if p.problems:
        print("mantle-lsp: push refused: fix the problems above first", file=sys.stderr)
        return EXIT_PROBLEMS
    if p.empty:
        return EXIT_OK
    try:
        done = apply(p, client)
    except SyncError as exc:
        return _error(str(exc))
    print(f"Pushed {done} change{'s' if done != 1 else ''}.")
    return EXIT_OK


def cmd_pull(args: argparse.Namespace) -> int:
    from ..model.layers import load_layer_set
    from ..sync.folder import write_folder
    from ..sync.service import SyncError, connect, fetch

    try:
        root = _root(args.path, create=True)
        client = connect()
        remote = fetch(client, all_entries=True)
    except (_Usage, SyncError) as exc:
        return _error(str(exc))
    existing = load_layer_set(root) if root.is_dir() else None
    try:
        result = write_folder(root, remote, existing, prune=args.prune)
    except OSError as exc:
        return _error(f"writing {root}: {exc.strerror or exc}")
    try:
        shown = root.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        shown = str(root)
    for rel in result.written:
        print(f"wrote {shown}/{rel}")
    for rel in result.deleted:
        print(f"deleted {shown}/{rel}")
    for why in result.skipped:
        print(f"skipped: {why}")
    if result.kept:
        print("Not on the service (pull --prune deletes them):")
        for rel in result.kept:
            print(f"  {shown}/{rel}")
    n = len(result.written) + len(result.deleted)
    print(
        f"Pulled {len(remote.layers)} layer{'s' if len(remote.layers) != 1 else ''}: "
        f"{n} file{'s' if n != 1 else ''} changed, {result.unchanged} unchanged."
    )
    return EXIT_OK
