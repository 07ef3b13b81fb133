import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { assertBuilt, freePort, PROJECT_ROOT, runCli, runCommandLineHere, type ProcessResult } from '../support/processes.js';
import { COMMANDS } from '../../cli/commands.js';

/**
 * Every command checks its command line before it opens the database (cli/README.md): a mistake
 * is answered at once with one line and exit status 2, the same with no database to reach. Each
 * case runs the CLI with `DATABASE_URL` pointing at a port nobody listens on, so a command that
 * connected first would answer "the database is unavailable" (exit 1) instead: every mistake in
 * this process through `runCommandLine` (what `cli/main.ts` runs; a process each cost 26
 * CPU-seconds a run), and a few of them through the built CLI as a process, for its exit status.
 */
/** An endpoint id: well formed, so only --limit is wrong. */
const ENDPOINT = '6f1c0b9e-4d2a-4c1e-9a7b-2f3d4e5f6a7b';
const SECRET_KEY = `lq_abcd1234_${'S3cret'.repeat(7)}x`;

/** One mistake per command at least (every command refuses a stray argument). */
const MISTAKES: readonly (readonly [readonly string[], RegExp])[] = [
  [['migrate', 'now'], /too many arguments: this command takes no arguments besides its options, not 1/],
  [['backup'], /--out is required/],
  [['backup', '--out', 'loanql.gz', 'now'], /too many arguments/],
  // A folder that cannot take the file: before, the database was opened and the temporary file's ENOENT answered (exit 1).
  [['backup', '--out', '/nonexistent/dir/loanql.gz'], /^loanql: --out \/nonexistent\/dir\/loanql\.gz: cannot write a file in \/nonexistent\/dir \(no such directory\)$/m],
  [['restore'], /--in is required/],
  [['restore', '--in', '/nonexistent/loanql.gz'], /^loanql: cannot read \/nonexistent\/loanql\.gz: ENOENT/m],
  [['account', 'create'], /the account slug is required/],
  [['account', 'profile'], /^loanql: --account is required$/m],
  [['admin', 'create', '--account', 'acme', '--email', 'a@b.test', '--password', 'long enough', '--password-file', '/nonexistent/pw'], /^loanql: give --password or --password-file, not both$/m],
  [['admin', 'create', '--account', 'acme', '--email', 'a@b.test', '--password-file', '/nonexistent/pw'], /^loanql: --password-file \/nonexistent\/pw: cannot read it \(ENOENT\)$/m],
  [['admin', 'create', '--account', 'acme', '--email', 'a@b.test', '--password-file='], /^loanql: --password-file needs a file name/m],
  [['admin', 'create', '--account', 'acme', '--email', 'a@b.test', '--password-file', 'package-lock.json'], /^loanql: --password-file package-lock\.json: more than 4096 bytes; a password file holds one line$/m],
  [['account', 'profile', '--account', 'acme', 'city'], /^loanql: "city" is not NAME=VALUE$/m],
  [['account', 'profile', '--account', 'acme', 'colour=red'], /^loanql: colour: unknown field; the profile's fields are legal_name, /m],
  [['account', 'profile', '--account', 'acme', 'email=nope'], /^loanql: email: expected an e-mail address/m],
  [['account', 'create', 'Not A Slug'], /account slug "Not A Slug" must be lower-case letters/],
  // What a refusal quotes is shown with its control characters visible: an escape sequence reached the terminal.
  [['account', 'create', 'red\u001b[31mslug'], /^loanql: account slug "red\\u001b\[31mslug" must be lower-case letters/m],
  [['account\u001b[2J', 'create'], /^loanql: unknown command "account\\u001b\[2J create"/m],
  [['key', 'list', '--\u001b[2J'], /^loanql key list: unknown option --\\u001b\[2J;/m],
  [['account', 'create', 'euro', '--currency', 'EURO'], /currency "EURO" is not an ISO 4217 code/],
  [['account', 'create', 'one', 'two'], /too many arguments: this command takes one argument, not 2/],
  [['account', 'set', 'acme'], /give at least one of --name, --currency, --timezone/],
  [['account', 'set', 'acme', '--currency', 'usd'], /currency "usd" is not an ISO 4217 code/],
  [['account', 'create', 'euro', '--currency', 'ZZZ'], /currency "ZZZ" is not an ISO 4217 code/],
  [['account', 'create', 'euro', '--currency', ''], /currency "" is not an ISO 4217 code/],
  // The ledger keeps amounts to the cent: a yen account was made, and its ledger then held ¥0.19s
  // the yen does not have; a dinar account could never take the fils of BHD 1.005.
  [['account', 'create', 'yen', '--currency', 'JPY'], /^loanql: currency "JPY" has no minor unit in ISO 4217, but the ledger keeps every amount to the cent \(two decimals\): an account's currency is one with cents \(e\.g\. USD, EUR, GBP, CHF, CAD\)$/m],
  [['account', 'create', 'dinar', '--currency', 'BHD'], /currency "BHD" has three decimals in ISO 4217, but the ledger keeps every amount to the cent/],
  [['account', 'set', 'acme', '--currency', 'KRW'], /currency "KRW" has no minor unit in ISO 4217/],
  [['account', 'set', 'acme', '--currency', 'XDR'], /currency "XDR" has no minor unit \(a metal, a unit of account or a testing code\) in ISO 4217/],
  // README names these as refused for their minor unit; codes Node's Intl does not list were refused as unknown to ISO 4217.
  [['account', 'create', 'unidad', '--currency', 'CLF'], /^loanql: currency "CLF" has four decimals in ISO 4217, but the ledger keeps every amount to the cent/m],
  [['account', 'create', 'gold', '--currency', 'XAU'], /^loanql: currency "XAU" has no minor unit \(a metal, a unit of account or a testing code\) in ISO 4217/m],
  [['account', 'set', 'acme', '--currency', 'XXX'], /^loanql: currency "XXX" has no minor unit \(a metal, a unit of account or a testing code\) in ISO 4217/m],
  [['admin', 'create', '--account', 'acme', '--email', 'ops@acme.test'], /--password is required/],
  [['admin', 'create', '--account', 'acme', '--email', 'not-an-address', '--password', 'long enough'], /"not-an-address" is not an e-mail address/],
  [['admin', 'create', '--account', 'acme', '--email', 'ops@acme.test', '--password', 'short'], /a password has at least 8 characters/],
  [['key', 'create'], /--account is required/],
  [['key', 'create', '--account', 'acme', '--name', '   '], /a key name must not be blank/],
  [['key', 'create', '--account', 'acme', '--var', 'person_id'], /--var person_id: write NAME=VALUE/],
  // The role and its variables are the metadata file's: `--role nosuch` was answered only after the database was opened.
  [['key', 'create', '--account', 'acme', '--role', 'nosuch'], /^loanql: role: "nosuch" is not a role of the metadata \(one of admin, read_only, servicer, investor/m],
  [['key', 'create', '--account', 'acme', '--role', 'investor'], /^loanql: variables: role investor needs person_id$/m],
  [['key', 'create', '--account', 'acme', '--role', 'investor', '--var', 'person_id=42'], /^loanql: variables: person_id /m],
  [['key', 'create', '--account', 'acme', '--var', 'person_id=42'], /^loanql: variables: role admin has no variable person_id$/m],
  [['key', 'list', '--account='], /--account needs a slug/],
  [['key', 'revoke'], /the key prefix \(lq_xxxxxxxx\) is required/],
  [['key', 'revoke', 'S3cretS3cret'], /expected a key prefix: lq_ and 8 lower-case letters or digits/],
  [['key', 'revoke', SECRET_KEY], /that is a whole key: give only its prefix, lq_abcd1234/],
  [['product', 'field', 'add', '--account', 'acme', '--name', 'Colour', '--type', 'colour'], /--type must be one of text/],
  [['product', 'field', 'add', '--account', 'acme', '--name', 'toString', '--type', 'text'], /"toString" is reserved/],
  [['product', 'field', 'add', '--account', 'acme', '--name', 'Kind', '--type', 'select'], /a select field needs options/],
  [['product', 'field', 'list'], /--account is required/],
  [['product', 'field', 'remove', '--account', 'acme'], /--name is required/],
  [['product', 'settings'], /--account is required/],
  [['product', 'set', '--account', 'acme'], /give at least one NAME=VALUE/],
  [['product', 'set', '--account', 'acme', 'grace_days'], /"grace_days" is not NAME=VALUE/],
  [['product', 'set', '--account', 'acme', 'day_count=bogus'], /^loanql: day_count must be one of actual\/360, actual\/365, 30\/360$/m],
  [['seed', '--account', 'acme', '--scale', '0'], /--scale must be a number above 0/],
  // Above 10 the seeder's plan outgrew memory and never ended (1e308: past 3 GB in ten minutes, nothing written).
  [['seed', '--account', 'acme', '--scale', '1e308'], /^loanql: --scale must be a number above 0 and at most 10 \(100,000 loans\)$/m],
  [['seed', '--account', 'acme', '--scale', '10.5'], /--scale must be a number above 0 and at most 10/],
  // Not a number, or below 0: the same sentence (it said "a non-negative number", and then 0 was refused).
  [['seed', '--account', 'acme', '--scale', 'abc'], /^loanql: --scale must be a number above 0 and at most 10 \(100,000 loans\)$/m],
  [['seed', '--account', 'acme', '--scale=-1'], /^loanql: --scale must be a number above 0 and at most 10 \(100,000 loans\)$/m],
  [['seed', '--account', 'acme', '--seed', '1.5'], /seed must be an integer/],
  [['seed', '--account', 'acme', '--today', '2030-02-30'], /--today must be a calendar day as YYYY-MM-DD/],
  // Four years of payments before it: 1901-06-01 wrote for seconds, then failed on a payment dated 1899 (exit 1).
  [['seed', '--account', 'acme', '--today', '1901-06-01'], /^loanql: --today must be from 1905-01-01 to 2969-12-31: the portfolio's payments run four years before it/m],
  [['seed', '--account', 'acme', '--today', '2999-12-01'], /--today must be from 1905-01-01 to 2969-12-31/],
  [['schedules', 'regenerate', '--account='], /--account needs a slug/],
  [['ledger', 'verify', 'acme'], /too many arguments/],
  [['ledger', 'rebuild', '--account='], /--account needs a slug/],
  [['fees', 'assess', '--as-of', '2026-02-30'], /--as-of must be a calendar day as YYYY-MM-DD/],
  [['ledger', 'refresh', '--as-of', 'yesterday'], /--as-of must be a calendar day as YYYY-MM-DD/],
  [['sql'], /the GraphQL query is required/],
  [['sql', '{ loans { id } }', '--variables', '[1]'], /--variables must be a JSON object/],
  [['sql', '{ loans { id } }', '--variables', '{'], /--variables must be a JSON object/],
  // A malformed document: answered only after the database was opened (and the demo account looked up).
  [['sql', '{bad'], /^loanql: parse-failed: Syntax Error: Expected Name, found <EOF>\.$/m],
  // An --operation-name the document does not define (or none for a document of several): answered only after the database was opened and the engine built.
  [['sql', 'query A { loans { id } }', '--operation-name', 'B'], /^loanql: validation-failed: unknown operation named "B"$/m],
  [['sql', 'query A { loans { id } } query B { loans { id } }'], /^loanql: validation-failed: the document has several operations: give operationName$/m],
  [['sql', `{ ${Array.from({ length: 60 }, (_, i) => `a${i}: loans { id }`).join(' ')} }`], /^loanql: query-too-expensive: /m],
  [['metadata', 'check', '--file='], /--file needs a path/],
  [['webhook', 'add', '--account', 'acme'], /--url is required/],
  // Checked only after the database was opened, before.
  [['webhook', 'add', '--account', 'acme', '--url', 'not a url'], /^loanql: webhook endpoint refused: url is not a URL$/m],
  [['webhook', 'add', '--account', 'acme', '--url', 'ftp://hooks.example.test/x'], /^loanql: webhook endpoint refused: url must be an http or https URL$/m],
  [['webhook', 'add', '--account', 'acme', '--url', 'http://127.0.0.1:9/hook'], /^loanql: webhook endpoint refused: url points to .*set WEBHOOK_ALLOW_PRIVATE=1 to allow it$/m],
  [['webhook', 'add', '--account', 'acme', '--url', 'http://93.184.215.14/hook', '--events', 'loan.created,loan.exploded', '--description', 'x'.repeat(501)], /^loanql: webhook endpoint refused: events unknown event type loan\.exploded \(known: .*\); description is longer than 500 characters$/m],
  // SPEC §12's name for the allocation's event: it said only "unknown event type payment.allocated".
  [['webhook', 'add', '--account', 'acme', '--url', 'http://93.184.215.14/hook', '--events', 'payment.allocated'], /^loanql: webhook endpoint refused: events payment\.allocated: no such event type; the allocation is in payment\.posted's payload \(known: .*\)$/m],
  [['webhook', 'add', '--account', 'acme', '--url', 'http://93.184.215.14/hook', '--events', 'payment.allocated,loan.exploded,payment.allocated'], /^loanql: webhook endpoint refused: events unknown event type loan\.exploded; payment\.allocated: no such event type; the allocation is in payment\.posted's payload \(known: [^)]*\)$/m],
  [['webhook', 'list', 'acme'], /too many arguments/],
  [['webhook', 'remove'], /the endpoint id is required/],
  [['webhook', 'remove', 'not-an-id'], /no webhook endpoint not-an-id/],
  [['webhook', 'deliveries', 'not-an-id'], /no webhook endpoint not-an-id/],
  [['webhook', 'redeliver', '42'], /no event 42/],
  // --limit is a whole number from 1 to 1000: 0 once showed a row, 2.5 two rows, 5000 a thousand.
  [['webhook', 'deliveries', ENDPOINT, '--limit', '0'], /^loanql: --limit must be a whole number from 1 to 1000, not "0"$/m],
  [['webhook', 'deliveries', ENDPOINT, '--limit=-1'], /--limit must be a whole number from 1 to 1000, not "-1"/],
  [['webhook', 'deliveries', ENDPOINT, '--limit', '2.5'], /--limit must be a whole number from 1 to 1000, not "2.5"/],
  [['webhook', 'deliveries', ENDPOINT, '--limit', '1001'], /--limit must be a whole number from 1 to 1000, not "1001"/],
  [['webhook', 'deliveries', ENDPOINT, '--limit', 'ten'], /--limit must be a whole number from 1 to 1000, not "ten"/],
  // What parseArgs refuses, in our words on one line.
  [['webhook', 'deliveries', ENDPOINT, '--limit', '-1'], /^loanql webhook deliveries: --limit needs a value; write --limit=VALUE for one that starts with a dash$/m],
  [['webhook', 'deliveries', ENDPOINT, '--limit'], /^loanql webhook deliveries: --limit needs a value/m],
  // A value that reads as a help option (a script's `--name "$NAME"`) printed the help and exited 0, nothing changed.
  [['account', 'set', 'acme', '--name', '-h'], /^loanql account set: --name needs a value; write --name=VALUE for one that starts with a dash$/m],
  [['admin', 'create', '--account', 'acme', '--email', 'ops@acme.test', '--password', '--help'], /^loanql admin create: --password needs a value/m],
  [['key', 'create', '--account', 'acme', '--bogus'], /^loanql key create: unknown option --bogus; `loanql help` shows the options of each command$/m],
  [['schedules', 'regenerate', '--dry-run=yes'], /^loanql schedules regenerate: --dry-run takes no value$/m],
  // An option given twice kept its last value: `key create --account a --account b` made a key in b, nothing said.
  [['key', 'create', '--account', 'acme', '--account=beta'], /^loanql key create: --account is given twice: give it once \(only --var may be repeated\)$/m],
  [['account', 'set', 'acme', '--name', 'A', '--currency', 'EUR', '--name', 'B', '--name', 'C'], /^loanql account set: --name is given 3 times: give it once \(no option of this command may be repeated\)$/m],
  [['schedules', 'regenerate', '--dry-run', '--dry-run'], /^loanql schedules regenerate: --dry-run is given twice/m],
  [['worker', 'now'], /too many arguments/],
  [['investors', 'statement', '--account', 'acme', '--person', 'p', '--from', '2026-02-30', '--to', '2026-03-31'], /the period is wrong: from expected a day as YYYY-MM-DD/],
  [['investors', 'statement', '--account', 'acme', '--person', 'p', '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'pdf'], /--format pdf writes a file: give --out FILE/],
  [['investors', 'statement', '--account', 'acme', '--from', '2026-02-01', '--to', '2026-02-28'], /--person is required/],
  [['loan', 'payoff-letter', '--account', 'acme', '--loan', 'l', '--date', '2026-03-31'], /^loanql: --out is required$/m],
  [['loan', 'payoff-letter', '--account', 'acme', '--loan', 'l', '--date', '3000-01-01', '--out', 'x.pdf'], /--date must be a calendar day as YYYY-MM-DD/],
  [['loan', 'payoff-letter', '--account', 'acme', '--date', '2026-03-31', '--out', 'x.pdf'], /--loan is required/],
  [['remittance', 'run', '--account', 'acme', '--from', '2026-01-01', '--to', '2026-01-31', '--format', 'xml'], /--format must be table or csv/],
  [['remittance', 'mark', '--account', 'acme', '--from', '2026-02-01'], /the period is wrong: to required/],
  // --total and --lines go together: once answered only after the database was opened, naming the body's line_count.
  [['remittance', 'mark', '--account', 'acme', '--from', '2026-02-01', '--to', '2026-02-28', '--total', '5'], /^loanql: --lines is required with --total: give both/m],
  [['remittance', 'mark', '--account', 'acme', '--from', '2026-02-01', '--to', '2026-02-28', '--lines', '5'], /^loanql: --total is required with --lines: give both/m],
  [['remittance', 'mark', '--account', 'acme', '--from', '2026-02-01', '--to', '2026-02-28', '--total', '12.345', '--lines', '5'], /^loanql: --total must be an amount in cents such as 1234\.56, not "12\.345"$/m],
  [['remittance', 'mark', '--account', 'acme', '--from', '2026-02-01', '--to', '2026-02-28', '--total', '12.34', '--lines', 'five'], /^loanql: --lines must be a whole number of lines, 0 or more, not "five"$/m],
  [['remittance', 'list', '--account', 'acme', '--limit', '0'], /--limit must be a whole number from 1 to 1000/],
  [['remittance', 'show', '--account', 'acme'], /the remittance id is required/],
  // An id that is not a uuid names no record: said before the database is opened, as the command says it after.
  [['remittance', 'show', 'nope', '--account', 'acme'], /^loanql: account acme has no remittance nope$/m],
  [['investors', 'statement', '--account', 'acme', '--person', 'p', '--from', '2026-02-01', '--to', '2026-02-28'], /^loanql: account acme has no person p$/m],
  [['loan', 'payoff-letter', '--account', 'acme', '--loan', 'l', '--out', 'x.pdf'], /^loanql: account acme has no loan l$/m],
];

let dir: string;
let env: Record<string, string>;

before(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'loanql-arguments-'));
  // A PostgreSQL URL nobody answers: connecting fails at once (ECONNREFUSED), with exit status 1.
  env = { DATABASE_URL: `postgres://loanql@127.0.0.1:${await freePort()}/nothing` };
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('loanql checks its command line before it opens the database', () => {
  it('the unreachable database answers a command line without mistakes (exit 1)', async () => {
    const result = await runCli(['key', 'list'], env, dir);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /the database is unavailable/);
  });

  it('has a mistake below for every command', () => {
    const tried = new Set(MISTAKES.map(([args]) => args.join(' ')));
    for (const command of COMMANDS) {
      const words = command.words.join(' ');
      assert.ok([...tried].some((args) => args === words || args.startsWith(`${words} `)), `a mistake of loanql ${words}`);
    }
  });

  it('answers each mistake with one line and exit status 2, without reaching for the database', async () => {
    for (const [args, message] of MISTAKES) assertMistake(args, message, await runInProcess(args));
  });

  it('the built CLI exits with that status and line (a few of the mistakes as processes)', async () => {
    const sample = [MISTAKES[0]!, MISTAKES.find(([args]) => args.includes('--bogus'))!, MISTAKES.find(([args]) => args.includes(SECRET_KEY))!, MISTAKES.find(([args]) => args.includes('1e308'))!];
    const results = await Promise.all(sample.map(([args]) => runCli(args, env, dir)));
    sample.forEach(([args, message], i) => assertMistake(args, message, results[i]!));
  });

  it('a refusal longer than a pipe holds reaches a reader that is slow to read it, whole (it was cut at 65,536 bytes)', async () => {
    // `loanql … 2>&1 | tee log` with a reader a moment late: Node queues what the pipe cannot take
    // (64 KiB), and exiting straight after the command dropped it. `key list | wc` lost its rows
    // the same way on PostgreSQL.
    const word = 'x'.repeat(120_000);
    const script = '"$0" "$1" "$2" 2>&1 >/dev/null | (sleep 1; cat); exit "${PIPESTATUS[0]}"';
    const result = await new Promise<ProcessResult>((resolve) => {
      execFile('bash', ['-c', script, process.execPath, join(PROJECT_ROOT, 'dist/cli/main.js'), word], { env: { ...process.env, ...env }, cwd: dir, maxBuffer: 1 << 20 }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout.length, `loanql: unknown command "${word}"; \`loanql help\` lists the commands\n`.length);
    assert.match(result.stdout, /^loanql: unknown command "x+"; `loanql help` lists the commands\n$/);
  });

  it('takes a repeatable option (key create --var) more than once: parseArgs keeps both, and the role (checked before the database) names the one it lacks', async () => {
    const result = await runInProcess(['key', 'create', '--account', 'acme', '--role', 'investor', '--var', `person_id=${ENDPOINT}`, '--var', 'region=west']);
    assertMistake(['key', 'create'], /^loanql: variables: role investor has no variable region$/m, result);
  });

  it('a key create whose role and variables the metadata takes goes on to the database (the unreachable one answers, exit 1)', async () => {
    // Whether person_id names a person of the account only the database knows.
    const result = await runInProcess(['key', 'create', '--account', 'acme', '--role', 'investor', '--var', `person_id=${ENDPOINT}`]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /the database is unavailable/);
  });

  it('a webhook add whose URL, events and description pass goes on to the database (exit 1)', async () => {
    const result = await runInProcess(['webhook', 'add', '--account', 'acme', '--url', 'http://93.184.215.14/hook', '--events', 'loan.created,loan.updated']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /the database is unavailable/);
  });

  it('an sql document that parses goes on to the database (exit 1)', async () => {
    const result = await runInProcess(['sql', '{ loans { id } }']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /the database is unavailable/);
  });

  it('reads the file metadata check is given before the database: a missing or malformed one is named (exit 2, a line per problem)', async () => {
    const malformed = join(dir, 'not-metadata.yaml');
    writeFileSync(malformed, 'version: 1\ntenant_column: account_id\ncollections: [loans]\n');
    for (const [file, problem] of [[join(dir, 'missing.yaml'), /cannot read/], [malformed, /^  - collections: expected a mapping \(name: value entries\), found a list \(line 3\)$/m]] as const) {
      const result = await runInProcess(['metadata', 'check', '--file', file]);
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.ok(result.stderr.startsWith(`loanql: ${file}: invalid metadata:\n`), result.stderr);
      assert.match(result.stderr, problem);
      assert.doesNotMatch(result.stderr, /database/);
    }
  });
});

function assertMistake(args: readonly string[], message: RegExp, result: ProcessResult): void {
  const shown = `loanql ${args.join(' ')}:\n${result.stdout}${result.stderr}`;
  assert.equal(result.code, 2, shown);
  assert.match(result.stderr, message, shown);
  assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${shown}`);
  assert.doesNotMatch(result.stderr.replace(/\n$/, ''), /[\u0000-\u001f\u007f-\u009f]/, `no control character reaches the terminal: ${shown}`);
  assert.doesNotMatch(result.stderr, /database/, shown);
  assert.ok(!`${result.stdout}${result.stderr}`.includes('S3cret'), `no secret echoed: ${shown}`);
}

/** `loanql ARGS` in this process, with the unreachable database of `env` and its output kept. */
function runInProcess(args: readonly string[]): Promise<ProcessResult> {
  return runCommandLineHere(args, { ...env, DATA_DIR: join(dir, 'no-data-dir') });
}

