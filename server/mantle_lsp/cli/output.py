"""What ``mantle-lsp check`` prints: one :class:`Finding` per diagnostic, rendered as the
``full`` text (source lines with a gutter and carets, like rustc and ruff), ``concise``
(one line each), ``json`` / ``json-lines``, ``sarif``, ``github`` (Actions workflow
commands), ``gitlab`` (a Code Quality report), ``junit`` (XML) or ``pylint``, and the
``--statistics`` table."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from .. import __version__
from ..ide.codes import info
from ..ide.diagnostics import Diagnostic
from ..syntax.text import LineIndex, TextRange, safe_text

OUTPUT_FORMATS = (
    "full",
    "concise",
    "json",
    "json-lines",
    "sarif",
    "github",
    "gitlab",
    "junit",
    "pylint",
)
TAB_WIDTH = 4  # a tab in a source line is shown as this many spaces
MAX_LINES = 6  # a range over more lines shows its first and last lines


@dataclasses.dataclass(frozen=True)
class RelatedRow:
    """Another place a finding is about (its related information), as printed."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str


@dataclasses.dataclass(frozen=True)
class Row:
    """One diagnostic as printed: 1-based line and column (in code points)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    severity: str
    code: str
    message: str
    engine_code: str | None = None  # the engine's code, when it differs from ``code``
    related: tuple[RelatedRow, ...] = ()

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def as_json(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        if not self.engine_code or self.engine_code == self.code:
            del out["engine_code"]
        if self.related:
            out["related"] = list(out["related"])
        else:
            del out["related"]
        return out


@dataclasses.dataclass(frozen=True)
class Help:
    """A code action offered for a finding: its title, and whether ``--fix`` applies it."""

    title: str
    safe: bool


@dataclasses.dataclass
class Finding:
    """A diagnostic to report, with what rendering it needs: the file's (normalized) text
    and the project it belongs to."""

    row: Row
    diag: Diagnostic
    root: Path
    text: str | None  # None when the file could not be read
    # what converts the finding's offsets, and each related row's (SARIF counts UTF-16)
    index: LineIndex | None = None
    related_at: tuple[tuple[LineIndex, TextRange], ...] = ()
    helps: list[Help] = dataclasses.field(default_factory=list)
    # which fix --fix would apply: "safe", "unsafe" (only with --unsafe-fixes) or None
    fix: str | None = None
    fix_detail: dict[str, object] | None = None  # that fix, for the JSON formats

    @property
    def fingerprint(self) -> str:
        """Its fingerprint (cli/fingerprint.py): baselines, GitLab."""
        from .fingerprint import fingerprint  # hashlib: only the formats that need it

        return fingerprint(self.diag.code, self.text, self.diag.range)

    @property
    def fingerprint_v1(self) -> str:
        """Its fingerprint in the first form: baselines of version 1, SARIF."""
        from .fingerprint import fingerprint_v1

        return fingerprint_v1(self.diag.code, self.diag.message, self.text, self.diag.range)


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when below it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def make_finding(
    d: Diagnostic,
    root: Path,
    text: str | None,
    index: LineIndex | None,
    index_of: Callable[[Path], LineIndex | None] | None = None,
) -> Finding:
    """``index`` converts the finding's offsets; ``index_of`` those of its related
    information (an entry in a file it gives no index for is left out). A finding about
    a folder (``Diagnostic.folder``: a skill folder with no Mantle file) is placed at the
    folder, shown with a trailing separator, without a line or a snippet."""
    if d.folder is not None:
        text = index = None
    line = col = eline = ecol = 0
    if index is not None:
        line, col = index.position(d.range.start)
        eline, ecol = index.position(d.range.end)
    related = []
    related_at = []
    for r in d.related:
        rindex = index if r.location.path == d.path else (index_of and index_of(r.location.path))
        if rindex is None:
            continue
        related_at.append((rindex, r.location.range))
        rl, rc = rindex.position(r.location.range.start)
        rel, rec = rindex.position(r.location.range.end)
        related.append(
            RelatedRow(display_path(r.location.path), rl + 1, rc + 1, rel + 1, rec + 1, r.message)
        )
    row = Row(
        display_path(d.path) if d.folder is None else display_path(d.folder) + os.sep,
        line + 1,
        col + 1,
        eline + 1,
        ecol + 1,
        d.severity,
        d.code,
        d.message,
        d.engine_code if d.engine_code != d.code else None,
        tuple(related),
    )
    return Finding(row, d, root, text, index, tuple(related_at))


# ---------------------------------------------------------------------------------------
# Colour


class Style:
    """ANSI colours, or none."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def bold(self, text: str) -> str:
        return self._wrap(text, "1")

    def gutter(self, text: str) -> str:
        return self._wrap(text, "1;34")

    def help(self, text: str) -> str:
        return self._wrap(text, "1;36")

    def severity(self, text: str, severity: str) -> str:
        return self._wrap(text, _SEVERITY_COLOURS.get(severity, "1;34"))


