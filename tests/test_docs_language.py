"""The language reference in docs/language/: every relative link reaches an existing file and
heading, every YAML and Python example parses, every diagnostic code it names exists, and
every spec section the code cites has a row in citations.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from mantle_lsp.ide.codes import REGISTRY

REPO = Path(__file__).resolve().parents[1]
LANG = REPO / "docs" / "language"
PAGES = sorted(LANG.glob("*.md"))
EXPECTED_PAGES = {
    "index.md",
    "layout.md",
    "memory.md",
    "skill-md.md",
    "conditions.md",
    "references.md",
    "responses.md",
    "tools.md",
    "config.md",
    "profiles.md",
    "citations.md",
    "eval.md",
}

_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# What a diagnostic code looks like: a known prefix and at least two more dotted segments
# (`skill.md` and `responses.yml` are file names, not codes).
_CODE_SHAPE = re.compile(r"(?:mantle|skill|lsp|config|responses|eval)(?:\.[a-z0-9_]+){2,}")


def split_fences(text: str) -> tuple[list[str], list[tuple[str, str, int]]]:
    """The lines outside fenced code blocks (fence lines and contents blanked, so line
    numbers stay), and each fenced block as (info string, body, first line number)."""
    outside: list[str] = []
    blocks: list[tuple[str, str, int]] = []
    fence: tuple[str, str, int] | None = None
    body: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if fence is None:
            m = _FENCE_OPEN.match(line)
            if m:
                fence = (m.group(1), m.group(2).lower(), n + 1)
                body = []
                outside.append("")
            else:
                outside.append(line)
            continue
        marker, info, start = fence
        stripped = line.strip()
        if stripped and set(stripped) == {marker[0]} and len(stripped) >= len(marker):
            blocks.append((info, "\n".join(body) + "\n", start))
            fence = None
        else:
            body.append(line)
        outside.append("")
    assert fence is None, f"unclosed code fence opened at line {fence[2] - 1}"
    return outside, blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lower-cased, without punctuation
    (letters, digits, `_`, `-` and spaces stay), each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    outside, _ = split_fences(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in outside:
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    outside, _ = split_fences(path.read_text(encoding="utf-8"))
    out = []
    for n, line in enumerate(outside, 1):
        for m in _LINK.finditer(line):
            out.append((n, m.group(2)))
    return out


def page_id(p: Path) -> str:
    return p.name


def test_every_page_exists() -> None:
    assert {p.name for p in PAGES} == EXPECTED_PAGES


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_relative_links_reach_a_file_and_a_heading(page: Path) -> None:
    problems = []
    for line, target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            problems.append(f"{page.name}:{line}: {target}: no such file")
            continue
        if anchor:
            if dest.suffix != ".md":
                problems.append(f"{page.name}:{line}: {target}: an anchor into a non-Markdown file")
            elif anchor not in anchors(dest):
                problems.append(f"{page.name}:{line}: {target}: no heading with this anchor")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_headings_are_unique_within_a_page(page: Path) -> None:
    """Anchors are cited from code comments: a repeated heading would get a numbered anchor
    that moves when a heading is added above it."""
    outside, _ = split_fences(page.read_text(encoding="utf-8"))
    slugs = [slug(m.group(2)) for line in outside if (m := _HEADING.match(line))]
    assert len(slugs) == len(set(slugs)), sorted({s for s in slugs if slugs.count(s) > 1})


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_yaml_examples_parse(page: Path) -> None:
    _, blocks = split_fences(page.read_text(encoding="utf-8"))
    for info, body, line in blocks:
        if info in ("yaml", "yml"):
            try:
                yaml.safe_load(body)
            except yaml.YAMLError as e:  # pragma: no cover - the message is the point
                pytest.fail(f"{page.name}:{line}: the yaml example does not parse: {e}")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_python_examples_compile(page: Path) -> None:
    _, blocks = split_fences(page.read_text(encoding="utf-8"))
    for info, body, line in blocks:
        if info in ("python", "py"):
            try:
                ast.parse(body)
            except SyntaxError as e:  # pragma: no cover - the message is the point
                pytest.fail(f"{page.name}:{line}: the python example does not compile: {e}")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_code_named_in_backticks_is_registered(page: Path) -> None:
    outside, _ = split_fences(page.read_text(encoding="utf-8"))
    unknown = []
    for n, line in enumerate(outside, 1):
        for m in _INLINE_CODE.finditer(line):
            word = m.group(2).strip()
            if _CODE_SHAPE.fullmatch(word) and word not in REGISTRY:
                unknown.append(f"{page.name}:{n}: `{word}`")
    assert not unknown, "codes that are not in the registry:\n" + "\n".join(unknown)


def test_links_to_diagnostic_pages_name_registered_codes() -> None:
    unknown = []
    for page in PAGES:
        for line, target in links(page):
            m = re.fullmatch(r"\.\./diagnostics/(.+)\.md(?:#.*)?", target)
            if m and m.group(1) not in REGISTRY:
                unknown.append(f"{page.name}:{line}: {target}")
    assert not unknown, "\n".join(unknown)


_CITATION = re.compile(r"(engine-rules|authoring-language) §([0-9][0-9.]*)")


def test_every_cited_spec_section_has_a_row_in_citations_md() -> None:
    """So that the citations in comments can be rewritten as links mechanically."""
    cited: set[str] = set()
    for folder in ("server", "tests"):
        for py in (REPO / folder).rglob("*.py"):
            for doc, section in _CITATION.findall(py.read_text(encoding="utf-8")):
                cited.add(f"{doc} §{section.rstrip('.')}")
    table = (LANG / "citations.md").read_text(encoding="utf-8")
    rows = {
        f"{doc} §{section.rstrip('.')}"
        for doc, section in _CITATION.findall(table)
        if f"| {doc} §{section}" in table
    }
    missing = sorted(cited - rows)
    assert not missing, f"cited in the code but not mapped in docs/language/citations.md: {missing}"
