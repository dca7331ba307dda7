"""Hook modules (``hooks.py``, ``hooks/**/*.py``): the static analysis in
``mantle_lsp.syntax.hooks_py`` and the six engine hook rules (docs/language/config.md#hooks), each
on
the narrowest range that shows the cause. Hook modules are never imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.model.layout import FileKind, classify, hook_files
from mantle_lsp.model.project import Project
from mantle_lsp.model.source import source_from_text
from mantle_lsp.syntax.hooks_py import DECORATORS, HOOK_POINTS, parse_hooks_module
from support import check_clean, check_diagnostics, diagnostics_of, marked, write_fixture

IMPORTS = """\
from rasa.mantle.hooks import (
    HookRejection,
    OutgoingTextPayload,
    RetryModel,
    ToolCallPayload,
    ToolResultPayload,
    TurnStartedPayload,
    modify_outgoing_text,
    modify_tool_call,
    modify_tool_result,
    on_tool_call,
    on_turn_started,
)
"""


def hooks(body: str, path: str = "hooks.py", imports: str = IMPORTS) -> str:
    return f"//- {path}\n{imports}\n\n{body}"


# =============================================================================================
# the catalogue


def test_the_hook_point_catalogue() -> None:
    assert list(HOOK_POINTS) == [
        "turn_started",
        "turn_finished",
        "incoming_message",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "knowledge_query",
        "knowledge_results",
        "outgoing_text",
    ]
    assert "modify_turn_started" not in DECORATORS and "on_turn_finished" in DECORATORS
    assert len(DECORATORS) == 18
    assert HOOK_POINTS["tool_call"].signals == {"RetryModel"}
    assert HOOK_POINTS["outgoing_text"].signals == {"HookRejection"}
    assert HOOK_POINTS["tool_result"].signals == frozenset()


# =============================================================================================
# valid modules


def test_valid_hooks_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        hooks(
            """\
@on_turn_started()
async def greet(payload: TurnStartedPayload) -> None:
    pass


@on_tool_call(timeout_ms=50)
async def log_call(payload: ToolCallPayload):
    raise HookRejection("observers are not checked for control signals")


@on_tool_call()
async def log_again(payload: "ToolCallPayload", /) -> "None":
    pass


@modify_tool_call()
async def steer(payload: ToolCallPayload) -> ToolCallPayload:
    if payload.tool_name == "refund":
        raise RetryModel("offer a voucher")
    return payload


@modify_outgoing_text()
async def redact(payload: OutgoingTextPayload) -> OutgoingTextPayload:
    raise HookRejection("no")


def helper(x, y):  # not a hook
    return x
"""
        ),
        silent=[
            "unknown_point",
            "invalid_signature",
            "non_async_handler",
            "unsupported_control_signal",
            "duplicate_modifier",
            "import_failed",
        ],
    )


def test_module_aliases_and_future_annotations_are_understood(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- hooks/audit/calls.py
from __future__ import annotations

import rasa.mantle.hooks as H
from rasa.mantle import hooks
from rasa.mantle.hooks import payloads
from rasa.mantle.hooks.decorators import modify_tool_result as modify_result

if True:

    @H.modify_model_response(timeout_ms=100)
    async def mr(p: H.ModelResponsePayload) -> payloads.ModelResponsePayload:
        raise RetryModel("again")


@hooks.on_knowledge_query()
async def kq(p: hooks.KnowledgeQueryPayload) -> None:
    return None


@modify_result()
async def tr(p: payloads.ToolResultPayload) -> H.ToolResultPayload:
    return p
//- hooks/__init__.py
x = (
""",
    )


def test_project_code_annotations_are_not_judged(tmp_path: Path) -> None:
    # a name imported from project code may be the payload class re-exported: unknown
    check_clean(
        tmp_path,
        hooks(
            """\
from lib.types import Payload


@modify_tool_call()
async def steer(payload: Payload) -> Payload:
    return payload
"""
        )
        + """\
//- lib/__init__.py
//- lib/types.py
from rasa.mantle.hooks import ToolCallPayload as Payload
""",
    )


def test_a_missing_lib_module_fails_the_import(tmp_path: Path) -> None:
    # the engine imports hook modules with the project root on sys.path
    got = check_diagnostics(
        tmp_path,
        hooks(
            """\
import «hooks.import_failed:lib.audit» as audit
from «hooks.import_failed:lib.types» import Payload
from lib import helpers

try:
    import lib.optional
except ImportError:
    pass


@on_tool_call()
async def seen(payload: ToolCallPayload) -> None:
    audit.log(payload, helpers, Payload)
"""
        )
        + "//- lib/helpers.py\nX = 1\n",
    )
    assert "lib/types.py" in got[1][5]


