"""End to end: the server reads the same configuration file as `check`, reloads it when it
changes on disk (republishing what it changes), reports a malformed one on the file, and
applies inline suppressions."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from test_lsp_support import copy_telecom, lsp_session, uri, vscode_capabilities

pytestmark = pytest.mark.timeout(30)

UNKNOWN_KEY = "mantle.validation.prose.unknown_memory_key"
INVALID = "lsp.config.invalid_settings_file"


def changed(
    path: Path, kind: lsp.FileChangeType = lsp.FileChangeType.Changed
) -> lsp.DidChangeWatchedFilesParams:
    return lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri(path), type=kind)])


async def test_a_config_file_change_is_picked_up_and_diagnostics_follow(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory = root / "memory.yml"
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("customer_tier:", "tier:"), "utf-8"
    )
    skill = root / "skills" / "bill_dispute" / "skill.md"
    cfg = root / "mantle-lsp.toml"
    async with lsp_session(root) as s:
        globs = [
            w["globPattern"]
            for r in s.registrations
            if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
            for w in r.register_options["watchers"]  # type: ignore[index]
        ]
        assert {"**/pyproject.toml", "**/mantle-lsp.toml", "**/.mantle-lsp.toml"} <= set(globs)
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="the unknown key")
        # a new file ignores the prose codes: the skill's diagnostics go
        cfg.write_text('ignore = ["mantle.validation.prose"]\n', encoding="utf-8")
        s.client.workspace_did_change_watched_files(changed(cfg, lsp.FileChangeType.Created))
        await s.until(lambda: UNKNOWN_KEY not in s.codes(skill), what="ignored")
        # a malformed file: reported on the file and in a message; its valid keys apply
        cfg.write_text('ignore = ["mantle.validation.prose"]\nmin_severity = "hint"\n', "utf-8")
        s.client.workspace_did_change_watched_files(changed(cfg))
        (d,) = await s.until(lambda: s.diagnostics(cfg), what="the config diagnostic")
        assert d.code == INVALID and d.severity == lsp.DiagnosticSeverity.Error
        assert "unknown setting `min_severity`" in d.message
        assert d.range.start == lsp.Position(line=1, character=0)
        assert d.range.end == lsp.Position(line=1, character=len("min_severity"))
        said = (
            "mantle-lsp: mantle-lsp.toml:2:1: error: unknown setting `min_severity`; "
            "did you mean `min-severity`? (known: extend, select, extend-select, ignore, "
            "per-file-ignores, severity, fixable, extend-fixable, unfixable, exclude, "
            "extend-exclude, include, engine, min-severity, eval). "
            "Left out: `min_severity`; the file's other settings apply (`ignore`)."
        )
        await s.until(lambda: any(m.message.endswith(said[12:]) for m in s.client.messages))
        assert UNKNOWN_KEY not in s.codes(skill)
        # the same text stays in the log (VS Code's output channel)
        await s.until(lambda: any(m.endswith(said[12:]) for m in s.logs()), what="logged")
        # invalid TOML: the message says that nothing of the file applies, and nothing does
        cfg.write_text('ignore = ["mantle.validation.prose"\n', "utf-8")
        s.client.workspace_did_change_watched_files(changed(cfg))
        whole = "None of the file's settings apply until it is fixed: the defaults do."
        await s.until(lambda: any(m.message.endswith(whole) for m in s.client.messages))
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="the file no longer applies")
        assert not any("other settings apply" in m.message for m in s.client.messages[1:])
        # deleted: the diagnostics come back, the file's own are cleared
        cfg.unlink()
        s.client.workspace_did_change_watched_files(changed(cfg, lsp.FileChangeType.Deleted))
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="back")
        await s.until(lambda: s.diagnostics(cfg) == (), what="config cleared")


async def test_a_pyproject_table_and_the_editor_ignore_combine(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    agent = root / "agent.yml"
    agent.write_text(
        agent.read_text(encoding="utf-8") + "colour: blue  # mantle-lsp: ignore[lsp.flow]\n",
        "utf-8",
    )
    (root / "pyproject.toml").write_text(
        '[project]\nname = "telecom"\n\n[tool.mantle-lsp]\n'
        '[tool.mantle-lsp.per-file-ignores]\n"agent.yml" = ["lsp.config"]\n',
        encoding="utf-8",
    )
    config = {"mantle": {"diagnostics": {"ignore": ["lsp.suppression"]}}}
    async with lsp_session(root, configuration=config) as s:
        s.open(agent)
        await s.until(lambda: s.published_for(agent), what="agent.yml published")
        assert s.codes(agent) == []  # the file's per-file-ignores and the editor's ignore
        s.client.set_configuration({"mantle": {"diagnostics": {"ignore": []}}})
        s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        # the file still silences lsp.config in agent.yml; the suppression's hint is back
        await s.until(lambda: s.codes(agent) == ["lsp.suppression.unused"], what="the hint")


async def test_the_server_applies_inline_suppressions(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    agent = root / "agent.yml"
    agent.write_text(
        agent.read_text(encoding="utf-8")
        + "colour: blue  # mantle-lsp: ignore[lsp.config.ignored_key]\n"
        + "size: 3\n"
        + "# mantle-lsp: ignore[lsp.condition]\n"
        + "shape: round\n",
        "utf-8",
    )
    async with lsp_session(root) as s:
        s.open(agent)
        await s.until(lambda: "lsp.suppression.unused" in s.codes(agent), what="the hint")
        got = {(str(d.code), d.range.start.line) for d in s.diagnostics(agent)}
        lines = agent.read_text(encoding="utf-8").splitlines()
        assert got == {
            ("lsp.config.ignored_key", lines.index("size: 3")),
            ("lsp.config.ignored_key", lines.index("shape: round")),
            ("lsp.suppression.unused", lines.index("# mantle-lsp: ignore[lsp.condition]")),
        }


async def test_include_indexes_named_nested_projects(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    nested = root / "tutorial" / "step1"
    (nested / "skills" / "hello").mkdir(parents=True)
    (nested / "agent.yml").write_text("agent:\n  id: t\nbogus_key: 1\n", "utf-8")
    (nested / "skills" / "hello" / "skill.md").write_text(
        "---\ndescription: Hi.\n---\nSay hi.\n", "utf-8"
    )
    (root / "mantle-lsp.toml").write_text('include = ["tutorial/*"]\n', "utf-8")
    async with lsp_session(root) as s:
        await s.until(
            lambda: "lsp.config.ignored_key" in s.codes(nested / "agent.yml"),
            what="the nested project's diagnostics",
        )


async def test_a_pulling_client_is_asked_to_pull_again(tmp_path: Path) -> None:
    root = copy_telecom(tmp_path)
    memory = root / "memory.yml"
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("customer_tier:", "tier:"), "utf-8"
    )
    skill = root / "skills" / "bill_dispute" / "skill.md"
    cfg = root / ".mantle-lsp.toml"

    async def pulled() -> set[str]:
        report = await s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=s.doc(skill))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        return {str(d.code) for d in report.items}

    async with lsp_session(root, capabilities=vscode_capabilities(pull=True)) as s:
        assert UNKNOWN_KEY in await pulled()
        refreshes = s.client.diagnostic_refresh_count
        cfg.write_text('[per-file-ignores]\n"skills/*/skill.md" = ["mantle"]\n', "utf-8")
        s.client.workspace_did_change_watched_files(changed(cfg, lsp.FileChangeType.Created))
        await s.until(lambda: s.client.diagnostic_refresh_count > refreshes, what="refresh")
        assert UNKNOWN_KEY not in await pulled()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("select = " + "[" * 700 + "]" * 700 + "\n", "invalid TOML: nested too deeply"),
        ('select = "lsp"\n', '`select` must be a list of strings (write ["lsp"])'),
    ],
    ids=["nested 700 deep", "a bare string"],
)
async def test_a_configuration_the_server_cannot_use_leaves_the_defaults(
    tmp_path: Path, text: str, why: str
) -> None:
    """A .mantle-lsp.toml nested 700 deep failed `initialized` and nothing was ever
    published; a bare string was taken as a list. The server goes on with the defaults
    and says why, naming the file."""
    root = copy_telecom(tmp_path)
    memory = root / "memory.yml"
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("customer_tier:", "tier:"), "utf-8"
    )
    skill = root / "skills" / "bill_dispute" / "skill.md"
    cfg = root / ".mantle-lsp.toml"
    cfg.write_text(text, encoding="utf-8")
    async with lsp_session(root) as s:
        await s.until(lambda: UNKNOWN_KEY in s.codes(skill), what="the skill's diagnostics")
        (d,) = await s.until(lambda: s.diagnostics(cfg), what="the config diagnostic")
        assert d.code == INVALID and why in d.message
        (msg,) = await s.until(
            lambda: [m.message for m in s.client.messages if ".mantle-lsp.toml" in m.message],
            what="a message naming the file",
        )
        assert why in msg
        assert msg.endswith(
            "None of the file's settings apply until it is fixed: the defaults do."
            if "nested" in why
            else "Left out: `select`; the file sets nothing else, so the defaults apply."
        )


async def test_the_severity_table_and_an_extended_file_apply_in_the_editor(
    tmp_path: Path,
) -> None:
    root = copy_telecom(tmp_path)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    skill.write_text(
        skill.read_text(encoding="utf-8") + "\nif: session.bill_dispute.reasn == 'x'\nSorry.\n",
        "utf-8",
    )
    base = tmp_path / "team-settings.toml"
    base.write_text(f'[severity]\n"{UNKNOWN_KEY}" = "warning"\n', encoding="utf-8")
    (root / "mantle-lsp.toml").write_text('extend = "../team-settings.toml"\n', "utf-8")

    def severity(s: object) -> set[lsp.DiagnosticSeverity | None]:
        return {d.severity for d in s.diagnostics(skill) if d.code == UNKNOWN_KEY}  # type: ignore[attr-defined]

    async with lsp_session(root) as s:
        globs = [
            w["globPattern"]
            for r in s.registrations
            if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
            for w in r.register_options["watchers"]  # type: ignore[index]
        ]
        assert "**/*.toml" in globs  # an extended file may have any name
        await s.until(
            lambda: severity(s) == {lsp.DiagnosticSeverity.Warning}, what="lowered to warning"
        )
        # the extended file changes: the server reads it again
        base.write_text(f'[severity]\n"{UNKNOWN_KEY}" = "error"\n', encoding="utf-8")
        s.client.workspace_did_change_watched_files(changed(base))
        await s.until(lambda: severity(s) == {lsp.DiagnosticSeverity.Error}, what="error again")
