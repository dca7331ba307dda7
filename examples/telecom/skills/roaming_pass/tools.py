"""Tools of the roaming_pass skill (made-up price list, no I/O)."""

from __future__ import annotations

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

_ZONES: dict[str, str] = {
    "spain": "eu",
    "france": "eu",
    "italy": "eu",
    "united states": "americas",
    "canada": "americas",
    "brazil": "americas",
}
# Daily price in EUR per zone and pass length.
_DAILY_PRICE: dict[str, dict[str, float]] = {
    "eu": {"day": 1.50, "week": 1.20, "month": 0.90},
    "americas": {"day": 5.90, "week": 4.90, "month": 3.90},
    "world": {"day": 9.90, "week": 8.50, "month": 6.90},
}


@tool(description="Quote the daily price of a roaming pass for a destination and pass length.")
async def quote_roaming_pass(
    destination: str, pass_length: str, tier: str = "", context: ToolContext = None
) -> ToolResult:
    zone = _ZONES.get(destination.strip().lower(), "world")
    price = _DAILY_PRICE[zone].get(pass_length, _DAILY_PRICE[zone]["day"])
    if tier == "business":
        price = round(price * 0.8, 2)
    context.memory.set("zone", zone)
    context.memory.set("daily_price", price)
    return ToolResult(llm_response={"zone": zone, "daily_price": price, "currency": "EUR"})


@tool(description="Add the quoted roaming pass to the customer's line.")
async def add_roaming_pass(
    msisdn: str, destination: str, pass_length: str, context: ToolContext = None
) -> ToolResult:
    name = f"{pass_length.capitalize()} pass {destination.title()}"
    context.memory.set("pass_name", name)
    context.memory.set("pass_active", True)
    return ToolResult(llm_response={"ok": True, "pass": name, "line": msisdn})
