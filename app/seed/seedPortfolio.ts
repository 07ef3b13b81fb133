/**
 * Seeds one account with a deterministic, realistic demo loan portfolio (see `generate.ts` for
 * what the data looks like). Works on PostgreSQL and PGlite alike with parameterised SQL only:
 * rows travel in chunks as ONE JSON parameter each and are expanded server-side with
 * `json_populate_recordset`, so no value is ever spliced into SQL text.
 *
 * The whole seed runs in one transaction (all or nothing). Loans are inserted with their final
 * status, every loan's schedule before its payments, and `schedules.is_next` is left to the
 * database triggers.
 */
import type { Database, Queryable } from '../../db/index.js';
import { isCalendarDay } from '../../domain/calendar.js';
import { isSeedDay, MAX_SEED_SCALE, planPortfolio, REFERENCE_DATE, SEED_DAYS, type PortfolioPlan } from './generate.js';

/** Loans (or payoffs) per ledger statement of the seeder. */
const LEDGER_CHUNK = 500;

/** The tables a ledger replay writes (SPEC §12): analyzed again as the seeder's replay fills them. */
const LEDGER_OUTPUT_TABLES = 'payment_allocations, fees, schedules, loans';

export interface SeedOptions {
  /** The account to fill; it must exist and have no loans or people yet. */
  accountId: string;
  /** Multiplies every row count (1 = 10,000 loans); must be > 0. */
  scale: number;
  /** Same seed, same data (ids differ per account). */
  seed: number;
  /** Authors of the comments; when empty, comments have no author. */
  adminIds: readonly string[];
  /** Product of every seeded loan (default none). */
  productId?: string | null;
  /**
   * `YYYY-MM-DD`: the day the portfolio is dated around — payments and other past events fall
   * before it, next payments on or after it (default the fixed `REFERENCE_DATE`, so a test's
   * data never depends on the clock; the CLI and the demo give the day of seeding).
   */
  today?: string;
  /** Called after every inserted chunk with the rows done so far, the total, and the table being written. */
  onProgress?: (done: number, total: number, stage: string) => void;
}

export interface SeedSummary {
  loans: number;
  people: number;
  payments: number;
  schedules: number;
  tasks: number;
  comments: number;
  documents: number;
  addresses: number;
  fundingSources: number;
  /** Wall-clock time of the whole seed, in milliseconds. */
  ms: number;
}

/** Thrown when the options are invalid or the account already holds data. */
export class SeedError extends Error {
  constructor(
    message: string,
    /** `account-not-empty`: the account already has loans or people; otherwise the options are wrong. */
    readonly reason: 'invalid-options' | 'account-not-empty' = 'invalid-options',
  ) {
    super(message);
    this.name = 'SeedError';
  }
}

/** Tables in insertion order, with the columns sent (besides `account_id`). */
const TABLES = {
  people: ['id', 'name', 'email', 'phone', 'status', 'entity_type', 'is_borrower', 'is_investor', 'created_at'],
  company_memberships: ['id', 'company_id', 'person_id', 'role', 'created_at'],
  loans: [
    'id', 'product_id', 'name', 'amount', 'status', 'rate', 'term', 'frequency', 'amortization', 'regular_payment',
    'date_funded', 'date_maturity', 'custom_fields', 'created_at', 'updated_at',
  ],
  borrows: ['id', 'loan_id', 'person_id', 'created_at'],
  guarantees: ['id', 'loan_id', 'person_id', 'created_at'],
  addresses: ['id', 'street1', 'city', 'state', 'zipcode'],
  address_details: ['id', 'loan_id', 'address_id'],
  valuations: ['id', 'address_id', 'value', 'valuation_type', 'report_date'],
  insurances: ['id', 'address_id', 'carrier', 'type', 'coverage_amount', 'expiration'],
  schedules: ['id', 'loan_id', 'number', 'due', 'payment', 'principal', 'interest', 'balance', 'scheduled_payment', 'scheduled_principal', 'scheduled_interest', 'scheduled_balance'],
  payments: ['id', 'loan_id', 'date', 'amount', 'type', 'method', 'date_reversed', 'reversal_reason'],
  funding_sources: ['id', 'person_id', 'loan_id', 'class', 'rate', 'original_amount', 'committed_amount', 'date_funded'],
  documents: ['id', 'name', 'status', 'type', 'uploaded_date'],
  loan_documents: ['id', 'loan_id', 'document_id'],
  tasks: ['id', 'loan_id', 'name', 'status', 'date_due', 'created_at'],
  comments: ['id', 'loan_id', 'admin_id', 'text', 'created_at'],
} as const satisfies Record<string, readonly string[]>;

