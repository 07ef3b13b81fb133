/**
 * Issue 35: the log's destination is asynchronous (app/logger.ts: pino's `sync: false`, so a
 * request's line costs no `write(2)` of its own), and nothing is lost for it: a burst of requests
 * answered right before SIGTERM all have their lines, and the clean stop's own last line
 * (`stopped`, written just before `process.exit`) is there too. Runs the built service (`dist/`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, freePort, runCli, startService, type RunningService } from '../support/processes.js';
import { copyMigratedDataDir } from '../support/testDatabase.js';

const BURST = 300;

describe('The request log on a clean stop', { timeout: 240_000 }, () => {
  let workDir: string;
  let service: RunningService;

  before(async () => {
    assertBuilt();
    workDir = mkdtempSync(join(tmpdir(), 'loanql-log-flush-'));
    const dataDir = join(workDir, 'data');
    // A migrated data directory (the first start is not this file's subject), and an account
    // made with the CLI, so the service finds data and sets up no demo.
    await copyMigratedDataDir(dataDir);
    const created = await runCli(['account', 'create', 'log-flush'], { DATA_DIR: dataDir }, workDir);
    assert.equal(created.code, 0, created.stderr);
    service = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'info', REQUEST_LOG_LEVEL: 'info', REQUEST_LOG_SAMPLE: '1', WEBHOOK_WORKER: '0' }, await freePort(), workDir);
  });

  after(async () => {
    await service?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('writes every line of a burst answered just before SIGTERM, then "stopped" last', async () => {
    const ids = Array.from({ length: BURST }, (_, index) => `flush-${index}`);
    const statuses = await Promise.all(ids.map((id) => fetch(`${service.url}/healthz`, { headers: { 'x-request-id': id } }).then(async (response) => (await response.arrayBuffer(), response.status))));
    assert.deepEqual(new Set(statuses), new Set([200]));
    service.process.kill('SIGTERM');
    assert.equal(await service.exited, 0);

    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const logged = new Set(lines.filter((line) => line.msg === 'request').map((line) => line.requestId));
    assert.deepEqual(ids.filter((id) => !logged.has(id)), [], 'every request of the burst has its line');
    assert.equal(lines.at(-1)?.msg, 'stopped', 'the clean stop writes its last line before exiting');
  });
});
