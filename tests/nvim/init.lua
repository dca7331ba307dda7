-- End-to-end check of `mantle-lsp serve` with a real editor: Neovim (0.7 or later).
--
-- Run headless:  timeout 60 nvim --headless --clean -u tests/nvim/init.lua
-- Environment (set by tests/test_nvim.py):
--   MANTLE_LSP_CMD   JSON list: the server command, e.g. [".venv/bin/mantle-lsp", "serve"]
--   MANTLE_ROOT      the project folder (a copy of examples/telecom)
--   MANTLE_SKILL     a skill.md to open: its diagnostics and a completion after `session.`
--   MANTLE_RENAME    a memory.yml; MANTLE_RENAME_LINE / MANTLE_RENAME_COL (0-based) point at
--                    a field name there, MANTLE_RENAME_TO is the new name
--
-- Prints one machine-readable line per fact (for the pytest wrapper):
--   READY                            the server answered `initialize`
--   DIAG <relpath> <line> <code>     a diagnostic published for MANTLE_SKILL
--   DIAG_DONE <count>
--   COMPLETION <label>               an item offered after `session.` on an `if:` line
--   COMPLETION_DONE <count>
--   CODE_ACTION <title>             a code action for the first diagnostic of MANTLE_SKILL
--   CODE_ACTION_DONE <count>
--   RENAME <relpath> <edits>         a file touched by the rename's WorkspaceEdit
--   RENAME_DONE <files>
--   ERROR <message>                  then the script exits with status 1
--   DONE                             everything ran
-- `vim.lsp.start` does not exist in 0.7: start_client + buf_attach_client work everywhere.

local function out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

local function env(name)
  local v = os.getenv(name)
  if v == nil or v == '' then
    error('missing environment variable ' .. name)
  end
  return v
end

local function realpath(p)
  return vim.loop.fs_realpath(p) or p
end

local root = realpath(env('MANTLE_ROOT'))

local function rel(uri)
  local path = realpath(vim.uri_to_fname(uri))
  if path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return path
end

local published = {} -- uri -> list of diagnostics (the last publication)

