import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../app/accounts.js';
import { createDefaultProduct } from '../../app/products.js';
import { createLoan } from '../../app/loanWrites.js';
import { markRemitted, STAMP_BATCH } from '../../app/remittances.js';
import { UserInputError } from '../../app/errors.js';
import { migrate, openPostgresDatabase, type Database } from '../../db/index.js';
import { createServerDatabase, openTestDatabase, testDatabaseKind } from '../support/testDatabase.js';

/**
 * Marking a remittance over a long history (docs/investors.md, "The remittance run").
 *
 * - A first remittance over years of lines stamped them all in one UPDATE: ~197,000 lines took
 *   7–14 s on PostgreSQL 15 and failed at the 10 s `statement_timeout`, so the lender could never
 *   mark its first run. The mark now stamps at most `STAMP_BATCH` lines a statement, in one
 *   transaction. Checked here by a statement trigger of the test's own that counts the lines each
 *   UPDATE of `distributions` stamps, over 2.5 × `STAMP_BATCH` lines, most of them on a few days (so
 *   a step ends inside a day's lines): every line owed stamped once, nothing else, and the recorded
 *   total and count exactly the stamped lines' sum and count.
 * - A second mark while one runs waited for the account's lock — on a long mark until the statement
 *   timeout, answered 500 — and is now a 409 after 2 s; two marks of one period at once (a double
 *   click) still end in one remittance and a 409 naming it (PostgreSQL: two sessions; PGlite has one).
 */
let db: Database;
let close: () => Promise<void>;
let accountId: string;
const LINES = Math.round(STAMP_BATCH * 2.5);
const PERIOD = { from: '2026-01-01', to: '2026-01-31' };

