"""Tests for the static tool-module analyser (``mantle_lsp.syntax.tools_py``).

Fixtures mark expected ranges inline with ``«…»`` (nesting allowed; ``support.marked``
strips the marks and returns the ranges in the order their ``«`` appears).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.syntax import tools_py
from mantle_lsp.syntax.text import BOM, TextRange
from mantle_lsp.syntax.tools_py import (
    SYNTAX_ERROR_CODE,
    Bypass,
    MemoryCall,
    ObsoleteImport,
    SourcePositions,
    ToolDef,
    ToolModule,
    ToolParam,
    parse_tools_module,
)
from support import issue_list, marked

REPO = Path(__file__).resolve().parents[1]


def parse_ok(text: str) -> ToolModule:
    module, issues = parse_tools_module(text)
    assert issues == ()
    return module


def tools_by_name(module: ToolModule) -> dict[str, ToolDef]:
    return {t.name: t for t in module.tools}


def calls_by_entry(module: ToolModule) -> dict[str, MemoryCall]:
    result: dict[str, MemoryCall] = {}
    for call in module.memory_calls:
        assert call.entry not in result, f"duplicate entry {call.entry} in fixture"
        result[call.entry] = call
    return result


# ---------------------------------------------------------------------------------------------
# Tool discovery


def test_decorated_tool_ranges_and_contract() -> None:
    text, (def_r, name_r) = marked(
        """\
        from rasa.mantle.tools.decorator import ToolContext, tool

        «@tool(description="Look up " "orders")
        async def «list_orders»(
            status: str, /, limit: int = 3, *rest, flag: bool = False,
            context: ToolContext = None, **extra,
        ) -> None:
            pass»
        """
    )
    (t,) = parse_ok(text).tools
    assert t == ToolDef(
        name="list_orders",
        name_range=name_r,
        kind="decorated",
        description="Look up orders",
        is_async=True,
        has_description_kw=True,
        params=("status", "limit", "flag"),
        def_range=def_r,
        signature=(
            ToolParam("status", "str", None, True, _name_at(text, "status")),
            ToolParam("limit", "int", "3", False, _name_at(text, "limit")),
            ToolParam("flag", "bool", "False", False, _name_at(text, "flag")),
        ),
        var_keyword=True,
        exact=True,
    )
    assert [p.required for p in t.signature] == [True, False, False]


def _name_at(text: str, name: str) -> TextRange:
    start = text.index(f"{name}:")
    return TextRange(start, start + len(name))


def _core(t: ToolDef) -> ToolDef:
    """A tool without its signature details (asserted on their own)."""
    return dataclasses.replace(t, signature=(), var_keyword=False, exact=False, imported=None)


def test_decorator_forms() -> None:
    text = textwrap.dedent(
        """\
        import rasa.mantle.tools.decorator as deco
        from rasa.mantle.tools.decorator import tool as make
        from somewhere import other

        @tool
        async def bare(): ...

        @deco.tool(description=f"computed {1}")
        def attr_call(context): ...

        @deco.tool
        async def attr_bare(): ...

        @other
        @make(description="aliased")
        async def via_alias(x): ...

        @other(description="not a tool")
        async def not_a_tool(): ...

        @tool(description="a" + "b")
        async def expression_description(): ...
        """
    )
    tools = tools_by_name(parse_ok(text))
    assert set(tools) == {
        "bare",
        "attr_call",
        "attr_bare",
        "via_alias",
        "expression_description",
    }
    assert all(t.kind == "decorated" for t in tools.values())
    assert (tools["bare"].has_description_kw, tools["bare"].description) == (False, None)
    assert tools["attr_call"].has_description_kw and tools["attr_call"].description is None
    assert not tools["attr_call"].is_async and tools["attr_call"].params == ()
    assert tools["via_alias"].description == "aliased"
    assert tools["via_alias"].params == ("x",)
    assert tools["expression_description"].has_description_kw
    assert tools["expression_description"].description is None


def test_assigned_and_possible_tools() -> None:
    text, ranges = marked(
        """\
        import logging
        import os
        from rasa.mantle.tools.decorator import tool
        from lib.factory import make_tool, «shared_lookup»
        from .sibling import helper as «sibling_tool»
        from lib.star import *

        async def _impl(order_id: str, context=None): ...

        ««wrapped» = tool(description="Wrapped")(_impl)»
        ««plain» = tool(_impl)»
        ««lam» = tool(description="L")(lambda a, context: None)»
        decorator_only = tool(description="x")
        ««made»: object = make_tool("made", description="Made by a factory")»
        ««alias» = wrapped»
        logger = logging.getLogger(__name__)
        API = os.environ.get("API", "")
        CONSTANT = 3
        a, b = make_tool("a"), make_tool("b")
        """
    )
    (
        shared_r,
        sibling_r,
        wrapped_def,
        wrapped_name,
        plain_def,
        plain_name,
        lam_def,
        lam_name,
        made_def,
        made_name,
        alias_def,
        alias_name,
    ) = ranges
    module = parse_ok(text)
    names = [t.name for t in module.tools]
    # ``make_tool`` is imported from lib as well, so it is a possible tool too.
    assert names == [
        "make_tool",
        "shared_lookup",
        "sibling_tool",
        "wrapped",
        "plain",
        "lam",
        "made",
        "alias",
    ]
    tools = tools_by_name(module)
    assert tools["shared_lookup"].kind == "possible"
    assert tools["shared_lookup"].name_range == shared_r
    assert tools["sibling_tool"].name_range == sibling_r
    assert _core(tools["wrapped"]) == ToolDef(
        "wrapped", wrapped_name, "assigned", "Wrapped", True, True, ("order_id",), wrapped_def
    )
    assert _core(tools["plain"]) == ToolDef(
        "plain", plain_name, "assigned", None, True, False, ("order_id",), plain_def
    )
    assert _core(tools["lam"]) == ToolDef(
        "lam", lam_name, "assigned", "L", False, True, ("a",), lam_def
    )
    assert tools["made"] == ToolDef(
        "made", made_name, "possible", "Made by a factory", False, True, (), made_def
    )
    assert _core(tools["alias"]) == ToolDef(
        "alias", alias_name, "assigned", "Wrapped", True, True, ("order_id",), alias_def
    )
    # the signature of the def a tool wraps; a call the engine makes on exactly that def
    order_id = ToolParam("order_id", "str", None, False, _name_at(text, "order_id"))
    for name in ("wrapped", "plain", "alias"):
        assert (tools[name].signature, tools[name].exact) == ((order_id,), True), name
    assert [p.name for p in tools["lam"].signature] == ["a"] and tools["lam"].exact
    # names imported from project modules keep where they come from (a module is no tool)
    assert tools["shared_lookup"].imported == ("lib.factory", 0, "shared_lookup")
    assert tools["sibling_tool"].imported == ("sibling", 1, "helper")
    assert (tools["made"].exact, tools["wrapped"].imported) == (False, None)


def test_a_tool_under_another_decorator_is_not_exact() -> None:
    text = textwrap.dedent(
        """        @tool(description="x")
        @retry
        async def wrapped(a, context=None): ...

        @retry
        async def _impl(a, context=None): ...

        again = tool(description="y")(_impl)
        """
    )
    tools = tools_by_name(parse_ok(text))
    assert [p.name for p in tools["wrapped"].signature] == ["a"]
    assert not tools["wrapped"].exact and not tools["again"].exact


def test_only_module_level_bindings_define_tools() -> None:
    text = textwrap.dedent(
        """\
        from rasa.mantle.tools.decorator import tool

        def outer():
            @tool(description="nested")
            async def nested(): ...
            inner_made = make_tool()

        class Holder:
            @tool(description="method")
            async def method(self): ...
            attr = make_tool()

        try:
            import fancy
        except ImportError:
            @tool(description="fallback")
            async def in_except(): ...
        else:
            pass

        if True:
            @tool(description="in if")
            async def in_if(): ...
        """
    )
    assert [t.name for t in parse_ok(text).tools] == ["in_except", "in_if"]


def test_later_binding_wins() -> None:
    text, (second_def, second_name) = marked(
        """\
        @tool(description="first")
        async def twice(): ...

        «@tool(description="second")
        async def «twice»(x): ...»

        @tool(description="shadowed by a plain def")
        async def shadowed(): ...

        def shadowed(): ...

        @tool(description="shadowed by a class")
        async def klass(): ...

        class klass: ...

        @tool(description="deleted")
        async def deleted(): ...

        del deleted

        @tool(description="wrapped later")
        async def rewrapped(): ...

        rewrapped = with_retry(rewrapped)
        """
    )
    tools = tools_by_name(parse_ok(text))
    assert set(tools) == {"twice", "rewrapped"}
    assert tools["twice"].description == "second"
    assert (tools["twice"].def_range, tools["twice"].name_range) == (second_def, second_name)
    assert tools["twice"].params == ("x",)
    assert tools["rewrapped"].kind == "possible"


def test_def_name_after_continuation_and_async_spacing() -> None:
    text, (name_r,) = marked("@tool(description='d')\nasync  \\\n  def \t«spaced»(context): ...\n")
    (t,) = parse_ok(text).tools
    assert t.name_range == name_r


# ---------------------------------------------------------------------------------------------
# Memory calls: engine rule cases (docs/language/tools.md#what-the-engine-counts)


ENGINE_CASES = """\
from rasa.mantle.tools.decorator import tool
import operator

