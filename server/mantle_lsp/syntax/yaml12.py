"""YAML 1.2 values for the node tree of :mod:`.yaml_tree`.

The agent's own files are read as YAML 1.1 (PyYAML), like the engine reads them. The
evaluation's files (``eval/conftest.yml``, ``eval/scenarios/*.yml``) are read by rasa-pro
with ruamel.yaml in YAML 1.2 mode (docs/language/eval.md#yaml-12): there ``yes``, ``on``
and ``off`` are strings, ``0777`` is the decimal 777, ``1:30`` is a string, and dates stay
strings. :func:`value12` gives a scalar's value as that reader builds it, from the text
the tree kept; the tree itself is shared with every other file kind.

The rules (checked against the reader on every scalar form in ``tests/test_eval_yml.py``):

* plain scalars only are resolved; a quoted or block scalar is a string;
* booleans: ``true``/``True``/``TRUE``, ``false``/``False``/``FALSE``;
* null: empty, ``~``, ``null``/``Null``/``NULL``;
* integers: decimal digits (leading zeros are decimal), ``0x…``, ``0o…``, ``0b…``, with an
  optional sign; underscores are dropped;
* floats: digits with a ``.`` and/or an exponent, a leading ``.`` only with an exponent
  that has a sign, ``.inf`` with an optional sign, ``.nan`` without one;
* everything else (timestamps included) is a string.

A number whose digits are only underscores after its base prefix (``0x_``) makes the
reader fail: :data:`UNREADABLE` stands for it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .yaml_tree import YMap, YNode, YScalar, YSeq

__all__ = ["UNREADABLE", "key12", "plain12", "to_python12", "value12"]


class _Unreadable:
    """A plain scalar the YAML 1.2 reader fails on (see the module docstring)."""

    def __repr__(self) -> str:
        return "UNREADABLE"


UNREADABLE: Any = _Unreadable()

_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
         "FALSE": False}  # fmt: skip
_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_FLOAT = re.compile(
    r"""[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |(?P<inf>[-+]?\.(?:inf|Inf|INF))
    |(?P<nan>\.(?:nan|NaN|NAN))""",
    re.X,
)
_INT = re.compile(
    r"""(?P<bin>[-+]?0b[01_]+)
    |(?P<oct>[-+]?0o[0-7_]+)
    |[-+]?[0-9_]+
    |(?P<hex>[-+]?0x[0-9a-fA-F_]+)""",
    re.X,
)
_FIRST = frozenset("-+0123456789.")


def plain12(text: str) -> Any:
    """The value of a plain scalar written ``text`` in YAML 1.2 (as rasa-pro reads it)."""
    if text in _NULL:
        return None
    found = _BOOL.get(text)
    if found is not None:
        return found
    if not text or text[0] not in _FIRST:
        return text
    m = _FLOAT.fullmatch(text)
    if m is not None:
        if m.group("inf"):
            return -math.inf if text[0] == "-" else math.inf
        if m.group("nan"):
            return math.nan
        try:
            return float(text.replace("_", ""))
        except ValueError:  # pragma: no cover - the pattern admits only numbers
            return text
    m = _INT.fullmatch(text)
    if m is None:
        return text
    digits = text.replace("_", "")
    sign = -1 if digits[0] == "-" else 1
    digits = digits.lstrip("+-")
    for group, base in (("bin", 2), ("oct", 8), ("hex", 16)):
        if m.group(group):
            if len(digits) <= 2:
                return UNREADABLE  # `0x_`: nothing after the prefix once `_` is dropped
            return sign * int(digits[2:], base)
    if not digits:
        return text  # `_`, `+_`: the pattern's digits were underscores only
    if len(digits) > 4000:
        return text  # beyond Python's limit on the digits of an int: keep the text
    return sign * int(digits)


def value12(node: YScalar) -> Any:
    """The value of ``node`` in YAML 1.2: plain scalars resolved by :func:`plain12`,
    quoted and block scalars as strings; an explicitly tagged scalar keeps the value the
    tree built."""
    if node.style is None:
        if node.tag in (_STR, _NULL_TAG, _BOOL_TAG, _INT_TAG, _FLOAT_TAG, _TS_TAG, _VALUE_TAG):
            return plain12(node.raw)
        return node.value
    if node.tag == _STR:
        return node.raw
    return node.value


def key12(node: YNode) -> Any:
    """A mapping key's value in YAML 1.2 (a collection key: None)."""
    return value12(node) if isinstance(node, YScalar) else None


def to_python12(node: YNode | None, budget: list[int] | None = None) -> Any:
    """``node`` as Python data, scalars in YAML 1.2 (at most 100,000 nodes; a shared
    node is converted each time it is met, a cycle becomes None)."""
    budget = budget if budget is not None else [100_000]
    return _to_python(node, budget, set())


def _to_python(node: YNode | None, budget: list[int], active: set[int]) -> Any:
    budget[0] -= 1
    if node is None or budget[0] < 0 or id(node) in active:
        return None
    if isinstance(node, YScalar):
        return value12(node)
    active.add(id(node))
    try:
        if isinstance(node, YSeq):
            return [_to_python(c, budget, active) for c in node.items]
        if isinstance(node, YMap):
            out: dict[Any, Any] = {}
            for k, v in node.items:
                key = key12(k)
                try:
                    out[key] = _to_python(v, budget, active)
                except TypeError:  # an unhashable key
                    continue
            return out
    finally:
        active.discard(id(node))
    return None


_STR = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_TS_TAG = "tag:yaml.org,2002:timestamp"
_VALUE_TAG = "tag:yaml.org,2002:value"
