"""``mantle-lsp graph``: the flow of an ordered block or the agent map, as JSON, Mermaid or
Graphviz DOT (docs/features/graphs.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
FORMATS = ("json", "mermaid", "dot")


def add_parser(sub: Any) -> None:
    g = sub.add_parser(
        "graph",
        help="print the flow of an ordered block or the agent map (json, mermaid, dot)",
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
    g.add_argument("--format", choices=FORMATS, default="json", help="output (default: json)")


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
    if kind == "flow" and sid is None:
        return _error("a flow needs a skill: give --skill ID (or the path of a skill)")
    if kind == "map" and args.block:
        return _error("--block is for --kind flow")
    diags = _diagnostics(project, settings, sid if kind == "flow" else None)
    try:
        if kind == "flow" and sid is not None:
            graph = graphs.flow_graph(project, sid, args.block, diags)
        else:
            graph = graphs.agent_map(project, sid, diags)
    except graphs.GraphError as e:
        return _error(str(e))
    if args.format == "mermaid":
        sys.stdout.write(graphs.to_mermaid(graph))
    elif args.format == "dot":
        sys.stdout.write(graphs.to_dot(graph))
    else:
        data = graphs.to_json(graph, _where(project, root))
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
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
