// Unit tests of the extension's pure helpers (src/text.ts), bundled with esbuild and run
// by `node --test` (`npm test`; `make client-check` runs them after tsc).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mantle-unit-')), 'text.mjs');
await build({ entryPoints: [path.join(here, '..', 'src', 'text.ts')], outfile: out, format: 'esm', platform: 'node', logLevel: 'warning' });
const { stderrLevel, exitSummary, toTerminal } = await import(out);

test('a server log record keeps its level in the output channel', () => {
  // what pygls logged for every cancelled pull (shown as 125 [error] lines before)
  const line = '2026-12-01 16:00:00,123 WARNING pygls.protocol.json_rpc: Cancel notification for unknown message id "7"';
  assert.equal(stderrLevel(line, undefined), 'warn');
  assert.equal(stderrLevel('2026-12-01 16:00:00,123 INFO mantle_lsp.lsp.base: indexed', 'warn'), 'info');
  assert.equal(stderrLevel('2026-12-01 16:00:00,123 DEBUG x: y', undefined), 'debug');
  assert.equal(stderrLevel('2026-12-01 16:00:00,123 ERROR mantle_lsp: boom', undefined), 'error');
  assert.equal(stderrLevel('CRITICAL:root:gone', undefined), 'error');
});

test('lines that start no record belong to the one before; a bare crash is an error', () => {
  assert.equal(stderrLevel('  File "x.py", line 3, in f', 'warn'), 'warn');
  assert.equal(stderrLevel('Traceback (most recent call last):', undefined), 'error');
  assert.equal(stderrLevel('a message that mentions ERROR later', 'info'), 'info');
});

test('the check terminal says what the exit status means; problems found are not a failure', () => {
  assert.equal(exitSummary(0, null), 'no errors (exit status 0)');
  assert.equal(exitSummary(1, null), 'errors found (exit status 1)');
  assert.match(exitSummary(2, null), /could not run/);
  assert.match(exitSummary(null, 'SIGTERM'), /stopped \(SIGTERM\)/);
  assert.equal(toTerminal('a\nb\r\nc'), 'a\r\nb\r\nc');
});
