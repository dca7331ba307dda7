"""Every registered diagnostic code has a passing test that makes it fire and one that
shows it silent on a fixture exercising what it checks.

What counts (``support.Coverage``, kept per test by ``tests/conftest.py``): firing, a
``check_diagnostics`` mark matched on its exact range, a parser test's exact
``issue_list`` / ``only`` result, or a test's own exact assertion declared with
``shown(fired=…)``; silent, ``check_clean(…, silent=[…])``,
``check_diagnostics(…, silent=[…])``, ``@pytest.mark.silent(…)``, ``shown(silent=…)`` and
the Fix of the code's page in docs/diagnostics (test_code_docs.py). To see who counts for
a code: ``MANTLE_LSP_CODES_REPORT=/tmp/codes.json .venv/bin/pytest tests``.
"""

from __future__ import annotations

import pytest

from mantle_lsp.ide.codes import REGISTRY
from support import Coverage


def test_every_registered_code_fires_in_a_test_and_stays_silent_in_another() -> None:
    if not Coverage.whole_suite:
        pytest.skip("reads what the other tests showed: run the whole suite (pytest tests)")
    unfired = sorted(set(REGISTRY) - set(Coverage.KEPT["fired"]))
    unsilent = sorted(set(REGISTRY) - set(Coverage.KEPT["silent"]))
    assert unfired == [], "no passing test makes these codes fire"
    assert unsilent == [], "no passing test shows these codes silent"
