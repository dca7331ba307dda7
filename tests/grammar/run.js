#!/usr/bin/env node
// Grammar tests for grammars/*.tmLanguage.json (make grammar-test, or npm test here).
//
// 1. vscode-tmgrammar-test on *.test.* in this folder, with the YAML and Markdown grammars
//    from tm-grammars (package.json "contributes"), and again with VS Code's own built-in
//    grammars when they are on the machine (MANTLE_VSCODE_EXTENSIONS=<a VS Code
//    "extensions" folder>, or the code-server that `make e2e` caches).
// 2. Every regex of our grammars compiles, and none of them poisons a scanner (Oniguruma
//    matches nothing at all, for every pattern of a scanner, when one pattern has a
//    lookbehind nested in a variable-length lookbehind).
// 3. The YAML injection leaves the YAML grammar alone: on every line without a condition
//    key, the non-Mantle scopes of every character are the same with and without the
//    injection (examples/**/*.yml, examples/**/skill.md, fixtures/*, the test files).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const HERE = __dirname;
const ROOT = path.resolve(HERE, '../..');
const common = require('vscode-tmgrammar-test/dist/common/index.js');
const tm = require('vscode-textmate');
const onig = require('vscode-oniguruma');

const CONDITION_KEY_LINE =
  /(^\s*(?:[-?]\s+)*|[{,]\s*)(requires|if|complete_when|when|condition|satisfied_when)\s*:/;

let failures = 0;
function fail(msg) {
  failures++;
  console.log(`✖ ${msg}`);
}

// ---------------------------------------------------------------------------------------
// configurations

function baseGrammars() {
  const pkg = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
  return pkg.contributes.grammars.map((g) => ({ ...g, path: path.resolve(HERE, g.path) }));
}

function findVSCodeExtensions() {
  const candidates = [];
  if (process.env.MANTLE_VSCODE_EXTENSIONS) candidates.push(process.env.MANTLE_VSCODE_EXTENSIONS);
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const e2e = path.join(cache, 'mantle-lsp-e2e');
  if (fs.existsSync(e2e)) {
    for (const d of fs.readdirSync(e2e).filter((d) => d.startsWith('code-server-')).sort().reverse()) {
      candidates.push(path.join(e2e, d, 'node_modules/code-server/lib/vscode/extensions'));
    }
  }
  return candidates.find((d) => fs.existsSync(path.join(d, 'yaml/package.json')) &&
    fs.existsSync(path.join(d, 'markdown-basics/package.json')));
}

function vscodeGrammars(extDir) {
  const ours = baseGrammars().filter((g) => g.scopeName.includes('mantle'));
  const theirs = [];
  for (const ext of ['yaml', 'markdown-basics']) {
    const pkg = JSON.parse(fs.readFileSync(path.join(extDir, ext, 'package.json'), 'utf8'));
    for (const g of pkg.contributes.grammars || []) {
      if (theirs.some((t) => t.scopeName === g.scopeName)) continue;
      theirs.push({ scopeName: g.scopeName, path: path.resolve(extDir, ext, g.path) });
    }
  }
  return [...ours, ...theirs];
}

// vscode-tmgrammar-test resolves grammar paths against the directory of its --config file.
function writeConfig(grammars, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mantle-grammar-'));
  const file = path.join(dir, name);
  const contributes = {
    grammars: grammars.map((g) => ({ ...g, path: path.relative(dir, g.path) })),
  };
  fs.writeFileSync(file, JSON.stringify({ contributes }, null, 1));
  return file;
}

function registry(grammars) {
  const config = writeConfig(grammars, 'grammars.json');
  const { grammars: gs } = common.loadConfiguration(config, undefined, []);
  return common.createRegistry(gs);
}

// ---------------------------------------------------------------------------------------
// 1. vscode-tmgrammar-test

function runUnitTests(grammars, label) {
  const config = writeConfig(grammars, 'package.json');
  const bin = require.resolve('vscode-tmgrammar-test/dist/unit.js');
  const res = spawnSync(process.execPath, [bin, '--config', config, '*.test.*'], {
    cwd: HERE,
    encoding: 'utf8',
  });
  const out = `${res.stdout}${res.stderr}`
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('grammar not found'))
    .join('\n');
  console.log(`== vscode-tmgrammar-test, ${label}\n${out}`);
  if (res.status !== 0) fail(`vscode-tmgrammar-test (${label}) exited with ${res.status}`);
}

// ---------------------------------------------------------------------------------------
// 2. regexes

function ourRegexes() {
  const out = [];
  for (const f of fs.readdirSync(path.join(ROOT, 'grammars')).filter((f) => f.endsWith('.tmLanguage.json'))) {
    const walk = (x, where) => {
      if (Array.isArray(x)) x.forEach((y, i) => walk(y, `${where}[${i}]`));
      else if (x && typeof x === 'object') {
        for (const k of ['match', 'begin', 'end', 'while']) {
          // back-references are filled in from the begin captures at run time
          if (typeof x[k] === 'string') out.push({ where: `${f} ${where}.${k}`, re: x[k].replace(/\\[1-9]/g, ' ') });
        }
        for (const [k, v] of Object.entries(x)) walk(v, `${where}.${k}`);
      }
    };
    walk(JSON.parse(fs.readFileSync(path.join(ROOT, 'grammars', f), 'utf8')), '');
  }
  return out;
}

