import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { GraphEngine, RequestError } from '../../engine/index.js';
import { assumeEmptyCatalogue, parseMetadata } from '../../metadata/index.js';
import { tokenHeader } from '../support/http.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';

/**
 * Ordering by an array relationship's aggregate of a computed field —
 * `desks(order_by: {deals_aggregate: {sum: {interest: desc}}})` — offered wherever the aggregate
 * field offers the computed field (a function with its arguments' defaults, a stored form, a date),
 * each order compared with plain SQL calling the same functions; its cost charged as listing
 * charges a computed field; and dates before year 1 answered alike by a list, `nodes` and `min`/`max`.
 */
const SCHEMA = `
  CREATE SCHEMA lender;
  CREATE TABLE lender.desks (account_id uuid NOT NULL, id bigint NOT NULL, name text NOT NULL, PRIMARY KEY (account_id, id));
  CREATE TABLE lender.deals (
    account_id uuid NOT NULL, id bigint NOT NULL, desk_id bigint NOT NULL,
    amount numeric NOT NULL, rate numeric NOT NULL, due date, signed date,
    PRIMARY KEY (account_id, id)
  );
  CREATE INDEX deals_due ON lender.deals (account_id, due);
  CREATE FUNCTION lender.deal_interest(account uuid, id bigint, years integer DEFAULT 3) RETURNS numeric
    LANGUAGE sql STABLE AS $$ SELECT d.amount * d.rate * years FROM lender.deals d WHERE d.account_id = account AND d.id = deal_interest.id $$;
  CREATE FUNCTION lender.deal_days_late(account uuid, id bigint) RETURNS integer
    LANGUAGE sql STABLE AS $$ SELECT CASE WHEN d.due < loanql_business_date(account) THEN loanql_business_date(account) - d.due ELSE 0 END FROM lender.deals d WHERE d.account_id = account AND d.id = deal_days_late.id $$;
  CREATE FUNCTION lender.deal_signed_on(account uuid, id bigint) RETURNS date
    LANGUAGE sql STABLE AS $$ SELECT d.signed FROM lender.deals d WHERE d.account_id = account AND d.id = deal_signed_on.id $$;
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  desks:
    schema: lender
    table: desks
    primary_key: id
    fields: { id: bigint, name: text }
    relationships:
      deals: { array: deals, on: { id: desk_id } }
  deals:
    schema: lender
    table: deals
    primary_key: id
    fields: { id: bigint, desk_id: bigint, amount: numeric, rate: numeric, due: date, signed: date }
    computed_fields:
      interest: { function: deal_interest, type: numeric, args: { years: integer } }
      days_late: { function: deal_days_late, type: integer, stored_form: { days_since: due, today: loanql_business_date } }
      signed_on: { function: deal_signed_on, type: date }
roles:
  clerk:
    collections:
      desks:
        select: { columns: [id, name] }
      deals:
        select: { columns: [id, desk_id, amount, signed], allow_aggregations: true }
`;

let service: LenderSchemaService;
let clerkKey: string;

/**
 * Six desks whose orders by the computed fields differ from their orders by the columns: desk 1
 * has the most amount but the least interest; desk 6 has no deal (its aggregates are null).
 * One deal was signed on the Ides of March, 44 BC.
 */
before(async () => {
  service = await startLenderSchemaService(SCHEMA, METADATA);
  const account = service.accountId;
  await service.database.db.query(
    `INSERT INTO lender.desks (account_id, id, name) SELECT $1, n, 'desk ' || n FROM generate_series(1, 6) AS n`,
    [account],
  );
  await service.database.db.query(
    `INSERT INTO lender.deals (account_id, id, desk_id, amount, rate, due, signed) VALUES
       ($1, 1, 1, 900000.00, 0.0010, NULL, '2020-01-02'),
       ($1, 2, 1, 1000.00, 0.0100, loanql_business_date($1) + 5, '2021-06-30'),
       ($1, 3, 2, 50000.00, 0.1250, loanql_business_date($1) - 40, '0044-03-15 BC'),
       ($1, 4, 3, 20000.00, 0.0900, loanql_business_date($1) - 3, '1999-12-31'),
       ($1, 5, 3, 70000.00, 0.0800, loanql_business_date($1) - 90, NULL),
       ($1, 6, 4, 10000.00, 0.3333, loanql_business_date($1) - 1, '2024-02-29'),
       ($1, 7, 5, 400000.00, 0.0200, NULL, '0001-01-01')`,
    [account],
  );
  clerkKey = (await createApiKey(service.database.db, account, 'clerk', { role: 'clerk', variables: new Map() })).key;
});