redis_client.memory.set(«"module_level"», 1)

@tool(description="d")
async def a_tool(context, /, other, *args, kw_only=None, **kwargs):
    context.memory.set(«"param"», 1)
    other.memory.set(«"pos_param"», 1)
    args.memory.set(«"star_args"», 1)
    kw_only.memory.set(«"kw_only"», 1)
    kwargs.memory.set(«"star_kwargs"», 1)
    context.memory.set(value=1, entry=«"entry_kw"»)
    context.memory.set(f"fstring_{other}", 1)
    context.memory.set(name_variable, entry="ignored_because_first_positional_wins")
    context.memory.set("con" + "cat", 1)
    context.memory.set_many({"not_matched": 1})
    context.memory["subscript_not_matched"] = 1
    mem = context.memory
    mem.set("alias_not_matched", 1)
    ctx2 = context
    ctx2.memory.set(«"alias_receiver"», 1)
    self.context.memory.set(«"attribute_receiver"», 1)
    callback = lambda: context.memory.set(«"lambda_body"», 1)
    own = lambda ctx: ctx.memory.set(«"lambda_param"», 1)

    def nested(x):
        context.memory.set(«"shadowed_by_nested_def"», 1)
        x.memory.set(«"nested_param"», 1)

    async def with_default(y=context.memory.set(«"in_nested_default"», 1)):
        pass

    class Local:
        context.memory.set(«"class_body_in_def"», 1)

    [context.memory.set(«"comprehension"», i) for i in range(2)]
    value = context.memory.get(«"read"», None)
    print(f"{context.memory.get(«'read_in_fstring'»)}")
    session.memory.get(«"read_other_receiver"»)

