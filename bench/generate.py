"""Generate an engine-valid synthetic Mantle project with N skills (for `make bench`).

Each skill has public and private memory, prose `if:` scopes reading its own, a
neighbour's and a project field, an ordered block with routing, `collect` and
`execute_tool`, responses with a conditioned variant, and a tool that writes memory.

    python bench/generate.py OUT_DIR N [--realistic | --agent]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

AGENT = """\
agent:
  id: bench-agent
  persona: A helpful assistant used to measure mantle-lsp.
orchestrator:
  model_group: main
"""
INTEGRATIONS = """\
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
"""
PROJECT_MEMORY = """\
authenticated:
  type: bool
  seed: true
customer_tier:
  type: categorical
  enum_values: [gold, silver, bronze]
  seed: true
"""

MEMORY = """\
schema:
  public:
    status:
      type: categorical
      enum_values: [open, pending, done]
      llm_settable: true
      description: Where the request of skill {i} stands.
    reference:
      type: text
  private:
    attempts:
      type: int
    note:
      type: text
"""

SKILL = """\
---
description: Handle request type {i} for the customer.
tool_constraints:
  - lookup_{i}:
      requires: "session.project.authenticated"
---
Help the customer with request {i}. Show the reference @memory.s{i}.reference when known.

if: session.s{i}.status == 'pending' and session.s{n}.status != 'done'
Tell the customer the request is still pending; use @tool.lookup_{i} to refresh it.

if: session.project.customer_tier == 'gold' or session.s{i}.attempts > 2
Offer priority handling and continue with @block.main.

:::ordered_block id=main
steps:
  - id: fetch
    execute_tool: lookup_{i}
    parameters:
      reference: session.s{i}.reference
  - id: route
    noop: true
    next:
      - if: "session.s{i}.note"
        then: done
      - else: ask_note
  - id: ask_note
    collect: note
    utterance: utter_ask_note_{i}
    description: Anything the customer wants to add to request {i}.
  - id: done
    action: utter_done_{i}
:::
"""

RESPONSES = """\
responses:
  utter_ask_note_{i}:
    - text: Anything to add to request {{session.s{i}.reference}}?
  utter_done_{i}:
    - text: "Request {{reference}} is {{session.s{i}.status}}."
      condition: "session.s{i}.status == 'done'"
    - text: Request {{reference}} is being handled.
"""

TOOLS = """\
from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult


@tool(description="Look up request {i}.")
async def lookup_{i}(reference: str, context: ToolContext = None) -> ToolResult:
    attempts = context.memory.get("attempts") or 0
    context.memory.set("attempts", attempts + 1)
    context.memory.set("reference", reference or "R-{i}")
    return ToolResult(llm_response={{"reference": reference}})


@tool(description="Validate the status of request {i}.")
async def run_after_setting_status(context: ToolContext = None) -> ToolResult:
    return ToolResult(llm_response={{"status": context.memory.get("status")}})
