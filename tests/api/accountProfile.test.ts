import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { startKeyedService, type KeyedService } from '../support/seededService.js';
import { tokenHeader } from '../support/http.js';

/**
 * `GET`/`PATCH /api/account` (session 38): the lender's profile — legal name, postal address,
 * phone, e-mail, payment instructions — which heads its payoff letters and investor statements.
 * Through the REST client, which checks every answer against the OpenAPI document. A bad value is
 * a 400 naming each field and writes nothing; only admin keys change it; migration 0068's CHECKs
 * refuse what the API refuses when a lender's own SQL writes the table.
 */
let s: KeyedService;

before(async () => {
  s = await startKeyedService();
});
after(() => s?.close());

const EMPTY = {
  legal_name: null,
  address_line1: null,
  address_line2: null,
  city: null,
  region: null,
  postal_code: null,
  country: null,
  phone: null,
  email: null,
  payment_instructions: null,
};

describe('GET /api/account', () => {
  it("reads an account's empty profile: every field null, the letterhead the account's name alone", async () => {
    const answer = await s.rest.get('/api/account');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.account, { slug: s.account.slug, name: s.account.name, profile: EMPTY, letterhead: { name: s.account.name, address_lines: [], contact: null } });
  });
});

describe('PATCH /api/account', () => {
  it('sets the profile (trimmed, the instructions\' line breaks kept), reads it back, and clears a field with null or an empty string', async () => {
    const account = await s.newAccount();
    const changed = await account.rest.patch('/api/account', {
      legal_name: '  Prairie Capital Lending LLC ',
      address_line1: '200 W Madison St',
      address_line2: 'Suite 1400',
      city: 'Chicago',
      region: 'IL',
      postal_code: '60606',
      phone: '+1 (312) 555-0100 ext. 12',
      email: 'payoffs@prairie.example',
      payment_instructions: 'Wire to First Lakes Bank  \r\nABA 071000013\r\nAccount 555123',
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.json.changed, ['legal_name', 'address_line1', 'address_line2', 'city', 'region', 'postal_code', 'phone', 'email', 'payment_instructions']);
    const expected = {
      ...EMPTY,
      legal_name: 'Prairie Capital Lending LLC',
      address_line1: '200 W Madison St',
      address_line2: 'Suite 1400',
      city: 'Chicago',
      region: 'IL',
      postal_code: '60606',
      phone: '+1 (312) 555-0100 ext. 12',
      email: 'payoffs@prairie.example',
      payment_instructions: 'Wire to First Lakes Bank\nABA 071000013\nAccount 555123',
    };
    const read = await account.rest.get('/api/account');
    assert.deepEqual(read.json.account.profile, expected);
    assert.deepEqual(read.json.account.letterhead, {
      name: 'Prairie Capital Lending LLC',
      address_lines: ['200 W Madison St', 'Suite 1400', 'Chicago, IL 60606'],
      contact: 'Phone +1 (312) 555-0100 ext. 12 | payoffs@prairie.example',
    });
    // The account's own name is untouched: the legal name is the letterhead's.
    assert.equal(read.json.account.name, account.account.name);

    const cleared = await account.rest.patch('/api/account', { legal_name: null, address_line2: '   ', city: 'Chicago' });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.json.changed, ['legal_name', 'address_line2'], 'an unchanged value is not a change');
    assert.deepEqual(cleared.json.account.profile, { ...expected, legal_name: null, address_line2: null });
    assert.equal(cleared.json.account.letterhead.name, account.account.name, 'without a legal name, the account name heads the letters');
    // Nothing given: nothing changes.
    const nothing = await account.rest.patch('/api/account', {});
    assert.deepEqual([nothing.status, nothing.json.changed], [200, []]);
    // Another account's profile is its own.
    assert.deepEqual((await s.rest.get('/api/account')).json.account.profile, EMPTY);
  });

  it('refuses bad input with a 400 naming each field, and writes nothing (not even the good fields sent with it)', async () => {
    const account = await s.newAccount();
    assert.equal((await account.rest.patch('/api/account', { city: 'Springfield', phone: '217 555 0199' })).status, 200);
    const before = (await account.rest.get('/api/account')).text;
    const refused = await account.rest.patch('/api/account', {
      city: 'Chicago',
      legal_name: 'x'.repeat(201),
      email: 'not an address',
      phone: 'call the office',
      address_line1: '1 Main St\nApt 2',
      country: 12,
      region: 'IL\u0000',
      fax: '555',
    });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(Object.keys(refused.json.fields).sort(), ['address_line1', 'country', 'email', 'fax', 'legal_name', 'phone', 'region']);
    assert.equal(refused.json.fields.legal_name, 'is 201 characters long; at most 200');
    assert.match(refused.json.fields.email, /^expected an e-mail address \(name@example\.com\)/);
    assert.match(refused.json.fields.phone, /^expected a phone number/);
    assert.match(refused.json.fields.address_line1, /^expected text on one line/);
    assert.match(refused.json.fields.country, /got a number$/);
    assert.match(refused.json.fields.region, /NUL character/);
    assert.match(refused.json.fields.fax, /^unknown field; the profile's fields are legal_name, /);
    assert.match(refused.json.error, /legal_name: is 201 characters long/);
    assert.equal((await account.rest.get('/api/account')).text, before, 'nothing was written');
    // Not an object at all.
    const array = await account.rest.patch('/api/account', ['city']);
    assert.equal(array.status, 400);
    assert.deepEqual(Object.keys(array.json.fields), ['body']);
    const broken = await account.rest.patch('/api/account', null, { raw: '{"city": "Chic' });
    assert.equal(broken.status, 400);
    assert.equal((await account.rest.get('/api/account')).text, before, 'nothing was written');
  });

  it('is for admin keys: another role gets 403 permission-denied and nothing changes; GET is for any role that reads loans', async () => {
    const readOnly = await createApiKey(s.db, s.accountId, 'profile reader', { role: 'read_only', variables: new Map() });
    const before = await s.rest.get('/api/account');
    const headers = { ...tokenHeader(readOnly.key), 'content-type': 'application/json' };
    const refused = await s.rest.send('PATCH', '/api/account', { body: JSON.stringify({ phone: '312 555 0100' }), headers });
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual([refused.json.code, refused.json.role, refused.json.permission], ['permission-denied', 'read_only', 'account.update']);
    const read = await s.rest.send('GET', '/api/account', { headers });
    assert.equal(read.status, 200);
    assert.equal(read.text, before.text, 'nothing changed');
    // The read-only key's document offers GET /api/account, not PATCH.
    const document = (await (await fetch(`${s.url}/api/openapi.json`, { headers })).json()) as any;
    assert.deepEqual(Object.keys(document.paths['/api/account']), ['get']);
    // The admin's document describes every field with its limit.
    const schema = (s.rest.document as any).components.schemas.AccountProfile;
    assert.equal(schema.properties.payment_instructions.maxLength, 2000);
    assert.equal(schema.properties.postal_code.maxLength, 20);
  });
});

describe("migration 0068: the database refuses what the API refuses", () => {
  it('a direct UPDATE of accounts with a value the API refuses fails its CHECK; one the API accepts is stored', async () => {
    const account = await s.newAccount();
    const refusedValues: [string, string][] = [
      ['legal_name', 'x'.repeat(201)],
      ['legal_name', ''],
      ['legal_name', ' padded'],
      ['address_line1', '1 Main St\nApt 2'],
      ['city', 'tab\there'],
      ['postal_code', '1'.repeat(21)],
      ['phone', 'call the office'],
      ['email', 'not an address'],
      ['email', 'two@at@example.com'],
      ['payment_instructions', 'y'.repeat(2001)],
      ['payment_instructions', 'bell\u0007'],
      ['payment_instructions', 'trailing line\n'],
    ];
    for (const [column, value] of refusedValues) {
      await assert.rejects(
        s.db.query(`UPDATE accounts SET ${column} = $2 WHERE id = $1`, [account.accountId, value]),
        (error: { code?: string; message: string }) => error.code === '23514' && /accounts_/.test(error.message),
        `${column} = ${JSON.stringify(value)}`,
      );
      // The API refuses it too (a padded or empty value the API trims or clears is no refusal there).
      if (value.trim() === value && value !== '') {
        const answer = await account.rest.patch('/api/account', { [column]: value });
        assert.equal(answer.status, 400, `${column}: ${answer.text}`);
        assert.ok(column in answer.json.fields, column);
      }
    }
    // NUL: PostgreSQL's text cannot hold it at all; the API names the field before any statement.
    await assert.rejects(s.db.query('UPDATE accounts SET city = $2 WHERE id = $1', [account.accountId, 'a\u0000b']));
    await s.db.query(
      `UPDATE accounts SET legal_name = $2, phone = $3, email = $4, payment_instructions = $5 WHERE id = $1`,
      [account.accountId, 'Straight SQL Lending', '+44 20 7946 0958 x 7', 'ops@lender.example', 'Line one\nLine two'],
    );
    const read = await account.rest.get('/api/account');
    assert.equal(read.json.account.letterhead.name, 'Straight SQL Lending');
    assert.equal(read.json.account.letterhead.contact, 'Phone +44 20 7946 0958 x 7 | ops@lender.example');
    assert.deepEqual((await s.db.query<{ n: string }>('SELECT count(*)::text AS n FROM accounts WHERE id = $1 AND city IS NULL', [account.accountId])).rows, [{ n: '1' }]);
  });
});
