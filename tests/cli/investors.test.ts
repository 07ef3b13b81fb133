import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../../app/accounts.js';
import { createLoan } from '../../app/loanWrites.js';
import { migrate, type Database } from '../../db/index.js';
import { assertBuilt, runCli, type ProcessResult } from '../support/processes.js';
import { commandEnvironment, withCommandDatabase } from '../support/commandDatabase.js';

/**
 * `loanql investors statement` and `loanql remittance run|mark` as processes (issue 32): the
 * statement of R10's example investor as a table, CSV and PDF file; the run's CSV; marking the
 * period records `cli <user>`, and marking it again exits 2 with the reason.
 */
describe('loanql investors statement / remittance', { timeout: 300_000 }, () => {
  let env: Record<string, string>;
  let workDir: string;
  let cleanUp: () => Promise<void> = async () => {};
  let ann = '';
  let cy = '';
  const cli = (...args: string[]): Promise<ProcessResult> => runCli(args, env, workDir);

  const withDatabase = <T>(work: (db: Database) => Promise<T>): Promise<T> => withCommandDatabase(env, work);

  before(async () => {
    assertBuilt();
    const environment = await commandEnvironment('loanql-investors-');
    ({ workDir, env } = environment);
    cleanUp = environment.remove;
    await withDatabase(async (db) => {
      await migrate(db);
      const account = await createAccount(db, 'harbor', 'Harbor Private Lending');
      const loan = (await createLoan(db, account.id, { Name: 'Elm St bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' })).id;
      const people = await db.query<{ id: string; name: string }>(`INSERT INTO people (account_id, name, entity_type) VALUES ($1, 'Ann Investor', 'individual'), ($1, 'Ben Investor', 'individual') RETURNING id, name`, [account.id]);
      const id = (name: string) => people.rows.find((row) => row.name === name)!.id;
      ann = id('Ann Investor');
      await db.query(
        `INSERT INTO funding_sources (account_id, person_id, loan_id, original_amount, rate, date_funded) VALUES ($1, $2, $4, 60000, 10, '2026-01-15'), ($1, $3, $4, 30000, 9, '2026-01-15')`,
        [account.id, ann, id('Ben Investor'), loan],
      );
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 8884.88)`, [account.id, loan]);
      // Names are free text: a line break, a tab, wide characters. Their loan is paid in March only.
      const oak = (await createLoan(db, account.id, { Name: 'Oak Ave\nunit 2', Amount: 50000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' })).id;
      const odd = await db.query<{ id: string }>(`INSERT INTO people (account_id, name, entity_type) VALUES ($1, E'Cy\tInvestor\nLLC', 'company'), ($1, '李明', 'individual') RETURNING id`, [account.id]);
      cy = odd.rows[0]!.id;
      await db.query(
        `INSERT INTO funding_sources (account_id, person_id, loan_id, original_amount, rate, date_funded) VALUES ($1, $2, $4, 20000, 10, '2026-01-15'), ($1, $3, $4, 10000, 8, '2026-01-15')`,
        [account.id, cy, odd.rows[1]!.id, oak],
      );
      await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-03-15', 4442.44)`, [account.id, oak]);
    });
  });

  after(async () => {
    await cleanUp();
  });

  it('prints the statement as a table and CSV, and writes the PDF with --out', async () => {
    const shown = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-01', '--to', '2026-02-28');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^Harbor Private Lending: statement of Ann Investor, 2026-02-01 to 2026-02-28 \(USD\)/);
    assert.match(shown.stdout, /\nTotal\s+60000\.00\s+0\.00\s+4730\.93\s+500\.00\s+0\.00\s+0\.00\s+5230\.93\s+55269\.07\n/);
    const csv = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'csv');
    assert.match(csv.stdout, /\r\n,Total,2026-02-01,2026-02-28,60000\.00,0\.00,4730\.93,500\.00,0\.00,0\.00,5230\.93,55269\.07\r\n$/);
    const file = join(workDir, 'ann.pdf');
    const pdf = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'pdf', '--out', file);
    assert.equal(pdf.code, 0, pdf.stderr);
    assert.equal(readFileSync(file).subarray(0, 5).toString('latin1'), '%PDF-');
    const noFile = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'pdf');
    assert.equal(noFile.code, 2);
    assert.match(noFile.stderr, /--out FILE/);
    // An --out the CLI cannot write is the typist's mistake (exit 2, naming --out), not a fault (exit 1 with the bare EISDIR).
    const intoDirectory = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'pdf', '--out', workDir);
    assert.equal(intoDirectory.code, 2, intoDirectory.stderr);
    assert.equal(intoDirectory.stderr, `loanql: --out ${workDir}: cannot write the statement PDF there (it is a directory)\n`);
    const noFolder = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'csv', '--out', join(workDir, 'missing', 'ann.csv'));
    assert.equal(noFolder.code, 2, noFolder.stderr);
    assert.match(noFolder.stderr, /^loanql: --out .*missing\/ann\.csv: cannot write the statement CSV there \(no such directory\)\n$/);
    const badDay = await cli('investors', 'statement', '--account', 'harbor', '--person', ann, '--from', '2026-02-30', '--to', '2026-02-28');
    assert.equal(badDay.code, 2);
    assert.match(badDay.stderr, /from/);
  });

  it('remittance run lists each investor; mark records cli <user>; a second mark exits 2', async () => {
    const run = await cli('remittance', 'run', '--account', 'harbor', '--from', '2026-02-01', '--to', '2026-02-28', '--format', 'csv');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\r\n,Total,2026-02-01,2026-02-28,7096\.39,725\.00,0\.00,0\.00,7821\.39,4,\r\n$/);
    const mark = await cli('remittance', 'mark', '--account', 'harbor', '--from', '2026-02-01', '--to', '2026-02-28');
    assert.equal(mark.code, 0, mark.stderr);
    assert.match(mark.stdout, /remittance [0-9a-f-]{36} of 2026-02-01 to 2026-02-28 recorded/);
    assert.match(mark.stdout, /\nTotal\s+7096\.39\s+725\.00\s+0\.00\s+0\.00\s+7821\.39\s+4\n/);
    const again = await cli('remittance', 'mark', '--account', 'harbor', '--from', '2026-02-01', '--to', '2026-02-28');
    assert.equal(again.code, 2);
    assert.match(again.stderr, /was remitted already/);
    const by = await withDatabase((db) => db.query<{ remitted_by: string }>(`SELECT remitted_by FROM remittances`));
    assert.match(by.rows[0]!.remitted_by, /^cli \S+/);
    // The remittance again, later: listed, and shown with what it paid (the same totals as the mark printed).
    const listed = await cli('remittance', 'list', '--account', 'harbor');
    assert.equal(listed.code, 0, listed.stderr);
    const [header, row, ...more] = listed.stdout.trimEnd().split('\n');
    assert.match(header!, /^ID\s+FROM\s+TO\s+REMITTED AT\s+BY\s+TOTAL\s+LINES$/);
    assert.match(row!, /^([0-9a-f-]{36})\s+2026-02-01\s+2026-02-28\s+2\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d\s+cli \S+\s+7821\.39\s+4$/);
    assert.deepEqual(more, []);
    const id = row!.slice(0, 36);
    const shown = await cli('remittance', 'show', id, '--account', 'harbor');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^harbor: remittance ${id} of 2026-02-01 to 2026-02-28, marked \\S+ by cli \\S+ \\(USD\\)\n`));
    assert.match(shown.stdout, /\nTotal\s+7096\.39\s+725\.00\s+0\.00\s+0\.00\s+7821\.39\s+4\n$/);
    const csv = await cli('remittance', 'show', id, '--account', 'harbor', '--format', 'csv');
    assert.match(csv.stdout, /\r\n,Total,2026-02-01,2026-02-28,7096\.39,725\.00,0\.00,0\.00,7821\.39,4,\r\n$/);
    const none = await cli('remittance', 'show', '00000000-0000-0000-0000-000000000000', '--account', 'harbor');
    assert.equal(none.code, 2);
    assert.equal(none.stderr, 'loanql: account harbor has no remittance 00000000-0000-0000-0000-000000000000\n');
  });

  it('prints names with a line break, a tab or wide characters on one line, every column aligned', async () => {
    const run = await cli('remittance', 'run', '--account', 'harbor', '--from', '2026-03-01', '--to', '2026-03-31');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.split('\n').length, 6, run.stdout); // heading, header, two investors, Total, and the final newline
    assertAligned(run.stdout, ['investor', 'principal', 'interest', 'fees', 'adjustments', 'total', 'lines'], ['Cy\\tInvestor\\nLLC', '李明', 'Total']);
    const statement = await cli('investors', 'statement', '--account', 'harbor', '--person', cy, '--from', '2026-03-01', '--to', '2026-03-31');
    assert.equal(statement.code, 0, statement.stderr);
    assert.match(statement.stdout, /^Harbor Private Lending: statement of Cy\\tInvestor\\nLLC, 2026-03-01 to 2026-03-31 \(USD\)\n/);
    assertAligned(statement.stdout, ['loan', 'opening', 'funded', 'principal', 'interest', 'fees', 'adjustments', 'total', 'closing'], ['Oak Ave\\nunit 2', 'Total']);
  });

  it('remittance mark --total --lines: a run owing anything else exits 2 saying what it owes now, nothing written; the run\'s own figures are recorded', async () => {
    const run = await cli('remittance', 'run', '--account', 'harbor', '--from', '2026-03-01', '--to', '2026-03-31', '--format', 'csv');
    const total = run.stdout.trimEnd().split('\r\n').at(-1)!.split(',');
    const [owed, lines] = [total[8]!, total[9]!];
    const count = async () => Number((await withDatabase((db) => db.query<{ n: string }>(`SELECT count(*) AS n FROM remittances`))).rows[0]!.n);
    const before = await count();
    const stale = await cli('remittance', 'mark', '--account', 'harbor', '--from', '2026-03-01', '--to', '2026-03-31', '--total', '0.01', '--lines', '1');
    assert.equal(stale.code, 2, stale.stdout);
    assert.ok(stale.stderr.includes(`the run changed since it was shown: it owes ${owed} in ${lines} lines now, not 0.01 in 1 lines`), stale.stderr);
    const half = await cli('remittance', 'mark', '--account', 'harbor', '--from', '2026-03-01', '--to', '2026-03-31', '--total', owed);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /--lines is required with --total/);
    assert.equal(await count(), before, 'nothing recorded');
    const mark = await cli('remittance', 'mark', '--account', 'harbor', '--from', '2026-03-01', '--to', '2026-03-31', '--total', owed, '--lines', lines);
    assert.equal(mark.code, 0, mark.stderr);
    assert.equal(await count(), before + 1);
  });
});

/** The terminal column at which `line` reaches `index` (the CJK characters of these tests take two). */
function columnOf(line: string, index: number): number {
  return [...line.slice(0, index)].reduce((width, char) => width + (/[\u4e00-\u9fff]/u.test(char) ? 2 : 1), 0);
}

/**
 * Each line of a CLI table holds one row, and each of its amount columns (right of the first)
 * ends where the header's word does (numbers are aligned right): a line break or tab in a name used
 * to break its row in two or push its amounts right, and a wide character left its row one column
 * short per character.
 */
function assertAligned(table: string, header: readonly string[], names: readonly string[]): void {
  const lines = table.trimEnd().split('\n');
  const head = lines.findIndex((line) => line.startsWith(`${header[0]} `));
  assert.ok(head >= 0, table);
  const rows = lines.slice(head + 1);
  assert.deepEqual(rows.map((row) => names.find((name) => row.startsWith(`${name} `))), names, table);
  for (const word of header.slice(1)) {
    const end = columnOf(lines[head]!, lines[head]!.indexOf(` ${word}`) + 1 + word.length);
    for (const row of rows) {
      const cells = [...row.matchAll(/ {2}(-?\d+(?:\.\d+)?)(?= |$)/gu)];
      assert.ok(cells.some((cell) => columnOf(row, cell.index! + cell[0].length) === end), `${word} ends at column ${end}:\n${table}`);
    }
  }
}
