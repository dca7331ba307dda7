"""The editor snippets of docs/editors.md, each checked against its editor's documented
format: the Neovim 0.7 one runs in the real headless Neovim (the one tests/test_nvim.py
drives) against the server; every Neovim snippet is compiled by Neovim's LuaJIT and uses
only documented API names; Helix's and Zed's TOML and JSON parse and use only the keys
those editors document; the Emacs form reads as one balanced `add-to-list` on
`eglot-server-programs`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "editors.md"
NVIM = shutil.which("nvim")
PLACEHOLDER = "/path/to/venv/bin/mantle-lsp"

needs_nvim = pytest.mark.skipif(
    NVIM is None, reason="Neovim (`nvim`) is not installed; `make nvim` installs it"
)


def snippets() -> list[tuple[str, str, str]]:
    """(the `##`/`###` heading above, the fence's language, the code) for each fence."""
    found: list[tuple[str, str, str]] = []
    heading = ""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("```"):
            lang = line[3:].strip()
            end = lines.index("```", i + 1)
            found.append((heading, lang, "\n".join(lines[i + 1 : end]) + "\n"))
            i = end
        i += 1
    return found


def snippet(heading_start: str, lang: str, nth: int = 0) -> str:
    codes = [c for h, lg, c in snippets() if h.startswith(heading_start) and lg == lang]
    assert len(codes) > nth, f"no ```{lang} snippet #{nth} under a heading {heading_start!r}"
    return codes[nth]


def lua_snippets() -> dict[str, str]:
    return {h: c for h, lg, c in snippets() if lg == "lua"}


# ---- Neovim ---------------------------------------------------------------------------

# The Lua API each snippet may use, by the Neovim version its heading names: the names in
# `:help lua` / `:help lsp` of that version (Neovim's runtime/doc/lua.txt and lsp.txt).
NVIM_API = {
    "0.7": {
        "vim.api.nvim_create_autocmd",
        "vim.api.nvim_buf_get_name",
        "vim.fn.fnamemodify",
        "vim.fn.findfile",
        "vim.lsp.start_client",
        "vim.lsp.buf_attach_client",
    },
    # 0.8: vim.lsp.start, vim.fs.find and vim.fs.dirname
    "0.8": {"vim.lsp.start", "vim.fs.find", "vim.fs.dirname"},
    # 0.10: vim.fs.root; 0.11: vim.lsp.config (a function and a table) and vim.lsp.enable
    "0.11": {"vim.lsp.config", "vim.lsp.enable", "vim.fs.root"},
}
# `:help vim.lsp.ClientConfig` (0.7: the parameters of vim.lsp.start_client) and, from
# 0.11, `:help vim.lsp.Config` (the client fields plus filetypes, root_markers, root_dir
# as a function, reuse_client)
CLIENT_FIELDS = {
    "cmd",
    "cmd_cwd",
    "cmd_env",
    "name",
    "root_dir",
    "settings",
    "init_options",
    "capabilities",
    "handlers",
    "workspace_folders",
    "on_attach",
    "on_init",
    "on_exit",
    "before_init",
    "flags",
}
CONFIG_FIELDS_011 = CLIENT_FIELDS | {"filetypes", "root_markers", "reuse_client"}


def api_names(code: str) -> set[str]:
    return set(re.findall(r"\bvim(?:\.[A-Za-z_]\w*)+(?=\s*[({'])", code))


def table_keys(code: str, call: str) -> set[str]:
    """The top-level keys of the table literal passed to `call(...)`."""
    start = code.index(call)
    body = code[code.index("{", start) + 1 :]
    depth, keys = 0, set()
    for line in body.splitlines():
        if depth == 0:
            m = re.match(r"\s*([A-Za-z_]\w*)\s*=", line)
            if m:
                keys.add(m.group(1))
        depth += line.count("{") - line.count("}")
        depth += line.count("(") - line.count(")")
        if depth < 0:
            break
    return keys


def versions_up_to(version: str) -> set[str]:
    order = ["0.7", "0.8", "0.11"]
    names: set[str] = set()
    for v in order[: order.index(version) + 1]:
        names |= NVIM_API[v]
    return names


def test_each_neovim_version_has_its_snippet() -> None:
    headings = list(lua_snippets())
    assert any("0.11" in h and "vim.lsp.config" in h for h in headings), headings
    assert any("0.8" in h and "vim.lsp.start" in h for h in headings), headings
    assert any("0.7" in h and "vim.lsp.start_client" in h for h in headings), headings


def test_neovim_snippets_use_only_the_api_of_their_version() -> None:
    for heading, code in lua_snippets().items():
        version = "0.11" if "0.11" in heading else "0.8" if "0.8" in heading else "0.7"
        used = api_names(code)
        assert used <= versions_up_to(version), (heading, sorted(used - versions_up_to(version)))
        assert PLACEHOLDER in code and "'serve'" in code, heading


def test_neovim_client_tables_use_documented_fields() -> None:
    snips = lua_snippets()
    (v011,) = [c for h, c in snips.items() if "0.11" in h]
    keys = table_keys(v011, "vim.lsp.config(")
    assert {"cmd", "filetypes", "root_dir"} <= keys <= CONFIG_FIELDS_011, keys
    assert "vim.lsp.enable('mantle_lsp')" in v011
    assert "vim.lsp.config('mantle_lsp'," in v011
    # the function form of root_dir takes (bufnr, on_dir) and calls on_dir with the root
    assert "root_dir = function(bufnr, on_dir)" in v011 and "on_dir(root)" in v011
    (v08,) = [c for h, c in snips.items() if "0.8" in h]
    assert {"name", "cmd", "root_dir"} == table_keys(v08, "vim.lsp.start(") <= CLIENT_FIELDS
    (v07,) = [c for h, c in snips.items() if "0.7" in h]
    keys07 = table_keys(v07, "vim.lsp.start_client(")
    assert {"name", "cmd", "root_dir"} == keys07 <= CLIENT_FIELDS


def settings_example() -> str:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"`(settings = \{ mantle = .*?\})`", text)
    assert m, "the Neovim settings example is gone"
    return m.group(1)


