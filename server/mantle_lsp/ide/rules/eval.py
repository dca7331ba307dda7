"""The evaluation's files (``eval/``, docs/language/eval.md): what ``evaluate_agent``
rejects before it runs (CALM-only assertion keys, file names, the conftest's prompt
paths), and every name a scenario holds resolved against the agent the way the runtime
matches it (skills, steps, blocks, memory keys and values, tools, arguments, responses,
initial slots). A scenario's own shape is checked by its parser (syntax/eval_yml.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from ...model.defaults import AUTONOMOUS_STEP, FRAMEWORK_TOOLS
from ...model.layout import FileKind as K
from ...model.project import ParsedFile
from ...model.semantics import FieldType, TrackerKey
from ...syntax.eval_yml import (
    CALM_ONLY_KEYS,
    Assertion,
    ConftestDoc,
    MemoryItem,
    Name,
    ScenarioDoc,
)
from ...syntax.text import TextRange
from ...syntax.yaml12 import to_python12, value12
from ...syntax.yaml_tree import YMap, YNode, YScalar, YSeq
from ..codes import Severity
from ..types import CodeAction, NameFix
from .base import Checker, Diagnostic, did_you_mean, meant, rule
from .fix import Fix, Fixes, change_to, own_data, prepared

C_CALM = "eval.scenario.calm_assertion"
C_UNSAFE_SLUG = "eval.scenario.unsafe_slug"
C_DUPLICATE_SLUG = "eval.scenario.duplicate_slug"
C_PROMPT = "eval.conftest.prompt_template"
C_SHADOWED = "eval.conftest.shadowed"
C_SKILL = "lsp.eval.unknown_skill"
C_STEP = "lsp.eval.unknown_step"
C_BLOCK = "lsp.eval.unknown_block"
C_MEMORY = "lsp.eval.unknown_memory"
C_VALUE = "lsp.eval.memory_value"
C_TOOL = "lsp.eval.unknown_tool"
C_ARGUMENT = "lsp.eval.unknown_argument"
C_TOOL_SKILL = "lsp.eval.tool_skill"
C_RESPONSE = "lsp.eval.unknown_response"
C_SLOT = "lsp.eval.initial_slot"
C_VACUOUS = "lsp.eval.vacuous"

# what reference checks read: the agent's declarations
_AGENT = (
    K.SKILL_MD,
    K.SKILL_MEMORY,
    K.PROJECT_MEMORY,
    K.SKILL_RESPONSES,
    K.PROJECT_RESPONSES,
    K.SKILL_TOOLS,
    K.SHARED_TOOLS,
    K.INTEGRATIONS,
)
_UNSAFE_SLUG_CHARS = frozenset('/\\<>:"|?*')
# the framework tools whose runs `tools_within_one_turn` counts (the others are hidden
# from the judge and from tool scoring)
_COUNTED_FRAMEWORK_TOOLS = frozenset({"search_knowledge", "cannot_help"})


def _scenarios(ck: Checker) -> list[tuple[ParsedFile, ScenarioDoc]]:
    out = []
    for path in sorted(ck.p.paths_by_kind().get(K.EVAL_SCENARIO, ())):
        pf = ck.p.files[path]
        if isinstance(pf.doc, ScenarioDoc):
            out.append((pf, pf.doc))
    return out


# -- what evaluate_agent rejects before it runs ----------------------------------------------


@rule(codes=(C_CALM,), scope="project", reports_on=(K.EVAL_SCENARIO,), reads=(K.EVAL_SCENARIO,
      *_AGENT))  # fmt: skip
def calm_assertions(ck: Checker) -> None:
    """Assertion keys of the CALM engine (sequencing steps included): `evaluate_agent`
    rejects the whole batch. Where the target resolves unambiguously, the finding carries
    the Mantle form as an (unsafe) fix."""
    for pf, doc in _scenarios(ck):
        for a in doc.all_assertions():
            if a.key not in CALM_ONLY_KEYS:
                continue
            fix = _mantle_form(ck, pf.text, a)
            instead = _INSTEAD.get(a.key)
            hint = f" (the Mantle form is `{instead}`)" if instead else ""
            ck.emit(
                pf.path,
                a.key_node.range,
                C_CALM,
                f"`{a.key}` is a CALM assertion: the evaluation of a Mantle agent rejects the "
                f"whole batch of scenarios on it{hint}",
                data={"fix": fix} if fix is not None else None,
            )


_INSTEAD = {
    "action_executed": "tool_executed",
    "slot_was_set": "memory_was_set",
    "slot_was_not_set": "memory_was_not_set",
    "flow_started": "skill_activated",
    "flow_completed": "skill_completed",
    "flow_cancelled": "skill_cancelled",
    "flow_interrupted": "skill_interrupted",
}


def _yaml_text(s: str) -> str:
    """``s`` as a YAML 1.2 scalar that reads back as that string."""
    if re.fullmatch(r"[A-Za-z_][\w.-]*", s) and value12_plain_is_str(s):
        return s
    return json.dumps(s, ensure_ascii=False)


def value12_plain_is_str(s: str) -> bool:
    from ...syntax.yaml12 import plain12

    return isinstance(plain12(s), str)


def _mantle_form(ck: Checker, text: str, a: Assertion) -> dict[str, Any] | None:
    """The rewrite of CALM entry ``a`` into its Mantle form, when its target resolves to
    exactly one thing: ``{"title", "edits": [[start, end, text], …]}``."""
    key, body = a.key, a.body
    names = a.calm_names
    if key == "action_executed" and len(names) == 1:
        tool = names[0].text
        tools = ck.sem.eval_tools()
        if tool in tools.local and tool not in FRAMEWORK_TOOLS and tool not in tools.mcp:
            new = f"tool_executed: {{tool_name: {_yaml_text(tool)}, source: local}}"
            return _replace_entry(a, new, f"Change to `tool_executed` of local tool `{tool}`")
        return None
    if key in ("slot_was_set", "slot_was_not_set"):
        if not names or (isinstance(body, YSeq) and len(names) != len(body.items)):
            return None
        edits: list[list[Any]] = [[*a.key_node.range, _INSTEAD[key]]]
        for n in names:
            target = _tracker_target(ck, n.text)
            if target is None:
                return None
            if target != n.text:
                edits.append([*n.range, _yaml_text(target)])
        return {"title": f"Change to `{_INSTEAD[key]}`", "edits": edits}
    if key in ("flow_started", "flow_completed", "flow_cancelled"):
        flow = _flow_target(a)
        if flow is None or ck.p.skill(flow) is None:
            return None
        new_key = _INSTEAD[key]
        return _replace_entry(
            a, f"{new_key}: {{skill_id: {_yaml_text(flow)}}}", f"Change to `{new_key}` of `{flow}`"
        )
    return None


def _flow_target(a: Assertion) -> str | None:
    """The one flow id of a `flow_*` entry (no step id, no several ids)."""
    body = a.body
    if isinstance(body, YScalar):
        v = value12(body)
        return v if isinstance(v, str) and v.strip() else None
    if not isinstance(body, YMap):
        return None
    data = to_python12(body)
    if not isinstance(data, dict):
        return None
    if a.key == "flow_started":
        ids = data.get("flow_ids")
        if set(data) == {"flow_ids", "operator"} and isinstance(ids, list) and len(ids) == 1:
            return ids[0] if isinstance(ids[0], str) else None
        return None
    flow = data.get("flow_id")
    return flow if set(data) == {"flow_id"} and isinstance(flow, str) else None


def _replace_entry(a: Assertion, new: str, title: str) -> dict[str, Any]:
    return {"title": title, "edits": [[*a.range, new]]}


def _tracker_target(ck: Checker, name: str) -> str | None:
    """The tracker key a (slot or memory) name stands for, when there is exactly one."""
    tk = ck.sem.tracker_key(name)
    if tk.kind == "ok":
        return name
    if tk.kind in ("bare", "session", "wrong_scope", "unknown_namespace"):
        return tk.meant
    return None


@rule(codes=(C_UNSAFE_SLUG, C_DUPLICATE_SLUG), scope="project", reports_on=(K.EVAL_SCENARIO,),
      reads=(K.EVAL_SCENARIO,))  # fmt: skip
def scenario_names(ck: Checker) -> None:
    """Scenario file names: the evaluation names a scenario's results folder after its
    file name (its *slug*), refuses a name that is not a safe folder name, and refuses a
    batch in which two slugs are equal up to case (any folders)."""
    scenarios = _scenarios(ck)
    by_slug: dict[str, list[ParsedFile]] = {}
    for pf, doc in scenarios:
        slug = pf.path.stem
        start = _anchor(pf, doc)
        bad = sorted(_UNSAFE_SLUG_CHARS.intersection(slug))
        if not slug.strip() or slug in (".", "..") or bad:
            why = f"it contains {', '.join(f'`{c}`' for c in bad)}" if bad else "it is blank"
            ck.emit(
                pf.path,
                start,
                C_UNSAFE_SLUG,
                f"the evaluation refuses the file name `{pf.path.name}` as a results folder "
                f"name ({why}); rename the file",
            )
        if doc.is_scenario:
            by_slug.setdefault(slug.casefold(), []).append(pf)
    for files in by_slug.values():
        if len(files) < 2:
            continue
        for pf in files:
            others = [f for f in files if f is not pf]
            shown = ", ".join(f"`{f.path.relative_to(ck.p.root).as_posix()}`" for f in others)
            doc = pf.doc
            assert isinstance(doc, ScenarioDoc)
            ck.emit(
                pf.path,
                _anchor(pf, doc),
                C_DUPLICATE_SLUG,
                f"`{pf.path.stem}` is also the name of {shown} (up to case): their results "
                "would share a folder, so the evaluation refuses to run them in one batch",
                related=[
                    ck.related(f.path, TextRange(0, min(1, len(f.text))), "the other scenario")
                    for f in others
                ],
            )


def _anchor(pf: ParsedFile, doc: ScenarioDoc) -> TextRange:
    """Where a finding about the whole file goes: the `scenario` key, else the start."""
    root = doc.root
    if isinstance(root, YMap) and root.items:
        return root.items[0][0].range
    return TextRange(0, min(1, len(pf.text)))


@rule(
    codes=(C_PROMPT, C_SHADOWED, "eval.conftest.invalid", "eval.yaml.duplicate_key",
           "lsp.yaml.syntax_error"),
    scope="project",
    reports_on=(K.EVAL_CONFTEST,),
    reads=(K.EVAL_CONFTEST,),
)  # fmt: skip
def conftest(ck: Checker) -> None:
    """eval/conftest.yml: what its parser found (in the file the evaluation reads only),
    the prompt templates it names exist, are not empty and lie inside the project; a
    conftest.yaml next to conftest.yml is never read."""
    confs = sorted(ck.p.paths_by_kind().get(K.EVAL_CONFTEST, ()), key=lambda p: p.suffix != ".yml")
    if len(confs) > 1:
        for path in confs[1:]:
            ck.emit(
                path,
                TextRange(0, min(1, len(ck.p.files[path].text))),
                C_SHADOWED,
                f"`{path.name}` is never read: the evaluation reads `{confs[0].name}`, next to "
                "it; merge the two and delete this one",
                related=[ck.related(confs[0], TextRange(0, 0), "the conftest that is read")],
            )
    if not confs:
        return
    pf = ck.p.files[confs[0]]
    for i in pf.quiet_issues:
        ck.emit(pf.path, i.range, i.code, i.message, i.severity, i.data)
    doc = pf.doc
    if not isinstance(doc, ConftestDoc):
        return
    for prompt in doc.prompts:
        verdict = ck.p.project_text_file(prompt.name.text)
        if verdict == "ok":
            continue
        why = {
            "outside": "leads out of the project",
            "missing": "names no file of the project (paths are relative to the project root)",
            "directory": "names a folder, not a file",
            "empty": "names an empty file",
            "unreadable": "names a file that cannot be read",
        }[verdict]
        ck.emit(
            pf.path,
            prompt.name.range,
            C_PROMPT,
            f"`{prompt.key}` {why}: the evaluation stops before it runs anything",
        )


# -- every name a scenario holds, against the agent ----------------------------------------


@rule(
    codes=(C_SKILL, C_STEP, C_BLOCK, C_MEMORY, C_VALUE, C_TOOL, C_ARGUMENT, C_TOOL_SKILL,
           C_RESPONSE, C_SLOT, C_VACUOUS),
    scope="project",
    reports_on=(K.EVAL_SCENARIO,),
    reads=(K.EVAL_SCENARIO, *_AGENT),
)  # fmt: skip
def scenario_references(ck: Checker) -> None:
    """Every name a scenario's assertions hold, resolved as the runtime matches it: an
    assertion naming something the agent never emits can never pass (an error), a
    negative one passes vacuously (a warning)."""
    for pf, doc in _scenarios(ck):
        _References(ck, pf, doc).check()


class _References:
    def __init__(self, ck: Checker, pf: ParsedFile, doc: ScenarioDoc) -> None:
        self.ck = ck
        self.pf = pf
        self.doc = doc
        self.sem = ck.sem

    def emit(
        self,
        rng: TextRange,
        code: str,
        message: str,
        a: Assertion | None,
        data: dict[str, Any] | None = None,
        severity: Severity | None = None,
    ) -> None:
        """Emit ``code``; for a negative assertion (which then always passes) the
        vacuous-pass warning instead."""
        if a is not None and a.negative and code != C_VALUE:
            message = f"`{a.key}` always passes: {message}"
            code, severity = C_VACUOUS, None
        self.ck.emit(self.pf.path, rng, code, message, severity, data)

    def check(self) -> None:
        for a in self.doc.all_assertions():
            if not a.valid or a.key in CALM_ONLY_KEYS:
                continue
            if a.skill is not None and a.tool is None and self.skill(a.skill, a):
                self.block_and_step(a)
            for m in a.memory:
                self.memory(m, a)
            if a.tool is not None:
                self.tool(a)
            if a.response is not None:
                self.response(a.response, a)
        for s in self.doc.initial_slots:
            if s.key is not None:
                self.initial_slot(s.key, s.value)

    # -- skills, blocks, steps -------------------------------------------------------------
    def skill(self, n: Name, a: Assertion | None) -> bool:
        """Whether ``n`` is a skill id (else reported)."""
        sid = n.text
        p = self.ck.p
        if p.has_skill(sid):
            return True
        named = self.sem.skills_named(sid)
        if len(named) == 1:
            self.emit(
                n.range,
                C_SKILL,
                f"`{sid}` is the frontmatter `name:` of skill `{named[0]}`; events carry the "
                f"skill's folder name: write `{named[0]}`",
                a,
                {"wrong": sid, "meant": named[0], "only_reading": True},
            )
            return False
        ids = p.catalog_ids()
        if sid.startswith("_"):
            why = "folders starting with `_` are not skills (the engine skips them)"
        elif len(named) > 1:
            why = f"it is the frontmatter `name:` of {', '.join(f'`{s}`' for s in named)}"
        else:
            why = "no skill folder (nor bundled skill) has that id" + did_you_mean(sid, ids)
        self.emit(n.range, C_SKILL, f"`{sid}` is not a skill: {why}", a, meant(sid, ids))
        return False

    def block_and_step(self, a: Assertion) -> None:
        assert a.skill is not None
        if a.block is None and a.step is None:
            return
        sid = a.skill.text
        block = a.block.text if a.block is not None else None
        if a.block is not None:
            blocks = self.sem.eval_block_ids(sid)
            if blocks is None:
                return  # not known here (a bundled skill)
            if a.block.text not in blocks:
                self.unknown_block(a, a.block, sid, blocks)
                return
        if a.step is None:
            return
        steps = self.sem.eval_step_ids(sid, block)
        if steps is None or a.step.text in steps:
            return
        choices = sorted(steps - {"END"})
        if block is not None:
            where = f"a step of block `{block}` of skill `{sid}`"
        else:
            where = f"`{AUTONOMOUS_STEP}` (prose) nor a step of an ordered block of skill `{sid}`"
        shown = ", ".join(f"`{s}`" for s in choices[:8]) + (", …" if len(choices) > 8 else "")
        self.emit(
            a.step.range,
            C_STEP,
            f"step `{a.step.text}` is not {where}; it is one of {shown}"
            + did_you_mean(a.step.text, choices),
            a,
            meant(a.step.text, choices),
        )

    def unknown_block(self, a: Assertion, n: Name, sid: str, blocks: list[str]) -> None:
        bid = n.text
        prefix = f"{sid}__"
        if bid.startswith(prefix) and bid[len(prefix) :] in blocks:
            inner = bid[len(prefix) :]
            self.emit(
                n.range,
                C_BLOCK,
                f"`{bid}` is the compiled address of block `{inner}`; events carry the block's "
                f"own id: write `{inner}`",
                a,
                {"wrong": bid, "meant": inner, "only_reading": True},
            )
            return
        others = [s for s, sk in self.ck.p.skills.items() if s != sid and sk.doc is not None
                  and any(b.id == bid for b in sk.doc.blocks)]  # fmt: skip
        if others:
            why = f"it is a block of {', '.join(f'`{s}`' for s in others)}, not of `{sid}`"
        elif blocks:
            why = f"its blocks are {', '.join(f'`{b}`' for b in blocks)}" + did_you_mean(
                bid, blocks
            )
        else:
            why = "it has no ordered block"
        self.emit(
            n.range, C_BLOCK, f"`{bid}` is not an ordered block of skill `{sid}`: {why}", a,
            meant(bid, blocks),
        )  # fmt: skip

    # -- memory ----------------------------------------------------------------------------
    def memory(self, m: MemoryItem, a: Assertion) -> None:
        if m.name is None:
            return
        name = m.name.text
        tk = self.sem.tracker_key(name)
        if tk.kind == "ok":
            if m.value is not None and tk.field is not None:
                self.memory_value(m, tk.field, a)
            return
        self.emit(
            m.name.range,
            C_MEMORY,
            f"`{name}` is never a memory key the agent writes: {_why_key(name, tk)}",
            a,
            _key_data(name, tk),
            "warning" if tk.kind == "system_unknown" else None,
        )

    def memory_value(self, m: MemoryItem, ft: FieldType, a: Assertion) -> None:
        node = m.value
        assert node is not None and m.name is not None
        if isinstance(node, YScalar) and node.style is None and "${" in node.raw:
            return  # expanded from the environment when the evaluation reads the file
        value = to_python12(node)
        why = _never_equal(value, ft)
        if why is None:
            return
        if a.negative:
            head = f"`{a.key}` always passes"
        else:
            head = f"`{a.key}` never passes (unless a tool writes such a value)"
        self.emit(node.range, C_VALUE, f"{head}: `{m.name.text}` {why}", a)

    def initial_slot(self, key: Name, value: YNode) -> None:
        """`setup.initial_slots`: seed project fields bare or `project.f` go to the session
        start; every other key is set as a slot under that very name."""
        name = key.text
        p = self.ck.p
        bare = name[len("project.") :] if name.startswith("project.") else name
        pf = p.project_field(bare)
        if pf is not None and pf.seed:
            facts = pf.facts
            self.slot_value(key, value, FieldType(facts.type, facts.enum_values,
                                                  facts.enum_booleans))  # fmt: skip
            return
        tk = self.sem.tracker_key(name)
        if tk.kind == "ok":
            if tk.field is not None:
                self.slot_value(key, value, tk.field)
            return
        if tk.kind == "system_unknown" or name.startswith("system."):
            why = "`system` entries belong to the engine"
        else:
            why = _why_key(name, tk)
        self.ck.emit(
            self.pf.path,
            key.range,
            C_SLOT,
            f"initial slot `{name}` sets a slot nothing reads: {why} (a seed project field "
            "may be bare or `project.<f>`; any other field needs its namespace)",
            data=_key_data(name, tk),
        )

    def slot_value(self, key: Name, node: YNode, ft: FieldType) -> None:
        if isinstance(node, YScalar) and (
            value12(node) is None or (node.style is None and "${" in node.raw)
        ):
            return  # null leaves the field unset
        why = _never_equal(to_python12(node), ft)
        if why is not None:
            self.ck.emit(
                self.pf.path,
                node.range,
                C_VALUE,
                f"initial slot `{key.text}` {why}",
            )

    # -- tools -------------------------------------------------------------------------------
    def tool(self, a: Assertion) -> None:
        call = a.tool
        assert call is not None
        if call.tool is None or call.source is None:
            return
        name = call.tool.text
        tools = self.sem.eval_tools()
        mcp = tools.mcp.get(name, frozenset())
        integ = self.ck.p.integrations
        if call.source == "mcp":
            if call.server is None:
                return
            server = call.server.text
            servers = {s for s, _ in mcp}
            if server in servers:
                pass
            elif integ is not None and server not in integ.mcp_servers:
                declared = sorted(integ.mcp_servers)
                self.emit(
                    call.server.range,
                    C_TOOL,
                    f"MCP server `{server}` is not declared under `mcp_servers` in "
                    "integrations.yml" + did_you_mean(server, declared),
                    a,
                    meant(server, declared),
                )
                return
            elif servers:
                shown = ", ".join(f"`{s}`" for s in sorted(servers))
                self.emit(
                    call.tool.range,
                    C_TOOL,
                    f"no skill imports `{name}` from MCP server `{server}` (it comes from {shown})",
                    a,
                )
                return
            elif name in tools.local:
                self.emit(
                    call.tool.range,
                    C_TOOL,
                    f"`{name}` is a local tool, not one from an MCP server: write "
                    "`source: local` (and no `mcp_server`)",
                    a,
                )
                return
            else:
                imported = sorted(t for t, ss in tools.mcp.items() if server in {s for s, _ in ss})
                self.emit(
                    call.tool.range,
                    C_TOOL,
                    f"no skill imports `{name}` from MCP server `{server}` (`import_tools: "
                    f"[mcp/{server}:{name}]` in a skill's frontmatter)"
                    + did_you_mean(name, imported),
                    a,
                    meant(name, imported),
                )
                return
        else:
            grouped = a.parent is not None and a.parent.key == "tools_within_one_turn"
            if grouped and name in FRAMEWORK_TOOLS and name not in _COUNTED_FRAMEWORK_TOOLS:
                self.emit(
                    call.tool.range,
                    C_TOOL,
                    f"`{name}` is a framework tool, and `tools_within_one_turn` counts none but "
                    "`search_knowledge` and `cannot_help`: this call never matches",
                    a,
                )
                return
            if name not in tools.local:
                if name in tools.possible or not tools.complete:
                    return  # may be a tool (made by a factory) or in a module that does not parse
                if mcp:
                    from_servers = sorted({s for s, _ in mcp})
                    shown = ", ".join(f"`{s}`" for s in from_servers)
                    self.emit(
                        call.tool.range,
                        C_TOOL,
                        f"`{name}` comes from MCP server {shown}: write `source: mcp` and "
                        f"`mcp_server: {from_servers[0]}`",
                        a,
                    )
                    return
                known = sorted(tools.local - set(FRAMEWORK_TOOLS))
                self.emit(
                    call.tool.range,
                    C_TOOL,
                    f"`{name}` is not a tool of the agent (no `@tool` function of that name in "
                    "a tools module, nor a framework tool)" + did_you_mean(name, known),
                    a,
                    meant(name, known),
                )
                return
            self.arguments(a, name)
        if call.skill is not None and self.skill(call.skill, a):
            self.tool_skill(a, name)

    def arguments(self, a: Assertion, name: str) -> None:
        call = a.tool
        assert call is not None
        if not call.arguments:
            return
        sid = call.skill.text if call.skill is not None else None
        params = self.sem.eval_tool_params(name, sid if sid and self.ck.p.skill(sid) else None)
        if params is None:
            return
        for arg, value in call.arguments:
            if arg.text in params:
                continue
            if isinstance(value, YScalar) and value12(value) is None:
                continue  # a missing argument reads as None: `null` matches it
            shown = ", ".join(f"`{p}`" for p in params) or "none"
            self.emit(
                arg.range,
                C_ARGUMENT,
                f"tool `{name}` takes no parameter `{arg.text}` (its parameters: {shown})"
                + did_you_mean(arg.text, params),
                a,
                meant(arg.text, params),
            )

    def tool_skill(self, a: Assertion, name: str) -> None:
        call = a.tool
        assert call is not None and call.skill is not None and call.source is not None
        sid = call.skill.text
        server = call.server.text if call.server is not None else None
        sees = self.sem.eval_tool_seen_by(sid, name, call.source, server)
        if sees is False:
            self.emit(
                call.skill.range,
                C_TOOL_SKILL,
                f"skill `{sid}` does not see tool `{name}` (its own tools, the shared tools it "
                "declares and its MCP imports): the event of a run by `" + sid + "` never comes",
                a,
            )

    # -- responses ------------------------------------------------------------------------
    def response(self, n: Name, a: Assertion) -> None:
        if self.sem.response_exists(n.text):
            return
        names = sorted(self.sem.response_names())
        self.emit(
            n.range,
            C_RESPONSE,
            f"`{n.text}` is not a response of the agent (no `responses.yml` defines it)"
            + did_you_mean(n.text, names),
            a,
            meant(n.text, names),
        )


def _why_key(name: str, tk: TrackerKey) -> str:
    kind = tk.kind
    if kind == "bare":
        if tk.meant:
            return f"a memory key has its namespace: write `{tk.meant}`"
        if tk.candidates:
            return "a memory key has its namespace: one of " + ", ".join(
                f"`{c}`" for c in tk.candidates
            )
        return (
            "a memory key has its namespace (`project.<f>`, `<skill>.<f>`), and no memory.yml "
            "declares this field"
        )
    if kind == "session":
        tail = f": write `{tk.meant}`" if tk.meant else ""
        return f"`session.` is how conditions read memory, not part of the key{tail}"
    if kind == "wrong_scope":
        return f"the field is declared elsewhere: write `{tk.meant}`"
    if kind == "system_unknown":
        return "the engine writes no such `system` entry"
    if kind == "unknown_namespace":
        ns = name.partition(".")[0]
        if tk.meant:
            return f"there is no skill `{ns}`: write `{tk.meant}`"
        return f"there is no skill `{ns}`" + did_you_mean(ns, tk.candidates)
    entry = name.partition(".")[2]
    return f"no field `{entry}` is declared there" + did_you_mean(name, tk.candidates)


def _key_data(name: str, tk: TrackerKey) -> dict[str, Any] | None:
    if tk.meant is not None:
        only = tk.kind in ("bare", "session", "wrong_scope")
        return {"wrong": name, "meant": tk.meant, "only_reading": only}
    return meant(name, tk.candidates)


def _never_equal(value: Any, ft: FieldType) -> str | None:
    """Why ``value`` never equals (Python ``==``) a value of a field of type ``ft``, or
    None when it may."""
    t = ft.type
    numeric = isinstance(value, (int, float)) and not (
        isinstance(value, float) and math.isnan(value)
    )
    if t in ("any", "json"):
        return None
    if isinstance(value, float) and math.isnan(value):
        return "is `.nan`, which equals nothing"
    if t in ("int", "float"):
        if numeric:
            return None
        return f"holds a number (`{t}`) and {_what(value)} never equals one"
    if t == "bool":
        if isinstance(value, bool) or (numeric and value in (0, 1)):
            return None
        hint = ""
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "on", "off"):
            hint = " (write `true` or `false` without quotes)"
        return f"holds a boolean and {_what(value)} never equals one{hint}"
    if t == "text":
        return None if isinstance(value, str) else f"holds text and {_what(value)} never equals it"
    if t == "list":
        return None if isinstance(value, list) else f"holds a list and {_what(value)} is not one"
    if t == "categorical" and ft.enum_values:
        if isinstance(value, str) and value in ft.enum_values:
            return None
        if isinstance(value, bool) and value in ft.enum_booleans.values():
            return None
        if not isinstance(value, str) and str(value) in ft.enum_values:
            return None  # an enum item written as a number or boolean in memory.yml
        shown = ", ".join(f"`{v}`" for v in ft.enum_values)
        return f"is one of {shown}, never {_what(value)}" + did_you_mean(str(value), ft.enum_values)
    return None


def _what(value: Any) -> str:
    if isinstance(value, str):
        return f'the text `"{value}"`'
    if isinstance(value, bool):
        return f"the boolean `{str(value).lower()}`"
    if isinstance(value, (int, float)):
        return f"the number `{value}`"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "this value"


# -- fixes ---------------------------------------------------------------------------------


@own_data
def _memory_key(fx: Fix, d: Diagnostic) -> Iterator[CodeAction]:
    """A scenario's memory key changed to the one meant (safe where it is the only reading:
    the bare or `session.` form of a declared field). Scenarios are not in the index, so
    the action names the fields itself: a run of fixes never points a scenario at a field
    a fix invented (ide/fixes.Names)."""
    data = d.data or {}
    to = data.get("meant")
    if isinstance(to, str):
        names = _tracker_rename(data.get("wrong"), to)
        yield from change_to(fx, d, to, safe=bool(data.get("only_reading")), names=names)


def _tracker_rename(wrong: object, suggestion: str) -> NameFix | None:
    """The fields a did-you-mean of memory key ``wrong`` changes (``<ns>.<field>`` as the
    tracker writes keys); None for keys of another shape or the same field written in
    full (`account_number` → `project.account_number`)."""
    if not isinstance(wrong, str):
        return None
    to = suggestion.split(".")
    if len(to) != 2 or not all(to):
        return None
    parts = wrong.removeprefix("session.").split(".")
    frm = parts if len(parts) == 2 and all(parts) else [to[0], parts[-1]]
    if frm == to:
        return None
    return NameFix(("field", frm[0], frm[1]), ("field", to[0], to[1]))


FIXES: Fixes = {
    C_CALM: (prepared,),
    C_MEMORY: (_memory_key,),
    C_SLOT: (_memory_key,),
}
