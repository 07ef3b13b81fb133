import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createApiKey } from '../../app/apiKeys.js';
import { configFromEnv } from '../../app/config.js';
import { openApiChecker, type OpenApiChecker } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { installTestClock, setTestClock } from '../support/testClock.js';

/**
 * The REST routes as a client generated from `/api/openapi.json` meets them, with a key of every
 * shipped role: each path answers a method it does not take with 405 and `Allow` (as `/api/loan`
 * always did), each GET refuses a query parameter it does not take (as the document's 400 says),
 * and the answers every operation may give — 429 over the key's rate limit — are in the document
 * (503 with the database out of reach: tests/api/unavailable.test.ts).
 */
const ROLES = ['admin', 'servicer', 'read_only', 'investor'] as const;
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'] as const;

let s: KeyedService;
let loanId: string;
let personId: string;
const checkers = new Map<string, OpenApiChecker>();
const keys = new Map<string, string>();

/** A request path for a path template of the document: the test's loan, person, and a remittance id that is none. */
const concrete = (template: string): string =>
  template.replace('/api/loan/{id}', `/api/loan/${loanId}`).replace('{person_id}', personId).replace('/api/remittances/{id}', '/api/remittances/00000000-0000-4000-8000-000000000009');

/** Every operation of a document as `[METHOD, template]`. */
const operationsOf = (document: Record<string, any>): [string, string][] =>
  Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    ['get', 'post', 'patch'].filter((method) => method in item).map((method): [string, string] => [method.toUpperCase(), path]),
  );

