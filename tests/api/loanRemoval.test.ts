import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { tokenHeader } from '../support/http.js';
import { restClient } from '../support/restClient.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { send, startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * A loan entered by mistake (session 41). No interface removed a loan — `DELETE /api/loan/{id}`
 * was a 405, GraphQL had no `delete_loans_by_pk` — while a `DELETE FROM loans` in SQL took the
 * loan's payments, fees and distribution lines with it (every table cascaded). Now a loan without
 * money history is removed with its schedule rows, tasks, comments and links (REST for admin keys,
 * GraphQL's `delete_loans_by_pk`, the dashboard), and one holding a payment, a fee, a waiver, a
 * funding source or a distribution line is refused by the database for every writer (migration
 * 0086): REST's 409 names what it holds. Business date 2026-06-30.
 */
let service: KeyedService;

before(async () => {
  service = await startKeyedService();
  await installTestClock(service.db);
  await setTestClock(service.db, '2026-06-30');
});

after(async () => {
  await service?.close();
});

async function graph(query: string, variables: Record<string, unknown> = {}, key = service.key): Promise<any> {
  const answer = await send(`${service.url}/api/graph`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return answer.body;
}

async function count(table: string, loanId: string): Promise<number> {
  const { rows } = await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1 AND loan_id = $2`, [service.accountId, loanId]);
  return rows[0]!.n;
}

/** A loan typed by mistake, with what a day of work hangs on it: a schedule, a task, a comment, a borrower, an address. */
async function mistakenLoan(name: string, status = 'lead'): Promise<string> {
  const created = await service.rest.post('/api/loan', {
    Name: name,
    Amount: 12000,
    Rate: 12,
    Term: 12,
    Frequency: 'monthly',
    Date_Funded: '2026-01-15',
    Status: status,
    Borrower_Name: 'Ada Lovelace',
    Borrower_Email: 'ada@example.com',
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.loan.id as string;
  const written = await graph(
    `mutation ($loan: uuid!) {
       insert_tasks_one(object: {loan_id: $loan, name: "Call the borrower"}) { id }
       insert_comments_one(object: {loan_id: $loan, text: "typed twice"}) { id }
       insert_addresses_one(object: {street1: "1 Elm St", address_details: {data: [{loan_id: $loan}]}}) { id }
     }`,
    { loan: id },
  );
  assert.equal(written.errors, undefined, JSON.stringify(written));
  return id;
}

const DEPENDENTS = ['schedules', 'tasks', 'comments', 'borrows', 'address_details'];

describe('DELETE /api/loan/{id}', () => {
  it('removes a loan without money history with its schedule rows, tasks, comments and links, and answers the loan as it was', async () => {
    const id = await mistakenLoan('Typed twice');
    for (const table of DEPENDENTS) assert.ok((await count(table, id)) > 0, table);
    const removed = await service.rest.send('DELETE', `/api/loan/${id}`);
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.json.loan.id, id);
    assert.equal(removed.json.loan.name, 'Typed twice');
    assert.equal((await service.rest.get(`/api/loan/${id}`)).status, 404);
    for (const table of DEPENDENTS) assert.equal(await count(table, id), 0, table);
    // The borrower and the address are the account's, not the loan's: they stay.
    const people = await service.db.query(`SELECT 1 FROM people WHERE account_id = $1 AND name = 'Ada Lovelace'`, [service.accountId]);
    assert.equal(people.rows.length, 1);
    // Removed once: a second DELETE finds no loan.
    assert.equal((await service.rest.send('DELETE', `/api/loan/${id}`)).status, 404);
  });

  it('refuses, 409 naming what it holds, a loan with a payment — reversed or not — and removes nothing', async () => {
    const id = await mistakenLoan('Paid once', 'servicing');
    const paid = await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: 1066.19}) { id } }`, { loan: id });
    assert.equal(paid.errors, undefined, JSON.stringify(paid));
    const refused = await service.rest.send('DELETE', `/api/loan/${id}`);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.code, 'loan-holds-money');
    // Its late fees are the replay's (unpaid, derived from the schedule): the payment and its investor lines are what count.
    assert.deepEqual(refused.json.holds, { payments: 1, distributions: 2 });
    assert.match(refused.json.error, /the loan Paid once holds money history \(1 payment, 2 distribution lines\), which is never deleted: reverse its payments and waive its fees instead/);
    assert.equal((await service.rest.get(`/api/loan/${id}`)).status, 200);
    assert.equal(await count('payments', id), 1);
    for (const table of DEPENDENTS) assert.ok((await count(table, id)) > 0, table);

    const reversed = await graph(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-16"}) { id } }`, { id: paid.data.insert_payments_one.id });
    assert.equal(reversed.errors, undefined, JSON.stringify(reversed));
    const still = await service.rest.send('DELETE', `/api/loan/${id}`);
    assert.equal(still.status, 409, still.text);
    assert.equal(still.json.holds.payments, 1);
  });

  it('refuses a loan with a funding source or a manual fee (money committed or owed)', async () => {
    const funded = await mistakenLoan('Funded by an investor', 'servicing');
    const investor = (await graph(`mutation { insert_people_one(object: {name: "Ivy Investor"}) { id } }`)).data.insert_people_one.id;
    const source = await graph(`mutation ($loan: uuid!, $p: uuid!) { insert_funding_sources_one(object: {loan_id: $loan, person_id: $p, original_amount: 6000, date_funded: "2026-01-15"}) { id } }`, { loan: funded, p: investor });
    assert.equal(source.errors, undefined, JSON.stringify(source));
    const charged = await mistakenLoan('Charged a fee', 'servicing');
    const fee = await graph(`mutation ($loan: uuid!) { insert_fees_one(object: {loan_id: $loan, amount: 25, description: "inspection"}) { id } }`, { loan: charged });
    assert.equal(fee.errors, undefined, JSON.stringify(fee));
    const one = await service.rest.send('DELETE', `/api/loan/${funded}`);
    assert.equal(one.status, 409, one.text);
    assert.deepEqual(one.json.holds, { funding_sources: 1 });
    assert.ok((await count('fees', charged)) > 1, 'late fees derived by the replay, besides the manual one');
    const two = await service.rest.send('DELETE', `/api/loan/${charged}`);
    assert.equal(two.status, 409, two.text);
    assert.deepEqual(two.json.holds, { fees: 1 });
    assert.match(two.json.error, /\(1 fee\)/);
  });

  it('a payment committed while the removal waits for the loan: the removal is refused (409), never a fault', async () => {
    const id = await mistakenLoan('Paid meanwhile', 'servicing');
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let posted = (): void => undefined;
    const inserted = new Promise<void>((resolve) => (posted = resolve));
    const paying = service.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-02-15', 500)`, [service.accountId, id]);
      posted();
      await held;
    });
    await inserted;
    const removal = service.rest.send('DELETE', `/api/loan/${id}`);
    // On PostgreSQL the removal now waits for the payment's lock on the loan (PGlite: for its one connection).
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    await paying;
    const answer = await removal;
    assert.equal(answer.status, 409, answer.text);
    assert.equal(answer.json.holds.payments, 1);
    assert.equal(await count('payments', id), 1);
  });

  it("is 404 for another account's loan or a malformed id, 400 for a query parameter, 403 naming loans.delete for a role without it", async () => {
    const other = await service.newAccount();
    const theirs = (await other.rest.post('/api/loan', { Name: 'Theirs' })).json.loan.id as string;
    assert.equal((await service.rest.send('DELETE', `/api/loan/${theirs}`)).status, 404);
    assert.equal((await other.rest.get(`/api/loan/${theirs}`)).status, 200, 'still there');
    assert.equal((await service.rest.send('DELETE', '/api/loan/not-a-uuid')).status, 404);
    const mine = await mistakenLoan('Kept by a parameter');
    const withQuery = await service.rest.send('DELETE', `/api/loan/${mine}?force=1`);
    assert.equal(withQuery.status, 400, withQuery.text);
    assert.equal((await service.rest.get(`/api/loan/${mine}`)).status, 200);

    for (const role of ['read_only', 'servicer']) {
      const key = (await createApiKey(service.db, service.accountId, `${role} key`, { role, variables: new Map() })).key;
      const refused = await send(`${service.url}/api/loan/${mine}`, { method: 'DELETE', headers: tokenHeader(key) });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal((refused.body as { permission: string }).permission, 'loans.delete');
      const document = (await restClient(service.url, key)).document as any;
      assert.equal(document.paths['/api/loan/{id}'].delete, undefined, `the ${role} document lists no DELETE`);
    }
    assert.equal((await service.rest.get(`/api/loan/${mine}`)).status, 200);
    assert.ok((service.rest.document as any).paths['/api/loan/{id}'].delete, "the admin's document lists DELETE");
  });
});

