/**
 * The single-lender schema (issue 36): the tables a careful person would design to serve ONE
 * lender's loans through these queries, in the schema `single_lender` of the benchmark's
 * database, and the copy of one loanql account into it.
 *
 * - No `account_id` anywhere: one lender, one database.
 * - `bigint` keys for every table. The rows the API names by id (loans, people, payments, tasks)
 *   also keep their public `uuid` as `uid` (the API's ids are uuids, and the answers must be the
 *   same bytes); every other table (schedules, comments, valuations, insurances, borrows, …)
 *   has only its `bigint`. Foreign keys are `bigint` (8 bytes against loanql's 16 + 16).
 * - The columns of loanql's base schema (0001) a lender needs, fixed-width first (no alignment
 *   padding), but not loanql's ledger columns nor `custom_fields` (a single lender would add
 *   real columns): RESULTS.md reports the pages of both.
 * - The index each query wants, leading with what the query filters on (no tenant column to
 *   lead with): `loans_status_amount_rate` covers q3 and q4 (index-only scans), the ordered
 *   child lists are `(parent, order)` indexes.
 *
 * Ids are assigned in the order of loanql's uuids (`row_number() OVER (ORDER BY id)`), so "order
 * by primary key" (SPEC §5: every list is ordered, ties broken by the primary key) gives the same
 * order on both, and the same JSON. Rows are written in loanql's physical order (`ORDER BY ctid`),
 * so neither side gets rows clustered by loan that the other does not have.
 */
import type pg from 'pg';

export const SINGLE_LENDER_SCHEMA = 'single_lender';

const DDL = `
DROP SCHEMA IF EXISTS single_lender CASCADE;
CREATE SCHEMA single_lender;
SET LOCAL search_path = single_lender, public;

CREATE TABLE api_keys (
  id bigint PRIMARY KEY,
  active boolean NOT NULL,
  prefix text NOT NULL UNIQUE,
  key_hash bytea NOT NULL,
  role text NOT NULL
);
CREATE TABLE admins (id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL);
CREATE TABLE people (
  id bigint PRIMARY KEY,
  uid uuid NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  is_borrower boolean NOT NULL,
  is_investor boolean NOT NULL,
  name text NOT NULL,
  email text,
  phone text,
  status text NOT NULL,
  entity_type text NOT NULL
);
CREATE INDEX people_name_trgm ON people USING gin (name public.gin_trgm_ops);
CREATE TABLE loans (
  id bigint PRIMARY KEY,
  uid uuid NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  date_funded date,
  first_payment_date date,
  date_maturity date,
  term integer,
  status text NOT NULL CHECK (status IN ('lead', 'servicing', 'closed', 'overpaid')),
  name text NOT NULL,
  amount numeric(14, 2),
  rate numeric(9, 4),
  regular_payment numeric(14, 2),
  frequency text,
  amortization text NOT NULL
);
-- q2 (a status's page, newest first), q8 (every loan, newest first).
CREATE INDEX loans_status_created ON loans (status, created_at DESC, id);
CREATE INDEX loans_created ON loans (created_at DESC, id);
-- q3 and q4 read only status, amount and rate: an index-only scan.
CREATE INDEX loans_status_amount_rate ON loans (status) INCLUDE (amount, rate);
CREATE TABLE borrows (
  id bigint PRIMARY KEY,
  loan_id bigint NOT NULL REFERENCES loans,
  person_id bigint NOT NULL REFERENCES people,
  created_at timestamptz NOT NULL,
  UNIQUE (loan_id, person_id)
);
CREATE INDEX borrows_person ON borrows (person_id);
CREATE TABLE documents (id bigint PRIMARY KEY, uploaded_date date, name text NOT NULL, status text NOT NULL, type text);
CREATE TABLE loan_documents (id bigint PRIMARY KEY, loan_id bigint NOT NULL REFERENCES loans, document_id bigint NOT NULL REFERENCES documents);
CREATE INDEX loan_documents_loan ON loan_documents (loan_id);
CREATE TABLE addresses (id bigint PRIMARY KEY, street1 text, city text, state text, zipcode text);
CREATE TABLE address_details (id bigint PRIMARY KEY, loan_id bigint NOT NULL REFERENCES loans, address_id bigint NOT NULL REFERENCES addresses);
CREATE INDEX address_details_loan ON address_details (loan_id);
CREATE TABLE valuations (id bigint PRIMARY KEY, address_id bigint NOT NULL REFERENCES addresses, report_date date, value numeric(14, 2), valuation_type text);
CREATE INDEX valuations_address_date ON valuations (address_id, report_date DESC, id);
CREATE TABLE insurances (id bigint PRIMARY KEY, address_id bigint NOT NULL REFERENCES addresses, expiration date, coverage_amount numeric(14, 2), carrier text, type text);
CREATE INDEX insurances_address ON insurances (address_id);
CREATE TABLE payments (
  id bigint PRIMARY KEY,
  uid uuid NOT NULL UNIQUE,
  loan_id bigint NOT NULL REFERENCES loans,
  date date NOT NULL,
  date_reversed date,
  amount numeric(14, 2) NOT NULL,
  type text NOT NULL,
  method text
);
CREATE INDEX payments_loan_date ON payments (loan_id, date DESC, id);
CREATE TABLE schedules (
  id bigint PRIMARY KEY,
  loan_id bigint NOT NULL REFERENCES loans,
  number integer NOT NULL,
  due date NOT NULL,
  is_next boolean NOT NULL,
  payment numeric(14, 2) NOT NULL,
  principal numeric(14, 2) NOT NULL,
  interest numeric(14, 2) NOT NULL,
  balance numeric(14, 2) NOT NULL,
  UNIQUE (loan_id, number)
);
CREATE UNIQUE INDEX schedules_one_next ON schedules (loan_id) WHERE is_next;
CREATE TABLE tasks (
  id bigint PRIMARY KEY,
  uid uuid NOT NULL UNIQUE,
  loan_id bigint REFERENCES loans,
  date_due date,
  created_at timestamptz NOT NULL,
  name text NOT NULL,
  status text NOT NULL
);
CREATE INDEX tasks_loan ON tasks (loan_id);
-- q6: open tasks by due date.
CREATE INDEX tasks_due_open ON tasks (date_due, id) WHERE status <> 'completed';
CREATE TABLE comments (id bigint PRIMARY KEY, loan_id bigint NOT NULL REFERENCES loans, admin_id bigint REFERENCES admins, created_at timestamptz NOT NULL, text text NOT NULL);
CREATE INDEX comments_loan ON comments (loan_id, created_at, id);
CREATE TABLE funding_sources (
  id bigint PRIMARY KEY,
  person_id bigint NOT NULL REFERENCES people,
  loan_id bigint NOT NULL REFERENCES loans,
  date_funded date,
  class text,
  rate numeric(9, 4),
  original_amount numeric(14, 2),
  committed_amount numeric(14, 2)
);
CREATE INDEX funding_sources_person ON funding_sources (person_id);
CREATE INDEX funding_sources_loan ON funding_sources (loan_id);
`;

