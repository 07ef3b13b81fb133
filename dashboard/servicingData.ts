import { parse } from 'lossless-json';
import type { Database } from '../db/index.js';
import { RequestError, type GraphEngine } from '../engine/index.js';
import { fixedViewEngine, type FixedView } from '../app/fixedView.js';
import { businessDate, LeadHasNoPayoff, payoffQuoteJson } from '../app/ledgerReads.js';
import { OPEN_TASKS_WHERE, type TaskFilter } from './taskForm.js';

/**
 * The servicing pages' data (Loans, People): every read and write is a GraphQL document run by
 * the query engine for the session's account, so each page is also a test of the engine.
 *
 * Like the REST loan routes (`app/loanReads.ts`), the pages use a fixed view of the tables
 * (`app/fixedView.ts`: the loans and links shared with them, and the collections below), not the
 * admin-edited metadata file: hiding a collection from the API must not break
 * the servicing screens, and a comment written here records its author (`comments.admin_id`,
 * which the API's metadata does not let a key write). The documents are the server's own; the
 * admin id is the session's, never a form's. Numbers keep PostgreSQL's exact digits
 * (lossless-json: `100000.00` stays `100000.00`).
 */
const SERVICING_VIEW: FixedView = {
  loanRelationships: {
    loan_documents: { array: 'loan_documents', on: { id: 'loan_id' } },
    address_details: { array: 'address_details', on: { id: 'loan_id' } },
    payments: { array: 'payments', on: { id: 'loan_id' } },
    schedules: { array: 'schedules', on: { id: 'loan_id' } },
    tasks: { array: 'tasks', on: { id: 'loan_id' } },
    comments: { array: 'comments', on: { id: 'loan_id' } },
    funding_sources: { array: 'funding_sources', on: { id: 'loan_id' } },
    fees: { array: 'fees', on: { id: 'loan_id' } },
  },
  collections: {
    people: {
      table: 'people',
      primary_key: 'id',
      fields: {
        id: 'uuid',
        name: 'text',
        email: 'text',
        phone: 'text',
        status: 'text',
        entity_type: 'text',
        is_borrower: 'boolean',
        is_investor: 'boolean',
        created_at: 'timestamptz',
      },
      relationships: {
        borrows: { array: 'borrows', on: { id: 'person_id' } },
        guarantees: { array: 'guarantees', on: { id: 'person_id' } },
        funding_sources: { array: 'funding_sources', on: { id: 'person_id' } },
      },
    },
    funding_sources: {
      table: 'funding_sources',
      primary_key: 'id',
      fields: {
        id: 'uuid',
        person_id: 'uuid',
        loan_id: 'uuid',
        class: 'text',
        rate: 'numeric',
        original_amount: 'numeric',
        committed_amount: 'numeric',
        date_funded: 'date',
      },
      relationships: { loan: { object: 'loans', on: { loan_id: 'id' } }, person: { object: 'people', on: { person_id: 'id' } } },
    },
    payments: {
      table: 'payments',
      primary_key: 'id',
      fields: {
        id: 'uuid',
        loan_id: 'uuid',
        date: 'date',
        amount: 'numeric',
        type: 'text',
        method: 'text',
        date_reversed: 'date',
        reversal_reason: 'text',
        posted_at: 'timestamptz',
      },
      relationships: { allocations: { array: 'payment_allocations', on: { id: 'payment_id' } } },
      insert: { columns: ['loan_id', 'date', 'amount', 'type', 'method'] },
      update: { columns: ['date_reversed', 'reversal_reason'] },
    },
    payment_allocations: {
      table: 'payment_allocations',
      primary_key: 'id',
      fields: {
        id: 'uuid',
        loan_id: 'uuid',
        payment_id: 'uuid',
        row_number: 'integer',
        fee_id: 'uuid',
        component: 'text',
        amount: 'numeric',
        position: 'integer',
      },
      relationships: { fee: { object: 'fees', on: { fee_id: 'id' } } },
    },
    fees: {
      table: 'fees',
      primary_key: 'id',
      fields: {
        id: 'uuid',
        loan_id: 'uuid',
        kind: 'text',
        row_number: 'integer',
        date: 'date',
        amount: 'numeric',
        paid: 'numeric',
        waived: 'numeric',
        waived_on: 'date',
        waived_by: 'text',
        waived_reason: 'text',
        description: 'text',
        created_at: 'timestamptz',
      },
      // A fee written here is a manual one, as the API's metadata presets it (late and NSF fees are the ledger's).
      insert: { columns: ['loan_id', 'date', 'amount', 'description'], set: { kind: 'manual' } },
    },
    // A waiver (docs/ledger.md, "Fees, waivers and the daily job"): one per fee, never changed; its
    // trigger dates it the business date, checks the fee has something unpaid, and replays the loan.
    fee_waivers: {
      table: 'fee_waivers',
      primary_key: 'id',
      fields: { id: 'uuid', fee_id: 'uuid', loan_id: 'uuid', waived_on: 'date', waived_by: 'text', reason: 'text', created_at: 'timestamptz' },
      insert: { columns: ['fee_id', 'waived_by', 'reason'] },
    },
    schedules: {
      table: 'schedules',
      primary_key: 'id',
      fields: {
        id: 'uuid',
        loan_id: 'uuid',
        number: 'integer',
        due: 'date',
        payment: 'numeric',
        principal: 'numeric',
        interest: 'numeric',
        balance: 'numeric',
        is_next: 'boolean',
      },
      relationships: { loan: { object: 'loans', on: { loan_id: 'id' } } },
    },
    tasks: {
      table: 'tasks',
      primary_key: 'id',
      fields: { id: 'uuid', loan_id: 'uuid', name: 'text', status: 'text', date_due: 'date', created_at: 'timestamptz', assignee_id: 'uuid' },
      relationships: { loan: { object: 'loans', on: { loan_id: 'id' } }, assignee: { object: 'admins', on: { assignee_id: 'id' } } },
      insert: { columns: ['loan_id', 'name', 'date_due', 'assignee_id'] },
      // The Tasks page completes a task and edits its name, due day and assignee (the API's columns too).
      update: { columns: ['name', 'status', 'date_due', 'assignee_id'] },
    },
    comments: {
      table: 'comments',
      primary_key: 'id',
      fields: { id: 'uuid', loan_id: 'uuid', admin_id: 'uuid', text: 'text', created_at: 'timestamptz' },
      relationships: { admin: { object: 'admins', on: { admin_id: 'id' } } },
      insert: { columns: ['loan_id', 'admin_id', 'text'] },
    },
    // Listed (by the task forms' assignee choice) and read as a comment's author or a task's assignee; never the password hash.
    admins: { table: 'admins', primary_key: 'id', root_fields: ['select'], fields: { id: 'uuid', name: 'text', email: 'text' } },
    loan_documents: {
      table: 'loan_documents',
      primary_key: 'id',
      fields: { id: 'uuid', loan_id: 'uuid', document_id: 'uuid' },
      relationships: { document: { object: 'documents', on: { document_id: 'id' } } },
    },
    documents: { table: 'documents', primary_key: 'id', fields: { id: 'uuid', name: 'text', status: 'text', type: 'text', uploaded_date: 'date' } },
    address_details: {
      table: 'address_details',
      primary_key: 'id',
      fields: { id: 'uuid', loan_id: 'uuid', address_id: 'uuid' },
      relationships: { address: { object: 'addresses', on: { address_id: 'id' } } },
    },
    addresses: {
      table: 'addresses',
      primary_key: 'id',
      fields: { id: 'uuid', street1: 'text', city: 'text', state: 'text', zipcode: 'text' },
      relationships: { valuations: { array: 'valuations', on: { id: 'address_id' } }, insurances: { array: 'insurances', on: { id: 'address_id' } } },
    },
    valuations: {
      table: 'valuations',
      primary_key: 'id',
      fields: { id: 'uuid', address_id: 'uuid', value: 'numeric', valuation_type: 'text', report_date: 'date' },
    },
    insurances: {
      table: 'insurances',
      primary_key: 'id',
      fields: { id: 'uuid', address_id: 'uuid', carrier: 'text', type: 'text', coverage_amount: 'numeric', expiration: 'date' },
    },
  },
};

