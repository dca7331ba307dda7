// "Mantle: Preview Prompt": the skill's instruction text as the engine puts it in the
// system prompt (the server's `mantle/previewPrompt`, docs/features/preview.md), in a
// read-only document beside the skill. The memory state is the project's
// `.mantle-state.yml` ("Mantle: Edit Prompt Preview Memory State"), unsaved edits included;
// the preview follows edits of the skill's files and of the state as they are typed.
import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { FollowingDocuments, runningClient } from './followingDocs';

export const PREVIEW_PROMPT = 'mantle/previewPrompt';
export const SCHEME = 'mantle-prompt';
export const STATE_FILE = '.mantle-state.yml';
const STATE_TEMPLATE =
  '# Memory state for "Mantle: Preview Prompt": namespaces (a skill id, or project) map\n' +
  '# entries to values; anything absent is None. For example:\n' +
  '# card_replace: {reason: lost}\n' +
  '# project: {customer_tier: gold}\n';

interface Paragraph {
  line: number;
  condition: string | null;
  kept: boolean;
  text: string;
  reason?: string;
  detail?: string;
}
interface PreviewJson {
  skill: string;
  text: string;
  tokens: number;
  token_estimate: string;
  dropped: Paragraph[];
  unresolved: { token: string; reason: string }[];
  ignored_state: string[];
}

/** The skill folder (`…/skills/<id>`) of a file, or undefined. */
export function skillFolder(fsPath: string): string | undefined {
  const dir = path.dirname(fsPath);
  const parts = dir.split(path.sep);
  if (parts.length >= 2 && parts[parts.length - 2] === 'skills') {
    return dir;
  }
  if (parts.length >= 3 && parts[parts.length - 3] === 'skills' && parts[parts.length - 1] === 'tools') {
    return path.dirname(dir);
  }
  return undefined;
}

/** The preview document of a skill folder (its uri carries the folder). */
export function previewUri(folder: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: SCHEME,
    path: `/${path.basename(folder)} prompt.md`,
    query: encodeURIComponent(folder),
  });
}

/** The preview as text: the prompt text exactly, then what was left out and why. */
export function renderPreview(pv: PreviewJson, stateFile: string): string {
  const lines = [pv.text, '', '<!-- ' + '-'.repeat(70) + ' -->'];
  lines.push(`<!-- ~${pv.tokens} tokens (${pv.token_estimate}); memory state: ${stateFile} -->`);
  for (const d of pv.dropped) {
    const why = d.reason === 'false' ? 'false' : `${d.reason}: ${d.detail ?? ''}`;
    lines.push(`<!-- dropped (line ${d.line}, if: ${d.condition ?? '-'} → ${why}) -->`);
  }
  for (const u of pv.unresolved) {
    lines.push(`<!-- left as written: ${u.token} (${u.reason}) -->`);
  }
  if (pv.ignored_state.length) {
    lines.push(`<!-- not readable by this skill: ${pv.ignored_state.join(', ')} -->`);
  }
  return lines.join('\n') + '\n';
}

class PreviewProvider extends FollowingDocuments {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const folder = decodeURIComponent(uri.query);
    const stateFile = path.join(path.dirname(path.dirname(folder)), STATE_FILE);
    const c = runningClient(this.getClient);
    if (!c) {
      return '(the Mantle language server is not running)\n';
    }
    const params: { textDocument: { uri: string }; memory?: string } = {
      textDocument: { uri: vscode.Uri.file(path.join(folder, 'skill.md')).toString() },
    };
    const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === stateFile);
    if (open) {
      params.memory = open.getText();
    } else {
      try {
        params.memory = Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.file(stateFile))).toString('utf8');
      } catch {
        // no state file: everything None
      }
    }
    try {
      const pv = await c.sendRequest<PreviewJson | null>(PREVIEW_PROMPT, params);
      return pv ? renderPreview(pv, STATE_FILE) : '(no skill.md in this folder)\n';
    } catch (e) {
      this.log(`prompt preview: ${String(e)}`);
      return `(no preview: ${e instanceof Error ? e.message : String(e)})\n`;
    }
  }
}

export function registerPromptPreview(
  context: vscode.ExtensionContext,
  getClient: () => LanguageClient | undefined,
  log: (message: string) => void,
  serverReady: vscode.Event<void>,
): void {
  const provider = new PreviewProvider(SCHEME, getClient, log);
  context.subscriptions.push(
    ...provider.register(serverReady),
    vscode.commands.registerCommand('mantle.previewPrompt', async (uri?: vscode.Uri) => {
      const target = uri ?? vscode.window.activeTextEditor?.document.uri;
      const folder = target?.scheme === 'file' ? skillFolder(target.fsPath) : undefined;
      if (!folder) {
        void vscode.window.showInformationMessage('Mantle: open a file of a skill (skills/<id>/skill.md) first.');
        return;
      }
      const doc = await vscode.workspace.openTextDocument(previewUri(folder));
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    }),
    vscode.commands.registerCommand('mantle.editPreviewState', async () => {
      const target = vscode.window.activeTextEditor?.document.uri;
      let folder = target?.scheme === 'file' ? skillFolder(target.fsPath) : undefined;
      if (!folder && target?.scheme === SCHEME) {
        folder = decodeURIComponent(target.query);
      }
      if (!folder) {
        void vscode.window.showInformationMessage('Mantle: open a file of a skill (skills/<id>/skill.md) first.');
        return;
      }
      const file = vscode.Uri.file(path.join(path.dirname(path.dirname(folder)), STATE_FILE));
      try {
        await vscode.workspace.fs.stat(file);
      } catch {
        await vscode.workspace.fs.writeFile(file, Buffer.from(STATE_TEMPLATE, 'utf8'));
      }
      // in the skill's column: the preview beside it stays in view
      await vscode.window.showTextDocument(file, { viewColumn: vscode.ViewColumn.Active });
    }),
  );
}
