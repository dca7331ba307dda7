"""``capabilities.json``: the ``initialize`` answer ``serve`` sends before it imports the
server (``handshake.py``), computed by the server itself.

    python -m mantle_lsp.lsp.capabilities --write   # make capabilities
    python -m mantle_lsp.lsp.capabilities --check   # exit 1 when out of date

It holds the server's name and version, the capabilities for a client that turns no
:data:`~.handshake.SWITCHES` on, and what each switch changes in them (a patch
:func:`~.handshake.merge` lays over them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp

from .app import create_server
from .handshake import CAPABILITIES, SWITCHES


def pygls_answer(client_capabilities: dict[str, Any]) -> dict[str, Any]:
    """What the server itself answers to an ``initialize`` with these client
    capabilities (JSON), computed by pygls on a fresh server, without any I/O."""
    server = create_server()
    proto = server.protocol
    params = proto._converter.structure(
        {"processId": None, "rootUri": None, "capabilities": client_capabilities},
        lsp.InitializeParams,
    )
    steps = proto.lsp_initialize(params)
    handler, args, kwargs = next(steps)
    handler(*args, **(kwargs or {}))
    try:
        steps.send(None)
    except StopIteration as stop:
        result = stop.value
    else:  # pragma: no cover - pygls' initialize yields once
        raise RuntimeError("pygls' initialize did not finish")
    answer: dict[str, Any] = json.loads(json.dumps(result, default=proto._serialize_message))
    return answer


def client_for(names: Sequence[str]) -> dict[str, Any]:
    """The least client capabilities that turn on the switches ``names``."""
    caps: dict[str, Any] = {}
    for name in names:
        path, _ = SWITCHES[name]
        node = caps
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = {} if path[-1] == "diagnostic" else True
    return caps


def generate() -> dict[str, Any]:
    """The content of ``capabilities.json``, computed by pygls: the capabilities for a
    client that turns no switch on, and what each switch changes in them."""
    first = pygls_answer({})
    base = first["capabilities"]
    return {
        "serverInfo": first["serverInfo"],  # its version tells a stale file
        "base": base,
        "switches": {
            name: {
                "path": ".".join(path),
                "on": when,
                "patch": diff(base, pygls_answer(client_for([name]))["capabilities"]),
            }
            for name, (path, when) in SWITCHES.items()
        },
    }


def diff(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The patch that :func:`merge` lays over ``base`` to make ``other``."""
    if any(key not in other for key in base):
        raise ValueError(f"a client capability removes {sorted(set(base) - set(other))}")
    out: dict[str, Any] = {}
    for key, value in other.items():
        old = base.get(key)
        if old == value and key in base:
            continue
        out[key] = diff(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    text = render(generate())
    if args == ["--write"]:
        CAPABILITIES.write_text(text, encoding="utf-8")
        print(f"wrote {CAPABILITIES}")
        return 0
    if args == ["--check"]:
        current = CAPABILITIES.read_text(encoding="utf-8") if CAPABILITIES.exists() else ""
        if current != text:
            print(f"{CAPABILITIES} is out of date: run make capabilities", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
