"""``mantle-lsp`` command line: ``check``, ``explain`` and ``serve``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from .. import __version__
from ..ide.codes import REGISTRY, info, markdown_table
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
    code_matches,
    known_pattern,
    load,
    suggest_code,
)
from ..model.source import MAX_FILE_BYTES, Source, read_source, source_from_text
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
    finding_json,
    fixable_note,
    full_text,
    github,
    gitlab,
    json_lines,
    junit,
    make_finding,
    plural,
    pylint,
    sarif,
    statistics,
    statistics_json,
    statistics_text,
    summary,
    use_colour,
)

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
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
        default=None,
        metavar="PATH",
        help="project folders, folders containing projects, or files (default: .); `-` "
        "reads one file from stdin (with --stdin-filename)",
    )
    c.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=(*OUTPUT_FORMATS, "text"),
        metavar="{" + ",".join(OUTPUT_FORMATS) + "}",
        default=None,
        help="full (default: each finding with its source lines and fixes), concise (one "
        "line each; `text` is an alias), json, json-lines, sarif, github (Actions "
        "annotations), gitlab (Code Quality report), junit, pylint; --format is an alias "
        "of --output-format",
    )
    c.add_argument(
        "-o",
        "--output-file",
        metavar="FILE",
        help="write what check prints to FILE instead of stdout",
    )
    c.add_argument(
        "--documentation-url",
        metavar="URL",
        default=None,
        help="with the sarif, json and json-lines formats: the address of mantle-lsp's "
        "documentation site, linked from each code (its page) and from the tool (default: "
        "the package's Documentation address, when it has a real one; an empty URL links "
        "nothing)",
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
        help="with --fix or --diff, apply the unsafe fixes too (they may change meaning); "
        "alone, count and mark the findings an unsafe fix would fix",
    )
    c.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff instead of writing them (exit 1 if there are any)",
    )
    c.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="with --fix, exit 1 when a file was changed, even if nothing is left to report",
    )
    c.add_argument(
        "-e",
        "--exit-zero",
        action="store_true",
        help="exit 0 even when errors are found (2 still means a usage problem)",
    )
    c.add_argument(
        "--add-suppressions",
        "--add-noqa",
        dest="add_suppressions",
        action="store_true",
        help="add a `# mantle-lsp: ignore[CODE]` comment for every finding where a comment "
        "can go, list the others, and exit (--add-noqa is an alias)",
    )
    c.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only the findings this baseline file does not record, and say which "
        "recorded findings are fixed",
    )
    c.add_argument(
        "--update-baseline",
        action="store_true",
        help="with --baseline: drop the fixed findings from the baseline file (never adds one)",
    )
    c.add_argument(
        "--fail-on-stale-baseline",
        action="store_true",
        help="with --baseline: exit 1 when the baseline records findings that are fixed",
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
        "--fixable",
        action="append",
        default=None,
        metavar="CODE",
        help="only fix these codes (or code prefixes) with --fix; replaces the "
        "configuration's fixable, extend-fixable and unfixable",
    )
    c.add_argument(
        "--extend-fixable",
        action="append",
        default=[],
        metavar="CODE",
        help="fix these codes (or code prefixes) as well",
    )
    c.add_argument(
        "--unfixable",
        action="append",
        default=[],
        metavar="CODE",
        help="never fix these codes (or code prefixes) with --fix; adds to the configuration's",
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
        action="append",
        default=[],
        metavar="FILE|KEY=VALUE",
        help="use this configuration file (a mantle-lsp.toml, or a pyproject.toml with a "
        "[tool.mantle-lsp] table) instead of looking for one; or, repeatable, one "
        "`KEY = VALUE` line of a configuration file (TOML) that overrides the file's",
    )
    c.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    c.add_argument(
        "--show-settings",
        action="store_true",
        help="print the resolved settings of each project, and where each value comes from",
    )
    c.add_argument(
        "--show-files",
        action="store_true",
        help="print the files that would be checked, one a line, and exit",
    )
    c.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="read the file from stdin and check it as PATH (its kind from its name, its "
        "project from its folder); with --fix, print the fixed text",
    )
    c.add_argument(
        "-w",
        "--watch",
        action="store_true",
        help="check again whenever a file changes (Ctrl-C stops)",
    )
    c.add_argument(
        "-q", "--quiet", action="store_true", help="print the findings only (no summary or notes)"
    )
    c.add_argument(
        "-s",
        "--silent",
        action="store_true",
        help="print nothing (the exit status says it all; usage errors are still printed)",
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


def _config_args(values: list[str]) -> tuple[list[str], list[str]]:
    """``--config`` arguments: configuration files, and ``KEY=VALUE`` lines (as in ruff:
    an existing file is a file; otherwise an argument with ``=`` is a line of TOML)."""
    files, inline = [], []
    for v in values:
        if "=" in v and not os.path.exists(v):
            inline.append(v)
        else:
            files.append(v)
    return files, inline


def unknown_code(code: str) -> str:
    """The message for a code that is no code nor a prefix of one, with the code (or
    prefix) meant when one is close."""
    close = suggest_code(code, REGISTRY)
    hint = f"; did you mean `{close}`?" if close else ""
    return f"unknown code {code!r}{hint} (`mantle-lsp explain --markdown` lists every code)"


# Set by the console script (cli/entry.py), which ends the process right after the
# command: the checked projects (~10^6 objects at 1,000 skills) are kept here instead of
# being freed one by one when the command returns (~0.03 s); they die with the process.
live_until_exit: list[object] | None = None


def cmd_check(args: argparse.Namespace) -> int:
    global _level
    _level = "silent" if args.silent else "quiet" if args.quiet else "normal"
    problem = _usage(args)
    if problem is not None:
        return _error(problem)
    if args.watch:
        from . import watch

        return watch.run(args, _check_once)
    return _check_once(args)


def _check_once(args: argparse.Namespace) -> int:
    # One batch from start to exit: the parsed projects live until the end, so the cyclic
    # collector would only rescan them (each full pass over ~10^6 objects costs ~0.1 s);
    # reference counting still frees everything that is not in a cycle (`--watch` lets
    # each run's projects go).
    # Each folder is listed once (layer folders, then the projects' files) unless fixes,
    # which may add files, are written between rounds.
    writes = args.fix or args.diff or args.add_suppressions
    once = contextlib.nullcontext() if writes else layout.remembered_listings()
    with bulk_work(keep=not args.watch), once:
        return _check(args)


# how much `check` says besides the findings: "normal", "quiet" (-q: the findings only)
# or "silent" (-s: nothing); usage errors are always printed
_level = "normal"


def _usage(args: argparse.Namespace) -> str | None:
    """What is wrong with the options of ``check`` taken together (None: nothing)."""
    stdin = args.paths == ["-"] or (args.stdin_filename is not None and not args.paths)
    if args.paths and "-" in args.paths and args.paths != ["-"]:
        return "`-` (stdin) cannot be checked together with other paths"
    if stdin and args.stdin_filename is None:
        return (
            "reading stdin (`-`) needs --stdin-filename PATH: the file's kind comes from its "
            "name and its project from its folder"
        )
    if args.stdin_filename is not None and not stdin:
        return "--stdin-filename names the file read from stdin: give `-` (or no PATH)"
    args.stdin = stdin
    if not args.paths:
        args.paths = ["."]
    if args.exit_zero and args.exit_non_zero_on_fix:  # as ruff
        return "--exit-zero and --exit-non-zero-on-fix contradict each other"
    if args.write_baseline and (
        args.baseline or args.fix or args.diff or args.add_suppressions or args.update_baseline
    ):
        return "--write-baseline cannot be combined with --baseline, --fix, --diff or --add-noqa"
    for option in ("update_baseline", "fail_on_stale_baseline"):
        if getattr(args, option) and not args.baseline:
            return f"--{option.replace('_', '-')} needs --baseline FILE"
    if args.add_suppressions and (args.fix or args.diff or stdin):
        return "--add-noqa writes comments into the files: not with --fix, --diff or stdin"
    if args.watch:
        for option in (
            "fix",
            "diff",
            "add_suppressions",
            "write_baseline",
            "update_baseline",
            "output_file",
            "show_files",
            "show_settings",
        ):
            if getattr(args, option):
                flag = "--add-noqa" if option == "add_suppressions" else f"--{option}"
                return f"--watch only reports: not with {flag.replace('_', '-')}"
        if stdin:
            return "--watch checks files on disk, not stdin"
    return None


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
    if _level == "normal":
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
        return _config_errors(errors)
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


@dataclasses.dataclass
class _Stdin:
    """The file read from stdin: where it is checked as, and its text as read."""

    path: Path
    raw: str  # the decoded text, its BOM and line breaks as given

    def reader(self, path: Path) -> Source:
        return source_from_text(path, self.raw) if path == self.path else read_source(path)


def _read_stdin(name: str) -> _Stdin | str:
    """The file on stdin (at most the size of a file mantle-lsp reads, UTF-8), or why it
    cannot be read."""
    limit = MAX_FILE_BYTES
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        return f"stdin: larger than {limit // (1024 * 1024)} MB"
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"stdin: not UTF-8 ({exc.reason} at byte {exc.start})"
    return _Stdin(Path(os.path.abspath(name)), raw)


def _check(args: argparse.Namespace) -> int:
    config_files, inline = _config_args(args.config)
    if len(config_files) > 1:
        return _error(
            "--config names one configuration file (and any number of KEY=VALUE lines), "
            f"not {len(config_files)}: {', '.join(config_files)}"
        )
    overrides = Overrides(
        select=tuple(_codes(args.select)) if args.select is not None else None,
        extend_select=tuple(_codes(args.extend_select)),
        ignore=tuple(_codes(args.ignore)),
        engine=args.engine,
        min_severity=args.min_severity,
        fixable=tuple(_codes(args.fixable)) if args.fixable is not None else None,
        extend_fixable=tuple(_codes(args.extend_fixable)),
        unfixable=tuple(_codes(args.unfixable)),
        inline=tuple(inline),
    )
    for option, values in (
        ("--select", overrides.select or ()),
        ("--extend-select", overrides.extend_select),
        ("--ignore", overrides.ignore),
        ("--fixable", overrides.fixable or ()),
        ("--extend-fixable", overrides.extend_fixable),
        ("--unfixable", overrides.unfixable),
    ):
        for c in values:
            if not known_pattern(c, REGISTRY):
                return _error(f"{option}: {unknown_code(c)}")
    fmt = {"text": "concise", None: "full"}.get(args.output_format, args.output_format)
    if args.statistics and fmt not in ("full", "concise", "json"):  # as ruff
        return _error(f"--statistics prints a table (full, concise) or JSON (json), not {fmt}")
    config = None
    if config_files:
        config = Path(config_files[0]).resolve()
        if not config.exists():
            return _error(f"--config {config_files[0]}: no such file")
        if not config.is_file():  # a FIFO would block, a device never end
            return _error(f"--config {config_files[0]}: not a regular file")
    known: baseline.Baseline | None = None
    if args.baseline:
        try:
            known = baseline.load(Path(args.baseline).resolve())
        except baseline.BaselineError as exc:
            return _error(str(exc))
    stdin: _Stdin | None = None
    if args.stdin:
        got = _read_stdin(args.stdin_filename)
        if isinstance(got, str):
            return _error(got)
        stdin = got
        targets = _stdin_target(args, stdin, overrides, config)
        if targets is None:  # not checked: an editor piping a buffer gets it back
            if args.fix:
                sys.stdout.write(stdin.raw)
            return EXIT_OK
    else:
        targets = _targets(args, overrides, config)
    if isinstance(targets, int):
        return targets
    report = _Report(args)
    if args.show_settings:
        return report.done(_show_settings(targets, report.out))
    layer_targets = {} if stdin else layers.layer_targets(args.paths)  # memory-layers/
    if args.show_files:
        return report.done(_show_files(targets, layer_targets, stdin, report.out))
    _profile_notes(targets)
    jobs = default_jobs() if args.jobs == "auto" else args.jobs
    fixed: int | None = None
    banned = None  # names a run of --fix left alone (cli/fix.py)
    last: baseline.Match | None = None  # the last run against the baseline

    def fixable(f: Finding) -> bool:  # `fixable` / `unfixable` of the finding's project
        t = targets.get(f.root)
        return t is None or t.settings.fixable(f.row.code)

    layer_settings: dict[Path, Settings] = {}

    def layer_settings_of(root: Path) -> Settings:
        if root not in layer_settings:
            layer_settings[root] = load(root, REGISTRY, overrides, config, args.isolated)[0]
        return layer_settings[root]

    def layer_filter(root: Path, path: Path, ds: list[Diagnostic], whole: bool) -> list[Diagnostic]:
        return apply(layer_settings_of(root), path, ds, whole)

    def collect(
        reader: Reader | None, new: Sequence[Path] = ()
    ) -> tuple[dict[Path, Project], list[Finding]]:
        nonlocal last
        if stdin is not None:  # the buffer wins over the disk; it may be a new file
            reader = reader or stdin.reader
            if not stdin.path.exists():
                new = [*new, stdin.path]
        projects, findings = _collect(targets, jobs, reader, new)
        if layer_targets:
            findings += layers.layer_findings(layer_targets, layer_filter)
            findings.sort(key=lambda f: f.row.sort_key())
        if known is not None:
            last = baseline.match(findings, known)
            findings = last.new
        return projects, findings

    out = report.out
    if args.fix or args.diff:
        from . import fix

        texts = {stdin.path: stdin.raw} if stdin is not None else {}
        result = fix.run(
            collect,
            args.unsafe_fixes,
            fixable,
            base=stdin.reader if stdin is not None else None,
            texts=texts,
            only=set(texts) or None,
        )
        for conflict in result.conflicts:
            _note(conflict)
        if result.exhausted:
            _note(f"fixes were still being found after {fix.MAX_ROUNDS} rounds; run again")
        if args.diff:
            if _level != "silent" or report.buffer is not None:
                out.write(fix.diff(result))
            if _level == "normal":
                n = result.fixed
                would = f"Would fix {plural(n, 'finding')}." if n else "No fixes."
                print(would, file=sys.stderr)
            return report.done(EXIT_ERRORS if result.changed and not args.exit_zero else EXIT_OK)
        if stdin is not None:  # the fixed text is the output (as ruff: stdout, always)
            fixed_file = result.files.get(stdin.path)
            if fixed_file is not None:
                sys.stdout.write(fixed_file.stored(fixed_file.text))
            else:
                sys.stdout.write(stdin.raw)
            changed = fixed_file is not None and fixed_file.text != fixed_file.original
        else:
            problems = fix.write(result)
            for problem in problems:
                print(f"mantle-lsp: error: {problem}", file=sys.stderr)
            if problems:  # what is reported would not match the files
                return EXIT_ERRORS
            changed = bool(result.changed)
        projects, findings, fixed = result.projects, result.findings, result.fixed
        banned = result.banned
    else:
        projects, findings = collect(None)
        changed = False
    if live_until_exit is not None and not args.watch:
        live_until_exit.append(projects)
    if args.write_baseline:
        path = Path(args.write_baseline)
        try:
            baseline.write(path.resolve(), findings)
        except OSError as exc:
            why = exc.strerror or exc
            return _error(f"{args.write_baseline}: cannot write the baseline ({why})")
        if _level == "normal":
            out.write(f"Wrote {plural(len(findings), 'finding')} to {args.write_baseline}.\n")
        return report.done(EXIT_OK)
    if args.add_suppressions:
        from . import suppress

        return report.done(suppress.run(projects, findings, out, _level))
    style = Style(report.colour(args.color))
    rows = [f.row for f in findings]
    wants_fixes = fmt in ("full", "concise", "json", "json-lines") or args.statistics
    if findings and wants_fixes:
        from . import fix  # what fixes a finding has (the fixes are imported only then)

        fix.add_helps(projects, findings, banned, fixable)
    unsafe = args.unsafe_fixes
    if _level == "silent" and report.buffer is None:  # the output file still gets it
        pass
    elif args.statistics:
        stats = statistics(findings, unsafe)
        if fmt == "json":
            dump_json(statistics_json(stats), out)
        else:
            out.write(statistics_text(stats, style))
    elif fmt == "full":
        out.write(full_text(findings, style, unsafe))
    elif fmt == "concise":
        out.write(concise(findings, style, unsafe))
    elif fmt in ("json", "json-lines", "sarif"):
        docs = args.documentation_url
        if docs is None:
            from .code_docs import documentation_url

            docs = documentation_url()
        if fmt == "json":
            dump_json([finding_json(f, docs or None) for f in findings], out)
        elif fmt == "json-lines":
            out.write(json_lines(findings, docs or None))
        else:
            dump_json(sarif(findings, docs or None), out)
    elif fmt == "github":
        out.write(github(rows))
    elif fmt == "gitlab":
        dump_json(gitlab(findings, os.environ.get("CI_PROJECT_DIR") or None), out)
    elif fmt == "junit":
        out.write(junit(findings))
    else:
        out.write(pylint(rows))
    stale = 0
    said: list[str] = []
    if known is not None and last is not None:
        scope = _scope(targets, layer_targets, layer_settings_of)
        gone = baseline.fixed(last, known, scope)
        stale = sum(gone.values())
        if args.update_baseline:
            try:
                up = baseline.update(known, last, gone)
            except OSError as exc:
                return _error(f"{args.baseline}: cannot write the baseline ({exc.strerror or exc})")
            said += _updated(args.baseline, known, up)
            stale = 0
        elif stale:
            said.append(
                f"{plural(stale, 'baseline entry', 'baseline entries')} "
                f"{'is' if stale == 1 else 'are'} fixed; run with `--update-baseline` to "
                f"drop {'it' if stale == 1 else 'them'}."
            )
    texty = fmt in ("full", "concise", "github") or (args.statistics and fmt != "json")
    if _level == "normal" and texty:
        hidden = last.absorbed if last is not None else 0
        _summaries(out, findings, len(targets), len(layer_targets), hidden, fixed, unsafe)
        for line in said:
            out.write(line + "\n")
    elif _level == "normal":
        for line in said:
            _note(line)
    errors = any(row.severity == "error" for row in rows)
    status = EXIT_OK
    if args.exit_zero:
        pass
    elif errors or (args.exit_non_zero_on_fix and changed):
        status = EXIT_ERRORS
    elif args.fail_on_stale_baseline and stale:
        if _level != "silent":
            print(
                f"mantle-lsp: error: {args.baseline} records {plural(stale, 'finding')} "
                f"that {'is' if stale == 1 else 'are'} fixed (--fail-on-stale-baseline); run "
                f"with `--update-baseline` to drop {'it' if stale == 1 else 'them'}",
                file=sys.stderr,
            )
        status = EXIT_ERRORS
    return report.done(status)


def _updated(name: str, known: baseline.Baseline, up: baseline.Update) -> list[str]:
    """What ``--update-baseline`` says it did."""
    out = []
    if up.dropped:
        out.append(f"Dropped {plural(up.dropped, 'fixed finding')} from {name}.")
    if known.version < up.version:
        out.append(f"Wrote {name} in the current form (version {up.version}).")
    elif up.kept_old:
        out.append(
            f"{name} stays in the version {up.version} form: "
            f"{plural(up.kept_old, 'entry', 'entries')} of files this run did not check "
            "cannot be converted (update it from a check of every project)."
        )
    return out


def _scope(
    targets: dict[Path, _Target],
    layer_targets: dict[Path, set[Path] | None],
    layer_settings_of: Callable[[Path], Settings],
) -> baseline.Scope:
    """Whether this run would have reported a finding of (file, code): a file it checked
    (or one that is gone from a project it checked whole), not excluded, with a code the
    settings let through there at the severity shown."""

    def reported(st: Settings, path: Path, code: str, named: bool, below: Path | None) -> bool:
        if (not named and st.excluded(path, below=below)) or not st.enabled(code):
            return False
        if any(code_matches(code, p) for p in st.ignored_in(path)):
            return False
        level = st.severity_of(code, info(code).severity)
        return level is not None and SEVERITIES.index(level) <= SEVERITIES.index(st.min_severity)

    def in_scope(path: Path, code: str) -> bool:
        for layer_root, only in layer_targets.items():
            if layer_root in path.parents:
                if only is not None and path not in only:
                    return False
                st = layer_settings_of(layer_root)
                return reported(st, path, code, only is not None, None)
        root = layout.find_project_for(path)
        t = targets.get(root) if root is not None else None
        if t is None or (t.only is not None and path not in t.only):
            return False
        # as `apply` excludes: a file named on the command line never; below a folder
        # named there, what matches below it
        below = root if t.explicit else None
        return reported(t.settings, path, code, t.only is not None, below)

    return in_scope


class _Report:
    """Where ``check`` prints: stdout; a buffer written to ``--output-file`` at the end;
    stderr when stdout carries the text read from stdin and fixed."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.file: str | None = args.output_file
        self.buffer = io.StringIO() if self.file else None
        to_err = args.stdin and args.fix
        self.out: IO[str] = self.buffer or (sys.stderr if to_err else sys.stdout)

    def colour(self, choice: str) -> bool:
        return self.buffer is None and use_colour(choice, self.out, os.environ)

    def done(self, status: int) -> int:
        """Write the output file (atomically), then return ``status``."""
        if self.file is None or self.buffer is None:
            return status
        from .. import atomic  # only when there is a file to write

        path = Path(self.file)
        try:
            atomic.write_text(path, self.buffer.getvalue())
        except OSError as exc:
            return _error(f"{self.file}: cannot write the output ({exc.strerror or exc})")
        return status