async function checkRegexes() {
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve('vscode-oniguruma')), 'onig.wasm'));
  await onig.loadWASM(wasm.buffer);
  const all = ourRegexes();
  let bad = 0;
  for (const { where, re } of all) {
    let scanner;
    try {
      scanner = new onig.OnigScanner([re, 'QQ']);
    } catch (e) {
      bad++;
      fail(`${where}: does not compile: ${e.message}`);
      continue;
    }
    const m = scanner.findNextMatchSync('zz QQ zz', 0);
    if (!m) {
      bad++;
      fail(`${where}: poisons the scanner (no pattern of it matches any more): ${re}`);
    }
  }
  console.log(`== regexes: ${all.length} checked${bad ? `, ${bad} bad` : ', all fine'}`);
}

// ---------------------------------------------------------------------------------------
// 3. the injection leaves YAML alone

function charScopes(grammar, text) {
  let stack = tm.INITIAL;
  return text.split('\n').map((line) => {
    const r = grammar.tokenizeLine(line, stack);
    stack = r.ruleStack;
    const row = [];
    for (const t of r.tokens) {
      for (let i = t.startIndex; i < Math.min(t.endIndex, line.length); i++) row[i] = t.scopes;
    }
    return row;
  });
}

// The text a test file stands for: without its header and its assertion lines.
function sourceOf(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const header = /^(\S+)\s+SYNTAX\s+TEST\s/.exec(lines[0]);
  if (!header) return lines.join('\n');
  const token = header[1];
  return lines
    .slice(1)
    .filter((l) => !(l.startsWith(token) && /^\s*(\^|<~*-+)/.test(l.slice(token.length))))
    .join('\n');
}

function walkFiles(dir, pred, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !e.name.startsWith('.')) walkFiles(p, pred, out);
    } else if (pred(p)) out.push(p);
  }
  return out;
}

async function checkPreserved(grammars, label) {
  const withInj = registry(grammars);
  const withoutInj = registry(grammars.filter((g) => g.scopeName !== 'mantle.yaml.injection'));
  const files = [
    ...walkFiles(path.join(ROOT, 'examples'), (p) => /\.ya?ml$/.test(p) || p.endsWith('skill.md')),
    ...walkFiles(path.join(HERE, 'fixtures'), () => true),
    ...fs.readdirSync(HERE).filter((f) => /\.test\.(ya?ml|md)$/.test(f)).map((f) => path.join(HERE, f)),
  ];
  // Colours come from the other scopes; meta.* only records structure (after a condition
  // value the YAML grammar never sees its own key/value rules, so its meta scopes differ).
  const strip = (scopes) =>
    (scopes || []).filter((s) => !s.endsWith('.mantle') && !s.startsWith('meta.')).join(' ');
  let bad = 0;
  for (const file of files) {
    const scope = file.endsWith('.md') ? 'text.html.markdown.mantle' : 'source.yaml';
    const text = sourceOf(file);
    const a = charScopes(await withInj.loadGrammar(scope), text);
    const b = charScopes(await withoutInj.loadGrammar(scope), text);
    text.split('\n').forEach((line, l) => {
      if (CONDITION_KEY_LINE.test(line)) return;
      for (let i = 0; i < line.length; i++) {
        if (/\s/.test(line[i]) || (a[l][i] || []).includes('meta.embedded.condition.mantle')) continue;
        if (strip(a[l][i]) !== strip(b[l][i])) {
          bad++;
          fail(`${path.relative(ROOT, file)}:${l + 1}:${i + 1} (${label}) the injection changed ` +
            `YAML scopes\n    ${line}\n    with:    ${strip(a[l][i])}\n    without: ${strip(b[l][i])}`);
          return;
        }
      }
    });
  }
  console.log(`== YAML untouched by the injection, ${label}: ${files.length} files${bad ? `, ${bad} lines differ` : ', fine'}`);
}

// ---------------------------------------------------------------------------------------

// Markdown embeds ~60 languages we do not load: vscode-textmate warns about each.
const warn = console.warn;
console.warn = (...args) => {
  if (!String(args[0]).startsWith('grammar not found')) warn(...args);
};

(async () => {
  const sets = [[baseGrammars(), 'YAML and Markdown grammars from tm-grammars']];
  const ext = findVSCodeExtensions();
  if (ext) sets.push([vscodeGrammars(ext), `VS Code's built-in grammars (${ext})`]);
  else console.log("(VS Code's built-in grammars not found: set MANTLE_VSCODE_EXTENSIONS to test against them too)");
  await checkRegexes();
  for (const [grammars, label] of sets) {
    runUnitTests(grammars, label);
    await checkPreserved(grammars, label);
  }
  if (failures) {
    console.log(`\n${failures} grammar check(s) failed`);
    process.exit(1);
  }
  console.log('\nall grammar checks passed');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