class Service:
    def method(self, context):
        context.memory.set(«"method_param"», 1)
    context.memory.set(«"class_body"», 1)

lam = lambda context: context.memory.set(«"module_lambda"», 1)
"""

EXPECTED_COUNTED = {
    "module_level": False,
    "param": True,
    "pos_param": True,
    "star_args": True,
    "kw_only": True,
    "star_kwargs": True,
    "entry_kw": True,
    "alias_receiver": False,
    "attribute_receiver": False,
    "lambda_body": True,
    "lambda_param": False,
    "shadowed_by_nested_def": False,
    "nested_param": True,
    "in_nested_default": False,
    "class_body_in_def": True,
    "comprehension": True,
    "read": True,
    "read_in_fstring": True,
    "read_other_receiver": False,
    "method_param": True,
    "class_body": False,
    "module_lambda": False,
}


def test_engine_counted_cases() -> None:
    text, ranges = marked(ENGINE_CASES)
    module = parse_ok(text)
    calls = calls_by_entry(module)
    assert set(calls) == set(EXPECTED_COUNTED)
    assert {name: c.engine_counted for name, c in calls.items()} == EXPECTED_COUNTED
    # Source order, and each marked literal is the literal_range of the call in that order.
    assert [c.literal_range for c in module.memory_calls] == ranges
    for call in module.memory_calls:
        assert call.entry_range == TextRange(
            call.literal_range.start + 1, call.literal_range.end - 1
        )
        assert text[call.entry_range.start : call.entry_range.end] == call.entry
        assert call.entry in text.splitlines()[call.line - 1]
    assert calls["read"].method == "get"
    assert calls["param"].method == "set"
    assert calls["attribute_receiver"].receiver == "self.context"
    assert calls["alias_receiver"].receiver == "ctx2"
    assert calls["module_level"].receiver == "redis_client"


def test_call_range_line_and_multiline_call() -> None:
    text, (call_r, lit_r, entry_r) = marked(
        """\
        def helper(context):
            x = 1
            «context.memory.set(
                «'«multi»'»,
                None,
            )»
        """
    )
    (call,) = parse_ok(text).memory_calls
    assert call == MemoryCall("set", "multi", entry_r, lit_r, call_r, 3, True, "context")


def test_entry_range_for_special_literals() -> None:
    text, ranges = marked(
        '''\
        def f(context):
            context.memory.set(«"esc\\taped"», 1)
            context.memory.set(«"implicit" "_concat"», 1)
            context.memory.set(«r"«raw\\d»"», 1)
            context.memory.set(«"""«triple»"""», 1)
            context.memory.set(«u'«unicode_prefix»'», 1)
            context.memory.set(«"«»"», 1)
            context.memory.set(("implicit"
                               "multiline"), 1)
            context.memory.set(b"bytes_skipped", 1)
        '''
    )
    esc, concat, raw_lit, raw, tri_lit, tri, uni_lit, uni, empty_lit, empty = ranges
    calls = parse_ok(text).memory_calls
    assert [c.entry for c in calls] == [
        "esc\taped",
        "implicit_concat",
        "raw\\d",
        "triple",
        "unicode_prefix",
        "",
        "implicitmultiline",
    ]
    assert [(c.entry_range, c.literal_range) for c in calls[:6]] == [
        (esc, esc),
        (concat, concat),
        (raw, raw_lit),
        (tri, tri_lit),
        (uni, uni_lit),
        (empty, empty_lit),
    ]
    assert calls[6].entry_range == calls[6].literal_range
    assert text[calls[6].literal_range.start] == '"'
    assert calls[6].literal_range.end == text.index('"), 1)') + 1


# ---------------------------------------------------------------------------------------------
# Bypasses, activations, obsolete imports


def test_bypass_cases() -> None:
    text, ranges = marked(
        """\
        import operator
        from operator import attrgetter

        async def f(context):
            raw = «context.memory._memory»
            «getattr(context.memory, "_memory", None)»
            getattr(context.memory, "memory")
            «attrgetter("_memory")»(context.memory)
            «operator.attrgetter("_memory")»
            ««context.memory._memory».clear_entries()»
            clear_entries()
            «manager.clear_entries(["a"])»
            context._memory
        """
    )
    bypasses = parse_ok(text).bypasses
    assert bypasses == (
        Bypass(ranges[0], 5, "_memory"),
        Bypass(ranges[1], 6, "getattr_memory"),
        Bypass(ranges[2], 8, "attrgetter_memory"),
        Bypass(ranges[3], 9, "attrgetter_memory"),
        Bypass(ranges[5], 10, "_memory"),
        Bypass(ranges[4], 10, "clear_entries"),
        Bypass(ranges[6], 12, "clear_entries"),
    )


def test_skill_activations() -> None:
    text, (sid, blk, sid2, sid3, blk3) = marked(
        """\
        from rasa.mantle.tools.result import ActivateSkill, ToolResult
        import rasa.mantle.tools.result as result

        next_a = ActivateSkill(skill_id="«check_balance»", ordered_block='«intro»')
        next_b = result.ActivateSkill(skill_id="«transfer»", ordered_block=None)
        next_c = ActivateSkill("«positional»", "«block»")
        next_d = ActivateSkill(skill_id=name)
        """
    )
    acts = parse_ok(text).activations
    assert [(a.skill_id, a.skill_id_range, a.block, a.block_range) for a in acts] == [
        ("check_balance", sid, "intro", blk),
        ("transfer", sid2, None, None),
        ("positional", sid3, "block", blk3),
    ]


def test_obsolete_imports() -> None:
    text, ranges = marked(
        """\
        from «rasa.calm_v2.tools.decorator» import tool, ToolContext
        from «rasa.calm_v2.tools.result» import ToolResult
        from «rasa_sdk» import tool, ToolContext, ToolResult
        from «rasa_sdk» import ToolResult
        from rasa_sdk.events import SlotSet
        import os, «rasa.calm_v2.tools» as old_tools
        from \\
            «rasa . calm_v2» import tools
        from rasa.mantle.tools.decorator import tool
        from .rasa_sdk import relative_is_fine

        def late():
            import rasa_sdk
            from «rasa_sdk» import tool
        """
    )
    found = parse_ok(text).obsolete_imports
    assert [(o.module, o.range, o.replacement) for o in found] == [
        ("rasa.calm_v2.tools.decorator", ranges[0], "rasa.mantle.tools.decorator"),
        ("rasa.calm_v2.tools.result", ranges[1], "rasa.mantle.tools.result"),
        ("rasa_sdk", ranges[2], "rasa.mantle.tools.decorator"),
        ("rasa_sdk", ranges[3], "rasa.mantle.tools.result"),
        ("rasa.calm_v2.tools", ranges[4], "rasa.mantle.tools"),
        ("rasa.calm_v2", ranges[5], "rasa.mantle"),
        ("rasa_sdk", ranges[6], "rasa.mantle.tools.decorator"),
    ]
    # rasa_sdk is installed with rasa-pro: importing it, or names it has, works


# ---------------------------------------------------------------------------------------------
# Column conversion (ast columns are UTF-8 bytes)


def test_non_ascii_before_nodes_on_the_same_line() -> None:
    text, ranges = marked(
        """\
        note = "é😀"; ««made» = make_tool("é😀")»  # ünïcödé 😀
        «@tool(description="ça coûte 5 €")  # 😀😀
        async def «déjà_vu»(context): s = "😀"; «context.memory.set(«"«über»"», 1)»»

        async def f(context):
            # 😀 comment lines do not matter, same-line text does:
            x = "é😀ü"; ««c.memory._memory».clear_entries()»; «ActivateSkill("«ß»")»
        """
    )
    made_def, made_name, tool_def, tool_name, call_r, lit_r, entry_r = ranges[:7]
    mem_r, clear_r, sid_r = ranges[8], ranges[7], ranges[10]
    module = parse_ok(text)
    tools = tools_by_name(module)
    assert (tools["made"].def_range, tools["made"].name_range) == (made_def, made_name)
    assert (tools["déjà_vu"].def_range, tools["déjà_vu"].name_range) == (tool_def, tool_name)
    assert tools["déjà_vu"].description == "ça coûte 5 €"
    (call,) = module.memory_calls
    assert (call.call_range, call.literal_range, call.entry_range) == (call_r, lit_r, entry_r)
    assert call.entry == "über"
    assert [(b.what, b.range) for b in module.bypasses] == [
        ("_memory", mem_r),
        ("clear_entries", clear_r),
    ]
    (act,) = module.activations
    assert act.skill_id_range == sid_r


def test_crlf_and_bom_offsets_refer_to_the_given_text() -> None:
    body = 'x = "é"\r\ndef f(context):\r\n    context.memory.set("crlf", 1)\r\n'
    for text in (body, "\ufeff" + body, body.replace("\r\n", "\r")):
        (call,) = parse_ok(text).memory_calls
        assert text[call.entry_range.start : call.entry_range.end] == "crlf"
        assert call.line == 3


def test_nfkc_identifier_name_range() -> None:
    text, (name_r,) = marked("@tool(description='d')\nasync def «ﬁle»(): ...\n")
    (t,) = parse_ok(text).tools
    assert t.name == "file"  # Python normalizes identifiers (NFKC)
    assert t.name_range == name_r


# ---------------------------------------------------------------------------------------------
# Syntax errors and robustness


def test_syntax_error_range_after_non_ascii() -> None:
    text, (err,) = marked('x = "é😀"\nok = 1\ns = "é😀"; a «b» c\n')
    module, issues = parse_tools_module(text)
    assert module == ToolModule()
    assert issue_list(issues) == [(SYNTAX_ERROR_CODE, "error", err)]
    assert "invalid syntax" in issues[0].message


def test_syntax_error_never_closed_and_unterminated() -> None:
    text, (err,) = marked('s = "é😀" + «(»\n')
    (issue,) = parse_tools_module(text)[1]
    assert issue.range == err
    assert "never closed" in issue.message

    text, (err,) = marked('s = "é😀"; t = «"»é\n')
    (issue,) = parse_tools_module(text)[1]
    assert issue.range == err
    assert "unterminated string" in issue.message


def test_syntax_error_with_bom() -> None:
    text, (err,) = marked('\ufeffx = "é😀" «$»\n')
    (issue,) = parse_tools_module(text)[1]
    assert issue.range == err


def test_null_bytes_and_absurd_nesting_do_not_raise() -> None:
    text = "x = 1\nab\0c\n"
    module, (issue,) = parse_tools_module(text)
    assert module == ToolModule()
    assert issue.code == SYNTAX_ERROR_CODE
    assert issue.range == TextRange(8, 9)
    for deep in ("-" * 100_000 + "1", "x" + ".a" * 100_000, "(" * 500 + ")" * 500):
        module, (issue,) = parse_tools_module(deep)
        assert module == ToolModule()
        assert 0 <= issue.range.start <= issue.range.end <= len(deep)


def test_lone_surrogate_does_not_raise() -> None:
    text = 'x = 1\ny = "a\ud800b"\n'
    module, (issue,) = parse_tools_module(text)
    assert module == ToolModule()
    assert issue.range == TextRange(12, 13)


def test_module_code_is_never_executed() -> None:
    text = textwrap.dedent(
        """\
        import os
        os._exit(3)
        raise SystemExit(4)

        @tool(description="still found")
        async def found(context): ...
        """
    )
    assert [t.name for t in parse_ok(text).tools] == ["found"]


# ---------------------------------------------------------------------------------------------
# Property: never raises, every range lies inside the text


VALID_MODULE, _ = marked(ENGINE_CASES)
VALID_MODULE += textwrap.dedent(
    """\
    from rasa.calm_v2.tools.decorator import tool
    x = "é😀"; made = make_tool(description="é")
    @tool(description="é😀")
    async def é_tool(context): context.memory._memory.clear_entries(); ActivateSkill("s", "b")
    """
)


def _all_ranges(module: ToolModule) -> list[TextRange]:
    out: list[TextRange] = []
    for t in module.tools:
        out += [t.name_range, t.def_range]
    for c in module.memory_calls:
        out += [c.entry_range, c.literal_range, c.call_range]
        assert c.literal_range.start <= c.entry_range.start <= c.entry_range.end
        assert c.entry_range.end <= c.literal_range.end
    out += [b.range for b in module.bypasses]
    out += [o.range for o in module.obsolete_imports]
    for a in module.activations:
        out += [r for r in (a.skill_id_range, a.block_range) if r is not None]
    return out


def _check(text: str) -> None:
    module, issues = parse_tools_module(text)
    for rng in [*_all_ranges(module), *(i.range for i in issues)]:
        assert 0 <= rng.start <= rng.end <= len(text), (rng, len(text))
    if issues:
        assert module == ToolModule()


def test_valid_module_fixture_parses() -> None:
    module = parse_ok(VALID_MODULE)
    assert module.tools and module.memory_calls and module.bypasses
    assert module.activations and module.obsolete_imports


PROPERTY_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(st.text(max_size=300))
def test_random_text_never_raises(text: str) -> None:
    _check(text)


_SNIPPETS = st.sampled_from(
    ["(", ")", '"', "'", "\n", "\r", "    ", "é😀", "\\", "@tool", "def ", ":", "\0", "\ufeff"]
)


@PROPERTY_SETTINGS
@given(st.data())
def test_mutated_module_never_raises(data: st.DataObject) -> None:
    text = VALID_MODULE
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 5))
        insert = data.draw(st.one_of(_SNIPPETS, st.text(max_size=3)))
        text = text[:at] + insert + text[at + cut :]
    _check(text)


# ---------------------------------------------------------------------------------------------
# The fast paths give the results of the plain implementations they replaced (differential)


def _reference_analysis(text: str) -> ToolModule:
    """The analyzer driven by the original walk: every node (``ast.iter_child_nodes``), no
    textual pre-check, no skipped leaves, with the parameters of the innermost ``def``."""
    base = 1 if text.startswith(BOM) else 0
    tree = ast.parse(text[base:])
    analyzer = tools_py._Analyzer(text, SourcePositions(text, base))
    obsolete: list[ObsoleteImport] = []
    stack: list[tuple[ast.AST, frozenset[str] | None]] = [(tree, None)]
    while stack:
        node, params = stack.pop()
        if isinstance(node, ast.Call):
            analyzer._call(node, params)
        elif isinstance(node, ast.Attribute):
            owner = node.value
            if (
                node.attr == "_memory"
                and isinstance(owner, ast.Attribute)
                and owner.attr == "memory"
            ):
                analyzer._bypass(node, node, "_memory")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            obsolete.extend(_plain_obsolete(text, analyzer._pos, node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            params = frozenset(a.arg for a in every if a is not None)
        children = list(ast.iter_child_nodes(node))
        stack.extend((child, params) for child in reversed(children))
    calls = sorted(analyzer.memory_calls, key=lambda c: (c.call_range.start, c.call_range.end))
    bypasses = sorted(analyzer.bypasses, key=lambda b: (b.line, b.what, b.range.start))
    obsolete.sort(key=lambda o: o.range.start)
    return ToolModule(
        (), tuple(calls), tuple(bypasses), tuple(analyzer.activations), tuple(obsolete)
    )


def _plain_obsolete(
    text: str, pos: SourcePositions, node: ast.Import | ast.ImportFrom
) -> list[ObsoleteImport]:
    """Obsolete imports of one statement, without their guard (the original per-node code)."""
    out: list[ObsoleteImport] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if tools_py._is_obsolete(alias.name):
                alias_range = pos.range_of(alias)
                rng = tools_py._dotted_name_range(text, alias_range.start, alias_range.end)
                replacement = tools_py._replacement(alias.name, ())
                out.append(ObsoleteImport(alias.name, rng or alias_range, replacement))
        return out
    module = node.module
    names = [a.name for a in node.names]
    if node.level or module is None or not tools_py._is_obsolete(module, names):
        return out
    stmt_range = pos.range_of(node)
    found = None
    if text.startswith("from", stmt_range.start):
        at = tools_py._skip_blanks(text, stmt_range.start + 4)
        found = tools_py._dotted_name_range(text, at, stmt_range.end)
    replacement = tools_py._replacement(module, [a.name for a in node.names])
    out.append(ObsoleteImport(module, found or stmt_range, replacement))
    return out


def _assert_same_analysis(text: str) -> ToolModule:
    module, issues = parse_tools_module(text)
    assert issues == ()
    expected = _reference_analysis(text)
    assert module.memory_calls == expected.memory_calls
    assert module.bypasses == expected.bypasses
    assert module.activations == expected.activations
    unguarded = tuple(dataclasses.replace(o, guard="none") for o in module.obsolete_imports)
    assert unguarded == expected.obsolete_imports
    return module


# Every kind of statement and expression slot; each ``M`` becomes a reportable construct.
KITCHEN_SINK = """\
import rasa_sdk.events as ev, os
from rasa.calm_v2.tools import decorator
from . import sibling

