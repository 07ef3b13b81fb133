import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { buildEngine } from '../../app/engineHolder.js';
import type { GraphEngine, Principal } from '../../engine/index.js';
import type { TestDatabase } from '../support/testDatabase.js';
import { openRoleAccounts, ROLE_ACCOUNTS } from '../support/seededService.js';

/**
 * Several root aggregates of one collection in one request share one scan (the role's filter
 * once, in the scan's WHERE; each alias's `where` as a FILTER: read from the table directly, or
 * from an inner query's flags when an alias reads its `where` in several aggregate calls). For
 * each shipped role, such a request must answer exactly what each alias answers when asked
 * alone (a lone root aggregate never shares a scan), and for the investor what plain SQL over
 * the loans the person funds gives. Two accounts: the other account's rows must not count.
 */
const METADATA_PATH = fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url));
const ACCOUNT_A = ROLE_ACCOUNTS.a;

let database: TestDatabase;
let admin: GraphEngine;
let investorId: string;

before(async () => {
  // Seeded once and kept as a dump, shared with generatedRoles (openRoleAccounts).
  database = await openRoleAccounts();
  admin = await buildEngine(METADATA_PATH, database.db, { maxDepth: 12, maxRows: null, planCacheSize: 100 });
  const { rows } = await database.db.query<{ id: string }>(
    'SELECT person_id AS id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC, person_id LIMIT 1',
    [ACCOUNT_A],
  );
  investorId = rows[0]!.id;
});

after(async () => {
  await database?.close();
});

/**
 * Aliases of one request, each a root aggregate: `direct` reads each where once (no flags),
 * `flags` several times, `grouped` filters by `status: {_eq: …}` or not at all with calls that
 * combine across groups (one of them a status no loan has).
 */
const ALIASES = {
  direct: {
    lead: `loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count } }`,
    open: `loans_aggregate(where: {status: {_in: ["lead", "servicing"]}}) { aggregate { count } }`,
    all: `loans_aggregate { aggregate { count sum { amount } } }`,
    reversed: `payments_aggregate(where: {date_reversed: {_is_null: false}}) { aggregate { count } }`,
    kept: `payments_aggregate(where: {date_reversed: {_is_null: true}}) { aggregate { sum { amount } } }`,
  },
  flags: {
    servicing: `loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count sum { amount } max { rate } } }`,
    paid: `loans_aggregate(where: {payments: {date_reversed: {_is_null: true}}}) { aggregate { count avg { rate } min { amount } } }`,
    large: `loans_aggregate(where: {amount: {_gte: 100000}}) { aggregate { count } }`,
    kept: `payments_aggregate(where: {date_reversed: {_is_null: true}}) { aggregate { count sum { amount } } }`,
    reversed: `payments_aggregate(where: {date_reversed: {_is_null: false}}) { aggregate { count } }`,
  },
  grouped: {
    lead: `loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count sum { amount } min { rate date_maturity } } }`,
    servicing: `loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count sum { amount rate } max { amount date_maturity } } }`,
    closed: `loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { count max { rate } } }`,
    none: `loans_aggregate(where: {status: {_eq: "no such status"}}) { aggregate { count sum { amount } min { rate } } }`,
    all: `loans_aggregate { aggregate { count sum { amount } min { amount } max { date_maturity } } }`,
    reversed: `payments_aggregate(where: {date_reversed: {_is_null: false}}) { aggregate { count } }`,
    kept: `payments_aggregate(where: {date_reversed: {_is_null: true}}) { aggregate { sum { amount } } }`,
  },
} as const;

/** bench q4's aliases: counts per status and a total (grouped by status where the role reads every row, FILTERs under a row filter). */
const COUNTS_PER_STATUS = {
  lead: `loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count } }`,
  servicing: `loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count } }`,
  closed: `loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { count } }`,
  all: `loans_aggregate { aggregate { count sum { amount } } }`,
  reversed: ALIASES.direct.reversed,
  kept: ALIASES.direct.kept,
};

const SHAPE_OF_SQL: Record<keyof typeof ALIASES, RegExp> = {
  direct: /FILTER \(WHERE \("_t1"."status" = 'lead'::text\)\)/,
  flags: /AS "f0"/,
  grouped: /GROUP BY "_t1"."status"\) AS "_g2"/,
};

async function data(engine: GraphEngine, query: string, principal: Principal): Promise<Record<string, unknown>> {
  const prepared = engine.prepare({ query }, principal);
  assert.equal(prepared.kind, 'statement');
  const text = await engine.execute(database.db, { query }, principal);
  const body = JSON.parse(text) as { data?: Record<string, unknown>; errors?: unknown };
  assert.equal(body.errors, undefined, text);
  return body.data!;
}