"""


def _project_files(out: Path) -> None:
    """A fresh ``out`` with the project-level files both profiles share."""
    if out.exists():
        shutil.rmtree(out)
    (out / "skills").mkdir(parents=True)
    (out / "agent.yml").write_text(AGENT)
    (out / "integrations.yml").write_text(INTEGRATIONS)
    (out / "memory.yml").write_text(PROJECT_MEMORY)


def generate(out: Path, n: int) -> Path:
    _project_files(out)
    for i in range(n):
        d = out / "skills" / f"s{i}"
        d.mkdir()
        nb = (i + 1) % n
        (d / "memory.yml").write_text(MEMORY.format(i=i))
        (d / "skill.md").write_text(SKILL.format(i=i, n=nb))
        (d / "responses.yml").write_text(RESPONSES.format(i=i))
        (d / "tools.py").write_text(TOOLS.format(i=i))
    return out


# -- the realistic profile ----------------------------------------------------------------
# Shaped like public agents (the 6–75-skill ones the oracle corpus holds): skill.md is mostly
# prose — a long description, many `if:` paragraphs, non-ASCII text —, each skill has one to
# three fields, tool modules of 1–10 KB with helpers and docstrings, and responses have many
# variants. Replicated to N skills with small variations, like copying a real agent.

_WORDS = [
    "customer",
    "account",
    "invoice",
    "refund",
    "délai",
    "coût",
    "payment",
    "plan",
    "tarif",
    "Rückerstattung",
    "appointment",
    "schedule",
    "vérifier",
    "balance",
    "statement",
    "adresse",
    "contract",
    "renewal",
    "upgrade",
    "verification",
    "identité",
    "support",
    "ticket",
    "escalation",
    "résumé",
    "options",
    "priorité",
]


def _sentence(i: int, k: int, length: int = 18) -> str:
    words = [_WORDS[(i * 7 + k * 13 + j * 5) % len(_WORDS)] for j in range(length)]
    return " ".join(words).capitalize() + "."


def _paragraph(i: int, k: int, sentences: int = 4) -> str:
    return " ".join(_sentence(i, k * 10 + s) for s in range(sentences))


def _has_tools(i: int) -> bool:
    """One skill in four has a tool module (1–10 KB); the others are prose."""
    return i % 4 == 0


def _realistic_memory(i: int) -> str:
    nf = 1 + i % 3
    out = ["schema:", "  public:"]
    out += [
        "    topic:",
        "      type: categorical",
        "      enum_values: [billing, technique, compte, autre]",
        "      llm_settable: true",
        f"      description: Le sujet de la demande {i} (billing, technique, compte ou autre).",
    ]
    if nf >= 2:
        out += ["    confirmed:", "      type: bool", "      llm_settable: true",
                "      description: The customer confirmed the summary."]  # fmt: skip
    if nf >= 3 and _has_tools(i):  # written by its tool
        out += ["  private:", "    ticket_id:", "      type: text"]
    return "\n".join(out) + "\n"


def _realistic_skill(i: int, n: int) -> str:
    nf = 1 + i % 3
    nb = (i + 1) % n
    parts = [
        "---",
        "description: >-",
        f"  Aide le client avec les demandes de type {i}: {_sentence(i, 1, 30)}",
        f"  {_sentence(i, 2, 30)} Use this skill when the customer mentions topic {i}.",
        "---",
        f"# Demande {i}",
        "",
        _paragraph(i, 0, 6),
        "",
        "## Comment répondre",
        "",
    ]
    for k in range(1, 5):
        parts += [f"- {_sentence(i, 100 + k, 14)}", ""]
    conds = [
        f"session.s{i}.topic == 'billing'",
        f"session.s{i}.topic == 'technique' and session.project.authenticated",
        f"session.s{nb}.topic != None",
        "session.project.customer_tier == 'gold'",
        f"session.s{i}.topic == 'compte' or session.s{i}.topic == 'autre'",
    ]
    if nf >= 2:
        conds.append(f"not session.s{i}.confirmed")
    for k, cond in enumerate(conds):
        parts += [f"if: {cond}", _paragraph(i, 20 + k, 3), ""]
    parts += [
        f"Résumez la demande (sujet: @memory.s{i}.topic) avant de conclure; "
        + (
            f"pour les détails du compte, utilisez @tool.lookup_{i}."
            if _has_tools(i)
            else "pour les détails du compte, demandez au client."
        ),
        "",
        _paragraph(i, 40, 5),
        "",
    ]
    return "\n".join(parts)


def _realistic_responses(i: int) -> str:
    lines = ["responses:", f"  utter_topic_{i}:"]
    for k, topic in enumerate(["billing", "technique", "compte", "autre"]):
        lines += [
            f'    - text: "{_sentence(i, 200 + k, 12)} ({topic})"',
            f"      condition: \"session.s{i}.topic == '{topic}'\"",
        ]
    lines += [f"    - text: {_sentence(i, 210, 12)}"]
    lines += [f"  utter_greet_{i}:"]
    lines += [f"    - text: {_sentence(i, 220 + k, 10)}" for k in range(6)]
    return "\n".join(lines) + "\n"


def _realistic_tools(i: int) -> str:
    nf = 1 + i % 3
    helpers = "\n\n".join(
        f'''def _format_line_{k}(item: dict) -> str:
    """{_sentence(i, 300 + k, 12)}"""
    label = str(item.get("label", "")).strip()
    amount = float(item.get("amount") or 0.0)
    if amount < 0:
        return f"{{label}}: -{{abs(amount):.2f}}"
    return f"{{label}}: {{amount:.2f}}"'''
        for k in range(2 + (i // 4) % 30)
    )
    write = (
        '    context.memory.set("ticket_id", f"T-{i}-{reference}")\n' if nf >= 3 else ""
    ).replace("{i}", str(i))
    return f'''"""Tools of skill {i}: {_sentence(i, 290, 10)}"""

import json
import logging
from typing import Any

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

logger = logging.getLogger(__name__)
CATALOGUE: dict[str, Any] = {{"version": {i}, "items": []}}


{helpers}


@tool(description="Look up the account details for request {i}.")
async def lookup_{i}(reference: str = "", context: ToolContext = None) -> ToolResult:
    """{_sentence(i, 310, 14)}"""
    topic = context.memory.get("topic")
    logger.info("lookup %s for %s", reference, topic)
{write}    lines = [_format_line_0(item) for item in CATALOGUE["items"]]
    return ToolResult(llm_response=json.dumps({{"reference": reference, "lines": lines}}))
'''


def generate_realistic(out: Path, n: int) -> Path:
    _project_files(out)
    for i in range(n):
        d = out / "skills" / f"s{i}"
        d.mkdir()
        (d / "memory.yml").write_text(_realistic_memory(i), encoding="utf-8")
        (d / "skill.md").write_text(_realistic_skill(i, n), encoding="utf-8")
        (d / "responses.yml").write_text(_realistic_responses(i), encoding="utf-8")
        if _has_tools(i):
            (d / "tools.py").write_text(_realistic_tools(i), encoding="utf-8")
    return out


# -- the agent profile ---------------------------------------------------------------------
# Shaped like the public 75-skill production agent of spec/real-world-notes.md (issue 32),
# replicated to N skills: skill.md mostly Markdown prose (median ~1.3 KB, up to ~4.5 KB)
# with a long folded description naming other skills, six of 75 with an ordered block;
# half with a tools.py (1–18 KB), one in six with a memory.yml, one in seven with a
# responses.yml; two shared tool modules in tools/ that a third of the skills import;
# lib/ helpers holding memory keys as constants; a small project memory.yml (3 fields)
# read from several skills and tools; few conditions (~26 in 75 skills).

AGENT_BASE = 75
AGENT_FIELD = "case_status"  # the public field of every skill with a memory.yml

_AGENT_PROJECT_MEMORY = """\
customer_id:  # the customer's id once identified
  type: text