before(async () => {
  if (process.env.TEST_DATABASE_URL) {
    const created = await createServerDatabase(process.env.TEST_DATABASE_URL);
    db = openPostgresDatabase({ connectionString: created.url, maxConnections: 4 });
    await migrate(db);
    close = async () => {
      await db.close();
      await created.drop();
    };
  } else {
    const opened = await openTestDatabase();
    db = opened.db;
    close = () => opened.close();
  }
  accountId = (await createAccount(db, 'longhistory')).id;
  await createDefaultProduct(db, accountId, []);
  const loan = (await createLoan(db, accountId, { Name: 'Elm St bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2025-12-15', Status: 'servicing' })).id;
  const person = (await db.query<{ id: string }>(`INSERT INTO people (account_id, name, entity_type) VALUES ($1, 'Ann Investor', 'individual') RETURNING id`, [accountId])).rows[0]!.id;
  const source = (
    await db.query<{ id: string }>(`INSERT INTO funding_sources (account_id, person_id, loan_id, original_amount, rate, date_funded) VALUES ($1, $2, $3, 60000, 10, '2025-12-15') RETURNING id`, [accountId, person, loan])
  ).rows[0]!.id;
  const payment = (await db.query<{ id: string }>(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-01-15', 8884.88) RETURNING id`, [accountId, loan])).rows[0]!.id;
  // Years of history in a few statements: investor lines on seven days of the period, a few the
  // period does not owe (the lender's, and lines dated after it).
  await db.query(
    `INSERT INTO distributions (account_id, loan_id, payment_id, funding_source_id, person_id, component, amount, date)
     SELECT $1, $2, $3, $4, $5, (ARRAY['principal', 'interest', 'fees'])[1 + i % 3], ((i % 99991) - 3000) / 100.0, DATE '2026-01-01' + (i % 7) * 4
       FROM generate_series(1, $6::int) i`,
    [accountId, loan, payment, source, person, LINES],
  );
  await db.query(
    `INSERT INTO distributions (account_id, loan_id, payment_id, funding_source_id, person_id, component, amount, date)
     SELECT $1, $2, $3, CASE WHEN i % 2 = 0 THEN $4::uuid END, CASE WHEN i % 2 = 0 THEN $5::uuid END, 'interest', 1.00, CASE WHEN i % 2 = 0 THEN DATE '2026-02-01' ELSE DATE '2026-01-10' END
       FROM generate_series(1, 100) i`,
    [accountId, loan, payment, source, person],
  );
  await db.script(`
    CREATE TABLE test_stamp_statements (n integer NOT NULL);
    CREATE FUNCTION test_count_stamps() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_stamp_statements SELECT count(*) FROM test_stamped WHERE remittance_id IS NOT NULL;
      RETURN NULL;
    END $$;
    CREATE TRIGGER test_count_stamps AFTER UPDATE ON distributions REFERENCING NEW TABLE AS test_stamped
      FOR EACH STATEMENT EXECUTE FUNCTION test_count_stamps();`);
});

after(async () => {
  await close?.();
});

describe(`Marking a remittance over a long history (${testDatabaseKind})`, () => {
  it(`stamps ${LINES.toLocaleString('en')} lines at most ${STAMP_BATCH.toLocaleString('en')} a statement, each once, and records exactly their sum`, async () => {
    const owed = await db.query<{ count: number; total: string }>(
      `SELECT count(*)::int AS count, sum(amount)::text AS total FROM distributions
        WHERE account_id = $1 AND funding_source_id IS NOT NULL AND remittance_id IS NULL AND date <= $2::date`,
      [accountId, PERIOD.to],
    );
    assert.ok(owed.rows[0]!.count > LINES, 'the payment wrote its own lines too');
    const remittance = await markRemitted(db, accountId, PERIOD, { commandLine: 'clerk' });
    assert.equal(remittance.lineCount, owed.rows[0]!.count);
    assert.equal(remittance.total, owed.rows[0]!.total);
    assert.equal(remittance.totals.total, owed.rows[0]!.total);
    const stamped = await db.query<{ mine: number; others: number; left: number }>(
      `SELECT count(*) FILTER (WHERE remittance_id = $2)::int AS mine,
              count(*) FILTER (WHERE remittance_id IS DISTINCT FROM $2 AND remittance_id IS NOT NULL)::int AS others,
              count(*) FILTER (WHERE remittance_id IS NULL AND funding_source_id IS NOT NULL AND date <= $3::date)::int AS left
         FROM distributions WHERE account_id = $1`,
      [accountId, remittance.id, PERIOD.to],
    );
    assert.deepEqual(stamped.rows[0], { mine: owed.rows[0]!.count, others: 0, left: 0 });
    const unpaid = await db.query<{ lender: number; later: number }>(
      `SELECT count(*) FILTER (WHERE funding_source_id IS NULL)::int AS lender, count(*) FILTER (WHERE funding_source_id IS NOT NULL AND date > $2::date)::int AS later
         FROM distributions WHERE account_id = $1 AND remittance_id IS NULL`,
      [accountId, PERIOD.to],
    );
    assert.ok(unpaid.rows[0]!.lender > 50 && unpaid.rows[0]!.later === 50, JSON.stringify(unpaid.rows[0]));
    const statements = (await db.query<{ n: number }>(`SELECT n FROM test_stamp_statements`)).rows.map((row) => row.n);
    assert.ok(statements.every((n) => n <= STAMP_BATCH), `lines stamped per statement: ${statements.join(', ')}`);
    assert.equal(statements.reduce((a, b) => a + b, 0), owed.rows[0]!.count);
    assert.equal(statements.length, Math.ceil(owed.rows[0]!.count / STAMP_BATCH));
  });

  it('a second mark of the period is a 409 and changes nothing', async () => {
    const before = await db.query(`SELECT count(*)::int AS n FROM test_stamp_statements`);
    await assert.rejects(markRemitted(db, accountId, PERIOD, { commandLine: 'clerk' }), (error: unknown) => error instanceof UserInputError && error.status === 409 && /remitted already/.test(error.message));
    assert.deepEqual((await db.query(`SELECT count(*)::int AS n FROM test_stamp_statements`)).rows, before.rows);
  });

  it('two marks of one period at once: one remittance, and a 409 saying it was remitted', { skip: testDatabaseKind === 'pglite' && 'PGlite runs one transaction at a time' }, async () => {
    const period = { from: '2026-02-01', to: '2026-02-10' };
    const [first, second] = await Promise.allSettled([markRemitted(db, accountId, period, { commandLine: 'clerk a' }), markRemitted(db, accountId, period, { commandLine: 'clerk b' })]);
    const outcomes = [first, second].map((outcome) => (outcome.status === 'fulfilled' ? 'marked' : outcome.reason instanceof UserInputError && outcome.reason.status === 409 ? outcome.reason.message : String(outcome.reason)));
    assert.equal(outcomes.filter((outcome) => outcome === 'marked').length, 1, outcomes.join('\n'));
    assert.equal((first.status === 'fulfilled' ? first.value : second.status === 'fulfilled' ? second.value : null)?.lineCount, 50);
    assert.match(outcomes.find((outcome) => outcome !== 'marked')!, /was remitted already/);
  });

  it('a mark while another runs for long is a 409 after 2 s, not a wait for its lock', { skip: testDatabaseKind === 'pglite' && 'PGlite runs one transaction at a time' }, async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    // Another clerk's mark, under way: it holds the account's row as a mark does.
    const other = db.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, [accountId]);
      locked();
      await held;
    });
    await lockTaken;
    const releaseLater = setTimeout(release, 5_000);
    const started = Date.now();
    try {
      await assert.rejects(
        markRemitted(db, accountId, { from: '2026-02-11', to: '2026-02-28' }, { commandLine: 'second clerk' }),
        (error: unknown) => error instanceof UserInputError && error.status === 409 && /another mark of this account is running/.test(error.message),
      );
      assert.ok(Date.now() - started < 4_000, `answered after ${Date.now() - started} ms`);
    } finally {
      clearTimeout(releaseLater);
      release();
      await other;
    }
    // Once the other ends, the mark goes through (the period's lines were paid by the one before).
    const after = await markRemitted(db, accountId, { from: '2026-02-11', to: '2026-02-28' }, { commandLine: 'second clerk' });
    assert.equal(after.lineCount, 0);
  });
});
