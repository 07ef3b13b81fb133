import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { addProductField } from '../../app/products.js';
import { createAccountWithAdmin, DashboardClient } from '../dashboard/dashboardClient.js';
import { accountFingerprint } from '../support/fingerprint.js';
import { createAccountWithKey, tokenHeader } from '../support/http.js';
import { restClient, type RestAnswer, type RestClient } from '../support/restClient.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';

/**
 * Issue #11, items 4 and 5 (the input half): the exact reproductions of the issue, each a 400
 * naming the field — never a 500 — with nothing written; and names that collide with
 * `Object.prototype` members neither lost nor smuggled in.
 */
let service: KeyedService;
let rest: RestClient;
let key: string;
let accountId: string;
let loanId: string;

before(async () => {
  service = await startKeyedService({
    fields: [
      { name: 'Loan Officer', type: 'text' },
      { name: 'Units', type: 'integer' },
      { name: 'LTV', type: 'percent' },
    ],
  });
  ({ rest, key, accountId } = service);
  const created = await rest.post('/api/loan', { Name: 'existing', Amount: 1000, Rate: 5, Term: 3, Frequency: 'monthly', Date_Funded: '2026-01-01', Borrower_Name: 'Ada' });
  assert.equal(created.status, 201, created.text);
  loanId = created.json.loan.id;
});

after(async () => {
  await service?.close();
});

/** Runs `attempt` and asserts that the account's stored data is exactly as before. */
async function writesNothing<T>(attempt: () => Promise<T>): Promise<T> {
  const before = await accountFingerprint(service.db, accountId);
  const result = await attempt();
  assert.deepEqual(await accountFingerprint(service.db, accountId), before, 'a refused request changed stored data');
  return result;
}

function assertNamesFields(answer: RestAnswer, fields: readonly string[], pattern: RegExp): void {
  assert.equal(answer.status, 400, answer.text);
  assert.deepEqual(Object.keys(answer.json.fields), fields, answer.text);
  for (const field of fields) assert.match(answer.json.fields[field], pattern, answer.text);
}

const NUL = /NUL \(\\u0000\)/;

describe('Issue #11 item 4: a NUL character in a REST string value', () => {
  for (const [field, body] of [
    ['Name', { Name: 'Elm\u0000St' }],
    ['Borrower_Name', { Name: 'x', Borrower_Name: 'Ada\u0000' }],
    ['Borrower_Email', { Name: 'x', Borrower_Name: 'Ada', Borrower_Email: 'ada\u0000@example.com' }],
    ['Guarantor_Company', { Name: 'x', Guarantor_Name: 'Bob', Guarantor_Company: 'Acme\u0000 Ltd' }],
    ['Loan_Officer', { Name: 'x', Loan_Officer: '\u0000' }],
  ] as const) {
    it(`POST with NUL in ${field} is a 400 naming ${field}, nothing written`, async () => {
      const answer = await writesNothing(() => rest.post('/api/loan', body));
      assertNamesFields(answer, [field], NUL);
    });
  }

  it('PATCH with NUL in Name and in a custom text field names both, nothing written', async () => {
    const answer = await writesNothing(() => rest.patch(`/api/loan/${loanId}`, { Name: 'a\u0000', Loan_Officer: 'b\u0000' }));
    assertNamesFields(answer, ['Name', 'Loan_Officer'], NUL);
  });

  it('a NUL in a body key is an unknown field, named', async () => {
    const answer = await writesNothing(() => rest.post('/api/loan', { Name: 'x', 'Na\u0000me': 'y' }));
    assertNamesFields(answer, ['Na\u0000me'], /unknown field/);
  });
});

describe('Issue #11 item 4: numbers past a column\'s range', () => {
  for (const [field, value] of [
    ['Amount', 1e13],
    ['Amount', '99999999999999.99'],
    ['Rate', 100000],
    ['Term', 2147483648],
    ['Units', 2 ** 53],
    ['LTV', '12345678.5'],
  ] as const) {
    it(`${field}: ${value} is a 400 naming ${field}`, async () => {
      const answer = await writesNothing(() => rest.post('/api/loan', { Name: 'x', [field]: value }));
      assertNamesFields(answer, [field], /expected/);
    });
  }
});

