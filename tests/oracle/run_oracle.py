#!/usr/bin/env python3
"""``make oracle``: differential test of our checker against the engine (rasa-pro 3.21.0,
or another version such as 3.22.0.dev1: ``make oracle ORACLE_RASA=3.22.0.dev1``).

Run with the project's interpreter (it imports ``mantle_lsp``); the engine runs in a
separate interpreter that has rasa-pro installed (``--engine-python``)::

    .venv/bin/python tests/oracle/run_oracle.py \
        --engine-python .cache/oracle-venv-3.21.0/bin/python

Our checker runs with the rule profile of the engine's version (``--engine 3.22`` for
rasa-pro 3.22.x, model/engine.py).

Steps: (1) run our pytest suite (without the LSP, Neovim and network tests) with
``MANTLE_LSP_DUMP_FIXTURES`` set, so every ``write_fixture()`` project is dumped;
(2) add the example projects; (3) run the engine on every distinct project, all in one
process of the engine interpreter (``scripts/oracle_findings.py --jsonl``), and our
checker in this process; (4) compare (``oracle_compare.py``), print the report and the
summary table, and exit 1 if the engine reports something we miss or we report an error
on a project the engine accepts (allow-list: ``known_differences.yml``).

docs/oracle.md explains how to read the report.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from eval_compare import EvalReport, Ours, judge  # noqa: E402
from oracle_compare import (  # noqa: E402
    FAILED_TO_LOAD,
    Allowance,
    EngineFinding,
    OurDiagnostic,
    ProjectResult,
    compare,
    load_allow_list,
    used_allowances,
)

ALLOW_LIST = HERE / "known_differences.yml"
ENGINE_SCRIPT = REPO / "scripts" / "oracle_findings.py"
EXAMPLES = ("examples/telecom", "examples/telecom-broken")
# tests that need an editor, a language client or the network: not fixture producers
SKIPPED_TESTS = ("test_lsp_*.py", "test_nvim.py", "test_engine_agents.py")
DEFAULT_VERSION = "3.21.0"  # the reference engine (the Makefile's ORACLE_RASA)
KNOWN_VERSIONS = ("3.21.0", "3.22.0.dev1")  # versions known_differences.yml was made for
EXIT_OK, EXIT_DIFFERENCES, EXIT_BROKEN = 0, 1, 2


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- collecting projects -----------------------------------------------------------------------


def dump_fixtures(dest: Path, pytest_args: Sequence[str]) -> None:
    """Run the test suite so that every write_fixture() project lands in ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignores = [
        f"--ignore={p.relative_to(REPO)}"
        for pattern in SKIPPED_TESTS
        for p in sorted((REPO / "tests").glob(pattern))
    ]
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "-m",
        "not network",
        *ignores,
        *pytest_args,
        "tests",
    ]
    env = dict(os.environ, MANTLE_LSP_DUMP_FIXTURES=str(dest.resolve()))
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    tail = [line for line in proc.stdout.splitlines() if line.strip()][-1:] or ["(no output)"]
    log(f"pytest ({time.monotonic() - started:.0f} s, exit {proc.returncode}): {tail[0]}")
    if proc.returncode == 1:
        log(
            "  some tests failed; that is `make test`'s business, their fixtures were "
            "dumped all the same"
        )
    elif proc.returncode not in (0, 5):
        log(proc.stdout[-4000:] + proc.stderr[-4000:])
        log("  pytest did not run normally: fixtures may be missing")


