import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { assertBuilt, freePort, runCli, runServiceToExit, startService, type RunningService } from '../support/processes.js';
import { openPgliteDatabase } from '../../db/index.js';
import { copyMigratedDataDir, TEST_SHARED_BUFFERS } from '../support/testDatabase.js';

/**
 * The service as a process on the embedded database (issue 11): its loopback share refuses any
 * connection without the per-start password, which only the service's user can read (Done-when
 * 4); `/healthz` and `/readyz`; and a graceful shutdown on SIGTERM that finishes the request in
 * flight, closes PGlite cleanly and releases the data directory, so the next start finds it whole.
 */
const PSQL = '/usr/lib/postgresql/15/bin/psql';
let dir: string;
let dataDir: string;
let port: number;
let service: RunningService;
let demoKey: string;

interface Lock {
  pid: number;
  port: number;
  password?: string;
}
const readLock = (): Lock => JSON.parse(readFileSync(join(dataDir, 'loanql.lock'), 'utf8')) as Lock;

function psql(sharePort: number, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(PSQL, ['-w', '-h', '127.0.0.1', '-p', String(sharePort), '-U', 'nobody', '-d', 'postgres', '-tAc', 'SELECT count(*) FROM accounts'], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

async function query(sharePort: number, password: string | undefined): Promise<unknown> {
  const client = new pg.Client({ host: '127.0.0.1', port: sharePort, user: 'nobody', database: 'postgres', ...(password === undefined ? {} : { password }) });
  try {
    await client.connect();
    const { rows } = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM accounts');
    return rows[0]!.n;
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

before(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'loanql-lifecycle-'));
  dataDir = join(dir, 'data');
  port = await freePort();
  // The first start's migrations are not this file's subject (cli/cli.test.ts has them), nor is
  // the demo: a migrated data directory, and a demo of one loan (its key is what this file needs).
  await copyMigratedDataDir(dataDir);
  service = await startService({ DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: '5000', DEMO_SCALE: '0.0001' }, port, dir);
  demoKey = /Demo API key:\s+(\S+)/.exec(service.output())![1]!;
});

after(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('The embedded database share', () => {
  it('keeps a per-start random password in the lock file, readable only by the service’s user (0600)', () => {
    const lock = readLock();
    assert.equal(lock.pid, service.process.pid);
    assert.ok(typeof lock.password === 'string' && lock.password.length >= 24, 'a long random password');
    assert.equal(statSync(join(dataDir, 'loanql.lock')).mode & 0o777, 0o600);
  });

  it('refuses a connection without a password, and one with a wrong password (28P01)', async () => {
    const { port: sharePort } = readLock();
    const none = await query(sharePort, undefined);
    assert.ok(none instanceof Error, `read ${String(none)} without a password`);
    const wrong = await query(sharePort, 'wrong');
    assert.ok(wrong instanceof Error, `read ${String(wrong)} with a wrong password`);
    assert.equal((wrong as { code?: string }).code, '28P01');
  });

  it('refuses psql without the password', { skip: existsSync(PSQL) ? false : `${PSQL} is not installed` }, async () => {
    const { port: sharePort } = readLock();
    const refused = await psql(sharePort, {});
    assert.notEqual(refused.code, 0, refused.output);
    assert.match(refused.output, /password/i);
    const wrong = await psql(sharePort, { PGPASSWORD: 'nobody' });
    assert.notEqual(wrong.code, 0, wrong.output);
    assert.match(wrong.output, /password authentication failed/);
    const allowed = await psql(sharePort, { PGPASSWORD: readLock().password! });
    assert.equal(allowed.code, 0, allowed.output);
    assert.match(allowed.output.trim(), /^\d+$/);
  });

  it('lets in a client with the password (any user name)', async () => {
    const { port: sharePort, password } = readLock();
    assert.equal(typeof (await query(sharePort, password)), 'string');
  });
});

describe('Health endpoints', () => {
  it('GET /healthz (liveness) and GET /readyz (database reachable, metadata loaded) are 200 without a key', async () => {
    const live = await fetch(`${service.url}/healthz`);
    assert.equal(live.status, 200);
    const ready = await fetch(`${service.url}/readyz`);
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { status: string; database: { status: string }; metadata: { status: string; collections: number } };
    assert.deepEqual([body.status, body.database.status, body.metadata.status], ['ok', 'ok', 'ok']);
    assert.ok(body.metadata.collections > 5);
  });
});

describe('A copy of DATA_DIR made while the service runs (README "Backups")', () => {
  it('is a database of its own: a command on the copy writes the copy, not the running service’s database through its share', async () => {
    // The copy carries loanql.lock, whose process (the service) is alive: before session 37 a
    // command on the copy took it for its own directory's lock and wrote to the service's database.
    const copy = join(dir, 'copy-while-running');
    cpSync(dataDir, copy, { recursive: true });
    assert.ok(existsSync(join(copy, 'loanql.lock')));
    const created = await runCli(['account', 'create', 'only-in-the-copy', '--name', 'Only in the copy'], { DATA_DIR: copy }, dir);
    assert.equal(created.code, 0, created.stderr);
    const { port: sharePort, password } = readLock();
    const client = new pg.Client({ host: '127.0.0.1', port: sharePort, user: 'postgres', database: 'postgres', password });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>("SELECT count(*)::text AS n FROM accounts WHERE slug = 'only-in-the-copy'");
      assert.equal(rows[0]!.n, '0', 'the account was written to the running service’s database');
    } finally {
      await client.end();
    }
    // It is in the copy (the command opened the copy itself, and released it).
    const changed = await runCli(['account', 'set', 'only-in-the-copy', '--name', 'Still only in the copy'], { DATA_DIR: copy }, dir);
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, /Still only in the copy/);
    assert.ok(!existsSync(join(copy, 'loanql.lock')), 'the copy is not left locked');
    assert.ok(existsSync(join(dataDir, 'loanql.lock')), 'the service’s lock is untouched');
    rmSync(copy, { recursive: true, force: true });
  });
});

