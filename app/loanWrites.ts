import { Decimal } from 'decimal.js';
import { stringify } from 'lossless-json';
import type { Database, Queryable } from '../db/index.js';
import { inServicingYears, SERVICING_YEARS } from '../domain/calendar.js';
import { buildSchedule, ScheduleInputError, type Amortization, type Frequency, type Schedule, type ScheduleField, type ScheduleInput } from '../domain/schedule.js';
import { UserInputError } from './errors.js';
import { jsonValue } from './fieldValues.js';
import { parseLoanBody, sentStatus, type ContactRequest, type ContactRole, type LoanChanges } from './loanInput.js';
import { ADMIN_GRANT, type LoanWriteGrant } from './loanWriteGrant.js';
import { DEFAULT_AMORTIZATION, DEFAULT_STATUS, loadDefaultProduct, type Product } from './products.js';

/**
 * Loan writes of the REST interface (SPEC §6–7). Each write is one transaction: the loan, its
 * custom fields, its schedule and (on creation) its contacts. Contacts are found or created
 * with `INSERT … ON CONFLICT` on the identity indexes of `people`, so concurrent requests for
 * the same new person create exactly one.
 */

/** The role's grant for a write, made once the account's product is known (the admin's by default). */
export type GrantFor = (product: Product) => LoanWriteGrant;

/** What happened to one contact prefix, reported in the `POST` response. */
export type ContactOutcome =
  | { readonly outcome: 'found' | 'created'; readonly person_id: string; readonly company?: { readonly outcome: 'found' | 'created'; readonly person_id: string } }
  | { readonly outcome: 'not_found'; readonly requested_id: string };

export interface CreatedLoan {
  readonly id: string;
  readonly contacts: Readonly<Record<ContactRole, ContactOutcome | null>>;
}

/** The stored loan columns a schedule is built from (decimals and dates as text). */
export interface ScheduleColumns {
  amount: string | null;
  rate: string | null;
  term: number | null;
  frequency: Frequency | null;
  amortization: Amortization;
  regular_payment: string | null;
  date_funded: string | null;
  first_payment_date: string | null;
  date_maturity: string | null;
  regular_payment_given: boolean;
  date_maturity_given: boolean;
}

/** The loan columns a write sets, as stored. */
interface LoanColumns extends ScheduleColumns {
  name: string;
  status: string;
}

/** The input of `buildSchedule` for stored columns, or null when the loan has no schedule (an input missing). */
export function scheduleInputOf(columns: ScheduleColumns): ScheduleInput | null {
  const { amount, rate, term, frequency } = columns;
  if (amount === null || rate === null || term === null || frequency === null) return null;
  if (columns.date_funded === null && columns.first_payment_date === null) return null;
  return {
    amount,
    rate,
    term,
    frequency,
    amortization: columns.amortization,
    dateFunded: columns.date_funded,
    firstPaymentDate: columns.first_payment_date,
    regularPayment: columns.regular_payment_given ? columns.regular_payment : null,
  };
}

