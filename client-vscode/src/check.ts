// "Mantle: Check Workspace" / "Mantle: Check File": `mantle-lsp check` in a terminal whose
// report stays on screen once the check ends, with no "exit code 1" error toast (finding
// problems is the check's job); "Mantle: Open Diagnostics Reference".
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { exitSummary, toTerminal } from './text';

export interface CheckRun {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** the first line of the report, e.g. "mantle-lsp check /path/to/agent" */
  title: string;
}

/**
 * A terminal that runs one check and keeps its output: the process's end is written as
 * a last line, and the terminal stays open (no exit code for VS Code to report) until
 * the user closes it or runs the next check. Ctrl+C stops a running check.
 */
class CheckPty implements vscode.Pseudoterminal {
  private readonly write = new vscode.EventEmitter<string>();
  private readonly closed = new vscode.EventEmitter<void>();
  readonly onDidWrite = this.write.event;
  readonly onDidClose = this.closed.event;
  private child: ChildProcess | undefined;
  /** resolves with the exit status when the check ends */
  readonly done: Promise<number | null>;
  private finish: (code: number | null) => void = () => {};

  constructor(private readonly run: CheckRun) {
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  open(): void {
    const { command, args, cwd, env, title } = this.run;
    this.write.fire(`\x1b[1m${title}\x1b[0m\r\n\r\n`);
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        cwd,
        env: { ...process.env, ...env, FORCE_COLOR: '1', COLUMNS: '120' },
        windowsHide: true,
      });
    } catch (e) {
      this.end(`could not start ${command}: ${e}`, null);
      return;
    }
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => this.write.fire(toTerminal(d.toString())));
    child.stderr?.on('data', (d: Buffer) => this.write.fire(toTerminal(d.toString())));
    child.on('error', (e) => this.end(`could not start ${command}: ${e.message}`, null));
    child.on('close', (code, signal) => this.end(exitSummary(code, signal), code));
  }

  private ended = false;
  private end(summary: string, code: number | null): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    this.child = undefined;
    this.write.fire(
      `\r\n\x1b[1m── mantle-lsp check: ${summary}\x1b[0m\r\n` +
        '\x1b[2mThe report stays here until you close this terminal; the Problems panel shows ' +
        'the live diagnostics.\x1b[0m\r\n',
    );
    this.finish(code);
  }

  handleInput(data: string): void {
    if (data === '\x03' && this.child) {
      this.child.kill();
    }
  }

  close(): void {
    this.child?.kill();
    this.write.dispose();
    this.closed.dispose();
  }
}

let terminal: vscode.Terminal | undefined;

/** Run a check in the "Mantle: check" terminal (replacing the previous report). */
export function runCheck(run: CheckRun): Promise<number | null> {
  terminal?.dispose();
  const pty = new CheckPty(run);
  const t = vscode.window.createTerminal({
    name: 'Mantle: check',
    pty,
    iconPath: new vscode.ThemeIcon('checklist'),
    isTransient: true,
  });
  terminal = t;
  const sub = vscode.window.onDidCloseTerminal((closed) => {
    if (closed === t) {
      if (terminal === t) {
        terminal = undefined;
      }
      sub.dispose();
    }
  });
  t.show(true);
  return pty.done;
}

/** The diagnostic codes of ours under the cursor, nearest first. */
export function codesAt(editor: vscode.TextEditor | undefined): string[] {
  if (!editor) {
    return [];
  }
  const pos = editor.selection.active;
  const codes: string[] = [];
  for (const d of vscode.languages.getDiagnostics(editor.document.uri)) {
    if (d.source !== 'mantle-lsp' || !d.range.contains(pos)) {
      continue;
    }
    const code = typeof d.code === 'object' ? String(d.code.value) : String(d.code ?? '');
    if (code && !codes.includes(code)) {
      codes.push(code);
    }
  }
  return codes;
}

/** The page of each code, shipped with the bundled server (`mantle_lsp/code_docs`). */
export function referencePages(libs: string): Map<string, string> {
  const dir = path.join(libs, 'mantle_lsp', 'code_docs');
  const pages = new Map<string, string>();
  try {
    for (const f of fs.readdirSync(dir).sort()) {
      if (f.endsWith('.md')) {
        pages.set(f.slice(0, -3), path.join(dir, f));
      }
    }
  } catch {
    /* no bundled server */
  }
  return pages;
}

/** The first line under a page's title that says what it means, for the quick pick. */
function summary(file: string): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    const m = /## What it means\s*\n+([^\n]+)/.exec(text);
    return m ? m[1].trim() : '';
  } catch {
    return '';
  }
}

/**
 * Mantle: Open Diagnostics Reference — the page of the code under the cursor (a pick when
 * several codes are there), else a searchable list of every code: the index.
 */
export async function openReference(libs: string): Promise<void> {
  const pages = referencePages(libs);
  if (pages.size === 0) {
    void vscode.window.showWarningMessage(
      'Mantle: the diagnostics reference is not in this installation of the extension.',
    );
    return;
  }
  const here = codesAt(vscode.window.activeTextEditor).filter((c) => pages.has(c));
  let code = here.length === 1 ? here[0] : undefined;
  if (!code) {
    const items: (vscode.QuickPickItem & { code?: string })[] = [];
    if (here.length) {
      items.push({ label: 'At the cursor', kind: vscode.QuickPickItemKind.Separator });
      items.push(...here.map((c) => ({ label: c, code: c, detail: summary(pages.get(c)!) })));
      items.push({ label: 'Every code', kind: vscode.QuickPickItemKind.Separator });
    }
    for (const c of pages.keys()) {
      if (!here.includes(c)) {
        items.push({ label: c, code: c });
      }
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Mantle: diagnostics reference',
      placeHolder: 'A diagnostic code (type to filter)',
      matchOnDescription: true,
    });
    code = picked?.code;
  }
  if (!code) {
    return;
  }
  await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(pages.get(code)!));
}