_SEVERITY_COLOURS = {"error": "1;31", "warning": "1;33", "information": "1;34", "hint": "1;32"}


def use_colour(choice: str, stream: IO[str], env: Mapping[str, str]) -> bool:
    """``--color always|never`` wins; then ``NO_COLOR`` (any non-empty value: no colour),
    then ``FORCE_COLOR`` (any non-empty value: colour); else colour on a terminal only."""
    if choice != "auto":
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty() and env.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------------------------------
# Text


def char_width(ch: str) -> int:
    """Columns ``ch`` takes on a terminal: tabs are shown as TAB_WIDTH spaces, East Asian
    wide and fullwidth characters (most emoji among them) take two, combining marks and
    format characters (zero-width joiner, variation selectors) none."""
    if ch == "\t":
        return TAB_WIDTH
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _shown(line: str) -> str:
    return line.replace("\t", " " * TAB_WIDTH)


LONG_LINE = 200  # a longer source line is shown as a window around the range


def _window(line: str, start: int, end: int) -> tuple[str, int, int]:
    """The part of a long ``line`` to show (with … where it is cut), and the range in it."""
    if len(line) <= LONG_LINE:
        return line, start, end
    ws = max(0, start - 40)
    we = min(len(line), ws + LONG_LINE)
    pre = "…" if ws > 0 else ""
    post = "…" if we < len(line) else ""
    s2, e2 = min(start, we) - ws + len(pre), min(end, we) - ws + len(pre)
    return pre + line[ws:we] + post, s2, e2


def _width(text: str) -> int:
    return sum(char_width(c) for c in text)


def is_folder(row: Row) -> bool:
    """The finding is about a folder (see :func:`make_finding`): no line to show."""
    return row.path.endswith(("/", os.sep))


def header(row: Row, style: Style, fixable: bool = False) -> str:
    """``path:line:col: severity[code] message`` (``path:`` alone for a folder), with
    ``[*]`` before the message when ``--fix`` fixes the finding (as ruff marks it)."""
    place = f"{row.path}:" if is_folder(row) else f"{row.path}:{row.line}:{row.column}:"
    where = style.bold(safe_text(place))
    sev = style.severity(f"{row.severity}[{row.code}]", row.severity)
    mark = f" {style.help('[*]')}" if fixable else ""
    return f"{where} {sev}{mark} {safe_text(row.message)}"


def notes(row: Row, style: Style) -> list[str]:
    """The finding's related information, one indented ``path:line:col: note: …`` line
    each."""
    return [
        "  " + style.bold(safe_text(f"{r.path}:{r.line}:{r.column}:")) + " "
        f"{style.help('note:')} {safe_text(r.message)}"
        for r in row.related
    ]


def concise(findings: Sequence[Finding], style: Style, unsafe: bool = False) -> str:
    return "".join(
        "\n".join([header(f.row, style, _marked(f, unsafe)), *notes(f.row, style)]) + "\n"
        for f in findings
    )