def nvim_run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert NVIM is not None
    return subprocess.run(
        ["timeout", "90", NVIM, "--headless", "--clean", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_nvim
def test_neovim_compiles_every_lua_snippet(tmp_path: Path) -> None:
    """Neovim's own LuaJIT parses each snippet (and the settings example) — syntax only,
    nothing runs, so the 0.8 and 0.11 snippets are checked on the apt Neovim too."""
    files = []
    for i, code in enumerate([*lua_snippets().values(), f"local t = {{ {settings_example()} }}"]):
        path = tmp_path / f"snippet{i}.lua"
        path.write_text(code, encoding="utf-8")
        files.append(str(path))
    check = tmp_path / "check.lua"
    check.write_text(
        "for _, f in ipairs(vim.split(os.getenv('SNIPPETS'), '\\n')) do\n"
        "  local fn, err = loadfile(f)\n"
        "  io.stdout:write((fn and 'OK ' or 'ERROR ') .. f .. ' ' .. tostring(err) .. '\\n')\n"
        "end\n",
        encoding="utf-8",
    )
    proc = nvim_run(
        ["-u", "NONE", "-c", f"luafile {check}", "-c", "qa!"],
        {"SNIPPETS": "\n".join(files)},
        tmp_path,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == len(files), proc
    assert all(line.startswith("OK ") for line in lines), lines


def server_command_lua() -> str:
    script = Path(sys.executable).parent / "mantle-lsp"
    if script.exists():
        parts = [str(script), "serve"]
    else:
        code = "import sys; from mantle_lsp.cli.main import main; sys.exit(main())"
        parts = [sys.executable, "-c", code, "serve"]
    return "{ " + ", ".join(json.dumps(p) for p in parts) + " }"


DRIVER = r"""
local function out(s) io.stdout:write(s .. '\n'); io.stdout:flush() end
local function ids(buf)
  local list = {}
  for id, _ in pairs(vim.lsp.buf_get_clients(buf)) do list[#list + 1] = tostring(id) end
  table.sort(list)
  return table.concat(list, ',')
end
local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('MANTLE_SKILL')))
  local skill = vim.api.nvim_get_current_buf()
  -- the client is listed for the buffer once it has initialized
  vim.wait(30000, function() return #vim.diagnostic.get(skill) > 0 end, 50)
  out('SKILL ' .. vim.bo.filetype .. ' ' .. ids(skill))
  for _, d in ipairs(vim.diagnostic.get(skill)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
    out('DIAG ' .. d.lnum .. ' ' .. tostring(code))
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('MANTLE_MEMORY')))
  out('MEMORY ' .. vim.bo.filetype .. ' ' .. ids(vim.api.nvim_get_current_buf()))
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('MANTLE_OUTSIDE')))
  out('OUTSIDE ' .. vim.bo.filetype .. ' ' .. ids(vim.api.nvim_get_current_buf()))
  out('CLIENTS ' .. #vim.lsp.get_active_clients())
end)
if not ok then out('ERROR ' .. tostring(err)) end
out('DONE')
vim.cmd('qa!')
"""


@needs_nvim
def test_neovim_07_snippet_starts_the_server_for_project_files_only(tmp_path: Path) -> None:
    """The 0.7 snippet as a user's init.lua (only the server path replaced): opening a
    skill starts the server and shows its diagnostics; a memory.yml of the same project
    joins the same client; a Markdown file outside any project gets none."""
    (code,) = [c for h, c in lua_snippets().items() if "0.7" in h]
    placeholder = "{ '/path/to/venv/bin/mantle-lsp', 'serve' }"
    assert code.count(placeholder) == 1
    init = tmp_path / "init.lua"
    init.write_text(code.replace(placeholder, server_command_lua()), encoding="utf-8")
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER, encoding="utf-8")

    root = tmp_path / "telecom"
    shutil.copytree(REPO / "examples" / "telecom", root)
    skill = root / "skills" / "bill_dispute" / "skill.md"
    text = skill.read_text(encoding="utf-8")
    planted = "if: session.roaming_pass.pass_active == True"
    assert planted in text
    skill.write_text(text.replace(planted, planted.replace("pass_active", "pass_activ"), 1))
    planted_line = text[: text.index(planted)].count("\n")
    outside = tmp_path / "notes" / "README.md"
    outside.parent.mkdir()
    outside.write_text("# Notes\n\nNot a Mantle project.\n", encoding="utf-8")

    proc = nvim_run(
        ["-u", str(init), "-c", f"luafile {driver}"],
        {
            "MANTLE_SKILL": str(skill),
            "MANTLE_MEMORY": str(root / "skills" / "roaming_pass" / "memory.yml"),
            "MANTLE_OUTSIDE": str(outside),
        },
        tmp_path,
    )
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    assert lines and lines[-1] == "DONE", report
    assert not [line for line in lines if line.startswith("ERROR")], report
    facts = {line.split()[0]: line.split()[1:] for line in lines}
    assert facts["SKILL"][0] == "markdown" and len(facts["SKILL"]) == 2, report
    client = facts["SKILL"][1]
    assert [str(planted_line), "mantle.validation.prose.unknown_memory_key"] in [
        line.split()[1:] for line in lines if line.startswith("DIAG ")
    ], report
    assert facts["MEMORY"] == ["yaml", client], report
    assert facts["OUTSIDE"] == ["markdown"], report
    assert facts["CLIENTS"] == ["1"], report


# ---- Helix ------------------------------------------------------------------------------

# docs.helix-editor.com/languages.html: the keys of a `[language-server.<name>]` table and
# those of a `[[language]]` entry
HELIX_SERVER_KEYS = {
    "command",
    "args",
    "config",
    "timeout",
    "environment",
    "required-root-patterns",
}
HELIX_LANGUAGE_KEYS = {
    "name",
    "language-id",
    "scope",
    "injection-regex",
    "file-types",
    "shebangs",
    "roots",
    "auto-format",
    "diagnostic-severity",
    "comment-tokens",
    "block-comment-tokens",
    "indent",
    "language-servers",
    "grammar",
    "formatter",
    "soft-wrap",
    "text-width",
    "rulers",
    "workspace-lsp-roots",
    "persistent-diagnostic-sources",
}


def test_helix_languages_toml() -> None:
    doc = tomllib.loads(snippet("Helix", "toml"))
    server = doc["language-server"]["mantle-lsp"]
    assert set(server) <= HELIX_SERVER_KEYS, set(server)
    assert server["command"] == PLACEHOLDER and server["args"] == ["serve"]
    # Helix matches these against the names of the entries of the root folder
    assert all("/" not in p for p in server["required-root-patterns"])
    languages = doc["language"]
    assert {lang["name"] for lang in languages} == {"markdown", "yaml", "python"}
    for lang in languages:
        assert set(lang) <= HELIX_LANGUAGE_KEYS, set(lang)
        assert lang["language-servers"][0] == "mantle-lsp", lang
        assert lang["roots"] == server["required-root-patterns"], lang


def test_helix_config_example_is_toml() -> None:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"`(config = \{ mantle = .*?\})`", text)
    assert m
    assert tomllib.loads(m.group(1)) == {
        "config": {"mantle": {"diagnostics": {"ignore": ["lsp.legacy.syntax"]}}}
    }


# ---- Zed --------------------------------------------------------------------------------

# zed.dev/docs/extensions: extension.toml's fields and a `[language_servers.<id>]` entry;
# Markdown, YAML and Python are Zed's names for the built-in languages
ZED_EXTENSION_KEYS = {
    "id",
    "name",
    "version",
    "schema_version",
    "authors",
    "description",
    "repository",
    "language_servers",
    "grammars",
}
ZED_LANGUAGES = {"Markdown", "YAML", "Python"}
# zed.dev/docs/configuring-languages: `lsp.<id>` takes binary (path, arguments, env),
# settings and initialization_options
ZED_LSP_KEYS = {"binary", "settings", "initialization_options"}
ZED_BINARY_KEYS = {"path", "arguments", "env", "ignore_system_version"}


def test_zed_extension_toml() -> None:
    ext = tomllib.loads(snippet("Zed", "toml"))
    assert set(ext) <= ZED_EXTENSION_KEYS, set(ext)
    assert ext["schema_version"] == 1
    (server_id,) = ext["language_servers"]
    assert server_id == "mantle-lsp"
    assert set(ext["language_servers"][server_id]["languages"]) == ZED_LANGUAGES


def test_zed_extension_code_names_the_extension_api() -> None:
    rust = snippet("Zed", "rust")
    for name in (
        "fn language_server_command(",
        "fn language_server_workspace_configuration(",
        "zed::register_extension!(Mantle);",
        "LspSettings::for_worktree(",
        'worktree.which("mantle-lsp")',
        'vec!["serve".into()]',
    ):
        assert name in rust, name
    assert rust.count("{") == rust.count("}") and rust.count("(") == rust.count(")")


def test_zed_settings_json() -> None:
    settings = json.loads(snippet("Zed", "json"))
    assert set(settings) == {"lsp", "languages"}
    server = settings["lsp"]["mantle-lsp"]
    assert set(server) <= ZED_LSP_KEYS
    assert set(server["binary"]) <= ZED_BINARY_KEYS
    assert server["binary"] == {"path": PLACEHOLDER, "arguments": ["serve"]}
    assert set(settings["languages"]) == ZED_LANGUAGES
    for lang in settings["languages"].values():
        assert set(lang) == {"language_servers"}
        assert "mantle-lsp" in lang["language_servers"] and "..." in lang["language_servers"]


# ---- Emacs ------------------------------------------------------------------------------


def read_sexps(text: str) -> list[object]:
    """A reader for the Lisp the snippet uses: lists, dotted pairs, strings, symbols,
    quote (`'x` -> ["quote", x]) and `#'` function quotes; `;` comments."""
    tokens = re.findall(
        r"""("(?:\\.|[^"\\])*")|(#'|'|\(|\)|\[|\])|;[^\n]*|([^\s()'";\[\]]+)""", text
    )
    pos = 0

    def read() -> object:
        nonlocal pos
        while pos < len(tokens) and not any(tokens[pos]):
            pos += 1
        string, punct, atom = tokens[pos]
        pos += 1
        if string:
            return json.loads(string)
        if punct in ("'", "#'"):
            return ["quote", read()]
        if punct in ("(", "["):
            close = ")" if punct == "(" else "]"
            items: list[object] = []
            while True:
                while pos < len(tokens) and not any(tokens[pos]):
                    pos += 1
                if pos >= len(tokens):
                    raise ValueError("unbalanced: missing " + close)
                if tokens[pos][1] == close:
                    pos += 1
                    return items
                items.append(read())
        if punct in (")", "]"):
            raise ValueError("unbalanced: unexpected " + punct)
        return atom

    forms = []
    while True:
        while pos < len(tokens) and not any(tokens[pos]):
            pos += 1
        if pos >= len(tokens):
            return forms
        forms.append(read())


def test_emacs_eglot_form() -> None:
    (form,) = read_sexps(snippet("Emacs", "elisp"))
    assert isinstance(form, list) and form[:2] == ["with-eval-after-load", ["quote", "eglot"]]
    (call,) = form[2:]
    assert isinstance(call, list) and call[:2] == [
        "add-to-list",
        ["quote", "eglot-server-programs"],
    ]
    quote, entry = call[2]
    assert quote == "quote" and isinstance(entry, list)
    # (MAJOR-MODES . CONTACT): a list of modes, a dot, the program and its arguments
    modes, dot, contact = entry
    assert dot == "."
    assert isinstance(modes, list) and "markdown-mode" in modes and "yaml-mode" in modes
    assert contact == [PLACEHOLDER, "serve"]


def test_emacs_workspace_configuration_example_is_balanced() -> None:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"`(\(\(nil \. \(\(eglot-workspace-configuration .*?\)\)\)\))`", text)
    assert m, "the .dir-locals.el example is gone"
    (form,) = read_sexps(m.group(1))
    assert isinstance(form, list) and form[0][0] == "nil"


def test_the_reader_rejects_unbalanced_forms() -> None:
    with pytest.raises(ValueError):
        read_sexps("(add-to-list 'eglot-server-programs '((a) . (\"x\"))")
    with pytest.raises(ValueError):
        read_sexps("(a))")
