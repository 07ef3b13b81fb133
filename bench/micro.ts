/**
 * In-process micro-benchmarks of the engine, no database and no HTTP:
 * - cold compile: `prepare` of a document the plan cache has not seen (parse → validate →
 *   plan → SQL → bind). The first call in a fresh engine (cold JIT too) is reported apart from
 *   the steady state, which uses a new document text per iteration (a trailing comment) so
 *   every call misses the cache;
 * - plan-cache hit: `prepare` of a cached document with a new variable set each call, which is
 *   all the engine does per request before the statement is sent.
 */
import { performance } from 'node:perf_hooks';
import { GraphEngine, type EngineOptions, type PreparedRequest } from '../engine/index.js';
import { assumeEmptyCatalogue, loadMetadataFile } from '../metadata/index.js';
import { QUERIES, type DataSample } from './queries.js';

export interface Distribution {
  readonly medianUs: number;
  readonly p99Us: number;
  readonly iterations: number;
}

export interface QueryMicro {
  readonly id: string;
  readonly firstCompileUs: number;
  readonly coldCompile: Distribution;
  readonly planCacheHit: Distribution;
  readonly sqlBytes: number;
  readonly params: number;
}

function distribution(samplesUs: number[]): Distribution {
  const sorted = [...samplesUs].sort((a, b) => a - b);
  const pick = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { medianUs: pick(0.5), p99Us: pick(0.99), iterations: sorted.length };
}

function timeUs(work: () => void): number {
  const start = performance.now();
  work();
  return (performance.now() - start) * 1000;
}

export function runMicroBenchmarks(metadataPath: string, sample: DataSample, accountId: string, options: { coldIterations: number; hitIterations: number }): QueryMicro[] {
  const engineOptions: EngineOptions = { maxDepth: 12, maxRows: null, planCacheSize: 1000 };
  // Compiles without checking against the database, as the engine always did here: no catalogue facts.
  const metadata = assumeEmptyCatalogue(loadMetadataFile(metadataPath));
  const results: QueryMicro[] = [];
  for (const query of QUERIES) {
    const engine = new GraphEngine(metadata, engineOptions);
    const variables = (i: number) => query.variables(sample, i);
    const request = (text: string, i: number) => ({ query: text, operationName: query.operationName, variables: variables(i) });

    // The first compile of this query in the process (code paths may still be cold).
    let prepared: PreparedRequest | undefined;
    const first = timeUs(() => {
      prepared = engine.prepare(request(query.graphql, 0), accountId);
    });

    const cold: number[] = [];
    for (let i = 0; i < options.coldIterations; i++) {
      const text = `${query.graphql}\n# cold ${i}`;
      cold.push(timeUs(() => engine.prepare(request(text, i), accountId)));
    }

    const hit: number[] = [];
    const warmup = Math.min(2000, options.hitIterations);
    for (let i = 0; i < warmup + options.hitIterations; i++) {
      const body = request(query.graphql, i);
      const us = timeUs(() => engine.prepare(body, accountId));
      if (i >= warmup) hit.push(us);
    }
    if (prepared?.kind !== 'statement' && prepared?.kind !== 'mutation') throw new Error(`${query.id} did not compile to a statement`);
    const statements = prepared.kind === 'statement' ? [{ text: prepared.text, params: prepared.values }] : [...prepared.program.steps.map((step) => step.statement), prepared.program.response].map((statement) => ({ text: statement.text, params: statement.params }));
    results.push({
      id: query.id,
      firstCompileUs: first,
      coldCompile: distribution(cold),
      planCacheHit: distribution(hit),
      sqlBytes: statements.reduce((sum, statement) => sum + Buffer.byteLength(statement.text), 0),
      params: statements.reduce((sum, statement) => sum + statement.params.length, 0),
    });
  }
  return results;
}
