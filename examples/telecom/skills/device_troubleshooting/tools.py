"""Tools of the device_troubleshooting skill (canned diagnostics, no I/O)."""

from __future__ import annotations

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

_SUGGESTIONS: dict[str, list[str]] = {
    "no_signal": ["Check that the SIM is not locked", "Select the network manually"],
    "no_data": ["Switch mobile data off and on", "Reset the APN to 'internet.vela'"],
    "calls_fail": ["Turn off Wi-Fi calling", "Check call forwarding is off"],
    "abroad": ["Switch on data roaming", "Select a partner network manually"],
}


@tool(description="Run a network-side diagnostic on the customer's line.")
async def run_line_diagnostics(
    msisdn: str, issue_type: str, deep_scan: bool = False, context: ToolContext = None
) -> ToolResult:
    steps = _SUGGESTIONS.get(issue_type, ["Restart the phone"])
    report = {
        "line": msisdn,
        "network_fault": False,
        "suggestions": steps,
        "deep_scan": deep_scan,
    }
    context.memory.set("diagnostics", report)
    done = list(context.memory.get("checks_done", []))
    done.append(issue_type)
    context.memory.set("checks_done", done)
    return ToolResult(llm_response=report)


@tool(description="Open a repair ticket for the customer's phone with the repair desk.")
async def open_repair_ticket(summary: str, context: ToolContext = None) -> ToolResult:
    model = context.memory.get("device_model", "unknown device")
    ticket = f"RT-{sum(map(ord, model + summary)) % 100000:05d}"
    context.memory.set("ticket_id", ticket)
    return ToolResult(llm_response={"ticket": ticket, "device": model})