/** The tables copied, each numbered in the order of its loanql uuid: `map_<table> (uid, id)`. */
const MAPPED = ['api_keys', 'admins', 'people', 'loans', 'borrows', 'documents', 'loan_documents', 'addresses', 'address_details', 'valuations', 'insurances', 'payments', 'schedules', 'tasks', 'comments', 'funding_sources'] as const;

/** `INSERT … SELECT` per table; `$1` is the account copied. `m(t, col)` maps a loanql uuid to the table's bigint. */
const COPY: readonly string[] = [
  `INSERT INTO single_lender.api_keys SELECT m.id, k.active, k.prefix, k.key_hash, k.role FROM api_keys k JOIN map_api_keys m ON m.uid = k.id WHERE k.account_id = $1`,
  `INSERT INTO single_lender.admins SELECT m.id, a.name, a.email FROM admins a JOIN map_admins m ON m.uid = a.id WHERE a.account_id = $1`,
  `INSERT INTO single_lender.people SELECT m.id, p.id, p.created_at, p.is_borrower, p.is_investor, p.name, p.email, p.phone, p.status, p.entity_type
     FROM people p JOIN map_people m ON m.uid = p.id WHERE p.account_id = $1 ORDER BY p.ctid`,
  `INSERT INTO single_lender.loans SELECT m.id, l.id, l.created_at, l.updated_at, l.date_funded, l.first_payment_date, l.date_maturity, l.term, l.status,
          l.name, l.amount, l.rate, l.regular_payment, l.frequency, l.amortization
     FROM loans l JOIN map_loans m ON m.uid = l.id WHERE l.account_id = $1 ORDER BY l.ctid`,
  `INSERT INTO single_lender.borrows SELECT m.id, ml.id, mp.id, b.created_at FROM borrows b JOIN map_borrows m ON m.uid = b.id
     JOIN map_loans ml ON ml.uid = b.loan_id JOIN map_people mp ON mp.uid = b.person_id WHERE b.account_id = $1 ORDER BY b.ctid`,
  `INSERT INTO single_lender.documents SELECT m.id, d.uploaded_date, d.name, d.status, d.type FROM documents d JOIN map_documents m ON m.uid = d.id WHERE d.account_id = $1 ORDER BY d.ctid`,
  `INSERT INTO single_lender.loan_documents SELECT m.id, ml.id, md.id FROM loan_documents x JOIN map_loan_documents m ON m.uid = x.id
     JOIN map_loans ml ON ml.uid = x.loan_id JOIN map_documents md ON md.uid = x.document_id WHERE x.account_id = $1 ORDER BY x.ctid`,
  `INSERT INTO single_lender.addresses SELECT m.id, a.street1, a.city, a.state, a.zipcode FROM addresses a JOIN map_addresses m ON m.uid = a.id WHERE a.account_id = $1 ORDER BY a.ctid`,
  `INSERT INTO single_lender.address_details SELECT m.id, ml.id, ma.id FROM address_details x JOIN map_address_details m ON m.uid = x.id
     JOIN map_loans ml ON ml.uid = x.loan_id JOIN map_addresses ma ON ma.uid = x.address_id WHERE x.account_id = $1 ORDER BY x.ctid`,
  `INSERT INTO single_lender.valuations SELECT m.id, ma.id, v.report_date, v.value, v.valuation_type FROM valuations v JOIN map_valuations m ON m.uid = v.id
     JOIN map_addresses ma ON ma.uid = v.address_id WHERE v.account_id = $1 ORDER BY v.ctid`,
  `INSERT INTO single_lender.insurances SELECT m.id, ma.id, i.expiration, i.coverage_amount, i.carrier, i.type FROM insurances i JOIN map_insurances m ON m.uid = i.id
     JOIN map_addresses ma ON ma.uid = i.address_id WHERE i.account_id = $1 ORDER BY i.ctid`,
  `INSERT INTO single_lender.payments SELECT m.id, p.id, ml.id, p.date, p.date_reversed, p.amount, p.type, p.method FROM payments p JOIN map_payments m ON m.uid = p.id
     JOIN map_loans ml ON ml.uid = p.loan_id WHERE p.account_id = $1 ORDER BY p.ctid`,
  `INSERT INTO single_lender.schedules SELECT m.id, ml.id, s.number, s.due, s.is_next, s.payment, s.principal, s.interest, s.balance FROM schedules s JOIN map_schedules m ON m.uid = s.id
     JOIN map_loans ml ON ml.uid = s.loan_id WHERE s.account_id = $1 ORDER BY s.ctid`,
  `INSERT INTO single_lender.tasks SELECT m.id, t.id, ml.id, t.date_due, t.created_at, t.name, t.status FROM tasks t JOIN map_tasks m ON m.uid = t.id
     LEFT JOIN map_loans ml ON ml.uid = t.loan_id WHERE t.account_id = $1 ORDER BY t.ctid`,
  `INSERT INTO single_lender.comments SELECT m.id, ml.id, ma.id, c.created_at, c.text FROM comments c JOIN map_comments m ON m.uid = c.id
     JOIN map_loans ml ON ml.uid = c.loan_id LEFT JOIN map_admins ma ON ma.uid = c.admin_id WHERE c.account_id = $1 ORDER BY c.ctid`,
  `INSERT INTO single_lender.funding_sources SELECT m.id, mp.id, ml.id, f.date_funded, f.class, f.rate, f.original_amount, f.committed_amount FROM funding_sources f
     JOIN map_funding_sources m ON m.uid = f.id JOIN map_people mp ON mp.uid = f.person_id JOIN map_loans ml ON ml.uid = f.loan_id WHERE f.account_id = $1 ORDER BY f.ctid`,
];