after(async () => {
  await service?.close();
});

async function post(query: string, key = service.key): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${service.server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(key) }, body: JSON.stringify({ query }) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

async function data(query: string, key = service.key): Promise<any> {
  const answer = await post(query, key);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.errors, undefined, answer.text);
  return answer.body.data;
}

async function sql<T>(text: string, params: unknown[] = [service.accountId]): Promise<T[]> {
  return (await service.database.db.query(text, params)).rows as T[];
}

/** The desks' ids in plain SQL's order by `aggregate` of the desk's deals, then by id. */
async function desksOrderedBy(aggregate: string, direction: string): Promise<number[]> {
  const rows = await sql<{ id: string }>(
    `SELECT d.id::text AS id FROM lender.desks d WHERE d.account_id = $1
      ORDER BY (SELECT ${aggregate} FROM lender.deals x WHERE x.account_id = d.account_id AND x.desk_id = d.id) ${direction}, d.id`,
  );
  return rows.map((row) => Number(row.id));
}

const ids = (rows: { id: number }[]): number[] => rows.map((row) => row.id);
const fieldsOf = async (type: string, key = service.key): Promise<string[] | null> => {
  const { __type } = await data(`{ __type(name: "${type}") { inputFields { name } } }`, key);
  return __type ? (__type.inputFields as { name: string }[]).map((field) => field.name).sort() : null;
};

describe('order_by an array relationship’s aggregate of a computed field', () => {
  it('offers in <c>_<fn>_order_by the computed fields the aggregate field offers, per role', async () => {
    assert.deepEqual(await fieldsOf('deals_sum_order_by'), ['amount', 'days_late', 'desk_id', 'id', 'interest', 'rate']);
    assert.deepEqual(await fieldsOf('deals_max_order_by'), ['amount', 'days_late', 'desk_id', 'due', 'id', 'interest', 'rate', 'signed', 'signed_on']);
    // The aggregate field offers the same names.
    const { __type } = await data(`{ __type(name: "deals_max_fields") { fields { name } } }`);
    assert.deepEqual((__type.fields as { name: string }[]).map((field) => field.name).sort(), await fieldsOf('deals_max_order_by'));
    // A role whose columns do not name a computed field is offered none of them.
    assert.deepEqual(await fieldsOf('deals_sum_order_by', clerkKey), ['amount', 'desk_id', 'id']);
    const refused = await post('{ desks(order_by: {deals_aggregate: {sum: {interest: desc}}}) { id } }', clerkKey);
    assert.equal(refused.body.errors?.[0]?.extensions?.code, 'validation-failed', refused.text);
    assert.match(refused.body.errors[0].message, /interest/);
  });

  it('orders desks by sum, avg and max of a computed field as plain SQL’s calls do (arguments’ defaults, nulls as PostgreSQL places them)', async () => {
    const got = await data(`{
      sumDesc: desks(order_by: {deals_aggregate: {sum: {interest: desc}}}) { id }
      sumAsc: desks(order_by: {deals_aggregate: {sum: {interest: asc}}}) { id }
      avgNullsFirst: desks(order_by: [{deals_aggregate: {avg: {interest: asc_nulls_first}}}]) { id }
      byAmount: desks(order_by: {deals_aggregate: {sum: {amount: desc}}}) { id }
    }`);
    const interest = 'lender.deal_interest(x.account_id, x.id)';
    assert.deepEqual(ids(got.sumDesc), await desksOrderedBy(`sum(${interest})`, 'DESC'));
    assert.deepEqual(ids(got.sumAsc), await desksOrderedBy(`sum(${interest})`, 'ASC'));
    assert.deepEqual(ids(got.avgNullsFirst), await desksOrderedBy(`avg(${interest})`, 'ASC NULLS FIRST'));
    // The computed field's order is its own, not a column's.
    assert.notDeepEqual(ids(got.sumDesc), ids(got.byAmount));
    assert.deepEqual([ids(got.sumDesc)[0], ids(got.sumDesc).at(-1)], [6, 1], 'no deal (null) first; the most amount, the least interest, last');
  });

  it('orders by a stored form (read from its column) and by min/max of a computed date, before year 1 included', async () => {
    const got = await data(`{
      late: desks(order_by: [{deals_aggregate: {max: {days_late: desc_nulls_last}}}, {name: desc}]) { id }
      signed: desks(order_by: {deals_aggregate: {min: {signed_on: asc}}}) { id }
      root: desks_aggregate(order_by: {deals_aggregate: {max: {signed_on: desc}}}, limit: 3) { nodes { id } }
    }`);
    const rows = await sql<{ id: string }>(
      `SELECT d.id::text AS id FROM lender.desks d WHERE d.account_id = $1
        ORDER BY (SELECT max(lender.deal_days_late(x.account_id, x.id)) FROM lender.deals x WHERE x.account_id = d.account_id AND x.desk_id = d.id) DESC NULLS LAST, d.name DESC, d.id`,
    );
    assert.deepEqual(ids(got.late), rows.map((row) => Number(row.id)));
    assert.deepEqual(ids(got.signed), await desksOrderedBy('min(lender.deal_signed_on(x.account_id, x.id))', 'ASC'));
    assert.deepEqual(ids(got.signed).slice(0, 2), [2, 5], '44 BC before the year 1');
    assert.deepEqual(ids(got.root.nodes), (await desksOrderedBy('max(lender.deal_signed_on(x.account_id, x.id))', 'DESC')).slice(0, 3));
  });

  it('charges the computed field’s calls as listing does: once for each related row ordered', () => {
    const engine = new GraphEngine(assumeEmptyCatalogue(parseMetadata(METADATA)), { maxDepth: 12, maxRows: null, planCacheSize: 10, maxCost: 1 });
    const costOf = (query: string): number => {
      try {
        engine.prepare({ query }, service.accountId);
      } catch (error) {
        assert.ok(error instanceof RequestError, String(error));
        return error.errors[0]!.extensions.cost as number;
      }
      assert.fail('expected a refusal over cost 1');
    };
    // Listing the computed field in every desk's deals: one call for each related row.
    const listed = costOf('{ desks { deals { interest } } }') - costOf('{ desks { deals { id } } }');
    assert.ok(listed > 0);
    const ordered = costOf('{ desks(order_by: {deals_aggregate: {sum: {interest: desc}}}) { id } }') - costOf('{ desks(order_by: {deals_aggregate: {sum: {amount: desc}}}) { id } }');
    assert.equal(ordered, listed);
    // And for each aggregate of it ordered by.
    assert.equal(costOf('{ desks(order_by: {deals_aggregate: {sum: {interest: desc}, max: {signed_on: asc}}}) { id } }') - costOf('{ desks(order_by: {deals_aggregate: {sum: {amount: desc}, max: {signed: asc}}}) { id } }'), 2 * listed);
  });
});

