"""Static analysis of Mantle tool modules (``tools.py``, ``tools/*.py``).

The module text is parsed with :mod:`ast` and inspected; it is **never** imported or
executed. What is extracted:

* tool definitions (docs/language/tools.md#discovery): module-level
  ``@tool``-decorated functions, ``NAME = tool(...)(fn)`` / ``NAME = tool(fn)`` bindings, and
  *possible* tools (other module-level ``NAME = <call>(...)`` bindings, factory-made tools,
  project-local imports) whose nature cannot be known statically;
* ``<receiver>.memory.get/set("<literal>", ...)`` calls, each marked with whether the engine's
  train-time write check counts it (docs/language/tools.md#what-the-engine-counts);
* memory-manager bypasses (docs/language/tools.md#bypassing-the-memory-api);
* ``ActivateSkill(skill_id=..., ordered_block=...)`` calls with literal arguments;
* memory calls whose key is not a literal: resolved through a module-level string constant,
  a loop over a literal container, or a name imported from another module of the project
  (resolved by the model), else recorded as dynamic (see :class:`ToolModule`);
* imports of obsolete engine paths (``rasa.calm_v2.*``, and the Mantle names ``tool``,
  ``ToolContext``, … from Maestro-era ``rasa_sdk``: rasa_sdk itself is installed with
  rasa-pro, so importing it, or ``Tracker`` from it, works) and of the
  project's ``lib`` package, each with the guard it sits under (:data:`ImportGuard`).

All ranges are code-point offsets into the text given to :func:`parse_tools_module`. The
:mod:`ast` module reports columns as UTF-8 *byte* offsets within a line; they are converted
here. Lines are split the way Python's tokenizer splits them (``\\r\\n``, ``\\r`` or ``\\n``),
and a leading byte-order mark is tolerated.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal, NamedTuple

from .errors import SyntaxIssue
from .text import BOM, TextRange, new_range

__all__ = [
    "SYNTAX_ERROR_CODE",
    "Bypass",
    "DynamicKey",
    "ImportGuard",
    "ImportedKey",
    "KeyVia",
    "MemoryCall",
    "ObsoleteImport",
    "ProjectImport",
    "SkillActivation",
    "ToolDef",
    "ToolModule",
    "ToolParam",
    "parse_tools_module",
]

SYNTAX_ERROR_CODE = "lsp.tools.syntax_error"

ToolKind = Literal["decorated", "assigned", "possible"]

# How a memory call's key is known: a string literal in the call; a module-level (or
# single-assignment local) string constant; a loop over a literal container; a literal key
# on a receiver that is only guessed to be memory (a parameter named like ``memory``/``mem``,
# as in ``lib`` helpers).
KeyVia = Literal["literal", "constant", "loop", "parameter"]

# What an import sits under: nothing (it runs when the module is imported); a ``try`` whose
# handlers catch ImportError; ``if TYPE_CHECKING:`` (never runs); a function body (runs only
# when the function is called).
ImportGuard = Literal["none", "try", "type_checking", "function"]


@dataclass(frozen=True)
class ToolParam:
    """One parameter of a tool's ``def`` (``context`` and ``*args``/``**kwargs`` aside):
    its annotation and default as written (source text; None when absent), whether it can
    only be passed by position (then an ``execute_tool`` step cannot pass it by name) and
    the range of its name."""

    name: str
    annotation: str | None
    default: str | None
    positional_only: bool
    range: TextRange

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class ToolDef:
    """A module-level binding that is (or may be) a tool.

    ``name`` is the module-level name the tool object is bound to (the engine's tool name).
    ``kind`` is ``"decorated"`` for ``@tool``/``@tool(...)``/``@<x>.tool(...)`` on a ``def``,
    ``"assigned"`` for ``NAME = tool(...)(fn)`` / ``NAME = tool(fn)`` (and ``NAME = <tool>``
    aliases of a known tool), ``"possible"`` for bindings that may hold a tool (factory calls,
    project-local imports). ``params`` excludes ``context`` and ``*args``/``**kwargs``.

    ``signature`` has the details of ``params`` when the tool's ``def`` (or lambda) is in
    the module; ``var_keyword`` says it takes ``**kwargs``. ``exact`` is True when the
    engine calls exactly that ``def``: a ``@tool`` (or ``tool(fn)``) on it and no other
    decorator that could change what it accepts. ``imported`` is, for a name imported from
    a project module, ``(module, level, name)`` as the import wrote it: the model tells
    whether it names a module (``from lib import user_location``), which is never a tool.
    """

    name: str
    name_range: TextRange
    kind: ToolKind
    description: str | None
    is_async: bool
    has_description_kw: bool
    params: tuple[str, ...]
    def_range: TextRange
    signature: tuple[ToolParam, ...] = ()
    var_keyword: bool = False
    exact: bool = False
    imported: tuple[str, int, str] | None = None


@dataclass(frozen=True)
class MemoryCall:
    """A ``<receiver>.memory.get/set("<literal>", ...)`` call.

    ``engine_counted`` is True exactly when the call has the shape the engine's write check
    counts (docs/language/tools.md#what-the-engine-counts): a plain-name receiver that is a
    parameter of the innermost
    enclosing ``def``/``async def``. For ``get`` calls the same shape test is applied (the
    engine does not check reads at all).
    """

    method: Literal["get", "set"]
    entry: str
    entry_range: TextRange
    literal_range: TextRange
    call_range: TextRange
    line: int
    engine_counted: bool
    receiver: str
    via: KeyVia = "literal"


@dataclass(frozen=True)
class ImportedKey:
    """A memory call whose key is a name imported from another module (``from lib.keys
    import COUNTRY`` then ``context.memory.get(COUNTRY)``; ``keys.COUNTRY`` after ``import
    lib.keys as keys``): ``module`` and ``level`` as in the import, ``name`` the name in that
    module. ``range`` covers the key expression at the call site. The model resolves it when
    that module is a project file defining the name as a string constant."""

    method: Literal["get", "set"]
    module: str
    level: int
    name: str
    range: TextRange
    call_range: TextRange


@dataclass(frozen=True)
class DynamicKey:
    """Memory used in a way whose key cannot be known statically: a ``get``/``set`` with a
    computed key (``what`` = ``"get"``/``"set"``), another method of the memory object
    (``"method"``), or the memory object used as a value (``"escape"``: aliased, returned,
    subscripted; passing it as a call argument is not one: the callee's own calls are seen
    where it is analysed, e.g. a ``lib`` helper's ``memory.set("x")``)."""

    what: str
    range: TextRange


@dataclass(frozen=True)
class Bypass:
    """A memory-manager bypass (``tools.memory_manager_bypass``).

    ``what`` is one of ``"_memory"``, ``"getattr_memory"``, ``"attrgetter_memory"`` and
    ``"clear_entries"``.
    """

    range: TextRange
    line: int
    what: str


@dataclass(frozen=True)
class SkillActivation:
    """``ActivateSkill(...)`` with a literal ``skill_id`` and/or ``ordered_block``.

    Ranges cover the string content (inside the quotes) when that is exact, otherwise the
    whole literal, like :attr:`MemoryCall.entry_range`.
    """

    skill_id: str | None
    skill_id_range: TextRange | None
    block: str | None
    block_range: TextRange | None


@dataclass(frozen=True)
class ObsoleteImport:
    """An import of an obsolete engine module; ``range`` covers the dotted module path."""

    module: str
    range: TextRange
    replacement: str
    guard: ImportGuard = "none"


@dataclass(frozen=True)
class ProjectImport:
    """An import of the project's ``lib`` package (``import lib.x``, ``from lib.x import
    y``), or a relative import (``from .consts import X``: ``module`` starts with the dots);
    ``range`` covers the dotted module path."""

    module: str
    range: TextRange
    guard: ImportGuard = "none"


@dataclass(frozen=True)
class ToolModule:
    """What a tool (or helper) module shows.

    ``memory_calls`` are the literal-key calls on a ``<x>.memory`` receiver (the ones checks
    report on). ``indirect_calls`` are memory calls whose key is known some other way
    (:data:`KeyVia` other than ``"literal"``); they are never reported, never counted by the
    engine, and count as references. ``imported_keys`` need another module to be resolved;
    ``dynamic_keys`` cannot be resolved at all. ``constants`` are the module-level string
    constants other modules may import. ``sys_path_shim``: the module changes ``sys.path``,
    so where its imports resolve is not known."""

    tools: tuple[ToolDef, ...] = ()
    memory_calls: tuple[MemoryCall, ...] = ()
    bypasses: tuple[Bypass, ...] = ()
    activations: tuple[SkillActivation, ...] = ()
    obsolete_imports: tuple[ObsoleteImport, ...] = ()
    indirect_calls: tuple[MemoryCall, ...] = ()
    imported_keys: tuple[ImportedKey, ...] = ()
    dynamic_keys: tuple[DynamicKey, ...] = ()
    constants: tuple[tuple[str, str], ...] = ()
    project_imports: tuple[ProjectImport, ...] = ()
    sys_path_shim: bool = False


EMPTY_MODULE = ToolModule()


# Fast constructors for the records made in bulk. A frozen dataclass's ``__init__`` sets each
# field with its own ``object.__setattr__`` call; these set the instance dict in one call and
# make the very same instance (same fields, equality, hash and repr; see the test
# ``test_fast_constructors_make_the_same_records``), about twice as fast.

_object_new = object.__new__
_object_setattr = object.__setattr__


def _new_memory_call(
    method: Literal["get", "set"],
    entry: str,
    entry_range: TextRange,
    literal_range: TextRange,
    call_range: TextRange,
    line: int,
    engine_counted: bool,
    receiver: str,
    via: KeyVia = "literal",
) -> MemoryCall:
    call: MemoryCall = _object_new(MemoryCall)
    _object_setattr(
        call,
        "__dict__",
        {
            "method": method,
            "entry": entry,
            "entry_range": entry_range,
            "literal_range": literal_range,
            "call_range": call_range,
            "line": line,
            "engine_counted": engine_counted,
            "receiver": receiver,
            "via": via,
        },
    )
    return call


def _new_tool_def(
    name: str,
    name_range: TextRange,
    kind: ToolKind,
    description: str | None,
    is_async: bool,
    has_description_kw: bool,
    params: tuple[str, ...],
    def_range: TextRange,
    signature: tuple[ToolParam, ...] = (),
    var_keyword: bool = False,
    exact: bool = False,
    imported: tuple[str, int, str] | None = None,
) -> ToolDef:
    tool: ToolDef = _object_new(ToolDef)
    _object_setattr(
        tool,
        "__dict__",
        {
            "name": name,
            "name_range": name_range,
            "kind": kind,
            "description": description,
            "is_async": is_async,
            "has_description_kw": has_description_kw,
            "params": params,
            "def_range": def_range,
            "signature": signature,
            "var_keyword": var_keyword,
            "exact": exact,
            "imported": imported,
        },
    )
    return tool


# ---------------------------------------------------------------------------------------------
# Positions


_NEWLINE = re.compile(r"\r\n|\r|\n")
_LINE_SPACE = " \t\f"


class SourcePositions:
    """Converts ast (1-based line, UTF-8 byte column) positions to code-point offsets."""

    __slots__ = ("_ascii", "_encoded", "_line_ends", "_starts", "text")

    def __init__(self, text: str, base: int) -> None:
        self.text = text
        starts = [base]
        ends: list[int] = []
        if "\r" in text:
            for match in _NEWLINE.finditer(text, base):
                ends.append(match.start())
                starts.append(match.end())
        else:
            find = text.find
            at = find("\n", base)
            while at >= 0:
                ends.append(at)
                at += 1
                starts.append(at)
                at = find("\n", at)
        ends.append(len(text))
        self._starts = starts
        self._line_ends = ends
        self._encoded: dict[int, bytes] = {}
        # Byte columns are code-point columns on every line.
        self._ascii = text.isascii()

    def _line(self, lineno: int) -> int | None:
        """0-based line index for a 1-based ``lineno``; None when past the end."""
        if lineno < 1:
            return 0
        if lineno > len(self._starts):
            return None
        return lineno - 1

    def offset(self, lineno: int | None, col: int | None, *, chars: bool = False) -> int:
        """Offset of a 1-based line and 0-based column (bytes, or code points if ``chars``)."""
        if lineno is None:
            return 0
        index = self._line(lineno)
        if index is None:
            return len(self.text)
        start = self._starts[index]
        end = self._line_ends[index]
        column = max(col or 0, 0)
        if not chars and not self._ascii:
            line = self.text[start:end]
            if not line.isascii():
                encoded = self._encoded.get(index)
                if encoded is None:
                    encoded = line.encode("utf-8", "surrogatepass")
                    self._encoded[index] = encoded
                column = len(encoded[:column].decode("utf-8", "ignore"))
        return min(start + column, end)

    def line_end_at(self, offset: int) -> int:
        """End of the line (before its line break) containing ``offset``."""
        for end in self._line_ends:
            if end >= offset:
                return end
        return len(self.text)

    def start_of(self, node: ast.AST) -> int:
        """``range_of(node).start``."""
        if self._ascii:
            located: Any = node
            try:
                line: int = located.lineno - 1
                col: int = located.col_offset
                if line >= 0 and col >= 0:
                    start = self._starts[line] + col  # IndexError past the last line
                    limit = self._line_ends[line]
                    return start if start < limit else limit
            except (AttributeError, TypeError, IndexError):  # no position, None, past the end
                pass
        return self.offset(getattr(node, "lineno", None), getattr(node, "col_offset", None))

    def range_of(self, node: ast.AST) -> TextRange:
        if self._ascii:
            # Fast path, same result as below: lines within the text (IndexError otherwise),
            # byte columns = code points.
            located: Any = node
            try:
                line: int = located.lineno - 1
                last_line: int = located.end_lineno - 1
                col: int = located.col_offset
                last_col: int = located.end_col_offset
                if line >= 0 and last_line >= 0 and col >= 0 and last_col >= 0:
                    starts = self._starts
                    ends = self._line_ends
                    start = starts[line] + col
                    limit = ends[line]
                    if start > limit:
                        start = limit
                    end = starts[last_line] + last_col
                    limit = ends[last_line]
                    if end > limit:
                        end = limit
                    return new_range(TextRange, (start, end if end > start else start))
            except (AttributeError, TypeError, IndexError):  # no position, None, past the end
                pass
        start = self.offset(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None:
            return TextRange(start, start)
        end = self.offset(end_line, end_col)
        return TextRange(start, max(start, end))


# ---------------------------------------------------------------------------------------------
# Lexical helpers on the source text


def _is_ident_char(ch: str) -> bool:
    return ("_" + ch).isidentifier()


# Spaces, tabs, form feeds and backslash line continuations.
_BLANKS = r"(?:[ \t\f]|\\(?:\r\n|\r|\n))*"
_BLANKS_RE = re.compile(_BLANKS)
_ASYNC_RE = re.compile("async" + _BLANKS)
_DEF_RE = re.compile("def" + _BLANKS)


def _skip_blanks(text: str, pos: int) -> int:
    """Skip spaces, tabs, form feeds and backslash line continuations."""
    return _BLANKS_RE.match(text, pos).end()  # type: ignore[union-attr]


_ASCII_IDENT_CHARS = re.compile(r"[A-Za-z0-9_]*")


def _ident_end(text: str, pos: int) -> int:
    size = len(text)
    while True:
        # For ASCII characters, _is_ident_char is exactly [A-Za-z0-9_].
        pos = _ASCII_IDENT_CHARS.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= size or text[pos].isascii() or not _is_ident_char(text[pos]):
            return pos
        pos += 1


def _def_name_range(
    text: str, node: ast.FunctionDef | ast.AsyncFunctionDef, start: int
) -> TextRange:
    """Range of the identifier after ``def`` (the statement starts at ``def``/``async``)."""
    pos = start
    if isinstance(node, ast.AsyncFunctionDef):
        keyword = _ASYNC_RE.match(text, pos)
        if keyword is not None:
            pos = keyword.end()
    keyword = _DEF_RE.match(text, pos)
    if keyword is not None:
        pos = keyword.end()
        end = _ident_end(text, pos)
        if end > pos:
            return new_range(TextRange, (pos, end))
    return TextRange(start, start)


def _dotted_name_range(text: str, pos: int, limit: int) -> TextRange | None:
    """Range of a dotted name starting at ``pos`` (blanks around the dots are legal)."""
    end = _ident_end(text, pos)
    if end == pos or end > limit:
        return None
    start = pos
    while True:
        after = _skip_blanks(text, end)
        if after >= limit or text[after] != ".":
            break
        part = _skip_blanks(text, after + 1)
        part_end = _ident_end(text, part)
        if part_end == part or part_end > limit:
            break
        end = part_end
    return TextRange(start, end)


_STRING_PREFIX = re.compile(r"[rRuUbBfF]{0,2}")


def _content_range(text: str, literal: TextRange, value: str) -> TextRange:
    """The range inside the quotes when it spells ``value`` exactly, else ``literal``."""
    start, end = literal
    body = start  # after the string prefix
    if not text.startswith(("'", '"'), start, end):
        body = _STRING_PREFIX.match(text, start, end).end()  # type: ignore[union-attr]
    if end - body >= 2:
        quote = text[body]
        if quote == '"' or quote == "'":
            triple = quote * 3
            if (
                end - body >= 6
                and text.startswith(triple, body, end)
                and text.endswith(triple, body, end)
            ):
                width = 3
            elif text[end - 1] == quote:
                width = 1
            else:
                return literal
            if text[body + width : end - width] == value:
                return new_range(TextRange, (body + width, body + width + len(value)))
    return literal


def _plain_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


# ---------------------------------------------------------------------------------------------
# Tool discovery


# Callees whose results are never tools: module-level ``NAME = <one of these>(...)`` is not a
# "possible" tool. Matched against the last name of the callee.
_NOT_TOOL_CALLEES = frozenset(
    {
        "getLogger",
        "get_logger",
        "getenv",
        "compile",
        "TypeVar",
        "ParamSpec",
        "NewType",
        "namedtuple",
        "NamedTuple",
        "TypedDict",
        "ContextVar",
        "defaultdict",
        "OrderedDict",
        "Counter",
        "deque",
        "frozenset",
        "set",
        "dict",
        "list",
        "tuple",
        "int",
        "float",
        "str",
        "bytes",
        "bool",
        "object",
        "range",
        "len",
        "sorted",
        "Path",
        "PurePath",
        "Lock",
        "Semaphore",
        "Event",
        "timedelta",
        "Decimal",
        "field",
    }
)

# First segments of modules that belong to the project (``lib/`` is importable as ``lib.*``):
# names imported from them may be tools (the engine takes every tool object in the module
# namespace, imported or not).
_PROJECT_MODULE_ROOTS = frozenset({"lib", "tools", "skills"})


class _FnInfo(NamedTuple):
    is_async: bool
    params: tuple[str, ...]
    args: ast.arguments | None = None  # for the signature, read only for a tool
    plain: bool = True  # no decorator


def _signature(pos: SourcePositions, args: ast.arguments | None) -> tuple[ToolParam, ...]:
    """The details of a tool's parameters (``context`` and ``*args``/``**kwargs`` aside)."""
    if args is None:
        return ()
    every = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(every) - len(args.defaults))
    defaults += args.defaults
    pairs = list(zip(every, defaults, strict=True))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    n_posonly = len(args.posonlyargs)
    out = []
    for i, (a, d) in enumerate(pairs):
        if a.arg == "context":
            continue
        start = pos.start_of(a)
        out.append(
            ToolParam(
                a.arg,
                _source(a.annotation),
                _source(d),
                i < n_posonly,
                TextRange(start, start + len(a.arg)),
            )
        )
    return tuple(out)


def _source(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    try:
        return ast.unparse(node)
    except Exception:  # an odd tree: unparse is not guaranteed on every node
        return "…"


def _params_of(args: ast.arguments) -> tuple[str, ...]:
    return tuple(
        [
            a.arg
            for group in (args.posonlyargs, args.args, args.kwonlyargs)
            for a in group
            if a.arg != "context"
        ]
    )


def _all_param_names(args: ast.arguments) -> frozenset[str]:
    names = [a.arg for group in (args.posonlyargs, args.args, args.kwonlyargs) for a in group]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return frozenset(names)


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _description(call: ast.Call | None) -> tuple[str | None, bool]:
    if call is None:
        return None, False
    for kw in call.keywords:
        if kw.arg == "description":
            return _plain_str(kw.value), True
    return None, False


_NESTED_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


def _nested_fields() -> dict[type[ast.AST], tuple[str, ...]]:
    """Statement classes (other than ``def``/``class``) that nest statements: their fields."""
    table: dict[type[ast.AST], tuple[str, ...]] = {}
    for cls in vars(ast).values():
        if (
            isinstance(cls, type)
            and issubclass(cls, ast.stmt)
            and not issubclass(cls, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ):
            fields = tuple(f for f in _NESTED_FIELDS if f in cls._fields)
            if fields:
                table[cls] = fields
    return table


_STATEMENT_BODIES = _nested_fields()


class _ToolCollector:
    """Walks module-level statements in source order and records the bindings."""

    def __init__(self, text: str, pos: SourcePositions) -> None:
        self._text = text
        self._pos = pos
        self._tool_aliases: set[str] = {"tool"}
        # Current binding of each module-level name, in source order: a ToolDef or None.
        self._bindings: dict[str, ToolDef | None] = {}
        self._functions: dict[str, _FnInfo] = {}

    # -- helpers ------------------------------------------------------------------------------

    def _is_tool_ref(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in self._tool_aliases
        return isinstance(expr, ast.Attribute) and expr.attr == "tool"

    def _tool_decorator(self, dec: ast.expr) -> tuple[bool, ast.Call | None]:
        if self._is_tool_ref(dec):
            return True, None
        if isinstance(dec, ast.Call) and self._is_tool_ref(dec.func):
            return True, dec
        return False, None

    def _bind(self, name: str, tool: ToolDef | None) -> None:
        # Re-insert so that dict order follows the latest binding.
        self._bindings.pop(name, None)
        self._bindings[name] = tool
        self._functions.pop(name, None)

    def tools(self) -> tuple[ToolDef, ...]:
        found = [t for t in self._bindings.values() if t is not None]
        found.sort(key=lambda t: (t.def_range.start, t.name_range.start))
        return tuple(found)

    # -- statements ---------------------------------------------------------------------------

    def visit_body(self, body: Sequence[ast.stmt]) -> None:
        stack: list[ast.stmt] = list(reversed(body))
        while stack:
            stmt = stack.pop()
            self._visit(stmt)
            fields = _STATEMENT_BODIES.get(stmt.__class__)
            if fields is None:  # no nested statements, or a def/class
                continue
            nested: list[ast.stmt] = []
            for field in fields:
                items = getattr(stmt, field, None)
                if not isinstance(items, list):
                    continue
                for item in items:
                    if isinstance(item, ast.stmt):
                        nested.append(item)
                    else:  # except handler / match case
                        inner = getattr(item, "body", None)
                        if isinstance(inner, list):
                            nested.extend(s for s in inner if isinstance(s, ast.stmt))
            stack.extend(reversed(nested))

    def _visit(self, stmt: ast.stmt) -> None:
        node: Any = stmt
        cls = node.__class__  # ast.parse makes no subclasses: identity tests suffice
        if cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
            self._visit_def(node)
        elif cls is ast.Assign:
            for target in node.targets:
                self._visit_target(target, node.value, node)
        elif cls is ast.ImportFrom:
            self._visit_import_from(node)
        elif cls is ast.Import:
            for alias in node.names:
                self._bind(alias.asname or alias.name.split(".")[0], None)
        elif cls is ast.ClassDef:
            self._bind(node.name, None)
        elif cls is ast.AnnAssign:
            if node.value is not None:
                self._visit_target(node.target, node.value, node)
        elif cls is ast.Delete:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self._bind(target.id, None)

    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        is_async = isinstance(node, ast.AsyncFunctionDef)
        params = _params_of(node.args)
        decorators = node.decorator_list
        is_tool = False
        decorator_call: ast.Call | None = None
        for dec in decorators:
            is_tool, decorator_call = self._tool_decorator(dec)
            if is_tool:
                break
        if not is_tool:
            self._bind(node.name, None)
            self._functions[node.name] = _FnInfo(is_async, params, node.args, not decorators)
            return
        text = self._text
        stmt_range = self._pos.range_of(node)
        start = stmt_range.start
        first = self._pos.start_of(decorators[0])  # a tool decorator was found: not empty
        at = first - 1
        while at >= 0 and text[at] in _LINE_SPACE:
            at -= 1
        start = min(start, at if at >= 0 and text[at] == "@" else first)
        description, has_kw = _description(decorator_call)
        tool = _new_tool_def(
            node.name,
            _def_name_range(text, node, stmt_range.start),
            "decorated",
            description,
            is_async,
            has_kw,
            params,
            new_range(TextRange, (start, stmt_range.end)),
            _signature(self._pos, node.args),
            node.args.kwarg is not None,
            len(decorators) == 1,
        )
        self._bind(node.name, tool)
        self._functions[node.name] = _FnInfo(is_async, params, node.args, False)

    def _visit_target(self, target: ast.expr, value: ast.expr, stmt: ast.stmt) -> None:
        if not isinstance(target, ast.Name):
            for node in ast.walk(target):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    self._bind(node.id, None)
            return
        tool = self._tool_from_value(target, value, stmt)
        self._bind(target.id, tool)

    def _tool_from_value(self, target: ast.Name, value: ast.expr, stmt: ast.stmt) -> ToolDef | None:
        name_range = self._pos.range_of(target)
        def_range = self._pos.range_of(stmt)
        if isinstance(value, ast.Name):
            # ``alias = some_tool``: the same tool object under another module-level name.
            known = self._bindings.get(value.id)
            if known is None:
                return None
            return ToolDef(
                name=target.id,
                name_range=name_range,
                kind="possible" if known.kind == "possible" else "assigned",
                description=known.description,
                is_async=known.is_async,
                has_description_kw=known.has_description_kw,
                params=known.params,
                def_range=def_range,
                signature=known.signature,
                var_keyword=known.var_keyword,
                exact=known.exact,
                imported=known.imported,
            )
        if not isinstance(value, ast.Call):
            return None
        decorator_call: ast.Call | None = None
        wrapped: ast.expr | None = None
        if isinstance(value.func, ast.Call) and self._is_tool_ref(value.func.func):
            decorator_call = value.func  # tool(...)(fn)
            wrapped = value.args[0] if value.args else None
        elif self._is_tool_ref(value.func):
            if not value.args:
                return None  # ``deco = tool(description=...)`` is a decorator, not a tool
            decorator_call = value  # tool(fn)
            wrapped = value.args[0]
        if decorator_call is not None:
            description, has_kw = _description(decorator_call)
            info = _FnInfo(False, (), None, False)
            if isinstance(wrapped, ast.Name):
                info = self._functions.get(wrapped.id, info)
            elif isinstance(wrapped, ast.Lambda):
                info = _FnInfo(False, _params_of(wrapped.args), wrapped.args, True)
            exact = info.args is not None and info.plain and len(value.args) == 1
            return ToolDef(
                name=target.id,
                name_range=name_range,
                kind="assigned",
                description=description,
                is_async=info.is_async,
                has_description_kw=has_kw,
                params=info.params,
                def_range=def_range,
                signature=_signature(self._pos, info.args),
                var_keyword=info.args is not None and info.args.kwarg is not None,
                exact=exact,
            )
        callee = _callee_name(value.func)
        if callee in _NOT_TOOL_CALLEES or _is_environ_get(value.func):
            return None
        description, has_kw = _description(value)
        return ToolDef(
            name=target.id,
            name_range=name_range,
            kind="possible",
            description=description,
            is_async=False,
            has_description_kw=has_kw,
            params=(),
            def_range=def_range,
        )

    def _visit_import_from(self, stmt: ast.ImportFrom) -> None:
        module = stmt.module or ""
        project_local = stmt.level > 0 or module.partition(".")[0] in _PROJECT_MODULE_ROOTS
        for alias in stmt.names:
            if alias.name == "*":
                continue
            bound = alias.asname or alias.name
            if alias.name == "tool":
                self._tool_aliases.add(bound)
            if not project_local:
                self._bind(bound, None)
                continue
            alias_range = self._pos.range_of(alias)
            name_start = alias_range.start
            if alias.asname is not None:
                at = alias_range.end
                while at > alias_range.start and _is_ident_char(self._text[at - 1]):
                    at -= 1
                name_start = at
            self._bind(
                bound,
                ToolDef(
                    name=bound,
                    name_range=TextRange(name_start, alias_range.end),
                    kind="possible",
                    description=None,
                    is_async=False,
                    has_description_kw=False,
                    params=(),
                    def_range=self._pos.range_of(stmt),
                    imported=(module, stmt.level, alias.name),
                ),
            )


def _is_environ_get(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "get"
        and isinstance(func.value, (ast.Attribute, ast.Name))
        and _callee_name(func.value) == "environ"
    )


# ---------------------------------------------------------------------------------------------
# Obsolete imports

_CALM_V2 = "rasa.calm_v2"
_RASA_SDK = "rasa_sdk"
_DECORATOR_NAMES = frozenset({"tool", "ToolContext"})
_RESULT_NAMES = frozenset({"ToolResult", "ActivateSkill"})


def _is_obsolete(module: str, names: Sequence[str] | None = None) -> bool:
    """Whether importing ``module`` (``names`` from it, for ``from … import``) fails on
    rasa-pro 3.21: ``rasa.calm_v2`` is gone; ``rasa_sdk`` is installed with rasa-pro but
    has none of the Mantle tool names."""
    if module == _CALM_V2 or module.startswith(_CALM_V2 + "."):
        return True
    in_sdk = module == _RASA_SDK or module.startswith(_RASA_SDK + ".")
    return in_sdk and names is not None and bool(set(names) & (_DECORATOR_NAMES | _RESULT_NAMES))


def _replacement(module: str, imported: Sequence[str]) -> str:
    if module == _CALM_V2 or module.startswith(_CALM_V2 + "."):
        return "rasa.mantle" + module[len(_CALM_V2) :]
    names = set(imported)
    if names and names <= _RESULT_NAMES:
        return "rasa.mantle.tools.result"
    if names & _DECORATOR_NAMES:
        return "rasa.mantle.tools.decorator"
    return "rasa.mantle.tools"


# Exceptions whose handler catches a failed import.
_IMPORT_CATCHERS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    """A bare ``except``, or one naming a catcher (``builtins.ImportError``, in a tuple)."""
    kind = handler.type
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(_callee_name(n) in _IMPORT_CATCHERS for n in names)


def _is_type_checking(test: ast.expr) -> bool:
    return _callee_name(test) == "TYPE_CHECKING"


def _inner_guard(outer: ImportGuard, inner: ImportGuard) -> ImportGuard:
    """A silent guard (``try``, ``type_checking``) wins; ``function`` wins over none."""
    if outer == "try" or outer == "type_checking":
        return outer
    return inner


def _imports_obsolete(body: list[ast.stmt]) -> bool:
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import) and any(_is_obsolete(a.name) for a in node.names):
                return True
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and node.module is not None
                and _is_obsolete(node.module, [a.name for a in node.names])
            ):
                return True
    return False


def _guarded_imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, ImportGuard]]:
    """Every import statement with the guard it sits under, in source order."""
    out: list[tuple[ast.Import | ast.ImportFrom, ImportGuard]] = []
    stack: list[tuple[ast.stmt, ImportGuard]] = [(s, "none") for s in reversed(tree.body)]
    while stack:
        stmt, guard = stack.pop()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.append((stmt, guard))
            continue
        nested: list[tuple[ast.stmt, ImportGuard]] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = _inner_guard(guard, "function")
            nested = [(s, inner) for s in stmt.body]
        elif isinstance(stmt, ast.If):
            body_guard = (
                _inner_guard(guard, "type_checking") if _is_type_checking(stmt.test) else guard
            )
            nested = [(s, body_guard) for s in stmt.body] + [(s, guard) for s in stmt.orelse]
        elif isinstance(stmt, ast.Try) or stmt.__class__.__name__ == "TryStar":
            handlers: list[ast.ExceptHandler] = getattr(stmt, "handlers", [])
            caught = any(_catches_import_error(h) for h in handlers)
            body_guard = _inner_guard(guard, "try") if caught else guard
            body: list[ast.stmt] = getattr(stmt, "body", [])
            nested = [(s, body_guard) for s in body]
            # A handler runs only when the body failed: an import there is a fallback, unless
            # the body itself imports an obsolete module (then it always fails).
            handler_guard = guard if _imports_obsolete(body) else _inner_guard(guard, "try")
            for h in handlers:
                nested += [(s, handler_guard) for s in h.body]
            nested += [(s, guard) for s in getattr(stmt, "orelse", [])]
            nested += [(s, guard) for s in getattr(stmt, "finalbody", [])]
        else:
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                items = getattr(stmt, name, None)
                if not isinstance(items, list):
                    continue
                for item in items:
                    if isinstance(item, ast.stmt):
                        nested.append((item, guard))
                    else:  # a match case
                        inner_body = getattr(item, "body", None)
                        if isinstance(inner_body, list):
                            nested += [(s, guard) for s in inner_body if isinstance(s, ast.stmt)]
        stack.extend(reversed(nested))
    return out


_SYS_PATH = re.compile(r"\bsys\s*\.\s*path\b")
# Without one of these, an ASCII module imports nothing :func:`_imports` reports (non-ASCII
# text may spell identifiers with other characters, NFKC, so it is always walked).
_IMPORT_WORDS = ("calm_v2", "rasa_sdk", "lib", "from .")


def _imports(
    text: str, pos: SourcePositions, tree: ast.Module
) -> tuple[list[ObsoleteImport], list[ProjectImport]]:
    """Imports of obsolete engine modules and of the project's ``lib`` package."""
    obsolete: list[ObsoleteImport] = []
    project: list[ProjectImport] = []
    if "import" not in text or (text.isascii() and not any(word in text for word in _IMPORT_WORDS)):
        return obsolete, project  # no module this function reports on is named
    for stmt, guard in _guarded_imports(tree):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.name
                is_lib = name == "lib" or name.startswith("lib.")
                if not (is_lib or _is_obsolete(name)):
                    continue
                alias_range = pos.range_of(alias)
                rng = _dotted_name_range(text, alias_range.start, alias_range.end) or alias_range
                if is_lib:
                    project.append(ProjectImport(name, rng, guard))
                else:
                    obsolete.append(ObsoleteImport(name, rng, _replacement(name, ()), guard))
            continue
        module = stmt.module
        if stmt.level:  # relative: the engine imports tool modules as plain files
            stmt_range = pos.range_of(stmt)
            dots = "." * stmt.level + (module or "")
            at = text.find(".", stmt_range.start, stmt_range.end)
            rng = TextRange(at, at + len(dots)) if at >= 0 else stmt_range
            if text[rng.start : rng.end] != dots:
                rng = stmt_range
            project.append(ProjectImport(dots, rng, guard))
            continue
        if module is None:
            continue
        is_lib = module == "lib" or module.startswith("lib.")
        if not (is_lib or _is_obsolete(module, [a.name for a in stmt.names])):
            continue
        stmt_range = pos.range_of(stmt)
        found: TextRange | None = None
        if text.startswith("from", stmt_range.start):
            at = _skip_blanks(text, stmt_range.start + 4)
            found = _dotted_name_range(text, at, stmt_range.end)
        rng = found or stmt_range
        if is_lib:
            project.append(ProjectImport(module, rng, guard))
        else:
            replacement = _replacement(module, [a.name for a in stmt.names])
            obsolete.append(ObsoleteImport(module, rng, replacement, guard))
    obsolete.sort(key=lambda o: o.range.start)
    project.sort(key=lambda o: o.range.start)
    return obsolete, project


# ---------------------------------------------------------------------------------------------
# Whole-tree walk

# Nodes that can neither be reported nor contain a reported node: they are never visited.
_LEAF_NODES: tuple[type[ast.AST], ...] = (
    ast.expr_context,
    ast.boolop,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
    ast.Name,
    ast.Constant,
    ast.alias,
    ast.type_ignore,
)
# Fields whose values are never a node worth visiting: leaf nodes (``names`` holds aliases or
# strings; a 3.12 ``type X = ...`` has a Name as its ``name``), strings, ints or None.
_LEAF_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "names",
        "type_ignores",
        "id",
        "attr",
        "arg",
        "name",
        "module",
        "level",
        "type_comment",
        "kind",
        "is_async",
        "conversion",
        "simple",
    }
)