describe('delete_loans_by_pk and the database', () => {
  it('GraphQL removes a loan without money history, and refuses one with a payment (check-violation naming it), removing nothing', async () => {
    const mistaken = await mistakenLoan('Test loan');
    const removed = await graph(`mutation ($id: uuid!) { delete_loans_by_pk(id: $id) { id name } }`, { id: mistaken });
    assert.deepEqual(removed, { data: { delete_loans_by_pk: { id: mistaken, name: 'Test loan' } } });
    for (const table of DEPENDENTS) assert.equal(await count(table, mistaken), 0, table);

    const paid = await mistakenLoan('Paid through GraphQL', 'servicing');
    assert.equal((await graph(`mutation ($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-02-15", amount: 500}) { id } }`, { loan: paid })).errors, undefined);
    const refused = await graph(`mutation ($id: uuid!) { delete_loans_by_pk(id: $id) { id } }`, { id: paid });
    assert.equal(refused.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(refused));
    assert.match(refused.errors[0].message, /^delete_loans_by_pk: the loan Paid through GraphQL holds money history \(1 payment, /);
    assert.equal(refused.data ?? null, null);
    assert.equal(await count('payments', paid), 1);
    assert.equal(await count('schedules', paid), 12);
  });

  it('a DELETE in SQL of a loan with money history is refused with the same sentence; deleting the whole account still removes its loans', async () => {
    const account = await service.newAccount();
    const created = await account.rest.post('/api/loan', { Name: 'Book loan', Amount: 1000, Rate: 0, Term: 2, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
    const id = created.json.loan.id as string;
    await service.db.query(`INSERT INTO fees (account_id, loan_id, kind, date, amount) VALUES ($1, $2, 'manual', '2026-02-15', 25)`, [account.accountId, id]);
    await service.db.query(`INSERT INTO fee_waivers (account_id, fee_id, loan_id, waived_on, waived_by, reason) SELECT account_id, id, loan_id, '2026-02-16', 'Sam', 'goodwill' FROM fees WHERE account_id = $1 AND kind = 'manual'`, [account.accountId]);
    await assert.rejects(service.db.query('DELETE FROM loans WHERE account_id = $1 AND id = $2', [account.accountId, id]), (error: { code?: string; message?: string }) => {
      assert.equal(error.code, '23514');
      assert.equal(error.message, 'the loan Book loan holds money history (1 fee, 1 fee waiver), which is never deleted: reverse its payments and waive its fees instead');
      return true;
    });
    assert.equal((await service.db.query(`SELECT 1 FROM loans WHERE account_id = $1 AND id = $2`, [account.accountId, id])).rows.length, 1, 'the loan is still there');
    await service.db.query('DELETE FROM accounts WHERE id = $1', [account.accountId]);
    const left = await service.db.query('SELECT 1 FROM fees WHERE account_id = $1 UNION ALL SELECT 1 FROM loans WHERE account_id = $1', [account.accountId]);
    assert.equal(left.rows.length, 0);
  });

  it('captures loan.deleted with the loan as it was (data.old) for an endpoint subscribed to it', async () => {
    await service.db.query(`INSERT INTO webhook_endpoints (account_id, url, event_types, secret) VALUES ($1, 'https://example.test/hook', ARRAY['loan.deleted'], 'whsec_dGVzdA==')`, [service.accountId]);
    const id = await mistakenLoan('Heard about');
    assert.equal((await service.rest.send('DELETE', `/api/loan/${id}`)).status, 200);
    const { rows } = await service.db.query<{ data: { old: { id: string; name: string }; new: null; currency: string } }>(
      `SELECT data::jsonb AS data FROM webhook_outbox WHERE account_id = $1 AND type = 'loan.deleted'
        UNION ALL SELECT data::jsonb FROM webhook_events WHERE account_id = $1 AND type = 'loan.deleted'`,
      [service.accountId],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.data.old.id, id);
    assert.equal(rows[0]!.data.old.name, 'Heard about');
    assert.equal(rows[0]!.data.new, null);
    assert.equal(rows[0]!.data.currency, 'USD', 'its amount is told with the currency, as every event with an amount');
  });
});
