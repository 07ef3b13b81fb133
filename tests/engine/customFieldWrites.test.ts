import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRule } from '../../app/fieldValues.js';
import { addProductField, loadDefaultProduct, removeProductField } from '../../app/products.js';
import { dataOf, JsonNumber, METADATA_PATH, parseExact, send, startSeededService, type Answer, type GraphBody, type SeededService } from '../support/seededService.js';
import { createAccountWithKey } from '../support/http.js';
import { testDatabaseKind } from '../support/testDatabase.js';

/**
 * Custom field values written over GraphQL obey the product's field types (migration 0063): the
 * shipped metadata lets admin and servicer keys update `loans.custom_fields`, and before the
 * database checked them `_set`, `_append`, `_prepend`, `_delete_key` and `insert_loans_one`
 * stored anything — a word in a percent field, an option a select field lacks, unknown keys, a
 * required field removed — which REST then served. Each refusal is compared with REST's own
 * answer to the same value (the same words, `describeRule`), and nothing is written; the values
 * REST accepts are stored as REST stores them.
 */
let s: SeededService;
let dir: string;
/** Loans of the account with no custom fields, written by the cases below. */
let loans: string[];

/** The shipped metadata, plus what a lender may add: inserting loans with a name and custom fields. */
function withLoanInserts(): string {
  const original = readFileSync(METADATA_PATH, 'utf8');
  const anchor = "    update:\n      # The schedule's inputs";
  assert.ok(original.includes(anchor));
  return original.replace(anchor, `    insert:\n      columns: [name, custom_fields]\n${anchor}`);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loanql-custom-field-writes-'));
  writeFileSync(join(dir, 'loanql.yaml'), withLoanInserts());
  s = await startSeededService({ config: { metadataPath: join(dir, 'loanql.yaml') } });
  // The demo product has loan_officer (text), property_type (select), ltv (percent) and
  // origination_fee (currency); the other types, a required field and one to remove:
  for (const field of [
    { name: 'Units', type: 'integer' },
    { name: 'Appraised On', type: 'date' },
    { name: 'Insured', type: 'boolean' },
    { name: 'Score', type: 'number' },
    { name: 'Tier', type: 'select', options: ['gold', 'silver'], defaultValue: 'silver' },
    { name: 'Legacy Code', type: 'text' },
  ] as const) {
    await addProductField(s.db, s.account.id, field);
  }
  loans = (await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND custom_fields = '{}' ORDER BY id LIMIT 8`, [s.account.id])).map((row) => row.id);
  assert.equal(loans.length, 8);
});
after(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `POST /api/graph` with variables written as JSON text (numbers with every digit given). */
function graph(query: string, variables: string): Promise<Answer<GraphBody>> {
  return s.post('/api/graph', `{"query": ${JSON.stringify(query)}, "variables": ${variables}}`) as Promise<Answer<GraphBody>>;
}

function rest(method: string, path: string, body?: string): Promise<Answer<any>> {
  return send(`${s.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Token ${s.apiKey}` },
    ...(body === undefined ? {} : { body }),
  });
}

async function storedFields(loanId: string): Promise<string> {
  const [row] = await s.sql<{ fields: string }>(`SELECT custom_fields::text AS fields FROM loans WHERE account_id = $1 AND id = $2`, [s.account.id, loanId]);
  return row!.fields;
}

/** JSON text without spaces, numbers with the digits they were read with. */
function compact(value: unknown): string {
  if (value instanceof JsonNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(compact).join(',')}]`;
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${compact(item)}`).join(',')}}`;
  return JSON.stringify(value);
}

/** REST's `custom_fields` of a loan, as JSON text with its exact digits. */
async function servedFields(loanId: string): Promise<string> {
  const answer = await rest('GET', `/api/loan/${loanId}`);
  assert.equal(answer.status, 200, answer.text);
  return compact((parseExact(answer.text) as { loan: { custom_fields: unknown } }).loan.custom_fields);
}

/** The one error of a refused write, after checking its code and path and that the loan's fields did not change. */
async function refused(loanId: string, write: () => Promise<Answer<GraphBody>>, alias: string): Promise<string> {
  const before = await storedFields(loanId);
  const answer = await write();
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.data, undefined, answer.text);
  const [error, ...more] = answer.body.errors ?? [];
  assert.ok(error, `expected an error, got ${answer.text}`);
  assert.deepEqual(more, []);
  assert.equal(error.extensions?.code, 'validation-failed', answer.text);
  assert.deepEqual(error.path, [alias]);
  assert.deepEqual((error.extensions as { fields?: unknown }).fields, ['custom_fields']);
  assert.equal(await storedFields(loanId), before, 'nothing written');
  return error.message;
}

const SET = `mutation($id: uuid!, $v: jsonb!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {custom_fields: $v}) { id } }`;
const APPEND = `mutation($id: uuid!, $v: jsonb!) { update_loans_by_pk(pk_columns: {id: $id}, _append: {custom_fields: $v}) { id } }`;
const PREPEND = `mutation($id: uuid!, $v: jsonb!) { update_loans_by_pk(pk_columns: {id: $id}, _prepend: {custom_fields: $v}) { id } }`;
const DELETE_KEY = `mutation($id: uuid!, $k: String!) { update_loans_by_pk(pk_columns: {id: $id}, _delete_key: {custom_fields: $k}) { custom_fields } }`;

describe(`Custom field writes over GraphQL obey the product (${testDatabaseKind})`, () => {
  const BAD: readonly { key: string; value: string; why: string }[] = [
    { key: 'ltv', value: '"high"', why: 'a word in a percent field' },
    { key: 'ltv', value: '1.1234567', why: 'seven decimals in a percent field' },
    { key: 'ltv', value: '1234567', why: 'seven digits before the point in a percent field' },
    { key: 'ltv', value: '1' + '0'.repeat(299), why: 'a 300-digit number' },
    { key: 'origination_fee', value: '10.001', why: 'three decimals in a currency field' },
    { key: 'score', value: '"12abc"', why: 'a string that is no decimal in a number field' },
    { key: 'score', value: '1e16', why: '17 digits before the point in a number field' },
    { key: 'units', value: '2.5', why: 'a fraction in an integer field' },
    { key: 'units', value: '9007199254740992', why: 'an integer past 2^53 - 1' },
    { key: 'units', value: '"3"', why: 'a string in an integer field' },
    { key: 'appraised_on', value: '"2026-02-30"', why: 'a day February lacks' },
    { key: 'appraised_on', value: '"0000-01-01"', why: 'the year 0 (make_date refuses it with an error of its own)' },
    { key: 'appraised_on', value: '"2026-13-01"', why: 'a month 13' },
    { key: 'appraised_on', value: '"2026-2-3"', why: 'a date not written YYYY-MM-DD' },
    { key: 'appraised_on', value: '20260101', why: 'a number in a date field' },
    { key: 'insured', value: '"yes"', why: 'a word in a boolean field' },
    { key: 'property_type', value: '"castle"', why: 'a value outside the select options' },
    { key: 'loan_officer', value: '12', why: 'a number in a text field' },
    { key: 'loan_officer', value: JSON.stringify('x'.repeat(10_001)), why: 'a text past 10,000 characters' },
    { key: 'tier', value: '["gold"]', why: 'a list in a select field' },
  ];

  it('_set refuses each type\'s bad value with REST\'s words, naming the field, and writes nothing', async () => {
    const product = await loadDefaultProduct(s.db, s.account.id);
    for (const { key, value, why } of BAD) {
      const message = await refused(loans[0]!, () => graph(SET, `{"id": "${loans[0]}", "v": {"${key}": ${value}}}`), 'update_loans_by_pk');
      const rule = product.customFields.find((field) => field.key === key)!.rule;
      assert.ok(message.startsWith(`update_loans_by_pk: custom_fields.${key}: expected ${describeRule(rule)}, got `), `${why}: ${message}`);
      // REST refuses the same value with the same sentence.
      const answer = await rest('PATCH', `/api/loan/${loans[0]}`, `{"${key}": ${value}}`);
      assert.equal(answer.status, 400, `${why}: ${answer.text}`);
      // A number a double cannot hold reaches REST's rules as the string of its digits (so REST's
      // "got" quotes it), and GraphQL's jsonb as the number it is: the same sentence up to "got".
      const long = /^\d{16,}$/.test(value);
      const said = (text: string): string => (long ? text.slice(0, text.lastIndexOf(' got ')) : text);
      assert.ok(said(message).endsWith(`custom_fields.${key}: ${said(answer.body.fields[key])}`), `${why}: GraphQL "${message}", REST "${answer.body.fields[key]}"`);
      if (long) assert.ok(message.includes(` got ${value.slice(0, 16)}`), `${why}: GraphQL gives the number as sent: ${message}`);
    }
  });

  it('refuses an unknown key, and names every offending key at once', async () => {
    const unknown = await refused(loans[0]!, () => graph(APPEND, `{"id": "${loans[0]}", "v": {"colour": "red"}}`), 'update_loans_by_pk');
    assert.equal(unknown, 'update_loans_by_pk: custom_fields.colour: unknown field: not a field of the default product');
    const both = await refused(loans[0]!, () => graph(SET, `{"id": "${loans[0]}", "v": {"ltv": "high", "loan_officer": "Kim", "property_type": "castle"}}`), 'update_loans_by_pk');
    assert.match(both, /^update_loans_by_pk: custom_fields\.ltv: expected .*; custom_fields\.property_type: expected one of "residential", "commercial", "land", "mixed_use", got "castle"$/);
  });

  it('a key written in another case than the product\'s is refused, naming the product\'s key', async () => {
    // REST matches body keys without regard to case and stores the product's (lower-case) key; the
    // stored document keeps that one spelling, so GraphQL is told the key rather than have it renamed.
    const message = await refused(loans[0]!, () => graph(APPEND, `{"id": "${loans[0]}", "v": {"LTV": 70, "Loan Officer": "Kim", "Colour": "red"}}`), 'update_loans_by_pk');
    // (The keys' order is the database's collation's.)
    assert.ok(message.startsWith('update_loans_by_pk: '), message);
    assert.deepEqual(message.slice('update_loans_by_pk: '.length).split('; ').sort(), [
      'custom_fields.Colour: unknown field: not a field of the default product',
      'custom_fields.LTV: unknown field: not a field of the default product (its key is ltv)',
      'custom_fields.Loan Officer: unknown field: not a field of the default product (its key is loan_officer)',
    ]);
    const restPatched = await rest('PATCH', `/api/loan/${loans[7]}`, '{"LTV": 70}');
    assert.equal(restPatched.status, 200, restPatched.text);
    assert.equal(await servedFields(loans[7]!), '{"ltv":70}', 'REST stores the product\'s key');
  });

  it('_append and _prepend are checked like _set', async () => {
    const appended = await refused(loans[0]!, () => graph(APPEND, `{"id": "${loans[0]}", "v": {"loan_officer": "Kim", "property_type": "castle"}}`), 'update_loans_by_pk');
    assert.match(appended, /custom_fields\.property_type: expected one of/);
    const prepended = await refused(loans[0]!, () => graph(PREPEND, `{"id": "${loans[0]}", "v": {"insured": "yes"}}`), 'update_loans_by_pk');
    assert.equal(prepended, 'update_loans_by_pk: custom_fields.insured: expected true or false, got "yes"');
    const many = `mutation($v: jsonb!) { update_loans(where: {id: {_in: ["${loans[0]}", "${loans[1]}"]}}, _append: {custom_fields: $v}) { affected_rows } }`;
    assert.match(await refused(loans[1]!, () => graph(many, `{"v": {"units": 1.5}}`), 'update_loans'), /custom_fields\.units: expected a whole number, got 1\.5/);
  });

  it('stores good values as REST does, and REST serves them the same', async () => {
    const body = `{"ltv": "75.50", "origination_fee": 1250.5, "score": 123456789012345.1234567891, "units": 12, "appraised_on": "2024-02-29",
                   "insured": true, "property_type": "land", "loan_officer": "Kim", "tier": "gold"}`;
    const written = await graph(APPEND, `{"id": "${loans[2]}", "v": ${body}}`);
    assert.deepEqual(written.body, { data: { update_loans_by_pk: { id: loans[2] } } }, written.text);
    const patched = await rest('PATCH', `/api/loan/${loans[3]}`, body);
    assert.equal(patched.status, 200, patched.text);
    const served = await servedFields(loans[2]!);
    assert.equal(served, await servedFields(loans[3]!));
    // The decimal string is stored as the number written, with its digits (as REST stores it).
    assert.match(served, /"ltv":75\.50[,}]/);
    assert.match(served, /"score":123456789012345\.1234567891[,}]/);

    // Text is stored trimmed of what JavaScript's trim() removes (REST's normalizeValue): tabs,
    // line breaks, a no-break space, U+3000, U+FEFF; a decimal string likewise.
    for (const [padded, key, expected] of [
      ['{"loan_officer": "\\u00a0\\t Kim Lee \\n\\u3000\\ufeff", "legacy_code": "  "}', 'loan_officer', 'Kim Lee'],
      ['{"ltv": "\\u00a0 61.5\\u2028"}', 'ltv', 61.5],
    ] as const) {
      const written = await graph(APPEND, `{"id": "${loans[2]}", "v": ${padded}}`);
      assert.ok(dataOf(written), written.text);
      const trimmed = await rest('PATCH', `/api/loan/${loans[3]}`, padded);
      assert.equal(trimmed.status, 200, trimmed.text);
      assert.equal(await servedFields(loans[2]!), await servedFields(loans[3]!), padded);
      assert.deepEqual((JSON.parse(await storedFields(loans[2]!)) as Record<string, unknown>)[key], expected);
    }
    assert.equal((JSON.parse(await storedFields(loans[2]!)) as Record<string, unknown>).legacy_code, '');

    // null clears an optional field (REST's meaning), and _delete_key removes one.
    const cleared = dataOf(await graph(APPEND, `{"id": "${loans[2]}", "v": {"ltv": null}}`));
    assert.ok(cleared);
    assert.equal((await servedFields(loans[2]!)).includes('"ltv"'), false);
    const deleted = dataOf(await graph(DELETE_KEY, `{"id": "${loans[2]}", "k": "units"}`));
    assert.equal('units' in (deleted.update_loans_by_pk.custom_fields as object), false);
  });

  it('a required field may not be removed or set to null, and may be changed', async () => {
    await addProductField(s.db, s.account.id, { name: 'Region', type: 'text', required: true });
    try {
      // A loan without it (written before the field was required) may change its other keys.
      assert.ok(dataOf(await graph(APPEND, `{"id": "${loans[4]}", "v": {"loan_officer": "Lee"}}`)));
      assert.ok(dataOf(await graph(APPEND, `{"id": "${loans[4]}", "v": {"region": "North"}}`)));
      assert.equal(
        await refused(loans[4]!, () => graph(DELETE_KEY, `{"id": "${loans[4]}", "k": "region"}`), 'update_loans_by_pk'),
        'update_loans_by_pk: custom_fields.region: is a required field of the product and may not be removed',
      );
      assert.equal(
        await refused(loans[4]!, () => graph(SET, `{"id": "${loans[4]}", "v": {"loan_officer": "Lee"}}`), 'update_loans_by_pk'),
        'update_loans_by_pk: custom_fields.region: is a required field of the product and may not be removed',
      );
      assert.equal(
        await refused(loans[4]!, () => graph(APPEND, `{"id": "${loans[4]}", "v": {"region": null}}`), 'update_loans_by_pk'),
        'update_loans_by_pk: custom_fields.region: is a required field of the product and may not be null',
      );
      assert.ok(dataOf(await graph(APPEND, `{"id": "${loans[4]}", "v": {"region": "South"}}`)));
      assert.match(await servedFields(loans[4]!), /"region":"South"/);

      // insert_loans_one: the required field must be given; the product's defaults are applied.
      const INSERT = `mutation($v: jsonb!) { insert_loans_one(object: {name: "GraphQL loan", custom_fields: $v}) { id custom_fields } }`;
      const count = async (): Promise<number> =>
        Number((await s.sql<{ n: string }>(`SELECT count(*)::text AS n FROM loans WHERE account_id = $1 AND name = 'GraphQL loan'`, [s.account.id]))[0]!.n);
      const missing = await graph(INSERT, `{"v": {"loan_officer": "Kim"}}`);
      assert.equal(missing.body.errors?.[0]?.extensions?.code, 'validation-failed', missing.text);
      assert.equal(missing.body.errors?.[0]?.message, 'insert_loans_one: custom_fields.region: is a required field of the product and was not given');
      const bad = await graph(INSERT, `{"v": {"region": "North", "ltv": "high", "colour": "red"}}`);
      assert.match(bad.body.errors?.[0]?.message ?? bad.text, /^insert_loans_one: custom_fields\.colour: unknown field: .*; custom_fields\.ltv: expected a number/);
      assert.equal(await count(), 0, 'nothing inserted');
      const inserted = dataOf(await graph(INSERT, `{"v": {"region": "North", "ltv": "80.25"}}`));
      assert.equal(await count(), 1);
      assert.equal(await servedFields(inserted.insert_loans_one.id), '{"ltv":80.25,"tier":"silver","region":"North"}');
    } finally {
      await removeProductField(s.db, s.account.id, 'Region');
    }
  });

  it('leaves a removed field\'s old value alone, refuses a new value for it, and lets it be deleted', async () => {
    const patched = await rest('PATCH', `/api/loan/${loans[5]}`, '{"Legacy_Code": "LC-7", "Loan_Officer": "Kim"}');
    assert.equal(patched.status, 200, patched.text);
    assert.ok(await removeProductField(s.db, s.account.id, 'Legacy Code'));
    try {
      assert.ok(dataOf(await graph(APPEND, `{"id": "${loans[5]}", "v": {"loan_officer": "Lee"}}`)));
      assert.ok(dataOf(await graph(SET, `{"id": "${loans[5]}", "v": {"legacy_code": "LC-7", "loan_officer": "Ng"}}`)), 'the old value written back unchanged');
      assert.equal(await servedFields(loans[5]!), '{"legacy_code":"LC-7","loan_officer":"Ng"}');
      assert.equal(
        await refused(loans[5]!, () => graph(APPEND, `{"id": "${loans[5]}", "v": {"legacy_code": "LC-8"}}`), 'update_loans_by_pk'),
        'update_loans_by_pk: custom_fields.legacy_code: unknown field: not a field of the default product',
      );
      assert.ok(dataOf(await graph(DELETE_KEY, `{"id": "${loans[5]}", "k": "legacy_code"}`)));
      assert.equal(await servedFields(loans[5]!), '{"loan_officer":"Ng"}');
      // REST still answers for the loan as before (its own check runs first).
      const restRefused = await rest('PATCH', `/api/loan/${loans[5]}`, '{"Legacy_Code": "LC-9"}');
      assert.equal(restRefused.status, 400);
      assert.equal(restRefused.body.fields.Legacy_Code, 'unknown field: not a field of the default product');
    } finally {
      await addProductField(s.db, s.account.id, { name: 'Legacy Code', type: 'text' });
    }
  });

  it('an account with no product refuses every custom key, as REST does, and lets stored keys be removed', async () => {
    // No product is made until a field or a servicing setting is: REST then knows no custom field.
    const { account, apiKey } = await createAccountWithKey(s.db);
    const [loan] = await s.sql<{ id: string }>(`INSERT INTO loans (account_id, name, amount) VALUES ($1, 'No product', 1000) RETURNING id`, [account.id]);
    const id = loan!.id;
    const asOther = (path: string, init: { method: string; body: string }) =>
      send(`${s.url}${path}`, { ...init, headers: { 'content-type': 'application/json', authorization: `Token ${apiKey.key}` } });
    const otherGraph = (query: string, variables: string) => asOther('/api/graph', { method: 'POST', body: `{"query": ${JSON.stringify(query)}, "variables": ${variables}}` }) as Promise<Answer<GraphBody>>;
    const stored = async () => (await s.sql<{ fields: string }>(`SELECT custom_fields::text AS fields FROM loans WHERE account_id = $1 AND id = $2`, [account.id, id]))[0]!.fields;

    const restAnswer = await asOther(`/api/loan/${id}`, { method: 'PATCH', body: '{"loan_officer": "Kim"}' });
    assert.equal(restAnswer.status, 400, restAnswer.text);
    const restWords = (restAnswer.body as { fields: Record<string, string> }).fields.loan_officer;
    for (const query of [APPEND, SET]) {
      const answer = await otherGraph(query, `{"id": "${id}", "v": {"loan_officer": "Kim"}}`);
      const [error] = answer.body.errors ?? [];
      assert.equal(error?.extensions?.code, 'validation-failed', answer.text);
      assert.equal(error?.message, `update_loans_by_pk: custom_fields.loan_officer: ${restWords}`);
    }
    assert.equal(await stored(), '{}', 'nothing written');

    // A key loaded without the check (as the seeder loads one) may be removed, not changed.
    await s.db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('loanql.custom_fields_unchecked', 'on', true)`);
      await tx.query(`UPDATE loans SET custom_fields = '{"broker": "Old Broker", "loan_officer": "Kim"}' WHERE account_id = $1 AND id = $2`, [account.id, id]);
    });
    const changed = await otherGraph(APPEND, `{"id": "${id}", "v": {"broker": "New Broker"}}`);
    assert.equal(changed.body.errors?.[0]?.message, 'update_loans_by_pk: custom_fields.broker: unknown field: not a field of the default product', changed.text);
    const deleted = await otherGraph(DELETE_KEY, `{"id": "${id}", "k": "broker"}`);
    assert.deepEqual(deleted.body, { data: { update_loans_by_pk: { custom_fields: { loan_officer: 'Kim' } } } }, deleted.text);
    assert.ok(dataOf(await otherGraph(SET, `{"id": "${id}", "v": {}}`)));
    assert.equal(await stored(), '{}');
  });

  it('every key of the demo portfolio is a field of the demo product, so a clerk can edit it', async () => {
    // The seeded loans, not those the cases above write.
    const seededKeys = (
      await s.sql<{ key: string }>(
        `SELECT DISTINCT jsonb_object_keys(custom_fields) AS key FROM loans WHERE account_id = $1 AND id <> ALL ($2::uuid[]) AND name <> 'GraphQL loan' ORDER BY 1`,
        [s.account.id, loans],
      )
    ).map((row) => row.key);
    assert.ok(seededKeys.includes('broker') && seededKeys.includes('loan_officer'), seededKeys.join());
    const productKeys = new Set((await loadDefaultProduct(s.db, s.account.id)).customFields.map((field) => field.key));
    assert.deepEqual(seededKeys.filter((key) => !productKeys.has(key)), []);
    const [brokered] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND custom_fields ? 'broker' ORDER BY id LIMIT 1`, [s.account.id]);
    const patched = await rest('PATCH', `/api/loan/${brokered!.id}`, '{"Broker": "Summit Loan Partners"}');
    assert.equal(patched.status, 200, patched.text);
    assert.ok(dataOf(await graph(APPEND, `{"id": "${brokered!.id}", "v": {"broker": "Keystone Mortgage Brokers"}}`)));
    assert.match(await servedFields(brokered!.id), /"broker":"Keystone Mortgage Brokers"/);
  });

  it('values stored before the check stay, and are checked only when a write changes them', async () => {
    // As a database migrated to 0063 may hold: written without the check.
    await s.db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('loanql.custom_fields_unchecked', 'on', true)`);
      await tx.query(`UPDATE loans SET custom_fields = '{"ltv": "high", "broker": "Old Broker"}' WHERE account_id = $1 AND id = $2`, [s.account.id, loans[6]]);
    });
    assert.ok(dataOf(await graph(APPEND, `{"id": "${loans[6]}", "v": {"loan_officer": "Kim"}}`)));
    assert.ok(dataOf(await graph(`mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "Renamed legacy"}) { id } }`, `{"id": "${loans[6]}"}`)));
    assert.equal(await servedFields(loans[6]!), '{"ltv":"high","broker":"Old Broker","loan_officer":"Kim"}');
    assert.match(await refused(loans[6]!, () => graph(APPEND, `{"id": "${loans[6]}", "v": {"ltv": "higher"}}`), 'update_loans_by_pk'), /custom_fields\.ltv: expected a number/);
    assert.ok(dataOf(await graph(APPEND, `{"id": "${loans[6]}", "v": {"ltv": 70}}`)), 'corrected');
  });
});
