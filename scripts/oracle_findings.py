#!/usr/bin/env python3
"""Run the reference Mantle validator (rasa-pro) on projects and print its findings.

Usage (with an interpreter that has ``rasa-pro`` installed, e.g. a throwaway venv)::

    /tmp/oracle-venv/bin/python scripts/oracle_findings.py examples/telecom
    /tmp/oracle-venv/bin/python scripts/oracle_findings.py examples/telecom-broken \\
        -o examples/telecom-broken/oracle-findings.json
    /tmp/oracle-venv/bin/python scripts/oracle_findings.py --jsonl proj1 proj2 ...
    /tmp/oracle-venv/bin/python scripts/oracle_findings.py --jsonl --from-file list.txt

Each project is copied to a temporary directory first, because the validator
imports every tool module (running its top-level code) and writes a generated
``agent.id`` back into ``agent.yml`` when none is set.

Output for one project: a JSON list of ``{"code", "severity", "message"}`` objects
sorted by code, then message. Messages are normalised so that runs are comparable:
the temporary project path becomes ``<project>`` and Python object addresses
(``0x7f...``) become ``0x?``. Pass ``--raw`` to keep the messages exactly as the
validator produced them.

With ``--jsonl`` (implied by more than one project) rasa is imported once and the
projects are validated one after the other in this process (importing rasa takes
several seconds; validating a small project takes a fraction of one). One line is
printed per project, as soon as it is done::

    {"project": "<path as given>", "ok": true, "seconds": 0.12, "findings": [...]}

If the validator raises (or exceeds ``--timeout``) instead of returning findings, the
project gets a single finding with the code ``oracle.exception`` and ``"ok": false``;
for a single project without ``--jsonl`` the exit status is then 2.

This module imports ``rasa`` only inside :func:`main`, so linting or type-checking
the repository does not need rasa-pro.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".git")


class _Timeout(BaseException):
    pass


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to file descriptor 1 to stderr for a while.

    rasa configures logging handlers on import; some of them write to stdout.
    Redirecting at the descriptor level keeps our JSON on stdout clean.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`_Timeout` in this (main) thread after ``seconds`` (0: no limit)."""
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def fire(signum: int, frame: FrameType | None) -> None:
        raise _Timeout(f"the validator took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _normalise(message: str, copy_dir: Path) -> str:
    for variant in sorted({str(copy_dir), str(copy_dir.resolve())}, key=len, reverse=True):
        message = message.replace(variant, "<project>")
    return _ADDRESS.sub("0x?", message)


def _import_validation(verbose: bool) -> ModuleType:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with _stdout_to_stderr():
        # Imported here, by name, so the repository's own lint and type checks
        # never need rasa-pro installed.
        validation = importlib.import_module("rasa.mantle.validation")
        if not verbose:
            # rasa logs every skill it loads, and a skill that fails to load with a
            # rich traceback including locals: rendering that takes seconds per
            # project, far longer than the validation itself.
            structlog = importlib.import_module("structlog")
            structlog.configure(
                wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL),
                cache_logger_on_first_use=False,
            )
    return validation


def _forget_project_modules(before: set[str], copy_dir: Path) -> None:
    """Drop modules a project's tools imported, so the next project starts clean."""
    roots = {str(copy_dir), str(copy_dir.resolve())}
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        origin = str(getattr(module, "__file__", None) or "")
        if name == "lib" or name.startswith("lib.") or any(origin.startswith(r) for r in roots):
            sys.modules.pop(name, None)


def _run(
    validation: ModuleType, project: Path, raw: bool, timeout: float = 0, verbose: bool = True
) -> tuple[list[dict[str, Any]], bool]:
    with tempfile.TemporaryDirectory(prefix="mantle-oracle-") as tmp:
        copy_dir = Path(tmp) / (project.name or "project")
        shutil.copytree(project, copy_dir, ignore=_COPY_IGNORE, symlinks=True)
        before = set(sys.modules)
        saved_path = list(sys.path)
        try:
            with _stdout_to_stderr(), _deadline(timeout):
                found = validation.collect_project_findings(copy_dir)
        except (Exception, _Timeout) as exc:  # the validator crashes on some broken inputs
            if verbose:
                traceback.print_exc(file=sys.stderr)
            message = f"{type(exc).__name__}: {exc}"
            if not raw:
                message = _normalise(message, copy_dir)
            return [{"code": "oracle.exception", "severity": "error", "message": message}], False
        finally:
            sys.path[:] = saved_path
            _forget_project_modules(before, copy_dir)
        rows = []
        for finding in found:
            message = finding.message if raw else _normalise(finding.message, copy_dir)
            rows.append(
                {"code": finding.code, "severity": str(finding.severity), "message": message}
            )
    rows.sort(key=lambda row: (row["code"], row["message"], row["severity"]))
    return rows, True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "projects", type=Path, nargs="*", help="Mantle project roots (left untouched)"
    )
    parser.add_argument(
        "--from-file", type=Path, help="read more project roots from this file, one per line"
    )
    parser.add_argument("-o", "--output", type=Path, help="also write the JSON to this file")
    parser.add_argument("--raw", action="store_true", help="do not normalise messages")
    parser.add_argument(
        "--jsonl", action="store_true", help="one JSON line per project (see the module doc)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds per project before it counts as a crash (0: no limit)",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="keep rasa's own log output (on stderr)"
    )
    args = parser.parse_args(argv)

    projects: list[Path] = list(args.projects)
    if args.from_file is not None:
        lines = args.from_file.read_text(encoding="utf-8").splitlines()
        projects += [Path(line) for line in lines if line.strip()]
    if not projects:
        parser.error("no project given")
    for project in projects:
        if not project.is_dir():
            parser.error(f"not a directory: {project}")

    validation = _import_validation(args.verbose)
    if not args.jsonl and len(projects) == 1:
        rows, ok = _run(validation, projects[0].resolve(), args.raw, args.timeout, True)
        text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
        sys.stdout.write(text)
        if args.output is not None:
            args.output.write_text(text, encoding="utf-8")
        return 0 if ok else 2

    out = args.output.open("w", encoding="utf-8") if args.output is not None else None
    try:
        for project in projects:
            started = time.monotonic()
            rows, ok = _run(validation, project.resolve(), args.raw, args.timeout, args.verbose)
            line = json.dumps(
                {
                    "project": str(project),
                    "ok": ok,
                    "seconds": round(time.monotonic() - started, 3),
                    "findings": rows,
                },
                ensure_ascii=False,
            )
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
            if out is not None:
                out.write(line + "\n")
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
