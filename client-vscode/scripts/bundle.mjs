// Bundle src/extension.ts and vscode-languageclient into dist/extension.js (CommonJS).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  keepNames: true,
  sourcemap: false,
  logLevel: 'warning',
});

// The flow / agent map webview's script (it draws the layout the server computes): a
// browser bundle loaded by the webview from the .vsix (no CDN).
await build({
  entryPoints: ['src/webview/graph.ts'],
  bundle: true,
  outfile: 'dist/graph.js',
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  logLevel: 'warning',
});
