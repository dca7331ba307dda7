"""The declarative side of the ``agent.yml`` / ``integrations.yml`` parsers: the codes each
section reports, the keys the engine reads, the allowed values of every typed setting, and
the field tables (``key -> value check``, ``None`` when the parser checks the key itself)
that :mod:`.config_yml` walks. Change what the engine accepts here; the parsers only walk.
"""

from __future__ import annotations

import re

from .config_values import (
    Check,
    _bool,
    _int_min,
    _map_check,
    _non_empty_str,
    _opt,
    _opt_bool,
    _opt_str,
    _positive,
    _scalar,
    _str,
    _str_or_secret,
    _str_or_str_seq,
    _str_or_whole,
    _str_seq,
    _strict_bool,
)

C_AGENT_INVALID = "mantle.validation.config.invalid_agent_yml"
C_AGENT_SECTION = "mantle.validation.config.missing_agent_section"
C_AGENT_SPEC = "mantle.validation.config.invalid_agent_section"
C_INT_UNKNOWN = "mantle.validation.config.unknown_integration_key"
C_INT_CALM = "mantle.validation.config.unsupported_integration_key"
C_INT_LLM = "mantle.validation.config.unexpected_llm"
C_INT_MODELS = "mantle.validation.config.invalid_model_server"
C_INT_INVALID = "lsp.config.invalid_integrations_yml"
C_PRIVACY = "mantle.validation.config.invalid_agent_privacy"
C_UNKNOWN_GROUP = "mantle.validation.config.unknown_model_group"
C_SESSION = "config.session.invalid_section"
C_SESSION_EXPIRY = "config.session.invalid_expiration_time"
C_GROUP = "mantle.validation.config.invalid_model_group"
C_GROUP_DUP = "mantle.validation.config.duplicate_model_group_id"
C_GROUP_UNUSED = "mantle.validation.config.unused_model_group_models"
C_GROUP_CREDENTIALS = "mantle.validation.config.invalid_model_group_credentials"
C_MCP = "mantle.validation.config.invalid_mcp_server"
C_MCP_DUP = "mantle.validation.config.duplicate_mcp_server_name"
C_STORE = "mantle.validation.config.invalid_knowledge_store"
C_STORE_DUP = "mantle.validation.config.duplicate_knowledge_store_id"
C_TYPE_ENV = "mantle.validation.config.type_env_placeholder"
C_LITERAL_SECRET = "mantle.validation.config.literal_secret"
C_IGNORED = "lsp.config.ignored_key"
# integrations.yml runtime sections, with their codes
C_TRACING = "mantle.validation.config.invalid_tracing"
C_METRICS = "mantle.validation.config.invalid_metrics"
C_EVENT_BROKER = "mantle.validation.config.invalid_event_broker"
C_TIMER_STORE = "mantle.validation.config.invalid_timer_store"
C_TRACKER_STORE = "mantle.validation.config.invalid_tracker_store"
C_LOCK_STORE = "mantle.validation.config.invalid_lock_store"
C_SECRETS_MANAGER = "mantle.validation.config.invalid_secrets_manager"
C_RECORDINGS = "mantle.validation.config.invalid_recordings"

AGENT_KEYS = (
    "agent",
    "orchestrator",
    "rules",
    "fillers",
    "prompts",
    "knowledge_answering",
    "conversation",
    "tool_timeout",
    "session_config",
    "skill_retrieval",
    "voice",
    "privacy",
)

INTEGRATION_KEYS = (
    "a2a_server",
    "channels",
    "event_broker",
    "knowledge_stores",
    "lock_store",
    "mcp_servers",
    "metrics",
    "model_groups",
    "rasa_model_server",
    "recordings",
    "secrets_manager",
    "timer_store",
    "tracing",
    "tracker_store",
)

CALM_KEYS = ("nlg", "action_endpoint", "vector_store", "nlu", "interaction_handling")

# top-level agent.yml keys the engine reads as strings and then never uses
UNUSED_AGENT_KEYS = ("name", "description")

BUILTIN_TOOLS = (
    "activate",
    "cancel",
    "cannot_help",
    "complete",
    "correct",
    "search_knowledge",
    "set_fields",
)

DISABLEABLE_TOOLS = ("cancel", "cannot_help", "complete", "search_knowledge")

CONFIRMABLE_TOOLS = ("cancel",)

DEFAULT_CHUNK_SIZE = 1000

DEFAULT_CHUNK_OVERLAP = 20

LEGACY_PROMPT_KEYS = {"ack_enabled": "fillers.enabled", "ack_rule": "fillers.instructions"}