def _stdin_target(
    args: argparse.Namespace, stdin: _Stdin, overrides: Overrides, config: Path | None
) -> dict[Path, _Target] | int | None:
    """The project of the file read from stdin (None: it is not checked, with a note)."""
    path = stdin.path
    root = layout.find_project_for(path)
    if root is None or layout.classify(path, root) is None:
        where = "not inside a Mantle project" if root is None else "not a Mantle file"
        _note(f"{args.stdin_filename}: {where}; not checked")
        return None
    st, errors = load(root, REGISTRY, overrides, config, args.isolated)
    if errors:
        return _config_errors(errors)
    if args.force_exclude and st.excluded(path):
        return None
    return {root: _Target(st, {path}, explicit=True)}


def _config_errors(errors: Iterable[SettingsError]) -> int:
    found = list(dict.fromkeys(errors))
    for e in found:
        print(e.render(display_path), file=sys.stderr)
    n = len(found)
    print(
        f"mantle-lsp: error: {n} problem{'s' if n != 1 else ''} in the configuration",
        file=sys.stderr,
    )
    return EXIT_USAGE


def _show_files(
    targets: dict[Path, _Target],
    layer_targets: dict[Path, set[Path] | None],
    stdin: _Stdin | None,
    out: IO[str],
) -> int:
    """``--show-files``: the files this check would read and report on, sorted."""
    files: set[Path] = set()
    if stdin is not None:
        files.add(stdin.path)
    else:
        for root, t in targets.items():
            for path, _, _ in layout.project_files(root):
                if t.only is not None and path not in t.only:
                    continue
                below = root if t.explicit else None
                if t.only is None and t.settings.excluded(path, below=below):
                    continue
                files.add(path)
        if layer_targets:
            from ..model.layers import load_layer_set

            for root, only in layer_targets.items():
                files.update(p for p in load_layer_set(root).texts if only is None or p in only)
    for path in sorted(files):
        out.write(display_path(path) + "\n")
    return EXIT_OK


def _summaries(
    out: IO[str],
    findings: list[Finding],
    nprojects: int,
    nlayers: int,
    hidden: int,
    fixed: int | None,
    unsafe: bool = False,
) -> None:
    line = summary([f.row for f in findings], nprojects, nlayers)
    if fixed:
        line = f"Fixed {plural(fixed, 'finding')}. {line}"
    if hidden:
        line += f" ({plural(hidden, 'finding')} in the baseline not shown.)"
    out.write(line + "\n")
    note = fixable_note(findings, unsafe)
    if note:
        out.write(note + "\n")


def _show_settings(targets: dict[Path, _Target], out: IO[str]) -> int:
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
            print(f"mantle-lsp: error: {unknown_code(args.code)}", file=sys.stderr)
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
