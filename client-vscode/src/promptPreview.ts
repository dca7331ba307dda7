// "Mantle: Preview Prompt": the skill's instruction text as the engine puts it in the
// system prompt (the server's `mantle/previewPrompt`, docs/features/preview.md), in a
// read-only document beside the skill. The memory state is the project's
// `.mantle-state.yml` ("Mantle: Edit Prompt Preview Memory State"), unsaved edits included;
// the preview follows edits of the skill's files and of the state as they are typed. With
// the cursor in a step of an ordered block of the skill.md, it shows that step's
// instructions (what the engine shows instead of the prose while the step is active).
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
interface PreviewStep {
  block: string;
  id: string;
  kind: string | null;
  line: number;
}
export interface PreviewJson {
  skill: string;
  step: PreviewStep | null;
  text: string;
  characters: number;
  estimated_tokens: number;
  estimate_rule: string;
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

/** The preview as text: the prompt text exactly, then what it is of, its size (an
 * estimate of the tokens, from the characters) and what was left out and why. */
export function renderPreview(pv: PreviewJson, stateFile: string): string {
  const lines = [pv.text, '', '<!-- ' + '-'.repeat(70) + ' -->'];
  const st = pv.step;
  if (st) {
    lines.push(`<!-- step \`${st.id}\` of block \`${st.block}\` (line ${st.line}): its instructions, shown instead of the prose while it is active -->`);
    if (st.kind !== 'instructions') {
      lines.push(`<!-- a ${st.kind ?? 'malformed'} step has no instructions: the engine shows none -->`);
    }
  } else {
    lines.push('<!-- the skill\'s prose (put the cursor in a step of an ordered block to preview its instructions) -->');
  }
  lines.push(
    `<!-- ${pv.characters} characters, about ${pv.estimated_tokens} tokens: an estimate (${pv.estimate_rule}), not a tokenizer count; memory state: ${stateFile} -->`,
  );
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
  /** The last cursor in each skill folder's skill.md (by folder). */
  private readonly cursors = new Map<string, vscode.Position>();

  /** Follow the cursor of a skill.md whose preview is open: a moved line refreshes it. */
  cursorMoved(e: vscode.TextEditorSelectionChangeEvent): void {
    const doc = e.textEditor.document;
    if (doc.uri.scheme !== 'file' || path.basename(doc.uri.fsPath) !== 'skill.md') {
      return;
    }
    const folder = skillFolder(doc.uri.fsPath);
    if (!folder || !vscode.workspace.textDocuments.some((d) => d.uri.scheme === SCHEME && decodeURIComponent(d.uri.query) === folder)) {
      return;
    }
    const at = e.selections[0]?.active;
    const before = this.cursors.get(folder);
    if (at && (!before || before.line !== at.line)) {
      this.cursors.set(folder, at);
      this.schedule();
    }
  }

  /** The cursor to preview at when the preview of ``folder`` opens. */
  remember(folder: string, at: vscode.Position): void {
    this.cursors.set(folder, at);
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const folder = decodeURIComponent(uri.query);
    const stateFile = path.join(path.dirname(path.dirname(folder)), STATE_FILE);
    const c = runningClient(this.getClient);
    if (!c) {
      return '(the Mantle language server is not running)\n';
    }
    const params: {
      textDocument: { uri: string };
      memory?: string;
      position?: { line: number; character: number };
    } = {
      textDocument: { uri: vscode.Uri.file(path.join(folder, 'skill.md')).toString() },
    };
    const cursor = this.cursors.get(folder);
    if (cursor) {
      params.position = { line: cursor.line, character: cursor.character };
    }
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
    vscode.window.onDidChangeTextEditorSelection((e) => provider.cursorMoved(e)),
    vscode.commands.registerCommand('mantle.previewPrompt', async (uri?: vscode.Uri) => {
      const target = uri ?? vscode.window.activeTextEditor?.document.uri;
      const folder = target?.scheme === 'file' ? skillFolder(target.fsPath) : undefined;
      if (!folder) {
        void vscode.window.showInformationMessage('Mantle: open a file of a skill (skills/<id>/skill.md) first.');
        return;
      }
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.uri.fsPath === path.join(folder, 'skill.md')) {
        provider.remember(folder, editor.selection.active);
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
