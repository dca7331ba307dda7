"""``mantle-lsp`` command line: ``check``, ``explain`` and ``serve``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..ide.codes import REGISTRY, info, markdown_table
from ..ide.diagnostics import Diagnostic, project_diagnostics
from ..ide.suppression import apply_suppressions
from ..model import layout
from ..model.engine import PROFILES
from ..model.project import ParsedFile, Project, bulk_work
from ..model.settings import (
    SEVERITIES,
    Overrides,
    Settings,
    SettingsError,
    apply,
    known_pattern,
    load,
)
from ..parallel import MIN_SKILLS, check_project, default_jobs

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mantle-lsp: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="mantle-lsp", description="Language server and checker for Rasa Mantle agent projects."
    )
    p.add_argument("--version", action="version", version=f"mantle-lsp {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    c = sub.add_parser("check", help="check Mantle projects and print diagnostics")
    c.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="project folders, folders containing projects, or files (default: .)",
    )
    c.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    c.add_argument(
        "--select",
        action="append",
        default=None,
        metavar="CODE",
        help="only report these codes (or code prefixes); repeatable, comma-separated; "
        "replaces the configuration's select, extend-select and ignore",
    )
    c.add_argument(
        "--extend-select",
        action="append",
        default=[],
        metavar="CODE",
        help="report these codes (or code prefixes) as well",
    )
    c.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODE",
        help="do not report these codes (or code prefixes); adds to the configuration's",
    )
    c.add_argument(
        "--engine",
        choices=("auto", *PROFILES),
        default=None,
        help="rasa-pro rules to apply (default: the configuration's `engine`, else auto — "
        "from a rasa-pro pin in the project's requirements or pyproject, else 3.21)",
    )
    c.add_argument(
        "--min-severity",
        choices=SEVERITIES,
        default=None,
        help="hide diagnostics below this severity (default: the configuration's, else "
        "information, which hides hints)",
    )
    c.add_argument(
        "--config",
        metavar="FILE",
        help="use this configuration file (a mantle-lsp.toml, or a pyproject.toml with a "
        "[tool.mantle-lsp] table) instead of looking for one",
    )
    c.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    c.add_argument(
        "--show-settings",
        action="store_true",
        help="print the resolved settings of each project, and where each value comes from",
    )
    _add_jobs(c, "a large project", "checked")
    e = sub.add_parser(
        "explain",
        help="explain a diagnostic code",
        description="Print the page of a diagnostic code: what it means, why it matters, a "
        "wrong example and its fix. CODE may be a unique dotted suffix "
        "(e.g. `prose.unknown_memory_key`).",
    )
    e.add_argument("code", nargs="?", metavar="CODE")
    e.add_argument("--markdown", action="store_true", help="print the table of every code")
    s = sub.add_parser("serve", help="run the language server (stdio by default)")
    s.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    s.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket (for debugging)")
    s.add_argument(
        "--log-level",
        default="warning",
        choices=("debug", "info", "warning", "error"),
        help="level of the server's own log (stderr, or --log-file)",
    )
    s.add_argument("--log-file", metavar="FILE", help="write the server's own log to FILE")
    _add_jobs(s, "the initial index of a large project", "indexed")
    return p


def _add_jobs(parser: argparse.ArgumentParser, what: str, done: str) -> None:
    """``--jobs N|auto`` (parallel.py), for ``check`` and ``serve``."""
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default="auto",
        metavar="N",
        help=f"processes for {what} (default: auto — one per CPU; projects of fewer than "
        f"{MIN_SKILLS} skills are always {done} in one process)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "check":
        return cmd_check(args)
    if args.command == "explain":
        return cmd_explain(args)
    if args.command == "serve":
        from ..lsp.server import serve  # imports pygls: only for `serve`

        return serve(args)
    return EXIT_USAGE  # pragma: no cover


def _jobs(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or auto, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("needs at least 1 process")
    return n


def entry() -> None:
    """The ``mantle-lsp`` console script: :func:`main`, then leave at once.

    A ``check`` of a large project builds a graph of millions of objects; a normal exit
    would free them one by one (~0.2 s on 1,000 skills) although the process is over.
    Output is flushed first, so nothing is lost.
    """
    rc = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # reader went away, or stream closed
        rc = rc or EXIT_ERRORS
    os._exit(rc)


def _codes(values: list[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def cmd_check(args: argparse.Namespace) -> int:
    # One batch from start to exit: the parsed projects live until the end, so the cyclic
    # collector would only rescan them (each full pass over ~10^6 objects costs ~0.1 s);
    # reference counting still frees everything that is not in a cycle.
    with bulk_work(keep=True):
        return _check(args)


@dataclasses.dataclass
class _Target:
    """A project to check: all of it (``only`` None) or some of its files."""

    settings: Settings
    only: set[Path] | None = None
    explicit: bool = False  # named on the command line (exclude does not apply to it)


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _targets(
    args: argparse.Namespace, overrides: Overrides, config: Path | None
) -> dict[Path, _Target] | int:
    """The projects to check, each with its settings; an exit status on a usage problem
    or a malformed configuration file (reported here)."""
    targets: dict[Path, _Target] = {}
    cache: dict[Path, tuple[Settings, list[SettingsError]]] = {}
    errors: dict[SettingsError, None] = {}

    def settings_for(root: Path) -> Settings:
        if root not in cache:
            cache[root] = load(root, REGISTRY, overrides, config, args.isolated)
            errors.update(dict.fromkeys(cache[root][1]))
        return cache[root][0]

    for raw in args.paths:
        path = Path(raw)
        if not path.exists():
            return _error(f"{raw}: no such file or directory")
        path = path.resolve()
        if path.is_dir():
            found = layout.find_projects(path)
            if not found:
                inner = layout.find_project_for(path)
                found = [inner] if inner else []
            if not found:
                return _error(
                    f"{raw}: no Mantle project found (a project has two of agent.yml, "
                    "integrations.yml, skills/<id>/skill.md)"
                )
            queue = list(found)
            while queue:
                root = queue.pop(0)
                st = settings_for(root)
                explicit = root == path
                if not explicit and st.excluded(root, is_dir=True):
                    continue
                t = targets.setdefault(root, _Target(st))
                t.only = None
                t.explicit = t.explicit or explicit
                if st.include:
                    queue.extend(
                        n
                        for n in layout.nested_projects(root)
                        if n not in targets and n not in queue and st.included(n)
                    )
        else:
            r2 = layout.find_project_for(path)
            if r2 is None:
                return _error(f"{raw}: not inside a Mantle project")
            t = targets.setdefault(r2, _Target(settings_for(r2), set(), explicit=True))
            if t.only is not None:
                t.only.add(path)
    if errors:
        for e in errors:
            print(e.render(_display_path), file=sys.stderr)
        n = len(errors)
        print(
            f"mantle-lsp: error: {n} problem{'s' if n != 1 else ''} in the configuration",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return targets


def _check(args: argparse.Namespace) -> int:
    overrides = Overrides(
        select=tuple(_codes(args.select)) if args.select is not None else None,
        extend_select=tuple(_codes(args.extend_select)),
        ignore=tuple(_codes(args.ignore)),
        engine=args.engine,
        min_severity=args.min_severity,
    )
    unknown = [
        c
        for c in (*(overrides.select or ()), *overrides.extend_select, *overrides.ignore)
        if not known_pattern(c, REGISTRY)
    ]
    if unknown:
        return _error(
            f"unknown code {unknown[0]!r} (`mantle-lsp explain --markdown` lists every code)"
        )
    config = None
    if args.config is not None:
        config = Path(args.config).resolve()
        if not config.is_file():
            return _error(f"--config {args.config}: no such file")
    targets = _targets(args, overrides, config)
    if isinstance(targets, int):
        return targets
    if args.show_settings:
        return _show_settings(targets)
    projects: dict[Path, Project] = {}
    diags: list[Diagnostic] = []
    jobs = default_jobs() if args.jobs == "auto" else args.jobs
    for root, t in sorted(targets.items()):
        engine = t.settings.engine_override
        if t.only is None:  # a whole project: may be spread over several processes
            proj, found = check_project(root, jobs, engine)
            projects[root] = proj
        else:
            proj = projects.setdefault(root, Project.load(root))
            proj.engine_override = engine
            found = apply_suppressions(proj, project_diagnostics(proj), t.only)
        for path, ds in found.items():
            if t.only is not None and path not in t.only:
                continue
            below = root if t.explicit else None
            diags.extend(apply(t.settings, path, ds, t.only is None, below))
    files = {path: pf for proj in projects.values() for path, pf in proj.files.items()}
    rows = sorted((_row(d, files) for d in diags), key=Row.sort_key)
    out = sys.stdout
    if args.format == "text":
        for row in rows:
            out.write(
                f"{row.path}:{row.line}:{row.column}: {row.severity}[{row.code}] {row.message}\n"
            )
        out.write(_summary(rows, len(targets)) + "\n")
    elif args.format == "json":
        json.dump([row.as_json() for row in rows], out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif args.format == "github":
        for row in rows:
            level = {"error": "error", "warning": "warning"}.get(row.severity, "notice")
            msg = row.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            out.write(
                f"::{level} file={row.path},line={row.line},col={row.column},"
                f"endLine={row.end_line},endColumn={row.end_column},"
                f"title={row.code}::{msg}\n"
            )
        out.write(_summary(rows, len(targets)) + "\n")
    else:
        json.dump(_sarif(rows), out, indent=2, ensure_ascii=False)
        out.write("\n")
    return EXIT_ERRORS if any(row.severity == "error" for row in rows) else EXIT_OK


def _show_settings(targets: dict[Path, _Target]) -> int:
    out = sys.stdout
    for i, (root, t) in enumerate(sorted(targets.items())):
        st = t.settings
        if i:
            out.write("\n")
        out.write(f"Project: {_display_path(root)}\n")
        where = _display_path(st.config) if st.config else "none (defaults)"
        out.write(f"Configuration file: {where}\n")
        for key, value, origin in st.show():
            out.write(f"  {key} = {value}  # {origin}\n")
    return EXIT_OK


@dataclasses.dataclass(frozen=True)
class Row:
    """One diagnostic as printed: 1-based line and column (in code points)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    severity: str
    code: str
    message: str
    engine_code: str | None = None  # the engine's code, when it differs from ``code``

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def as_json(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        if not self.engine_code or self.engine_code == self.code:
            del out["engine_code"]
        return out


def _display_path(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def _row(d: Diagnostic, files: dict[Path, ParsedFile]) -> Row:
    pf = files.get(d.path)
    src = pf.source if pf is not None else None
    line = col = eline = ecol = 0
    if src is not None:
        line, col = src.index.position(d.range.start)
        eline, ecol = src.index.position(d.range.end)
    return Row(
        _display_path(d.path),
        line + 1,
        col + 1,
        eline + 1,
        ecol + 1,
        d.severity,
        d.code,
        d.message,
        d.engine_code if d.engine_code != d.code else None,
    )


def _summary(rows: list[Row], nprojects: int) -> str:
    def n(count: int, word: str) -> str:
        return f"{count} {word}{'s' if count != 1 else ''}"

    errors = sum(1 for r in rows if r.severity == "error")
    warnings = sum(1 for r in rows if r.severity == "warning")
    other = len(rows) - errors - warnings
    files = len({r.path for r in rows})
    if not rows:
        return f"All checks passed ({n(nprojects, 'project')})."
    parts = [n(errors, "error"), n(warnings, "warning")] + ([n(other, "note")] if other else [])
    return f"Found {', '.join(parts)} in {n(files, 'file')} ({n(nprojects, 'project')})."


def _level(severity: str) -> str:
    return {"error": "error", "warning": "warning"}.get(severity, "note")


def _sarif(rows: list[Row]) -> dict[str, object]:
    rules = [
        {
            "id": code,
            "shortDescription": {"text": info(code).summary or code},
            "defaultConfiguration": {"level": _level(info(code).severity)},
        }
        for code in sorted({r.code for r in rows})
    ]
    results = [
        {
            "ruleId": r.code,
            "level": _level(r.severity),
            "message": {"text": r.message},
            **({"properties": {"engine_code": r.engine_code}} if r.engine_code else {}),
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": r.path.replace(os.sep, "/")},
                        "region": {
                            "startLine": r.line,
                            "startColumn": r.column,
                            "endLine": r.end_line,
                            "endColumn": r.end_column,
                        },
                    }
                }
            ],
        }
        for r in rows
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "mantle-lsp", "version": __version__, "rules": rules}},
                "results": results,
            }
        ],
    }


