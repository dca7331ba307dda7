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

Each rule declares the codes it emits and the files it reports on and reads
(:mod:`.base`); :mod:`mantle_lsp.ide.diagnostics` runs them.
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
    profile,
    prose,
    references,
    responses,
    structure,
    tools,
)
from .base import RULES, Checker, Diagnostic, Rule

__all__ = [
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
    "profile",
    "prose",
    "references",
    "responses",
    "structure",
    "tools",
]
