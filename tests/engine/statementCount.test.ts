import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import type { GraphRequest } from '../../engine/index.js';
import { startSeededService, type SeededService } from '../support/seededService.js';

/**
 * SPEC §5: one request → one SQL statement, all root fields included. Counted with
 * `db.observe`, which sees every statement the database layer sends. The engine is called
 * directly for the exact count (over HTTP the API-key check adds its own statements), then
 * the whole HTTP request is counted too.
 */
let s: SeededService;
let accountId: string;
let loanId: string;

before(async () => {
  s = await startSeededService({ scale: 0.01 });
  accountId = s.account.id;
  loanId = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [accountId]))[0]!.id;
});

after(async () => {
  await s?.close();
});

interface Observed {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** Runs `work` and returns every statement the database layer was asked to run meanwhile. */
async function observing<T>(work: () => Promise<T>): Promise<{ result: T; statements: Observed[] }> {
  const statements: Observed[] = [];
  const stop = s.db.observe((text, values) => statements.push({ text, values }));
  try {
    return { result: await work(), statements };
  } finally {
    stop();
  }
}

const FIVE_ROOT_FIELDS = `query Portfolio($status: String!, $today: date!) {
  servicing: loans(where: {status: {_eq: $status}}, order_by: {amount: desc}, limit: 5) {
    id name
    address_details { address { city valuations(order_by: {report_date: desc}) { value report_date } } }
    payments_aggregate(where: {date_reversed: {_is_null: true}}) { aggregate { count sum { amount } } }
    schedules(where: {is_next: {_eq: true}}) { due payment }
  }
  totals: loans_aggregate { aggregate { count sum { amount } avg { rate } min { date_maturity } } }
  closed: loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { count } nodes { id } }
  borrowers: people(where: {is_borrower: {_eq: true}}, limit: 3) { name borrows { loan { name tasks(where: {status: {_neq: completed}}) { name } } } }
  upcoming: schedules(where: {due: {_gte: $today}}, order_by: [{due: asc}, {loan: {name: asc}}], limit: 3) { due loan { name } }
}`;

const REQUESTS: readonly (readonly [string, () => GraphRequest])[] = [
  [
    'five aliased root fields, relationships three levels deep (loans → address_details → address → valuations), root and nested aggregates',
    () => ({ query: FIVE_ROOT_FIELDS, variables: { status: 'servicing', today: '2026-06-30' } }),
  ],
  ['a _by_pk lookup with $id: uuid!', () => ({ query: `query($id: uuid!) { loans_by_pk(id: $id) { name borrows { person { name } } payments { amount } } }`, variables: { id: loanId } })],
  [
    'variables of every scalar type',
    () => ({
      query: `query($id: uuid!, $min: numeric!, $s: String!, $b: Boolean!, $n: Int!, $d: date!, $t: timestamptz!) {
        loans(where: {id: {_neq: $id}, amount: {_gte: $min}, status: {_eq: $s}, created_at: {_lt: $t}, date_maturity: {_gt: $d}}, limit: $n) { id }
        people(where: {is_investor: {_eq: $b}}, limit: $n) { id }
      }`,
      variables: { id: loanId, min: 100000, s: 'servicing', b: true, n: 3, d: '2020-01-01', t: '2030-01-01T00:00:00Z' },
    }),
  ],
  [
    'named and inline fragments',
    () => ({
      query: `query { loans(limit: 3) { ...L ... on loans { payments_aggregate { ...C } } } } fragment L on loans { id name borrows { person { ...P } } } fragment P on people { name } fragment C on payments_aggregate { aggregate { count } }`,
    }),
  ],
  ['a filter through relationships', () => ({ query: `{ loans(where: {borrows: {person: {name: {_ilike: "%smi%"}}}, payments: {amount: {_gt: 1000}}}) { id } }` })],
  ['ordering through an object relationship', () => ({ query: `{ payments(order_by: [{loan: {amount: desc}}, {date: asc}], limit: 10) { id } }` })],
  ['fifty aliased root fields (MAX_ROOT_FIELDS)', () => ({ query: `{ ${Array.from({ length: 50 }, (_, i) => `a${i}: loans_aggregate(where: {amount: {_gt: ${i * 10000}}}) { aggregate { count } }`).join(' ')} }` })],
  ['__typename beside data', () => ({ query: `{ __typename loans(limit: 1) { __typename id } }` })],
  ['introspection beside data', () => ({ query: `{ loans(limit: 1) { id } __type(name: "loans") { name } }` })],
  ['an operation picked by operationName', () => ({ query: `query A { loans(limit: 1) { id } } query B { people(limit: 1) { id } }`, operationName: 'B' })],
];

describe('one request, one statement (SPEC §5)', () => {
  describe('the engine runs exactly one statement for', () => {
    for (const [what, request] of REQUESTS) {
      it(what, async () => {
        const { result, statements } = await observing(() => s.service.engine.execute(s.db, request(), accountId));
        assert.equal(statements.length, 1, statements.map((st) => st.text.slice(0, 120)).join('\n'));
        assert.equal(statements[0]!.text, (s.service.engine.prepare(request(), accountId) as { text: string }).text);
        assert.match(statements[0]!.text, /^SELECT concat\('{"data":', /);
        const body = JSON.parse(result) as { data?: Record<string, unknown>; errors?: unknown };
        assert.equal(body.errors, undefined);
        assert.ok(body.data && Object.keys(body.data).length > 0);
      });
    }

    it('the same request again, from the plan cache', async () => {
      const request = REQUESTS[0]![1];
      await s.service.engine.execute(s.db, request(), accountId);
      const { statements } = await observing(() => s.service.engine.execute(s.db, request(), accountId));
      assert.equal(statements.length, 1);
    });

    it('a request whose statement PostgreSQL refuses (a LIKE pattern ending in the escape character): one statement, then the error', async () => {
      const { statements } = await observing(() =>
        s.service.engine.execute(s.db, { query: `{ loans(where: {name: {_like: "%\\\\"}}) { id } }` }, accountId).then(
          () => assert.fail('expected a data exception'),
          (error: { errors?: { extensions: { code: string } }[] }) => assert.equal(error.errors?.[0]?.extensions.code, 'data-exception'),
        ),
      );
      assert.equal(statements.length, 1);
    });
  });

  describe('the engine runs no statement for', () => {
    it('introspection alone', async () => {
      const { result, statements } = await observing(() => s.service.engine.execute(s.db, { query: `{ __schema { queryType { name } } __typename }` }, accountId));
      assert.equal(statements.length, 0);
      assert.deepEqual(JSON.parse(result), { data: { __schema: { queryType: { name: 'query_root' } }, __typename: 'query_root' } });
    });

    it('a request it refuses before running it (validation)', async () => {
      const { statements } = await observing(() => s.service.engine.execute(s.db, { query: `{ loans { nope } }` }, accountId).catch(() => undefined));
      assert.equal(statements.length, 0);
    });
  });

  describe('over HTTP', () => {
    /** The statements of one HTTP request, sorted into the key's own statements and the rest (the query). */
    async function httpStatements(key: string, body: GraphRequest, path = '/api/graph') {
      const { result, statements } = await observing(() => s.post(path, body, { authorization: `Token ${key}` }));
      assert.equal(result.status, 200, result.text.slice(0, 300));
      const isQuery = (st: Observed): boolean => /\{"data":/.test(st.text);
      const auth = statements.filter((st) => !isQuery(st));
      const others = statements.filter(isQuery);
      return { statements, auth, others };
    }

    it('runs ONE statement per request once the key is known: the query, which checks the key’s state itself', async () => {
      await s.graph(`{ __typename }`); // the key's first use reads it and records last_used_at (see the next test)
      for (const [what, request] of REQUESTS) {
        const { statements, others } = await httpStatements(s.apiKey, request());
        assert.equal(statements.length, 1, `${what}: ${statements.map((st) => st.text.slice(0, 80)).join('\n')}`);
        assert.equal(others.length, 1, what);
        assert.match(others[0]!.text, /^SELECT CASE WHEN EXISTS \(SELECT 1 FROM api_keys WHERE account_id = \$\d+ AND id = \$\d+ AND active\) THEN \(SELECT concat\('{"data":', /);
      }
    });

    it('reads the key and records last_used_at on a key’s first request (never a second query), then runs one statement', async () => {
      const fresh = await createApiKey(s.db, accountId, 'fresh key');
      const first = await httpStatements(fresh.key, REQUESTS[0]![1]());
      assert.equal(first.others.length, 1);
      assert.deepEqual(
        first.auth.map((st) => st.text.trim().split(/\s+/)[0]),
        ['SELECT', 'UPDATE'],
      );
      const second = await httpStatements(fresh.key, REQUESTS[0]![1]());
      assert.equal(second.statements.length, 1);
    });

    it('runs one statement for explain too (EXPLAIN of the query), besides the key check', async () => {
      const { others } = await httpStatements(s.apiKey, REQUESTS[0]![1](), '/api/graph/explain');
      assert.equal(others.length, 1);
      assert.match(others[0]!.text, /^EXPLAIN \(FORMAT JSON, COSTS OFF\) SELECT concat\('{"data":'/);
    });
  });
});