describe('Issue #11 item 4: limit and offset past Int32', () => {
  for (const query of ['offset=2147483648', 'offset=99999999999999999999', 'limit=2147483648', 'offset=-1', 'offset=%00']) {
    it(`GET /api/loan?${query} is a 400 naming the parameter`, async () => {
      const answer = await rest.get(`/api/loan?${query}`);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(Object.keys(answer.json.fields), [query.split('=')[0]]);
    });
  }

  it('offset=2147483647 (the largest) is answered, with no loans', async () => {
    const answer = await rest.get('/api/loan?offset=2147483647');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.loans, []);
    assert.equal(answer.json.total, 1);
  });

  it('GraphQL limit/offset past Int32, inline or in a variable, is a validation error with a location', async () => {
    for (const body of [
      { query: '{ loans(offset: 2147483648) { id } }' },
      { query: '{ loans(limit: 2147483648) { id } }' },
      { query: 'query($o: Int) { loans(offset: $o) { id } }', variables: { o: 2147483648 } },
      { query: 'query($l: Int) { loans { schedules(limit: $l) { id } } }', variables: { l: 1e10 } },
    ]) {
      const errors = await graphErrors(body);
      assert.equal(errors[0].extensions.code, 'validation-failed', JSON.stringify(errors));
      assert.ok(errors[0].locations?.length, JSON.stringify(errors));
    }
  });
});