def _child_fields() -> dict[type[ast.AST], tuple[str, ...]]:
    """For every node class worth visiting: the fields that may hold children, reversed."""
    table: dict[type[ast.AST], tuple[str, ...]] = {}
    for cls in vars(ast).values():
        if (
            isinstance(cls, type)
            and issubclass(cls, ast.AST)
            and not issubclass(cls, _LEAF_NODES)
            and cls._fields
        ):
            table[cls] = tuple(f for f in reversed(cls._fields) if f not in _LEAF_FIELDS)
    return table


_CHILD_FIELDS = _child_fields()

_CALL_RANGE = attrgetter("call_range")  # a TextRange: sorts by (start, end)

# Last names of the callees :meth:`_Analyzer._call` can report on (it ignores other calls).
_MEMORY_METHODS = ("get", "set")
_CALLEES = frozenset({*_MEMORY_METHODS, "clear_entries", "getattr", "attrgetter", "ActivateSkill"})

# Words without which an ASCII module has nothing for :class:`_Analyzer` to report: each
# construct it reports spells one of them as an identifier (``.memory``, ``._memory``, a
# ``mem``-like parameter, ``clear_entries``, ``getattr``, ``attrgetter``, ``ActivateSkill``).
# Non-ASCII text may spell identifiers with other characters (NFKC), so it is always walked.
# (Imports are found by a walk over statements only: :func:`_imports`.)
_ANALYZER_WORDS = (
    "mem",
    "clear_entries",
    "getattr",
    "attrgetter",
    "ActivateSkill",
)


