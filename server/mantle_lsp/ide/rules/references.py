"""References by name to skills, tools and responses: each must name something that
exists and that this skill may use (``@skill`` / ``call`` / ``link``; ``@tool``,
``tool_constraints``, a block's ``tools``, ``import_tools``, ``execute_tool``; response names
in steps, gates, ``utter`` triggers and agent.yml's cancel confirmation)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...model.defaults import FRAMEWORK_TOOLS, STEP_ACTIONS
from ...model.layout import FileKind as K
from ...model.project import Skill
from ...model.semantics import LoadFailure
from ...syntax.errors import closest
from ...syntax.skill_md import SkillDoc
from ...syntax.text import TextRange
from ...syntax.yaml_tree import YMap, YScalar
from ..codes import FAILED_TO_LOAD, info
from ..edits import (
    PLAIN_SAFE,
    column,
    content_end,
    insert_lines,
    inside_line_comment,
    is_flow,
    ws_edit,
)
from ..types import CodeAction, TextEdit
from .base import Checker, Diagnostic, Related, did_you_mean, meant, per_project, per_skill, rule
from .fix import Fix, Fixes, own_data
from .flow import where


# -- skills -------------------------------------------------------------------------------
@rule(
    codes=(
        "skill.referenced.invalid_target",
        "skill.prose.hidden_skill_reference",
        "mantle.validation.flow.internal_not_callable",
        "mantle.validation.skill.self_skill_not_callable",
        "mantle.validation.flow.unresolved_call",
        "mantle.validation.flow.unresolved_link",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD,),
)
def skill_references(ck: Checker, sid: str, sk: Skill) -> None:
    """``@skill.<id>`` names a skill that prose may start; a ``call:`` / ``link:`` target is
    another skill or a callable block of this one."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for tok in doc.tokens:
        if tok.kind == "skill":
            target, trng = tok.parts[0]
            if not ck.p.has_skill(target):
                ck.emit(
                    path,
                    trng,
                    "skill.referenced.invalid_target",
                    f"`@skill.{target}` names no skill{did_you_mean(target, ck.p.catalog_ids())}",
                    data=meant(target, ck.p.catalog_ids()),
                )
            elif (failure := ck.sem.dropped(target)) is not None:
                cause, related = load_cause(ck, target, failure)
                ck.emit(
                    path,
                    trng,
                    "skill.referenced.invalid_target",
                    f"`@skill.{target}` names a skill rasa-pro fails to load ({cause}), so it "
                    "is not in the catalog and this reference fails too",
                    related=related,
                )
            else:
                tsk = ck.p.skill(target)
                if tsk is not None and tsk.doc is not None and tsk.doc.hidden:
                    ck.emit(
                        path,
                        trng,
                        "skill.prose.hidden_skill_reference",
                        f"`@skill.{target}` names a hidden skill; hidden skills are "
                        "started by `call:`/`link:`/`resolve_with`, not from prose",
                    )
    for _, st in doc.steps():
        if st.kind in ("call", "link"):
            t = st.str_field(st.kind)
            if t:
                check_call(ck, path, sid, doc, st.kind, t[0], t[1], where(st))


