import type { Database } from '../db/index.js';
import { GraphEngine } from '../engine/index.js';
import { checkMetadataAgainstDatabase, resolveMetadata, validateMetadataDocument, type CollectionDocument, type MetadataDocument, type RelationshipDocument } from '../metadata/index.js';

/**
 * The one home of the fixed views of the tables that the server's own GraphQL documents run
 * against: the REST loan reads (`loanReads.ts`) and the dashboard's servicing pages
 * (`dashboard/servicingData.ts`). They do not use the admin-edited metadata file, so that hiding
 * a field or a collection from the API never changes the REST contract or breaks a screen.
 *
 * Both views share the same `loans` collection (every column of a loan — the ledger's balances of
 * SPEC §12 included —, its borrower and
 * guarantor links) and the links themselves (`borrows`, `guarantees`); each view adds its own
 * `people` and whatever else it reads. Declared as data (the metadata's parsed stage,
 * `MetadataDocument`), so the compiler checks their shape and no text is pieced together.
 */
const LOANS: CollectionDocument = {
  table: 'loans',
  primary_key: 'id',
  fields: {
    id: 'uuid',
    name: 'text',
    status: 'text',
    amount: 'numeric',
    rate: 'numeric',
    term: 'integer',
    frequency: 'text',
    amortization: 'text',
    regular_payment: 'numeric',
    date_funded: 'date',
    first_payment_date: 'date',
    date_maturity: 'date',
    custom_fields: 'jsonb',
    principal_outstanding: 'numeric',
    interest_due: 'numeric',
    fees_due: 'numeric',
    credit_balance: 'numeric',
    oldest_unpaid_due: 'date',
    date_closed: 'date',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
  relationships: {
    borrows: { array: 'borrows', on: { id: 'loan_id' } },
    guarantees: { array: 'guarantees', on: { id: 'loan_id' } },
  },
  // As of the account's business date when no `as_of` is given (the function's default). Without
  // `as_of`, as in the metadata file, the stored `arrears_since` gives the value, so the overview's
  // late loans (`where: {days_past_due: {_gt: 0}}`, most first) are a range of its index, as the
  // collections queue reads them (docs/ledger.md, "Days past due through an index").
  computed_fields: {
    days_past_due: { function: 'loanql_loan_days_past_due', type: 'integer', args: { as_of: 'date' }, stored_form: { days_since: 'arrears_since', today: 'loanql_business_date' } },
  },
};

/** A link of a loan to a person (`borrows`, `guarantees`). */
const link = (table: string): CollectionDocument => ({
  table,
  primary_key: 'id',
  fields: { id: 'uuid', loan_id: 'uuid', person_id: 'uuid', created_at: 'timestamptz' },
  relationships: {
    loan: { object: 'loans', on: { loan_id: 'id' } },
    person: { object: 'people', on: { person_id: 'id' } },
  },
});

/** What a fixed view adds to the shared loans and links. */
export interface FixedView {
  /** More relationships of `loans`, after `borrows` and `guarantees`. */
  readonly loanRelationships?: Readonly<Record<string, RelationshipDocument>>;
  /** The view's other collections: `people` at least, which the links point to. */
  readonly collections: Readonly<Record<string, CollectionDocument>> & { readonly people: CollectionDocument };
}

/** The metadata document of a fixed view: the shared loans and links, then the view's own collections. */
export function fixedViewDocument(view: FixedView): MetadataDocument {
  return {
    version: 1,
    tenant_column: 'account_id',
    collections: {
      loans: { ...LOANS, relationships: { ...LOANS.relationships, ...view.loanRelationships } },
      borrows: link('borrows'),
      guarantees: link('guarantees'),
      ...view.collections,
    },
  };
}

/**
 * The query engine of a fixed view, after checking the view against the JSON Schema (its names)
 * and the database (a missing column fails here, at start-up, naming it). No limit of a
 * document's size or cost applies (the documents are the server's own); `maxRows` (MAX_ROWS,
 * for a view whose lists a client reads, the REST loans) caps every list as it does in GraphQL.
 */
export async function fixedViewEngine(db: Database, view: FixedView, planCacheSize: number, maxRows: number | null = null): Promise<GraphEngine> {
  const resolved = resolveMetadata(validateMetadataDocument(fixedViewDocument(view)));
  const { metadata, catalogue } = await checkMetadataAgainstDatabase(resolved, db);
  return new GraphEngine(metadata, { maxDepth: 12, maxRows, planCacheSize, maxCost: 0, maxRootFields: 0, maxFields: 0 }, catalogue);
}

/** A canonical UUID's text (any case): ids from a path or a form are checked with it before a query. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