def project_digest(root: Path) -> str:
    """What makes two dumped projects the same: their files, folders (an empty skill
    folder is a finding) and symbolic links."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            h.update(f"{rel} -> {os.readlink(p)}".encode() + b"\0")
        elif p.is_dir():
            h.update(rel.encode() + b"/\0")
        elif p.is_file() and "__pycache__" not in p.parts:
            h.update(rel.encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def collect_projects(
    fixtures: Path, extra: Sequence[str], only: Sequence[str]
) -> dict[str, tuple[str, Path]]:
    """name -> (group, root) for every project to compare."""
    out: dict[str, tuple[str, Path]] = {}
    if fixtures.is_dir():
        for d in sorted(fixtures.iterdir()):
            if d.is_dir():
                module = d.name.split("__", 1)[0]
                group = module.removeprefix("tests_").removesuffix(".py")
                out[d.name] = (group, d)
    for rel in extra:
        root = (REPO / rel).resolve()
        out[rel] = ("examples" if rel.startswith("examples/") else "projects", root)
    if only:
        out = {k: v for k, v in out.items() if any(s in k for s in only)}
    return out


# -- the two sides ---------------------------------------------------------------------------------


def run_engine(
    engine_python: str, roots: Sequence[Path], timeout: float
) -> dict[Path, dict[str, Any]]:
    """One engine process for every project; returns root -> {"ok", "findings", ...}."""
    listing = REPO / ".cache" / "oracle-projects.txt"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text("".join(f"{r}\n" for r in roots), encoding="utf-8")
    cmd = [
        engine_python,
        str(ENGINE_SCRIPT),
        "--jsonl",
        "--timeout",
        str(timeout),
        "--from-file",
        str(listing),
    ]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONDONTWRITEBYTECODE="1")
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    rows = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[Path(row["project"])] = row
    log(
        f"engine: {len(rows)} of {len(roots)} projects in {time.monotonic() - started:.0f} s "
        f"(exit {proc.returncode})"
    )
    if proc.returncode != 0 or len(rows) != len(roots):
        log(proc.stderr[-6000:])
        raise SystemExit(EXIT_BROKEN)
    return rows


def check_language_tags(engine_python: str) -> list[list[str]]:
    """3.22: our agent.language rule against the engine's on generated tags
    (engine_language_tags.py); returns the tags we warn about and the engine accepts."""
    proc = subprocess.run(
        [engine_python, str(HERE / "engine_language_tags.py")], capture_output=True, text=True
    )
    try:
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        log(proc.stderr[-4000:])
        raise SystemExit(EXIT_BROKEN) from None
    bad: list[list[str]] = summary["false_warnings"]
    sys.stdout.write(
        f"\nagent.language: {summary['tags']} tags, {len(bad)} false warning(s), "
        f"{summary['misses']} the engine warns about and we let through (silent where "
        "unsure)\n"
    )
    for tag, why in bad[:20]:
        sys.stdout.write(f"  FALSE WARNING {tag!r}: {why}\n")
    return bad


def check_previews(engine_python: str, roots: Sequence[Path]) -> int:
    """The prompt preview against the engine's rendering (preview_oracle.py); prints the
    summary and the first differences, returns how many texts differ."""
    from preview_oracle import compare_previews

    started = time.monotonic()
    try:
        rep = compare_previews(engine_python, roots, REPO / ".cache" / "oracle-preview-jobs.json")
    except RuntimeError as exc:
        log(f"prompt preview: the engine script failed:\n{exc}")
        raise SystemExit(EXIT_BROKEN) from None
    log(f"prompt preview: {len(roots)} projects in {time.monotonic() - started:.0f} s")
    out = sys.stdout
    out.write(
        f"\nprompt preview: {rep.compared} texts of {rep.skills} skills compared with the "
        f"engine's (their prose, and the instructions of their {rep.steps} ordered-block "
        f"steps: {rep.step_texts} texts not empty), {len(rep.mismatches)} differ "
        f"({rep.skipped} skills "
        f"the engine cannot load and {len(rep.broken)} project(s) it cannot load are not "
        "compared)\n"
    )
    for m in rep.mismatches[:10]:
        what = f"skill {m.skill}" + (f", step {m.step}" if m.step else "")
        out.write(f"  DIFFERS {_rel(Path(m.project))} {what}\n")
        out.write(_wrap(f"state: {json.dumps(m.state, ensure_ascii=False)}", "    ") + "\n")
        out.write(f"    ours:   {m.ours!r}\n    engine: {m.engine!r}\n")
    return len(rep.mismatches)


def check_first_looks(roots: Sequence[Path]) -> int:
    """The server's first look at every skill.md of the corpus against the whole check
    (``support.first_look_differences``); prints the first differences, returns how many
    files differ."""
    sys.path.insert(0, str(HERE.parent))
    from support import first_look_differences

    started = time.monotonic()
    looked = differ = 0
    for root in roots:
        n, diffs = first_look_differences(root)
        looked += n
        for path, extra, missing in diffs:
            differ += 1
            if differ <= 10:
                sys.stdout.write(
                    f"  FIRST LOOK DIFFERS {_rel(path)}: extra {sorted(extra)[:3]}, "
                    f"missing {sorted(missing)[:3]}\n"
                )
    log(f"first looks: {looked} skill.md files in {time.monotonic() - started:.0f} s")
    sys.stdout.write(f"\nfirst look: {looked} skill.md files, {differ} differ\n")
    return differ


def engine_version(engine_python: str) -> str:
    code = "import importlib.metadata as m; print(m.version('rasa-pro'))"
    proc = subprocess.run([engine_python, "-c", code], capture_output=True, text=True)
    return proc.stdout.strip() or "(not installed)"


def profile_of(version: str) -> str:
    """Our rule profile for a rasa-pro version (``3.22.0.dev1`` -> ``3.22``)."""
    from mantle_lsp.model.engine import profile_for

    major, minor = (int(x) for x in version.split(".")[:2])
    return profile_for(major, minor)


def run_ours(root: Path, profile: str, evals: dict[str, EvalSide]) -> list[OurDiagnostic]:
    """Our diagnostics of the project at ``root``, but those of its eval files, which
    the validator never reads: those go to ``evals`` (compared in check_evals)."""
    from mantle_lsp.ide.diagnostics import project_diagnostics
    from mantle_lsp.model import layout
    from mantle_lsp.model.project import Project

    proj = Project.load(root)
    # compare with the rules of the oracle's version even where a project pins another
    # version (or a folder above it happens to)
    proj.engine_override = profile
    sources = {pf.path: pf.source for pf in proj.files.values()}
    out = []
    for path, ds in project_diagnostics(proj).items():
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = path.as_posix()
        src = sources.get(path)
        if layout.is_eval_file(root, path) and src is not None:
            evals[rel] = EvalSide(
                src.text,
                proj.files[path].doc,
                [
                    Ours(
                        d.range.start,
                        d.range.end,
                        d.code,
                        src.index.position(d.range.start)[0] + 1,
                        d.message,
                    )
                    for d in ds
                ],
            )
            continue
        for d in ds:
            line = src.index.position(d.range.start)[0] + 1 if src is not None else 0
            if d.folder is not None:  # placed at the folder, as `check` shows it
                where = d.folder.relative_to(root).as_posix() + "/"
                out.append(OurDiagnostic(where, 0, d.code, d.severity, d.message))
                continue
            out.append(OurDiagnostic(rel, line, d.code, d.severity, d.message))
    return sorted(out, key=lambda d: (d.path, d.line, d.code))


@dataclass
class EvalSide:
    """Our side of one eval file: its text, parsed document and diagnostics."""

    text: str
    doc: Any
    ours: list[Ours]


def run_engine_evals(
    engine_python: str, roots: Sequence[Path], timeout: float
) -> dict[Path, dict[str, Any]]:
    """The engine's verdict on the eval files of ``roots`` (engine_scenarios.py, one
    process for all of them); root -> {"files": {rel: {"stage", "message"}}, "error"}."""
    listing = REPO / ".cache" / "oracle-eval-projects.txt"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text("".join(f"{r}\n" for r in roots), encoding="utf-8")
    cmd = [engine_python, str(HERE / "engine_scenarios.py"), "--from-file", str(listing)]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout * 10
    )
    rows = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[Path(row["project"])] = row
    if proc.returncode != 0 or len(rows) != len(roots):
        log(proc.stderr[-6000:])
        raise SystemExit(EXIT_BROKEN)
    return rows


def _resolve(node: Any, size: int, path: tuple[str | int, ...]) -> tuple[int, int]:
    """The span (from its key) of the deepest node of our YAML tree ``path`` reaches; an
    int at a mapping is a key written as a number (pykwalify counts from 1) or a position."""
    from mantle_lsp.syntax.yaml12 import key12
    from mantle_lsp.syntax.yaml_tree import YMap, YSeq

    span = (0, size)
    for seg in path:
        nxt, key_start = None, None
        if isinstance(node, YMap):
            for k, v in node.items:
                kv = key12(k)
                if kv == seg or (isinstance(seg, int) and str(kv) in (str(seg + 1), str(seg))):
                    nxt, key_start = v, k.range.start
            if nxt is None and isinstance(seg, int) and 0 <= seg < len(node.items):
                nxt, key_start = node.items[seg][1], node.items[seg][0].range.start
        elif isinstance(node, YSeq) and isinstance(seg, int) and 0 <= seg < len(node.items):
            nxt = node.items[seg]
        if nxt is None:
            break
        node = nxt
        start = key_start if key_start is not None else nxt.range.start
        if key_start is None and not nxt.range.length:  # an empty list item: from its `-`
            start = max(0, start - 2)
        span = (start, max(nxt.range.end, start + 1))
    return span


def check_evals(
    engine_python: str,
    roots: dict[str, Path],
    sides: dict[str, dict[str, EvalSide]],
    timeout: float,
    verbose: bool,
) -> EvalReport:
    """Every eval file of the corpus: the engine's verdict against ours (eval_compare.py);
    prints the differences and a summary line."""
    with_evals = [n for n in roots if sides.get(n)]
    report = EvalReport()
    if not with_evals:
        sys.stdout.write("\neval files: none in the corpus\n")
        return report
    started = time.monotonic()
    rows = run_engine_evals(engine_python, [roots[n] for n in with_evals], timeout)
    for n in with_evals:
        row = rows[roots[n]]
        if row.get("error"):
            log(f"engine_scenarios failed on {n}:\n{row['error']}")
            raise SystemExit(EXIT_BROKEN)
        for rel, side in sorted(sides[n].items()):
            verdict = row["files"].get(rel)
            if verdict is None:  # a file the engine script does not list (a .yaml conftest
                continue  # next to the .yml one): never read by the evaluation
            root_node = getattr(side.doc, "root", None)

            def key_at(d: Ours, text: str = side.text) -> str | None:
                return text[d.start : d.end]

            report.files.append(
                judge(
                    f"{n}: {rel}",
                    verdict["stage"],
                    verdict["message"],
                    side.ours,
                    functools.partial(_resolve, root_node, len(side.text)),
                    key_at,
                )
            )
    log(f"eval files: {len(report.files)} in {time.monotonic() - started:.0f} s")
    out = sys.stdout
    if report.failed:
        out.write("\n== EVAL: the engine's verdict on an eval file and ours differ ==\n")
        for f in report.failed:
            out.write(f"\n{f.rel}  [{f.status}]\n")
            out.write(_wrap(f"engine ({f.stage}): {f.message[-600:]}", "    ") + "\n")
            shown = "; ".join(f"{d.line}: {d.code}: {d.message}" for d in f.ours) or "nothing"
            out.write(_wrap(f"ours: {shown}", "    ") + "\n")
    rejected = sum(1 for f in report.files if f.stage != "ok")
    out.write(
        f"\neval files: {len(report.files)} compared with the engine's loader, {rejected} "
        f"rejected by it; {len(report.failed)} differ (missed {report.count('missed')}, "
        f"extra {report.count('extra')}, unlocated {report.count('unlocated')})\n"
    )
    if verbose:
        for f in report.files:
            if f.note:
                out.write(f"  {f.rel}: {f.note}\n")
    return report


# -- report ----------------------------------------------------------------------------------------


def _wrap(text: str, indent: str, width: int = 100) -> str:
    import textwrap

    return textwrap.fill(
        " ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent + "  "
    )


def print_report(
    results: list[ProjectResult],
    ours: dict[str, list[OurDiagnostic]],
    copies: dict[str, list[str]],
    roots: dict[str, Path],
    allow: list[Allowance],
    verbose: bool,
) -> None:
    out = sys.stdout
    missed = [r for r in results if r.count("missed")]
    extra = [r for r in results if r.extra_errors]
    load = [r for r in results if r.load_disagreements]
    if missed:
        out.write("\n== MISSED: the engine reports these, we do not ==\n")
        for r in missed:
            out.write(f"\n{r.name}  ({_rel(roots[r.name])}){_also(copies[r.name])}\n")
            for f in r.findings:
                if f.status != "missed":
                    continue
                out.write(f"  {f.finding.code}  in {f.scope}  [rule: {f.scope.rule}]\n")
                out.write(_wrap("engine: " + f.finding.message, "    ") + "\n")
                near = ", ".join(f.ours_in_scope) or "nothing"
                out.write(_wrap(f"we report there: {near}", "    ") + "\n")
    if extra:
        out.write("\n== EXTRA: we report errors on a project the engine accepts ==\n")
        for r in extra:
            out.write(f"\n{r.name}  ({_rel(roots[r.name])}){_also(copies[r.name])}\n")
            for d in r.extra_errors:
                out.write(_wrap(f"{d.path}:{d.line}: {d.code}: {d.message}", "  ") + "\n")
    if load:
        out.write(
            "\n== LOAD: we report an error that means the engine cannot load this (a compile "
            "error, or an lsp.* error), but the engine loads it ==\n"
        )
        for r in load:
            out.write(f"\n{r.name}  ({_rel(roots[r.name])}){_also(copies[r.name])}\n")
            for d in r.load_disagreements:
                out.write(_wrap(f"{d.path}:{d.line}: {d.code}: {d.message}", "  ") + "\n")
    unmapped = [(r, f) for r in results for f in r.findings if f.scope.rule == "unmapped"]
    if unmapped:
        out.write(
            "\n== UNMAPPED: no file derivable from the message (matched anywhere in the "
            "project; extend locate()) ==\n"
        )
        for r, f in unmapped:
            out.write(_wrap(f"{r.name}: {f.finding.code}: {f.finding.message}", "  ") + "\n")
    if verbose:
        out.write("\n== ALLOWED (known_differences.yml) ==\n")
        for r in results:
            for f in r.findings:
                if f.status == "allowed":
                    out.write(
                        _wrap(
                            f"{r.name}: {f.finding.code} [{f.allowance}]: {f.finding.message}", "  "
                        )
                        + "\n"
                    )
            for d, a in r.allowed_extra:
                out.write(_wrap(f"{r.name}: ours {d.path}:{d.line} {d.code} [{a}]", "  ") + "\n")
        out.write(
            "\n== INFO: our errors that no engine finding explains, on projects the engine "
            "rejects (not a failure) ==\n"
        )
        for r in results:
            for d in r.unexplained_errors:
                out.write(_wrap(f"{r.name}: {d.path}:{d.line} {d.code}: {d.message}", "  ") + "\n")
    by_id: Counter[str] = Counter()
    for r in results:
        by_id.update(f.allowance for f in r.findings if f.allowance)
        by_id.update(a for _, a in r.allowed_extra)
    if by_id:
        out.write("\nAllowed by known_differences.yml (-v lists them):\n")
        for entry in allow:
            if by_id[entry.id]:
                out.write(f"  {by_id[entry.id]:4d}  {entry.id}\n")


def _rel(p: Path) -> str:
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return str(p)


def _also(names: list[str]) -> str:
    return (
        f"  (+{len(names)} identical: {', '.join(names[:3])}{'…' if len(names) > 3 else ''})"
        if names
        else ""
    )


def print_table(results: list[ProjectResult], copies: dict[str, list[str]]) -> None:
    groups: dict[str, list[ProjectResult]] = defaultdict(list)
    for r in results:
        groups[r.group].append(r)
    head = (
        "",
        "projects",
        "distinct",
        "engine findings",
        "matched",
        "allowed",
        "missed",
        "our extra errors",
    )
    rows = []
    for g in [*sorted(k for k in groups if k != "examples"), "examples"]:
        if g in groups:
            rows.append((g, *_counts(groups[g], copies)))
    rows.append(("total", *_counts(results, copies)))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    line = "  ".join(
        h.ljust(widths[0]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(head)
    )
    sys.stdout.write("\n" + line + "\n" + "-" * len(line) + "\n")
    for row in rows:
        if row[0] == "total":
            sys.stdout.write("-" * len(line) + "\n")
        sys.stdout.write(
            "  ".join(
                str(x).ljust(widths[0]) if i == 0 else str(x).rjust(widths[i])
                for i, x in enumerate(row)
            )
            + "\n"
        )


def _counts(rs: list[ProjectResult], copies: dict[str, list[str]]) -> tuple[int, ...]:
    return (
        sum(1 + len(copies[r.name]) for r in rs),
        len(rs),
        sum(len(r.findings) for r in rs),
        sum(r.count("matched") for r in rs),
        sum(r.count("allowed") + len(r.allowed_extra) for r in rs),
        sum(r.count("missed") for r in rs),
        sum(len(r.extra_errors) + len(r.load_disagreements) for r in rs),
    )


def _load_codes() -> frozenset[str]:
    """Our codes for the compile errors the engine folds into skill.failed_to_load."""
    from mantle_lsp.ide.codes import REGISTRY

    return frozenset(
        c.code
        for c in REGISTRY.values()
        if c.code == FAILED_TO_LOAD or "failed_to_load" in c.engine_note
    )


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    with contextlib.redirect_stdout(sys.stderr):
        yield


# -- main ----------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "--engine-python",
        default=os.environ.get(
            "ORACLE_PYTHON", str(REPO / f".cache/oracle-venv-{DEFAULT_VERSION}/bin/python")
        ),
        help="an interpreter with rasa-pro (default: .cache/oracle-venv-3.21.0/bin/python)",
    )
    p.add_argument(
        "--fixtures",
        type=Path,
        default=REPO / ".cache" / "oracle-fixtures",
        help="where the test suite dumps its fixture projects",
    )
    p.add_argument(
        "--no-pytest", action="store_true", help="reuse the fixtures dumped by the last run"
    )
    p.add_argument(
        "--project",
        action="append",
        default=[],
        metavar="DIR",
        help="another project to compare (repeatable; the examples are always included)",
    )
    p.add_argument(
        "-k",
        dest="only",
        action="append",
        default=[],
        metavar="TEXT",
        help="only projects whose name contains TEXT (repeatable)",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="engine seconds per project")
    p.add_argument(
        "--report-json",
        type=Path,
        default=REPO / ".cache" / "oracle-report.json",
        help="also write every comparison as JSON here",
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="also list allowed and informational rows"
    )
    p.add_argument(
        "--no-preview",
        action="store_true",
        help="skip the prompt-preview comparison (preview_oracle.py)",
    )
    args = p.parse_args(argv)

    if not Path(args.engine_python).exists():
        log(f"no engine interpreter at {args.engine_python} (run `make oracle`)")
        return EXIT_BROKEN
    allow = load_allow_list(ALLOW_LIST)
    load_codes = _load_codes()
    version = engine_version(args.engine_python)
    log(f"engine: rasa-pro {version} ({args.engine_python})")
    try:
        profile = profile_of(version)
    except ValueError:
        log(f"cannot tell the rasa-pro version of {args.engine_python}")
        return EXIT_BROKEN
    log(f"ours: the {profile} rule profile")
    if version not in KNOWN_VERSIONS:
        log(f"  warning: known_differences.yml was made for rasa-pro {', '.join(KNOWN_VERSIONS)}")
    allow = [a for a in allow if a.applies_to_engine(version)]
    if not args.no_pytest:
        dump_fixtures(args.fixtures, [])
    projects = collect_projects(args.fixtures, [*EXAMPLES, *args.project], args.only)
    if not projects:
        log("no projects to compare")
        return EXIT_BROKEN

    # identical projects (the same fixture in several tests) are compared once
    first_of: dict[str, str] = {}
    copies: dict[str, list[str]] = defaultdict(list)
    for name, (_, root) in projects.items():
        digest = project_digest(root)
        if digest in first_of:
            copies[first_of[digest]].append(name)
        else:
            first_of[digest] = name
    names = list(first_of.values())
    log(f"{len(projects)} projects, {len(names)} distinct")

    roots = {n: projects[n][1] for n in names}
    engine_rows = run_engine(args.engine_python, [roots[n] for n in names], args.timeout)
    started = time.monotonic()
    results: list[ProjectResult] = []
    ours_by_name: dict[str, list[OurDiagnostic]] = {}
    eval_sides: dict[str, dict[str, EvalSide]] = {}
    with _quiet_stdout():
        for n in names:
            row = engine_rows[roots[n]]
            engine = [
                EngineFinding(f["code"], f["severity"], f["message"]) for f in row["findings"]
            ]
            ours = run_ours(roots[n], profile, eval_sides.setdefault(n, {}))
            ours_by_name[n] = ours
            results.append(compare(n, projects[n][0], engine, ours, allow, load_codes))
    log(f"ours: {len(names)} projects in {time.monotonic() - started:.0f} s")

    print_report(results, ours_by_name, copies, roots, allow, args.verbose)
    stale = []
    if not args.only:
        used = used_allowances(results)
        stale = [a for a in allow if a.specific and a.id not in used]
        for a in stale:
            sys.stdout.write(
                f"\nSTALE allow-list entry {a.id!r}: nothing needs it any more; remove it "
                "from tests/oracle/known_differences.yml\n"
            )
    print_table(results, copies)

    if args.report_json:
        args.report_json.parent.mkdir(parents=True, exist_ok=True)
        dump = [
            {
                "project": r.name,
                "path": _rel(roots[r.name]),
                "identical": copies[r.name],
                "engine_ok": r.engine_ok,
                "findings": [
                    {
                        **asdict(f.finding),
                        "scope": list(f.scope.paths),
                        "rule": f.scope.rule,
                        "status": f.status,
                        "allowance": f.allowance,
                    }
                    for f in r.findings
                ],
                "ours": [asdict(d) for d in ours_by_name[r.name]],
                "extra_errors": [asdict(d) for d in r.extra_errors],
                "load_disagreements": [asdict(d) for d in r.load_disagreements],
            }
            for r in results
        ]
        args.report_json.write_text(json.dumps(dump, indent=1, ensure_ascii=False) + "\n")

    bad_tags = check_language_tags(args.engine_python) if profile == "3.22" else []
    preview_diffs = 0
    if not args.no_preview:
        preview_diffs = check_previews(args.engine_python, [roots[n] for n in names])
    first_look_diffs = check_first_looks([roots[n] for n in names])
    evals = check_evals(args.engine_python, roots, eval_sides, args.timeout, args.verbose)
    failed = [r for r in results if r.failed]
    crashes = sum(1 for r in results if not r.engine_ok)
    if failed or stale or bad_tags or preview_diffs or first_look_diffs or evals.failed:
        sys.stdout.write(
            f"\nFAILED: {len(failed)} project(s) differ from the engine"
            + (
                f", {len(stale)} stale allow-list entr{'y' if len(stale) == 1 else 'ies'}"
                if stale
                else ""
            )
            + (f", {len(bad_tags)} false agent.language warning(s)" if bad_tags else "")
            + (f", {preview_diffs} prompt preview(s) differ" if preview_diffs else "")
            + (f", {first_look_diffs} first look(s) differ" if first_look_diffs else "")
            + (f", {len(evals.failed)} eval file(s) differ" if evals.failed else "")
            + f" (engine crashed on {crashes}; full report: {_rel(args.report_json)})\n"
        )
        return EXIT_DIFFERENCES
    sys.stdout.write(f"\nOK: no unexplained differences (engine crashed on {crashes}).\n")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
