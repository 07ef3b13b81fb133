import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, startSeededService, type Answer, type GraphBody, type SeededService } from '../support/seededService.js';

/**
 * Session 37's audit of the mutations as a developer who knows Hasura would use them: each case
 * is one a Hasura client writes, answered as Hasura's documentation says (or as the README says
 * where loanql differs on purpose), and failed before the session's fix.
 */
let s: SeededService;

before(async () => {
  s = await startSeededService();
});
after(() => s?.close());

/** The errors of an answer that must have failed as a client's mistake (200, no data). */
function errorsOf(answer: Answer<GraphBody>): NonNullable<GraphBody['errors']> {
  assert.equal(answer.status, 200, answer.text);
  assert.ok(answer.body.errors?.length, `expected errors, got ${answer.text.slice(0, 500)}`);
  assert.equal(answer.body.data, undefined, answer.text);
  return answer.body.errors!;
}

const peopleNamed = async (name: string): Promise<number> =>
  Number((await s.sql<{ n: string }>(`SELECT count(*)::text AS n FROM people WHERE account_id = $1 AND lower(name) = lower($2)`, [s.account.id, name]))[0]!.n);

describe('Mutation audit: on_conflict names constraints only', () => {
  it('offers the table\'s unique constraints, not a unique index backing none (an upsert naming one was a 500)', async () => {
    const offered = dataOf(await s.graph(`{ __type(name: "people_constraint") { enumValues { name } } }`)).__type.enumValues.map((value: { name: string }) => value.name);
    assert.deepEqual(offered, ['people_pkey'], 'people_individual_identity and people_company_identity are unique indexes on lower(name): ON CONFLICT ON CONSTRAINT cannot name them');

    const refused = errorsOf(
      await s.graph(`mutation { insert_people_one(object: {name: "Ada Upsert", email: "ada@upsert.test", entity_type: "individual"}, on_conflict: {constraint: people_individual_identity, update_columns: [phone]}) { id } }`),
    );
    assert.equal(refused[0]!.extensions?.code, 'validation-failed', JSON.stringify(refused));
    assert.match(refused[0]!.message, /people_individual_identity/);
    assert.equal(await peopleNamed('Ada Upsert'), 0, 'nothing written');

    const inserted = dataOf(
      await s.graph(`mutation { insert_people_one(object: {name: "Ada Upsert", email: "ada@upsert.test", entity_type: "individual"}, on_conflict: {constraint: people_pkey, update_columns: [phone]}) { name } }`),
    );
    assert.deepEqual(inserted.insert_people_one, { name: 'Ada Upsert' }, 'the primary key still serves an upsert');
  });
});