@M
@deco(M, key=M)
async def f(a: M = M, /, b: M = M, *args: M, c: M = M, **kw: M) -> M:
    global g
    x = y = M
    x += M
    x: M = M
    del x[M], x.attr
    assert M, M
    raise M from M
    for i in M:
        M
    else:
        M
    async for i in M:
        M
    while M:
        break
    else:
        pass
    if M:
        pass
    elif M:
        M
    with M as w, M:
        M
    async with M as (p, q):
        M
    try:
        M
    except M as e:
        M
    except (M, M):
        M
    else:
        M
    finally:
        M
    match M:
        case [1, *rest] if M:
            M
        case {"k": v, **others}:
            M
        case Point(x=0, y=yy) | Other():
            M
        case str() as s:
            M
    return M

class K(M, metaclass=M):
    attr: M = M

    def gen(self, context):
        yield M
        yield from M
        return [M for i in M if M], {M for i in M}, {M: M for i in M}, (M for i in M)

    async def coro(self, other=M):
        def inner(x=M):
            import rasa.calm_v2 as old
            return M
        return await M

values = (
    M if M else M,
    not M,
    -M,
    M + M * M,
    M and M or M,
    M < M <= M,
    (z := M),
    M[M:M:M],
    M[M, M],
    [*M, M],
    {**M, "k": M},
    f'''{M!r:>{M}} {M=}''',
    M.attr.attr,
    M(M)(M),
    call(M, M, *M, k1=M, k2=M, **M),
    lambda a=M, *b, c=M, **d: M,
    ...,
)
"""

_CONSTRUCTS = (
    '{r}.memory.get("e{i}")',
    '{r}.memory.set("e{i}", 1)',
    '{r}.memory.set(value=1, entry="e{i}")',
    '{r}.memory.get("a{i}").memory.get("b{i}")',
    "{r}.memory._memory",
    "{r}.memory._memory.memory._memory.clear_entries()",
    'getattr({r}.memory, "_memory")',
    'attrgetter("_memory")({r})',
    'operator.attrgetter("_memory")',
    'ActivateSkill("s{i}", ordered_block="b{i}")',
    'r.ActivateSkill(skill_id="s{i}")',
    "plain_call({r})",
)
_RECEIVERS = ("context", "a", "b", "args", "kw", "c", "self", "other", "x", "e", "w", "unknown")


def _kitchen_sinks() -> Iterator[str]:
    parts = KITCHEN_SINK.split("M")
    for shift in range(len(_CONSTRUCTS)):
        out = [parts[0]]
        for i, part in enumerate(parts[1:]):
            construct = _CONSTRUCTS[(i + shift) % len(_CONSTRUCTS)]
            receiver = _RECEIVERS[(i * 7 + shift) % len(_RECEIVERS)]
            out.append(construct.format(r=receiver, i=i) + part)
        yield "".join(out)


def _project_modules() -> list[Path]:
    found = sorted(REPO.glob("examples/**/*.py"))
    # The generated benchmark project, when present (bench/generate.py), sampled.
    found += sorted(REPO.glob(".cache/bench/*/skills/*/tools*.py"))[:200]
    return found


def _corpus() -> Iterator[str]:
    yield marked(ENGINE_CASES)[0]
    yield VALID_MODULE
    yield from _kitchen_sinks()
    for path in _project_modules():
        yield path.read_text(encoding="utf-8")


def _variants(text: str) -> Iterator[str]:
    """The text, then with non-ASCII text on the reported lines, CRLF and a BOM."""
    yield text
    non_ascii = re.sub(r'"(\w+)"', r'"\1é😀"', text)
    yield non_ascii
    yield BOM + non_ascii.replace("\n", "\r\n")


def test_walk_reports_what_the_plain_walk_reports() -> None:
    totals = [0, 0, 0, 0]
    for text in _corpus():
        for variant in _variants(text):
            module = _assert_same_analysis(variant)
            totals[0] += len(module.memory_calls)
            totals[1] += len(module.bypasses)
            totals[2] += len(module.activations)
            totals[3] += len(module.obsolete_imports)
    assert all(total > 50 for total in totals), totals  # the corpus exercises every kind


@PROPERTY_SETTINGS
@given(st.data())
def test_walk_matches_the_plain_walk_on_mutated_modules(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from([*_kitchen_sinks(), VALID_MODULE]))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 8))
        insert = data.draw(st.sampled_from(["", "\n", "(", ")", "[0]", ".memory", "é", " or x"]))
        text = text[:at] + insert + text[at + cut :]
    try:
        ast.parse(text.removeprefix(BOM))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # nothing to walk
    _assert_same_analysis(text)


def test_walk_is_iterative_on_deeply_nested_trees() -> None:
    """Trees far deeper than the recursion limit (built directly: ast.parse would refuse)."""
    text = 'def f(context):\n    x = context.memory.get("deep"), context.memory._memory\n'
    wrappers: dict[str, Callable[[ast.expr], ast.expr]] = {
        "attributes": lambda n: ast.Attribute(value=n, attr="a", ctx=ast.Load()),
        "calls": lambda n: ast.Call(func=n, args=[], keywords=[]),
        "arguments": lambda n: ast.Call(func=ast.Name("f", ast.Load()), args=[n], keywords=[]),
        "operators": lambda n: ast.BinOp(left=n, op=ast.Add(), right=ast.Name("a", ast.Load())),
        "unary": lambda n: ast.UnaryOp(op=ast.USub(), operand=n),
        "lambdas": lambda n: ast.Lambda(args=ast.arguments([], [], None, [], [], None, []), body=n),
    }
    limit = sys.getrecursionlimit()
    for wrap in wrappers.values():
        tree = ast.parse(text)
        function = tree.body[0]
        assert isinstance(function, ast.FunctionDef)
        assign = function.body[0]
        assert isinstance(assign, ast.Assign)
        node: ast.expr = assign.value
        for _ in range(5 * limit):
            node = wrap(node)
        assign.value = node
        analyzer = tools_py._Analyzer(text, SourcePositions(text, 0))
        analyzer.run(tree)
        ((call,), (bypass,)) = analyzer.memory_calls, analyzer.bypasses
        assert (call.entry, call.engine_counted, bypass.what) == ("deep", True, "_memory")


def test_identifiers_spelled_with_other_characters_are_still_found() -> None:
    """Python folds identifiers (NFKC): the textual pre-check must not skip such modules."""
    text = 'def f(context):\n    context.ｍemory.set("folded", 1)\n    ｇetattr(m, "_memory")\n'
    module = _assert_same_analysis(text)
    assert [c.entry for c in module.memory_calls] == ["folded"]
    assert [b.what for b in module.bypasses] == ["getattr_memory"]


def test_modules_without_any_reported_word_report_nothing() -> None:
    text = 'def f(context):\n    context.mem.set("x", 1)\n    return helper(context)\n'
    assert _assert_same_analysis(text) == ToolModule()


@pytest.mark.parametrize(
    "text",
    [
        'getattr(m, "_mem" "ory")',
        'attrgetter("\\x5fmem" "ory")',
        "m.clear_entries()",
        'ActivateSkill("s")',
        "from rasa_sdk import tool",
        "from rasa.calm_v2 import x",
    ],
)
def test_each_reported_word_alone_is_enough(text: str) -> None:
    """The textual pre-check: a module naming just one of the words still gets analysed."""
    assert "memory" not in text
    assert _assert_same_analysis(text + "\n") != ToolModule()


def test_walk_layout_assumptions() -> None:
    """The walk visits a call's callee before its arguments and keyword values, an attribute's
    value, a keyword's value; it never looks into the fields in ``_LEAF_FIELDS``."""
    fields = tools_py._CHILD_FIELDS
    assert ast.Call._fields[0] == "func"
    assert set(fields[ast.Call]) == {"func", "args", "keywords"}
    assert fields[ast.Attribute] == ("value",)
    assert fields[ast.keyword] == ("value",)
    for text in (*_kitchen_sinks(), VALID_MODULE):
        for node in ast.walk(ast.parse(text)):
            for name in node._fields:
                value = getattr(node, name, None)
                items = value if isinstance(value, list) else [value]
                if type(node) not in fields or name in tools_py._LEAF_FIELDS:
                    # Nothing below is ever worth visiting.
                    for item in items:
                        if isinstance(item, ast.AST):
                            below = ast.walk(item)
                            assert all(type(n) not in fields for n in below), ast.dump(node)


