"""Generate an engine-valid synthetic Mantle project with N skills (for `make bench`).

Each skill has public and private memory, prose `if:` scopes reading its own, a
neighbour's and a project field, an ordered block with routing, `collect` and
`execute_tool`, responses with a conditioned variant, and a tool that writes memory.

    python bench/generate.py OUT_DIR N
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


def generate(out: Path, n: int) -> Path:
    if out.exists():
        shutil.rmtree(out)
    (out / "skills").mkdir(parents=True)
    (out / "agent.yml").write_text(AGENT)
    (out / "integrations.yml").write_text(INTEGRATIONS)
    (out / "memory.yml").write_text(PROJECT_MEMORY)
    for i in range(n):
        d = out / "skills" / f"s{i}"
        d.mkdir()
        nb = (i + 1) % n
        (d / "memory.yml").write_text(MEMORY.format(i=i))
        (d / "skill.md").write_text(SKILL.format(i=i, n=nb))
        (d / "responses.yml").write_text(RESPONSES.format(i=i))
        (d / "tools.py").write_text(TOOLS.format(i=i))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    generate(Path(sys.argv[1]), int(sys.argv[2]))
