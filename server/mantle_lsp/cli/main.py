"""``mantle-lsp`` command line: ``check``, ``explain`` and ``serve``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from .. import __version__
from ..ide.codes import REGISTRY, markdown_table
from ..ide.diagnostics import Diagnostic, project_diagnostics
from ..ide.suppression import apply_suppressions
from ..model import layout
from ..model.engine import PROFILES, explain_profile, find_pin
from ..model.project import Project, Reader, bulk_work
from ..model.settings import (
    SEVERITIES,
    Overrides,
    Settings,
    SettingsError,
    apply,
    known_pattern,
    load,
)
from ..parallel import check_project
from ..syntax.text import LineIndex
from ..workers import MIN_SKILLS, default_jobs
from . import baseline, coverage, graph, layers, preview
from .output import (
    OUTPUT_FORMATS,
    Finding,
    Style,
    concise,
    display_path,
    dump_json,
    fixable_note,
    full_text,
    github,
    make_finding,
    plural,
    sarif,
    statistics,
    statistics_json,
    statistics_text,
    summary,
    use_colour,
)

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


_width: int | None = None


def _help_width() -> int:
    """The width help is wrapped to, as argparse computes it (the terminal's columns, or
    ``COLUMNS``, less 2), found once: argparse would ask for every argument added (a
    formatter checks each one's metavar), and import ``shutil`` to do it (~3 ms of every
    ``check``'s start, with the compression modules it loads)."""
    global _width
    if _width is None:
        try:
            columns = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            columns = 0
        if columns <= 0:
            out = sys.__stdout__  # None, closed or not a terminal: 80
            try:
                columns = os.get_terminal_size(out.fileno()).columns if out is not None else 0
            except (AttributeError, ValueError, OSError):  # as shutil.get_terminal_size
                columns = 0
            columns = columns or 80
        _width = columns - 2
    return _width


class _Formatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _help_width() if width is None else width
        )


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mantle-lsp: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse's, but an unknown option is reported by the command it was given
        to, with that command's usage (``check tb --frobnicate``: ``usage: mantle-lsp
        check …``), not the top level's."""
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            _innermost(self, ns).error(f"unrecognized arguments: {' '.join(extras)}")
        return ns


def _innermost(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser that read the end of the command line."""
    for _ in range(8):  # commands within commands: `layers manifest`
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(ns, subs[0].dest, None) if subs else None
        found = subs[0].choices.get(chosen) if subs and isinstance(chosen, str) else None
        if not isinstance(found, argparse.ArgumentParser):
            break
        parser = found
    return parser


# the commands, in the order `mantle-lsp --help` lists them
COMMANDS = ("check", "explain", "serve", "graph", "preview", "layers", "coverage")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``only`` (one of :data:`COMMANDS`: the command the
    command line starts with), the other commands are left out: their parsers would
    never be used, and building all of them costs ~7 ms at every start of a `check`."""
    p = _Parser(
        prog="mantle-lsp", description="Language server and checker for Rasa Mantle agent projects."
    )
    p.add_argument("--version", action="version", version=f"mantle-lsp {__version__}")
    # the usage line names every command, also when only one is built
    metavar = None if only is None else "{" + ",".join(COMMANDS) + "}"
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar=metavar)
    wanted = COMMANDS if only is None else (only,)
    if "check" in wanted:
        _add_check(sub)
    if "explain" in wanted:
        _add_explain(sub)
    if "serve" in wanted:
        _add_serve(sub)
    if "graph" in wanted:
        graph.add_parser(sub)
    if "preview" in wanted:
        preview.add_parser(sub)
    if "layers" in wanted:
        layers.add_parser(sub)
    if "coverage" in wanted:
        coverage.add_parser(sub)
    return p


def _add_check(sub: Any) -> None:
    c = sub.add_parser("check", help="check Mantle projects and print diagnostics")
    c.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="project folders, folders containing projects, or files (default: .)",
    )
    c.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=(*OUTPUT_FORMATS, "text"),
        metavar="{" + ",".join(OUTPUT_FORMATS) + "}",
        default=None,
        help="full (default: each finding with its source lines and fixes), concise (one "
        "line each; `text` is an alias), json, sarif, github (Actions annotations); "
        "--format is an alias of --output-format",
    )
    c.add_argument(
        "--documentation-url",
        metavar="URL",
        default=None,
        help="with the sarif format: the address of mantle-lsp's documentation site, linked "
        "from each rule (its code's page) and from the tool (default: the package's "
        "Documentation address, when it has a real one; an empty URL links nothing)",
    )
    c.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output (default: auto — on a terminal, unless NO_COLOR is set; "
        "FORCE_COLOR forces it)",
    )
    c.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of findings per code instead of the findings",
    )
    c.add_argument(
        "--fix", action="store_true", help="apply the safe fixes, then report what is left"
    )
    c.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, apply the unsafe fixes too (they may change meaning)",
    )
    c.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff instead of writing them (exit 1 if there are any)",
    )
    c.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only the findings this baseline file does not record",
    )
    c.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="record the current findings in FILE (JSON) and exit 0",
    )
    c.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply the configuration's exclude to the paths named on the command line "
        "too (as the pre-commit hook does)",
    )
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