def _positions_agree(text: str) -> None:
    base = 1 if text.startswith(BOM) else 0
    fast = SourcePositions(text, base)
    slow = SourcePositions(text, base)
    slow._ascii = False  # the general path: per-line byte-to-character conversion
    nodes: list[ast.AST] = list(ast.walk(ast.parse(text[base:])))
    # Hostile positions: past the end, negative, None, missing.
    for lineno, col, end_lineno, end_col in (
        (1, 0, 10**6, 5),
        (10**6, 0, 10**6, 0),
        (1, 10**6, 1, 10**6),
        (0, 0, 1, 1),
        (-3, -1, -2, -5),
        (1, None, None, 2),
        (None, None, None, None),
    ):
        hostile = ast.Name("x", ast.Load())
        hostile.lineno, hostile.col_offset = lineno, col  # type: ignore[assignment]
        hostile.end_lineno, hostile.end_col_offset = end_lineno, end_col
        nodes.append(hostile)
    nodes.append(ast.Name("no_position", ast.Load()))
    for node in nodes:
        expected = slow.range_of(node)
        assert fast.range_of(node) == expected, ast.dump(node, include_attributes=True)
        assert fast.start_of(node) == expected.start
        assert slow.start_of(node) == expected.start


def test_source_positions_fast_path() -> None:
    for text in _corpus():
        for variant in (text, text.replace("\n", "\r\n"), text.replace("\n", "\r"), BOM + text):
            _positions_agree(variant)


