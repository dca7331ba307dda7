"""`make bench-engine`: the reference engine's validator on the same generated projects,
next to `mantle-lsp check`, to print the speed-up (optional; needs the oracle venv).

    python bench/engine.py ORACLE_PYTHON [N ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str]) -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - t


def main() -> int:
    oracle_python = sys.argv[1]
    sizes = [int(a) for a in sys.argv[2:]] or [60, 300]
    ours = str(Path(sys.executable).with_name("mantle-lsp"))
    script = str(ROOT / "scripts" / "oracle_findings.py")
    print("| skills | rasa-pro 3.21 validator | mantle-lsp check | speed-up |")
    print("| ---: | ---: | ---: | ---: |")
    for n in sizes:
        project = generate(ROOT / ".cache" / "bench" / f"engine-{n}", n)
        engine = timed([oracle_python, script, str(project)])
        check = min(timed([ours, "check", str(project)]) for _ in range(3))
        print(f"| {n} | {engine:.1f} s | {check:.2f} s | {engine / check:.0f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
