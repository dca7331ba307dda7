// "Mantle: Show Flow", "Mantle: Show Agent Map" and "Mantle: Show Skill in Agent Map": a
// webview beside the editor that draws the server's `mantle/flowGraph` / `mantle/agentMap`
// (docs/features/graphs.md) with the layout the server computes for the page's font, follows
// edits as they are typed, highlights the flow step under the cursor, focuses the map on one
// skill and its neighbours, and reveals a node's source when it is clicked. Code lenses on a
// skill.md open the focused map (its first line) and the flow of each ordered block. A view
// comes back after a window reload (a WebviewPanelSerializer, activation
// `onWebviewPanel:mantle.graph`): the webview keeps what it shows (its Target) in its
// state, and the view asks the server again once it has indexed.
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import { Kind, Metrics, Position, Range, Target, lensesOf, nodeAt, skillOfPath, targetOf } from './graphModel';

export const FLOW_GRAPH = 'mantle/flowGraph';
export const AGENT_MAP = 'mantle/agentMap';
const REFRESH_MS = 300;
export const VIEW_TYPE = 'mantle.graph';

interface GraphJson {
  kind: Kind;
  title: string;
  skill?: string;
  block?: string;
  nodes: unknown[];
  edges: unknown[];
}

const panels = new Map<string, GraphPanel>();

let lastMetrics: Metrics | undefined; // the last page's: a new view asks with them at once

function keyOf(t: Target): string {
  return t.kind === 'flow' ? `flow:${t.uri}#${t.block}` : `map:${t.uri}`;
}

export function registerGraphViews(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
  serverReady: vscode.Event<void>,
): void {
  const refreshAll = (): void => panels.forEach((p) => p.schedule());
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
        const target = targetOf(state);
        if (!target || panels.has(keyOf(target))) {
          log(`a graph view from before the reload could not be restored (state ${JSON.stringify(state)})`);
          panel.dispose();
          return;
        }
        log(`restoring the ${target.kind === 'flow' ? `flow of ${target.skill}/${target.block}` : 'agent map'} from before the reload`);
        panels.set(keyOf(target), new GraphPanel(context, getClient, log, target, panel, vscode.ViewColumn.One));
      },
    }),
    serverReady(refreshAll),
    vscode.commands.registerCommand('mantle.showFlow', (uri?: unknown, at?: unknown) =>
      showFlow(context, getClient, log, typeof uri === 'string' ? uri : undefined, isPosition(at) ? at : undefined),
    ),
    vscode.commands.registerCommand('mantle.showAgentMap', () => showAgentMap(context, getClient, log)),
    vscode.commands.registerCommand('mantle.focusSkill', (uri?: unknown, skill?: unknown) =>
      focusSkill(context, getClient, log, typeof uri === 'string' ? uri : undefined, typeof skill === 'string' ? skill : undefined),
    ),
    vscode.languages.registerCodeLensProvider(
      { language: 'mantle-skill', scheme: 'file' },
      {
        provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
          const skill = skillOfPath(doc.uri.fsPath);
          if (!skill) {
            return [];
          }
          return lensesOf(doc.getText(), skill).map((l) => {
            const range = new vscode.Range(l.line, 0, l.line, 0);
            const args = l.command === 'mantle.focusSkill' ? [doc.uri.toString(), skill] : [doc.uri.toString(), { line: l.line + 1, character: 0 }];
            return new vscode.CodeLens(range, { title: l.title, command: l.command, arguments: args });
          });
        },
      },
    ),
    vscode.window.onDidChangeTextEditorSelection((e) => panels.forEach((p) => p.cursorMoved(e.textEditor))),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length && e.document.uri.scheme === 'file') {
        refreshAll();
      }
    }),
    vscode.workspace.onDidSaveTextDocument(refreshAll),
    vscode.languages.onDidChangeDiagnostics(refreshAll),
    { dispose: () => panels.forEach((p) => p.panel.dispose()) },
  );
}

function isPosition(v: unknown): v is Position {
  const p = v as Position | undefined;
  return !!p && typeof p.line === 'number' && typeof p.character === 'number';
}

function running(getClient: () => LanguageClient | undefined): LanguageClient | undefined {
  const c = getClient();
  if (!c || c.state !== State.Running) {
    void vscode.window.showWarningMessage('Mantle: the server is not running yet; try again in a moment.');
    return undefined;
  }
  return c;
}

