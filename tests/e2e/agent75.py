"""A 75-skill agent shaped like the public one authors tried the graph views on (issue 33):
74 mostly-prose skills (one field, some a tool, reading a neighbour's or a project field)
plus ``payroll_payslip``, whose ordered block has 33 steps with branches, loops back and
long conditions; about 150 nodes and 120 edges in its agent map. No diagnostics.

    python tests/e2e/agent75.py OUT_DIR

Used by the real-VS-Code e2e (tests/e2e/run.mjs) and by tests/test_layout.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from generate import AGENT, INTEGRATIONS, PROJECT_MEMORY

FILLERS = 74

SKILL = "payroll_payslip"
MEMORY = """\
schema:
  public:
    employee_id:
      type: text
      description: The employee number printed on the badge, for example E-10442.
    pay_period:
      type: categorical
      enum_values: [current, previous, other]
      description: Which payslip - the current month, the previous one or another period.
    delivery_channel:
      type: categorical
      enum_values: [email, post, download]
      description: How the employee wants the payslip - by email, by post or as a download.
    payslip_delivered:
      type: bool
  private:
    employee_found:
      type: bool
    lookup_attempts:
      type: int
    custom_period:
      type: text
      description: The pay period the employee asks for, as a month and year (May 2025).
    payslip_ready:
      type: bool
    wants_breakdown:
      type: bool
      description: True if the employee wants gross pay, tax and deductions explained.
    satisfied:
      type: bool
      description: True if the employee got what they needed.
"""
P = f"session.{SKILL}"
BLOCK = f"""\
:::ordered_block id=main
steps:
  - id: greet
    action: utter_payslip_intro
  - id: ask_employee_id
    collect: employee_id
    utterance: utter_ask_employee_id
  - id: lookup_employee
    execute_tool: find_employee
    parameters:
      employee_id: {P}.employee_id
  - id: check_found
    noop: true
    next:
      - if: "{P}.employee_found == True and session.project.authenticated"
        then: ask_period
      - else: not_found
  - id: not_found
    action: utter_employee_not_found
  - id: retry_id
    noop: true
    next:
      - if: "{P}.lookup_attempts < 3"
        then: ask_employee_id
      - else: give_up
  - id: give_up
    action: utter_payslip_give_up
    next: END
  - id: ask_period
    collect: pay_period
    utterance: utter_ask_pay_period
  - id: check_period
    noop: true
    next:
      - if: "{P}.pay_period == 'current'"
        then: fetch_current
      - if: "{P}.pay_period == 'previous'"
        then: fetch_previous
      - else: ask_custom_period
  - id: ask_custom_period
    collect: custom_period
    utterance: utter_ask_custom_period
  - id: fetch_custom
    execute_tool: fetch_payslip
    parameters:
      employee_id: {P}.employee_id
      period: {P}.custom_period
    next: check_payslip
  - id: fetch_current
    execute_tool: fetch_payslip
    parameters:
      employee_id: {P}.employee_id
      period: {P}.pay_period
    next: check_payslip
  - id: fetch_previous
    execute_tool: fetch_payslip
    parameters:
      employee_id: {P}.employee_id
      period: {P}.pay_period
  - id: check_payslip
    noop: true
    next:
      - if: "{P}.payslip_ready == True"
        then: show_summary
      - else: payslip_missing
  - id: payslip_missing
    action: utter_payslip_missing
    next: offer_ticket
  - id: show_summary
    action: utter_payslip_summary
  - id: ask_breakdown
    collect: wants_breakdown
    utterance: utter_ask_breakdown
  - id: check_breakdown
    noop: true
    next:
      - if: "{P}.wants_breakdown == True"
        then: show_gross
      - else: ask_delivery
  - id: show_gross
    action: utter_payslip_gross
  - id: show_tax
    action: utter_payslip_tax
  - id: show_deductions
    action: utter_payslip_deductions
  - id: show_net
    action: utter_payslip_net
  - id: ask_delivery
    collect: delivery_channel
    utterance: utter_ask_delivery_channel
  - id: route_delivery
    noop: true
    next:
      - if: "{P}.delivery_channel == 'email' and session.project.customer_tier != 'bronze'"
        then: send_email
      - if: "{P}.delivery_channel == 'post'"
        then: send_post
      - else: show_download
  - id: send_email
    execute_tool: send_payslip_email
    parameters:
      employee_id: {P}.employee_id
    next: confirm_sent
  - id: send_post
    execute_tool: order_paper_copy
    parameters:
      employee_id: {P}.employee_id
    next: confirm_sent
  - id: show_download
    action: utter_payslip_download
    next: ask_satisfied
  - id: confirm_sent
    action: utter_payslip_sent
  - id: ask_satisfied
    collect: satisfied
    utterance: utter_ask_satisfied
  - id: check_satisfied
    noop: true
    next:
      - if: "{P}.satisfied == True"
        then: mark_done
      - else: offer_ticket
  - id: offer_ticket
    call: s2
    next: thanks
  - id: mark_done
    set_memory:
      payslip_delivered: true
  - id: thanks
    action: utter_payslip_thanks
    next: END
