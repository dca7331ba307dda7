"""Baselines: ``check --write-baseline FILE`` records today's findings, ``check
--baseline FILE`` reports only the others, says which recorded findings are gone, and
``--update-baseline`` drops those from the file.

The file (JSON, documented in docs/cli.md)::

    {
      "version": 2,
      "tool": "mantle-lsp",
      "findings": [
        {"path": "skills/card/skill.md", "code": "…", "fingerprint": "0123456789abcdef",
         "count": 1, "message": "…"}
      ]
    }

``path`` is relative to the folder of the baseline file (``/``-separated), so the file
works from any working directory and in any checkout. An entry absorbs up to ``count``
findings with the same path, code and fingerprint (cli/fingerprint.py); ``message`` is
for the people reading the file only. Version 1 files hold the first form of the
fingerprint (it also hashed the message): they are still read, matched as before, and
``--update-baseline`` writes them again in the current form.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import atomic
from ..model.source import read_limited
from .output import Finding

VERSION = 2
READS = (1, 2)  # the versions this mantle-lsp reads
MAX_BYTES = 64 * 1024 * 1024  # ~250,000 entries; a larger file is refused unread

Key = tuple[str, str, str]  # path relative to the baseline's folder, code, fingerprint


class BaselineError(Exception):
    """A baseline file that cannot be read (the message says why)."""


@dataclasses.dataclass
class Baseline:
    """A baseline file as read: its entries (counted) and their messages."""

    path: Path
    version: int
    entries: Counter[Key]
    messages: dict[Key, str] = dataclasses.field(default_factory=dict)

    @property
    def base(self) -> Path:
        return self.path.parent


@dataclasses.dataclass
class Match:
    """The findings of a run against a baseline."""

    new: list[Finding]  # not absorbed: reported
    absorbed: int
    matched: dict[Key, list[Finding]]  # the findings each entry absorbed
    left: Counter[Key]  # what each entry did not absorb (its findings are gone)


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def key(f: Finding, base: Path, version: int = VERSION) -> Key:
    fp = f.fingerprint if version >= 2 else f.fingerprint_v1
    return (_rel(f.diag.path, base), f.row.code, fp)


def _dump(path: Path, counts: Counter[Key], message: dict[Key, str], version: int) -> None:
    entries = [
        {"path": p, "code": c, "fingerprint": fp, "count": n, "message": message.get(k, "")}
        for k, n in sorted(counts.items())
        if n > 0
        for p, c, fp in (k,)
    ]
    data = {"version": version, "tool": "mantle-lsp", "findings": entries}
    atomic.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write(path: Path, findings: Sequence[Finding]) -> None:
    base = path.resolve().parent
    counts: Counter[Key] = Counter()
    message: dict[Key, str] = {}
    for f in findings:
        k = key(f, base)
        counts[k] += 1
        message.setdefault(k, f.row.message)
    _dump(path, counts, message, VERSION)


def load(path: Path) -> Baseline:
    """The baseline file ``path``: only a regular file (a FIFO would block, a device never
    end) of at most MAX_BYTES. Raises :class:`BaselineError`."""
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
    if type(version) is not int or version not in READS:  # not `true` nor `1.0`
        raise BaselineError(
            f"{path}: baseline version {json.dumps(version)} is not supported "
            f"(this mantle-lsp reads versions {' and '.join(map(str, READS))}; write it "
            "again with --write-baseline)"
        )
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: `findings` must be a list")
    out: Counter[Key] = Counter()
    messages: dict[Key, str] = {}
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
        k = (e["path"], e["code"], e["fingerprint"])
        out[k] += count
        if isinstance(e.get("message"), str):
            messages.setdefault(k, e["message"])
    return Baseline(path, version, out, messages)


def match(findings: Sequence[Finding], baseline: Baseline) -> Match:
    """The findings the baseline does not absorb, and what it absorbed. N identical
    entries absorb N findings, in the order of the findings."""
    left = Counter(baseline.entries)
    new: list[Finding] = []
    matched: dict[Key, list[Finding]] = {}
    for f in findings:
        k = key(f, baseline.base, baseline.version)
        if left[k] > 0:
            left[k] -= 1
            matched.setdefault(k, []).append(f)
        else:
            new.append(f)
    left = +left  # the entries (counts) nothing matched
    return Match(new, len(findings) - len(new), matched, left)


def new_findings(findings: Sequence[Finding], baseline: Baseline) -> tuple[list[Finding], int]:
    """The findings the baseline does not absorb, and how many it absorbed."""
    m = match(findings, baseline)
    return m.new, m.absorbed


# whether this run would have reported a finding of (file, code): the file was checked
# and the settings let the code through there
Scope = Callable[[Path, str], bool]


def fixed(m: Match, baseline: Baseline, in_scope: Scope) -> Counter[Key]:
    """The recorded findings that are gone: what entries did not absorb, for the files
    and codes this run checked (a run over some files, or with some codes left out, says
    nothing of the others)."""
    return Counter({k: n for k, n in m.left.items() if in_scope(baseline.base / k[0], k[1])})


@dataclasses.dataclass
class Update:
    dropped: int  # recorded findings dropped (fixed)
    version: int  # the version written
    kept_old: int  # entries left in the old form (not checked by this run)


def update(baseline: Baseline, m: Match, gone: Counter[Key]) -> Update:
    """Write the baseline again without the findings that are gone, never adding one.
    A version 1 file is written in the current form when every entry it keeps was
    matched by this run (a finding gives the new fingerprint); otherwise it stays
    version 1 (entries of files this run did not check cannot be converted)."""
    keep = Counter(baseline.entries)
    keep.subtract(gone)
    keep = +keep
    dropped = sum(gone.values())
    if not dropped and baseline.version == VERSION:
        return Update(0, VERSION, 0)  # nothing to change: the file is left as it is
    unchecked = [k for k in keep if k not in m.matched]
    if baseline.version >= VERSION or not unchecked:
        counts: Counter[Key] = Counter()
        message: dict[Key, str] = {}
        for k, n in keep.items():
            found = m.matched.get(k, [])
            if baseline.version < VERSION:  # each absorbed finding, in the new form
                for f in found[:n]:
                    nk = key(f, baseline.base)
                    counts[nk] += 1
                    message.setdefault(nk, f.row.message)
            else:
                counts[k] += n
                message[k] = found[0].row.message if found else baseline.messages.get(k, "")
        _dump(baseline.path, counts, message, VERSION)
        return Update(dropped, VERSION, 0)
    _dump(baseline.path, keep, baseline.messages, baseline.version)
    return Update(dropped, baseline.version, len(unchecked))
