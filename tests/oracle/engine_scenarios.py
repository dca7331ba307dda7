#!/usr/bin/env python3
"""The engine's side of the eval-file comparison (``make oracle``; docs/oracle.md).

Run with an interpreter that has rasa-pro installed::

    engine_scenarios.py ROOT [ROOT ...]      (or --from-file LIST)

For every project root it finds the eval files the way mantle-lsp does
(``eval/conftest.yml`` / ``.yaml`` and every ``*.yml`` / ``*.yaml`` below
``eval/scenarios/``), and runs on them what rasa-pro runs before and while it evaluates:

* each scenario: the engine's own ``load_scenario`` (YAML, schema with its extension
  rules, pydantic model); then ``safe_name`` on its slug (the file name's stem); then the
  assertion-key check ``run_scenarios`` makes for a Mantle engine (keys of the other
  engine, sequencing children included); then every assertion as the evaluation builds it
  (``Assertion.create_typed_assertion``, sequencing children normalised as the assertion
  engine does), which raises for entries that abort a run, and a ``text_matches`` pattern
  compiled as the run compiles it;
* the conftest: ``load_conftest``, then ``load_prompt_template`` for each prompt path.

Prints one JSON line per project::

    {"project": ROOT, "files": {REL: {"stage": STAGE, "message": TEXT}}, "error": null}

``STAGE`` is ``ok`` or the first stage that failed: ``load``, ``slug``, ``keys``,
``runtime`` (scenarios), ``conftest``, ``prompt`` (the conftest). Nothing is imported
from the projects and nothing is written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any

_EXTENSIONS = (".yml", ".yaml")
_MAX_FILES = 2000


def _eval_files(root: Path) -> tuple[list[Path], list[Path]]:
    """(conftest files, scenario files) of the project at ``root``, sorted."""
    conftests = [root / "eval" / f"conftest{ext}" for ext in _EXTENSIONS]
    conftests = [p for p in conftests if p.is_file()]
    scenarios: list[Path] = []
    folder = root / "eval" / "scenarios"
    if folder.is_dir():
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith(_EXTENSIONS) and not name.startswith("."):
                    scenarios.append(Path(dirpath) / name)
                    if len(scenarios) >= _MAX_FILES:
                        return conftests, scenarios
    return conftests, sorted(scenarios)


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _runtime_problem(assertions: list[Any]) -> str | None:
    """The first assertion that the evaluation cannot build (it aborts the run)."""
    from rasa.builder.copilot.mcp_server.tools.assertion_engine import (
        _normalize_sequencing_step,
    )
    from rasa.e2e_test.assertions import Assertion

    for index, item in enumerate(assertions):
        where = f"assertions[{index}]"
        try:
            if not isinstance(item, dict) or len(item) != 1:
                return f"{where}: not a single-key mapping"
            key, payload = next(iter(item.items()))
            if key == "sequencing":
                for j, step in enumerate(payload or []):
                    if not isinstance(step, dict) or len(step) != 1:
                        return f"{where}.sequencing[{j}]: not a single-key mapping"
                    step_type, step_payload = next(iter(step.items()))
                    if step_type in {"memory_was_not_set", "tools_within_one_turn"}:
                        return f"{where}.sequencing[{j}]: {step_type} not allowed"
                    normalized = _normalize_sequencing_step(step_type, step_payload)
                    if normalized is not None:
                        Assertion.create_typed_assertion(normalized)
                continue
            built = Assertion.create_typed_assertion(item)
            pattern = getattr(built, "text_matches", None)
            if pattern is not None:  # what the run does first with it (`bot_uttered`)
                re.compile(pattern)
        except Exception as exc:
            return f"{where}: {_first_line(exc)}"
    return None


def _scenario(path: Path) -> dict[str, str]:
    from rasa.builder.copilot.mcp_server.tools.artifact_writer import safe_name
    from rasa.builder.copilot.mcp_server.tools.scenario import load_scenario
    from rasa.e2e_test.assertions import assertion_keys_rejected_by_engine
    from rasa.shared.engine_version import MANTLE_ENGINE_VERSION

    try:
        scenario = load_scenario(path)
    except Exception as exc:
        return {"stage": "load", "message": _first_line(exc)}
    try:
        safe_name(scenario.slug)
    except ValueError as exc:
        return {"stage": "slug", "message": _first_line(exc)}
    try:
        rejected = assertion_keys_rejected_by_engine(
            MANTLE_ENGINE_VERSION, scenario.goals.assertions
        )
    except Exception as exc:
        return {"stage": "keys", "message": _first_line(exc)}
    if rejected:
        return {"stage": "keys", "message": f"rejected keys: {rejected}"}
    problem = _runtime_problem(scenario.goals.assertions)
    if problem is not None:
        return {"stage": "runtime", "message": problem}
    return {"stage": "ok", "message": ""}


def _conftest(root: Path) -> dict[str, str]:
    from rasa.builder.copilot.mcp_server.tools.eval_config import (
        load_conftest,
        load_prompt_template,
    )

    try:
        conftest = load_conftest(root)
    except Exception as exc:
        return {"stage": "conftest", "message": _first_line(exc)}
    for template in (
        conftest.simulation.simulated_user_prompt,
        conftest.evaluation.criteria_judge_prompt,
        conftest.evaluation.metrics_judge_prompt,
    ):
        if template:
            try:
                load_prompt_template(root, template)
            except Exception as exc:
                return {"stage": "prompt", "message": _first_line(exc)}
    return {"stage": "ok", "message": ""}


def _project(root: Path) -> dict[str, Any]:
    conftests, scenarios = _eval_files(root)
    files: dict[str, dict[str, str]] = {}
    if conftests:
        files[conftests[0].relative_to(root).as_posix()] = _conftest(root)
    for path in scenarios:
        files[path.relative_to(root).as_posix()] = _scenario(path)
    return files


@contextlib.contextmanager
def _stdout_to_stderr() -> Any:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("roots", type=Path, nargs="*")
    parser.add_argument("--from-file", type=Path)
    args = parser.parse_args(argv)
    roots = list(args.roots)
    if args.from_file is not None:
        roots += [Path(x) for x in args.from_file.read_text().splitlines() if x.strip()]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with _stdout_to_stderr():
        import structlog

        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL),
            cache_logger_on_first_use=False,
        )
        import rasa.builder.copilot.mcp_server.tools.scenario  # noqa: F401
    for root in roots:
        row: dict[str, Any] = {"project": str(root), "files": {}, "error": None}
        try:
            with _stdout_to_stderr():
                row["files"] = _project(root.resolve())
        except Exception:
            row["error"] = traceback.format_exc()[-2000:]
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
