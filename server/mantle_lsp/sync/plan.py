"""The changes a push makes, computed from both sides without touching either, and the
diff a user reviews before pushing.

:func:`plan` compares :class:`~.state.Desired` (the folder) with :class:`~.state.Remote`
(the service): layers and entries to create or update, what ``--prune`` deletes (entries
of the folder's layers missing from the folder; whole layers only when a push from this
repository made them, or when the user names one an earlier mantle-lsp made), and the
moves that put each variation's layers at positions 0..n in cascade order. The service
refuses a position that another layer holds, so the moves are ordered to never collide; a
swap goes through a free position. What :mod:`.holdable` skips is left alone: never
created, updated or deleted.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..syntax.layers import render_entry
from ..syntax.text import safe_text
from .holdable import Skips, compute
from .state import Desired, EntryState, LayerState, Remote

MAX_VARIATION_LAYERS = 10  # the service's cap on a variation's layer assignments


@dataclass(frozen=True)
class CreateLayer:
    layer: str
    name: str
    description: str


@dataclass(frozen=True)
class UpdateLayer:
    layer: str
    id: str
    type: str
    name: str | None  # the new name, when it changes
    description: str | None  # the new description, when it changes
    old_name: str = ""
    old_description: str = ""


@dataclass(frozen=True)
class DeleteLayer:
    layer: str
    id: str
    entries: int


@dataclass(frozen=True)
class CreateEntry:
    layer: str
    entry: EntryState


@dataclass(frozen=True)
class UpdateEntry:
    layer: str
    old: EntryState  # as the service has it (with its id)
    new: EntryState

    @property
    def mask(self) -> list[str]:
        fields = []
        if self.old.description != self.new.description:
            fields.append("spec.description")
        if self.old.content != self.new.content:
            fields.append("spec.content")
        return fields


@dataclass(frozen=True)
class DeleteEntry:
    layer: str
    entry: EntryState


@dataclass(frozen=True)
class Assign:
    variation: str
    layer: str
    position: int
    id: str = ""  # the layer's id on the service; empty when the push creates it


@dataclass(frozen=True)
class Move:
    variation: str
    layer: str
    id: str
    old: int
    position: int


@dataclass(frozen=True)
class Unassign:
    variation: str
    layer: str
    id: str
    position: int


Op = CreateLayer | UpdateLayer | DeleteLayer | CreateEntry | UpdateEntry | DeleteEntry
VariationOp = Assign | Move | Unassign


@dataclass
class Plan:
    """What a push would do, in the order it does it."""

    ops: list[Op | VariationOp] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # a push refuses while there are any
    notes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # what only --prune deletes
    skipped: list[str] = field(default_factory=list)  # left alone (.holdable), and why
    prune: bool = False
    repository: str | None = None  # the id the layers this push creates carry
    # variation ref -> (agent id, variation id) on the service
    targets: dict[str, tuple[str, str]] = field(default_factory=dict)
    layer_ids: dict[str, str] = field(default_factory=dict)  # external id -> id on the service

    @property
    def empty(self) -> bool:
        return not self.ops

    @property
    def deleted_entries(self) -> int:
        """How many entries the plan deletes (a whole layer's included)."""
        return sum(
            1 if isinstance(op, DeleteEntry) else op.entries
            for op in self.ops
            if isinstance(op, (DeleteEntry, DeleteLayer))
        )

    @property
    def creates_layers(self) -> bool:
        return any(isinstance(op, CreateLayer) for op in self.ops)

    def count(self) -> dict[str, int]:
        out = {"create": 0, "update": 0, "delete": 0}
        for op in self.ops:
            if isinstance(op, (CreateLayer, CreateEntry, Assign)):
                out["create"] += 1
            elif isinstance(op, (UpdateLayer, UpdateEntry, Move)):
                out["update"] += 1
            else:
                out["delete"] += 1
        return out


def plan(
    local: Desired, remote: Remote, *, prune: bool = False, prune_layers: Iterable[str] = ()
) -> Plan:
    """The changes that make the service hold what the folder says (pure)."""
    skips = compute(remote, local)
    out = Plan(
        problems=list(local.problems),
        notes=list(local.notes),
        skipped=skips.lines(),
        prune=prune,
        repository=local.repository,
    )
    out.layer_ids = {lid: layer.id for lid, layer in remote.layers.items()}
    for lid in sorted(local.layers):
        if lid in skips.layers:
            continue
        if lid in remote.system_layers:
            out.problems.append(
                f"layer {lid}: the service has a system-managed layer with this external id; "
                "mark the folder episodic (layer.yml `episodic: true`) or rename it"
            )
            continue
        _layer_ops(out, local.layers[lid], remote.layers.get(lid), prune, skips)
    for ref in sorted(local.variations):
        _variation_ops(out, ref, local.variations[ref], local, remote, prune)
    named = set(prune_layers)
    for lid in sorted(named):
        layer = remote.layers.get(lid)
        why = None
        if layer is None:
            why = "the workspace has no such layer"
        elif lid in local.layers:
            why = "the layer is in the folder"
        elif lid in skips.layers:
            why = f"the layer is skipped: {skips.layers[lid]}"
        elif not layer.managed:
            why = "the layer was not made by mantle-lsp (delete it in Cadenya)"
        elif not prune:
            why = "it needs --prune"
        if why is not None:
            out.problems.append(f"--prune-layer {lid}: {why}")
    # whole layers go last, once no cascade of the folder holds them
    for lid in sorted(set(remote.layers) - set(local.layers)):
        layer = remote.layers[lid]
        if lid in skips.layers or not layer.managed:
            continue
        ours = bool(layer.repository) and layer.repository == local.repository
        if prune and (ours or lid in named):
            out.ops.append(DeleteLayer(lid, layer.id, layer.entry_count))
        elif ours:
            out.kept.append(f"layer {lid} (made by a push from this folder, no longer in it)")
        elif not layer.repository:
            out.kept.append(
                f"layer {lid} (made by an earlier mantle-lsp, with no repository id: "
                f"--prune-layer {lid} deletes it)"
            )
    return out


def _layer_ops(
    out: Plan, want: LayerState, have: LayerState | None, prune: bool, skips: Skips
) -> None:
    lid = want.external_id
    entries = {k: e for k, e in want.entries.items() if skips.entry(lid, k) is None}
    if have is None:
        out.ops.append(CreateLayer(lid, want.name or lid, want.description or ""))
        out.ops.extend(CreateEntry(lid, e) for _, e in sorted(entries.items()))
        return
    name = want.name if want.name is not None and want.name != have.name else None
    desc = want.description
    if desc is not None and desc == (have.description or ""):
        desc = None
    if lid in skips.metas:
        name = desc = None
    if name is not None or desc is not None:
        out.ops.append(
            UpdateLayer(
                lid, have.id, have.type, name, desc, have.name or "", have.description or ""
            )
        )
    for key, entry in sorted(entries.items()):
        old = have.entries.get(key)
        if old is None:
            out.ops.append(CreateEntry(lid, entry))
        elif (old.description, old.content) != (entry.description, entry.content):
            out.ops.append(UpdateEntry(lid, old, entry))
    for key, old in sorted(have.entries.items()):
        if key in want.entries or skips.entry(lid, key) is not None:
            continue
        if prune:
            out.ops.append(DeleteEntry(lid, old))
        else:
            out.kept.append(f"entry {lid}/{key} (on the service, not in the folder)")


def _variation_ops(
    out: Plan, ref: str, layers: list[str], local: Desired, remote: Remote, prune: bool
) -> None:
    var = remote.variations.get(ref)
    if var is None or var.missing is not None:
        out.problems.append(f"variation {ref}: {var.missing if var else 'not looked up'}")
        return
    for lid in layers:
        if lid in remote.duplicate_layers:
            out.problems.append(
                f"variation {ref}: the service has {remote.duplicate_layers[lid]} layers with "
                f"the external id {lid}; which one to assign is not known"
            )
            return
        if lid in remote.system_layers:
            out.problems.append(
                f"variation {ref}: layer {lid} is system-managed and cannot be assigned"
            )
            return
        if lid not in local.layers and lid not in remote.layers:
            out.problems.append(
                f"variation {ref}: layer {lid} is neither in the folder nor on the service"
            )
            return
    out.targets[ref] = (var.agent_id, var.variation_id)
    want = {lid: pos for pos, lid in enumerate(layers)}
    have = {a.layer: a for a in var.assignments}
    ops: list[VariationOp] = []
    for a in sorted(var.assignments, key=lambda a: a.position):
        if a.layer in want:
            continue
        if prune:
            ops.append(Unassign(ref, a.layer, a.id, a.position))
        else:
            out.kept.append(f"layer {a.layer} at position {a.position} of {ref}")
    held = {a.position: a.layer for a in var.assignments if prune is False or a.layer in want}
    if len(held) + sum(1 for lid in want if lid not in have) > MAX_VARIATION_LAYERS:
        out.problems.append(
            f"variation {ref}: more than {MAX_VARIATION_LAYERS} layers would be assigned "
            "(the service's cap)"
        )
        return
    # what is left to do: (layer, target position); a layer already at its target is done
    todo = [(lid, pos) for lid, pos in want.items() if lid not in have or have[lid].position != pos]
    spare = max([*held, *want.values(), -1]) + 1
    while todo:
        ready = next((t for t in todo if t[1] not in held), None)
        if ready is None:
            blocker = held[todo[0][1]]
            if blocker not in want:  # a layer only --prune removes holds the position
                out.problems.append(
                    f"variation {ref}: position {todo[0][1]} is held by layer {blocker}, "
                    "which the cascade does not list (push --prune removes it)"
                )
                return
            # a cycle of moves (a swap): the blocker steps aside to a free position first
            cur = todo[0][1]
            ops.append(Move(ref, blocker, have[blocker].id, cur, spare))
            del held[cur]
            held[spare] = blocker
            spare += 1
            continue
        todo.remove(ready)
        lid, pos = ready
        if lid in have:
            cur = next(p for p, who in held.items() if who == lid)
            ops.append(Move(ref, lid, have[lid].id, cur, pos))
            del held[cur]
        else:
            known = remote.layers.get(lid)
            ops.append(Assign(ref, lid, pos, known.id if known else ""))
        held[pos] = lid
    out.ops.extend(ops)


# -- the diff ------------------------------------------------------------------------------


def shown(text: str) -> str:
    """``text`` safe to print: control characters (line breaks and escape sequences among
    them), bidirectional controls and lone surrogates each become U+FFFD, as ``check``
    shows a file's text (:func:`~mantle_lsp.syntax.text.safe_text`)."""
    text = safe_text(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


def _lines(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` only (a CR, a form feed or U+2028 stays in its line)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _entry_diff(layer: str, old: EntryState | None, new: EntryState | None) -> list[str]:
    a = render_entry(old.description, old.content) if old else ""
    b = render_entry(new.description, new.content) if new else ""
    either = new or old
    key = either.key if either else ""
    lines = difflib.unified_diff(
        _lines(a),
        _lines(b),
        f"service/{layer}/{key}" if old else "/dev/null",
        f"folder/{layer}/{key}" if new else "/dev/null",
    )
    out = []
    for line in lines:
        text = line[:-2] if line.endswith("\r\n") else line.rstrip("\n")
        out.append("    " + shown(text))
        if not line.endswith("\n"):
            out.append("    \\ No newline at end of file")
    return out


def render_diff(p: Plan) -> str:
    """What a push would change, for a person to review: one line per change, the
    unified diff of each entry file created or changed, then what only ``--prune``
    deletes, what is left alone and anything that stops a push. Every name and text from
    the folder or the service is :func:`shown` safely."""
    lines: list[str] = []
    current = ""
    for op in p.ops:
        head = f"variation {op.variation}" if isinstance(op, (Assign, Move, Unassign)) else ""
        if not head:
            head = f"layer {op.layer}"
        if head != current and not isinstance(op, (CreateLayer, DeleteLayer, UpdateLayer)):
            lines.append(shown(head))
        current = head
        layer = shown(op.layer)
        if isinstance(op, CreateLayer):
            lines.append(f"+ layer {layer}: create (name: {shown(repr(op.name))})")
        elif isinstance(op, UpdateLayer):
            lines.append(f"~ layer {layer}: update")
            if op.name is not None:
                lines.append(f"    name: {shown(repr(op.old_name))} -> {shown(repr(op.name))}")
            if op.description is not None:
                lines.append(
                    f"    description: {shown(repr(op.old_description))} -> "
                    f"{shown(repr(op.description))}"
                )
        elif isinstance(op, DeleteLayer):
            lines.append(f"- layer {layer}: delete (with its {op.entries} entries)")
        elif isinstance(op, CreateEntry):
            lines.append(f"  + {shown(op.entry.key)}")
            lines.extend(_entry_diff(op.layer, None, op.entry))
        elif isinstance(op, UpdateEntry):
            what = " and ".join(m.split(".")[1] for m in op.mask)
            lines.append(f"  ~ {shown(op.new.key)} ({what})")
            lines.extend(_entry_diff(op.layer, op.old, op.new))
        elif isinstance(op, DeleteEntry):
            lines.append(f"  - {shown(op.entry.key)}")
        elif isinstance(op, Assign):
            lines.append(f"  + {layer} at position {op.position}")
        elif isinstance(op, Move):
            lines.append(f"  ~ {layer}: position {op.old} -> {op.position}")
        else:
            lines.append(f"  - {layer} (position {op.position})")
    if p.ops:
        n = p.count()
        lines.append(
            f"{len(p.ops)} change{'s' if len(p.ops) != 1 else ''}: {n['create']} to create, "
            f"{n['update']} to update, {n['delete']} to delete"
        )
    else:
        lines.append("No changes: the service already holds what the folder says.")
    if p.kept:
        lines.append("Left in place (push --prune removes them):")
        lines.extend(f"  {shown(k)}" for k in p.kept)
    lines.extend(f"skipped: {shown(s)}" for s in p.skipped)
    lines.extend(f"note: {shown(note)}" for note in p.notes)
    lines.extend(f"problem: {shown(problem)}" for problem in p.problems)
    return "\n".join(lines) + "\n"
