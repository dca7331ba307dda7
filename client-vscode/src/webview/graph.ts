/// <reference lib="dom" />
// The script of the flow / agent map webview (bundled into dist/graph.js by
// scripts/bundle.mjs; no network). It receives the graph JSON of docs/features/graphs.md
// with its layout — computed by the server (ide/layout.py) for this page's font size and
// the advance width of its monospace font, which the page measures and sends when it is
// ready — and draws it as SVG in the colours of the theme (CSS variables).
//
// Reading a large graph: it opens at its natural size (text at the UI font size) and is
// panned (drag, arrow keys, the minimap) and zoomed (wheel, + and -, 0 for 100%); a search
// box finds a node and centres it; the agent map focuses on one skill and its neighbours;
// a flow highlights the step under the editor's cursor. A click on a node reveals its
// source (Enter on a focused node too).

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
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
  lines: string[];
}
/** The layout the server sends (`layout` of docs/features/graphs.md). */
interface LayoutWire {
  width: number;
  height: number;
  fontSize: number;
  lineHeight: number;
  padX: number;
  padY: number;
  nodes: (Box & { id: string })[];
  edges: ({ points: [number, number][]; path: string; label?: Box } | null)[];
}
/** The same, its node boxes by id. */
interface LayoutJson extends Omit<LayoutWire, 'nodes'> {
  nodes: Record<string, Box>;
}
interface GraphData {
  kind: 'flow' | 'map';
  title: string;
  skill?: string;
  hops?: number;
  omitted?: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  layout?: LayoutWire;
}
type Message =
  | { type: 'graph'; graph: GraphData; state?: unknown; current?: string | null }
  | { type: 'current'; id: string | null }
  | { type: 'error'; message: string }
  | { type: 'status'; message: string };

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; setState(state: unknown): void };

const vscode = acquireVsCodeApi();
const SVG = 'http://www.w3.org/2000/svg';
const $ = <T extends Element>(id: string): T => document.getElementById(id) as unknown as T;
const svg = $<SVGSVGElement>('graph');
const mini = $<SVGSVGElement>('minimap');
const titleEl = $<HTMLElement>('title');
const summaryEl = $<HTMLElement>('summary');
const search = $<HTMLInputElement>('search');
const matchesEl = $<HTMLElement>('matches');
const focusButton = $<HTMLButtonElement>('focus');
const hopsSelect = $<HTMLSelectElement>('hops');
const wholeButton = $<HTMLButtonElement>('whole');
const MIN_SCALE = 0.05;
const MAX_SCALE = 4;

// the view: the layout point at the top-left corner of the svg, and screen px per layout px
let view = { x: 0, y: 0, scale: 1 };
let graph: GraphData | undefined;
let layout: LayoutJson | undefined;
let lastKey = '';
let current: string | null = null;
let selected: string | null = null;
let matches: string[] = [];
let matchAt = -1;
let touched = false; // the user moved the view since the graph opened (else a resize re-places it)
const nodeEls = new Map<string, SVGGElement>();
const miniEls = new Map<string, SVGRectElement>();
let miniFrame: SVGRectElement | undefined;
let miniScale = 1;
let lastSize = { w: 0, h: 0 };

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, parent?: Element): SVGElementTagNameMap[K] {
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

/** The page's text size and its monospace font's advance width (the widest character of
 * a sample, so a proportional font gets boxes wide enough too): the server lays out with these. */
export function measure(): { fontSize: number; charWidth: number } {
  const style = getComputedStyle(document.body);
  const fontSize = parseFloat(style.fontSize) || 13;
  const family = style.getPropertyValue('--vscode-editor-font-family').trim() || 'monospace';
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx) {
    return { fontSize, charWidth: fontSize * 0.62 };
  }
  let widest = 0;
  for (const weight of ['normal', '600']) {
    ctx.font = `${weight} ${fontSize}px ${family}`;
    for (const ch of 'abcdefghijklmnopqrstuvwxyz0123456789_.=<>\'ABCDEFGHIJKLMNOPQRSTUVWXYZ') {
      widest = Math.max(widest, ctx.measureText(ch.repeat(10)).width / 10);
    }
  }
  return { fontSize, charWidth: Math.ceil(widest * 100) / 100 || fontSize * 0.62 };
}

