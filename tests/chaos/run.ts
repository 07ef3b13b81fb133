/**
 * The chaos suite (`npm run chaos`; `npm run chaos -- --short` in `.ci/run`): the built service
 * as a real process, a throwaway PostgreSQL 15, load that records every answer, and faults —
 * PostgreSQL crashing and coming back, the service killed with SIGKILL (on PostgreSQL and on the
 * embedded database), denial-of-service documents while a by-pk prober measures latency, and a
 * soak sampling RSS. Prints a table, checks the thresholds of issue 11 and exits 1 when one
 * fails. Every wait is bounded. See tests/chaos/README.md.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { assertBuilt, freePort, FULL_COMPILER, PROJECT_ROOT, startService, type RunningService } from '../support/processes.js';
import { createServerDatabase } from '../support/testDatabase.js';
import {
  demoKeyOf,
  formatStatuses,
  integrity,
  percentile,
  postgresScript,
  prober,
  reader,
  Recorder,
  request,
  rssMb,
  sampleLoanIds,
  sleep,
  statementSampler,
  writer,
  type Target,
} from './support.js';

const args = process.argv.slice(2);
const SHORT = args.includes('--short');
const option = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
/** `--only outage,kill,embedded,attacks,soak,workers`: a subset of the scenarios. */
const ONLY = new Set((option('--only') ?? 'outage,kill,embedded,attacks,soak,workers').split(','));
/**
 * The `WORKERS=2` mixed load of issue 18 (Done when 3: 60 s), in both modes: `npm test` runs
 * tests/scale/workers.test.ts with a 5 s load, the suite runs that file again with this one.
 */
const WORKERS_LOAD_SECONDS = Number(option('--workers-load-seconds') ?? 60);
/** `--service PATH`: another build's `dist/server/main.js` (to measure before/after a change). */
const SERVICE_SCRIPT = option('--service');
const SOAK_SECONDS = Number(option('--soak-seconds') ?? (SHORT ? 40 : 600));
const RESULTS_FILE = option('--results') ?? (SHORT ? undefined : join(PROJECT_ROOT, 'tests/chaos/RESULTS.md'));
const STATEMENT_TIMEOUT_MS = 10_000;
const OUTAGE_MS = 5_000;
const ATTACK_MS = SHORT ? 6_000 : 15_000;
/** Issue 35, Done when 4: the burst just under MAX_QUERY_COST runs 30 s (12 s in --short). */
const ADMISSION_ATTACK_MS = SHORT ? 12_000 : 30_000;
const WRITE_LOAD_MS = SHORT ? 4_000 : 8_000;

