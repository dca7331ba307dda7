// "Mantle: Show Flow" and "Mantle: Show Agent Map": a webview beside the editor that
// draws the server's `mantle/flowGraph` / `mantle/agentMap` (docs/features/graphs.md),
// follows edits as they are typed, and reveals a node's source when it is clicked. A view
// comes back after a window reload (a WebviewPanelSerializer, activation
// `onWebviewPanel:mantle.graph`): the webview keeps what it shows (its Target) in its
// state, and the view asks the server again once it has indexed.
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';

export const FLOW_GRAPH = 'mantle/flowGraph';
export const AGENT_MAP = 'mantle/agentMap';
const REFRESH_MS = 300;
export const VIEW_TYPE = 'mantle.graph';

type Kind = 'flow' | 'map';
interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
interface GraphJson {
  kind: Kind;
  title: string;
  skill?: string;
  block?: string;
  nodes: unknown[];
  edges: unknown[];
}

/** What a panel shows: the request and its parameters (a flow by block id once found). */
interface Target {
  kind: Kind;
  uri: string;
  skill?: string;
  block?: string;
  position?: Position;
}

const panels = new Map<string, GraphPanel>();

/** The saved state of a view (what the webview keeps): a Target, checked. */
export function targetOf(state: unknown): Target | undefined {
  const t = (state as { target?: Partial<Target> } | undefined)?.target;
  if (!t || typeof t.uri !== 'string' || (t.kind !== 'flow' && t.kind !== 'map')) {
    return undefined;
  }
  if (t.kind === 'flow' && (typeof t.skill !== 'string' || typeof t.block !== 'string')) {
    return undefined;
  }
  return { kind: t.kind, uri: t.uri, skill: t.skill, block: t.block };
}

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
    vscode.commands.registerCommand('mantle.showFlow', () => showFlow(context, getClient, log)),
    vscode.commands.registerCommand('mantle.showAgentMap', () => showAgentMap(context, getClient, log)),
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
): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !/[\\/]skills[\\/][^\\/]+[\\/]skill\.md$/.test(editor.document.uri.fsPath)) {
    void vscode.window.showInformationMessage(
      'Mantle: Show Flow draws the ordered block under the cursor: open a skills/<id>/skill.md and put the cursor in a :::ordered_block.',
    );
    return;
  }
  const c = running(getClient);
  if (!c) {
    return;
  }
  const pos = editor.selection.active;
  const target: Target = {
    kind: 'flow',
    uri: editor.document.uri.toString(),
    position: { line: pos.line, character: pos.character },
  };
  let graph: GraphJson | null;
  try {
    graph = await request(c, target);
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
  open(context, getClient, log, target, graph, editor.viewColumn);
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
      graph = await request(c, { kind: 'map', uri: uri.toString() });
    }
    if (!graph) {
      // not in a Mantle file: the project of the first skill of the workspace
      const [first] = await vscode.workspace.findFiles('**/skills/*/skill.md', '**/node_modules/**', 1);
      uri = first;
      graph = first ? await request(c, { kind: 'map', uri: first.toString() }) : null;
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

function request(c: LanguageClient, t: Target): Promise<GraphJson | null> {
  const textDocument = { uri: t.uri };
  if (t.kind === 'map') {
    return c.sendRequest<GraphJson | null>(AGENT_MAP, { textDocument });
  }
  const params = t.position ? { textDocument, position: t.position } : { textDocument, skill: t.skill, block: t.block };
  return c.sendRequest<GraphJson | null>(FLOW_GRAPH, params);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class GraphPanel {
  private timer: NodeJS.Timeout | undefined;
  private ready = false;
  private latest: GraphJson | undefined;

  /** `panel`: a new one, or one VS Code restored after a reload (then the graph is asked for). */
  constructor(
    context: vscode.ExtensionContext,
    private readonly getClient: () => LanguageClient | undefined,
    private readonly log: (message: string) => void,
    private readonly target: Target,
    readonly panel: vscode.WebviewPanel,
    private readonly sourceColumn: vscode.ViewColumn,
  ) {
    const dist = vscode.Uri.joinPath(context.extensionUri, 'dist');
    this.panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    this.panel.webview.html = html(this.panel.webview, vscode.Uri.joinPath(dist, 'graph.js'));
    this.panel.webview.onDidReceiveMessage((m: { type: string; location?: { uri: string; range: Range } }) => {
      if (m.type === 'ready') {
        this.ready = true;
        if (this.latest) {
          this.show(this.latest);
        } else {
          void this.panel.webview.postMessage({ type: 'status', message: 'waiting for the Mantle server…' });
          void this.refresh(); // restored: ask (the server may not be running yet: then on ready)
        }
      } else if (m.type === 'reveal' && m.location) {
        void this.reveal(m.location.uri, m.location.range);
      }
    });
    this.panel.onDidDispose(() => {
      clearTimeout(this.timer);
      panels.delete(keyOf(this.target));
    });
  }

  show(graph: GraphJson): void {
    this.latest = graph;
    this.panel.title = panelTitle(graph);
    if (this.ready) {
      void this.panel.webview.postMessage({ type: 'graph', graph, state: { target: this.target } });
    }
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
      const graph = await request(c, this.target);
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
<div id="bar"><strong id="title"></strong><span id="summary"></span><button id="fit" title="Fit the graph to the view">Fit</button></div>
<svg id="graph" role="img" aria-label="graph"></svg>
<script nonce="${nonce}" src="${webview.asWebviewUri(script)}"></script>
</body>
</html>`;
}

// every colour from the theme (VS Code sets these variables in webviews)
const CSS = `
html, body { height: 100%; margin: 0; padding: 0; overflow: hidden; }
body { display: flex; flex-direction: column; color: var(--vscode-editor-foreground);
  background: var(--vscode-editor-background); font-family: var(--vscode-font-family);
  font-size: var(--vscode-font-size); }
#bar { display: flex; gap: 12px; align-items: center; padding: 4px 10px;
  border-bottom: 1px solid var(--vscode-panel-border, transparent); }
#summary { color: var(--vscode-descriptionForeground); flex: 1; }
body.failed #summary { color: var(--vscode-errorForeground); }
#fit { color: var(--vscode-button-foreground); background: var(--vscode-button-background);
  border: none; padding: 2px 10px; cursor: pointer; }
#fit:hover { background: var(--vscode-button-hoverBackground); }
#graph { flex: 1; width: 100%; height: 100%; cursor: grab; }
.node .box { fill: var(--vscode-editorWidget-background, var(--vscode-editor-background));
  stroke: var(--vscode-editorWidget-border, var(--vscode-foreground)); stroke-width: 1.2; }
.node.clickable { cursor: pointer; }
.node.clickable:hover .box, .node:focus .box { stroke: var(--vscode-focusBorder); stroke-width: 2; }
.node:focus { outline: none; }
.node text { fill: var(--vscode-editor-foreground); font-size: 12px;
  font-family: var(--vscode-editor-font-family, monospace); }
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
.badge-error { fill: var(--vscode-editorError-foreground, var(--vscode-errorForeground)); }
.badge-warning { fill: var(--vscode-editorWarning-foreground); }
.edge path { fill: none; stroke: var(--vscode-descriptionForeground); stroke-width: 1.2; }
.edge-reads path, .edge-link path { stroke-dasharray: 5 3; }
.edge-writes path { stroke: var(--vscode-charts-blue); }
.edge-else path { stroke-dasharray: 2 3; }
.edge-label { fill: var(--vscode-descriptionForeground); font-size: 11px;
  font-family: var(--vscode-editor-font-family, monospace); paint-order: stroke;
  stroke: var(--vscode-editor-background); stroke-width: 3px; }
.arrowhead { fill: var(--vscode-descriptionForeground); }
`;
