"""Tool modules: memory reads and writes use declared keys the module's skill may
write, nothing bypasses the memory manager, imports resolve, and tool names are not
reserved (framework tools, ``set_*`` collect setters, Maestro-era hooks, memory
validation tools)."""

from __future__ import annotations

import re
from typing import Any

from ...model.defaults import FRAMEWORK_TOOLS
from ...model.layout import FileKind as K
from ...model.project import ParsedFile, Skill
from ...model.semantics import HOOK_PREFIX
from ...model.symbols import module_for_import, resolve_code_name
from ...syntax.text import TextRange
from ...syntax.tools_py import ToolModule, constant_literals
from ..codes import Severity
from ..navigation import relative
from .base import Checker, per_project, per_skill, rule
from .fix import DECLARE_FIELD, Fixes

MODULE_CODES = (
    "mantle.validation.tools.undeclared_memory_write",
    "lsp.tools.undeclared_memory_write",
    "lsp.tools.unknown_memory_read",
    "mantle.validation.tools.memory_manager_bypass",
    "lsp.tools.obsolete_import",
    "lsp.tools.unresolved_import",
)


_MODULE_READS = (K.SKILL_MEMORY, K.PROJECT_MEMORY, K.HELPER)


@rule(
    codes=MODULE_CODES,
    scopes=(
        per_skill(reports_on=(K.SKILL_TOOLS,), reads=(K.SKILL_TOOLS, *_MODULE_READS)),
        per_project(reports_on=(K.SHARED_TOOLS,), reads=(K.SHARED_TOOLS, *_MODULE_READS)),
    ),
)
def tool_modules(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """Tool modules, a skill's and the shared ones (``tools/*.py``): memory keys,
    bypasses, imports."""
    for pf, mod in sk.tool_modules() if sk is not None else ck.p.shared_tool_files():
        check_tool_module(ck, pf, mod, sid)


def check_tool_module(ck: Checker, pf: ParsedFile, mod: ToolModule, sid: str | None) -> None:
    for call in mod.memory_calls:
        if call.method == "set":
            why = ck.unwritable(sid, call.entry)
            if why is None:
                continue
            code = (
                "mantle.validation.tools.undeclared_memory_write"
                if call.engine_counted
                else "lsp.tools.undeclared_memory_write"
            )
            msg = f'`memory.set("{call.entry}")` {why.text}'
            ck.emit(pf.path, call.literal_range, code, msg, data=why.data)
        else:
            key = resolve_code_name(ck.p, sid, call.entry)
            why_r = ck.unreadable(sid, key[1], key[2])
            if why_r is not None and not (sid is None and ck.sem.bare_resolves(None, key[2])):
                ck.emit(
                    pf.path,
                    call.literal_range,
                    "lsp.tools.unknown_memory_read",
                    f'`memory.get("{call.entry}")` always returns the default: {why_r.text}',
                    data=why_r.data,
                )
    check_constant_keys(ck, pf, mod, sid)
    for bp in mod.bypasses:
        ck.emit(
            pf.path,
            bp.range,
            "mantle.validation.tools.memory_manager_bypass",
            "tools must use `context.memory.get/set`; reaching into the memory "
            f"manager (`{bp.what}`) bypasses visibility and write rules",
        )
    for imp in mod.obsolete_imports:
        if imp.guard == "none":
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.obsolete_import",
                f"`{imp.module}` does not exist in rasa-pro 3.21 (the engine fails to "
                f"import this module); import from `{imp.replacement}`",
            )
        elif imp.guard == "function":  # try/except ImportError, TYPE_CHECKING: silent
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.obsolete_import",
                f"`{imp.module}` does not exist in rasa-pro 3.21: the module loads, but "
                f"this function fails when it is called; import from `{imp.replacement}`",
                "warning",
            )
    check_lib_imports(ck, pf, mod)


# the call of a key that arrived through a constant is on a `<x>.memory` receiver (not a
# helper's parameter only guessed to be memory)
_ON_MEMORY = re.compile(r"[A-Za-z_][\w.]*\.memory\s*\.\s*(?:get|set)\s*\(")