def _marked(f: Finding, unsafe: bool) -> bool:
    """Whether ``--fix`` (with ``unsafe``: ``--fix --unsafe-fixes``) fixes the finding."""
    return f.fix == "safe" or (unsafe and f.fix == "unsafe")


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    """A file's lines, split once for all its findings (the findings of one file come
    together; a string keeps its hash, so a hit costs no pass over the text)."""
    return text.split("\n")


def _marked_lines(f: Finding) -> list[tuple[int, str, int, int]]:
    """(0-based line, its text, first and last code point of the range on it) for each
    line the finding's range touches."""
    text = f.text
    if text is None or f.row.line < 1:
        return []
    lines = _lines(text)
    first, last = f.row.line - 1, f.row.end_line - 1
    if first >= len(lines):
        return []
    last = min(max(last, first), len(lines) - 1)
    if last > first and f.row.end_column == 1:
        last -= 1  # a range that ends with a line break does not mark the next line
    out = []
    for n in range(first, last + 1):
        line = lines[n]
        start = f.row.column - 1 if n == first else 0
        end = f.row.end_column - 1 if n == f.row.end_line - 1 else len(line)
        if n == first and n == f.row.end_line - 1 and end <= start:
            end = start  # an empty range: one caret at its position
        elif end <= start and n != first:
            continue  # nothing of the range on this line (a blank line inside it)
        out.append((n, line, start, end))
    return out


def full(f: Finding, style: Style, unsafe: bool = False) -> str:
    """One finding as rustc shows it::

    path:4:5: error[code] message
       |
     4 | if: session.card.reasn == 'x'
       |     ^^^^^^^^^^^^^^^^^^^^^^
       = help: Change to `reason` (safe fix)
    """
    out = [header(f.row, style, _marked(f, unsafe))]
    marked = _marked_lines(f)
    if len(marked) > MAX_LINES:
        marked = [*marked[: MAX_LINES - 2], (-1, "", 0, 0), *marked[-1:]]
    width = len(str(max((n + 1 for n, *_ in marked), default=1)))
    pad = " " * width
    bar = style.gutter(f"{pad} |")
    if marked:
        out.append(bar)
    for n, line, start, end in marked:
        if n < 0:  # the lines left out of a long range
            out.append(style.gutter("..."))
            continue
        line, start, end = _window(line, start, end)
        line = safe_text(line)  # one for one: the window's offsets stay
        shown = _shown(line).rstrip()
        number = style.gutter(f"{n + 1:>{width}} |")
        out.append(f"{number} {shown}" if shown else number)
        lead = _width(line[:start])
        carets = max(_width(line[start:end]), 1)
        mark = style.severity("^" * carets, f.row.severity)
        out.append(f"{bar} {' ' * lead}{mark}")
    out.extend(notes(f.row, style))
    for h in f.helps:
        label = style.help("= help:")
        kind = "safe fix" if h.safe else "unsafe fix"
        out.append(f"{pad} {label} {safe_text(h.title)} ({kind})")
    return "\n".join(out) + "\n"


def full_text(findings: Sequence[Finding], style: Style, unsafe: bool = False) -> str:
    return "".join(full(f, style, unsafe) + "\n" for f in findings)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 finding``, ``2 findings`` (``many``: the plural when it is not ``word + s``)."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many or word + 's'}"


def summary(rows: Sequence[Row], nprojects: int, nlayers: int = 0) -> str:
    """The last line of ``check``; ``nlayers`` Cadenya memory-layers/ folders were checked
    besides the ``nprojects`` Mantle projects."""
    if nprojects + nlayers == 0:
        return "Nothing to check."
    errors = sum(1 for r in rows if r.severity == "error")
    warnings = sum(1 for r in rows if r.severity == "warning")
    other = len(rows) - errors - warnings
    files = len({r.path for r in rows})
    what = [plural(nprojects, "project")] if nprojects or not nlayers else []
    what += [plural(nlayers, "memory-layers folder")] if nlayers else []
    checked = ", ".join(what)
    if not rows:
        return f"All checks passed ({checked})."
    parts = [plural(errors, "error"), plural(warnings, "warning")]
    parts += [plural(other, "note")] if other else []
    return f"Found {', '.join(parts)} in {plural(files, 'file')} ({checked})."


