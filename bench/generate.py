"""Generate an engine-valid synthetic Mantle project with N skills (for `make bench`).

Each skill has public and private memory, prose `if:` scopes reading its own, a
neighbour's and a project field, an ordered block with routing, `collect` and
`execute_tool`, responses with a conditioned variant, and a tool that writes memory.

    python bench/generate.py OUT_DIR N [--realistic]
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


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--realistic"]):
        raise SystemExit(__doc__)
    make = generate_realistic if sys.argv[3:] else generate
    make(Path(sys.argv[1]), int(sys.argv[2]))