authenticated:  # whether the customer passed identity verification
  type: bool
customer_tier:  # the customer's tier, from the CRM at session start
  type: categorical
  enum_values: [gold, silver, bronze]
  seed: true
"""

_AGENT_LIB_KEYS = '''"""Memory keys shared by the tools (as the engine stores them)."""

CUSTOMER_ID = "project.customer_id"
AUTHENTICATED = "project.authenticated"
TIER = "project.customer_tier"
'''

_AGENT_LIB_SESSION = '''"""Helpers the tools share to read and write session memory."""

from lib.keys import AUTHENTICATED, CUSTOMER_ID


def remember_customer(context, customer_id: str) -> None:
    """Keep the identified customer for the rest of the session."""
    context.memory.set(CUSTOMER_ID, customer_id)


def mark_verified(context) -> None:
    context.memory.set(AUTHENTICATED, True)


def current_customer(context) -> str:
    return context.memory.get(CUSTOMER_ID) or ""
'''

_AGENT_SHARED_CUSTOMER = '''"""Shared customer tools (imported by several skills)."""

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

from lib.session import current_customer, remember_customer


@tool(description="Look up the customer by phone number or e-mail address.")
async def lookup_customer(contact: str = "", context: ToolContext = None) -> ToolResult:
    """Find the customer record and remember its id for the session."""
    customer_id = "C-" + str(abs(hash(contact)) % 100000)
    remember_customer(context, customer_id)
    return ToolResult(llm_response={"customer_id": customer_id})


@tool(description="Summarise the customer's open cases.")
async def open_cases(context: ToolContext = None) -> ToolResult:
    return ToolResult(llm_response={"customer": current_customer(context), "cases": []})
'''

_AGENT_SHARED_AUTH = '''"""Identity verification, shared by the skills that touch account data."""

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

from lib.session import mark_verified


@tool(description="Verify the customer's identity with a one-time code.")
async def verify_identity(code: str = "", context: ToolContext = None) -> ToolResult:
    ok = len(code) == 6 and code.isdigit()
    if ok:
        mark_verified(context)
    return ToolResult(llm_response={"verified": ok})
'''

_AGENT_TOPICS = [
    "card replacement", "billing dispute", "plan upgrade", "roaming charges",
    "address change", "refund request", "contract renewal", "payment plan",
    "lost device", "porting a number", "data allowance", "invoice copy",
    "technical fault", "appointment booking", "complaint", "account closure",
]  # fmt: skip


def _agent_t(i: int) -> int:
    return i % AGENT_BASE


def agent_has_memory(i: int) -> bool:
    """One skill in six has a memory.yml (with the public field AGENT_FIELD)."""
    return _agent_t(i) % 6 == 0


def _agent_has_tools(i: int) -> bool:
    return _agent_t(i) % 2 == 0


def _agent_has_block(i: int) -> bool:
    return _agent_t(i) in (6, 18, 30, 42, 54, 66)  # five block-only skills and one hybrid


def _agent_has_responses(i: int) -> bool:
    return _agent_has_block(i) or _agent_t(i) % 14 == 5


def _agent_imports(i: int) -> list[str]:
    t = _agent_t(i)
    out = []
    if t % 3 == 1:
        out.append("lookup_customer")
    if t % 9 == 4:
        out.append("verify_identity")
    return out


def _agent_prose(i: int, size: int) -> list[str]:
    """Markdown prose of about ``size`` characters: headings, lists, bold, links, non-ASCII
    punctuation."""
    topic = _AGENT_TOPICS[_agent_t(i) % len(_AGENT_TOPICS)]
    out: list[str] = [f"# {topic.capitalize()} ({i})", ""]
    k = 0
    while sum(len(x) + 1 for x in out) < size:
        kind = k % 4
        if kind == 0:
            out += [
                f"Help the customer with their **{topic}** — confirm what they need first, "
                "then explain the options in plain words (no jargon → keep it short). "
                + _sentence(i, 400 + k, 14),
                "",
            ]
        elif kind == 1:
            out += ["## What to check", ""]
            out += [f"- {_sentence(i, 410 + k * 3 + j, 9)}" for j in range(3)]
            out += [""]
        elif kind == 2:
            out += [
                "If the customer asks about fees, quote the tariff page "
                f"([tariffs](https://example.com/tariffs#{i})) and never promise a refund "
                "above 50 €; say “I will check” instead.",
                "",
            ]
        else:
            out += ["1. Greet the customer.", "2. " + _sentence(i, 430 + k, 10),
                    "3. Summarise and confirm.", ""]  # fmt: skip
        k += 1
    return out


def _agent_skill(i: int, n: int) -> str:
    t = _agent_t(i)
    base = i - t  # the first skill of this copy of the 75
    others = [base + (t + d) % AGENT_BASE for d in (7, 19, 33)]
    others = [o for o in others if o < n and o != i][:2]
    exclusions = " or ".join(f"s{o}" for o in others) or "other requests"
    topic = _AGENT_TOPICS[t % len(_AGENT_TOPICS)]
    fm = [
        "---",
        "description: >",
        f"  Handles the customer's {topic} requests: explains what is possible, collects "
        f"what is needed and hands over when it cannot help. {_sentence(i, 1, 8)}",
        f"  Do NOT activate for {exclusions}; those skills handle their own requests.",
    ]
    imports = _agent_imports(i)
    if imports:
        fm += ["import_tools:"] + [f"  - {name}" for name in imports]
    if _agent_has_tools(i) and t % 10 == 4:
        fm += [
            "tool_constraints:",
            f"  - fetch_{i}:",
            '      requires: "session.project.authenticated"',
        ]
    fm += ["---"]
    body: list[str] = []
    if not _agent_has_block(i) or t == 66:  # prose (the hybrid has both)
        size = 500 + (t * 53) % 1200 if t % 25 else 4200  # median ~1.3 KB, max ~4.5 KB
        body += _agent_prose(i, size)
        if _agent_has_tools(i):
            body += [f"Use `fetch_{i}` (@tool.fetch_{i}) to read the account first.", ""]
        if "lookup_customer" in imports:
            body += ["Identify the customer with @tool.lookup_customer when unknown.", ""]
        if "verify_identity" in imports:
            body += ["Ask for the one-time code and call @tool.verify_identity.", ""]
        if t % 5 == 1:
            prev = i - 1
            if prev >= 0 and agent_has_memory(prev):
                cond = f"session.s{prev}.{AGENT_FIELD} == 'open'"
            else:
                cond = "session.project.customer_tier == 'gold'"
            body += [f"if: {cond}", _sentence(i, 500, 16), ""]
        if t % 4 == 2:
            body += ["Address gold customers by name (tier: @memory.project.customer_tier).", ""]
        if agent_has_memory(i):
            body += [f"Keep the case status (@memory.s{i}.{AGENT_FIELD}) up to date.", ""]
        if i == n - 1 and n > 1:
            body += [f"Check the first case first (@memory.s0.{AGENT_FIELD}).", ""]
    if _agent_has_block(i):
        body += [
            f"Collect the details of the {topic} request in order.",
            "",
            ":::ordered_block id=collect",
            "steps:",
            "  - id: ask_contact",
            "    collect: contact",
            f"    utterance: utter_ask_contact_{i}",
            "    description: How to reach the customer (phone or e-mail).",
            "  - id: route",
            "    noop: true",
            "    next:",
            f'      - if: "session.s{i}.contact"',
            "        then: done",
            "      - else: ask_contact",
            "  - id: done",
            f"    action: utter_done_{i}",
            ":::",
            "",
        ]
    return "\n".join(fm + body)


def _agent_memory(i: int) -> str:
    lines = [
        "schema:",
        "  public:",
        f"    {AGENT_FIELD}:",
        "      type: categorical",
        "      enum_values: [open, pending, closed]",
        "      llm_settable: true",
        "      description: Where the customer's case stands.",
    ]
    private = []
    if _agent_has_tools(i):
        private += ["    last_lookup:", "      type: text"]
    if _agent_has_block(i):
        private += ["    contact:", "      type: text"]
    if private:
        lines += ["  private:", *private]
    return "\n".join(lines) + "\n"


def _agent_responses(i: int) -> str:
    lines = ["responses:"]
    if _agent_has_block(i):
        lines += [
            f"  utter_ask_contact_{i}:",
            "    - text: How can we reach you (phone or e-mail)?",
            f"  utter_done_{i}:",
            "    - text: Thank you, we have everything we need.",
        ]
    lines += [
        f"  utter_sorry_{i}:",
        f"    - text: {_sentence(i, 600, 10)}",
        f"    - text: {_sentence(i, 601, 12)}",
    ]
    return "\n".join(lines) + "\n"


def _agent_tools(i: int) -> str:
    t = _agent_t(i)
    nhelpers = 50 if t == 50 else 1 + t % 3  # ~1.2–2 KB, one of the 75 ~17 KB
    helpers = "\n\n".join(
        f'''def _format_{k}(item: dict) -> str:
    """{_sentence(i, 700 + k, 10)}"""
    label = str(item.get("label", "")).strip()
    amount = float(item.get("amount") or 0.0)
    if amount < 0:
        return f"{{label}}: -{{abs(amount):.2f}}"
    return f"{{label}}: {{amount:.2f}}"'''
        for k in range(nhelpers)
    )
    own = '    context.memory.set("last_lookup", reference)\n' if agent_has_memory(i) else ""
    return f'''"""Tools of skill s{i}: {_sentence(i, 690, 8)}"""

import logging
from typing import Any

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

from lib.keys import CUSTOMER_ID

logger = logging.getLogger(__name__)
CATALOGUE: dict[str, Any] = {{"version": {i}, "items": []}}


{helpers}


@tool(description="Read the account details the {_AGENT_TOPICS[t % len(_AGENT_TOPICS)]} needs.")
async def fetch_{i}(reference: str = "", context: ToolContext = None) -> ToolResult:
    """{_sentence(i, 710, 12)}"""
    customer = context.memory.get(CUSTOMER_ID)
    logger.info("fetch %s for %s", reference, customer)
{own}    lines = [_format_0(item) for item in CATALOGUE["items"]]
    return ToolResult(llm_response={{"customer": customer, "lines": lines}})
'''


def generate_agent(out: Path, n: int) -> Path:
    _project_files(out)
    (out / "memory.yml").write_text(_AGENT_PROJECT_MEMORY, encoding="utf-8")
    shared = {
        "lib": {"__init__.py": "", "keys.py": _AGENT_LIB_KEYS, "session.py": _AGENT_LIB_SESSION},
        "tools": {"customer.py": _AGENT_SHARED_CUSTOMER, "auth.py": _AGENT_SHARED_AUTH},
    }
    for folder, files in shared.items():
        (out / folder).mkdir()
        for name, text in files.items():
            (out / folder / name).write_text(text, encoding="utf-8")
    for i in range(n):
        d = out / "skills" / f"s{i}"
        d.mkdir()
        (d / "skill.md").write_text(_agent_skill(i, n), encoding="utf-8")
        if agent_has_memory(i):
            (d / "memory.yml").write_text(_agent_memory(i), encoding="utf-8")
        if _agent_has_responses(i):
            (d / "responses.yml").write_text(_agent_responses(i), encoding="utf-8")
        if _agent_has_tools(i):
            (d / "tools.py").write_text(_agent_tools(i), encoding="utf-8")
    return out


if __name__ == "__main__":
    kinds = {"--realistic": generate_realistic, "--agent": generate_agent}
    if len(sys.argv) not in (3, 4) or (sys.argv[3:] and sys.argv[3] not in kinds):
        raise SystemExit(__doc__)
    make = kinds[sys.argv[3]] if sys.argv[3:] else generate
    make(Path(sys.argv[1]), int(sys.argv[2]))
