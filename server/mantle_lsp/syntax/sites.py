"""Places in a file that hold a condition expression, with their value-to-source map."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .cached import cached_property
from .text import TextRange
from .yaml_tree import ValueMap, YScalar, scalar_value_map

if TYPE_CHECKING:
    from .conditions import ParsedCondition

SiteKind = Literal[
    "prose_if",
    "tool_requires",
    "block_tool_requires",
    "next_if",
    "step_complete_when",
    "block_complete_when",
    "skill_complete_when",
    "utter_when",
    "response_condition",
    "satisfied_when",
]

SITE_LABELS: dict[str, str] = {
    "prose_if": "prose `if:` condition",
    "tool_requires": "`tool_constraints` `requires` condition",
    "block_tool_requires": "ordered-block `tools` `requires` condition",
    "next_if": "`next:` branch `if:` condition",
    "step_complete_when": "step `complete_when` condition",
    "block_complete_when": "block `complete_when` condition",
    "skill_complete_when": "`complete_when.condition`",
    "utter_when": "`utter` trigger `when:` condition",
    "response_condition": "response variant `condition`",
    "satisfied_when": "precondition `satisfied_when`",
}


@dataclass(frozen=True)
class ConditionSite:
    kind: SiteKind
    text: str  # the condition as the engine sees it (stripped)
    map: ValueMap  # index in ``text`` -> file offsets
    anchor: TextRange  # where to report a problem with the condition as a whole
    context: str = ""  # e.g. the tool or step the condition belongs to

    def file_range(self, start: int, end: int) -> TextRange:
        return self.map.range(start, end)

    @cached_property
    def parsed(self) -> ParsedCondition:
        """The parsed condition, computed once per site (a site lives as long as the
        parse of its file, so an edit elsewhere never re-parses it)."""
        from .conditions import parse_condition

        return parse_condition(self.text)


def site_from_scalar(
    kind: SiteKind, source: str, node: YScalar, context: str = ""
) -> ConditionSite:
    """A condition held by a YAML string scalar, stripped like the engine strips it."""
    vm = scalar_value_map(source, node)
    raw = node.raw
    lead = len(raw) - len(raw.lstrip())
    text = raw.strip()
    return ConditionSite(kind, text, vm.sub(lead, lead + len(text)), node.range, context)


def site_from_text(kind: SiteKind, text: str, start: int, context: str = "") -> ConditionSite:
    """A condition copied verbatim from the file at offset ``start`` (already stripped)."""
    vm = ValueMap.contiguous(start, len(text))
    return ConditionSite(kind, text, vm, TextRange(start, start + len(text)), context)