const SCHEDULE_INPUTS = ['amount', 'rate', 'term', 'frequency', 'amortization', 'date_funded', 'first_payment_date'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Body names of the loan columns and of the schedule inputs of `domain/` (for 400s). */
const BODY_NAME: ReadonlyMap<string, string> = new Map([
  ['amount', 'Amount'],
  ['rate', 'Rate'],
  ['term', 'Term'],
  ['frequency', 'Frequency'],
  ['amortization', 'Amortization'],
  ['date_funded', 'Date_Funded'],
  ['first_payment_date', 'First_Payment_Date'],
  ['regular_payment', 'Regular_Payment'],
  ['date_maturity', 'Date_Maturity'],
]);
const COLUMN_OF_INPUT: ReadonlyMap<ScheduleField, string> = new Map<ScheduleField, string>([
  ['amount', 'amount'],
  ['rate', 'rate'],
  ['term', 'term'],
  ['frequency', 'frequency'],
  ['amortization', 'amortization'],
  ['dateFunded', 'date_funded'],
  ['firstPaymentDate', 'first_payment_date'],
  ['regularPayment', 'regular_payment'],
]);

/** Applies the body's column changes to a loan's columns; `given` flags follow SPEC §7. */
function applyColumns(base: LoanColumns, changes: LoanChanges): LoanColumns {
  const next: LoanColumns = { ...base };
  for (const [column, value] of changes.columns) (next as unknown as Record<string, unknown>)[column] = value;
  if (changes.columns.has('regular_payment')) next.regular_payment_given = changes.columns.get('regular_payment') !== null;
  if (changes.columns.has('date_maturity')) next.date_maturity_given = changes.columns.get('date_maturity') !== null;
  return next;
}

function refused(message: string, problems: ReadonlyMap<string, string>): UserInputError {
  return new UserInputError(message, 400, Object.fromEntries(problems));
}

/**
 * SPEC §7's rules on the loan's fields that hold whether or not a schedule can be built yet:
 * no Regular_Payment on an interest_only loan, no Date_Funded after First_Payment_Date, and its
 * dates in the years a loan is serviced in.
 */
function checkServicingRules(columns: LoanColumns, changes: LoanChanges): void {
  const problems = new Map<string, string>();
  if (columns.amortization === 'interest_only' && columns.regular_payment_given) {
    const reason = 'cannot be given for an interest_only loan: each row pays the interest and the last adds the principal (send null, or make the loan amortizing)';
    problems.set('Regular_Payment', reason);
    if (changes.columns.has('amortization') && !changes.columns.has('regular_payment')) problems.set('Amortization', `interest_only does not take a given Regular_Payment (${columns.regular_payment})`);
  }
  // A loan's dates are days its payments and ledger take (domain/calendar.ts, SERVICING_YEARS):
  // "0026-01-15" for 2026-01-15 made a loan whose every row was long late — late fees dated in
  // the year 27 — and that no payment could be dated to pay. Checked when the body gives the
  // date, so a legacy loan dated outside them can still be renamed.
  for (const column of ['date_funded', 'first_payment_date', 'date_maturity'] as const) {
    const value = columns[column];
    if (changes.columns.has(column) && value !== null && !inServicingYears(value)) problems.set(BODY_NAME.get(column)!, `${value} is not in the years ${SERVICING_YEARS.first}–${SERVICING_YEARS.last}, the days a loan's payments and ledger take`);
  }
  if (!problems.has('Date_Funded') && !problems.has('First_Payment_Date') && columns.date_funded !== null && columns.first_payment_date !== null && columns.date_funded > columns.first_payment_date) {
    const reason = `Date_Funded (${columns.date_funded}) is after First_Payment_Date (${columns.first_payment_date}); a loan is funded on or before its first payment`;
    problems.set('Date_Funded', reason);
    problems.set('First_Payment_Date', reason);
  }
  if (problems.size) throw refused(`invalid field${problems.size > 1 ? 's' : ''}: ${[...problems.keys()].join(', ')}`, problems);
}

/**
 * The schedule of these columns (SPEC §7), or null when an input is missing: amount, rate,
 * term, frequency and a start date. A combination §7 refuses is a 400 naming the fields involved
 * (a payment rounding to 0.00, an amount past numeric(14,2), a given payment not above the
 * first row's interest, …); so is a given Date_Maturity other than the schedule's last date.
 */
function scheduleOf(columns: LoanColumns): Schedule | null {
  const input = scheduleInputOf(columns);
  if (!input) return null;
  let schedule: Schedule;
  try {
    schedule = buildSchedule(input);
  } catch (error) {
    if (!(error instanceof ScheduleInputError)) throw error;
    const involved = error.fields.length ? error.fields.map((field) => COLUMN_OF_INPUT.get(field)!) : SCHEDULE_INPUTS;
    // The schedule's own words name its inputs (regularPayment): the body's keys instead (Regular_Payment).
    const said = error.fields.reduce((text, field) => text.replaceAll(new RegExp(`\\b${field}\\b`, 'g'), BODY_NAME.get(COLUMN_OF_INPUT.get(field)!)!), error.message);
    const problems = new Map(involved.map((column) => [BODY_NAME.get(column)!, `no schedule can be built: ${said}`]));
    throw refused(`no schedule can be built from these fields: ${said}`, problems);
  }
  if (!inServicingYears(schedule.dateMaturity)) {
    // Rows after 2999-12-31 could never be paid (a payment is dated in SERVICING_YEARS) nor quoted.
    const said = `its last due date ${schedule.dateMaturity} is after ${SERVICING_YEARS.last}-12-31 (a loan's due dates fall in the years ${SERVICING_YEARS.first}–${SERVICING_YEARS.last}, the days its payments take)`;
    const involved = ['term', 'frequency', 'date_funded', 'first_payment_date'].filter((column) => columns[column as keyof LoanColumns] !== null);
    throw refused(`no schedule can be built from these fields: ${said}`, new Map(involved.map((column) => [BODY_NAME.get(column)!, `no schedule can be built: ${said}`])));
  }
  if (columns.date_maturity_given && columns.date_maturity !== schedule.dateMaturity) {
    const reason = `is ${columns.date_maturity} but the schedule's last due date is ${schedule.dateMaturity}; send that date, or null to derive it`;
    throw refused(`Date_Maturity differs from the schedule's last due date ${schedule.dateMaturity}`, new Map([['Date_Maturity', reason]]));
  }
  return schedule;
}

/** Fills the derived fields (SPEC §7): regular payment and maturity come from the schedule unless given. */
function withDerivedFields(columns: LoanColumns, schedule: Schedule | null): LoanColumns {
  return {
    ...columns,
    regular_payment: columns.regular_payment_given ? columns.regular_payment : (schedule?.regularPayment ?? null),
    date_maturity: columns.date_maturity_given ? columns.date_maturity : (schedule?.dateMaturity ?? null),
  };
}

function scheduleInputsChanged(before: LoanColumns, after: LoanColumns): boolean {
  const same = (a: unknown, b: unknown): boolean => {
    if (a === null || b === null) return a === b;
    if (typeof a === 'string' && typeof b === 'string' && /^-?[\d.]+$/.test(a) && /^-?[\d.]+$/.test(b)) return new Decimal(a).eq(b);
    return String(a) === String(b);
  };
  if (SCHEDULE_INPUTS.some((column) => !same(before[column], after[column]))) return true;
  if (before.regular_payment_given !== after.regular_payment_given) return true;
  return after.regular_payment_given && !same(before.regular_payment, after.regular_payment);
}

function customFieldsJson(product: Product, changes: LoanChanges): { set: string; remove: string[] } {
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  const rules = new Map(product.customFields.map((field) => [field.key, field.rule]));
  for (const [key, value] of changes.customFields) {
    if (value === null) remove.push(key);
    else set[key] = jsonValue(rules.get(key)!, value);
  }
  return { set: stringify(set) ?? '{}', remove };
}

/** Replaces a loan's schedule rows (none when `schedule` is null); the triggers keep `is_next` right. */
export async function replaceSchedule(tx: Queryable, accountId: string, loanId: string, schedule: Schedule | null): Promise<void> {
  await tx.query('DELETE FROM schedules WHERE account_id = $1 AND loan_id = $2', [accountId, loanId]);
  if (!schedule) return;
  await tx.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, $2, r.number, r.due, r.payment, r.principal, r.interest, r.balance
       FROM json_to_recordset($3::json) AS r (number integer, due date, payment numeric, principal numeric, interest numeric, balance numeric)`,
    [accountId, loanId, JSON.stringify(schedule.rows)],
  );
}

const EMPTY_LOAN: LoanColumns = {
  name: '',
  amount: null,
  status: DEFAULT_STATUS,
  rate: null,
  term: null,
  frequency: null,
  amortization: DEFAULT_AMORTIZATION,
  regular_payment: null,
  date_funded: null,
  first_payment_date: null,
  date_maturity: null,
  regular_payment_given: false,
  date_maturity_given: false,
};

/** `POST /api/loan`: checks the body, then creates the loan, its schedule and its contacts in one transaction. */
export async function createLoan(db: Database, accountId: string, body: unknown, grantFor: GrantFor = () => ADMIN_GRANT): Promise<CreatedLoan> {
  const product = await loadDefaultProduct(db, accountId);
  const changes = parseLoanBody(product, body, 'create');
  const grant = grantFor(product);
  grant.checkChanges(changes);
  const requested = applyColumns(EMPTY_LOAN, changes);
  checkServicingRules(requested, changes);
  const schedule = scheduleOf(requested);
  const columns = withDerivedFields(requested, schedule);
  const custom = customFieldsJson(product, changes);

  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `INSERT INTO loans (account_id, product_id, name, amount, status, rate, term, frequency, amortization, regular_payment,
                          date_funded, first_payment_date, date_maturity, regular_payment_given, date_maturity_given, custom_fields)
       VALUES ($1, $2, $3, $4::numeric, $5, $6::numeric, $7, $8, $9, $10::numeric, $11::date, $12::date, $13::date, $14, $15, $16::jsonb)
       RETURNING id`,
      [accountId, product.id, ...columnValues(columns), custom.set],
    ).catch(refuseLedgerRules);
    const loanId = rows[0]!.id;
    await replaceSchedule(tx, accountId, loanId, schedule);
    const contacts: Record<ContactRole, ContactOutcome | null> = { borrower: null, guarantor: null };
    for (const role of ['borrower', 'guarantor'] as const) {
      const request = changes.contacts[role];
      if (request) contacts[role] = await attachContact(tx, accountId, loanId, role, request);
    }
    await grant.finish(tx, loanId);
    return { id: loanId, contacts };
  }).catch(refuseAmountTooLarge(changes));
}

function columnValues(columns: LoanColumns): unknown[] {
  return [
    columns.name,
    columns.amount,
    columns.status,
    columns.rate,
    columns.term,
    columns.frequency,
    columns.amortization,
    columns.regular_payment,
    columns.date_funded,
    columns.first_payment_date,
    columns.date_maturity,
    columns.regular_payment_given,
    columns.date_maturity_given,
  ];
}

/**
 * `PATCH /api/loan/{id}`: field updates in one transaction; the schedule is regenerated when
 * one of its inputs changes. Returns false when the account has no such loan.
 */
export async function updateLoan(db: Database, accountId: string, loanId: string, body: unknown, grantFor: GrantFor = () => ADMIN_GRANT): Promise<boolean> {
  const product = await loadDefaultProduct(db, accountId);
  try {
    return await updateLoanOf(db, accountId, loanId, body, product, grantFor);
  } catch (error) {
    throw await withStatusNamed(db, accountId, loanId, body, grantFor(product), error);
  }
}

async function updateLoanOf(db: Database, accountId: string, loanId: string, body: unknown, product: Product, grantFor: GrantFor): Promise<boolean> {
  const changes = parseLoanBody(product, body, 'update');
  if (!UUID.test(loanId)) return false;
  const grant = grantFor(product);
  const custom = customFieldsJson(product, changes);

  return db.transaction(async (tx) => {
    const { rows } = await tx.query<LoanColumns>(
      `SELECT name, amount::text AS amount, status, rate::text AS rate, term, frequency, amortization, regular_payment::text AS regular_payment,
              date_funded::text AS date_funded, first_payment_date::text AS first_payment_date, date_maturity::text AS date_maturity,
              regular_payment_given, date_maturity_given
         FROM loans WHERE account_id = $1 AND id = $2 FOR UPDATE`,
      [accountId, loanId],
    );
    const before = rows[0];
    // A loan outside the role's update filter is, to this key, no such loan.
    if (!before || !(await grant.mayWrite(tx, loanId))) return false;
    grant.checkChanges(changes);
    if (changes.columns.size === 0 && changes.customFields.size === 0) return true;
    const requested = applyColumns(before, changes);
    // §7's rules are checked when the body touches a field they are about, so a legacy loan
    // that breaks them can still be renamed.
    if ([...changes.columns.keys()].some((column) => BODY_NAME.has(column))) checkServicingRules(requested, changes);
    let columns = requested;
    if (scheduleInputsChanged(before, requested)) {
      const schedule = scheduleOf(requested);
      columns = withDerivedFields(requested, schedule);
      await replaceSchedule(tx, accountId, loanId, schedule);
    } else if (changes.columns.has('regular_payment') || changes.columns.has('date_maturity')) {
      // A given value was set (checked against the schedule) or cleared (derived again).
      const schedule = scheduleOf(requested);
      columns = withDerivedFields(requested, schedule);
    }
    // The status is written only when the body gives it: the schedule just replaced has replayed
    // the ledger, which may have moved it (a paid-off loan whose rate is corrected holds credit:
    // `overpaid`; whose term is extended owes again: `servicing`, R9), and writing back the
    // status read before would undo that — or be refused as closing by hand with money owed.
    await tx.query(
      `UPDATE loans SET name = $3, amount = $4::numeric, status = CASE WHEN $18 THEN $5 ELSE status END, rate = $6::numeric, term = $7,
              frequency = $8, amortization = $9,
              regular_payment = $10::numeric, date_funded = $11::date, first_payment_date = $12::date, date_maturity = $13::date,
              regular_payment_given = $14, date_maturity_given = $15,
              custom_fields = (custom_fields || $16::jsonb) - $17::text[], updated_at = now()
        WHERE account_id = $1 AND id = $2`,
      [accountId, loanId, ...columnValues(columns), custom.set, custom.remove, changes.columns.has('status')],
    ).catch(refuseLedgerRules);
    await grant.finish(tx, loanId);
    return true;
  }).catch(refuseAmountTooLarge(changes));
}

/** Thrown to roll back `statusRefusal`'s trial write. */
const TRIAL_ONLY = Symbol('trial only');

/**
 * A PATCH refused for other fields (their checks, §7's rules, the database's) whose `Status` the
 * ledger would refuse too: the 400 names Status with them, as POST names an `overpaid` Status with
 * the rest of its body's problems (before, Status was named only in a second 400, once the rest
 * was fixed). The status is judged by the database itself (`statusRefusal`) against the loan as
 * stored; any other error, or a Status already named, is returned as it was.
 */
async function withStatusNamed(db: Database, accountId: string, loanId: string, body: unknown, grant: LoanWriteGrant, error: unknown): Promise<unknown> {
  if (!(error instanceof UserInputError) || error.status !== 400 || !error.fields) return error;
  const status = sentStatus(body);
  if (!status || Object.hasOwn(error.fields, status.sent)) return error;
  const refusal = await statusRefusal(db, accountId, loanId, status.value, grant);
  if (!refusal) return error;
  const fields = new Map([...Object.entries(error.fields), [status.sent, refusal]]);
  return new UserInputError(`invalid fields: ${[...fields.keys()].join(', ')}`, 400, fields);
}

/**
 * What the database says to `status` written on the loan by hand (R9's rules, migrations 0012,
 * 0053, 0078), in a transaction always rolled back; null when it takes it, or when the loan is not
 * one this key may write or may not set the status of (then it learns nothing of the loan).
 */
async function statusRefusal(db: Database, accountId: string, loanId: string, status: string, grant: LoanWriteGrant): Promise<string | null> {
  if (!UUID.test(loanId)) return null;
  try {
    grant.checkChanges({ columns: new Map([['status', status]]), customFields: new Map(), contacts: {} });
  } catch {
    return null;
  }
  try {
    await db.transaction(async (tx) => {
      const { rows } = await tx.query('SELECT 1 FROM loans WHERE account_id = $1 AND id = $2 FOR UPDATE', [accountId, loanId]);
      if (!rows.length || !(await grant.mayWrite(tx, loanId))) throw TRIAL_ONLY;
      await tx.query('UPDATE loans SET status = $3 WHERE account_id = $1 AND id = $2', [accountId, loanId, status]);
      throw TRIAL_ONLY;
    });
  } catch (error) {
    return error === TRIAL_ONLY ? null : (ledgerRuleRefusal(error)?.Status ?? null);
  }
  return null;
}

/** The field and sentence of a ledger rule the database refused a loan write for, or null (`refuseLedgerRules`). */
function ledgerRuleRefusal(error: unknown): Readonly<Record<string, string>> | null {
  const { constraint, code, column } = error as { constraint?: unknown; code?: unknown; column?: unknown };
  const message = (error as Error).message;
  if (code === '23514' && ['loans_close_with_balance', 'loans_overpaid_by_ledger', 'loans_funded_not_lead', 'loans_settled_by_ledger'].includes(constraint as string)) return { Status: message };
  // Funded after the loan's first payment or fee (migration 0084).
  if (code === '22023' && column === 'date_funded') return { Date_Funded: message.replace(/^date_funded: /, '') };
  // R10: the amount may not fall below what the loan's funding sources put in (migration 0024).
  if (code === '23514' && constraint === 'loans_amount_covers_funding') return { Amount: message };
  return null;
}

/**
 * The ledger's rules kept by the database: closing a serviced loan by hand while money is owed, or
 * setting `overpaid` by hand, is a 400 naming Status and what is owed (SPEC §12 R9), as is making a
 * loan that took payments a lead again (migration 0053), or a paid-off one `servicing` (0078); an amount
 * below what its funding sources put in, a 400 naming Amount (R10); a `Date_Funded` after the loan's
 * first payment or fee, a 400 naming Date_Funded (0084).
 */
function refuseLedgerRules(error: unknown): never {
  const refusal = typeof error === 'object' && error !== null ? ledgerRuleRefusal(error) : null;
  if (!refusal) throw error;
  const [field, said] = Object.entries(refusal)[0]!;
  throw new UserInputError(field === 'Date_Funded' ? `Date_Funded: ${said}` : said, 400, refusal);
}

/**
 * A write whose replay computes an amount too large to store (SQLSTATE 22003): the loan's fees,
 * a balance or the credit past 999,999,999,999.99 — late fees the product's settings derive for
 * rows a back-dated loan already has late, say. Every input was checked against its column before,
 * so it is the request's 400, naming the fields of the body the ledger follows; nothing is written
 * (docs/ledger.md, "An amount too large to store").
 */
function refuseAmountTooLarge(changes: LoanChanges): (error: unknown) => never {
  return (error) => {
    if ((error as { code?: unknown }).code !== '22003') throw error;
    const given = [...changes.columns.keys()].flatMap((column) => (column === 'status' ? ['Status'] : BODY_NAME.has(column) ? [BODY_NAME.get(column)!] : []));
    const message =
      "the loan's ledger would hold an amount too large to store (its fees, a balance or the credit past 999,999,999,999.99, " +
      "e.g. the late fees the product's settings give its rows already late); nothing was written";
    throw new UserInputError(message, 400, new Map((given.length ? given : ['Amount']).map((name) => [name, message])));
  };
}

/** Attaches one contact per the rules of interface §4.2 and SPEC §6. */
async function attachContact(tx: Queryable, accountId: string, loanId: string, role: ContactRole, request: ContactRequest): Promise<ContactOutcome> {
  const isBorrower = role === 'borrower';
  let attached: { outcome: 'found' | 'created'; person_id: string; company?: { outcome: 'found' | 'created'; person_id: string } };
  switch (request.kind) {
    case 'id': {
      // An id not found (or of another account, or not an id at all) attaches nobody.
      if (!UUID.test(request.id)) return { outcome: 'not_found', requested_id: request.id };
      const { rows } = await tx.query<{ id: string }>(
        `UPDATE people SET is_borrower = is_borrower OR $3 WHERE account_id = $1 AND id = $2 RETURNING id`,
        [accountId, request.id, isBorrower],
      );
      if (!rows[0]) return { outcome: 'not_found', requested_id: request.id };
      attached = { outcome: 'found', person_id: rows[0].id };
      break;
    }
    case 'company':
      attached = await findOrCreateCompany(tx, accountId, request.name, request.email, isBorrower);
      break;
    case 'individual': {
      const company = request.company === null ? null : await findOrCreateCompany(tx, accountId, request.company, null, false);
      const person = await findOrCreateIndividual(tx, accountId, request.name, request.email, isBorrower);
      if (company) {
        await tx.query(
          `INSERT INTO company_memberships (account_id, company_id, person_id) VALUES ($1, $2, $3)
           ON CONFLICT (account_id, company_id, person_id) DO NOTHING`,
          [accountId, company.person_id, person.person_id],
        );
      }
      attached = company ? { ...person, company } : person;
      break;
    }
  }
  await tx.query(
    `INSERT INTO ${isBorrower ? 'borrows' : 'guarantees'} (account_id, loan_id, person_id) VALUES ($1, $2, $3)
     ON CONFLICT (account_id, loan_id, person_id) DO NOTHING`,
    [accountId, loanId, attached.person_id],
  );
  return attached;
}

type FoundOrCreated = { outcome: 'found' | 'created'; person_id: string };

/** The company of that name (case-insensitive), created when there is none. */
async function findOrCreateCompany(tx: Queryable, accountId: string, name: string, email: string | null, isBorrower: boolean): Promise<FoundOrCreated> {
  const { rows } = await tx.query<{ id: string; created: boolean }>(
    `INSERT INTO people (account_id, name, email, entity_type, is_borrower) VALUES ($1, $2, $3, 'company', $4)
     ON CONFLICT (account_id, (lower(name))) WHERE entity_type = 'company'
       DO UPDATE SET is_borrower = people.is_borrower OR EXCLUDED.is_borrower
     RETURNING id, (xmax = 0) AS created`,
    [accountId, name, email, isBorrower],
  );
  return { outcome: rows[0]!.created ? 'created' : 'found', person_id: rows[0]!.id };
}

/** With an e-mail: the individual of that name and e-mail (case-insensitive), or a new one. Without: always a new one. */
async function findOrCreateIndividual(tx: Queryable, accountId: string, name: string, email: string | null, isBorrower: boolean): Promise<FoundOrCreated> {
  if (email === null) {
    const { rows } = await tx.query<{ id: string }>(
      `INSERT INTO people (account_id, name, entity_type, is_borrower) VALUES ($1, $2, 'individual', $3) RETURNING id`,
      [accountId, name, isBorrower],
    );
    return { outcome: 'created', person_id: rows[0]!.id };
  }
  const { rows } = await tx.query<{ id: string; created: boolean }>(
    `INSERT INTO people (account_id, name, email, entity_type, is_borrower) VALUES ($1, $2, $3, 'individual', $4)
     ON CONFLICT (account_id, (lower(name)), (lower(email))) WHERE entity_type = 'individual' AND email IS NOT NULL
       DO UPDATE SET is_borrower = people.is_borrower OR EXCLUDED.is_borrower
     RETURNING id, (xmax = 0) AS created`,
    [accountId, name, email, isBorrower],
  );
  return { outcome: rows[0]!.created ? 'created' : 'found', person_id: rows[0]!.id };
}

