"""``mantle-lsp layers diff|push|pull``: sync a ``memory-layers/`` folder with Cadenya
through the official SDK (the optional extra ``mantle-lsp[cadenya]``; server/mantle_lsp/
sync/, docs/memory-layers.md "Sync").

- ``diff`` (what ``push`` would change, for review; changes nothing),
- ``push [--prune [--prune-layer ID]…] [--yes]`` (create or update layers by external id
  and their entries, delete only with ``--prune``, assign each cascade's layers to its
  ``variation:`` at positions 0..n),
- ``pull [--prune] [--dry-run] [--yes]`` (write the folder from the service).

Credentials come from ``CADENYA_API_KEY`` and ``CADENYA_WORKSPACE_ID``;
``CADENYA_BASE_URL`` points the SDK at another address. A missing SDK or key, an error
status from the service or a network failure is one line on stderr and exit status 2
(with the key and a password of the address taken out). What is skipped (sync/holdable.py)
is listed and makes the exit status 1; the rest syncs. A prune that deletes more than
:data:`CONFIRM_ABOVE` entries asks on a terminal and needs ``--yes`` elsewhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.layer_paths import LAYERS_DIR, SYNC_FILE, find_layer_roots

if TYPE_CHECKING:
    from ..sync.plan import Plan
    from ..sync.state import Desired

EXIT_OK, EXIT_PROBLEMS, EXIT_ERROR = 0, 1, 2
CONFIRM_ABOVE = 10  # a prune deleting more entries (or files) than this asks first

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
        "delete (a unified diff of each entry file), layer positions in the variations "
        "cascades.yml names, and what is skipped (left alone on both sides). " + _ENV,
    )
    p = subparsers.add_parser(
        "push",
        help="make Cadenya hold what the memory-layers/ folder says",
        description="Create or update the folder's layers (by external id = folder name) "
        "and their entries, and assign each cascade's layers to its `variation:` at "
        "positions 0..n. Prints the diff first; refuses (exit 1) while it lists a "
        "problem. What it skips is listed and left alone, the rest is pushed, and the "
        "exit status is 1. " + _ENV,
    )
    q = subparsers.add_parser(
        "pull",
        help="write the memory-layers/ folder from Cadenya",
        description="Write every layer of the workspace that has an external id (one "
        "folder each, one file per entry); files that already say the same are left "
        "alone, cascades.yml and sync.yml are never written. What the folder cannot hold "
        "is listed and skipped (exit status 1). " + _ENV,
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
        "push from this folder made (sync.yml), and layer assignments its cascades do not "
        "list",
    )
    for sp in (d, p):
        sp.add_argument(
            "--prune-layer",
            action="append",
            default=[],
            metavar="ID",
            help="with --prune, also delete the layer ID (not in the folder) that a push of "
            "mantle-lsp made without this folder's id: an earlier version's, or another "
            "repository's (repeatable)",
        )
    q.add_argument(
        "--prune",
        action="store_true",
        help="also delete the entry files of pulled layers that the service does not have",
    )
    q.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the pull would write and delete; write nothing",
    )
    for sp in (p, q):
        sp.add_argument(
            "--yes",
            action="store_true",
            help=f"confirm a prune of more than {CONFIRM_ABOVE} entries without asking "
            "(needed when the standard input is not a terminal, as in CI)",
        )
    d.set_defaults(layers_func=cmd_diff)
    p.set_defaults(layers_func=cmd_push)
    q.set_defaults(layers_func=cmd_pull)


def _error(message: str) -> int:
    from ..sync.plan import shown
    from ..sync.service import redact

    print(f"mantle-lsp: error: {shown(redact(message))}", file=sys.stderr)
    return EXIT_ERROR


class _Usage(Exception):
    pass


def _root(raw: str, *, create: bool) -> Path:
    """The memory-layers/ folder PATH names: itself (a link named is followed: the user
    asked), the one holding it, the only one below it; for a pull into a folder that has
    none, ``PATH/memory-layers``. A ``memory-layers`` link found below PATH is refused."""
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
    link = path / LAYERS_DIR
    if link.is_symlink():
        raise _Usage(f"{link} is a symbolic link: name it to sync through it")
    if create and path.is_dir():
        return link.resolve()
    raise _Usage(f"{raw}: no memory-layers/ folder found")


def _shown_root(root: Path) -> str:
    try:
        return root.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return str(root)


def _diff_plan(args: argparse.Namespace) -> tuple[Plan, Any, Path]:
    from ..sync.local import read_folder
    from ..sync.plan import plan
    from ..sync.service import connect, fetch

    root = _root(args.path, create=False)
    want = read_folder(root)
    client = connect()
    p = plan(want, fetch(client, want), prune=args.prune, prune_layers=args.prune_layer)
    if p.creates_layers and p.repository is None:
        p.notes.append(
            f"{root.name}/{SYNC_FILE} does not exist: the push writes it (this folder's id, "
            "which the layers it creates carry, so that `push --prune` knows them; commit it)"
        )
    return p, client, root


def _render_diff(p: Plan) -> str:
    from ..sync.plan import render_diff  # the sync commands only (keeps `check` start-up short)

    return render_diff(p)


def _confirm(count: int, what: str, command: str, yes: bool) -> bool:
    """May a prune delete ``count`` ``what``? Above :data:`CONFIRM_ABOVE`: ``--yes``, or
    an answer on a terminal."""
    if count <= CONFIRM_ABOVE or yes:
        return True
    if sys.stdin is not None and sys.stdin.isatty():
        print(f"Delete {count} {what}? [y/N] ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer in ("y", "yes"):
            return True
        print(f"mantle-lsp: {command} cancelled: nothing was changed", file=sys.stderr)
        return False
    noun = what.split()[0]
    print(
        f"mantle-lsp: {command} refused: it would delete {count} {noun}; add --yes to confirm",
        file=sys.stderr,
    )
    return False


def _skipped_note(n: int, rest: str) -> None:
    print(f"mantle-lsp: {n} skipped (listed above); {rest}", file=sys.stderr)


def cmd_diff(args: argparse.Namespace) -> int:
    from ..sync.service import SyncError

    try:
        p = _diff_plan(args)[0]
    except (_Usage, SyncError) as exc:
        return _error(str(exc))
    sys.stdout.write(_render_diff(p))
    return EXIT_PROBLEMS if p.problems or p.skipped else EXIT_OK


def cmd_push(args: argparse.Namespace) -> int:
    from ..sync.service import SyncError, apply

    try:
        p, client, root = _diff_plan(args)
    except (_Usage, SyncError) as exc:
        return _error(str(exc))
    sys.stdout.write(_render_diff(p))
    if p.problems:
        print("mantle-lsp: push refused: fix the problems above first", file=sys.stderr)
        return EXIT_PROBLEMS
    if p.empty:
        if p.skipped:
            _skipped_note(len(p.skipped), "nothing else to push")
            return EXIT_PROBLEMS
        return EXIT_OK
    if not _confirm(p.deleted_entries, "entries on the service", "push", args.yes):
        return EXIT_PROBLEMS
    if p.creates_layers and p.repository is None:
        p.repository = _new_repository(root)
        if p.repository is None:
            return EXIT_ERROR
    try:
        done = apply(p, client)
    except SyncError as exc:
        return _error(str(exc))
    print(f"Pushed {done} change{'s' if done != 1 else ''}.")
    if p.skipped:
        _skipped_note(len(p.skipped), "the rest was pushed")
        return EXIT_PROBLEMS
    return EXIT_OK


def _new_repository(root: Path) -> str | None:
    """Write ``sync.yml`` with a new id (before the push that creates layers with it)."""
    import secrets

    from .. import atomic
    from ..sync.local import repository_file

    repository = secrets.token_hex(16)
    try:
        atomic.write_text(root / SYNC_FILE, repository_file(repository), within=root)
    except OSError as exc:
        _error(f"writing {root / SYNC_FILE}: {exc.strerror or exc}")
        return None
    print(f"wrote {_shown_root(root)}/{SYNC_FILE} (this folder's id: commit it)")
    return repository


def cmd_pull(args: argparse.Namespace) -> int:
    from ..sync.folder import apply_pull, pull_plan
    from ..sync.local import read_folder
    from ..sync.plan import shown
    from ..sync.service import SyncError, connect, fetch
    from ..sync.state import Desired

    try:
        root = _root(args.path, create=True)
        client = connect()
        remote = fetch(client, all_entries=True)
    except (_Usage, SyncError) as exc:
        return _error(str(exc))
    local: Desired = read_folder(root) if root.is_dir() else Desired(root_name=root.name)
    plan = pull_plan(root, remote, local, prune=args.prune)
    where = _shown_root(root)
    dry = args.dry_run
    if not dry and plan.deletes and len(plan.deletes) > CONFIRM_ABOVE and not args.yes:
        for rel in plan.deletes:
            print(f"would delete {shown(f'{where}/{rel}')}")
        if not _confirm(len(plan.deletes), "files in the folder", "pull", args.yes):
            return EXIT_PROBLEMS
    failed: list[tuple[str, str, str]] = []
    if dry:
        written, deleted = [rel for rel, _ in plan.writes], plan.deletes
    else:
        from .. import atomic

        try:
            atomic.make_dirs(root, within=root)  # the folder, even when nothing is written
        except OSError as exc:
            return _error(f"creating {root}: {exc.strerror or exc}")
        result = apply_pull(root, plan)
        written, deleted, failed = result.written, result.deleted, result.failed
    verb = ("would write", "would delete") if dry else ("wrote", "deleted")
    for rel in written:
        print(f"{verb[0]} {shown(f'{where}/{rel}')}")
    for rel in deleted:
        print(f"{verb[1]} {shown(f'{where}/{rel}')}")
    for why in plan.skipped:
        print(f"skipped: {shown(why)}")
    if plan.kept:
        print("Not on the service (pull --prune deletes them):")
        for rel in plan.kept:
            print(f"  {shown(f'{where}/{rel}')}")
    for what, rel, why in failed:
        print(
            f"mantle-lsp: error: could not {what} {shown(f'{where}/{rel}')}: {shown(why)}",
            file=sys.stderr,
        )
    n = len(written) + len(deleted)
    files = f"{n} file{'s' if n != 1 else ''}"
    if dry:
        print(f"Dry run: {files} would change, {plan.unchanged} unchanged; nothing written.")
    else:
        layers = len(remote.layers)
        print(
            f"Pulled {layers} layer{'s' if layers != 1 else ''}: {files} changed, "
            f"{plan.unchanged} unchanged."
        )
    if failed:
        return EXIT_ERROR
    if plan.skipped:
        _skipped_note(len(plan.skipped), "the rest was pulled" if not dry else "not written")
        return EXIT_PROBLEMS
    return EXIT_OK
