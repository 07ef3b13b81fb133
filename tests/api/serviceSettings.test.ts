import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv } from '../../app/config.js';
import { databaseSettingsFromEnv } from '../../db/index.js';
import { assertBuilt, freePort, runCli, runServiceToExit } from '../support/processes.js';
import { copyMigratedDataDir, createServerDatabase } from '../support/testDatabase.js';

/**
 * README, Configuration: a setting the service cannot use is refused at start with one line in
 * our words — the variable, what it takes, what was given — not with a library's message later
 * (Node's "options.port should be >= 0 and < 65536" after the migrations, pino's "default
 * level:bogus must be included in custom levels"), and not taken silently (`abc` as no statement
 * timeout, `1e3` as 1000, a timer past 2^31 − 1 ms that fires after 1 ms).
 */
const REFUSED: readonly (readonly [Record<string, string>, string])[] = [
  [{ PORT: '70000' }, 'PORT must be a whole number from 1 to 65535, not "70000"'],
  [{ PORT: '0' }, 'PORT must be a whole number from 1 to 65535, not "0"'],
  [{ PORT: 'http' }, 'PORT must be a whole number from 1 to 65535, not "http"'],
  [{ LOG_LEVEL: 'bogus' }, 'LOG_LEVEL must be one of trace debug info warn error fatal silent, not "bogus"'],
  [{ LOG_LEVEL: 'INFO' }, 'LOG_LEVEL must be one of trace debug info warn error fatal silent, not "INFO"'],
  [{ REQUEST_LOG_LEVEL: 'loud' }, 'REQUEST_LOG_LEVEL must be one of trace debug info warn error fatal silent, not "loud"'],
  [{ MAX_ROWS: '1.5' }, 'MAX_ROWS must be a whole number from 0 to 2147483647, not "1.5"'],
  [{ MAX_QUERY_COST: '1e3' }, 'MAX_QUERY_COST must be a whole number from 0 to 2147483647, not "1e3"'],
  [{ MAX_QUERY_DEPTH: '0' }, 'MAX_QUERY_DEPTH must be a whole number from 1 to 2147483647, not "0"'],
  [{ BODY_LIMIT_BYTES: '0' }, 'BODY_LIMIT_BYTES must be a whole number from 1 to 2147483647, not "0"'],
  [{ HTTP_IDLE_SOCKET_TIMEOUT_MS: '99999999999' }, 'HTTP_IDLE_SOCKET_TIMEOUT_MS must be a whole number from 0 to 2147483647, not "99999999999"'],
  [{ HTTP_HEADERS_TIMEOUT_MS: '40000' }, 'HTTP_HEADERS_TIMEOUT_MS (40000) must not be longer than HTTP_REQUEST_TIMEOUT_MS (30000): the headers are part of the request'],
  [{ SHUTDOWN_GRACE_MS: '-1' }, 'SHUTDOWN_GRACE_MS must be a whole number from 0 to 86400000, not "-1"'],
  [{ SUBSCRIPTIONS_PER_KEY: 'lots' }, 'SUBSCRIPTIONS_PER_KEY must be a whole number from 1 to 2147483647, not "lots"'],
  // Below a setting's least value: refused, not raised to it in silence (SUBSCRIPTIONS_PER_KEY=0
  // allowed one subscription a key, SUBSCRIPTION_BUFFER_BYTES=1024 a buffer of 64 KiB).
  [{ SUBSCRIPTIONS_PER_KEY: '0' }, 'SUBSCRIPTIONS_PER_KEY must be a whole number from 1 to 2147483647, not "0"'],
  [{ SUBSCRIPTIONS_PER_PROCESS: '0' }, 'SUBSCRIPTIONS_PER_PROCESS must be a whole number from 1 to 2147483647, not "0"'],
  [{ SUBSCRIPTION_BUFFER_BYTES: '1024' }, 'SUBSCRIPTION_BUFFER_BYTES must be a whole number from 65536 to 2147483647, not "1024"'],
  [{ SUBSCRIPTION_REFRESH_WINDOW_MS: '0' }, 'SUBSCRIPTION_REFRESH_WINDOW_MS must be a whole number from 1 to 2147483647, not "0"'],
  [{ REPLICA_CHECK_INTERVAL_MS: '5' }, 'REPLICA_CHECK_INTERVAL_MS must be a whole number from 10 to 2147483647, not "5"'],
  [{ PLAN_CACHE_SIZE: '0' }, 'PLAN_CACHE_SIZE must be a whole number from 1 to 2147483647, not "0"'],
  // 0 is "no limit" for the other limits, but here it refused every GraphQL insert ("at most 0 rows").
  [{ MAX_INSERT_OBJECTS: '0' }, 'MAX_INSERT_OBJECTS must be a whole number from 1 to 2147483647, not "0"'],
  [{ TRUST_PROXY: 'my-proxy' }, 'TRUST_PROXY must be true, false, a number of hops, or addresses and subnets separated by commas (10.0.0.0/8, 127.0.0.1, loopback, linklocal, uniquelocal); "my-proxy" is none of these'],
  [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY must be true, false, a number of hops, or addresses and subnets separated by commas (10.0.0.0/8, 127.0.0.1, loopback, linklocal, uniquelocal); "10.0.0.0/33" is none of these'],
  [{ WEBHOOK_WORKER: 'false' }, 'WEBHOOK_WORKER must be 0 or 1, not "false"'],
  [{ WEBHOOK_ALLOW_PRIVATE: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE must be 0 or 1, not "yes"'],
  [{ WEBHOOK_TIMEOUT_MS: '50' }, 'WEBHOOK_TIMEOUT_MS must be a whole number from 100 to 2147483647, not "50"'],
  [{ ADMISSION_QUEUE_WAIT_MS: '1e9' }, 'ADMISSION_QUEUE_WAIT_MS must be a whole number from 0 to 2147483647, not "1e9"'],
];

describe('Configuration: a setting the service cannot use', () => {
  for (const [env, message] of REFUSED) {
    it(`is refused at start, naming it: ${Object.entries(env).map(([name, value]) => `${name}=${value}`).join(' ')}`, () => {
      assert.throws(() => configFromEnv(env), { message });
    });
  }

  it('STATEMENT_TIMEOUT_MS and PG_POOL_SIZE too (the database settings, also read by the CLI)', () => {
    assert.throws(() => databaseSettingsFromEnv({ STATEMENT_TIMEOUT_MS: 'abc' }), { message: 'STATEMENT_TIMEOUT_MS must be a whole number from 0 to 2147483647, not "abc"' });
    assert.throws(() => databaseSettingsFromEnv({ STATEMENT_TIMEOUT_MS: '-5' }), { message: 'STATEMENT_TIMEOUT_MS must be a whole number from 0 to 2147483647, not "-5"' });
    assert.throws(() => databaseSettingsFromEnv({ PG_POOL_SIZE: '0' }), { message: 'PG_POOL_SIZE must be a whole number from 1 to 10000, not "0"' });
    assert.deepEqual([databaseSettingsFromEnv({}).statementTimeoutMs, databaseSettingsFromEnv({}).maxConnections], [10_000, 10]);
    assert.deepEqual([databaseSettingsFromEnv({ STATEMENT_TIMEOUT_MS: '0', PG_POOL_SIZE: ' 25 ' }).statementTimeoutMs, databaseSettingsFromEnv({ PG_POOL_SIZE: '25' }).maxConnections], [0, 25]);
  });

  it('and the values they take are taken as before', () => {
    const config = configFromEnv({
      PORT: '65535', LOG_LEVEL: 'silent', MAX_ROWS: '0', HTTP_MAX_CONNECTIONS: '0', HTTP_REQUEST_TIMEOUT_MS: '0', HTTP_HEADERS_TIMEOUT_MS: '60000',
      WEBHOOK_WORKER: '0', WEBHOOK_ALLOW_PRIVATE: '1', TRUST_PROXY: 'loopback, 10.0.0.0/8, 192.168.0.0/255.255.0.0, ::1, fd00::/8', SHUTDOWN_GRACE_MS: ' 2500 ',
    });
    assert.deepEqual(
      [config.port, config.logLevel, config.maxRows, config.http.maxConnections, config.http.headersTimeoutMs, config.webhooks.workerInService, config.webhooks.allowPrivate, config.shutdownGraceMs],
      [65535, 'silent', null, 0, 60_000, false, true, 2500],
    );
    assert.equal(config.trustProxy, 'loopback, 10.0.0.0/8, 192.168.0.0/255.255.0.0, ::1, fd00::/8');
    const defaults = configFromEnv({});
    assert.deepEqual([defaults.port, defaults.logLevel, defaults.webhooks.workerInService, defaults.webhooks.allowPrivate, defaults.trustProxy], [8080, 'info', true, false, false]);
  });
});

describe('The service started with a setting it cannot use', () => {
  let dir: string;
  before(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'loanql-settings-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [what, env, port, line] of [
    ['PORT=70000', {}, 70000, 'loanql failed to start: PORT must be a whole number from 1 to 65535, not "70000"'],
    ['LOG_LEVEL=bogus', { LOG_LEVEL: 'bogus' }, 8080, 'loanql failed to start: LOG_LEVEL must be one of trace debug info warn error fatal silent, not "bogus"'],
  ] as const) {
    it(`${what}: exits 1 with one line naming it, no stack, before it opens the database`, async () => {
      const dataDir = join(dir, `data-${what.replace(/\W/g, '-')}`);
      const result = await runServiceToExit({ ...env, DATA_DIR: dataDir }, port, dir);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(result.stderr, `${line}\n`);
      assert.equal(result.stdout, '', 'nothing else: no migration, no banner');
      assert.equal(existsSync(dataDir), false, 'the database was never opened');
    });
  }
});

/**
 * The first `npm start` on a port something else holds (8080 often is): the demo is set up before
 * the service listens, and its login and key are shown only once. They were lost — the start
 * ended with Node's "listen EADDRINUSE: address already in use 127.0.0.1:8080", and the next start
 * said "Existing data kept". Now they are printed all the same, and the one line says what to do.
 */
describe('The service started on a port already in use', () => {
  let dir: string;
  const holder = createServer();
  before(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'loanql-busy-port-'));
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => holder.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exits 1 with one line naming PORT, after printing the demo login and key it just made', async () => {
    const port = (holder.address() as AddressInfo).port;
    const dataDir = join(dir, 'data');
    await copyMigratedDataDir(dataDir);
    const result = await runServiceToExit({ DATA_DIR: dataDir, DEMO_SCALE: '0.0001' }, port, dir);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(
      result.stderr,
      `loanql failed to start: port ${port} on 127.0.0.1 is already in use (another loanql, or another program): stop it, or start on a free port with PORT (PORT=${port + 1} npm start)\n`,
    );
    const key = /^ {2}Demo API key: +(lq_\w{8})_\S+$/m.exec(result.stdout);
    assert.ok(key, result.stdout);
    assert.match(result.stdout, /^ {2}Dashboard login: \S+@\S+ \/ \S{8,}$/m);
    // DEMO_SCALE=0.0001 is one loan, said so (before session 39: "created with 1 loans").
    assert.match(result.stdout, /^Demo account "demo" created with 1 loan\.$/m);
    const keys = await runCli(['key', 'list', '--account', 'demo'], { DATA_DIR: dataDir }, dir);
    assert.equal(keys.code, 0, keys.stderr);
    assert.match(keys.stdout, new RegExp(`^${key[1]} +demo `, 'm'), 'the key printed is the one stored');
  });

  // WORKERS above 1 needs DATABASE_URL: this runs in the PostgreSQL run of the suite.
  const serverUrl = process.env.TEST_DATABASE_URL;
  it('with WORKERS=2 says so at once, too, and prints the demo (its workers were restarted for 120 s)', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (WORKERS above 1 needs PostgreSQL)' }, async () => {
    const port = (holder.address() as AddressInfo).port;
    const created = await createServerDatabase(serverUrl!);
    try {
      const started = Date.now();
      const result = await runServiceToExit({ DATABASE_URL: created.url, WORKERS: '2', DEMO_SCALE: '0.0001' }, port, dir);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.ok(result.stderr.endsWith(`loanql failed to start: port ${port} on 127.0.0.1 is already in use (another loanql, or another program): stop it, or start on a free port with PORT (PORT=${port + 1} npm start)\n`), result.stderr);
      assert.match(result.stdout, /^ {2}Demo API key: +lq_\w{8}_\S+$/m);
      assert.ok(Date.now() - started < 60_000, 'before any worker was forked');
    } finally {
      await created.drop();
    }
  });
});

