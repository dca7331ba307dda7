"""``check --add-noqa`` (``--add-suppressions``): a ``# mantle-lsp: ignore[CODE]`` comment
for every finding reported, where the file has a comment form (ide/suppression.py), so
that a large agent can adopt the checker with the findings of today silenced where they
are; the findings a comment cannot reach (skill.md prose, YAML block scalars, Python
strings, memory-layers files) are listed: a baseline covers them.

Each file is written once, atomically (mantle_lsp/atomic.py), inside its project, with
its BOM and CRLF line breaks kept; a file that mixes line-break styles, is not UTF-8 or
changed since it was read is left alone. A second run adds nothing: what the first added
silences what it was added for.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from .. import atomic
from ..ide.suppression import add_suppressions
from ..model.layout import inside
from ..model.project import Project
from .output import Finding, plural

# codes a comment does not silence: those about the comments themselves
_UNSUPPRESSIBLE = ("lsp.suppression.",)


def run(projects: dict[Path, Project], findings: list[Finding], out: IO[str], level: str) -> int:
    """Add the comments; say what was done and list what was not. Exit status 0, or 1
    when a file could not be written."""
    from .fix import _open  # how a file is stored (BOM, line breaks), to keep it

    wanted: dict[Path, dict[int, set[str]]] = {}
    left: list[Finding] = []
    for f in findings:
        proj = projects.get(f.root)
        pf = proj.files.get(f.diag.path) if proj is not None else None
        if pf is None or f.row.code.startswith(_UNSUPPRESSIBLE) or f.row.line < 1:
            left.append(f)
            continue
        wanted.setdefault(f.diag.path, {}).setdefault(f.row.line - 1, set()).add(f.row.code)
    added = files = 0
    problems: list[str] = []
    for path, lines in sorted(wanted.items()):
        mine = [f for f in findings if f.diag.path == path]
        root = mine[0].root
        pf = projects[root].files[path]
        stored = _open(path, root, {})
        text, failed = add_suppressions(pf, lines)
        if stored is None or stored.text != pf.source.text:
            failed = set(lines)  # cannot be written back as it is stored
        left += [f for f in mine if f.row.line - 1 in failed]
        if stored is None or failed == set(lines) or not inside(root, path):
            continue
        try:
            atomic.write_text(path, stored.stored(text), within=root)
        except OSError as exc:
            problems.append(f"{path}: cannot write the suppressions ({exc.strerror or exc})")
            left += [f for f in mine if f.row.line - 1 not in failed]
            continue
        files += 1
        added += sum(len(codes) for n, codes in lines.items() if n not in failed)
    left.sort(key=lambda f: f.row.sort_key())
    if level != "silent":
        for p in problems:
            print(f"mantle-lsp: error: {p}", file=sys.stderr)
    if level == "normal":
        if added:
            out.write(f"Added {plural(added, 'suppression')} to {plural(files, 'file')}.\n")
        else:
            out.write("Added no suppression.\n")
    if level != "silent" and left:
        out.write(
            f"{plural(len(left), 'finding')} cannot be suppressed with a comment there "
            "(skill.md prose, a YAML block scalar, a Python string, …); a baseline covers "
            "them (`--write-baseline FILE`, then `--baseline FILE`):\n"
        )
        for f in left:
            r = f.row
            out.write(f"  {r.path}:{r.line}:{r.column}: {r.severity}[{r.code}] {r.message}\n")
    return 1 if problems else 0
