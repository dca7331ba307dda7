"""Fingerprints of findings that survive unrelated edits (baselines, SARIF, GitLab).

A finding's fingerprint hashes its code and the source text of its range (whitespace
runs collapsed to one space; the whole line for an empty range). Neither its line number
(lines added above a finding keep its fingerprint; the file is recorded next to it by the
baseline and by SARIF's location) nor its message (a message reworded in a new version
keeps it) is part of it.

The first form (``v1``, baselines of version 1 and SARIF's ``mantleFingerprint/v1``) also
hashed the message, every number in it replaced by ``0``: :func:`fingerprint_v1` keeps
computing it, so that those baselines match as they did and code scanning keeps its
alerts.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Hashable, Iterable

from ..syntax.text import TextRange

_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")


def finding_text(text: str | None, rng: TextRange) -> str:
    """The normalized source text a finding is about."""
    if text is None:
        return ""
    start, end = max(rng.start, 0), min(rng.end, len(text))
    if end <= start:  # an empty range: its line
        start = text.rfind("\n", 0, start) + 1
        nl = text.find("\n", start)
        end = len(text) if nl < 0 else nl
    return _SPACES.sub(" ", text[start:end]).strip()


def fingerprint(code: str, text: str | None, rng: TextRange) -> str:
    """16 hex digits, stable across unrelated edits of the file and across rewordings of
    the message."""
    data = "\0".join(("v2", code, finding_text(text, rng)))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprint_v1(code: str, message: str, text: str | None, rng: TextRange) -> str:
    """The first form: 16 hex digits over the code, the text and the message (numbers
    replaced by 0)."""
    msg = _NUMBER.sub("0", _SPACES.sub(" ", message)).strip()
    data = "\0".join(("v1", code, finding_text(text, rng), msg))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def occurrences(keys: Iterable[Hashable]) -> list[int]:
    """For each key, how many times it was seen before (0, 1, …), in order."""
    seen: Counter[Hashable] = Counter()
    out = []
    for k in keys:
        out.append(seen[k])
        seen[k] += 1
    return out