def fixable_note(findings: Sequence[Finding], unsafe: bool) -> str | None:
    """How many findings ``--fix`` would fix (and how many more ``--unsafe-fixes`` would;
    with ``unsafe``, how many ``--fix --unsafe-fixes`` would)."""
    if unsafe:
        n = sum(1 for f in findings if f.fix)
        with_unsafe = any(f.fix == "unsafe" for f in findings)
        how = "`--fix --unsafe-fixes`" if with_unsafe else "`--fix`"
        return f"[*] {plural(n, 'finding')} fixable with {how}." if n else None
    safe = sum(1 for f in findings if f.fix == "safe")
    more = sum(1 for f in findings if f.fix == "unsafe")
    if safe and more:
        also = f"{more} more with `--fix --unsafe-fixes`"
        return f"[*] {plural(safe, 'finding')} fixable with `--fix` ({also})."
    if safe:
        return f"[*] {plural(safe, 'finding')} fixable with `--fix`."
    if more:
        return f"[*] {plural(more, 'finding')} fixable with `--fix --unsafe-fixes`."
    return None


# ---------------------------------------------------------------------------------------
# Statistics


@dataclasses.dataclass(frozen=True)
class Stat:
    count: int
    code: str
    severity: str
    fixable: bool
    summary: str


def statistics(findings: Sequence[Finding], unsafe: bool) -> list[Stat]:
    """One line per code: most frequent first, then by code."""
    counts = Counter(f.row.code for f in findings)
    severity: dict[str, str] = {}
    fixable: dict[str, bool] = {}
    for f in findings:
        severity.setdefault(f.row.code, f.row.severity)
        if f.fix == "safe" or (unsafe and f.fix):
            fixable[f.row.code] = True
    return [
        Stat(n, code, severity[code], fixable.get(code, False), info(code).summary or "")
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def statistics_text(stats: Sequence[Stat], style: Style) -> str:
    if not stats:
        return ""
    cw = max(len(str(s.count)) for s in stats)
    kw = max(len(s.code) for s in stats)
    sw = max(len(s.severity) for s in stats)
    lines = []
    for s in stats:
        sev = style.severity(f"{s.severity:<{sw}}", s.severity)
        mark = "[*]" if s.fixable else "   "
        lines.append(f"{s.count:>{cw}}  {s.code:<{kw}}  {sev}  {mark} {s.summary}".rstrip())
    return "\n".join(lines) + "\n"


def statistics_json(stats: Sequence[Stat]) -> list[dict[str, object]]:
    return [dataclasses.asdict(s) for s in stats]


# ---------------------------------------------------------------------------------------
# Machine formats


def github(rows: Sequence[Row]) -> str:
    out = []
    for row in rows:
        level = {"error": "error", "warning": "warning"}.get(row.severity, "notice")
        msg = row.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        out.append(
            f"::{level} file={row.path},line={row.line},col={row.column},"
            f"endLine={row.end_line},endColumn={row.end_column},"
            f"title={row.code}::{msg}\n"
        )
    return "".join(out)


def _level(severity: str) -> str:
    return {"error": "error", "warning": "warning"}.get(severity, "note")


FINGERPRINT_KEY = "mantleFingerprint/v1"


_REGION = ("startLine", "startColumn", "endLine", "endColumn")


def _physical(
    r: Row | RelatedRow, index: LineIndex | None, rng: TextRange | None
) -> dict[str, object]:
    """A SARIF location; columns in UTF-16 code units (the run's ``columnKind``, what
    GitHub code scanning reads), converted by the file's index."""
    if index is not None and rng is not None:
        (sl, sc), (el, ec) = index.utf16_position(rng.start), index.utf16_position(rng.end)
        region = (sl + 1, sc + 1, el + 1, ec + 1)
    else:  # a file that could not be read: line 1, column 1 (no characters to count)
        region = (r.line, r.column, r.end_line, r.end_column)
    return {
        "artifactLocation": {"uri": r.path.replace(os.sep, "/")},
        "region": dict(zip(_REGION, region, strict=True)),
    }


def _related_at(f: Finding, i: int) -> tuple[LineIndex | None, TextRange | None]:
    return f.related_at[i] if i < len(f.related_at) else (None, None)


def _rule(code: str, docs: str | None) -> dict[str, object]:
    """A SARIF rule: the code's summary, its explanation (the page's "What it means"), and
    with a documentation address, the address of its page."""
    from .code_docs import explanation

    c = info(code)
    rule: dict[str, object] = {
        "id": code,
        "shortDescription": {"text": c.summary or code},
    }
    full = explanation(code)
    if full is not None:
        rule["fullDescription"] = full
    if docs and full is not None:
        rule["helpUri"] = page_address(docs, code)
    rule["defaultConfiguration"] = {"level": _level(c.severity)}
    return rule


def page_address(docs: str, code: str) -> str:
    """The address of a code's page on the documentation site at ``docs`` (mkdocs.yml:
    ``diagnostics/<code>.html``)."""
    return f"{docs.rstrip('/')}/diagnostics/{code}.html"


def sarif(findings: Sequence[Finding], docs: str | None = None) -> dict[str, object]:
    """SARIF 2.1.0. ``docs``: the documentation site's address (each rule's ``helpUri``
    and the driver's ``informationUri``), or None."""
    rows = [f.row for f in findings]
    rules = [_rule(code, docs) for code in sorted({r.code for r in rows})]
    # Identical fingerprints in one file get their occurrence number (as CodeQL's
    # primaryLocationLineHash does), so each result keeps its own alert.
    from .fingerprint import occurrences

    nth = occurrences([(f.row.path, f.row.code, f.fingerprint_v1) for f in findings])
    results = [
        {
            "ruleId": r.code,
            "level": _level(r.severity),
            "message": {"text": r.message},
            **({"properties": {"engine_code": r.engine_code}} if r.engine_code else {}),
            "partialFingerprints": {FINGERPRINT_KEY: f"{f.fingerprint_v1}:{n}"},
            "locations": [{"physicalLocation": _physical(r, f.index, f.diag.range)}],
            **(
                {
                    "relatedLocations": [
                        {
                            "id": i,
                            "physicalLocation": _physical(x, *_related_at(f, i)),
                            "message": {"text": x.message},
                        }
                        for i, x in enumerate(r.related)
                    ]
                }
                if r.related
                else {}
            ),
        }
        for f, r, n in zip(findings, rows, nth, strict=True)
    ]
    driver: dict[str, object] = {"name": "mantle-lsp", "version": __version__}
    if docs:
        driver["informationUri"] = docs
    driver["rules"] = rules
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "utf16CodeUnits",
                "results": results,
            }
        ],
    }


