import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configFromEnv } from '../../app/config.js';
import { tokenHeader } from '../support/http.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';
import { connect, subscribe, type Subscription, type TestClient } from '../support/graphSocket.js';

/**
 * Live queries over a view (README "Subscriptions", engine/README.md "Subscriptions"): no trigger
 * sends a notice naming a view, so before, a live query over one waited for
 * SUBSCRIPTION_FALLBACK_MS (30 s) whatever was written. Now the tables under the view (read from
 * the catalogue with the metadata, through a view over a view too) refresh it by their notices,
 * in its account. The fallback here is 10 minutes: only a notice can explain a refresh.
 */
const SCHEMA = `
  CREATE TABLE lender_desks (
    account_id uuid NOT NULL,
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    name text NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE lender_tickets (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    desk uuid NOT NULL,
    amount numeric(12, 2) NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, desk) REFERENCES lender_desks (account_id, id)
  );
  -- Tickets' notices name their desk: a read of one desk's tickets is keyed by it.
  CREATE TRIGGER loanql_notice_insert AFTER INSERT ON lender_tickets REFERENCING NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes('desk');
  CREATE TRIGGER loanql_notice_update AFTER UPDATE ON lender_tickets REFERENCING OLD TABLE AS loanql_old_rows NEW TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_updates('desk');
  CREATE TRIGGER loanql_notice_delete AFTER DELETE ON lender_tickets REFERENCING OLD TABLE AS loanql_changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_notice_changes('desk');
  -- A view over the two tables, and a view over that view. lender_desks is read only through them.
  CREATE VIEW lender_desk_totals AS
    SELECT d.account_id, d.id, d.name, coalesce(sum(t.amount), 0)::numeric(14, 2) AS total, count(t.id)::integer AS tickets
      FROM lender_desks d LEFT JOIN lender_tickets t ON t.account_id = d.account_id AND t.desk = d.id
     GROUP BY d.account_id, d.id, d.name;
  CREATE VIEW lender_busy_desks AS SELECT account_id, id, name, total FROM lender_desk_totals WHERE total >= 100;
  -- Read by no view.
  CREATE TABLE lender_notes (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (account_id, id)
  );
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  tickets:
    table: lender_tickets
    primary_key: id
    fields: { id: bigint, desk: uuid, amount: numeric }
    relationships:
      every_desk_total: { array: desk_totals, on: { account_id: account_id } }
  desk_totals:
    table: lender_desk_totals
    fields: { id: uuid, name: text, total: numeric, tickets: integer }
  busy_desks:
    table: lender_busy_desks
    fields: { id: uuid, name: text, total: numeric }
  notes:
    table: lender_notes
    primary_key: id
    fields: { id: bigint, body: text }
    insert: { columns: [body] }
`;

let s: LenderSchemaService;
let client: TestClient;

before(async () => {
  const defaults = configFromEnv({});
  s = await startLenderSchemaService(SCHEMA, METADATA, { subscriptions: { ...defaults.subscriptions, fallbackIntervalMs: 600_000 } });
  client = connect(s.server.url, s.key);
});
after(async () => {
  await client?.dispose();
  await s?.close();
});

/** A write as a lender's own system makes it: straight into its table, in the test account. */
async function write(sql: string, values: unknown[] = []): Promise<any[]> {
  return (await s.database.db.query(sql, [s.accountId, ...values])).rows;
}

async function addDesk(name: string): Promise<string> {
  const [row] = await write('INSERT INTO lender_desks (account_id, name) VALUES ($1, $2) RETURNING id', [name]);
  return row.id as string;
}

