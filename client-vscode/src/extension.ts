// The Mantle extension: starts `mantle-lsp serve` for the Mantle files of the workspace.
import * as fs from 'fs';
import * as path from 'path';
import { performance } from 'perf_hooks';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from 'vscode-languageclient/node';
import { openReference, runCheck } from './check';
import { registerGraphViews } from './graphView';
import { pipeStderr, pipeStdout } from './log';
import { registerLayersManifest } from './layersManifest';
import { registerPromptPreview } from './promptPreview';
import {
  pythonExtensionApi,
  ResolveError,
  ResolveOptions,
  resolutionInputs,
  resolveServer,
  SAFE_CWD,
  SAFE_ENV,
  sameCommand,
  ServerCommand,
  stillThere,
} from './resolve';
import { Profile, Status } from './status';

/**
 * The documents the server is attached to. Patterns, never bare languages: Markdown,
 * YAML and Python files outside Mantle projects stay with their usual extensions.
 * (The server itself answers other files of those kinds with empty results.)
 */
export const DOCUMENT_SELECTOR = [
  { language: 'mantle-skill' },
  { scheme: 'file', pattern: '**/skills/*/skill.md' },
  { scheme: 'file', pattern: '**/skills/*/memory.yml' },
  { scheme: 'file', pattern: '**/memory.yml' },
  { scheme: 'file', pattern: '**/responses.yml' },
  { scheme: 'file', pattern: '**/agent.yml' },
  { scheme: 'file', pattern: '**/integrations.yml' },
  { scheme: 'file', pattern: '**/skills/*/tools.py' },
  { scheme: 'file', pattern: '**/skills/*/tools/*.py' },
  { scheme: 'file', pattern: '**/tools/*.py' },
  { scheme: 'file', pattern: '**/memory-layers/**' }, // Cadenya memory layers
  // the evaluation's files: the conftest and every scenario, in subfolders too
  { scheme: 'file', pattern: '**/eval/conftest.{yml,yaml}' },
  { scheme: 'file', pattern: '**/eval/scenarios/**/*.{yml,yaml}' },
];

const RESTART_SETTINGS = ['mantle.server.path', 'mantle.interpreter'];

let output: vscode.LogOutputChannel;
let status: Status;
let client: LanguageClient | undefined;
let current: ServerCommand | undefined;
let starting: Promise<void> | undefined;
let extensionUri: vscode.Uri;
let watchingPython = false;
let crashes: number[] = [];
let extensionContext: vscode.ExtensionContext | undefined;
/** When `activate` was called (performance.now()); the first server's start is timed from it. */
let activatedAt: number | undefined;
/** Fired when a server has indexed the workspace: the views ask it again (restored views first get an answer here). */
const serverReady = new vscode.EventEmitter<void>();

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  activatedAt = performance.now();
  extensionContext = context;
  extensionUri = context.extensionUri;
  output = vscode.window.createOutputChannel('Mantle', { log: true });
  status = new Status();
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand('mantle.restartServer', () => restart()),
    vscode.commands.registerCommand('mantle.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('mantle.checkWorkspace', () => checkWorkspace()),
    vscode.commands.registerCommand('mantle.checkFile', (uri?: vscode.Uri) => checkFile(uri)),
    vscode.commands.registerCommand('mantle.openReference', () =>
      openReference(vscode.Uri.joinPath(extensionUri, 'server', 'libs').fsPath),
    ),
    vscode.commands.registerCommand('mantle.showReferences', showReferences),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) {
        output.info('server settings changed: restarting');
        void restart();
      } else if (e.affectsConfiguration('mantle')) {
        void notifySettings();
      }
    }),
    vscode.workspace.onDidOpenTextDocument((doc) => void handBack(doc)),
    // Restricted Mode skipped any program inside the workspace (and the workspace's
    // mantle.* path settings): now they count
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.info('the workspace is trusted now: finding the server again');
      void restart();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (!vscode.workspace.isTrusted) {
        output.info('workspace folders changed in an untrusted workspace: finding the server again');
        void restart();
      }
    }),
    serverReady,
    { dispose: () => void stop() },
  );
  registerGraphViews(context, () => client, (m) => output.info(m), serverReady.event);
  registerPromptPreview(context, () => client, (m) => output.info(m), serverReady.event);
  registerLayersManifest(context, () => client, (m) => output.info(m), serverReady.event);
  vscode.workspace.textDocuments.forEach((doc) => void handBack(doc));
  void start(); // resolving may take a few seconds (probing Pythons): do not hold activation
}

