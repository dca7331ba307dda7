// "Mantle: Preview Memory Manifest": the entries a Cadenya memory-layer cascade gives the
// agent, in resolution order (the server's `mantle/layersManifest`, docs/memory-layers.md),
// in a read-only document beside the editor. It follows edits of the layer files.
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { FollowingDocuments, runningClient } from './followingDocs';

export const LAYERS_MANIFEST = 'mantle/layersManifest';
export const MANIFEST_SCHEME = 'mantle-manifest';

interface CascadeInfo {
  name: string;
  variation: string | null;
  root: string; // the memory-layers/ folder (a URI)
}

/** The manifest document of a cascade of one memory-layers/ folder. */
export function manifestUri(cascade: string, root: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: MANIFEST_SCHEME,
    path: `/${cascade} manifest.txt`,
    query: new URLSearchParams({ cascade, root }).toString(),
  });
}

class ManifestProvider extends FollowingDocuments {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const c = runningClient(this.getClient);
    if (!c) {
      return '(the Mantle language server is not running)\n';
    }
    try {
      const got = await c.sendRequest<{ text: string }>(LAYERS_MANIFEST, {
        textDocument: { uri: `${q.get('root') ?? ''}/cascades.yml` },
        cascade: q.get('cascade') ?? '',
      });
      return got.text;
    } catch (e) {
      this.log(`memory manifest: ${String(e)}`);
      return `(no manifest: ${e instanceof Error ? e.message : String(e)})\n`;
    }
  }
}

export function registerLayersManifest(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
  serverReady: vscode.Event<void>,
): void {
  const provider = new ManifestProvider(MANIFEST_SCHEME, getClient, log);
  context.subscriptions.push(
    ...provider.register(serverReady),
    vscode.commands.registerCommand('mantle.previewMemoryManifest', async (uri?: vscode.Uri) => {
      const c = runningClient(getClient);
      if (!c) {
        void vscode.window.showInformationMessage('Mantle: the language server is not running.');
        return;
      }
      const target = uri ?? vscode.window.activeTextEditor?.document.uri;
      const params = target?.scheme === 'file' ? { textDocument: { uri: target.toString() } } : {};
      let cascades: CascadeInfo[];
      try {
        cascades = (await c.sendRequest<{ cascades: CascadeInfo[] }>(LAYERS_MANIFEST, params)).cascades;
      } catch (e) {
        void vscode.window.showErrorMessage(`Mantle: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      if (!cascades.length) {
        void vscode.window.showInformationMessage(
          'Mantle: no cascade found: name your cascades in memory-layers/cascades.yml.',
        );
        return;
      }
      const picked =
        cascades.length === 1
          ? cascades[0]
          : (
              await vscode.window.showQuickPick(
                cascades.map((k) => ({ label: k.name, description: k.variation ?? '', cascade: k })),
                { placeHolder: 'The cascade whose manifest to preview' },
              )
            )?.cascade;
      if (!picked) {
        return;
      }
      const doc = await vscode.workspace.openTextDocument(manifestUri(picked.name, picked.root));
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    }),
  );
}
