"""Baselines: ``check --write-baseline FILE`` records today's findings, ``check
--baseline FILE`` reports only the others.

The file (JSON, documented in docs/cli.md)::

    {
      "version": 1,
      "tool": "mantle-lsp",
      "findings": [
        {"path": "skills/card/skill.md", "code": "…", "fingerprint": "0123456789abcdef",
         "count": 1, "message": "…"}
      ]
    }

``path`` is relative to the folder of the baseline file (``/``-separated), so the file
works from any working directory and in any checkout. An entry absorbs up to ``count``
findings with the same path, code and fingerprint (cli/fingerprint.py); ``message`` is
for the people reading the file only.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .. import atomic
from ..model.source import read_limited
from .output import Finding

VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # ~250,000 entries; a larger file is refused unread

Key = tuple[str, str, str]  # path relative to the baseline's folder, code, fingerprint


class BaselineError(Exception):
    """A baseline file that cannot be read (the message says why)."""


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def key(f: Finding, base: Path) -> Key:
    return (_rel(f.diag.path, base), f.row.code, f.fingerprint)


def write(path: Path, findings: Sequence[Finding]) -> None:
    base = path.resolve().parent
    counts: Counter[Key] = Counter()
    message: dict[Key, str] = {}
    for f in findings:
        k = key(f, base)
        counts[k] += 1
        message.setdefault(k, f.row.message)
    entries = [
        {"path": p, "code": c, "fingerprint": fp, "count": n, "message": message[(p, c, fp)]}
        for (p, c, fp), n in sorted(counts.items())
    ]
    data = {"version": VERSION, "tool": "mantle-lsp", "findings": entries}
    atomic.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def load(path: Path) -> Counter[Key]:
    """The entries of the baseline file ``path``: only a regular file (a FIFO would block,
    a device never end) of at most MAX_BYTES. Raises :class:`BaselineError`."""
    try:
        raw = read_limited(path, MAX_BYTES)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise BaselineError(f"{path}: cannot read the baseline ({why})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{path}: not a baseline file (invalid JSON: {exc})") from None
    except RecursionError:
        raise BaselineError(f"{path}: not a baseline file (nested too deeply)") from None
    if not isinstance(data, dict) or data.get("tool") != "mantle-lsp":
        raise BaselineError(f"{path}: not a mantle-lsp baseline file")
    version = data.get("version")
    if type(version) is not int or version != VERSION:  # not `true` nor `1.0`
        raise BaselineError(
            f"{path}: baseline version {json.dumps(version)} is not supported "
            f"(this mantle-lsp reads version {VERSION}; write it again with --write-baseline)"
        )
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: `findings` must be a list")
    out: Counter[Key] = Counter()
    for i, e in enumerate(entries):
        ok = isinstance(e, dict) and all(
            isinstance(e.get(k), str) for k in ("path", "code", "fingerprint")
        )
        count = e.get("count", 1) if isinstance(e, dict) else None
        if not ok or not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise BaselineError(
                f"{path}: entry {i + 1} needs string `path`, `code`, `fingerprint` and a "
                "positive `count`"
            )
        out[(e["path"], e["code"], e["fingerprint"])] += count
    return out


def new_findings(
    findings: Sequence[Finding], baseline: Counter[Key], base: Path
) -> tuple[list[Finding], int]:
    """The findings the baseline does not absorb, and how many it absorbed. N identical
    entries absorb N findings, in the order of the findings."""
    left = Counter(baseline)
    out = []
    for f in findings:
        k = key(f, base)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(f)
    return out, len(findings) - len(out)