/** Counts the cohort statements run while it is on (their json parameter is the subscribers'). */
function countRefreshes(): { readonly count: () => number; stop(): void } {
  let runs = 0;
  const stop = s.database.db.observe((text) => {
    if (text.includes('json_to_recordset')) runs += 1;
  });
  return { count: () => runs, stop };
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads results until one satisfies `done` (a refresh may come between a write's two notices); each within 5 s. */
async function until<T>(live: Subscription, done: (data: any) => T | undefined): Promise<T> {
  for (;;) {
    const found = done((await live.next(5000)).data);
    if (found !== undefined) return found;
  }
}

describe('A live query over a view', () => {
  it('knows the tables under each view from the catalogue, through a view over a view, and gives them change notices at start', async () => {
    const under = s.server.engines.engine.metadata.tablesUnderViews;
    assert.deepEqual(under.get('lender_desk_totals'), ['lender_desks', 'lender_tickets']);
    assert.deepEqual(under.get('lender_busy_desks'), ['lender_desks', 'lender_tickets']);
    assert.equal(under.has('lender_notes'), false);
    const { rows } = await s.database.db.query<{ table: string; triggers: string[] | string }>(
      `SELECT c.relname::text AS "table", array_agg(g.tgname::text ORDER BY g.tgname) AS triggers FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
        WHERE c.relname IN ('lender_desks', 'lender_tickets') AND g.tgname LIKE 'loanql_notice_%' GROUP BY c.relname ORDER BY 1`,
    );
    // lender_desks is no collection and had none: the service gave it them because a view reads it.
    // lender_tickets keeps its own, keyed by desk.
    const notices = ['loanql_notice_delete', 'loanql_notice_insert', 'loanql_notice_update'];
    assert.deepEqual(rows.map((row) => [row.table, Array.isArray(row.triggers) ? row.triggers : row.triggers.replace(/^\{|\}$/g, '').split(',')]), [['lender_desks', notices], ['lender_tickets', notices]]);
  });

  it('is refreshed by a write to each table the view reads, long before the fallback', async () => {
    const live = subscribe(client.client, 'subscription { desk_totals(order_by: {name: asc}) { name total tickets } }');
    assert.deepEqual((await live.next()).data.desk_totals, []);
    const desk = await addDesk('Alpha');
    // Before: the notice named lender_desks, which the statement does not name — nothing for 10 minutes.
    assert.deepEqual((await live.next(5000)).data.desk_totals, [{ name: 'Alpha', total: 0, tickets: 0 }]);
    await write('INSERT INTO lender_tickets (account_id, desk, amount) VALUES ($1, $2, 40.25)', [desk]);
    assert.deepEqual((await live.next(5000)).data.desk_totals, [{ name: 'Alpha', total: 40.25, tickets: 1 }]);
    await write('UPDATE lender_tickets SET amount = 60.50 WHERE account_id = $1 AND desk = $2', [desk]);
    assert.deepEqual((await live.next(5000)).data.desk_totals, [{ name: 'Alpha', total: 60.5, tickets: 1 }]);
    await write('DELETE FROM lender_tickets WHERE account_id = $1 AND desk = $2', [desk]);
    assert.deepEqual((await live.next(5000)).data.desk_totals, [{ name: 'Alpha', total: 0, tickets: 0 }]);
    live.stop();
  });

  it('over a view over a view is refreshed by the tables under both', async () => {
    const live = subscribe(client.client, 'subscription { busy_desks(order_by: {name: asc}) { name total } }');
    const before = (await live.next()).data.busy_desks as unknown[];
    const desk = await addDesk('Bravo');
    await write('INSERT INTO lender_tickets (account_id, desk, amount) VALUES ($1, $2, 150.00)', [desk]);
    const busy = await until(live, (data) => (data.busy_desks.length > before.length ? data.busy_desks : undefined));
    assert.deepEqual(busy, [...before, { name: 'Bravo', total: 150 }]);
    await write('UPDATE lender_desks SET name = $2 WHERE account_id = $1 AND id = $3', ['Bravo two', desk]);
    assert.deepEqual((await live.next(5000)).data.busy_desks, [...before, { name: 'Bravo two', total: 150 }]);
    live.stop();
  });

  it('is not refreshed by a write to a table no view of it reads, nor by a write in another account', async () => {
    const live = subscribe(client.client, 'subscription { desk_totals(order_by: {name: asc}) { name total } }');
    await live.next();
    await settle(300);
    const refreshes = countRefreshes();
    try {
      const response = await fetch(`${s.server.url}/api/graph`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...tokenHeader(s.key) },
        body: JSON.stringify({ query: 'mutation { insert_notes_one(object: {body: "unrelated"}) { id } }' }),
      });
      assert.equal(((await response.json()) as { errors?: unknown }).errors, undefined);
      // Another account's desk: its notice names that account.
      await s.database.db.query('INSERT INTO lender_desks (account_id, name) VALUES (gen_random_uuid(), $1)', ['Elsewhere']);
      await settle(600);
      assert.equal(refreshes.count(), 0);
      assert.equal(live.waiting, 0);
      // The same subscription still hears its own tables.
      await addDesk('Charlie');
      await until(live, (data) => (data.desk_totals.some((row: { name: string }) => row.name === 'Charlie') ? true : undefined));
      assert.ok(refreshes.count() >= 1);
    } finally {
      refreshes.stop();
      live.stop();
    }
  });

  it("read beside a keyed read of the same table is refreshed by any of the account's writes to it, not only its key's", async () => {
    const [a, b] = [await addDesk('Delta'), await addDesk('Echo')];
    await write('INSERT INTO lender_tickets (account_id, desk, amount) VALUES ($1, $2, 1.00)', [a]);
    // Desk A's tickets are read keyed by $a; under each, the view reads every desk's tickets.
    const query = 'subscription($a: uuid!, $b: uuid!) { tickets(where: {desk: {_eq: $a}}) { amount every_desk_total(where: {id: {_eq: $b}}) { total } } }';
    const live = subscribe(client.client, query, { a, b });
    assert.deepEqual((await live.next()).data.tickets, [{ amount: 1, every_desk_total: [{ total: 0 }] }]);
    await write('INSERT INTO lender_tickets (account_id, desk, amount) VALUES ($1, $2, 12.34)', [b]);
    // Before: lender_tickets was keyed by $a for the whole statement, so desk B's ticket refreshed nothing.
    assert.deepEqual((await live.next(5000)).data.tickets, [{ amount: 1, every_desk_total: [{ total: 12.34 }] }]);
    live.stop();
  });
});
