import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withTimeout } from '../../db/readReplicas.js';

/**
 * A replica's health check has a time limit (1 s): no answer within it takes the replica out.
 * When the service's own process was stalled past the limit (a CPU-bound moment on a busy
 * machine), Node runs the due timer before it reads the sockets: an answer that had arrived in
 * time lost that race. Here the answer is a child process's write, made while this process spins.
 */
describe('a health check\'s time limit', () => {
  const directory = mkdtempSync(join(tmpdir(), 'loanql-check-limit-'));
  after(() => rmSync(directory, { recursive: true, force: true }));

  /**
   * A child that writes `r` at once and `x` after `delayMs`, then creates `written` (a write to a
   * pipe is synchronous in Node on Linux: once the file exists, the `x` is in this process's pipe).
   */
  const childAnswering = (delayMs: number, written: string) => {
    const child = spawn(
      process.execPath,
      ['-e', `process.stdout.write('r'); setTimeout(() => { process.stdout.write('x'); require('node:fs').writeFileSync(${JSON.stringify(written)}, ''); }, ${delayMs});`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const answered = new Promise<string>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        if (text.includes('r')) ready();
        if (text.includes('x')) resolve('answered');
      });
    });
    return { started, answered, child };
  };

  it('counts an answer that arrived within the limit while this process was busy', async () => {
    const written = join(directory, 'answered');
    const { started, answered, child } = childAnswering(20, written);
    try {
      await started;
      const checked = withTimeout(answered, 100);
      // Busy (the event loop does not turn) until the answer is in the pipe and the limit is past.
      const from = Date.now();
      while (!existsSync(written) || Date.now() - from < 200) if (Date.now() - from > 10_000) assert.fail('the child did not answer within 10 s');
      assert.equal(await checked, 'answered');
    } finally {
      child.kill();
    }
  });

  it('refuses when no answer came within the limit', async () => {
    const { started, answered, child } = childAnswering(1_000, join(directory, 'late'));
    try {
      await started;
      await assert.rejects(withTimeout(answered, 100), /no answer within 100 ms/);
    } finally {
      child.kill();
    }
  });
});
