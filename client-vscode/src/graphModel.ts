// The pure part of the graph views (src/graphView.ts): what a view shows (its Target, as
// saved in the webview's state), the flow step under the cursor, the skill.md code lenses.
// No vscode import: unit-tested by test/unit.test.mjs.

export type Kind = 'flow' | 'map';
export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}
/** What a panel shows: the request and its parameters (a flow by block id once found; a
 * map focused on `skill`, `hops` 1 or 2 from it). */
export interface Target {
  kind: Kind;
  uri: string;
  skill?: string;
  block?: string;
  hops?: number;
  position?: Position;
}
/** The page's text size and monospace advance width: the server lays out for them. */
export interface Metrics {
  fontSize: number;
  charWidth: number;
}
interface GraphNodeJson {
  id: string;
  location?: { uri: string; range: Range } | null;
}

/** The saved state of a view (what the webview keeps): a Target, checked. */
export function targetOf(state: unknown): Target | undefined {
  const t = (state as { target?: Partial<Target> } | undefined)?.target;
  if (!t || typeof t.uri !== 'string' || (t.kind !== 'flow' && t.kind !== 'map')) {
    return undefined;
  }
  if (t.kind === 'flow' && (typeof t.skill !== 'string' || typeof t.block !== 'string')) {
    return undefined;
  }
  if (t.kind === 'map') {
    const skill = typeof t.skill === 'string' ? t.skill : undefined;
    return { kind: 'map', uri: t.uri, skill, hops: skill ? (t.hops === 2 ? 2 : 1) : undefined };
  }
  return { kind: t.kind, uri: t.uri, skill: t.skill, block: t.block };
}

/** The skill of a `skills/<id>/…` file, or undefined. */
export function skillOfPath(fsPath: string): string | undefined {
  return /[\\/]skills[\\/]([^\\/]+)[\\/][^\\/]+$/.exec(fsPath)?.[1];
}

/** The id of the node whose source lines hold `pos` in `uri` (the latest to start). */
export function nodeAt(nodes: readonly unknown[], uri: string, pos: Position): string | null {
  let best: { id: string; start: Position } | null = null;
  for (const raw of nodes) {
    const n = raw as GraphNodeJson;
    const loc = n.location;
    if (!loc || loc.uri !== uri) {
      continue;
    }
    const { start, end } = loc.range;
    if (pos.line >= start.line && pos.line <= end.line) {
      if (!best || start.line > best.start.line || (start.line === best.start.line && start.character > best.start.character)) {
        best = { id: n.id, start };
      }
    }
  }
  return best?.id ?? null;
}

/** The code lenses of a skill.md: the agent map focused on the skill (first line) and the
 * flow of each ordered block (its opening line). */
export function lensesOf(text: string, skill: string): { line: number; title: string; command: string; block?: string }[] {
  const out: { line: number; title: string; command: string; block?: string }[] = [
    { line: 0, title: `Agent Map: ${skill} and its neighbours`, command: 'mantle.focusSkill' },
  ];
  text.split(/\r?\n/).forEach((l, i) => {
    const m = /:::ordered_block\s+id=([\p{L}\p{N}_-]+)\s*$/u.exec(l);
    if (m) {
      out.push({ line: i, title: `Show Flow of ${m[1]}`, command: 'mantle.showFlow', block: m[1] });
    }
  });
  return out;
}