:::
"""
SKILL_MD = f"""\
---
description: >-
  Finds an employee's payslip for a pay period, explains gross pay, tax and deductions
  when asked, and sends it by email or post or offers a download link.
---
# Payslips

Help the employee get their payslip. Never read out a full bank account number.

{BLOCK}"""
RESPONSES = ["payslip_intro", "employee_not_found", "payslip_give_up", "payslip_missing",
             "payslip_summary", "payslip_gross", "payslip_tax", "payslip_deductions",
             "payslip_net", "payslip_download", "payslip_sent", "payslip_thanks",
             "ask_employee_id", "ask_pay_period", "ask_custom_period", "ask_breakdown",
             "ask_delivery_channel", "ask_satisfied"]  # fmt: skip
TOOLS = '''\
"""Tools of the payroll_payslip skill (made-up data, no I/O)."""

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult


@tool(description="Find an employee by their employee number.")
async def find_employee(employee_id: str, context: ToolContext = None) -> ToolResult:
    attempts = context.memory.get("lookup_attempts") or 0
    context.memory.set("lookup_attempts", attempts + 1)
    context.memory.set("employee_found", employee_id.startswith("E-"))
    return ToolResult(llm_response={"found": employee_id.startswith("E-")})


@tool(description="Fetch the payslip of an employee for a pay period.")
async def fetch_payslip(employee_id: str, period: str, context: ToolContext = None) -> ToolResult:
    context.memory.set("payslip_ready", True)
    return ToolResult(llm_response={"employee": employee_id, "period": period, "net": 2410.5})


@tool(description="Email the payslip to the employee's work address.")
async def send_payslip_email(employee_id: str, context: ToolContext = None) -> ToolResult:
    return ToolResult(llm_response={"sent": True})


@tool(description="Order a paper copy of the payslip by post.")
async def order_paper_copy(employee_id: str, context: ToolContext = None) -> ToolResult:
    return ToolResult(llm_response={"ordered": True})
'''


def _filler(d: Path, i: int) -> None:
    """Skill ``s<i>``: prose; a `topic` field unless i % 3 == 2; a tool when i % 6 == 0;
    it reads its neighbour's topic when i % 4 == 0, a project field when i % 5 == 0."""
    has_topic, has_tool = i % 3 != 2, i % 6 == 0
    nb = next(k for k in range(i + 1, i + 4) if k % 3 != 2) % FILLERS
    prose = [
        "---",
        "description: >-",
        f"  Aide le client avec les demandes de type {i}: factures, délais, coûts et",
        f"  rendez-vous. Use this skill when the customer mentions topic {i}.",
        "---",
        f"# Demande {i}",
        "",
        "Écoutez la demande, résumez-la, puis proposez la suite. Stay polite and brief.",
        "",
    ]
    if has_topic:
        prose += [f"Résumez le sujet (@memory.s{i}.topic) avant de conclure.", ""]
    if i % 4 == 0 and nb % 3 != 2:
        prose += [f"if: session.s{nb}.topic == 'billing'", "Mention the open invoice.", ""]
    if i % 5 == 0:
        prose += ["if: session.project.customer_tier == 'gold'", "Offer priority help.", ""]
    if has_tool:
        prose += [f"Use @tool.lookup_{i} to find the account details.", ""]
    d.mkdir()
    (d / "skill.md").write_text("\n".join(prose), encoding="utf-8")
    if has_topic:
        (d / "memory.yml").write_text(
            "schema:\n  public:\n    topic:\n      type: categorical\n"
            "      enum_values: [billing, technique, compte]\n      llm_settable: true\n"
            f"      description: The subject of request {i}.\n",
            encoding="utf-8",
        )
    if has_tool:
        (d / "tools.py").write_text(
            "from rasa.mantle.tools.decorator import ToolContext, tool\n"
            "from rasa.mantle.tools.result import ToolResult\n\n\n"
            f'@tool(description="Look up the account details for request {i}.")\n'
            f'async def lookup_{i}(reference: str = "", context: ToolContext = None)'
            " -> ToolResult:\n"
            '    return ToolResult(llm_response={"reference": reference})\n',
            encoding="utf-8",
        )


def generate(out: Path) -> Path:
    """The 75-skill agent in ``out`` (which must not exist yet)."""
    (out / "skills").mkdir(parents=True)
    (out / "agent.yml").write_text(AGENT, encoding="utf-8")
    (out / "integrations.yml").write_text(INTEGRATIONS, encoding="utf-8")
    (out / "memory.yml").write_text(PROJECT_MEMORY, encoding="utf-8")
    for i in range(FILLERS):
        _filler(out / "skills" / f"s{i}", i)
    d = out / "skills" / SKILL
    d.mkdir()
    (d / "memory.yml").write_text(MEMORY, encoding="utf-8")
    (d / "skill.md").write_text(SKILL_MD, encoding="utf-8")
    (d / "tools.py").write_text(TOOLS, encoding="utf-8")
    lines = ["responses:"]
    for r in RESPONSES:
        lines += [f"  utter_{r}:", f"    - text: {r.replace('_', ' ').capitalize()}."]
    (d / "responses.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    generate(Path(sys.argv[1]))
