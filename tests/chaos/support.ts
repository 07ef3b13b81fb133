/**
 * Building blocks of the chaos suite (`run.ts`): a throwaway PostgreSQL 15 (`.ci/postgres.sh`),
 * load generators that record every answer, a by-pk prober, a `pg_stat_activity` sampler and an
 * RSS sampler. Everything here talks to real processes over real sockets.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { PROJECT_ROOT } from '../support/processes.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `.ci/postgres.sh <verb> <dir> [port]`; resolves with its last output line. */
export function postgresScript(verb: 'start' | 'stop' | 'halt' | 'resume', dir: string, port?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['.ci/postgres.sh', verb, dir, ...(port ? [String(port)] : [])], { cwd: PROJECT_ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`postgres.sh ${verb} failed: ${stderr || error.message}`));
      else resolve(stdout.trim().split('\n').at(-1) ?? '');
    });
  });
}

/** One answer (or failure) seen by a load generator. */
export interface Outcome {
  /** When the request was sent (ms since the scenario's clock started). */
  readonly sentAt: number;
  readonly doneAt: number;
  /** HTTP status, or 0 when no answer came (connection refused or cut). */
  readonly status: number;
  readonly kind: 'read' | 'write' | 'probe' | 'attack';
}

export class Recorder {
  readonly outcomes: Outcome[] = [];
  readonly started = performance.now();
  now(): number {
    return performance.now() - this.started;
  }
  record(kind: Outcome['kind'], sentAt: number, status: number): void {
    this.outcomes.push({ sentAt, doneAt: this.now(), status, kind });
  }
  byStatus(filter: (outcome: Outcome) => boolean = () => true): Map<number, number> {
    const counts = new Map<number, number>();
    for (const outcome of this.outcomes) if (filter(outcome)) counts.set(outcome.status, (counts.get(outcome.status) ?? 0) + 1);
    return new Map([...counts].sort((a, b) => a[0] - b[0]));
  }
}

export function formatStatuses(counts: Map<number, number>): string {
  return [...counts].map(([status, n]) => `${status === 0 ? 'no answer' : status}: ${n}`).join(', ') || '—';
}

/** Sends one request, records it, and returns status and body text (status 0: no answer). */
export async function request(recorder: Recorder, kind: Outcome['kind'], url: string, init: RequestInit, timeoutMs = 30_000): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const sentAt = recorder.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    recorder.record(kind, sentAt, response.status);
    return { status: response.status, text, retryAfter: response.headers.get('retry-after') };
  } catch {
    recorder.record(kind, sentAt, 0);
    return { status: 0, text: '', retryAfter: null };
  }
}

export interface Target {
  url: string;
  key: string;
}

let writeCounter = 0;

/** A loan with a schedule (amount, rate, term, frequency, start) and a new borrower: a write that touches four tables. */
export function loanBody(tag: string): string {
  writeCounter += 1;
  const n = `${tag}-${process.pid}-${writeCounter}`;
  return JSON.stringify({
    Name: `chaos-${n}`,
    Amount: 1000 + (writeCounter % 500),
    Rate: 9.5,
    Term: 24,
    Frequency: 'monthly',
    Date_Funded: '2026-01-15',
    Status: 'servicing',
    Borrower_Name: `Chaos Borrower ${n}`,
    Borrower_Email: `chaos-${n}@example.test`,
  });
}

/** Loops until `stop()` is true: each writer POSTs loans and remembers the acknowledged ones (201). */
export async function writer(target: () => Target, recorder: Recorder, tag: string, acknowledged: Set<string>, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const { url, key } = target();
    const answer = await request(recorder, 'write', `${url}/api/loan`, { method: 'POST', headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, body: loanBody(tag) }, 15_000);
    if (answer.status === 201) acknowledged.add((JSON.parse(answer.text) as { loan: { id: string } }).loan.id);
    else await sleep(50);
  }
}

const READS = [
  (id: string) => ({ query: 'query($id: uuid!) { loans_by_pk(id: $id) { id name amount schedules(where: {is_next: {_eq: true}}) { due payment } borrows { person { name } } } }', variables: { id } }),
  () => ({ query: '{ loans(where: {status: {_eq: "servicing"}}, order_by: {created_at: desc}, limit: 20) { id name amount borrows { person { name } } } }' }),
  () => ({ query: '{ loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count sum { amount } } } }' }),
];

