import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { testDatabaseKind } from '../support/testDatabase.js';

/**
 * SPEC §12 R10: "Σ w > 1 is a 400 when the source is written." Two clerks recording two
 * investors' participations in one loan at the same moment — 60,000 each in a 100,000 loan — used
 * to both pass the check on PostgreSQL (each summed only what it saw), and every payment then paid
 * the investors more than its share while the lender's lines went below zero. Now the writes of one
 * loan's sources take turns (migration 0070): exactly one is written, the other is refused naming
 * `original_amount`. On PGlite (one session) the writes always took turns: the test guards the
 * rule there, and shows the race on PostgreSQL (`TEST_DATABASE_URL`).
 */
let s: KeyedService;

async function graph(query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
  const response = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function person(name: string): Promise<string> {
  const answer = await graph(`mutation ($name: String!) { insert_people_one(object: {name: $name, entity_type: "individual"}) { id } }`, { name });
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data.insert_people_one.id;
}

before(async () => {
  s = await startKeyedService();
});
after(async () => {
  await s?.close();
});

describe(`Funding one loan from two requests at once (${testDatabaseKind})`, () => {
  it('60,000 and 60,000 into a 100,000 loan at the same moment: one source written, the other refused naming original_amount', async () => {
    for (let round = 1; round <= 5; round++) {
      const created = await s.rest.post('/api/loan', { Name: `Cedar ${round}`, Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
      assert.equal(created.status, 201, created.text);
      const loan = created.json.loan.id as string;
      const investors = [await person(`Ann ${round}`), await person(`Ben ${round}`)];
      const answers = await Promise.all(
        investors.map((p) =>
          graph(
            `mutation ($p: uuid!, $l: uuid!) { insert_funding_sources_one(object: {person_id: $p, loan_id: $l, original_amount: "60000", rate: "12", date_funded: "2026-01-15"}) { id } }`,
            { p, l: loan },
          ),
        ),
      );
      const refused = answers.filter((answer) => answer.errors);
      assert.equal(refused.length, 1, `round ${round}: one of the two refused, ${JSON.stringify(answers)}`);
      assert.match(refused[0]!.errors![0]!.message, /original_amount/);
      const { rows } = await s.db.query<{ total: string; n: string }>(
        `SELECT coalesce(sum(original_amount), 0)::text AS total, count(*)::text AS n FROM funding_sources WHERE account_id = $1 AND loan_id = $2`,
        [s.accountId, loan],
      );
      assert.deepEqual(rows[0], { total: '60000.00', n: '1' }, `round ${round}: the sources fund at most the loan`);
    }
  });
});
