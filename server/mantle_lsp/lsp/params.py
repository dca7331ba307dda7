"""The params of our own requests (``mantle/*``, docs/lsp.md), checked.

pygls hands an untyped request's params over as it read them: a JSON object as a
namedtuple (``Object``), an array as a list, ``None`` when they were omitted (which
JSON-RPC allows; :class:`~.base.MantleProtocol` fills that in). These helpers read a field
and check its type; a wrong shape raises :class:`InvalidParams`, which the request guard
(``ServerBase.request``) answers with -32602 Invalid Params and the reason.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "InvalidParams",
    "field",
    "integer",
    "is_object",
    "object_params",
    "required_string",
    "string",
]


class InvalidParams(Exception):
    """Params of the wrong shape; the message says what the request takes."""


def is_object(value: Any) -> bool:
    """A JSON object as pygls gives it (a namedtuple), or a dict."""
    return isinstance(value, dict) or (isinstance(value, tuple) and hasattr(value, "_fields"))


def field(params: Any, *path: str) -> Any:
    """The value at ``path`` in ``params`` (None when a step is missing or no object)."""
    for name in path:
        if params is None:
            return None
        if isinstance(params, dict):
            params = params.get(name)
        elif is_object(params):
            params = getattr(params, name, None)
        else:
            return None
    return params


def object_params(method: str, params: Any, takes: str, optional: bool = False) -> Any:
    """``params``, which must be an object (or, with ``optional``, absent or null)."""
    if params is None and optional:
        return None
    if not is_object(params):
        raise InvalidParams(f"{method} takes {takes}")
    return params


def string(method: str, params: Any, *path: str) -> str | None:
    """The string at ``path``; None when it is absent (or null)."""
    value = field(params, *path)
    if value is not None and not isinstance(value, str):
        raise InvalidParams(f"{method}: `{'.'.join(path)}` must be a string when given")
    return value


def required_string(method: str, params: Any, *path: str) -> str:
    """The string at ``path``, which must be there."""
    value = field(params, *path)
    if not isinstance(value, str):
        raise InvalidParams(f"{method}: `{'.'.join(path)}` must be a string")
    return value


def integer(method: str, params: Any, *path: str) -> int:
    """The integer (not a boolean, not negative) at ``path``."""
    value = field(params, *path)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidParams(f"{method}: `{'.'.join(path)}` must be an integer ≥ 0")
    return value
