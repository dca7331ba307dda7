"""Tools of the plan_change skill (made-up catalogue, no I/O)."""

from __future__ import annotations

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

# Monthly prices in EUR per plan code.
_PRICES: dict[str, float] = {
    "flex_10": 9.90,
    "flex_25": 17.90,
    "unlimited": 34.90,
    "unlimited_plus": 44.90,
}
_CONTRACT_ONLY = {"unlimited", "unlimited_plus"}
# Which plan each example account is on.
_CURRENT: dict[str, str] = {"VM-100200": "flex_10", "VM-300400": "unlimited"}


@tool(description="Look up the price plan the customer is on today.")
async def get_current_plan(context: ToolContext = None) -> ToolResult:
    account = context.memory.get("project.account_number")
    plan = _CURRENT.get(str(account), "flex_10")
    context.memory.set("current_plan", plan)
    return ToolResult(llm_response={"plan": plan, "monthly_price": _PRICES[plan]})


@tool(description="Quote the new monthly price and start date for a plan change.")
async def quote_plan_change(
    target_plan: str, tier: str = "", context: ToolContext = None
) -> ToolResult:
    current = context.memory.get("current_plan", "flex_10")
    quote = {
        "from": current,
        "to": target_plan,
        "old_price": _PRICES.get(current),
        "new_price": _PRICES.get(target_plan),
        "starts": "first day of the next billing month",
        "company_account": tier == "business",
    }
    context.memory.set("plan_quote", quote)
    return ToolResult(llm_response=quote)


@tool(description="Apply the agreed plan change to the customer's line.")
async def apply_plan_change(target_plan: str, context: ToolContext = None) -> ToolResult:
    if target_plan not in _PRICES:
        return ToolResult(llm_response={"error": f"Unknown plan {target_plan!r}."})
    context.memory.set("change_applied", True)
    return ToolResult(llm_response={"ok": True, "plan": target_plan})


@tool(description="Check a freshly stored target plan against the customer's tier.")
async def run_after_setting_target_plan(context: ToolContext = None) -> ToolResult:
    target = context.memory.get("target_plan")
    tier = context.memory.get("project.customer_tier")
    if tier == "prepaid" and target in _CONTRACT_ONLY:
        return ToolResult(
            llm_response={
                "error": "Unlimited plans need a contract; prepaid lines cannot switch here."
            }
        )
    return ToolResult(llm_response={"error": None, "target_plan": target})
