"""Typed values of ``agent.yml`` and ``integrations.yml``: the small checks the section
tables (:mod:`.config_tables`) name for each key, and the wording helpers of their messages.

The engine reads these files with lax type coercion: a quoted number is a number, `1` is a
boolean, but nothing becomes a string that was not written as one. A check takes a node and
returns ``None`` when the value fits, else what the value must be ("a string", "true or
false", …). The underscore names are the vocabulary of the config parsers, not an API for
other layers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from .errors import SyntaxIssue, closest
from .text import TextRange
from .yaml_tree import YMap, YNode, YScalar, YSeq, describe


def _err(
    issues: list[SyntaxIssue],
    code: str,
    msg: str,
    rng: TextRange,
    sev: str = "error",
    data: dict[str, Any] | None = None,
) -> None:
    issues.append(SyntaxIssue(code, msg, rng, sev, data))  # type: ignore[arg-type]


Check = Callable[[YNode], "str | None"]  # None when the value fits, else what it must be


_BOOL_WORDS = frozenset({"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"})


_ENV_RE = re.compile(r"\$\{[^}]+\}")


def _is_null(node: YNode | None) -> bool:
    return isinstance(node, YScalar) and node.value is None


def _number(node: YNode) -> float | None:
    if not isinstance(node, YScalar):
        return None
    v = _value12(node)
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def _whole(node: YNode) -> int | None:
    n = _number(node)
    if n is None or not math.isfinite(n) or not n.is_integer():
        return None
    v12 = _value12(node) if isinstance(node, YScalar) else None
    if isinstance(v12, str):
        try:
            int(v12.strip())
        except ValueError:
            return None
    return int(n)


def _value12(node: YScalar) -> object:
    """The scalar's value as the engine reads agent.yml and integrations.yml (YAML 1.2):
    a plain `yes`, `no`, `on`, `off`, `y` or `n` is a string there, not a boolean."""
    v = node.value
    if isinstance(v, bool) and node.style is None:
        raw = node.raw.strip()
        if raw.lower() not in ("true", "false"):
            return raw
    return v


def _str(node: YNode) -> str | None:
    ok = isinstance(node, YScalar) and isinstance(_value12(node), str)
    return None if ok else "a string"


def _opt_str(node: YNode) -> str | None:
    return None if _is_null(node) else _str(node)


def _bool(node: YNode) -> str | None:
    if isinstance(node, YScalar):
        v = node.value
        if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
            return None
        if isinstance(v, str) and v.strip().lower() in _BOOL_WORDS:
            return None
    return "true or false"


def _opt_bool(node: YNode) -> str | None:
    return None if _is_null(node) else _bool(node)


def _strict_bool(node: YNode) -> str | None:
    ok = isinstance(node, YScalar) and isinstance(node.value, bool)
    return None if ok else "true or false (unquoted)"


def _int_min(low: int | None, nullable: bool = False, high: int | None = None) -> Check:
    """A whole number (a numeric string counts) in [low, high]."""
    if low is None:
        what = "a whole number"
    elif low == 1:
        what = "a whole number greater than 0"
    else:
        what = f"a whole number of at least {low}"
    if high is not None:
        what = f"a whole number from {low if low is not None else 0} to {high}"

    def check(node: YNode) -> str | None:
        if nullable and _is_null(node):
            return None
        n = _whole(node)
        if n is None or (low is not None and n < low) or (high is not None and n > high):
            return what
        return None

    return check


def _opt(check: Check) -> Check:
    """``check``, or null."""

    def wrapped(node: YNode) -> str | None:
        return None if _is_null(node) else check(node)

    return wrapped


def _positive(nullable: bool = False) -> Check:
    def check(node: YNode) -> str | None:
        if nullable and _is_null(node):
            return None
        n = _number(node)
        return None if n is not None and math.isfinite(n) and n > 0 else "a number greater than 0"

    return check


def _found(node: YNode) -> str:
    """What a value is, for a message: short scalars are quoted, others described."""
    if isinstance(node, YScalar) and node.value == "":
        return "an empty string"
    if isinstance(node, YScalar) and node.value is not None:
        raw = node.raw.strip()
        if raw and "\n" not in raw and "`" not in raw and len(raw) <= 40:
            return f"`{raw}`"
    return describe(node)


def _suggest(name: str, candidates: list[str]) -> str:
    m = closest(name, candidates)
    return f"; did you mean `{m}`?" if m is not None else ""


def _meant(name: str, candidates: list[str]) -> dict[str, Any] | None:
    """The fix data of :func:`_suggest`'s did-you-mean (the name written, the one meant)."""
    m = closest(name, candidates)
    return {"wrong": name, "meant": m} if m is not None else None