SHAPE_CODES = {
    "tracing": C_TRACING,
    "metrics": C_METRICS,
    "event_broker": C_EVENT_BROKER,
    "timer_store": C_TIMER_STORE,
    "tracker_store": C_TRACKER_STORE,
    "lock_store": C_LOCK_STORE,
    "secrets_manager": C_SECRETS_MANAGER,
    "recordings": C_RECORDINGS,
    "rasa_model_server": C_INT_MODELS,
}

# sections whose `type:` selects an implementation (a `${VAR}` there is never expanded)
TYPED_SECTIONS = ("event_broker", "timer_store", "tracker_store", "lock_store", "secrets_manager")

# sections whose secrets are checked for literals
SECRET_SECTIONS = ("tracker_store", "lock_store", "secrets_manager")

SECRET_KEYS = frozenset({"password", "token", "aws_access_key_id", "aws_secret_access_key"})

URL_PASSWORD = re.compile(r"://[^/\s@]*:([^@\s/]+)@")

KNOWLEDGE_STORE_TYPES = ("qdrant", "milvus", "faiss")

MCP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")

MCP_TYPES = ("http", "https")

MCP_SECRET_KEYS = ("api_key", "token")

MCP_AUTH_KEYS = ("api_key", "module", "oauth", "token")

MCP_UNSUPPORTED = ("auth", "pre_call_hook", "protocol_version", "token_env")

MCP_BASE_KEYS = ("name", "url", "type", "meta_map", "tool_timeout", "additional_params")

ENV_SECRET = re.compile(r"\$\{\w+\}")

# model settings that must be a `${VAR}` placeholder, wherever they are nested
MODEL_SECRET_KEYS = frozenset(
    {
        "api_key",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "public_key",
        "private_key",
        "client_id",
        "client_secret",
        "token_url",
        "secret",
    }
)

EVENT_BROKER_TYPES = ("pika", "sql", "file", "kafka", "concurrent_kafka")

KAFKA_TYPES = ("kafka", "concurrent_kafka")

REDIS_MODES = ("standard", "cluster", "sentinel")

REDIS_FIELDS: dict[str, Check | None] = {
    "type": _str,
    "host": _str,
    "url": _str,
    "port": _scalar,
    "db": _scalar,
    "username": _str,
    "password": _str,
    "key_prefix": _str,
    "socket_timeout": _scalar,
    "use_ssl": _bool,
    "deployment_mode": _str,
    "endpoints": _str_seq,
    "sentinel_service": _str,
}

TIMER_STORE_TYPES = ("in_memory", "redis")

LOCK_STORE_TYPES = ("in_memory", "redis", "concurrent_redis")

TRACKER_STORE_TYPES = ("in_memory", "redis", "mongod", "sql", "dynamo")

SECRETS_MANAGER_KEYS = (
    "type",
    "url",
    "token",
    "secrets_path",
    "transit_mount_point",
    "namespace",
    "mount_point",
)

RECORDING_PROVIDERS = ("s3", "gcs", "azure", "local")

RECORDING_BLOCKS: dict[str, tuple[dict[str, Check | None], tuple[str, ...]]] = {
    "s3": (
        {"bucket": _str, "region": _opt_str, "prefix": _str, "endpoint_url": _opt_str},
        ("bucket",),
    ),
    "gcs": ({"bucket": _str, "prefix": _str}, ("bucket",)),
    "azure": (
        {"container": _str, "account_name": _str, "prefix": _str, "endpoint_url": _opt_str},
        ("container", "account_name"),
    ),
    "local": ({"path": _str}, ("path",)),
}

TRACING_TYPES = ("langfuse", "otlp", "jaeger")

OTLP_FIELDS: dict[str, Check | None] = {
    "type": None,
    "endpoint": _non_empty_str,
    "insecure": _opt_bool,
    "root_certificates": _opt(_non_empty_str),
    "service_name": _opt(_non_empty_str),
}

JAEGER_FIELDS: dict[str, Check | None] = {
    "type": None,
    "host": _opt(_non_empty_str),
    "port": _int_min(1, nullable=True, high=65535),
    "username": _opt(_non_empty_str),
    "password": _opt(_non_empty_str),
    "insecure": _opt_bool,
    "root_certificates": _opt(_non_empty_str),
    "service_name": _opt(_non_empty_str),
    "sync_export": _opt_bool,
}

LANGFUSE_REQUIRED = ("public_key", "private_key", "host")

LANGFUSE_KEY = re.compile(r"\$\{\w+\}")

LANGFUSE_ENV = re.compile(r"(?!langfuse)[a-z0-9_-]+\Z")


