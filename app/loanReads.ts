import { isLosslessNumber, parse, stringify } from 'lossless-json';
import type { Database } from '../db/index.js';
import { GraphEngine, type Principal } from '../engine/index.js';
import { withSelectFilters, type Metadata, type RowFilter } from '../metadata/index.js';
import { fixedViewEngine, UUID, type FixedView } from './fixedView.js';
import type { LoanStatus } from './products.js';
import { LETTER_PARTIES_FIELDS, letterPartiesOf, type LetterParties } from './payoffLetters.js';

/**
 * Loan reads of the REST interface (SPEC §6), run through the query engine. They use a fixed
 * view of the data (`fixedView.ts`: the loans and links shared with the dashboard, and the
 * people's columns below), not the admin-edited metadata file, so that hiding a field from
 * GraphQL never changes the REST contract. Numbers keep PostgreSQL's exact digits: the
 * engine's JSON is reshaped with lossless-json, never through JavaScript floats.
 */
const REST_VIEW: FixedView = {
  // The loan's property addresses: only the payoff letter reads them (`LETTER_PARTIES_FIELDS`).
  loanRelationships: { address_details: { array: 'address_details', on: { id: 'loan_id' } } },
  collections: {
    people: { table: 'people', primary_key: 'id', fields: { id: 'uuid', name: 'text', email: 'text', entity_type: 'text' } },
    address_details: {
      table: 'address_details',
      primary_key: 'id',
      fields: { id: 'uuid', loan_id: 'uuid', address_id: 'uuid' },
      relationships: { address: { object: 'addresses', on: { address_id: 'id' } } },
    },
    addresses: { table: 'addresses', primary_key: 'id', fields: { id: 'uuid', street1: 'text', city: 'text', state: 'text', zipcode: 'text' } },
  },
};

const CONTACTS = '{ person { id name email entity_type } }';
const LOAN_FIELDS = `id name status amount rate term frequency amortization regular_payment date_funded first_payment_date date_maturity custom_fields created_at updated_at
  borrows(order_by: [{created_at: asc}]) ${CONTACTS}
  guarantees(order_by: [{created_at: asc}]) ${CONTACTS}`;

const LOAN_BY_ID = `query LoanById($id: uuid!) { loan: loans_by_pk(id: $id) { ${LOAN_FIELDS} } }`;
const LETTER_PARTIES = `query LoanLetterParties($id: uuid!) { loan: loans_by_pk(id: $id) { ${LETTER_PARTIES_FIELDS} } }`;
/** A page of loans, newest first, and the total; two fixed documents so both plans stay cached. */
const loanPage = (filter: { variable: string; where: string } | null) => `query LoanPage(${filter ? `${filter.variable}, ` : ''}$limit: Int!, $offset: Int!) {
  loans(${filter ? `${filter.where}, ` : ''}order_by: [{created_at: desc}], limit: $limit, offset: $offset) { ${LOAN_FIELDS} }
  total: loans_aggregate${filter ? `(${filter.where})` : ''} { aggregate { count } }
}`;
const LOAN_PAGE = loanPage(null);
const LOAN_PAGE_BY_STATUS = loanPage({ variable: '$status: String!', where: 'where: {status: {_eq: $status}}' });

type Json = Record<string, unknown>;

/** The REST shape of a loan: links flattened to `borrowers` / `guarantors`. */
function restLoan(record: Json): Json {
  const { borrows, guarantees, ...loan } = record as Json & { borrows: { person: Json }[]; guarantees: { person: Json }[] };
  return { ...loan, borrowers: borrows.map((link) => link.person), guarantors: guarantees.map((link) => link.person) };
}

/** A filter no row passes: the REST view's collections a role cannot select. */
const NO_ROWS: RowFilter = { kind: 'or', items: [] };

export class LoanReader {
  /** Readers restricted to a role (by the role's view of the metadata; a reload makes new views). */
  readonly #byRole = new WeakMap<Metadata, LoanReader>();

  private constructor(
    private readonly engine: GraphEngine,
    private readonly view: Metadata,
  ) {}

  /** Builds the reader's engine and checks its view against the database; `maxRows` (MAX_ROWS) caps every list, as in GraphQL. */
  static async create(db: Database, maxRows: number | null = null): Promise<LoanReader> {
    const engine = await fixedViewEngine(db, REST_VIEW, 16, maxRows);
    return new LoanReader(engine, engine.metadata);
  }

  /**
   * The reader as a role sees the data: every collection of the REST view carries the role's
   * select filter of the same collection (loans, borrows, guarantees, people), and one the role
   * cannot select shows no rows. `filters` may replace a collection's (a PATCH checks the
   * loans `update` filter). The admin role reads as the reader itself.
   */
  forRole(roleView: Metadata, isAdmin: boolean, filters: ReadonlyMap<string, RowFilter | null> = new Map()): LoanReader {
    if (isAdmin && !filters.size) return this;
    const cached = filters.size ? undefined : this.#byRole.get(roleView);
    if (cached) return cached;
    const selectFilters = new Map<string, RowFilter | null>();
    for (const name of this.view.collections.keys()) {
      const seen = roleView.collections.get(name);
      selectFilters.set(name, filters.has(name) ? filters.get(name)! : isAdmin ? null : seen ? seen.selectFilter : NO_ROWS);
    }
    const reader = new LoanReader(new GraphEngine(withSelectFilters(this.view, selectFilters), this.engine.options, this.engine.catalogue), this.view);
    if (!filters.size) this.#byRole.set(roleView, reader);
    return reader;
  }

  /** `{"loan": …}` as JSON text, or null when the account has no such loan. */
  async loanJson(db: Database, accountId: Principal, id: string, extra: Json = {}): Promise<string | null> {
    if (!UUID.test(id)) return null;
    const response = parse(await this.engine.execute(db, { query: LOAN_BY_ID, variables: { id } }, accountId)) as { data: { loan: Json | null } };
    if (!response.data.loan) return null;
    return stringify({ loan: restLoan(response.data.loan), ...extra })!;
  }

  /**
   * Who a payoff letter names (`payoffLetters.ts`): the loan's name, its borrowers and property
   * addresses as this reader's role sees them (none it may not read); null when it sees no such loan.
   */
  async letterParties(db: Database, accountId: Principal, id: string): Promise<LetterParties | null> {
    if (!UUID.test(id)) return null;
    const response = parse(await this.engine.execute(db, { query: LETTER_PARTIES, variables: { id } }, accountId)) as { data: { loan: Json | null } };
    return response.data.loan ? letterPartiesOf(response.data.loan) : null;
  }

  /** `{"loans": […], "total": N, "limit": L, "offset": O}`, newest first, as JSON text. */
  async pageJson(db: Database, accountId: Principal, query: { status?: LoanStatus; limit: number; offset: number }): Promise<string> {
    const request = query.status
      ? { query: LOAN_PAGE_BY_STATUS, variables: { status: query.status, limit: query.limit, offset: query.offset } }
      : { query: LOAN_PAGE, variables: { limit: query.limit, offset: query.offset } };
    const response = parse(await this.engine.execute(db, request, accountId)) as { data: { loans: Json[]; total: { aggregate: { count: unknown } } } };
    const count = response.data.total.aggregate.count;
    return stringify({
      loans: response.data.loans.map(restLoan),
      total: isLosslessNumber(count) ? count.valueOf() : count,
      limit: query.limit,
      offset: query.offset,
    })!;
  }
}
