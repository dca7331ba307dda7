"""Static analysis of Mantle hook modules (``hooks.py`` and ``hooks/**/*.py``).

The module text is parsed with :mod:`ast`; it is **never** imported or executed. A hook is
a module-level function decorated with one of the hook decorators of ``rasa.mantle.hooks``:
``@on_<point>()`` registers an *observer*, ``@modify_<point>()`` the point's single
*modifier*. The catalogue below (:data:`HOOK_POINTS`) is the engine's list of hook points,
written down as data: each point's payload class, whether it has a modify lane, and which
control signals a modifier of that point may raise.

What is extracted, for :mod:`mantle_lsp.ide.rules.hooks` to judge:

* each hook: its function, decorator, point and lane, whether it is ``async``, its
  parameters and what its annotations resolve to, and the control signals it raises;
* imports of names that ``rasa.mantle.hooks`` does not have (the module fails to import);
* ``<function>._hook_point = "<name>"`` assignments, the one way to name a point that no
  decorator declares.

All ranges are code-point offsets into the text given to :func:`parse_hooks_module`; the
columns :mod:`ast` reports (UTF-8 bytes) are converted.
"""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from dataclasses import dataclass
from typing import Literal

from .errors import SyntaxIssue
from .text import BOM, TextRange
from .tools_py import SourcePositions

IMPORT_FAILED = "mantle.validation.hooks.import_failed"

Lane = Literal["observe", "modify"]


@dataclass(frozen=True)
class HookPoint:
    name: str
    payload: str  # the payload class a handler takes (and a modifier returns)
    modify: bool  # False: observers only (`on_<point>`)
    signals: frozenset[str]  # control signals a modifier may raise


CONTROL_SIGNALS = ("HookRejection", "RetryModel")

HOOK_POINTS: dict[str, HookPoint] = {
    p.name: p
    for p in (
        HookPoint("turn_started", "TurnStartedPayload", False, frozenset()),
        HookPoint("turn_finished", "TurnFinishedPayload", False, frozenset()),
        HookPoint("incoming_message", "IncomingMessagePayload", True, frozenset({"HookRejection"})),
        HookPoint("model_request", "ModelRequestPayload", True, frozenset()),
        HookPoint("model_response", "ModelResponsePayload", True, frozenset({"RetryModel"})),
        HookPoint("tool_call", "ToolCallPayload", True, frozenset({"RetryModel"})),
        HookPoint("tool_result", "ToolResultPayload", True, frozenset()),
        HookPoint("knowledge_query", "KnowledgeQueryPayload", True, frozenset()),
        HookPoint("knowledge_results", "KnowledgeResultsPayload", True, frozenset()),
        HookPoint("outgoing_text", "OutgoingTextPayload", True, frozenset({"HookRejection"})),
    )
}

# decorator name -> (point, lane)
DECORATORS: dict[str, tuple[str, Lane]] = {}
for _p in HOOK_POINTS.values():
    DECORATORS[f"on_{_p.name}"] = (_p.name, "observe")
    if _p.modify:
        DECORATORS[f"modify_{_p.name}"] = (_p.name, "modify")

PAYLOADS = frozenset(p.payload for p in HOOK_POINTS.values())
API_MODULE = "rasa.mantle.hooks"
# what `from rasa.mantle.hooks import …` offers besides the decorators and payload classes
API_OTHER = frozenset(
    {"CallInfo", "ChannelInfo", "HookPayload", "HookControlFlow", *CONTROL_SIGNALS}
)
API_NAMES = frozenset(DECORATORS) | PAYLOADS | API_OTHER
# submodules whose names we know: decorators live in one, payload classes in the other
API_SUBMODULES = {
    f"{API_MODULE}.decorators": frozenset(DECORATORS),
    f"{API_MODULE}.payloads": PAYLOADS | {"CallInfo", "ChannelInfo", "HookPayload"},
    f"{API_MODULE}.exceptions": frozenset({"HookControlFlow", *CONTROL_SIGNALS}),
}
# names that look like part of the hook API: a wrong one is certainly an import error
_API_LIKE = re.compile(r"(on|modify)_\w+\Z|\w*Payloads?\Z")