# Field tables: key -> value check (None: the parser checks the key itself)

# `skill_retrieval:`
SKILL_RETRIEVAL_FIELDS: dict[str, Check | None] = {
    "active": _bool,
    "num_skills": _int_min(1),
    "turns_to_embed": _int_min(1),
    "should_embed_memory": _bool,
    "embeddings": _str,
}

# top-level `voice:`
VOICE_FIELDS: dict[str, Check | None] = {"silence_timeout": _positive()}

# `agent:` (open: other keys are ignored; a bad `id`/`language` falls back to a default)
AGENT_FIELDS: dict[str, Check | None] = {
    "id": None,
    "language": None,
    "persona": None,
    "voice": None,
}

# `agent.voice:` (open)
AGENT_VOICE_FIELDS: dict[str, Check | None] = {
    "enabled": _bool,
    "sample_rate": _opt(_int_min(None)),
    "input_mime_type": _str,
    "output_encoding": _str,
    "asr": _str,
    "tts": _str,
}

# `orchestrator:`
ORCHESTRATOR_FIELDS: dict[str, Check | None] = {
    "model_group": None,
    "text_rules": _str,
    "voice_rules": _str,
    "max_prompt_tokens": _int_min(1, nullable=True),
    "preconditions": None,
    "tool_constraints": None,
}

# `orchestrator.tool_constraints.<builtin tool>:`
TOOL_CONSTRAINT_FIELDS: dict[str, Check | None] = {
    "enabled": _bool,
    "invoke_when": _opt_str,
    "requires_confirmation": None,
}

# `orchestrator.tool_constraints.cancel.requires_confirmation:`
CONFIRMATION_FIELDS: dict[str, Check | None] = {
    "enabled": _strict_bool,
    "utter_for_confirmation": _opt_str,
    "utter_on_user_denial": _opt_str,
}

# `fillers:`
FILLERS_FIELDS: dict[str, Check | None] = {
    "enabled": _opt_bool,
    "instructions": _str,
    "reminder": _str,
    "examples": None,
}

# `fillers.examples[i]:` (open)
FILLER_EXAMPLE_FIELDS: dict[str, Check | None] = {"user": _str, "ack": _str}

# `prompts:` (open), besides LEGACY_PROMPT_KEYS
PROMPTS_FIELDS: dict[str, Check | None] = {"routing_no_active_skill": _str}

# `knowledge_answering:`
KNOWLEDGE_ANSWERING_FIELDS: dict[str, Check | None] = {
    "instructions": _str,
    "embeddings": _str,
    "chunking": None,
    "top_k": _int_min(1),
}

# `knowledge_answering.chunking:`
CHUNKING_FIELDS: dict[str, Check | None] = {"chunk_size": _int_min(1), "chunk_overlap": _int_min(0)}

# `session_config:` (open)
SESSION_FIELDS: dict[str, Check | None] = {
    "session_expiration_time": None,
    "start_session_after_expiry": _bool,
}

# `knowledge_stores[i]:`
KNOWLEDGE_STORE_FIELDS: dict[str, Check | None] = {
    "id": None,
    "type": None,
    "embeddings": None,
    "top_k": _int_min(1),
    "namespace": _opt_str,
}

# `event_broker:` (other keys go to the broker)
EVENT_BROKER_FIELDS: dict[str, Check | None] = {
    "type": _str,
    "url": _str_or_str_seq,
    "username": _str,
    "password": _str,
    "queues": _str_or_str_seq,
    "topic": _str,
    "path": _str,
    "dialect": _str,
    "port": _scalar,
    "db": _str,
}

# `tracker_store:` (other keys go to the store)
TRACKER_STORE_FIELDS: dict[str, Check | None] = {
    "type": _str,
    "url": _str,
    "host": _str,
    "dialect": _str,
    "port": _scalar,
    "db": _str_or_whole,
    "username": _str_or_secret,
    "password": _str_or_secret,
    "login_db": _str,
    "collection": _str,
    "auth_source": _str,
    "region": _str,
    "table_name": _str,
    "key_prefix": _str,
}

# `rasa_model_server:`
MODEL_SERVER_FIELDS: dict[str, Check | None] = {
    "url": _non_empty_str,
    "token": _non_empty_str,
    "token_name": _non_empty_str,
    "params": _map_check,
    "headers": _map_check,
    "basic_auth": _map_check,
    "cafile": _non_empty_str,
    "wait_time_between_pulls": _int_min(0),
}

# `rasa_model_server.basic_auth:`
MODEL_SERVER_AUTH_FIELDS: dict[str, Check | None] = {"username": _non_empty_str, "password": _str}
