"""What the editor's status shows (issue 17, "Honest status"): which rule profile applies
to each project and why, in `mantle/status` and the log; whether the initial index is done;
and no warning for a cancellation that arrives after its request was answered."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from mantle_lsp.lsp.app import create_server
from mantle_lsp.model.engine import explain_profile, find_pin
from test_lsp_support import Session, copy_telecom, lsp_session

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        (
            {"requirements.txt": "pytest\nrasa-pro==3.20.0.dev1\n"},
            "rasa-pro 3.20.0.dev1 pinned in requirements.txt:2 → 3.21 rules (3.20 not supported)",
        ),
        (
            {"requirements-dev.txt": "rasa_pro[full] >= 3.21.0\n"},
            "rasa-pro 3.21.0 pinned in requirements-dev.txt:1 → 3.21 rules",
        ),
        (
            {"pyproject.toml": '[project]\ndependencies = ["rasa-pro~=3.23.1"]\n'},
            "rasa-pro 3.23.1 pinned in pyproject.toml:2 → 3.22 rules (3.23 not supported)",
        ),
        (
            {"requirements.txt": "rasa-pro==3.22.0rc2\n"},
            "rasa-pro 3.22.0rc2 pinned in requirements.txt:1 → 3.22 rules",
        ),
        (
            {"README.md": "rasa-pro 3.22\n"},
            "no rasa-pro pin in requirements*.txt, pyproject.toml, Pipfile or setup.cfg "
            "→ 3.21 rules (the default)",
        ),
    ],
)
def test_the_profile_reason_names_the_pin(
    tmp_path: Path, files: dict[str, str], reason: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert explain_profile(tmp_path) == reason


def test_a_forced_profile_says_who_forced_it(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("rasa-pro==3.21.0\n")
    assert explain_profile(tmp_path, "3.22", "--engine") == "3.22 rules (--engine)"
    pin = find_pin(tmp_path)
    assert pin is not None and (pin.version, pin.profile, pin.supported) == ("3.21.0", "3.21", True)


async def status(s: Session) -> dict[str, Any]:
    result = await s.client.protocol.send_request_async("mantle/status", {})
    return dict(result if isinstance(result, dict) else result._asdict())


def _plain(v: Any) -> Any:
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if hasattr(v, "_asdict"):
        return {k: _plain(x) for k, x in v._asdict().items()}
    return v


async def test_status_and_log_say_which_profile_applies_and_why(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    (root / "requirements.txt").write_text("rasa-pro==3.20.0.dev1\n")
    async with lsp_session(root) as s:
        st = await status(s)
        assert st["indexed"] is True
        reason = (
            "rasa-pro 3.20.0.dev1 pinned in requirements.txt:1 → 3.21 rules (3.20 not supported)"
        )
        assert _plain(st["profiles"]) == [{"root": str(root), "engine": "3.21", "reason": reason}]
        assert f"rule profile of {root}: {reason}" in s.logs()


async def test_the_editor_setting_forcing_a_profile_is_named(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    async with lsp_session(root, configuration={"mantle": {"engineVersion": "3.22"}}) as s:
        st = await status(s)
        assert _plain(st["profiles"])[0]["engine"] == "3.22"
        assert _plain(st["profiles"])[0]["reason"] == (
            "3.22 rules (mantle.engineVersion in the editor settings)"
        )


def test_a_cancel_after_the_answer_is_not_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """VS Code cancels diagnostic pulls whose answer is already on its way: pygls warned
    for each ("Cancel notification for unknown message id"), shown as an error line."""
    server = create_server()
    with caplog.at_level(logging.DEBUG):
        server.protocol._handle_cancel_notification(42)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
