/**
 * What observing one request costs the event loop, in process (issue 35, done-when 5): real
 * `IncomingMessage`/`ServerResponse` objects through `observeRequests` with the metrics and the
 * request log (pino's asynchronous destination: standard output, so send it to a file), against
 * the same loop unobserved, in alternating rounds; CPU time from `process.cpuUsage()` (every
 * thread, the log's writes included). Other work on the machine moves it much less than
 * throughput. The engine, the database and the sockets are not in it (`operationsCpu.ts` measures
 * the whole service).
 *
 *   npm run build && node --import tsx bench/observeCost.ts [--dist DIR] > /tmp/request-log.jsonl
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './processes.js';

const { values: args } = parseArgs({ options: { dist: { type: 'string', default: join(ROOT, 'dist') }, rounds: { type: 'string', default: '12' }, requests: { type: 'string', default: '50000' } } });
const dist = resolve(args.dist);
/* eslint-disable @typescript-eslint/no-explicit-any -- the build under test is loaded by path */
const { observeRequests } = (await import(join(dist, 'server', 'observeRequests.js'))) as any;
const { ServiceMetrics } = (await import(join(dist, 'app', 'operations', 'serviceMetrics.js'))) as any;
const { RequestLog } = (await import(join(dist, 'app', 'operations', 'requestLog.js'))) as any;
const { createLogger } = (await import(join(dist, 'app', 'logger.js'))) as any;
const { factsOf } = (await import(join(dist, 'http', 'requestFacts.js'))) as any;
/* eslint-enable @typescript-eslint/no-explicit-any */
const observe = observeRequests({ metrics: new ServiceMetrics({ db: {} }), requestLog: new RequestLog(createLogger('info'), { level: 'info', sample: 1 }) });
const socket = new Socket();
const body = '{"data":{"loans_by_pk":{"id":"0b7c9d6e-1234-4f5e-9a8b-123456789012"}}}';

function oneRequest(observed: boolean, i: number): void {
  const req = new IncomingMessage(socket);
  Object.assign(req, { method: 'POST', url: '/api/graph', httpVersionMajor: 1, httpVersionMinor: 1, headers: { 'content-type': 'application/json', authorization: 'Token lq_x', 'content-length': '120' } });
  const res = new ServerResponse(req);
  if (observed) {
    observe(req, res);
    const facts = factsOf(res);
    Object.assign(facts, { keyPrefix: 'lq_0a20kbzb', role: 'admin', accountId: 'eb388662-a276-4cba-aba9-2d8c16da9ca0' });
    Object.assign(facts.engine, { operationType: 'query', operationName: 'LoanByPk', documentHash: '0123456789abcdef', planCacheHit: true, databaseMs: 1.5 + (i % 3) });
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.emit('finish');
}

const requests = Number(args.requests);
const rounds = Number(args.rounds);
for (let i = 0; i < 20_000; i++) {
  oneRequest(true, i);
  oneRequest(false, i);
}
const differences: number[] = [];
for (let round = 0; round < rounds; round++) {
  const us = new Map<boolean, number>();
  for (const observed of round % 2 ? [true, false] : [false, true]) {
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) {
      oneRequest(observed, i);
      // Let the log's destination and timers run, as between requests.
      if (i % 64 === 0) await new Promise(setImmediate);
    }
    const spent = process.cpuUsage(before);
    us.set(observed, (spent.user + spent.system) / requests);
  }
  differences.push(us.get(true)! - us.get(false)!);
}
differences.sort((a, b) => a - b);
process.stderr.write(`${dist}: observing costs ${differences[rounds >> 1]!.toFixed(2)} µs of CPU a request (median of ${rounds} rounds; ${differences[0]!.toFixed(2)} to ${differences[rounds - 1]!.toFixed(2)})\n`);
