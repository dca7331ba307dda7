"""Test support: a whole workspace in one string, with marked ranges.

Marks (one dialect for every test): ``«text»`` marks a range and ``«label:text»`` a
labelled one; ``text`` stays in the file, the guillemets and the label go. A label is
letters, digits and ``_ . | @``, and its text follows the colon directly (``«a: b»`` is
the text ``a: b``; ``«a|b:text»`` is one range under two labels, e.g. two diagnostics). A text
that would read as a label takes the label ``_``: ``«_:set:x»`` marks ``set:x``. Marks
may nest and touch; ranges are code-point offsets into the text without marks, in the
order their ``«`` appears. ``marked(text)`` does this for one text (parser tests).

A workspace fixture is split into files by ``//- <relative path>`` header lines; inside a
file ``$0`` marks a cursor. A header ending in ``/`` (``//- skills/empty/``) makes an empty
folder, and ``//- <relative path> -> <target>`` a symbolic link (``//- skills/up -> ..``);
neither has a body. For diagnostics the label is the end of the expected code (for
example ``unknown_memory_key`` or ``prose.unknown_memory_key``).

Unless the fixture defines them, a minimal valid ``agent.yml`` and ``integrations.yml``
are added so that the project is detected and complete, and a minimal skill when the
fixture has no ``skills/`` path at all.

Hover and completion tests compare the whole user-visible output (``render_hover``,
``render_completions``) with inline snapshots (the ``inline-snapshot`` package). Plain
``pytest`` (and ``make test``) only compares: a mismatch fails. After a deliberate change,
re-record the values in the test source and review the diff::

    .venv/bin/pytest --inline-snapshot=fix tests/test_hover.py      # rewrite what differs
    .venv/bin/pytest --inline-snapshot=create tests/test_completion.py  # fill empty snapshot()
    .venv/bin/pytest --inline-snapshot=review tests/test_completion.py  # one by one
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from mantle_lsp.ide.completion import CompletionResult
from mantle_lsp.ide.diagnostics import project_diagnostics
from mantle_lsp.ide.hover import Hover
from mantle_lsp.model.project import Project
from mantle_lsp.syntax.errors import SyntaxIssue
from mantle_lsp.syntax.text import TextRange

DEFAULT_AGENT = """\
agent:
  id: test-agent
  persona: A careful test assistant.
orchestrator:
  model_group: main
"""
DEFAULT_INTEGRATIONS = """\
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4o
        api_key: ${OPENAI_API_KEY}