def cmd_explain(args: argparse.Namespace) -> int:
    if args.markdown:
        sys.stdout.write(markdown_table())
        return EXIT_OK
    if not args.code:
        print("mantle-lsp: error: explain needs a CODE (or --markdown)", file=sys.stderr)
        return EXIT_USAGE
    from ..ide.code_docs import load_page, resolve_code  # only `explain` reads the pages

    code, candidates = resolve_code(args.code, sorted(REGISTRY))
    if code is None:
        if candidates:
            print(
                f"mantle-lsp: error: {args.code!r} matches several codes; write one of:",
                *(f"  {c}" for c in candidates),
                sep="\n",
                file=sys.stderr,
            )
        else:
            print(
                f"mantle-lsp: error: unknown code {args.code!r} "
                "(`mantle-lsp explain --markdown` lists every code)",
                file=sys.stderr,
            )
        return EXIT_USAGE
    page = load_page(code)
    if page is not None:
        sys.stdout.write(page)
        return EXIT_OK
    c = REGISTRY[code]  # a registered code without a page (yet): the registry entry
    src = "reported by rasa-pro 3.21" if c.engine else "reported by mantle-lsp only"
    print(f"{c.code}  ({c.severity}; {src})\n\n{c.summary}.")
    if c.engine_note:
        print(f"\nNote: {c.engine_note}.")
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    entry()
