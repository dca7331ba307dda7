"""Parsers for Cadenya memory layers kept as files (see docs/memory-layers.md).

Three kinds of file, each parsed on its own (no file reads another):

- an *entry file* ``memory-layers/<layer>/<key>``: a frontmatter holding a one-line
  ``description:`` between two ``---`` lines, then the content, byte for byte;
- an optional ``memory-layers/<layer>/layer.yml``: the layer's ``name`` (and
  ``description``, ``episodic``);
- ``memory-layers/cascades.yml``: the cascades to check.

Like every parser in ``syntax/``, nothing here raises on input and every range is a
:class:`TextRange` of code-point offsets into the text given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import SyntaxIssue, closest
from .text import TextRange
from .yaml_tree import YMap, YNode, YScalar, YSeq, describe, lax_bool, parse_yaml

# codes (registered in ide/codes.py, documented in docs/diagnostics/<code>.md)
C_FRONTMATTER = "lsp.layers.invalid_frontmatter"
C_NO_DESCRIPTION = "lsp.layers.missing_description"
C_MULTILINE = "lsp.layers.multiline_description"
C_LONG = "lsp.layers.long_description"
C_NO_CONTENT = "lsp.layers.empty_content"
C_UNKNOWN_KEY = "lsp.layers.unknown_key"
C_LAYER_YML = "lsp.layers.invalid_layer_yml"
C_CASCADES = "lsp.layers.invalid_cascades"

# a manifest line the agent reads at a glance; longer descriptions get a warning
MAX_DESCRIPTION = 150

ENTRY_KEYS = ("description",)
LAYER_KEYS = ("name", "description", "episodic")
CASCADE_KEYS = ("variation", "layers")
ITEM_KEYS = ("layer", "entry")

_DELIM = re.compile(r"---[ \t]*\r?(?:\n|$)")


# -- entry files -----------------------------------------------------------------------


@dataclass
class ParsedEntry:
    """One entry file. ``content`` is everything after the closing ``---`` line, byte for
    byte (the whole text when there is no frontmatter)."""

    description: str | None
    content: str
    issues: list[SyntaxIssue] = field(default_factory=list)
    frontmatter: TextRange | None = None  # from the opening `---` to the end of the closing one
    description_range: TextRange | None = None  # the description's value (or its key)
    content_start: int = 0  # offset of the content in the text
    closing: TextRange | None = None  # the closing `---`

    @property
    def content_range(self) -> TextRange:
        return TextRange(self.content_start, self.content_start + len(self.content))


def _frontmatter_bounds(text: str) -> tuple[int, int, int] | None:
    """(yaml start, yaml end, content start) when ``text`` opens with a closed frontmatter."""
    m = _DELIM.match(text)
    if m is None:
        return None
    pos = m.end()
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl + 1
        m2 = _DELIM.match(text, pos)
        if m2 is not None and m2.end() == line_end:
            return m.end(), pos, line_end
        if nl < 0:
            return None
        pos = nl + 1
    return None


def parse_entry(text: str) -> ParsedEntry:
    """Parse an entry file: its description (``None`` when absent) and its content."""
    issues: list[SyntaxIssue] = []
    bounds = _frontmatter_bounds(text)
    if bounds is None:
        if _DELIM.match(text):
            end = text.find("\n")
            issues.append(
                SyntaxIssue(
                    C_FRONTMATTER,
                    "the frontmatter is never closed: add a `---` line after `description:`",
                    TextRange(0, 3 if end < 0 else min(end, 3)),
                )
            )
            return ParsedEntry(None, "", issues, None, None, len(text))
        issues.append(
            SyntaxIssue(
                C_NO_DESCRIPTION,
                "this entry has no description: start the file with a frontmatter "
                "(`---`, `description: …`, `---`); the description is its manifest line",
                TextRange(0, min(len(text), text.find("\n") if "\n" in text else len(text))),
                "warning",
            )
        )
        entry = ParsedEntry(None, text, issues, None, None, 0)
        _check_content(entry)
        return entry
    ystart, yend, cstart = bounds
    content = text[cstart:]
    entry = ParsedEntry(
        None, content, issues, TextRange(0, cstart), None, cstart, TextRange(yend, yend + 3)
    )
    root, yissues = parse_yaml(text[ystart:yend], base=ystart)
    issues.extend(yissues)
    opening = TextRange(0, 3)
    if root is None and not yissues:
        issues.append(
            SyntaxIssue(
                C_NO_DESCRIPTION,
                "the frontmatter is empty: add `description: …`, the entry's manifest line",
                opening,
                "warning",
            )
        )
    elif root is not None and not isinstance(root, YMap):
        issues.append(
            SyntaxIssue(
                C_FRONTMATTER,
                f"the frontmatter must be a mapping with `description:`, not {describe(root)}",
                root.range,
            )
        )
    elif isinstance(root, YMap):
        _unknown_keys(root, ENTRY_KEYS, "an entry's frontmatter", issues)
        key = root.key_node("description")
        node = root.get("description")
        if key is None:
            issues.append(
                SyntaxIssue(
                    C_NO_DESCRIPTION,
                    "this entry has no `description:`; it is the entry's manifest line",
                    opening,
                    "warning",
                )
            )
        else:
            _read_description(entry, key, node, text)
    _check_content(entry)
    return entry


def _read_description(entry: ParsedEntry, key: YScalar, node: YNode | None, text: str) -> None:
    issues = entry.issues
    if not isinstance(node, YScalar):
        where = node.range if node is not None else key.range
        issues.append(
            SyntaxIssue(
                C_FRONTMATTER,
                f"`description` must be one line of text, not {describe(node)}",
                where,
            )
        )
        entry.description_range = where
        return
    rng = node.range
    while rng.length and text[rng.end - 1] in "\n ":  # a block scalar ends past its line
        rng = TextRange(rng.start, rng.end - 1)
    entry.description_range = rng if rng.length else key.range
    if node.is_null:
        entry.description = None
        issues.append(
            SyntaxIssue(
                C_NO_DESCRIPTION,
                "the description is empty; it is the entry's manifest line",
                key.range,
                "warning",
            )
        )
        return
    value = node.value if isinstance(node.value, str) else node.raw
    entry.description = value
    if not value.strip():
        issues.append(
            SyntaxIssue(
                C_NO_DESCRIPTION,
                "the description is empty; it is the entry's manifest line",
                entry.description_range,
                "warning",
            )
        )
    elif "\n" in value.strip("\n") or "\r" in value:
        issues.append(
            SyntaxIssue(
                C_MULTILINE,
                "the description spans several lines; the manifest shows one line per entry",
                entry.description_range,
                "warning",
            )
        )
    elif len(value.strip()) > MAX_DESCRIPTION:
        issues.append(
            SyntaxIssue(
                C_LONG,
                f"the description is {len(value.strip())} characters long (more than "
                f"{MAX_DESCRIPTION}); a manifest line the agent scans should say what the "
                "entry is for in a sentence",
                entry.description_range,
                "warning",
            )
        )


def _check_content(entry: ParsedEntry) -> None:
    if entry.content.strip():
        return
    rng = entry.closing or TextRange(0, 0)
    entry.issues.append(
        SyntaxIssue(
            C_NO_CONTENT,
            "this entry has no content: the agent would load nothing with `get_memory`",
            rng,
            "warning",
        )
    )


def _reads_back(scalar: str, value: str) -> bool:
    """Would ``description: <scalar>`` read back as exactly ``value`` (our own YAML
    reading: libyaml's composer, as for every file)?"""
    if "\n" in scalar or "\r" in scalar:
        return False
    root, issues = parse_yaml(f"description: {scalar}\n")
    node = root.get("description") if isinstance(root, YMap) else None
    return not issues and isinstance(node, YScalar) and node.value == value


def yaml_scalar(value: str) -> str:
    """``value`` as a one-line YAML scalar: plain when that reads back unchanged, else
    double-quoted (a JSON string is a YAML double-quoted scalar)."""
    if value and _reads_back(value, value):
        return value
    return _double_quoted(value)


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar of ``value`` on one line: what YAML may not hold raw
    (line breaks, control and other non-printable characters) as escapes."""
    out = ['"']
    for ch in value:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= o <= 0x7E or (0xA0 <= o <= 0xFFFD and not 0xD800 <= o <= 0xDFFF):
            out.append(ch if o != 0xFEFF else "\\uFEFF")
        elif o >= 0x10000:
            out.append(ch)
        elif o < 0x100:
            out.append(f"\\x{o:02X}")
        else:
            out.append(f"\\u{o:04X}")
    out.append('"')
    return "".join(out)


def render_entry(description: str, content: str) -> str:
    """The canonical entry file; :func:`parse_entry` gives back both parts exactly."""
    return "---\ndescription: " + yaml_scalar(description) + "\n---\n" + content


# -- layer.yml ---------------------------------------------------------------------------


@dataclass
class ParsedLayerMeta:
    name: str | None = None
    description: str | None = None
    episodic: bool = False
    issues: list[SyntaxIssue] = field(default_factory=list)
    name_range: TextRange | None = None
    episodic_range: TextRange | None = None


def parse_layer_yml(text: str) -> ParsedLayerMeta:
    meta = ParsedLayerMeta()
    root, issues = parse_yaml(text)
    meta.issues.extend(issues)
    if root is None:
        return meta
    if not isinstance(root, YMap):
        meta.issues.append(
            SyntaxIssue(
                C_LAYER_YML,
                f"layer.yml must be a mapping (`name:`, `description:`), not {describe(root)}",
                root.range,
            )
        )
        return meta
    _unknown_keys(root, LAYER_KEYS, "layer.yml", meta.issues)
    for attr in ("name", "description"):
        node = root.get(attr)
        if node is None or (isinstance(node, YScalar) and node.is_null):
            continue
        if not isinstance(node, YScalar) or isinstance(node.value, (list, dict)):
            meta.issues.append(
                SyntaxIssue(C_LAYER_YML, f"`{attr}` must be text, not {describe(node)}", node.range)
            )
            continue
        value = node.value if isinstance(node.value, str) else node.raw
        setattr(meta, attr, value)
        if attr == "name":
            meta.name_range = node.range
    ep = root.get("episodic")
    if ep is not None and not (isinstance(ep, YScalar) and ep.is_null):
        flag = lax_bool(ep.value) if isinstance(ep, YScalar) else None
        if flag is None:
            meta.issues.append(
                SyntaxIssue(
                    C_LAYER_YML, f"`episodic` must be true or false, not {describe(ep)}", ep.range
                )
            )
        else:
            meta.episodic = flag
            meta.episodic_range = ep.range
    return meta


# -- cascades.yml ------------------------------------------------------------------------


@dataclass
class ParsedCascadeItem:
    layer: str | None  # None when the item names no layer (an issue says why)
    entry: str | None  # a pinned single entry's key
    range: TextRange  # the whole item
    layer_range: TextRange | None = None  # the layer id's scalar
    entry_range: TextRange | None = None  # the entry key's scalar


@dataclass
class ParsedCascade:
    name: str
    name_range: TextRange
    variation: str | None = None
    variation_range: TextRange | None = None
    items: list[ParsedCascadeItem] = field(default_factory=list)
    layers_range: TextRange | None = None  # the `layers` key


@dataclass
class ParsedCascades:
    cascades: list[ParsedCascade] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)


def _text_scalar(node: YNode | None) -> str | None:
    if isinstance(node, YScalar) and not node.is_null and not isinstance(node.value, (list, dict)):
        v = node.value if isinstance(node.value, str) else node.raw
        return v if v.strip() else None
    return None


def parse_cascades(text: str) -> ParsedCascades:
    out = ParsedCascades()
    root, issues = parse_yaml(text)
    out.issues.extend(issues)
    if root is None:
        return out
    if not isinstance(root, YMap):
        out.issues.append(
            SyntaxIssue(
                C_CASCADES,
                f"cascades.yml must be a mapping with `cascades:`, not {describe(root)}",
                root.range,
            )
        )
        return out
    _unknown_keys(root, ("cascades",), "cascades.yml", out.issues)
    node = root.get("cascades")
    if node is None or (isinstance(node, YScalar) and node.is_null):
        return out
    if not isinstance(node, YMap):
        out.issues.append(
            SyntaxIssue(
                C_CASCADES,
                f"`cascades` must map cascade names to cascades, not {describe(node)}",
                node.range,
            )
        )
        return out
    seen: set[str] = set()
    for key, value in node.items:
        name = _text_scalar(key)
        if name is None:
            out.issues.append(SyntaxIssue(C_CASCADES, "a cascade needs a name", key.range))
            continue
        if name in seen:
            continue  # the YAML tree reports the duplicate key
        seen.add(name)
        cascade = ParsedCascade(name, key.range)
        out.cascades.append(cascade)
        _parse_cascade(cascade, value, out.issues)
    return out


def _parse_cascade(cascade: ParsedCascade, node: YNode, issues: list[SyntaxIssue]) -> None:
    if isinstance(node, YScalar) and node.is_null:
        issues.append(
            SyntaxIssue(
                C_CASCADES,
                f"cascade `{cascade.name}` lists no layers: add `layers:`",
                cascade.name_range,
            )
        )
        return
    if isinstance(node, YSeq):  # `name: [a, b]`: the layer list alone
        _parse_items(cascade, node, issues)
        return
    if not isinstance(node, YMap):
        issues.append(
            SyntaxIssue(
                C_CASCADES,
                f"cascade `{cascade.name}` must be a mapping with `layers:`, not {describe(node)}",
                node.range,
            )
        )
        return
    _unknown_keys(node, CASCADE_KEYS, "a cascade", issues)
    var = node.get("variation")
    if var is not None and not (isinstance(var, YScalar) and var.is_null):
        v = _text_scalar(var)
        if v is None:
            issues.append(
                SyntaxIssue(
                    C_CASCADES,
                    f"`variation` must be an agent variation such as `agent/variation`, not "
                    f"{describe(var)}",
                    var.range,
                )
            )
        else:
            cascade.variation = v
            cascade.variation_range = var.range
    layers_key = node.key_node("layers")
    layers = node.get("layers")
    if layers_key is None:
        issues.append(
            SyntaxIssue(
                C_CASCADES,
                f"cascade `{cascade.name}` lists no layers: add `layers:`",
                cascade.name_range,
            )
        )
        return
    cascade.layers_range = layers_key.range
    if layers is None or (isinstance(layers, YScalar) and layers.is_null):
        issues.append(
            SyntaxIssue(C_CASCADES, f"cascade `{cascade.name}` lists no layers", layers_key.range)
        )
        return
    if not isinstance(layers, YSeq):
        issues.append(
            SyntaxIssue(
                C_CASCADES,
                f"`layers` must be a list of layer ids, most specific first, not "
                f"{describe(layers)}",
                layers.range,
            )
        )
        return
    _parse_items(cascade, layers, issues)


def _parse_items(cascade: ParsedCascade, seq: YSeq, issues: list[SyntaxIssue]) -> None:
    for item in seq.items:
        if isinstance(item, YScalar):
            layer = _text_scalar(item)
            if layer is None:
                issues.append(
                    SyntaxIssue(
                        C_CASCADES, f"expected a layer id, not {describe(item)}", item.range
                    )
                )
                continue
            cascade.items.append(ParsedCascadeItem(layer, None, item.range, item.range))
            continue
        if not isinstance(item, YMap):
            issues.append(
                SyntaxIssue(
                    C_CASCADES,
                    f"a cascade item is a layer id or `{{layer: …, entry: …}}`, not "
                    f"{describe(item)}",
                    item.range,
                )
            )
            continue
        _unknown_keys(item, ITEM_KEYS, "a cascade item", issues)
        lnode = item.get("layer")
        enode = item.get("entry")
        layer = _text_scalar(lnode)
        if layer is None:
            issues.append(
                SyntaxIssue(
                    C_CASCADES,
                    "this item names no `layer:`",
                    lnode.range if lnode is not None else item.range,
                )
            )
            continue
        entry = _text_scalar(enode)
        if enode is not None and entry is None:
            issues.append(
                SyntaxIssue(
                    C_CASCADES,
                    f"`entry` must be an entry key such as `refunds.md`, not {describe(enode)}",
                    enode.range,
                )
            )
            continue
        cascade.items.append(
            ParsedCascadeItem(
                layer,
                entry,
                item.range,
                lnode.range if lnode is not None else None,
                enode.range if enode is not None and entry is not None else None,
            )
        )


def _unknown_keys(
    node: YMap, known: tuple[str, ...], where: str, issues: list[SyntaxIssue]
) -> None:
    for key, _ in node.items:
        name = key.value if isinstance(key, YScalar) else None
        if isinstance(name, str) and name in known:
            continue
        shown = name if isinstance(name, str) else describe(key)
        meant = closest(shown, known) if isinstance(name, str) else None
        hint = f"; did you mean `{meant}`?" if meant else f" (known: {', '.join(known)})"
        issues.append(
            SyntaxIssue(
                C_UNKNOWN_KEY,
                f"`{shown}` is not a key of {where}, and is ignored{hint}",
                key.range,
                "warning",
                {"wrong": shown, "meant": meant} if meant else None,
            )
        )
