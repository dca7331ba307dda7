"""``mantle-lsp layers …``: Cadenya memory layers kept as files (docs/memory-layers.md).

This module builds the ``layers`` command group. ``manifest`` lives here; the sync
commands (``diff``, ``push``, ``pull``) are added by ``cli/layers_sync.py`` through its
``add_sync_commands(subparsers)`` (it imports the SDK only when one of them runs).
Every subcommand parser sets ``layers_func`` (a function of the parsed arguments
returning the exit status) with ``set_defaults``; :func:`cmd_layers` runs it.

It also holds what ``check`` needs to report on ``memory-layers/`` folders
(:func:`layer_targets`, :func:`layer_findings`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.layer_paths import classify, find_layer_roots, layer_root_of
from ..syntax.text import LineIndex
from .layers_sync import add_sync_commands
from .output import Finding, dump_json, make_finding

if TYPE_CHECKING:
    from ..model.layers import LayerSet

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def add_parser(sub: Any) -> None:
    """Add the ``layers`` group to the top-level subparsers ``sub``."""
    p = sub.add_parser(
        "layers",
        help="Cadenya memory layers kept as files: preview a cascade's manifest (and sync)",
        description="Work with Cadenya memory layers kept in a memory-layers/ folder "
        "(docs/memory-layers.md).",
    )
    lsub = p.add_subparsers(dest="layers_command", parser_class=type(p))
    m = lsub.add_parser(
        "manifest",
        help="print the entries a cascade gives the agent, in resolution order",
        description="Print the effective entries of CASCADE (a name in "
        "memory-layers/cascades.yml): each key once, from the most specific layer that "
        "has it, with its description and that layer.",
    )
    m.add_argument("cascade", metavar="CASCADE")
    m.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="a memory-layers/ folder, or a folder holding one (default: .)",
    )
    m.add_argument("--format", choices=("text", "json"), default="text")
    m.set_defaults(layers_func=cmd_manifest)
    # -- part of the group that cli/layers_sync.py adds (diff, push, pull) -------------
    add_sync_commands(lsub)
    # `mantle-lsp layers` alone: the sync's read-only `diff` of the current folder (the
    # default), else the group's help
    diff = lsub.choices.get("diff")
    p.set_defaults(
        layers_func=diff.get_default("layers_func") if diff is not None else None,
        layers_help=p.format_help(),
    )
    if diff is not None:
        p.set_defaults(**{a.dest: a.default for a in diff._actions if a.dest != "help"})


def cmd_layers(args: argparse.Namespace) -> int:
    func = getattr(args, "layers_func", None)
    if func is None:  # no subcommand, and no sync commands to default to
        print(getattr(args, "layers_help", ""), file=sys.stderr)
        return EXIT_USAGE
    result: int = func(args)
    return result


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def roots_at(path: Path) -> list[Path]:
    """The memory-layers/ folders a command line path names (itself, holding it, below it)."""
    return [r.resolve() for r in find_layer_roots(path.resolve())]


def cmd_manifest(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        return _error(f"{args.path}: no such file or directory")
    roots = roots_at(path)
    if not roots:
        return _error(f"{args.path}: no memory-layers/ folder found")
    from ..model.layers import load_layer_set  # the layer files' parsers: only now

    sets = [load_layer_set(r) for r in roots]
    having = [ls for ls in sets if args.cascade in ls.cascades]
    if not having:
        names = sorted({n for ls in sets for n in ls.cascades})
        known = f" (cascades: {', '.join(names)})" if names else " (no cascades.yml names any)"
        return _error(f"no cascade `{args.cascade}`{known}")
    if len(having) > 1:
        where = ", ".join(str(ls.root) for ls in having)
        return _error(f"cascade `{args.cascade}` is defined in several folders: {where}")
    ls = having[0]
    cascade = ls.cascades[args.cascade]
    from ..ide.layers import layer_diagnostics, manifest_json, manifest_text

    if args.format == "json":
        dump_json(manifest_json(ls, cascade), sys.stdout)
    else:
        sys.stdout.write(manifest_text(ls, cascade))
    problems = [
        d
        for ds in layer_diagnostics(ls).values()
        for d in ds
        if d.severity == "error" and d.path == ls.cascades_path
    ]
    if problems:
        print(
            f"mantle-lsp: note: cascades.yml has {len(problems)} error(s); "
            "`mantle-lsp check` shows them",
            file=sys.stderr,
        )
    return EXIT_OK


# -- check ---------------------------------------------------------------------------------


def layer_targets(paths: Sequence[str]) -> dict[Path, set[Path] | None]:
    """The memory-layers/ folders ``check PATH…`` covers: every folder at or under a
    folder named, and the folder of a file named (then only that file is reported)."""
    out: dict[Path, set[Path] | None] = {}
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            continue
        path = path.resolve()
        if path.is_dir():
            for r in roots_at(path):
                out[r] = None
            continue
        root = layer_root_of(path)
        if root is None or classify(root, path)[0] is None:
            continue
        got = out.setdefault(root, set())
        if got is not None:
            got.add(path)
    return out


def layer_findings(
    targets: dict[Path, set[Path] | None],
    filter_for: Callable[[Path, Path, list[Any], bool], list[Any]] | None = None,
) -> list[Finding]:
    """The findings of each layer folder (the same diagnostics as the editor's).
    ``filter_for(root, path, diagnostics, whole)`` applies the settings."""
    from ..ide.layers import layer_diagnostics  # only when there are layer folders
    from ..model.layers import load_layer_set

    findings: list[Finding] = []
    for root, only in sorted(targets.items()):
        ls = load_layer_set(root)
        found = layer_diagnostics(ls)
        for path, ds in sorted(found.items()):
            if only is not None and path not in only:
                continue
            if filter_for is not None:
                ds = filter_for(root, path, ds, only is None)
            for d in ds:
                text = ls.texts.get(d.path)
                index = LineIndex(text) if text is not None else None
                findings.append(make_finding(d, root, text, index, _index_of(ls)))
    return findings


def _index_of(ls: LayerSet) -> Callable[[Path], LineIndex | None]:
    def index_of(path: Path) -> LineIndex | None:
        text = ls.texts.get(path)
        return LineIndex(text) if text is not None else None

    return index_of
