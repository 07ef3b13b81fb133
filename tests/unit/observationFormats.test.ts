/**
 * Issue 35, done-when 5: what observing a request writes is made by hand for speed, so it is held
 * to what the libraries it replaces write. A request-log line (`RequestLog`, formatted in place)
 * is the line pino writes for the same fields, key for key and in the same order; the request
 * metrics (`TalliedMetric`, plain tallies read when scraped) scrape to the same samples as
 * prom-client's own `Counter` and `Histogram` fed the same observations, and add up the same in a
 * cluster (`AggregatorRegistry`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { createLogger } from '../../app/logger.js';
import { RequestLog, type RequestLine } from '../../app/operations/requestLog.js';
import { TalliedMetric } from '../../app/operations/talliedMetrics.js';
import { parsePrometheusText, type MetricFamily } from '../support/prometheusText.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Lines written to a capturing destination, parsed. */
function capture(): { readonly lines: string[]; readonly destination: { write: (line: string) => void } } {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(line) } };
}

describe('A request-log line', () => {
  const lines: RequestLine[] = [
    { requestId: 'a"b\\c', method: 'POST', route: 'POST /api/graph', status: 200, durationMs: 3.14159, databaseMs: 1.005, responseBytes: 2345, keyPrefix: 'lq_0a20kbzb', role: 'admin', operationType: 'query', operationName: 'LoanByPk', documentHash: '0123456789abcdef' },
    { requestId: '9eb5952c-65fa-443b-8be8-f4989c4efaab', method: 'GET', route: 'GET other', status: 404, durationMs: 0, databaseMs: null, responseBytes: 0, keyPrefix: null, role: null, operationType: null, operationName: null, documentHash: null },
    { requestId: 'ünï\u0001', method: 'OTHER', route: 'OTHER other', status: 499, durationMs: 12345.678, databaseMs: 0.004, responseBytes: 1, keyPrefix: null, role: 'rôle "x"', operationType: 'mutation', operationName: 'M', documentHash: null },
  ];

  for (const level of ['info', 'warn'] as const) {
    it(`is the line pino writes for the same fields, at ${level}`, () => {
      const ours = capture();
      const log = new RequestLog(createLogger('info', ours.destination), { level, sample: 1 });
      const pinos = capture();
      const logger = createLogger('info', pinos.destination);
      for (const line of lines) {
        log.write(line);
        const hundredths = (ms: number): number => Math.round(ms * 100) / 100;
        logger[level]({ ...line, durationMs: hundredths(line.durationMs), databaseMs: line.databaseMs === null ? null : hundredths(line.databaseMs) }, 'request');
      }
      assert.equal(ours.lines.length, lines.length);
      ours.lines.forEach((text, i) => {
        assert.ok(text.endsWith('\n'), 'a whole line');
        const withoutTime = (line: string): string => line.replace(/"time":\d+/, '"time":0');
        // Same text once the time is set aside: the same keys, in the same order, the same escapes.
        assert.equal(withoutTime(text), withoutTime(pinos.lines[i]!));
      });
    });
  }

  it('is the line pino writes for any field values (escapes, non-ASCII, surrogates, any duration), with the current time', () => {
    const ours = capture();
    const log = new RequestLog(createLogger('info', ours.destination), { level: 'info', sample: 1 });
    const pinos = capture();
    const logger = createLogger('info', pinos.destination);
    const field = fc.option(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constantFrom('lq_0a20kbzb', 'a\u2028b', '\ud800', '"', '\\')), { nil: null });
    const ms = fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.integer({ min: 0, max: 100_000 }).map((n) => n / 100), fc.constantFrom(0.005, 0.015, 1.005, 0.994999, 0.995, 9.995, 1e-9));
    fc.assert(
      fc.property(fc.record({ requestId: fc.string(), method: fc.string(), route: fc.string(), status: fc.integer({ min: 100, max: 599 }), durationMs: ms, databaseMs: fc.option(ms, { nil: null }), responseBytes: fc.nat(), keyPrefix: field, role: field, operationType: field, operationName: field, documentHash: field }), (line) => {
        const before = Date.now();
        log.write(line);
        const after = Date.now();
        logger.info({ ...line, durationMs: Math.round(line.durationMs * 100) / 100, databaseMs: line.databaseMs === null ? null : Math.round(line.databaseMs * 100) / 100 }, 'request');
        const [text, expected] = [ours.lines.at(-1)!, pinos.lines.at(-1)!];
        const time = Number(/"time":(\d+)/.exec(text)![1]);
        assert.ok(time >= before && time <= after, `the line's time ${time} is when it was written (${before}–${after})`);
        assert.equal(text.replace(/"time":\d+/, '"time":0'), expected.replace(/"time":\d+/, '"time":0'));
      }),
      { numRuns: 2_000 },
    );
  });

  it("writes any time as pino does (Date.now()'s number)", () => {
    let now = 0;
    const ours = capture();
    const log = new RequestLog(createLogger('info', ours.destination), { level: 'info', sample: 1 }, Math.random, () => now);
    const line: RequestLine = { requestId: 'r', method: 'GET', route: 'GET /healthz', status: 200, durationMs: 1, databaseMs: null, responseBytes: 1, keyPrefix: null, role: null, operationType: null, operationName: null, documentHash: null };
    const times = fc.oneof(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }), fc.constantFrom(0, 999, 1_000_000, 1_764_000_000_000, 1_764_000_999_999));
    fc.assert(
      fc.property(fc.array(times, { minLength: 1, maxLength: 5 }), (sequence) => {
        for (const time of sequence) {
          now = time;
          log.write(line);
          assert.equal(/"time":(\d+)/.exec(ours.lines.at(-1)!)![1], String(time));
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('writes a duration to the hundredth as JSON writes the rounded number', () => {
    const ours = capture();
    const log = new RequestLog(createLogger('info', ours.destination), { level: 'info', sample: 1 });
    const line: RequestLine = { requestId: 'r', method: 'GET', route: 'GET /healthz', status: 200, durationMs: 0, databaseMs: null, responseBytes: 1, keyPrefix: null, role: null, operationType: null, operationName: null, documentHash: null };
    fc.assert(
      fc.property(fc.oneof(fc.double({ min: 0, max: 2e7, noNaN: true }), fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100)), (ms) => {
        log.write({ ...line, durationMs: ms, databaseMs: ms });
        const written = JSON.parse(ours.lines.at(-1)!) as { durationMs: number; databaseMs: number };
        assert.equal(/"durationMs":([^,]*),"databaseMs":([^,]*),/.exec(ours.lines.at(-1)!)?.slice(1).join(' '), `${JSON.stringify(Math.round(ms * 100) / 100)} ${JSON.stringify(Math.round(ms * 100) / 100)}`);
        assert.equal(written.durationMs, Math.round(ms * 100) / 100);
      }),
      { numRuns: 20_000 },
    );
  });

  it('writes lines far larger than a batch, and many lines in a row, whole and in order', () => {
    const ours = capture();
    const log = new RequestLog(createLogger('info', ours.destination), { level: 'info', sample: 1 });
    const names = ['N'.repeat(200_000), 'ü'.repeat(70_000), 'short', '\u0001'.repeat(30_000)];
    names.forEach((operationName, i) => log.write({ requestId: `r${i}`, method: 'POST', route: 'POST /api/graph', status: 200, durationMs: 1, databaseMs: 1, responseBytes: 1, keyPrefix: null, role: null, operationType: 'query', operationName, documentHash: null }));
    assert.deepEqual(
      ours.lines.map((text) => JSON.parse(text) as { requestId: string; operationName: string }).map(({ requestId, operationName }) => [requestId, operationName]),
      names.map((name, i) => [`r${i}`, name]),
    );
  });
});

describe('Tallied metrics', () => {
  /** The same observations into prom-client's own metrics and into tallies, each in a registry of its own. */
  function fed(): { readonly own: Registry; readonly tallied: Registry } {
    const own = new Registry();
    const tallied = new Registry();
    const counter = new Counter({ name: 'c_total', help: 'a counter', labelNames: ['route', 'status'], registers: [own] });
    const histogram = new Histogram({ name: 'h_seconds', help: 'a histogram', labelNames: ['route'], buckets: BUCKETS, registers: [own] });
    const talliedCounter = new TalliedMetric('c_total', 'a counter', 'counter', [], tallied);
    const talliedHistogram = new TalliedMetric('h_seconds', 'a histogram', 'histogram', BUCKETS, tallied);
    const counts = new Map<string, ReturnType<TalliedMetric['tally']>>();
    const times = new Map<string, ReturnType<TalliedMetric['tally']>>();
    let seed = 7;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 500; i++) {
      const route = ['POST /api/graph', 'GET /healthz', 'GET other'][i % 3]!;
      const status = String([200, 400, 499][Math.floor(random() * 3)]);
      // Values on and around the bounds, below the first and above the last.
      const seconds = i % 10 === 0 ? BUCKETS[i % BUCKETS.length]! : random() ** 3 * 20;
      counter.labels(route, status).inc();
      histogram.labels(route).observe(seconds);
      const countKey = `${route} ${status}`;
      if (!counts.has(countKey)) counts.set(countKey, talliedCounter.tally({ route, status }));
      counts.get(countKey)!.add(1);
      if (!times.has(route)) times.set(route, talliedHistogram.tally({ route }));
      times.get(route)!.add(seconds);
    }
    return { own, tallied };
  }

  /** Every sample as `name{labels sorted} value`, sorted: the families' content, whatever the label order. */
  function samples(families: Map<string, MetricFamily>): string[] {
    return [...families.values()]
      .flatMap((family) => [`# ${family.name} ${family.type} ${family.help}`, ...family.samples.map((s) => `${s.name}{${[...s.labels].sort().map(([k, v]) => `${k}=${v}`).join(',')}} ${s.value.toPrecision(12)}`)])
      .sort();
  }

  it('scrape to the samples prom-client writes for the same observations', async () => {
    const { own, tallied } = fed();
    assert.deepEqual(samples(parsePrometheusText(await tallied.metrics())), samples(parsePrometheusText(await own.metrics())));
  });

  it("add up across a cluster's processes as prom-client's do", async () => {
    const [a, b] = [fed(), fed()];
    const ownSum = AggregatorRegistry.aggregate([await a.own.getMetricsAsJSON(), await b.own.getMetricsAsJSON()]);
    const talliedSum = AggregatorRegistry.aggregate([await a.tallied.getMetricsAsJSON(), await b.tallied.getMetricsAsJSON()]);
    assert.deepEqual(samples(parsePrometheusText(await talliedSum.metrics())), samples(parsePrometheusText(await ownSum.metrics())));
  });

  it('go back to zero with the registry', async () => {
    const { own, tallied } = fed();
    own.resetMetrics();
    tallied.resetMetrics();
    const zero = samples(parsePrometheusText(await tallied.metrics())).filter((line) => !line.startsWith('#'));
    assert.ok(zero.length > 0 && zero.every((line) => line.endsWith(' 0.00000000000')), 'every series is still there, at 0');
  });
});
