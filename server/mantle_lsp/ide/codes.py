"""The registry of diagnostic codes: one stable code, one default severity, one summary.

Engine codes (``mantle.*``, ``skill.*``, ``responses.*``) keep the engine's severity.
Our own codes are ``lsp.<area>.<name>``; they describe problems the engine does not
report, so they are never errors on a project the engine accepts (see docs/decisions.md).
``docs/diagnostics.md`` is generated from this table (``mantle-lsp explain --markdown``)
and a test keeps the two in sync.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True)
class CodeInfo:
    code: str
    severity: Severity
    summary: str
    engine: bool  # True: the engine (rasa-pro 3.21) reports this code itself
    engine_note: str = ""  # how the engine surfaces it, when not as this code

    @property
    def engine_code(self) -> str | None:
        """The code rasa-pro reports this problem under, when that is not ``code``: a
        compile error of a skill is folded into ``mantle.validation.skill.failed_to_load``
        (and the engine then drops the whole skill)."""
        return FAILED_TO_LOAD if self.engine_note == _LOAD else None


def _e(code: str, summary: str, severity: Severity = "error", note: str = "") -> CodeInfo:
    return CodeInfo(code, severity, summary, True, note)


def _l(code: str, summary: str, severity: Severity = "warning", note: str = "") -> CodeInfo:
    return CodeInfo(code, severity, summary, False, note)


FAILED_TO_LOAD = "mantle.validation.skill.failed_to_load"
_LOAD = "the engine reports it inside mantle.validation.skill.failed_to_load (first error only)"
_RUNTIME = "reported when the agent loads (`rasa run`, `rasa inspect`), not by `rasa train`"
_EVAL = "reported by the evaluation (`load_scenario`, `evaluate_agent`), not by `rasa train`"

_ALL = [
    # -- skill.md compile errors (engine: folded into failed_to_load) -------------------
    _e(
        "skill.markdown.invalid_frontmatter_delimiter",
        "skill.md does not open or close its frontmatter with `---`",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.invalid_frontmatter",
        "the frontmatter is not a YAML mapping, has a YAML error, or a key has the wrong type",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.unknown_frontmatter_key",
        "a frontmatter key the engine does not know",
        note=_LOAD,
    ),
    _e("skill.requires.removed", "skill-level `requires:` was removed", note=_LOAD),
    _e("skill.precondition.invalid", "`precondition` is empty or not a string", note=_LOAD),
    _e(
        "skill.markdown.invalid_boolean_frontmatter",
        "`hidden` / `disabled` / `always_include_in_prompt` is not a real boolean",
        note=_LOAD,
    ),
    _e("skill.markdown.invalid_routing", "`routing` flags are not booleans", note=_LOAD),
    _e(
        "skill.markdown.invalid_import_tools",
        "`import_tools` is not a list of strings or has a malformed `mcp/…` entry",
        note=_LOAD,
    ),
    _e("skill.markdown.invalid_tool_constraints", "malformed `tool_constraints`", note=_LOAD),
    _e(
        "skill.markdown.invalid_utter",
        "malformed `utter` triggers (incl. a `when:` condition that does not parse)",
        note=_LOAD,
    ),
    _e("skill.markdown.invalid_knowledge_answering", "malformed `knowledge_answering`", note=_LOAD),
    _e(
        "skill.complete_when.mapping_required",
        "skill-level `complete_when` written as a string",
        note=_LOAD,
    ),
    _e(
        "skill.complete_when.invalid",
        "malformed skill-level `complete_when` (incl. a condition that does not parse)",
        note=_LOAD,
    ),
    _e(
        "skill.complete_when.requires_prose",
        "skill-level `complete_when` on a blocks-only skill",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.missing_instructions",
        "the body has neither prose nor an ordered block",
        note=_LOAD,
    ),
    _e("skill.markdown.unsupported_prose_else", "a paragraph starts with `else:`", note=_LOAD),
    _e("skill.markdown.unsupported_prose_elif", "a paragraph starts with `elif:`", note=_LOAD),
    _e("skill.markdown.empty_prose_if_condition", "`if:` without a condition", note=_LOAD),
    _e("skill.markdown.empty_prose_if_body", "`if:` that scopes no lines", note=_LOAD),
    _e(
        "skill.markdown.invalid_block_reference",
        "`@block.<id>` names no block of this skill",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.invalid_ordered_block",
        "an ordered block without `id=`, with a YAML error, a non-mapping body, or a duplicate id",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.ordered_block_description_forbidden",
        "`description:` in an ordered block",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.ordered_block_routable_forbidden",
        "`routable:` in an ordered block",
        note=_LOAD,
    ),
    _e(
        "skill.markdown.invalid_step_target",
        "`call:`/`link:` names a compiled block address "
        "that does not exist or belongs to another skill",
        note=_LOAD,
    ),
    _e(
        "skill.step.invalid",
        "a step whose kind cannot be inferred, with an unknown or "
        "misplaced key, or a value of the wrong type",
        note=_LOAD,
    ),
    _e("skill.step.outdated_force_collection", "`force_collection` on a collect step", note=_LOAD),
    _e("skill.step.outdated_collect_tool", "`tool:` on a collect step", note=_LOAD),
    _e(
        "mantle.validation.skill.failed_to_load",
        "a skill folder fails to load (no skill.md, or a skill memory.yml the engine cannot load)",
    ),
    # -- skills --------------------------------------------------------------------------
    _e("mantle.validation.skill.missing_description", "a skill without `description`"),
    _e("mantle.validation.skill.reserved_id", "a skill folder named `project` or `system`"),
    _e("mantle.validation.skill.invalid_id", "a skill folder name containing `.`"),
    _e(
        "mantle.validation.skill.is_default_not_allowed",
        "`routing.is_default: true` on a skill that does not override a bundled default",
    ),
    _e(
        "mantle.validation.skill.self_skill_not_callable",
        "a step `call:`s or `link:`s its own skill",
    ),
    _e(
        "skill.referenced.invalid_target",
        "`@skill.<id>` (or a cross-skill call/link) names no skill, or one rasa-pro fails to load",
    ),
    _e("skill.prose.hidden_skill_reference", "`@skill.<id>` names a hidden skill"),
    # -- prose -----------------------------------------------------------------------------
    _e("mantle.validation.prose.invalid_if_expression", "a prose `if:` condition does not parse"),
    _e(
        "mantle.validation.prose.unknown_memory_key",
        "a prose `if:` condition reads a key that is not readable from this skill",
    ),
    _e(
        "mantle.validation.prose.unknown_memory_reference",
        "`@memory.<ns>.<entry>` names a key that is not readable from this skill",
    ),
    _e(
        "mantle.validation.prose.incomplete_memory_reference",
        "`@memory` without exactly a namespace and an entry",
    ),
    _e(
        "mantle.validation.prose.incomplete_at_reference",
        "`@skill` / `@block` / `@tool` without exactly one id",
    ),
    _e(
        "mantle.validation.prose.session_reference_in_instructions",
        "`session.<ns>.<entry>` in instruction text, where `@memory.<ns>.<entry>` is meant",
    ),
    # -- flow ------------------------------------------------------------------------------
    _e("mantle.validation.flow.unresolved_next", "`next`/`then`/`else` names no step of the block"),
    _e("mantle.validation.flow.next_missing_else", "a branch list with `if:` but no `else:`"),
    _e("mantle.validation.flow.unresolved_call", "`call:` names no skill or block"),
    _e("mantle.validation.flow.unresolved_link", "`link:` names no skill or block"),
    _e(
        "mantle.validation.flow.internal_not_callable",
        "`call:`/`link:` to a block of a skill with prose (such blocks are internal)",
    ),
    _e(
        "mantle.validation.response.missing",
        "`action:`/`utterance:` names a response that does not exist",
    ),
    _e(
        "mantle.validation.action.unknown",
        "`action:` that is not `utter_*`, `action_listen` or `hangup`",
    ),
    _e(
        "mantle.validation.execute_step.invalid_session_parameter",
        "an `execute_tool` parameter "
        "starts with `session.` but is not exactly `session.<ns>.<entry>`",
    ),
    _e(
        "mantle.validation.execute_step.unknown_memory_key",
        "an `execute_tool` parameter reads a key that is not readable from this skill",
    ),
    # -- memory ----------------------------------------------------------------------------
    _e(
        "mantle.validation.memory.undeclared_entry",
        "`collect:` or a `set_memory` key names an undeclared field",
    ),
    _e("mantle.validation.memory.collect_on_project", "`collect:` of a project field"),
    _e("mantle.validation.memory.project_llm_settable", "`llm_settable` on a project field"),
    _e("mantle.validation.memory.skill_seed", "`seed: true` on a skill field"),
    _e(
        "mantle.validation.memory.description_not_exposed",
        "a description on a field the model cannot set (or on a project field)",
    ),
    _e(
        "mantle.validation.memory.description_required",
        "a settable field without a description (on the field or its collect step)",
    ),
    _e(
        "mantle.validation.memory.collect_description_overrides",
        "both the field and its collect step have a description; the step's wins",
        "warning",
    ),
    # -- tools -----------------------------------------------------------------------------
    _e(
        "mantle.validation.tools.undeclared_memory_write",
        'a tool\'s `context.memory.set("…")` names a field it may not write',
    ),
    _e(
        "mantle.validation.tools.memory_manager_bypass",
        "a tool reaches around the memory API (`._memory`, `clear_entries`)",
    ),
    _e("mantle.validation.tools.unresolved_tool", "a tool name the skill cannot see"),
    _e(
        "skill.import_tools.invalid_shared_tool",
        "an `import_tools` entry that is not a shared tool or a configured MCP tool",
    ),
    # -- responses -------------------------------------------------------------------------
    _e(
        "mantle.validation.response.invalid_variant_shape",
        "a response or variant of the wrong shape",
    ),
    _e("mantle.validation.response.invalid_variant_key", "an unknown variant or button key"),
    _e(
        "responses.registry.invalid_variant",
        "a button without a string `title`, or with a blank `payload`",
    ),
    _e("mantle.validation.response.empty_body", "a variant with blank text"),
    _e(
        "mantle.validation.response.invalid_condition",
        "a variant `condition` that is empty or does not parse",
    ),
    _e(
        "mantle.validation.response.unknown_memory_key",
        "a variant `condition` or `set:` target that is not readable here",
    ),
    _e("mantle.validation.response.default_required", "conditioned variants without a default"),
    _e("mantle.validation.response.multiple_defaults", "more than one default variant"),
    _e("mantle.validation.response.invalid_button_payload", "a malformed `set:` payload"),
    _e(
        "mantle.validation.response.not_writable_memory_key",
        "a `set:` button writes a field the delivering skill may not write",
    ),
    _e(
        "mantle.validation.response.invalid_set_memory_value",
        "a `set:` value that does not fit the field's type or enum",
    ),
    _e(
        "mantle.validation.tool_constraint.unknown_on_success_or_failure",
        "`on_success` / `on_failure` names a missing response",
    ),
    _e(
        "mantle.validation.tool_constraint.unknown_requires_confirmation_response",
        "a confirmation response that does not exist",
    ),
    _e(
        "mantle.validation.verbatim_trigger.unknown_response",
        "an `utter:` trigger names a missing response",
    ),
    # -- preconditions / config -----------------------------------------------------------
    _e(
        "mantle.validation.precondition.missing_binding",
        "`precondition:` has no binding in agent.yml",
    ),
    _e("mantle.validation.precondition.invalid_satisfied_when", "`satisfied_when` does not parse"),
    _e("mantle.validation.precondition.unknown_resolver", "`resolve_with` names no skill"),
    _e("mantle.validation.precondition.self_resolve", "a skill resolves its own precondition"),
    _e("mantle.validation.config.missing_agent_yml", "the project has no agent.yml"),
    _e("mantle.validation.config.invalid_agent_yml", "agent.yml is not a mapping"),
    _e("mantle.validation.config.missing_agent_section", "agent.yml has no `agent:` mapping"),
    _e(
        "mantle.validation.config.invalid_agent_section",
        "agent.yml fails the agent spec (persona, orchestrator, a section's keys or types)",
    ),
    _e("mantle.validation.config.missing_integrations", "the project has no integrations.yml"),
    _e("mantle.validation.config.unknown_integration_key", "an unknown integrations.yml key"),
    _e("mantle.validation.config.unsupported_integration_key", "a CALM-only integrations.yml key"),
    _e("mantle.validation.config.unexpected_llm", "top-level `llm:` in integrations.yml"),
    _e(
        "mantle.validation.config.invalid_model_server",
        "top-level `models:` in integrations.yml, or a `rasa_model_server` the engine rejects",
    ),
    _e(
        "mantle.validation.config.unknown_model_group",
        "`orchestrator.model_group`, `knowledge_answering.embeddings` or "
        "`knowledge_stores[].embeddings` names no model group",
    ),
    _e("mantle.validation.config.invalid_agent_privacy", "a `privacy:` block Mantle rejects"),
    _e(
        "mantle.validation.config.invalid_model_group",
        "`model_groups` that is not a list, or an entry without an `id` or `models`",
    ),
    _e("mantle.validation.config.duplicate_model_group_id", "two model groups share an id"),
    _e(
        "mantle.validation.config.invalid_model_group_credentials",
        "a model's `api_key` (or another secret) is not exactly `${VAR}`, or `api_key_env`",
    ),
    _e(
        "mantle.validation.config.unused_model_group_models",
        "a model group with several models and no `router` (only the first is used)",
        "warning",
    ),
    _e(
        "mantle.validation.config.invalid_mcp_server",
        "a malformed `mcp_servers` entry (name, url, type, secrets, `meta_map.from_slots`)",
    ),
    _e("mantle.validation.config.duplicate_mcp_server_name", "two MCP servers share a name"),
    _e(
        "mantle.validation.config.invalid_knowledge_store",
        "a malformed `knowledge_stores` entry (id, type, embeddings, top_k)",
    ),
    _e("mantle.validation.config.duplicate_knowledge_store_id", "two knowledge stores share an id"),
    _e(
        "mantle.validation.config.invalid_tracing",
        "a `tracing` section the engine rejects (types, required keys, one tracer per kind)",
    ),
    _e(
        "mantle.validation.config.invalid_metrics",
        "a `metrics` section that is not an OTLP collector",
    ),
    _e(
        "mantle.validation.config.invalid_event_broker",
        "an `event_broker` the engine cannot build (type, url, credentials)",
    ),
    _e(
        "mantle.validation.config.invalid_timer_store",
        "a `timer_store` the engine cannot build (type, Redis settings)",
    ),
    _e(
        "mantle.validation.config.invalid_tracker_store",
        "a `tracker_store` the engine cannot build (type, settings)",
    ),
    _e(
        "mantle.validation.config.invalid_lock_store",
        "a `lock_store` the engine cannot build (type, Redis settings)",
    ),
    _e(
        "mantle.validation.config.invalid_secrets_manager",
        "a `secrets_manager` that is not a Vault configuration",
    ),
    _e(
        "mantle.validation.config.invalid_recordings",
        "a `recordings` section the engine rejects (keys, provider)",
    ),
    _e(
        "mantle.validation.config.type_env_placeholder",
        "a store or broker `type:` written as `${VAR}` (never expanded)",
        "warning",
    ),
    _e(
        "mantle.validation.config.literal_secret",
        "a literal password, token, AWS key or `user:pass@` URL in a store or secrets manager",
        "warning",
    ),
    _e(
        "config.session.invalid_section",
        "a `session_config` that is not a mapping or has a value of the wrong type",
        note=_RUNTIME,
    ),
    _e(
        "config.session.invalid_expiration_time",
        "a negative `session_config.session_expiration_time`",
        note=_RUNTIME,
    ),
    # -- hooks -----------------------------------------------------------------------------
    _e(
        "mantle.validation.hooks.import_failed",
        "a hook module that cannot be imported (a syntax error, a name the hook API lacks, "
        "a decorator used without `()`)",
    ),
    _e(
        "mantle.validation.hooks.unknown_point", "a hook registered for a point that does not exist"
    ),
    _e("mantle.validation.hooks.duplicate_modifier", "a second modify hook for the same point"),
    _e("mantle.validation.hooks.non_async_handler", "a hook function without `async`"),
    _e(
        "mantle.validation.hooks.invalid_signature",
        "a hook that does not take exactly one parameter annotated with the point's payload "
        "class, or returns the wrong type",
    ),
    _e(
        "mantle.validation.hooks.unsupported_control_signal",
        "a modify hook raises `HookRejection` / `RetryModel` where its point does not allow it",
    ),
    _e(
        "config.project_structure.missing_skills",
        "a Mantle project without any skill (the engine refuses to start)",
    ),
    _e("config.project_structure.mixed_layout", "a CALM domain.yml next to a Mantle project"),
    # -- more engine checks (entry structure, tools, buttons, preconditions, defaults) -----
    _e(
        "mantle.validation.skill.no_entry_block",
        "a blocks-only skill where every block is called or linked by another block",
    ),
    _e(
        "mantle.validation.skill.multiple_entry_blocks",
        "a blocks-only skill with more than one entry block",
    ),
    _e(
        "mantle.validation.skill.unreachable_ordered_block", "a block the entry block never reaches"
    ),
    _e(
        "mantle.validation.skill.silence_timeout_hangup_block",
        "an override of `default_silence_timeout` with a `hangup` block",
    ),
    _e(
        "mantle.validation.unsupported_request_handler.not_engine_managed",
        "an override of `default_unsupported_request_handler` that is not engine-managed",
    ),
    _e(
        "mantle.validation.unsupported_request_handler.missing_request_type",
        "an override of `default_unsupported_request_handler` without the `request_type` field",
    ),
    _e(
        "mantle.validation.unsupported_request_handler.missing_entry",
        "an override of `default_unsupported_request_handler` without exactly one entry block",
    ),
    _e(
        "skill.prose.bare_skill_mention",
        "another skill's id written as a plain word in prose",
        "warning",
    ),
    _e(
        "mantle.validation.tools.reserved_name",
        "a project tool named like a framework tool (the engine refuses to load it)",
    ),
    _e(
        "mantle.validation.tools.invalid_memory_validation_tool",
        "a `run_after_setting_<x>` tool that can never run",
    ),
    _e(
        "mantle.validation.response.unknown_button_source_tool",
        "`buttons.source` names no local tool of the delivering skill",
    ),
    _e("mantle.validation.response.mcp_button_source_tool", "`buttons.source` names an MCP tool"),
    _e(
        "mantle.validation.response.confirming_button_source_tool",
        "`buttons.source` names a tool that requires confirmation",
    ),
    _e(
        "mantle.validation.response.unbound_button_source",
        "a project-wide response with `buttons.source` that no skill delivers",
    ),
    _e(
        "mantle.validation.precondition.nested_resolver",
        "a resolver skill has a precondition of its own",
    ),
    _e("mantle.validation.precondition.cycle", "precondition resolvers form a loop"),
    _e(
        "mantle.validation.memory.default_skill_collect_initial_value",
        "a default-skill override collects a field with an `initial_value`, so the step is skipped",
        "warning",
    ),
    # -- our own codes -----------------------------------------------------------------------
    _l(
        "lsp.condition.enum_value",
        "a categorical field compared with a value outside its `enum_values`",
    ),
    _l(
        "lsp.condition.type_mismatch",
        "a field compared with a literal of the wrong type (a "
        "bool with a string, text with a number, …)",
    ),
    _l("lsp.condition.ordering_on_non_numeric", "`<`/`>` on a bool, text or categorical field"),
    _l("lsp.condition.never_equal", "`...` or a bytes literal, which never equals a memory value"),
    _l(
        "lsp.memory.unreachable_name",
        "a field name that some reference form can never "
        "reach (a Python keyword, a hyphen, non-ASCII)",
    ),
    _l("lsp.memory.unused_field", "a declared field that nothing in the project refers to", "hint"),
    _l(
        "lsp.memory.never_written",
        "a field that is read but that nothing in the project can write (always None)",
        "hint",
    ),
    _l(
        "lsp.memory.project_field_written_twice",
        "a project field another skill writes too: the later write is refused once it has a value",
        "hint",
    ),
    _l(
        "lsp.condition.constant_never_written",
        "a condition (or part of one) a never-written field decides: always true or always false",
        "hint",
    ),
    _l("lsp.flow.unreachable_step", "a step that no route of its block reaches"),
    _l("lsp.tools.reserved_prefix", "a shared tool named `set_*`, which the engine drops"),
    # -- rasa-pro 3.22 profile (--engine 3.22) --------------------------------------------
    _e(
        "mantle.validation.memory.skill_field_mutable_not_allowed",
        "3.22: `mutable` on a skill field",
    ),
    _e(
        "mantle.validation.memory.skill_field_writable_by_not_allowed",
        "3.22: `writable_by` on a skill field",
    ),
    _e(
        "mantle.validation.memory.writable_by_lists_unknown_skill",
        "3.22: `writable_by` names no skill",
    ),
    _e(
        "mantle.validation.memory.set_memory_skill_not_in_writable_by",
        "3.22: a `set_memory` step writes a project field its skill is not listed for",
    ),
    _e(
        "mantle.validation.tools.tool_sets_project_field_skill_not_in_writable_by",
        "3.22: a tool writes a project field its skill is not listed for (or a shared tool does)",
    ),
    _e(
        "mantle.validation.tools.tool_bare_memory_set_writes_skill_not_project_warning",
        '3.22: a bare `memory.set("x")` where both the skill and the project declare `x`',
        "warning",
    ),
    _e(
        "mantle.validation.execute_step.unexpected_parameters",
        "3.22: `record_handoff` given `parameters`",
    ),
    _e(
        "mantle.validation.config.invalid_agent_language",
        "3.22: `agent.language` is not an exact BCP 47 tag (or `x-<tag>-<label>`)",
        "warning",
    ),
    _l("lsp.file.unreadable", "the file cannot be read", "error"),
    _l("lsp.file.invalid_utf8", "the file is not valid UTF-8", "error"),
    _l("lsp.file.binary", "the file holds binary data", "error"),
    _l("lsp.file.too_large", "the file is too large to analyse"),
    _l(
        "lsp.yaml.syntax_error",
        "YAML that does not parse (the engine fails to load or crashes)",
        "error",
    ),
    _l("lsp.yaml.duplicate_key", "a YAML key given twice; the later value wins"),
    _l(
        "lsp.tools.syntax_error",
        "a tool module that is not valid Python (the engine crashes)",
        "error",
    ),
    _l(
        "lsp.tools.undeclared_memory_write",
        'a `memory.set("…")` the engine does not analyse names a field that is not declared',
    ),
    _l(
        "lsp.tools.unknown_memory_read",
        '`context.memory.get("…")` names a field that is not '
        "readable (it always returns the default)",
    ),
    _l(
        "lsp.tools.unknown_parameter",
        "an `execute_tool` step passes a parameter the tool's `def` does not take",
    ),
    _l(
        "lsp.tools.missing_parameter",
        "an `execute_tool` step does not pass a parameter the tool's `def` requires",
    ),
    _l(
        "lsp.tools.obsolete_import",
        "a tool module imports an obsolete engine path (the engine cannot import it)",
        "error",
    ),
    _l(
        "lsp.tools.unresolved_import",
        "a tool module imports a project `lib.*` module that does not exist",
        "error",
    ),
    _l(
        "lsp.condition.invalid",
        "a condition the engine never checks does not parse (the tool "
        "stays hidden, or the step fails at runtime)",
    ),
    _l(
        "lsp.condition.unknown_memory_key",
        "a condition the engine never checks reads a key that is not readable (it is always None)",
    ),
    _l(
        "lsp.memory.invalid_shape",
        "a project memory.yml of the wrong shape (the engine crashes)",
        "error",
    ),
    _l("lsp.memory.missing_schema", "a skill memory.yml without `schema:` declares nothing"),
    _l("lsp.memory.unknown_top_level_key", "a memory.yml key the engine ignores"),
    _l("lsp.memory.unknown_attribute", "a field attribute the engine ignores"),
    _l("lsp.memory.unknown_type", "a `type:` the engine does not know"),
    _l("lsp.memory.public_and_private", "a field declared both public and private"),
    _l(
        "lsp.memory.project_file_in_skill_shape",
        "the project memory.yml written as `schema: public/private`",
    ),
    _l(
        "lsp.memory.field_not_mapping",
        "a project field written as `name: type` instead of `name: {type: …}`",
    ),
    _l(
        "lsp.memory.engine_3_22_attribute", "`mutable` / `writable_by` are rasa-pro 3.22 attributes"
    ),
    _l("lsp.responses.invalid_file", "a responses.yml whose top level the engine cannot read"),
    _l("lsp.responses.memory_token_not_substituted", "`@memory.…` in a response (sent literally)"),
    _l("lsp.responses.unqualified_placeholder", "`{session.<entry>}` without a namespace"),
    _l(
        "lsp.responses.unknown_placeholder",
        "a `{…}` placeholder that names no readable field (it is sent literally)",
    ),
    _l("lsp.flow.duplicate_step_id", "two steps of a block share an id"),
    _l("lsp.flow.branch_if_ignored", "a branch with both `if:` and `else:` (the `if:` is ignored)"),
    _l("lsp.markdown.fence_not_recognised", "`:::ordered_block` text that is not a fence"),
    _l(
        "lsp.prose.list_outside_scope",
        "a list right after a scoped paragraph ending with a colon is not scoped: it goes "
        "into every prompt",
        "hint",
    ),
    _l("lsp.legacy.syntax", "an obsolete (Maestro-era or pre-3.21) form"),
    _l("lsp.skill.id_not_identifier", "a skill id that can never appear in a condition"),
    _l("lsp.config.invalid_integrations_yml", "integrations.yml is not a mapping", "error"),
    _l(
        "lsp.config.ignored_key",
        "an agent.yml key the engine ignores (top level, `agent`, `prompts`, ...)",
    ),
    _l(
        "lsp.config.unused_precondition",
        "a precondition binding that no skill declares (the engine never checks it)",
    ),
    _l(
        "lsp.config.missing_agent_id",
        "agent.yml without `agent.id` (the engine generates one and writes it into the file)",
        "hint",
    ),
    _l(
        "lsp.config.unknown_model_group",
        "`skill_retrieval.embeddings` names no model group (training fails when it builds "
        "the skill index)",
    ),
    # -- the evaluation's files (eval/, docs/language/eval.md) ----------------------------
    _e(
        "eval.yaml.duplicate_key",
        "a key given twice in an eval file (the evaluation's YAML reader refuses the file)",
        note=_EVAL,
    ),
    _e(
        "eval.scenario.invalid",
        "a scenario the evaluation's loader rejects: an unknown or missing key, a value of "
        "the wrong type, an assertion entry of the wrong shape",
        note=_EVAL,
    ),
    _e(
        "eval.scenario.not_a_scenario",
        "a file in eval/scenarios/ without `scenario:` (another tool's file?)",
        "warning",
        note=_EVAL,
    ),
    _e(
        "eval.scenario.calm_assertion",
        "a CALM-only assertion key (`slot_was_set`, `action_executed`, `flow_started`, …): "
        "the evaluation rejects the whole batch",
        note=_EVAL,
    ),
    _e(
        "eval.assertion.aborts_run",
        "an assertion the evaluation cannot build when it runs (empty list, empty id, bad "
        "regular expression): the run errors out",
        note=_EVAL,
    ),
    _e(
        "eval.scenario.unsafe_slug",
        "a scenario file name the evaluation refuses as a results folder name",
        "warning",
        note=_EVAL,
    ),
    _e(
        "eval.scenario.duplicate_slug",
        "two scenario files with the same name up to case (in any folders): one batch "
        "cannot run both",
        "warning",
        note=_EVAL,
    ),
    _e(
        "eval.conftest.invalid",
        "eval/conftest.yml without `simulation.llm` / `evaluation.llm`, or with a value of "
        "the wrong type",
        note=_EVAL,
    ),
    _e(
        "eval.conftest.prompt_template",
        "a conftest prompt path that does not exist, is empty or leads out of the project",
        note=_EVAL,
    ),
    _e(
        "eval.conftest.shadowed",
        "eval/conftest.yaml next to eval/conftest.yml, which the evaluation reads instead",
        "warning",
        note=_EVAL,
    ),
    _l(
        "lsp.eval.unknown_skill",
        "a scenario names a skill id that no skill folder (or bundled skill) has",
        "error",
    ),
    _l(
        "lsp.eval.unknown_step",
        "a scenario's `step_id` is not `autonomous` nor a step of that skill (or block)",
        "error",
    ),
    _l(
        "lsp.eval.unknown_block",
        "a scenario's `block_id` is not an ordered block of that skill",
        "error",
    ),
    _l(
        "lsp.eval.unknown_memory",
        "a scenario's memory name is not a tracker key the agent writes (`project.<f>`, "
        "`<skill>.<f>`, `system.<entry>`)",
        "error",
    ),
    _l(
        "lsp.eval.memory_value",
        "a scenario's memory value never equals what the field holds (type, or not one of "
        "its values)",
    ),
    _l(
        "lsp.eval.unknown_tool",
        "a scenario's `tool_executed` names a tool the agent cannot run that way (unknown "
        "name, wrong source, MCP server that does not import it)",
        "error",
    ),
    _l(
        "lsp.eval.unknown_argument",
        "a scenario's `tool_executed.arguments` names a parameter the local tool does not take",
        "error",
    ),
    _l(
        "lsp.eval.tool_skill",
        "a scenario's `tool_executed.skill_id` names a skill that does not see the tool",
    ),
    _l(
        "lsp.eval.unknown_response",
        "a scenario's `utter_name` is not a response of the agent",
        "error",
    ),
    _l(
        "lsp.eval.initial_slot",
        "a `setup.initial_slots` key nobody reads (not in the form the evaluation routes to "
        "a memory field)",
    ),
    _l(
        "lsp.eval.vacuous",
        "a negative assertion (`memory_was_not_set`, `bot_did_not_utter`) on a name that can "
        "never occur: it always passes",
    ),
    # -- configuration and inline suppressions (docs/configuration.md) --------------------
    _l(
        "lsp.config.invalid_settings_file",
        "a mantle-lsp configuration file (`[tool.mantle-lsp]`, `mantle-lsp.toml`) with an "
        "error: the language server reports it on the file; `check` exits with status 2",
        "error",
    ),
    _l(
        "lsp.suppression.unused",
        "a `# mantle-lsp: ignore[…]` comment that silences nothing",
        "hint",
    ),
    _l(
        "lsp.suppression.invalid",
        "a `# mantle-lsp:` comment that is malformed or names an unknown code",
    ),
    # -- Cadenya memory layers (memory-layers/ folders, docs/memory-layers.md) ----------------
    _l("lsp.layers.missing_description", "a memory-layer entry without a (non-empty) description"),
    _l("lsp.layers.multiline_description", "a memory-layer entry description of several lines"),
    _l(
        "lsp.layers.long_description",
        "a memory-layer entry description too long for a useful manifest line",
    ),
    _l("lsp.layers.empty_content", "a memory-layer entry with no content"),
    _l(
        "lsp.layers.invalid_frontmatter",
        "a memory-layer entry whose frontmatter is unclosed or not a `description:` mapping",
        "error",
    ),
    _l("lsp.layers.unknown_key", "a key that layer.yml, cascades.yml or an entry does not use"),
    _l("lsp.layers.invalid_layer_yml", "a layer.yml value of the wrong type", "error"),
    _l("lsp.layers.invalid_cascades", "a malformed cascade in memory-layers/cascades.yml", "error"),
    _l("lsp.layers.too_many_layers", "a cascade of more than 10 memory layers", "error"),
    _l("lsp.layers.duplicate_layer", "a memory layer listed twice in one cascade"),
    _l("lsp.layers.unknown_layer", "a cascade names a memory layer with no folder", "error"),
    _l("lsp.layers.unknown_entry", "a cascade pins an entry its layer does not have", "error"),
    _l(
        "lsp.layers.episodic_reference",
        "a cascade names an episodic layer, which the system places itself",
        "error",
    ),
]

REGISTRY: dict[str, CodeInfo] = {c.code: c for c in _ALL}


def info(code: str) -> CodeInfo:
    return REGISTRY.get(code) or CodeInfo(code, "error", "", code.startswith("lsp.") is False)


def markdown_table() -> str:
    """docs/diagnostics.md, generated from the registry."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `server/mantle_lsp/ide/codes.py` by `mantle-lsp explain --markdown`;",
        "a test fails when this file and the registry disagree.",
        "",
        "Engine codes are what rasa-pro 3.21 reports (or folds into",
        "`mantle.validation.skill.failed_to_load`); `lsp.*` codes are mantle-lsp's own.",
        "",
        "| Code | Severity | Source | Meaning |",
        "| --- | --- | --- | --- |",
    ]
    for c in sorted(_ALL, key=lambda c: (not c.engine, c.code)):
        src = "engine" if c.engine else "mantle-lsp"
        if c.engine_note == _LOAD:
            src += " (folded into failed_to_load)"
        elif c.engine_note == _EVAL:
            src += " (when it evaluates)"
        elif c.engine_note:
            src += " (when the agent loads)"
        lines.append(
            f"| [`{c.code}`](diagnostics/{c.code}.md) | {c.severity} | {src} | {c.summary} |"
        )
    return "\n".join(lines) + "\n"
