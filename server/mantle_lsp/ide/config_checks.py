"""Engine checks of agent.yml, integrations.yml and the hook modules that need more than
one file (engine-rules §7.9, §7.10; authoring-language §1.6, §1.7, §7.8).

The single-file shape rules of agent.yml and integrations.yml are reported by their parser
(:mod:`mantle_lsp.syntax.config_yml`). Here: model-group references from agent.yml into
integrations.yml, the missing ``agent.id`` hint, and every hook rule (one modify hook per
point holds across all hook modules).

Each function takes the running :class:`~mantle_lsp.ide.diagnostics.Checker` and emits
through it.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from ..syntax.config_yml import AgentDoc
from ..syntax.hooks_py import (
    API_MODULE,
    DECORATORS,
    HOOK_POINTS,
    PAYLOADS,
    Annotation,
    BadName,
    Hook,
    HookModule,
)
from ..syntax.language_tag import tag_problem
from ..syntax.text import TextRange
from ..syntax.yaml_tree import YMap, YScalar

if TYPE_CHECKING:
    from pathlib import Path

    from .diagnostics import Checker

C_UNKNOWN_GROUP = "mantle.validation.config.unknown_model_group"
C_LSP_UNKNOWN_GROUP = "lsp.config.unknown_model_group"
C_AGENT_ID = "lsp.config.missing_agent_id"
C_AGENT_LANGUAGE = "mantle.validation.config.invalid_agent_language"
C_IMPORT_FAILED = "mantle.validation.hooks.import_failed"
C_UNKNOWN_POINT = "mantle.validation.hooks.unknown_point"
C_DUPLICATE_MODIFIER = "mantle.validation.hooks.duplicate_modifier"
C_NON_ASYNC = "mantle.validation.hooks.non_async_handler"
C_SIGNATURE = "mantle.validation.hooks.invalid_signature"
C_CONTROL_SIGNAL = "mantle.validation.hooks.unsupported_control_signal"

# model-group references the engine's validator checks; others fail later (when training)
_ENGINE_CHECKED = ("orchestrator.model_group", "knowledge_answering.embeddings")


def _suggest(name: str, candidates: list[str]) -> str:
    m = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean `{m[0]}`?" if m else ""


# -- agent.yml ---------------------------------------------------------------------------------
def check_agent_config(ck: Checker, path: Path, agent: AgentDoc) -> None:
    _check_agent_id(ck, path, agent)
    _check_agent_language(ck, path, agent)
    integ = ck.p.integrations
    declared = integ.declared_model_groups if integ is not None else None
    if declared is None:
        return  # no integrations.yml, or its model_groups are reported there
    refs = list(agent.embeddings)
    if agent.model_group is not None:
        refs.insert(0, ("orchestrator.model_group", agent.model_group))
    for setting, node in refs:
        gid = str(node.value).strip()
        if gid in declared:
            continue
        engine = setting in _ENGINE_CHECKED
        if setting == "orchestrator.model_group":
            tail = ""
        elif engine:
            tail = " (leave it empty for the built-in embedder)"
        else:
            tail = "; `rasa train` fails when it builds the skill index"
        ck.emit(
            path,
            node.range,
            C_UNKNOWN_GROUP if engine else C_LSP_UNKNOWN_GROUP,
            f"`{setting}`: model group `{gid}` is not declared under `model_groups` in "
            f"integrations.yml{_suggest(gid, sorted(declared))}{tail}",
        )


def _check_agent_id(ck: Checker, path: Path, agent: AgentDoc) -> None:
    root = agent.root
    section = root.get("agent") if root is not None else None
    if root is None or not isinstance(section, YMap):
        return
    ident = section.get("id")
    if isinstance(ident, YScalar) and isinstance(ident.value, str) and ident.value.strip():
        return
    given = ident is not None and not (isinstance(ident, YScalar) and ident.value is None)
    anchor = ident.range if ident is not None and given else None
    if anchor is None:
        key = section.key_node("id") or root.key_node("agent")
        anchor = key.range if key is not None else TextRange(0, 0)
    ck.emit(
        path,
        anchor,
        C_AGENT_ID,
        "`agent.id` is not set: `rasa train` and `rasa data validate` generate an id and "
        "write it into this file; give the agent a stable id of your own",
    )


def _check_agent_language(ck: Checker, path: Path, agent: AgentDoc) -> None:
    """rasa-pro 3.22 warns about an `agent.language` that is not an exact BCP 47 tag (3.21
    takes any string). Empty, missing and non-string values fall back to the default."""
    if ck.p.engine != "3.22" or any(i.severity == "error" for i in agent.issues):
        return
    section = agent.root.get("agent") if agent.root is not None else None
    node = section.get("language") if isinstance(section, YMap) else None
    if not (isinstance(node, YScalar) and isinstance(node.value, str) and node.value):
        return
    why = tag_problem(node.value)
    if why is not None:
        ck.emit(
            path,
            node.range,
            C_AGENT_LANGUAGE,
            f"`{node.value}` is not a BCP 47 language tag as rasa-pro 3.22 reads it: {why} "
            "(e.g. `en`, `de`, `pt-BR`, or `x-en-pirate` for a custom language)",
        )


# -- hooks -------------------------------------------------------------------------------------
def check_hooks(ck: Checker) -> None:
    """Every hook rule, for every hook module of the project."""
    first_modifier: dict[str, tuple[Path, Hook]] = {}
    for pf, mod in ck.p.hook_files():
        if not mod.ok:
            continue  # the syntax error is reported by the parser
        for bad in mod.bad_names:
            ck.emit(pf.path, bad.range, C_IMPORT_FAILED, _bad_name_message(bad))
        _check_lib_imports(ck, pf.path, mod)
        for mp in mod.manual_points:
            if mp.point not in HOOK_POINTS:
                ck.emit(
                    pf.path,
                    mp.range,
                    C_UNKNOWN_POINT,
                    f"`{mp.func}` is registered for hook point `{mp.point}`, which does not "
                    f"exist (points: {', '.join(HOOK_POINTS)})"
                    + _suggest(mp.point, list(HOOK_POINTS)),
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
                C_DUPLICATE_MODIFIER,
                f"`{first[1].func}`{at} already modifies `{h.point}`: a point takes one modify "
                f"hook; merge `{h.func}` into it, or make it an observer (`@on_{h.point}()`)",
            )


def _check_lib_imports(ck: Checker, path: Path, mod: HookModule) -> None:
    """Imports of the project's `lib` helper package that name a module that does not exist:
    the engine loads hooks with the project root on `sys.path`, so `lib.*` must be there.
    (Other missing modules may be installed packages: not judged.)"""
    for imp in mod.imports:
        parts = imp.module.split(".")
        if parts[0] != "lib":
            continue
        base = ck.p.root.joinpath(*parts)
        if base.is_dir() or base.with_suffix(".py").is_file():
            continue
        where = "/".join(parts)
        ck.emit(
            path,
            imp.range,
            C_IMPORT_FAILED,
            f"`{imp.module}` does not exist in this project ({where}.py or a {where}/ "
            "package), so the engine cannot import this hook module",
        )


def _bad_name_message(bad: BadName) -> str:
    name = bad.name
    point = name.removeprefix("modify_")
    if name.startswith("modify_") and point in HOOK_POINTS and not HOOK_POINTS[point].modify:
        why = f"`{point}` can only be observed: use `on_{point}`"
    else:
        known = [*DECORATORS, *sorted(PAYLOADS)]
        why = f"no such name in the hook API{_suggest(name, known)}"
    if bad.how == "undefined":
        return (
            f"`{name}` is not defined, so the module fails to import: import it from {API_MODULE}"
        )
    return f"{API_MODULE} has no `{name}` ({why}), so the module fails to import"


def _check_hook(ck: Checker, path: Path, h: Hook) -> None:
    spec = HOOK_POINTS[h.point]
    if not h.called:
        ck.emit(
            path,
            h.decorator_range,
            C_IMPORT_FAILED,
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
            C_IMPORT_FAILED,
            f"`{a.name}` is not defined, so the module fails to import (annotations are "
            "evaluated when the function is defined)",
        )
    if undefined:
        return
    if not h.is_async:
        ck.emit(
            path,
            h.def_range if h.def_range.length else h.name_range,
            C_NON_ASYNC,
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
                C_CONTROL_SIGNAL,
                f"a modify hook of `{h.point}` cannot raise `{r.signal}` (it allows: {allowed})",
            )


def _check_signature(ck: Checker, path: Path, h: Hook, payload: str) -> None:
    if h.param_count != 1:
        rng = h.extra_params_range or h.name_range
        ck.emit(
            path,
            rng,
            C_SIGNATURE,
            f"hook `{h.func}` must take exactly one parameter, the `{payload}` "
            f"(it takes {h.param_count})",
        )
    else:
        problem = _annotation_problem(h.param, payload, "parameter")
        if problem is not None:
            ck.emit(path, h.param.range or h.params_range, C_SIGNATURE, f"`{h.func}`: {problem}")
    r = h.returns
    if h.lane == "observe":
        if r.kind in ("api", "other") and r.range is not None:
            ck.emit(
                path,
                r.range,
                C_SIGNATURE,
                f"`{h.func}` observes `{h.point}` and must return None (found `{r.name}`)",
            )
        elif r.kind == "unbound" and r.range is not None:
            ck.emit(path, r.range, C_SIGNATURE, f"`{h.func}`: `{r.name}` cannot be resolved")
        return
    if r.kind == "missing":
        ck.emit(
            path,
            h.name_range,
            C_SIGNATURE,
            f"modify hook `{h.func}` must declare its return type: `-> {payload}`",
        )
        return
    problem = _annotation_problem(r, payload, "return")
    if problem is not None and r.range is not None:
        ck.emit(path, r.range, C_SIGNATURE, f"`{h.func}`: {problem}")


def _annotation_problem(a: Annotation, payload: str, what: str) -> str | None:
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
