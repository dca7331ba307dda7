/// <reference lib="dom" />
// The script of the flow / agent map webview (bundled with dagre into dist/graph.js by
// scripts/bundle.mjs; no network). It receives the graph JSON of docs/features/graphs.md
// from the extension, lays it out with dagre and draws it as SVG in the colours of the
// theme (CSS variables); a click on a node asks the extension to reveal its source.
import dagre, { type EdgeLabel, type Graph, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';

type Layout = Graph<GraphLabel, NodeLabel, EdgeLabel>;

interface Problem {
  code: string;
  severity: string;
  message: string;
}
interface GraphNode {
  id: string;
  kind: string;
  label: string;
  detail?: string;
  unreachable?: boolean;
  problems: Problem[];
  location: { uri: string; range: unknown } | null;
}
interface GraphEdge {
  source: string;
  target: string;
  kind: string;
  label?: string;
}
interface GraphData {
  kind: 'flow' | 'map';
  title: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}
type Message =
  | { type: 'graph'; graph: GraphData; state?: unknown }
  | { type: 'error'; message: string }
  | { type: 'status'; message: string };

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; setState(state: unknown): void };

const vscode = acquireVsCodeApi();
const SVG = 'http://www.w3.org/2000/svg';
const svg = document.getElementById('graph') as unknown as SVGSVGElement;
const titleEl = document.getElementById('title') as HTMLElement;
const summaryEl = document.getElementById('summary') as HTMLElement;
const fitButton = document.getElementById('fit') as HTMLButtonElement;
const CHAR = 7; // px per character at the node font size (a close upper bound)
const LINE = 16;
const LARGE = 200; // nodes
const MIN_READABLE = 0.5; // the smallest scale a graph first opens at

let view = { x: 0, y: 0, w: 100, h: 100 };
let bounds = { w: 100, h: 100 };
let lastKey = '';

function el<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  parent?: Element,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    e.setAttribute(k, String(v));
  }
  parent?.appendChild(e);
  return e;
}

function worst(n: GraphNode): string {
  const s = n.problems.map((p) => p.severity);
  return s.includes('error') ? 'error' : s.includes('warning') ? 'warning' : s.length ? 'info' : '';
}

function render(g: GraphData): void {
  titleEl.textContent = g.title;
  const problems = g.nodes.filter((n) => worst(n) === 'error' || worst(n) === 'warning').length;
  const unreachable = g.nodes.filter((n) => n.unreachable).length;
  summaryEl.textContent =
    `${g.nodes.length} nodes, ${g.edges.length} edges` +
    (problems ? ` · ${problems} with problems` : '') +
    (unreachable ? ` · ${unreachable} unreachable` : '');
  const layout = layOut(g);
  const size = layout.graph();
  const key = `${g.kind}:${g.title}`;
  draw(g, layout, size, key);
}

// The last layout and what it was computed for: an edit that changes only the problems
// (most keystrokes) redraws without laying out again.
let cached: { shape: string; layout: Layout } | undefined;

function layOut(g: GraphData): Layout {
  const shape = JSON.stringify([
    g.kind,
    g.nodes.map((n) => [n.id, n.label, n.detail ?? '']),
    g.edges.map((e) => [e.source, e.target, e.kind, e.label ?? '']),
  ]);
  if (cached?.shape === shape) {
    return cached.layout;
  }
  const layout: Layout = new dagre.graphlib.Graph({ multigraph: true });
  layout.setGraph({
    rankdir: g.kind === 'flow' ? 'TB' : 'LR',
    nodesep: 24,
    ranksep: g.kind === 'flow' ? 36 : 80,
    edgesep: 12,
    marginx: 16,
    marginy: 16,
    // network simplex gives the tidiest ranks but grows fast: a large graph takes the
    // longest-path ranking (1,400 nodes: 6 s instead of 25 s)
    ranker: g.nodes.length > LARGE ? 'longest-path' : 'network-simplex',
  });
  layout.setDefaultEdgeLabel(() => ({}));
  for (const n of g.nodes) {
    const lines = n.detail && n.kind !== 'end' ? [n.label, n.detail] : [n.label];
    const width = Math.max(48, Math.max(...lines.map((l) => l.length)) * CHAR + 24);
    layout.setNode(n.id, { width, height: lines.length * LINE + 14 });
  }
  g.edges.forEach((e, i) => {
    // a map's edges say what they are by their style (and a tooltip): captions would
    // double its width
    const text = g.kind === 'flow' ? edgeText(g, e) : '';
    layout.setEdge(
      e.source,
      e.target,
      { label: text, width: text ? text.length * 7 + 10 : 0, height: text ? 16 : 0, labelpos: 'c' },
      `e${i}`,
    );
  });
  dagre.layout(layout);
  cached = { shape, layout };
  return layout;
}

