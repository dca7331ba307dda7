// How the language server is started: the settings first, then the Python extension's
// active environment, then the server bundled in the .vsix (run by any Python >= 3.10).
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { untrustedReason } from './trust';

/** A resolved way to run `mantle-lsp`: `command args... serve` or `command args... check`. */
export interface ServerCommand {
  command: string;
  /** arguments before the sub-command (`serve`, `check`) */
  args: string[];
  /** environment additions (PYTHONPATH for the bundled server) */
  env: Record<string, string>;
  /** where it came from, for the log and the status bar tooltip */
  source: string;
}

/** The server cannot be started; `message` says what to do. Shown once, as an error. */
export class ResolveError extends Error {}

export const MIN_PYTHON: [number, number] = [3, 10];

/**
 * Every Python we start runs from the extension's own folder, never from a workspace
 * folder, and with PYTHONSAFEPATH (3.11+): `python -m` puts the working directory first on
 * sys.path, so a workspace holding a `mantle_lsp/` or `runpy.py` would otherwise run its
 * own code (docs/security.md).
 */
export const SAFE_CWD = __dirname;
export const SAFE_ENV: Record<string, string> = { PYTHONSAFEPATH: '1' };
const MODULE = 'mantle_lsp'; // __main__.py: drops the working directory from sys.path first
const PROBE = [
  'import sys',
  'ok = sys.version_info >= (3, 10)',
  'mod = None',
  'try:',
  '    import mantle_lsp, pygls',
  '    mod = mantle_lsp.__version__',
  'except Exception:',
  '    pass',
  'print("%d.%d %s %s" % (sys.version_info[0], sys.version_info[1], ok, mod))',
  'print(sys.executable or "")',
].join('\n');

export interface PythonInfo {
  version: string;
  ok: boolean;
  /** mantle_lsp version when `import mantle_lsp, pygls` works there, else undefined */
  mantle?: string;
  /** the interpreter's own path (`sys.executable`), when it says one */
  executable?: string;
}

type Log = (message: string) => void;

/** Run the probe with `python` (plus `prefix` args, e.g. `-3` for the Windows launcher). */
export function probePython(
  python: string,
  prefix: string[] = [],
  env: Record<string, string> = {},
): Promise<PythonInfo | undefined> {
  return new Promise((resolve) => {
    execFile(
      python,
      [...prefix, '-c', PROBE],
      {
        timeout: 20000,
        cwd: SAFE_CWD,
        env: { ...process.env, ...SAFE_ENV, ...env },
        windowsHide: true,
      },
      (err, stdout) => {
        if (err) {
          resolve(undefined);
          return;
        }
        const m = /^(\d+\.\d+) (True|False) (\S+)/m.exec(stdout.toString());
        if (!m) {
          resolve(undefined);
          return;
        }
        const executable = stdout.toString().split(/\r?\n/)[1]?.trim();
        resolve({
          version: m[1],
          ok: m[2] === 'True',
          mantle: m[3] === 'None' ? undefined : m[3],
          executable: executable || undefined,
        });
      },
    );
  });
}

/** `~`, `${workspaceFolder}`, `${userHome}`; relative paths are taken from the first folder. */
export function expandPath(value: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  let p = value.trim();
  p = p.replace(/\$\{workspaceFolder\}/g, folder).replace(/\$\{userHome\}/g, os.homedir());
  if (p === '~' || p.startsWith('~/') || p.startsWith('~\\')) {
    p = path.join(os.homedir(), p.slice(1));
  }
  if (!path.isAbsolute(p) && folder && (p.includes('/') || p.includes('\\'))) {
    p = path.join(folder, p);
  }
  return p;
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
  resolveEnvironment(
    env: { id: string; path: string } | string,
  ): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  environments?: PythonEnvironmentsApi;
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

/** The Python extension's API, when it is installed (activating it if needed). */
export async function pythonExtensionApi(log: Log): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), 20000));
    const api = ext.isActive ? ext.exports : await Promise.race([ext.activate(), timeout]);
    return api ?? undefined;
  } catch (e) {
    log(`the Python extension could not be activated: ${e}`);
    return undefined;
  }
}

/** The active interpreter of the Python extension (executable path), if any. */
async function pythonExtensionInterpreter(log: Log): Promise<string[] | undefined> {
  const api = await pythonExtensionApi(log);
  if (!api) {
    return undefined;
  }
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  try {
    if (api.environments) {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const env = await api.environments.resolveEnvironment(active);
      const exe = env?.executable.uri?.fsPath;
      if (exe) {
        return [exe];
      }
    }
    const cmd = api.settings?.getExecutionDetails(resource).execCommand;
    if (cmd && cmd.length > 0) {
      return cmd;
    }
  } catch (e) {
    log(`the Python extension's environment could not be read: ${e}`);
  }
  return undefined;
}

