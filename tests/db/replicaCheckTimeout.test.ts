import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { withTimeout } from '../../db/readReplicas.js';

/**
 * A replica's health check has a time limit (1 s): no answer within it takes the replica out.
 * When the service's own process was stalled past the limit (a CPU-bound moment on a busy
 * machine), Node runs the due timer before it reads the sockets: an answer that had arrived in
 * time lost that race. Here the answer is a child process's write, sent while this process spins.
 */
describe('a health check\'s time limit', () => {
  const childAnswering = (delayMs: number) => {
    const child = spawn(process.execPath, ['-e', `process.stdout.write('r'); setTimeout(() => process.stdout.write('x'), ${delayMs});`], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  const spin = (ms: number): void => {
    const until = Date.now() + ms;
    while (Date.now() < until);
  };

  it('counts an answer that arrived within the limit while this process was busy', async () => {
    const { started, answered, child } = childAnswering(20);
    await started;
    const checked = withTimeout(answered, 100);
    spin(400); // the answer arrives after 20 ms; the limit falls due at 100
    assert.equal(await checked, 'answered');
    child.kill();
  });

  it('refuses when no answer came within the limit', async () => {
    const { started, answered, child } = childAnswering(1_000);
    await started;
    await assert.rejects(withTimeout(answered, 100), /no answer within 100 ms/);
    child.kill();
  });
});