function draw(g: GraphData, layout: Layout, size: GraphLabel, key: string): void {
  const first = key !== lastKey;
  lastKey = key;
  bounds = { w: size.width ?? 100, h: size.height ?? 100 };
  svg.replaceChildren();
  const defs = el('defs', {}, svg);
  const marker = el(
    'marker',
    { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    defs,
  );
  el('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }, marker);
  const edgeLayer = el('g', { class: 'edges' }, svg);
  const nodeLayer = el('g', { class: 'nodes' }, svg);
  g.edges.forEach((e, i) => {
    const lay = layout.edge({ v: e.source, w: e.target, name: `e${i}` });
    if (!lay?.points?.length) {
      return;
    }
    const pts = lay.points;
    const d = pts.map((p: { x: number; y: number }, j: number) => `${j ? 'L' : 'M'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
    const group = el('g', { class: `edge edge-${e.kind}`, 'data-source': e.source, 'data-target': e.target }, edgeLayer);
    el('path', { d, 'marker-end': 'url(#arrow)' }, group);
    const text = edgeText(g, e);
    el('title', {}, group).textContent = `${e.source} → ${e.target}${text ? `: ${text}` : ''}`;
    if (g.kind === 'flow' && text && lay.x !== undefined && lay.y !== undefined) {
      const t = el('text', { x: lay.x, y: lay.y + 4, 'text-anchor': 'middle', class: 'edge-label' }, group);
      t.textContent = text;
    }
  });
  for (const n of g.nodes) {
    const lay = layout.node(n.id);
    const w = lay.width;
    const h = lay.height;
    const classes = ['node', `kind-${n.kind}`];
    const bad = worst(n);
    if (bad) {
      classes.push(`problem-${bad}`);
    }
    if (n.unreachable) {
      classes.push('unreachable');
    }
    if (n.location) {
      classes.push('clickable');
    }
    const group = el('g', { class: classes.join(' '), transform: `translate(${(lay.x ?? 0) - w / 2},${(lay.y ?? 0) - h / 2})`, 'data-id': n.id, tabindex: 0, role: 'button' }, nodeLayer);
    const tip = el('title', {}, group);
    tip.textContent = [
      `${n.label}${n.detail ? ` — ${n.detail}` : ''}`,
      ...(n.unreachable ? ['unreachable: no path from the first step leads here'] : []),
      ...n.problems.map((p) => `${p.severity}: ${p.message} [${p.code}]`),
    ].join('\n');
    const shape = n.kind === 'end' ? { rx: h / 2, ry: h / 2 } : n.kind.includes('field') ? { rx: 14, ry: 14 } : { rx: 4, ry: 4 };
    el('rect', { width: w, height: h, ...shape, class: 'box' }, group);
    const label = el('text', { x: w / 2, y: 7 + LINE - 4, 'text-anchor': 'middle', class: 'label' }, group);
    label.textContent = n.label;
    if (n.detail && n.kind !== 'end') {
      const detail = el('text', { x: w / 2, y: 7 + 2 * LINE - 4, 'text-anchor': 'middle', class: 'detail' }, group);
      detail.textContent = n.detail;
    }
    if (bad === 'error' || bad === 'warning') {
      const badge = el('circle', { cx: w - 2, cy: 2, r: 6, class: `badge badge-${bad}` }, group);
      badge.setAttribute('data-count', String(n.problems.length));
    }
    if (n.location) {
      const loc = n.location;
      const reveal = (): void => vscode.postMessage({ type: 'reveal', location: loc, id: n.id });
      group.addEventListener('click', reveal);
      group.addEventListener('keydown', (ev) => {
        if ((ev as KeyboardEvent).key === 'Enter') {
          reveal();
        }
      });
    }
  }
  if (first) {
    fit(true);
  } else {
    apply();
  }
}

function edgeText(g: GraphData, e: GraphEdge): string {
  if (g.kind === 'flow') {
    return e.label ?? '';
  }
  return e.kind === 'uses' ? '' : e.label ? `${e.kind}: ${e.label}` : e.kind;
}

function apply(): void {
  svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
}

/** The whole graph in view, or (a large one) its top at a readable size: pan and zoom. */
function fit(readable = false): void {
  const box = svg.getBoundingClientRect();
  const aspect = box.width > 0 && box.height > 0 ? box.width / box.height : 1;
  // never enlarge a small graph past its natural size
  let w = Math.max(bounds.w, box.width || bounds.w);
  let h = Math.max(bounds.h, box.height || bounds.h);
  if (w / h > aspect) {
    h = w / aspect;
  } else {
    w = h * aspect;
  }
  view = { x: (bounds.w - w) / 2, y: 0, w, h };
  const scale = box.width ? box.width / w : 1;
  if (readable && scale < MIN_READABLE) {
    // a flow from its first step (centred), a map from its left edge
    const vw = box.width / MIN_READABLE;
    view = { x: lastKey.startsWith('flow') ? (bounds.w - vw) / 2 : 0, y: 0, w: vw, h: box.height / MIN_READABLE };
  }
  apply();
}

// pan (drag) and zoom (wheel), for graphs larger than the view
let drag: { x: number; y: number; vx: number; vy: number } | undefined;
svg.addEventListener('pointerdown', (e) => {
  if ((e.target as Element).closest('.node')) {
    return;
  }
  drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
  svg.setPointerCapture(e.pointerId);
});
svg.addEventListener('pointermove', (e) => {
  if (!drag) {
    return;
  }
  const scale = view.w / (svg.getBoundingClientRect().width || 1);
  view.x = drag.vx - (e.clientX - drag.x) * scale;
  view.y = drag.vy - (e.clientY - drag.y) * scale;
  apply();
});
svg.addEventListener('pointerup', () => {
  drag = undefined;
});
svg.addEventListener(
  'wheel',
  (e) => {
    e.preventDefault();
    const box = svg.getBoundingClientRect();
    const factor = e.deltaY > 0 ? 1.15 : 1 / 1.15;
    const px = view.x + ((e.clientX - box.left) / (box.width || 1)) * view.w;
    const py = view.y + ((e.clientY - box.top) / (box.height || 1)) * view.h;
    view = { x: px - (px - view.x) * factor, y: py - (py - view.y) * factor, w: view.w * factor, h: view.h * factor };
    apply();
  },
  { passive: false },
);
fitButton.addEventListener('click', () => fit());
window.addEventListener('resize', () => fit(true));

window.addEventListener('message', (event: MessageEvent<Message>) => {
  const msg = event.data;
  if (msg.type === 'graph') {
    document.body.classList.remove('failed');
    if (msg.state !== undefined) {
      vscode.setState(msg.state); // what the view shows: VS Code gives it back after a reload
    }
    render(msg.graph);
  } else if (msg.type === 'status') {
    summaryEl.textContent = msg.message;
  } else if (msg.type === 'error') {
    document.body.classList.add('failed');
    summaryEl.textContent = msg.message;
  }
});
vscode.postMessage({ type: 'ready' });