"""

DEFAULT_SKILL = """\
---
description: An example skill.
---
Help the customer.
"""

OPEN, CLOSE = "«", "»"
_LABEL = re.compile(r"([\w.|@]+):(?!\s)")


def strip_marks(raw: str) -> tuple[str, list[tuple[str, int, int]]]:
    """Remove the marks from ``raw``: the text, and ``(label, start, end)`` per mark ("" for
    no label) in the order the marks open."""
    out: list[str] = []
    opened: list[tuple[int, str, int]] = []  # (order, label, start)
    ranges: dict[int, tuple[str, int, int]] = {}
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == OPEN:
            m = _LABEL.match(raw, i + 1)
            label = m.group(1) if m else ""
            opened.append((len(opened) + len(ranges), label, len(out)))
            i = m.end() if m else i + 1
            continue
        if ch == CLOSE:
            assert opened, f"unbalanced {CLOSE} in fixture"
            order, label, start = opened.pop()
            ranges[order] = (label, start, len(out))
        else:
            out.append(ch)
        i += 1
    assert not opened, f"unbalanced {OPEN} in fixture"
    return "".join(out), [ranges[k] for k in sorted(ranges)]


def marked(fixture: str, dedent: bool = True) -> tuple[str, list[TextRange]]:
    """One text with marks (parser tests): the text without them and each mark's range
    (labels are dropped). ``dedent`` first removes the common indentation."""
    text, marks = strip_marks(textwrap.dedent(fixture) if dedent else fixture)
    return text, [TextRange(start, end) for _, start, end in marks]


def issue_list(issues: Iterable[SyntaxIssue]) -> list[tuple[str, str, TextRange]]:
    """``(code, severity, range)`` of each issue, sorted by position then code. A parser
    test compares the whole list with the expected one: a passing test fired its codes."""
    got = sorted(((i.code, i.severity, i.range) for i in issues), key=lambda t: (t[2], t[0], t[1]))
    Coverage.fired |= {code for code, _, _ in got}
    return got


def only(issues: Iterable[SyntaxIssue], code: str) -> list[SyntaxIssue]:
    """The issues with exactly this code, in report order (compared, with their ranges, by
    the test: a passing test with some fired the code)."""
    got = [i for i in issues if i.code == code]
    if got:
        Coverage.fired.add(code)
    return got


@dataclass
class Mark:
    path: str
    label: str
    start: int
    end: int


@dataclass
class Fixture:
    root: Path
    files: dict[str, str]  # relative path -> text without markers
    marks: list[Mark]
    cursor: tuple[str, int] | None


def parse_fixture(fixture: str) -> tuple[dict[str, str], list[Mark], tuple[str, int] | None]:
    files: dict[str, str] = {}
    marks: list[Mark] = []
    cursor: tuple[str, int] | None = None
    current: str | None = None
    lines: list[str] = []

    def flush() -> None:
        nonlocal cursor
        if current is None:
            return
        raw = "\n".join(lines).strip("\n") + "\n"
        text, found = strip_marks(raw)
        for labels, start, end in found:
            for label in labels.split("|"):
                marks.append(Mark(current, label, start, end))
        if "$0" in text:
            cursor = (current, text.index("$0"))
            # marks after the cursor shift left by two characters; a mark that contains
            # the cursor only loses two characters at its end
            for mk in marks:
                if mk.path != current:
                    continue
                if mk.start > cursor[1]:
                    mk.start -= 2
                if mk.end > cursor[1]:
                    mk.end -= 2
            text = text.replace("$0", "", 1)
        files[current] = text

    for line in fixture.splitlines():
        if line.startswith("//- "):
            flush()
            current = line[4:].strip()
            lines = []
        else:
            lines.append(line)
    flush()
    return files, marks, cursor


def write_fixture(tmp_path: Path, fixture: str, defaults: bool = True) -> Fixture:
    files, marks, cursor = parse_fixture(fixture)
    if defaults:
        files.setdefault("agent.yml", DEFAULT_AGENT)
        files.setdefault("integrations.yml", DEFAULT_INTEGRATIONS)
        if not any(rel.startswith("skills/") for rel in files):
            files["skills/example/skill.md"] = DEFAULT_SKILL
    materialize(tmp_path, files)
    _dump_fixture(files)
    return Fixture(tmp_path, files, marks, cursor)


def materialize(base: Path, files: dict[str, str]) -> None:
    """Write a parsed fixture's files below ``base``: its empty folders (``rel/``) and
    symbolic links (``rel -> target``) too, the links last."""
    links = []
    for rel, text in files.items():
        if " -> " in rel:
            links.append(rel.split(" -> ", 1))
            continue
        p = base / rel
        if rel.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    for rel, target in links:
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(target, target_is_directory=True)


def _dump_fixture(files: dict[str, str]) -> None:
    """With MANTLE_LSP_DUMP_FIXTURES=<dir>, also write the project to <dir>/<test id>[-n].

    ``make oracle`` uses the dumped projects to compare our checker with the engine.
    """
    dump = os.environ.get("MANTLE_LSP_DUMP_FIXTURES")
    if not dump:
        return
    if all(rel.startswith("memory-layers/") for rel in files):
        return  # a Cadenya memory-layers folder alone: no Mantle project to compare
    test_id = os.environ.get("PYTEST_CURRENT_TEST", "fixture").rsplit(" (", 1)[0]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_id.replace("::", "__")).strip("._")[:150]
    base = Path(dump)
    base.mkdir(parents=True, exist_ok=True)
    target, n = base / name, 1
    while True:
        try:
            target.mkdir()
            break
        except FileExistsError:
            n += 1
            target = base / f"{name}-{n}"
    materialize(target, files)


FirstLookDiff = tuple[Path, set[tuple[TextRange, str, str]], set[tuple[TextRange, str, str]]]


def first_look_differences(root: Path) -> tuple[int, list[FirstLookDiff]]:
    """The server's first look at each skill.md of the project at ``root`` (a project loaded
    around its skill, ``Project.load_around`` + ``first_look``) against the whole project's
    diagnostics of that file: less the rules that read every file (``Rule.whole_project``),
    and, when the first look says it is complete (``first_look_complete``: what an editor
    is shown before the index), all of them. How many files were compared, and (file,
    extra, missing) for each that differs. Used by the tests and by ``make oracle`` on its
    whole corpus."""
    from mantle_lsp.ide.diagnostics import first_look, first_look_complete
    from mantle_lsp.ide.rules.base import RULES
    from mantle_lsp.model import layout

    whole = {c for r in RULES if r.whole_project for c in r.codes}
    full = project_diagnostics(Project.load(root))
    files = list(layout.project_files(root))
    looked, out = 0, []
    for path, kind, sid in files:
        if kind != layout.FileKind.SKILL_MD or sid is None:
            continue
        looked += 1
        part = Project.load_around(root, files, sid)
        early = first_look(part, [path]).get(path, [])
        complete = first_look_complete(part, path, sid)
        want = {
            (d.range, d.code, d.message)
            for d in full.get(path, [])
            if complete or d.code not in whole
        }
        got = {(d.range, d.code, d.message) for d in early}
        if want != got:
            out.append((path, got - want, want - got))
    return looked, out


def diagnostics_of(root: Path) -> list[tuple[str, int, int, str, str, str]]:
    proj = Project.load(root)
    out = []
    for path, ds in project_diagnostics(proj).items():
        rel = path.relative_to(root).as_posix()
        for d in ds:
            out.append((rel, d.range.start, d.range.end, d.code, d.severity, d.message))
    return sorted(out)


class Coverage:
    """What the diagnostic helpers showed in the running test, for ``tests/test_codes.py``.

    ``fired``: codes a check asserted on a marked range. ``silent``: codes a check asserted
    are not reported (anywhere but on marked ranges) on a fixture written to exercise them:
    named with ``check_clean(..., silent=[...])``, ``check_diagnostics(..., silent=[...])``
    or, for every check in a test, ``@pytest.mark.silent("code", ...)``. Names are codes or
    their unique ends (``unknown_memory_key``). ``tests/conftest.py`` keeps what a passing
    test showed (``KEPT``) and drops the rest.
    """

    fired: ClassVar[set[str]] = set()
    silent: ClassVar[set[str]] = set()
    marked_silent: ClassVar[tuple[str, ...]] = ()  # the running test's @pytest.mark.silent
    whole_suite: ClassVar[bool] = False  # the session runs every tests/test_*.py, unfiltered
    KEPT: ClassVar[dict[str, dict[str, set[str]]]] = {"fired": {}, "silent": {}}  # -> test ids


def registered(name: str) -> str:
    """The registered code ``name`` is or ends (``.name``); exactly one."""
    from mantle_lsp.ide.codes import REGISTRY

    found = [c for c in REGISTRY if c == name or c.endswith("." + name)]
    assert len(found) == 1, f"{name!r} names {found or 'no registered code'}"
    return found[0]


def shown(*, fired: Iterable[str] = (), silent: Iterable[str] = ()) -> None:
    """For checks these helpers do not run (a settings file, suppressions): the test's own
    exact assertions, made before this call, showed these codes fire / stay silent."""
    Coverage.fired |= {registered(n) for n in fired}
    Coverage.silent |= {registered(n) for n in silent}


def assert_silent(
    names: Iterable[str],
    got: Iterable[tuple[str, int, int, str, str, str]],
    marked: set[tuple[str, int, int, str]],
) -> None:
    """None of the ``names`` (and the test's ``@pytest.mark.silent`` codes) is in ``got``
    but on an expected (``marked``) range; ``Coverage`` keeps them as silent."""
    codes = {registered(n) for n in (*names, *Coverage.marked_silent)}
    loud = [g for g in got if g[3] in codes and g[:4] not in marked]
    assert not loud, "expected silent:\n  " + "\n  ".join(
        f"{g[0]}:{g[1]}-{g[2]} {g[3]}: {g[5]}" for g in loud
    )
    Coverage.silent |= codes


def check_diagnostics(
    tmp_path: Path,
    fixture: str,
    severities: dict[str, str] | None = None,
    silent: Iterable[str] = (),
    *,
    defaults: bool = True,
    prepare: Callable[[Path], object] | None = None,
    unmarked: Iterable[tuple[str, int, int, str]] = (),
) -> list[tuple[str, int, int, str, str, str]]:
    """Assert that the diagnostics are exactly the marked ranges with matching codes.

    ``severities`` optionally maps a label to the expected severity; ``silent`` names codes
    the fixture exercises without mistakes (reported nowhere else, hints included; see
    ``Coverage``). ``defaults=False`` writes only the fixture's files; ``prepare(root)``
    then changes the project on disk (a removed file, bytes that are not UTF-8 …), and
    ``unmarked`` lists expected diagnostics no mark can show, as ``(path, start, end,
    label)`` (on a missing file, say). Returns the diagnostics for message assertions.
    """
    fx = write_fixture(tmp_path, fixture, defaults)
    assert all(mk.label for mk in fx.marks), "a diagnostic mark needs its code: «code:text»"
    fx.marks += [Mark(path, label, start, end) for path, start, end, label in unmarked]
    if prepare is not None:
        prepare(fx.root)
    got = diagnostics_of(fx.root)
    got_keys = [(p, s, e, c) for p, s, e, c, _, _ in got]
    unmatched = list(got_keys)
    missing = []
    hits = []
    for mk in fx.marks:
        hit = next(
            (
                g
                for g in unmatched
                if g[0] == mk.path and g[1] == mk.start and g[2] == mk.end and
                (g[3] == mk.label or g[3].endswith("." + mk.label))
            ),
            None,
        )  # fmt: skip
        if hit is None:
            text = fx.files.get(mk.path, "")[mk.start : mk.end]
            missing.append(f"{mk.path}:{mk.start}-{mk.end} {mk.label} {text!r}")
        else:
            unmatched.remove(hit)
            hits.append(hit)
            if severities and mk.label in severities:
                sev = next(d[4] for d in got if d[:4] == hit)
                assert sev == severities[mk.label], f"{mk.label}: severity {sev}"

    def show(g: tuple[str, int, int, str]) -> str:
        text = fx.files.get(g[0], "")[g[1] : g[2]]
        msg = next(d[5] for d in got if d[:4] == g)
        return f"{g[0]}:{g[1]}-{g[2]} {g[3]} {text!r}: {msg}"

    # hints (faded text in editors, e.g. an unused field) are asserted only where marked
    unmatched = [g for g in unmatched if next(d[4] for d in got if d[:4] == g) != "hint"]
    assert not missing and not unmatched, (
        "\nexpected but missing:\n  "
        + "\n  ".join(missing)
        + "\nreported but not expected:\n  "
        + "\n  ".join(show(g) for g in unmatched)
    )
    assert_silent(silent, got, set(hits))
    Coverage.fired |= {h[3] for h in hits}
    return got


def check_clean(tmp_path: Path, fixture: str, silent: Iterable[str] = ()) -> None:
    """Assert a fixture produces no diagnostics (hints aside), and none at all of the
    ``silent`` codes: the fixture exercises them without mistakes (see ``Coverage``)."""
    fx = write_fixture(tmp_path, fixture)
    every = diagnostics_of(fx.root)
    got = [g for g in every if g[4] != "hint"]
    assert got == [], "\n".join(f"{g[0]}:{g[1]}-{g[2]} {g[3]}: {g[5]}" for g in got)
    assert_silent(silent, every, set())


def render_hover(h: Hover | None, text: str) -> str:
    """A hover as the user sees it: the hovered text, then the Markdown."""
    if h is None:
        return "(no hover)"
    return f"«{text[h.range.start : h.range.end]}»\n{h.markdown}"


def render_completions(result: CompletionResult, text: str) -> list[str]:
    """The completion list in the order an editor shows it (by sort text), one line per
    item: ``label (kind) detail``, then what accepting it does when that is not just
    inserting the label at the cursor: ``replaces 'typed'`` (the partial word the edit
    replaces), ``+ 'suffix'`` (inserts more than the label) or ``-> 'new text'``, and the
    flags (snippet, suggests again: accepting it opens the suggestions for what follows,
    filter text). ``text`` is the file the completion ran on. An
    incomplete list (the editor asks again as the user types) ends with ``(incomplete)``."""
    out = []
    for it in sorted(result.items, key=lambda i: i.sort_text or i.label):
        line = f"{it.label} ({it.kind})"
        if it.detail:
            line += f" {it.detail}"
        if it.edit is not None:
            typed = text[it.edit.range.start : it.edit.range.end]
            new = it.edit.new_text
            if typed:
                line += f" | replaces {typed!r}"
            if new != it.label:
                extra = new.removeprefix(it.label)
                line += f" | + {extra!r}" if extra != new else f" | -> {new!r}"
        if it.snippet:
            line += " | snippet"
        if it.retrigger:
            line += " | suggests again"
        if it.filter_text is not None and it.filter_text != it.label:
            line += f" | filter {it.filter_text!r}"
        out.append(line)
    if result.is_incomplete:
        out.append("(incomplete)")
    return out


# Fragments that random documents for the "never raises" properties are built from.
FRAGMENTS = [
    "---\n", "description: x\n", ":::ordered_block id=m\n", ":::\n", "steps:\n", "  - id: a\n",
    "    instructions: |\n", "      @memory.s.a @tool.x session.a.b\n", "    next:\n",
    "      - if: x\n", "        then: a\n", "      - else: b\n", "if: x\n", "else:\n", "\n",
    "  \n", "\t", "'", '"', "\\", "{", "}", "[", "]", ": ", "- ", "&a ", "*a ", "<<: ",
    "!!str ", "|\n", ">-\n", "utter:\n", "  - u: {on: activate, when: x}\n",
    "tool_constraints:\n", "  - t:\n", "      requires: x\n", "schema:\n", "  public:\n",
    "    f: {type: text, seed: true}\n", "responses:\n", "  u:\n",
    "    - text: {session.a.b} {x}\n", "      buttons:\n", "        - title: t\n",
    "          payload: set:session.a.b=c\n", "agent:\n", "orchestrator:\n",
    "  preconditions:\n", "    p: {satisfied_when: x, resolve_with: y}\n", "😀", "é", "#",
    "--- \n", "...\n", "?", "@", "@block.zz", "`", "x",
]  # fmt: skip
