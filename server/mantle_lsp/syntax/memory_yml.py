"""Parser for ``memory.yml``: the project's flat map and a skill's ``schema: public/private``.

Per-file rules (shape, attribute types, unknown attributes, unknown type names, fields in
both sections, project-only attributes on skill fields and vice versa) are reported here;
rules that need other files (collect-owned fields, descriptions of settable fields) live
in the diagnostics layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .cached import cached_property
from .errors import C_LEGACY, SyntaxIssue, closest
from .text import TextRange
from .yaml_tree import (
    YMap,
    YNode,
    YScalar,
    YSeq,
    anchor_empty_ranges,
    describe,
    lax_bool,
    parse_yaml,
    to_python,
)

Scope = Literal["public", "private", "project"]

C_SKILL_LOAD = "mantle.validation.skill.failed_to_load"
C_PROJECT_LLM = "mantle.validation.memory.project_llm_settable"
C_SKILL_SEED = "mantle.validation.memory.skill_seed"
C_SHAPE = "lsp.memory.invalid_shape"
C_NO_SCHEMA = "lsp.memory.missing_schema"
C_UNKNOWN_TOP = "lsp.memory.unknown_top_level_key"
C_UNKNOWN_ATTR = "lsp.memory.unknown_attribute"
C_UNKNOWN_TYPE = "lsp.memory.unknown_type"
C_BOTH = "lsp.memory.public_and_private"
C_PROJECT_SKILL_SHAPE = "lsp.memory.project_file_in_skill_shape"
C_FIELD_NOT_MAP = "lsp.memory.field_not_mapping"
C_ENGINE_322 = "lsp.memory.engine_3_22_attribute"

CANONICAL_TYPES = ("text", "int", "float", "bool", "list", "json", "categorical", "any")
ATTRIBUTES = (
    "type",
    "description",
    "llm_settable",
    "enum_values",
    "initial_value",
    "pii",
    "anonymization",
    "privacy_rules",
    "seed",
)
ATTRIBUTES_322 = ("mutable", "writable_by")
_TYPE_HINTS = {
    "str": "text",
    "string": "text",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "dict": "json",
    "object": "json",
    "array": "list",
    "enum": "categorical",
}


# the attributes that give a field a value without a writer (:attr:`MemoryField.given_by`)
GIVING_ATTRIBUTES = ("llm_settable", "seed", "initial_value")


class FieldFacts(NamedTuple):
    """What checks of other skills read of a declared memory field (:attr:`MemoryField.facts`;
    a worker of a spread check gets them for other workers' skills without their files)."""

    scope: str  # public / private
    type: str
    enum_values: tuple[str, ...]  # as strings
    # unquoted enum items YAML 1.1 reads as booleans: the text as written -> that boolean
    enum_booleans: dict[str, bool]
    # what gives it a value without a writer in the files (:attr:`MemoryField.given_by`)
    given_by: tuple[str, ...] = ()

    @property
    def given(self) -> bool:
        return bool(self.given_by)


@dataclass(eq=False)
class MemoryField:
    name: str
    scope: Scope
    key: YScalar  # the entry-name key (definition site)
    node: YNode | None  # the attribute mapping (None for `name:` with nothing after it)
    attrs: dict[str, YNode] = field(default_factory=dict)
    attr_keys: dict[str, YScalar] = field(default_factory=dict)

    def value(self, attr: str) -> Any:
        n = self.attrs.get(attr)
        return to_python(n) if n is not None else None

    # type, llm_settable, seed and given are read for every condition and every field of
    # a check: computed once (a parsed field does not change; an edit parses a new one)
    @cached_property
    def type(self) -> str:
        t = self.value("type")
        return t if isinstance(t, str) else "any"

    @property
    def description(self) -> str | None:
        d = self.value("description")
        return d if isinstance(d, str) and d.strip() else None

    @cached_property
    def llm_settable(self) -> bool:
        return _truthy(self.value("llm_settable"))

    @cached_property
    def seed(self) -> bool:
        return _truthy(self.value("seed"))

    @property
    def pii(self) -> bool:
        return _truthy(self.value("pii"))

    @property
    def enum_values(self) -> list[Any]:
        v = self.value("enum_values")
        return v if isinstance(v, list) else []

    @property
    def enum_booleans(self) -> dict[str, bool]:
        """Unquoted enum items that YAML 1.1 reads as booleans (``off``, ``yes``, …): the
        text as written → the boolean the engine sees instead."""
        n = self.attrs.get("enum_values")
        if not isinstance(n, YSeq):
            return {}
        return {
            i.raw: i.value
            for i in n.items
            if isinstance(i, YScalar) and i.style is None and isinstance(i.value, bool)
        }

    @property
    def initial_value(self) -> Any:
        return self.value("initial_value")

    @cached_property
    def given_by(self) -> tuple[str, ...]:
        """The attributes that let it hold a value without any writer in the files:
        ``llm_settable`` (the model sets it), ``seed`` (the session start),
        ``initial_value`` (what it holds before any write)."""
        given = (self.llm_settable, self.seed, self.initial_value is not None)
        return tuple(a for a, g in zip(GIVING_ATTRIBUTES, given, strict=True) if g)

    @property
    def given(self) -> bool:
        return bool(self.given_by)

    @property
    def range(self) -> TextRange:
        return self.key.range

    @cached_property
    def facts(self) -> FieldFacts:
        """The field as other skills' checks read it (computed once: a parsed field does not
        change; an edit parses a new one)."""
        enums = tuple(str(v) for v in self.enum_values)
        return FieldFacts(self.scope, self.type, enums, self.enum_booleans, self.given_by)


def _truthy(v: Any) -> bool:
    """True when the engine's lax boolean reading of ``v`` is true."""
    return lax_bool(v) is True


@dataclass(eq=False)
class MemoryDoc:
    kind: Literal["skill", "project"]
    root: YNode | None = None
    fields: list[MemoryField] = field(default_factory=list)
    issues: list[SyntaxIssue] = field(default_factory=list)
    loads: bool = True  # False when the engine would fail to load this (skill) file
    # field(): the effective declaration by name, and how many fields it was made from
    _effective: tuple[dict[str, MemoryField], int] = field(
        default=({}, 0), init=False, repr=False, compare=False
    )

    def field(self, name: str) -> MemoryField | None:
        """The effective declaration: for a skill, private wins over public; within one
        section a later duplicate wins (the YAML mapping keeps the last value)."""
        effective, counted = self._effective
        if counted != len(self.fields):  # first use (or fields added since)
            effective = {}
            for f in self.fields:
                found = effective.get(f.name)
                if found is None or f.scope == "private" or found.scope == f.scope:
                    effective[f.name] = f
            self._effective = (effective, len(self.fields))
        return effective.get(name)

    def declarations(self, name: str) -> list[MemoryField]:
        return [f for f in self.fields if f.name == name]


def parse_memory_yml(text: str, kind: Literal["skill", "project"]) -> MemoryDoc:
    """Parse normalized ``memory.yml`` text. Never raises."""
    doc = MemoryDoc(kind)
    root, issues = parse_yaml(text)
    doc.root = root
    for i in issues:
        if i.severity == "error":
            doc.loads = False
            if kind == "skill":
                i = SyntaxIssue(C_SKILL_LOAD, f"memory.yml {i.message}", i.range)
        doc.issues.append(i)
    if root is None:
        return doc
    if kind == "project":
        _parse_project(doc, root)
    else:
        _parse_skill(doc, root)
    doc.issues = anchor_empty_ranges(doc.issues, root)
    return doc


def _err(
    doc: MemoryDoc,
    code: str,
    msg: str,
    rng: TextRange,
    sev: str = "error",
    data: dict[str, Any] | None = None,
) -> None:
    doc.issues.append(SyntaxIssue(code, msg, rng, sev, data))  # type: ignore[arg-type]


def _parse_project(doc: MemoryDoc, root: YNode) -> None:
    if isinstance(root, YScalar) and root.is_null:
        return
    if not isinstance(root, YMap):
        _err(
            doc,
            C_SHAPE,
            f"the project memory.yml must be a mapping of `<entry>: {{type: …}}` (found "
            f"{describe(root)}); the engine crashes on this file",
            root.range,
        )
        doc.loads = False
        return
    schema = root.get("schema")
    skill_shaped = isinstance(schema, YMap) and (schema.has("public") or schema.has("private"))
    if skill_shaped:
        key = root.key_node("schema")
        _err(
            doc,
            C_PROJECT_SKILL_SHAPE,
            "the project memory.yml is a flat map of fields; `schema: public/private` is the "
            "shape of a skill's memory.yml. Here it declares one field named `schema` and "
            "none of the fields nested under it",
            key.range if key else root.range,
            "warning",
        )
    for k, v in root.pairs():
        if not isinstance(k.value, str):
            _err(doc, C_SHAPE, "a field name must be a string", k.range)
            continue
        f = MemoryField(k.value, "project", k, v)
        doc.fields.append(f)
        if skill_shaped and k.value == "schema":
            continue  # declared like the engine does; the nested keys were reported above
        if isinstance(v, YScalar) and v.is_null:
            continue
        if not isinstance(v, YMap):
            hint = _mapping_hint(k, v)
            _err(
                doc,
                C_FIELD_NOT_MAP,
                f"field `{k.raw}` must be a mapping of attributes (found {describe(v)}); the "
                f"engine silently declares it with type `any`{hint}",
                v.range,
                "warning",
                {"replace_with": f"{{type: {v.raw}}}"} if isinstance(v, YScalar) and hint else None,
            )
            continue
        _parse_attrs(doc, f, v)


def _mapping_hint(key: YScalar, value: YNode | None) -> str:
    """`authenticated: bool` was probably meant as `authenticated: {type: bool}`."""
    if isinstance(value, YScalar) and isinstance(value.value, str):
        return f"; did you mean `{key.raw}: {{type: {value.raw}}}`?"
    return ""


def _parse_skill(doc: MemoryDoc, root: YNode) -> None:
    if isinstance(root, YScalar) and root.is_null:
        return
    if not isinstance(root, YMap):
        _err(
            doc,
            C_SKILL_LOAD,
            f"a skill memory.yml must be a mapping with `schema:` (found "
            f"{describe(root)}); the skill fails to load",
            root.range,
        )
        doc.loads = False
        return
    schema_key = root.key_node("schema")
    for k, v in root.pairs():
        if k.value == "schema":
            continue
        if schema_key is None and isinstance(v, YMap) and v.has("type"):
            continue  # a field written without `schema:`; reported once below
        if k.value == "access":
            _err(
                doc,
                C_LEGACY,
                "`access:` (deny_read / deny_write) is not supported and has no effect; "
                "visibility is `public` vs `private` under `schema:`",
                k.range,
                "warning",
            )
        elif k.value == "memory":
            _err(
                doc,
                C_LEGACY,
                "`memory:` is the obsolete top-level key: write `schema:` with `public:` and/or "
                "`private:` sections, otherwise this file declares nothing",
                k.range,
                "warning",
            )
        else:
            _err(
                doc,
                C_UNKNOWN_TOP,
                f"`{k.raw}` is ignored: a skill memory.yml has only `schema:` (with `public:` "
                "and `private:`)",
                k.range,
                "warning",
            )
    if schema_key is None:
        if any(isinstance(v, YMap) and v.has("type") for _, v in root.pairs()):
            _err(
                doc,
                C_NO_SCHEMA,
                "this skill memory.yml has no `schema:` section, so it declares nothing: nest "
                "the fields under `schema:` → `public:` or `private:`",
                root.items[0][0].range if root.items else root.range,
                "warning",
            )
        return
    schema = root.get("schema")
    if isinstance(schema, YScalar) and schema.is_null:
        return
    if not isinstance(schema, YMap):
        _err(
            doc,
            C_SKILL_LOAD,
            "`schema:` must be a mapping with `public:` and/or `private:`",
            schema.range if schema else schema_key.range,
        )
        doc.loads = False
        return
    for sk, sv in schema.pairs():
        if sk.value not in ("public", "private"):
            _err(
                doc,
                C_UNKNOWN_TOP,
                f"`{sk.raw}` is ignored: `schema:` has only `public:` and `private:`",
                sk.range,
                "warning",
            )
            continue
        scope: Scope = "public" if sk.value == "public" else "private"
        if not isinstance(sv, YMap):
            what = "is empty" if isinstance(sv, YScalar) and sv.is_null else (f"is {describe(sv)}")
            _err(
                doc,
                C_SKILL_LOAD,
                f"`{sk.raw}:` {what}: it must be a mapping of fields (remove "
                "it if there are none); the skill fails to load",
                sv.range if not (isinstance(sv, YScalar) and sv.is_null) else sk.range,
            )
            doc.loads = False
            continue
        for k, v in sv.pairs():
            if not isinstance(k.value, str):
                _err(doc, C_SKILL_LOAD, "a field name must be a string", k.range)
                continue
            f = MemoryField(k.value, scope, k, v)
            doc.fields.append(f)
            if not isinstance(v, YMap):
                hint = _mapping_hint(k, v)
                _err(
                    doc,
                    C_SKILL_LOAD,
                    f"field `{k.raw}` must be a mapping of attributes "
                    f"(found {describe(v)}); the skill fails to load{hint}",
                    v.range if v is not None else k.range,
                )
                doc.loads = False
                continue
            _parse_attrs(doc, f, v)
    pub = {f.name: f for f in doc.fields if f.scope == "public"}
    for f in doc.fields:
        if f.scope == "private" and f.name in pub:
            _err(
                doc,
                C_BOTH,
                f"`{f.name}` is declared in both `public` and `private`: inside this skill the "
                "private declaration wins, other skills still see the public one",
                f.key.range,
                "warning",
            )


def _parse_attrs(doc: MemoryDoc, f: MemoryField, node: YMap) -> None:
    load_code = C_SKILL_LOAD if doc.kind == "skill" else C_SHAPE
    for k, v in node.pairs():
        name = k.value
        if not isinstance(name, str):
            continue
        f.attrs[name] = v
        f.attr_keys[name] = k
        if name in ATTRIBUTES_322:
            where = (
                "a rasa-pro 3.22 attribute of project fields"
                if doc.kind == "project"
                else "a rasa-pro 3.22 attribute, and there an error on skill fields (project "
                "fields only)"
            )
            _err(doc, C_ENGINE_322, f"`{name}` is {where}; 3.21 ignores it", k.range, "warning")
            continue
        if name not in ATTRIBUTES:
            hint = {
                "enum": "; write `enum_values:`",
                "correctable": " (3.20-era attribute)",
                "required": "; mark the field as collected by a `collect:` step instead",
                "default": "; use `initial_value:`",
            }.get(name)
            close = None if hint else _closest(name, ATTRIBUTES + ATTRIBUTES_322)
            if close:
                hint = f"; did you mean `{close}`?"
            if not hint:
                hint = f" (allowed: {', '.join(ATTRIBUTES)})"
            _err(
                doc,
                C_UNKNOWN_ATTR if name != "enum" else C_LEGACY,
                f"unknown attribute `{name}` is ignored by the engine{hint}",
                k.range,
                "warning",
                {"wrong": name, "meant": close} if close else None,
            )
            continue
        _check_attr(doc, f, name, k, v, load_code)
    # anonymization requires pii
    anon = f.attrs.get("anonymization")
    if anon is not None and not (isinstance(anon, YScalar) and anon.is_null) and not f.pii:
        msg = "`anonymization` is only valid with `pii: true`"
        msg += "; the skill fails to load" if doc.kind == "skill" else "; the engine crashes"
        _err(doc, load_code, msg, f.attr_keys["anonymization"].range)
        doc.loads = False
    if doc.kind == "project" and f.llm_settable:
        _err(
            doc,
            C_PROJECT_LLM,
            f"project field `{f.name}` cannot be `llm_settable`: project memory is written "
            "only by tools, `set_memory` steps, buttons and session-start seeds",
            f.attr_keys["llm_settable"].range,
        )
    if doc.kind == "skill" and f.seed:
        _err(
            doc,
            C_SKILL_SEED,
            f"`seed: true` is for project fields only (session-start metadata); skill field "
            f"`{f.name}` cannot be seeded",
            f.attr_keys["seed"].range,
        )


def _check_attr(
    doc: MemoryDoc, f: MemoryField, name: str, k: YScalar, v: YNode, load_code: str
) -> None:
    def bad(msg: str, rng: TextRange | None = None) -> None:
        _err(doc, load_code, f"`{name}` of `{f.name}` {msg}", rng or v.range)
        if doc.kind == "skill":
            doc.loads = False

    if name == "type":
        if not (isinstance(v, YScalar) and isinstance(v.value, str)):
            if isinstance(v, YScalar) and v.is_null:
                return
            bad(f"must be a type name (found {describe(v)})")
            return
        if v.value not in CANONICAL_TYPES:
            best = _TYPE_HINTS.get(v.value.lower()) or _closest(v.value, CANONICAL_TYPES)
            _err(
                doc,
                C_UNKNOWN_TYPE,
                f"unknown type `{v.value}` (the engine accepts any string but only knows "
                f"{', '.join(CANONICAL_TYPES)})" + (f"; did you mean `{best}`?" if best else ""),
                v.range,
                "warning",
                {"wrong": v.value, "meant": best} if best else None,
            )
    elif name in ("llm_settable", "pii", "seed"):
        if isinstance(v, YScalar) and (v.is_null or lax_bool(v.value) is not None):
            return
        bad(f"must be true or false (found {describe(v)})")
    elif name == "enum_values":
        if isinstance(v, YSeq) or (isinstance(v, YScalar) and v.is_null):
            return
        bad(f"must be a list, e.g. `[a, b]` (found {describe(v)})")
    elif name == "description":
        if isinstance(v, YScalar) and (isinstance(v.value, str) or v.is_null):
            return
        bad(f"must be a string (found {describe(v)})")
    elif name == "privacy_rules":
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YSeq):
            bad("must be a list of strings")
            return
        for item in v.items:
            if not (isinstance(item, YScalar) and isinstance(item.value, str)):
                bad(f"must be a list of strings (found {describe(item)})", item.range)
    elif name == "anonymization":
        if isinstance(v, YScalar) and v.is_null:
            return
        if not isinstance(v, YMap):
            bad("must be a mapping `{type: redact|mask, …}`")
            return
        t = v.get("type")
        if not (isinstance(t, YScalar) and t.value in ("redact", "mask")):
            bad("needs `type: redact` or `type: mask`", t.range if t else v.range)
        for ak, av in v.pairs():
            if ak.value == "redaction_char":
                if not (isinstance(av, YScalar) and isinstance(av.value, str)) or (
                    len(av.value) != 1
                ):
                    bad("`redaction_char` must be exactly one character", av.range)
            elif ak.value in ("keep_left", "keep_right"):
                n = av.value if isinstance(av, YScalar) else None
                if n is not None and not (isinstance(n, int) and not isinstance(n, bool) and n > 0):
                    bad(f"`{ak.raw}` must be a whole number greater than 0", av.range)
            elif ak.value != "type":
                bad(
                    f"has no key `{ak.raw}` (allowed: type, redaction_char, keep_left, keep_right)",
                    ak.range,
                )


def _closest(word: str, choices: tuple[str, ...]) -> str | None:
    return closest(word.lower(), choices, cutoff=0.7)


def attribute_type_problems(f: MemoryField, attr: str, node: YNode) -> list[tuple[TextRange, str]]:
    """rasa-pro 3.22: where the ``mutable`` attribute ``node`` of field ``f`` is not a
    boolean (pydantic's lax reading, no null) or its ``writable_by`` not a list of strings
    (the engine then fails to load the skill, or crashes on the project file)."""
    if attr == "mutable":
        if isinstance(node, YScalar) and lax_bool(node.value) is not None:
            return []
        return [
            (node.range, f"`mutable` of `{f.name}` must be true or false (found {describe(node)})")
        ]
    if not isinstance(node, YSeq):
        return [
            (
                node.range,
                f"`writable_by` of `{f.name}` must be a list of skill ids, e.g. `[card]` "
                f"(found {describe(node)})",
            )
        ]
    return [
        (
            item.range,
            f"`writable_by` of `{f.name}` lists skill ids, which are strings (found "
            f"{describe(item)})",
        )
        for item in node.items
        if not (isinstance(item, YScalar) and isinstance(item.value, str))
    ]