async function graph(body: unknown, path = '/api/graph'): Promise<{ status: number; json: any }> {
  const response = await fetch(`${service.url}${path}`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

async function graphErrors(body: unknown): Promise<any[]> {
  const answer = await graph(body);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  assert.ok(Array.isArray(answer.json.errors), JSON.stringify(answer.json));
  assert.equal(answer.json.data, undefined);
  return answer.json.errors;
}

describe('Issue #11 item 4: NUL characters and numeric range in GraphQL', () => {
  it('a NUL in a string literal is a validation error naming the argument, with its location', async () => {
    const errors = await graphErrors({ query: '{\n  loans(where: {name: {_eq: "a\\u0000"}}) { id }\n}' });
    assert.equal(errors.length, 1);
    assert.equal(errors[0].extensions.code, 'validation-failed');
    assert.match(errors[0].message, /loans\.where\.name\._eq contains a NUL/);
    assert.deepEqual(errors[0].locations, [{ line: 2, column: 29 }]);
  });

  it('a NUL in a variable (a string, a list item, a whole where) names the variable and where in it', async () => {
    for (const [body, where] of [
      [{ query: 'query($n: String) { loans(where: {name: {_eq: $n}}) { id } }', variables: { n: 'a\u0000' } }, /"\$n".*\(at n\)/],
      [{ query: 'query($n: [String!]) { loans(where: {name: {_in: $n}}) { id } }', variables: { n: ['a', '\u0000'] } }, /"\$n".*\(at n\[1\]\)/],
      [{ query: 'query($w: loans_bool_exp) { loans(where: $w) { id } }', variables: { w: { _or: [{ name: { _like: '%\u0000' } }] } } }, /"\$w".*\(at w\._or\[0\]\.name\._like\)/],
    ] as const) {
      const errors = await graphErrors(body);
      assert.equal(errors[0].extensions.code, 'validation-failed', JSON.stringify(errors));
      assert.match(errors[0].message, where);
      assert.deepEqual(errors[0].locations, [{ line: 1, column: 7 }]);
    }
  });

  it('/api/graph/explain refuses the same before the database', async () => {
    const answer = await graph({ query: 'query($n: String) { loans(where: {name: {_eq: $n}}) { id } }', variables: { n: '\u0000' } }, '/api/graph/explain');
    assert.equal(answer.status, 400);
    assert.equal(answer.json.errors[0].extensions.code, 'validation-failed');
  });

  it('a numeric past what PostgreSQL can hold is a validation error with a location, not a database error', async () => {
    for (const body of [
      { query: '{ loans(where: {amount: {_gt: 1e999999}}) { id } }' },
      { query: '{ loans(where: {amount: {_gt: "1e-999999"}}) { id } }' },
      { query: 'query($a: numeric) { loans(where: {amount: {_gt: $a}}) { id } }', variables: { a: `1${'0'.repeat(131_072)}` } },
    ]) {
      const errors = await graphErrors(body);
      assert.equal(errors[0].extensions.code, 'validation-failed', JSON.stringify(errors).slice(0, 300));
      assert.match(errors[0].message, /out of PostgreSQL's numeric range/);
      assert.ok(errors[0].locations?.length);
    }
  });

  it('a numeric at the edges of PostgreSQL\'s numeric is answered (the checks are not stricter than the database)', async () => {
    const edges = ['1e1000', '-1e-1000', `9${'9'.repeat(131_071)}`, `0.${'0'.repeat(16_382)}1`, `${'1'.repeat(1000)}e-1000`];
    const answer = await graph({ query: 'query($a: [numeric!]) { loans(where: {amount: {_in: $a}}) { name } }', variables: { a: edges } });
    assert.deepEqual(answer.json, { data: { loans: [] } });
    const literal = await graph({ query: '{ loans(where: {_or: [{amount: {_lt: 1e1000}}, {amount: {_gt: -1e-1000}}]}) { name } }' });
    assert.deepEqual(literal.json, { data: { loans: [{ name: 'existing' }] } });
  });

  it('a numeric past the column\'s precision but within numeric compares as a number', async () => {
    const answer = await graph({ query: '{ loans(where: {amount: {_lt: 1e300}}) { name } big: loans(where: {amount: {_gt: "123456789012345678901234567890.123"}}) { name } }' });
    assert.deepEqual(answer.json, { data: { loans: [{ name: 'existing' }], big: [] } });
  });
});

describe('Issue #11 item 5: names that are Object.prototype members', () => {
  it('{"Name":"x","__proto__":{"x":1}} is a 400 naming the unknown key __proto__, nothing written', async () => {
    const answer = await writesNothing(() => rest.post('/api/loan', undefined, { raw: '{"Name":"x","__proto__":{"x":1}}' }));
    assertNamesFields(answer, ['__proto__'], /unknown field/);
  });

  for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`POST and PATCH {"${name}": …} are 400s naming the unknown key, not a silent 201/200`, async () => {
      const created = await writesNothing(() => rest.post('/api/loan', { Name: 'x', [name]: 'hello' }));
      assertNamesFields(created, [name], /unknown field/);
      const patched = await writesNothing(() => rest.patch(`/api/loan/${loanId}`, { [name]: 'x' }));
      assertNamesFields(patched, [name], /unknown field/);
    });
  }

  it('product field add refuses names that collide with prototype members, in any case', async () => {
    for (const name of ['constructor', 'toString', 'TOSTRING', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'toLocaleString', 'propertyIsEnumerable']) {
      await assert.rejects(addProductField(service.db, accountId, { name, type: 'text' }), /reserved/, name);
    }
  });

  it('a field stored under such a key before the refusal still works fully (lookups are Maps)', async () => {
    // An account whose product got a `constructor` field before `product field add` refused it.
    const made = await createAccountWithKey(service.db);
    await addProductField(service.db, made.account.id, { name: 'Placeholder', type: 'text' });
    await service.db.query(`UPDATE product_fields SET name = 'constructor', key = 'constructor' WHERE account_id = $1`, [made.account.id]);
    const other = await restClient(service.url, made.apiKey.key);
    const created = await other.post('/api/loan', { Name: 'x', constructor: 'hello' });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.loan.custom_fields, { constructor: 'hello' });
    const patched = await other.patch(`/api/loan/${created.json.loan.id}`, { Constructor: 'again' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json.loan.custom_fields, { constructor: 'again' });
  });

  it('GraphQL variables named $constructor or $toString are ordinary variables', async () => {
    const answer = await graph({ query: 'query($constructor: String, $toString: Int) { loans(where: {name: {_eq: $constructor}}, limit: $toString) { name } }' });
    assert.deepEqual(answer.json, { data: { loans: [] } });
    const given = await graph({ query: 'query($constructor: String, $toString: Int) { loans(where: {name: {_eq: $constructor}}, limit: $toString) { name } }', variables: { constructor: 'existing', toString: 5 } });
    assert.deepEqual(given.json, { data: { loans: [{ name: 'existing' }] } });
  });

  it('query-string parameters named __proto__ or constructor are unknown parameters', async () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const answer = await rest.get(`/api/loan?${name}=1`);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(Object.keys(answer.json.fields), [name]);
    }
  });
});