// ---- drawing ------------------------------------------------------------------------------
function render(g: GraphData, cur: string | null | undefined): void {
  titleEl.textContent = g.title;
  const bad = g.nodes.filter((n) => worst(n) === 'error' || worst(n) === 'warning').length;
  const unreachable = g.nodes.filter((n) => n.unreachable).length;
  summaryEl.textContent =
    `${g.nodes.length} nodes, ${g.edges.length} edges` +
    (bad ? ` · ${bad} with problems` : '') +
    (unreachable ? ` · ${unreachable} unreachable` : '') +
    (g.omitted ? ` · ${g.omitted} more skills two hops away not shown` : '');
  document.body.classList.toggle('map', g.kind === 'map');
  document.body.classList.toggle('focused', g.kind === 'map' && !!g.skill);
  if (g.hops) {
    hopsSelect.value = String(g.hops);
  }
  if (!g.layout) {
    summaryEl.textContent = 'laying out…';
    return;
  }
  const key = `${g.kind}:${g.title}`;
  const same = key === lastKey && layout !== undefined;
  const anchor = same ? anchorNow() : undefined;
  graph = g;
  layout = { ...g.layout, nodes: Object.fromEntries(g.layout.nodes.map((b) => [b.id, b])) };
  lastKey = key;
  if (cur !== undefined) {
    current = cur;
  }
  draw(g, layout);
  if (!same) {
    selected = g.kind === 'map' && g.skill ? `skill:${g.skill}` : null;
    touched = false;
    initialView();
  } else if (anchor) {
    const b = layout.nodes[anchor.id];
    if (b) {
      view.x = b.x + b.width / 2 - anchor.sx / view.scale;
      view.y = b.y + b.height / 2 - anchor.sy / view.scale;
    }
  }
  markAll();
  apply();
}

function draw(g: GraphData, lay: LayoutJson): void {
  svg.replaceChildren();
  nodeEls.clear();
  const defs = el('defs', {}, svg);
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }, marker);
  const edgeLayer = el('g', { class: 'edges' }, svg);
  const nodeLayer = el('g', { class: 'nodes' }, svg);
  const fs = lay.fontSize;
  const baseline = (b: Box, i: number): number => b.y + lay.padY + i * lay.lineHeight + (lay.lineHeight + fs * 0.7) / 2;
  g.edges.forEach((e, i) => {
    const route = lay.edges[i];
    if (!route) {
      return;
    }
    const group = el('g', { class: `edge edge-${e.kind}`, 'data-source': e.source, 'data-target': e.target }, edgeLayer);
    el('path', { d: route.path, 'marker-end': 'url(#arrow)' }, group);
    const text = edgeText(g, e);
    el('title', {}, group).textContent = `${e.source} → ${e.target}${text ? `: ${text}` : ''}`;
    const lb = route.label;
    if (lb) {
      const lg = el('g', { class: 'edge-label' }, group);
      el('rect', { x: lb.x, y: lb.y, width: lb.width, height: lb.height, rx: 3 }, lg);
      lb.lines.forEach((line, j) => {
        el('text', { x: lb.x + lay.padX, y: baseline(lb, j), 'font-size': fs }, lg).textContent = line;
      });
    }
  });
  for (const n of g.nodes) {
    const b = lay.nodes[n.id];
    if (!b) {
      continue;
    }
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
    const group = el('g', { class: classes.join(' '), 'data-id': n.id, tabindex: 0, role: 'button', 'aria-label': n.label }, nodeLayer);
    nodeEls.set(n.id, group);
    el('title', {}, group).textContent = [
      `${n.label}${n.detail ? ` — ${n.detail}` : ''}`,
      ...(n.unreachable ? ['unreachable: no path from the first step leads here'] : []),
      ...n.problems.map((p) => `${p.severity}: ${p.message} [${p.code}]`),
      ...(n.kind === 'skill' && g.kind === 'map' ? ['double-click: focus on this skill'] : []),
    ].join('\n');
    const r = n.kind === 'end' ? b.height / 2 : n.kind.includes('field') ? 14 : 4;
    el('rect', { x: b.x, y: b.y, width: b.width, height: b.height, rx: r, class: 'box' }, group);
    b.lines.forEach((line, j) => {
      const t = el('text', { x: b.x + b.width / 2, y: baseline(b, j), 'text-anchor': 'middle', 'font-size': fs, class: j ? 'detail' : 'label' }, group);
      t.textContent = line;
    });
    if (bad === 'error' || bad === 'warning') {
      const badge = el('circle', { cx: b.x + b.width - 2, cy: b.y + 2, r: Math.max(6, fs / 2), class: `badge badge-${bad}` }, group);
      badge.setAttribute('data-count', String(n.problems.length));
    }
    const reveal = (): void => {
      select(n.id);
      if (n.location) {
        vscode.postMessage({ type: 'reveal', location: n.location, id: n.id });
      }
    };
    group.addEventListener('click', reveal);
    group.addEventListener('dblclick', () => {
      if (g.kind === 'map' && (n.kind === 'skill' || n.kind === 'bundled_skill')) {
        focusOn(n.label);
      }
    });
    group.addEventListener('keydown', (ev) => {
      if ((ev as KeyboardEvent).key === 'Enter') {
        reveal();
      }
    });
  }
  drawMinimap(g, lay);
}

