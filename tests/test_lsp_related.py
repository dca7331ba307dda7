"""Related information over LSP: a client that declares
``textDocument.publishDiagnostics.relatedInformation`` gets the other places a diagnostic
is about, each with its own file's URI and UTF-16 range; a client that does not, gets none
(the message names them anyway)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from support import write_fixture
from test_lsp_support import lsp_session, position_of, uri, vscode_capabilities
from test_related_info import FIXTURE, TOOLS_HEADER

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]
NEVER = "lsp.memory.never_written"


def _range(text: str, needle: str, nth: int = 0) -> lsp.Range:
    start = position_of(text, needle, nth=nth)
    return lsp.Range(
        start=start, end=lsp.Position(line=start.line, character=start.character + len(needle))
    )


def _expected(root: Path) -> list[lsp.DiagnosticRelatedInformation]:
    billing = root / "skills/billing/skill.md"
    login = root / "skills/login/skill.md"
    return [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(
                uri=uri(billing),
                range=_range(billing.read_text(encoding="utf-8"), "tier"),
            ),
            message="read here (condition)",
        ),
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(
                uri=uri(login), range=_range(login.read_text(encoding="utf-8"), "tier")
            ),
            message="read here (`@memory` token)",
        ),
    ]


async def test_a_client_declaring_related_information_gets_it(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE.replace("Tier: ", "Tier 🙂: "))  # UTF-16 columns
    memory = fx.root / "memory.yml"
    caps = vscode_capabilities()
    assert caps.text_document.publish_diagnostics.related_information  # type: ignore[union-attr]
    async with lsp_session(fx.root, capabilities=caps) as s:
        never = await s.until(
            lambda: next((d for d in s.diagnostics(memory) if d.code == NEVER), None),
            what="never_written",
        )
        assert list(never.related_information or ()) == _expected(fx.root)
        assert "skills/login/skill.md:4" in never.message


async def test_a_client_without_related_information_gets_none(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    memory = fx.root / "memory.yml"
    caps = vscode_capabilities()
    caps.text_document.publish_diagnostics.related_information = False  # type: ignore[union-attr]
    async with lsp_session(fx.root, capabilities=caps) as s:
        never = await s.until(
            lambda: next((d for d in s.diagnostics(memory) if d.code == NEVER), None),
            what="never_written",
        )
        assert never.related_information is None
        assert "condition at skills/billing/skill.md:6" in never.message


async def test_pulled_diagnostics_carry_related_information(tmp_path: Path) -> None:
    fx = write_fixture(tmp_path, FIXTURE)
    memory = fx.root / "memory.yml"
    async with lsp_session(fx.root, capabilities=vscode_capabilities(pull=True)) as s:
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=s.doc(memory))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        never = next(d for d in report.items if d.code == NEVER)
        assert list(never.related_information or ()) == _expected(fx.root)


CROSS = (
    """\
//- skills/card/memory.yml
schema:
  public:
    reason:
      type: text
//- skills/card/skill.md
---
description: Card.
---
Help with the card.
//- skills/billing/skill.md
---
description: Billing.
---
Bill the user.

if: session.card.reason == "lost"
  Say sorry.
//- skills/card/tools.py
"""
    + TOOLS_HEADER
    + """

@tool(description="Look up.")
async def look_up(context: ToolContext = None):
    return None
"""
)


async def test_a_writer_added_in_another_skill_clears_the_constant_condition(
    tmp_path: Path,
) -> None:
    fx = write_fixture(tmp_path, CROSS)
    billing = fx.root / "skills/billing/skill.md"
    tools = fx.root / "skills/card/tools.py"
    code = "lsp.condition.constant_never_written"
    async with lsp_session(fx.root) as s:
        await s.until(lambda: code in s.codes(billing), what="the hint")
        text = tools.read_text(encoding="utf-8")
        s.open(tools)
        at = position_of(text, "    return None")
        s.change(tools, (at.line, 0), (at.line, 0), '    context.memory.set("reason", "lost")\n')
        await s.until(lambda: code not in s.codes(billing), what="the hint gone")
        s.change(tools, (at.line, 0), (at.line + 1, 0), "")
        await s.until(lambda: code in s.codes(billing), what="the hint back")


async def test_an_initial_value_given_in_another_skill_clears_the_constant_condition(
    tmp_path: Path,
) -> None:
    fx = write_fixture(tmp_path, CROSS)
    billing = fx.root / "skills/billing/skill.md"
    memory = fx.root / "skills/card/memory.yml"
    code = "lsp.condition.constant_never_written"
    async with lsp_session(fx.root) as s:
        await s.until(lambda: code in s.codes(billing), what="the hint")
        s.open(memory)
        s.change(memory, (4, 0), (4, 0), "      initial_value: none\n")
        await s.until(lambda: code not in s.codes(billing), what="the hint gone")