def _first_key_range(node: YMap) -> TextRange:
    for k, _ in node.items:
        return k.range
    return node.range


def _str_value(node: YNode | None) -> str | None:
    v = _value12(node) if isinstance(node, YScalar) else None
    return v if isinstance(v, str) else None


def _truthy(node: YNode | None) -> bool:
    """What Python's ``bool()`` says about the value (absent and null are false)."""
    if node is None:
        return False
    if isinstance(node, YScalar):
        return bool(_value12(node))
    return bool(node.items) if isinstance(node, (YMap, YSeq)) else True


def _is_placeholder(node: YNode | None) -> bool:
    v = _str_value(node)
    return v is not None and _ENV_RE.search(v) is not None


def _custom_path(type_name: str) -> bool:
    """`package.module.Class`: a component class the engine imports (we cannot check it)."""
    module, dot, cls = type_name.rpartition(".")
    return bool(dot and module and cls)


def _env_ok(check: Check) -> Check:
    """``check``, but a `${VAR}` string passes: the engine leaves typed placeholders for
    startup, when they are expanded."""

    def wrapped(node: YNode) -> str | None:
        return None if _is_placeholder(node) else check(node)

    return wrapped


def _scalar(node: YNode) -> str | None:
    return None if isinstance(node, YScalar) else "a number or a string"


def _non_empty_str(node: YNode) -> str | None:
    v = _str_value(node)
    return None if v else "a non-empty string"


def _number_check(node: YNode) -> str | None:
    return None if _number(node) is not None else "a number"


def _whole_check(node: YNode) -> str | None:
    return None if _whole(node) is not None else "a whole number"


def _str_or_whole(node: YNode) -> str | None:
    return None if _str(node) is None or _whole(node) is not None else "a string or a whole number"


def _map_check(node: YNode) -> str | None:
    return None if isinstance(node, YMap) else "a mapping"


def _str_seq(node: YNode) -> str | None:
    ok = isinstance(node, YSeq) and all(_str(i) is None for i in node.items)
    return None if ok else "a list of strings"


def _str_or_str_seq(node: YNode) -> str | None:
    return None if _str(node) is None or _str_seq(node) is None else "a string or a list of strings"


def _secret_location(node: YNode) -> bool:
    """`{source: secrets_manager.<name>, secret_key: <key>}`."""
    if not isinstance(node, YMap) or any(
        k.value not in ("source", "secret_key") for k, _ in node.pairs()
    ):
        return False
    parts = (_str_value(node.get("source")) or "").split(".")
    ok_source = len(parts) == 2 and parts[0] == "secrets_manager" and parts[1] != ""
    return ok_source and bool(_str_value(node.get("secret_key")))


def _str_or_secret(node: YNode) -> str | None:
    if _str(node) is None or _secret_location(node):
        return None
    return "a string or `{source: secrets_manager.vault, secret_key: …}`"


def _bool_true(node: YNode) -> bool:
    if not isinstance(node, YScalar):
        return False
    v = node.value
    if isinstance(v, str):
        return v.strip().lower() in ("1", "on", "t", "true", "y", "yes")
    return bool(v)


def _http_url(value: str) -> bool:
    from urllib.parse import urlparse

    try:
        u = urlparse(value)
    except ValueError:
        return False
    if u.scheme == "file":
        return bool(u.path)
    return u.scheme in ("http", "https", "ftp", "ftps") and bool(u.netloc)