def check_constant_keys(ck: Checker, pf: ParsedFile, mod: ToolModule, sid: str | None) -> None:
    """Memory keys held in string constants (of the module, of a function, or imported
    from a project module) are checked like literal keys, as warnings: the engine does
    not see them. A constant that could be rebound is never trusted (the parser resolves
    only single bindings; an imported one must be a constant nothing rebinds)."""
    text = pf.text
    seen: set[tuple[str, TextRange]] = set()
    for call in mod.indirect_calls:
        if call.via != "constant" or not _ON_MEMORY.match(text, call.call_range.start):
            continue
        if (call.method, call.literal_range) in seen:
            continue
        seen.add((call.method, call.literal_range))
        how = f"through a constant (line {call.line})"
        constant_key(ck, pf, sid, call.method, call.entry, call.literal_range, how, True)
    for ik in mod.imported_keys:
        if not _ON_MEMORY.match(text, ik.call_range.start):
            continue
        target = module_for_import(ck.p, pf.path, ik.module, ik.level)
        rng = constant_literals(target.text).get(ik.name) if target is not None else None
        if target is None or rng is None:
            continue  # not a project constant, or one that could be rebound: silent
        value = target.text[rng.start : rng.end]
        how = f'(`{ik.name}` = "{value}", {relative(ck.p, target.path)})'
        constant_key(ck, pf, sid, ik.method, value, ik.range, how, False)


def constant_key(
    ck: Checker,
    pf: ParsedFile,
    sid: str | None,
    method: str,
    entry: str,
    rng: TextRange,
    how: str,
    here: bool,
) -> None:
    """Report one key that arrives through a constant; ``here``: the diagnostic's range is
    the constant's literal (a did-you-mean fix may change it), else the name at the call
    (only a declaration fix)."""
    if method == "set":
        why = ck.unwritable(sid, entry)
        if why is None:
            return
        ck.emit(
            pf.path,
            rng,
            "lsp.tools.undeclared_memory_write",
            f'`memory.set("{entry}")` {how} {why.text}',
            "warning",
            data=why.data if here else _no_guess(why.data),
        )
        return
    key = resolve_code_name(ck.p, sid, entry)
    why_r = ck.unreadable(sid, key[1], key[2])
    if why_r is None or (sid is None and ck.sem.bare_resolves(None, key[2])):
        return
    ck.emit(
        pf.path,
        rng,
        "lsp.tools.unknown_memory_read",
        f'`memory.get("{entry}")` {how} always returns the default: {why_r.text}',
        "warning",
        data=why_r.data if here else _no_guess(why_r.data),
    )


def _no_guess(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    return {k: v for k, v in data.items() if k not in ("meant", "wrong", "only_reading")}


def check_lib_imports(ck: Checker, pf: ParsedFile, mod: ToolModule) -> None:
    """Imports the engine cannot resolve when it loads the tool module (as a plain file,
    with the project root on ``sys.path``): a relative import, a ``lib.*`` module that does
    not exist, or one that is not valid Python. An import under ``try: … except
    ImportError:`` or ``if TYPE_CHECKING:`` is silent, one in a function body a warning
    (the function fails when called); after a ``sys.path`` change, ``lib`` may be found
    elsewhere: not judged."""
    for imp in mod.project_imports:
        if imp.guard not in ("none", "function"):
            continue
        late = imp.guard == "function"
        tail = (
            "the module loads, but this function fails when it is called"
            if late
            else "so the engine cannot import this module"
        )
        severity: Severity | None = "warning" if late else None
        dotted = imp.module
        if dotted.startswith("."):
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.unresolved_import",
                f"`{dotted}` is a relative import, but the engine loads tool modules as plain "
                f"files, not as a package: it fails, {tail}; import from `lib.…` instead",
                severity,
            )
            continue
        if mod.sys_path_shim:
            continue
        where = "/".join(dotted.split("."))
        if not ck.p.module_exists(dotted):
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.unresolved_import",
                f"`{dotted}` does not exist in this project ({where}.py or a {where}/ "
                f"package), {tail}",
                severity,
            )
            continue
        target = ck.p.module_file(dotted)
        bad = target.syntax_error() if target is not None else None
        if target is not None and bad is not None:
            line = target.source.index.position(bad.range.start)[0] + 1
            rel = target.path.relative_to(ck.p.root).as_posix()
            ck.emit(
                pf.path,
                imp.range,
                "lsp.tools.unresolved_import",
                f"`{dotted}` is not valid Python "
                f"({rel}:{line}: {bad.message.removeprefix('Python syntax error: ')}), {tail}",
                severity,
                related=[ck.related(target.path, bad.range, "the syntax error")],
            )