def _reference_content_range(text: str, literal: TextRange, value: str) -> TextRange:
    segment = text[literal.start : literal.end]
    match = re.compile(r"[rRuUbBfF]{0,2}").match(segment)
    prefix_len = match.end() if match else 0
    body = segment[prefix_len:]
    for quote in ('"""', "'''", '"', "'"):
        size = len(quote)
        if len(body) >= 2 * size and body.startswith(quote) and body.endswith(quote):
            if body[size:-size] == value:
                start = literal.start + prefix_len + size
                return TextRange(start, start + len(value))
            break
    return literal


@PROPERTY_SETTINGS
@given(st.text(alphabet="\"'rbuFx é\\", max_size=12), st.data())
def test_content_range_matches_the_plain_version(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    literal = TextRange(start, data.draw(st.integers(start, len(text))))
    inner = text[literal.start : literal.end].strip("\"'rbuF")
    for value in (inner, "", "x", "é"):
        expected = _reference_content_range(text, literal, value)
        assert tools_py._content_range(text, literal, value) == expected


def _reference_skip_blanks(text: str, pos: int) -> int:
    while pos < len(text):
        if text[pos] in " \t\f":
            pos += 1
        elif text[pos] == "\\" and pos + 1 < len(text) and text[pos + 1] in "\r\n":
            pos += 3 if text.startswith("\r\n", pos + 1) else 2
        else:
            break
    return pos


def _reference_ident_end(text: str, pos: int) -> int:
    while pos < len(text) and ("_" + text[pos]).isidentifier():
        pos += 1
    return pos


@PROPERTY_SETTINGS
@given(st.text(alphabet=" \t\f\\\r\nab_9(éͅ·ﬁ€😀", max_size=12), st.data())
def test_lexical_helpers_match_the_plain_versions(text: str, data: st.DataObject) -> None:
    pos = data.draw(st.integers(0, len(text)))
    assert tools_py._skip_blanks(text, pos) == _reference_skip_blanks(text, pos)
    assert tools_py._ident_end(text, pos) == _reference_ident_end(text, pos)


def test_fast_constructors_make_the_same_records() -> None:
    r = TextRange(1, 4)
    cases: list[tuple[object, object]] = [
        (
            tools_py._new_memory_call("get", "e", r, r, TextRange(0, 9), 3, True, "ctx"),
            MemoryCall("get", "e", r, r, TextRange(0, 9), 3, True, "ctx"),
        ),
        (
            tools_py._new_tool_def("t", r, "decorated", "d", True, False, ("a",), r),
            ToolDef("t", r, "decorated", "d", True, False, ("a",), r),
        ),
    ]
    for fast, plain in cases:
        assert type(fast) is type(plain)
        assert fast == plain
        assert hash(fast) == hash(plain)
        assert repr(fast) == repr(plain)
        assert list(vars(fast).items()) == list(vars(plain).items())
        with pytest.raises(AttributeError):  # still frozen
            fast.entry = "other"  # type: ignore[attr-defined]
