"""Hook modules (``hooks.py``, ``hooks/**/*.py``): known hook points, one modify hook per
point across all modules, async handlers with the right signature, supported control
signals, and imports of the project's ``lib`` that exist."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...model.layout import FileKind as K
from .base import Checker, did_you_mean, meant, rule

# The hook parser (syntax/hooks_py.py) and its tables are imported where a hook module is
# checked: most projects have none, and a `check` of those never loads it.
if TYPE_CHECKING:
    from ...syntax.hooks_py import Annotation, BadName, Hook, HookModule


@rule(
    codes=(
        "mantle.validation.hooks.import_failed",
        "mantle.validation.hooks.unknown_point",
        "mantle.validation.hooks.duplicate_modifier",
        "mantle.validation.hooks.non_async_handler",
        "mantle.validation.hooks.invalid_signature",
        "mantle.validation.hooks.unsupported_control_signal",
    ),
    scope="project",
    reports_on=(K.HOOKS,),
    reads=(K.HOOKS, K.HELPER),
)
def hooks(ck: Checker) -> None:
    """Every hook rule, for every hook module of the project."""
    modules = ck.p.hook_files()
    if not modules:
        return
    from ...syntax.hooks_py import HOOK_POINTS

    first_modifier: dict[str, tuple[Path, Hook]] = {}
    for pf, mod in modules:
        if not mod.ok:
            continue  # the syntax error is reported by the parser
        for bad in mod.bad_names:
            ck.emit(
                pf.path, bad.range, "mantle.validation.hooks.import_failed", _bad_name_message(bad)
            )
        _check_lib_imports(ck, pf.path, mod)
        for mp in mod.manual_points:
            if mp.point not in HOOK_POINTS:
                ck.emit(
                    pf.path,
                    mp.range,
                    "mantle.validation.hooks.unknown_point",
                    f"`{mp.func}` is registered for hook point `{mp.point}`, which does not "
                    f"exist (points: {', '.join(HOOK_POINTS)})"
                    + did_you_mean(mp.point, list(HOOK_POINTS)),
                    data=meant(mp.point, list(HOOK_POINTS)),
                )
        for h in mod.hooks:
            _check_hook(ck, pf.path, h)
            if h.lane != "modify" or not h.called:
                continue
            first = first_modifier.get(h.point)
            if first is None:
                first_modifier[h.point] = (pf.path, h)
                continue
            where = first[0].relative_to(ck.p.root).as_posix() if first[0] != pf.path else ""
            at = f" in {where}" if where else ""
            ck.emit(
                pf.path,
                h.decorator_range,
                "mantle.validation.hooks.duplicate_modifier",
                f"`{first[1].func}`{at} already modifies `{h.point}`: a point takes one modify "
                f"hook; merge `{h.func}` into it, or make it an observer (`@on_{h.point}()`)",
                related=[
                    ck.related(
                        first[0], first[1].decorator_range, f"`{h.point}` first modified here"
                    )
                ],
            )


def _check_lib_imports(ck: Checker, path: Path, mod: HookModule) -> None:
    """Imports of the project's `lib` helper package that name a module that does not exist:
    the engine loads hooks with the project root on `sys.path`, so `lib.*` must be there.
    (Other missing modules may be installed packages: not judged.)"""
    for imp in mod.imports:
        parts = imp.module.split(".")
        if parts[0] != "lib":
            continue
        if ck.p.module_exists(imp.module):
            continue
        where = "/".join(parts)
        ck.emit(
            path,
            imp.range,
            "mantle.validation.hooks.import_failed",
            f"`{imp.module}` does not exist in this project ({where}.py or a {where}/ "
            "package), so the engine cannot import this hook module",
        )


def _bad_name_message(bad: BadName) -> str:
    from ...syntax.hooks_py import API_MODULE, DECORATORS, HOOK_POINTS, PAYLOADS

    name = bad.name
    point = name.removeprefix("modify_")
    if name.startswith("modify_") and point in HOOK_POINTS and not HOOK_POINTS[point].modify:
        why = f"`{point}` can only be observed: use `on_{point}`"
    else:
        known = [*DECORATORS, *sorted(PAYLOADS)]
        why = f"no such name in the hook API{did_you_mean(name, known)}"
    if bad.how == "undefined":
        return (
            f"`{name}` is not defined, so the module fails to import: import it from {API_MODULE}"
        )
    return f"{API_MODULE} has no `{name}` ({why}), so the module fails to import"


def _check_hook(ck: Checker, path: Path, h: Hook) -> None:
    from ...syntax.hooks_py import HOOK_POINTS

    spec = HOOK_POINTS[h.point]
    if not h.called:
        ck.emit(
            path,
            h.decorator_range,
            "mantle.validation.hooks.import_failed",
            f"write `@{h.decorator}()` with parentheses: a bare `@{h.decorator}` makes the "
            "module fail to import",
        )
        return
    undefined = [
        a for a in (h.param, h.returns) if a.kind == "unbound" and not a.deferred and a.range
    ]
    for a in undefined:
        assert a.range is not None
        ck.emit(
            path,
            a.range,
            "mantle.validation.hooks.import_failed",
            f"`{a.name}` is not defined, so the module fails to import (annotations are "
            "evaluated when the function is defined)",
        )
    if undefined:
        return
    if not h.is_async:
        ck.emit(
            path,
            h.def_range if h.def_range.length else h.name_range,
            "mantle.validation.hooks.non_async_handler",
            f"hook `{h.func}` must be a coroutine: write `async def {h.func}`",
        )
    else:
        _check_signature(ck, path, h, spec.payload)
    if h.lane == "modify":
        for r in h.raises:
            if r.signal in spec.signals:
                continue
            allowed = ", ".join(sorted(spec.signals)) or "no control signal"
            ck.emit(
                path,
                r.range,
                "mantle.validation.hooks.unsupported_control_signal",
                f"a modify hook of `{h.point}` cannot raise `{r.signal}` (it allows: {allowed})",
            )


def _check_signature(ck: Checker, path: Path, h: Hook, payload: str) -> None:
    if h.param_count != 1:
        rng = h.extra_params_range or h.name_range
        ck.emit(
            path,
            rng,
            "mantle.validation.hooks.invalid_signature",
            f"hook `{h.func}` must take exactly one parameter, the `{payload}` "
            f"(it takes {h.param_count})",
        )
    else:
        problem = _annotation_problem(h.param, payload, "parameter")
        if problem is not None:
            ck.emit(
                path,
                h.param.range or h.params_range,
                "mantle.validation.hooks.invalid_signature",
                f"`{h.func}`: {problem}",
            )
    r = h.returns
    if h.lane == "observe":
        if r.kind in ("api", "other") and r.range is not None:
            ck.emit(
                path,
                r.range,
                "mantle.validation.hooks.invalid_signature",
                f"`{h.func}` observes `{h.point}` and must return None (found `{r.name}`)",
            )
        elif r.kind == "unbound" and r.range is not None:
            ck.emit(
                path,
                r.range,
                "mantle.validation.hooks.invalid_signature",
                f"`{h.func}`: `{r.name}` cannot be resolved",
            )
        return
    if r.kind == "missing":
        ck.emit(
            path,
            h.name_range,
            "mantle.validation.hooks.invalid_signature",
            f"modify hook `{h.func}` must declare its return type: `-> {payload}`",
        )
        return
    problem = _annotation_problem(r, payload, "return")
    if problem is not None and r.range is not None:
        ck.emit(
            path, r.range, "mantle.validation.hooks.invalid_signature", f"`{h.func}`: {problem}"
        )


def _annotation_problem(a: Annotation, payload: str, what: str) -> str | None:
    from ...syntax.hooks_py import API_MODULE

    if a.kind == "missing":
        return f"annotate the payload parameter with `{payload}`"
    if a.kind == "unbound":
        return f"`{a.name}` cannot be resolved (import `{payload}` from {API_MODULE})"
    if a.kind == "api" and a.name == payload:
        return None
    if a.kind in ("api", "other", "none"):
        subject = "the parameter" if what == "parameter" else "the return type"
        return f"{subject} must be `{payload}`, not `{a.name}`"
    return None
