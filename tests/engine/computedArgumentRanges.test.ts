import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SERVICING_YEARS } from '../../domain/calendar.js';
import { MetadataError, parseMetadata } from '../../metadata/index.js';
import { graphBody } from '../support/graphData.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';
import { PROJECT_ROOT } from '../support/processes.js';

/**
 * A computed field's date argument takes what its metadata declares (`args: {d: {type: date,
 * range: {from, to, meaning}}}`), not loanql's years: a lender's own field without a range takes
 * any day GraphQL's `date` takes (0001-01-01: before, the engine refused it as outside loanql's
 * 1900–2999), and one with a range is refused outside it, written or in a variable, before the
 * database, in words naming the argument and its field.
 */
const SCHEMA = `
  CREATE SCHEMA lender;
  CREATE TABLE lender.leases (account_id uuid NOT NULL, id bigserial NOT NULL, starts date NOT NULL, PRIMARY KEY (account_id, id));
  CREATE FUNCTION lender.lease_days_to(account uuid, id bigint, day date DEFAULT '2026-01-01') RETURNS integer
    LANGUAGE sql STABLE AS $$ SELECT day - l.starts FROM lender.leases l WHERE l.account_id = account AND l.id = lease_days_to.id $$;
  CREATE FUNCTION lender.lease_quarter_days(account uuid, id bigint, day date DEFAULT '2026-01-01') RETURNS integer
    LANGUAGE sql STABLE AS $$ SELECT day - l.starts FROM lender.leases l WHERE l.account_id = account AND l.id = lease_quarter_days.id $$;
  CREATE FUNCTION lender.lease_same(account uuid, id bigint, day date DEFAULT '2026-01-01') RETURNS SETOF lender.leases
    LANGUAGE sql STABLE AS $$ SELECT * FROM lender.leases l WHERE l.account_id = account AND l.starts <= day $$;
`;
const METADATA = `
version: 1
tenant_column: account_id
collections:
  leases:
    schema: lender
    table: leases
    primary_key: id
    fields: { id: bigint, starts: date }
    computed_fields:
      days_to: { function: lease_days_to, type: integer, args: { day: date } }
      quarter_days: { function: lease_quarter_days, type: integer, args: { day: { type: date, range: { from: "2026-01-01", to: "2026-03-31", meaning: "the first quarter" } } } }
      started_by: { function: lease_same, returns: leases, args: { day: { type: date, range: { from: "2000-01-01", to: "2099-12-31" } } } }
    insert: { columns: [starts] }
`;

let service: LenderSchemaService;
let leaseId: string;

before(async () => {
  service = await startLenderSchemaService(SCHEMA, METADATA);
  const { rows } = await service.database.db.query<{ id: string }>(`INSERT INTO lender.leases (account_id, starts) VALUES ($1, '2026-01-01') RETURNING id::text`, [service.accountId]);
  leaseId = rows[0]!.id;
});
after(() => service?.close());

const graph = (query: string, variables: Record<string, unknown> = {}): Promise<any> => graphBody(service.server.url, service.key, query, variables);

