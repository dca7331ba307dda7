"""A stand-in Cadenya API for ``mantle-lsp layers diff|push|pull``: the routes the official
SDK (``cadenya``) calls for memory layers, agents and variations, with the JSON shapes of
the SDK's own types and its state in memory. It runs on 127.0.0.1 (stdlib
``http.server``), in a thread for the tests or on its own::

    python tests/cadenya_standin.py [--port 8765] [--seed seed.json]

which prints the ``export`` lines that point ``mantle-lsp layers`` at it
(docs/memory-layers.md, "Trying it against a stand-in").

Faults a test can inject (each an attribute of :class:`Service`): ``fail`` (every answer an
error status), ``refuse_after_writes`` (403 after that many writes), ``cursor`` (the list
pagination never ends: ``"repeat"`` gives the same cursor again, ``"fresh"`` a new one
each time). State the real service may hold but the SDK cannot make — two entries with one
key, content with a NUL or a lone surrogate, CR line ends — is seeded with
:meth:`Service.add_entry`. Every request is counted in ``calls``, so "nothing to do" can
be checked as "no write".
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

KEY = "test-key"
WS = "ws_test"
PAGE = 2  # small pages, so the SDK's paging is exercised


def _meta(id_: str, name: str, external_id: str = "", labels: dict[str, str] | None = None) -> Any:
    return {
        "id": id_,
        "accountId": "acct_1",
        "workspaceId": WS,
        "name": name,
        "externalId": external_id,
        "labels": labels or {},
        "profileId": "prof_1",
        "createdAt": "2026-12-01T12:00:00Z",
    }


@dataclass
class Service:
    """The stand-in's state: layers (with their entries), agents and variations."""

    layers: dict[str, dict[str, Any]] = field(default_factory=dict)
    entries: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )  # layer -> id -> entry
    contents: dict[str, str] = field(default_factory=dict)  # entry id -> content
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    variations: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )  # agent -> id -> var
    calls: list[tuple[str, str]] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)  # the JSON body of every write
    fail: int | None = None  # answer every request with this status
    refuse_after_writes: int | None = None  # answer 403 to writes after this many
    cursor: str | None = None  # "repeat" | "fresh": a list whose pages never end
    page: int = PAGE
    next_id: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def new_id(self, prefix: str) -> str:
        self.next_id += 1
        return f"{prefix}_{self.next_id:04d}"

    @property
    def writes(self) -> list[tuple[str, str]]:
        return [c for c in self.calls if c[0] != "GET"]

    @property
    def gets(self) -> int:
        return sum(1 for c in self.calls if c[0] == "GET")

    def reset(self) -> None:
        """Forget every layer, agent and call (the faults stay as set)."""
        self.layers.clear()
        self.entries.clear()
        self.contents.clear()
        self.agents.clear()
        self.variations.clear()
        self.calls.clear()
        self.bodies.clear()

    # -- seeding ---------------------------------------------------------------------------

    def add_agent(self, external_id: str, variations: list[str]) -> str:
        aid = self.new_id("agt")
        self.agents[aid] = {
            "metadata": _meta(aid, external_id, external_id),
            "spec": {},
            "info": {"variationCount": len(variations)},
            "state": "STATE_PUBLISHED",
        }
        self.variations[aid] = {}
        for v in variations:
            vid = self.new_id("var")
            self.variations[aid][vid] = {
                "metadata": _meta(vid, v, v),
                "spec": {"memoryLayerAssignments": []},
                "info": {
                    "toolCount": 0,
                    "toolSetCount": 0,
                    "subAgentCount": 0,
                    "score": 0.0,
                    "feedbackCount": 0,
                    "memoryLayerCount": 0,
                    "effectiveToolCount": 0,
                    "assignmentMetadata": {},
                    "agentPoolCount": 0,
                },
            }
        return aid

    def add_layer(
        self,
        external_id: str,
        name: str,
        *,
        system: bool = False,
        labels: Any = None,
        description: str = "",
    ) -> str:
        lid = self.new_id("memlyr")
        self.layers[lid] = {
            "metadata": _meta(lid, name, external_id, labels),
            "spec": {
                "type": "MEMORY_LAYER_TYPE_EPISODIC" if system else "MEMORY_LAYER_TYPE_SKILLS",
                "systemManaged": system,
                "agentId": "",
                "episodicKey": "",
            },
            "info": {"entryCount": 0},
        }
        if description:
            self.layers[lid]["spec"]["description"] = description
        self.entries[lid] = {}
        return lid

    def add_entry(self, layer_id: str, key: str, description: str, content: str) -> str:
        """An entry, as is: no check that the key is new (the real service may hold two)."""
        eid = self.new_id("mement")
        self.entries[layer_id][eid] = {
            "metadata": _meta(eid, key),
            "spec": {"key": key, "description": description},
            "info": {},
        }
        self.contents[eid] = content
        self.layers[layer_id]["info"]["entryCount"] = len(self.entries[layer_id])
        return eid

    def seed(self, data: dict[str, Any]) -> None:
        """Layers from JSON: ``{"layers": [{"externalId", "name", "description",
        "entries": [{"key", "description", "content"}]}], "agents": {ext: [variations]}}``."""
        for layer in data.get("layers", []):
            lid = self.add_layer(
                layer["externalId"],
                layer.get("name", layer["externalId"]),
                description=layer.get("description", ""),
                labels=layer.get("labels"),
            )
            for e in layer.get("entries", []):
                self.add_entry(lid, e["key"], e.get("description", ""), e.get("content", ""))
        for agent, variations in data.get("agents", {}).items():
            self.add_agent(agent, variations)

    # -- reading, for the tests ----------------------------------------------------------

    def layer_by_external_id(self, ext: str) -> dict[str, Any]:
        return next(v for v in self.layers.values() if v["metadata"]["externalId"] == ext)

    def external_ids(self) -> set[str]:
        return {v["metadata"]["externalId"] for v in self.layers.values()}

    def entries_of(self, ext: str) -> dict[str, tuple[str, str]]:
        lid = self.layer_by_external_id(ext)["metadata"]["id"]
        return {
            e["spec"]["key"]: (e["spec"]["description"], self.contents[eid])
            for eid, e in self.entries[lid].items()
        }

    def assignments(self, agent: str, variation: str) -> list[tuple[str, int]]:
        aid = next(k for k, a in self.agents.items() if a["metadata"]["externalId"] == agent)
        var = next(
            v for v in self.variations[aid].values() if v["metadata"]["externalId"] == variation
        )
        names = {k: v["metadata"]["externalId"] for k, v in self.layers.items()}
        return sorted(
            (
                (names[a["memoryLayerId"]], a["position"])
                for a in var["spec"]["memoryLayerAssignments"]
            ),
            key=lambda t: t[1],
        )

    # -- the routes ------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        prefix = f"/v1/workspaces/{WS}/"
        if not path.startswith(prefix):
            return 404, {"code": 5, "message": f"no route {path}"}
        parts = [unquote(p) for p in path[len(prefix) :].split("/")]
        if parts[0] == "memory_layers":
            return self._layers(method, parts[1:], query, body)
        if parts[0] == "agents":
            return self._agents(method, parts[1:], query, body)
        return 404, {"code": 5, "message": f"no route {path}"}

    def _page(self, items: list[Any], query: dict[str, str]) -> tuple[int, Any]:
        if self.cursor is not None:  # a pagination that never ends
            n = int(query.get("cursor") or "0") + 1
            nxt = "1" if self.cursor == "repeat" else str(n)
            return 200, {"items": items[:1], "pagination": {"nextCursor": nxt}}
        start = int(query.get("cursor") or 0)
        nxt = start + self.page
        return 200, {
            "items": items[start:nxt],
            "pagination": {"nextCursor": str(nxt) if nxt < len(items) else ""},
        }

    def _detail(self, lid: str, eid: str) -> Any:
        return {**self.entries[lid][eid], "content": self.contents[eid]}

    def _layers(self, method: str, parts: list[str], query: Any, body: Any) -> tuple[int, Any]:
        if not parts:
            if method == "GET":
                return self._page(list(self.layers.values()), query)
            meta, spec = body["metadata"], body["spec"]
            ext = meta.get("externalId", "")
            if ext and any(v["metadata"]["externalId"] == ext for v in self.layers.values()):
                return 409, {"code": 6, "message": f"external id {ext} exists"}
            lid = self.add_layer(ext, meta["name"], labels=meta.get("labels"))
            self.layers[lid]["spec"]["type"] = spec["type"]
            if spec.get("description"):
                self.layers[lid]["spec"]["description"] = spec["description"]
            return 200, self.layers[lid]
        lid = parts[0]
        if lid not in self.layers:
            return 404, {"code": 5, "message": f"layer {lid} not found"}
        if len(parts) == 1:
            layer = self.layers[lid]
            if method == "GET":
                return 200, layer
            if method == "DELETE":
                del self.layers[lid]
                return 200, {}
            for path in body["updateMask"].split(","):
                section, name = path.split(".")
                wire = {"name": "name", "description": "description"}[name]
                layer[section][wire] = body[section][wire]
            return 200, layer
        if len(parts) == 2:  # entries
            if method == "GET":
                return self._page(list(self.entries[lid].values()), query)
            spec = body["spec"]
            assert spec["type"] == "content"
            if any(e["spec"]["key"] == spec["key"] for e in self.entries[lid].values()):
                return 409, {"code": 6, "message": "key exists"}
            eid = self.add_entry(lid, spec["key"], spec.get("description", ""), spec["content"])
            return 200, self._detail(lid, eid)
        eid = parts[2]
        if eid not in self.entries[lid]:
            return 404, {"code": 5, "message": f"entry {eid} not found"}
        if method == "GET":
            return 200, self._detail(lid, eid)
        if method == "DELETE":
            del self.entries[lid][eid]
            self.layers[lid]["info"]["entryCount"] = len(self.entries[lid])
            return 200, {}
        for path in body["updateMask"].split(","):
            name = path.split(".")[1]
            if name == "content":
                self.contents[eid] = body["spec"]["content"]
            else:
                self.entries[lid][eid]["spec"][name] = body["spec"][name]
        return 200, self._detail(lid, eid)

    def _agents(self, method: str, parts: list[str], query: Any, body: Any) -> tuple[int, Any]:
        if not parts:
            return self._page(list(self.agents.values()), query)
        aid = parts[0]
        if aid not in self.agents:
            return 404, {"code": 5, "message": "agent not found"}
        if len(parts) == 2:
            return self._page(list(self.variations[aid].values()), query)
        vid, _, action = parts[2].partition(":")
        var = self.variations[aid].get(vid)
        if var is None:
            return 404, {"code": 5, "message": "variation not found"}
        held = var["spec"]["memoryLayerAssignments"]
        layer_id = body["memoryLayerId"]
        mine = next((a for a in held if a["memoryLayerId"] == layer_id), None)
        taken = {a["position"] for a in held if a is not mine}
        if action == "addMemoryLayer":
            if mine is not None:
                return 409, {"code": 6, "message": "already assigned"}
            if body["position"] in taken:
                return 400, {"code": 3, "message": "position in use"}
            if len(held) >= 10:
                return 400, {"code": 9, "message": "10-assignment cap"}
            held.append({"memoryLayerId": layer_id, "position": body["position"]})
        elif mine is None:
            return 404, {"code": 5, "message": "layer not assigned"}
        elif action == "updateMemoryLayer":
            if body["position"] in taken:
                return 400, {"code": 3, "message": "position in use"}
            mine["position"] = body["position"]
        elif action == "removeMemoryLayer":
            held.remove(mine)
        var["info"]["memoryLayerCount"] = len(held)
        return 200, var