async function showFlow(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
  lensUri?: string,
  lensAt?: Position,
): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const docUri = lensUri ?? editor?.document.uri.toString();
  if (!docUri || !/[\\/]skills[\\/][^\\/]+[\\/]skill\.md$/.test(vscode.Uri.parse(docUri).fsPath)) {
    void vscode.window.showInformationMessage(
      'Mantle: Show Flow draws the ordered block under the cursor: open a skills/<id>/skill.md and put the cursor in a :::ordered_block.',
    );
    return;
  }
  const c = running(getClient);
  if (!c) {
    return;
  }
  const pos = lensAt ?? editor?.selection.active ?? { line: 0, character: 0 };
  const target: Target = {
    kind: 'flow',
    uri: docUri,
    position: { line: pos.line, character: pos.character },
  };
  let graph: GraphJson | null;
  try {
    graph = await request(c, target, lastMetrics);
  } catch (e) {
    void vscode.window.showErrorMessage(`Mantle: ${errorText(e)}`);
    return;
  }
  if (!graph) {
    void vscode.window.showInformationMessage(
      'Mantle: Show Flow: the cursor is not in an ordered block (`:::ordered_block id=…`).',
    );
    return;
  }
  target.skill = graph.skill;
  target.block = graph.block;
  delete target.position;
  open(context, getClient, log, target, graph, editor?.viewColumn);
}

/** The agent map focused on a skill: the code lens's, the active editor's, or one picked. */
async function focusSkill(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
  uri?: string,
  skill?: string,
): Promise<void> {
  const c = running(getClient);
  if (!c) {
    return;
  }
  const editor = vscode.window.activeTextEditor;
  if (!skill && editor?.document.uri.scheme === 'file') {
    skill = skillOfPath(editor.document.uri.fsPath);
    uri = skill ? editor.document.uri.toString() : undefined;
  }
  if (!skill) {
    const files = await vscode.workspace.findFiles('**/skills/*/skill.md', '**/node_modules/**', 5000);
    const items = files
      .map((f) => ({ label: skillOfPath(f.fsPath) ?? '', description: vscode.workspace.asRelativePath(f), uri: f.toString() }))
      .filter((i) => i.label)
      .sort((a, b) => a.label.localeCompare(b.label));
    const picked = await vscode.window.showQuickPick(items, { placeHolder: 'The skill to show with its neighbours', matchOnDescription: true });
    if (!picked) {
      return;
    }
    skill = picked.label;
    uri = picked.uri;
  }
  if (!uri) {
    return;
  }
  // an agent map already open shows the skill; else a new view
  const existing = [...panels.values()].find((p) => p.target.kind === 'map');
  if (existing) {
    existing.panel.reveal(undefined, false);
    existing.refocus(skill, existing.target.hops ?? 1);
    return;
  }
  const target: Target = { kind: 'map', uri, skill, hops: 1 };
  let graph: GraphJson | null;
  try {
    graph = await request(c, target, lastMetrics);
  } catch (e) {
    void vscode.window.showErrorMessage(`Mantle: ${errorText(e)}`);
    return;
  }
  if (!graph) {
    void vscode.window.showInformationMessage('Mantle: Show Skill in Agent Map: no Mantle project here.');
    return;
  }
  open(context, getClient, log, target, graph, editor?.viewColumn);
}

async function showAgentMap(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
): Promise<void> {
  const c = running(getClient);
  if (!c) {
    return;
  }
  const editor = vscode.window.activeTextEditor;
  let uri = editor?.document.uri.scheme === 'file' ? editor.document.uri : undefined;
  let graph: GraphJson | null = null;
  try {
    if (uri) {
      graph = await request(c, { kind: 'map', uri: uri.toString() }, lastMetrics);
    }
    if (!graph) {
      // not in a Mantle file: the project of the first skill of the workspace
      const [first] = await vscode.workspace.findFiles('**/skills/*/skill.md', '**/node_modules/**', 1);
      uri = first;
      graph = first ? await request(c, { kind: 'map', uri: first.toString() }, lastMetrics) : null;
    }
  } catch (e) {
    void vscode.window.showErrorMessage(`Mantle: ${errorText(e)}`);
    return;
  }
  if (!graph || !uri) {
    void vscode.window.showInformationMessage('Mantle: Show Agent Map: no Mantle project in this workspace.');
    return;
  }
  open(context, getClient, log, { kind: 'map', uri: uri.toString() }, graph, editor?.viewColumn);
}