export { UUID } from '../app/fixedView.js';

/** A GraphQL response's `data`, numbers as lossless-json's `LosslessNumber` (their exact text via `String()`). */
export type Data = Record<string, unknown>;

/** The engine of the servicing view; `ServicingData.of(db)` builds it once per database. */
export class ServicingData {
  private constructor(private readonly engine: GraphEngine) {}

  static async create(db: Database): Promise<ServicingData> {
    return new ServicingData(await fixedViewEngine(db, SERVICING_VIEW, 64));
  }

  /**
   * Runs a query or a mutation (a mutation in one transaction) for the account and returns its
   * `data`. A client's mistake (a value the database refuses, say) throws `RequestError`.
   */
  async run(db: Database, accountId: string, query: string, variables: Record<string, unknown> = {}): Promise<Data> {
    const response = parse(await this.engine.execute(db, { query, variables }, accountId)) as { data?: Data; errors?: { message: string }[] };
    if (response.errors?.length || !response.data) throw new RequestError((response.errors ?? [{ message: 'no data' }]).map((error) => ({ message: error.message, extensions: { code: 'execution-error' } })), 'execution');
    return response.data;
  }

  /** The servicer's start page: see `startPageData`. */
  startPage(db: Database, accountId: string, tasks: OpenTasksShown): Promise<StartPageData> {
    return startPageData(this, db, accountId, tasks);
  }

}

