"""agent.yml and integrations.yml: every engine config rule (docs/language/config.md)
fires on the narrowest range that shows the cause, and valid files stay silent."""

from __future__ import annotations

from pathlib import Path

from support import DEFAULT_AGENT, check_clean, check_diagnostics, diagnostics_of, write_fixture

AGENT = DEFAULT_AGENT  # agent: {id, persona}, orchestrator.model_group: main
GROUPS = """\
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
"""


def agent_fixture(extra: str) -> str:
    return f"//- agent.yml\n{AGENT}{extra}"


def integrations_fixture(extra: str, groups: str = GROUPS) -> str:
    return f"//- integrations.yml\n{groups}{extra}"


def messages(tmp_path: Path, fixture: str) -> dict[str, str]:
    got = check_diagnostics(tmp_path, fixture)
    return {code: msg for _, _, _, code, _, msg in got}


# =============================================================================================
# agent.yml


def test_a_complete_agent_yml_is_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        agent_fixture(
            """\
  text_rules: Keep it short.
  voice_rules: Speak slowly.
  max_prompt_tokens: 8000
  tool_constraints:
    cancel:
      enabled: true
      invoke_when: The user wants to stop.
      requires_confirmation:
        enabled: true
    complete: {enabled: false}
    activate: {invoke_when: A new task starts.}
rules:
  - Be polite.
fillers:
  enabled: null
  instructions: Say what you are about to do.
  reminder: One short line.
  examples:
    - {user: Block my card, ack: Blocking it now.}
prompts:
  routing_no_active_skill: Offer the card skills first.
knowledge_answering:
  instructions: Cite the manual.
  embeddings: main
  top_k: 3
  chunking: {chunk_size: 500, chunk_overlap: 50}
conversation:
  before_end: [feedback]
tool_timeout: 12.5
session_config:
  session_expiration_time: 0
  start_session_after_expiry: yes
skill_retrieval:
  active: true
  num_skills: 10
  turns_to_embed: 2
  should_embed_memory: false
  embeddings: main
voice:
  silence_timeout: 20
privacy:
  tracker_store_settings:
    deletion:
      min_after_session_end: 60
      cron: "0 2 * * *"
"""
        ),
        silent=[
            "invalid_agent_section",
            "invalid_agent_privacy",
            "lsp.config.ignored_key",
            "config.session.invalid_section",
            "invalid_expiration_time",
            "lsp.config.unknown_model_group",
            "mantle.validation.config.unknown_model_group",
        ],
    )


def test_privacy_accepts_only_tracker_store_settings(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        agent_fixture(
            """\
privacy:
  «invalid_agent_privacy:rules»:
    - entity: CREDIT_CARD
  «invalid_agent_privacy:retention»: 30
  tracker_store_settings:
    deletion: {}
    «invalid_agent_privacy:cleanup»: true
"""
        ),
    )
    assert "pii: true" in got[0][5] and "`retention`" in got[1][5]


def test_privacy_shapes(tmp_path: Path) -> None:
    check_diagnostics(tmp_path, agent_fixture("privacy: «invalid_agent_privacy:[rules]»\n"))
    check_diagnostics(
        tmp_path / "b",
        agent_fixture("privacy:\n  tracker_store_settings: «invalid_agent_privacy:yes»\n"),
    )
    check_clean(tmp_path / "c", agent_fixture("privacy:\n"))
    check_clean(tmp_path / "d", agent_fixture("privacy:\n  tracker_store_settings:\n"))


def test_embeddings_name_declared_model_groups(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        agent_fixture(
            """\
knowledge_answering:
  embeddings: «validation.config.unknown_model_group:mian»
skill_retrieval:
  embeddings: «lsp.config.unknown_model_group:embedder»
"""
        ),
        {"lsp.config.unknown_model_group": "warning"},
    )
    by_code = {g[3]: g[5] for g in got}
    assert "did you mean `main`" in by_code["mantle.validation.config.unknown_model_group"]
    assert "skill index" in by_code["lsp.config.unknown_model_group"]


def test_blank_embeddings_mean_the_default_embedder(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        agent_fixture(
            "knowledge_answering:\n  embeddings: ''\nskill_retrieval:\n  embeddings: ' '\n"
        ),
    )


