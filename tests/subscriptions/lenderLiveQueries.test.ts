import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenHeader } from '../support/http.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';
import { connect, subscribe, type TestClient } from '../support/graphSocket.js';

/**
 * Live queries over a lender's own tables (engine/README.md, "Subscriptions"): made after
 * loanql's migrations, they had no change notices, so a write reached their subscribers only at
 * the 30 s fallback; and which reads a notice keys came from loanql's table names (`loans` by
 * `id`, any other table by `loan_id`), not from what the tables' notices name.
 */
const SCHEMA = `
  CREATE TABLE lender_facilities (
    account_id uuid NOT NULL,
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    name text NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE lender_draws (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    facility uuid NOT NULL,
    amount numeric(12, 2) NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, facility) REFERENCES lender_facilities (account_id, id)
  );
  -- The lender's notices name the facility a row belongs to (the form of migration 0031's).
  CREATE TRIGGER loanql_notice_insert AFTER INSERT ON lender_facilities REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes('id');
  CREATE TRIGGER loanql_notice_update AFTER UPDATE ON lender_facilities REFERENCING OLD TABLE AS loanql_old_rows NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_updates('id');
  CREATE TRIGGER loanql_notice_delete AFTER DELETE ON lender_facilities REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes('id');
  CREATE TRIGGER loanql_notice_insert AFTER INSERT ON lender_draws REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes('facility');
  CREATE TRIGGER loanql_notice_update AFTER UPDATE ON lender_draws REFERENCING OLD TABLE AS loanql_old_rows NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_updates('facility');
  CREATE TRIGGER loanql_notice_delete AFTER DELETE ON lender_draws REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes('facility');
  -- No notices of its own: the service gives it some when it starts.
  CREATE TABLE lender_codes (
    account_id uuid NOT NULL,
    code text NOT NULL,
    label text NOT NULL,
    PRIMARY KEY (account_id, code)
  );
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  facilities:
    table: lender_facilities
    primary_key: id
    fields: { id: uuid, name: text }
    relationships:
      draws: { array: draws, on: { id: facility } }
    insert: { columns: [name] }
  draws:
    table: lender_draws
    primary_key: id
    fields: { id: bigint, facility: uuid, amount: numeric }
    insert: { columns: [facility, amount] }
  codes:
    table: lender_codes
    primary_key: code
    fields: { code: text, label: text }
    insert: { columns: [code, label] }
    update: { columns: [label] }
`;

let s: LenderSchemaService;
let client: TestClient;

before(async () => {
  s = await startLenderSchemaService(SCHEMA, METADATA);
  client = connect(s.server.url, s.key);
});
after(async () => {
  await client?.dispose();
  await s?.close();
});

async function graph(query: string, variables?: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${s.server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(s.key) }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

describe("A live query over a lender's own table", () => {
  it('a table made after the migrations is given change notices when the service starts: a write refreshes its subscriber at once', async () => {
    const live = subscribe(client.client, 'subscription { codes(order_by: {code: asc}) { code label } }');
    assert.deepEqual((await live.next()).data.codes, []);
    await graph('mutation { insert_codes_one(object: {code: "A", label: "first"}) { code } }');
    // Before: no notice, so nothing until SUBSCRIPTION_FALLBACK_MS (30 s).
    assert.deepEqual((await live.next(5000)).data.codes, [{ code: 'A', label: 'first' }]);
    live.stop();
    const triggers = await s.database.db.query<{ tgname: string }>(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'lender_codes'::regclass AND NOT tgisinternal ORDER BY 1`);
    assert.deepEqual(triggers.rows.map((row) => row.tgname), ['loanql_notice_delete', 'loanql_notice_insert', 'loanql_notice_update']);
  });

  it("is keyed by the column the table's notices name: a draw of facility A runs no statement for facility B's subscriber", async () => {
    const made = await graph('mutation { a: insert_facilities_one(object: {name: "A"}) { id } b: insert_facilities_one(object: {name: "B"}) { id } }');
    const [a, b] = [made.a.id as string, made.b.id as string];
    const query = 'subscription($id: uuid!) { facilities_by_pk(id: $id) { name draws(order_by: {id: asc}) { amount } } }';
    const [liveA, liveB] = [subscribe(client.client, query, { id: a }), subscribe(client.client, query, { id: b })];
    await Promise.all([liveA.next(), liveB.next()]);
    /** The facilities each cohort statement was run for, from its json parameter. */
    const refreshed: string[] = [];
    const stop = s.database.db.observe((text, values) => {
      if (!text.includes('json_to_recordset')) return;
      for (const row of JSON.parse(String(values[0])) as Record<string, unknown>[]) refreshed.push(...Object.values(row).filter((value) => value === a || value === b).map(String));
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      refreshed.length = 0;
      await graph('mutation($f: uuid!) { insert_draws_one(object: {facility: $f, amount: "125.50"}) { id } }', { f: a });
      assert.deepEqual((await liveA.next(5000)).data.facilities_by_pk.draws, [{ amount: 125.5 }]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Before: lender_draws was keyed by a `loan_id` it lacks, so every subscriber was run again.
      assert.ok(refreshed.length > 0 && refreshed.every((id) => id === a), `refreshed for ${JSON.stringify(refreshed)}`);
      assert.equal(liveB.waiting, 0);
      // B is still refreshed by its own draw.
      await graph('mutation($f: uuid!) { insert_draws_one(object: {facility: $f, amount: "7.00"}) { id } }', { f: b });
      assert.deepEqual((await liveB.next(5000)).data.facilities_by_pk.draws, [{ amount: 7 }]);
    } finally {
      stop();
      liveA.stop();
      liveB.stop();
    }
  });
});
