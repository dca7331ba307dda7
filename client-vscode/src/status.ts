// The "Mantle" status bar item: starting / indexing / ready with problem counts / error.
import * as vscode from 'vscode';

type Phase = 'starting' | 'indexing' | 'ready' | 'failed';

export class Status implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];
  private phase: Phase = 'starting';
  private detail = '';
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

  starting(): void {
    this.set('starting', 'starting the server');
  }

  indexing(message?: string): void {
    this.set('indexing', message ?? '');
  }

  ready(source?: string, message?: string): void {
    this.set('ready', [message, source ? `server: ${source}` : ''].filter(Boolean).join('\n'));
  }

  failed(message: string): void {
    this.set('failed', message);
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

  private render(): void {
    const item = this.item;
    item.backgroundColor = undefined;
    switch (this.phase) {
      case 'starting':
        item.text = '$(sync~spin) Mantle';
        item.tooltip = 'Mantle: starting the language server';
        break;
      case 'indexing':
        item.text = '$(sync~spin) Mantle: indexing';
        item.tooltip = `Mantle: indexing the workspace${this.detail ? ` (${this.detail})` : ''}`;
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
          '\nClick to show the output.';
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