export function deactivate(): Thenable<void> | undefined {
  return stop();
}

/**
 * A skills/<id>/skill.md opens in the Mantle Skill mode (a `files.associations` default,
 * which wins over VS Code's built-in `skill` language for `SKILL.md`). Associations ignore
 * case, so an agent skill `SKILL.md` outside a Mantle project (e.g. `.github/skills/x/`)
 * is handed back to the built-in mode.
 */
async function handBack(doc: vscode.TextDocument): Promise<void> {
  if (doc.languageId !== 'mantle-skill' || doc.uri.scheme !== 'file') {
    return;
  }
  const file = doc.uri.fsPath;
  if (path.basename(file) === 'skill.md') {
    return; // Mantle's spelling
  }
  const root = path.dirname(path.dirname(path.dirname(file)));
  if (['agent.yml', 'integrations.yml'].some((f) => fs.existsSync(path.join(root, f)))) {
    return;
  }
  const languages = await vscode.languages.getLanguages();
  const target = languages.includes('skill') ? 'skill' : 'markdown';
  output.info(`${file} is not a Mantle skill: opening it as ${target}`);
  await vscode.languages.setTextDocumentLanguage(doc, target);
}

async function start(): Promise<void> {
  if (starting) {
    return starting;
  }
  starting = doStart().finally(() => {
    starting = undefined;
  });
  return starting;
}

/** The last start's command and what decided it (workspace state). */
const LAST_START = 'mantle.lastStart';
interface LastStart {
  inputs: string;
  cmd: ServerCommand;
}

async function doStart(): Promise<void> {
  status.starting();
  const libs = vscode.Uri.joinPath(extensionUri, 'server', 'libs').fsPath;
  const opts: ResolveOptions = {
    bundledLibs: libs,
    log: (m: string) => output.info(m),
    trusted: vscode.workspace.isTrusted,
  };
  // Finding the server probes Pythons and may wait for the Python extension to activate
  // (seconds): with the same settings as last time, the last command starts at once and
  // the finding runs once the server has indexed; a different answer restarts the server.
  const inputs = resolutionInputs(opts);
  const last = extensionContext?.workspaceState.get<LastStart>(LAST_START);
  const reused = last !== undefined && last.inputs === inputs && stillThere(last.cmd);
  if (reused) {
    current = last.cmd;
  } else {
    try {
      current = await resolveServer(opts);
    } catch (e) {
      current = undefined;
      void extensionContext?.workspaceState.update(LAST_START, undefined);
      const message = e instanceof ResolveError ? e.message : `Mantle: ${e}`;
      output.error(message);
      status.failed(message);
      void showError(message);
      return;
    }
  }
  if (!reused) {
    void watchPythonEnvironment(); // (resolving activated the Python extension already)
  }
  const cmd = current;
  output.info(
    `starting the server (${cmd.source}${reused ? ', as last time' : ''}): ` +
      `${[cmd.command, ...cmd.args, 'serve'].join(' ')}` +
      (cmd.env.PYTHONPATH ? ` with PYTHONPATH=${cmd.env.PYTHONPATH}` : ''),
  );
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: [...cmd.args, 'serve'],
    transport: TransportKind.stdio,
    options: { cwd: SAFE_CWD, env: { ...process.env, ...SAFE_ENV, ...cmd.env } },
  };
  const watch = new IndexWatch();
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: output,
    traceOutputChannel: output,
    // the server's log records keep their level (vscode-languageclient makes every
    // stderr line an error)
    // (the client pipes stderr right after spawning the process: the moment is logged)
    stdioOptions: {
      stderr: (input, channel) => {
        logSpawned();
        pipeStderr(input, channel);
      },
      stdout: pipeStdout,
    },
    middleware: { ...codeLensMiddleware, ...checkedMiddleware(watch, cmd.source) },
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        // restart a crashed server, but not more than 4 times in 3 minutes
        const now = Date.now();
        crashes = crashes.filter((t) => now - t < 180000);
        crashes.push(now);
        if (crashes.length > 4) {
          const message =
            'Mantle: the server crashed 5 times in the last 3 minutes and will not be restarted. ' +
            'See the "Mantle" output, then run "Mantle: Restart Server".';
          status.failed(message);
          return { action: CloseAction.DoNotRestart, message };
        }
        status.starting();
        return { action: CloseAction.Restart, handled: true };
      },
    },
  };
  const c = new LanguageClient('mantle', 'Mantle', serverOptions, clientOptions);
  client = c;
  c.onDidChangeState((e) => {
    if (e.newState === State.Running) {
      trackProgress(c, watch);
      watch.begin();
      status.indexing('waiting for the server to index the workspace');
      void watch.poll(c);
    } else if (e.newState === State.Stopped && client === c) {
      status.failed('the server is not running; see the "Mantle" output');
    }
  });
  try {
    await c.start();
    trackProgress(c, watch);
    void extensionContext?.workspaceState.update(LAST_START, { inputs, cmd });
    if (reused) {
      // finding the server again probes a Python (importing pygls) and may activate the
      // Python extension: not while the server starts on the same cores
      whenIndexed(() => {
        void watchPythonEnvironment();
        if (client === c) {
          void confirmServer(opts, cmd);
        }
      });
    }
  } catch (e) {
    void extensionContext?.workspaceState.update(LAST_START, undefined);
    const message =
      `Mantle: the server could not be started with "${[cmd.command, ...cmd.args].join(' ')}": ` +
      `${e}. See the "Mantle" output.`;
    output.error(message);
    status.failed(message);
    void showError(message);
  }
}