/**
 * A misconfigured start of the API processes (here METADATA_PATH names no file) with WORKERS=2:
 * the processes were forked again at once and forever (a start that took over 5 s counted as a
 * process that had served, so the pause was 0; a quick one's grew from 250 ms to 10 s), and the
 * primary looked alive to a supervisor. Now a start that fails before serving is logged once with
 * its reason and tried again after 1 s, 2 s, 4 s, 8 s; after five in a row, none ever having
 * started, the primary exits 1 with one line — as a single process exits 1 at once.
 */
describe('API processes that cannot start', () => {
  let dir: string;
  before(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'loanql-failed-start-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const missing = (): string => join(dir, 'no-such-metadata.yaml');
  const reason = (): string => `invalid metadata:\n  - cannot read ${missing()}: ENOENT: no such file or directory, stat '${missing()}'`;

  it('one process (WORKERS unset): exits 1 at once with one line naming the file', async () => {
    const dataDir = join(dir, 'data');
    await copyMigratedDataDir(dataDir);
    const result = await runServiceToExit({ DATA_DIR: dataDir, METADATA_PATH: missing(), DEMO_SCALE: '0.0001' }, await freePort(), dir);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(result.stderr, `loanql failed to start: ${reason()}\n`);
  });

  const serverUrl = process.env.TEST_DATABASE_URL;
  it('WORKERS=2: each failed start logged once with its reason, tried again after 1, 2, 4, 8 s, then the primary exits 1', { skip: serverUrl ? false : 'needs TEST_DATABASE_URL (WORKERS above 1 needs PostgreSQL)' }, async () => {
    const created = await createServerDatabase(serverUrl!);
    try {
      const started = Date.now();
      const result = await runServiceToExit({ DATABASE_URL: created.url, WORKERS: '2', METADATA_PATH: missing(), DEMO_SCALE: '0.0001' }, await freePort(), dir, 90_000);
      const took = Date.now() - started;
      assert.equal(result.code, 1, result.stdout + result.stderr);
      const failures = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; reason?: string; restartInMs?: number; failedStarts?: number })
        .filter((entry) => entry.msg.startsWith('an API process'));
      assert.deepEqual(
        failures.map((entry) => [entry.msg, entry.failedStarts, entry.restartInMs, entry.reason]),
        [1, 2, 3, 4].map((attempt) => ['an API process failed to start; trying again', attempt, 1_000 * 2 ** (attempt - 1), reason()]),
      );
      assert.ok(took >= 8_000, `the primary waited between attempts (${took} ms)`);
      assert.equal(result.stderr, `loanql failed to start: no API process started: 5 starts in a row failed, the last: ${reason()}\n`, 'one line, not one per process');
      // The demo set up on this start is shown all the same: its login and key exist nowhere else.
      assert.match(result.stdout, /^ {2}Demo API key: +lq_\w{8}_\S+$/m);
    } finally {
      await created.drop();
    }
  });
});