def _memory_like(name: str) -> bool:
    """A parameter name that helpers use for the memory object (``memory``, ``mem``,
    ``skill_memory``, ``memory_manager``…)."""
    low = name.lower()
    return (
        low in ("mem", "memory") or low.endswith(("_mem", "_memory")) or low.startswith("memory_")
    )


def _may_report(text: str) -> bool:
    if not text.isascii():
        return True
    return any(word in text for word in _ANALYZER_WORDS)


class _Analyzer:
    def __init__(self, text: str, pos: SourcePositions) -> None:
        self._text = text
        self._pos = pos
        self.memory_calls: list[MemoryCall] = []
        self.bypasses: list[Bypass] = []
        self.activations: list[SkillActivation] = []
        # memory calls whose key or receiver needs the module's scopes (see finish)
        self.pending: list[tuple[ast.Call, str, frozenset[str] | None, bool]] = []
        self.memory_attrs: list[ast.Attribute] = []  # every ``<x>.memory`` seen
        self.handled: set[int] = set()  # ids of those that are a get/set receiver
        self.other_methods: list[ast.Call] = []  # ``<x>.memory.<other>(...)``
        self.indirect: list[MemoryCall] = []
        self.imported: list[ImportedKey] = []
        self.dynamic: list[DynamicKey] = []

    def run(self, tree: ast.Module) -> None:
        if _may_report(self._text):
            self._walk(tree)
            self.finish(tree)
        self.memory_calls.sort(key=_CALL_RANGE)
        self.bypasses.sort(key=lambda b: (b.line, b.what, b.range.start))

    def finish(self, tree: ast.Module) -> None:
        """Resolve the keys of the pending memory calls; record memory used as a value."""
        range_of = self._pos.range_of
        for call in self.other_methods:
            self.dynamic.append(DynamicKey("method", range_of(call)))
        self.handled.update(id(c.func.value) for c in self.other_methods)  # type: ignore[attr-defined]
        for attr in self.memory_attrs:
            if id(attr) not in self.handled:
                self.dynamic.append(DynamicKey("escape", range_of(attr)))
        if self.pending:
            scope = _ModuleScope(tree)
            for node, method, _params, guessed in self.pending:
                self._resolve(scope, node, method, guessed)
        self.indirect.sort(key=lambda c: (c.call_range, c.entry_range))
        self.imported.sort(key=lambda k: (k.call_range, k.range))
        self.dynamic.sort(key=lambda d: (d.range, d.what))

    def _walk(self, tree: ast.Module) -> None:
        """Visit every node in pre-order, knowing the parameters of its innermost ``def``.

        Like the engine, everything below a ``def`` node (decorators and defaults included)
        is "inside" it; lambdas and classes do not change the innermost function. Leaf nodes
        are skipped (see :data:`_LEAF_NODES`). Iterative, so deeply nested expressions cannot
        overflow the Python stack: leaving a ``def`` is a ``(params,)`` marker on the stack
        below the def's children. ``ast.parse`` makes no subclasses of node classes, so the
        dispatch compares classes by identity. The result is the one of visiting every node
        with ``ast.iter_child_nodes`` (``test_walk_reports_what_the_plain_walk_reports``).
        """
        child_fields = _CHILD_FIELDS
        params: frozenset[str] | None = None
        stack: list[Any] = [tree]
        pop = stack.pop
        push = stack.append
        while stack:
            node = pop()
            cls = node.__class__
            if cls is ast.Call:
                func = node.func
                callee = func.__class__
                if callee is ast.Attribute:
                    if func.attr in _MEMORY_METHODS:
                        self._memory_call(node, func, params)  # what _call would do
                    elif func.attr in _CALLEES:
                        self._call(node, params)
                    else:
                        owner = func.value
                        if owner.__class__ is ast.Attribute and owner.attr == "memory":
                            self.other_methods.append(node)
                elif callee is ast.Name and func.id in _CALLEES:
                    self._call(node, params)
                # Keyword values and arguments are visited after the callee (pushed first);
                # a keyword's only child worth visiting is its value.
                # ``helper(context.memory)`` passes memory on to code whose calls are seen
                # on their own (a lib helper's ``memory.set("x")``): not an unknown use.
                for keyword in reversed(node.keywords):
                    value = keyword.value
                    if value.__class__ in child_fields:
                        push(value)
                        if value.__class__ is ast.Attribute and value.attr == "memory":
                            self.handled.add(id(value))
                for item in reversed(node.args):
                    if item.__class__ in child_fields:
                        push(item)
                        if item.__class__ is ast.Attribute and item.attr == "memory":
                            self.handled.add(id(item))
                node = func
                cls = callee
                if cls is not ast.Attribute:
                    if cls in child_fields:
                        push(node)
                    continue
            if cls is ast.Attribute:
                # An attribute chain (``a.b.c``) in one go: each link's only child is the next.
                while cls is ast.Attribute:
                    attr = node.attr
                    if attr == "memory":
                        self.memory_attrs.append(node)
                    elif attr == "_memory":
                        owner = node.value
                        if owner.__class__ is ast.Attribute and owner.attr == "memory":
                            self._bypass(node, node, "_memory")
                    node = node.value
                    cls = node.__class__
                if cls in child_fields:
                    push(node)
                continue
            if cls is tuple:
                params = node[0]
                continue
            if cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
                push((params,))
                params = _all_param_names(node.args)
            elif cls is ast.Import or cls is ast.ImportFrom:
                continue  # only aliases below; imports are found by _imports
            for name in child_fields[cls]:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    for item in reversed(value):
                        if item.__class__ in child_fields:
                            push(item)
                elif value.__class__ in child_fields:
                    push(value)

    def _bypass(self, node: ast.AST, line_node: ast.AST, what: str) -> None:
        line = getattr(line_node, "lineno", None) or 1
        self.bypasses.append(Bypass(self._pos.range_of(node), line, what))

    def _call(self, node: ast.Call, params: frozenset[str] | None) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in _MEMORY_METHODS:
                self._memory_call(node, func, params)
                return  # none of the tests below holds for a ``.get``/``.set`` callee
            if func.attr == "clear_entries":
                self._bypass(node, func, "clear_entries")
                return
        if (
            isinstance(func, ast.Name)
            and func.id == "getattr"
            and len(node.args) >= 2
            and _plain_str(node.args[1]) == "_memory"
        ):
            self._bypass(node, node, "getattr_memory")
        elif (
            _callee_name(func) == "attrgetter"
            and node.args
            and _plain_str(node.args[0]) == "_memory"
        ):
            self._bypass(node, node, "attrgetter_memory")
        elif _callee_name(func) == "ActivateSkill":
            self._activation(node)

    def _memory_call(
        self, node: ast.Call, func: ast.Attribute, params: frozenset[str] | None
    ) -> None:
        memory = func.value
        method = "get" if func.attr == "get" else "set"
        if not (isinstance(memory, ast.Attribute) and memory.attr == "memory"):
            if (
                isinstance(memory, ast.Name)
                and params is not None
                and memory.id in params
                and _memory_like(memory.id)
            ):
                self.pending.append((node, method, params, True))
            return
        self.handled.add(id(memory))
        entry_node = _key_node(node)
        entry = _plain_str(entry_node)
        if entry is None or entry_node is None:
            self.pending.append((node, method, params, False))
            return
        receiver = memory.value
        range_of = self._pos.range_of
        if isinstance(receiver, ast.Name):
            name = receiver.id
            counted = params is not None and name in params
        else:
            receiver_range = range_of(receiver)
            name = self._text[receiver_range.start : receiver_range.end]
            counted = False
        literal_range = range_of(entry_node)
        self.memory_calls.append(
            _new_memory_call(
                "get" if func.attr == "get" else "set",
                entry,
                _content_range(self._text, literal_range, entry),
                literal_range,
                range_of(node),
                node.lineno,
                counted,
                name,
            )
        )

    def _literal_arg(
        self, node: ast.Call, keyword: str, index: int
    ) -> tuple[str | None, TextRange | None]:
        value: ast.expr | None = None
        for kw in node.keywords:
            if kw.arg == keyword:
                value = kw.value
                break
        else:
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if len(positional) == len(node.args) and index < len(node.args):
                value = node.args[index]
        literal = _plain_str(value)
        if literal is None or value is None:
            return None, None
        return literal, _content_range(self._text, self._pos.range_of(value), literal)

    def _activation(self, node: ast.Call) -> None:
        skill_id, skill_range = self._literal_arg(node, "skill_id", 0)
        block, block_range = self._literal_arg(node, "ordered_block", 1)
        if skill_id is None and block is None:
            return
        self.activations.append(SkillActivation(skill_id, skill_range, block, block_range))

    def _resolve(self, scope: _ModuleScope, node: ast.Call, method: str, guessed: bool) -> None:
        """Record a pending memory call as indirect, imported or dynamic."""
        range_of = self._pos.range_of
        func = node.func
        assert isinstance(func, ast.Attribute)
        memory = func.value
        if isinstance(memory, ast.Attribute):
            receiver_range = range_of(memory.value)
            receiver = self._text[receiver_range.start : receiver_range.end]
        else:
            receiver = memory.id if isinstance(memory, ast.Name) else "memory"
        get_or_set: Literal["get", "set"] = "get" if method == "get" else "set"
        key = _key_node(node)
        call_range = range_of(node)
        if key is None:
            self.dynamic.append(DynamicKey(method, call_range))
            return
        literal = _plain_str(key)
        found: tuple[KeyVia, list[ast.Constant]] | ImportedKey | None
        if literal is not None:
            assert isinstance(key, ast.Constant)
            found = ("parameter", [key])
        else:
            found = scope.resolve(key, node, get_or_set, range_of)
        if found is None:
            self.dynamic.append(DynamicKey(method, range_of(key)))
        elif isinstance(found, ImportedKey):
            self.imported.append(found)
        else:
            via, literals = found
            for lit in literals:
                value = lit.value
                assert isinstance(value, str)
                lit_range = range_of(lit)
                self.indirect.append(
                    _new_memory_call(
                        get_or_set,
                        value,
                        _content_range(self._text, lit_range, value),
                        lit_range,
                        call_range,
                        node.lineno,
                        False,
                        receiver,
                        "parameter" if guessed and via == "parameter" else via,
                    )
                )