/** How long work deferred until the index waits at most (a server that never indexes). */
const AFTER_INDEX_MS = 15000;

/** Runs `fn` once, when a server has indexed the workspace or after AFTER_INDEX_MS. */
function whenIndexed(fn: () => void): void {
  let done = false;
  const run = () => {
    if (!done) {
      done = true;
      sub.dispose();
      clearTimeout(timer);
      fn();
    }
  };
  const sub = serverReady.event(run);
  const timer = setTimeout(run, AFTER_INDEX_MS);
}

/** A wall-clock time of day with milliseconds (13:27:13.093). */
function clock(t: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}.${String(t.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * One line when a server process has been spawned; the first one of the window says how
 * long after the extension's activation (the cold start the e2e test measures).
 */
function logSpawned(): void {
  // the time is in the message: the output channel stamps the lines of its first second
  // when its log file is ready, not when they were written
  const at = clock(new Date());
  if (activatedAt === undefined) {
    output.info(`the server process started at ${at}`);
    return;
  }
  const ms = performance.now() - activatedAt;
  activatedAt = undefined;
  output.info(`the server process started at ${at}, ${ms.toFixed(0)} ms after the extension's activation`);
}

/**
 * After a start with the last command: find the server as a first start would (the
 * Python extension's environment may have changed); another answer restarts the server
 * with it, a failure is said once the next start finds it again.
 */
async function confirmServer(opts: ResolveOptions, used: ServerCommand): Promise<void> {
  let fresh: ServerCommand;
  try {
    fresh = await resolveServer(opts);
  } catch (e) {
    output.warn(`finding the server again after the start failed: ${e}`);
    await extensionContext?.workspaceState.update(LAST_START, undefined);
    return;
  }
  if (sameCommand(fresh, used)) {
    if (current === used) {
      current = fresh; // the same program, its versions as found now
    }
    return;
  }
  output.info(`the server to use is not the last start's any more (${fresh.source}): restarting`);
  await extensionContext?.workspaceState.update(LAST_START, undefined);
  void restart();
}

/** A new active environment in the Python extension may bring (or lose) mantle-lsp. */
async function watchPythonEnvironment(): Promise<void> {
  if (watchingPython || !vscode.extensions.getExtension('ms-python.python')) {
    return;
  }
  watchingPython = true;
  const api = await pythonExtensionApi((m) => output.info(m));
  const event = api?.environments?.onDidChangeActiveEnvironmentPath;
  if (!event) {
    return;
  }
  const sub = event(() => {
    const config = vscode.workspace.getConfiguration('mantle');
    if (config.get<string>('server.path') || config.get<string>('interpreter')) {
      output.info("the Python extension's active environment changed (not used: the settings win)");
      return;
    }
    output.info("the Python extension's active environment changed: restarting");
    void restart();
  });
  output.info('watching the Python extension\'s active environment');
  extensionContext?.subscriptions.push(sub);
}

/**
 * Settings changes are announced by us rather than by the client's `synchronize` option,
 * which would also notify a client that is being restarted (and fail loudly). The server
 * then reads the `mantle` section with `workspace/configuration`.
 */
async function notifySettings(): Promise<void> {
  const c = client;
  if (!c || c.state !== State.Running) {
    return;
  }
  try {
    await c.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { mantle: vscode.workspace.getConfiguration('mantle') },
    });
  } catch (e) {
    output.warn(`could not send the new settings: ${e}`);
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(5000);
    } catch (e) {
      output.warn(`stopping the server: ${e}`);
    }
    c.dispose();
  }
}

