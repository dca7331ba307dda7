// Unit tests of the extension's pure helpers (src/text.ts, src/trust.ts, src/graphModel.ts), bundled with
// esbuild and run by `node --test` (`npm test`; `make client-check` runs them after tsc).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mantle-unit-'));
async function load(name) {
  const out = path.join(outDir, `${name}.mjs`);
  await build({ entryPoints: [path.join(here, '..', 'src', `${name}.ts`)], outfile: out, format: 'esm', platform: 'node', logLevel: 'warning' });
  return import(out);
}
const { stderrLevel, exitSummary, toTerminal } = await load('text');
const { folderHolding, whichProgram, untrustedReason } = await load('trust');
const { targetOf, nodeAt, lensesOf, skillOfPath } = await load('graphModel');

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

// ---- workspace trust (src/trust.ts) ------------------------------------------------------
/** A workspace `ws` with a planted `.venv/bin/python`, links to and from it, a neighbour. */
function plantedWorkspace() {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mantle-trust-')));
  const ws = path.join(tmp, 'ws');
  const bin = path.join(ws, '.venv', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const python = path.join(bin, 'python');
  fs.writeFileSync(python, '#!/bin/sh\n', { mode: 0o755 });
  const outside = path.join(tmp, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'python3'), '#!/bin/sh\n', { mode: 0o755 });
  fs.symlinkSync(python, path.join(outside, 'python-link')); // outside, leading inside
  fs.symlinkSync(ws, path.join(tmp, 'ws-link')); // the folder opened through a link
  fs.symlinkSync(path.join(outside, 'python3'), path.join(bin, 'python3')); // a venv's usual link out
  fs.mkdirSync(path.join(tmp, 'ws2'));
  fs.writeFileSync(path.join(tmp, 'ws2', 'python'), '', { mode: 0o755 });
  return { tmp, ws, bin, python, outside };
}

test('a program inside a workspace folder is found, links resolved on both sides', () => {
  const { tmp, ws, bin, python, outside } = plantedWorkspace();
  assert.equal(folderHolding(python, [ws]), ws);
  // a link outside the folder that leads to the planted program
  assert.equal(folderHolding(path.join(outside, 'python-link'), [ws]), ws);
  // the folder opened through a link, the program named by its real path, and the reverse
  assert.equal(folderHolding(python, [path.join(tmp, 'ws-link')]), path.join(tmp, 'ws-link'));
  assert.equal(folderHolding(path.join(tmp, 'ws-link', '.venv', 'bin', 'python'), [ws]), ws);
  // a venv's bin/python3 links to a Python outside, but run by this path it loads the
  // folder's site-packages: the path as given counts
  assert.equal(folderHolding(path.join(bin, 'python3'), [ws]), ws);
  // outside, a neighbour whose name starts like the folder's, the folder itself
  assert.equal(folderHolding(path.join(outside, 'python3'), [ws]), undefined);
  assert.equal(folderHolding(path.join(tmp, 'ws2', 'python'), [ws]), undefined);
  assert.equal(folderHolding(ws, [ws]), undefined);
  assert.equal(folderHolding('/usr/bin/python3', [ws]), undefined);
});

test('case does not hide a program on case-insensitive systems', () => {
  const host = { platform: 'darwin', realpath: () => { throw new Error('no such file'); } };
  assert.equal(folderHolding('/Users/me/Proj/.venv/bin/python', ['/users/me/proj'], host), '/users/me/proj');
  assert.equal(folderHolding('/Users/me/Proj/.venv/bin/python', ['/users/me/proj'], { ...host, platform: 'linux' }), undefined);
});

test('a bare name is the program PATH finds: a PATH entry inside the folder counts', () => {
  const { ws, bin, outside } = plantedWorkspace();
  assert.equal(whichProgram('python', `${outside}:${bin}`, '/'), path.join(bin, 'python'));
  assert.equal(whichProgram('python3', `${outside}:${bin}`, '/'), path.join(outside, 'python3'));
  assert.equal(whichProgram('python3', `.venv/bin:${outside}`, ws), path.join(bin, 'python3')); // relative entry
  assert.equal(whichProgram('no-such-python', bin, '/'), undefined);
  assert.equal(whichProgram('./x/python', '', '/'), './x/python');
});