type Table = keyof typeof TABLES;

/** Buffers written before a table's own buffer (foreign keys; schedules before payments for is_next). */
const PARENTS: Partial<Record<Table, readonly Table[]>> = {
  company_memberships: ['people'],
  loans: ['people'],
  borrows: ['loans', 'people'],
  guarantees: ['loans', 'people'],
  address_details: ['loans', 'addresses'],
  valuations: ['addresses'],
  insurances: ['addresses'],
  schedules: ['loans'],
  payments: ['loans', 'schedules'],
  funding_sources: ['loans', 'people'],
  loan_documents: ['loans', 'documents'],
  tasks: ['loans'],
  comments: ['loans'],
};

/** Rows per statement. Larger chunks mean fewer round trips and trigger runs; 10k keeps each JSON parameter at a few MB. */
const CHUNK_ROWS = 10_000;

const quote = (column: string): string => `"${column}"`;

/** The fixed INSERT for a table: table and column names are constants of this module, values are $1 (rows) and $2 (account). */
function insertSql(table: Table): string {
  const columns = TABLES[table].map(quote).join(', ');
  return `INSERT INTO ${table} (account_id, ${columns}) SELECT $2::uuid, ${columns} FROM json_populate_recordset(NULL::${table}, $1::json)`;
}
const INSERT_SQL = Object.fromEntries(Object.keys(TABLES).map((table) => [table, insertSql(table as Table)])) as Record<Table, string>;

/**
 * Chunked writer. One statement is in flight at a time; the next chunk is generated and
 * serialised while the database works on the previous one.
 */
class BulkWriter {
  readonly #tx: Queryable;
  readonly #accountId: string;
  readonly #buffers = new Map<Table, object[]>();
  readonly #onChunk: (table: Table, rows: number) => void;
  #inflight: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | null = null;
  readonly inserted = Object.fromEntries(Object.keys(TABLES).map((table) => [table, 0])) as Record<Table, number>;

  constructor(tx: Queryable, accountId: string, onChunk: (table: Table, rows: number) => void) {
    this.#tx = tx;
    this.#accountId = accountId;
    this.#onChunk = onChunk;
  }

  /** Buffers a row; true when the table's buffer is full and should be flushed. */
  add(table: Table, row: object): boolean {
    let buffer = this.#buffers.get(table);
    if (buffer === undefined) {
      buffer = [];
      this.#buffers.set(table, buffer);
    }
    buffer.push(row);
    return buffer.length >= CHUNK_ROWS;
  }

  /** Buffers and writes all of `rows`. */
  async addAll(table: Table, rows: readonly object[]): Promise<void> {
    for (const row of rows) if (this.add(table, row)) await this.flush(table);
    await this.flush(table);
  }