before(async () => {
  s = await startKeyedService();
  await installTestClock(s.db);
  await setTestClock(s.db, '2026-03-20');
  const created = await s.rest.post('/api/loan', { Name: 'Audit', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  assert.equal(created.status, 201, created.text);
  loanId = created.json.loan.id;
  const person = await fetch(`${s.url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation { insert_people_one(object: {name: "Ivy Investor"}) { id } }' }),
  });
  personId = ((await person.json()) as { data: { insert_people_one: { id: string } } }).data.insert_people_one.id;
  keys.set('admin', s.key);
  for (const role of ['servicer', 'read_only']) keys.set(role, (await createApiKey(s.db, s.accountId, role, { role, variables: new Map() })).key);
  keys.set('investor', (await createApiKey(s.db, s.accountId, 'investor', { role: 'investor', variables: new Map([['person_id', personId]]) })).key);
  for (const role of ROLES) checkers.set(role, await openApiChecker(s.url, keys.get(role)!));
});
after(() => s?.close());

describe('OpenAPI audit: methods', () => {
  it('every path answers a method it does not take with 405, Allow naming the ones it takes, and the REST error shape', async () => {
    const document = checkers.get('admin')!.document;
    const validateError = new Ajv2020({ strict: false }).compile(document.components.schemas.Error);
    const wrong: string[] = [];
    for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      const takes = METHODS.filter((method) => method.toLowerCase() in item);
      const allow = takes.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).join(', ');
      for (const method of METHODS.filter((candidate) => !takes.includes(candidate))) {
        const reply = await fetch(`${s.url}${concrete(template)}`, { method, headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' }, body: method === 'OPTIONS' ? undefined : '{}' });
        const text = await reply.text();
        const body = reply.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text;
        if (reply.status !== 405 || reply.headers.get('allow') !== allow || !validateError(body)) wrong.push(`${method} ${template}: ${reply.status} Allow ${reply.headers.get('allow')} ${text.slice(0, 80)}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('HEAD of a GET is answered as the GET, without a body', async () => {
    for (const path of ['/api/loan', `/api/loan/${loanId}`, '/api/distributions', '/api/openapi.json']) {
      const head = await fetch(`${s.url}${path}`, { method: 'HEAD', headers: { authorization: `Token ${s.key}` } });
      assert.equal(head.status, 200, path);
      assert.equal(await head.text(), '');
    }
  });
});

describe('OpenAPI audit: query parameters', () => {
  for (const role of ROLES) {
    it(`${role}: every GET of its document refuses a parameter it does not take with the 400 the document describes`, async () => {
      const checker = checkers.get(role)!;
      const answered: string[] = [];
      for (const [method, template] of operationsOf(checker.document).filter(([method]) => method === 'GET')) {
        const path = `${concrete(template)}?as_of=2026-01-01`;
        const reply = await fetch(`${s.url}${path}`, { headers: { authorization: `Token ${keys.get(role)}` } });
        const text = await reply.text();
        checker.check(method, path, { status: reply.status, contentType: reply.headers.get('content-type'), text });
        if (reply.status !== 400 || !(JSON.parse(text) as { fields?: Record<string, string> }).fields?.as_of) answered.push(`${template}: ${reply.status} ${text.slice(0, 80)}`);
      }
      assert.deepEqual(answered, [], 'each GET names the parameter it does not take');
    });
  }

  it('POST /api/loan: the Location header of the 201 is in the document', async () => {
    const document = checkers.get('admin')!.document;
    assert.ok(document.paths['/api/loan'].post.responses['201'].headers.Location, 'the 201 documents Location');
    const created = await fetch(`${s.url}/api/loan`, { method: 'POST', headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' }, body: '{"Name":"Located"}' });
    assert.equal(created.status, 201);
    const id = ((await created.json()) as { loan: { id: string } }).loan.id;
    assert.equal(created.headers.get('location'), `/api/loan/${id}`);
  });
});

/**
 * The places in `value` the schema leaves untyped for a generated client: an object key under no
 * `properties` (nor a typed `additionalProperties`), an object or array whose schema says nothing of
 * its members. `$ref`, `allOf` (merged) and `anyOf`/`oneOf` (the best-described branch) are followed.
 */
function untyped(document: Record<string, any>, schema: any, value: unknown, at: string): string[] {
  while (schema?.$ref) schema = schema.$ref.split('/').slice(1).reduce((node: any, part: string) => node[part], document);
  if (!schema) return [`${at}: no schema`];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return (branches as any[]).map((branch) => untyped(document, branch, value, at)).reduce((best, next) => (next.length < best.length ? next : best));
  if (schema.allOf) {
    const merged = { ...schema, allOf: undefined, properties: { ...schema.properties } };
    for (const part of schema.allOf) {
      let resolved = part;
      while (resolved.$ref) resolved = resolved.$ref.split('/').slice(1).reduce((node: any, key: string) => node[key], document);
      Object.assign(merged.properties, resolved.properties);
    }
    return untyped(document, merged, value, at);
  }
  if (Array.isArray(value)) return schema.items ? value.flatMap((item, index) => untyped(document, schema.items, item, `${at}[${index}]`)) : value.length ? [`${at}: items untyped`] : [];
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, member]) => {
      const property = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      return property ? untyped(document, property, member, `${at}.${key}`) : [`${at}.${key}`];
    });
  }
  return [];
}

describe('OpenAPI audit: answers', () => {
  it("every member of every JSON answer of the document's GETs has a type in it (a generated client's types cover the answer)", async () => {
    // A payment with its allocation lines, and late fees as of the day: the ledger in full.
    await setTestClock(s.db, '2026-06-20');
    const payment = await fetch(`${s.url}/api/graph`, {
      method: 'POST',
      headers: { authorization: `Token ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation ($l: uuid!) { insert_payments(objects: [{loan_id: $l, date: "2026-02-15", amount: "300"}]) { affected_rows } }', variables: { l: loanId } }),
    });
    assert.equal(payment.status, 200);
    try {
      const document = checkers.get('admin')!.document;
      const gaps: string[] = [];
      // (The document itself is OpenAPI's own schema's to describe.)
      for (const [, template] of operationsOf(document).filter(([method, path]) => method === 'GET' && path !== '/api/openapi.json')) {
        const query = template.includes('statement') || template === '/api/remittances' ? '?from=2026-01-01&to=2026-03-31' : '';
        const answer = await s.rest.get(`${concrete(template)}${query}`);
        if (answer.status !== 200) continue;
        const schema = document.paths[template].get.responses['200'].content['application/json'].schema;
        gaps.push(...untyped(document, schema, answer.json, template));
      }
      const ledger = await s.rest.get(`/api/loan/${loanId}/ledger`);
      assert.ok(ledger.json.payments[0].allocations.length && ledger.json.fees.length, ledger.text);
      assert.deepEqual(gaps, []);
    } finally {
      await setTestClock(s.db, '2026-03-20');
    }
  });
});

describe('OpenAPI audit: request bodies', () => {
  it("the contact parameters' schemas accept and refuse what POST /api/loan does (lengths, types, e-mail)", async () => {
    const document = checkers.get('admin')!.document;
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema(document, 'openapi.json');
    const documentAccepts = ajv.compile({ $ref: 'openapi.json#/components/schemas/LoanCreate' });
    const samples: Record<string, unknown>[] = [
      { Borrower_Id: 'x'.repeat(100) },
      { Borrower_Id: 'x'.repeat(101) },
      { Guarantor_Id: 12 },
      { Borrower_Name: 'n'.repeat(500) },
      { Borrower_Name: 'n'.repeat(501) },
      { Borrower_Name: 'Em', Borrower_Email: 'em@example.com' },
      { Borrower_Name: 'Em', Borrower_Email: 'not-an-email' },
      { Borrower_Name: 'Em', Borrower_Email: '' },
      { Guarantor_Name: 'Long', Guarantor_Email: `${'l'.repeat(308)}@example.com` },
      { Guarantor_Name: 'Long', Guarantor_Email: `${'l'.repeat(309)}@example.com` },
      { Borrower_Name: 'Co', Borrower_Company: 'c'.repeat(500) },
      { Borrower_Name: 'Co', Borrower_Company: 'c'.repeat(501) },
      { Borrower_Name: 'Co', Borrower_Is_Company: 'yes' },
      { Guarantor_Name: 'Co', Guarantor_Is_Company: true },
    ];
    const disagree: string[] = [];
    for (const sample of samples) {
      const body = { Name: 'Contacts', ...sample };
      const answer = await s.rest.post('/api/loan', body);
      if ((answer.status === 201) !== documentAccepts(body)) disagree.push(`${JSON.stringify(sample).slice(0, 60)}: service ${answer.status}, document ${documentAccepts(body) ? 'accepts' : 'refuses'}`);
    }
    assert.deepEqual(disagree, []);
  });
});

describe('OpenAPI audit: a key over its rate limit', () => {
  let limited: KeyedService;
  before(async () => {
    // One token a key, refilled every 1,000 s: a key's second request is over its limit.
    limited = await startKeyedService({ config: { operations: { ...configFromEnv({}).operations, rateLimit: { perSecond: 0.001, burst: 1 } } } });
  });
  after(() => limited?.close());

  it('every operation of the document answers 429 as the document describes, with Retry-After', async () => {
    const checker = await openApiChecker(limited.url, (await createApiKey(limited.db, limited.accountId, 'reads the document')).key);
    const key = (await createApiKey(limited.db, limited.accountId, 'over its limit')).key;
    assert.equal((await fetch(`${limited.url}/api/loan`, { headers: { authorization: `Token ${key}` } })).status, 200);
    const operations = operationsOf(checker.document);
    assert.ok(operations.length >= 14, `${operations.length} operations`);
    for (const [method, template] of operations) {
      const path = template.replace(/\{[a-z_]+\}/g, '00000000-0000-4000-8000-000000000001');
      const reply = await fetch(`${limited.url}${path}`, { method, headers: { authorization: `Token ${key}`, 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { body: '{}' }) });
      const text = await reply.text();
      assert.equal(reply.status, 429, `${method} ${template}: ${text}`);
      assert.match(reply.headers.get('retry-after') ?? '', /^\d+$/);
      checker.check(method, path, { status: reply.status, contentType: reply.headers.get('content-type'), text });
    }
  });
});
