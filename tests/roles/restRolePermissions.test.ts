import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../../app/apiKeys.js';
import { METADATA_PATH, send, startSeededService, type Answer, type SeededService } from '../support/seededService.js';

/**
 * Issue 26, finding 1: a role's `columns`, `filter`, `check` and `set` on loans hold on the REST
 * write path exactly as on GraphQL. The probe that found it: a servicer key (update columns
 * `status, custom_fields`) rewrote a loan's terms with PATCH and regenerated its schedule.
 */
const ORIGINAL = readFileSync(METADATA_PATH, 'utf8');
/** Roles added for these tests: one with a filter and a check, one (parker) with a preset status of lead, one (leadcloser) that may set the status of leads only. */
const EXTRA_ROLES = `
  renamer:
    collections:
      loans: { select: { columns: '*' }, update: { columns: [name], filter: { status: { _eq: servicing } }, check: { name: { _ilike: "ok%" } } } }
  parker:
    collections:
      loans: { select: { columns: '*' }, update: { columns: [name, status], set: { status: lead } } }
  leadcloser:
    collections:
      loans: { select: { columns: '*' }, update: { columns: [name, status], filter: { status: { _eq: lead } } } }
`;
let dir: string;
let a: SeededService;
const keys = new Map<string, string>();
let servicingLoan: string;
let leadLoan: string;

function rest(role: string, method: string, path: string, body?: unknown): Promise<Answer<any>> {
  return send(`${a.url}/api/loan${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Token ${keys.get(role)}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function graphAs(role: string, query: string, variables?: Record<string, unknown>): Promise<Answer<any>> {
  return send(`${a.url}/api/graph`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${keys.get(role)}` },
    body: JSON.stringify({ query, variables }),
  });
}