def test_embeddings_are_not_checked_while_model_groups_are_invalid(tmp_path: Path) -> None:
    # the engine checks no reference while a model group entry is invalid
    check_diagnostics(
        tmp_path,
        agent_fixture("knowledge_answering:\n  embeddings: nope\n")
        + integrations_fixture("  - id: «invalid_model_group:broken»\n"),
    )


def test_session_config(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        agent_fixture(
            """\
session_config:
  session_expiration_time: «invalid_expiration_time:-5»
  start_session_after_expiry: «session.invalid_section:sometimes»
  «ignored_key:carry_over_slots»: true
"""
        ),
        {"ignored_key": "warning"},
    )
    check_diagnostics(
        tmp_path / "b",
        agent_fixture("session_config:\n  session_expiration_time: «invalid_section:one hour»\n"),
    )
    check_diagnostics(tmp_path / "c", agent_fixture("session_config: «invalid_section:[60]»\n"))
    check_clean(tmp_path / "d", agent_fixture("session_config:\n"))


def test_tool_timeout_and_silence_timeout_are_positive(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        agent_fixture(
            """\
tool_timeout: «invalid_agent_section:0»
voice:
  silence_timeout: «invalid_agent_section:-1»
  «invalid_agent_section:retries»: 3
"""
        ),
    )
    check_diagnostics(tmp_path / "b", agent_fixture("tool_timeout: «invalid_agent_section:.inf»\n"))
    check_diagnostics(tmp_path / "c", agent_fixture("«invalid_agent_section:voice»:\n"))
    check_clean(tmp_path / "d", agent_fixture("tool_timeout:\nvoice: {silence_timeout: '15'}\n"))


def test_fillers_and_prompts(tmp_path: Path) -> None:
    msgs = messages(
        tmp_path,
        agent_fixture(
            """\
fillers:
  enabled: «invalid_agent_section:maybe»
  «invalid_agent_section:ack_rule»: Say it.
  examples:
    - «invalid_agent_section:Block my card»
    - {user: «invalid_agent_section:1», ack: Sure., «ignored_key:note»: x}
prompts:
  «legacy.syntax:ack_enabled»: true
  «legacy.syntax:ack_rule»: Say what you do.
  «ignored_key:routing_no_active_skil»: Offer cards.
  routing_no_active_skill: «invalid_agent_section:[a]»
"""
        ),
    )
    assert (
        "fillers.enabled" in msgs["lsp.legacy.syntax"]
        or "fillers.instructions" in (msgs["lsp.legacy.syntax"])
    )
    assert "did you mean `routing_no_active_skill`" in msgs["lsp.config.ignored_key"]


def test_legacy_prompt_keys_name_their_replacement(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, agent_fixture("prompts:\n  ack_enabled: true\n  ack_rule: x\n"))
    got = [g for g in diagnostics_of(fx.root) if g[3] == "lsp.legacy.syntax"]
    assert [("3.21 ignores" in g[5], g[5].split("use ")[-1]) for g in got] == [
        (True, "`fillers.enabled`"),
        (True, "`fillers.instructions`"),
    ]
    assert {g[4] for g in got} == {"warning"}


def test_fillers_examples_must_be_a_list(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path, agent_fixture("fillers:\n  examples: «invalid_agent_section:{user: a}»\n")
    )
    check_diagnostics(tmp_path / "b", agent_fixture("«invalid_agent_section:fillers»:\n"))
    check_diagnostics(tmp_path / "c", agent_fixture("prompts: «invalid_agent_section:text»\n"))


def test_missing_agent_id_is_a_hint(tmp_path: Path) -> None:
    fixture = """\
//- agent.yml
«missing_agent_id:agent»:
  persona: A careful assistant.
orchestrator:
  model_group: main
"""
    got = check_diagnostics(tmp_path, fixture, {"missing_agent_id": "hint"})
    assert "write it into this file" in got[0][5]
    check_diagnostics(
        tmp_path / "b",
        "//- agent.yml\nagent:\n  id: «missing_agent_id:'  '»\n  persona: p\n"
        "orchestrator:\n  model_group: main\n",
    )
    check_diagnostics(
        tmp_path / "c",
        "//- agent.yml\nagent:\n  «missing_agent_id:id»:\n  persona: p\n"
        "orchestrator:\n  model_group: main\n",
    )