/**
 * The first message of a refused request, for showing next to a form: without the mutation's
 * name the engine puts first (`insert_payments_one: …`), and in a clerk's words for the
 * database rules whose own message names only the rule (a trigger's rule already says what is
 * wrong: "a refund of 50.00 is more than the loan's credit balance of 0.00 on …"). A column the
 * rule names first is named by its label in the form (`labels`: `date_reversed` → `Date
 * reversed`), as the form's own checks name it.
 */
export function requestErrorMessage(error: RequestError, labels: ReadonlyMap<string, string> = new Map()): string {
  const first = error.errors[0];
  if (!first) return 'the request was refused';
  const constraint = first.extensions?.constraint;
  const known = typeof constraint === 'string' ? RULE_MESSAGES.get(constraint) : undefined;
  if (known) return known;
  const alias = first.path?.[0];
  const message = typeof alias === 'string' && first.message.startsWith(`${alias}: `) ? first.message.slice(alias.length + 2) : first.message;
  // The column a trigger names (`date_reversed: a reversal is dated …`) by the form's label for it.
  const column = /^([a-z_]+): /.exec(message)?.[1];
  const label = column === undefined ? undefined : labels.get(column);
  return label === undefined ? message : `${label}: ${message.slice(column!.length + 2)}`;
}

/** What a form says when a write breaks one of these CHECK constraints (PostgreSQL's message names only the rule). */
const RULE_MESSAGES: ReadonlyMap<string, string> = new Map([
  ['payments_reversed_after_posting', "Date reversed: a payment is reversed on or after its own date, not before."],
  ['payments_amount_positive', 'Amount: a payment is more than 0.00.'],
  ['fees_amount_positive', 'Amount: a fee is more than 0.00.'],
  ['fee_waivers_one_per_fee', 'This fee was already waived: a fee is waived once.'],
]);

/**
 * A payoff quote of the loan for a day (SPEC §12 R5; null: the account's business date), as
 * `GET /api/loan/{id}/payoff?date=` answers it (`app/ledgerReads.ts`: the database's own replay,
 * `loanql_ledger`, so the quote is what a payment of that amount on that day would do), numbers
 * with their exact digits. Not a GraphQL document: its parts all come from one replay
 * (`loanql_ledger`), where the computed fields would replay once each. Null when the account has no such loan, the loan
 * has no schedule, or it is a lead (not funded: nothing is owed, so no quote — as REST's 409).
 */
export async function payoffQuote(db: Database, accountId: string, loanId: string, day: string | null): Promise<Data | null> {
  let json;
  try {
    json = await payoffQuoteJson(db, accountId, loanId, day);
  } catch (error) {
    if (error instanceof LeadHasNoPayoff) return null;
    throw error;
  }
  return json === null ? null : (parse(json) as Data);
}

/** What the servicer's start page (the overview) shows: this week's dues, the late loans, the open tasks. */
export interface StartPageData {
  /** The account's business date (SPEC §12: today in its time zone). */
  readonly businessDate: string;
  /** Next rows of loans in servicing due from the business date to six days after, soonest first, the first `dueShown`: `{due, payment, loan {id name}}`. */
  readonly dueThisWeek: readonly Data[];
  /** How many loans have their next row due this week (`dueThisWeek` is at most the first `dueShown` of them). */
  readonly dueCount: number;
  readonly dueShown: number;
  /** The last day of the week: six days after the business date. */
  readonly weekEnd: string;
  /** Loans in servicing past due by the ledger (R3: arrears beyond the product's tolerance), most days first, the first `lateShown` (the collections queue's first rows). */
  readonly late: readonly { readonly loan: Data; readonly daysPastDue: number }[];
  /** How many loans are past due in all: the collections queue's length. */
  readonly lateCount: number;
  /** Open tasks, soonest due first (no due date last), the first 20: `{id name status date_due loan {id name} assignee {id name}}`. */
  readonly openTasks: readonly Data[];
  /** How many tasks are open in all. */
  readonly openTaskCount: number;
  /** How many of them belong to no loan (an account's own to-do, made over the API: README "Tasks without a loan"). */
  readonly openAccountTaskCount: number;
  /** Whose open tasks `openTasks` and the two counts are (`?assignee=`, as on the Tasks page). */
  readonly taskFilter: TaskFilter;
}

