"""The documentation site (mkdocs.yml; `make docs-site` builds it with --strict): every page
of docs/ can be reached — from the navigation, or, for a diagnostic code's page, from the
table in docs/diagnostics.md — and the build stays offline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml names a Python function (the GitHub-style anchor slugs): read the tag
    as data, never import anything."""


def _python_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    return {"python": suffix}


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", _python_tag)


def config() -> dict[str, Any]:
    data = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    assert isinstance(data, dict)
    return data


def nav_pages(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in nav_pages(value)]
    return []


def test_every_page_is_in_the_navigation_or_a_code_page() -> None:
    nav = nav_pages(config()["nav"])
    assert len(nav) == len(set(nav)), "a page is listed twice"
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    code_pages = {p for p in pages if p.startswith("diagnostics/")}
    assert sorted(pages - code_pages - set(nav)) == []
    # the editors page and the features overview are there under their sections
    assert {"index.md", "editors.md", "features/index.md", "architecture.md"} <= set(nav)


def test_every_code_page_is_linked_from_the_diagnostics_table() -> None:
    table = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((diagnostics/[^)#\s]+\.md)\)", table))
    pages = {p.relative_to(DOCS).as_posix() for p in (DOCS / "diagnostics").glob("*.md")}
    assert pages and pages == linked


def test_the_site_builds_offline() -> None:
    cfg = config()
    # no web fonts from a CDN, and only the built-in search plugin (nothing that fetches)
    assert cfg["theme"]["name"] == "material" and cfg["theme"]["font"] is False
    assert cfg["plugins"] == ["search"]
    assert cfg["docs_dir"] == "docs" and cfg["site_dir"] == ".cache/site"
    # --strict turns every one of these into a failure
    assert cfg["validation"]["links"]["anchors"] == "warn"
    assert cfg["validation"]["nav"]["omitted_files"] == "warn"
