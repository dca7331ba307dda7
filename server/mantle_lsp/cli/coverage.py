"""``mantle-lsp coverage [PATH] [--format text|json|markdown] [--fail-under N]``: which
skills, ordered blocks, tools and memory fields no scenario of ``eval/scenarios/`` asserts
(ide/coverage.py; docs/features/eval.md#coverage, docs/cli.md#coverage)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ide.codes import REGISTRY
from ..model import layout
from ..model.project import Project
from ..model.settings import load
from .output import display_path

if TYPE_CHECKING:
    from ..ide.coverage import Coverage, Item

EXIT_OK, EXIT_UNDER, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "markdown")


def add_parser(sub: Any) -> None:
    """Register the ``coverage`` subcommand on ``sub`` (argparse subparsers)."""
    p = sub.add_parser(
        "coverage",
        help="list the skills, blocks, tools and memory fields no scenario asserts",
        description="List which skills, ordered blocks, tools and memory fields (of the "
        "project and of each skill) no scenario of eval/scenarios/ asserts. A thing is "
        "asserted when a positive assertion names it (skill_*, ordered_block_*, "
        "tool_executed, also in tools_within_one_turn, memory_was_set, memory_was_cleared; "
        "in a sequencing too), not by criteria, initial slots or *_not_* checks. Steps are "
        "listed apart where assertions name a step_id, and are not in the percentage.",
    )
    p.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="a project, a folder of projects, or a file inside a project (default: .)",
    )
    p.add_argument("--format", choices=FORMATS, default="text", help="output (default: text)")
    p.add_argument(
        "--fail-under",
        metavar="N",
        type=_percent,
        default=None,
        help="exit with status 1 when a project's coverage is below N percent",
    )


def _percent(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {value!r}") from None
    if not math.isfinite(n) or not 0 <= n <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, got {value!r}")
    return n


def cmd_coverage(args: argparse.Namespace) -> int:
    from ..ide.coverage import coverage  # only this command

    path = Path(args.path)
    if not path.exists():
        return _error(f"{args.path}: no such file or directory")
    path = path.resolve()
    root = layout.find_project_for(path)
    roots = [root] if root is not None else (layout.find_projects(path) if path.is_dir() else [])
    if not roots:
        return _error(
            f"{args.path}: no Mantle project found (a project has two of agent.yml, "
            "integrations.yml, skills/<id>/skill.md)"
        )
    reports = []
    for r in roots:
        project = Project.load(r)
        settings, _ = load(r, REGISTRY)
        project.engine_override = settings.engine_override
        reports.append(coverage(project))
    under = [c for c in reports if args.fail_under is not None and c.percent < args.fail_under]
    if args.format == "json":
        data = {
            "projects": [_json(c) for c in reports],
            "fail_under": args.fail_under,
            "passed": not under,
        }
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif args.format == "markdown":
        sys.stdout.write("\n".join(_markdown(c) for c in reports))
    else:
        sys.stdout.write("\n".join(_text(c) for c in reports))
    for c in under:
        print(
            f"mantle-lsp: coverage of {display_path(c.root)} is {_pc(c.percent)}, under "
            f"--fail-under {_number(args.fail_under)}%",
            file=sys.stderr,
        )
    return EXIT_UNDER if under else EXIT_OK


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE


# -- rendering ---------------------------------------------------------------------------


def _pc(value: float) -> str:
    return f"{value:.1f}%"


def _number(value: float | None) -> str:
    return "" if value is None else (f"{value:g}")


def _rel(c: Coverage, path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.relative_to(c.root).as_posix()
    except ValueError:
        return path.as_posix()


def _where(c: Coverage, item: Item) -> str:
    line = item.line
    rel = _rel(c, item.path)
    return f"{rel}:{line}" if line is not None else rel or "(an MCP server)"


def _counts(c: Coverage) -> list[tuple[str, int, int]]:
    from ..ide.coverage import KIND_WORDS, KINDS

    out = []
    for kind in KINDS:
        items = c.of(kind)
        out.append((KIND_WORDS[kind], sum(1 for i in items if i.asserted), len(items)))
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _headline(c: Coverage) -> str:
    return (
        f"{_plural(len(c.scenarios), 'scenario')} assert {c.asserted} of {len(c.items)} "
        f"({_pc(c.percent)})"
    )


def _text(c: Coverage) -> str:
    from ..ide.coverage import KIND_WORDS

    out = [f"{display_path(c.root)}: {_headline(c)}"]
    for word, asserted, total in _counts(c):
        share = _pc(100.0 * asserted / total) if total else "-"
        out.append(f"  {word:<15} {asserted:>4}/{total:<4} {share:>7}")
    missing = [i for i in c.items if not i.asserted]
    if missing:
        out.append("")
        out.append("not asserted by any scenario:")
        width = max(len(i.name) for i in missing)
        for i in missing:
            kind = KIND_WORDS[i.kind].rstrip("s").replace("memory field", "field")
            out.append(f"  {kind:<14} {i.name:<{width}}  {_where(c, i)}")
    if c.steps:
        out.append("")
        out.append("steps (of the blocks whose steps an assertion names by step_id):")
        width = max(len(i.name) for i in c.steps)
        for i in c.steps:
            said = f"{_plural(len(i.scenarios), 'scenario')}" if i.asserted else "not asserted"
            out.append(f"  {i.name:<{width}}  {said}")
    if c.skipped:
        out.append("")
        out.append("not counted (the evaluation cannot run them):")
        for path, why in c.skipped:
            out.append(f"  {_rel(c, path)}: {why}")
    return "\n".join(out) + "\n"


def _markdown(c: Coverage) -> str:
    from ..ide.coverage import KIND_WORDS

    out = [f"## Scenario coverage: `{display_path(c.root)}`", "", _headline(c) + ".", ""]
    out += ["| | Asserted | Total | % |", "| --- | ---: | ---: | ---: |"]
    for word, asserted, total in _counts(c):
        share = _pc(100.0 * asserted / total) if total else "–"
        out.append(f"| {word.capitalize()} | {asserted} | {total} | {share} |")
    missing = [i for i in c.items if not i.asserted]
    if missing:
        out += ["", "### Not asserted by any scenario", ""]
        for i in missing:
            kind = KIND_WORDS[i.kind].rstrip("s").replace("memory field", "field")
            out.append(f"- {kind} `{i.name}` ({_where(c, i)})")
    if c.steps:
        out += ["", "### Steps", "", "Of the blocks whose steps an assertion names by "
                "`step_id` (not in the percentage).", ""]  # fmt: skip
        for i in c.steps:
            said = _plural(len(i.scenarios), "scenario") if i.asserted else "**not asserted**"
            out.append(f"- `{i.name}`: {said}")
    if c.skipped:
        out += ["", "### Not counted", "", "The evaluation cannot run these scenarios.", ""]
        for path, why in c.skipped:
            out.append(f"- `{_rel(c, path)}`: {why}")
    return "\n".join(out) + "\n"


def _item_json(c: Coverage, i: Item) -> dict[str, Any]:
    return {
        "kind": i.kind,
        "name": i.name,
        "path": _rel(c, i.path) or None,
        "line": i.line,
        "asserted": i.asserted,
        "scenarios": [_rel(c, p) for p in i.scenarios],
    }


def _json(c: Coverage) -> dict[str, Any]:
    from ..ide.coverage import KINDS

    return {
        "root": display_path(c.root),
        "scenarios": [_rel(c, p) for p in c.scenarios],
        "skipped": [{"path": _rel(c, p), "why": why} for p, why in c.skipped],
        "asserted": c.asserted,
        "total": len(c.items),
        "percent": round(c.percent, 1),
        "kinds": {
            kind: {"asserted": asserted, "total": total}
            for kind, (_, asserted, total) in zip(KINDS, _counts(c), strict=True)
        },
        "items": [_item_json(c, i) for i in c.items],
        "steps": [_item_json(c, i) for i in c.steps],
    }
