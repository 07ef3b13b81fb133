import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { MAX_PATTERN_FREEDOM, MAX_PATTERN_LENGTH, patternProblem } from '../../engine/plan/patternCost.js';
import { dataOf, send, startSeededService, type Answer, type GraphBody, type SeededService } from '../support/seededService.js';
import { testDatabaseKind } from '../support/testDatabase.js';

/**
 * Issue 26, finding 5: `_regex: "(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1x"` on an investor key took
 * 8.4 s on PostgreSQL, and on PGlite (no statement timeout, one thread) froze the whole process.
 * A pattern's cost is now bounded before the database (`engine/plan/patternCost.ts`): the
 * back-reference / nested-repetition family is refused with `validation-failed` in
 * milliseconds — written inline, in a variable, in `_cast`, in a mutation's `where` — while an
 * ordinary pattern still runs, and a by-pk prober of another account stays fast meanwhile.
 */
const rep = (text: string, times: number): string => Array.from({ length: times }, () => text).join('');

/** What a careful tester sends next: back-references, nested repetitions, huge automata. */
const REGEX_FAMILY: readonly string[] = [
  '(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1x',
  '(.*)(.*)\\2\\1x',
  '^(a|e)\\1',
  '(.*)\\1{5}x',
  '(?:(.*))(.*)\\2\\1',
  '(a+)+x',
  '(.*)*x',
  '(.*a){2,}x',
  '((a|b)*c)+x',
  '(?:e*)+x',
  '(?x) ( e + ) + x',
  '(?b)\\(.*\\)\\1x',
  '(.+.+)+x',
  '([a-z]+ ?)*!',
  rep('.?', MAX_PATTERN_FREEDOM + 1) + 'x',
  '.{0,200}x',
  'e'.repeat(MAX_PATTERN_LENGTH + 1),
];
const SIMILAR_FAMILY: readonly string[] = ['(%)*x', '(a%)+x', '(e|a)\\1%', '%(.*)\\1%', rep('%', MAX_PATTERN_FREEDOM + 1)];

