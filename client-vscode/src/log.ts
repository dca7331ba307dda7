// The server's stderr in the "Mantle" output channel, each line at its own level.
// vscode-languageclient logs every stderr line as an error; the server's log records
// (`mantle-lsp serve --log-level …`) start with their level, which is kept instead.
import * as readline from 'readline';
import type { Readable } from 'stream';
import type { LogOutputChannel } from 'vscode';
import { Level, stderrLevel } from './text';

export function pipeStderr(input: Readable, channel: LogOutputChannel): void {
  let level: Level | undefined;
  readline
    .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
    .on('line', (line) => {
      level = stderrLevel(line, level);
      channel[level](line);
    });
}

export function pipeStdout(input: Readable, channel: LogOutputChannel): void {
  readline
    .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
    .on('line', (line) => channel.info(line));
}