async function restart(): Promise<void> {
  crashes = [];
  await starting;
  await stop();
  await start();
}

async function showError(message: string): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output');
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'mantle.');
  } else if (choice === 'Show Output') {
    output.show(true);
  }
}

/** How long the first workspace diagnostics pull waits for the index at most. */
const INDEX_WAIT_MS = 120000;

/**
 * The index of one server (a restart makes a new one): ended when its `$/progress` ends
 * (or `mantle/status` says `indexed`); each end is an epoch. A workspace diagnostics pull
 * answered in the epoch it was asked in makes the status "ready": until then it says
 * "checking…", never "0 errors" that nobody checked.
 */
class IndexWatch {
  ended = false;
  epoch = 0;
  private waiters: (() => void)[] = [];

  begin(): void {
    this.ended = false;
  }

  end(): void {
    this.ended = true;
    this.epoch++;
    this.waiters.splice(0).forEach((w) => w());
  }

  /** Resolves when the index ends, or after `ms`. */
  wait(ms: number): Promise<void> {
    if (this.ended) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /**
   * A safety net for a progress that never came (or a server without `$/progress`):
   * ask `mantle/status` every second until it says the index is done.
   */
  async poll(c: LanguageClient): Promise<void> {
    for (let i = 0; i < INDEX_WAIT_MS / 1000 && !this.ended && client === c; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      if (this.ended || client !== c || c.state !== State.Running) {
        return;
      }
      const st = await serverStatus(c);
      if (st && st.indexed !== false && !this.ended) {
        output.info('the index is done (mantle/status)');
        this.end();
        afterIndex(c, this);
        return;
      }
    }
  }
}

interface ServerStatus {
  indexed?: boolean;
  profiles?: Profile[];
}

async function serverStatus(c: LanguageClient): Promise<ServerStatus | undefined> {
  try {
    return (await c.sendRequest<ServerStatus>('mantle/status', {})) ?? undefined;
  } catch (e) {
    output.debug(`mantle/status: ${e}`);
    return undefined;
  }
}

/**
 * After an index: "checking…" until the workspace's diagnostics are in (a client that is
 * pushed them has them already), and the rule profile of each project in the tooltip.
 */
function afterIndex(c: LanguageClient, watch: IndexWatch, message?: string): void {
  if (c.initializeResult?.capabilities.diagnosticProvider) {
    output.info('indexed: checking the workspace… (the status bar says so until its diagnostics are in)');
    status.checking(current?.source, message);
  } else {
    status.ready(current?.source, message); // pushed before the progress ended
  }
  void serverStatus(c).then((st) => {
    if (st?.profiles && client === c) {
      status.setProfiles(st.profiles);
    }
  });
  serverReady.fire();
}

/**
 * The first workspace diagnostics pull waits for the index (asked earlier, it would be
 * answered with nothing, and the next pull comes 2 s later); a pull answered in the epoch
 * it was asked in makes the status "ready".
 */
function checkedMiddleware(watch: IndexWatch, source: string): Middleware {
  return {
    async provideWorkspaceDiagnostics(resultIds, token, reporter, next) {
      if (!watch.ended) {
        await watch.wait(INDEX_WAIT_MS);
      }
      const epoch = watch.epoch;
      const result = await next(resultIds, token, reporter);
      if (watch.ended && watch.epoch === epoch && status.current === 'checking' && !token.isCancellationRequested) {
        const { errors, warnings } = Status.counts();
        output.info(`the workspace's diagnostics are in: ${errors} errors, ${warnings} warnings (ready)`);
        status.ready(source);
      }
      return result;
    },
  };
}

/**
 * The server's `$/progress` (the initial index) drives the status bar item and a window
 * progress indicator. Registered after every (re)start, replacing the client's default.
 */
function trackProgress(c: LanguageClient, watch: IndexWatch): void {
  c.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    let finish: (() => void) | undefined;
    let report: ((message: string) => void) | undefined;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Mantle' },
      (progress) =>
        new Promise<void>((resolve) => {
          finish = resolve;
          report = (message) => progress.report({ message });
        }),
    );
    const sub = c.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind === 'begin') {
        watch.begin();
        status.indexing(value.message ?? value.title);
        report?.(`${value.title}${value.message ? ` ${value.message}` : ''}`);
      } else if (value.kind === 'report') {
        status.indexing(value.message);
        if (value.message) {
          report?.(value.message);
        }
      } else {
        watch.end();
        afterIndex(c, watch, value.message);
        finish?.();
        sub.dispose();
      }
    });
  });
}