def test_orchestrator_keys_and_tool_constraints(tmp_path: Path) -> None:
    msgs = messages(
        tmp_path,
        agent_fixture(
            """\
  «invalid_agent_section:temperature»: 0.2
  max_prompt_tokens: «invalid_agent_section:0»
  text_rules: «invalid_agent_section:42»
  tool_constraints:
    «invalid_agent_section:cancle»: {enabled: false}
    activate:
      enabled: «invalid_agent_section:false»
      «invalid_agent_section:requires_confirmation»:
        enabled: true
    correct:
      invoke_when: «invalid_agent_section:'  '»
      «invalid_agent_section:when»: x
    cancel:
      requires_confirmation:
        enabled: «invalid_agent_section:'yes'»
        «invalid_agent_section:utter»: utter_sure
    complete: «invalid_agent_section:off»
"""
        ),
    )
    assert msgs  # every marked range reported, nothing else


def test_tool_constraint_messages(tmp_path: Path) -> None:
    fx = write_fixture(
        tmp_path,
        agent_fixture(
            "  tool_constraints:\n    cancle: {}\n    activate:\n      enabled: false\n"
            "      requires_confirmation: {enabled: true}\n"
        ),
    )
    got = sorted(g[5] for g in diagnostics_of(fx.root) if g[4] == "error")
    assert any("did you mean `cancel`" in m for m in got)
    assert any("cannot be turned off" in m for m in got)
    assert any("on `cancel` only" in m for m in got)


def test_knowledge_answering_and_skill_retrieval(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        agent_fixture(
            """\
knowledge_answering:
  top_k: «invalid_agent_section:0»
  «invalid_agent_section:store»: faq
  chunking:
    chunk_size: 100
    chunk_overlap: «invalid_agent_section:100»
skill_retrieval:
  active: «invalid_agent_section:maybe»
  num_skills: «invalid_agent_section:0»
  turns_to_embed: «invalid_agent_section:1.5»
  embeddings: «invalid_agent_section:[main]»
"""
        ),
    )
    # the default overlap (20) is not smaller than a chunk_size of 10
    check_diagnostics(
        tmp_path / "b",
        agent_fixture(
            "knowledge_answering:\n  chunking:\n    chunk_size: «invalid_agent_section:10»\n"
        ),
    )
    check_diagnostics(
        tmp_path / "c", agent_fixture("knowledge_answering: «invalid_agent_section:[x]»\n")
    )


def test_rules_and_before_end_are_lists_of_strings(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        agent_fixture(
            """\
rules:
  - Be polite.
  - «invalid_agent_section:Never say: sorry»
conversation:
  before_end: «invalid_agent_section:feedback»
"""
        ),
    )
    assert "quote the item" in got[0][5]
    check_diagnostics(tmp_path / "b", agent_fixture("«invalid_agent_section:rules»:\n"))


