"""The engine-version profile of a project: which rasa-pro rules apply.

``3.21`` (the default) is rasa-pro 3.21.0; ``3.22`` (measured against 3.22.0.dev1) adds
the project-field attributes ``mutable`` and ``writable_by`` and their rules (``set_memory``
steps, tools and ``set:`` buttons of unlisted skills), the execute-only engine tool
``record_handoff`` (a reserved name; no ``parameters``) and the ``agent.language`` check
(ide/rules/profile.py, ide/rules/config.py). A project's profile is detected from a
``rasa-pro`` requirement in the project folder or its parents (requirements*.txt,
pyproject.toml, Pipfile, setup.cfg), and can be forced from the CLI or the editor.

What a profile enforces is a :class:`Profile` of named capabilities (``has_writable_by``,
``execute_only_tools``, …): rules and features ask those (through
``Semantics.profile``), never the version string, so a new profile is one entry here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .defaults import EXECUTE_ONLY_TOOLS
from .layout import DISK, Layout
from .source import read_start

PROFILES = ("3.21", "3.22")
DEFAULT_PROFILE = "3.21"


@dataclass(frozen=True)
class Profile:
    """What one engine version enforces, as capabilities the rules ask by name."""

    name: str  # "3.21", "3.22"
    # the project-field attributes it reads (`mutable`, `writable_by`); it refuses them on
    # skill fields and fails to load a skill whose memory.yml gives one the wrong type
    field_attributes: tuple[str, ...]
    # engine tools only an `execute_tool` step runs; their names are reserved
    execute_only_tools: tuple[str, ...]
    # it warns about an `agent.language` that is not an exact BCP 47 tag
    checks_agent_language: bool
    # it warns when a skill tool's bare `memory.set` names a field both the skill and the
    # project declare (the skill field is written)
    warns_shadowed_bare_set: bool

    @property
    def has_mutable(self) -> bool:
        """A project field with `mutable: true` may be overwritten (else its first value
        stays for the session)."""
        return "mutable" in self.field_attributes

    @property
    def has_writable_by(self) -> bool:
        """A project field's `writable_by` lists the only skills that may write it."""
        return "writable_by" in self.field_attributes


_CAPABILITIES = {
    "3.21": Profile("3.21", (), (), checks_agent_language=False, warns_shadowed_bare_set=False),
    "3.22": Profile(
        "3.22",
        ("mutable", "writable_by"),
        EXECUTE_ONLY_TOOLS,
        checks_agent_language=True,
        warns_shadowed_bare_set=True,
    ),
}


def profile_named(name: str) -> Profile:
    """The capabilities of profile ``name`` (the default profile's for an unknown name)."""
    return _CAPABILITIES.get(name) or _CAPABILITIES[DEFAULT_PROFILE]


_REQ = re.compile(r"rasa[-_]pro\s*(?:\[[^\]]*\])?[\s\"'=:<>~^!]*(\d+)\.(\d+)", re.I)
_VERSION = re.compile(r"\d+\.\d+(?:\.?[0-9A-Za-z]+)*")  # as written: 3.20.0.dev1, 3.22.0rc2
MAX_PIN_FILE_BYTES = 1024 * 1024
_FILES = ("requirements.txt", "requirements-dev.txt", "pyproject.toml", "Pipfile", "setup.cfg")


def profile_for(major: int, minor: int) -> str:
    return "3.22" if (major, minor) >= (3, 22) else "3.21"


@dataclass(frozen=True)
class Pin:
    """A ``rasa-pro`` requirement: where it is, the version as written, its profile."""

    file: Path
    line: int  # 0-based
    version: str  # "3.20.0.dev1", "3.21" (the first version the requirement names)
    profile: str

    @property
    def supported(self) -> bool:
        """The pinned minor version is one a profile is measured against."""
        return ".".join(self.version.split(".")[:2]) in PROFILES


def find_pin(root: Path, max_up: int = 3, fs: Layout = DISK) -> Pin | None:
    """The first ``rasa-pro`` pin found at or above ``root`` (the files as saved: what
    exists through the layout ``fs``, their start through the reader's ``read_start``)."""
    folder = root
    for _ in range(max_up + 1):
        names = sorted({*_FILES, *_requirements(folder, fs)})
        for name in names:
            path = folder / name
            text = read_start(path, MAX_PIN_FILE_BYTES) if fs.is_file(path) else None
            if text is None:
                continue
            m = _REQ.search(text)
            if m:
                v = _VERSION.match(text, m.start(1))
                version = v.group(0) if v else f"{m.group(1)}.{m.group(2)}"
                profile = profile_for(int(m.group(1)), int(m.group(2)))
                return Pin(folder / name, text.count("\n", 0, m.start()), version, profile)
        if fs.exists(folder / ".git") or folder.parent == folder:
            break
        folder = folder.parent
    return None


def detect_profile(root: Path, max_up: int = 3, fs: Layout = DISK) -> str | None:
    """The profile named by the first ``rasa-pro`` pin found at or above ``root``."""
    pin = find_pin(root, max_up, fs)
    return pin.profile if pin is not None else None


def explain_profile(
    root: Path, forced: str | None = None, forced_by: str = "", fs: Layout = DISK
) -> str:
    """Which rule profile applies to the project at ``root`` and why, in one line:
    ``rasa-pro 3.20.0.dev1 pinned in requirements.txt → 3.21 rules (3.20 not supported)``.
    ``forced`` is a profile the settings force (``forced_by`` says where: a configuration
    file's ``engine``, ``--engine``, the editor setting)."""
    if forced in PROFILES:
        return f"{forced} rules ({forced_by or 'forced by the settings'})"
    pin = find_pin(root, fs=fs)
    if pin is None:
        return (
            f"no rasa-pro pin in requirements*.txt, pyproject.toml, Pipfile or setup.cfg "
            f"→ {DEFAULT_PROFILE} rules (the default)"
        )
    try:
        shown = pin.file.relative_to(root).as_posix()
    except ValueError:
        shown = str(pin.file)
    line = f"rasa-pro {pin.version} pinned in {shown}:{pin.line + 1} → {pin.profile} rules"
    if not pin.supported:
        minor = ".".join(pin.version.split(".")[:2])
        line += f" ({minor} not supported)"
    return line


def _requirements(folder: Path, fs: Layout) -> list[str]:
    """The ``requirements*.txt`` files of ``folder`` (links to files included)."""
    try:
        entries = fs.listing(str(folder))
    except OSError:
        return []
    return [
        e.name
        for e in entries
        if e.name.startswith("requirements") and e.name.endswith(".txt") and e.is_file
    ]
