"""Tools of the bill_dispute skill (no I/O; the case number is derived locally)."""

from __future__ import annotations

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult


@tool(description="Open a dispute case for a charge on the latest bill.")
async def open_dispute(
    amount: float, reason: str, note: str = "", context: ToolContext = None
) -> ToolResult:
    account = str(context.memory.get("project.account_number", "unknown"))
    evidence = context.memory.get("evidence_items", [])
    reference = f"DSP-{account[-4:]}-{round(amount * 100) % 10000:04d}"
    context.memory.set("case_reference", reference)
    return ToolResult(
        llm_response={
            "case_reference": reference,
            "amount": amount,
            "reason": reason,
            "evidence_count": len(evidence),
            "note": note,
        }
    )