def test_precondition_unmet_utterance_is_a_boolean(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- agent.yml
agent: {id: a, persona: p}
orchestrator:
  model_group: main
  preconditions:
    verified:
      satisfied_when: session.project.ok
      resolve_with: card
      unmet_utterance: «invalid_agent_section:sometimes»
//- memory.yml
ok:
  type: bool
//- skills/card/skill.md
---
description: Card.
---
Text.
//- skills/gated/skill.md
---
description: Gated.
precondition: verified
---
Text.
""",
    )


PRECONDITION_SKILLS = """//- memory.yml
ok:
  type: bool
//- skills/card/skill.md
---
description: Card.
---
Text.
"""


def test_unused_precondition_binding_is_only_a_warning(tmp_path: Path) -> None:
    # the engine checks a binding only for a precondition some skill declares
    got = check_diagnostics(
        tmp_path,
        """\
//- agent.yml
agent: {id: a, persona: p}
orchestrator:
  model_group: main
  preconditions:
    «unused_precondition:verified»:
      satisfied_when: "session.project.ok «condition.invalid:=» True"
      resolve_with: nobody
"""
        + PRECONDITION_SKILLS,
        {"unused_precondition": "warning", "condition.invalid": "warning"},
    )
    assert "no skill declares `precondition: verified`" in got[0][5]
    assert "while no skill uses this precondition" in got[1][5]


def test_used_precondition_binding_is_checked(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        """\
//- agent.yml
agent: {id: a, persona: p}
orchestrator:
  model_group: main
  preconditions:
    verified:
      satisfied_when: "session.project.ok «invalid_satisfied_when:=» True"
      resolve_with: «unknown_resolver:nobody»
//- skills/gated/skill.md
---
description: Gated.
precondition: " verified "
---
Text.
"""
        + PRECONDITION_SKILLS,
        {"invalid_satisfied_when": "error", "unknown_resolver": "error"},
    )


def test_a_used_valid_binding_is_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        """\
//- agent.yml
agent: {id: a, persona: p}
orchestrator:
  model_group: main
  preconditions:
    verified:
      satisfied_when: session.project.ok == True
      resolve_with: card
//- skills/gated/skill.md
---
description: Gated.
precondition: verified
---
Text.
"""
        + PRECONDITION_SKILLS,
    )


# =============================================================================================
# integrations.yml: model groups


def test_model_groups_shape(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path, integrations_fixture("", "model_groups: «invalid_model_group:{}»\n")
    )
    check_diagnostics(
        tmp_path / "b",
        integrations_fixture(
            """\
  - «invalid_model_group:main-but-a-string»
  - id: «invalid_model_group:'  '»
    models: []
  - «invalid_model_group:models»: []
  - id: «invalid_model_group:nomodels»
  - id: empty
    models: «invalid_model_group:[]»
  - id: scalar_model
    models:
      - «invalid_model_group:gpt-4o»
"""
        ),
    )


def test_model_group_credentials(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        integrations_fixture(
            "",
            """\
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: «invalid_model_group_credentials:sk-live-123»
      - provider: openai
        model: gpt-4o-mini
        api_key: «invalid_model_group_credentials:"${OPENAI_KEY}-2"»
    router: {routing_strategy: simple-shuffle}
  - id: bedrock
    models:
      - provider: bedrock
        model: claude
        aws_access_key_id: «invalid_model_group_credentials:12345»
        aws_secret_access_key: ${AWS_SECRET}
        «invalid_model_group_credentials:api_key_env»: OPENAI_API_KEY
  - id: azure
    models:
      - provider: azure
        deployment: gpt
        api_base: https://bank.openai.azure.com
        api_version: "2024-02-01"
        oauth:
          type: azure_entra_id_client_secret
          client_id: «invalid_model_group_credentials:my-client»
          client_secret: ${AZURE_SECRET}
          tenant_id: ${AZURE_TENANT}
          scopes: https://cognitiveservices.azure.com/.default
""",
        ),
    )
    for secret in ("sk-live-123", "12345", "my-client"):
        assert all(secret not in g[5] for g in got)
    assert "`api_key_env` is no longer supported" in got[3][5]


def test_model_group_credentials_as_placeholders_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        integrations_fixture(
            "",
            """\
model_groups:
  - id: main
    models:
      - provider: bedrock
        model: claude
        aws_access_key_id: ${AWS_KEY_ID}
        aws_secret_access_key: "${AWS_SECRET}"
        extra: {nested: {client_secret: "${SECRET}"}}
        api_base: https://bedrock.example.com
""",
        ),
        silent=[
            "invalid_model_group_credentials",
            "invalid_model_group",
            "duplicate_model_group_id",
            "unused_model_group_models",
        ],
    )


def test_duplicate_and_unused_models(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
  - id: «duplicate_model_group_id:main»
    «unused_model_group_models:models»:
      - {provider: openai, model: gpt-4o-mini, api_key: "${OPENAI_API_KEY}"}
      - {provider: openai, model: gpt-4o, api_key: "${OPENAI_API_KEY}"}
  - id: routed
    models:
      - {provider: openai, model: gpt-4o-mini, api_key: "${OPENAI_API_KEY}"}
      - {provider: openai, model: gpt-4o, api_key: "${OPENAI_API_KEY}"}
    router:
      routing_strategy: simple-shuffle
"""
        ),
        {"unused_model_group_models": "warning", "duplicate_model_group_id": "error"},
    )


