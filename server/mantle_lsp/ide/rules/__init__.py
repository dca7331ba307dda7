"""Diagnostics as rules, one module per thing they check.

| module | checks |
| --- | --- |
| ``structure`` | project files, a skill's identity, entry blocks, overrides of bundled skills |
| ``conditions`` | every condition: syntax, readable keys, comparisons that are never true |
| ``prose`` | ``@`` tokens and ``session.`` references in instruction text, bare skill mentions |
| ``references`` | names of skills, tools and responses used anywhere |
| ``flow`` | ``next`` targets, ``else`` fallbacks, unreachable steps |
| ``dataflow`` | fields read but never written, project fields written by two skills |
| ``memory`` | keys steps write and parameters read, descriptions, field names, unused fields |
| ``responses`` | placeholders, ``set:`` buttons, button sources |
| ``tools`` | tool modules (memory keys, bypasses, imports) and tool names |
| ``config`` | agent.yml model groups, ``agent.id``, language, precondition bindings |
| ``hooks`` | hook modules |
| ``profile`` | the rasa-pro 3.22 rules (``mutable``, ``writable_by``) |
| ``eval`` | eval files: rejected keys, file names, the conftest, every name a scenario holds |
| ``parsed`` | no rules: the fixes of the codes the parsers emit |

Each rule declares the codes it emits and the files it reports on and reads
(:mod:`.base`); :mod:`mantle_lsp.ide.diagnostics` runs them. Each module exports the
fixes of the codes it emits (``FIXES``, built on :mod:`.fix`), gathered in :data:`FIXES`
for :mod:`mantle_lsp.ide.code_actions`.
"""

from __future__ import annotations

from . import (  # rules run in the order their modules are imported (and declared)
    conditions,
    config,
    dataflow,
    eval,
    flow,
    hooks,
    memory,
    parsed,
    profile,
    prose,
    references,
    responses,
    structure,
    tools,
)
from .base import RULES, Checker, Diagnostic, Rule
from .fix import Fixer


def _gather() -> dict[str, tuple[Fixer, ...]]:
    """Every module's ``FIXES``, one entry per code (a code two modules emit, the engine's
    one code for two checks, gets both modules' fixes, each once), in module order."""
    out: dict[str, tuple[Fixer, ...]] = {}
    for module in (conditions, eval, flow, memory, parsed, prose, references, responses, tools):
        for code, fixers in module.FIXES.items():
            have = out.get(code, ())
            out[code] = have + tuple(f for f in fixers if f not in have)
    return out


# the fixes of each code (see rules/fix.py)
FIXES = _gather()

__all__ = [
    "FIXES",
    "RULES",
    "Checker",
    "Diagnostic",
    "Rule",
    "conditions",
    "config",
    "dataflow",
    "eval",
    "flow",
    "hooks",
    "memory",
    "parsed",
    "profile",
    "prose",
    "references",
    "responses",
    "structure",
    "tools",
]