describe('Graceful shutdown on SIGTERM', () => {
  let loanName: string;
  let oldPassword: string;

  it('finishes the request in flight, then exits 0 and releases the data directory', async () => {
    oldPassword = readLock().password!;
    loanName = `in flight ${Date.now()}`;
    const body = JSON.stringify({ Name: loanName, Amount: 1000, Rate: 10, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('utf8')));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // Headers and half the body, then SIGTERM, then the rest: the request is in flight throughout.
    socket.write(`POST /api/loan HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${demoKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    service.process.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // New connections are no longer accepted meanwhile.
    const refused = await fetch(`${service.url}/healthz`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'a new connection was accepted after SIGTERM');
    socket.write(body.slice(20));
    await closed;
    assert.match(response, /^HTTP\/1\.1 201/, response);
    assert.equal(await service.exited, 0);
    assert.ok(!existsSync(join(dataDir, 'loanql.lock')), 'the lock was released');
  });

  it('the next start finds the data whole, with a new share password', async () => {
    service = await startService({ DATA_DIR: dataDir }, port, dir);
    assert.notEqual(readLock().password, oldPassword);
    const answer = await fetch(`${service.url}/api/loan?limit=1`, { headers: { authorization: `Token ${demoKey}` } });
    const page = (await answer.json()) as { loans: { name: string }[] };
    assert.equal(page.loans[0]?.name, loanName);
  });
});

describe('A start on a database a newer version migrated (README "Upgrading")', () => {
  it('is refused in one line naming the unknown migration, and releases DATA_DIR cleanly', async () => {
    const newer = join(dir, 'migrated-by-a-newer-version');
    await copyMigratedDataDir(newer);
    const embedded = await openPgliteDatabase(newer, undefined, { sharedBuffers: TEST_SHARED_BUFFERS });
    await embedded.query("INSERT INTO loanql_migrations (name) VALUES ('9999_from_a_newer_version')");
    await embedded.close();
    const refused = await runServiceToExit({ DATA_DIR: newer }, await freePort(), dir);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /^loanql failed to start: the database was migrated by a newer version of loanql: it has migration 9999_from_a_newer_version, which this version \(up to \d{4}_\w+\) does not know; nothing was changed/m);
    // The failed start closed PGlite and released the lock, as a stop does (it was left behind).
    assert.ok(!existsSync(join(newer, 'loanql.lock')), 'the failed start left DATA_DIR locked');
    rmSync(newer, { recursive: true, force: true });
  });
});