def test_orchestrator_group_unknown_when_model_groups_missing(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        "//- integrations.yml\ntracker_store: {type: sql}\n"
        "//- agent.yml\nagent: {id: a, persona: p}\norchestrator:\n"
        "  model_group: «unknown_model_group:main»\n",
    )


# =============================================================================================
# integrations.yml: MCP servers


def test_valid_mcp_servers_are_silent(tmp_path: Path) -> None:
    check_clean(
        tmp_path,
        integrations_fixture(
            """\
mcp_servers:
  - name: billing.v2
    url: https://billing.example.com/mcp
    type: https
    tool_timeout: 5
    token: ${BILLING_TOKEN}
    meta_map:
      static: {source: bank-agent}
  - name: crm
    url: http://localhost:9000
    additional_params:
      oauth:
        client_id: agent
        client_secret: ${CRM_SECRET}
"""
        ),
        silent=["invalid_mcp_server", "duplicate_mcp_server_name"],
    )


def test_mcp_server_rules(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
mcp_servers:
  - «invalid_mcp_server:billing»
  - «invalid_mcp_server:url»: http://no-name
  - name: «invalid_mcp_server:-bad»
    url: http://x
  - «invalid_mcp_server:name»: nourl
  - name: ws
    url: «invalid_mcp_server:ws://x»
  - name: grpc
    url: http://x
    type: «invalid_mcp_server:grpc»
  - name: slow
    url: http://x
    tool_timeout: «invalid_mcp_server:0»
  - name: slots
    url: http://x
    meta_map:
      «invalid_mcp_server:from_slots»: [{slot: s, param: p}]
      static: {source: «invalid_mcp_server:''»}
  - name: literal
    url: http://x
    token: «invalid_mcp_server:abc123»
  - name: legacy
    url: http://x
    «invalid_mcp_server:token_env»: BILLING_TOKEN
  - name: twoauth
    url: http://x
    api_key: ${A}
    «invalid_mcp_server:token»: ${B}
  - name: oauth
    url: http://x
    oauth: {client_secret: «invalid_mcp_server:s3cret»}
"""
        ),
    )
    check_diagnostics(
        tmp_path / "b", integrations_fixture("mcp_servers: «invalid_mcp_server:{}»\n")
    )


def test_duplicate_mcp_server_name(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
mcp_servers:
  - name: billing
    url: http://localhost:8080
  - name: «duplicate_mcp_server_name:billing»
    url: http://localhost:9090
"""
        ),
    )


# =============================================================================================
# integrations.yml: knowledge stores


def test_knowledge_stores(tmp_path: Path) -> None:
    check_clean(
        tmp_path / "ok",
        integrations_fixture(
            "knowledge_stores:\n  - {id: faq, type: qdrant, embeddings: main, top_k: 3, "
            "namespace: docs}\n"
        ),
    )
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
knowledge_stores:
  - id: faq
    type: faiss
    embeddings: main
  - id: «duplicate_knowledge_store_id:faq»
    type: qdrant
    embeddings: main
  - «invalid_knowledge_store:3»
  - id: bad_type
    type: «invalid_knowledge_store:pinecone»
    embeddings: main
  - «invalid_knowledge_store:id»: no_embeddings
    type: faiss
  - id: extra
    type: faiss
    embeddings: main
    «invalid_knowledge_store:collection»: x
    top_k: «invalid_knowledge_store:0»
  - id: unknown_group
    type: milvus
    embeddings: «validation.config.unknown_model_group:mian»
  - id: blank_group
    type: milvus
    embeddings: «validation.config.unknown_model_group:' '»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "b", integrations_fixture("knowledge_stores: «invalid_knowledge_store:faq»\n")
    )


# =============================================================================================
# integrations.yml: sections, placeholders and secrets


