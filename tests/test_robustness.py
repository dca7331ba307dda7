"""Hostile text, property-based: every parser and the whole project pipeline must take any
text without raising, and every range they produce must lie inside the text.

Two kinds of input: arbitrary text, and *structured mutations* of the files of
``examples/telecom`` (random insertions, deletions and duplications of characters and
lines; tabs, CRLF, astral-plane and other unusual characters), which keep most of the
structure a parser cares about and so reach far deeper than random text.

``make test`` runs a moderate number of examples; ``make fuzz`` sets ``MANTLE_FUZZ=1``
and runs thousands (``MANTLE_FUZZ_EXAMPLES=N`` sets the count). Some no-crash properties
live next to their parser (tests/test_skill_md.py and friends, over fragments of valid
syntax); this file adds arbitrary text, mutated real files, the object-graph range
check, the parsers they lack (hooks over real text, ``parse_yaml`` with every scalar's
value map) and everything above the parsers.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mantle_lsp.ide import (
    call_hierarchy,
    code_actions,
    completion,
    hover,
    inlay_hints,
    navigation,
    outline,
    rename,
    semantic_tokens,
    structure,
)
from mantle_lsp.ide.diagnostics import Diagnostic, project_diagnostics
from mantle_lsp.ide.types import FeatureError, WorkspaceEdit
from mantle_lsp.model.project import Project
from mantle_lsp.model.workspace import Workspace
from mantle_lsp.syntax.conditions import ParsedCondition, parse_condition
from mantle_lsp.syntax.config_yml import parse_agent_yml, parse_integrations_yml
from mantle_lsp.syntax.errors import SyntaxIssue
from mantle_lsp.syntax.hooks_py import parse_hooks_module
from mantle_lsp.syntax.memory_yml import parse_memory_yml
from mantle_lsp.syntax.responses_yml import parse_responses_yml
from mantle_lsp.syntax.skill_md import parse_skill_md
from mantle_lsp.syntax.text import TextRange, normalize_newlines
from mantle_lsp.syntax.tools_py import parse_tools_module
from mantle_lsp.syntax.yaml_tree import ValueMap, YMap, YNode, YScalar, YSeq, parse_yaml
from mantle_lsp.syntax.yaml_tree import scalar_value_map as value_map

REPO = Path(__file__).resolve().parent.parent
TELECOM = REPO / "examples" / "telecom"
BROKEN = REPO / "examples" / "telecom-broken"

# -- how many examples ------------------------------------------------------------------

FUZZ = os.environ.get("MANTLE_FUZZ", "") not in ("", "0")
_FUZZ_EXAMPLES = int(os.environ.get("MANTLE_FUZZ_EXAMPLES", "0") or 0)


def fuzz_settings(examples: int, fuzz_examples: int = 3000) -> settings:
    """``examples`` under ``make test``; ``fuzz_examples`` (or ``MANTLE_FUZZ_EXAMPLES``)
    under ``make fuzz``, without a deadline either way."""
    n = (_FUZZ_EXAMPLES or fuzz_examples) if FUZZ else examples
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


# -- inputs -----------------------------------------------------------------------------

# characters and fragments that stress text handling and every syntax we parse
ODD_CHARS = [
    "\t", "\r\n", "\r", "\n", "\0", "\ufeff", "😀", "𝄞", "é", "e\u0301", "\u200b",
    "\u202e", "\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\ud800", "\udfff", "ﬁ", "Ａ",
    "\U0010ffff", "\x7f", "\\",
]  # fmt: skip
SYNTAX_SNIPPETS = [
    "---\n", ":::", ":::ordered_block id=x\n", "\n", "  ", "    ", "- ", ": ", "{", "}",
    "[", "]", "'", '"', "&a ", "*a", "<<: *a\n", "# ", "@", "@memory.", "session.",
    "session.a.b", "{{", "}}", "{x}", "|\n", ">-\n", "if: ", "not ", " and ", " == ",
    "def ", "(", ")", "@tool\n", "import ", "!!binary ", "!!python/object ", "? ",
    "%YAML 1.1\n", "...\n", "`",
]  # fmt: skip
SNIPPETS = ODD_CHARS + SYNTAX_SNIPPETS

ANY_TEXT = st.text(max_size=400)
TEXT_OF_SNIPPETS = st.lists(
    st.one_of(st.sampled_from(SNIPPETS), st.text(max_size=4)), max_size=60
).map("".join)
TEXTS = st.one_of(ANY_TEXT, TEXT_OF_SNIPPETS)


def _example_files() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for root in (TELECOM, BROKEN):
        for p in sorted(root.rglob("*")):
            if p.suffix in (".md", ".yml", ".py") and p.name not in ("MISTAKES.md",):
                key = p.name if p.suffix != ".py" else "tools.py"
                if p.suffix == ".yml" and p.parent != root and p.name == "memory.yml":
                    key = "skill memory.yml"
                out.setdefault(key, []).append(p.read_text(encoding="utf-8"))
    return out


EXAMPLES = _example_files()
HOOKS_MODULE = '''\
"""Hooks."""
from rasa.mantle.hooks import (
    HookRejection, IncomingMessagePayload, ToolCallPayload, modify_incoming_message,
    on_tool_call, RetryModel, modify_tool_call,
)


@modify_incoming_message()
async def reject_rude(payload: IncomingMessagePayload) -> IncomingMessagePayload:
    if "rude" in payload.text:
        raise HookRejection("be nice")
    return payload


@on_tool_call()
def audit(payload: ToolCallPayload) -> None:
    print(payload)


@modify_tool_call()
def retry(payload: ToolCallPayload) -> ToolCallPayload:
    raise RetryModel("again")


audit._hook_point = "tool_call"
'''


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """``text`` after 1-8 random edits: characters or snippets inserted, spans deleted or
    duplicated, lines duplicated, deleted or swapped, every line end made CRLF,
    indentation turned into tabs."""
    for _ in range(draw(st.integers(1, 8))):
        op = draw(
            st.sampled_from(
                [
                    "insert",
                    "insert",
                    "delete",
                    "dup",
                    "dup_line",
                    "del_line",
                    "swap",
                    "crlf",
                    "tabs",
                ]
            )
        )
        n = len(text)
        at = draw(st.integers(0, n))
        if op == "insert":
            what = draw(st.one_of(st.sampled_from(SNIPPETS), st.text(min_size=1, max_size=3)))
            text = text[:at] + what + text[at:]
        elif op in ("delete", "dup"):
            end = min(n, at + draw(st.integers(0, 40)))
            text = text[:at] + (text[at:end] * 2 if op == "dup" else "") + text[end:]
        elif op in ("dup_line", "del_line", "swap"):
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            if op == "dup_line":
                lines.insert(a, lines[b])
            elif op == "del_line":
                del lines[a]
            else:
                lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif op == "crlf":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        else:
            text = text.replace("  ", "\t", draw(st.integers(1, 6)))
    return text


def example_text(kind: str) -> st.SearchStrategy[str]:
    texts = [HOOKS_MODULE] if kind == "hooks.py" else EXAMPLES[kind]
    return st.sampled_from(texts).flatmap(mutated)


# -- the object-graph range check ---------------------------------------------------------


def ranges_in(obj: Any, where: str = "result") -> Iterator[tuple[str, TextRange]]:
    """Every :class:`TextRange` reachable from ``obj`` (dataclasses, tuples, lists, dicts;
    a YAML graph with aliases or cycles is visited once), with where it was found.
    ``ParsedCondition`` ranges are relative to the condition (checked separately); a
    ``ValueMap`` contributes one range per mapped character."""
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [(where, obj)]
    while stack:
        where, o = stack.pop()
        if isinstance(o, TextRange):
            yield where, o
            continue
        if o is None or isinstance(o, (str, bytes, int, float, bool, Path)):
            continue
        if id(o) in seen or isinstance(o, ParsedCondition):
            continue
        seen.add(id(o))
        if isinstance(o, ValueMap):
            for s, e in zip(o.starts, o.ends, strict=True):
                yield f"{where}.map", TextRange(s, e)
            yield f"{where}.content", o.content
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            for f in dataclasses.fields(o):
                stack.append((f"{where}.{f.name}", getattr(o, f.name)))
        elif isinstance(o, dict):
            for k, v in o.items():
                stack.append((f"{where}[key]", k))
                stack.append((f"{where}[{k!r:.30}]", v))
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(o))


def assert_ranges_inside(result: Any, text: str, base: int = 0) -> int:
    """Every range in ``result`` lies inside ``text`` (shifted by ``base``); every issue is
    a well-formed :class:`SyntaxIssue`. Returns the number of ranges checked."""
    n = 0
    for where, rng in ranges_in(result):
        assert base <= rng.start <= rng.end <= base + len(text), (where, rng, len(text))
        n += 1
    for where, issue in _issues_in(result):
        assert isinstance(issue.range, TextRange), where
        assert issue.code and issue.message, (where, issue)
        assert issue.severity in ("error", "warning", "information", "hint"), (where, issue)
    return n


def _issues_in(obj: Any) -> Iterator[tuple[str, SyntaxIssue]]:
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [("result", obj)]
    while stack:
        where, o = stack.pop()
        if isinstance(o, SyntaxIssue):
            yield where, o
            continue
        if o is None or isinstance(o, (str, bytes, int, float, bool, TextRange)) or id(o) in seen:
            continue
        seen.add(id(o))
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            stack.extend((f"{where}.{f.name}", getattr(o, f.name)) for f in dataclasses.fields(o))
        elif isinstance(o, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(o))


def test_the_range_check_finds_every_range_and_can_fail() -> None:
    text = EXAMPLES["skill.md"][0]
    doc = parse_skill_md(text, "s")
    assert assert_ranges_inside(doc, text) > 100  # it does walk the whole document
    with pytest.raises(AssertionError):
        assert_ranges_inside(doc, text[: len(text) // 2])
    bad = SyntaxIssue("", "m", TextRange(0, 0))
    with pytest.raises(AssertionError):
        assert_ranges_inside([bad], "x")


def test_mutations_change_the_text() -> None:
    seen: set[str] = set()

    @settings(max_examples=30, deadline=None, database=None)
    @given(example_text("memory.yml"))
    def collect(text: str) -> None:
        seen.add(text)

    collect()
    assert len(seen) > 10 and not seen <= set(EXAMPLES["memory.yml"])


# -- every parser: arbitrary text and mutated real files ---------------------------------


def _memory(text: str) -> None:
    for kind in ("skill", "project"):
        assert_ranges_inside(parse_memory_yml(text, kind), text)


def _skill_md(text: str) -> None:
    doc = parse_skill_md(text, "s")
    assert_ranges_inside(doc, text)
    for site in doc.conditions:  # a condition's own ranges map back inside the file
        r = site.file_range(0, len(site.text))
        assert 0 <= r.start <= r.end <= len(text)


def _tools(text: str) -> None:
    assert_ranges_inside(parse_tools_module(text), text)


def _hooks(text: str) -> None:
    assert_ranges_inside(parse_hooks_module(text), text)


def _yaml(text: str) -> None:
    for base in (0, 7):
        root, issues = parse_yaml(text, base)
        assert_ranges_inside((root, issues), text, base)
    root, _ = parse_yaml(text)
    for node in _yaml_nodes(root):
        if isinstance(node, YScalar):
            vm = value_map(text, node)
            assert len(vm.starts) == len(vm.ends) == len(node.raw)
            for s, e in zip(vm.starts, vm.ends, strict=True):
                assert node.range.start <= s <= e <= node.range.end, (node, s, e)


def _yaml_nodes(root: YNode | None) -> Iterator[YNode]:
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if isinstance(n, YSeq):
            stack.extend(n.items)
        elif isinstance(n, YMap):
            for k, v in n.items:
                stack.extend((k, v))


def _condition(text: str) -> None:
    result = parse_condition(text)
    assert_ranges_inside(result.errors, text)
    for ref in result.refs:
        for rng in (ref.range, ref.namespace_range, ref.entry_range):
            assert 0 <= rng.start <= rng.end <= len(text), (ref, text)
    if result.tree is not None:
        assert_ranges_inside(result.tree, text)
    assert result.ok == (not result.errors)


PARSERS = {
    "skill.md": _skill_md,
    "memory.yml": _memory,
    "skill memory.yml": _memory,
    "responses.yml": lambda t: assert_ranges_inside(parse_responses_yml(t), t),
    "agent.yml": lambda t: assert_ranges_inside(parse_agent_yml(t), t),
    "integrations.yml": lambda t: assert_ranges_inside(parse_integrations_yml(t), t),
    "tools.py": _tools,
    "hooks.py": _hooks,
}


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_every_parser_takes_arbitrary_text(kind: str) -> None:
    check = PARSERS[kind]

    @fuzz_settings(60)
    @given(TEXTS)
    def run(text: str) -> None:
        check(text)
        check(normalize_newlines(text))

    run()


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_every_parser_takes_mutated_example_files(kind: str) -> None:
    check = PARSERS[kind]

    @fuzz_settings(60)
    @given(example_text(kind))
    def run(text: str) -> None:
        check(text)
        check(normalize_newlines(text))

    run()


@fuzz_settings(100)
@given(st.one_of(TEXTS, *(example_text(k) for k in ("memory.yml", "responses.yml", "agent.yml"))))
def test_parse_yaml_and_every_scalar_value_map(text: str) -> None:
    _yaml(text)


def _conditions_of_examples() -> list[str]:
    out: list[str] = []
    for text in EXAMPLES["skill.md"]:
        out.extend(site.text for site in parse_skill_md(text, "s").conditions)
    for text in EXAMPLES["responses.yml"]:
        out.extend(site.text for site in parse_responses_yml(text).conditions)
    return sorted(set(out))


CONDITIONS = _conditions_of_examples()


def test_the_examples_hold_conditions() -> None:
    assert len(CONDITIONS) >= 5


@fuzz_settings(150)
@given(st.one_of(TEXTS, st.sampled_from(CONDITIONS).flatmap(mutated)))
def test_parse_condition_takes_any_text(text: str) -> None:
    _condition(text)


# -- the whole pipeline on mutated example projects --------------------------------------


@pytest.fixture(scope="module")
def example_copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("examples")
    out = {}
    for src in (TELECOM, BROKEN):
        dst = base / src.name
        shutil.copytree(src, dst)
        out[src.name] = dst.resolve()
    return out


def _text_of(project: Project, path: Path) -> str:
    pf = project.files.get(path)
    return pf.text if pf is not None else ""


def _inside(project: Project, path: Path, rng: TextRange, what: str) -> None:
    n = len(_text_of(project, path))
    assert 0 <= rng.start <= rng.end <= n, (what, path.name, rng, n)


def _check_edit(project: Project, edit: WorkspaceEdit | FeatureError | None, what: str) -> None:
    if not isinstance(edit, WorkspaceEdit):
        return
    for path, edits in edit.edits.items():
        assert path in project.files, (what, path)
        end = -1
        for e in edits:
            _inside(project, path, e.range, what)
            assert e.range.start >= end, (what, "overlapping edits", path)
            end = e.range.end
    for old, new in edit.renames:
        assert project.root in old.parents and project.root in new.parents, (what, old, new)
    for path in edit.new_files:
        assert project.root in path.parents and path not in project.files, (what, path)


def run_every_feature(
    project: Project, path: Path, offsets: list[int]
) -> dict[Path, list[Diagnostic]]:
    """Diagnostics and every ``ide`` feature on ``path`` at ``offsets``; everything they
    return must lie inside the files it points into."""
    diags = project_diagnostics(project)
    for p, ds in diags.items():
        for d in ds:
            _inside(project, p, d.range, f"diagnostic {d.code}")
    n = len(_text_of(project, path))
    for o in offsets:
        for item in completion.complete(project, path, o).items:
            if item.edit is not None:
                _inside(project, path, item.edit.range, "completion")
            assert isinstance(item.documentation, str)  # built lazily: build it here too
        h = hover.hover(project, path, o)
        if h is not None:
            _inside(project, path, h.range, "hover")
        for loc in navigation.definition(project, path, o):
            _inside(project, loc.path, loc.range, "definition")
        for loc in navigation.references(project, path, o, True):
            _inside(project, loc.path, loc.range, "references")
        for hl in navigation.highlights(project, path, o):
            _inside(project, path, hl.range, "highlight")
        prepared = rename.prepare_rename(project, path, o)
        if isinstance(prepared, TextRange):
            _inside(project, path, prepared, "prepare_rename")
        for new in ("renamed_x", "utter_renamed", "x y", "", "../evil"):
            _check_edit(project, rename.rename(project, path, o, new), "rename")
        lo, hi = sorted((o, offsets[0]))
        rng = TextRange(max(lo, 0), min(max(hi, 0), n))
        for action in code_actions.code_actions(project, path, rng, diags.get(path, [])):
            _check_edit(project, action.edit, f"code action {action.title}")
    for where, rng in ranges_in(outline.document_symbols(project, path), "document symbols"):
        _inside(project, path, rng, where)  # children included
    for ws in outline.workspace_symbols([project], "a"):
        _inside(project, ws.location.path, ws.location.range, "workspace symbol")
    for tok in semantic_tokens.semantic_tokens(project, path):
        _inside(project, path, tok.range, "semantic token")
    semantic_tokens.semantic_tokens(project, path, TextRange(0, n // 2))
    for fold in structure.folding_ranges(project, path):
        assert 0 <= fold.start <= fold.end <= n, ("fold", fold)
    for chain in structure.selection_ranges(project, path, offsets):
        for rng in chain:
            _inside(project, path, rng, "selection range")
    for link in structure.document_links(project, path):
        _inside(project, path, link.range, "document link")
    for lens in structure.code_lenses(project, path):
        _inside(project, path, lens.range, "code lens")
    for ih in inlay_hints.inlay_hints(project, path):
        assert 0 <= ih.offset <= n, ("inlay hint", ih)
    for o in offsets:
        for it in call_hierarchy.prepare(project, path, o):
            _inside(project, it.path, it.range, "call hierarchy item")
            _inside(project, it.path, it.selection, "call hierarchy selection")
            for c in call_hierarchy.incoming(project, it.key):  # ranges in the caller's file
                for r in c.ranges:
                    _inside(project, c.item.path, r, "incoming call")
            for c in call_hierarchy.outgoing(project, it.key):
                for r in c.ranges:
                    _inside(project, it.path, r, "outgoing call")
    return diags


@st.composite
def project_mutation(draw: st.DrawFn, root: Path) -> tuple[dict[Path, str], list[int]]:
    """1-3 files of the project at ``root`` replaced by mutated copies, and offsets."""
    files = sorted(p for p in root.rglob("*") if p.suffix in (".md", ".yml", ".py"))
    files = [p for p in files if p.name not in ("MISTAKES.md",)]
    chosen = draw(st.lists(st.sampled_from(files), min_size=1, max_size=3, unique=True))
    texts = {p: draw(mutated(p.read_text(encoding="utf-8"))) for p in chosen}
    longest = max(len(t) for t in texts.values())
    offsets = draw(st.lists(st.integers(-3, longest + 3), min_size=1, max_size=4))
    return texts, offsets


@fuzz_settings(30, 1000)
@given(st.data())
def test_the_pipeline_on_mutated_projects(
    example_copies: dict[str, Path], data: st.DataObject
) -> None:
    root = example_copies[data.draw(st.sampled_from(sorted(example_copies)))]
    texts, offsets = data.draw(project_mutation(root))
    ws = Workspace()
    ws.add_folder(root)
    for p, text in texts.items():
        ws.open_buffer(p, text, 1)
    project = ws.projects[root]
    for p in texts:
        run_every_feature(project, p, offsets)


# -- incremental = from scratch (in process) ---------------------------------------------


def _facts(ws: Workspace, root: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    project = ws.projects[root]
    diags = sorted(
        (str(p), d.range, d.code, d.severity, d.message)
        for p, ds in project_diagnostics(project).items()
        for d in ds
    )
    idx = project.index
    index = sorted(
        [("def", s.key, str(s.path), s.range) for syms in idx.symbols.values() for s in syms]
        + [("ref", r.key, str(r.path), r.range, r.form, r.soft) for r in idx.references],
        key=repr,
    )
    return diags, index


@fuzz_settings(25, 800)
@given(st.data())
def test_incremental_edits_equal_a_fresh_build(
    example_copies: dict[str, Path], data: st.DataObject
) -> None:
    root = example_copies["telecom"]
    files = sorted(p for p in root.rglob("*") if p.suffix in (".md", ".yml", ".py"))
    ws = Workspace()
    ws.add_folder(root)
    _ = ws.projects[root].index  # built once, then updated edit by edit
    buffers: dict[Path, str] = {}
    for version in range(data.draw(st.integers(1, 6))):
        p = data.draw(st.sampled_from(files))
        if p in buffers and data.draw(st.integers(0, 4)) == 0:
            del buffers[p]
            ws.close_buffer(p)
            continue
        text = data.draw(mutated(buffers.get(p) or p.read_text(encoding="utf-8")))
        buffers[p] = text
        ws.open_buffer(p, text, version)
        project_diagnostics(ws.projects[root])  # read between edits, as an editor does
    fresh = Workspace()
    for p, text in buffers.items():
        fresh.open_buffer(p, text, 1)
    fresh.add_folder(root)
    got, want = _facts(ws, root), _facts(fresh, root)
    assert got[0] == want[0], "diagnostics differ from a fresh build"
    assert got[1] == want[1], "the index differs from a fresh build"
