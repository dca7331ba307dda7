"""Keeps, per diagnostic code, the passing tests that made it fire and those that showed it
silent (``support.Coverage``). ``tests/test_codes.py`` runs last and, when the whole suite
runs, checks that every registered code has both.

``MANTLE_LSP_CODES_REPORT=<file> pytest …`` writes what was kept (code -> test ids) as JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from pathlib import Path

import pytest

# Every test runs the rules strictly: a rule that emits a code it does not declare fails
# (ide/rules/base.py). Set before mantle_lsp is imported; server subprocesses inherit it.
os.environ.setdefault("MANTLE_LSP_STRICT_RULES", "1")

from support import Coverage

TESTS = Path(__file__).resolve().parent
_collected: set[Path] = set()
_deselected: list[bool] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "silent(*codes): every diagnostic check in the test asserts these codes are not "
        "reported (the fixture exercises them without mistakes); tests/test_codes.py counts it",
    )


def pytest_collectreport(report: pytest.CollectReport) -> None:
    path = Path(str(report.fspath)) if report.nodeid.endswith(".py") else None
    if path is not None:
        _collected.add(path.resolve())


def pytest_deselected(items: list[pytest.Item]) -> None:
    _deselected.append(bool(items))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # test_codes.py reads what the other tests showed: it runs last
    last = [i for i in items if i.path.name == "test_codes.py"]
    items[:] = [i for i in items if i.path.name != "test_codes.py"] + last


def pytest_collection_finish(session: pytest.Session) -> None:
    every = {p.resolve() for p in TESTS.glob("test_*.py")}
    Coverage.whole_suite = every <= _collected and not any(_deselected)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    Coverage.fired, Coverage.silent = set(), set()
    mark = item.get_closest_marker("silent")
    Coverage.marked_silent = tuple(mark.args) if mark else ()
    yield
    Coverage.marked_silent = ()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, None, None]:
    outcome = yield
    if call.when != "call":
        return
    report = outcome.get_result()
    if report.passed and item.get_closest_marker("silent") and not Coverage.silent:
        report.outcome = "failed"
        report.longrepr = "@pytest.mark.silent, but the test ran no diagnostic check"
    if report.passed:
        for kind, codes in (("fired", Coverage.fired), ("silent", Coverage.silent)):
            for code in codes:
                Coverage.KEPT[kind].setdefault(code, set()).add(item.nodeid)
    Coverage.fired, Coverage.silent = set(), set()


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("MANTLE_LSP_CODES_REPORT")
    if target:
        kept = {k: {c: sorted(t) for c, t in v.items()} for k, v in Coverage.KEPT.items()}
        Path(target).write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
