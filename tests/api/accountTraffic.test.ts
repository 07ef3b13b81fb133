import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AccountTraffic } from '../../app/operations/accountTraffic.js';

/** Issue 35, the dashboard's operations page: each account's own last hour, by operation type. */
describe('AccountTraffic', () => {
  it('keeps each account apart, and counts requests, errors and latency by operation type', () => {
    const traffic = new AccountTraffic(() => 1_000_000);
    for (const ms of [2, 4, 30]) traffic.observe('a', 'query', 200, ms);
    traffic.observe('a', 'none', 400, 1);
    traffic.observe('b', 'query', 200, 5);
    assert.deepEqual(traffic.lastHour('a'), [
      { operation: 'query', requests: 3, errors: 0, meanMs: 12, p95Ms: 30, maxMs: 30 },
      { operation: 'none', requests: 1, errors: 1, meanMs: 1, p95Ms: 1, maxMs: 1 },
    ]);
    assert.deepEqual(traffic.lastHour('b').map((row) => row.requests), [1]);
    assert.deepEqual(traffic.lastHour('c'), []);
  });

  it('tells the 95th percentile by its bucket, and forgets what is older than an hour', () => {
    let now = 0;
    const traffic = new AccountTraffic(() => now);
    for (let i = 0; i < 95; i++) traffic.observe('a', 'query', 200, 3);
    for (let i = 0; i < 5; i++) traffic.observe('a', 'query', 500, 700);
    assert.deepEqual(traffic.lastHour('a')[0], { operation: 'query', requests: 100, errors: 5, meanMs: (95 * 3 + 5 * 700) / 100, p95Ms: 5, maxMs: 700 });
    now = 30 * 60_000;
    traffic.observe('a', 'mutation', 200, 8);
    assert.deepEqual(traffic.lastHour('a').map((row) => [row.operation, row.requests]), [['query', 100], ['mutation', 1]]);
    now = 60 * 60_000; // the first minute has left the window
    assert.deepEqual(traffic.lastHour('a').map((row) => [row.operation, row.requests]), [['mutation', 1]]);
    now = 91 * 60_000;
    assert.deepEqual(traffic.lastHour('a'), []);
  });

  it('tells how many minutes it has counted while that is less than the hour (after a start), then null', () => {
    let now = 5_000_000;
    const traffic = new AccountTraffic(() => now);
    assert.equal(traffic.partialWindowMinutes(), 0);
    now += 59_999;
    assert.equal(traffic.partialWindowMinutes(), 0);
    now += 1;
    assert.equal(traffic.partialWindowMinutes(), 1);
    now += 58 * 60_000;
    assert.equal(traffic.partialWindowMinutes(), 59);
    now += 60_000;
    assert.equal(traffic.partialWindowMinutes(), null);
  });
});