interface Row {
  scenario: string;
  requests: number;
  statuses: string;
  missing: string;
  partial: string;
  recovery: string;
  proberP99: string;
  longestStatement: string;
  rss: string;
}
const rows: Row[] = [];
const checks: { what: string; ok: boolean; measured: string }[] = [];
const row = (values: Partial<Row> & Pick<Row, 'scenario'>): void => void rows.push({ requests: 0, statuses: '—', missing: '—', partial: '—', recovery: '—', proberP99: '—', longestStatement: '—', rss: '—', ...values });
const check = (what: string, ok: boolean, measured: string): void => {
  checks.push({ what, ok, measured });
  log(`${ok ? 'PASS' : 'FAIL'} ${what}: ${measured}`);
};
const log = (line: string): void => void process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} ms` : '∞');

async function start(env: Record<string, string>, port: number, cwd: string): Promise<RunningService> {
  // The full compiler (no `SHORT_LIVED_NODE_FLAGS`): the chaos suite measures the service under load, as a user runs it.
  return startService({ LOG_LEVEL: 'warn', STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), ...env }, port, cwd, 180_000, SERVICE_SCRIPT, FULL_COMPILER);
}

async function main(): Promise<void> {
  assertBuilt();
  const work = mkdtempSync(join(tmpdir(), 'loanql-chaos-'));
  const pgDir = mkdtempSync(join(tmpdir(), 'loanql-chaos-pg-'));
  // `--pg-port N`: a port agreed with others on a shared machine; by default any in 5500–5999.
  const pgPort = Number(option('--pg-port') ?? 5500 + Math.floor(Math.random() * 500));
  let pgStarted = false;
  const services: RunningService[] = [];
  const cleanUp = async (): Promise<void> => {
    for (const service of services) await service.stop(5_000).catch(() => undefined);
    if (pgStarted) await postgresScript('stop', pgDir).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
    rmSync(pgDir, { recursive: true, force: true });
  };
  const deadline = setTimeout(
    () => {
      log('the suite ran past its time limit');
      void cleanUp().finally(() => process.exit(2));
    },
    (SOAK_SECONDS + (ONLY.has('workers') ? WORKERS_LOAD_SECONDS + 300 : 0) + (SHORT ? 360 : 900)) * 1000,
  );
  try {
    const needsPostgres = ['outage', 'kill', 'attacks', 'soak'].some((name) => ONLY.has(name));
    let serverUrl = '';
    let pgVersion = 'not used';
    if (needsPostgres) {
      log(`starting PostgreSQL 15 on port ${pgPort}`);
      serverUrl = await postgresScript('start', pgDir, pgPort);
      pgStarted = true;
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      pgVersion = (await admin.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v.split(' ').slice(0, 2).join(' ');
      // .ci/postgres.sh turns synchronous_commit off for speed: a crash of the server would then
      // lose commits it had acknowledged, which is PostgreSQL's documented trade, not the service's.
      // The outage crashes the server, so here every commit waits for its WAL write.
      await admin.query('ALTER SYSTEM SET synchronous_commit = on');
      await admin.query('SELECT pg_reload_conf()');
      await admin.end();
    }
    const onPostgres = async (extraEnv: Record<string, string> = {}): Promise<{ service: RunningService; target: Target; url: string; port: number; database: string; env: Record<string, string> }> => {
      const created = await createServerDatabase(serverUrl);
      const port = await freePort();
      const env = { DATABASE_URL: created.url, ...extraEnv };
      const service = await start(env, port, work);
      services.push(service);
      return { service, target: { url: service.url, key: demoKeyOf(service.output()) }, url: created.url, port, database: new URL(created.url).pathname.slice(1), env };
    };

    if (ONLY.has('outage')) await outageScenario(await onPostgres(), pgDir);
    if (ONLY.has('kill')) await killScenario(await onPostgres(), services);
    if (ONLY.has('embedded')) await embeddedKillScenario(work, services);
    if (ONLY.has('attacks')) await attackScenario(await onPostgres(), serverUrl, () => onPostgres({ ADMISSION_COST_BUDGET: '0' }));
    if (ONLY.has('soak')) await soakScenario(await onPostgres());
    if (ONLY.has('workers')) await workersScenario();

    for (const service of services) {
      if (service.process.exitCode !== null && service.process.exitCode !== 0 && service.process.signalCode === null) check(`service ${service.url} did not crash`, false, `exited ${service.process.exitCode}`);
    }
    report(pgVersion);
  } finally {
    clearTimeout(deadline);
    await cleanUp();
  }
  process.exit(checks.every((c) => c.ok) ? 0 : 1);
}

/** PostgreSQL crashes (pg_ctl -m immediate) under 8 readers + 8 writers, stays down 5 s, comes back. */
async function outageScenario(setup: { service: RunningService; target: Target; url: string }, pgDir: string): Promise<void> {
  log('scenario: PostgreSQL outage under 8 readers + 8 writers');
  const recorder = new Recorder();
  const acknowledged = new Set<string>();
  const loanIds = await sampleLoanIds(setup.target);
  let stopping = false;
  const stop = (): boolean => stopping;
  const workers = [
    ...Array.from({ length: 8 }, (_, i) => writer(() => setup.target, recorder, `outage${i}`, acknowledged, stop)),
    ...Array.from({ length: 8 }, () => reader(() => setup.target, recorder, loanIds, stop)),
  ];
  await sleep(SHORT ? 3_000 : 5_000);
  const haltAt = recorder.now();
  await postgresScript('halt', pgDir);
  // From here PostgreSQL is surely down, until `resume` is called (pg_ctl returns once it is up).
  const downAt = recorder.now();
  await sleep(OUTAGE_MS - (recorder.now() - haltAt));
  const resumeAt = recorder.now();
  await postgresScript('resume', pgDir);
  const backAt = recorder.now();
  await sleep(SHORT ? 5_000 : 10_000);
  stopping = true;
  await Promise.all(workers);
  // Answers to requests sent while the server was surely down (halted, not yet resumed).
  const during = recorder.outcomes.filter((o) => o.sentAt >= downAt && o.sentAt < resumeAt && o.doneAt <= backAt);
  const duringStatuses = recorder.byStatus((o) => during.includes(o));
  const firstSuccess = recorder.outcomes.filter((o) => o.sentAt >= backAt && o.status >= 200 && o.status < 300).sort((a, b) => a.doneAt - b.doneAt)[0];
  const recoveryMs = firstSuccess ? firstSuccess.doneAt - backAt : Number.POSITIVE_INFINITY;
  const client = new pg.Client({ connectionString: setup.url });
  await client.connect();
  const found = await integrity(client, acknowledged);
  await client.end();
  const alive = setup.service.process.exitCode === null;
  const all = recorder.byStatus();
  row({
    scenario: `PostgreSQL down ${OUTAGE_MS / 1000} s (crash, -m immediate) under 8 readers + 8 writers`,
    requests: recorder.outcomes.length,
    statuses: `${formatStatuses(all)} (while down: ${formatStatuses(duringStatuses)})`,
    missing: `${found.missing} of ${acknowledged.size}`,
    partial: `${found.loansWithoutSchedule} / ${found.contactsWithoutLoan}`,
    recovery: ms(recoveryMs),
  });
  check('outage: the service did not crash', alive, alive ? 'alive' : `exited ${setup.service.process.exitCode}`);
  check('outage: only 503 while PostgreSQL is down', during.length > 0 && [...duringStatuses.keys()].every((status) => status === 503), formatStatuses(duringStatuses));
  check('outage: no 500 at all', !all.has(500), formatStatuses(all));
  check('outage: recovery within 2 s of PostgreSQL’s return', recoveryMs <= 2_000, ms(recoveryMs));
  check('outage: 0 acknowledged writes missing, 0 partial records', found.missing === 0 && found.loansWithoutSchedule === 0 && found.contactsWithoutLoan === 0, JSON.stringify(found));
}

/** The service on PostgreSQL is killed with SIGKILL under 8 writers, then started again. */
async function killScenario(setup: { service: RunningService; target: Target; url: string; port: number; env: Record<string, string> }, services: RunningService[]): Promise<void> {
  log('scenario: kill -9 of the service (PostgreSQL) under write load');
  const recorder = new Recorder();
  const acknowledged = new Set<string>();
  let stopping = false;
  const workers = Array.from({ length: 8 }, (_, i) => writer(() => setup.target, recorder, `kill${i}`, acknowledged, () => stopping));
  await sleep(WRITE_LOAD_MS);
  setup.service.process.kill('SIGKILL');
  await setup.service.exited;
  const killedAt = recorder.now();
  await sleep(500);
  stopping = true;
  await Promise.all(workers);
  const restarted = await start(setup.env, setup.port, join(PROJECT_ROOT));
  services.push(restarted);
  const restartMs = recorder.now() - killedAt;
  const client = new pg.Client({ connectionString: setup.url });
  await client.connect();
  const found = await integrity(client, acknowledged);
  await client.end();
  const ready = (await fetch(`${restarted.url}/readyz`)).status;
  row({
    scenario: 'kill -9 of the service on PostgreSQL under 8 writers, restart',
    requests: recorder.outcomes.length,
    statuses: formatStatuses(recorder.byStatus()),
    missing: `${found.missing} of ${acknowledged.size}`,
    partial: `${found.loansWithoutSchedule} / ${found.contactsWithoutLoan}`,
    recovery: `${ms(restartMs)} (restart to ready)`,
  });
  check('kill -9 (PostgreSQL): 0 acknowledged writes missing, 0 partial records', found.missing === 0 && found.loansWithoutSchedule === 0 && found.contactsWithoutLoan === 0, JSON.stringify(found));
  check('kill -9 (PostgreSQL): the restarted service is ready', ready === 200, `/readyz ${ready}`);
  await restarted.stop();
}

/** The service on the embedded database is killed with SIGKILL under 8 writers, then started on the same DATA_DIR. */
async function embeddedKillScenario(work: string, services: RunningService[]): Promise<void> {
  log('scenario: kill -9 of the service on the embedded database under write load');
  const dataDir = join(work, 'embedded-data');
  const port = await freePort();
  const first = await start({ DATA_DIR: dataDir }, port, work);
  services.push(first);
  const target = { url: first.url, key: demoKeyOf(first.output()) };
  const recorder = new Recorder();
  const acknowledged = new Set<string>();
  let stopping = false;
  const workers = Array.from({ length: 8 }, (_, i) => writer(() => target, recorder, `embedded${i}`, acknowledged, () => stopping));
  await sleep(WRITE_LOAD_MS);
  first.process.kill('SIGKILL');
  await first.exited;
  const killedAt = recorder.now();
  await sleep(500);
  stopping = true;
  await Promise.all(workers);
  const second = await start({ DATA_DIR: dataDir }, port, work);
  services.push(second);
  const restartMs = recorder.now() - killedAt;
  // Checked through the restarted service's loopback share, with its per-start password.
  const lock = JSON.parse(readFileSync(join(dataDir, 'loanql.lock'), 'utf8')) as { port: number; password: string };
  const client = new pg.Client({ host: '127.0.0.1', port: lock.port, user: 'chaos', database: 'postgres', password: lock.password });
  await client.connect();
  const found = await integrity(client, acknowledged);
  await client.end();
  const ready = (await fetch(`${second.url}/readyz`)).status;
  row({
    scenario: 'kill -9 of the service on the embedded database under 8 writers, restart',
    requests: recorder.outcomes.length,
    statuses: formatStatuses(recorder.byStatus()),
    missing: `${found.missing} of ${acknowledged.size}`,
    partial: `${found.loansWithoutSchedule} / ${found.contactsWithoutLoan}`,
    recovery: `${ms(restartMs)} (restart to ready)`,
  });
  check('kill -9 (embedded): 0 acknowledged writes missing, 0 partial records', found.missing === 0 && found.loansWithoutSchedule === 0 && found.contactsWithoutLoan === 0, JSON.stringify(found));
  check('kill -9 (embedded): the restarted service is ready', ready === 200, `/readyz ${ready}`);
  const code = await second.stop();
  check('embedded: SIGTERM stops the restarted service cleanly', code === 0, `exit ${code}`);
}

function fragmentBomb(levels: number): string {
  let document = '{ loans(limit: 1) { ...G0 } } ';
  for (let i = 0; i < levels; i++) document += `fragment G${i} on loans { id ${i < levels - 1 ? `...G${i + 1} ...G${i + 1}` : ''} } `;
  return document;
}
const selfJoining = (aliases: number): string =>
  `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: schedules_aggregate(where: {loan: {schedules: {loan: {status: {_eq: "servicing"}}}}}) { aggregate { count sum { payment } } }`).join(' ')} }`;

