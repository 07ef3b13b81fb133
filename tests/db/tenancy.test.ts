import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../db/index.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * SPEC §3: primary keys are `(account_id, id)` and every foreign key includes `account_id`, so
 * the database itself refuses a row of one account that points at a row of another. Each case
 * writes the same row twice: pointing inside its own account (accepted, which shows the row is
 * otherwise valid) and pointing into the other account (refused with a foreign-key violation).
 */
interface Tenant {
  readonly account: string;
  readonly admin: string;
  readonly product: string;
  readonly person: string;
  readonly company: string;
  readonly loan: string;
  readonly document: string;
  readonly address: string;
  readonly payment: string;
}

async function one(db: Database, sql: string, values: unknown[]): Promise<string> {
  const { rows } = await db.query<{ id: string }>(sql, values);
  return rows[0]!.id;
}

async function makeTenant(db: Database, slug: string): Promise<Tenant> {
  const account = await one(db, 'INSERT INTO accounts (slug, name) VALUES ($1, $1) RETURNING id', [slug]);
  const admin = await one(db, `INSERT INTO admins (account_id, email, name, password_hash) VALUES ($1, $2, 'Admin', 'x') RETURNING id`, [
    account,
    `admin@${slug}.test`,
  ]);
  const product = await one(db, `INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) RETURNING id`, [account]);
  const person = await one(db, `INSERT INTO people (account_id, name) VALUES ($1, 'Pat') RETURNING id`, [account]);
  const company = await one(db, `INSERT INTO people (account_id, name, entity_type) VALUES ($1, 'Acme', 'company') RETURNING id`, [account]);
  const loan = await one(db, `INSERT INTO loans (account_id, product_id, name, status) VALUES ($1, $2, 'Loan', 'servicing') RETURNING id`, [account, product]);
  const document = await one(db, `INSERT INTO documents (account_id, name) VALUES ($1, 'Deed') RETURNING id`, [account]);
  const address = await one(db, `INSERT INTO addresses (account_id, city) VALUES ($1, 'Springfield') RETURNING id`, [account]);
  // A payment is taken by a loan with a schedule (migration 0061): one row.
  await db.query(`INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance) VALUES ($1, $2, 1, '2024-01-01', 10, 10, 0, 0)`, [account, loan]);
  const payment = await one(db, `INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2024-01-01', 10) RETURNING id`, [account, loan]);
  return { account, admin, product, person, company, loan, document, address, payment };
}

/** A row of `mine`'s account whose one reference is taken from `target` (mine or the other account). */
interface CrossReference {
  readonly what: string;
  write(db: Database, mine: Tenant, target: Tenant): Promise<unknown>;
}

const INSERTS: readonly CrossReference[] = [
  {
    what: 'a payment whose loan is in another account',
    write: (db, mine, target) => db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2024-02-01', 5)`, [mine.account, target.loan]),
  },
  {
    what: 'a schedule row whose loan is in another account',
    write: (db, mine, target) =>
      db.query(
        `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
         VALUES ($1, $2, (SELECT coalesce(max(number), 0) + 1 FROM schedules WHERE loan_id = $2), '2024-02-01', 1, 1, 0, 0)`,
        [mine.account, target.loan],
      ),
  },
  {
    what: 'a borrow link to a person in another account',
    write: (db, mine, target) => db.query('INSERT INTO borrows (account_id, loan_id, person_id) VALUES ($1, $2, $3)', [mine.account, mine.loan, target.person]),
  },
  {
    what: 'a borrow link to a loan in another account',
    write: (db, mine, target) => db.query('INSERT INTO borrows (account_id, loan_id, person_id) VALUES ($1, $2, $3)', [mine.account, target.loan, mine.company]),
  },
  {
    what: 'a guarantee by a person in another account',
    write: (db, mine, target) => db.query('INSERT INTO guarantees (account_id, loan_id, person_id) VALUES ($1, $2, $3)', [mine.account, mine.loan, target.person]),
  },
  {
    what: 'a comment written by another account’s admin',
    write: (db, mine, target) => db.query(`INSERT INTO comments (account_id, loan_id, admin_id, text) VALUES ($1, $2, $3, 'hi')`, [mine.account, mine.loan, target.admin]),
  },
  {
    what: 'a comment on a loan in another account',
    write: (db, mine, target) => db.query(`INSERT INTO comments (account_id, loan_id, admin_id, text) VALUES ($1, $2, $3, 'hi')`, [mine.account, target.loan, mine.admin]),
  },
  {
    what: 'a loan document link to another account’s document',
    write: (db, mine, target) => db.query('INSERT INTO loan_documents (account_id, loan_id, document_id) VALUES ($1, $2, $3)', [mine.account, mine.loan, target.document]),
  },
  {
    what: 'an address detail link to another account’s address',
    write: (db, mine, target) => db.query('INSERT INTO address_details (account_id, loan_id, address_id) VALUES ($1, $2, $3)', [mine.account, mine.loan, target.address]),
  },
  {
    what: 'a valuation of another account’s address',
    write: (db, mine, target) => db.query('INSERT INTO valuations (account_id, address_id, value) VALUES ($1, $2, 100)', [mine.account, target.address]),
  },
  {
    what: 'an insurance of another account’s address',
    write: (db, mine, target) => db.query(`INSERT INTO insurances (account_id, address_id, carrier) VALUES ($1, $2, 'Carrier')`, [mine.account, target.address]),
  },
  {
    what: 'a task on a loan in another account',
    write: (db, mine, target) => db.query(`INSERT INTO tasks (account_id, loan_id, name) VALUES ($1, $2, 'Call')`, [mine.account, target.loan]),
  },
  {
    what: 'a funding source from an investor in another account',
    write: (db, mine, target) => db.query('INSERT INTO funding_sources (account_id, person_id, loan_id) VALUES ($1, $2, $3)', [mine.account, target.person, mine.loan]),
  },
  {
    what: 'a company membership in another account’s company',
    write: (db, mine, target) =>
      db.query('INSERT INTO company_memberships (account_id, company_id, person_id) VALUES ($1, $2, $3)', [mine.account, target.company, mine.person]),
  },
  {
    what: 'a loan of another account’s product',
    write: (db, mine, target) => db.query(`INSERT INTO loans (account_id, product_id, name) VALUES ($1, $2, 'Other')`, [mine.account, target.product]),
  },
  {
    what: 'a product field of another account’s product',
    write: (db, mine, target) =>
      db.query(
        `INSERT INTO product_fields (account_id, product_id, name, key, type) VALUES ($1, $2, $3, $3, 'text')`,
        [mine.account, target.product, `field_${Math.random().toString(36).slice(2)}`],
      ),
  },
];

