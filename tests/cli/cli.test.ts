import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServerDatabase } from '../support/testDatabase.js';
import { DashboardClient } from '../dashboard/dashboardClient.js';
import { connect, subscribe } from '../support/graphSocket.js';
import { assertBuilt, freePort, FULL_COMPILER, runCli, runCliInProcess, runServiceToExit, startService, type ProcessResult, type RunningService } from '../support/processes.js';

/**
 * The service and the `loanql` CLI end to end, as separate processes (SPEC §2): on the embedded
 * database a running service shares its database with the CLI, so a key made in a second
 * terminal works at once and a revoked key is refused on its next request; data survives a
 * restart. With `TEST_DATABASE_URL` set the same flow also runs on PostgreSQL (`DATABASE_URL`).
 *
 * These tests run the built `dist/` (npm test builds it first) from a directory that is not the
 * project's, as an installed `loanql` bin would be.
 */
const KEY_LINE = /^lq_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/;
const NOT_AUTHORIZED = { status: 403, contentType: 'text/plain', body: 'Not authorized' };

async function get(url: string, key?: string): Promise<{ status: number; contentType: string | null; body: string }> {
  const response = await fetch(url, key ? { headers: { authorization: `Token ${key}` } } : {});
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

async function loanTotal(service: RunningService, key: string): Promise<number> {
  const answer = await get(`${service.url}/api/loan?limit=1`, key);
  assert.equal(answer.status, 200, answer.body);
  return (JSON.parse(answer.body) as { total: number }).total;
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

function assertOk(result: ProcessResult, what: string): void {
  assert.equal(result.code, 0, `${what} failed:\n${result.stdout}\n${result.stderr}`);
}

function demoKeyOf(banner: string): string {
  const match = /Demo API key:\s+(\S+)/.exec(banner);
  assert.ok(match, `the banner shows a demo API key:\n${banner}`);
  return match[1]!;
}

interface Setting {
  readonly name: string;
  readonly embedded: boolean;
  /** The environment that picks the database, made once before the tests. */
  prepare(): Promise<{ env: Record<string, string>; cleanUp(): Promise<void> }>;
}

const settings: Setting[] = [
  {
    name: 'on the embedded database (DATA_DIR)',
    embedded: true,
    async prepare() {
      const dir = mkdtempSync(join(tmpdir(), 'loanql-cli-'));
      return { env: { DATA_DIR: join(dir, 'data') }, cleanUp: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  const serverUrl = process.env.TEST_DATABASE_URL;
  settings.push({
    name: 'on PostgreSQL (DATABASE_URL)',
    embedded: false,
    async prepare() {
      const created = await createServerDatabase(serverUrl);
      return { env: { DATABASE_URL: created.url }, cleanUp: () => created.drop() };
    },
  });
}

for (const setting of settings) {
  describe(`loanql service and CLI as processes, ${setting.name}`, { timeout: 600_000 }, () => {
    let env: Record<string, string>;
    let cleanUp: () => Promise<void>;
    let workDir: string;
    let port: number;
    let service: RunningService | undefined;
    let demoKey: string;
    let demoLoans: number;
    let cliKey: string;
    let cliPrefix: string;
    let revokedKey: string;
    const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);
    // The same command line in this process (its exit status and output as main.ts gives them): for the lists of answers below, each checked once as a process.
    const cliHere = (...args: string[]): Promise<ProcessResult> => runCliInProcess(args, env);

    before(async () => {
      assertBuilt();
      ({ env, cleanUp } = await setting.prepare());
      workDir = mkdtempSync(join(tmpdir(), 'loanql-cwd-'));
      port = await freePort();
    });

    after(async () => {
      await service?.stop(5_000);
      await cleanUp?.();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it('starts on an empty database, sets up the demo and prints a demo API key that works', async (t) => {
      const started = Date.now();
      // The real first start: the default demo (DEMO_SCALE unset, 500 loans), not the 50 loans
      // the other process tests start with.
      // The issue asks for "serves within 60 s" on a developer's machine. Here three other test
      // files run beside this one, so the time is reported rather than asserted, and the give-up
      // limit is 240 s: since the investor split (0024) the demo's replay does more per payment
      // (85 s at a load average of 15–20 after 0035; tests/README.md "How long"). The full
      // compiler, as a user starts it: the demo's replay is seconds of PostgreSQL's work.
      service = await startService({ ...env, DEMO_SCALE: '' }, port, workDir, 240_000, undefined, FULL_COMPILER);
      const seconds = (Date.now() - started) / 1000;
      t.diagnostic(`first start (migrate + demo portfolio at scale 0.05) took ${seconds.toFixed(1)} s`);
      const announced = /Demo account "demo" created with (\d+) loans/.exec(service.output());
      assert.ok(announced, `the banner announces the demo:\n${service.output()}`);
      demoKey = demoKeyOf(service.output());
      demoLoans = await loanTotal(service, demoKey);
      assert.ok(demoLoans > 0, 'the demo portfolio has loans');
      assert.equal(demoLoans, Number(announced[1]), 'the demo key reaches the demo portfolio');
      assert.equal(demoLoans, 500, 'the default demo: scale 0.05');
      const health = JSON.parse((await get(`${service.url}/healthz`, demoKey)).body) as { status: string; database: { kind: string } };
      assert.deepEqual([health.status, health.database.kind], ['ok', setting.embedded ? 'pglite' : 'postgres']);
    });

    if (setting.embedded) {
      it('refuses to start a second service on the same DATA_DIR, with a clear message', async () => {
        const second = await runServiceToExit(env, await freePort(), workDir);
        assert.equal(second.code, 1);
        assert.match(second.stderr, /DATA_DIR .* is in use by a running loanql service \(pid \d+\); stop it first/);
        assert.equal(await loanTotal(service!, demoKey), demoLoans, 'the first service still serves');
      });
    }

    it('creates an account and an admin from a second process while the service runs', async () => {
      const account = await cli('account', 'create', 'acme', '--name', 'Acme Lending', '--currency', 'EUR', '--timezone', 'America/Chicago');
      assertOk(account, 'account create');
      assert.match(account.stdout, /^account acme created \([0-9a-f-]{36}\), currency EUR, time zone America\/Chicago$/m);
      const changed = await cli('account', 'set', 'acme', '--currency', 'USD');
      assertOk(changed, 'account set');
      assert.match(changed.stdout, /^account acme: name "Acme Lending", currency USD, time zone America\/Chicago$/m);
      const admin = await cli('admin', 'create', '--account', 'acme', '--email', 'ops@acme.test', '--password', 'correct horse battery');
      assertOk(admin, 'admin create');
      assert.match(admin.stdout, /admin ops@acme\.test created for account acme/);
    });

    it('creates an admin whose password is read from a file (--password-file: in no process list), who logs in to the dashboard with it', async () => {
      const file = join(workDir, 'admin-password');
      writeFileSync(file, 'a passphrase from a file\n', { mode: 0o600 });
      const admin = await cli('admin', 'create', '--account', 'acme', '--email', 'files@acme.test', '--password-file', file);
      assertOk(admin, 'admin create --password-file');
      assert.match(admin.stdout, /admin files@acme\.test created for account acme/);
      const logIn = async (password: string) => {
        const client = new DashboardClient(service!.url);
        await client.get('/dashboard/login');
        return client.postForm('/dashboard/login', { email: 'files@acme.test', password });
      };
      const reply = await logIn('a passphrase from a file');
      assert.deepEqual([reply.status, reply.location], [303, '/dashboard'], 'the file\'s line ending is not part of the password');
      assert.notEqual((await logIn('a passphrase from a file\n')).location, '/dashboard');
    });

    it('runs a command again while the service runs: the first run\'s prepared statements do not refuse the second', async () => {
      // Through the embedded share every client runs on PGlite's one session: a statement the
      // first run prepared by name outlived it, and the second run's Parse of that name failed.
      for (const run of [1, 2, 3]) assertOk(await cli('remittance', 'run', '--account', 'demo', '--from', '2026-01-01', '--to', '2026-01-31'), `remittance run, run ${run}`);
    });

    it('runs the fee job for one account as fees assess, and again under its old name ledger refresh, options and all', async () => {
      const first = await cli('fees', 'assess', '--account', 'acme');
      assertOk(first, 'fees assess --account acme');
      assert.match(first.stdout, /^account acme: \d{4}-\d\d-\d\d/m);
      assert.doesNotMatch(first.stdout, /^account demo/m, 'only the account asked');
      const again = await cli('ledger', 'refresh', '--account', 'acme');
      assertOk(again, 'ledger refresh --account acme');
      assert.match(again.stdout, /^account acme: \d{4}-\d\d-\d\d already assessed; nothing to do$/m);
      assert.doesNotMatch(again.stdout, /^account demo/m, 'only the account asked');
    });

    it('prints a new key alone on the last line of key create, and the running service accepts it at once', async () => {
      const created = await cli('key', 'create', '--account', 'acme', '--name', 'integration');
      assertOk(created, 'key create');
      cliKey = lastLine(created.stdout);
      assert.match(cliKey, KEY_LINE);
      cliPrefix = cliKey.slice(0, 11);
      assert.ok(created.stdout.includes(`prefix ${cliPrefix}`), 'the prefix is named above the key');
      assert.equal(await loanTotal(service!, cliKey), 0, 'the new account has no loans yet');
    });

    it('manages the default product\'s custom fields while the service runs; the API accepts them at once', async () => {
      const added = await cli('product', 'field', 'add', '--account', 'acme', '--name', 'Loan Officer', '--type', 'text', '--required', '--default', 'desk');
      assertOk(added, 'product field add');
      assert.match(added.stdout, /send it as Loan_Officer/);
      assert.match(added.stdout, /loan_officer: \{ type: text, custom_field: loan_officer \}/, 'says how to expose it in the metadata');
      assertOk(await cli('product', 'field', 'add', '--account', 'acme', '--name', 'Property Type', '--type', 'select', '--options', 'residential,commercial'), 'select field');
      const clash = await cli('product', 'field', 'add', '--account', 'acme', '--name', 'amount', '--type', 'text');
      assert.equal(clash.code, 2);
      assert.match(clash.stderr, /built-in field/);
      const badDefault = await cli('product', 'field', 'add', '--account', 'acme', '--name', 'Units', '--type', 'integer', '--default', 'many');
      assert.equal(badDefault.code, 2);
      // Issue #11: a name that is a member of every JavaScript object is refused (it used to be accepted, and lost writes).
      const prototypeName = await cli('product', 'field', 'add', '--account', 'acme', '--name', 'toString', '--type', 'text');
      assert.equal(prototypeName.code, 2);
      assert.match(prototypeName.stderr, /"toString" is reserved/);
      const listed = await cli('product', 'field', 'list', '--account', 'acme');
      assertOk(listed, 'product field list');
      assert.match(listed.stdout, /^Loan_Officer\s+text\s+yes\s+"desk"/m);
      assert.match(listed.stdout, /^Property_Type\s+select\s+no\s+-\s+residential,commercial/m);
      assert.doesNotMatch(listed.stdout, /^Units/m, 'a refused field is not added');

      const post = (body: unknown) =>
        fetch(`${service!.url}/api/loan`, { method: 'POST', headers: { authorization: `Token ${cliKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const created = await post({ Name: 'cli product', Property_Type: 'commercial' });
      assert.equal(created.status, 201);
      assert.deepEqual(((await created.json()) as { loan: { custom_fields: unknown } }).loan.custom_fields, { loan_officer: 'desk', property_type: 'commercial' });
      assert.equal((await post({ Property_Type: 'castle' })).status, 400);

      assertOk(await cli('product', 'field', 'remove', '--account', 'acme', '--name', 'Property Type'), 'product field remove');
      const refused = await post({ Property_Type: 'commercial' });
      assert.equal(refused.status, 400, 'a removed field is no longer accepted');
      const missing = await cli('product', 'field', 'remove', '--account', 'acme', '--name', 'Property Type');
      assert.equal(missing.code, 2);
    });

    it('lists keys with their prefix, name and state, and never shows a key', async () => {
      const listed = await cli('key', 'list');
      assertOk(listed, 'key list');
      const line = listed.stdout.split('\n').find((row) => row.startsWith(cliPrefix));
      assert.ok(line, `key list shows ${cliPrefix}:\n${listed.stdout}`);
      assert.match(line, /\bacme\s+integration\s+.*\byes$/);
      assert.match(listed.stdout, new RegExp(`^${demoKey.slice(0, 11)}\\s+demo\\b`, 'm'), 'the demo key is listed');
      for (const key of [cliKey, demoKey]) {
        assert.ok(!listed.stdout.includes(key), 'no key is printed');
        assert.ok(!listed.stdout.includes(key.slice(12)), 'no secret is printed');
      }
      const onlyAcme = await cli('key', 'list', '--account', 'acme');
      assertOk(onlyAcme, 'key list --account');
      assert.ok(!onlyAcme.stdout.includes(demoKey.slice(0, 11)), 'only the account’s own keys');
    });

    it('revokes a key from a second process: its open socket closes with 4403 at once, and the running service refuses it on its next request', async () => {
      assert.equal((await get(`${service!.url}/api/loan`, cliKey)).status, 200);
      const socket = connect(service!.url, cliKey);
      const live = subscribe(socket.client, 'subscription { loans_aggregate { aggregate { count } } }');
      await live.next();
      const revoked = await cli('key', 'revoke', cliPrefix);
      const revokedAt = Date.now();
      assertOk(revoked, 'key revoke');
      assert.match(revoked.stdout, new RegExp(`key ${cliPrefix} deactivated`));
      // With nothing else sent to the service: the change notice of the CLI's commit closes it
      // (on the embedded database it reached only the CLI's connection of the share before).
      await Promise.race([live.ended, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      assert.equal(socket.closes[0]?.code, 4403, 'the socket closed with 4403');
      assert.ok(socket.closes[0]!.at - revokedAt < 2_000, `closed ${socket.closes[0]!.at - revokedAt} ms after the CLI exited`);
      await socket.dispose();
      const answer = await get(`${service!.url}/api/loan`, cliKey);
      assert.deepEqual(answer, NOT_AUTHORIZED);
      revokedKey = cliKey;
      const listed = await cli('key', 'list', '--account', 'acme');
      assert.match(listed.stdout.split('\n').find((row) => row.startsWith(cliPrefix)) ?? '', /\bno$/);
    });

    it('answers a mistake with a one-line message and exit code 2', async () => {
      const cases: readonly [string[], RegExp][] = [
        [['account', 'create', 'acme'], /account "acme" already exists/],
        [['account', 'create', 'Not A Slug'], /must be lower-case letters/],
        [['account', 'create', 'euro', '--currency', 'EURO'], /currency "EURO" is not an ISO 4217 code/],
        [['account', 'set', 'acme', '--timezone', 'Mars/Olympus'], /timezone "Mars\/Olympus" is not a time zone the database knows/],
        [['account', 'set', 'acme'], /give at least one of --name, --currency, --timezone/],
        [['key', 'create', '--account', 'nobody'], /no account "nobody"/],
        [['key', 'create'], /--account is required/],
        [['key', 'revoke', 'lq_00000000'], /no key with prefix lq_00000000/],
        // A whole key is refused without echoing its secret (checked below), and so is anything not a prefix.
        [['key', 'revoke', `lq_abcd1234_${'S3cret'.repeat(7)}x`], /^loanql: that is a whole key: give only its prefix, lq_abcd1234 \(the key's secret is never needed here\)$/m],
        [['key', 'revoke', 'S3cretS3cret'], /^loanql: expected a key prefix: lq_ and 8 lower-case letters or digits, as key list shows it$/m],
        [['admin', 'create', '--account', 'acme', '--email', 'ops@acme.test', '--password', 'another password'], /already exists/],
        [['key', 'create', '--account', 'acme', '--bogus'], /bogus/],
        [['frobnicate'], /unknown command "frobnicate"/],
        [['key', 'frobnicate'], /unknown command "key frobnicate"/],
        [[], /no command given/],
        [['key', 'create', '--account', 'acme', '--name', '   '], /a key name must not be blank/],
        [['seed', '--account', 'acme', '--scale', '0.001'], /^loanql: account acme already has loans or people; seed an empty account$/m],
        [['seed', '--account', 'acme', '--seed', '1.5'], /seed must be an integer/],
      ];
      for (const [index, [args, message]] of cases.entries()) {
        const result = index === 0 ? await cli(...args) : await cliHere(...args);
        assert.equal(result.code, 2, `loanql ${args.join(' ')} exits with 2:\n${result.stdout}${result.stderr}`);
        assert.match(result.stderr, message);
        assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
        assert.ok(!`${result.stdout}${result.stderr}`.includes('S3cret'), `no secret echoed: ${result.stderr}`);
      }
    });

    it('prints the usage for help, --help and -h alike, with exit code 0', async () => {
      const outputs = [];
      for (const [index, args] of [['help'], ['--help'], ['-h'], ['help', 'no-such-command']].entries()) {
        const result = index === 0 ? await cli(...args) : await cliHere(...args);
        assert.equal(result.code, 0, `loanql ${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stdout, /^Usage: loanql <command>/);
        assert.match(result.stdout, /product field list --account SLUG/);
        outputs.push(result.stdout);
      }
      assert.equal(new Set(outputs).size, 1, 'the same usage each time');
    });

    it('lists the built-in fields with their defaults (Status lead, Amortization amortizing)', async () => {
      const listed = await cli('product', 'field', 'list', '--account', 'acme');
      assertOk(listed, 'product field list');
      const rows = listed.stdout.trimEnd().split('\n');
      const columns = (row: string) => row.split(/\s{2,}/);
      const header = columns(rows[0]!);
      const defaultOf = (key: string) => columns(rows.find((row) => row.startsWith(`${key} `))!)[header.indexOf('DEFAULT')];
      assert.equal(defaultOf('Status'), 'lead');
      assert.equal(defaultOf('Amortization'), 'amortizing');
      assert.equal(defaultOf('Rate'), '-');
    });

    it('seeds the same portfolio for the same --seed and --today, dated around that day', async () => {
      const today = '2030-01-15';
      const portfolios = [];
      for (const slug of ['dated-a', 'dated-b']) {
        assertOk(await cli('account', 'create', slug), `account create ${slug}`);
        const seeded = await cli('seed', '--account', slug, '--scale', '0.002', '--seed', '3', '--today', today);
        assertOk(seeded, `seed ${slug}`);
        const key = lastLine((await cli('key', 'create', '--account', slug)).stdout);
        const page = await get(`${service!.url}/api/loan?limit=1000`, key);
        assert.equal(page.status, 200, page.body);
        // Ids differ per account (and so does the order of contacts attached at the same instant);
        // everything else is the portfolio.
        const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
        const listed = JSON.parse(page.body, (name, value) => (name === 'id' ? undefined : ['borrowers', 'guarantors'].includes(name) ? [...value].sort(byName) : value));
        portfolios.push(listed as { loans: { status: string; date_funded: string | null; created_at: string }[] });
      }
      assert.deepEqual(portfolios[0], portfolios[1]);
      const loans = portfolios[0]!.loans;
      assert.equal(loans.length, 20);
      assert.ok(loans.every((loan) => loan.created_at < today && (loan.date_funded === null || loan.date_funded < today)), 'every loan was made before --today');
      assert.ok(loans.some((loan) => loan.date_funded !== null && loan.date_funded >= '2029-01-01'), 'and recently: the portfolio is dated around --today');
      const bad = await cli('seed', '--account', 'dated-a', '--today', '2030-02-30');
      assert.equal(bad.code, 2, bad.stderr);
    });

    it('stops cleanly on SIGTERM', async () => {
      assert.equal(await service!.stop(), 0);
      if (setting.embedded) assert.equal(existsSync(join(env.DATA_DIR!, 'loanql.lock')), false, 'the DATA_DIR lock is released');
      service = undefined;
    });

    if (setting.embedded) {
      it('works on DATA_DIR itself when no service runs', async () => {
        const migrated = await cli('migrate');
        assertOk(migrated, 'migrate');
        assert.match(migrated.stdout, /up to date/);
        const created = await cli('key', 'create', '--account', 'acme', '--name', 'offline');
        assertOk(created, 'key create without a service');
        cliKey = lastLine(created.stdout);
        assert.match(cliKey, KEY_LINE);
        assert.equal(existsSync(join(env.DATA_DIR!, 'loanql.lock')), false, 'the CLI released DATA_DIR');
      });
    }

    it('keeps the data across a restart: no second demo, the demo key still works, a revoked key stays refused', async (t) => {
      const started = Date.now();
      service = await startService(env, port, workDir);
      t.diagnostic(`restart took ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.match(service.output(), /Existing data kept/);
      assert.doesNotMatch(service.output(), /Demo API key/);
      assert.equal(await loanTotal(service, demoKey), demoLoans);
      if (setting.embedded) assert.equal(await loanTotal(service, cliKey), 1, 'the key made while the service was stopped works (acme has the one loan made over REST)');
      assert.deepEqual(await get(`${service.url}/api/loan`, revokedKey), NOT_AUTHORIZED);
    });
  });
}