describe('dates before year 1 in aggregates', () => {
  it('min and max of a date column and of a computed date print a BC date as the listed row prints it, PostgreSQL’s JSON text, in every shape of aggregate', async () => {
    const got = await data(`{
      deals(order_by: {signed: asc_nulls_last}, limit: 1) { signed signed_on }
      deals_aggregate { aggregate { min { signed signed_on } max { signed } } nodes { signed } }
      shared: deals_aggregate(where: {desk_id: {_eq: 2}}) { aggregate { min { signed signed_on } } }
      grouped2: deals_aggregate(where: {desk_id: {_eq: 2}}) { aggregate { min { signed } } }
      grouped5: deals_aggregate(where: {desk_id: {_eq: 5}}) { aggregate { max { signed } } }
      desks(where: {id: {_eq: 2}}) { deals_aggregate { aggregate { max { signed signed_on } } } }
    }`);
    const [expected] = await sql<{ first: string; last: string }>(
      `SELECT to_json(min(signed))::text AS first, to_json(max(signed))::text AS last FROM lender.deals WHERE account_id = $1`,
    );
    const first = JSON.parse(expected!.first) as string;
    assert.equal(first, '0044-03-15 BC', 'plain SQL’s JSON of the date');
    assert.deepEqual(got.deals, [{ signed: first, signed_on: first }]);
    assert.deepEqual(got.deals_aggregate.aggregate, { min: { signed: first, signed_on: first }, max: { signed: JSON.parse(expected!.last) } });
    assert.ok((got.deals_aggregate.nodes as { signed: string | null }[]).some((node) => node.signed === first));
    assert.deepEqual(got.shared.aggregate.min, { signed: first, signed_on: first });
    // Root aggregates grouped in one scan (min of the groups' mins): the same text; the year 1 is written as ever.
    assert.deepEqual([got.grouped2.aggregate.min.signed, got.grouped5.aggregate.max.signed], [first, '0001-01-01']);
    assert.deepEqual(got.desks[0].deals_aggregate.aggregate.max, { signed: first, signed_on: first });
  });
});
