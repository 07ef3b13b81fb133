import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { accountFingerprint } from '../support/fingerprint.js';
import { testDatabaseKind } from '../support/testDatabase.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * Issue #11, "Done when" 3: fast-check (fixed seed) throws generated REST bodies, query strings,
 * headers and GraphQL documents with variables at the real service on the test database
 * (PGlite, or PostgreSQL with TEST_DATABASE_URL). Every answer must be below 500, and every
 * refused write must leave the account's data exactly as it was (`accountFingerprint`).
 * Counterexamples are printed by fast-check with the seed and path to replay them.
 */
const SEED = 20261122;

let service: KeyedService;
let key: string;
let accountId: string;
let loanId: string;
let port: number;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

before(async () => {
  service = await startKeyedService({
    fields: [
      { name: 'Loan Officer', type: 'text' },
      { name: 'Units', type: 'integer' },
      { name: 'LTV', type: 'percent' },
      { name: 'Kind', type: 'select', options: ['a', 'b'] },
      { name: 'Closed On', type: 'date' },
      { name: 'Insured', type: 'boolean' },
    ],
    config: { logLevel: 'silent' },
  });
  ({ key, accountId } = service);
  port = Number(new URL(service.url).port);
  const created = await send('POST', '/api/loan', jsonHeaders(), JSON.stringify({ Name: 'seed', Amount: 1000, Rate: 5, Term: 3, Frequency: 'monthly', Date_Funded: '2026-01-01', Borrower_Name: 'Ada' }));
  assert.equal(created.status, 201, created.text);
  loanId = JSON.parse(created.text).loan.id;
});

after(async () => {
  agent.destroy();
  await service?.close();
});

interface Answer {
  readonly status: number;
  readonly text: string;
}

/** One raw HTTP request (node:http, so any header and any body bytes can be sent). */
function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let req;
    try {
      req = request({ host: '127.0.0.1', port, method, path, headers, agent, timeout: 20_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
    } catch (error) {
      // A header node:http itself refuses to send (an invalid character): nothing reached the server.
      resolve({ status: -1, text: String(error) });
      return;
    }
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Percent-encodes like encodeURIComponent; a lone surrogate (which it refuses) becomes its raw UTF-8-ish bytes. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

const jsonHeaders = (): Record<string, string> => ({ authorization: `Token ${key}`, 'content-type': 'application/json' });

function assertNotAServerError(answer: Answer, what: string): void {
  assert.ok(answer.status < 500, `${what} → ${answer.status} ${answer.text.slice(0, 300)}`);
}

// ---------- values ----------

const NASTY_TEXT = ['\u0000', 'a\u0000b', '\u0000\u0000', '__proto__', 'constructor', 'toString', "'; DROP TABLE loans; --", '\uD800', '\uDFFF', '%00', '\\u0000', '$1', '"', '', ' ', 'Ω≈ç√', '𝕏', 'a'.repeat(600), '9'.repeat(400), '1e999999', '2147483648', 'NaN', 'Infinity', '2026-02-30', '0000-01-01', '2026-01-01', 'monthly', 'lead', 'servicing', 'ada@example.com', '00000000-0000-0000-0000-000000000000'];
const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom('\u0000', 'a', '%', '\\', '"', "'", '.', '-', '1', 'e', ' '), maxLength: 12 }) },
);
const NASTY_NUMBERS = [0, -0, -1, 1, 0.5, 2147483647, 2147483648, -2147483649, 9007199254740991, 9007199254740993, 1e13, 1e15, 1e16, 1e21, 1e308, 5e-324, -1e308, 99999999999999.99, 0.001, 1200, 1201, 1e-7];
const number = fc.oneof(fc.constantFrom(...NASTY_NUMBERS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 3, arbitrary: number },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: number.map((n) => String(n)) },
);

const FIELD_KEYS = [
  'Name', 'name', 'NAME', 'Amount', 'Rate', 'Term', 'Frequency', 'Amortization', 'Status', 'Regular_Payment', 'Date_Funded', 'First_Payment_Date', 'Date_Maturity',
  'Loan_Officer', 'Loan Officer', 'Units', 'LTV', 'Kind', 'Closed_On', 'Insured',
  'Borrower_Name', 'Borrower_Email', 'Borrower_Id', 'Borrower_Company', 'Borrower_Is_Company', 'Guarantor_Name', 'Guarantor_Email', 'Guarantor_Id', 'Guarantor_Company', 'Guarantor_Is_Company',
  '__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype',
];
const bodyKey = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...FIELD_KEYS) }, { weight: 1, arbitrary: text });

