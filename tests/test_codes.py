"""Every registered diagnostic code is exercised by some test (by its code, a unique label
suffix in a «label:text» mark, or the constant that holds it)."""

from __future__ import annotations

import re
from pathlib import Path

from mantle_lsp.ide.codes import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def test_every_registered_code_has_a_test() -> None:
    tests = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (ROOT / "tests").rglob("*.py")
        if p.name != "test_codes.py"
    )
    src = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "server").rglob("*.py"))
    consts: dict[str, set[str]] = {}
    for name, code in re.findall(r'^\s*([A-Z_][A-Z0-9_]*)\s*=\s*"([a-z_.0-9]+)"', src, re.M):
        consts.setdefault(code, set()).add(name)
    labels = {x for lab in re.findall(r"«([^:«»]*):", tests) for x in lab.split("|")}
    untested = [
        code
        for code in sorted(REGISTRY)
        if code not in tests
        and not any(code == lab or code.endswith("." + lab) for lab in labels)
        and not any(re.search(rf"\b{n}\b", tests) for n in consts.get(code, ()))
    ]
    assert untested == []
