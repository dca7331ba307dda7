#!/usr/bin/env python3
"""Run the reference Mantle validator (rasa-pro) on a project and print its findings.

Usage (with an interpreter that has ``rasa-pro`` installed, e.g. a throwaway venv)::

    /tmp/oracle-venv/bin/python scripts/oracle_findings.py examples/telecom
    /tmp/oracle-venv/bin/python scripts/oracle_findings.py examples/telecom-broken \
        -o examples/telecom-broken/oracle-findings.json

The project is copied to a temporary directory first, because the validator
imports every tool module (running its top-level code) and writes a generated
``agent.id`` back into ``agent.yml`` when none is set.

Output: a JSON list of ``{"code", "severity", "message"}`` objects sorted by code,
then message. Messages are normalised so that runs are comparable: the temporary
project path becomes ``<project>`` and Python object addresses (``0x7f...``) become
``0x?``. Pass ``--raw`` to keep the messages exactly as the validator produced them.

If the validator raises instead of returning findings, a single finding with the
code ``oracle.exception`` is printed and the exit status is 2.

This module imports ``rasa`` only inside :func:`main`, so linting or type-checking
the repository does not need rasa-pro.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".git")


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


def _normalise(message: str, copy_dir: Path) -> str:
    for variant in {str(copy_dir), str(copy_dir.resolve())}:
        message = message.replace(variant, "<project>")
    return _ADDRESS.sub("0x?", message)


def _run(project: Path, raw: bool) -> tuple[list[dict[str, Any]], bool]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with _stdout_to_stderr():
        # Imported here, by name, so the repository's own lint and type checks
        # never need rasa-pro installed.
        validation = importlib.import_module("rasa.mantle.validation")
    with tempfile.TemporaryDirectory(prefix="mantle-oracle-") as tmp:
        copy_dir = Path(tmp) / project.name
        shutil.copytree(project, copy_dir, ignore=_COPY_IGNORE)
        try:
            with _stdout_to_stderr():
                found = validation.collect_project_findings(copy_dir)
        except Exception as exc:  # the validator crashes on some broken inputs
            traceback.print_exc(file=sys.stderr)
            message = f"{type(exc).__name__}: {exc}"
            if not raw:
                message = _normalise(message, copy_dir)
            return [{"code": "oracle.exception", "severity": "error", "message": message}], False
        rows = []
        for finding in found:
            message = finding.message if raw else _normalise(finding.message, copy_dir)
            rows.append(
                {"code": finding.code, "severity": str(finding.severity), "message": message}
            )
    rows.sort(key=lambda row: (row["code"], row["message"], row["severity"]))
    return rows, True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path, help="Mantle project root (left untouched)")
    parser.add_argument("-o", "--output", type=Path, help="also write the JSON to this file")
    parser.add_argument("--raw", action="store_true", help="do not normalise messages")
    args = parser.parse_args(argv)

    project: Path = args.project
    if not project.is_dir():
        parser.error(f"not a directory: {project}")

    rows, ok = _run(project.resolve(), args.raw)
    text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    sys.stdout.write(text)
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