@dataclass(frozen=True)
class Annotation:
    """What an annotation resolves to, as far as the module text tells.

    ``kind``: ``missing`` (none written), ``none`` (``None``), ``api`` (a name of the hook
    API: ``name`` holds it), ``other`` (certainly not a payload class: a builtin, a local
    class, a subscript such as ``Optional[…]``; ``name`` holds its text), ``unbound`` (a
    name defined nowhere, so it cannot be resolved), ``unknown`` (cannot be told without
    importing, e.g. a name imported from project code)."""

    kind: Literal["missing", "none", "api", "other", "unbound", "unknown"]
    name: str = ""
    range: TextRange | None = None
    deferred: bool = False  # a string, or under `from __future__ import annotations`


@dataclass(frozen=True)
class Raise:
    signal: str  # HookRejection or RetryModel
    range: TextRange  # the signal's name


@dataclass(frozen=True)
class Hook:
    func: str
    name_range: TextRange  # the function name
    def_range: TextRange  # the `def` keyword (where `async` belongs)
    decorator: str  # e.g. "modify_tool_call"
    decorator_range: TextRange  # the decorator's own name
    point: str
    lane: Lane
    called: bool  # written `@decorator(...)`; a bare `@decorator` fails at import
    is_async: bool
    param_count: int
    params_range: TextRange  # the parameters (the function name when there are none)
    extra_params_range: TextRange | None  # the parameters after the first one
    param: Annotation  # the first parameter's annotation
    returns: Annotation
    raises: tuple[Raise, ...]  # control signals raised in an async def of this name


@dataclass(frozen=True)
class BadName:
    """A hook-API name that does not exist (the module fails to import)."""

    name: str
    range: TextRange
    how: Literal["import", "attribute", "undefined"]


@dataclass(frozen=True)
class ManualPoint:
    """``<func>._hook_point = "<point>"``: a point named without a decorator."""

    func: str
    point: str
    range: TextRange  # the point's string literal


@dataclass(frozen=True)
class ModuleImport:
    """An absolute import the module runs when it is loaded (not guarded by `try`)."""

    module: str  # the dotted module path, e.g. "lib.types"
    range: TextRange  # the dotted path in the source


@dataclass(frozen=True)
class HookModule:
    hooks: tuple[Hook, ...] = ()
    bad_names: tuple[BadName, ...] = ()
    manual_points: tuple[ManualPoint, ...] = ()
    imports: tuple[ModuleImport, ...] = ()
    ok: bool = True  # False: the module does not parse


EMPTY = HookModule(ok=False)

_BUILTINS = frozenset(dir(builtins))


def parse_hooks_module(text: str) -> tuple[HookModule, tuple[SyntaxIssue, ...]]:
    """Analyse a hook module's source without importing it. Never raises on any input."""
    base = 1 if text.startswith(BOM) else 0
    pos = SourcePositions(text, base)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text[base:])
    except Exception as exc:  # SyntaxError, ValueError, RecursionError, MemoryError, ...
        return EMPTY, (_syntax_issue(text, pos, base, exc),)
    try:
        return _Analyzer(text, pos, tree).run(), ()
    except RecursionError:  # a pathologically nested expression
        return HookModule(), ()


def _syntax_issue(text: str, pos: SourcePositions, base: int, exc: BaseException) -> SyntaxIssue:
    start = end = base
    if isinstance(exc, SyntaxError):
        msg = f"Python syntax error: {exc.msg}"
        if exc.lineno is not None:
            start = pos.offset(exc.lineno, (exc.offset or 1) - 1, chars=True)
            end = start
            if exc.end_lineno is not None and exc.end_offset is not None and exc.end_offset > 0:
                end = pos.offset(exc.end_lineno, exc.end_offset - 1, chars=True)
    elif isinstance(exc, (RecursionError, MemoryError)):
        msg = "Python cannot parse this module: it is nested too deeply"
    else:
        msg = f"Python cannot parse this module: {exc}"
    start = min(max(start, 0), len(text))
    end = min(max(end, start), len(text))
    if end == start:  # show at least one character, or the rest of an empty line
        line_end = text.find("\n", start)
        end = min(start + 1, len(text) if line_end < 0 else max(line_end, start))
    msg = f"{msg}: the engine cannot import this hook module"
    return SyntaxIssue(IMPORT_FAILED, msg, TextRange(start, end))