/**
 * Pythons to try for the bundled server, in order. MANTLE_PYTHON_CANDIDATES (names or paths
 * separated by the path delimiter) replaces the list: for odd set-ups, and for the
 * end-to-end test of a machine without Python.
 */
function pythonCandidates(): [string, string[]][] {
  const override = process.env.MANTLE_PYTHON_CANDIDATES;
  if (override !== undefined) {
    return override
      .split(path.delimiter)
      .filter((n) => n.trim())
      .map((n): [string, string[]] => [n.trim(), []]);
  }
  if (process.platform === 'win32') {
    return [
      ['py', ['-3']],
      ['python', []],
      ['python3', []],
    ];
  }
  return [
    ['python3', []],
    ['python', []],
    ...['3.14', '3.13', '3.12', '3.11', '3.10'].map((v): [string, string[]] => [`python${v}`, []]),
  ];
}

export interface ResolveOptions {
  /** the folder with the bundled server (`<extension>/server/libs`) */
  bundledLibs: string;
  log: Log;
  /** `vscode.workspace.isTrusted`: when false, no program inside a workspace folder runs */
  trusted: boolean;
}

/**
 * In an untrusted workspace, a program inside a workspace folder is skipped (trust.ts):
 * logged, and noted in the server's source (the status tooltip). True when skipped.
 */
function skipped(opts: ResolveOptions, exe: string, what: string, notes: string[]): boolean {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const why = untrustedReason(exe, what, opts.trusted, folders, process.env.PATH ?? '', SAFE_CWD);
  if (!why) {
    return false;
  }
  opts.log(why);
  notes.push(`not run: ${exe} (${what}), inside the untrusted workspace`);
  return true;
}

function withNotes(cmd: ServerCommand, notes: string[]): ServerCommand {
  return notes.length ? { ...cmd, source: `${cmd.source}; ${notes.join('; ')}` } : cmd;
}

function setting(key: string): string {
  return (vscode.workspace.getConfiguration('mantle').get<string>(key) ?? '').trim();
}

/** Decide how to run the server; throws ResolveError with a user-facing message. */
export async function resolveServer(opts: ResolveOptions): Promise<ServerCommand> {
  const notes: string[] = [];
  try {
    return withNotes(await resolveIn(opts, notes), notes);
  } catch (e) {
    if (e instanceof ResolveError && notes.length) {
      // what Restricted Mode skipped may be why nothing was found
      throw new ResolveError(`${e.message} (${notes.join('; ')}; trust the workspace to use it)`);
    }
    throw e;
  }
}

