"""What the server puts on the wire without the protocol library: file URIs and paths,
and diagnostics as the JSON pygls would send for them.

Importing lsprotocol takes ~0.3 s (its ~1,000 attrs classes are made at import time):
the first look at the documents opened with the workspace (``early.py``) is published
before it, so what it needs to speak is here, in plain JSON. ``convert.py`` re-exports
the path functions (one implementation) and builds its lsprotocol diagnostics so that
they serialize to exactly :func:`diagnostic_json` (a test compares both on every
diagnostic of the example projects).

Nothing here imports lsprotocol (nor pygls beyond ``pygls.uris``, which imports only the
standard library), nor, but for type checking, the analysis.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls import uris

from ..pages import page_path

if TYPE_CHECKING:
    from ..ide.diagnostics import Diagnostic
    from ..syntax.text import LineIndex, TextRange

SOURCE = "mantle-lsp"

# DiagnosticSeverity
SEVERITY: dict[str, int] = {"error": 1, "warning": 2, "information": 3, "hint": 4}

RelatedTarget = Callable[[Path], "tuple[str, LineIndex] | None"]
"""The URI and line index of a file a diagnostic's related information points into, or
None when that file is not loaded (the entry is left out)."""


# -- URIs and paths ---------------------------------------------------------------------


class InvalidUri(ValueError):
    """A URI no file can have (a NUL character): the request is answered with an error."""


def _check_uri(uri: str) -> None:
    if "\0" in uri or "%00" in uri:
        raise InvalidUri(f"the URI {uri[:200]!r} contains a NUL character: no file has it")


def uri_to_path(uri: str) -> Path | None:
    """The resolved file-system path of a ``file:`` URI; None for other schemes."""
    _check_uri(uri)
    fs = uris.to_fs_path(uri)
    if fs is None or not uri.startswith("file:"):
        return None
    try:
        return Path(fs).resolve()
    except (OSError, RuntimeError):
        return Path(fs)


def uri_to_raw_path(uri: str) -> Path | None:
    """The absolute path of a ``file:`` URI as written: ``..`` folded, symbolic links
    not followed (None for other schemes)."""
    _check_uri(uri)
    fs = uris.to_fs_path(uri)
    if fs is None or not uri.startswith("file:"):
        return None
    try:
        return Path(os.path.abspath(fs))
    except (OSError, ValueError):
        return None


def path_to_uri(path: Path) -> str:
    uri = uris.from_fs_path(str(path))
    return uri if uri is not None else path.as_uri()


# -- diagnostics ------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def code_page_uri(code: str) -> str | None:
    """The ``file://`` URI of the page explaining ``code`` (the packaged
    ``docs/diagnostics/<code>.md``), or None when it has none: the editor shows the code
    of a diagnostic as a link to it."""
    page = page_path(code)
    return page.as_uri() if page is not None else None


def range_json(index: LineIndex, rng: TextRange) -> dict[str, Any]:
    sl, sc = index.utf16_position(rng.start)
    el, ec = index.utf16_position(rng.end)
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def diagnostic_data(d: Diagnostic) -> dict[str, Any] | None:
    """A diagnostic's ``data``: its fix data, and the engine's code when it differs."""
    data = dict(d.data) if d.data else {}
    if d.engine_code:
        data["engine_code"] = d.engine_code
    return data or None


def diagnostic_json(
    d: Diagnostic, index: LineIndex, related: RelatedTarget | None = None
) -> dict[str, Any]:
    """An LSP ``Diagnostic`` as JSON (see ``convert.to_diagnostic``)."""
    out: dict[str, Any] = {
        "range": range_json(index, d.range),
        "message": d.message,
        "severity": SEVERITY.get(d.severity, 2),
        "code": d.code,
    }
    page = code_page_uri(d.code)
    if page:
        out["codeDescription"] = {"href": page}
    out["source"] = SOURCE
    info = []
    for r in d.related:
        target = related(r.location.path) if related is not None else None
        if target is None:
            continue
        uri, idx = target
        info.append(
            {
                "location": {"uri": uri, "range": range_json(idx, r.location.range)},
                "message": r.message,
            }
        )
    if info:
        out["relatedInformation"] = info
    data = diagnostic_data(d)
    if data is not None:
        out["data"] = data
    return out


_Key = tuple[tuple[int, int, str, str, str, tuple[Any, ...]], ...]


def diagnostics_key(diags: Iterable[Diagnostic]) -> _Key:
    """What identifies a file's diagnostics (for "unchanged" and result ids)."""
    return tuple(
        (d.range.start, d.range.end, d.code, d.severity, d.message, d.related) for d in diags
    )


def result_id(diags: Iterable[Diagnostic]) -> str:
    """The result id of a pulled report of these diagnostics."""
    return hashlib.blake2b(repr(diagnostics_key(diags)).encode(), digest_size=8).hexdigest()