function open(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
  target: Target,
  graph: GraphJson,
  column: vscode.ViewColumn | undefined,
): void {
  const key = keyOf(target);
  const existing = panels.get(key);
  if (existing) {
    if (target.kind === 'map') {
      // what it shows now (the whole map, or a skill): what it follows from here on
      existing.target.skill = target.skill;
      existing.target.hops = target.hops;
    }
    existing.panel.reveal(vscode.ViewColumn.Beside, true);
    existing.show(graph);
    return;
  }
  const panel = vscode.window.createWebviewPanel(
    VIEW_TYPE,
    panelTitle(graph),
    { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
    { enableScripts: true, retainContextWhenHidden: true },
  );
  const p = new GraphPanel(context, getClient, log, target, panel, column ?? vscode.ViewColumn.One);
  p.show(graph);
  panels.set(key, p);
}

function request(c: LanguageClient, t: Target, metrics?: Metrics): Promise<GraphJson | null> {
  const textDocument = { uri: t.uri };
  const layout = metrics ? { layout: metrics } : {};
  if (t.kind === 'map') {
    const focus = t.skill ? { skill: t.skill, hops: t.hops ?? 1 } : {};
    return c.sendRequest<GraphJson | null>(AGENT_MAP, { textDocument, ...focus, ...layout });
  }
  const params = t.position ? { textDocument, position: t.position } : { textDocument, skill: t.skill, block: t.block };
  return c.sendRequest<GraphJson | null>(FLOW_GRAPH, { ...params, ...layout });
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class GraphPanel {
  private timer: NodeJS.Timeout | undefined;
  private cursorTimer: NodeJS.Timeout | undefined;
  private ready = false;
  private latest: GraphJson | undefined;
  private metrics: Metrics | undefined;
  private current: string | null = null;

  /** `panel`: a new one, or one VS Code restored after a reload (then the graph is asked for). */
  constructor(
    context: vscode.ExtensionContext,
    private readonly getClient: () => LanguageClient | undefined,
    private readonly log: (message: string) => void,
    readonly target: Target,
    readonly panel: vscode.WebviewPanel,
    private readonly sourceColumn: vscode.ViewColumn,
  ) {
    const dist = vscode.Uri.joinPath(context.extensionUri, 'dist');
    this.panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    this.panel.webview.html = html(this.panel.webview, vscode.Uri.joinPath(dist, 'graph.js'));
    this.panel.webview.onDidReceiveMessage(
      (m: { type: string; location?: { uri: string; range: Range }; metrics?: Metrics; skill?: string | null; hops?: number }) => {
        if (m.type === 'ready') {
          this.ready = true;
          if (m.metrics && m.metrics.fontSize > 0 && m.metrics.charWidth > 0) {
            this.metrics = lastMetrics = { fontSize: m.metrics.fontSize, charWidth: m.metrics.charWidth };
          }
          if (this.latest && (this.latest as { layout?: unknown }).layout) {
            this.show(this.latest);
          } else {
            // the layout is made for this page's font: ask (a restored view: the server may
            // not be running yet, then it is asked again once it is)
            void this.panel.webview.postMessage({ type: 'status', message: this.latest ? 'laying out…' : 'waiting for the Mantle server…' });
            void this.refresh();
          }
        } else if (m.type === 'reveal' && m.location) {
          void this.reveal(m.location.uri, m.location.range);
        } else if (m.type === 'focus' && this.target.kind === 'map') {
          this.refocus(typeof m.skill === 'string' ? m.skill : undefined, m.hops === 2 ? 2 : 1);
        }
      },
    );
    this.panel.onDidDispose(() => {
      clearTimeout(this.timer);
      clearTimeout(this.cursorTimer);
      panels.delete(keyOf(this.target));
    });
  }

  show(graph: GraphJson): void {
    this.latest = graph;
    this.panel.title = panelTitle(graph);
    if (this.target.kind === 'flow') {
      const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === this.target.uri);
      if (editor) {
        this.current = nodeAt(graph.nodes, this.target.uri, editor.selection.active);
      }
    }
    if (this.ready) {
      void this.panel.webview.postMessage({ type: 'graph', graph, state: { target: this.target }, current: this.current });
    }
  }

  /** A map view: show `skill` and its neighbours (`hops` away), or the whole map. */
  refocus(skill: string | undefined, hops: number): void {
    this.target.skill = skill;
    this.target.hops = skill ? hops : undefined;
    void this.refresh();
  }

  /** A flow view: the step under the cursor of its skill.md is highlighted (and shown). */
  cursorMoved(editor: vscode.TextEditor): void {
    if (this.target.kind !== 'flow' || !this.latest || editor.document.uri.toString() !== this.target.uri) {
      return;
    }
    clearTimeout(this.cursorTimer);
    this.cursorTimer = setTimeout(() => {
      const id = this.latest ? nodeAt(this.latest.nodes, this.target.uri, editor.selection.active) : null;
      if (id !== this.current) {
        this.current = id;
        void this.panel.webview.postMessage({ type: 'current', id });
      }
    }, 80);
  }

  /** Ask again a little after the last edit (the server has the new text by then). */
  schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), REFRESH_MS);
  }

  private async refresh(): Promise<void> {
    const c = this.getClient();
    if (!c || c.state !== State.Running) {
      return;
    }
    try {
      const graph = await request(c, this.target, this.metrics);
      if (graph) {
        this.show(graph);
      } else {
        void this.panel.webview.postMessage({ type: 'error', message: 'not found any more (renamed or removed?)' });
      }
    } catch (e) {
      this.log(`graph: ${errorText(e)}`);
      void this.panel.webview.postMessage({ type: 'error', message: errorText(e) });
    }
  }

  private async reveal(uri: string, range: Range): Promise<void> {
    const start = new vscode.Position(range.start.line, range.start.character);
    const selection = new vscode.Range(start, start);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const editor = await vscode.window.showTextDocument(doc, { viewColumn: this.sourceColumn, selection });
    editor.revealRange(
      new vscode.Range(start, new vscode.Position(range.end.line, range.end.character)),
      vscode.TextEditorRevealType.InCenterIfOutsideViewport,
    );
  }
}