function edgeText(g: GraphData, e: GraphEdge): string {
  if (g.kind === 'flow') {
    return e.label ?? '';
  }
  return e.kind === 'uses' ? 'uses' : e.label ? `${e.kind}: ${e.label}` : e.kind;
}

/** Classes that follow the user: the current step, the selection, the search matches. */
function markAll(): void {
  const hit = new Set(matches);
  for (const [id, g] of nodeEls) {
    g.classList.toggle('current', id === current);
    g.classList.toggle('selected', id === selected);
    g.classList.toggle('match', hit.has(id));
  }
  for (const [id, r] of miniEls) {
    r.classList.toggle('current', id === current);
    r.classList.toggle('match', hit.has(id) || id === selected);
  }
  const sel = graph?.nodes.find((n) => n.id === selected);
  focusButton.disabled = !(graph?.kind === 'map' && sel && sel.kind === 'skill' && !(graph.skill === sel.label));
  focusButton.textContent = !focusButton.disabled && sel ? `Focus on ${sel.label}` : 'Focus';
}

function select(id: string | null): void {
  selected = id;
  markAll();
}

// ---- the view: pan, zoom, fit, minimap ----------------------------------------------------------
function size(): { w: number; h: number } {
  const r = svg.getBoundingClientRect();
  return { w: r.width || 1, h: r.height || 1 };
}

function apply(): void {
  const { w, h } = size();
  svg.setAttribute('viewBox', `${view.x} ${view.y} ${w / view.scale} ${h / view.scale}`);
  document.body.dataset.scale = view.scale.toFixed(3);
  $<HTMLElement>('zoom100').textContent = `${Math.round(view.scale * 100)}%`;
  updateMinimap();
}

/** Put layout point (lx, ly) at screen point (sx, sy) of the svg. */
function place(lx: number, ly: number, sx: number, sy: number): void {
  view.x = lx - sx / view.scale;
  view.y = ly - sy / view.scale;
}

function zoom(factor: number, sx?: number, sy?: number): void {
  touched = true;
  const { w, h } = size();
  const px = sx ?? w / 2;
  const py = sy ?? h / 2;
  const lx = view.x + px / view.scale;
  const ly = view.y + py / view.scale;
  view.scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, view.scale * factor));
  place(lx, ly, px, py);
  apply();
}