def test_section_shapes(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
tracing: «invalid_tracing:otlp»
metrics: «invalid_metrics:[]»
event_broker: «invalid_event_broker:[]»
timer_store: «invalid_timer_store:redis»
tracker_store: «invalid_tracker_store:[sql]»
lock_store: «invalid_lock_store:1»
secrets_manager: «invalid_secrets_manager:vault»
recordings: «invalid_recordings:true»
rasa_model_server: «invalid_model_server:http://models»
"""
        ),
    )


def test_well_configured_sections_are_silent(tmp_path: Path) -> None:
    # every section as the engine accepts it (placeholders in typed Redis and model-server
    # settings are left for startup)
    check_clean(
        tmp_path,
        integrations_fixture(
            """\
tracing:
  - type: langfuse
    public_key: ${LF_PUBLIC}
    private_key: ${LF_SECRET}
    host: https://cloud.langfuse.com
    environment: production
  - type: jaeger
    host: jaeger
    port: 6831
    username: agent
    password: ${JAEGER_PASSWORD}
    insecure: false
metrics:
  type: otlp
  endpoint: http://otel:4317
  insecure: true
event_broker:
  type: kafka
  url: [kafka-1:9092, kafka-2:9092]
  topic: rasa_events
  security_protocol: SASL_SSL
timer_store:
  type: redis
  host: ${REDIS_HOST}
  port: ${REDIS_PORT}
  key_prefix: timers
tracker_store:
  type: SQL
  url: ${DB_HOST}
  username: {source: secrets_manager.vault, secret_key: db_user}
  password: ${DB_PASSWORD}
lock_store:
  type: redis
  url: redis://agent:${REDIS_PASSWORD}@redis:6379
  use_ssl: ${REDIS_SSL}
secrets_manager:
  type: vault
  url: https://vault:8200
  token: ${VAULT_TOKEN}
recordings:
  enabled: true
  provider: s3
  s3: {bucket: calls, region: eu-west-1}
rasa_model_server:
  url: ${MODEL_SERVER}
  wait_time_between_pulls: 0
  basic_auth: {username: agent, password: "${MODEL_SERVER_PASSWORD}"}
"""
        ),
        silent=[
            "invalid_tracing",
            "invalid_metrics",
            "invalid_event_broker",
            "invalid_timer_store",
            "invalid_tracker_store",
            "invalid_lock_store",
            "invalid_secrets_manager",
            "invalid_recordings",
            "invalid_model_server",
            "literal_secret",
            "type_env_placeholder",
            "unknown_integration_key",
            "unsupported_integration_key",
        ],
    )


def test_event_broker(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path, integrations_fixture("event_broker:\n  type: «invalid_event_broker:kafka»\n")
    )
    assert "needs `url`" in got[0][5]
    got = check_diagnostics(
        tmp_path / "pika",
        integrations_fixture(
            "«invalid_event_broker:event_broker»:\n  url: amqp://rabbit\n"
            "  «invalid_event_broker:host»: rabbit\n"
        ),
    )
    assert "`username` and `password`" in got[0][5] and "(the default)" in got[0][5]
    check_diagnostics(
        tmp_path / "types",
        integrations_fixture(
            """\
event_broker:
  type: «invalid_event_broker:rabbitmq»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "urls",
        integrations_fixture(
            """\
event_broker:
  type: sql
  url: «invalid_event_broker:[db-1, db-2]»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "kafka",
        integrations_fixture(
            """\
event_broker:
  type: concurrent_kafka
  url: [kafka-1, «invalid_event_broker:''»]
"""
        ),
    )


def test_value_errors_hide_the_section_rules(tmp_path: Path) -> None:
    # like the engine: the whole-section rules (here: kafka needs url) wait for the values
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            "event_broker:\n  type: kafka\n  topic: «invalid_event_broker:[events]»\n"
        ),
    )


def test_redis_timer_and_lock_stores(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
timer_store:
  type: redis
  port: «invalid_timer_store:6379.5»
  poll_interval: ${POLL}
lock_store:
  type: concurrent_redis
  port: «invalid_lock_store:70000»
  db: ${REDIS_DB}
"""
        ),
    )
    got = check_diagnostics(
        tmp_path / "b",
        integrations_fixture(
            """\
timer_store:
  type: «invalid_timer_store:Redis»
lock_store:
  type: REDIS
  «invalid_lock_store:password»: ${REDIS_PASSWORD}
  deployment_mode: «invalid_lock_store:replica»
"""
        ),
    )
    assert "did you mean `redis`?" in got[0][5]
    assert "needs `username` too" in got[1][5]
    check_diagnostics(
        tmp_path / "c",
        integrations_fixture(
            """\
timer_store:
  type: redis
  deployment_mode: «invalid_timer_store:sentinel»
  key_prefix: «invalid_timer_store:rasa-timers»
lock_store:
  password: «literal_secret:only-used-by-redis»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "d",
        integrations_fixture(
            """\
timer_store:
  type: redis
  «invalid_timer_store:url»: redis-1
  host: redis-2
"""
        ),
    )


def test_tracker_store(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
tracker_store:
  type: «invalid_tracker_store:postgres»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "b",
        integrations_fixture(
            """\
tracker_store:
  type: mongod
  username: «invalid_tracker_store:{source: vault, secret_key: user}»
  region: «invalid_tracker_store:5»
"""
        ),
    )


def test_secrets_manager(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
secrets_manager:
  type: «invalid_secrets_manager:aws»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "b",
        integrations_fixture(
            """\
«invalid_secrets_manager:secrets_manager»:
  url: https://vault:8200
  «invalid_secrets_manager:role_id»: agent
"""
        ),
    )


def test_recordings(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture("recordings:\n  enabled: «invalid_recordings:true»\n"),
    )
    check_diagnostics(
        tmp_path / "b",
        integrations_fixture("recordings:\n  enabled: yes\n  provider: «invalid_recordings:gcs»\n"),
    )
    check_diagnostics(
        tmp_path / "c",
        integrations_fixture("recordings:\n  enabled: 1\n  provider: «invalid_recordings:ftp»\n"),
    )
    check_diagnostics(
        tmp_path / "d",
        integrations_fixture(
            """\
recordings:
  enabled: ${RECORD_CALLS}
  s3: {bucket: calls, «invalid_recordings:acl»: private}
  azure: {«invalid_recordings:container»: calls}
  local: {path: «invalid_recordings:null»}
"""
        ),
    )


def test_tracing(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
tracing:
  - type: «invalid_tracing:langfuse»
    public_key: ${LF_PUBLIC}
  - type: otlp
    endpoint: «invalid_tracing:''»
    «invalid_tracing:headers»: {}
  - type: «invalid_tracing:jaeger»
  - type: «invalid_tracing:zipkin»
  - «invalid_tracing:otlp»
"""
        ),
    )
    assert "needs `private_key` and `host`" in got[0][5]
    assert "only one backend tracer" in got[3][5]
    got = check_diagnostics(
        tmp_path / "keys",
        integrations_fixture(
            """\
tracing:
  type: langfuse
  public_key: «invalid_tracing:pk-lf-123»
  private_key: ${LF_SECRET}
  host: https://cloud.langfuse.com
  environment: «invalid_tracing:langfuse-prod»
"""
        ),
    )
    assert all("pk-lf-123" not in g[5] for g in got)
    check_diagnostics(
        tmp_path / "jaeger",
        integrations_fixture(
            """\
tracing:
  type: jaeger
  port: «invalid_tracing:${JAEGER_PORT}»
"""
        ),
    )
    check_diagnostics(
        tmp_path / "jaeger-credentials",
        integrations_fixture(
            """\
tracing:
  type: jaeger
  «invalid_tracing:username»: agent
"""
        ),
    )