def _add_explain(sub: Any) -> None:
    e = sub.add_parser(
        "explain",
        help="explain a diagnostic code",
        description="Print the page of a diagnostic code: what it means, why it matters, a "
        "wrong example and its fix. CODE may be a unique dotted suffix "
        "(e.g. `prose.unknown_memory_key`).",
    )
    e.add_argument("code", nargs="?", metavar="CODE")
    e.add_argument("--markdown", action="store_true", help="print the table of every code")


def _add_serve(sub: Any) -> None:
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
    words = sys.argv[1:] if argv is None else list(argv)
    first = words[0] if words else None
    args = build_parser(first if first in COMMANDS else None).parse_args(words)
    if args.command == "check":
        return cmd_check(args)
    if args.command == "explain":
        return cmd_explain(args)
    if args.command == "preview":
        return preview.cmd_preview(args)
    if args.command == "graph":
        return graph.cmd_graph(args)
    if args.command == "layers":
        return layers.cmd_layers(args)
    if args.command == "coverage":
        return coverage.cmd_coverage(args)
    if args.command == "serve":
        from ..lsp.app import serve  # imports pygls: only for `serve`

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


def _codes(values: list[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


# Set by the console script (cli/entry.py), which ends the process right after the
# command: the checked projects (~10^6 objects at 1,000 skills) are kept here instead of
# being freed one by one when the command returns (~0.03 s); they die with the process.
live_until_exit: list[object] | None = None


def cmd_check(args: argparse.Namespace) -> int:
    # One batch from start to exit: the parsed projects live until the end, so the cyclic
    # collector would only rescan them (each full pass over ~10^6 objects costs ~0.1 s);
    # reference counting still frees everything that is not in a cycle.
    # Each folder is listed once (layer folders, then the projects' files) unless fixes,
    # which may add files, are written between rounds.
    once = contextlib.nullcontext() if args.fix or args.diff else layout.remembered_listings()
    with bulk_work(keep=True), once:
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


def _note(message: str) -> None:
    print(f"mantle-lsp: note: {message}", file=sys.stderr)


def _targets(
    args: argparse.Namespace, overrides: Overrides, config: Path | None
) -> dict[Path, _Target] | int:
    """The projects to check, each with its settings; an exit status on a usage problem
    or a malformed configuration file (reported here)."""
    targets: dict[Path, _Target] = {}
    cache: dict[Path, tuple[Settings, list[SettingsError]]] = {}
    errors: dict[SettingsError, None] = {}
    force = args.force_exclude

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
            if not found and layers.roots_at(path):
                continue  # memory-layers/ folders only (layers.layer_targets)
            if not found:
                return _error(
                    f"{raw}: no Mantle project found (a project has two of agent.yml, "
                    "integrations.yml, skills/<id>/skill.md)"
                )
            queue = list(found)
            while queue:
                root = queue.pop(0)
                st = settings_for(root)
                explicit = root == path and not force
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
            if r2 is None and layers.layer_targets([str(path)]):
                continue  # a file of a memory-layers/ folder (layers.layer_targets)
            if r2 is None:
                _note(f"{raw}: not inside a Mantle project; not checked")
                continue
            st = settings_for(r2)
            if force and st.excluded(path):
                continue
            t = targets.setdefault(r2, _Target(st, set(), explicit=True))
            if t.only is not None:
                t.only.add(path)
    if errors:
        for e in errors:
            print(e.render(display_path), file=sys.stderr)
        n = len(errors)
        print(
            f"mantle-lsp: error: {n} problem{'s' if n != 1 else ''} in the configuration",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return targets


def _collect(
    targets: dict[Path, _Target],
    jobs: int,
    reader: Reader | None = None,
    new: Sequence[Path] = (),
) -> tuple[dict[Path, Project], list[Finding]]:
    """Check the targets: the projects loaded and the findings the settings let through,
    sorted. With ``reader`` (``--fix``), every project is read through it, in this
    process, with the files ``new`` (created by a fix, not on disk yet) among its own."""
    projects: dict[Path, Project] = {}
    found_in: list[tuple[Path, list[Diagnostic]]] = []
    for root, t in sorted(targets.items()):
        engine = t.settings.engine_override
        if reader is not None and root not in projects:
            proj = projects[root] = Project.load(root, reader, new)
            proj.engine_override = engine
            found = apply_suppressions(
                proj, project_diagnostics(proj), proj.files if t.only is None else t.only
            )
        elif t.only is None:  # a whole project: may be spread over several processes
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
            whole = t.only is None  # files named on the command line are checked as asked
            found_in.append(
                (root, apply(t.settings, path, ds, whole, below, root if whole else None))
            )
    findings = []
    for root, ds in found_in:
        proj = projects[root]

        def index_of(path: Path, proj: Project = proj) -> LineIndex | None:
            pf = proj.files.get(path)
            return pf.source.index if pf is not None else None

        for d in ds:
            pf = proj.files.get(d.path)
            src = pf.source if pf is not None else None
            text = src.text if src is not None else None
            index = src.index if src is not None else None
            findings.append(make_finding(d, root, text, index, index_of))
    findings.sort(key=lambda f: f.row.sort_key())
    return projects, findings


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
    fmt = {"text": "concise", None: "full"}.get(args.output_format, args.output_format)
    if args.statistics and fmt in ("sarif", "github"):  # as ruff: no such statistics
        return _error(f"--statistics prints a table (full, concise) or JSON (json), not {fmt}")
    if args.unsafe_fixes and not (args.fix or args.diff):
        return _error("--unsafe-fixes needs --fix or --diff")
    if args.write_baseline and (args.baseline or args.fix or args.diff):
        return _error("--write-baseline cannot be combined with --baseline, --fix or --diff")
    config = None
    if args.config is not None:
        config = Path(args.config).resolve()
        if not config.exists():
            return _error(f"--config {args.config}: no such file")
        if not config.is_file():  # a FIFO would block, a device never end
            return _error(f"--config {args.config}: not a regular file")
    known = None
    if args.baseline:
        base_file = Path(args.baseline).resolve()
        try:
            known = baseline.load(base_file)
        except baseline.BaselineError as exc:
            return _error(str(exc))
    targets = _targets(args, overrides, config)
    if isinstance(targets, int):
        return targets
    if args.show_settings:
        return _show_settings(targets)
    _profile_notes(targets)
    jobs = default_jobs() if args.jobs == "auto" else args.jobs
    hidden = 0
    fixed: int | None = None
    banned = None  # names a run of --fix left alone (cli/fix.py)
    layer_targets = layers.layer_targets(args.paths)  # memory-layers/ folders (Cadenya)
    layer_settings: dict[Path, Settings] = {}

    def layer_filter(root: Path, path: Path, ds: list[Diagnostic], whole: bool) -> list[Diagnostic]:
        if root not in layer_settings:
            layer_settings[root] = load(root, REGISTRY, overrides, config, args.isolated)[0]
        return apply(layer_settings[root], path, ds, whole)

    def collect(
        reader: Reader | None, new: Sequence[Path] = ()
    ) -> tuple[dict[Path, Project], list[Finding]]:
        nonlocal hidden
        projects, findings = _collect(targets, jobs, reader, new)
        if layer_targets:
            findings += layers.layer_findings(layer_targets, layer_filter)
            findings.sort(key=lambda f: f.row.sort_key())
        if known is not None:
            findings, hidden = baseline.new_findings(findings, known, base_file.parent)
        return projects, findings

    if args.fix or args.diff:
        from . import fix

        result = fix.run(collect, args.unsafe_fixes)
        for conflict in result.conflicts:
            _note(conflict)
        if result.exhausted:
            _note(f"fixes were still being found after {fix.MAX_ROUNDS} rounds; run again")
        if args.diff:
            sys.stdout.write(fix.diff(result))
            n = result.fixed
            print(f"Would fix {plural(n, 'finding')}." if n else "No fixes.", file=sys.stderr)
            return EXIT_ERRORS if result.changed else EXIT_OK
        problems = fix.write(result)
        for problem in problems:
            print(f"mantle-lsp: error: {problem}", file=sys.stderr)
        projects, findings, fixed = result.projects, result.findings, result.fixed
        banned = result.banned
        if problems:  # what is reported would not match the files
            return EXIT_ERRORS
    else:
        projects, findings = collect(None)
    if live_until_exit is not None:
        live_until_exit.append(projects)
    if args.write_baseline:
        path = Path(args.write_baseline)
        try:
            baseline.write(path.resolve(), findings)
        except OSError as exc:
            why = exc.strerror or exc
            return _error(f"{args.write_baseline}: cannot write the baseline ({why})")
        print(f"Wrote {plural(len(findings), 'finding')} to {args.write_baseline}.")
        return EXIT_OK
    out = sys.stdout
    style = Style(use_colour(args.color, out, os.environ))
    rows = [f.row for f in findings]
    if findings and (fmt in ("full", "concise") or args.statistics):
        from . import fix  # what fixes a finding has (the fixes are imported only then)

        fix.add_helps(projects, findings, banned)
    if args.statistics:
        stats = statistics(findings, args.unsafe_fixes)
        if fmt == "json":
            dump_json(statistics_json(stats), out)
        else:
            out.write(statistics_text(stats, style))
    elif fmt == "full":
        out.write(full_text(findings, style))
    elif fmt == "concise":
        out.write(concise(findings, style))
    elif fmt == "json":
        dump_json([row.as_json() for row in rows], out)
    elif fmt == "github":
        out.write(github(rows))
    else:
        docs = args.documentation_url
        if docs is None:
            from .code_docs import documentation_url

            docs = documentation_url()
        dump_json(sarif(findings, docs or None), out)
    if fmt in ("full", "concise", "github") or (args.statistics and fmt != "json"):
        _summaries(out, findings, len(targets), len(layer_targets), hidden, fixed)
    return EXIT_ERRORS if any(row.severity == "error" for row in rows) else EXIT_OK


def _summaries(
    out: IO[str],
    findings: list[Finding],
    nprojects: int,
    nlayers: int,
    hidden: int,
    fixed: int | None,
) -> None:
    line = summary([f.row for f in findings], nprojects, nlayers)
    if fixed:
        line = f"Fixed {plural(fixed, 'finding')}. {line}"
    if hidden:
        line += f" ({plural(hidden, 'finding')} in the baseline not shown.)"
    out.write(line + "\n")
    note = fixable_note(findings, False)
    if note:
        out.write(note + "\n")


def _show_settings(targets: dict[Path, _Target]) -> int:
    out = sys.stdout
    for i, (root, t) in enumerate(sorted(targets.items())):
        st = t.settings
        if i:
            out.write("\n")
        out.write(f"Project: {display_path(root)}\n")
        where = display_path(st.config) if st.config else "none (defaults)"
        out.write(f"Configuration file: {where}\n")
        for key, value, origin in st.show():
            out.write(f"  {key} = {value}  # {origin}\n")
        out.write(f"Rule profile: {_profile_reason(root, st)}\n")
    return EXIT_OK


def _profile_reason(root: Path, st: Settings) -> str:
    """Which rule profile applies to the project at ``root`` and why (as the language
    server's status says it): what forces one, else the project's rasa-pro pin."""
    forced = st.engine_override
    origin = st.origins.get("engine", "")
    if forced is not None:
        origin = (
            f"--engine {forced}" if origin == "command line" else f'engine = "{forced}" in {origin}'
        )
    return explain_profile(root, forced, origin)


def _profile_notes(targets: dict[Path, _Target]) -> None:
    """A note on stderr for each project whose rasa-pro pin names a version without a
    profile of its own (3.20.0.dev1, 3.23): it is checked with the nearest profile's
    rules, which the user should know (stdout stays what the format says)."""
    for root, t in sorted(targets.items()):
        if t.settings.engine_override is not None:
            continue
        pin = find_pin(root)
        if pin is None or pin.supported:
            continue
        minor = ".".join(pin.version.split(".")[:2])
        _note(
            f"{display_path(root)}: rasa-pro {pin.version} pinned in "
            f"{display_path(pin.file)}:{pin.line + 1} has no rules of its own ({minor}): "
            f"checked with the {pin.profile} rules (choose with --engine, or `engine` in "
            "the configuration)"
        )


def cmd_explain(args: argparse.Namespace) -> int:
    if args.markdown:
        sys.stdout.write(markdown_table())
        return EXIT_OK
    if not args.code:
        print("mantle-lsp: error: explain needs a CODE (or --markdown)", file=sys.stderr)
        return EXIT_USAGE
    from .code_docs import load_page, resolve_code  # only `explain` reads the pages

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


if __name__ == "__main__":  # pragma: no cover (the console script is cli/entry.py)
    raise SystemExit(main())