/** Loops GraphQL and REST reads until `stop()`. */
export async function reader(target: () => Target, recorder: Recorder, loanIds: readonly string[], stop: () => boolean): Promise<void> {
  for (let i = 0; !stop(); i++) {
    const { url, key } = target();
    const headers = { authorization: `Token ${key}`, 'content-type': 'application/json' };
    const answer =
      i % 4 === 3
        ? await request(recorder, 'read', `${url}/api/loan?limit=10&offset=${i % 50}`, { headers })
        : await request(recorder, 'read', `${url}/api/graph`, { method: 'POST', headers, body: JSON.stringify(READS[i % 3]!(loanIds[i % loanIds.length]!)) });
    if (answer.status !== 200) await sleep(50);
  }
}

/** One by-pk read at a time until `stop()`; returns every latency in ms. */
export async function prober(target: () => Target, recorder: Recorder, loanIds: readonly string[], stop: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; !stop(); i++) {
    const { url, key } = target();
    const started = performance.now();
    const answer = await request(recorder, 'probe', `${url}/api/graph`, {
      method: 'POST',
      headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query($id: uuid!) { loans_by_pk(id: $id) { id name amount status } }', variables: { id: loanIds[i % loanIds.length] } }),
    });
    latencies.push(answer.status === 200 ? performance.now() - started : Number.POSITIVE_INFINITY);
    await sleep(20);
  }
  return latencies;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Samples the longest-running active statement of `database` every 200 ms until stopped. */
export function statementSampler(serverUrl: string, database: string): { stop(): Promise<number> } {
  const client = new pg.Client({ connectionString: serverUrl });
  let longest = 0;
  let running = true;
  const loop = (async () => {
    try {
      await client.connect();
      while (running) {
        const { rows } = await client.query<{ ms: number | null }>(
          `SELECT max(extract(epoch FROM clock_timestamp() - query_start) * 1000)::float8 AS ms FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
          [database],
        );
        longest = Math.max(longest, rows[0]?.ms ?? 0);
        await sleep(200);
      }
    } catch {
      /* the server went away: the sampler of that scenario ends */
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return longest;
    },
  };
}

/** Resident set size of a process in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Acknowledged loans missing, and partial records, of the chaos writers, checked with SQL. */
export async function integrity(db: pg.Client | pg.Pool, acknowledged: ReadonlySet<string>): Promise<{ missing: number; loansWithoutSchedule: number; contactsWithoutLoan: number }> {
  const ids = [...acknowledged];
  const found = ids.length ? (await db.query<{ n: string }>('SELECT count(*)::text AS n FROM loans WHERE id = ANY($1::uuid[])', [ids])).rows[0]!.n : '0';
  const loansWithoutSchedule = (
    await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM loans l WHERE l.name LIKE 'chaos-%' AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id)`,
    )
  ).rows[0]!.n;
  const contactsWithoutLoan = (
    await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM people p WHERE p.name LIKE 'Chaos Borrower %' AND NOT EXISTS (SELECT 1 FROM borrows b WHERE b.account_id = p.account_id AND b.person_id = p.id)`,
    )
  ).rows[0]!.n;
  return { missing: ids.length - Number(found), loansWithoutSchedule: Number(loansWithoutSchedule), contactsWithoutLoan: Number(contactsWithoutLoan) };
}

/** Some loan ids of the demo account, for reads and the prober. */
export async function sampleLoanIds(target: Target): Promise<string[]> {
  const response = await fetch(`${target.url}/api/loan?limit=200`, { headers: { authorization: `Token ${target.key}` } });
  const page = (await response.json()) as { loans: { id: string }[] };
  return page.loans.map((loan) => loan.id);
}

export function demoKeyOf(output: string): string {
  const match = /Demo API key:\s+(\S+)/.exec(output);
  if (!match) throw new Error(`no demo key in the service's output:\n${output}`);
  return match[1]!;
}
