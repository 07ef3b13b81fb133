/**
 * Issue 35: on the service's own destination (standard output, asynchronous) request-log lines
 * are written as bytes into a batch (`app/logger.ts`, `lineBytesOf`) handed over 64 KiB at a
 * time. Whatever the batching, the log is the same: every line whole, in the order written —
 * other lines of the logger between request lines, lines larger than a batch — and nothing left
 * in the batch when the process exits.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const LOGGER = fileURLToPath(new URL('../../app/logger.ts', import.meta.url));
const REQUEST_LOG = fileURLToPath(new URL('../../app/operations/requestLog.ts', import.meta.url));

/** A process that logs `script`'s lines to its standard output as the service does, then exits; its lines, parsed. */
function loggedBy(script: string): Record<string, unknown>[] {
  const program = `
    import { createLogger } from ${JSON.stringify(LOGGER)};
    import { RequestLog } from ${JSON.stringify(REQUEST_LOG)};
    const logger = createLogger('info');
    const log = new RequestLog(logger, { level: 'info', sample: 1 });
    const line = (requestId, operationName = 'Q') => log.write({ requestId, method: 'POST', route: 'POST /api/graph', status: 200, durationMs: 1.5, databaseMs: 0.25, responseBytes: 10, keyPrefix: 'lq_0a20kbzb', role: 'admin', operationType: 'query', operationName, documentHash: '0123456789abcdef' });
    ${script}
    process.exit(0);`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.ok(output.endsWith('\n'), 'the last line is whole');
  return output
    .trimEnd()
    .split('\n')
    .map((text) => JSON.parse(text) as Record<string, unknown>);
}

describe('Request-log lines on the asynchronous destination', { timeout: 60_000 }, () => {
  it('keep their order with the logger\'s other lines, across batches, and are all written at exit', () => {
    const lines = loggedBy(`
      for (let i = 0; i < 2000; i++) {
        line('r' + i);
        if (i % 300 === 0) logger.info({ i }, 'other');
      }
      line('big', 'N'.repeat(300000));
      line('wide', 'ü'.repeat(50000) + '"');
      logger.warn('last');`);
    const expected: string[] = [];
    for (let i = 0; i < 2000; i++) {
      expected.push(`r${i}`);
      if (i % 300 === 0) expected.push(`other ${i}`);
    }
    expected.push('big', 'wide', 'last');
    assert.deepEqual(
      lines.map((line) => (line.msg === 'request' ? line.requestId : line.msg === 'other' ? `other ${line.i}` : line.msg)),
      expected,
    );
    assert.equal(lines.find((line) => line.requestId === 'big')?.operationName, 'N'.repeat(300000));
    assert.equal(lines.find((line) => line.requestId === 'wide')?.operationName, 'ü'.repeat(50000) + '"');
  });

  it('are written at exit when fewer than a batch wait', () => {
    assert.deepEqual(
      loggedBy(`line('a'); line('b');`).map((line) => line.requestId),
      ['a', 'b'],
    );
  });
});
