"""The settings table of client-vscode/README.md, made from package.json's
``contributes.configuration``: `python scripts/settings_table.py` rewrites the table
between the `<!-- settings -->` markers; tests/test_packaging.py checks it is current."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
START, END = "<!-- settings: generated from package.json -->", "<!-- /settings -->"


def _cell(text: str) -> str:
    text = re.sub(r"`?#([\w.]+)#`?", r"`\1`", text)  # VS Code's setting links
    return " ".join(text.split()).replace("|", "\\|")


def _default(prop: dict[str, Any]) -> str:
    return f"`{json.dumps(prop.get('default'))}`" if "default" in prop else ""


def table(package: dict[str, Any]) -> str:
    props: dict[str, dict[str, Any]] = package["contributes"]["configuration"]["properties"]
    rows = ["| Setting | Default | Description |", "| --- | --- | --- |"]
    for name, prop in props.items():
        text = prop.get("markdownDescription") or prop.get("description") or ""
        if "enum" in prop:
            values = prop["enum"]
            notes = [n.rstrip(".") for n in prop.get("enumDescriptions") or [""] * len(values)]
            sep = "; " if any(notes) else ", "
            text += " Values: " + sep.join(
                f"`{v}`" + (f" — {n}" if n else "") for v, n in zip(values, notes, strict=True)
            )
            text += "."
        rows.append(f"| `{name}` | {_default(prop)} | {_cell(text)} |")
    return "\n".join(rows) + "\n"


def render(readme: str, package: dict[str, Any]) -> str:
    before, rest = readme.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{table(package)}{END}{after}"


def main() -> int:
    package = json.loads((HERE / "package.json").read_text(encoding="utf-8"))
    path = HERE / "README.md"
    path.write_text(render(path.read_text(encoding="utf-8"), package), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