/** Denial-of-service documents from concurrent attackers while a by-pk prober measures latency. */
type AttackSetup = { service: RunningService; target: Target; database: string };

/**
 * The attacks, each against the service as configured; the burst just under `MAX_QUERY_COST` also
 * against a second service with admission by cost off (`ADMISSION_COST_BUDGET=0`), first, reported
 * beside the gated run as the before (`withoutAdmission`).
 */
async function attackScenario(setup: AttackSetup, serverUrl: string, withoutAdmission: () => Promise<AttackSetup>): Promise<void> {
  // `overloadAllowed`: admission by cost (issue 35) may turn the attackers away with 503 and
  // Retry-After (its code `overloaded`); the prober must still get every answer, within 1 s at p99.
  const attacks: { name: string; concurrency: number; body: () => string; durationMs?: number; overloadAllowed?: true; admissionOff?: true }[] = [
    {
      name: 'self-joining aggregate × 4 aliases (just under MAX_QUERY_COST) with admission by cost OFF (reported, not gating)',
      concurrency: 12,
      body: () => JSON.stringify({ query: selfJoining(4) }),
      durationMs: ADMISSION_ATTACK_MS,
      admissionOff: true,
    },
    { name: 'fragment bomb (30 levels, 1.3 KB, 2^30 spreads)', concurrency: 4, body: () => JSON.stringify({ query: fragmentBomb(30) }) },
    { name: 'self-joining aggregate × 60 aliases (issue 11 item 3)', concurrency: 12, body: () => JSON.stringify({ query: selfJoining(60) }) },
    {
      name: 'self-joining aggregate × 4 aliases (just under MAX_QUERY_COST; issue 35: admission by cost)',
      concurrency: 12,
      body: () => JSON.stringify({ query: selfJoining(4) }),
      durationMs: ADMISSION_ATTACK_MS,
      overloadAllowed: true,
    },
    {
      name: 'alias bomb: 10,000 aliased fields',
      concurrency: 4,
      body: () => JSON.stringify({ query: `{ loans(limit: 1) { ${Array.from({ length: 10_000 }, (_, i) => `a${i}: id`).join(' ')} } }` }),
    },
    {
      name: 'alias bomb: 40 root aliases of every loan with borrowers (under MAX_ROOT_FIELDS and MAX_QUERY_COST)',
      concurrency: 4,
      body: () => JSON.stringify({ query: `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: loans { id name amount borrows { person { name } } }`).join(' ')} }` }),
    },
  ];
  let longestOverall = 0;
  let worstP99 = 0;
  let unguarded: AttackSetup | null = null;
  for (const attack of attacks) {
    log(`attack: ${attack.name}`);
    const target = attack.admissionOff ? (unguarded ??= await withoutAdmission()) : setup;
    const loanIds = await sampleLoanIds(target.target);
    const recorder = new Recorder();
    let stopping = false;
    const sampler = statementSampler(serverUrl, target.database);
    const probe = prober(() => target.target, recorder, loanIds, () => stopping);
    const codes = new Map<string, number>();
    let overloadWithoutRetryAfter = 0;
    const attackers = Array.from({ length: attack.concurrency }, async () => {
      while (!stopping) {
        const answer = await request(recorder, 'attack', `${target.target.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${target.target.key}`, 'content-type': 'application/json' }, body: attack.body() }, 60_000);
        let code = 'data';
        try {
          code = (JSON.parse(answer.text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code ?? 'data';
        } catch {
          code = 'not JSON';
        }
        codes.set(code, (codes.get(code) ?? 0) + 1);
        if (answer.status === 503 && code === 'overloaded') {
          if (answer.retryAfter === null) overloadWithoutRetryAfter += 1;
          // A well-behaved client waits as asked; the attack presses on at a tenth of it.
          await sleep(100);
        }
      }
    });
    const durationMs = attack.durationMs ?? ATTACK_MS;
    await sleep(durationMs);
    stopping = true;
    const latencies = await probe;
    await Promise.all(attackers);
    const longest = await sampler.stop();
    const p99 = percentile(latencies, 99);
    if (!attack.admissionOff) {
      longestOverall = Math.max(longestOverall, longest);
      worstP99 = Math.max(worstP99, p99);
    }
    const attackStatuses = recorder.byStatus((o) => o.kind === 'attack');
    row({
      scenario: `attack: ${attack.name}, ${attack.concurrency} concurrent, ${durationMs / 1000} s`,
      requests: recorder.outcomes.length,
      statuses: `attack ${formatStatuses(attackStatuses)} (${[...codes].map(([code, n]) => `${code}: ${n}`).join(', ')}); prober ${formatStatuses(recorder.byStatus((o) => o.kind === 'probe'))}`,
      proberP99: `${ms(p99)} (median ${ms(percentile(latencies, 50))}, ${latencies.length} probes)`,
      longestStatement: `${ms(longest)}`,
    });
    if (attack.admissionOff) {
      log(`(reported only) prober p99 ${ms(p99)}; the service without admission is stopped`);
      await target.service.stop();
      continue;
    }
    check(`attack "${attack.name}": prober p99 under 1 s`, p99 < 1_000, ms(p99));
    const probes = recorder.byStatus((o) => o.kind === 'probe');
    check(`attack "${attack.name}": every probe answered 200`, probes.size === 1 && probes.has(200), formatStatuses(probes));
    if (attack.overloadAllowed) {
      const attackAnswers = [...attackStatuses.keys()];
      check(
        `attack "${attack.name}": attackers get 200 or 503 overloaded with Retry-After, nothing else ≥ 500`,
        attackAnswers.every((status) => status === 200 || status === 503) && [...codes.keys()].every((code) => code === 'data' || code === 'overloaded') && overloadWithoutRetryAfter === 0,
        `${formatStatuses(attackStatuses)}; ${overloadWithoutRetryAfter} without Retry-After`,
      );
    } else check(`attack "${attack.name}": no answer ≥ 500`, ![...recorder.byStatus().keys()].some((status) => status >= 500 || status === 0), formatStatuses(recorder.byStatus()));
  }
  check(`attacks: no statement longer than STATEMENT_TIMEOUT_MS + 1 s (${STATEMENT_TIMEOUT_MS + 1000} ms)`, longestOverall <= STATEMENT_TIMEOUT_MS + 1_000, ms(longestOverall));
  check('attacks: the service did not crash', setup.service.process.exitCode === null, String(setup.service.process.exitCode));
  log(`attacks: worst prober p99 ${ms(worstP99)}`);
}

/** Mixed load — fixed and unique GraphQL documents, REST reads and writes — sampling RSS. */
async function soakScenario(setup: { service: RunningService; target: Target }): Promise<void> {
  log(`scenario: soak of ${SOAK_SECONDS} s sampling RSS`);
  const recorder = new Recorder();
  const acknowledged = new Set<string>();
  const loanIds = await sampleLoanIds(setup.target);
  let stopping = false;
  const stop = (): boolean => stopping;
  const pid = setup.service.process.pid!;
  let unique = 0;
  const uniqueDocuments = async (): Promise<void> => {
    while (!stopping) {
      unique += 1;
      const n = unique;
      // A new document every time (literals and aliases vary), as an ad-hoc client would send.
      const query = `{ l${n}: loans(where: {amount: {_gt: ${n % 997}}, name: {_ilike: "%${n.toString(36)}%"}}, limit: ${1 + (n % 20)}) { id name amount borrows { person { name email } } schedules(limit: 3) { due payment } } c${n}: loans_aggregate(where: {rate: {_gte: ${(n % 13) + 0.5}}}) { aggregate { count avg { amount } } } }`;
      const answer = await request(recorder, 'read', `${setup.target.url}/api/graph`, { method: 'POST', headers: { authorization: `Token ${setup.target.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      if (answer.status !== 200) await sleep(50);
    }
  };
  const samples: { at: number; mb: number }[] = [];
  const sampleEveryMs = SHORT ? 2_000 : 5_000;
  const workers = [
    ...Array.from({ length: 3 }, () => reader(() => setup.target, recorder, loanIds, stop)),
    ...Array.from({ length: 2 }, (_, i) => writer(() => setup.target, recorder, `soak${i}`, acknowledged, stop)),
    ...Array.from({ length: 3 }, () => uniqueDocuments()),
  ];
  const started = Date.now();
  while (Date.now() - started < SOAK_SECONDS * 1000) {
    samples.push({ at: (Date.now() - started) / 1000, mb: rssMb(pid) });
    await sleep(sampleEveryMs);
  }
  samples.push({ at: (Date.now() - started) / 1000, mb: rssMb(pid) });
  stopping = true;
  await Promise.all(workers);
  const first = samples[0]!.mb;
  const last = samples.at(-1)!.mb;
  const max = Math.max(...samples.map((s) => s.mb));
  const half = samples.reduce((best, s) => (Math.abs(s.at - SOAK_SECONDS / 2) < Math.abs(best.at - SOAK_SECONDS / 2) ? s : best)).mb;
  const secondHalfMax = Math.max(...samples.filter((s) => s.at >= SOAK_SECONDS / 2).map((s) => s.mb));
  const growth = (last - half) / half;
  const statuses = recorder.byStatus();
  row({
    scenario: `soak: ${SOAK_SECONDS} s of mixed load (3 readers, 2 writers, 3 clients of unique documents: ${unique} documents)`,
    requests: recorder.outcomes.length,
    statuses: formatStatuses(statuses),
    rss: `${first.toFixed(0)} / ${last.toFixed(0)} / ${max.toFixed(0)} MB (at half ${half.toFixed(0)}, second-half max ${secondHalfMax.toFixed(0)}; growth over the second half ${(growth * 100).toFixed(1)} %)`,
  });
  const series = samples.filter((_, i) => i % Math.max(1, Math.floor(samples.length / 20)) === 0).map((s) => `${s.at.toFixed(0)}s ${s.mb.toFixed(0)}`);
  log(`RSS samples (MB): ${series.join(', ')}`);
  // The growth criterion is the 10-minute soak's; 40 s (--short) is too short for V8 to settle
  // its heap, so the short run checks a ceiling instead (the issue's DoS battery peaked at 398 MB).
  if (SHORT) check('soak (short): RSS stays under 400 MB', max < 400, `max ${max.toFixed(0)} MB`);
  else check(`soak: RSS growth over the second half under 10 %`, growth < 0.1, `${(growth * 100).toFixed(1)} % (${half.toFixed(0)} → ${last.toFixed(0)} MB)`);
  check('soak: no answer ≥ 500', ![...statuses.keys()].some((status) => status >= 500 || status === 0), formatStatuses(statuses));
  check('soak: the service did not crash', setup.service.process.exitCode === null, String(setup.service.process.exitCode));
}

/**
 * tests/scale/workers.test.ts (a PostgreSQL primary and standby of its own, `WORKERS=2`) with the
 * full-length mixed load: every one of its tests passes, the load with no error.
 */
async function workersScenario(): Promise<void> {
  log(`scenario: WORKERS=2 with a ${WORKERS_LOAD_SECONDS} s mixed load (tests/scale/workers.test.ts)`);
  const env: NodeJS.ProcessEnv = { ...process.env, SCALE_LOAD_SECONDS: String(WORKERS_LOAD_SECONDS) };
  for (const name of ['TEST_DATABASE_URL', 'DATABASE_URL', 'DATA_DIR', 'NODE_TEST_CONTEXT']) delete env[name];
  const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-reporter=spec', join(PROJECT_ROOT, 'tests/scale/workers.test.ts')],
      { cwd: PROJECT_ROOT, env, timeout: (WORKERS_LOAD_SECONDS + 300) * 1000, maxBuffer: 64 * 2 ** 20 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
  const load = /WORKERS=2 mixed load, (\d+) s: (\d+) requests \(([^)]*)\), (\d+) errors/.exec(output);
  const passed = /^ℹ pass (\d+)$/m.exec(output)?.[1] ?? '0';
  const failed = /^ℹ fail (\d+)$/m.exec(output)?.[1] ?? '?';
  row({ scenario: `WORKERS=2, ${WORKERS_LOAD_SECONDS} s mixed load (tests/scale/workers.test.ts)`, requests: load ? Number(load[2]) : 0, statuses: load ? load[3]! : '—' });
  if (code !== 0 || !load) log(`tests/scale/workers.test.ts:\n${output.slice(-6000)}`);
  check('workers: tests/scale/workers.test.ts passes', code === 0 && failed === '0' && !output.includes('SKIPPED'), `exit ${code}, ${passed} passed, ${failed} failed`);
  check(`workers: the ${WORKERS_LOAD_SECONDS} s mixed load had no error`, load !== null && load[1] === String(WORKERS_LOAD_SECONDS) && load[4] === '0', load ? `${load[2]} requests, ${load[4]} errors` : 'no load line');
}

function report(pgVersion: string): void {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, Node ${process.version}, ${pgVersion} (.ci/postgres.sh), shared with other engineers' work`;
  const header = ['Scenario', 'Requests', 'Answers by status', 'Acknowledged writes missing', 'Partial records (loan w/o schedule / contact w/o loan)', 'Recovery', 'Prober p99', 'Longest statement', 'RSS first / last / max'];
  const lines = [
    `Machine: ${machine}.`,
    `Mode: ${SHORT ? 'short (CI)' : 'full'}; PostgreSQL with synchronous_commit on (fsync off: a server crash keeps the OS's page cache); STATEMENT_TIMEOUT_MS ${STATEMENT_TIMEOUT_MS}; service ${SERVICE_SCRIPT ?? 'dist/server/main.js'}; ${new Date().toISOString()}.`,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${[r.scenario, r.requests, r.statuses, r.missing, r.partial, r.recovery, r.proberP99, r.longestStatement, r.rss].join(' | ')} |`),
    '',
    '| Threshold (issue 11) | Measured | |',
    '|---|---|---|',
    ...checks.map((c) => `| ${c.what} | ${c.measured} | ${c.ok ? 'pass' : '**FAIL**'} |`),
    '',
    `${checks.filter((c) => c.ok).length} of ${checks.length} thresholds met.`,
  ];
  const text = lines.join('\n');
  process.stdout.write(`\n${text}\n`);
  if (RESULTS_FILE) {
    writeFileSync(RESULTS_FILE, `# Chaos suite results\n\n\`npm run chaos\` (tests/chaos/README.md).\n\n${text}\n`);
    log(`written to ${RESULTS_FILE}`);
  }
}

main().catch((error: unknown) => {
  log(`the suite failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
