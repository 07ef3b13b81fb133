import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../app/apiKeys.js';
import { checkMetadataAgainstDatabase, MetadataError, parseMetadata } from '../../metadata/index.js';
import { createAccountWithKey, tokenHeader, type TestServer } from '../support/http.js';
import { testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';
import { startLenderSchemaService, type LenderSchemaService } from '../support/lenderSchemaService.js';

/**
 * Issue 30, the types a lender's own tables bring that the shipped schema lacks: PostgreSQL
 * `json` (not jsonb) and arrays of scalars as values — written from GraphQL values and lists,
 * read back as JSON, filtered with Hasura's operators — each answer over HTTP compared with the
 * same question in plain SQL; bad values are the client's mistake (`validation-failed`), never 500.
 */
const SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS citext;
  CREATE SCHEMA lender;
  CREATE TABLE lender.notes (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    title text NOT NULL,
    body json,
    tags text[],
    scores integer[],
    amounts numeric[],
    due date[],
    flags boolean[],
    refs uuid[],
    big bigint[],
    weights float8[],
    labels citext[],
    PRIMARY KEY (account_id, id)
  );
  CREATE FUNCTION lender.note_tag_count(account uuid, id bigint) RETURNS integer
    LANGUAGE sql STABLE AS $$ SELECT coalesce(cardinality(n.tags), 0) FROM lender.notes n WHERE n.account_id = account AND n.id = note_tag_count.id $$;
  CREATE FUNCTION lender.note_title_upper(account uuid, id bigint) RETURNS text
    LANGUAGE sql STABLE AS $$ SELECT upper(n.title) FROM lender.notes n WHERE n.account_id = account AND n.id = note_title_upper.id $$;
  CREATE FUNCTION lender.note_score_times(account uuid, id bigint, factor integer DEFAULT 2) RETURNS integer
    LANGUAGE sql STABLE AS $$ SELECT n.scores[1] * factor FROM lender.notes n WHERE n.account_id = account AND n.id = note_score_times.id $$;
  -- Every account's other notes (no account filter): the tenant predicate must keep the others' out.
  CREATE FUNCTION lender.note_others(account uuid, id bigint, min_score integer DEFAULT 0) RETURNS SETOF lender.notes
    LANGUAGE sql STABLE AS $$ SELECT * FROM lender.notes n WHERE n.id <> note_others.id AND coalesce(n.scores[1], 0) >= min_score $$;
  CREATE FUNCTION lender.note_texts(account uuid, id bigint) RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT title FROM lender.notes $$;
  -- A key of another type than the table's (a function written for a uuid-keyed table).
  CREATE FUNCTION lender.note_by_uuid(account uuid, id uuid) RETURNS integer LANGUAGE sql STABLE AS $$ SELECT 1 $$;
  CREATE FUNCTION lender.note_touch(account uuid, id bigint) RETURNS integer LANGUAGE sql VOLATILE AS $$ SELECT 1 $$;
`;

const FIELDS = `{ id: bigint, title: text, body: json, tags: "text[]", scores: "integer[]", amounts: "numeric[]", due: "date[]", flags: "boolean[]", refs: "uuid[]", big: "bigint[]", weights: "float8[]", labels: "citext[]" }`;
const WRITABLE = '[title, body, tags, scores, amounts, due, flags, refs, big, weights, labels]';
const METADATA = `
version: 1
tenant_column: account_id
collections:
  lender_notes:
    schema: lender
    table: notes
    primary_key: id
    fields: ${FIELDS}
    computed_fields:
      tag_count: { function: note_tag_count, type: integer }
      shout: { function: note_title_upper, type: text }
      score_times: { function: note_score_times, type: integer, args: { factor: integer } }
      others: { function: note_others, returns: lender_notes, args: { min_score: integer } }
    insert: { columns: ${WRITABLE} }
    update: { columns: ${WRITABLE} }
roles:
  tagged_only:
    collections:
      lender_notes:
        select: { columns: [id, title, tags, others], filter: { tags: { _is_null: false } } }
  counter:
    collections:
      lender_notes:
        select: { columns: [id, title, tag_count] }
  few_tags:
    collections:
      lender_notes:
        select: { columns: [id, title], filter: { _or: [{ tag_count: { _lt: 2 } }, { shout: { _like: "%IR%" } }] }, allow_aggregations: true }
`;

let database: TestDatabase;
let server: TestServer;
let service: LenderSchemaService | undefined;
let key: string;
let accountId: string;
let taggedKey: string;
let counterKey: string;
let fewTagsKey: string;

interface Body {
  data?: any;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(body: unknown, apiKey = key, path = '/api/graph'): Promise<{ status: number; body: Body; text: string }> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...tokenHeader(apiKey) }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Body, text };
}

async function data(query: string, variables?: Record<string, unknown>, apiKey = key): Promise<any> {
  const answer = await post({ query, ...(variables ? { variables } : {}) }, apiKey);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.errors, undefined, answer.text);
  return answer.body.data;
}

/** The first error of an answer that must fail as the client's mistake: `validation-failed` (a document's: 200, as GraphQL over HTTP has it; a value's: 400), never 500. */
async function refused(query: string, variables?: Record<string, unknown>): Promise<string> {
  const answer = await post({ query, ...(variables ? { variables } : {}) });
  assert.ok(answer.status === 200 || answer.status === 400, answer.text);
  const error = answer.body.errors?.[0];
  assert.equal(error?.extensions?.code, 'validation-failed', answer.text);
  return error!.message;
}

async function plain(text: string, values: readonly unknown[] = []): Promise<any[]> {
  const { rows } = await database.db.query<{ j: unknown }>(text, values);
  return rows.map((row) => row.j);
}

const NOTE_COLUMNS = ['id', 'title', 'body', 'tags', 'scores', 'amounts', 'due', 'flags', 'refs', 'big', 'weights', 'labels'];
const NOTE_SELECTION = NOTE_COLUMNS.join(' ');
const NOTE_JSON = `json_build_object(${NOTE_COLUMNS.map((column) => `'${column}', ${column}`).join(', ')})`;
/** The notes of the test's account where `condition` holds, ordered by id, as PostgreSQL writes them. */
const notesWhere = (condition: string, values: readonly unknown[] = []): Promise<any[]> =>
  plain(`SELECT ${NOTE_JSON} AS j FROM lender.notes WHERE account_id = $1 AND (${condition}) ORDER BY id`, [accountId, ...values]);
const idsWhere = async (condition: string, values: readonly unknown[] = []): Promise<number[]> => (await notesWhere(condition, values)).map((note) => note.id as number);

const REF_A = '0a0a0a0a-0000-4000-8000-00000000000a';
const REF_B = '0b0b0b0b-0000-4000-8000-00000000000b';

before(async () => {
  service = await startLenderSchemaService(SCHEMA, METADATA);
  ({ database, server, key, accountId } = service);
  counterKey = (await createApiKey(database.db, accountId, 'counter', { role: 'counter', variables: new Map() })).key;
  taggedKey = (await createApiKey(database.db, accountId, 'tagged only', { role: 'tagged_only', variables: new Map() })).key;
  fewTagsKey = (await createApiKey(database.db, accountId, 'few tags', { role: 'few_tags', variables: new Map() })).key;
  // Another account's note, equal in every value: no answer may include it.
  const other = (await createAccountWithKey(database.db)).account.id;
  await database.db.query(`INSERT INTO lender.notes (account_id, title, body, tags, scores) VALUES ($1, 'theirs', '{"a": 1}', '{a,b}', '{1,2}')`, [other]);
});
after(async () => {
  await service?.close();
});

describe(`A lender's own types: json, arrays, computed fields of the row in where and order_by (${testDatabaseKind})`, () => {
  it('inserts json values and arrays from GraphQL lists (literals and variables) and returns them as PostgreSQL stores them', async () => {
    const inserted = await data(
      `mutation($tags: [String!], $body: json, $due: [date!]) {
        insert_lender_notes(objects: [
          {title: "first", body: {a: 1, b: [true, null]}, tags: ["a", "b"], scores: [1, 2, 3], amounts: [1.50, 2], due: ["2026-01-31"], flags: [true, false], refs: ["${REF_A}"], big: ["9007199254740993"], weights: [0.5], labels: ["Mixed"]}
          {title: "second", body: $body, tags: $tags, scores: [3], amounts: [], due: $due, flags: [], refs: ["${REF_A}", "${REF_B}"], big: [1], weights: [1.25, -2], labels: ["mixed", "Other"]}
          {title: "third", body: "just a string", tags: [], scores: [1, 2]}
          {title: "fourth"}
        ]) { affected_rows returning { ${NOTE_SELECTION} } }
      }`,
      { tags: ['b', 'c', 'with "quotes", {braces} and, commas'], body: [1, 'two', { three: 3 }], due: ['2026-02-28', '2026-03-31'] },
    );
    assert.equal(inserted.insert_lender_notes.affected_rows, 4);
    const stored = await notesWhere('true');
    assert.deepEqual(inserted.insert_lender_notes.returning, stored);
    // Arrays are JSON arrays, json the stored value, a bigint past 2^53 keeps every digit.
    assert.deepEqual(stored[0].tags, ['a', 'b']);
    assert.deepEqual(stored[1].body, [1, 'two', { three: 3 }]);
    const big = await post({ query: '{ lender_notes(where: {title: {_eq: "first"}}) { big } }' });
    assert.match(big.text, /"big":\[9007199254740993\]/);
  });

  it('reads json with a path argument, as jsonb fields are read', async () => {
    const result = await data('{ lender_notes(where: {title: {_eq: "first"}}) { b: body(path: "$.b[0]") body } }');
    const [expected] = await plain(`SELECT json_build_object('b', body #> '{b,0}', 'body', body) AS j FROM lender.notes WHERE account_id = $1 AND title = 'first'`, [accountId]);
    assert.deepEqual(result.lender_notes, [expected]);
  });

  it('compares json as jsonb: _eq ignores key order and spacing, _neq, _in, _nin, _is_null', async () => {
    const result = await data(
      `query($v: json) {
        eq: lender_notes(where: {body: {_eq: {b: [true, null], a: 1}}}, order_by: {id: asc}) { id }
        eqVar: lender_notes(where: {body: {_eq: $v}}, order_by: {id: asc}) { id }
        neq: lender_notes(where: {body: {_neq: "just a string"}}, order_by: {id: asc}) { id }
        in: lender_notes(where: {body: {_in: ["just a string", [1, "two", {three: 3}]]}}, order_by: {id: asc}) { id }
        nin: lender_notes(where: {body: {_nin: ["just a string"]}}, order_by: {id: asc}) { id }
        null: lender_notes(where: {body: {_is_null: true}}, order_by: {id: asc}) { id }
      }`,
      { v: [1, 'two', { three: 3 }] },
    );
    const ids = (rows: { id: number }[]): number[] => rows.map((row) => row.id);
    assert.deepEqual(ids(result.eq), await idsWhere(`body::jsonb = '{"a": 1, "b": [true, null]}'::jsonb`));
    assert.equal(result.eq.length, 1);
    assert.deepEqual(ids(result.eqVar), await idsWhere(`body::jsonb = '[1, "two", {"three": 3}]'::jsonb`));
    assert.deepEqual(ids(result.neq), await idsWhere(`body::jsonb <> '"just a string"'::jsonb`));
    assert.deepEqual(ids(result.in), await idsWhere(`body::jsonb IN ('"just a string"'::jsonb, '[1, "two", {"three": 3}]'::jsonb)`));
    assert.equal(result.in.length, 2);
    assert.deepEqual(ids(result.nin), await idsWhere(`body::jsonb <> '"just a string"'::jsonb`));
    assert.deepEqual(ids(result.null), await idsWhere('body IS NULL'));
  });

  it('compares arrays as Hasura does: whole-array comparisons, _contains, _contained_in, _in, _nin, _is_null', async () => {
    const result = await data(
      `query($some: [String!]) {
        eq: lender_notes(where: {tags: {_eq: ["a", "b"]}}) { id }
        neq: lender_notes(where: {scores: {_neq: [3]}}, order_by: {id: asc}) { id }
        gt: lender_notes(where: {scores: {_gt: [1, 2]}}, order_by: {id: asc}) { id }
        contains: lender_notes(where: {tags: {_contains: $some}}, order_by: {id: asc}) { id }
        containedIn: lender_notes(where: {scores: {_contained_in: [1, 2, 3]}}, order_by: {id: asc}) { id }
        in: lender_notes(where: {scores: {_in: [[3], [1, 2], [9, 9, 9, 9]]}}, order_by: {id: asc}) { id }
        nin: lender_notes(where: {scores: {_nin: [[3]]}}, order_by: {id: asc}) { id }
        emptyIn: lender_notes(where: {scores: {_in: []}}) { id }
        null: lender_notes(where: {tags: {_is_null: true}}) { id }
        refs: lender_notes(where: {refs: {_contains: ["${REF_B}"]}}) { id }
        dates: lender_notes(where: {due: {_contains: ["2026-03-31"]}}) { id }
        numbers: lender_notes(where: {amounts: {_eq: [1.5, 2.00]}}) { id }
        caseless: lender_notes(where: {labels: {_contains: ["MIXED"]}}, order_by: {id: asc}) { id }
      }`,
      { some: ['b'] },
    );
    const ids = (rows: { id: number }[]): number[] => rows.map((row) => row.id);
    assert.deepEqual(ids(result.eq), await idsWhere(`tags = '{a,b}'::text[]`));
    assert.deepEqual(ids(result.neq), await idsWhere(`scores <> '{3}'::int[]`));
    assert.deepEqual(ids(result.gt), await idsWhere(`scores > '{1,2}'::int[]`));
    assert.deepEqual(ids(result.contains), await idsWhere(`tags @> '{b}'::text[]`));
    assert.equal(result.contains.length, 2);
    assert.deepEqual(ids(result.containedIn), await idsWhere(`scores <@ '{1,2,3}'::int[]`));
    assert.deepEqual(ids(result.in), await idsWhere(`scores IN ('{3}'::int[], '{1,2}'::int[])`));
    assert.deepEqual(ids(result.nin), await idsWhere(`scores <> '{3}'::int[]`));
    assert.deepEqual(result.emptyIn, []);
    assert.deepEqual(ids(result.null), await idsWhere('tags IS NULL'));
    assert.deepEqual(ids(result.refs), await idsWhere(`refs @> $2::uuid[]`, [[REF_B]]));
    assert.deepEqual(ids(result.dates), await idsWhere(`due @> '{2026-03-31}'::date[]`));
    assert.deepEqual(ids(result.numbers), await idsWhere(`amounts = '{1.5,2}'::numeric[]`));
    assert.equal(result.numbers.length, 1);
    assert.deepEqual(ids(result.caseless), await idsWhere(`labels @> '{mixed}'::citext[]`));
    assert.equal(result.caseless.length, 2);
  });

  it('updates arrays and json with _set, by key and by filter', async () => {
    const [first] = await idsWhere(`title = 'first'`);
    const result = await data(
      `mutation($id: bigint!, $scores: [Int!]) {
        one: update_lender_notes_by_pk(pk_columns: {id: $id}, _set: {tags: ["x"], body: {changed: true}, scores: $scores}) { ${NOTE_SELECTION} }
        many: update_lender_notes(where: {tags: {_contains: ["b"]}}, _set: {flags: [false, false]}) { affected_rows }
      }`,
      { id: first, scores: [7, 8] },
    );
    const [one] = await notesWhere('id = $2', [first]);
    assert.deepEqual(result.one, one);
    assert.deepEqual(one.tags, ['x']);
    assert.deepEqual(one.body, { changed: true });
    assert.deepEqual(one.scores, [7, 8]);
    assert.equal(result.many.affected_rows, (await idsWhere(`flags = '{f,f}'::boolean[]`)).length);
  });

  it('refuses bad values as the client\'s mistake: a wrong element type, NUL inside an array, a null element, json without equality', async () => {
    assert.match(await refused('mutation { insert_lender_notes(objects: [{title: "x", scores: ["one"]}]) { affected_rows } }'), /Int/);
    assert.match(await refused('mutation($s: [Int!]) { insert_lender_notes(objects: [{title: "x", scores: $s}]) { affected_rows } }', { s: [1, 'two'] }), /Int/);
    assert.match(await refused('query($t: [String!]) { lender_notes(where: {tags: {_contains: $t}}) { id } }', { t: ['a\u0000b'] }), /NUL/i);
    assert.match(await refused('mutation($t: [String!]) { insert_lender_notes(objects: [{title: "x", tags: $t}]) { affected_rows } }', { t: ['a', null] }), /null/i);
    assert.match(await refused('{ lender_notes(where: {due: {_eq: ["2026-02-30"]}}) { id } }'), /date/);
    assert.match(await refused('{ lender_notes(where: {big: {_eq: ["1e3"]}}) { id } }'), /bigint/);
    assert.match(await refused('{ lender_notes(distinct_on: [body]) { id } }'), /json/);
    assert.match(await refused('{ lender_notes_aggregate { aggregate { count(columns: [body], distinct: true) } } }'), /json/);
    assert.match(await refused('{ lender_notes(order_by: {tags: asc}) { id } }'), /tags/);
    assert.match(await refused('{ lender_notes(where: {body: {_gt: 1}}) { id } }'), /_gt/);
    // Nothing was written by the refused inserts.
    assert.equal((await idsWhere(`title = 'x'`)).length, 0);
  });

  it('applies a role filter testing an array field for null; the role sees only its columns', async () => {
    const result = await data('{ lender_notes(order_by: {id: asc}) { id title tags } }', undefined, taggedKey);
    const expected = await plain(`SELECT json_build_object('id', id, 'title', title, 'tags', tags) AS j FROM lender.notes WHERE account_id = $1 AND tags IS NOT NULL ORDER BY id`, [accountId]);
    assert.deepEqual(result.lender_notes, expected);
  });

  it('applies a role filter on computed fields of the row alone, which the role need not see (Hasura\'s computed fields in permissions; refused before)', async () => {
    const result = await data('{ lender_notes(order_by: {id: asc}) { id title } lender_notes_aggregate { aggregate { count } } }', undefined, fewTagsKey);
    const visible = `account_id = $1 AND (lender.note_tag_count(account_id, id) < 2 OR lender.note_title_upper(account_id, id) LIKE '%IR%')`;
    const expected = await plain(`SELECT json_build_object('id', id, 'title', title) AS j FROM lender.notes WHERE ${visible} ORDER BY id`, [accountId]);
    assert.deepEqual(result.lender_notes, expected);
    const [all] = await plain(`SELECT count(*)::int AS j FROM lender.notes WHERE account_id = $1`, [accountId]);
    assert.ok(expected.length > 0 && expected.length < all, `the filter lets some rows through, not all: ${expected.length} of ${all}`);
    assert.equal(result.lender_notes_aggregate.aggregate.count, expected.length);
    // A computed field with arguments has no value of the row alone: refused, naming it.
    assert.throws(
      () => parseMetadata(METADATA.replace('filter: { _or: [{ tag_count: { _lt: 2 } }', 'filter: { _or: [{ score_times: { _lt: 2 } }')),
      /role few_tags, collection lender_notes, select filter, _or\[0\]\.score_times: computed field score_times takes arguments \(factor\); a filter may use only a computed field of the row alone/,
    );
    assert.throws(() => parseMetadata(METADATA.replace('{ tag_count: { _lt: 2 } }', '{ tag_count: { _lt: two } }')), /_or\[0\]\.tag_count\._lt: "two" is not an integer, the type of tag_count/);
  });

  it('filters and orders by computed fields of the row alone (no arguments), as calling the function in SQL', async () => {
    const result = await data(`{
      many: lender_notes(where: {tag_count: {_gte: 2}}, order_by: [{tag_count: desc}, {id: asc}]) { id tag_count }
      text: lender_notes(where: {shout: {_like: "%IR%"}}, order_by: {shout: asc}) { id shout }
      in: lender_notes(where: {_or: [{tag_count: {_in: [0, 1]}}, {shout: {_is_null: true}}]}, order_by: {id: asc}) { id }
      aggregate: lender_notes_aggregate(where: {tag_count: {_eq: 1}}) { aggregate { count } }
    }`);
    const count = 'lender.note_tag_count(account_id, id)';
    assert.deepEqual(result.many, await plain(`SELECT json_build_object('id', id, 'tag_count', ${count}) AS j FROM lender.notes WHERE account_id = $1 AND ${count} >= 2 ORDER BY ${count} DESC, id`, [accountId]));
    assert.ok(result.many.length >= 1);
    const shout = 'lender.note_title_upper(account_id, id)';
    assert.deepEqual(result.text, await plain(`SELECT json_build_object('id', id, 'shout', ${shout}) AS j FROM lender.notes WHERE account_id = $1 AND ${shout} LIKE '%IR%' ORDER BY ${shout}, id`, [accountId]));
    assert.equal(result.text.length, 2);
    assert.deepEqual(result.in.map((row: { id: number }) => row.id), await idsWhere(`${count} IN (0, 1) OR ${shout} IS NULL`));
    const [aggregate] = await plain(`SELECT json_build_object('count', count(*)) AS j FROM lender.notes WHERE account_id = $1 AND ${count} = 1`, [accountId]);
    assert.deepEqual(result.aggregate.aggregate, aggregate);
  });

  it('offers in where and order_by only computed fields without arguments, and to a role only those its columns name', async () => {
    assert.match(await refused('{ lender_notes(where: {score_times: {_eq: 2}}) { id } }'), /score_times/);
    assert.match(await refused('{ lender_notes(order_by: {score_times: asc}) { id } }'), /score_times/);
    const counted = await data('{ lender_notes(where: {tag_count: {_gt: 0}}, order_by: {tag_count: asc}) { id tag_count } }', undefined, counterKey);
    assert.deepEqual(counted.lender_notes, await plain(`SELECT json_build_object('id', id, 'tag_count', lender.note_tag_count(account_id, id)) AS j FROM lender.notes WHERE account_id = $1 AND lender.note_tag_count(account_id, id) > 0 ORDER BY lender.note_tag_count(account_id, id), id`, [accountId]));
    const hidden = await post({ query: '{ lender_notes(where: {tag_count: {_gt: 0}}) { id } }' }, taggedKey);
    assert.equal(hidden.body.errors?.[0]?.extensions?.code, 'validation-failed', hidden.text);
    assert.match(hidden.text, /tag_count/);
  });

  it('lists a table computed field with args, where, order_by, paging and distinct_on, under the tenant predicate', async () => {
    const answer = await data(`{
      lender_notes(order_by: {id: asc}) {
        id
        all: others { id }
        some: others(args: {min_score: 1}, where: {title: {_neq: "second"}}, order_by: {title: desc}, limit: 2) { id title tag_count }
        distinct: others(distinct_on: [title], order_by: [{title: asc}, {id: desc}]) { id title }
      }
    }`);
    const expected = await plain(
      `SELECT json_build_object('id', n.id,
         'all', coalesce((SELECT json_agg(json_build_object('id', o.id) ORDER BY o.id) FROM lender.note_others(n.account_id, n.id) o WHERE o.account_id = $1), '[]'),
         'some', coalesce((SELECT json_agg(j ORDER BY t DESC, i) FROM (SELECT json_build_object('id', o.id, 'title', o.title, 'tag_count', lender.note_tag_count(o.account_id, o.id)) AS j, o.title AS t, o.id AS i
                   FROM lender.note_others(n.account_id, n.id, min_score => 1) o WHERE o.account_id = $1 AND o.title <> 'second' ORDER BY o.title DESC, o.id LIMIT 2) s), '[]'),
         'distinct', coalesce((SELECT json_agg(json_build_object('id', d.id, 'title', d.title) ORDER BY d.title, d.id DESC)
                   FROM (SELECT DISTINCT ON (o.title) o.* FROM lender.note_others(n.account_id, n.id) o WHERE o.account_id = $1 ORDER BY o.title, o.id DESC) d), '[]')) AS j
         FROM lender.notes n WHERE n.account_id = $1 ORDER BY n.id`,
      [accountId],
    );
    assert.deepEqual(answer.lender_notes, expected);
    assert.ok(!JSON.stringify(answer).includes('theirs'));
  });

  it('applies the returned collection\'s role filter to a table computed field\'s rows; a role whose columns leave it out has no such field', async () => {
    const result = await data('{ lender_notes(order_by: {id: asc}) { id others(order_by: {id: asc}) { id tags } } }', undefined, taggedKey);
    const expected = await plain(
      `SELECT json_build_object('id', n.id, 'others', coalesce((SELECT json_agg(json_build_object('id', o.id, 'tags', o.tags) ORDER BY o.id) FROM lender.note_others(n.account_id, n.id) o WHERE o.account_id = $1 AND o.tags IS NOT NULL), '[]')) AS j
         FROM lender.notes n WHERE n.account_id = $1 AND n.tags IS NOT NULL ORDER BY n.id`,
      [accountId],
    );
    assert.deepEqual(result.lender_notes, expected);
    const absent = await post({ query: '{ lender_notes { id others { id } } }' }, counterKey);
    assert.equal(absent.body.errors?.[0]?.extensions?.code, 'validation-failed', absent.text);
    assert.match(absent.text, /others/);
  });

  it('explains a table computed field: its rows are the function\'s call on the row', async () => {
    const answer = await post({ query: '{ lender_notes { others(args: {min_score: 2}) { id } } }' }, key, '/api/graph/explain');
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /FROM \\"lender\\"\.\\"note_others\\"\(\\"_t\d+\\"\.\\"account_id\\", \\"_t\d+\\"\.\\"id\\", \\"min_score\\" => \$\d+::integer\) AS/);
  });

  it('shows the array operators in explain', async () => {
    const answer = await post({ query: '{ lender_notes(where: {tags: {_contains: ["a"]}, body: {_eq: {a: 1}}}) { id } }' }, key, '/api/graph/explain');
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /@> \$\d+::text\[\]/);
    assert.match(answer.text, /::jsonb = \$\d+::jsonb/);
  });
});