/**
 * Reference-count code lenses carry `editor.action.showReferences` with plain LSP JSON
 * arguments; VS Code needs its own Uri/Position/Location objects, so the lens is routed
 * through `mantle.showReferences`, which converts them.
 */
const codeLensMiddleware: Middleware = {
  async provideCodeLenses(document, token, next) {
    const lenses = await next(document, token);
    for (const lens of lenses ?? []) {
      if (lens.command?.command === 'editor.action.showReferences') {
        lens.command = { ...lens.command, command: 'mantle.showReferences' };
      }
    }
    return lenses;
  },
};

interface LspPosition {
  line: number;
  character: number;
}
interface LspLocation {
  uri: string;
  range: { start: LspPosition; end: LspPosition };
}

async function showReferences(
  uri: string,
  position: LspPosition,
  locations: LspLocation[],
): Promise<void> {
  const pos = (p: LspPosition) => new vscode.Position(p.line, p.character);
  await vscode.commands.executeCommand(
    'editor.action.showReferences',
    vscode.Uri.parse(uri),
    pos(position),
    locations.map(
      (l) =>
        new vscode.Location(vscode.Uri.parse(l.uri), new vscode.Range(pos(l.range.start), pos(l.range.end))),
    ),
  );
}

/** The `check` options that mirror the editor settings. */
function checkOptions(): string[] {
  const config = vscode.workspace.getConfiguration('mantle');
  const engine = config.get<string>('engineVersion') ?? 'auto';
  const ignore = config.get<string[]>('diagnostics.ignore') ?? [];
  return ['--engine', engine, ...ignore.flatMap((code) => ['--ignore', code])];
}

/** The resolved server command (started if need be), or undefined (already reported). */
async function checkCommand(): Promise<ServerCommand | undefined> {
  if (!current) {
    await start();
  }
  return current;
}

/**
 * Mantle: Check Workspace — runs `mantle-lsp check` (the same interpreter and bundle as the
 * server) on every workspace folder, in the "Mantle: check" terminal, which keeps the
 * report after the check ends. Problems found are the check's result, not a failure: no
 * error toast (check.ts). The Problems panel keeps showing the server's live diagnostics.
 */
async function checkWorkspace(): Promise<void> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showWarningMessage('Mantle: open a folder with a Mantle project first.');
    return;
  }
  const cmd = await checkCommand();
  if (!cmd) {
    return; // resolveServer already showed why
  }
  const paths = folders.map((f) => f.uri.fsPath);
  await launchCheck(cmd, paths, `mantle-lsp check ${paths.join(' ')}`);
}

/** Mantle: Check File — the same, for the active file (as saved) only. */
async function checkFile(uri?: vscode.Uri): Promise<void> {
  const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
  if (!target || target.scheme !== 'file') {
    void vscode.window.showWarningMessage('Mantle: open a Mantle file (skill.md, memory.yml, …) first.');
    return;
  }
  const cmd = await checkCommand();
  if (!cmd) {
    return;
  }
  const dirty = vscode.workspace.textDocuments.some((d) => d.uri.toString() === target.toString() && d.isDirty);
  await launchCheck(
    cmd,
    [target.fsPath],
    `mantle-lsp check ${target.fsPath}${dirty ? ' (the saved file: it has unsaved changes)' : ''}`,
  );
}

async function launchCheck(cmd: ServerCommand, paths: string[], title: string): Promise<void> {
  const args = [...cmd.args, 'check', ...checkOptions(), ...paths];
  output.info(`check: ${[cmd.command, ...args].join(' ')}`);
  const code = await runCheck({
    command: cmd.command,
    args,
    cwd: SAFE_CWD, // not a workspace folder: see SAFE_CWD; the folders are passed as paths
    env: { ...SAFE_ENV, ...cmd.env },
    title,
  });
  output.info(`check: exit status ${code}`);
}
