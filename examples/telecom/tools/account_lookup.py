"""Shared account tools for the Vela Mobile example agent.

Only skills that list a tool under ``import_tools`` (or gate it in
``tool_constraints``) can use it. The data below is made up; nothing here talks
to a network or writes files.
"""

from __future__ import annotations

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

# A tiny stand-in for the billing system, keyed by account number.
_ACCOUNTS: dict[str, dict[str, object]] = {
    "VM-100200": {
        "plan": "flex_10",
        "last_bill_total": 23.40,
        "last_bill_date": "2026-10-31",
        "last_payment": 19.90,
        "open_balance": 3.50,
    },
    "VM-300400": {
        "plan": "unlimited",
        "last_bill_total": 41.00,
        "last_bill_date": "2026-10-31",
        "last_payment": 41.00,
        "open_balance": 0.0,
    },
}


@tool(
    description=(
        "Return a short summary of the customer's account: current plan, the "
        "latest bill total and date, the last payment and any open balance."
    )
)
async def lookup_account_summary(context: ToolContext = None) -> ToolResult:
    account_number = context.memory.get("project.account_number")
    if not account_number:
        return ToolResult(llm_response={"error": "No account number is known yet."})
    summary = _ACCOUNTS.get(str(account_number))
    if summary is None:
        return ToolResult(llm_response={"error": f"Account {account_number} was not found."})
    tier = context.memory.get("project.customer_tier", "unknown")
    return ToolResult(llm_response={"account": account_number, "tier": tier, **summary})