function centreOn(id: string, readable = true): void {
  const b = layout?.nodes[id];
  if (!b) {
    return;
  }
  if (readable && view.scale < 1) {
    view.scale = 1;
  }
  const { w, h } = size();
  place(b.x + b.width / 2, b.y + b.height / 2, w / 2, h / 2);
  apply();
}

function visible(id: string): boolean {
  const b = layout?.nodes[id];
  if (!b) {
    return false;
  }
  const { w, h } = size();
  const x0 = (b.x - view.x) * view.scale;
  const y0 = (b.y - view.y) * view.scale;
  return x0 >= 0 && y0 >= 0 && x0 + b.width * view.scale <= w && y0 + b.height * view.scale <= h;
}

/** Where a graph first opens: at its natural size (text at the UI font size) — the whole
 * graph centred when it fits, else a readable part: a flow's current or first step, a
 * focused map's skill, a whole map's top left. Never shrunk to fit. */
function initialView(): void {
  if (!layout || !graph) {
    return;
  }
  const { w, h } = size();
  view.scale = 1;
  if (layout.width <= w && layout.height <= h) {
    place(layout.width / 2, layout.height / 2, w / 2, h / 2);
    return;
  }
  // a flow: the step under the cursor (a third down), else its first step (at the top); a
  // focused map: its skill (in the middle); the whole map: its first skill (on the left)
  const first = graph.kind === 'flow' ? current ?? graph.nodes[0]?.id : graph.skill ? `skill:${graph.skill}` : graph.nodes[0]?.id;
  const b = first ? layout.nodes[first] : undefined;
  if (!b) {
    place(0, 0, 0, 0);
  } else if (graph.kind === 'flow' && first === current) {
    place(b.x + b.width / 2, b.y + b.height / 2, w / 2, Math.min(h / 3, b.height * 2));
  } else if (graph.kind === 'flow') {
    place(b.x + b.width / 2, 0, w / 2, 0);
  } else if (graph.skill) {
    place(b.x + b.width / 2, b.y + b.height / 2, w / 2, h / 2);
  } else {
    place(b.x, b.y + b.height / 2, Math.min(w / 4, 40), h / 2);
  }
  // never show empty space beyond the graph's left or top edge when it does not fit
  if (layout.width > w) {
    view.x = Math.min(Math.max(view.x, 0), layout.width - w);
  } else {
    view.x = (layout.width - w) / 2;
  }
  if (layout.height > h) {
    view.y = Math.min(Math.max(view.y, 0), layout.height - h);
  }
}

/** The whole graph in the view: shrunk if it must be (never enlarged past 100%). */
function fit(): void {
  if (!layout) {
    return;
  }
  touched = true;
  const { w, h } = size();
  view.scale = Math.max(MIN_SCALE, Math.min(1, w / layout.width, h / layout.height));
  place(layout.width / 2, layout.height / 2, w / 2, h / 2);
  apply();
}

function anchorNow(): { id: string; sx: number; sy: number } | undefined {
  if (!layout) {
    return undefined;
  }
  const { w, h } = size();
  const cx = view.x + w / 2 / view.scale;
  const cy = view.y + h / 2 / view.scale;
  let best: { id: string; d: number } | undefined;
  for (const [id, b] of Object.entries(layout.nodes)) {
    const d = Math.hypot(b.x + b.width / 2 - cx, b.y + b.height / 2 - cy);
    if (!best || d < best.d) {
      best = { id, d };
    }
  }
  if (!best) {
    return undefined;
  }
  const b = layout.nodes[best.id];
  return { id: best.id, sx: (b.x + b.width / 2 - view.x) * view.scale, sy: (b.y + b.height / 2 - view.y) * view.scale };
}

