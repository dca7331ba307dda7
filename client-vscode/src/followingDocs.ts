// Read-only documents the server renders (the prompt preview, the memory manifest): each
// follows the edits of the files it is made of, refreshed a little after a burst of edits.
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';

const REFRESH_MS = 300;

/** The client when it is running, else undefined. */
export function runningClient(getClient: () => LanguageClient | undefined): LanguageClient | undefined {
  const c = getClient();
  return c && c.state === State.Running ? c : undefined;
}

export abstract class FollowingDocuments implements vscode.TextDocumentContentProvider {
  readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly scheme: string,
    protected readonly getClient: () => LanguageClient | undefined,
    protected readonly log: (message: string) => void,
  ) {}

  abstract provideTextDocumentContent(uri: vscode.Uri): Promise<string>;

  /** Refresh every open document of this scheme a little later (edits come in bursts). */
  schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      for (const doc of vscode.workspace.textDocuments) {
        if (doc.uri.scheme === this.scheme) {
          this.changed.fire(doc.uri);
        }
      }
    }, REFRESH_MS);
  }

  /** The provider registered for its scheme, refreshed on every edit and save of a file. */
  register(): vscode.Disposable[] {
    return [
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(this.scheme, this),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && e.document.uri.scheme === 'file') {
          this.schedule();
        }
      }),
      vscode.workspace.onDidSaveTextDocument(() => this.schedule()),
    ];
  }
}