def dump_json(value: object, out: IO[str]) -> None:
    out.write(json.dumps(value, indent=2, ensure_ascii=False))
    out.write("\n")


def finding_json(f: Finding, docs: str | None) -> dict[str, object]:
    """One finding in the ``json`` and ``json-lines`` formats: its row, the fix ``--fix``
    applies to it (None when it has none), and the address of its code's page (None
    without a documentation address, or for a code without a page)."""
    out = f.row.as_json()
    out["fix"] = f.fix_detail
    out["url"] = _page_of(f.row.code, docs)
    return out


@functools.lru_cache(maxsize=512)
def _page_of(code: str, docs: str | None) -> str | None:
    if not docs:
        return None
    from .code_docs import load_page

    return page_address(docs, code) if load_page(code) is not None else None


def json_lines(findings: Sequence[Finding], docs: str | None) -> str:
    """One compact JSON object per line (the ``json`` format's objects)."""
    return "".join(json.dumps(finding_json(f, docs), ensure_ascii=False) + "\n" for f in findings)


def pylint(rows: Sequence[Row]) -> str:
    """``path:line: [code] message``, the form pylint's parsers read (as ruff writes it)."""
    return "".join(f"{r.path}:{r.line}: [{r.code}] {_one_line(r.message)}\n" for r in rows)


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