function drawMinimap(g: GraphData, lay: LayoutJson): void {
  mini.replaceChildren();
  miniEls.clear();
  // at most 180 x 150 px, and a fifth of the view's width, a quarter of its height
  const { w, h } = size();
  miniScale = Math.min(Math.min(180, w / 5) / lay.width, Math.min(150, h / 4) / lay.height);
  const mw = Math.max(24, lay.width * miniScale);
  const mh = Math.max(24, lay.height * miniScale);
  mini.setAttribute('width', String(mw));
  mini.setAttribute('height', String(mh));
  mini.setAttribute('viewBox', `0 0 ${lay.width} ${lay.height}`);
  mini.setAttribute('preserveAspectRatio', 'xMidYMin meet');
  el('rect', { x: 0, y: 0, width: lay.width, height: lay.height, class: 'mini-bg' }, mini);
  for (const n of g.nodes) {
    const b = lay.nodes[n.id];
    if (b) {
      const bad = worst(n);
      miniEls.set(n.id, el('rect', { x: b.x, y: b.y, width: b.width, height: b.height, class: `mini-node${bad === 'error' || bad === 'warning' ? ` problem-${bad}` : ''}` }, mini));
    }
  }
  miniFrame = el('rect', { x: 0, y: 0, width: 1, height: 1, class: 'mini-frame', 'vector-effect': 'non-scaling-stroke' }, mini);
}

function updateMinimap(): void {
  if (!layout || !miniFrame) {
    return;
  }
  const { w, h } = size();
  const vw = w / view.scale;
  const vh = h / view.scale;
  miniFrame.setAttribute('x', String(view.x));
  miniFrame.setAttribute('y', String(view.y));
  miniFrame.setAttribute('width', String(vw));
  miniFrame.setAttribute('height', String(vh));
  const all = view.x <= 0 && view.y <= 0 && view.x + vw >= layout.width && view.y + vh >= layout.height;
  mini.classList.toggle('hidden', all);
}

function miniMove(e: PointerEvent): void {
  if (!layout) {
    return;
  }
  touched = true;
  const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(mini.getScreenCTM()?.inverse());
  const { w, h } = size();
  place(p.x, p.y, w / 2, h / 2);
  apply();
}
let miniDrag = false;
mini.addEventListener('pointerdown', (e) => {
  miniDrag = true;
  mini.setPointerCapture(e.pointerId);
  miniMove(e);
});
mini.addEventListener('pointermove', (e) => miniDrag && miniMove(e));
mini.addEventListener('pointerup', () => {
  miniDrag = false;
});

// pan (drag), zoom (wheel: toward the pointer; a horizontal swipe pans)
let drag: { x: number; y: number; vx: number; vy: number } | undefined;
svg.addEventListener('pointerdown', (e) => {
  if ((e.target as Element).closest('.node')) {
    return;
  }
  drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
  touched = true;
  svg.setPointerCapture(e.pointerId);
  svg.classList.add('dragging');
});
svg.addEventListener('pointermove', (e) => {
  if (!drag) {
    return;
  }
  view.x = drag.vx - (e.clientX - drag.x) / view.scale;
  view.y = drag.vy - (e.clientY - drag.y) / view.scale;
  apply();
});
svg.addEventListener('pointerup', () => {
  drag = undefined;
  svg.classList.remove('dragging');
});
svg.addEventListener(
  'wheel',
  (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? 400 : 1;
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY) && !e.ctrlKey) {
      touched = true;
      view.x += (e.deltaX * unit) / view.scale;
      apply();
      return;
    }
    const box = svg.getBoundingClientRect();
    // a mouse wheel notch (100 px) zooms by a quarter
    zoom(Math.exp((-e.deltaY * unit) / 450), e.clientX - box.left, e.clientY - box.top);
  },
  { passive: false },
);
window.addEventListener('keydown', (e) => {
  if (e.target === search) {
    return;
  }
  if ((e.key === 'f' && (e.ctrlKey || e.metaKey)) || e.key === '/') {
    e.preventDefault();
    search.focus();
    search.select();
    return;
  }
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) {
    return;
  }
  const step = (e.shiftKey ? 300 : 60) / view.scale;
  const moves: Record<string, [number, number]> = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
  if (moves[e.key]) {
    e.preventDefault();
    touched = true;
    view.x += moves[e.key][0];
    view.y += moves[e.key][1];
    apply();
  } else if (e.key === '+' || e.key === '=') {
    zoom(1.25);
  } else if (e.key === '-') {
    zoom(0.8);
  } else if (e.key === '0') {
    zoom(1 / view.scale);
  }
});
$<HTMLButtonElement>('zoomin').addEventListener('click', () => zoom(1.25));
$<HTMLButtonElement>('zoomout').addEventListener('click', () => zoom(0.8));
$<HTMLButtonElement>('zoom100').addEventListener('click', () => zoom(1 / view.scale));
$<HTMLButtonElement>('fit').addEventListener('click', fit);
window.addEventListener('resize', () => {
  if (!touched) {
    initialView(); // the view grew or shrank before the user moved it: open it again
  }
  const now = size();
  if (graph && layout && (now.w !== lastSize.w || now.h !== lastSize.h)) {
    lastSize = now;
    drawMinimap(graph, layout);
    markAll();
  }
  apply();
});

