"""The Cadenya calls, through the official SDK (``cadenya``, imported only here and only
when a sync command runs): build a client from the environment, read what the service
holds, apply a plan.

Every failure a user can meet (the SDK not installed, no API key, the service answering
an error, the network down) becomes a :class:`SyncError` with a one-line message.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar
from urllib.parse import unquote, urlsplit

from .plan import (
    Assign,
    CreateEntry,
    CreateLayer,
    DeleteEntry,
    DeleteLayer,
    Move,
    Plan,
    Unassign,
    UpdateEntry,
    UpdateLayer,
)
from .state import (
    MANAGED_LABEL,
    REPOSITORY_LABEL,
    Assignment,
    Desired,
    EntryState,
    LayerState,
    Remote,
)
from .state import VariationState as Variation

if TYPE_CHECKING:
    from cadenya import Cadenya
    from cadenya import types as ct

T = TypeVar("T")

# the most pages one listing may take (a service whose pagination never ends is stopped)
MAX_PAGES = 10_000

# the type of the layers a push creates: entries listed in the agent's manifest by their
# description, their content loaded on demand
LAYER_TYPE: Final = "MEMORY_LAYER_TYPE_SKILLS"
EPISODIC_TYPE = "MEMORY_LAYER_TYPE_EPISODIC"
INSTALL_HINT = "pip install 'mantle-lsp[cadenya]'"


class SyncError(Exception):
    """A failure to report in one line (exit status 2)."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the secrets of the environment taken out: the password of a
    ``CADENYA_BASE_URL`` (``https://user:***@host``) and the API key."""
    env = os.environ if env is None else env
    secrets: list[str] = []
    try:
        password = urlsplit(env.get("CADENYA_BASE_URL", "").strip()).password
    except ValueError:
        password = None
    if password:
        secrets += [password, unquote(password)]
    key = env.get("CADENYA_API_KEY", "").strip()
    if len(key) >= 4:
        secrets.append(key)
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


class _Page(Protocol[T]):
    items: list[T]
    next_cursor: str

    def get_next_page(self) -> _Page[T] | None: ...


def every(first: _Page[T], what: str) -> Iterator[T]:
    """The items of a listing, page after page, stopping a pagination that never ends: a
    cursor the service gave before, or more than :data:`MAX_PAGES` pages, is an error."""
    page: _Page[T] | None = first
    seen: set[str] = set()
    pages = 1
    while page is not None:
        yield from page.items
        cursor = page.next_cursor
        if not cursor:
            return
        if cursor in seen:
            raise SyncError(
                f"{what}: the service gave the same page cursor twice (its pagination "
                "would never end)"
            )
        seen.add(cursor)
        pages += 1
        if pages > MAX_PAGES:
            raise SyncError(f"{what}: more than {MAX_PAGES:,} pages; stopped")
        page = page.get_next_page()


@contextmanager
def service_errors(what: str) -> Iterator[None]:
    """Turn the SDK's errors (an HTTP error status, no connection, an answer that is not
    the API's) into a :class:`SyncError` naming ``what`` was being done."""
    import cadenya

    try:
        yield
    except cadenya.APIError as exc:
        raise SyncError(
            f"{what}: the service answered HTTP {exc.status_code}: {_one_line(exc.message)}"
        ) from None
    except cadenya.APIConnectionError as exc:
        raise SyncError(f"{what}: cannot reach the service: {_one_line(exc)}") from None
    except cadenya.APIResponseError as exc:
        raise SyncError(f"{what}: unexpected answer: {_one_line(exc)}") from None
    except ValueError as exc:  # the SDK's checks of its arguments
        raise SyncError(f"{what}: {_one_line(exc)}") from None


def connect(env: Mapping[str, str] | None = None) -> Cadenya:
    """A client for the workspace the environment names: ``CADENYA_API_KEY``,
    ``CADENYA_WORKSPACE_ID`` and, optionally, ``CADENYA_BASE_URL``."""
    env = os.environ if env is None else env
    try:
        import cadenya
    except ImportError:
        raise SyncError(f"the Cadenya SDK is not installed: {INSTALL_HINT}") from None
    key = env.get("CADENYA_API_KEY", "").strip()
    if not key:
        raise SyncError("set CADENYA_API_KEY to a Cadenya API key to sync memory layers")
    workspace = env.get("CADENYA_WORKSPACE_ID", "").strip()
    if not workspace:
        raise SyncError("set CADENYA_WORKSPACE_ID to the workspace the memory layers live in")
    base_url = env.get("CADENYA_BASE_URL", "").strip() or None
    try:
        return cadenya.Cadenya(api_key=key, workspace_id=workspace, base_url=base_url)
    except ValueError as exc:
        raise SyncError(f"cannot set up the Cadenya client: {_one_line(exc)}") from None


# -- reading -------------------------------------------------------------------------------


def fetch(client: Cadenya, local: Desired | None = None, *, all_entries: bool = False) -> Remote:
    """What the service holds: every layer with an external id (system-managed ones only
    by name), the entries of the layers the folder has (of every layer with
    ``all_entries``, for a pull), and the variations the folder's cascades name."""
    remote = Remote()
    names: dict[str, str] = {}  # layer id -> external id, or `id:<id>`
    what = "listing memory layers"
    with service_errors(what):
        for layer in every(client.memory_layers.list(), what):
            meta, spec = layer.metadata, layer.spec
            ext = meta.external_id or ""
            names[meta.id] = ext or f"id:{meta.id}"
            if spec.system_managed or spec.type == EPISODIC_TYPE:
                if ext:
                    remote.system_layers.add(ext)
                continue
            if not ext:
                continue  # made without an external id: no folder can name it
            if ext in remote.layers:
                remote.duplicate_layers[ext] = remote.duplicate_layers.get(ext, 1) + 1
                continue
            labels = meta.labels or {}
            remote.layers[ext] = LayerState(
                ext,
                meta.name,
                spec.description or "",
                id=meta.id,
                type=spec.type,
                managed=labels.get(MANAGED_LABEL[0]) == MANAGED_LABEL[1],
                repository=labels.get(REPOSITORY_LABEL, ""),
                entry_count=layer.info.entry_count if layer.info else 0,
            )
    wanted = set(remote.layers) if all_entries or local is None else set(local.layers)
    for ext in sorted(wanted & set(remote.layers)):
        if ext in remote.duplicate_layers:
            continue  # which layer's entries would be a guess
        _read_entries(client, remote, remote.layers[ext])
        remote.entries_read.add(ext)
    if local is not None:
        agents: dict[str, str] | None = None
        for ref in sorted(local.variations):
            if agents is None:
                agents = _agents(client)
            remote.variations[ref] = _variation(client, ref, agents, names)
    return remote


def _read_entries(client: Cadenya, remote: Remote, layer: LayerState) -> None:
    what = f"reading the entries of layer {layer.external_id}"
    with service_errors(what):
        for summary in every(client.memory_layers.entries.list(layer.id), what):
            detail = client.memory_layers.entries.retrieve(layer.id, summary.metadata.id)
            key = detail.spec.key
            if key in layer.entries:
                n = remote.duplicate_entries.get((layer.external_id, key), 1)
                remote.duplicate_entries[layer.external_id, key] = n + 1
                continue
            layer.entries[key] = EntryState(
                key, detail.spec.description or "", detail.content, detail.metadata.id
            )


def _agents(client: Cadenya) -> dict[str, str]:
    """Agent external id (and id) -> agent id."""
    out: dict[str, str] = {}
    with service_errors("listing agents"):
        for agent in every(client.agents.list(), "listing agents"):
            out[agent.metadata.id] = agent.metadata.id
            if agent.metadata.external_id:
                out.setdefault(agent.metadata.external_id, agent.metadata.id)
    return out


def _variation(
    client: Cadenya, ref: str, agents: dict[str, str], names: dict[str, str]
) -> Variation:
    agent_ref, _, var_ref = ref.partition("/")
    agent_id = agents.get(agent_ref)
    if agent_id is None:
        return Variation(ref, missing=f"no agent `{agent_ref}` in the workspace")
    what = f"listing the variations of agent {agent_ref}"
    with service_errors(what):
        found = None
        for var in every(client.agents.variations.list(agent_id), what):
            if var_ref in (var.metadata.external_id, var.metadata.id):
                found = var
                break
    if found is None:
        return Variation(ref, agent_id, missing=f"agent {agent_ref} has no variation `{var_ref}`")
    return Variation(
        ref,
        agent_id,
        found.metadata.id,
        [
            Assignment(
                names.get(a.memory_layer_id, f"id:{a.memory_layer_id}"),
                a.position,
                a.memory_layer_id,
            )
            for a in (found.spec.memory_layer_assignments or [])
        ],
    )


# -- writing -------------------------------------------------------------------------------


def apply(p: Plan, client: Cadenya) -> int:
    """Make the changes of ``p`` in order; the number made. A failure stops the push
    (a :class:`SyncError` saying how far it got)."""
    created: dict[str, str] = {}  # external id -> id of the layers made here
    done = 0
    for op in p.ops:
        try:
            with service_errors(_describe(op)):
                _apply_one(op, p, client, created)
        except SyncError as exc:
            raise SyncError(f"push stopped after {done} of {len(p.ops)} changes: {exc}") from None
        done += 1
    return done


def _describe(op: object) -> str:
    if isinstance(op, CreateLayer):
        return f"creating layer {op.layer}"
    if isinstance(op, UpdateLayer):
        return f"updating layer {op.layer}"
    if isinstance(op, DeleteLayer):
        return f"deleting layer {op.layer}"
    if isinstance(op, CreateEntry):
        return f"creating entry {op.layer}/{op.entry.key}"
    if isinstance(op, UpdateEntry):
        return f"updating entry {op.layer}/{op.new.key}"
    if isinstance(op, DeleteEntry):
        return f"deleting entry {op.layer}/{op.entry.key}"
    if isinstance(op, Assign):
        return f"assigning layer {op.layer} to {op.variation}"
    if isinstance(op, Move):
        return f"moving layer {op.layer} in {op.variation}"
    if isinstance(op, Unassign):
        return f"removing layer {op.layer} from {op.variation}"
    return "syncing"  # pragma: no cover


def _apply_one(op: object, p: Plan, client: Cadenya, created: dict[str, str]) -> None:
    layers = client.memory_layers
    if isinstance(op, CreateLayer):
        labels = {MANAGED_LABEL[0]: MANAGED_LABEL[1]}
        if p.repository:
            labels[REPOSITORY_LABEL] = p.repository
        spec: ct.MemoryLayerSpecParam = {"type": LAYER_TYPE}
        if op.description:
            spec["description"] = op.description
        made = layers.create(
            metadata={
                "name": op.name,
                "external_id": op.layer,
                "labels": labels,
            },
            spec=spec,
        )
        created[op.layer] = made.metadata.id
    elif isinstance(op, UpdateLayer):
        mask = []
        kwargs: dict[str, Any] = {}
        if op.name is not None:
            kwargs["metadata"] = {"name": op.name}
            mask.append("metadata.name")
        if op.description is not None:
            kwargs["spec"] = {"type": op.type or LAYER_TYPE, "description": op.description}
            mask.append("spec.description")
        layers.update(op.id, update_mask=",".join(mask), **kwargs)
    elif isinstance(op, DeleteLayer):
        layers.delete(op.id)
    elif isinstance(op, CreateEntry):
        layer_id = created.get(op.layer) or p.layer_ids[op.layer]
        entry_spec: ct.MemoryEntryCreateSpec_ContentParam = {
            "type": "content",
            "key": op.entry.key,
            "content": op.entry.content,
            "description": op.entry.description,
        }
        layers.entries.create(
            layer_id,
            metadata={"name": op.entry.key},
            spec=entry_spec,
        )
    elif isinstance(op, UpdateEntry):
        layer_id = p.layer_ids[op.layer]
        update: ct.MemoryEntryUpdateSpecParam = {}
        if "spec.description" in op.mask:
            update["description"] = op.new.description
        if "spec.content" in op.mask:
            update["content"] = op.new.content
        layers.entries.update(
            layer_id,
            op.old.id,
            spec=update,
            update_mask=",".join(op.mask),
        )
    elif isinstance(op, DeleteEntry):
        layers.entries.delete(p.layer_ids[op.layer], op.entry.id)
    elif isinstance(op, (Assign, Move, Unassign)):
        agent_id, variation_id = p.targets[op.variation]
        variations = client.agents.variations
        if isinstance(op, Assign):
            variations.add_memory_layer(
                agent_id,
                variation_id,
                memory_layer_id=op.id or created[op.layer],
                position=op.position,
            )
        elif isinstance(op, Move):
            variations.update_memory_layer(
                agent_id, variation_id, memory_layer_id=op.id, position=op.position
            )
        else:
            variations.remove_memory_layer(agent_id, variation_id, memory_layer_id=op.id)
