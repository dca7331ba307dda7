"""What the engine merges into every project: bundled default skills, their public memory
and responses, framework tool names (docs/language/layout.md#bundled-default-skills). Written from
the rules, not copied.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DefaultField:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class DefaultSkill:
    id: str
    summary: str
    public_fields: tuple[DefaultField, ...] = ()
    responses: tuple[str, ...] = ()
    engine_managed: bool = True


DEFAULT_SKILLS: dict[str, DefaultSkill] = {
    s.id: s
    for s in (
        DefaultSkill(
            "default_completed",
            "Asks whether the user wants anything else once a skill completes.",
            (DefaultField("wants_to_continue", "bool", "the user wants to continue"),),
            ("utter_ask_wants_to_continue",),
        ),
        DefaultSkill(
            "default_continue_interrupted",
            "Offers to resume a task that was interrupted by another skill.",
            (
                DefaultField("wants_to_resume", "bool", "the user wants to resume"),
                DefaultField("interrupted_task_name", "text", "the interrupted task (engine)"),
            ),
            ("utter_ask_wants_to_resume",),
        ),
        DefaultSkill(
            "default_customer_satisfaction",
            "Asks for a satisfaction score.",
            (DefaultField("csat_score", "float", "the satisfaction score"),),
            ("utter_ask_csat_score", "utter_thank_you_for_feedback"),
        ),
        DefaultSkill("default_session_start", "Runs when a session starts."),
        DefaultSkill(
            "default_silence_timeout",
            "Checks in after the user has been silent.",
            (),
            ("utter_silence_timeout_check_in",),
            engine_managed=False,
        ),
        DefaultSkill(
            "default_silence_timeout_hangup",
            "Ends a voice call after repeated silence.",
            (),
            ("utter_inform_hangup",),
        ),
        DefaultSkill(
            "default_unsupported_request_handler",
            "Declines requests the agent does not support.",
            (DefaultField("request_type", "str", "the kind of unsupported request"),),
            (
                "utter_decline_in_domain_out_of_scope",
                "utter_decline_out_of_domain_out_of_scope",
            ),
        ),
    )
}

SYSTEM_RESPONSES = (
    "utter_set_memory_button_skipped",
    "utter_incoming_message_rejected",
    "utter_outgoing_text_rejected",
    "utter_precondition_unmet",
    "utter_hangup_goodbye",
    "utter_model_request_hook_error",
    "utter_tool_call_hook_error",
    "utter_model_call_error",
)

FRAMEWORK_TOOLS: dict[str, str] = {
    "activate": "Start a skill.",
    "complete": "Finish the active skill.",
    "cancel": "Abandon the active skill.",
    "set_fields": "Write settable memory fields (llm_settable or collect-owned).",
    "correct": "Correct a value the user gave earlier.",
    "resolve_tool_confirmation": "Resolve a pending tool confirmation.",
    "search_knowledge": "Search the packaged knowledge base.",
    "cannot_help": "Tell the user the request cannot be handled.",
    "listen": "Wait for the user.",
    "hangup": "End a voice call.",
}
# rasa-pro 3.22's engine tools usable only as `execute_tool` steps; 3.22 reserves their names
# (3.21 has none and accepts a project tool of that name)
EXECUTE_ONLY_TOOLS = ("record_handoff",)
# names a rename never produces (every profile)
RESERVED_TOOL_NAMES = frozenset(FRAMEWORK_TOOLS) | frozenset(EXECUTE_ONLY_TOOLS)
RESERVED_SKILL_IDS = ("project", "system")
# the engine's own memory entries (`system.<entry>`), the only ones it writes there
SYSTEM_MEMORY_ENTRIES = (
    "correction_resume_point",
    "__discovered__",
    "pending_tool_confirmation",
    "consecutive_silence_timeouts",
    "verbatim_activate_triggers_fired",
    "verbatim_when_trigger_match_state",
)
# the step id a prose skill's frame reports (skill events' `step_id` outside ordered blocks)
AUTONOMOUS_STEP = "autonomous"
STEP_ACTIONS = ("action_listen", "hangup")