NAME_CODES = (
    "mantle.validation.tools.reserved_name",
    "mantle.validation.tools.invalid_memory_validation_tool",
    "lsp.tools.reserved_prefix",
    "lsp.legacy.syntax",
)


@rule(
    codes=NAME_CODES,
    scopes=(
        per_skill(reports_on=(K.SKILL_TOOLS,), reads=(K.SKILL_TOOLS, K.SKILL_MEMORY, K.SKILL_MD)),
        per_project(reports_on=(K.SHARED_TOOLS,), reads=(K.SHARED_TOOLS,)),
    ),
)
def tool_names(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """Tool names, a skill's and the shared ones: not reserved, memory validation tools
    name a settable field of their skill (and are never shared), no Maestro-era hook
    names, no shared ``set_*`` (dropped when the engine loads tools)."""
    reserved_tool_names(ck, sid, sk)
    legacy_tool_names(ck, sk)


def reserved_tool_names(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """Reserved framework names and memory validation tools (``run_after_setting_*``)."""
    modules = sk.tool_modules() if sk is not None else ck.p.shared_tool_files()
    settable = ck.sem.settable_fields(sk) if sk is not None else set()
    for pf, mod in modules:
        for t in mod.tools:
            if t.kind == "possible":
                continue
            if t.name in FRAMEWORK_TOOLS:  # 3.22 adds the execute-only names (below)
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.reserved_name",
                    f"`{t.name}` is a framework tool name and cannot be defined by a project "
                    "(the engine refuses to load the tools); rename the function",
                )
            if not t.name.startswith(HOOK_PREFIX):
                continue
            entry = t.name[len(HOOK_PREFIX) :]
            if sid is None:
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.invalid_memory_validation_tool",
                    f"`{t.name}` is a shared tool, and memory validation tools never run from "
                    "tools/: move it into the tools.py of the skill that owns "
                    f"`{entry}`",
                )
            elif entry not in settable:
                what = (
                    "is not declared"
                    if sk is None or sk.field(entry) is None
                    else "is neither `llm_settable` nor collected by a `collect:` step"
                )
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.invalid_memory_validation_tool",
                    f"`{t.name}` validates `{sid}.{entry}`, which {what}, so it never runs",
                )
    # 3.22 refuses project tools named like an execute-only engine tool (3.21 accepts them)
    execute_only = ck.sem.profile.execute_only_tools
    if not execute_only:
        return
    modules = sk.tool_modules() if sk is not None else ck.p.shared_tool_files()
    for pf, mod in modules:
        for t in mod.tools:
            if t.kind != "possible" and t.name in execute_only:
                ck.emit(
                    pf.path,
                    t.name_range,
                    "mantle.validation.tools.reserved_name",
                    f"`{t.name}` is the name of an execute-only engine tool in rasa-pro 3.22, "
                    "which refuses to load the tools; rename the function",
                )


def legacy_tool_names(ck: Checker, sk: Skill | None) -> None:
    if sk is None:
        for pf, mod in ck.p.shared_tool_files():
            for t in mod.tools:
                if t.name.startswith("set_") and t.kind != "possible":
                    ck.emit(
                        pf.path,
                        t.name_range,
                        "lsp.tools.reserved_prefix",
                        f"shared tools named `set_*` are dropped when the engine loads tools "
                        f"(the prefix is reserved for collect setters): rename `{t.name}`",
                    )
        return
    fields = set(sk.field_names())
    for pf, mod in sk.tool_modules():
        for t in mod.tools:
            for prefix in ("set_", "ask_"):
                if t.name.startswith(prefix) and t.name[len(prefix) :] in fields:
                    entry = t.name[len(prefix) :]
                    ck.emit(
                        pf.path,
                        t.name_range,
                        "lsp.legacy.syntax",
                        f"`{t.name}` is a Maestro-era {prefix[:-1]} hook name, which the "
                        f"engine no longer calls for `{entry}`; validate writes in "
                        f"`run_after_setting_{entry}` instead",
                    )


# -- fixes ------------------------------------------------------------------------------------

FIXES: Fixes = {
    "mantle.validation.tools.undeclared_memory_write": DECLARE_FIELD,
    "lsp.tools.undeclared_memory_write": DECLARE_FIELD,
    "lsp.tools.unknown_memory_read": DECLARE_FIELD,
}