/** A JSON object written by hand, so `__proto__` and repeated keys reach the server as sent. */
const objectText = fc.array(fc.tuple(bodyKey, value), { maxLength: 7 }).map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`);
const restBody = fc.oneof(
  { weight: 8, arbitrary: objectText },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: objectText.map((t) => t.slice(0, Math.max(1, t.length - 3))) },
  // Values nested deeper than any recursive walk (JSON.stringify, a validator) could follow.
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...FIELD_KEYS), fc.integer({ min: 5_000, max: 150_000 }), fc.constantFrom('[', '{"a":')).map(([k, n, open]) => `{${JSON.stringify(k)}: ${open.repeat(n)}${open === '[' ? '' : '1'}${(open === '[' ? ']' : '}').repeat(n)}}`) },
);

// ---------- the properties ----------

/** Checks a write: below 500, and when refused, nothing stored changed. The baseline follows accepted writes. */
async function checkWrite(method: string, path: string, headers: Record<string, string>, body: string | Buffer | undefined, state: { baseline: Record<string, string> | null; refused: number }): Promise<void> {
  state.baseline ??= await accountFingerprint(service.db, accountId);
  const answer = await send(method, path, headers, body);
  if (answer.status === -1) return;
  assertNotAServerError(answer, `${method} ${path} ${String(body).slice(0, 200)}`);
  const now = await accountFingerprint(service.db, accountId);
  if (answer.status >= 400) {
    state.refused += 1;
    assert.deepEqual(now, state.baseline, `refused ${method} ${path} ${String(body).slice(0, 200)} → ${answer.status} changed stored data`);
  }
  state.baseline = now;
}

describe(`Input fuzzing on ${testDatabaseKind} (fast-check, seed ${SEED})`, () => {
  it('REST bodies (POST and PATCH /api/loan): never ≥ 500; a refused write changes nothing', async () => {
    const state = { baseline: null as Record<string, string> | null, refused: 0 };
    const target = fc.oneof(
      { weight: 3, arbitrary: fc.constant(['POST', '/api/loan'] as const) },
      { weight: 3, arbitrary: fc.constant(['PATCH', 'LOAN'] as const) },
      { weight: 1, arbitrary: text.map((segment) => ['PATCH', `/api/loan/${encode(segment) || 'x'}`] as const) },
    );
    await fc.assert(
      fc.asyncProperty(target, restBody, async ([method, path], body) => {
        await checkWrite(method, path === 'LOAN' ? `/api/loan/${loanId}` : path, jsonHeaders(), body, state);
      }),
      { seed: SEED, numRuns: 500, endOnFailure: true },
    );
    assert.ok(state.refused > 300, `most generated bodies are refused (${state.refused})`);
  });

  it('query strings and path segments of GET /api/loan: never ≥ 500', async () => {
    const before = await accountFingerprint(service.db, accountId);
    const raw = fc.string({ unit: fc.constantFrom('%', '0', 'Z', '2', 'F', '&', '=', '+', '[', ']', 'a', '.', '-', '/', '?', '#'), maxLength: 10 });
    const part = fc.oneof(text.map((t) => encode(t)), raw, number.map((n) => String(n)), fc.constantFrom('2147483648', '2147483647', '%00', '%ZZ', '1e3', '-0', '0x10', '99999999999999999999'));
    const name = fc.oneof(fc.constantFrom('status', 'limit', 'offset', '__proto__', 'constructor', 'limit[]', 'offset[a]'), part);
    const query = fc.array(fc.tuple(name, part), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    const path = fc.oneof({ weight: 3, arbitrary: query.map((q) => `/api/loan?${q}`) }, { weight: 1, arbitrary: part.map((p) => `/api/loan/${p || '%00'}`) });
    await fc.assert(
      fc.asyncProperty(path, async (p) => {
        // A path node:http refuses to send (e.g. with '#') is the client's problem, never the server's.
        const answer = await send('GET', p.replace(/#/g, '%23'), { authorization: `Token ${key}` });
        assertNotAServerError(answer, `GET ${p}`);
      }),
      { seed: SEED, numRuns: 600, endOnFailure: true },
    );
    assert.deepEqual(await accountFingerprint(service.db, accountId), before);
  });

  it('headers (Content-Type, Content-Encoding, Accept, Authorization) with matching or mismatching bodies: never ≥ 500; a refused write changes nothing', async () => {
    const state = { baseline: null as Record<string, string> | null, refused: 0 };
    const before = await accountFingerprint(service.db, accountId);
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 });
    const route = fc.constantFrom(['POST', '/api/graph'], ['POST', '/api/graph/explain'], ['POST', '/api/loan'], ['PATCH', 'LOAN'], ['GET', '/api/loan'], ['POST', '/dashboard/login'], ['GET', '/api/graph']);
    const contentType = fc.option(fc.oneof(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/graphql-response+json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', ''), printable));
    const encoding = fc.option(fc.oneof(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'zstd', 'GZIP', 'gzip, br', 'x-gzip', ''), printable));
    const accept = fc.option(fc.oneof(fc.constantFrom('application/json', 'application/graphql-response+json', 'application/graphql-response+json, application/json', '*/*', 'text/html'), printable));
    const authorization = fc.oneof(fc.constant('valid'), fc.constant(undefined), fc.constantFrom('Token ', 'Bearer x', 'Token lq_aaaaaaaa_' + 'a'.repeat(43), 'token valid'), printable);
    const body = fc.oneof(
      fc.constant(JSON.stringify({ query: '{ loans { name amount } }' })),
      fc.constant(JSON.stringify({ Name: 'by headers' })),
      restBody,
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    );
    const compress = fc.constantFrom('as-said', 'not', 'gzip-anyway');
    await fc.assert(
      fc.asyncProperty(route, contentType, encoding, accept, authorization, body, compress, async ([method, path], type, enc, acc, auth, content, how) => {
        const headers: Record<string, string> = {};
        if (type !== null) headers['content-type'] = type;
        if (enc !== null) headers['content-encoding'] = enc;
        if (acc !== null) headers.accept = acc;
        if (auth === 'valid') headers.authorization = `Token ${key}`;
        else if (auth !== undefined) headers.authorization = auth;
        let payload: string | Buffer | undefined = method === 'GET' ? undefined : content;
        if (payload !== undefined && how !== 'not') {
          const wanted = how === 'gzip-anyway' ? 'gzip' : (enc ?? '').trim().toLowerCase();
          const bytes = Buffer.from(payload);
          if (wanted === 'gzip') payload = gzipSync(bytes);
          else if (wanted === 'deflate') payload = deflateSync(bytes);
          else if (wanted === 'br') payload = brotliCompressSync(bytes);
        }
        const target = path === 'LOAN' ? `/api/loan/${loanId}` : path;
        if (target.startsWith('/api/loan') && method !== 'GET') return checkWrite(method, target, headers, payload, state);
        // Reads and GraphQL never write: only the status is checked here (the fingerprint at the end covers them).
        const answer = await send(method, target, headers, payload);
        if (answer.status !== -1) assertNotAServerError(answer, `${method} ${target} ${JSON.stringify(headers)}`);
      }),
      { seed: SEED, numRuns: 500, endOnFailure: true },
    );
    // Writes were checked one by one; the requests after the last of them changed nothing either.
    assert.deepEqual(await accountFingerprint(service.db, accountId), state.baseline ?? before);
  });

  it('GraphQL documents and variables (POST /api/graph and /explain): never ≥ 500, nothing changes', async () => {
    const before = await accountFingerprint(service.db, accountId);
    const LOAN_FIELDS = ['id', 'name', 'amount', 'status', 'rate', 'term', 'date_funded', 'created_at', 'custom_fields', 'loan_officer', 'property_type', 'bogus', '__typename', 'constructor', 'toString', '__proto__'];
    const OPERATORS = ['_eq', '_neq', '_gt', '_gte', '_lt', '_lte', '_in', '_nin', '_like', '_nlike', '_ilike', '_nilike', '_regex', '_niregex', '_similar', '_nsimilar', '_contains', '_has_keys_any', '_cast', '_is_null', '_bogus', 'constructor', '__proto__'];
    const literal = fc.oneof(
      text.map((t) => JSON.stringify(t)),
      number.map((n) => String(n)),
      fc.constantFrom('1e999999', '-1e-999999', '2147483648', '99999999999999999999999999', 'true', 'false', 'null', 'asc', 'completed', '"2026-01-01"', '"00000000-0000-0000-0000-000000000000"', '[]', '["a", "\\u0000"]', '[1, 2147483648]', '$v', '$w', '$undeclared'),
    );
    const comparison = fc.tuple(fc.constantFrom(...OPERATORS), literal).map(([op, v]) => `{${op}: ${v}}`);
    const boolExp: fc.Arbitrary<string> = fc.letrec<{ exp: string }>((tie) => ({
      exp: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.tuple(fc.constantFrom(...LOAN_FIELDS), comparison).map(([f, c]) => `{${f}: ${c}}`),
        fc.array(tie('exp'), { maxLength: 3 }).map((items) => `{_and: [${items.join(', ')}]}`),
        fc.array(tie('exp'), { maxLength: 3 }).map((items) => `{_or: [${items.join(', ')}]}`),
        tie('exp').map((item) => `{_not: ${item}}`),
        tie('exp').map((item) => `{schedules: ${item}}`),
        fc.constant('$w'),
      ),
    })).exp;
    const count = fc.oneof(fc.constantFrom('0', '1', '-1', '2147483647', '2147483648', '1e3', '"5"', 'null', '$v'), fc.integer().map(String));
    const argument = fc.oneof(
      boolExp.map((w) => `where: ${w}`),
      count.map((c) => `limit: ${c}`),
      count.map((c) => `offset: ${c}`),
      fc.tuple(fc.constantFrom(...LOAN_FIELDS), fc.constantFrom('asc', 'desc', 'asc_nulls_first', 'desc_nulls_last', 'sideways', '"asc"')).map(([f, d]) => `order_by: {${f}: ${d}}`),
    );
    const selection = fc.subarray(LOAN_FIELDS.concat(['schedules { due principal }', 'schedules_aggregate { aggregate { count } }']), { minLength: 1 }).map((fields) => fields.join(' '));
    const root = fc.oneof(
      fc.tuple(fc.array(argument, { maxLength: 3 }), selection).map(([args, sel]) => `loans${args.length ? `(${args.join(', ')})` : ''} { ${sel} }`),
      literal.map((id) => `loans_by_pk(id: ${id}) { name }`),
      fc.array(argument, { maxLength: 2 }).map((args) => `loans_aggregate${args.length ? `(${args.join(', ')})` : ''} { aggregate { count sum { amount } max { name } } }`),
      fc.tuple(fc.constantFrom('people', 'schedules', 'payments', 'nothing', 'constructor', '__proto__'), fc.array(argument, { maxLength: 2 })).map(([c, args]) => `${c}${args.length ? `(${args.join(', ')})` : ''} { id }`),
    );
    const VARIABLE_TYPES = ['loans_order_by', 'String', 'String!', 'Int', 'Float', 'numeric', 'uuid', 'date', 'timestamptz', 'Boolean', '[String!]', 'loans_bool_exp', 'jsonb', 'Unknown'];
    const variables = fc.record({ constructor: value, v: value, w: fc.oneof(value, fc.jsonValue({ maxDepth: 4 }), fc.constant({ name: { _eq: 'a\u0000' } }), fc.constant({ _and: [{ amount: { _gt: '1e999999' } }] })) });
    const document = fc
      .tuple(fc.constantFrom(...VARIABLE_TYPES), fc.constantFrom(...VARIABLE_TYPES), fc.array(root, { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([tv, tw, roots, declare]) => `query Q${declare ? `($v: ${tv}, $w: ${tw})` : ''} { ${roots.map((r, i) => `r${i}: ${r}`).join(' ')} }`);
    /** A valid-looking document with one character inserted, removed or replaced somewhere. */
    const mutated = fc.tuple(document, fc.nat(), fc.constantFrom('', '\u0000', '{', '}', '"', '$', '\\', '(', '...', '#', ' ')).map(([doc, at, insert]) => {
      const i = at % (doc.length + 1);
      return doc.slice(0, i) + insert + doc.slice(i + (insert === '' ? 1 : 0));
    });
    const envelope = fc.oneof(
      { weight: 8, arbitrary: fc.tuple(fc.oneof(document, mutated), variables, fc.option(fc.constantFrom('Q', 'R', '', '__proto__'))).map(([query, vars, op]) => ({ query, variables: vars, ...(op !== null ? { operationName: op } : {}) })) },
      { weight: 1, arbitrary: fc.record({ query: fc.oneof(text, fc.jsonValue({ maxDepth: 1 })), variables: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(null)) }) },
    );
    await fc.assert(
      fc.asyncProperty(envelope, fc.constantFrom('/api/graph', '/api/graph', '/api/graph', '/api/graph/explain'), async (body, path) => {
        const text = JSON.stringify(body);
        const answer = await send('POST', path, jsonHeaders(), text);
        assertNotAServerError(answer, `POST ${path} ${text.slice(0, 400)}`);
      }),
      { seed: SEED, numRuns: 1200, endOnFailure: true },
    );
    assert.deepEqual(await accountFingerprint(service.db, accountId), before, 'GraphQL requests changed stored data');
  });
});