// ---- search ---------------------------------------------------------------------------------
/** The nodes whose label (or id) holds the query: exact labels first, then prefixes. */
function find(query: string): string[] {
  const q = query.trim().toLowerCase();
  if (!q || !graph) {
    return [];
  }
  const rank = (n: GraphNode): number => {
    const l = n.label.toLowerCase();
    return l === q ? 0 : l.startsWith(q) ? 1 : l.includes(q) ? 2 : n.id.toLowerCase().includes(q) ? 3 : 9;
  };
  return graph.nodes
    .map((n, i) => ({ n, r: rank(n), i }))
    .filter((x) => x.r < 9)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.n.id);
}

function showMatch(delta: number): void {
  if (!matches.length) {
    return;
  }
  touched = true;
  matchAt = (matchAt + delta + matches.length) % matches.length;
  const id = matches[matchAt];
  select(id);
  centreOn(id);
  matchesEl.textContent = `${matchAt + 1} of ${matches.length}`;
}

search.addEventListener('input', () => {
  matches = find(search.value);
  matchAt = -1;
  matchesEl.textContent = search.value.trim() ? (matches.length ? `${matches.length} found: Enter` : 'none found') : '';
  markAll();
});
search.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    e.preventDefault();
    showMatch(e.shiftKey ? -1 : 1);
  } else if (e.key === 'Escape') {
    search.value = '';
    matches = [];
    matchesEl.textContent = '';
    markAll();
  }
});

// ---- focus (the agent map of one skill and its neighbours) ------------------------------------
function focusOn(skill: string | null): void {
  vscode.postMessage({ type: 'focus', skill, hops: Number(hopsSelect.value) === 2 ? 2 : 1 });
  summaryEl.textContent = skill ? `focusing on ${skill}…` : 'the whole map…';
}
focusButton.addEventListener('click', () => {
  const sel = graph?.nodes.find((n) => n.id === selected);
  if (sel && sel.kind === 'skill') {
    focusOn(sel.label);
  }
});
hopsSelect.addEventListener('change', () => {
  if (graph?.skill) {
    focusOn(graph.skill);
  }
});
wholeButton.addEventListener('click', () => focusOn(null));

window.addEventListener('message', (event: MessageEvent<Message>) => {
  const msg = event.data;
  if (msg.type === 'graph') {
    document.body.classList.remove('failed');
    if (msg.state !== undefined) {
      vscode.setState(msg.state); // what the view shows: VS Code gives it back after a reload
    }
    render(msg.graph, msg.current);
  } else if (msg.type === 'current') {
    current = msg.id;
    markAll();
    if (current && !visible(current)) {
      centreOn(current, false);
    }
  } else if (msg.type === 'status') {
    summaryEl.textContent = msg.message;
  } else if (msg.type === 'error') {
    document.body.classList.add('failed');
    summaryEl.textContent = msg.message;
  }
});
vscode.postMessage({ type: 'ready', metrics: measure() });
