// Read-only documents the server renders (the prompt preview, the memory manifest): each
// follows the edits of the files it is made of, refreshed a little after a burst of edits.
//
// They are served by a read-only file system provider, not a text document content
// provider: VS Code restores an editor of a file system's document after a window reload
// (activating the extension with `onFileSystem:<scheme>`), while a content provider's
// editors are dropped. A restored document is first asked for before the server runs; it
// is read again when the server has indexed.
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';

const REFRESH_MS = 300;

/** The client when it is running, else undefined. */
export function runningClient(getClient: () => LanguageClient | undefined): LanguageClient | undefined {
  const c = getClient();
  return c && c.state === State.Running ? c : undefined;
}

export abstract class FollowingDocuments implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  /** a document's modification time: a new one on every refresh, so VS Code reads it again */
  private mtime = Date.now();

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
      this.mtime = Math.max(Date.now(), this.mtime + 1);
      const events = vscode.workspace.textDocuments
        .filter((doc) => doc.uri.scheme === this.scheme)
        .map((doc) => ({ type: vscode.FileChangeType.Changed, uri: doc.uri }));
      if (events.length) {
        this.changed.fire(events);
      }
    }, REFRESH_MS);
  }

  /**
   * The provider registered for its scheme, refreshed on every edit and save of a file
   * and when a server has indexed.
   */
  register(serverReady: vscode.Event<void>): vscode.Disposable[] {
    return [
      this.changed,
      vscode.workspace.registerFileSystemProvider(this.scheme, this, { isReadonly: true, isCaseSensitive: true }),
      serverReady(() => this.schedule()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && e.document.uri.scheme === 'file') {
          this.schedule();
        }
      }),
      vscode.workspace.onDidSaveTextDocument(() => this.schedule()),
    ];
  }

  // ---- the read-only file system ------------------------------------------------------------
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    if (uri.path === '/' || uri.path === '') {
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    }
    return { type: vscode.FileType.File, ctime: 0, mtime: this.mtime, size: 0 };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return Buffer.from(await this.provideTextDocumentContent(uri), 'utf8');
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  writeFile(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}
