import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFeeJob } from '../../app/feeJob.js';
import { openTestDatabase } from '../support/testDatabase.js';

/**
 * The service's shutdown (server/main.ts) and `loanql worker` stop the fee job before they close
 * the database: the stop function cancels the runs not begun — the first one, a second after the
 * start, included — and resolves only once a run under way has ended, so no run meets a closed
 * database (which would log "the fee job failed" on every stop that fell inside a run).
 */
describe('Stopping the fee job', () => {
  it('before its first run: no run starts afterwards', async () => {
    const test = await openTestDatabase();
    try {
      let statements = 0;
      const unobserve = test.db.observe(() => void statements++);
      const warnings: string[] = [];
      const stop = startFeeJob(test.db, { info: () => undefined, warn: (_o, message) => void warnings.push(message) }, 60_000);
      await stop();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      unobserve();
      assert.equal(statements, 0, 'the first run (a second after the start) was cancelled');
      assert.deepEqual(warnings, []);
    } finally {
      await test.close();
    }
  });

  it('during a run: resolves after the run has ended, so the database can close under it', async () => {
    const test = await openTestDatabase();
    let closed = false;
    try {
      let statements = 0;
      let started!: () => void;
      const firstStatement = new Promise<void>((resolve) => (started = resolve));
      let afterStop = 0;
      let stopped = false;
      const unobserve = test.db.observe(() => {
        statements++;
        if (stopped) afterStop++;
        started();
      });
      const warnings: string[] = [];
      const stop = startFeeJob(test.db, { info: () => undefined, warn: (_o, message) => void warnings.push(message) }, 60_000);
      await firstStatement;
      await stop();
      stopped = true;
      await test.close();
      closed = true;
      await new Promise((resolve) => setTimeout(resolve, 300));
      unobserve();
      assert.ok(statements > 0, 'the run began');
      assert.equal(afterStop, 0, 'no statement after the stop resolved');
      assert.deepEqual(warnings, [], 'the run ended before the database closed');
    } finally {
      if (!closed) await test.close();
    }
  });
});