describe('Issue #11 item 4: bodies that are not compressed as Content-Encoding says', () => {
  const routes = [
    ['/api/loan', JSON.stringify({ Name: 'compressed' })],
    ['/api/graph', JSON.stringify({ query: '{ loans { id } }' })],
    ['/api/graph/explain', JSON.stringify({ query: '{ loans { id } }' })],
  ] as const;
  for (const encoding of ['gzip', 'deflate', 'br']) {
    for (const [path, body] of routes) {
      it(`${path} with Content-Encoding: ${encoding} and a plain body is a 400`, async () => {
        const response = await writesNothing(() =>
          fetch(`${service.url}${path}`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json', 'content-encoding': encoding }, body }),
        );
        assert.equal(response.status, 400);
        assert.match(await response.text(), /could not be decompressed as its Content-Encoding/);
      });
    }
  }

  // It was "request body is not valid JSON" for a valid JSON body: the encoding or charset is what to change.
  for (const [path, body] of routes) {
    it(`${path} with a Content-Encoding or charset it does not read is a 400 naming it, not "not valid JSON"`, async () => {
      for (const [headers, names] of [
        [{ 'content-type': 'application/json', 'content-encoding': 'zstd' }, /Content-Encoding \(zstd\) is not one the service reads: send the body uncompressed, or compressed as gzip, deflate or br/],
        [{ 'content-type': 'application/json; charset=x-unknown' }, /charset \(x-unknown\) is not one the service reads: send UTF-8/],
      ] as const) {
        const response = await writesNothing(() => fetch(`${service.url}${path}`, { method: 'POST', headers: { ...tokenHeader(key), ...headers }, body }));
        assert.equal(response.status, 400);
        const text = await response.text();
        assert.match(text, names);
        assert.doesNotMatch(text, /not valid JSON/);
      }
    });
  }

  // JSON is UTF-8 (RFC 8259 §8.1; README "Compressed bodies"): a body declaring another charset was
  // decoded in it (latin1 as Latin-1, utf-16 as UTF-16) and taken, though nothing said so.
  for (const [path, body] of routes) {
    it(`${path}: a body declaring a charset other than UTF-8 (latin1, ISO-8859-1, utf-16, a quoted windows-1252) is a 400 naming it, nothing written`, async () => {
      for (const charset of ['latin1', 'ISO-8859-1', 'utf-16', '"windows-1252"']) {
        const response = await writesNothing(() =>
          fetch(`${service.url}${path}`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': `application/json; charset=${charset}` }, body: Buffer.from(body, 'latin1') }),
        );
        assert.equal(response.status, 400, charset);
        const text = await response.text();
        assert.match(text, new RegExp(`charset \\(${charset.replace(/"/g, '')}\\) is not one the service reads: send UTF-8`), text);
      }
    });
  }

  it('UTF-8 however it is written (utf-8, UTF-8, "utf-8", utf8, none) is read as UTF-8, its non-ASCII letters intact, on REST and /api/graph', async () => {
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8', undefined]) {
      const type = charset === undefined ? 'application/json' : `application/json;charset=${charset}`;
      const name = `Zoë ${charset ?? 'none'}`;
      const created = await fetch(`${service.url}/api/loan`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': type }, body: Buffer.from(JSON.stringify({ Name: name }), 'utf8') });
      assert.equal(created.status, 201, `${charset}: ${await created.clone().text()}`);
      const id = ((await created.json()) as { loan: { id: string } }).loan.id;
      const stored = await service.db.query<{ name: string }>('SELECT name FROM loans WHERE account_id = $1 AND id = $2', [accountId, id]);
      assert.equal(stored.rows[0]!.name, name, charset);
      const query = JSON.stringify({ query: 'query ($id: uuid!) { loans_by_pk(id: $id) { name } }', variables: { id } });
      const read = await fetch(`${service.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': type }, body: Buffer.from(query, 'utf8') });
      assert.deepEqual(await read.json(), { data: { loans_by_pk: { name } } }, charset);
      await service.db.query('DELETE FROM loans WHERE account_id = $1 AND id = $2', [accountId, id]);
    }
  });

  it('a GET declaring another charset without a body is not refused for it (there is nothing to decode)', async () => {
    const response = await fetch(`${service.url}/api/loan/${loanId}`, { headers: { ...tokenHeader(key), 'content-type': 'application/json; charset=latin1' } });
    assert.equal(response.status, 200, await response.clone().text());
  });

  it('a validly compressed body is read (gzip, deflate, br)', async () => {
    const compress = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
    for (const [encoding, fn] of Object.entries(compress)) {
      const response = await fetch(`${service.url}/api/graph`, {
        method: 'POST',
        headers: { ...tokenHeader(key), 'content-type': 'application/json', 'content-encoding': encoding },
        body: fn(Buffer.from(JSON.stringify({ query: '{ loans { name } }' }))),
      });
      assert.deepEqual(await response.json(), { data: { loans: [{ name: 'existing' }] } }, encoding);
    }
  });

  it('a decompression bomb is stopped at the body limit of decompressed bytes (413), nothing written', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 32)); // 64 MiB of spaces, about 64 KiB compressed
    assert.ok(bomb.length < 1024 * 1024);
    for (const path of ['/api/loan', '/api/graph']) {
      const response = await writesNothing(() =>
        fetch(`${service.url}${path}`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb }),
      );
      assert.equal(response.status, 413, path);
    }
  });
});

describe('Issue #11 item 4: dashboard forms', () => {
  const PASSWORD = 'a long enough password';

  it('a NUL in the login e-mail or password is a 400 login page naming the field', async () => {
    const { email } = await createAccountWithAdmin(service.db, PASSWORD);
    for (const fields of [{ email: `${email}\u0000`, password: PASSWORD }, { email, password: `${PASSWORD}\u0000` }]) {
      const client = new DashboardClient(service.url);
      await client.get('/dashboard/login');
      const reply = await client.postForm('/dashboard/login', fields);
      assert.equal(reply.status, 400, reply.text.slice(0, 300));
      assert.match(reply.text, new RegExp(`field “${fields.email === email ? 'password' : 'email'}” contains a NUL`));
      assert.equal(client.sessionToken, undefined);
    }
  });

  it('a NUL in a new key\'s name is a 400 naming the field, and no key is made', async () => {
    const { account, email } = await createAccountWithAdmin(service.db, PASSWORD);
    const client = new DashboardClient(service.url);
    assert.equal((await client.logIn(email, PASSWORD)).status, 303);
    await client.get('/dashboard/settings/api-keys');
    const before = await accountFingerprint(service.db, account.id);
    const reply = await client.postForm('/dashboard/settings/api-keys', { name: 'reporting\u0000' });
    assert.equal(reply.status, 400, reply.text.slice(0, 300));
    assert.match(reply.text, /field “name” contains a NUL/);
    assert.deepEqual(await accountFingerprint(service.db, account.id), before);
  });

  it('a form body not compressed as Content-Encoding says is a 400 page', async () => {
    const client = new DashboardClient(service.url);
    await client.get('/dashboard/login');
    const reply = await client.send('/dashboard/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      body: new URLSearchParams({ _csrf: client.csrfToken ?? '', email: 'a@b.c', password: 'x' }).toString(),
    });
    assert.equal(reply.status, 400);
    assert.match(reply.text, /The form could not be read/);
  });

  it('a form over the 16 kB a dashboard form takes is a 413 page naming that limit; nothing written', async () => {
    // It said only "The form is too large", while REST and GraphQL name their limit (session 41).
    const { account, email } = await createAccountWithAdmin(service.db, PASSWORD);
    const client = new DashboardClient(service.url);
    assert.equal((await client.logIn(email, PASSWORD)).status, 303);
    await client.get('/dashboard/settings/api-keys');
    const before = await accountFingerprint(service.db, account.id);
    const reply = await client.postForm('/dashboard/settings/api-keys', { name: 'x'.repeat(20_000) });
    assert.equal(reply.status, 413, reply.text.slice(0, 300));
    assert.match(reply.text, /<h1>The form is too large<\/h1>\s*<p>It is over 16,384 bytes, the most a form takes\. Shorten what you entered and try again\.<\/p>/);
    assert.deepEqual(await accountFingerprint(service.db, account.id), before);
  });
});
