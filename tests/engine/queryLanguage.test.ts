import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { dataOf, METADATA_PATH, openSeededTestDatabase, send, type Answer, type SeededAccount } from '../support/seededService.js';
import { testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 19 over HTTP with API keys, on seeded data: `distinct_on`, `order_by` on
 * array-relationship aggregates, the regular-expression, SIMILAR TO and jsonb operators,
 * `GET /api/graph`, and a role whose filters use the new operators. Each answer is compared
 * with the same question answered in plain TypeScript over the account's whole data set, read
 * with plain SQL (a second seeded account must never show up). The generated-query test
 * (`generated.test.ts`) draws the same forms at random against its reference.
 */
let database: TestDatabase;
let server: TestServer;
let metadataDir: string;
let a: SeededAccount;
let roleKey: string;

interface LoanRow {
  id: string;
  name: string;
  status: string;
  custom_fields: Record<string, unknown>;
  custom_fields_text: string;
}
interface PaymentRow {
  id: string;
  loan_id: string;
  date: string;
  amount: string;
  type: string;
  method: string | null;
}
interface ValuationRow {
  id: string;
  address_id: string;
  report_date: string | null;
  value: string | null;
}
let loans: LoanRow[];
let payments: PaymentRow[];
let valuations: ValuationRow[];

/**
 * A role whose row filters use the new operators: loans of one officer (`_contains`) or whose
 * custom fields mention a broker (`_cast` to String with `_iregex`), minus names matching the
 * key's `hide` pattern (`_niregex` with a key variable); payments of loans that have an officer
 * or a broker (`_has_keys_any`, through the unrestricted loan, as Hasura reads a filter's own
 * relationships).
 */
const ROLE = `
  officer_desk:
    variables: { hide: text }
    collections:
      loans:
        select:
          columns: '*'
          allow_aggregations: true
          filter:
            _or: [{ custom_fields: { _contains: { loan_officer: Priya Raman } } }, { custom_fields: { _cast: { String: { _iregex: keystone } } } }]
            name: { _niregex: key.hide }
      payments:
        select: { columns: '*', allow_aggregations: true, filter: { loan: { custom_fields: { _has_keys_any: [loan_officer, broker] } } } }
`;
const HIDE = '^[a-c]';

before(async () => {
  // patternLimits' accounts (the default one and a small second one): one dump for both files.
  ({ database, seeded: [a] } = await openSeededTestDatabase([{}, { scale: 0.01, seed: 2 }]));
  metadataDir = mkdtempSync(join(tmpdir(), 'loanql-query-language-'));
  const metadataPath = join(metadataDir, 'loanql.yaml');
  writeFileSync(metadataPath, `${readFileSync(METADATA_PATH, 'utf8').trimEnd()}\n${ROLE}`);
  server = await startTestServer(database.db, { metadataPath });
  roleKey = (await createApiKey(database.db, a.account.id, 'officer desk', { role: 'officer_desk', variables: new Map([['hide', HIDE]]) })).key;
  const rows = async <T>(text: string): Promise<T[]> => (await database.db.query<T>(text, [a.account.id])).rows;
  loans = await rows<LoanRow>('SELECT id, name, status, custom_fields, custom_fields::text AS custom_fields_text FROM loans WHERE account_id = $1');
  payments = await rows<PaymentRow>(`SELECT id, loan_id, date::text AS date, amount::text AS amount, type, method FROM payments WHERE account_id = $1`);
  paymentsByLoan = new Map();
  for (const p of payments) paymentsByLoan.set(p.loan_id, [...(paymentsByLoan.get(p.loan_id) ?? []), p]);
  valuations = await rows<ValuationRow>(`SELECT id, address_id, report_date::text AS report_date, value::text AS value FROM valuations WHERE account_id = $1`);
  assert.ok(loans.some((loan) => 'broker' in loan.custom_fields) && loans.some((loan) => loan.custom_fields.loan_officer === 'Priya Raman'), 'the seed has officers and brokers');
});

after(async () => {
  await server?.close();
  await database?.close();
  if (metadataDir) rmSync(metadataDir, { recursive: true, force: true });
});

const post = (key: string, query: string, variables?: Record<string, unknown>): Promise<Answer> =>
  send(`${server.url}/api/graph`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Token ${key}` }, body: JSON.stringify({ query, ...(variables ? { variables } : {}) }) });

const getUrl = (query: string, variables?: Record<string, unknown>): string => {
  const url = new URL(`${server.url}/api/graph`);
  url.searchParams.set('query', query);
  if (variables) url.searchParams.set('variables', JSON.stringify(variables));
  return url.toString();
};
const get = (key: string, query: string, variables?: Record<string, unknown>): Promise<Answer> => send(getUrl(query, variables), { headers: { authorization: `Token ${key}` } });

/** Plain comparisons: ids (uuid text) and ISO dates compare as strings; amounts as numbers of cents. */
const cents = (amount: string): number => Math.round(Number(amount) * 100);
const byId = <T extends { id: string }>(x: T, y: T): number => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
let paymentsByLoan: Map<string, PaymentRow[]>;
/** A loan's payments (of `rows`, when given: a role's visible payments). */
const paymentsOf = (loanId: string, rows?: PaymentRow[]): PaymentRow[] => (rows ? rows.filter((p) => p.loan_id === loanId) : paymentsByLoan.get(loanId) ?? []);

describe(`issue 19 over HTTP with API keys, against plain TypeScript (${testDatabaseKind})`, () => {
  it('distinct_on: the newest valuation of each address (POST and GET alike)', async () => {
    const query = '{ valuations(distinct_on: [address_id], order_by: [{address_id: asc}, {report_date: desc_nulls_last}]) { id address_id report_date } }';
    const expected = new Map<string, ValuationRow>();
    for (const v of [...valuations].sort(byId)) {
      const best = expected.get(v.address_id);
      const newer = best === undefined || (v.report_date !== null && (best.report_date === null || v.report_date > best.report_date));
      if (newer) expected.set(v.address_id, v);
    }
    const want = [...expected.values()].sort((x, y) => (x.address_id < y.address_id ? -1 : 1)).map((v) => v.id);
    assert.ok(want.length > 10 && want.length < valuations.length, `${want.length} addresses, ${valuations.length} valuations`);
    for (const answer of [await post(a.apiKey, query), await get(a.apiKey, query)]) {
      assert.deepEqual(dataOf<{ valuations: { id: string }[] }>(answer).valuations.map((v) => v.id), want);
    }
  });

  it('order_by payments_aggregate count and sum, with distinct_on in a nested list and a nested _aggregate', async () => {
    const query = `{ loans(order_by: [{payments_aggregate: {count: desc}}, {payments_aggregate: {sum: {amount: asc}}}], limit: 15) {
      id
      latest: payments(distinct_on: [type], order_by: [{type: asc}, {date: desc}]) { id }
      methods: payments_aggregate(distinct_on: [method]) { aggregate { count } }
    } }`;
    const sum = (rows: PaymentRow[]): number | null => (rows.length ? rows.reduce((acc, p) => acc + cents(p.amount), 0) : null);
    const ordered = [...loans].sort((x, y) => {
      const [px, py] = [paymentsOf(x.id), paymentsOf(y.id)];
      if (px.length !== py.length) return py.length - px.length;
      const [sx, sy] = [sum(px), sum(py)];
      if (sx !== sy) return sx === null ? 1 : sy === null ? -1 : sx - sy;
      return byId(x, y);
    });
    const got = dataOf<{ loans: { id: string; latest: { id: string }[]; methods: { aggregate: { count: number } } }[] }>(await post(a.apiKey, query)).loans;
    assert.deepEqual(got.map((loan) => loan.id), ordered.slice(0, 15).map((loan) => loan.id));
    for (const loan of got) {
      const own = paymentsOf(loan.id);
      const types = [...new Set(own.map((p) => p.type))].sort();
      const latest = types.map((type) => own.filter((p) => p.type === type).sort((x, y) => (x.date !== y.date ? (x.date < y.date ? 1 : -1) : byId(x, y)))[0]!.id);
      assert.deepEqual(loan.latest.map((p) => p.id), latest, `latest payment of each type, loan ${loan.id}`);
      assert.equal(loan.methods.aggregate.count, new Set(own.map((p) => p.method)).size, `distinct methods (null is one), loan ${loan.id}`);
    }
  });

  it('_regex, _iregex, _nregex, _niregex, _similar, _nsimilar (GET with variables)', async () => {
    const query = `query Patterns($re: String!, $sim: String!) {
      regex: payments_aggregate(where: {type: {_regex: $re}}) { aggregate { count } }
      iregex: payments_aggregate(where: {type: {_iregex: $re}}) { aggregate { count } }
      nregex: payments_aggregate(where: {type: {_nregex: $re}}) { aggregate { count } }
      niregex: payments_aggregate(where: {method: {_niregex: $re}}) { aggregate { count } }
      similar: payments_aggregate(where: {method: {_similar: $sim}}) { aggregate { count } }
      nsimilar: payments_aggregate(where: {method: {_nsimilar: $sim}}) { aggregate { count } }
    }`;
    const re = '^(REGULAR|fee)';
    const sim = '(ach|wire)%';
    const count = (test: (p: PaymentRow) => boolean): number => payments.filter(test).length;
    const want = {
      regex: count((p) => new RegExp(re).test(p.type)),
      iregex: count((p) => new RegExp(re, 'i').test(p.type)),
      nregex: count((p) => !new RegExp(re).test(p.type)),
      // A null method is neither matched nor not matched (SQL's unknown): left out.
      niregex: count((p) => p.method !== null && !new RegExp(re, 'i').test(p.method)),
      similar: count((p) => p.method !== null && /^(ach|wire)/.test(p.method)),
      nsimilar: count((p) => p.method !== null && !/^(ach|wire)/.test(p.method)),
    };
    assert.ok(want.regex > 0 && want.iregex > want.regex && want.similar > 0 && want.nsimilar > 0, JSON.stringify(want));
    const data = dataOf<Record<string, { aggregate: { count: number } }>>(await get(a.apiKey, query, { re, sim }));
    assert.deepEqual(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.aggregate.count])), want);
  });

  it('jsonb operators on custom_fields: _contains, _contained_in, _has_key(s), _cast', async () => {
    const query = `query Fields($fields: jsonb, $keys: [String!]) {
      contains: loans(where: {custom_fields: {_contains: $fields}}) { id }
      inline: loans(where: {custom_fields: {_contains: {loan_officer: "Priya Raman"}}}) { id }
      contained_in: loans(where: {custom_fields: {_contained_in: {loan_officer: "Priya Raman", broker: "Keystone Mortgage Brokers"}}}) { id }
      has_key: loans(where: {custom_fields: {_has_key: "broker"}}) { id }
      any: loans(where: {custom_fields: {_has_keys_any: $keys}}) { id }
      all: loans(where: {custom_fields: {_has_keys_all: $keys}}) { id }
      cast: loans(where: {custom_fields: {_cast: {String: {_ilike: "%keystone%"}}}}) { id }
    }`;
    const ids = (test: (loan: LoanRow) => boolean): string[] => loans.filter(test).sort(byId).map((loan) => loan.id);
    const fields = (loan: LoanRow) => loan.custom_fields;
    const want = {
      contains: ids((l) => fields(l).loan_officer === 'Priya Raman'),
      inline: ids((l) => fields(l).loan_officer === 'Priya Raman'),
      contained_in: ids((l) => Object.entries(fields(l)).every(([k, v]) => (k === 'loan_officer' && v === 'Priya Raman') || (k === 'broker' && v === 'Keystone Mortgage Brokers'))),
      has_key: ids((l) => 'broker' in fields(l)),
      any: ids((l) => 'broker' in fields(l) || 'loan_officer' in fields(l)),
      all: ids((l) => 'broker' in fields(l) && 'loan_officer' in fields(l)),
      cast: ids((l) => /keystone/i.test(l.custom_fields_text)),
    };
    assert.ok(want.contains.length > 0 && want.has_key.length > 0 && want.cast.length > 0, JSON.stringify(want).slice(0, 300));
    const data = dataOf<Record<string, { id: string }[]>>(await post(a.apiKey, query, { fields: { loan_officer: 'Priya Raman' }, keys: ['broker', 'loan_officer'] }));
    assert.deepEqual(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.map((loan) => loan.id)])), want);
  });

  it("a role's filters with the new operators compose with distinct_on, aggregate ordering and the operators", async () => {
    const visibleLoan = (loan: LoanRow): boolean =>
      (loan.custom_fields.loan_officer === 'Priya Raman' || /keystone/i.test(loan.custom_fields_text)) && !new RegExp(HIDE, 'i').test(loan.name);
    const loanById = new Map(loans.map((loan) => [loan.id, loan]));
    const visiblePayment = (p: PaymentRow): boolean => {
      const fields = loanById.get(p.loan_id)!.custom_fields;
      return 'loan_officer' in fields || 'broker' in fields;
    };
    const seen = loans.filter(visibleLoan);
    const seenPayments = payments.filter(visiblePayment);
    assert.ok(seen.length > 1 && seen.length < loans.length && seenPayments.length < payments.length, `${seen.length} loans`);

    const query = `{
      loans(distinct_on: [status], order_by: [{status: asc}, {payments_aggregate: {count: desc}}]) { id status n: payments_aggregate { aggregate { count } } }
      all: loans_aggregate { aggregate { count } }
      late: payments_aggregate(where: {type: {_regex: "^late"}}) { aggregate { count } }
    }`;
    const statuses = [...new Set(seen.map((loan) => loan.status))].sort();
    const seenCounts = new Map<string, number>();
    for (const p of seenPayments) seenCounts.set(p.loan_id, (seenCounts.get(p.loan_id) ?? 0) + 1);
    const count = (loan: LoanRow): number => seenCounts.get(loan.id) ?? 0;
    const want = statuses.map((status) => seen.filter((loan) => loan.status === status).sort((x, y) => count(y) - count(x) || byId(x, y))[0]!).map((loan) => ({ id: loan.id, status: loan.status, n: { aggregate: { count: count(loan) } } }));
    const data = dataOf<{ loans: unknown[]; all: { aggregate: { count: number } }; late: { aggregate: { count: number } } }>(await post(roleKey, query));
    assert.deepEqual(data.loans, want);
    assert.equal(data.all.aggregate.count, seen.length);
    assert.equal(data.late.aggregate.count, seenPayments.filter((p) => /^late/.test(p.type)).length);
  });

  it('GET: Cache-Control private, no-store; a mutation is 405 with Allow: POST and writes nothing', async () => {
    const read = await fetch(getUrl('{ loans_aggregate { aggregate { count } } }'), { headers: { authorization: `Token ${a.apiKey}` } });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('cache-control'), 'private, no-store');
    const before = await database.db.query<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND status = 'closed'`, [a.account.id]);
    const write = await fetch(getUrl('mutation { update_loans(where: {}, _set: {status: "closed"}) { affected_rows } }'), { headers: { authorization: `Token ${a.apiKey}` } });
    assert.equal(write.status, 405);
    assert.equal(write.headers.get('allow'), 'POST');
    assert.equal(((await write.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'method-not-allowed');
    const after = await database.db.query<{ n: string }>(`SELECT count(*) AS n FROM loans WHERE account_id = $1 AND status = 'closed'`, [a.account.id]);
    assert.deepEqual(after.rows, before.rows);
    // Without a key, GET is refused like POST.
    const anonymous = await send(getUrl('{ loans { id } }'));
    assert.equal(anonymous.status, 403);
    assert.equal(anonymous.text, 'Not authorized');
  });

  it('GET with a key deactivated after its first use is refused, whatever the document', async () => {
    const created = await createApiKey(database.db, a.account.id, 'soon inactive');
    assert.equal((await get(created.key, '{ loans_aggregate { aggregate { count } } }')).status, 200);
    assert.ok(await deactivateApiKey(database.db, created.prefix));
    for (const query of ['{ loans_aggregate { aggregate { count } } }', '{ nope }', 'mutation { update_loans(where: {}, _set: {status: "closed"}) { affected_rows } }']) {
      const answer = await get(created.key, query);
      assert.deepEqual([answer.status, answer.text], [403, 'Not authorized'], query);
    }
  });

  it('an invalid pattern is a GraphQL error (data-exception) that costs its own request only', async () => {
    // One document, so one cached plan and (from its second run) one prepared statement.
    const query = 'query Match($re: String!) { payments_aggregate(where: {type: {_regex: $re}}) { aggregate { count } } }';
    const good = payments.filter((p) => /^late/.test(p.type)).length;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? { re: '(unclosed' } : { re: '^late' })).map(async (variables, i) => ({ i, variables, answer: i % 2 ? await get(a.apiKey, query, variables) : await post(a.apiKey, query, variables) })),
    );
    for (const { variables, answer } of answers) {
      assert.equal(answer.status, 200, answer.text);
      const body = answer.body as { data?: { payments_aggregate: { aggregate: { count: number } } }; errors?: { message: string; extensions: { code: string } }[] };
      if (variables.re === '(unclosed') {
        assert.equal(body.data, undefined);
        assert.equal(body.errors![0]!.extensions.code, 'data-exception');
        assert.match(body.errors![0]!.message, /regular expression/);
      } else assert.equal(body.data!.payments_aggregate.aggregate.count, good, answer.text);
    }
    // And afterwards, in sequence, on the same plan: every request answers as it should.
    for (const re of ['^late', '(unclosed', '^late']) {
      const body = (await post(a.apiKey, query, { re })).body as { data?: unknown; errors?: unknown };
      assert.equal(re === '^late' ? body.errors : body.data, undefined);
    }
    const [health] = [await send(`${server.url}/readyz`)];
    assert.equal(health.status, 200);
  });
});