def check_call(
    ck: Checker,
    path: Path,
    sid: str,
    doc: SkillDoc,
    kind: str,
    target: str,
    node: YScalar,
    where: str,
) -> None:
    own = f"{sid}__"
    block_id = target[len(own) :] if target.startswith(own) else target
    if doc.block(block_id) is not None:
        if doc.has_prose:
            ck.emit(
                path,
                node.range,
                "mantle.validation.flow.internal_not_callable",
                f"{where}: block '{block_id}' belongs to a skill with prose, so its "
                "blocks are internal and cannot be called or linked; enter it from "
                f"prose with `@block.{block_id}`",
            )
        return
    if "__" in target:
        return  # reported by the parser (invalid_step_target)
    if target == sid:
        ck.emit(
            path,
            node.range,
            "mantle.validation.skill.self_skill_not_callable",
            f"{where}: a skill cannot `{kind}` itself",
        )
        return
    if not ck.p.has_skill(target):
        blocks = [b.id for b in doc.blocks if b.id]
        ck.emit(
            path,
            node.range,
            f"mantle.validation.flow.unresolved_{kind}",
            f"{where}: `{kind}: {target}` names no skill"
            + (" or block of this skill" if blocks else "")
            + did_you_mean(target, [*ck.p.catalog_ids(), *blocks]),
            data=meant(target, [*ck.p.catalog_ids(), *blocks]),
        )
        # the engine also reports the target among the skill's referenced skills
        ck.emit(
            path,
            node.range,
            "skill.referenced.invalid_target",
            f"`{target}` is not a skill (referenced by `{kind}:` in {where})",
        )
    elif (failure := ck.sem.dropped(target)) is not None:
        cause, related = load_cause(ck, target, failure)
        ck.emit(
            path,
            node.range,
            f"mantle.validation.flow.unresolved_{kind}",
            f"{where}: `{kind}: {target}` names a skill rasa-pro fails to load ({cause}), so "
            "no such target exists",
            related=related,
        )
        ck.emit(
            path,
            node.range,
            "skill.referenced.invalid_target",
            f"`{target}` is not in the catalog: rasa-pro fails to load it ({cause}) "
            f"(referenced by `{kind}:` in {where})",
            related=related,
        )


def load_cause(ck: Checker, sid: str, failure: LoadFailure) -> tuple[str, tuple[Related, ...]]:
    """Why skill ``sid`` is not in the engine's catalog, in words (the file at fault and
    what is wrong there), and where (as related information)."""
    if failure.path is None:
        return f"skills/{sid}/ has no skill.md", ()
    at = Path(failure.path)
    try:
        shown = at.relative_to(ck.p.root).as_posix()
    except ValueError:
        shown = at.name
    # a compile error's or an unreadable file's summary says it in a few words; a memory.yml
    # the engine cannot load, in its own words
    what = failure.message if failure.code == FAILED_TO_LOAD else info(failure.code).summary
    where = ck.related(at, failure.range, f"why rasa-pro fails to load skill `{sid}`")
    return f"{shown}: {what}", (where,)


