"""The engine-version profile of a project: which rasa-pro rules apply.

``3.21`` (the default) is rasa-pro 3.21.0; ``3.22`` (measured against 3.22.0.dev1) adds
the project-field attributes ``mutable`` and ``writable_by`` and their rules (``set_memory``
steps, tools and ``set:`` buttons of unlisted skills), the execute-only engine tool
``record_handoff`` (a reserved name; no ``parameters``) and the ``agent.language`` check
(ide/rules/profile.py, ide/rules/config.py). A project's profile is detected from a
``rasa-pro`` requirement in the project folder or its parents (requirements*.txt,
pyproject.toml, Pipfile, setup.cfg), and can be forced from the CLI or the editor.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

PROFILES = ("3.21", "3.22")
DEFAULT_PROFILE = "3.21"

_REQ = re.compile(r"rasa[-_]pro\s*(?:\[[^\]]*\])?[\s\"'=:<>~^!]*(\d+)\.(\d+)", re.I)
MAX_PIN_FILE_BYTES = 1024 * 1024
_FILES = ("requirements.txt", "requirements-dev.txt", "pyproject.toml", "Pipfile", "setup.cfg")


def profile_for(major: int, minor: int) -> str:
    return "3.22" if (major, minor) >= (3, 22) else "3.21"


def detect_profile(root: Path, max_up: int = 3) -> str | None:
    """The profile named by the first ``rasa-pro`` pin found at or above ``root``."""
    folder = root
    for _ in range(max_up + 1):
        names = sorted({*_FILES, *(p.name for p in _glob_requirements(folder))})
        for name in names:
            text = _read_small(folder / name)
            if text is None:
                continue
            m = _REQ.search(text)
            if m:
                return profile_for(int(m.group(1)), int(m.group(2)))
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
    return None


def _read_small(path: Path) -> str | None:
    """The start of a regular file (None for anything else): a FIFO or a device named
    like a requirements file must not block or exhaust memory."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as f:
            return f.read(MAX_PIN_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _glob_requirements(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.glob("requirements*.txt") if p.is_file()]
    except OSError:
        return []