# =============================================================================================
# import_failed


def test_syntax_error_is_import_failed(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- hooks/broken.py
def broken(«hooks.import_failed::»
    pass
""",
    )
    assert "cannot import this hook module" in got[0][5]


def test_names_the_hook_api_lacks(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- hooks.py
import rasa.mantle.hooks as H
from rasa.mantle.hooks import «hooks.import_failed:modify_turn_started», ToolCallPayload
from rasa.mantle.hooks import «hooks.import_failed:on_tool_calls» as otc
from rasa.mantle.hooks import «hooks.import_failed:ToolCallPayloads»
from rasa.mantle.hooks import decorators, something_else


@H.«hooks.import_failed:on_tool_calls»()
async def a(payload: ToolCallPayload) -> None:
    pass


@«hooks.import_failed:on_tool_result»()
async def b(payload: ToolCallPayload) -> None:
    pass
""",
    )
    msgs = [g[5] for g in got]
    assert "`turn_started` can only be observed: use `on_turn_started`" in msgs[0]
    assert "did you mean `on_tool_call`" in msgs[1]
    assert "did you mean `ToolCallPayload`" in msgs[2]
    assert "import it from rasa.mantle.hooks" in msgs[-1]


def test_bare_decorator_and_undefined_annotation(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        hooks(
            """\
@«hooks.import_failed:on_tool_call»
async def a(payload: ToolCallPayload) -> None:
    pass


@on_tool_call()
async def b(payload: «hooks.import_failed:Undefined») -> None:
    pass
"""
        ),
    )


def test_star_import_hides_undefined_names(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- hooks.py
from rasa.mantle.hooks import *


@on_tool_call()
async def a(payload: ToolCallPayload) -> None:
    pass
""",
    )


# =============================================================================================
# unknown_point, non_async_handler, invalid_signature


def test_unknown_point(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- hooks.py
async def audit(payload):
    return None


audit._hook_point = «unknown_point:"tool_calls"»
setattr(audit, "_hook_point", «unknown_point:'turn_start'»)
audit._hook_point = "tool_call"
""",
    )
    assert "did you mean `tool_call`" in got[0][5]


def test_non_async_handler(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        hooks(
            """\
@on_tool_call()
«non_async_handler:def» log_call(payload: ToolCallPayload, extra) -> None:
    raise HookRejection("not checked: the function is not async")


@modify_tool_call()
«non_async_handler:def» steer(payload: ToolCallPayload) -> ToolCallPayload:
    return payload
"""
        ),
    )
    assert "async def log_call" in got[0][5]


def test_invalid_signatures(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        hooks(
            """\
@on_tool_call()
async def two(payload: ToolCallPayload, «invalid_signature:extra, *rest») -> None:
    pass


@on_tool_call()
async def «invalid_signature:none»() -> None:
    pass


@on_tool_call()
async def bare(«invalid_signature:payload») -> None:
    pass


@on_tool_call()
async def wrong(payload: «invalid_signature:OutgoingTextPayload») -> None:
    pass


@on_tool_call()
async def builtin(payload: «invalid_signature:dict») -> None:
    pass


@on_turn_started()
async def returns(payload: TurnStartedPayload) -> «invalid_signature:TurnStartedPayload»:
    pass


@modify_tool_call()
async def «invalid_signature:no_return»(payload: ToolCallPayload):
    return payload


@modify_tool_result()
async def optional(payload: ToolResultPayload) -> «invalid_signature:ToolResultPayload | None»:
    return payload


@modify_outgoing_text()
async def nothing(payload: OutgoingTextPayload) -> «invalid_signature:None»:
    return None
"""
        ),
    )
    by_range = {g[5] for g in got}
    assert any("exactly one parameter" in m and "(it takes 3)" in m for m in by_range)
    assert any("must be `ToolCallPayload`, not `OutgoingTextPayload`" in m for m in by_range)
    assert any("`-> ToolCallPayload`" in m for m in by_range)


def test_unresolvable_deferred_annotation(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        """\
//- hooks.py
from __future__ import annotations

from rasa.mantle.hooks import on_tool_call


@on_tool_call()
async def a(payload: «invalid_signature:ToolCallPayload») -> None:
    pass


@on_tool_call()
async def b(payload: «invalid_signature:"Missing"») -> None:
    pass
""",
    )
    assert "cannot be resolved" in got[0][5]


def test_a_later_def_replaces_an_earlier_one(tmp_path: Path) -> None:
    # only the module-level binding is registered; nested functions are not hooks
    check_diagnostics(
        tmp_path,
        hooks(
            """\
@on_tool_call()
async def same(payload: int) -> None:
    pass


@on_tool_call()
async def same(payload: «invalid_signature:str») -> None:
    pass


def outer():
    @on_tool_call()
    async def nested(payload: int) -> None:
        pass

    return nested
"""
        ),
    )


# =============================================================================================
# unsupported_control_signal, duplicate_modifier


def test_unsupported_control_signals(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        hooks(
            """\
@modify_tool_call()
async def steer(payload: ToolCallPayload) -> ToolCallPayload:
    if payload.arguments:
        raise «unsupported_control_signal:HookRejection»("no")
    raise RetryModel("again")


@modify_outgoing_text()
async def redact(payload: OutgoingTextPayload) -> OutgoingTextPayload:
    raise «unsupported_control_signal:RetryModel»


@modify_tool_result()
async def result(payload: ToolResultPayload) -> ToolResultPayload:
    async def inner():
        raise «unsupported_control_signal:HookRejection»("nested, still this hook")

    return payload
"""
        ),
    )
    assert "(it allows: RetryModel)" in got[0][5]
    assert "(it allows: no control signal)" in got[2][5]


def test_duplicate_modifier_in_one_module(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        hooks(
            """\
@modify_tool_call()
async def first(payload: ToolCallPayload) -> ToolCallPayload:
    return payload


@on_tool_call()
async def observer(payload: ToolCallPayload) -> None:
    pass


@«duplicate_modifier:modify_tool_call»()
async def second(payload: ToolCallPayload) -> ToolCallPayload:
    return payload
"""
        ),
    )
    assert "`first` already modifies `tool_call`" in got[0][5]


def test_duplicate_modifier_across_modules_in_loading_order(tmp_path: Path) -> None:
    mod = """\
from rasa.mantle.hooks import ToolCallPayload, modify_tool_call


@{mark}()
async def {name}(payload: ToolCallPayload) -> ToolCallPayload:
    return payload
"""
    got = check_diagnostics(
        tmp_path,
        "//- hooks/z.py\n"
        + mod.format(mark="«duplicate_modifier:modify_tool_call»", name="z")
        + "//- hooks.py\n"
        + mod.format(mark="modify_tool_call", name="root")
        + "//- hooks/a/b.py\n"
        + mod.format(mark="«duplicate_modifier:modify_tool_call»", name="ab")
        + "//- hooks/__pycache__/c.py\n"
        + mod.format(mark="modify_tool_call", name="cached"),
    )
    assert {g[5].split(" already")[0] for g in got} == {"`root` in hooks.py"}


# =============================================================================================
# the model: discovery, order, incremental updates


def test_hook_files_are_found_in_the_engines_order(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        "//- hooks/z.py\n\n//- hooks/a.py\n\n//- hooks/a/b.py\n\n//- hooks.py\n\n"
        "//- hooks/__init__.py\n\n//- hooks/__pycache__/x.py\n\n//- hooks/notes.txt\n\n",
    )
    rel = [p.relative_to(fx.root).as_posix() for p in hook_files(fx.root)]
    assert rel == ["hooks.py", "hooks/a/b.py", "hooks/a.py", "hooks/z.py"]
    assert classify(fx.root / "hooks/__init__.py", fx.root) is None
    assert classify(fx.root / "hooks/__pycache__/x.py", fx.root) is None
    assert classify(fx.root / "hooks/a/b.py", fx.root) == (FileKind.HOOKS, None)
    proj = Project.load(fx.root)
    assert [pf.path.relative_to(fx.root).as_posix() for pf, _ in proj.hook_files()] == rel


def test_editing_one_hook_module_updates_the_others(tmp_path: Path) -> None:
    mod = (
        "from rasa.mantle.hooks import ToolCallPayload, modify_tool_call\n\n\n"
        "@modify_tool_call()\nasync def {0}(p: ToolCallPayload) -> ToolCallPayload:\n"
        "    return p\n"
    )
    fx = write_fixture(tmp_path, "//- hooks.py\n" + mod.format("a") + "//- hooks/b.py\n\n")
    proj = Project.load(fx.root)
    b = fx.root / "hooks" / "b.py"
    affected = proj.set_source(b, source_from_text(b, mod.format("b")))
    assert fx.root / "hooks.py" in affected
    (fx.root / "hooks" / "b.py").write_text(mod.format("b"), encoding="utf-8")
    codes = [(g[0], g[3]) for g in diagnostics_of(fx.root)]
    assert codes == [("hooks/b.py", "mantle.validation.hooks.duplicate_modifier")]


# =============================================================================================
# the parser


def test_parser_extracts_ranges() -> None:
    text, r = marked(
        """\
        from rasa.mantle.hooks import ToolCallPayload, «modify_tool_call» as m
        @«m»(timeout_ms=1)
        «async def» «steer»(«p: «ToolCallPayload»») -> «ToolCallPayload»:
            raise «RetryModel»("x")
        """
    )
    mod, issues = parse_hooks_module(text)
    assert issues == () and mod.ok and mod.bad_names == ()
    (h,) = mod.hooks
    assert (h.func, h.point, h.lane, h.decorator, h.is_async, h.called) == (
        "steer",
        "tool_call",
        "modify",
        "modify_tool_call",
        True,
        True,
    )
    assert h.decorator_range == r[1] and h.def_range == r[2] and h.name_range == r[3]
    assert h.params_range == r[4] and h.param.range == r[5] and h.returns.range == r[6]
    assert (h.param.kind, h.param.name, h.returns.kind) == ("api", "ToolCallPayload", "api")
    assert [(x.signal, x.range) for x in h.raises] == [("RetryModel", r[7])]


def test_parser_reports_syntax_errors_with_ranges() -> None:
    text, r = marked("x = 1\ny = «)»\n")
    mod, issues = parse_hooks_module(text)
    assert not mod.ok and mod.hooks == ()
    assert [(i.code, i.range) for i in issues] == [("mantle.validation.hooks.import_failed", r[0])]


def test_parser_handles_astral_text_and_bom() -> None:
    text, r = marked(
        '\ufeffs = "😀😀"\nfrom rasa.mantle.hooks import on_tool_call\n'
        "@on_tool_call()\ndef «h»(p): pass  # 😀\n"
    )
    mod, _ = parse_hooks_module(text)
    assert mod.hooks[0].name_range == r[0]


FRAGMENTS = [
    "from rasa.mantle.hooks import ",
    "on_tool_call",
    "modify_tool_call",
    "ToolCallPayload",
    ", ",
    "\n",
    "@",
    "()",
    "async ",
    "def f(",
    "p: ",
    ") -> ",
    ":\n    ",
    "raise HookRejection",
    "'x'",
    "import rasa.mantle.hooks as H\n",
    "H.",
    "f._hook_point = ",
    "😀",
    "\t",
    "(",
    ")",
    "lambda: 0",
    "from __future__ import annotations\n",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_parser_never_raises_and_ranges_stay_inside(text: str) -> None:
    mod, issues = parse_hooks_module(text)
    n = len(text)
    ranges = [i.range for i in issues]
    for h in mod.hooks:
        ranges += [h.name_range, h.def_range, h.decorator_range, h.params_range]
        ranges += [a.range for a in (h.param, h.returns) if a.range is not None]
        ranges += [x.range for x in h.raises]
    ranges += [b.range for b in mod.bad_names] + [m.range for m in mod.manual_points]
    for rng in ranges:
        assert 0 <= rng.start <= rng.end <= n


def test_the_hook_parser_is_loaded_only_for_a_project_with_hook_modules(tmp_path: Path) -> None:
    # `check` of a project without hooks never imports it (~6 ms of every start)
    script = (
        "import sys\n"
        "from mantle_lsp.cli.main import main\n"
        "code = main(['check', '--jobs', '1', sys.argv[1]])\n"
        "print(code, 'mantle_lsp.syntax.hooks_py' in sys.modules)\n"
    )
    skill = "//- skills/s/skill.md\n---\ndescription: S.\n---\nHi.\n"
    sync_hook = "@on_turn_started()\ndef greet(payload: TurnStartedPayload) -> None:\n    pass\n"
    seen = {}
    for name, text in (("plain", skill), ("hooked", skill + hooks(sync_hook))):
        root = write_fixture(tmp_path / name, text).root
        run = [sys.executable, "-c", script, str(root)]
        seen[name] = subprocess.run(run, capture_output=True, text=True).stdout.split()[-2:]
    assert seen["plain"] == ["0", "False"]
    assert seen["hooked"] == ["1", "True"]  # and its non-async handler is reported