local function run()
  local cmd = vim.fn.json_decode(env('MANTLE_LSP_CMD'))
  local skill = realpath(env('MANTLE_SKILL'))
  local client_id = vim.lsp.start_client({
    name = 'mantle-lsp',
    cmd = cmd,
    root_dir = root,
    handlers = {
      ['textDocument/publishDiagnostics'] = function(_, result)
        published[result.uri] = result.diagnostics
      end,
      -- the server may ask for the `mantle` settings: none are set here
      ['workspace/configuration'] = function(_, params)
        local items = {}
        for i = 1, #params.items do
          items[i] = vim.NIL
        end
        return items
      end,
    },
  })
  if client_id == nil then
    error('the server did not start: ' .. table.concat(cmd, ' '))
  end

  -- open the skill and attach the server to it
  vim.cmd('edit ' .. vim.fn.fnameescape(skill))
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, client_id)
  local ok = vim.wait(20000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return c ~= nil and c.initialized
  end, 20)
  if not ok then
    error('the server did not initialize within 20 s')
  end
  out('READY')

  -- diagnostics: wait for a publication for the skill that reports something
  local uri = vim.uri_from_bufnr(buf)
  local function skill_diags()
    for u, diags in pairs(published) do
      if realpath(vim.uri_to_fname(u)) == skill then
        return diags
      end
    end
    return nil
  end
  vim.wait(20000, function()
    local d = skill_diags()
    return d ~= nil and #d > 0
  end, 50)
  local diags = skill_diags() or {}
  for _, d in ipairs(diags) do
    out(string.format('DIAG %s %d %s', rel(uri), d.range.start.line, tostring(d.code)))
  end
  out('DIAG_DONE ' .. #diags)

  -- completion right after `session.` on the first `if:` line of the skill
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local line_no, col = nil, nil
  for i, text in ipairs(lines) do
    local s, e = text:find('^if:%s*session%.')
    if s ~= nil then
      line_no, col = i - 1, e
      break
    end
  end
  if line_no == nil then
    error('no `if: session.` line in ' .. skill)
  end
  local caps = vim.lsp.get_client_by_id(client_id).server_capabilities or {}
  for _, cap in ipairs({ 'completionProvider', 'renameProvider', 'codeActionProvider' }) do
    if not caps[cap] then
      error('the server does not announce ' .. cap)
    end
  end
  local res, err = vim.lsp.buf_request_sync(buf, 'textDocument/completion', {
    textDocument = { uri = uri },
    position = { line = line_no, character = col },
    context = { triggerKind = 2, triggerCharacter = '.' },
  }, 10000)
  if res == nil then
    error('completion failed: ' .. tostring(err))
  end
  local count = 0
  for _, r in pairs(res) do
    if r.err ~= nil then
      error('completion error: ' .. vim.inspect(r.err))
    end
    local items = r.result and (r.result.items or r.result) or {}
    for _, item in ipairs(items) do
      out('COMPLETION ' .. item.label)
      count = count + 1
    end
  end
  out('COMPLETION_DONE ' .. count)

  -- code actions for the first diagnostic of the skill
  if #diags > 0 then
    local d = diags[1]
    local ares, aerr = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', {
      textDocument = { uri = uri },
      range = d.range,
      context = { diagnostics = { d } },
    }, 10000)
    if ares == nil then
      error('code actions failed: ' .. tostring(aerr))
    end
    local n = 0
    for _, r in pairs(ares) do
      if r.err ~= nil then
        error('code action error: ' .. vim.inspect(r.err))
      end
      for _, action in ipairs(r.result or {}) do
        local pref = action.isPreferred and ' (preferred)' or ''
        out('CODE_ACTION ' .. action.title .. pref)
        n = n + 1
      end
    end
    out('CODE_ACTION_DONE ' .. n)
  end

  -- rename a memory field where it is declared
  local memory = realpath(env('MANTLE_RENAME'))
  vim.cmd('edit ' .. vim.fn.fnameescape(memory))
  local mbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(mbuf, client_id)
  local rres, rerr = vim.lsp.buf_request_sync(mbuf, 'textDocument/rename', {
    textDocument = { uri = vim.uri_from_bufnr(mbuf) },
    position = {
      line = tonumber(env('MANTLE_RENAME_LINE')),
      character = tonumber(env('MANTLE_RENAME_COL')),
    },
    newName = env('MANTLE_RENAME_TO'),
  }, 10000)
  if rres == nil then
    error('rename failed: ' .. tostring(rerr))
  end
  local files = 0
  for _, r in pairs(rres) do
    if r.err ~= nil then
      error('rename error: ' .. vim.inspect(r.err))
    end
    local edit = r.result or {}
    local per_file = {}
    for u, edits in pairs(edit.changes or {}) do
      per_file[u] = (per_file[u] or 0) + #edits
    end
    for _, change in ipairs(edit.documentChanges or {}) do
      if change.textDocument ~= nil then
        local u = change.textDocument.uri
        per_file[u] = (per_file[u] or 0) + #change.edits
      elseif change.kind ~= nil then
        out(string.format('RENAME_OP %s %s', change.kind, rel(change.oldUri or change.uri)))
      end
    end
    local names = {}
    for u, n in pairs(per_file) do
      table.insert(names, { rel(u), n })
    end
    table.sort(names, function(a, b)
      return a[1] < b[1]
    end)
    for _, f in ipairs(names) do
      out(string.format('RENAME %s %d', f[1], f[2]))
      files = files + 1
    end
  end
  out('RENAME_DONE ' .. files)

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 50)
  out('DONE')
end

local ok, err = pcall(run)
if not ok then
  out('ERROR ' .. tostring(err):gsub('\n', ' '))
  vim.cmd('cquit 1')
else
  vim.cmd('qa!')
end
