#!/usr/bin/env node
/**
 * `loanql`: the command line (SPEC §2). Works whether or not the service runs: on the
 * embedded database it goes through the running service, or opens `DATA_DIR` itself.
 */
import { runCommandLine } from './commandLine.js';

/**
 * A reader that stopped reading (`loanql key list | head -1`): the rest of the output is not
 * wanted, the command still finishes its work. Without a listener the EPIPE would end the process
 * with a stack trace.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/**
 * Resolves once everything written to `stream` has left the process. A pipe takes 64 KiB at once
 * and Node queues the rest: `process.exit` straight after the command cut `loanql key list | wc`
 * at 65,536 bytes (a file or a terminal is written synchronously, and lost nothing).
 */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write('', () => resolve());
  });
}

runCommandLine(process.argv.slice(2), { out: process.stdout, err: process.stderr, env: process.env }).then(async (code) => {
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
});
