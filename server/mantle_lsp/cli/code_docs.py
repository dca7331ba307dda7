"""One Markdown page per diagnostic code (``docs/diagnostics/<code>.md``).

The pages ship inside the package as ``mantle_lsp.code_docs`` (mapped from
``docs/diagnostics`` in ``pyproject.toml``); in a source checkout without an install of that
mapping they are read from the ``docs/diagnostics`` folder next to ``server/``. Where they
are is :mod:`mantle_lsp.pages`, below both ``cli/`` and ``lsp/`` (whose diagnostics link
to them).

Page format (parsed by :func:`parse_page`; a test checks every page against the checker)::

    # <code>

    - **Severity:** <error|warning|information|hint>
    - **rasa-pro 3.21:** <how the engine reports it>

    ## What it means
    ## Why it matters
    ## Example
    ## Fix

Under ``## Example`` and ``## Fix`` every fenced block whose info string carries
``title="<relative path>"`` is a file of a small project, e.g.
````` ```yaml title="skills/card/memory.yml" `````. The Example files (plus a default
``agent.yml`` and ``integrations.yml``) make a project that reports the code; the Fix
files replace or add files in that project, which then no longer reports it. HTML comment
directives tune the check:

* ``<!-- not-checked: <reason> -->`` — the examples cannot be produced from a small
  project (an unreadable or binary file, …);
* ``<!-- without: agent.yml -->`` (Example) — do not add that default file;
* ``<!-- also: <code> <code> -->`` (Example) — other codes the wrong example reports too;
* ``<!-- delete: <path> -->`` (Fix) — the fix removes (or renames away) that file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..pages import load_page as load_page
from ..pages import page_codes as page_codes
from ..pages import pages_dir as pages_dir

SECTIONS = ("What it means", "Why it matters", "Example", "Fix")

_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})([^`\n]*)$")
_TITLE = re.compile(r'\btitle="([^"]+)"')
_DIRECTIVE = re.compile(r"<!--\s*([a-z-]+):\s*(.*?)\s*-->", re.S)
_HEADER_FIELD = re.compile(r"^- \*\*(Severity|rasa-pro 3\.21):\*\*\s*(.+)$", re.M)


@dataclass(frozen=True)
class Snippet:
    path: str  # relative to the project root, with `/`
    lang: str
    text: str  # the block's content, ending with a newline


@dataclass(frozen=True)
class Page:
    code: str  # from the `# <code>` title
    severity: str
    engine: str  # the text of the "rasa-pro 3.21" line
    sections: dict[str, str]  # `## <name>` -> its raw text
    wrong: tuple[Snippet, ...]
    fixed: tuple[Snippet, ...]
    not_checked: str | None  # the reason, when the examples are not checked
    without: tuple[str, ...]  # default files the wrong example leaves out
    also: tuple[str, ...]  # other codes the wrong example reports
    delete: tuple[str, ...]  # files the fix removes


def _sections(text: str) -> dict[str, str]:
    """``## name`` -> body, ignoring `##` lines inside fenced blocks."""
    out: dict[str, str] = {}
    name: str | None = None
    body: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        m = _FENCE_OPEN.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None and line.startswith("## "):
            if name is not None:
                out[name] = "\n".join(body).strip("\n") + "\n"
            name, body = line[3:].strip(), []
            continue
        if name is not None:
            body.append(line)
    if name is not None:
        out[name] = "\n".join(body).strip("\n") + "\n"
    return out


def snippets(section: str) -> tuple[Snippet, ...]:
    """The fenced blocks of a section that carry a ``title="path"``."""
    out: list[Snippet] = []
    lines = section.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != fence:
            j += 1
        title = _TITLE.search(info)
        if title:
            lang = info.split()[0] if info and not info.startswith("title=") else ""
            body = "\n".join(lines[i + 1 : j])
            out.append(Snippet(title.group(1), lang, body + "\n"))
        i = j + 1
    return tuple(out)


def _directives(section: str, name: str) -> tuple[str, ...]:
    return tuple(
        word for key, value in _DIRECTIVE.findall(section) if key == name for word in value.split()
    )


def parse_page(text: str) -> Page:
    """Split a page into its header fields, sections, example files and directives."""
    first = text.split("\n", 1)[0]
    code = first[2:].strip() if first.startswith("# ") else ""
    fields = dict(_HEADER_FIELD.findall(text.split("\n## ", 1)[0]))
    secs = _sections(text)
    example, fix = secs.get("Example", ""), secs.get("Fix", "")
    reasons = [v for k, v in _DIRECTIVE.findall(text) if k == "not-checked"]
    return Page(
        code=code,
        severity=fields.get("Severity", "").strip(),
        engine=fields.get("rasa-pro 3.21", "").strip(),
        sections=secs,
        wrong=snippets(example),
        fixed=snippets(fix),
        not_checked=reasons[0] if reasons else None,
        without=_directives(example, "without"),
        also=_directives(example, "also"),
        delete=_directives(fix, "delete"),
    )


# -- finding the pages: mantle_lsp/pages.py (the server links to them too) ----------------


_LINK = re.compile(r"\[([^\]]+)\]\([^)\s]+\)")


def explanation(code: str) -> dict[str, str] | None:
    """What ``code`` means, from its page ("What it means"), as SARIF's
    ``fullDescription``: ``{"text": plain, "markdown": as written}``; None without a
    page."""
    page = load_page(code)
    if page is None:
        return None
    what = _sections(page).get("What it means", "").strip()
    if not what:
        return None
    plain = _LINK.sub(r"\1", what).replace("`", "")
    plain = "\n\n".join(" ".join(par.split("\n")) for par in plain.split("\n\n"))
    return {"text": plain, "markdown": what}


# reserved names (RFC 2606): an address of one is a placeholder, no address yet
_RESERVED = (
    ".invalid",
    ".example",
    ".test",
    ".localhost",
    "example.com",
    "example.net",
    "example.org",
)


def documentation_url() -> str | None:
    """The package's documentation address (``[project.urls] Documentation`` in
    pyproject.toml, read from the installed metadata), or None when it has none or only
    a placeholder (a reserved domain such as ``example.invalid``)."""
    from importlib import metadata  # only the SARIF output needs it
    from urllib.parse import urlsplit

    try:
        urls = metadata.metadata("mantle-lsp").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() != "documentation":
            continue
        url = url.strip()
        host = (urlsplit(url).hostname or "").lower()
        placeholder = any(
            host == r.lstrip(".") or host.endswith("." + r.lstrip(".")) for r in _RESERVED
        )
        return url if url.startswith(("https://", "http://")) and host and not placeholder else None
    return None


def resolve_code(query: str, codes: list[str]) -> tuple[str | None, list[str]]:
    """``(code, [])`` for an exact code or a unique dotted suffix (``unknown_memory_key``
    matches ``….prose.unknown_memory_key`` only when no other code ends the same way);
    else ``(None, candidates)`` — several matches, or none."""
    if query in codes:
        return query, []
    q = query.strip(".")
    matches = sorted(c for c in codes if q and c.endswith("." + q))
    if len(matches) == 1:
        return matches[0], []
    return None, matches