# -- tools ---------------------------------------------------------------------------------
@rule(
    codes=(
        "mantle.validation.tools.unresolved_tool",
        "skill.import_tools.invalid_shared_tool",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.SKILL_TOOLS, K.SHARED_TOOLS, K.INTEGRATIONS),
)
def tool_references(ck: Checker, sid: str, sk: Skill) -> None:
    """Every tool a skill names is one it may use: ``@tool.<name>``, ``tool_constraints``
    and block ``tools`` entries, ``import_tools`` (a shared tool, or an MCP server
    configured in integrations.yml) and ``execute_tool`` steps."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for tok in doc.tokens:
        if tok.kind == "tool":
            name, trng = tok.parts[0]
            if name in FRAMEWORK_TOOLS:
                continue
            if sk is not None and not ck.sem.tool_visible(sk, doc, name):
                ck.emit(
                    path,
                    trng,
                    "mantle.validation.tools.unresolved_tool",
                    f"`@tool.{name}` names no tool this skill can use"
                    f"{did_you_mean(name, ck.sem.visible_tools(sk, doc))}",
                    data=meant(name, ck.sem.visible_tools(sk, doc)),
                )
    for gt in [*doc.gate_tools, *(g for b in doc.blocks for g in b.tools)]:
        if not ck.sem.tool_visible(sk, doc, gt.name):
            ck.emit(
                path,
                gt.name_node.range,
                "mantle.validation.tools.unresolved_tool",
                f"tool `{gt.name}` is neither a tool of this skill nor a shared tool in "
                f"tools/{did_you_mean(gt.name, ck.sem.visible_tools(sk, doc))}",
                data=meant(gt.name, ck.sem.visible_tools(sk, doc)),
            )
    shared = ck.sem.shared_tools()
    integ = ck.p.integrations
    for item in doc.import_tools:
        name = item.value
        if name.startswith("mcp/"):
            server = name[4:].split(":", 1)[0]
            if integ is None or server not in integ.mcp_servers:
                ck.emit(
                    path,
                    item.range,
                    "skill.import_tools.invalid_shared_tool",
                    f"MCP server `{server}` is not configured under `mcp_servers` in "
                    "integrations.yml",
                )
            continue
        if name in shared:
            continue
        owner = next((o for o, s in ck.p.skills.items() if name in ck.sem.local_tools(s)), None)
        if owner is not None:
            msg = (
                f"`{name}` is a tool of skill `{owner}`, not a shared tool: only tools in "
                "the project's tools/ folder can be imported"
            )
        else:
            msg = f"`{name}` is not a shared tool in tools/*.py{did_you_mean(name, shared)}"
        if not ck.sem.tool_visible(sk, None, name):
            fix = meant(name, shared) if owner is None else None
            ck.emit(path, item.range, "skill.import_tools.invalid_shared_tool", msg, data=fix)
            # and, like the engine, as a tool the skill cannot see
            ck.emit(
                path,
                item.range,
                "mantle.validation.tools.unresolved_tool",
                f"`{name}` is not a tool this skill can use",
            )
    import_collisions(ck, sk, doc)
    execute_only = ck.sem.profile.execute_only_tools
    for _, st in doc.steps():
        t = st.str_field("execute_tool") if st.kind == "execute_tool" else None
        if t and t[0] not in execute_only and not ck.sem.tool_visible(sk, doc, t[0]):
            ck.emit(
                path,
                t[1].range,
                "mantle.validation.tools.unresolved_tool",
                f"{where(st)}: `execute_tool: {t[0]}` names no tool this skill can use"
                f"{did_you_mean(t[0], ck.sem.visible_tools(sk, doc))}",
                data=meant(t[0], ck.sem.visible_tools(sk, doc)),
            )


@rule(
    codes=(
        "lsp.tools.unknown_parameter",
        "lsp.tools.missing_parameter",
    ),
    scope="skill",
    reports_on=(K.SKILL_MD,),
    reads=(K.SKILL_MD, K.SKILL_TOOLS, K.SHARED_TOOLS),
)
def execute_parameters(ck: Checker, sid: str, sk: Skill) -> None:
    """An ``execute_tool`` step's ``parameters`` name parameters of the tool's ``def`` and
    give every one that has no default. Only when the call is known: a ``@tool`` ``def``
    of the project with no other decorator and no ``**kwargs`` (never an MCP, framework,
    factory-made or imported tool)."""
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for _, st in doc.steps():
        t = st.str_field("execute_tool") if st.kind == "execute_tool" else None
        if t is None:
            continue
        name, name_node = t
        tool = ck.sem.tool_signature(sk, doc, name)
        if tool is None or not tool.exact or tool.var_keyword:
            continue
        if any(p.positional_only for p in tool.signature):
            continue
        params_node = st.get("parameters")
        given: list[YScalar] = []
        if isinstance(params_node, YMap):
            if any(not isinstance(k, YScalar) or k.raw == "<<" for k, _ in params_node.items):
                continue  # a merge key or a complex key: what is passed is not plain
            given = [k for k, _ in params_node.pairs()]
        elif params_node is not None and not (
            isinstance(params_node, YScalar) and params_node.value is None
        ):
            continue  # not a mapping: reported by the parser
        names = [p.name for p in tool.signature]
        for key in given:
            if not isinstance(key.value, str) or key.value in names:
                continue
            close = closest(key.value, [n for n in names if n not in _values(given)])
            ck.emit(
                path,
                key.range,
                "lsp.tools.unknown_parameter",
                f"{where(st)}: tool `{name}` has no parameter `{key.value}`"
                + (f"; did you mean `{close}`?" if close else f" (it takes {_listed(names)})"),
                data={"tool": name, "param": key.value, "meant": close},
            )
        missing = [p.name for p in tool.signature if p.required and p.name not in _values(given)]
        if missing:
            # on the `parameters` key when there is one, else on the tool's name
            key_node = next(
                (k for k, _ in st.node.pairs() if k.value == "parameters"), name_node
            ) if isinstance(st.node, YMap) else name_node  # fmt: skip
            ck.emit(
                path,
                key_node.range,
                "lsp.tools.missing_parameter",
                f"{where(st)}: tool `{name}` needs {_listed(missing)}, which "
                f"{'has' if len(missing) == 1 else 'have'} no default and "
                f"{'is' if len(missing) == 1 else 'are'} not given under `parameters`",
                data={"tool": name, "missing": missing},
            )


def _values(keys: list[YScalar]) -> set[str]:
    return {k.value for k in keys if isinstance(k.value, str)}


def _listed(names: list[str]) -> str:
    if not names:
        return "no parameters"
    return ", ".join(f"`{n}`" for n in names)


def _defined_here(ck: Checker, key: tuple[str, ...], what: str) -> list[Related]:
    """Where the project defines ``key``, as related information."""
    return [
        ck.related(sym.path, sym.range, f"{what} is defined here")
        for sym in ck.p.index.lookup(key)
        if sym.path is not None and sym.range is not None
    ]


def import_collisions(ck: Checker, sk: Skill, doc: SkillDoc) -> None:
    """An MCP import whose bare tool name is taken (twice, a framework tool, a tool of the
    skill or a shared tool it uses); 3.22 also reserves the execute-only names."""
    if sk.skill_md is None:
        return
    seen: dict[str, YScalar] = {}
    local = ck.sem.local_tools(sk)
    declared_shared = (
        {g.name for g in doc.gate_tools}
        | {g.name for b in doc.blocks for g in b.tools}
        | {i.value for i in doc.import_tools if not i.value.startswith("mcp/")}
    ) & ck.sem.shared_tools()
    for item in doc.import_tools:
        value = item.value
        if not value.startswith("mcp/") or ":" not in value:
            continue
        bare = value.rsplit(":", 1)[1]
        problem = None
        related: list[Related] = []
        if bare in seen:
            problem = f"the MCP tool name `{bare}` is imported twice"
            related.append(ck.related(sk.skill_md.path, seen[bare].range, "first imported here"))
        elif bare in FRAMEWORK_TOOLS:
            problem = f"`{bare}` is a framework tool name"
        elif bare in local:
            problem = f"this skill already has a tool `{bare}`"
            related += _defined_here(ck, ("tool", sk.id, bare), f"the tool `{bare}`")
        elif bare in declared_shared:
            problem = f"this skill already uses the shared tool `{bare}`"
            related += _defined_here(ck, ("tool", "", bare), f"the shared tool `{bare}`")
        elif bare in ck.sem.profile.execute_only_tools:
            problem = f"`{bare}` is reserved for the engine's execute-only tool (rasa-pro 3.22)"
        seen.setdefault(bare, item)
        if problem:
            ck.emit(
                sk.skill_md.path,
                item.range,
                "skill.import_tools.invalid_shared_tool",
                f"cannot import `{value}`: {problem}; tools are addressed by their bare name",
                related=related,
            )


# -- responses -----------------------------------------------------------------------------
_GATE = "mantle.validation.tool_constraint.unknown_on_success_or_failure"
_CONFIRM = "mantle.validation.tool_constraint.unknown_requires_confirmation_response"


_RESPONSE_FILES = (K.SKILL_RESPONSES, K.PROJECT_RESPONSES)


@rule(
    codes=(
        "mantle.validation.response.missing",
        "mantle.validation.action.unknown",
        "mantle.validation.tool_constraint.unknown_on_success_or_failure",
        "mantle.validation.tool_constraint.unknown_requires_confirmation_response",
        "mantle.validation.verbatim_trigger.unknown_response",
        "mantle.validation.response.empty_body",
    ),
    scopes=(
        per_skill(reports_on=(K.SKILL_MD,), reads=(K.SKILL_MD, *_RESPONSE_FILES)),
        per_project(reports_on=(K.AGENT,), reads=(K.AGENT, *_RESPONSE_FILES)),
    ),
)
def response_references(ck: Checker, sid: str | None, sk: Skill | None) -> None:
    """Responses a skill names exist: step ``action`` / ``utterance``, gate
    ``on_success`` / ``on_failure`` and confirmation responses, ``utter`` triggers; and
    so do those agent.yml's cancel confirmation names. The ones gates, triggers and the
    cancel confirmation name have no blank variant."""
    if sk is None:
        agent_response_references(ck)
        return
    doc = sk.doc
    if doc is None or sk.skill_md is None:
        return
    path = sk.skill_md.path
    for gt in [*doc.gate_tools, *(g for b in doc.blocks for g in b.tools)]:
        for attr in ("on_success", "on_failure"):
            n = getattr(gt, attr)
            if isinstance(n, YScalar):
                check_response_ref(ck, path, n, _GATE, f"`{attr}`")
        if gt.confirmation_enabled:
            for attr in ("utter_for_confirmation", "utter_on_user_denial"):
                n = getattr(gt, attr)
                if isinstance(n, YScalar):
                    check_response_ref(ck, path, n, _CONFIRM, f"`{attr}`")
    for trig in doc.utter:
        check_response_ref(
            ck,
            path,
            trig.name_node,
            "mantle.validation.verbatim_trigger.unknown_response",
            "`utter` trigger",
        )
    for _, st in doc.steps():
        at = where(st)
        if st.kind == "action":
            a = st.str_field("action") or st.str_field("utter")
            if a:
                name, node = a
                if name.startswith("utter_"):
                    if not ck.sem.response_exists(name):
                        ck.emit(
                            path,
                            node.range,
                            "mantle.validation.response.missing",
                            f"{at}: response `{name}` is not defined in any responses.yml"
                            f"{did_you_mean(name, ck.sem.response_names())}",
                            data=meant(name, ck.sem.response_names()),
                        )
                elif name not in STEP_ACTIONS:
                    ck.emit(
                        path,
                        node.range,
                        "mantle.validation.action.unknown",
                        f"{at}: `action: {name}` must be a response name starting with "
                        "`utter_`, `action_listen`, or `hangup`",
                    )
        elif st.kind == "collect":
            u = st.str_field("utterance")
            if u and u[0].startswith("utter_") and not ck.sem.response_exists(u[0]):
                ck.emit(
                    path,
                    u[1].range,
                    "mantle.validation.response.missing",
                    f"{at}: response `{u[0]}` is not defined in any responses.yml"
                    f"{did_you_mean(u[0], ck.sem.response_names())}",
                    data=meant(u[0], ck.sem.response_names()),
                )


def agent_response_references(ck: Checker) -> None:
    """agent.yml's cancel confirmation names responses that exist and are not blank."""
    apf, agent = ck.p.file_of_kind(K.AGENT), ck.p.agent
    if apf is None or agent is None:
        return
    for n in agent.cancel_confirmation:
        check_response_ref(ck, apf.path, n, _CONFIRM, "`cancel` confirmation")


