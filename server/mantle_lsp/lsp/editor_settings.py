"""The editor's ``mantle`` settings section, as ``workspace/configuration`` returns it
(or ``workspace/didChangeConfiguration`` carries it). Apart from ``base.py`` because the
first look (``early.py``) applies them before the protocol library is imported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    """The ``mantle`` configuration section."""

    engine_version: str = "auto"
    ignore: tuple[str, ...] = ()
    coverage_hints: bool = False  # `eval.coverageHints`: lenses on what no scenario asserts

    @classmethod
    def from_client(cls, value: Any) -> Settings:
        """Read the section as VS Code returns it (nested objects) or with dotted keys."""
        if not isinstance(value, dict):
            return cls()
        engine = value.get("engineVersion", "auto")
        diags = value.get("diagnostics")
        ignore: Any = diags.get("ignore") if isinstance(diags, dict) else None
        if ignore is None:
            ignore = value.get("diagnostics.ignore", ())
        if isinstance(ignore, str):
            ignore = ignore.split(",")
        codes = tuple(str(c).strip() for c in ignore or () if str(c).strip())
        ev = value.get("eval")
        hints = ev.get("coverageHints") if isinstance(ev, dict) else None
        if hints is None:
            hints = value.get("eval.coverageHints", False)
        return cls(str(engine) if engine else "auto", codes, hints is True)