def test_metrics(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path, integrations_fixture("metrics:\n  type: «invalid_metrics:jaeger»\n")
    )
    check_diagnostics(
        tmp_path / "b",
        integrations_fixture(
            "metrics:\n  type: otlp\n  endpoint: x\n  service_name: «invalid_metrics:''»\n"
        ),
    )
    check_diagnostics(tmp_path / "c", integrations_fixture("«invalid_metrics:metrics»: {}\n"))


def test_rasa_model_server(tmp_path: Path) -> None:
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
«invalid_model_server:rasa_model_server»:
  token: ${MODEL_TOKEN}
  «invalid_model_server:wait»: 10
"""
        ),
    )
    check_diagnostics(
        tmp_path / "b",
        integrations_fixture(
            """\
rasa_model_server:
  url: «invalid_model_server:models.example.com»
  wait_time_between_pulls: «invalid_model_server:-1»
  basic_auth: {username: «invalid_model_server:''», password: «invalid_model_server:5»}
"""
        ),
    )


def test_yaml_12_words_are_strings(tmp_path: Path) -> None:
    # the engine reads integrations.yml as YAML 1.2: a plain `on` is the string "on"
    got = check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
secrets_manager:
  type: vault
  token: «literal_secret:on»
"""
        ),
        {"literal_secret": "warning"},
    )
    assert len(got) == 1
    check_diagnostics(
        tmp_path / "number",
        integrations_fixture(
            "timer_store:\n  type: redis\n  socket_timeout: «invalid_timer_store:yes»\n"
            "tracker_store:\n  type: mongod\n  db: «invalid_tracker_store:1.5»\n"
        ),
    )


