"""Tools of the verify_customer skill (made-up subscriber data, no I/O)."""

from __future__ import annotations

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

# Stand-in subscriber register: mobile number -> PIN, account and tier.
_SUBSCRIBERS: dict[str, dict[str, str]] = {
    "4915550100": {"pin": "2468", "account": "VM-100200", "tier": "prepaid"},
    "4915550177": {"pin": "1357", "account": "VM-300400", "tier": "business"},
}


def _digits(value: str) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


@tool(description="Check a mobile number and account PIN against the subscriber register.")
async def check_credentials(
    phone_number: str, pin: str, channel: str = "chat", context: ToolContext = None
) -> ToolResult:
    record = _SUBSCRIBERS.get(_digits(phone_number))
    if record is not None and record["pin"] == _digits(pin):
        context.memory.set("project.customer_verified", True)
        context.memory.set("project.customer_tier", record["tier"])
        if not context.memory.get("project.account_number"):
            context.memory.set("project.account_number", record["account"])
        return ToolResult(llm_response={"verified": True, "tier": record["tier"]})

    attempts = int(context.memory.get("failed_attempts", 0)) + 1
    context.memory.set("failed_attempts", attempts)
    return ToolResult(llm_response={"verified": False, "attempts": attempts, "channel": channel})