/** The loan's terms and its schedule, as stored. */
async function terms(loanId: string): Promise<unknown> {
  const loan = await a.sql(`SELECT name, amount::text, rate::text, term, status, frequency, amortization, date_funded::text, custom_fields, updated_at FROM loans WHERE id = $1`, [loanId]);
  const schedule = await a.sql(`SELECT count(*)::int AS n, sum(payment)::text AS total FROM schedules WHERE loan_id = $1`, [loanId]);
  return { loan, schedule };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loanql-rest-roles-'));
  const metadataPath = join(dir, 'loanql.yaml');
  writeFileSync(metadataPath, ORIGINAL.replace('\nroles:\n', `\nroles:\n${EXTRA_ROLES}`));
  a = await startSeededService({ scale: 0.01, config: { metadataPath } });
  const A = a.account.id;
  servicingLoan = (await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [A]))[0]!.id;
  leadLoan = (await a.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'lead' ORDER BY id LIMIT 1`, [A]))[0]!.id;
  keys.set('admin', a.apiKey);
  for (const role of ['servicer', 'read_only', 'renamer', 'parker', 'leadcloser']) {
    keys.set(role, (await createApiKey(a.db, A, `${role} key`, { role, variables: new Map() })).key);
  }
});

after(async () => {
  await a?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Security: REST loan writes obey the role\'s update columns', () => {
  it('the probe: a servicer PATCH of Name, Amount, Rate and Term is a 403 naming each field, and nothing changes', async () => {
    const before = await terms(servicingLoan);
    const answer = await rest('servicer', 'PATCH', `/${servicingLoan}`, { Name: 'pwned', Amount: 5000000, Rate: 0, Term: 1200 });
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.body.permission, 'loans.update.columns');
    assert.equal(answer.body.role, 'servicer');
    assert.deepEqual(Object.keys(answer.body.fields).sort(), ['Amount', 'Name', 'Rate', 'Term']);
    assert.deepEqual(await terms(servicingLoan), before);
  });

  it('every field outside the servicer\'s columns is refused alone; Status and custom fields are allowed', async () => {
    const before = await terms(servicingLoan);
    const refused: Record<string, unknown> = {
      Name: 'x', Amount: 1000, Rate: 5, Term: 12, Frequency: 'monthly', Amortization: 'interest_only',
      Regular_Payment: 100, Date_Funded: '2026-01-01', First_Payment_Date: '2026-02-01', Date_Maturity: '2027-01-01',
    };
    for (const [field, value] of Object.entries(refused)) {
      const answer = await rest('servicer', 'PATCH', `/${servicingLoan}`, { [field]: value });
      assert.equal(answer.status, 403, `${field}: ${answer.text}`);
      assert.deepEqual(Object.keys(answer.body.fields), [field]);
    }
    // Case and spacing of keys do not get around it.
    assert.equal((await rest('servicer', 'PATCH', `/${servicingLoan}`, { amount: 1 })).status, 403);
    assert.equal((await rest('servicer', 'PATCH', `/${servicingLoan}`, { AMOUNT: 1 })).status, 403);
    // A refused field beside an allowed one refuses the whole request.
    assert.equal((await rest('servicer', 'PATCH', `/${servicingLoan}`, { Status: 'servicing', Name: 'x' })).status, 403);
    assert.deepEqual(await terms(servicingLoan), before);
    const allowed = await rest('servicer', 'PATCH', `/${servicingLoan}`, { Status: 'servicing', Loan_Officer: 'Jo' });
    assert.equal(allowed.status, 200, allowed.text);
  });

  it('read_only may not PATCH or POST at all (403 naming the permission), and GraphQL agrees with REST', async () => {
    assert.equal((await rest('read_only', 'PATCH', `/${servicingLoan}`, { Status: 'lead' })).body.permission, 'loans.update');
    assert.equal((await rest('read_only', 'POST', '', { Name: 'x', Amount: 1000 })).body.permission, 'loans.insert');
    assert.equal((await rest('servicer', 'POST', '', { Name: 'x', Amount: 1000 })).body.permission, 'loans.insert');
    const graph = await graphAs('servicer', `mutation ($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "x"}) { id } }`, { id: servicingLoan });
    assert.equal(graph.body.errors?.[0]?.extensions?.code, 'validation-failed');
  });
});

describe('Security: REST loan writes obey the role\'s filter, check and set', () => {
  it('a PATCH refused for a blank Name names a Status the ledger refuses only where the key may write the loan\'s status (the trial tells nothing else)', async () => {
    const before = await terms(servicingLoan);
    const body = { Status: 'closed', Name: '' };
    // The admin may: the servicing loan owes money, so closing it by hand is named with the Name.
    const admin = await rest('admin', 'PATCH', `/${servicingLoan}`, body);
    assert.equal(admin.status, 400, admin.text);
    assert.deepEqual(Object.keys(admin.body.fields).sort(), ['Name', 'Status']);
    assert.match(admin.body.fields.Status, /still owes principal/);
    // Outside leadcloser's update filter, and a status parker's preset decides: nothing said of the loan's balance.
    for (const role of ['leadcloser', 'parker']) {
      const answer = await rest(role, 'PATCH', `/${servicingLoan}`, body);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(Object.keys(answer.body.fields), ['Name'], role);
    }
    assert.deepEqual(await terms(servicingLoan), before);
  });

  it('a loan outside the update filter is no such loan (404), unchanged', async () => {
    const before = await terms(leadLoan);
    const answer = await rest('renamer', 'PATCH', `/${leadLoan}`, { Name: 'ok lead' });
    assert.equal(answer.status, 404, answer.text);
    assert.deepEqual(await terms(leadLoan), before);
  });

  it('a write that fails the check is a 403 naming loans.update.check, rolled back', async () => {
    const before = await terms(servicingLoan);
    const answer = await rest('renamer', 'PATCH', `/${servicingLoan}`, { Name: 'not ok' });
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.body.permission, 'loans.update.check');
    assert.deepEqual(await terms(servicingLoan), before);
    const ok = await rest('renamer', 'PATCH', `/${servicingLoan}`, { Name: 'OK renamed' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.loan.name, 'OK renamed');
  });

  it('a preset is written whatever the body says, and the preset field is not an input', async () => {
    // A serviced loan with no payment (one that took payments is not a lead again, migration 0053).
    const created = await rest('admin', 'POST', '', { Name: 'OK to park', Amount: 1000, Status: 'servicing' });
    assert.equal(created.status, 201, created.text);
    const unpaidLoan = created.body.loan.id as string;
    const refused = await rest('parker', 'PATCH', `/${unpaidLoan}`, { Status: 'servicing' });
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual(Object.keys(refused.body.fields), ['Status']);
    const answer = await rest('parker', 'PATCH', `/${unpaidLoan}`, { Name: 'OK parked by preset' });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.loan.status, 'lead');
    const stored = await a.sql<{ status: string }>(`SELECT status FROM loans WHERE id = $1`, [unpaidLoan]);
    assert.equal(stored[0]!.status, 'lead');
    // On a loan that took payments, the preset is refused naming status, and nothing is written. (Chosen for its
    // payments: the seeded portfolio is dated around today, so the first servicing loan may be too new to have any.)
    const paidLoan = (
      await a.sql<{ id: string }>(
        `SELECT l.id FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing' AND EXISTS (SELECT 1 FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id) ORDER BY l.id LIMIT 1`,
        [a.account.id],
      )
    )[0]!.id;
    const funded = await rest('parker', 'PATCH', `/${paidLoan}`, { Name: 'OK parked by preset' });
    assert.equal(funded.status, 400, funded.text);
    assert.match(funded.body.fields.status, /the loan has taken payments/);
    assert.equal((await a.sql<{ status: string }>(`SELECT status FROM loans WHERE id = $1`, [paidLoan]))[0]!.status, 'servicing');
  });

  it('the admin key keeps REST\'s schedule inputs', async () => {
    const answer = await rest('admin', 'PATCH', `/${leadLoan}`, { Term: 24 });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(Number(answer.body.loan.term), 24);
  });
});