test('untrusted: a program inside the workspace is skipped, with a reason to log; trusted: it runs', () => {
  const { ws, bin, python, outside } = plantedWorkspace();
  const why = untrustedReason(python, "the Python extension's interpreter", false, [ws], '', '/');
  assert.match(why, /^skipped the Python extension's interpreter .*\.venv\/bin\/python: it is inside the workspace folder /);
  assert.match(why, /not trusted \(Restricted Mode\)/);
  assert.equal(untrustedReason(python, 'x', true, [ws], '', '/'), undefined); // trusted
  assert.equal(untrustedReason(path.join(outside, 'python3'), 'x', false, [ws], '', '/'), undefined);
  // a bare name PATH resolves inside the folder (a venv activated in the shell that started VS Code)
  assert.match(untrustedReason('python3', 'the Python', false, [ws], `${bin}:${outside}`, '/'), /python3 \(.*\.venv\/bin\/python3\)/);
  assert.equal(untrustedReason('python3', 'the Python', false, [ws], `${outside}:${bin}`, '/'), undefined);
  assert.equal(untrustedReason(python, 'x', false, [], '', '/'), undefined); // no folder open
});

// ---- the graph views (src/graphModel.ts) --------------------------------------------------
test('a saved view comes back as what it showed: a flow, a whole map, a map focused on a skill', () => {
  const uri = 'file:///p/skills/a/skill.md';
  assert.deepEqual(targetOf({ target: { kind: 'flow', uri, skill: 'a', block: 'main' } }), { kind: 'flow', uri, skill: 'a', block: 'main' });
  assert.equal(targetOf({ target: { kind: 'flow', uri, skill: 'a' } }), undefined);
  assert.deepEqual(targetOf({ target: { kind: 'map', uri } }), { kind: 'map', uri, skill: undefined, hops: undefined });
  assert.deepEqual(targetOf({ target: { kind: 'map', uri, skill: 'a', hops: 2 } }), { kind: 'map', uri, skill: 'a', hops: 2 });
  assert.deepEqual(targetOf({ target: { kind: 'map', uri, skill: 'a', hops: 7 } }), { kind: 'map', uri, skill: 'a', hops: 1 });
  assert.equal(targetOf({ target: { kind: 'pie', uri } }), undefined);
  assert.equal(targetOf(undefined), undefined);
});

test('the step under the cursor: the step whose lines hold it, in that file only', () => {
  const uri = 'file:///p/skills/a/skill.md';
  const at = (l1, l2) => ({ uri, range: { start: { line: l1, character: 4 }, end: { line: l2, character: 10 } } });
  const nodes = [
    { id: 'step:ask', location: at(7, 9) },
    { id: 'step:check', location: at(10, 14) },
    { id: 'END', location: at(15, 15) },
    { id: 'skill:b', location: { uri: 'file:///p/skills/b/skill.md', range: at(0, 99).range } },
    { id: 'bundled', location: null },
  ];
  assert.equal(nodeAt(nodes, uri, { line: 7, character: 0 }), 'step:ask');
  assert.equal(nodeAt(nodes, uri, { line: 12, character: 30 }), 'step:check');
  assert.equal(nodeAt(nodes, uri, { line: 15, character: 0 }), 'END');
  assert.equal(nodeAt(nodes, uri, { line: 3, character: 0 }), null);
  assert.equal(nodeAt(nodes, 'file:///p/skills/b/skill.md', { line: 12, character: 0 }), 'skill:b');
});

test('skill.md code lenses: the focused agent map on the first line, a flow on each ordered block', () => {
  const text = '---\ndescription: x\n---\nProse.\n\n:::ordered_block id=main\nsteps: []\n:::\n:::ordered_block id=après-vente\n:::\ntext :::ordered_block id=inline\n';
  assert.deepEqual(lensesOf(text, 'pay'), [
    { line: 0, title: 'Agent Map: pay and its neighbours', command: 'mantle.focusSkill' },
    { line: 5, title: 'Show Flow of main', command: 'mantle.showFlow', block: 'main' },
    { line: 8, title: 'Show Flow of après-vente', command: 'mantle.showFlow', block: 'après-vente' },
    { line: 10, title: 'Show Flow of inline', command: 'mantle.showFlow', block: 'inline' }, // as the engine reads it
  ]);
  assert.equal(skillOfPath('/w/p/skills/pay_slip/skill.md'), 'pay_slip');
  assert.equal(skillOfPath('C:\\w\\skills\\pay\\tools.py'), 'pay');
  assert.equal(skillOfPath('/w/p/memory.yml'), undefined);
});