  /** Sends the table's buffered rows (after its parents' buffered rows). */
  async flush(table: Table): Promise<void> {
    for (const parent of PARENTS[table] ?? []) await this.flush(parent);
    const rows = this.#buffers.get(table);
    if (rows === undefined || rows.length === 0) return;
    this.#buffers.set(table, []);
    const json = JSON.stringify(rows);
    await this.#settle();
    const count = rows.length;
    this.#inflight = this.#tx.query(INSERT_SQL[table], [json, this.#accountId]).then(
      () => {
        this.inserted[table] += count;
        this.#onChunk(table, count);
      },
      (error: unknown) => {
        this.#failure = { error };
      },
    );
  }

  /** Writes everything still buffered and waits for the database. */
  async finish(): Promise<void> {
    for (const table of Object.keys(TABLES) as Table[]) await this.flush(table);
    await this.#settle();
  }

  async #settle(): Promise<void> {
    await this.#inflight;
    if (this.#failure !== null) throw this.#failure.error;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkOptions(options: SeedOptions): void {
  if (options === null || typeof options !== 'object') throw new SeedError('options are required');
  if (typeof options.accountId !== 'string' || !UUID.test(options.accountId)) throw new SeedError('accountId must be a uuid');
  if (typeof options.scale !== 'number' || !Number.isFinite(options.scale) || options.scale <= 0 || options.scale > MAX_SEED_SCALE) {
    throw new SeedError(`scale must be a number above 0 and at most ${MAX_SEED_SCALE}, got ${String(options.scale)}`);
  }
  if (!Number.isSafeInteger(options.seed)) throw new SeedError(`seed must be an integer, got ${String(options.seed)}`);
  if (!Array.isArray(options.adminIds) || options.adminIds.some((id) => typeof id !== 'string' || !UUID.test(id))) {
    throw new SeedError('adminIds must be an array of uuids');
  }
  if (options.today !== undefined && !(typeof options.today === 'string' && isCalendarDay(options.today))) {
    throw new SeedError(`today must be a date as YYYY-MM-DD, got ${JSON.stringify(options.today)}`);
  }
  if (options.today !== undefined && !isSeedDay(options.today)) {
    throw new SeedError(`today must be from ${SEED_DAYS.first} to ${SEED_DAYS.last} (the portfolio's payments and due dates stay in 1900–2999), got ${options.today}`);
  }
  if (options.productId != null && (typeof options.productId !== 'string' || !UUID.test(options.productId))) {
    throw new SeedError('productId must be a uuid or null');
  }
}

function plannedTotal(plan: PortfolioPlan): number {
  const { counts } = plan;
  return (
    plan.people.length + plan.memberships.length + plan.loans.length + plan.borrows.length + plan.guarantees.length +
    plan.addresses.length + plan.addressDetails.length + plan.valuations.length + plan.insurances.length +
    plan.scheduleRowCount + counts.payments + plan.fundingSources.length + 2 * counts.documents + counts.tasks + counts.comments
  );
}

/**
 * Fills an empty account with a demo portfolio: at scale 1, 10,000 loans, 15,000 people,
 * ~200,000 payments, their schedules, 30,000 tasks and comments, 20,000 documents, 10,000
 * addresses and 5,000 funding sources. Deterministic for a given seed and `today` (dates are
 * relative to `today`, never read from the clock). Runs in one transaction.
 */