const UPDATES: readonly CrossReference[] = [
  {
    what: 'moving a payment onto a loan in another account',
    write: (db, mine, target) => db.query('UPDATE payments SET loan_id = $3 WHERE account_id = $1 AND id = $2', [mine.account, mine.payment, target.loan]),
  },
  {
    what: 'moving a payment into another account while it keeps its loan',
    write: (db, mine, target) =>
      // Moving it to its own account is a no-op that must be accepted.
      db.query('UPDATE payments SET account_id = $3 WHERE account_id = $1 AND id = $2', [mine.account, mine.payment, target.account]),
  },
  {
    what: 'moving a loan into another account while it has payments',
    write: (db, mine, target) => db.query('UPDATE loans SET account_id = $2 WHERE id = $1 AND account_id = $3', [mine.loan, target.account, mine.account]),
  },
];

function isForeignKeyViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23503';
}

let database: TestDatabase;
let first: Tenant;
let second: Tenant;

before(async () => {
  database = await openTestDatabase();
  first = await makeTenant(database.db, 'tenant-one');
  second = await makeTenant(database.db, 'tenant-two');
});

after(async () => {
  await database?.close();
});

describe('Tenancy in the database itself (SPEC §3)', () => {
  describe('refuses to insert', () => {
    for (const reference of INSERTS) {
      it(reference.what, async () => {
        await reference.write(database.db, first, first);
        await assert.rejects(reference.write(database.db, first, second), isForeignKeyViolation);
        await assert.rejects(reference.write(database.db, second, first), isForeignKeyViolation);
      });
    }
  });

  describe('refuses an update', () => {
    for (const reference of UPDATES) {
      it(reference.what, async () => {
        await reference.write(database.db, first, first);
        await assert.rejects(reference.write(database.db, first, second), isForeignKeyViolation);
      });
    }
  });

  it('leaves every account’s rows where they were after the refusals', async () => {
    const { rows } = await database.db.query<{ slug: string; payments: string }>(
      `SELECT a.slug, (SELECT count(*) FROM payments p JOIN loans l ON l.account_id = p.account_id AND l.id = p.loan_id
                        WHERE p.account_id = a.id) AS payments
         FROM accounts a ORDER BY a.slug`,
    );
    // Each tenant: its own payment from set-up plus the one accepted in-account insert.
    assert.deepEqual(rows, [
      { slug: 'tenant-one', payments: '2' },
      { slug: 'tenant-two', payments: '1' },
    ]);
  });

  it('has account_id in the primary key and every foreign key of every tenant table', async () => {
    const { rows } = await database.db.query<{ table_name: string; constraint_type: string; name: string; columns: string[] }>(
      `SELECT c.conrelid::regclass::text AS table_name, c.contype AS constraint_type, c.conname AS name,
              array(SELECT a.attname::text FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k) AS columns
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND c.contype IN ('p', 'f')
          -- Not tenant tables: accounts themselves, the service's own configuration (migrations applied, the metadata's event types),
          -- and the capture queue webhook_outbox (rows live until the worker moves them into webhook_events, a tenant table; no key
          -- but its sequence, no foreign key, so that a captured write stays cheap — migration 0008).
          AND c.conrelid::regclass::text NOT IN ('accounts', 'loanql_migrations', 'loanql_event_types', 'loanql_event_state', 'webhook_outbox')
        ORDER BY 1, 3`,
    );
    assert.ok(rows.length > 20, 'the tenant tables were found');
    const missing = rows.filter((row) => !row.columns.includes('account_id')).map((row) => `${row.table_name}.${row.name}`);
    assert.deepEqual(missing, []);
    const primaryKeys = rows.filter((row) => row.constraint_type === 'p');
    for (const key of primaryKeys) assert.deepEqual(key.columns, ['account_id', 'id'], `${key.table_name} primary key`);
  });
});
