import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, send, startSeededService, type SeededService } from '../support/seededService.js';
import { testDatabaseKind } from '../support/testDatabase.js';

/**
 * Issue 15/20: a relationship filter that only goes through an object relationship's target to
 * one of the target's relationships (`schedules(where: {loan: {funding_sources: {person_id: …}}})`,
 * the investor role's filter of schedules, payments, borrows …) skips the target's table when a
 * foreign key guarantees the target row — `funding_sources.loan_id = schedules.loan_id` — and
 * keeps it otherwise. The answers are the same either way and match plain SQL.
 */
let s: SeededService;

before(async () => {
  s = await startSeededService();
});

after(async () => {
  await s?.close();
});

const headers = () => ({ 'content-type': 'application/json', authorization: `Token ${s.apiKey}` });

async function explainSql(query: string, variables: Record<string, unknown>): Promise<string> {
  const answer = await send(`${s.url}/api/graph/explain`, { method: 'POST', headers: headers(), body: JSON.stringify({ query, variables }) });
  assert.equal(answer.status, 200, answer.text);
  return (answer.body as { sql: string }).sql;
}

async function graph(query: string, variables: Record<string, unknown>): Promise<{ schedules: { id: string }[] }> {
  const answer = await send(`${s.url}/api/graph`, { method: 'POST', headers: headers(), body: JSON.stringify({ query, variables }) });
  assert.equal(answer.status, 200, answer.text);
  return dataOf(answer) as { schedules: { id: string }[] };
}

const THROUGH = `query Q($p: uuid!) { schedules(where: {loan: {funding_sources: {person_id: {_eq: $p}}}}, order_by: {id: asc}, limit: 5000) { id } }`;
/** The same condition in a shape the rewrite does not take (an `_and` inside the object relationship). */
const KEPT = `query Q($p: uuid!) { schedules(where: {loan: {_and: [{funding_sources: {person_id: {_eq: $p}}}]}}, order_by: {id: asc}, limit: 5000) { id } }`;

describe(`filters through a foreign key (${testDatabaseKind})`, () => {
  it('schedules.loan is backed by the foreign key the rewrite relies on', async () => {
    const rows = await s.sql<{ def: string }>(
      `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c WHERE c.conrelid = 'schedules'::regclass AND c.contype = 'f' AND c.confrelid = 'loans'::regclass`,
    );
    assert.ok(rows.some((row) => /FOREIGN KEY \(account_id, loan_id\) REFERENCES loans\(account_id, id\)/.test(row.def)), JSON.stringify(rows));
  });

  it('skips the loans table in the filter and answers as the long form and as plain SQL do', async () => {
    const [investor] = await s.sql<{ person_id: string }>(
      `SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC, person_id LIMIT 1`,
      [s.account.id],
    );
    assert.ok(investor, 'the seeded account has funding sources');
    const variables = { p: investor.person_id };
    const short = await explainSql(THROUGH, variables);
    assert.ok(!/FROM "loans"/.test(short), short);
    assert.match(short, /FROM "funding_sources" AS "_t\d+" WHERE "_t\d+"\."account_id" = \$1 AND "_t\d+"\."loan_id" = "_t\d+"\."loan_id"/);
    const long = await explainSql(KEPT, variables);
    assert.match(long, /FROM "loans"/, 'the other shape keeps the hop');

    const fromShort = await graph(THROUGH, variables);
    const fromLong = await graph(KEPT, variables);
    assert.deepEqual(fromShort, fromLong);
    const expected = await s.sql<{ id: string }>(
      `SELECT s.id FROM schedules s WHERE s.account_id = $1 AND s.loan_id IN (SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2) ORDER BY s.id`,
      [s.account.id, investor.person_id],
    );
    assert.ok(expected.length > 0);
    assert.deepEqual(fromShort.schedules.map((row) => row.id), expected.map((row) => row.id));
  });

  it('a person who funds nothing sees no schedules either way', async () => {
    const variables = { p: '00000000-0000-4000-8000-000000000000' };
    assert.deepEqual(await graph(THROUGH, variables), { schedules: [] });
    assert.deepEqual(await graph(KEPT, variables), { schedules: [] });
  });
});
