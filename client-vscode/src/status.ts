// The "Mantle" status bar item: starting / indexing / checking / ready with problem counts /
// error. "ready" is shown only once the workspace's first diagnostics have arrived: before
// that, 0 errors would be a claim nobody checked.
import * as vscode from 'vscode';

type Phase = 'starting' | 'indexing' | 'checking' | 'ready' | 'failed';

/** A project's rule profile and why it applies (`mantle/status`, server side). */
export interface Profile {
  root: string;
  engine: string;
  reason: string;
}

export class Status implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];
  private phase: Phase = 'starting';
  private detail = '';
  private source = '';
  private profiles: Profile[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem('mantle.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Mantle';
    this.item.command = 'mantle.showOutput';
    this.subscriptions.push(
      vscode.languages.onDidChangeDiagnostics(() => {
        if (this.phase === 'ready' && !this.timer) {
          this.timer = setTimeout(() => {
            this.timer = undefined;
            this.render();
          }, 250);
        }
      }),
    );
    this.render();
    this.item.show();
  }

  get current(): Phase {
    return this.phase;
  }

  starting(): void {
    this.set('starting', 'starting the server');
  }

  indexing(message?: string): void {
    this.set('indexing', message ?? '');
  }

  /** The server is up and has indexed; the diagnostics are on their way. */
  checking(source?: string, message?: string): void {
    this.source = source ?? this.source;
    this.set('checking', message ?? '');
  }

  /** The workspace's diagnostics have arrived: counts are now true. */
  ready(source?: string, message?: string): void {
    this.source = source ?? this.source;
    this.set('ready', message ?? (this.phase === 'checking' ? this.detail : ''));
  }

  failed(message: string): void {
    this.set('failed', message);
  }

  setProfiles(profiles: Profile[]): void {
    this.profiles = profiles;
    this.render();
  }

  private set(phase: Phase, detail: string): void {
    this.phase = phase;
    this.detail = detail;
    this.render();
  }

  /** Errors and warnings the server reports (all files, open or not). */
  static counts(): { errors: number; warnings: number } {
    let errors = 0;
    let warnings = 0;
    for (const [, diags] of vscode.languages.getDiagnostics()) {
      for (const d of diags) {
        if (d.source !== 'mantle-lsp') {
          continue;
        }
        if (d.severity === vscode.DiagnosticSeverity.Error) {
          errors++;
        } else if (d.severity === vscode.DiagnosticSeverity.Warning) {
          warnings++;
        }
      }
    }
    return { errors, warnings };
  }

  /** The tooltip lines that say which rules apply, one per project (at most 5). */
  profileLines(): string[] {
    const many = this.profiles.length > 1;
    const lines = this.profiles
      .slice(0, 5)
      .map((p) => `Rules: ${many ? `${p.root.split(/[\\/]/).pop()}: ` : ''}${p.reason}`);
    if (this.profiles.length > 5) {
      lines.push(`… and ${this.profiles.length - 5} more projects (see the "Mantle" output)`);
    }
    return lines;
  }

  private render(): void {
    const item = this.item;
    item.backgroundColor = undefined;
    const server = this.source ? `server: ${this.source}` : '';
    const tail = [...this.profileLines(), server, 'Click to show the output.'].filter(Boolean).join('\n');
    switch (this.phase) {
      case 'starting':
        item.text = '$(sync~spin) Mantle';
        item.tooltip = 'Mantle: starting the language server';
        break;
      case 'indexing':
        item.text = '$(sync~spin) Mantle: indexing';
        item.tooltip = `Mantle: indexing the workspace${this.detail ? ` (${this.detail})` : ''}\n${tail}`;
        break;
      case 'checking':
        item.text = '$(sync~spin) Mantle: checking…';
        item.tooltip =
          `Mantle: checking… — the diagnostics of the workspace are on their way` +
          `${this.detail ? ` (${this.detail})` : ''}\n${tail}`;
        break;
      case 'ready': {
        const { errors, warnings } = Status.counts();
        item.text =
          errors + warnings === 0
            ? '$(check) Mantle'
            : `Mantle $(error) ${errors} $(warning) ${warnings}`;
        item.tooltip =
          `Mantle: ready — ${errors} error${errors === 1 ? '' : 's'}, ` +
          `${warnings} warning${warnings === 1 ? '' : 's'}` +
          (this.detail ? `\n${this.detail}` : '') +
          `\n${tail}`;
        break;
      }
      case 'failed':
        item.text = '$(error) Mantle';
        item.tooltip = `${this.detail}\nClick to show the output.`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
    // what screen readers (and the end-to-end test) read
    const tip = typeof item.tooltip === 'string' ? item.tooltip : '';
    item.accessibilityInformation = { label: tip.replace(/\n/g, '; '), role: 'button' };
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.subscriptions.forEach((d) => d.dispose());
    this.item.dispose();
  }
}
