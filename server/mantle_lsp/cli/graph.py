"""``mantle-lsp graph``: the flow of an ordered block or the agent map, as JSON, Mermaid,
Graphviz DOT or SVG; ``--output-dir`` writes one SVG per skill (a map) or per ordered block
(flows) (docs/features/graphs.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import atomic
from ..ide.codes import REGISTRY
from ..ide.diagnostics import Diagnostic, file_diagnostics
from ..ide.suppression import apply_suppressions
from ..ide.types import Location
from ..model import layout
from ..model.project import Project
from ..model.settings import apply, load
from .output import display_path

if TYPE_CHECKING:
    from ..ide import graphs

EXIT_OK, EXIT_USAGE = 0, 2
FORMATS = ("json", "mermaid", "dot", "svg")
LARGE_MAP = 60  # nodes: a whole map on stdout above this gets a hint about --output-dir
_SAFE_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*")  # a file name made from an id


def add_parser(sub: Any) -> None:
    g = sub.add_parser(
        "graph",
        help="print the flow of an ordered block or the agent map (json, mermaid, dot, svg)",
        description="Print a picture of a Mantle project: the flow of an ordered block "
        "(--kind flow: its steps, `next:` edges with their conditions, END; unreachable "
        "steps and steps with problems marked) or the agent map (--kind map: skills, fields, "
        "tools; who reads and writes what, calls and links).",
    )
    g.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="the project, or a folder or file inside it (a skill's folder or skill.md "
        "picks that skill) (default: .)",
    )
    g.add_argument("--skill", metavar="ID", help="the skill (a map: only what it touches)")
    g.add_argument("--block", metavar="ID", help="the ordered block (implies --kind flow)")
    g.add_argument(
        "--kind",
        choices=("flow", "map"),
        default=None,
        help="flow of an ordered block, or the agent map (default: flow with --block, else map)",
    )
    g.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="output (default: json; svg with --output-dir)",
    )
    g.add_argument(
        "--hops",
        type=int,
        choices=(1, 2),
        default=1,
        help="a map of one skill: 1 (what it reads, writes, calls, and who reads its fields "
        "or calls it) or 2 (also who writes what it reads, reads what it writes, and the "
        "next calls) (default: 1)",
    )
    g.add_argument(
        "--output-dir",
        metavar="DIR",
        type=Path,
        default=None,
        help="write SVG files into DIR instead of printing: a map, one <skill>.svg per skill "
        "(its neighbourhood); flows, <skill>/<block>.svg per ordered block; and index.md "
        "showing them all",
    )


def cmd_graph(args: argparse.Namespace) -> int:
    from ..ide import graphs  # only this command draws (keeps `check` start-up short)

    path = Path(args.path)
    if not path.exists():
        return _error(f"{args.path}: no such file or directory")
    path = path.resolve()
    root = layout.find_project_for(path)
    if root is None and path.is_dir():
        found = layout.find_projects(path)
        if len(found) > 1:
            names = ", ".join(display_path(p) for p in found)
            return _error(f"{args.path}: holds several projects; name one ({names})")
        root = found[0] if found else None
    if root is None:
        return _error(
            f"{args.path}: no Mantle project found (a project has two of agent.yml, "
            "integrations.yml, skills/<id>/skill.md)"
        )
    project = Project.load(root)
    settings, _ = load(root, REGISTRY)
    project.engine_override = settings.engine_override
    sid: str | None = args.skill if args.skill is not None else _skill_of(path, root)
    kind = args.kind or ("flow" if args.block else "map")
    fmt = args.format or ("svg" if args.output_dir is not None else "json")
    if args.output_dir is not None and fmt != "svg":
        return _error("--output-dir writes SVG files: use it with --format svg")
    if kind == "flow" and sid is None and args.output_dir is None:
        return _error("a flow needs a skill: give --skill ID (or the path of a skill)")
    if kind == "map" and args.block:
        return _error("--block is for --kind flow")
    if args.output_dir is not None:
        return _write_svgs(project, settings, root, kind, sid, args)
    diags = _diagnostics(project, settings, sid if kind == "flow" else None)
    try:
        if kind == "flow" and sid is not None:
            graph = graphs.flow_graph(project, sid, args.block, diags)
        else:
            graph = graphs.agent_map(project, sid, diags, args.hops)
    except graphs.GraphError as e:
        return _error(str(e))
    if fmt == "svg":
        sys.stdout.write(graphs.to_svg(graph))
        if graph.kind == "map" and sid is None and len(graph.nodes) > LARGE_MAP:
            print(
                f"mantle-lsp: the agent map has {len(graph.nodes)} nodes: "
                "--output-dir DIR writes one readable picture per skill",
                file=sys.stderr,
            )
    elif fmt == "mermaid":
        sys.stdout.write(graphs.to_mermaid(graph))
    elif fmt == "dot":
        sys.stdout.write(graphs.to_dot(graph))
    else:
        data = graphs.to_json(graph, _where(project, root))
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def _write_svgs(
    project: Project, settings: Any, root: Path, kind: str, sid: str | None, args: Any
) -> int:
    """``--output-dir DIR``: one SVG per skill (a map: the skill and what it touches) or
    per ordered block (flows), and ``index.md`` showing them; every file written
    atomically inside DIR (never through a link out of it). Files already in DIR that
    this run does not write are left alone."""
    from ..ide import graphs

    out_dir: Path = args.output_dir
    skills = [sid] if sid is not None else sorted(project.skills)
    if sid is not None and project.skill(sid) is None:
        known = ", ".join(sorted(project.skills)) or "none"
        return _error(f"no skill '{sid}' in this project (skills: {known})")
    diags = _diagnostics(project, settings, None)
    pictures: list[tuple[str, str, str]] = []  # (file name inside DIR, title, svg)
    skipped: list[str] = []
    whole = graphs.agent_map(project, None, diags) if kind == "map" else None
    for s in skills:
        if not _SAFE_NAME.fullmatch(s):
            skipped.append(f"skill '{s}' (not usable as a file name)")
            continue
        try:
            if whole is not None:
                graph = graphs.focus(whole, s, args.hops)
                pictures.append((f"{s}.svg", graph.title, graphs.to_svg(graph)))
                continue
            sk = project.skill(s)
            blocks = [b.id for b in (sk.doc.blocks if sk and sk.doc else []) if b.id]
            if args.block is not None:
                graph = graphs.flow_graph(project, s, args.block, diags)  # raises if absent
                blocks = [args.block]
            for b in blocks:
                if not _SAFE_NAME.fullmatch(b):
                    skipped.append(f"block '{s}/{b}' (not usable as a file name)")
                    continue
                graph = graphs.flow_graph(project, s, b, diags)
                pictures.append((f"{s}/{b}.svg", graph.title, graphs.to_svg(graph)))
        except graphs.GraphError as e:
            return _error(str(e))
    seen: dict[str, str] = {}
    for name, _, _ in pictures:  # names that differ only in case are one file on some disks
        if name.lower() in seen:
            return _error(f"{seen[name.lower()]} and {name} would be the same file on some disks")
        seen[name.lower()] = name
    index = ["# " + ("Agent map" if kind == "map" else "Flows"), ""]
    index += [
        "Written by `mantle-lsp graph --output-dir`: one picture per "
        + ("skill (the skill and what it touches)." if kind == "map" else "ordered block."),
        "",
    ]
    try:
        atomic.make_dirs(out_dir, within=out_dir)
        for name, title, svg in pictures:
            target = out_dir / name
            if target.parent != out_dir:
                atomic.make_dirs(target.parent, within=out_dir)
            atomic.write_text(target, svg, within=out_dir)
            print(display_path(target))
            index += [f"## {title}", "", f"![{title}]({name})", ""]
        atomic.write_text(out_dir / "index.md", "\n".join(index), within=out_dir)
        print(display_path(out_dir / "index.md"))
    except OSError as e:
        return _error(f"{out_dir}: could not write: {e}")
    for what in skipped:
        print(f"mantle-lsp: skipped {what}", file=sys.stderr)
    return EXIT_OK


def _skill_of(path: Path, root: Path) -> str | None:
    """The skill a path names: ``skills/<id>`` or anything in it (``--skill`` wins)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:  # a folder above the project
        return None
    return parts[1] if len(parts) >= 2 and parts[0] == "skills" else None


def _diagnostics(project: Project, settings: Any, sid: str | None) -> list[Diagnostic]:
    """What ``check`` reports on the files a graph shows (one skill's skill.md for a flow,
    every file for a map), suppressions and the configuration applied."""
    if sid is not None:
        sk = project.skill(sid)
        paths = [sk.skill_md.path] if sk is not None and sk.skill_md is not None else []
    else:
        paths = list(project.files)
    found = apply_suppressions(project, file_diagnostics(project, paths), paths)
    return [d for p, ds in found.items() for d in apply(settings, p, ds, root=project.root)]


def _where(project: Project, root: Path) -> graphs.Where:
    def where(loc: Location) -> dict[str, Any]:
        pf = project.files.get(loc.path)
        index = pf.source.index if pf is not None and pf.source is not None else None
        (sl, sc), (el, ec) = (
            (index.position(loc.range.start), index.position(loc.range.end))
            if index is not None
            else ((0, 0), (0, 0))
        )
        try:
            shown = loc.path.relative_to(root).as_posix()
        except ValueError:
            shown = loc.path.as_posix()
        return {
            "path": shown,
            "range": {
                "start": {"line": sl, "character": sc},
                "end": {"line": el, "character": ec},
            },
        }

    return where


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE
