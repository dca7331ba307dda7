"""Parser for ``responses.yml`` (project root or a skill folder).

Reports the per-file rules of docs/language/responses.md (#shape, #default-variant, #set-buttons:
the payload grammar) with
ranges; readability, writability and value coercion need other files and live in the
diagnostics layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .errors import SyntaxIssue
from .sites import ConditionSite, site_from_scalar
from .text import TextRange, first_line
from .yaml_tree import (
    YMap,
    YNode,
    YScalar,
    YSeq,
    anchor_empty_ranges,
    describe,
    parse_yaml,
    scalar_value_map,
)

C_SHAPE = "mantle.validation.response.invalid_variant_shape"
C_KEY = "mantle.validation.response.invalid_variant_key"
C_BUTTON = "responses.registry.invalid_variant"
C_EMPTY = "mantle.validation.response.empty_body"
C_COND = "mantle.validation.response.invalid_condition"
C_DEFAULT = "mantle.validation.response.default_required"
C_MULTI = "mantle.validation.response.multiple_defaults"
C_PAYLOAD = "mantle.validation.response.invalid_button_payload"
C_FILE = "lsp.responses.invalid_file"
C_MEMORY_TOKEN = "lsp.responses.memory_token_not_substituted"
C_UNQUALIFIED = "lsp.responses.unqualified_placeholder"

VARIANT_KEYS = ("text", "condition", "metadata", "buttons")
_QUALIFIED_RE = re.compile(r"\{session\.([^}]*)\}")
_BARE_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# `(?<!\w)@memory…`, with the test after the literal: see skill_md.MEMORY_TOKEN_RE
_MEMORY_TOKEN_RE = re.compile(r"@memory(?<!\w@memory)\.[\w-]+(?:\.[\w-]+)*")


@dataclass(eq=False, slots=True)
class Placeholder:
    kind: Literal["qualified", "bare", "unqualified"]
    text: str  # what is between the braces
    range: TextRange  # the whole `{…}`
    namespace: str | None = None
    entry: str = ""
    namespace_range: TextRange | None = None
    entry_range: TextRange | None = None


@dataclass(eq=False, slots=True)
class SetPayload:
    namespace: str
    entry: str
    value: str
    namespace_range: TextRange
    entry_range: TextRange
    value_range: TextRange
    range: TextRange


@dataclass(eq=False, slots=True)
class Button:
    node: YMap
    index: int
    title: YScalar | None = None
    payload: YScalar | None = None
    set_payload: SetPayload | None = None


@dataclass(eq=False, slots=True)
class Variant:
    node: YNode
    index: int
    text: str | None = None
    text_node: YScalar | None = None
    condition: YNode | None = None
    buttons: list[Button] = field(default_factory=list)
    source: YScalar | None = None


@dataclass(eq=False, slots=True)
class Response:
    name: str
    key: YScalar
    node: YNode
    variants: list[Variant] = field(default_factory=list)

    def blank_variants(self) -> list[Variant]:
        return [v for v in self.variants if v.text is not None and not v.text.strip()]


@dataclass(eq=False)
class ResponsesDoc:
    root: YNode | None = None
    responses: list[Response] = field(default_factory=list)
    placeholders: list[Placeholder] = field(default_factory=list)
    conditions: list[ConditionSite] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)

    def get(self, name: str) -> Response | None:
        found: Response | None = None
        for r in self.responses:
            if r.name == name:
                found = r
        return found

    def takes_tool_buttons(self) -> bool:
        """Whether a variant takes its buttons from a tool (``source:``): those buttons
        are made at run time."""
        return any(v.source is not None for r in self.responses for v in r.variants)


def parse_responses_yml(text: str) -> ResponsesDoc:
    """Parse normalized ``responses.yml`` text. Never raises."""
    doc = ResponsesDoc()
    root, issues = parse_yaml(text)
    doc.root = root
    doc.issues.extend(issues)
    if root is None:
        return doc
    p = _P(doc, text)
    if not isinstance(root, YMap):
        p.err(
            C_FILE,
            f"responses.yml must be a mapping with a `responses:` key (found "
            f"{describe(root)}); the engine crashes on this file",
            root.range,
        )
        return doc
    for k, _ in root.pairs():
        if k.value != "responses":
            p.err(C_FILE, f"`{k.raw}` is ignored: only `responses:` is read", k.range, "warning")
    resp = root.get("responses")
    if resp is None:
        return doc
    if not isinstance(resp, YMap):
        if not (isinstance(resp, YScalar) and resp.is_null):
            p.err(
                C_FILE,
                f"`responses:` must be a mapping of response names (found "
                f"{describe(resp)}); the engine reads nothing from this file",
                resp.range,
                "warning",
            )
        return doc
    for k, v in resp.pairs():
        p.response(k, v)
    doc.issues = anchor_empty_ranges(doc.issues, root)
    return doc


class _P:
    def __init__(self, doc: ResponsesDoc, text: str) -> None:
        self.doc = doc
        self.text = text

    def err(self, code: str, msg: str, rng: TextRange, sev: str = "error") -> None:
        self.doc.issues.append(SyntaxIssue(code, msg, rng, sev))  # type: ignore[arg-type]

    def response(self, k: YScalar, v: YNode) -> None:
        name = str(k.value) if k.value is not None else k.raw
        r = Response(name, k, v)
        self.doc.responses.append(r)
        if not isinstance(v, YSeq) or not v.items:
            self.err(
                C_SHAPE,
                f"response '{name}' must be a non-empty list of variants (`- text: …`)",
                v.range if not (isinstance(v, YScalar) and v.is_null) else k.range,
            )
            return
        for idx, item in enumerate(v.items):
            self.variant(r, item, idx)
        conditioned = [x for x in r.variants if x.condition is not None]
        if conditioned:
            defaults = [x for x in r.variants if x.condition is None]
            if not defaults:
                self.err(
                    C_DEFAULT,
                    f"response '{name}' has conditioned variants but no default: "
                    "add one variant without `condition:`",
                    k.range,
                )
            elif len(defaults) > 1:
                nums = ", ".join(str(d.index + 1) for d in defaults)
                for d in defaults[1:]:
                    self.err(
                        C_MULTI,
                        f"response '{name}' has more than one variant without "
                        f"`condition:` (variants {nums}); keep exactly one default",
                        first_line(self.text, d.node.range),
                    )

    def variant(self, r: Response, item: YNode, idx: int) -> None:
        var = Variant(item, idx)
        if isinstance(item, YScalar):
            if item.is_null:
                var.text = ""
                rng = item.range
                if rng.start == rng.end:  # `- ` with nothing after it: underline the dash
                    dash = self.text.rfind("-", 0, rng.start)
                    rng = TextRange(dash, dash + 1) if dash >= 0 else rng
                self.err(C_EMPTY, f"variant {idx + 1} of '{r.name}' has no text", rng)
                r.variants.append(var)
                return
            var.text = item.raw if isinstance(item.value, str) else str(item.value)
            var.text_node = item
            r.variants.append(var)
            self.text_value(item, r, var)
            return
        if not isinstance(item, YMap):
            self.err(
                C_SHAPE,
                f"variant {idx + 1} of '{r.name}' must be a mapping or a string "
                f"(found {describe(item)})",
                item.range,
            )
            return
        r.variants.append(var)
        for k, _ in item.pairs():
            if k.value not in VARIANT_KEYS:
                self.err(
                    C_KEY,
                    f"`{k.raw}` is not a variant key (allowed: {', '.join(VARIANT_KEYS)})",
                    k.range,
                )
        text = item.get("text")
        if text is None or (isinstance(text, YScalar) and text.is_null):
            var.text = ""
            self.err(
                C_EMPTY,
                f"variant {idx + 1} of '{r.name}' has no `text`",
                first_line(self.text, item.range),
            )
        elif isinstance(text, YScalar):
            var.text = text.raw if isinstance(text.value, str) else str(text.value)
            var.text_node = text
            self.text_value(text, r, var)
        else:
            self.err(C_SHAPE, f"`text` must be a string (found {describe(text)})", text.range)
        cond = item.get("condition")
        if cond is not None:
            var.condition = cond
            if isinstance(cond, YScalar) and isinstance(cond.value, str):
                if not cond.value.strip():
                    self.err(
                        C_COND,
                        "`condition` is empty: write a condition, or remove the key "
                        "to make this the default variant",
                        cond.range,
                    )
                else:
                    self.doc.conditions.append(
                        site_from_scalar("response_condition", self.text, cond, r.name)
                    )
            else:
                self.err(
                    C_SHAPE, f"`condition` must be a string (found {describe(cond)})", cond.range
                )
        buttons = item.get("buttons")
        if buttons is not None:
            self.buttons(r, var, buttons)

    def text_value(self, node: YScalar, r: Response, var: Variant) -> None:
        if not node.raw.strip():
            self.err(C_EMPTY, f"variant {var.index + 1} of '{r.name}' has blank text", node.range)
        self.scan_placeholders(node)

    def scan_placeholders(self, node: YScalar) -> None:
        raw = node.raw
        if "{" not in raw and "@memory" not in raw:
            return
        vm = scalar_value_map(self.text, node)
        found: list[Placeholder] = []
        for m in _QUALIFIED_RE.finditer(raw):
            inner = m.group(1)
            rng = vm.range(m.start(), m.end())
            if "." not in inner:
                found.append(Placeholder("unqualified", "session." + inner, rng))
                self.err(
                    C_UNQUALIFIED,
                    f"`{{session.{inner}}}` needs a namespace: write "
                    f"`{{session.<skill_id|project>.{inner}}}` (or `{{{inner}}}`); at runtime it "
                    "stays in the text as written",
                    rng,
                    "warning",
                )
                continue
            ns, _, entry = inner.partition(".")
            ns_s = m.start(1)
            found.append(
                Placeholder(
                    "qualified",
                    "session." + inner,
                    rng,
                    ns,
                    entry,
                    vm.range(ns_s, ns_s + len(ns)),
                    vm.range(ns_s + len(ns) + 1, m.end(1)),
                )
            )
        for m in _BARE_RE.finditer(raw):
            found.append(
                Placeholder(
                    "bare",
                    m.group(1),
                    vm.range(m.start(), m.end()),
                    None,
                    m.group(1),
                    None,
                    vm.range(m.start(1), m.end(1)),
                )
            )
        self.doc.placeholders.extend(sorted(found, key=lambda p: p.range))
        for m in _MEMORY_TOKEN_RE.finditer(raw):
            self.err(
                C_MEMORY_TOKEN,
                f"`{m.group(0)}` is not substituted in responses (it is sent literally); write "
                "`{session.<ns>.<entry>}`",
                vm.range(m.start(), m.end()),
                "warning",
            )

    def buttons(self, r: Response, var: Variant, node: YNode) -> None:
        if isinstance(node, YMap):
            for k, _ in node.pairs():
                if k.value != "source":
                    self.err(
                        C_KEY, f"`{k.raw}` is not a button-source key (only `source`)", k.range
                    )
            src = node.get("source")
            if isinstance(src, YScalar) and isinstance(src.value, str) and src.value.strip():
                var.source = src
            else:
                self.err(
                    C_SHAPE,
                    "`buttons.source` must name a tool that sets the buttons",
                    src.range if src else node.range,
                )
            return
        if not isinstance(node, YSeq):
            self.err(
                C_SHAPE,
                f"`buttons` must be a list of buttons or `{{source: <tool>}}` "
                f"(found {describe(node)})",
                node.range,
            )
            return
        for bidx, b in enumerate(node.items):
            if not isinstance(b, YMap):
                self.err(
                    C_SHAPE,
                    f"button {bidx + 1} must be a mapping `{{title: …, payload: …}}`",
                    b.range,
                )
                continue
            btn = Button(b, bidx)
            var.buttons.append(btn)
            for k, _ in b.pairs():
                if k.value not in ("title", "payload"):
                    self.err(
                        C_KEY, f"`{k.raw}` is not a button key (allowed: title, payload)", k.range
                    )
            title = b.get("title")
            if isinstance(title, YScalar) and isinstance(title.value, str) and title.value.strip():
                btn.title = title
                self.scan_placeholders(title)
            else:
                hint = ""
                if isinstance(title, YScalar) and title.value is not None:
                    hint = f' (found {describe(title)}: quote it, e.g. "{title.raw}")'
                self.err(
                    C_BUTTON,
                    f"button {bidx + 1} needs a non-empty string `title`{hint}",
                    title.range if title else b.range,
                )
            if b.has("payload"):
                payload = b.get("payload")
                if (
                    isinstance(payload, YScalar)
                    and isinstance(payload.value, str)
                    and payload.value.strip()
                ):
                    btn.payload = payload
                    self.scan_placeholders(payload)
                    if payload.raw.startswith("set:"):
                        btn.set_payload = self.set_payload(payload)
                else:
                    self.err(
                        C_BUTTON,
                        "`payload` must be a non-empty string when present",
                        payload.range if payload else b.range,
                    )

    def set_payload(self, node: YScalar) -> SetPayload | None:
        raw = node.raw
        vm = scalar_value_map(self.text, node)
        body = raw[4:]
        eq = body.find("=")
        syntax = "write `set:session.<skill_id|project>.<entry>=<value>`"
        whole = vm.range(0, len(raw))  # the payload text, without quotes
        if eq < 0:
            self.err(C_PAYLOAD, f"`set:` payload has no `=<value>`: {syntax}", whole)
            return None
        ref_raw = body[:eq]
        value = body[eq + 1 :]
        ref = ref_raw.strip()
        ref_start = 4 + (len(ref_raw) - len(ref_raw.lstrip()))
        if not value:
            self.err(C_PAYLOAD, f"`set:` payload has an empty value: {syntax}", whole)
            return None
        if not ref.startswith("session."):
            self.err(
                C_PAYLOAD,
                f"the `set:` target must start with `session.`: {syntax}",
                vm.range(ref_start, ref_start + len(ref)),
            )
            return None
        rest = ref[len("session.") :]
        parts = rest.split(".")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            self.err(
                C_PAYLOAD,
                f"the `set:` target must be exactly session.<ns>.<entry>: {syntax}",
                vm.range(ref_start, ref_start + len(ref)),
            )
            return None
        ns_s = ref_start + len("session.")
        en_s = ns_s + len(parts[0]) + 1
        v_s = 4 + eq + 1
        return SetPayload(
            parts[0],
            parts[1],
            value,
            vm.range(ns_s, ns_s + len(parts[0])),
            vm.range(en_s, en_s + len(parts[1])),
            vm.range(v_s, v_s + len(value)),
            vm.range(ref_start, ref_start + len(ref)),
        )