GITLAB_SEVERITY = {"error": "critical", "warning": "major", "information": "minor", "hint": "info"}


def gitlab(findings: Sequence[Finding], project_dir: str | None) -> list[dict[str, object]]:
    """A GitLab Code Quality report: paths relative to ``project_dir`` (GitLab's
    ``CI_PROJECT_DIR``) when given, a fingerprint unique to each finding (its
    :func:`~.fingerprint.fingerprint`, its file and its occurrence number), the severity
    mapped to GitLab's."""
    import hashlib

    from .fingerprint import occurrences

    paths = [_gitlab_path(f, project_dir) for f in findings]
    nth = occurrences(
        [(p, f.row.code, f.fingerprint) for p, f in zip(paths, findings, strict=True)]
    )
    out: list[dict[str, object]] = []
    for f, path, n in zip(findings, paths, nth, strict=True):
        r = f.row
        key = "\0".join((path, r.code, f.fingerprint, str(n)))
        out.append(
            {
                "description": f"{r.code}: {r.message}",
                "check_name": r.code,
                "fingerprint": hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest(),
                "severity": GITLAB_SEVERITY.get(r.severity, "info"),
                "location": {"path": path, "lines": {"begin": r.line, "end": r.end_line}},
            }
        )
    return out


def _gitlab_path(f: Finding, project_dir: str | None) -> str:
    if project_dir:
        try:
            rel = os.path.relpath(f.diag.path, project_dir)
        except ValueError:
            rel = ""
        if rel and not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return f.row.path.replace(os.sep, "/")


def junit(findings: Sequence[Finding]) -> str:
    """JUnit XML (CI systems show it as test results): one test suite per file, one failed
    test case per finding (its code, line and column; the failure's type is its
    severity); one passing case when there is nothing to report."""
    from xml.sax.saxutils import quoteattr

    def attr(text: str) -> str:
        return quoteattr(safe_xml(text))

    by_file: dict[str, list[Row]] = {}
    for f in findings:
        by_file.setdefault(f.row.path, []).append(f.row)
    n = len(findings)
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    out.append(f'<testsuites name="mantle-lsp" tests="{max(n, 1)}" failures="{n}" errors="0">')
    if not by_file:
        out.append(
            '    <testsuite name="mantle-lsp" tests="1" disabled="0" errors="0" failures="0">'
        )
        out.append('        <testcase name="mantle-lsp" classname="mantle-lsp"/>')
        out.append("    </testsuite>")
    for path, rows in by_file.items():
        out.append(
            f'    <testsuite name={attr(path)} tests="{len(rows)}" disabled="0" '
            f'errors="0" failures="{len(rows)}" package="mantle-lsp">'
        )
        classname = attr(path.replace("\\", "/").rsplit(".", 1)[0].replace("/", "."))
        for r in rows:
            text = f"line {r.line}, col {r.column}, {r.message}"
            out.append(
                f"        <testcase name={attr(r.code)} classname={classname} "
                f'line="{r.line}" column="{r.column}">'
            )
            out.append(
                f"            <failure message={attr(r.message)} type={attr(r.severity)}>"
                f"{escape_xml(text)}</failure>"
            )
            out.append("        </testcase>")
        out.append("    </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def safe_xml(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold (most control characters, lone
    surrogates) replaced by U+FFFD."""
    return _XML_BAD.sub("\ufffd", text)


def escape_xml(text: str) -> str:
    from xml.sax.saxutils import escape

    return escape(safe_xml(text))