/** The SQL of a request (to check which shape it compiled to). */
function statement(engine: GraphEngine, query: string, principal: Principal): string {
  const prepared = engine.prepare({ query }, principal);
  return prepared.kind === 'statement' ? prepared.text : '';
}

describe('Shared scans of root aggregates under each role', () => {
  for (const role of ['admin', 'investor', 'read_only', 'servicer']) {
    for (const [shape, aliases] of Object.entries(ALIASES)) {
      it(`${role}, ${shape}: the shared scan answers what each alias answers alone`, async () => {
        const engine = role === 'admin' ? admin : admin.forRole(role)!;
        const principal: Principal = role === 'admin' ? ACCOUNT_A : { accountId: ACCOUNT_A, keyVariables: new Map([['person_id', investorId]]) };
        const query = `{ ${Object.entries(aliases).map(([alias, field]) => `${alias}: ${field}`).join(' ')} }`;
        const text = statement(engine, query, principal);
        // One shared scan per collection (loans, payments), and no other aggregate query.
        assert.equal(text.match(/GROUP BY \(\)\) AS "_m\d+"/g)?.length, 2, text);
        assert.equal(text.match(/GROUP BY \(\)/g)?.length, 2, text);
        // Under the investor's row filter a scan reads few rows and is not grouped (plan/passes/sharedScans.ts).
        assert.match(text, SHAPE_OF_SQL[shape === 'grouped' && role === 'investor' ? 'flags' : (shape as keyof typeof ALIASES)]);
        const together = await data(engine, query, principal);
        for (const [alias, field] of Object.entries(aliases)) {
          const alone = await data(engine, `{ ${alias}: ${field} }`, principal);
          assert.deepEqual(together[alias], alone[alias], `${alias} together and alone`);
        }
      });
    }
  }

  it('investor: the shared scan counts exactly the loans and payments the person funds, as plain SQL does', async () => {
    const principal: Principal = { accountId: ACCOUNT_A, keyVariables: new Map([['person_id', investorId]]) };
    const query = `{ ${Object.entries(COUNTS_PER_STATUS).map(([alias, field]) => `${alias}: ${field}`).join(' ')} }`;
    assert.match(statement(admin.forRole('investor')!, query, principal), SHAPE_OF_SQL.direct);
    assert.match(statement(admin, query, ACCOUNT_A), SHAPE_OF_SQL.grouped);
    const answer = (await data(admin.forRole('investor')!, query, principal)) as Record<string, { aggregate: { count?: number; sum?: { amount: number | null } } }>;
    const funded = 'SELECT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2';
    const { rows } = await database.db.query<Record<string, string | null>>(
      `SELECT (SELECT count(*) FROM loans WHERE account_id = $1 AND status = 'lead' AND id IN (${funded}))::text AS lead,
              (SELECT count(*) FROM loans WHERE account_id = $1 AND status = 'servicing' AND id IN (${funded}))::text AS servicing,
              (SELECT count(*) FROM loans WHERE account_id = $1 AND status = 'closed' AND id IN (${funded}))::text AS closed,
              (SELECT count(*) FROM loans WHERE account_id = $1 AND id IN (${funded}))::text AS all_count,
              (SELECT sum(amount) FROM loans WHERE account_id = $1 AND id IN (${funded}))::text AS all_sum,
              (SELECT count(*) FROM payments WHERE account_id = $1 AND date_reversed IS NOT NULL AND loan_id IN (${funded}))::text AS reversed,
              (SELECT sum(amount) FROM payments WHERE account_id = $1 AND date_reversed IS NULL AND loan_id IN (${funded}))::text AS kept`,
      [ACCOUNT_A, investorId],
    );
    const sql = rows[0]!;
    assert.ok(Number(sql.all_count) > 0 && Number(sql.all_count) < 100, `the investor funds some loans, not all (${sql.all_count})`);
    assert.equal(answer.lead!.aggregate.count, Number(sql.lead));
    assert.equal(answer.servicing!.aggregate.count, Number(sql.servicing));
    assert.equal(answer.closed!.aggregate.count, Number(sql.closed));
    assert.equal(answer.all!.aggregate.count, Number(sql.all_count));
    assert.equal(answer.all!.aggregate.sum!.amount, Number(sql.all_sum));
    assert.equal(answer.reversed!.aggregate.count, Number(sql.reversed));
    assert.equal(answer.kept!.aggregate.sum!.amount, sql.kept === null ? null : Number(sql.kept));
  });
});
