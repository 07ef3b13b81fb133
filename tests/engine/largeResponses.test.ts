import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inParts, PART_BYTES, PARTS_FROM_LENGTH } from '../../engine/sql/inParts.js';
import { createApiKey, deactivateApiKey } from '../../app/apiKeys.js';
import { GuardFailed, RequestError, statementGuard } from '../../engine/index.js';
import { testDatabaseKind } from '../support/testDatabase.js';
import { startSeededService, type SeededService } from '../support/seededService.js';

/**
 * Large responses leave PostgreSQL in parts (engine/execute/inParts.ts): after an operation has
 * once answered more than PARTS_FROM_LENGTH characters, it runs wrapped so that the response
 * arrives as rows of about PART_BYTES, cut on UTF-8 character boundaries, and `/api/graph`
 * writes them as they come (chunked transfer encoding). Nothing about the answer may change.
 */
let s: SeededService;
let accountId: string;

before(async () => {
  s = await startSeededService();
  accountId = s.account.id;
  // Names with 2-, 3- and 4-byte characters, so that part boundaries fall inside characters.
  await s.sql(`UPDATE people SET name = name || ' Zoë €uro 😀 Ålesund' WHERE account_id = $1`, [accountId]);
});

after(async () => {
  await s?.close();
});

/** Every part a wrapped statement answers for `text`. */
async function partsOf(text: string | null): Promise<string[]> {
  const parts: string[] = [];
  await s.db.each<{ part: string }>(inParts('SELECT $1::text AS "response"'), [text], (row) => parts.push(row.part));
  return parts;
}

describe(`inParts on ${testDatabaseKind}`, () => {
  const cases: [string, string][] = [
    ['ASCII, exactly two parts long', 'a'.repeat(2 * PART_BYTES)],
    ['ASCII, one byte over', 'b'.repeat(PART_BYTES + 1)],
    ['2-byte characters across every boundary', 'x' + 'é'.repeat(PART_BYTES)],
    ['3-byte characters, shifted by one and two bytes', 'x' + '€'.repeat(PART_BYTES / 2) + 'yy' + '€'.repeat(PART_BYTES / 2)],
    ['4-byte characters (surrogate pairs in JavaScript)', 'x' + '😀'.repeat(PART_BYTES / 2) + 'y' + '😀'.repeat(PART_BYTES / 4) + 'zz' + '😀'.repeat(PART_BYTES / 4)],
    ['a short text', '{"data":{"ok":"Zoë"}}'],
  ];
  for (const [name, text] of cases) {
    it(`gives back the same text in parts of PART_BYTES ± 3 bytes, cut between characters: ${name}`, async () => {
      const parts = await partsOf(text);
      assert.equal(parts.join(''), text);
      const bytes = parts.map((part) => Buffer.byteLength(part));
      // A cut moves forward to the next character by at most 3 bytes; only the last part is short.
      assert.ok(bytes.every((n) => n > 0 && n <= PART_BYTES + 3), `part sizes ${bytes.join(',')}`);
      assert.ok(bytes.slice(0, -1).every((n) => n >= PART_BYTES - 3), `part sizes ${bytes.join(',')}`);
      assert.ok(parts.length <= Math.ceil(Buffer.byteLength(text) / PART_BYTES));
      // No part starts or ends inside a character (a lone surrogate would mean a cut pair).
      for (const part of parts) assert.equal(Buffer.from(part, 'utf8').toString('utf8'), part);
    });
  }

  it('answers no rows for a NULL response', async () => {
    assert.deepEqual(await partsOf(null), []);
  });
});

/** Every loan with its payments and schedules: far over PARTS_FROM_LENGTH on the seeded account. */
const LARGE = `query Large($min: numeric!, $name: String! = "%") {
  loans(where: {amount: {_gte: $min}, name: {_like: $name}}, order_by: {name: asc}) {
    id name amount
    borrows { person { name email } }
    payments(order_by: {date: desc}) { amount date date_reversed }
    schedules(order_by: {due: asc}) { due payment is_next }
  }
}`;