def check_response_ref(ck: Checker, path: Path, node: YScalar, code: str, what: str) -> None:
    """A response named by a gate, trigger or cancel confirmation: it must exist, and
    (like the engine checks for these references) have no blank variant."""
    if not ck.sem.response_exists(node.value):
        ck.emit(
            path,
            node.range,
            code,
            f"{what} names response `{node.value}`, which no responses.yml defines"
            f"{did_you_mean(node.value, ck.sem.response_names())}",
            data=meant(node.value, ck.sem.response_names()),
        )
    else:
        check_blank_referenced(ck, path, node, f"{what} response")


def check_blank_referenced(ck: Checker, path: Path, node: YScalar, what: str) -> None:
    r = ck.sem.effective_response(node.value)
    if r is None:
        return
    blanks = r.blank_variants()
    if blanks:
        which = "" if len(r.variants) == 1 else f" (variant {blanks[0].index + 1})"
        ck.emit(
            path,
            node.range,
            "mantle.validation.response.empty_body",
            f"{what} `{node.value}` has blank text{which}, so nothing would be said",
        )


# -- fixes ------------------------------------------------------------------------------------


@own_data
def rename_parameter(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """`sauce:` → `source:` (data: the tool, the parameter written, the one meant)."""
    data = d.data or {}
    param, meant = data.get("param"), data.get("meant")
    if not isinstance(param, str) or not isinstance(meant, str) or param == meant:
        return
    written = fx.text[d.range.start : d.range.end]
    if written == param:
        target = d.range
    elif written[:1] in ("'", '"') and written[1:-1] == param:
        target = TextRange(d.range.start + 1, d.range.end - 1)
    else:
        return  # an escape inside the key: leave it to the author
    edit = ws_edit(fx.path, TextEdit(target, meant))
    yield fx.action(f"Change to `{meant}`", d, edit, preferred=True)


@own_data
def add_parameters(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """Give each missing parameter under `parameters:`: the field of that name when
    this skill (or the project) has one, else a `TODO` the author replaces."""
    missing = (d.data or {}).get("missing")
    doc = fx.pf.doc
    if not isinstance(missing, list) or not missing or not isinstance(doc, SkillDoc):
        return
    if not all(isinstance(m, str) and PLAIN_SAFE.match(m) for m in missing):
        return
    text = fx.text
    step = None
    for _, st in doc.steps():
        node = st.node
        if not isinstance(node, YMap) or is_flow(text, node):
            continue
        if any(k.range == d.range or (k.value == "execute_tool" and v.range == d.range)
               for k, v in node.pairs()):  # fmt: skip
            step = node
            break
    if step is None:
        return
    sid = fx.pf.skill_id
    sk = fx.p.skill(sid) if sid else None
    sem = fx.sem
    lines: list[tuple[str, str]] = []
    for m in missing:
        target = sem.step_write_target(sk, m)
        ns = {"skill": sid, "project": "project"}.get(target or "")
        lines.append((m, f"session.{ns}.{m}" if ns else "TODO"))
    params_key = step.key_node("parameters")
    params = step.get("parameters")
    edit: TextEdit | None = None
    if params_key is None:
        tool_key = step.key_node("execute_tool")
        if tool_key is None:
            return
        col = column(text, tool_key.range.start)
        body = [f"{' ' * col}parameters:", *(f"{' ' * (col + 2)}{k}: {v}" for k, v in lines)]
        edit = insert_lines(text, content_end(text, step.get("execute_tool")), body)
    elif isinstance(params, YScalar) and params.is_null:
        col = column(text, params_key.range.start) + 2
        body = [f"{' ' * col}{k}: {v}" for k, v in lines]
        edit = insert_lines(text, params_key.range.end, body)
    elif isinstance(params, YMap) and params.items:
        if is_flow(text, params):
            close = params.range.end - 1
            if text[close] != "}":
                return
            added = "".join(f", {k}: {v}" for k, v in lines)
            edit = TextEdit(TextRange(close, close), added)
        else:
            col = column(text, params.items[0][0].range.start)
            body = [f"{' ' * col}{k}: {v}" for k, v in lines]
            edit = insert_lines(text, content_end(text, params), body)
    if edit is None or inside_line_comment(text, edit.range.start):
        return
    names = ", ".join(f"`{m}`" for m in missing)
    yield fx.action(f"Add {names} under `parameters`", d, ws_edit(fx.path, edit))


FIXES: Fixes = {
    "lsp.tools.unknown_parameter": (rename_parameter,),
    "lsp.tools.missing_parameter": (add_parameters,),
}