function panelTitle(g: GraphJson): string {
  return g.kind === 'flow' ? `Flow: ${g.skill}/${g.block}` : g.title === 'agent map' ? 'Agent Map' : `Agent Map: ${g.skill}`;
}

/** The page: a strict content security policy (only our script, by nonce; no network). */
export function html(webview: vscode.Webview, script: vscode.Uri): string {
  const nonce = crypto.randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${nonce}">${CSS}</style>
</head>
<body>
<div id="bar">
  <strong id="title"></strong><span id="summary"></span>
  <span class="group"><input id="search" type="search" placeholder="Find a node (Ctrl+F)" aria-label="Find a node" spellcheck="false"><span id="matches" aria-live="polite"></span></span>
  <span class="group map-only"><button id="focus" disabled title="Show only the selected skill and what it reads, writes, calls and is called by (or double-click a skill)">Focus</button><select id="hops" aria-label="How far from the skill" title="How far from the skill"><option value="1">1 hop</option><option value="2">2 hops</option></select><button id="whole" class="focused-only" title="Show the whole agent map">Whole map</button></span>
  <span class="group"><button id="zoomout" title="Zoom out (-)" aria-label="Zoom out">−</button><button id="zoom100" title="Actual size: text at the editor's UI font size (0)">100%</button><button id="zoomin" title="Zoom in (+)" aria-label="Zoom in">+</button><button id="fit" title="The whole graph in the view (may make the text small)">Fit</button></span>
</div>
<div id="stage"><svg id="graph" role="img" aria-label="graph" tabindex="-1"></svg><svg id="minimap" role="img" aria-label="overview: click or drag to move the view"></svg></div>
<script nonce="${nonce}" src="${webview.asWebviewUri(script)}"></script>
</body>
</html>`;
}

// every colour from the theme (VS Code sets these variables in webviews); every text at the
// UI font size (the layout is made for it: graph.ts measures it and the server lays out)
const CSS = `
html, body { height: 100%; margin: 0; padding: 0; overflow: hidden; }
body { display: flex; flex-direction: column; color: var(--vscode-editor-foreground);
  background: var(--vscode-editor-background); font-family: var(--vscode-font-family);
  font-size: var(--vscode-font-size); }
#bar { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center; padding: 4px 10px;
  border-bottom: 1px solid var(--vscode-panel-border, transparent); }
#summary { color: var(--vscode-descriptionForeground); flex: 1; min-width: 8em; }
#matches { color: var(--vscode-descriptionForeground); margin-left: 6px; }
body.failed #summary { color: var(--vscode-errorForeground); }
.group { display: inline-flex; gap: 4px; align-items: center; }
body:not(.map) .map-only, body:not(.focused) .focused-only, body:not(.focused) #hops { display: none; }
button, select, input { font-family: inherit; font-size: inherit; }
button { color: var(--vscode-button-secondaryForeground, var(--vscode-button-foreground));
  background: var(--vscode-button-secondaryBackground, var(--vscode-button-background));
  border: none; padding: 2px 8px; cursor: pointer; }