describe('regular-expression cost limits (issue 26, finding 5)', { timeout: 300_000 }, () => {
  let s: SeededService;
  let investorKey: string;
  let other: { key: string; loanIds: string[] };

  /** Each statement's values (as JSON) the service sent to the database since the last `graph` call began. */
  let statementValues: string[] = [];
  const graph = (key: string, query: string, variables?: Record<string, unknown>): Promise<Answer<GraphBody>> => {
    statementValues = [];
    return sendGraph(key, query, variables);
  };
  const sendGraph = (key: string, query: string, variables?: Record<string, unknown>): Promise<Answer<GraphBody>> =>
    send(`${s.url}/api/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Token ${key}` },
      body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
    }) as Promise<Answer<GraphBody>>;

  /**
   * Asserts a refusal before the database: 200, no data, one `validation-failed` error naming the
   * operator or variable, and no statement of the request carried the pattern (the service's
   * statements are observed on its `Database`; a timing would only tell how loaded the machine is).
   */
  const assertRefused = (answer: Answer<GraphBody>, label: string, pattern: string): void => {
    assert.equal(answer.status, 200, `${label}: ${answer.text}`);
    assert.equal(answer.body.data, undefined, `${label}: ${answer.text}`);
    assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', `${label}: ${answer.text}`);
    assert.match(answer.body.errors![0]!.message, /back-reference|nested repetition|at most|basic regular/, label);
    const asJson = JSON.stringify(pattern).slice(1, -1);
    assert.ok(!statementValues.some((values) => values.includes(asJson)), `${label}: a statement carrying the pattern reached the database`);
  };

  before(async () => {
    // The default account (its dump is built for many files) and a small second one: every pattern
    // here is refused before the database or answers what PostgreSQL answers, whatever the size.
    s = await startSeededService({ others: [{ scale: 0.01, seed: 2 }] });
    s.db.observe((_text, values) => statementValues.push(JSON.stringify(values)));
    const [investor] = await s.sql<{ person_id: string }>(
      `SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC, person_id LIMIT 1`,
      [s.account.id],
    );
    investorKey = (await createApiKey(s.db, s.account.id, 'investor', { role: 'investor', variables: new Map([['person_id', investor!.person_id]]) })).key;
    const second = s.others[0]!;
    other = { key: second.apiKey, loanIds: (await s.sql<{ id: string }>('SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 20', [second.account.id])).map((r) => r.id) };
    // Names with an x near their end make the back-reference family as slow as it can be.
    await s.sql(`UPDATE loans SET name = name || ' Elm Street bridge financing x' WHERE account_id = $1`, [s.account.id]);
  });
  after(() => s?.close());

  for (const operator of ['_regex', '_iregex', '_nregex', '_niregex']) {
    it(`${operator}: every pattern of the family is refused before the database, inline and in a variable (investor key)`, async () => {
      for (const pattern of REGEX_FAMILY) {
        const inline = await graph(investorKey, `{ loans(where: {name: {${operator}: ${JSON.stringify(pattern)}}}) { id } }`);
        assertRefused(inline, `inline ${operator} ${pattern}`, pattern);
        const variable = await graph(investorKey, `query P($p: String!) { loans(where: {name: {${operator}: $p}}) { id } }`, { p: pattern });
        assertRefused(variable, `variable ${operator} ${pattern}`, pattern);
        assert.match(variable.body.errors![0]!.message, /^Variable "\$p": /);
      }
    });
  }

  for (const operator of ['_similar', '_nsimilar']) {
    it(`${operator}: SIMILAR TO patterns (translated into regular expressions by PostgreSQL) are bounded the same way`, async () => {
      for (const pattern of SIMILAR_FAMILY) {
        assertRefused(await graph(s.apiKey, `{ loans(where: {name: {${operator}: ${JSON.stringify(pattern)}}}) { id } }`), `inline ${operator} ${pattern}`, pattern);
        assertRefused(await graph(s.apiKey, `query P($p: String) { loans(where: {name: {${operator}: $p}}) { id } }`, { p: pattern }), `variable ${operator} ${pattern}`, pattern);
      }
    });
  }

  it('the same holds in _cast, in a whole where given as a variable, in _or/_not, and in a mutation (nothing written)', async () => {
    const pattern = '(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1x';
    const cases: [string, Record<string, unknown> | undefined][] = [
      [`{ loans(where: {custom_fields: {_cast: {String: {_iregex: ${JSON.stringify(pattern)}}}}}) { id } }`, undefined],
      [`query W($w: loans_bool_exp) { loans(where: $w) { id } }`, { w: { _or: [{ status: { _eq: 'lead' } }, { _not: { name: { _regex: pattern } } }] } }],
      [`query C($p: String) { loans_aggregate(where: {borrows: {person: {name: {_regex: $p}}}}) { aggregate { count } } }`, { p: pattern }],
      [`mutation M($p: String) { update_loans(where: {name: {_regex: $p}}, _set: {status: "closed"}) { affected_rows } }`, { p: pattern }],
      [`mutation { delete_tasks(where: {name: {_iregex: ${JSON.stringify(pattern)}}}) { affected_rows } }`, undefined],
    ];
    const before = await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1 AND status = 'closed'`, [s.account.id]);
    for (const [query, variables] of cases) {
      assertRefused(await graph(s.apiKey, query, variables), query, pattern);
    }
    assert.deepEqual(await s.sql(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1 AND status = 'closed'`, [s.account.id]), before);
  });

  it('an ordinary pattern still runs and answers what PostgreSQL answers', async () => {
    for (const [operator, sqlOperator, pattern] of [
      ['_regex', '~', '^[A-Z].*(bridge|x)$'],
      ['_iregex', '~*', 'ELM STREET'],
      ['_nregex', '!~', '[0-9]{3}'],
      ['_similar', 'SIMILAR TO', '%(bridge|loan)%'],
      ['_regex', '~', '[0-9a-f]{8}-[0-9a-f]{4}'],
      ['_iregex', '~*', '(https?://)?x$'],
      ['_regex', '~', rep('.?', MAX_PATTERN_FREEDOM) + 'x'],
    ] as const) {
      const [{ n }] = (await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM loans WHERE account_id = $1 AND name ${sqlOperator} $2`, [s.account.id, pattern])) as [{ n: number }];
      const query = `query P($p: String!) { loans_aggregate(where: {name: {${operator}: $p}}) { aggregate { count } } }`;
      const answer = dataOf<{ loans_aggregate: { aggregate: { count: number } } }>(await graph(s.apiKey, query, { p: pattern }));
      assert.equal(answer.loans_aggregate.aggregate.count, n, `${operator} ${pattern}`);
      const inline = dataOf<{ loans_aggregate: { aggregate: { count: number } } }>(
        await graph(s.apiKey, `{ loans_aggregate(where: {name: {${operator}: ${JSON.stringify(pattern)}}}) { aggregate { count } } }`),
      );
      assert.equal(inline.loans_aggregate.aggregate.count, n, `inline ${operator} ${pattern}`);
      // The other side of assertRefused's check: a pattern that runs is seen in the statement's values.
      assert.ok(statementValues.some((values) => values.includes(JSON.stringify(pattern).slice(1, -1))), `inline ${operator} ${pattern}: its statement observed`);
    }
    // An invalid pattern is still PostgreSQL's to refuse (data-exception).
    assert.equal((await graph(s.apiKey, '{ loans(where: {name: {_regex: "(unclosed"}}) { id } }')).body.errors?.[0]?.extensions?.code, 'data-exception');
  });

  it(`another account's by-pk reads keep a p99 under 1 s while the family is sent concurrently (${testDatabaseKind})`, async (t) => {
    // 4 s of attack, longer if the prober has not had 20 probes yet (a loaded machine), at most 60 s.
    // The p99 of 20 probes is their slowest (nearest rank): when one took a second or more, the probes
    // go on to 100, whose p99 is the second slowest — one pause of a machine running three other
    // test processes beside this one (a probe of 2,223 ms, p50 147 ms) fails no p99 of 100. The cap
    // was 30 s: on session 30's machine the suite's other processes slowed the probes to ~3 a
    // second, and 88 probes (one of 1,251 ms, p50 195 ms) made the slowest the p99.
    const wanted = (): number => (latencies.some((ms) => ms >= 1000) ? 100 : 20);
    const deadline = performance.now() + 4000;
    const lastCall = performance.now() + 60_000;
    let probing = true;
    let refused = 0;
    const attacker = async (worker: number): Promise<void> => {
      for (let i = worker; probing; i++) {
        const pattern = REGEX_FAMILY[i % REGEX_FAMILY.length]!;
        const answer = await graph(investorKey, 'query P($p: String!) { loans(where: {name: {_regex: $p}}) { id name } }', { p: pattern });
        assert.equal(answer.body.errors?.[0]?.extensions?.code, 'validation-failed', answer.text);
        refused += 1;
      }
    };
    const latencies: number[] = [];
    const prober = async (): Promise<void> => {
      try {
        await probe();
      } finally {
        probing = false;
      }
    };
    const probe = async (): Promise<void> => {
      for (let i = 0; (performance.now() < deadline || latencies.length < wanted()) && performance.now() < lastCall; i++) {
        const started = performance.now();
        const answer = await graph(other.key, 'query L($id: uuid!) { loans_by_pk(id: $id) { id name } }', { id: other.loanIds[i % other.loanIds.length] });
        latencies.push(performance.now() - started);
        assert.ok(dataOf<{ loans_by_pk: { id: string } }>(answer).loans_by_pk.id);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    // One read before the attack, unmeasured: the subject is the attack's effect on warm reads, not
    // the by-pk query's first plan (twice under a loaded machine the p99 of 20 probes — their
    // slowest — was 1,646 ms, each time beside the PostgreSQL suite).
    dataOf<{ loans_by_pk: { id: string } }>(await graph(other.key, 'query L($id: uuid!) { loans_by_pk(id: $id) { id name } }', { id: other.loanIds[0] }));
    await Promise.all([...Array.from({ length: 10 }, (_, worker) => attacker(worker)), prober()]);
    latencies.sort((a, b) => a - b);
    // The nearest-rank 99th percentile: the ⌈0.99 n⌉-th smallest.
    const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
    t.diagnostic(`prober p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms over ${latencies.length} probes (${refused} patterns refused)`);
    assert.ok(latencies.length >= 20, `only ${latencies.length} probes`);
    assert.ok(p99 < 1000, `prober p99 ${p99.toFixed(0)} ms over ${latencies.length} probes (${refused} patterns refused)`);
    const health = await send(`${s.url}/healthz`);
    assert.equal(health.status, 200);
  });

  it('patternProblem: the shapes it refuses and lets through', () => {
    const refused: [string, 'regex' | 'similar'][] = [
      ['\\1', 'regex'],
      ['(a)\\k<a>', 'regex'],
      ['(a{2}){3}', 'regex'],
      ['(a*?)+', 'regex'],
      ['(a|b*){2}', 'regex'],
      ['(a*){1,}', 'regex'],
      ['(?x)(a #comment\n +)+', 'regex'],
      ['(.?.?){30}', 'regex'],
      ['a{250}b{250}c', 'regex'],
      ['(a|b)\\1', 'similar'],
    ];
    for (const [pattern, dialect] of refused) assert.notEqual(patternProblem(pattern, dialect), null, `${dialect} ${pattern}`);
    const allowed: [string, 'regex' | 'similar'][] = [
      ['^late', 'regex'],
      ['officer.*(Raman|Bell)', 'regex'],
      ['(https?://)?x', 'regex'],
      ['(ab){1,}', 'regex'],
      ['(a*){1}', 'regex'],
      ['[(]+[\\]]*[[:alpha:]]+', 'regex'],
      ['\\(a*\\)*', 'regex'],
      ['***=(a+)+\\1', 'regex'],
      ['(?q)(a+)+\\1', 'regex'],
      ['(unclosed', 'regex'],
      ['\\0', 'regex'],
      ['(ach|wire)%', 'similar'],
      ['%a%b%', 'similar'],
      ['\\%\\_', 'similar'],
    ];
    for (const [pattern, dialect] of allowed) assert.equal(patternProblem(pattern, dialect), null, `${dialect} ${pattern}`);
  });
});