def _key_node(node: ast.Call) -> ast.expr | None:
    """The key argument of a ``get``/``set`` call (first positional or ``entry=``); None
    when it is given through ``*args``/``**kwargs``."""
    if node.args:
        first = node.args[0]
        return None if isinstance(first, ast.Starred) else first
    for kw in node.keywords:
        if kw.arg == "entry":
            return kw.value
    return None


_Binding = Any  # an assigned value (ast.expr), "import", or None (any other binding)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _ModuleScope:
    """What resolving a non-literal memory key needs: the parents of every node and the
    module-level bindings (built only for modules that have such a key)."""

    def __init__(self, tree: ast.Module) -> None:
        self.parents: dict[int, ast.AST] = {}
        self.globals: set[str] = set()
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
            if isinstance(parent, ast.Global):
                self.globals.update(parent.names)
        self.bindings: dict[str, list[_Binding]] = {}
        self.imported: dict[str, tuple[int, str, str]] = {}  # local -> (level, module, name)
        self.modules: dict[str, str] = {}  # local -> module, for `import a.b as c`
        stack: list[ast.stmt] = list(reversed(tree.body))
        while stack:
            stmt = stack.pop()
            self._bind_statement(stmt)
            fields = _STATEMENT_BODIES.get(stmt.__class__)
            if fields is None:
                continue
            nested: list[ast.stmt] = []
            for name in fields:
                for item in getattr(stmt, name, None) or ():
                    if isinstance(item, ast.stmt):
                        nested.append(item)
                    else:
                        nested.extend(
                            s for s in getattr(item, "body", ()) if isinstance(s, ast.stmt)
                        )
            stack.extend(reversed(nested))

    def _add(self, name: str, value: _Binding) -> None:
        self.bindings.setdefault(name, []).append(value)

    def _bind_statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self._add(target.id, stmt.value)
                else:
                    self._bind_names(target)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                if isinstance(stmt.target, ast.Name):
                    self._add(stmt.target.id, stmt.value)
                else:
                    self._bind_names(stmt.target)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                self._add(local, "import")
                self.imported[local] = (stmt.level, stmt.module or "", alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                local = alias.asname or alias.name.split(".")[0]
                self._add(local, "import")
                self.modules[local] = alias.name if alias.asname else local
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._add(stmt.name, None)
        elif isinstance(stmt, (ast.AugAssign, ast.For, ast.AsyncFor)):
            self._bind_names(stmt.target)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._bind_names(item.optional_vars)

    def _bind_names(self, target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self._add(node.id, None)

    # -- resolving ----------------------------------------------------------------------------

    def resolve(
        self,
        key: ast.expr,
        call: ast.Call,
        method: Literal["get", "set"],
        range_of: Any,
    ) -> tuple[KeyVia, list[ast.Constant]] | ImportedKey | None:
        """The literal(s) a key expression stands for, or the imported name it is; None
        when it cannot be known."""
        function, loops = self._enclosing(call)
        if isinstance(key, ast.Name):
            name = key.id
            for target, iterable in loops:
                bound = _binds(target, name)
                if bound is None:
                    continue
                if bound == "other":
                    return None
                literals = self._container_keys(
                    iterable, isinstance(target, ast.Tuple | ast.List), function
                )
                return ("loop", literals) if literals else None
            if function is not None:
                local = self._local(function, name)
                if isinstance(local, ast.Constant):
                    return ("constant", [local])
                if local is not None:
                    return None
            return self._module_name(name, key, call, method, range_of)
        if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name):
            owner = key.value.id
            if function is not None and self._local(function, owner) is not None:
                return None
            if self.bindings.get(owner) == ["import"] and owner not in self.globals:
                module: str | None = None
                level = 0
                if owner in self.modules:
                    module = self.modules[owner]
                elif owner in self.imported:
                    level, base, member = self.imported[owner]
                    module = f"{base}.{member}" if base else member
                if module is not None:
                    return ImportedKey(
                        method, module, level, key.attr, range_of(key), range_of(call)
                    )
        return None

    def _enclosing(
        self, node: ast.AST
    ) -> tuple[
        ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None, list[tuple[ast.expr, ast.expr]]
    ]:
        """The innermost function around ``node`` and the loops (target, iterable) between
        them, innermost first."""
        loops: list[tuple[ast.expr, ast.expr]] = []
        child: ast.AST = node
        parent = self.parents.get(id(child))
        while parent is not None:
            if isinstance(parent, _FUNCTIONS):
                return parent, loops
            if isinstance(parent, (ast.For, ast.AsyncFor)):
                if child is not parent.iter and child is not parent.target:
                    loops.append((parent.target, parent.iter))
            elif isinstance(parent, _COMPREHENSIONS):
                for gen in reversed(parent.generators):
                    if child is not gen:
                        loops.append((gen.target, gen.iter))
            child = parent
            parent = self.parents.get(id(child))
        return None, loops

    def _local(self, function: ast.AST, name: str) -> ast.Constant | str | None:
        """How ``name`` is bound inside ``function``: None (not bound there), the literal of
        its only binding ``name = "..."``, or ``"dynamic"``."""
        assert isinstance(function, _FUNCTIONS)
        args = function.args
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if any(a is not None and a.arg == name for a in every):
            return "dynamic"
        values: list[ast.expr | None] = []
        body = function.body if isinstance(function.body, list) else [function.body]
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Global) and name in node.names:
                    return None
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets
                ):
                    values.append(node.value)
                elif (
                    isinstance(node, ast.Name)
                    and node.id == name
                    and isinstance(node.ctx, ast.Store)
                ):
                    values.append(None)
        if not values:
            return None
        # `x = "lit"` is counted twice: as an Assign and as its Name target
        if len(values) == 2 and values[0] is not None and values[1] is None:
            value = values[0]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value
        return "dynamic"

    def _module_value(self, name: str) -> ast.expr | None:
        bound = self.bindings.get(name)
        if bound is None or len(bound) != 1 or name in self.globals:
            return None
        value = bound[0]
        return value if isinstance(value, ast.expr) else None

    def _module_name(
        self, name: str, key: ast.Name, call: ast.Call, method: Literal["get", "set"], range_of: Any
    ) -> tuple[KeyVia, list[ast.Constant]] | ImportedKey | None:
        value = self._module_value(name)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return ("constant", [value])
        if (
            self.bindings.get(name) == ["import"]
            and name in self.imported
            and name not in self.globals
        ):
            level, module, member = self.imported[name]
            return ImportedKey(method, module, level, member, range_of(key), range_of(call))
        return None

    def _container_keys(
        self, iterable: ast.expr, pairs: bool, function: ast.AST | None
    ) -> list[ast.Constant] | None:
        """The string literals a loop over ``iterable`` binds its (first) target to."""
        base = iterable
        method: str | None = None
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("items", "keys")
            and not iterable.args
            and not iterable.keywords
        ):
            method = iterable.func.attr
            base = iterable.func.value
        if (method == "items") != pairs:
            return None
        if isinstance(base, ast.Name):
            if function is not None and self._local(function, base.id) is not None:
                return None
            value = self._module_value(base.id)
            if value is None:
                return None
            base = value
        items: list[ast.expr | None]
        if isinstance(base, ast.Dict):
            items = list(base.keys)
        elif method is None and isinstance(base, (ast.Tuple, ast.List, ast.Set)):
            items = list(base.elts)
        else:
            return None
        out: list[ast.Constant] = []
        for item in items:
            if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
                return None
            out.append(item)
        return out


