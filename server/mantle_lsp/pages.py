"""Where the diagnostic code pages are (``docs/diagnostics/<code>.md``): package data,
below both ``cli/`` (``explain``, SARIF, ``cli/code_docs.py`` reads them) and ``lsp/``
(a diagnostic's code links to its page).

The pages ship inside the package as ``mantle_lsp.code_docs`` (mapped from
``docs/diagnostics`` in ``pyproject.toml``); in a source checkout without an install of
that mapping they are read from the ``docs/diagnostics`` folder next to ``server/``.
These are the package's own files, never a project's.
"""

from __future__ import annotations

from pathlib import Path


def pages_dir() -> Path | None:
    """The folder holding the pages: the installed data package (``mantle_lsp/code_docs``),
    else ``docs/diagnostics`` of the source tree."""
    here = Path(__file__).resolve()
    for d in (here.parent / "code_docs", here.parents[2] / "docs" / "diagnostics"):
        if d.is_dir():
            return d
    return None


def page_path(code: str) -> Path | None:
    """The page of ``code``, or None when it has none."""
    d = pages_dir()
    if d is None or "/" in code or "\\" in code:
        return None
    path = d / f"{code}.md"
    return path if path.is_file() else None


def page_codes() -> list[str]:
    """Every code that has a page, sorted."""
    d = pages_dir()
    return sorted(p.name[:-3] for p in d.glob("*.md")) if d else []


def load_page(code: str) -> str | None:
    """The Markdown page of ``code``, or None when it has none."""
    path = page_path(code)
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None