describe("A computed field's date argument and the range its metadata declares", () => {
  it('takes any day for an argument without a range (0001-01-01 and 9999-12-31: no loanql years in the engine)', async () => {
    const answer = await graph(`query ($id: bigint!, $d: date) { leases_by_pk(id: $id) { early: days_to(args: {day: "0001-01-01"}) late: days_to(args: {day: $d}) } }`, { id: leaseId, d: '9999-12-31' });
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    // The database's own subtraction: 2026-01-01 − 0001-01-01 and 9999-12-31 − 2026-01-01.
    const { rows } = await service.database.db.query<{ early: number; late: number }>(`SELECT DATE '0001-01-01' - DATE '2026-01-01' AS early, DATE '9999-12-31' - DATE '2026-01-01' AS late`);
    assert.deepEqual(answer.data.leases_by_pk, rows[0]);
  });

  it('refuses a day outside the range, written or in a variable, naming the argument, its field and the range (whole years as years)', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [`query ($id: bigint!) { leases_by_pk(id: $id) { quarter_days(args: {day: "2026-04-01"}) } }`, {}, 'day of quarter_days: 2026-04-01 is not from 2026-01-01 to 2026-03-31, the first quarter'],
      [`query ($id: bigint!, $d: date) { leases_by_pk(id: $id) { quarter_days(args: {day: $d}) } }`, { d: '2025-12-31' }, 'Variable "$d": day of quarter_days: 2025-12-31 is not from 2026-01-01 to 2026-03-31, the first quarter'],
      [`query ($id: bigint!) { leases_by_pk(id: $id) { started_by(args: {day: "1999-12-31"}) { id } } }`, {}, 'day of started_by: 1999-12-31 is not in the years 2000–2099'],
      [`query ($d: date) { leases { started_by(args: {day: $d}) { id } } }`, { d: '2100-01-01' }, 'Variable "$d": day of started_by: 2100-01-01 is not in the years 2000–2099'],
    ];
    for (const [query, variables, message] of cases) {
      const answer = await graph(query, { id: leaseId, ...variables });
      assert.equal(answer.data ?? null, null, JSON.stringify(answer));
      assert.equal(answer.errors?.length, 1, JSON.stringify(answer));
      assert.equal(answer.errors[0].extensions.code, 'validation-failed');
      assert.equal(answer.errors[0].message, message, query);
    }
  });

  it("takes the range's first and last days", async () => {
    const answer = await graph(`query ($id: bigint!, $d: date) { leases_by_pk(id: $id) { first: quarter_days(args: {day: "2026-01-01"}) last: quarter_days(args: {day: $d}) started_by(args: {day: "2099-12-31"}) { id } } }`, { id: leaseId, d: '2026-03-31' });
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    assert.deepEqual(answer.data.leases_by_pk, { first: 0, last: 89, started_by: [{ id: Number(leaseId) }] });
  });

  it('refuses at load a range on an argument that is not a date, a day that is not one, and ends in the wrong order, naming each', () => {
    const problemsOf = (yaml: string): string => {
      try {
        parseMetadata(yaml);
      } catch (error) {
        assert.ok(error instanceof MetadataError, String(error));
        return error.problems.join('\n');
      }
      return assert.fail('the metadata was accepted');
    };
    assert.match(
      problemsOf(METADATA.replace('args: { day: date }', 'args: { day: { type: integer, range: { from: "2026-01-01", to: "2026-03-31" } } }')),
      /collection leases, computed field days_to, argument day: a range is of a date argument, not integer/,
    );
    assert.match(problemsOf(METADATA.replace('to: "2026-03-31"', 'to: "2026-02-30"')), /computed field quarter_days, argument day: range from 2026-01-01 to 2026-02-30: each end is a day written YYYY-MM-DD/);
    assert.match(problemsOf(METADATA.replace('from: "2000-01-01", to: "2099-12-31"', 'from: "2099-12-31", to: "2000-01-01"')), /computed field started_by, argument day: range from 2099-12-31 to 2000-01-01 holds no day \(from is after to\)/);
    // The JSON Schema's refusals name the argument too (before, only "collection leases, computed_fields").
    assert.equal(
      problemsOf(METADATA.replace('from: "2026-01-01", to', 'form: "2026-01-01", to')),
      'collection leases, computed field quarter_days, argument day: range is {from: YYYY-MM-DD, to: YYYY-MM-DD} and may say its meaning (meaning: text) (line 12)',
    );
    assert.match(problemsOf(METADATA.replace('args: { day: date }', 'args: { day: dte }')), /^collection leases, computed field days_to, argument day: type "dte" is not one of uuid, text, .* \(line 11\)$/);
  });

  it("loanql's shipped ledger fields declare the years REST's ?date= takes (domain/calendar.ts, SERVICING_YEARS)", () => {
    const shipped = parse(readFileSync(join(PROJECT_ROOT, 'metadata', 'loanql.default.yaml'), 'utf8')) as { collections: Record<string, { computed_fields?: Record<string, { args?: Record<string, unknown> }> }> };
    const dated = Object.entries(shipped.collections).flatMap(([collection, spec]) =>
      Object.entries(spec.computed_fields ?? {}).flatMap(([field, computed]) => Object.entries(computed.args ?? {}).map(([argument, declared]) => ({ at: `${collection}.${field}(${argument})`, declared }))),
    ).filter(({ declared }) => declared === 'date' || (declared as { type?: unknown }).type === 'date');
    assert.ok(dated.length >= 6, dated.map(({ at }) => at).join(', '));
    for (const { at, declared } of dated)
      assert.deepEqual(declared, { type: 'date', range: { from: `${SERVICING_YEARS.first}-01-01`, to: `${SERVICING_YEARS.last}-12-31`, meaning: 'the days the ledger is read as of' } }, at);
  });
});