def _binds(target: ast.expr, name: str) -> str | None:
    """Whether a loop target binds ``name``: ``"key"`` as the whole target or the first
    element of a tuple target, ``"other"`` elsewhere in it, None not at all."""
    if isinstance(target, ast.Name):
        return "key" if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts:
        first = target.elts[0]
        if isinstance(first, ast.Name) and first.id == name:
            return "key"
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and node.id == name:
            return "other"
    return None


# ---------------------------------------------------------------------------------------------
# Entry point


def _error_issue(text: str, pos: SourcePositions, base: int, exc: BaseException) -> SyntaxIssue:
    size = len(text)
    start = end = base
    if isinstance(exc, SyntaxError):
        message = f"Python syntax error: {exc.msg}"
        if exc.lineno is not None:
            start = pos.offset(exc.lineno, (exc.offset or 1) - 1, chars=True)
            end_line = exc.end_lineno if exc.end_lineno is not None else exc.lineno
            end_col = exc.end_offset
            if end_col is not None and end_col > 0:
                end = pos.offset(end_line, end_col - 1, chars=True)
            else:
                end = start
        elif "\0" in text:
            start = end = text.index("\0")
    elif isinstance(exc, UnicodeError):
        message = f"Python cannot read this module: {exc}"
        bad = getattr(exc, "start", None)
        if isinstance(bad, int):
            start = end = base + bad
    elif isinstance(exc, ValueError):
        message = f"Python cannot parse this module: {exc}"
        if "\0" in text:
            start = end = text.index("\0")
    elif isinstance(exc, (RecursionError, MemoryError)):
        message = "Python cannot parse this module: it is nested too deeply"
        end = pos.line_end_at(base)
    else:
        message = f"Python cannot parse this module: {exc}"
        end = pos.line_end_at(base)
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    if end == start and start < size and text[start] not in "\r\n":
        end = start + 1
    return SyntaxIssue(SYNTAX_ERROR_CODE, message, TextRange(start, end), "error")