def test_type_env_placeholder_skips_the_section(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
tracker_store:
  type: «type_env_placeholder:${TRACKER_TYPE}»
  password: hunter2
lock_store:
  type: «type_env_placeholder:"redis-${ENV}"»
  port: not-checked
recordings:
  «invalid_recordings:type»: ${NOT_A_TYPED_SECTION}
"""
        ),
        {"type_env_placeholder": "warning", "invalid_recordings": "error"},
    )
    assert all("hunter2" not in g[5] for g in got)


def test_literal_secrets(tmp_path: Path) -> None:
    got = check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
tracker_store:
  type: sql
  password: «literal_secret:hunter2»
  url: postgresql://agent:«literal_secret:s3cret»@db/agent
lock_store:
  type: redis
  token: «literal_secret:'abc'»
  username: agent
  password: ${REDIS_PASSWORD}
secrets_manager:
  type: vault
  token: «literal_secret:hvs.123»
  url: "https://vault:«literal_secret:pw»@vault.example.com"
event_broker:
  type: kafka
  url: kafka:9092
  password: not-checked-here
"""
        ),
        {"literal_secret": "warning"},
    )
    for secret in ("hunter2", "s3cret", "hvs.123", "pw@"):
        assert all(secret not in g[5] for g in got)


def test_no_literal_secret_warning_on_an_invalid_section(tmp_path: Path) -> None:
    # the engine warns about literal secrets only once the section is valid
    check_diagnostics(
        tmp_path,
        integrations_fixture(
            """\
secrets_manager:
  type: vault
  token: hvs.123
  «invalid_secrets_manager:aws_secret_access_key»: xyz
"""
        ),
    )


# =============================================================================================
# model-group references in the index


def test_embeddings_are_model_group_references(tmp_path: Path) -> None:
    from mantle_lsp.ide.rename import rename_symbol
    from mantle_lsp.ide.types import WorkspaceEdit
    from mantle_lsp.model.project import Project

    fx = write_fixture(
        tmp_path,
        """\
//- agent.yml
agent: {id: a, persona: p}
orchestrator:
  model_group: «mg:main»
knowledge_answering:
  embeddings: «mg:main»
skill_retrieval:
  embeddings: "«mg:main»"
//- integrations.yml
model_groups:
  - id: «mg:main»
    models:
      - {provider: openai, model: gpt-4o}
knowledge_stores:
  - {id: faq, type: faiss, embeddings: «mg:main»}
  - {id: padded, type: faiss, embeddings: ' main '}
""",
    )
    proj = Project.load(fx.root)
    forms = sorted(r.form for r in proj.index.references_to(("model_group", "main")))
    assert forms == ["embeddings", "embeddings", "embeddings", "model_group"]
    edit = rename_symbol(proj, ("model_group", "main"), "primary")
    assert isinstance(edit, WorkspaceEdit)
    got = sorted(
        (p.relative_to(fx.root).as_posix(), e.range.start, e.range.end, e.new_text)
        for p, es in edit.edits.items()
        for e in es
    )
    assert got == sorted((m.path, m.start, m.end, "primary") for m in fx.marks)