describe(`an operation whose response is large, on ${testDatabaseKind}`, () => {
  it('runs whole the first time, then in parts with the same text, still as one statement', async () => {
    const engine = s.service.engine;
    const request = { query: LARGE, variables: { min: '0' } };
    const statements: string[] = [];
    const stop = s.db.observe((text) => statements.push(text));
    try {
      const first = await engine.execute(s.db, request, accountId);
      assert.ok(first.length > PARTS_FROM_LENGTH, `the seeded response is only ${first.length} characters`);
      assert.ok(first.includes('Zoë €uro 😀'));
      assert.deepEqual(statements, [(engine.prepare(request, accountId) as { text: string }).text]);

      statements.length = 0;
      const pieces: string[] = [];
      await engine.respond(s.db, request, accountId, undefined, (piece) => void pieces.push(piece));
      assert.equal(statements.length, 1);
      assert.equal(statements[0], inParts((engine.prepare(request, accountId) as { text: string }).text));
      assert.ok(pieces.length >= Math.floor(Buffer.byteLength(first) / PART_BYTES), `${pieces.length} pieces`);
      assert.equal(pieces.join(''), first);
      assert.equal(await engine.execute(s.db, request, accountId), first);
    } finally {
      stop();
    }
  });

  it('answers a small response of that operation in one part', async () => {
    const request = { query: LARGE, variables: { min: '1e12' } };
    const pieces: string[] = [];
    await s.service.engine.respond(s.db, request, accountId, undefined, (piece) => void pieces.push(piece));
    assert.deepEqual(pieces, ['{"data":{"loans":[]}}']);
  });

  it('writes nothing and throws GuardFailed when the guard does not hold', async () => {
    const pieces: string[] = [];
    const guard = statementGuard`${false}::boolean`;
    await assert.rejects(s.service.engine.respond(s.db, { query: LARGE, variables: { min: '0' } }, accountId, guard, (piece) => void pieces.push(piece)), GuardFailed);
    assert.deepEqual(pieces, []);
  });

  it('reports a client mistake found by PostgreSQL as a RequestError, writing nothing', async () => {
    const pieces: string[] = [];
    await assert.rejects(
      // A LIKE pattern ending in the escape character: only PostgreSQL finds it wrong (SQLSTATE 22025).
      s.service.engine.respond(s.db, { query: LARGE, variables: { min: '0', name: '%\\' } }, accountId, undefined, (piece) => pieces.push(piece)),
      (error: unknown) => error instanceof RequestError && /escape/i.test(JSON.stringify(error.errors)),
    );
    assert.deepEqual(pieces, []);
  });
});

describe(`POST /api/graph with a large response, on ${testDatabaseKind}`, () => {
  const post = (body: unknown, contentType = 'application/json') =>
    fetch(`${s.url}/api/graph`, { method: 'POST', headers: { 'content-type': contentType, authorization: `Token ${s.apiKey}` }, body: JSON.stringify(body) });

  for (const [path, contentType] of [
    ['the fast path', 'application/json'],
    ['the Express route', 'application/graphql-response+json'],
  ] as const) {
    it(`streams the parts with chunked transfer encoding, the body unchanged (${path})`, async () => {
      const query = `${LARGE} # ${path}`;
      const whole = await post({ query, variables: { min: '0' } }, contentType);
      assert.equal(whole.status, 200);
      const wholeText = await whole.text();
      assert.equal(whole.headers.get('content-length'), String(Buffer.byteLength(wholeText)));

      const streamed = await post({ query, variables: { min: '0' } }, contentType);
      assert.equal(streamed.status, 200);
      assert.match(streamed.headers.get('content-type') ?? '', /^application\/(json|graphql-response\+json)/);
      assert.equal(streamed.headers.get('transfer-encoding'), 'chunked');
      assert.equal(streamed.headers.get('content-length'), null);
      assert.equal(await streamed.text(), wholeText);
      assert.ok(JSON.parse(wholeText).data.loans.length > 0);

      // A small answer of the same operation still carries a Content-Length.
      const small = await post({ query, variables: { min: '1e12' } }, contentType);
      const smallText = await small.text();
      assert.equal(small.headers.get('content-length'), String(Buffer.byteLength(smallText)));
      assert.deepEqual(JSON.parse(smallText), { data: { loans: [] } });
    });
  }

  it('refuses a deactivated key before any part is sent', async () => {
    const created = await createApiKey(s.db, accountId, 'large responses');
    const send = () =>
      fetch(`${s.url}/api/graph`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Token ${created.key}` },
        body: JSON.stringify({ query: LARGE, variables: { min: '0' } }),
      });
    assert.equal((await send()).status, 200);
    assert.equal((await deactivateApiKey(s.db, created.prefix, accountId))?.wasActive, true);
    const refused = await send();
    assert.equal(refused.status, 403);
    assert.equal(await refused.text(), 'Not authorized');
  });
});