def handler(service: Service) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            with service.lock:
                service.calls.append((method, url.path))
                body = json.loads(raw) if raw else None
                if method != "GET":
                    service.bodies.append(body)
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    status, payload = 401, {"code": 16, "message": "invalid API key"}
                elif service.fail is not None:
                    status, payload = service.fail, {"code": 13, "message": "internal error"}
                elif (
                    service.refuse_after_writes is not None
                    and len(service.writes) > service.refuse_after_writes
                ):
                    status, payload = 403, {"code": 7, "message": "permission denied"}
                else:
                    query = {k: v[0] for k, v in parse_qs(url.query).items()}
                    status, payload = service.handle(method, url.path, query, body)
            data = json.dumps(payload).encode()  # lone surrogates as \\ud800 escapes
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

    return Handler


@contextmanager
def running(service: Service, port: int = 0) -> Iterator[str]:
    """Serve ``service`` on 127.0.0.1 in a thread; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler(service))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A stand-in Cadenya API on 127.0.0.1.")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--seed", help="a JSON file of layers and agents to start with")
    args = ap.parse_args(argv)
    service = Service()
    if args.seed:
        with open(args.seed, encoding="utf-8") as fh:
            service.seed(json.load(fh))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(service))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"export CADENYA_BASE_URL={url} CADENYA_API_KEY={KEY} CADENYA_WORKSPACE_ID={WS}")
    print("Serving; Ctrl-C stops it.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
