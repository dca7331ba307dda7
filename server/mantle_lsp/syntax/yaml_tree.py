"""Positioned YAML: libyaml ``compose`` (YAML 1.1, like the engine) into our own node tree.

Every node keeps its exact range. Scalars keep their constructed value (``yes`` is ``True``
as in the engine) and their source style, so that a position inside the *value* of a
scalar (for example a condition inside a quoted string) can be mapped back to the file
with :func:`scalar_value_map`.

Nothing here raises on user input: :func:`parse_yaml` returns ``(root, issues)``.
Anchors and aliases are shared, never expanded, so alias bombs cost nothing; a recursive
alias produces a cyclic graph, which :func:`to_python` handles. It is the one cycle a
parsed tree can have: the server's frozen index keeps such a tree after its file is
edited (a few nodes, once; see ``bulk_work``).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import SyntaxIssue
from .text import TextRange, new_range

try:  # libyaml is bundled with PyYAML wheels; fall back to the pure loader if absent
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_IMPLICIT: dict[Any, list[tuple[str, re.Pattern[str]]]] = (
    yaml.resolver.Resolver.yaml_implicit_resolvers
)


def _composer() -> Any:
    """The loader class :func:`parse_yaml` composes with: libyaml's parser and composer with
    the safe loader's tag resolution, and nothing else (composing builds no Python values,
    so no constructor; the safe loader has no path resolvers, so a node's tag depends on
    its kind and text only). ~20% faster than ``CSafeLoader`` on a project's documents;
    ``CSafeLoader`` itself when PyYAML's tables are not the ones this relies on."""
    if (
        _Loader is not getattr(yaml, "CSafeLoader", None)
        or None in _IMPLICIT
        or yaml.resolver.Resolver.yaml_path_resolvers
    ):
        return _Loader  # pragma: no cover

    scalar, mapping = yaml.ScalarNode, yaml.MappingNode
    str_tag, map_tag, seq_tag = (
        yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG,
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
        yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG,
    )
    by_first = _IMPLICIT
    parser: Any = getattr(yaml, "cyaml").CParser  # noqa: B009 (not in the type stubs)

    class Composer(parser):  # type: ignore[misc]
        def descend_resolver(self, current_node: Any, current_index: Any) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass

        def resolve(self, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
            # PyYAML's BaseResolver.resolve without the path resolvers and wildcards
            if kind is scalar:
                if implicit[0]:
                    for tag, regexp in by_first.get(value[0] if value else "", ()):
                        if regexp.match(value):
                            return tag
                return str_tag
            return map_tag if kind is mapping else seq_tag

    return Composer


_Composer = _composer()

YAML_SYNTAX = "lsp.yaml.syntax_error"
YAML_DUPLICATE_KEY = "lsp.yaml.duplicate_key"


@dataclass(eq=False, slots=True)
class YNode:
    range: TextRange
    tag: str

    def describe(self) -> str:
        return "value"


@dataclass(eq=False, slots=True)
class YScalar(YNode):
    value: Any = None
    raw: str = ""  # the scalar's string value before type resolution
    style: str | None = None  # None (plain), "'", '"', "|", ">"

    def describe(self) -> str:
        v = self.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "a boolean"
        if isinstance(v, (int, float)):
            return "a number"
        if isinstance(v, str):
            return "a string"
        return type(v).__name__

    @property
    def is_null(self) -> bool:
        return self.value is None

    @property
    def str_value(self) -> str | None:
        return self.value if isinstance(self.value, str) else None


@dataclass(eq=False, slots=True)
class YSeq(YNode):
    items: list[YNode] = field(default_factory=list)
    flow: bool = False  # written as `[…]`

    def describe(self) -> str:
        return "a list"


@dataclass(eq=False, slots=True)
class YMap(YNode):
    items: list[tuple[YNode, YNode]] = field(default_factory=list)
    flow: bool = False  # written as `{…}`

    def describe(self) -> str:
        return "a mapping"

    def pairs(self) -> Iterator[tuple[YScalar, YNode]]:
        """(key, value) pairs whose key is a scalar; later duplicates win in :meth:`get`."""
        for k, v in self.items:
            if isinstance(k, YScalar):
                yield k, v

    def get(self, key: str) -> YNode | None:
        for k, v in reversed(self.items):  # the last of duplicate keys wins
            if isinstance(k, YScalar) and k.value == key:
                return v
        return None

    def key_node(self, key: str) -> YScalar | None:
        for k, _ in reversed(self.items):
            if isinstance(k, YScalar) and k.value == key:
                return k
        return None

    def has(self, key: str) -> bool:
        return self.key_node(key) is not None


_LAX_TRUE = ("true", "yes", "on", "1", "y", "t")
_LAX_FALSE = ("false", "no", "off", "0", "n", "f")


def lax_bool(v: object) -> bool | None:
    """A YAML value read as a boolean the way the engine's models read it (pydantic's lax
    mode: a bool, 0/1, 0.0/1.0, or a yes/no-like string), or None when it is not one."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        low = v.strip().lower()
        if low in _LAX_TRUE:
            return True
        if low in _LAX_FALSE:
            return False
    return None


def describe(node: YNode | None) -> str:
    return "nothing" if node is None else node.describe()


_constructor = yaml.constructor.SafeConstructor()


_MERGE_TAG = "tag:yaml.org,2002:merge"
_VALUE_TAG = "tag:yaml.org,2002:value"


_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_INT_TAG = "tag:yaml.org,2002:int"
_BOOLS: dict[str, bool] = dict(yaml.constructor.SafeConstructor.bool_values)


def _scalar_value(node: yaml.ScalarNode, key: bool) -> tuple[Any, str | None]:
    tag, text = node.tag, node.value
    if tag == _MERGE_TAG or (key and tag == _VALUE_TAG):
        return text, None  # `<<` (merged by the loader) and a `=` key are plain text
    # The most common values without the constructor's machinery, as it builds them
    # (``test_scalar_values_are_what_the_safe_loader_builds``): booleans, null, and
    # decimal integers without a sign, a leading zero or an underscore (and short enough
    # to be under Python's limit on the digits of an int).
    if tag == _BOOL_TAG:
        found = _BOOLS.get(text.lower())
        if found is not None:
            return found, None
    elif tag == _NULL_TAG:
        return None, None
    elif (
        tag == _INT_TAG
        and len(text) < 19
        and text.isdigit()
        and text.isascii()
        and (text[0] != "0" or text == "0")
    ):
        return int(text), None
    try:
        return _constructor.construct_object(node, deep=False), None
    except Exception as exc:  # bad timestamps, bad base64, ... — keep the text
        return node.value, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    finally:
        # a SafeConstructor remembers every node it built (for one document's aliases):
        # this long-lived one kept every scalar of every text ever parsed, ~600 bytes per
        # keystroke in the server
        _constructor.constructed_objects.pop(node, None)
        _constructor.recursive_objects.pop(node, None)


def parse_yaml(text: str, base: int = 0) -> tuple[YNode | None, list[SyntaxIssue]]:
    """Compose the single YAML document in ``text``.

    ``base`` is added to every offset (for YAML embedded in a larger file). An empty
    document gives ``None``. A document stream with several documents is an error, like
    in the engine's ``safe_load``.
    """
    issues: list[SyntaxIssue] = []
    try:
        pyroot = yaml.compose(text, Loader=_Composer)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        idx = mark.index if mark is not None else 0
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        issues.append(
            SyntaxIssue(YAML_SYNTAX, f"YAML error: {problem}", _point(text, idx).shift(base))
        )
        return None, issues
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        issues.append(
            SyntaxIssue(
                YAML_SYNTAX, f"YAML error: {exc}", TextRange(base, base + min(1, len(text)))
            )
        )
        return None, issues
    if pyroot is None:
        return None, issues
    merging: list[YMap] = []
    blocks: list[YNode] = []
    root = _convert(pyroot, base, issues, merging, blocks)
    # Children are created after their parents: in reverse, each block collection is
    # trimmed after its children were.
    for node in reversed(blocks):
        _trim_block_end(node)
    _flatten_merges(merging, issues)
    return root, issues


def _trim_block_end(node: YNode) -> None:
    """End a block collection at the end of its last child.

    The loader ends a block mapping or sequence where the next token starts, which takes
    in the blank lines, comments and indentation that follow it.
    """
    start, end = node.range
    best = -1
    # an alias child is the anchored node, which sits elsewhere in the text
    if isinstance(node, YMap):
        for k, v in node.items:
            ks, ke = k.range
            if start <= ks and ke <= end and ke > best:
                best = ke
            vs, ve = v.range
            if start <= vs and ve <= end and ve > best:
                best = ve
    else:
        assert isinstance(node, YSeq)
        for c in node.items:
            cs, ce = c.range
            if start <= cs and ce <= end and ce > best:
                best = ce
    if best >= 0:
        node.range = new_range(TextRange, (start, best))


def _is_merge_key(node: YNode) -> bool:
    return isinstance(node, YScalar) and node.tag == _MERGE_TAG


MERGE_BUDGET = 200_000  # pairs copied by merge keys in one document


def _flatten_merges(merging: list[YMap], issues: list[SyntaxIssue]) -> None:
    """Apply ``<<`` merge keys the way the engine's loader does (PyYAML ``flatten_mapping``).

    The merged pairs go in front of the mapping's own pairs, so that its own keys win
    (later pairs win in :meth:`YMap.get`); of several merged mappings the first wins. Of
    the merged pairs only the winning one per key is kept (the loader builds a dict), which
    keeps chains of merges linear instead of exponential.

    A merged mapping is complete before the alias that merges it, so it ends before the
    mapping that merges it: in order of end offset, every source is already flattened.
    A long chain of merges is still quadratic; after :data:`MERGE_BUDGET` merged pairs the
    remaining mappings keep only their own pairs.
    """
    budget = MERGE_BUDGET
    for m in sorted(merging, key=lambda node: node.range.end):
        merged: list[tuple[YNode, YNode]] = []
        own: list[tuple[YNode, YNode]] = []
        for k, v in m.items:
            if not _is_merge_key(k):
                own.append((k, v))
            elif isinstance(v, YMap):
                merged.extend(v.items)
            elif isinstance(v, YSeq) and all(isinstance(i, YMap) for i in v.items):
                for sub in reversed(v.items):
                    assert isinstance(sub, YMap)
                    merged.extend(sub.items)
            else:
                issues.append(
                    SyntaxIssue(
                        YAML_SYNTAX,
                        "YAML error: a merge key `<<` needs a mapping or a list of mappings "
                        f"(found {v.describe()})",
                        v.range,
                    )
                )
        budget -= len(merged)
        if budget < 0:
            merged = []
        winners: dict[Any, tuple[YNode, YNode]] = {}
        for pair in merged:
            if not _is_merge_key(pair[0]):
                key = _key_identity(pair[0])
                winners.pop(key, None)  # re-insert: keep the order of the last occurrence
                winners[key] = pair
        m.items = [*winners.values(), *own]


def _key_identity(node: YNode) -> Any:
    """What makes two mapping keys the same key for the loader's dict."""
    if isinstance(node, YScalar):
        try:
            hash(node.value)
            return ("value", node.value)
        except TypeError:
            return ("raw", node.raw)
    return ("node", id(node))


def _point(text: str, idx: int) -> TextRange:
    idx = min(max(idx, 0), len(text))
    if idx >= len(text):
        # at end of input: underline the last non-blank character
        j = len(text.rstrip())
        return TextRange(max(j - 1, 0), j) if j else TextRange(0, 0)
    return TextRange(idx, idx + 1)


def _convert(
    n: yaml.Node,
    base: int,
    issues: list[SyntaxIssue],
    merging: list[YMap],
    blocks: list[YNode],
) -> YNode:
    """Our tree for libyaml's node ``n``. A libyaml node that aliases make the child of
    several (or, recursively, of itself) becomes one node of ours, shared likewise.
    Iterative, to survive deep (libyaml-bounded) nesting without recursion limits."""
    memo: dict[int, YNode] = {}  # id of a libyaml node -> ours
    root = memo[id(n)] = _node(n, base, issues, blocks)
    stack: list[tuple[Any, Any]] = [(n, root)]  # (libyaml node, our node), same kind
    while stack:
        pn, yn = stack.pop()
        if isinstance(pn, yaml.MappingNode):
            seen: dict[Any, YScalar] = {}
            for pk, pv in pn.value:
                k = memo.get(id(pk))
                new_key = k is None
                if k is None:
                    k = memo[id(pk)] = _node(pk, base, issues, blocks, key=True)
                v = memo.get(id(pv))
                if v is None:
                    v = memo[id(pv)] = _node(pv, base, issues, blocks)
                    if not isinstance(v, YScalar):
                        stack.append((pv, v))
                if isinstance(k, YScalar):
                    _note_key(k, yn, seen, merging, issues)
                elif new_key:  # a complex key (an alias to one is walked once)
                    stack.append((pk, k))
                yn.items.append((k, v))
        elif isinstance(pn, yaml.SequenceNode):
            for pi in pn.value:
                item = memo.get(id(pi))
                if item is None:
                    item = memo[id(pi)] = _node(pi, base, issues, blocks)
                    if not isinstance(item, YScalar):
                        stack.append((pi, item))
                yn.items.append(item)
    return root


def _note_key(
    k: YScalar, m: YMap, seen: dict[Any, YScalar], merging: list[YMap], issues: list[SyntaxIssue]
) -> None:
    """Mapping ``m`` gets the scalar key ``k``: a merge key registers ``m`` for
    :func:`_flatten_merges`; a key equal to an earlier one (as the loader's dict compares
    them) is a duplicate, whose later value wins."""
    if k.tag == _MERGE_TAG:
        if not merging or merging[-1] is not m:
            merging.append(m)
        return
    hashable_key = k.value
    if hashable_key.__class__ is not str:
        try:
            hash(hashable_key)
        except TypeError:
            hashable_key = k.raw
    if hashable_key in seen:
        issues.append(
            SyntaxIssue(
                YAML_DUPLICATE_KEY,
                f"duplicate key '{k.raw}': the later value wins",
                k.range,
                "warning",
            )
        )
    seen[hashable_key] = k


_ScalarNode = yaml.ScalarNode
_MappingNode = yaml.MappingNode
_SequenceNode = yaml.SequenceNode
_STR_TAG = "tag:yaml.org,2002:str"


def _node(
    n: Any, base: int, issues: list[SyntaxIssue], blocks: list[YNode], key: bool = False
) -> YNode:
    rng: TextRange = new_range(TextRange, (n.start_mark.index + base, n.end_mark.index + base))
    node: YNode
    cls = n.__class__
    if cls is _ScalarNode:
        if n.tag == _STR_TAG:  # what the constructor would build: the text itself
            node = YScalar(rng, _STR_TAG, value=n.value, raw=n.value, style=n.style or None)
        else:
            value, err = _scalar_value(n, key)
            if err is not None:
                issues.append(SyntaxIssue(YAML_SYNTAX, f"YAML error: {err}", rng))
            node = YScalar(rng, n.tag, value=value, raw=n.value, style=n.style or None)
    elif cls is _MappingNode:
        node = YMap(rng, n.tag, flow=bool(n.flow_style))
        if not n.flow_style:
            blocks.append(node)
    else:
        flow = bool(getattr(n, "flow_style", False))
        node = YSeq(rng, n.tag, flow=flow)
        if not flow:
            blocks.append(node)
    return node


def empty_value_keys(root: YNode | None) -> dict[int, TextRange]:
    """Offset of every empty mapping value (``key:`` with nothing after it) → its key's range.

    Such a value has an empty range, which makes a useless diagnostic anchor; parsers use
    this map to move those diagnostics onto the key (see :func:`anchor_empty_ranges`).
    """
    out: dict[int, TextRange] = {}
    for n in nodes(root):
        if isinstance(n, YMap):
            for k, v in n.items:
                if v.range.start == v.range.end:
                    out.setdefault(v.range.start, k.range)
    return out


def nodes(root: YNode | None) -> Iterator[YNode]:
    """Every node of the tree at ``root``, once each (a node that aliases share, or that
    an alias makes cyclic, is given once), depth first; of a mapping's pair, the value's
    nodes before the key's."""
    seen: set[int] = set()
    stack: list[YNode] = [root] if root is not None else []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if isinstance(n, YMap):
            for k, v in n.items:
                stack.append(k)
                stack.append(v)
        elif isinstance(n, YSeq):
            stack.extend(n.items)


def anchor_empty_ranges(issues: list[SyntaxIssue], *roots: YNode | None) -> list[SyntaxIssue]:
    """``issues`` with each empty range that sits on an empty value of one of ``roots``
    moved onto its key. The trees are walked only when some issue has an empty range."""
    if not any(i.range.start == i.range.end for i in issues):
        return list(issues)
    anchors: dict[int, TextRange] = {}
    for root in roots:
        anchors.update(empty_value_keys(root))
    out: list[SyntaxIssue] = []
    for i in issues:
        r = i.range
        key = anchors.get(r.start) if r.start == r.end else None
        out.append(SyntaxIssue(i.code, i.message, key, i.severity) if key is not None else i)
    return out


TO_PYTHON_BUDGET = 100_000  # nodes visited by one to_python call


def to_python(node: YNode | None) -> Any:
    """Plain Python value of a node.

    Cycle-safe (a cycle is cut with ``None``) and bounded: shared aliases are expanded
    again at each use, so an alias bomb would expand exponentially; after
    :data:`TO_PYTHON_BUDGET` nodes every further node becomes ``None``.
    """
    return _to_python(node, set(), [TO_PYTHON_BUDGET])


def _to_python(node: YNode | None, active: set[int], budget: list[int]) -> Any:
    if node is None or budget[0] <= 0:
        return None
    budget[0] -= 1
    if isinstance(node, YScalar):
        v = node.value
        if isinstance(v, (datetime.date, bytes)):
            return node.raw
        return v
    if id(node) in active or len(active) > 200:
        return None
    active.add(id(node))
    try:
        if isinstance(node, YSeq):
            return [_to_python(i, active, budget) for i in node.items]
        if isinstance(node, YMap):
            out: dict[Any, Any] = {}
            for k, v in node.items:
                key = k.value if isinstance(k, YScalar) else repr(_to_python(k, active, budget))
                try:
                    hash(key)
                except TypeError:
                    key = repr(key)
                out[key] = _to_python(v, active, budget)
            return out
        return None
    finally:
        active.discard(id(node))


# ---------------------------------------------------------------------------------------
# Mapping positions inside a scalar's value back to the source text
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ValueMap:
    """For each character of a scalar's string value, the source range it came from.

    Text copied verbatim (nearly every scalar) is mapped by two ``range`` objects, which
    cost nothing to build; other values by tuples."""

    starts: Sequence[int]
    ends: Sequence[int]
    exact: bool
    content: TextRange

    @staticmethod
    def contiguous(start: int, length: int) -> ValueMap:
        """The map of text copied verbatim from the source at ``start``."""
        return ValueMap(
            range(start, start + length),
            range(start + 1, start + length + 1),
            True,
            TextRange(start, start + length),
        )

    def sub(self, start: int, end: int) -> ValueMap:
        """The map of the value slice ``[start, end)`` (for example a stripped value)."""
        return ValueMap(self.starts[start:end], self.ends[start:end], self.exact, self.content)

    def range(self, start: int, end: int) -> TextRange:
        """Source range of the value slice ``[start, end)``."""
        starts = self.starts
        n = len(starts)
        if n == 0:
            return TextRange(self.content.start, self.content.start)
        start = min(max(start, 0), n)
        end = min(max(end, start), n)
        rng: TextRange
        if starts.__class__ is range and starts.step == 1:
            # verbatim text (see contiguous): character i sits at base + i, and a range
            # that ends at the end of the value ends one past its last character
            base: int = starts.start
            rng = new_range(TextRange, (base + start, base + end))
            return rng
        if start == end:
            off = starts[start] if start < n else self.ends[n - 1]
            rng = new_range(TextRange, (off, off))
            return rng
        rng = new_range(TextRange, (starts[start], self.ends[end - 1]))
        return rng

    def offset(self, index: int) -> int:
        """Source offset of the value position ``index`` (a cursor position)."""
        n = len(self.starts)
        if n == 0:
            return self.content.start
        if index >= n:
            return self.ends[n - 1]
        return self.starts[max(index, 0)]

    def index_of(self, offset: int) -> int | None:
        """Value index of a source offset, or None when it is outside the value."""
        for i, (s, e) in enumerate(zip(self.starts, self.ends, strict=True)):
            if s <= offset < e:
                return i
        if self.starts and offset == self.ends[-1]:
            return len(self.starts)
        if not self.starts and offset == self.content.start:
            return 0
        return None


_DQ_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_DQ_HEX = {"x": 2, "u": 4, "U": 8}


def scalar_value_map(source: str, node: YScalar) -> ValueMap:
    """Map each character of ``node.raw`` to its source range in ``source``.

    ``source`` is the full text the node's offsets refer to. When the decoding here does
    not reproduce the value exactly (an exotic scalar form), the map degrades to one that
    points every character at the scalar's first content character (``exact=False``).
    """
    start, end = node.range
    value = node.raw
    n = len(value)
    # Fast path: a plain or quoted scalar whose source is exactly its value. Folding and
    # escapes always change the length or the text, so equal text means a verbatim copy.
    inner = 0 if node.style is None else 1 if node.style in ("'", '"') else -1
    if inner >= 0 and end - start == n + 2 * inner and source.startswith(value, start + inner):
        s0 = start + inner
        return ValueMap(range(s0, s0 + n), range(s0 + 1, s0 + n + 1), True, node.range)
    raw = source[start:end]
    skip = _properties_end(raw)  # the node's range starts at its anchor or tag, if any
    for decoded in _decodings(source, raw[skip:], node.range.start + skip, node.style):
        if "".join(c for c, _, _ in decoded) == node.raw:
            return ValueMap(
                tuple(s for _, s, _ in decoded),
                tuple(e for _, _, e in decoded),
                True,
                node.range,
            )
    # Fallback: a verbatim occurrence of the value, else everything at the start.
    pos = raw.find(node.raw) if node.raw else -1
    if pos >= 0:
        s0 = node.range.start + pos
        return ValueMap(
            range(s0, s0 + len(node.raw)), range(s0 + 1, s0 + len(node.raw) + 1), True, node.range
        )
    s0 = node.range.start
    return ValueMap(tuple(s0 for _ in node.raw), tuple(s0 + 1 for _ in node.raw), False, node.range)


def _properties_end(raw: str) -> int:
    """Length of the node properties (``&anchor``, ``!tag``) and the space after them."""
    i = 0
    n = len(raw)
    while i < n and raw[i] in "&!":
        if raw.startswith("!<", i):
            close = raw.find(">", i)
            i = n if close < 0 else close + 1
        while i < n and raw[i] not in " \t\n":
            i += 1
        while i < n:  # white space, line breaks and comments up to the content
            if raw[i] in " \t\n":
                i += 1
            elif raw[i] == "#":
                eol = raw.find("\n", i)
                i = n if eol < 0 else eol
            else:
                break
    return i


def _decodings(
    source: str, raw: str, base: int, style: str | None
) -> Iterator[list[tuple[str, int, int]]]:
    """Candidate decodings of the scalar source ``raw`` at ``base`` (usually exactly one)."""
    try:
        if style is None:
            yield _decode_flow(raw, 0, len(raw), base, quote=None)
        elif style in ("'", '"'):
            yield _decode_flow(raw, 1, len(raw) - 1, base, quote=style)
        else:
            explicit = _block_indent_indicator(raw)
            if explicit is None:
                yield _decode_block(raw, base, style, None)
                return
            # An indentation indicator is relative to the indentation of the enclosing
            # block collection, which the node does not record: try each candidate from
            # the line start up to the column of the indicator.
            column = base - (source.rfind("\n", 0, base) + 1)
            for parent in range(column + 1):
                yield _decode_block(raw, base, style, explicit + parent)
    except (IndexError, ValueError):
        return


def _block_indent_indicator(raw: str) -> int | None:
    nl = raw.find("\n")
    header = (raw if nl < 0 else raw[:nl]).split("#", 1)[0].strip()
    digits = [c for c in header[1:] if c.isdigit()]
    return int(digits[0]) if digits else None


def _decode_flow(
    raw: str, lo: int, hi: int, base: int, quote: str | None
) -> list[tuple[str, int, int]]:
    """Decode a plain or quoted (flow) scalar body ``raw[lo:hi]`` with line folding."""
    out: list[tuple[str, int, int]] = []
    i = lo
    ws = " \t"
    while i < hi:
        ch = raw[i]
        if ch == "\n":
            # Fold: drop trailing white space already emitted, count line breaks.
            while out and out[-1][0] in ws and not _is_escaped_ws(out[-1]):
                out.pop()
            breaks = [i]
            j = i + 1
            while True:
                while j < hi and raw[j] in ws:
                    j += 1
                if j < hi and raw[j] == "\n":
                    breaks.append(j)
                    j += 1
                    continue
                break
            if len(breaks) == 1:
                out.append((" ", base + i, base + i + 1))
            else:
                for b in breaks[1:]:
                    out.append(("\n", base + b, base + b + 1))
            i = j
            continue
        if quote == "'" and ch == "'" and i + 1 < hi and raw[i + 1] == "'":
            out.append(("'", base + i, base + i + 2))
            i += 2
            continue
        if quote == '"' and ch == "\\":
            nxt = raw[i + 1]
            if nxt == "\n":
                # escaped line break: no space; skip the leading white space of the next
                # line, and every following empty line still gives a line break
                j = i + 2
                while True:
                    while j < hi and raw[j] in ws:
                        j += 1
                    if j < hi and raw[j] == "\n":
                        out.append(("\n", base + j, base + j + 1))
                        j += 1
                        continue
                    break
                i = j
                continue
            if nxt in _DQ_ESCAPES:
                out.append((_DQ_ESCAPES[nxt], base + i, base + i + 2))
                i += 2
                continue
            if nxt in _DQ_HEX:
                n = _DQ_HEX[nxt]
                code = int(raw[i + 2 : i + 2 + n], 16)
                out.append((chr(code), base + i, base + i + 2 + n))
                i += 2 + n
                continue
            raise ValueError("unknown escape")
        out.append((ch, base + i, base + i + 1))
        i += 1
    return out


def _is_escaped_ws(item: tuple[str, int, int]) -> bool:
    """An escape sequence (``\\t``, ``\\x20``, …) is never trimmed by folding."""
    return item[2] - item[1] != 1


def _decode_block(
    raw: str, base: int, style: str, explicit_indent: int | None
) -> list[tuple[str, int, int]]:
    """Decode a literal (``|``) or folded (``>``) block scalar.

    ``explicit_indent`` is the absolute content indentation given by an indentation
    indicator; without it the indentation of the first non-empty line is used.
    """
    nl = raw.find("\n")
    if nl < 0:
        return []
    header = raw[:nl].split("#", 1)[0].strip()
    chomp = "clip"
    for c in header[1:]:
        if c == "-":
            chomp = "strip"
        elif c == "+":
            chomp = "keep"
    # Split the body into lines with offsets.
    lines: list[tuple[int, str]] = []
    pos = nl + 1
    while pos <= len(raw):
        end = raw.find("\n", pos)
        if end < 0:
            if pos < len(raw):
                lines.append((pos, raw[pos:]))
            break
        lines.append((pos, raw[pos:end]))
        pos = end + 1
    if explicit_indent is not None:
        indent = explicit_indent
    else:
        # The indentation is the longest run of leading spaces before the first non-space
        # character, counting the all-space lines in front of it (YAML auto-detection).
        indent = 0
        for _, text in lines:
            spaces = len(text) - len(text.lstrip(" "))
            indent = max(indent, spaces)
            if spaces < len(text):
                break
    body: list[tuple[str, int, int, bool]] = []  # (text, start, newline_offset, is_blank)
    for start, text in lines:
        # A line of spaces is empty (a bare line break) only up to the indentation; with
        # more spaces it is a content line made of the spaces beyond the indentation.
        blank = len(text) <= indent and not text.strip(" ")
        body.append((text[indent:], start + min(indent, len(text)), start + len(text), blank))
    # Trailing blank lines are subject to chomping; find last content line.
    last = len(body) - 1
    while last >= 0 and body[last][3]:
        last -= 1
    out: list[tuple[str, int, int]] = []
    if last < 0:
        if chomp == "keep":  # only empty lines: `+` keeps each of their line breaks
            for _text, _start, nl_off, _blank in body:
                if nl_off < len(raw):
                    out.append(("\n", base + nl_off, base + nl_off + 1))
        return out
    for idx in range(last + 1):
        text, start, nl_off, blank = body[idx]
        for k, ch in enumerate(text):
            out.append((ch, base + start + k, base + start + k + 1))
        if idx == last:
            break
        if style == ">" and not blank and not text.startswith((" ", "\t")):
            # find next line: a single break between two normal lines folds to a space
            nxt = body[idx + 1]
            if not nxt[3] and not nxt[0].startswith((" ", "\t")):
                out.append((" ", base + nl_off, base + nl_off + 1))
                continue
            if nxt[3]:
                # breaks followed by blank lines: this break is dropped when the run of
                # blanks ends in a normal line
                j = idx + 1
                while j <= last and body[j][3]:
                    j += 1
                if j <= last and not body[j][0].startswith((" ", "\t")):
                    continue
        out.append(("\n", base + nl_off, base + nl_off + 1))
    # chomping of the final line break(s)
    final_nl = body[last][2]
    if chomp != "strip" and final_nl < len(raw):
        out.append(("\n", base + final_nl, base + final_nl + 1))
        if chomp == "keep":
            for _text, _start, nl_off, _blank in body[last + 1 :]:
                if nl_off < len(raw):
                    out.append(("\n", base + nl_off, base + nl_off + 1))
    return out


# =============================================================================================
# Tolerant reading of half-written text. Completion asks where the cursor is while the
# user types, when the YAML often does not parse: these read the key path from
# indentation and line shapes alone, never from the parser.

_YAML_KEY_LINE = re.compile(r"""(["']?)([\w$][\w.$/-]*)\1[ \t]*:(?:[ \t]+(.*)|[ \t]*)\Z""", re.S)
ITEM_WORD = re.compile(r"[\w./:-]*\Z")


@dataclass(frozen=True)
class YamlLine:
    """The shape of one YAML line, read without parsing."""

    indent: int
    dashes: tuple[int, ...]  # columns of the `- ` markers
    col: int  # column where the content starts
    key: str | None
    value: str  # inline value after `key:` (stripped of a trailing comment-free remainder)
    value_col: int

    @property
    def first(self) -> int:
        return self.dashes[0] if self.dashes else self.col


def yaml_line(s: str, full: bool = True) -> YamlLine | None:
    """A YAML line's shape, from its text alone; None for blank and comment lines (when
    ``full``)."""
    indent = len(s) - len(s.lstrip(" "))
    i = indent
    dashes: list[int] = []
    while i < len(s) and s[i] == "-" and (i + 1 == len(s) or s[i + 1] in " \t"):
        dashes.append(i)
        i += 1
        while i < len(s) and s[i] in " \t":
            i += 1
    rest = s[i:]
    if full and ((not rest.strip() and not dashes) or rest.lstrip().startswith("#")):
        return None
    m = _YAML_KEY_LINE.match(rest)
    if m:
        value = m.group(3) or ""
        vcol = i + (m.start(3) if m.group(3) is not None else len(rest))
        if full:
            value = re.sub(r"(^|\s)#.*\Z", "", value).rstrip()
        return YamlLine(indent, tuple(dashes), i, m.group(2), value, vcol)
    return YamlLine(indent, tuple(dashes), i, None, rest, i)


@dataclass(frozen=True)
class YamlContext:
    """Where a cursor is in (possibly half-written) YAML: see :func:`yaml_context_at`."""

    path: tuple[str, ...]  # enclosing keys, outer to inner; "-" is a list item
    line: YamlLine  # the cursor line up to the cursor
    at_key: bool  # the cursor line holds only a partial word (a key or a list item)
    in_value: bool  # the cursor is in the inline value of `line.key`
    siblings: frozenset[str]  # keys of the mapping the cursor line belongs to
    scalar_key: str | None  # the cursor line continues the multi-line value of this key
    scalar_start: int  # offset where that value starts

    @property
    def key(self) -> str | None:
        return self.line.key if self.in_value else None

    @property
    def value(self) -> str:
        return self.line.value

    @property
    def dashes(self) -> int:
        return len(self.line.dashes)

    def under(self, *keys: str) -> bool:
        """True when the path ends with ``keys`` ("*" matches any one key)."""
        if len(keys) > len(self.path):
            return False
        tail = self.path[len(self.path) - len(keys) :]
        return all(k == "*" or k == t for k, t in zip(keys, tail, strict=True))


def _lines_back(text: str, start: int, stop: int) -> Iterable[tuple[int, str]]:
    """(line start, line text) of the lines before the one starting at ``start``, going up,
    not above offset ``stop``."""
    pos = start
    while pos > stop:
        pe = pos - 1
        ps = max(text.rfind("\n", 0, pe) + 1, stop)
        yield ps, text[ps:pe]
        pos = ps


def _lines_forward(text: str, start: int, stop: int) -> Iterable[str]:
    pos = text.find("\n", start)
    while 0 <= pos < stop:
        ps = pos + 1
        pe = text.find("\n", ps)
        pe = len(text) if pe < 0 else pe
        yield text[ps : min(pe, stop)]
        pos = pe if pe < len(text) else -1


def yaml_context_at(text: str, offset: int, start: int = 0, end: int | None = None) -> YamlContext:
    """Where ``offset`` is in the YAML between ``start`` and ``end`` (default: the whole
    text), read from indentation alone so that it answers on half-written, unparsable text:
    the enclosing keys, the cursor line's shape, the sibling keys of its mapping, and the
    multi-line scalar it continues. Never raises."""
    if end is None:
        end = len(text)
    line_start = text.rfind("\n", 0, offset) + 1
    line_before = text[line_start:offset]
    line = yaml_line(line_before, full=False)
    assert line is not None
    in_value = line.key is not None and line_before[line.value_col - 1 : line.value_col] in (
        " ",
        "\t",
    )
    at_key = line.key is None and bool(ITEM_WORD.fullmatch(line.value))
    path_rev: list[str] = ["-"] * len(line.dashes)
    siblings: set[str] = set()
    mode, target = ("seq", line.dashes[0]) if line.dashes else ("map", line.col)
    level0 = True
    scalar_key: str | None = None
    scalar_start = 0
    for ps, s in _lines_back(text, line_start, start):
        info = yaml_line(s)
        if info is None:
            continue
        if mode == "map":
            if info.col == target and info.dashes:  # the item this mapping belongs to
                if level0 and info.key:
                    siblings.add(info.key)
                path_rev.extend("-" * len(info.dashes))
                mode, target, level0 = "seq", info.dashes[0], False
                continue
            if info.first >= target:
                if level0 and info.first == target and info.key:
                    siblings.add(info.key)
                continue
        else:
            if info.dashes and info.dashes[0] == target:
                continue  # another item of the same list
            if info.first > target or (info.first == target and info.dashes):
                continue
        # a parent line
        if info.key is None:
            break
        if level0 and not line.dashes and info.value:
            # the cursor line continues this key's (multi-line) scalar value
            scalar_key = info.key
            scalar_start = ps + info.value_col
            if info.value[:1] in ("|", ">"):
                scalar_start = ps + len(s) + 1
        level0 = False
        path_rev.append(info.key)
        if info.dashes:
            path_rev.extend("-" * len(info.dashes))
            mode, target = "seq", info.dashes[0]
        else:
            mode, target = "map", info.col
            if target == 0:
                break
    # keys below the cursor in the same mapping
    col = line.col
    for s in _lines_forward(text, offset, end):
        info = yaml_line(s)
        if info is None:
            continue
        if info.first < col:
            break
        if info.col == col and not info.dashes and info.key:
            siblings.add(info.key)
    if scalar_key is not None:
        in_value = at_key = False
    return YamlContext(
        tuple(reversed(path_rev)),
        line,
        at_key,
        in_value,
        frozenset(siblings),
        scalar_key,
        scalar_start,
    )
