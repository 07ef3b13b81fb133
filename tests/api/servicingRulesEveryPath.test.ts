import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphBody } from '../support/graphData.js';
import { installTestClock, setTestClock } from '../support/testClock.js';
import { startKeyedService, type KeyedAccount, type KeyedService } from '../support/seededService.js';

/**
 * Servicing rules that differed between write paths (migration 0090, session 41): a manual fee on a
 * `closed` loan (the dashboard's form and the servicer role refused it, the admin's GraphQL and SQL
 * took it and the replay reopened a paid-off loan), a loan holding a manual fee set back to `lead`
 * (taken: the fee stayed on a lead whose figures then read null), and the deletion of an account
 * that had taken a payment (a foreign-key error from its distribution lines). Business date 2026-06-30.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-06-30');
});
after(() => s?.close());

const graph = (query: string, variables: Record<string, unknown> = {}, account: KeyedAccount = s): Promise<any> => graphBody(s.url, account.key, query, variables);

async function ok(query: string, variables: Record<string, unknown> = {}, account: KeyedAccount = s): Promise<any> {
  const answer = await graph(query, variables, account);
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data;
}

/** 1,000.00 at 0 % over 2 months, funded 2026-01-15, in servicing; its id. */
async function smallLoan(name: string, account: KeyedAccount = s): Promise<string> {
  const created = await account.rest.post('/api/loan', { Name: name, Amount: 1000, Rate: 0, Term: 2, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  return created.json.loan.id as string;
}

async function pay(loan: string, date: string, amount: string, account: KeyedAccount = s): Promise<string> {
  const data = await ok(
    `mutation ($loan: uuid!, $date: date!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "regular", method: "ach"}) { id } }`,
    { loan, date, amount },
    account,
  );
  return data.insert_payments_one.id as string;
}

const addFee = (loan: string, amount = '35.00') =>
  graph(`mutation ($loan: uuid!, $amount: numeric!) { insert_fees_one(object: {loan_id: $loan, amount: $amount, date: "2026-06-01", description: "Payoff statement"}) { id } }`, { loan, amount });

async function loanRow(loan: string): Promise<{ status: string; fees_due: string | null; manual: number }> {
  const { rows } = await s.db.query<{ status: string; fees_due: string | null; manual: number }>(
    `SELECT status, fees_due::text AS fees_due, (SELECT count(*)::int FROM fees f WHERE f.loan_id = l.id AND f.kind = 'manual') AS manual FROM loans l WHERE id = $1`,
    [loan],
  );
  return rows[0]!;
}

describe('a manual fee on a closed loan (migration 0090)', () => {
  it('is refused on every path, naming loan_id, and the paid-off loan stays closed; nothing written', async () => {
    // insert_fees_one took it and the replay reopened the loan: servicing, owing 35.00 after its payoff.
    const loan = await smallLoan('Paid off');
    await pay(loan, '2026-02-15', '1000.00');
    assert.deepEqual(await loanRow(loan), { status: 'closed', fees_due: '0.00', manual: 0 });
    const refused = await addFee(loan);
    assert.equal(refused.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(refused));
    assert.deepEqual(refused.errors[0].extensions.fields, ['loan_id']);
    assert.equal(
      refused.errors[0].message,
      "insert_fees_one: loan_id: the loan is closed: it is charged fees while in servicing or overpaid (a fee owed at payoff, a payoff statement's, is charged before the payoff is posted)",
    );
    await assert.rejects(s.db.query(`INSERT INTO fees (account_id, loan_id, kind, date, amount) VALUES ($1, $2, 'manual', '2026-06-01', 35)`, [s.accountId, loan]), /^error: the loan is closed:|the loan is closed:/);
    assert.deepEqual(await loanRow(loan), { status: 'closed', fees_due: '0.00', manual: 0 }, 'nothing written');
    // A loan closed by hand before it was funded (a withdrawn application) likewise.
    const withdrawn = await s.rest.post('/api/loan', { Name: 'Withdrawn', Amount: 5000, Status: 'closed' });
    assert.equal(withdrawn.status, 201, withdrawn.text);
    assert.equal((await addFee(withdrawn.json.loan.id)).errors?.[0]?.extensions?.code, 'check-violation');
  });

  it('is taken by an overpaid loan (its credit pays it) and by a loan a reversal reopened', async () => {
    const overpaid = await smallLoan('Overpaid');
    await pay(overpaid, '2026-02-15', '1050.00');
    assert.equal((await loanRow(overpaid)).status, 'overpaid');
    assert.equal((await addFee(overpaid, '20.00')).errors, undefined);
    const credit = (await s.db.query<{ c: string }>(`SELECT credit_balance::text AS c FROM loans WHERE id = $1`, [overpaid])).rows[0]!.c;
    assert.equal(credit, '30.00', 'the credit paid the fee');
    const reopened = await smallLoan('Reopened');
    const payoff = await pay(reopened, '2026-02-15', '1000.00');
    await ok(`mutation ($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-20", reversal_reason: "error"}) { id } }`, { id: payoff });
    assert.equal((await loanRow(reopened)).status, 'servicing');
    assert.equal((await addFee(reopened)).errors, undefined);
  });
});

describe('a loan holding a manual fee set back to lead (migration 0090)', () => {
  it('is refused over REST (400 naming Status), GraphQL and SQL, its fee, status and figures unchanged; waived fees count', async () => {
    // It answered 200: the fee stayed on a lead, and fees_due (35.00) read null.
    const loan = await smallLoan('Charged, never paid');
    assert.equal((await addFee(loan)).errors, undefined);
    const before = await loanRow(loan);
    assert.equal(before.status, 'servicing');
    const back = await s.rest.patch(`/api/loan/${loan}`, { Status: 'lead' });
    assert.equal(back.status, 400, back.text);
    assert.deepEqual(Object.keys(back.json.fields), ['Status']);
    assert.equal(back.json.fields.Status, 'the loan holds 1 manual fee, so it has been serviced: it cannot be a lead again (a lead owes nothing, and its fees would be left on a loan not funded)');
    const graphBack = await graph(`mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "lead"}) { status } }`, { id: loan });
    assert.equal(graphBack.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(graphBack));
    assert.deepEqual(graphBack.errors[0].extensions.fields, ['status']);
    await assert.rejects(s.db.query(`UPDATE loans SET status = 'lead' WHERE id = $1`, [loan]), /the loan holds 1 manual fee/);
    assert.deepEqual(await loanRow(loan), before, 'nothing changed');
    // Waived, the fee is still history of a serviced loan.
    const fee = (await s.db.query<{ id: string }>(`SELECT id FROM fees WHERE loan_id = $1 AND kind = 'manual'`, [loan])).rows[0]!.id;
    await ok(`mutation ($fee: uuid!) { insert_fee_waivers_one(object: {fee_id: $fee, waived_by: "Sam", reason: "goodwill"}) { id } }`, { fee });
    assert.equal((await addFee(loan, '10.00')).errors, undefined);
    const twice = await s.rest.patch(`/api/loan/${loan}`, { Status: 'lead' });
    assert.equal(twice.status, 400, twice.text);
    assert.match(twice.json.fields.Status, /^the loan holds 2 manual fees, so it has been serviced/);
    // A loan with no fee and no payment, set to servicing by mistake, still goes back.
    const mistaken = await smallLoan('Funded by mistake');
    assert.equal((await s.rest.patch(`/api/loan/${mistaken}`, { Status: 'lead' })).status, 200);
  });
});

describe('deleting a whole account (migration 0090)', () => {
  it('removes an account with payments, distribution lines and a remittance, every row of it, and no other account\'s', async () => {
    // DELETE FROM accounts failed: distributions and distribution_batches referenced accounts without ON DELETE CASCADE.
    const gone = await s.newAccount();
    const loan = await smallLoan('Investor loan', gone);
    const person = (await ok(`mutation { insert_people_one(object: {name: "Ann Investor", entity_type: "individual"}) { id } }`, {}, gone)).insert_people_one.id;
    await ok(
      `mutation ($p: uuid!, $l: uuid!) { insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: "600.00", rate: "0", date_funded: "2026-01-15", class: "A"}) { id } }`,
      { p: person, l: loan },
      gone,
    );
    await pay(loan, '2026-02-15', '500.00', gone);
    const marked = await gone.rest.post('/api/remittances', { from: '2026-01-01', to: '2026-03-31' });
    assert.equal(marked.status, 201, marked.text);
    const kept = await smallLoan('Another account\'s loan');
    await pay(kept, '2026-02-15', '500.00');
    const TABLES = ['loans', 'payments', 'payment_allocations', 'funding_sources', 'distributions', 'distribution_batches', 'remittances', 'people', 'api_keys'];
    const counts = async (account: string) =>
      Object.fromEntries(await Promise.all(TABLES.map(async (table) => [table, (await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [account])).rows[0]!.n])));
    const held = await counts(gone.accountId);
    for (const table of ['payments', 'distributions', 'distribution_batches', 'remittances']) assert.ok(held[table] > 0, `${table}: ${JSON.stringify(held)}`);
    const other = await counts(s.accountId);
    await s.db.query('DELETE FROM accounts WHERE id = $1', [gone.accountId]);
    assert.deepEqual(await counts(gone.accountId), Object.fromEntries(TABLES.map((table) => [table, 0])));
    assert.deepEqual(await counts(s.accountId), other, 'no other account\'s row');
  });
});

describe('PATCH /api/loan/{id} names a Status the ledger refuses with the body\'s other bad fields, in one 400 (as POST does)', () => {
  const OVERPAID_BY_LEDGER = 'overpaid is set by the ledger (when a loan is paid off with money to spare), not by hand';

  /** The loan's whole row: a refused PATCH leaves it exactly as it was. */
  async function wholeRow(loan: string): Promise<unknown> {
    return (await s.db.query('SELECT to_jsonb(l) AS row FROM loans l WHERE id = $1', [loan])).rows[0];
  }

  async function refused(loan: string, body: Record<string, unknown>, named: readonly string[]): Promise<Record<string, string>> {
    const before = await wholeRow(loan);
    const answer = await s.rest.patch(`/api/loan/${loan}`, body);
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(Object.keys(answer.json.fields).sort(), [...named].sort(), answer.text);
    assert.deepEqual(await wholeRow(loan), before, 'nothing written');
    return answer.json.fields as Record<string, string>;
  }

  it('an overpaid Status with wrongly typed fields: Status, Amount and Rate together (Status was named only once the rest was fixed)', async () => {
    const loan = await smallLoan('Patched overpaid');
    const fields = await refused(loan, { Status: 'overpaid', Amount: 'lots', Rate: 'high' }, ['Status', 'Amount', 'Rate']);
    assert.equal(fields.Status, OVERPAID_BY_LEDGER);
    // Alone, the same sentence; the key as sent (any case) is the one named.
    assert.equal((await refused(loan, { Status: 'overpaid' }, ['Status'])).Status, OVERPAID_BY_LEDGER);
    assert.equal((await refused(loan, { status: 'overpaid', Name: '  ' }, ['status', 'Name'])).status, OVERPAID_BY_LEDGER);
  });

  it('closed by hand while money is owed, and servicing for a paid-off loan, named with a blank Name', async () => {
    const owing = await smallLoan('Patched closed');
    assert.match((await refused(owing, { Status: 'closed', Name: '' }, ['Status', 'Name'])).Status ?? '', /still owes principal 1000\.00/);
    const paidOff = await smallLoan('Patched servicing');
    await pay(paidOff, '2026-02-15', '1000.00');
    assert.equal((await loanRow(paidOff)).status, 'closed');
    assert.match((await refused(paidOff, { Status: 'servicing', Amount: -1 }, ['Status', 'Amount'])).Status ?? '', /the loan is paid off \(settled on 2026-02-15\)/);
  });

  it('a Status the ledger takes is not named: an overpaid loan kept overpaid, a lead made servicing', async () => {
    const overpaid = await smallLoan('Kept overpaid');
    await pay(overpaid, '2026-02-15', '1050.00');
    assert.equal((await loanRow(overpaid)).status, 'overpaid');
    await refused(overpaid, { Status: 'overpaid', Amount: 'lots' }, ['Amount']);
    const lead = await s.rest.post('/api/loan', { Name: 'A lead', Amount: 1000, Rate: 0, Term: 2, Frequency: 'monthly', Date_Funded: '2026-01-15' });
    assert.equal(lead.status, 201, lead.text);
    await refused(lead.json.loan.id, { Status: 'servicing', Rate: 'high' }, ['Rate']);
  });

  it('a loan the key cannot see (none with that id) tells nothing of a status: only the body\'s own fields', async () => {
    const answer = await s.rest.patch('/api/loan/00000000-0000-4000-8000-000000000000', { Status: 'closed', Amount: 'lots' });
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(Object.keys(answer.json.fields), ['Amount']);
  });
});