async function resolveIn(opts: ResolveOptions, notes: string[]): Promise<ServerCommand> {
  const { log } = opts;
  // 1. mantle.server.path: a mantle-lsp executable
  const serverPath = setting('server.path');
  const pathExe = serverPath ? expandPath(serverPath) : '';
  if (serverPath && !skipped(opts, pathExe, 'the program in "mantle.server.path"', notes)) {
    const exe = pathExe;
    if (path.isAbsolute(exe) && !fs.existsSync(exe)) {
      throw new ResolveError(
        `Mantle: the setting "mantle.server.path" points to ${exe}, which does not exist. ` +
          'Fix or clear the setting, then run "Mantle: Restart Server".',
      );
    }
    return { command: exe, args: [], env: {}, source: 'setting mantle.server.path' };
  }
  // 2. mantle.interpreter: a Python that has mantle-lsp installed
  const interpreter = setting('interpreter');
  const interpreterExe = interpreter ? expandPath(interpreter) : '';
  if (interpreter && !skipped(opts, interpreterExe, 'the Python in "mantle.interpreter"', notes)) {
    const exe = interpreterExe;
    const info = await probePython(exe);
    if (!info) {
      throw new ResolveError(
        `Mantle: the setting "mantle.interpreter" is ${exe}, which cannot be run as Python. ` +
          'Fix or clear the setting, then run "Mantle: Restart Server".',
      );
    }
    if (!info.mantle) {
      throw new ResolveError(
        `Mantle: ${exe} (Python ${info.version}, from "mantle.interpreter") cannot import ` +
          `mantle_lsp. Run "${exe} -m pip install mantle-lsp" or clear the setting to use the ` +
          'server bundled with the extension, then run "Mantle: Restart Server".',
      );
    }
    return {
      command: exe,
      args: ['-m', MODULE],
      env: {},
      source: `setting mantle.interpreter (Python ${info.version}, mantle-lsp ${info.mantle})`,
    };
  }
  // 3. the Python extension's active environment, when mantle_lsp is importable there
  const fromExt = await pythonExtensionInterpreter(log);
  // (an execCommand such as `conda run -p <env> python` names its environment in an argument)
  const extParts = fromExt?.filter((p, i) => i === 0 || /[\\/]/.test(p)) ?? [];
  if (fromExt && !extParts.some((p) => skipped(opts, p, "the Python extension's interpreter", notes))) {
    const [exe, ...prefix] = fromExt;
    const info = await probePython(exe, prefix);
    if (info?.ok && info.mantle) {
      return {
        command: exe,
        args: [...prefix, '-m', MODULE],
        env: {},
        source: `Python extension environment (Python ${info.version}, mantle-lsp ${info.mantle})`,
      };
    }
    log(
      `the Python extension's interpreter ${fromExt.join(' ')} ` +
        (info ? `(Python ${info.version}) has no mantle_lsp` : 'cannot be run') +
        '; using the bundled server',
    );
  }
  // 4. the bundled server, with any Python >= 3.10 on PATH
  if (!fs.existsSync(path.join(opts.bundledLibs, 'mantle_lsp'))) {
    throw new ResolveError(
      `Mantle: this build of the extension has no bundled server (${opts.bundledLibs} is ` +
        'missing). Set "mantle.interpreter" to a Python with mantle-lsp installed, or ' +
        '"mantle.server.path" to a mantle-lsp executable, then run "Mantle: Restart Server".',
    );
  }
  const env = { PYTHONPATH: opts.bundledLibs };
  const tried: string[] = [];
  // the first candidate alone (it usually is the one); if not, the others at once (each
  // probe is an interpreter's start), taken in order
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const candidates = pythonCandidates();
  const probes: Promise<PythonInfo | undefined>[] = [];
  const probe = (i: number): Promise<PythonInfo | undefined> => {
    if (probes[i] === undefined) {
      const [exe, prefix] = candidates[i];
      const path_ = process.env.PATH ?? '';
      const why = untrustedReason(exe, 'the Python', opts.trusted, folders, path_, SAFE_CWD);
      probes[i] = why ? Promise.resolve(undefined) : probePython(exe, prefix, env);
    }
    return probes[i];
  };
  for (const [i, [exe, prefix]] of candidates.entries()) {
    if (skipped(opts, exe, 'the Python', notes)) {
      continue;
    }
    const info = await probe(i);
    if (i === 0 && !info?.ok) {
      candidates.slice(1).forEach((_, j) => void probe(j + 1));
    }
    if (!info) {
      continue;
    }
    tried.push(`${[exe, ...prefix].join(' ')} is Python ${info.version}`);
    if (info.ok) {
      const own = ownPath(opts, info, folders);
      return {
        command: own ?? exe,
        args: own ? ['-m', MODULE] : [...prefix, '-m', MODULE],
        env,
        source: `bundled server (mantle-lsp ${info.mantle ?? '?'}) with ${exe} (Python ${info.version})`,
      };
    }
  }
  const found = tried.length > 0 ? ` (found: ${tried.join('; ')})` : '';
  throw new ResolveError(
    `Mantle: no Python ${MIN_PYTHON.join('.')} or newer was found on PATH${found}. ` +
      `Install Python ${MIN_PYTHON.join('.')}+ (python.org, or your package manager) so that ` +
      '"python3" is on PATH, or set "mantle.interpreter" to a Python that has mantle-lsp ' +
      'installed, then run "Mantle: Restart Server".',
  );
}

/**
 * The bundled server is run by the probed Python's own path (`sys.executable`) rather than
 * by the name PATH found: a version manager's shim (pyenv, asdf: a shell script that picks
 * the interpreter) then does not run at every start (~0.1–0.2 s). Not on Windows (the `py`
 * launcher and Store aliases), and not when that path is inside an untrusted workspace.
 */
function ownPath(opts: ResolveOptions, info: PythonInfo, folders: string[]): string | undefined {
  const exe = info.executable;
  if (process.platform === 'win32' || !exe || !path.isAbsolute(exe) || !fs.existsSync(exe)) {
    return undefined;
  }
  const why = untrustedReason(exe, 'the Python', opts.trusted, folders, process.env.PATH ?? '', SAFE_CWD);
  return why ? undefined : exe;
}

/**
 * What decides how the server is started, but for the Python extension's environment:
 * the settings, the bundle, workspace trust, PATH. A start with the same inputs may
 * take the last start's command at once (extension.ts checks it again afterwards).
 */
export function resolutionInputs(opts: ResolveOptions): string {
  return JSON.stringify([
    setting('server.path'),
    setting('interpreter'),
    opts.bundledLibs,
    opts.trusted,
    process.env.MANTLE_PYTHON_CANDIDATES ?? null,
    process.env.PATH ?? '',
  ]);
}

/** Whether two resolutions start the same program the same way. */
export function sameCommand(a: ServerCommand, b: ServerCommand): boolean {
  return JSON.stringify([a.command, a.args, a.env]) === JSON.stringify([b.command, b.args, b.env]);
}

/** Whether what a command runs is still there (a program given by its path, the bundle). */
export function stillThere(cmd: ServerCommand): boolean {
  if (path.isAbsolute(cmd.command) && !fs.existsSync(cmd.command)) {
    return false;
  }
  const libs = cmd.env.PYTHONPATH;
  return !libs || fs.existsSync(path.join(libs, MODULE));
}