button:hover:not(:disabled) { background: var(--vscode-button-secondaryHoverBackground, var(--vscode-button-hoverBackground)); }
button:disabled { opacity: 0.5; cursor: default; }
#zoom100 { min-width: 4.5em; }
input, select { color: var(--vscode-input-foreground); background: var(--vscode-input-background);
  border: 1px solid var(--vscode-input-border, transparent); padding: 2px 4px; }
input:focus, select:focus, button:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
#stage { position: relative; flex: 1; min-height: 0; }
#graph { position: absolute; inset: 0; width: 100%; height: 100%; cursor: grab; }
#graph.dragging { cursor: grabbing; }
#graph:focus { outline: none; }
#minimap { position: absolute; right: 10px; bottom: 10px; cursor: pointer; opacity: 0.8;
  border: 1px solid var(--vscode-editorWidget-border, var(--vscode-panel-border, #888));
  background: var(--vscode-editorWidget-background, var(--vscode-editor-background)); }
#minimap:hover { opacity: 1; }
#minimap.hidden { display: none; }
.mini-bg { fill: transparent; }
.mini-node { fill: var(--vscode-descriptionForeground); opacity: 0.5; }
.mini-node.problem-error { fill: var(--vscode-editorError-foreground, var(--vscode-errorForeground)); opacity: 1; }
.mini-node.problem-warning { fill: var(--vscode-editorWarning-foreground); opacity: 1; }
.mini-node.match, .mini-node.current { fill: var(--vscode-focusBorder); opacity: 1; }
.mini-frame { fill: var(--vscode-focusBorder); fill-opacity: 0.12; stroke: var(--vscode-focusBorder); stroke-width: 1.5; }
.node .box { fill: var(--vscode-editorWidget-background, var(--vscode-editor-background));
  stroke: var(--vscode-editorWidget-border, var(--vscode-foreground)); stroke-width: 1.2; }
.node.clickable { cursor: pointer; }
.node.clickable:hover .box, .node:focus .box { stroke: var(--vscode-focusBorder); stroke-width: 2; }
.node:focus { outline: none; }
.node text { fill: var(--vscode-editor-foreground); font-family: var(--vscode-editor-font-family, monospace); }
.node .label { font-weight: 600; }
.node .detail { fill: var(--vscode-descriptionForeground); }
.kind-collect .box, .kind-field .box, .kind-project_field .box { stroke: var(--vscode-charts-blue); }
.kind-execute_tool .box, .kind-tool .box, .kind-shared_tool .box, .kind-mcp_tool .box { stroke: var(--vscode-charts-purple); }
.kind-call .box, .kind-link .box, .kind-skill .box, .kind-bundled_skill .box { stroke: var(--vscode-charts-green); }
.kind-noop .box, .kind-set_memory .box { stroke: var(--vscode-charts-orange); }
.kind-end .box { fill: var(--vscode-badge-background); stroke: var(--vscode-badge-background); }
.kind-end text { fill: var(--vscode-badge-foreground); }
.kind-project_field .box { stroke-dasharray: 6 2; }
.node.unreachable { opacity: 0.55; }
.node.unreachable .box { stroke-dasharray: 4 3; }
.node.problem-warning .box { stroke: var(--vscode-editorWarning-foreground); stroke-width: 2.5; }
.node.problem-error .box { stroke: var(--vscode-editorError-foreground, var(--vscode-errorForeground)); stroke-width: 2.5; }
.node.match .box { fill: var(--vscode-editor-findMatchHighlightBackground, var(--vscode-editor-selectionHighlightBackground)); }
.node.selected .box { stroke: var(--vscode-focusBorder); stroke-width: 3; }
.node.current .box { fill: var(--vscode-editor-selectionBackground); stroke: var(--vscode-focusBorder); stroke-width: 3; }
.badge-error { fill: var(--vscode-editorError-foreground, var(--vscode-errorForeground)); }
.badge-warning { fill: var(--vscode-editorWarning-foreground); }
.edge path { fill: none; stroke: var(--vscode-descriptionForeground); stroke-width: 1.2; }
.edge-reads path, .edge-link path { stroke-dasharray: 5 3; }
.edge-writes path { stroke: var(--vscode-charts-blue); }
.edge-else path { stroke-dasharray: 2 3; }
.edge-label rect { fill: var(--vscode-editor-background); opacity: 0.92; }
.edge-label text { fill: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family, monospace); }
.arrowhead { fill: var(--vscode-descriptionForeground); }
`;
