"""Issue 32's real-VS-Code targets, gated on the figures the end-to-end test measured.

``make e2e`` (or ``make e2e E2E_ONLY=cold``) measures a cold start of the extension in
code-server on the 75-skill agent and writes ``.cache/e2e/cold-start.json``
(tests/e2e/run.mjs, ``coldStart``). This module reads that file and says, for each
target, met or not met; without the file (no code-server on this machine) every target is
"not measured". ``make bench`` appends the section to docs/performance-results.md;
``make bench-vscode`` runs the e2e measurement, then rewrites that section alone:

    python bench/vscode.py [--json FILE] [--results docs/performance-results.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JSON = ROOT / ".cache" / "e2e" / "cold-start.json"
HEADING = "## Real VS Code: cold start on the 75-skill agent (issue 32)"


@dataclass(frozen=True)
class Target:
    key: str  # the figure in the JSON's runs and median
    what: str
    limit: float  # seconds


TARGETS = (
    Target("activate_call_to_server_s", "activation → server process started", 0.3),
    Target("first_squiggle_s", "workbench ready (the skill.md drawn) → its first squiggle", 1.5),
    Target("first_references_s", "first Find References (issued at the first squiggle)", 0.5),
)
# shown beside the targets: where the time goes
CONTEXT = (
    ("page_to_editor_s", "page load → the skill.md drawn"),
    ("page_to_exthost_s", "page load → the extension host started"),
    ("page_to_activation_s", "page load → VS Code activates the extension"),
    ("activation_to_server_s", "VS Code's activation event → server process started"),
    ("server_to_squiggle_s", "server process started → first squiggle"),
)


def load(path: Path = JSON) -> dict | None:
    """The e2e figures, or None when they were not measured (or cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        return None
    return data


def verdicts(data: dict | None) -> list[tuple[Target, float | None, bool | None]]:
    """Each target with its median (seconds) and whether it is met (None: not measured)."""
    out: list[tuple[Target, float | None, bool | None]] = []
    for t in TARGETS:
        value = (data or {}).get("median", {}).get(t.key)
        if not isinstance(value, (int, float)):
            out.append((t, None, None))
        else:
            out.append((t, float(value), value <= t.limit))
    return out


def _runs(data: dict, key: str) -> str:
    values = [r.get(key) for r in data["runs"]]
    return ", ".join(f"{v:.2f}" for v in values if isinstance(v, (int, float)))


def section(data: dict | None, source: Path = JSON) -> str:
    """The Markdown section for docs/performance-results.md."""
    lines = [HEADING, ""]
    try:
        shown = source.relative_to(ROOT)
    except ValueError:
        shown = source
    if data is None:
        lines += [
            f"Not measured: no `{shown}` (`make e2e` writes it; it needs code-server, "
            "which `make e2e` installs). `make bench-vscode` measures and writes this section.",
            "",
            "| target | median of 3 | runs | |",
            "| :--- | ---: | :--- | :--- |",
        ]
        lines += [f"| {t.what} ≤ {t.limit} s | — | — | not measured |" for t in TARGETS]
        return "\n".join(lines) + "\n"
    loads = ", ".join(str(r.get("load", "?")) for r in data["runs"])
    lines += [
        f"Measured by the end-to-end test (`{shown}`, {data.get('measured', '?')}) in "
        f"{data.get('code_server', 'code-server')} with {data.get('vsix', 'the .vsix')}, "
        f"{data.get('cores', '?')} cores, load average {loads} at the runs; server: "
        f"{data.get('server', '?')}. {str(data.get('what', '')).capitalize()}.",
        "",
        f"| target | median of {len(data['runs'])} | runs | |",
        "| :--- | ---: | :--- | :--- |",
    ]
    for t, value, met in verdicts(data):
        if value is None:
            lines.append(f"| {t.what} ≤ {t.limit} s | — | — | not measured |")
        else:
            lines.append(
                f"| {t.what} ≤ {t.limit} s | {value:.2f} s | {_runs(data, t.key)} | "
                f"{'**met**' if met else '**not met**'} |"
            )
    for key, what in CONTEXT:
        value = data.get("median", {}).get(key)
        if isinstance(value, (int, float)):
            lines.append(f"| {what} | {value:.2f} s | {_runs(data, key)} | |")
    first = data.get("first_open") or {}
    if isinstance(first.get("activate_call_to_server_s"), (int, float)):
        lines.append(
            "| the first open of the workspace: activation → server process started "
            "(finding the server: probing Pythons) | "
            f"{first['activate_call_to_server_s']:.2f} s | | |"
        )
    return "\n".join(lines) + "\n"


def replace_section(text: str, new: str) -> str:
    """``text`` with its VS Code section (from HEADING to the next ``## `` or the end)
    replaced by ``new``, or ``new`` appended."""
    start = text.find(HEADING)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + new
    end = text.find("\n## ", start + len(HEADING))
    rest = "" if end < 0 else text[end + 1 :]
    return text[:start] + new + ("\n" + rest if rest else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, default=JSON)
    ap.add_argument("--results", type=Path, default=None, help="rewrite this file's section")
    args = ap.parse_args(argv)
    data = load(args.json)
    text = section(data, args.json)
    print(text)
    if args.results is not None:
        old = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
        args.results.write_text(replace_section(old, text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