/** Whose open tasks the start page lists: a filter of the Tasks page's, and the signed-in admin's id (`mine`). */
export interface OpenTasksShown {
  readonly filter: TaskFilter;
  readonly me: string;
}

/** How many late loans the start page lists, most days past due first (it says how many there are, and links to the queue). */
const LATE_SHOWN = 25;
/** How many open tasks the start page lists, soonest due first (it says how many there are in all). */
const OPEN_TASKS_SHOWN = 20;
/** How many of this week's payments the start page lists, soonest first (it says how many there are, and links to them all). */
const DUE_SHOWN = 25;

/** The start page's document for a filter of the open tasks (three fixed documents: the filter picks one, `$me` its admin). */
function startPageQuery(filter: TaskFilter): string {
  const open = OPEN_TASKS_WHERE.get(filter)!;
  return `query StartPage($today: date!, $weekEnd: date!${filter === 'mine' ? ', $me: uuid!' : ''}) {
  late: loans(where: {status: {_eq: "servicing"}, days_past_due: {_gt: 0}}, order_by: [{days_past_due: desc}, {id: asc}], limit: ${LATE_SHOWN}) { id name oldest_unpaid_due days_past_due }
  late_count: loans_aggregate(where: {status: {_eq: "servicing"}, days_past_due: {_gt: 0}}) { aggregate { count } }
  due: schedules(where: {is_next: {_eq: true}, due: {_gte: $today, _lte: $weekEnd}, loan: {status: {_eq: "servicing"}}}, order_by: [{due: asc}, {loan_id: asc}], limit: ${DUE_SHOWN}) { due payment loan { id name } }
  due_count: schedules_aggregate(where: {is_next: {_eq: true}, due: {_gte: $today, _lte: $weekEnd}, loan: {status: {_eq: "servicing"}}}) { aggregate { count } }
  tasks(where: {${open}}, order_by: [{date_due: asc_nulls_last}, {created_at: asc}, {id: asc}], limit: ${OPEN_TASKS_SHOWN}) { id name status date_due loan { id name } assignee { id name } }
  open_tasks: tasks_aggregate(where: {${open}}) { aggregate { count } }
  open_account_tasks: tasks_aggregate(where: {${open}, loan_id: {_is_null: true}}) { aggregate { count } }
}`;
}

/** `day` (YYYY-MM-DD) moved by `days`. */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The start page's data: the account's business date, then one GraphQL document. The late loans
 * are the collections queue's first rows (`app/collectionsQueue.ts`): days past due by R3 (the
 * product's arrears tolerance forgiving a short row), read through the stored form's index
 * (`days_past_due` without `as_of`), most first, ties by id. They were chosen among the 25 loans
 * with the oldest unpaid row and kept when late: under a tolerance, 25 loans short by cents on an
 * old row (not late) crowded out every late one, and the page said "No loan is past due" beside a
 * queue of late loans.
 */
export async function startPageData(servicing: ServicingData, db: Database, accountId: string, tasks: OpenTasksShown): Promise<StartPageData> {
  const today = await businessDate(db, accountId);
  const weekEnd = addDays(today, 6);
  const data = await servicing.run(db, accountId, startPageQuery(tasks.filter), { today, weekEnd, ...(tasks.filter === 'mine' ? { me: tasks.me } : {}) });
  const rows = (value: unknown): Data[] => (Array.isArray(value) ? (value as Data[]) : []);
  const late = rows(data.late).map((loan) => ({ loan, daysPastDue: Number(String(loan.days_past_due ?? 0)) }));
  const count = (aggregate: unknown): number => Number(String(((aggregate as Data | undefined)?.aggregate as Data | undefined)?.count ?? 0));
  return {
    businessDate: today,
    dueThisWeek: rows(data.due),
    dueCount: count(data.due_count),
    dueShown: DUE_SHOWN,
    weekEnd,
    late,
    lateCount: count(data.late_count),
    openTasks: rows(data.tasks),
    openTaskCount: count(data.open_tasks),
    openAccountTaskCount: count(data.open_account_tasks),
    taskFilter: tasks.filter,
  };
}