def _string_constants(tree: ast.Module) -> tuple[tuple[str, str], ...]:
    """Top-level ``NAME = "text"`` (or annotated) assignments, each name bound once."""
    seen: dict[str, str | None] = {}
    for stmt in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and value is not None:
            literal = _plain_str(value)
            seen[target.id] = literal if target.id not in seen else None
    return tuple((k, v) for k, v in seen.items() if v is not None)


def constant_literals(text: str) -> dict[str, TextRange]:
    """The module-level string constants of a module that nothing can rebind, each with the
    range of its literal's text (inside the quotes): what a rename edits when a memory key
    arrives through the constant, and what a check may trust. A name is left out when the
    module binds it anywhere else (in any scope: another assignment, ``for``, ``with``,
    ``import``, ``def``, ``del``), names it in ``global``/``nonlocal``, or spells the literal
    other than plainly (escapes, implicit concatenation). Never raises: text that does not
    parse has none."""
    base = 1 if text.startswith(BOM) else 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text[base:])
    except Exception:
        return {}
    pos = SourcePositions(text, base)
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = list(node.names) * 2  # never a constant
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name.split(".")[0]]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, (ast.MatchAs, ast.MatchStar, ast.ExceptHandler)) and node.name:
            names = [node.name]
        for name in names:
            bound[name] = bound.get(name, 0) + 1
    out: dict[str, TextRange] = {}
    for stmt in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        literal = _plain_str(value)
        if not isinstance(target, ast.Name) or literal is None or value is None:
            continue
        if bound.get(target.id) != 1:
            continue
        rng = _content_range(text, pos.range_of(value), literal)
        if rng.length == len(literal) and text[rng.start : rng.end] == literal:
            out[target.id] = rng
    return out


