// Pure text helpers of the extension (no `vscode` import: unit-tested with node --test,
// test/unit.test.mjs): the level of a server stderr line, what a check's exit status
// means, terminal line ends.

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<string, Level> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  WARN: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
  FATAL: 'error',
};
// `2026-12-01 16:00:00,123 WARNING pygls.protocol: …` (the server's log format), or a
// bare `WARNING:name:…` (Python's default format)
const RECORD = /^(?:\d{4}-\d\d-\d\d[ T][\d:,.]+ )?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b/;

/**
 * The level of one stderr line. A line that starts no record (a traceback's frames, a
 * message over several lines) belongs to the record before it; before any record (a
 * crash of the interpreter itself) it is an error.
 */
export function stderrLevel(line: string, previous: Level | undefined): Level {
  const m = RECORD.exec(line);
  if (m) {
    return LEVELS[m[1]];
  }
  return previous ?? 'error';
}

/** What the exit status of `mantle-lsp check` means (docs/cli.md). */
export function exitSummary(code: number | null, signal: string | null): string {
  if (signal) {
    return `the check was stopped (${signal})`;
  }
  switch (code) {
    case 0:
      return 'no errors (exit status 0)';
    case 1:
      return 'errors found (exit status 1)';
    case 2:
      return 'the check could not run (exit status 2): see the message above';
    default:
      return `exit status ${code}`;
  }
}

/** Terminals want CRLF line ends. */
export function toTerminal(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