export async function seedPortfolio(db: Database, options: SeedOptions): Promise<SeedSummary> {
  const started = performance.now();
  checkOptions(options);
  const plan = planPortfolio({
    accountId: options.accountId.toLowerCase(),
    seed: options.seed,
    scale: options.scale,
    adminIds: options.adminIds,
    productId: options.productId ?? null,
    ...(options.today === undefined ? {} : { today: options.today }),
  });
  const planned = plannedTotal(plan);
  let total = planned;
  let done = 0;
  const progress = options.onProgress;
  const onChunk = (table: Table, rows: number): void => {
    done += rows;
    progress?.(done, total, table);
  };

  const inserted = await db.transaction(async (tx) => {
    // Counted from 0 on every run: a run undone as a deadlock runs again, whole (db/conflictRetry.ts).
    done = 0;
    total = planned;
    const { rows } = await tx.query<{ taken: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM loans WHERE account_id = $1) OR EXISTS (SELECT 1 FROM people WHERE account_id = $1) AS taken`,
      [options.accountId],
    );
    if (rows[0]?.taken) throw new SeedError(`account ${options.accountId} already has loans or people; seed an empty account`, 'account-not-empty');
    progress?.(0, total, 'people');
    // Seeding is an operator's bulk load, not a client's request: the service's statement timeout
    // (STATEMENT_TIMEOUT_MS, 10 s) would cancel it on a busy machine (the ledger's replay of
    // 500 loans takes seconds), so it does not apply to this transaction.
    await tx.query(`SET LOCAL statement_timeout = 0`);
    // The ledger's triggers would replay a loan for every chunk of its rows; the seeder defers
    // them (the replay's own switch, local to this transaction) and replays each loan once at the end.
    await tx.query(`SELECT set_config('loanql.replaying', 'on', true)`);
    // The portfolio is stored history, loaded as it is generated: its `loan_officer` and `broker`
    // values are fields of the demo product (`DEMO_CUSTOM_FIELDS`), but an existing account seeded
    // with `loanql seed` may have other fields or no product at all (then they are a removed
    // field's values, which loans keep), so the custom-field check of new writes (migrations
    // 0063, 0064) is off for this transaction.
    await tx.query(`SELECT set_config('loanql.custom_fields_unchecked', 'on', true)`);
    // The history is dated around the seed's `today`: while it is loaded, that is the business
    // date the database's rules judge it by (a reversal is not dated after the business date,
    // migration 0050), also when a test seeds a `today` ahead of the clock. Put back before the
    // replay below, which stores each ledger as of the real business date as before.
    const { rows: clock } = await tx.query<{ before: string | null }>(`SELECT current_setting('loanql.business_date', true) AS before`);
    await tx.query(`SELECT set_config('loanql.business_date', $1, true)`, [options.today ?? REFERENCE_DATE]);

    const writer = new BulkWriter(tx, options.accountId, onChunk);
    await writer.addAll('people', plan.people);
    // Statistics as each parent table is written (ANALYZE sees this transaction's own rows): the
    // foreign-key checks of the rows below are planned once per session, and planned from a
    // never-analyzed table's defaults they scan the whole table for every row checked.
    await tx.query(`ANALYZE people`);
    await writer.addAll('company_memberships', plan.memberships);
    // A closed loan of the plan is written in servicing: the ledger closes it once its payments pay it off (SPEC §12 R9).
    await writer.addAll('loans', plan.loans.map((loan) => (loan.row.status === 'closed' ? { ...loan.row, status: 'servicing' } : loan.row)));
    await tx.query(`ANALYZE loans`);
    await writer.addAll('borrows', plan.borrows);
    await writer.addAll('guarantees', plan.guarantees);
    await writer.addAll('addresses', plan.addresses);
    await writer.addAll('address_details', plan.addressDetails);
    await writer.addAll('valuations', plan.valuations);
    await writer.addAll('insurances', plan.insurances);
    let payments = 0;
    // Payoffs are written last, for the amount the ledger quotes on their day (SPEC §12 R5–R6).
    const payoffs: object[] = [];
    for (const loan of plan.schedulesAndPayments()) {
      for (const row of loan.schedules) if (writer.add('schedules', row)) await writer.flush('schedules');
      for (const row of loan.payments) {
        if (row.type === 'payoff') payoffs.push(row);
        else if (writer.add('payments', row)) await writer.flush('payments');
      }
      payments += loan.payments.length;
    }
    await writer.flush('payments');
    await writer.finish();
    // Statistics for the rows just written (ANALYZE sees this transaction's own rows): the
    // ledger's statements below are planned from them. Planned from the empty tables' statistics,
    // each chunk of the replay scanned every allocation written so far (the last of 20 chunks at
    // scale 1 took 40 times as long as the first).
    await tx.query(`ANALYZE loans, schedules, payments, payment_allocations, fees`);
    // In chunks: each statement stays well inside the statement timeout on a busy machine.
    for (let from = 0; from < payoffs.length; from += LEDGER_CHUNK) {
      const chunk = payoffs.slice(from, from + LEDGER_CHUNK);
      await tx.query(
        `INSERT INTO payments (account_id, id, loan_id, date, amount, type, method)
         SELECT $2::uuid, r.id, r.loan_id, r.date, greatest(0.01, (loanql_ledger($2::uuid, r.loan_id, r.date)).payoff), 'payoff', r.method
           FROM json_populate_recordset(NULL::payments, $1::json) r`,
        [JSON.stringify(chunk), options.accountId],
      );
      writer.inserted.payments += chunk.length;
      onChunk('payments', chunk.length);
    }
    total += payments - plan.counts.payments; // the plan's payment count is a target, this is the real one (fees with it)
    await writer.addAll('funding_sources', plan.fundingSources);
    for (const { document, link } of plan.documents()) {
      if (writer.add('documents', document)) await writer.flush('documents');
      if (writer.add('loan_documents', link)) await writer.flush('loan_documents');
    }
    await writer.flush('loan_documents');
    for (const task of plan.tasks()) if (writer.add('tasks', task)) await writer.flush('tasks');
    await writer.flush('tasks');
    for (const comment of plan.comments()) if (writer.add('comments', comment)) await writer.flush('comments');
    await writer.finish();
    await tx.query(`SELECT set_config('loanql.replaying', 'off', true)`);
    await tx.query(`SELECT set_config('loanql.custom_fields_unchecked', 'off', true)`);
    await tx.query(`SELECT set_config('loanql.business_date', $1, true)`, [clock[0]?.before ?? '']);
    // The investors' funding sources, written after the ANALYZE above: the replay's split of each
    // payment among them (SPEC §12 R10) looks them up by loan, and planned from a never-analyzed
    // table's defaults it took the (account, person) index instead — every source of the account
    // read for every payment and component: 1.8 of a scale-0.05 seed's 6.8 s of replay on PostgreSQL.
    await tx.query(`ANALYZE funding_sources`);
    // One replay statement per chunk of loans (10,000 loans in one statement passed the 10 s
    // statement timeout on a loaded 2-core machine).
    const { rows: loanIds } = await tx.query<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 ORDER BY id`, [options.accountId]);
    for (let from = 0; from < loanIds.length; from += LEDGER_CHUNK) {
      const ids = loanIds.slice(from, from + LEDGER_CHUNK).map((row) => row.id);
      await tx.query(`SELECT loanql_refresh_next(array_fill($1::uuid, ARRAY[cardinality($2::uuid[])]), $2::uuid[])`, [options.accountId, ids]);
      // The tables the replay writes were analyzed empty above: the replay's cached plans for them
      // (a loan's allocations, fees, states) were then made for empty tables — sequential scans,
      // each loan's reading every row written so far. Fresh statistics after each chunk invalidate
      // those plans, so each chunk is planned for the rows the last one left (after the last, the
      // seed's closing ANALYZE of every table does it).
      if (from + LEDGER_CHUNK < loanIds.length) await tx.query(`ANALYZE ${LEDGER_OUTPUT_TABLES}`);
    }
    return writer.inserted;
  });
  // Fresh statistics, so plans (and the console's EXPLAIN row estimates) know the rows just
  // loaded: PGlite has no autovacuum to gather them, and PostgreSQL's may take a while. The
  // ledger's own tables too (allocations and fees, which the replay wrote after their last
  // ANALYZE above): their statistics said empty, and the replay's plans cached in this session
  // from them joined every allocation to every changed line — deleting 10,000 schedule rows of
  // 175 loans afterwards took 24 s instead of 1.4 on PostgreSQL (tests/README.md, "How long", session 17).
  await db.query(`ANALYZE ${[...Object.keys(TABLES), 'payment_allocations', 'fees'].join(', ')}`);

  return {
    loans: inserted.loans,
    people: inserted.people,
    payments: inserted.payments,
    schedules: inserted.schedules,
    tasks: inserted.tasks,
    comments: inserted.comments,
    documents: inserted.documents,
    addresses: inserted.addresses,
    fundingSources: inserted.funding_sources,
    ms: Math.round(performance.now() - started),
  };
}
