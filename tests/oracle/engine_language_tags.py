#!/usr/bin/env python3
"""Check ``syntax/language_tag.py`` against rasa-pro 3.22's own ``agent.language`` rule.

Run with an interpreter that has rasa-pro 3.22 installed (``make oracle
ORACLE_RASA=3.22.0.dev1`` does it); prints one JSON line::

    {"tags": 190000, "false_warnings": [[tag, why], ...], "misses": 17000, "engine_errors": 0}

``false_warnings``: tags we warn about and the engine accepts (must be empty).
``misses``: tags the engine warns about and we let through (allowed: we are silent where
unsure, e.g. unregistered three-letter languages and variants). The tags: every two- and
three-letter language, every region with a few languages, every script with every
two-letter language, and generated combinations (fixed seed).
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import random
import string
import sys
from pathlib import Path
from types import ModuleType

OURS = Path(__file__).resolve().parents[2] / "server" / "mantle_lsp" / "syntax" / "language_tag.py"
VARIANTS = ("1901", "1996", "fonipa", "rozaj", "biske", "posix", "1234", "pinyin", "lojban")


def _ours() -> ModuleType:
    spec = importlib.util.spec_from_file_location("language_tag", OURS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus(lt: ModuleType, samples: int) -> set[str]:
    lo, up = string.ascii_lowercase, string.ascii_uppercase
    two = sorted(lt._LANGUAGES_2)
    scripts = sorted(lt._SCRIPTS)
    regions = sorted(lt._REGIONS)
    tags = {a + b for a, b in itertools.product(lo, lo)}
    tags |= {a + b for a, b in itertools.product(up, up)}
    tags |= {"".join(p) for p in itertools.product(lo, repeat=3)}
    for lang in ("en", "zh", "pt"):
        tags |= {f"{lang}-{a}{b}" for a, b in itertools.product(up, up)}
        tags |= {f"{lang}-{i:03d}" for i in range(1000)}
    for lang in [*two, "yue", "gsw", "und"]:
        tags |= {f"{lang}-{s}" for s in scripts}
    rng = random.Random(7)
    extra = ["yue", "eng", "abc", "xyz", "und", "qaa", "art", "i", "english", "abcd"]
    for _ in range(samples):
        parts = [rng.choice([*two, *extra, "".join(rng.choices(lo, k=rng.choice((2, 3))))])]
        if rng.random() < 0.15:
            parts.append(rng.choice(["yue", "cmn", "aaa", "min", "bok"]))
        if rng.random() < 0.4:
            parts.append(rng.choice([*scripts, "Latx", "latn", "LATN"]))
        if rng.random() < 0.5:
            parts.append(rng.choice([*regions, "UK", "DD", "419", "840", "999", "us", "JA"]))
        parts += rng.sample(VARIANTS, rng.choice((0, 0, 0, 1, 2)))
        if rng.random() < 0.2:
            parts += rng.choice([["u", "ca", "gregory"], ["a", "bbb"], ["u"], ["u", "a", "u", "b"]])
        if rng.random() < 0.15:
            parts += rng.choice([["x", "foo"], ["x"], ["x", "a", "b"]])
        tag = "-".join(p.upper() if rng.random() < 0.05 else p for p in parts)
        if rng.random() < 0.03:
            tag = tag.replace("-", "_", 1)
        if rng.random() < 0.1:
            tag = f"x-{tag}-{rng.choice(['pirate', 'a', ''])}"
        tags.add(tag)
    return tags


def main() -> int:
    language = importlib.import_module("rasa.engine.language").Language
    refused = importlib.import_module("rasa.shared.exceptions").RasaException
    lt = _ours()
    false_warnings: list[list[str]] = []
    misses = errors = 0
    tags = corpus(lt, int(sys.argv[1]) if len(sys.argv) > 1 else 60000)
    for tag in sorted(tags):
        try:
            language.from_language_code(tag)
            accepted = True
        except refused:
            accepted = False
        except Exception:  # the engine crashes on a few malformed custom tags
            errors += 1
            continue
        why = lt.tag_problem(tag)
        if why is not None and accepted:
            false_warnings.append([tag, why])
        elif why is None and not accepted:
            misses += 1
    summary = {
        "tags": len(tags),
        "false_warnings": false_warnings,
        "misses": misses,
        "engine_errors": errors,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
