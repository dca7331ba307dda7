// Workspace trust: in an untrusted workspace (Restricted Mode) the extension runs no
// program that lives inside a workspace folder — a `.venv/bin/python` shipped with the
// folder, reported as the Python extension's active environment, would otherwise run
// (and import from the folder's site-packages) as soon as the folder is opened
// (docs/vscode.md#workspace-trust). Pure (fs and path only): unit-tested with node --test.
import * as fs from 'fs';
import * as path from 'path';

export interface Platform {
  /** `process.platform` */
  platform: string;
  /** resolves every link of an existing path; throws when the path does not exist */
  realpath: (p: string) => string;
}

const HOST: Platform = { platform: process.platform, realpath: (p) => fs.realpathSync.native(p) };

/** `p` and, when it exists, `p` with its links resolved (else its folder's, plus its name). */
function spellings(p: string, host: Platform): string[] {
  const abs = path.resolve(p);
  const out = [abs];
  try {
    out.push(host.realpath(abs));
  } catch {
    try {
      out.push(path.join(host.realpath(path.dirname(abs)), path.basename(abs)));
    } catch {
      // neither exists: only the path as given
    }
  }
  return [...new Set(out)];
}

function isInside(child: string, folder: string, host: Platform): boolean {
  const fold = host.platform === 'win32' || host.platform === 'darwin';
  const c = fold ? child.toLowerCase() : child;
  const f = fold ? folder.toLowerCase() : folder;
  const rel = path.relative(f, c);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/**
 * The workspace folder that the program `exe` lives in, if any: compared as given and
 * with links resolved on both sides, so that neither a link to a program inside a folder
 * nor a folder opened through a link hides it. (A virtual environment's `bin/python` is
 * usually a link to the system's Python, but running it by its path inside the folder
 * loads the folder's site-packages: the path as given counts too.)
 */
export function folderHolding(exe: string, folders: string[], host: Platform = HOST): string | undefined {
  const exes = spellings(exe, host);
  for (const folder of folders) {
    if (spellings(folder, host).some((f) => exes.some((e) => isInside(e, f, host)))) {
      return folder;
    }
  }
  return undefined;
}

/**
 * The file a bare program name (`python3`, `py`) runs, found on `searchPath` as the
 * operating system would (relative entries from `cwd`; Windows: with PATHEXT); a name
 * with a separator is returned as it is, a name not found as undefined.
 */
export function whichProgram(
  name: string,
  searchPath: string,
  cwd: string,
  host: Platform & { pathext?: string } = HOST,
): string | undefined {
  if (name.includes('/') || name.includes('\\')) {
    return name;
  }
  const win = host.platform === 'win32';
  const exts = win ? ['', ...(host.pathext ?? process.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';')] : [''];
  for (const dir of searchPath.split(win ? ';' : ':')) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.resolve(cwd, dir, name + ext);
      try {
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not there
      }
    }
  }
  return undefined;
}

/**
 * Why `exe` must not run while the workspace is untrusted (a line for the output
 * channel), or undefined when it may: the workspace is trusted, or the program (a bare
 * name: the file it runs on `searchPath`) lives in none of `folders`.
 */
export function untrustedReason(
  exe: string,
  what: string,
  trusted: boolean,
  folders: string[],
  searchPath: string,
  cwd: string,
  host: Platform = HOST,
): string | undefined {
  if (trusted || folders.length === 0) {
    return undefined;
  }
  const file = whichProgram(exe, searchPath, cwd, host);
  if (!file) {
    return undefined; // nothing to run
  }
  const folder = folderHolding(file, folders, host);
  if (!folder) {
    return undefined;
  }
  const shown = file === exe ? exe : `${exe} (${file})`;
  return (
    `skipped ${what} ${shown}: it is inside the workspace folder ${folder}, and the ` +
    'workspace is not trusted (Restricted Mode) — nothing from the folder runs until you ' +
    'trust it (then the server is found again)'
  );
}