# -- analysis -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Binding:
    kind: Literal["api", "module", "other", "local_class", "local"]
    target: str = ""  # api: the API name; module: the dotted module path


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, looking inside `if` / `try` / `with` (not functions)."""
    out: list[ast.stmt] = []
    stack = list(reversed(body))
    while stack:
        st = stack.pop()
        out.append(st)
        inner: list[ast.stmt] = []
        if isinstance(st, ast.If):
            inner = st.body + st.orelse
        elif isinstance(st, ast.Try):
            inner = st.body + [s for h in st.handlers for s in h.body] + st.orelse + st.finalbody
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            inner = st.body
        stack.extend(reversed(inner))
    return out


class _Analyzer:
    def __init__(self, text: str, pos: SourcePositions, tree: ast.Module) -> None:
        self.text = text
        self.pos = pos
        self.tree = tree
        self.stmts = _top_level(tree.body)
        self.bindings: dict[str, _Binding] = {}
        self.star = False
        self.future = False
        self.bad: list[BadName] = []

    # -- names -----------------------------------------------------------------------------
    def bind_names(self) -> None:
        for st in self.stmts:
            if isinstance(st, ast.ImportFrom):
                self.bind_from(st)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        self.bindings[a.asname] = _Binding("module", a.name)
                    else:
                        top = a.name.split(".")[0]
                        self.bindings[top] = _Binding("module", top)
            elif isinstance(st, ast.ClassDef):
                self.bindings[st.name] = _Binding("local_class")
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bindings[st.name] = _Binding("local")
            elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)):
                for n in ast.walk(st):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        self.bindings.setdefault(n.id, _Binding("local"))
        for n in ast.walk(self.tree):  # walrus targets and the like, anywhere
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                self.bindings.setdefault(n.target.id, _Binding("local"))

    def bind_from(self, st: ast.ImportFrom) -> None:
        mod = st.module or ""
        if st.level == 0 and mod == "__future__":
            self.future = self.future or any(a.name == "annotations" for a in st.names)
            return
        full = mod if st.level == 0 else ""
        for a in st.names:
            if a.name == "*":
                self.star = True
                continue
            local = a.asname or a.name
            if full == API_MODULE or full in API_SUBMODULES:
                known = API_NAMES if full == API_MODULE else API_SUBMODULES[full]
                if a.name in known:
                    self.bindings[local] = _Binding("api", a.name)
                    continue
                if full == API_MODULE and f"{API_MODULE}.{a.name}" in API_SUBMODULES:
                    self.bindings[local] = _Binding("module", f"{API_MODULE}.{a.name}")
                    continue
                if _API_LIKE.match(a.name):
                    self.bad.append(BadName(a.name, self.alias_range(st, a), "import"))
                self.bindings[local] = _Binding("other", full)
            elif full and f"{full}.{a.name}" in (API_MODULE, *API_SUBMODULES):
                self.bindings[local] = _Binding("module", f"{full}.{a.name}")
            else:
                self.bindings[local] = _Binding("other", full)

    def alias_range(self, st: ast.ImportFrom, a: ast.alias) -> TextRange:
        if hasattr(a, "lineno"):  # Python 3.10+
            r = self.pos.range_of(a)
            return TextRange(r.start, r.start + len(a.name))
        return self.pos.range_of(st)

    # -- expressions ---------------------------------------------------------------------------
    def resolve(self, e: ast.expr) -> tuple[str, str] | None:
        """("api", name) / ("module", path) / ("other", text) for a name or dotted name;
        ("unbound", name) for a name bound nowhere; None when it cannot be told."""
        if isinstance(e, ast.Name):
            b = self.bindings.get(e.id)
            if b is None:
                if e.id in _BUILTINS:
                    return ("other", e.id)
                return None if self.star else ("unbound", e.id)
            if b.kind in ("api", "module"):
                return (b.kind, b.target)
            if b.kind == "local_class":
                return ("other", e.id)
            return None
        if isinstance(e, ast.Attribute):
            inner = self.resolve(e.value)
            if inner is None or inner[0] != "module":
                return None
            path = f"{inner[1]}.{e.attr}"
            if path in (API_MODULE, *API_SUBMODULES) or API_MODULE.startswith(path + "."):
                return ("module", path)
            if inner[1] == API_MODULE or inner[1] in API_SUBMODULES:
                known = API_NAMES if inner[1] == API_MODULE else API_SUBMODULES[inner[1]]
                if e.attr in known:
                    return ("api", e.attr)
                if _API_LIKE.match(e.attr):
                    return ("missing", e.attr)
            return None
        return None

    def annotation(self, e: ast.expr | None, deferred: bool = False) -> Annotation:
        if e is None:
            return Annotation("missing")
        rng = self.pos.range_of(e)
        deferred = deferred or self.future
        if isinstance(e, ast.Constant):
            if e.value is None:
                return Annotation("none", "None", rng, deferred)
            if isinstance(e.value, str):
                try:
                    inner = ast.parse(e.value.strip(), mode="eval").body
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    return Annotation("unknown", e.value, rng, True)
                a = self.annotation(inner, deferred=True)
                return Annotation(a.kind, a.name, rng, True)
            return Annotation("other", repr(e.value), rng, deferred)
        if isinstance(e, (ast.Name, ast.Attribute)):
            r = self.resolve(e)
            if r is None:
                return Annotation("unknown", ast.unparse(e), rng, deferred)
            if r[0] == "api":
                return Annotation("api", r[1], rng, deferred)
            if r[0] in ("unbound", "missing"):
                return Annotation("unbound", r[1], rng, deferred)
            return Annotation("other", ast.unparse(e), rng, deferred)
        # Optional[X], X | None, list[X], calls, …: never the payload class itself
        return Annotation("other", ast.unparse(e), rng, deferred)

    # -- hooks ----------------------------------------------------------------------------------
    def run(self) -> HookModule:
        self.bind_names()
        raises = self.signal_raises()
        hooks: dict[str, Hook] = {}  # a later def of the same name replaces the earlier one
        for st in self.stmts:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hooks.pop(st.name, None)
                h = self.hook(st, raises.get(st.name, ()))
                if h is not None:
                    hooks[st.name] = h
        self.undefined_decorators()
        return HookModule(
            hooks=tuple(hooks.values()),
            bad_names=tuple(self.bad),
            manual_points=tuple(self.manual_points()),
            imports=tuple(self.unguarded_imports()),
        )

    def unguarded_imports(self) -> list[ModuleImport]:
        """Absolute imports at module level, also inside `if` / `with`, but not inside
        `try` (an import there may be expected to fail)."""
        out: list[ModuleImport] = []
        stack = list(reversed(self.tree.body))
        while stack:
            st = stack.pop()
            if isinstance(st, ast.If):
                stack.extend(reversed(st.body + st.orelse))
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                stack.extend(reversed(st.body))
            elif isinstance(st, ast.Import):
                for a in st.names:
                    start = self.pos.range_of(a).start if hasattr(a, "lineno") else -1
                    if start >= 0 and self.text.startswith(a.name, start):
                        out.append(ModuleImport(a.name, TextRange(start, start + len(a.name))))
            elif isinstance(st, ast.ImportFrom) and st.level == 0 and st.module:
                r = self.pos.range_of(st)
                m = re.compile(r"from\s+").match(self.text, r.start)
                if m is not None and self.text.startswith(st.module, m.end()):
                    end = m.end() + len(st.module)
                    out.append(ModuleImport(st.module, TextRange(m.end(), end)))
        return out

    def signal_raises(self) -> dict[str, tuple[Raise, ...]]:
        """Control signals raised (by their bare name) in each async def, anywhere."""
        out: dict[str, list[Raise]] = {}
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.AsyncFunctionDef):
                continue
            for child in ast.walk(node):
                if not isinstance(child, ast.Raise) or child.exc is None:
                    continue
                callee = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                if isinstance(callee, ast.Name) and callee.id in CONTROL_SIGNALS:
                    out.setdefault(node.name, []).append(
                        Raise(callee.id, self.pos.range_of(callee))
                    )
        return {k: tuple(v) for k, v in out.items()}

    def decorator_of(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[str, TextRange, bool] | None:
        for dec in fn.decorator_list:
            called = isinstance(dec, ast.Call)
            target = dec.func if isinstance(dec, ast.Call) else dec
            r = self.resolve(target)
            if r is None:
                continue
            if r[0] == "missing":
                self.bad.append(BadName(r[1], self.name_range(target), "attribute"))
                continue
            if r[0] == "api" and r[1] in DECORATORS:
                return r[1], self.name_range(target), called
        return None

    def name_range(self, e: ast.expr) -> TextRange:
        r = self.pos.range_of(e)
        if isinstance(e, ast.Attribute):
            return TextRange(max(r.start, r.end - len(e.attr)), r.end)
        return r

    def hook(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, raises: tuple[Raise, ...]
    ) -> Hook | None:
        found = self.decorator_of(fn)
        if found is None:
            return None
        dec, dec_range, called = found
        point, lane = DECORATORS[dec]
        a = fn.args
        params: list[ast.arg] = [*a.posonlyargs, *a.args]
        if a.vararg is not None:
            params.append(a.vararg)
        params.extend(a.kwonlyargs)
        if a.kwarg is not None:
            params.append(a.kwarg)
        params.sort(key=lambda p: (p.lineno, p.col_offset))
        name_range = self.def_name_range(fn)
        if params:
            first, last = self.pos.range_of(params[0]), self.pos.range_of(params[-1])
            params_range = TextRange(first.start, last.end)
            extra = (
                TextRange(self.pos.range_of(params[1]).start, last.end) if len(params) > 1 else None
            )
        else:
            params_range, extra = name_range, None
        first_param = params[0] if params else None
        return Hook(
            func=fn.name,
            name_range=name_range,
            def_range=self.def_keyword_range(fn),
            decorator=dec,
            decorator_range=dec_range,
            point=point,
            lane=lane,
            called=called,
            is_async=isinstance(fn, ast.AsyncFunctionDef),
            param_count=len(params),
            params_range=params_range,
            extra_params_range=extra,
            param=self.annotation(first_param.annotation if first_param else None),
            returns=self.annotation(fn.returns),
            raises=raises,
        )

    def def_keyword_range(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> TextRange:
        start = self.pos.offset(fn.lineno, fn.col_offset)
        kw = "async def" if isinstance(fn, ast.AsyncFunctionDef) else "def"
        if self.text.startswith(kw, start):
            return TextRange(start, start + len(kw))
        return TextRange(start, start)

    def def_name_range(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> TextRange:
        start = self.pos.offset(fn.lineno, fn.col_offset)
        line_end = self.text.find("\n", start)
        line = self.text[start : len(self.text) if line_end < 0 else line_end]
        m = re.search(rf"\bdef\s+({re.escape(fn.name)})\b", line)
        if m is None:
            return TextRange(start, start)
        return TextRange(start + m.start(1), start + m.end(1))

    def undefined_decorators(self) -> None:
        """A hook decorator used without being imported: the module fails at import."""
        if self.star:
            return
        for st in self.stmts:
            if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for dec in st.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if (
                    isinstance(target, ast.Name)
                    and target.id not in self.bindings
                    and target.id not in _BUILTINS
                    and _API_LIKE.match(target.id)
                ):
                    self.bad.append(BadName(target.id, self.pos.range_of(target), "undefined"))

    def manual_points(self) -> list[ManualPoint]:
        funcs = {
            st.name for st in self.stmts if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        out: list[ManualPoint] = []
        for st in self.stmts:
            target: ast.expr | None = None
            value: ast.expr | None = None
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, ast.Attribute) and t.attr == "_hook_point":
                    target, value = t.value, st.value
            elif (
                isinstance(st, ast.Expr)
                and isinstance(st.value, ast.Call)
                and isinstance(st.value.func, ast.Name)
                and st.value.func.id == "setattr"
                and len(st.value.args) == 3
                and isinstance(st.value.args[1], ast.Constant)
                and st.value.args[1].value == "_hook_point"
            ):
                target, value = st.value.args[0], st.value.args[2]
            if (
                isinstance(target, ast.Name)
                and target.id in funcs
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                out.append(ManualPoint(target.id, value.value, self.pos.range_of(value)))
        return out