def parse_tools_module(text: str) -> tuple[ToolModule, tuple[SyntaxIssue, ...]]:
    """Analyse a tool module's source without importing it. Never raises on any input."""
    base = 1 if text.startswith(BOM) else 0
    pos = SourcePositions(text, base)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text[base:])
    except Exception as exc:  # SyntaxError, ValueError, RecursionError, MemoryError, ...
        return EMPTY_MODULE, (_error_issue(text, pos, base, exc),)

    collector = _ToolCollector(text, pos)
    collector.visit_body(tree.body)
    analyzer = _Analyzer(text, pos)
    analyzer.run(tree)
    obsolete, project_imports = _imports(text, pos, tree)

    module = ToolModule(
        tools=collector.tools(),
        memory_calls=tuple(analyzer.memory_calls),
        bypasses=tuple(analyzer.bypasses),
        activations=tuple(analyzer.activations),
        obsolete_imports=tuple(obsolete),
        indirect_calls=tuple(analyzer.indirect),
        imported_keys=tuple(analyzer.imported),
        dynamic_keys=tuple(analyzer.dynamic),
        constants=_string_constants(tree),
        project_imports=tuple(project_imports),
        sys_path_shim="sys" in text and _SYS_PATH.search(text) is not None,
    )
    return module, ()