describe('metadata check: json and array types against the catalogue', () => {
  const problemsOf = async (metadata: string): Promise<string> => {
    try {
      await checkMetadataAgainstDatabase(parseMetadata(metadata), database.db);
    } catch (error) {
      assert.ok(error instanceof MetadataError, String(error));
      return error.problems.join('\n');
    }
    assert.fail('the metadata was accepted');
  };

  it('accepts the metadata above', async () => {
    await checkMetadataAgainstDatabase(parseMetadata(METADATA), database.db);
  });

  it('refuses an array whose element type is not the column\'s, jsonb on a json column, a scalar on an array column', async () => {
    const problems = await problemsOf(METADATA.replace('scores: "integer[]"', 'scores: "bigint[]"').replace('tags: "text[]"', 'tags: text').replace('body: json', 'body: jsonb'));
    assert.match(problems, /field scores: column notes\.scores is integer\[\], not bigint\[\]/);
    assert.match(problems, /field tags: column notes\.tags is text\[\], not text/);
    assert.match(problems, /field body: column notes\.body is json, not jsonb/);
  });

  it('refuses a table computed field whose function returns another type, does not exist, or returns no known collection', async () => {
    const problems = await problemsOf(METADATA.replace('others: { function: note_others,', 'others: { function: note_texts,').replace('score_times: { function: note_score_times, type: integer, args: { factor: integer } }', 'score_times: { function: note_nothing, returns: lender_notes }'));
    assert.match(problems, /computed field others: function note_texts does not return SETOF lender\.notes/);
    assert.match(problems, /computed field score_times: function lender\.note_nothing does not exist/);
    assert.throws(() => parseMetadata(METADATA.replace('returns: lender_notes', 'returns: nowhere')), /computed field others: returns nowhere is not a collection/);
  });

  it('refuses a relationship joining columns of two types, and a computed field whose function takes another key or argument type, returns another type or is VOLATILE', async () => {
    // Each was accepted before, and every request that used it failed: a 500 (`uuid = text`,
    // `function … does not exist`), or a value of another type than the schema said.
    const problems = await problemsOf(
      METADATA.replace(/  few_tags:\n(    .*\n)+/, '')
        .replace(`    insert: { columns: ${WRITABLE} }`, `    relationships:\n      named: { object: lender_notes, on: { title: id } }\n    insert: { columns: ${WRITABLE} }`)
        .replace('tag_count: { function: note_tag_count, type: integer }', 'tag_count: { function: note_tag_count, type: date }')
        .replace('shout: { function: note_title_upper, type: text }', 'shout: { function: note_by_uuid, type: integer }')
        .replace('args: { factor: integer }', 'args: { factor: text }')
        .replace('    computed_fields:\n', '    computed_fields:\n      touched: { function: note_touch, type: integer }\n'),
    );
    assert.match(problems, /computed field touched: function note_touch is VOLATILE \(a query must not write: declare it STABLE\)/);
    assert.match(problems, /relationship named: column notes\.title is text and notes\.id is bigint; PostgreSQL cannot compare them/);
    assert.match(problems, /computed field tag_count: function note_tag_count returns integer, not date/);
    assert.match(problems, /computed field shout: function note_by_uuid takes uuid as argument 2 \(id\), where the engine passes the key column notes\.id, bigint \(it is note_by_uuid\(account uuid, id uuid\) returning integer\)/);
    assert.match(problems, /computed field score_times: function note_score_times takes factor as integer, not text as args declares it/);
    assert.equal(problems.split('\n').length, 5, problems);
    // Comparable types join (integer with bigint), and a key column widens to its parameter's type.
    await checkMetadataAgainstDatabase(parseMetadata(METADATA.replace(`    insert: { columns: ${WRITABLE} }`, `    relationships:\n      same: { object: lender_notes, on: { id: id } }\n    insert: { columns: ${WRITABLE} }`)), database.db);
  });

  it('refuses an unknown type, an array key, and a role filter comparing an array (it may test for null only)', () => {
    assert.throws(() => parseMetadata(METADATA.replace('scores: "integer[]"', 'scores: "jsonb[]"')), /scores: type "jsonb\[\]" is not one of/);
    assert.throws(() => parseMetadata(METADATA.replace('primary_key: id', 'primary_key: tags')), /primary_key tags is of type text\[\]/);
    assert.throws(() => parseMetadata(METADATA.replace('tags: { _is_null: false }', 'tags: { _eq: [a] }')), /a text\[\] field takes only _is_null in a role filter/);
  });
});