/**
 * Creates the schema `single_lender` (dropping an older one) and copies the account's rows into it,
 * in one transaction; then `VACUUM ANALYZE` of its tables (so index-only scans see an all-visible map,
 * as they do on the service's freshly vacuumed tables). Returns rows and pages per table.
 */
export async function loadSingleLender(pool: pg.Pool, accountId: string): Promise<Record<string, { rows: number; pages: number }>> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows: schemaRows } = await client.query<{ path: string }>('SHOW search_path');
    await client.query(DDL);
    // The DDL ran with `single_lender` first; the copy reads loanql's tables by their usual names.
    await client.query(`SELECT set_config('search_path', $1, true)`, [schemaRows[0]!.path]);
    for (const table of MAPPED) {
      await client.query(`CREATE TEMP TABLE map_${table} (uid uuid PRIMARY KEY, id bigint NOT NULL) ON COMMIT DROP`);
      await client.query(`INSERT INTO map_${table} SELECT id, row_number() OVER (ORDER BY id) FROM ${table} WHERE account_id = $1`, [accountId]);
    }
    for (const statement of COPY) await client.query(statement, [accountId]);
    await client.query('COMMIT');
    for (const table of MAPPED) await client.query(`VACUUM ANALYZE single_lender.${table}`);
    const { rows } = await client.query<{ table: string; rows: string; pages: string }>(
      `SELECT c.relname AS table, c.reltuples::bigint AS rows, c.relpages AS pages FROM pg_class c
        WHERE c.relnamespace = 'single_lender'::regnamespace AND c.relkind = 'r' ORDER BY 1`,
    );
    return Object.fromEntries(rows.map((row) => [row.table, { rows: Number(row.rows), pages: Number(row.pages) }]));
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Removes the schema (a given database is left as it was found). */
export async function dropSingleLender(pool: pg.Pool): Promise<void> {
  await pool.query('DROP SCHEMA IF EXISTS single_lender CASCADE');
}
