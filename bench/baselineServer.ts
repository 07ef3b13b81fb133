/**
 * The baseline: the strongest honest hand-written server for the benchmark's queries over
 * node-postgres (issue 20). What a careful person would write, and why each choice:
 *
 * - `node:http` and a `pg` pool of the service's size (PG_POOL_SIZE, with `jit=off` as on the
 *   service's connections, so both sides plan alike). No framework: nothing runs per request
 *   that the job does not need.
 * - The same requests as the service, byte for byte: `POST /graphql` with the GraphQL request
 *   body (`{"query", "operationName", "variables"}`) and `Authorization: Token <key>`. A server
 *   that answers this API must read the document to know what is asked, so it parses the body
 *   and finds its hand-written statement by the document's text — one Map lookup, as a server
 *   with a fixed set of operations (an allow-list of documents) would; an unknown document is a
 *   400. It does not parse, validate or check the variables' types: the statement's parameter
 *   types do that. (Until 2026-11-23 the baseline took `POST /<query id>` with only the
 *   variables as its body: 50–100 bytes instead of the engine's 300–1,500, which the load
 *   generator on the same two cores sent and the baseline parsed for less — bench/README.md.)
 * - A real key check, the same one the service does: a key is verified once against the stored
 *   SHA-256 (the indexed lookup `api_keys.prefix`, compared in constant time) and then
 *   remembered in process by the hash of the key (which account, which key, which role and
 *   variables: facts that never change). Its STATE (active) is not cached: a revoked key must be
 *   refused on its next request, so the statement checks it — `SELECT CASE WHEN EXISTS (…
 *   api_keys … active) THEN (<query>) END` — with no extra round trip. NULL means 403.
 * - ONE statement per request, hand-written, returning the finished JSON text
 *   (`json_build_object`/`json_agg`, the idiomatic way), forwarded untouched.
 * - Named prepared statements (`{name, text, values}`): node-postgres parses and plans each
 *   statement once per pool connection, then only binds and executes it.
 * - The `investor` queries apply the role's rules by hand where a person would (bench/queries.ts).
 *
 * Environment: DATABASE_URL, PORT, HOST (default 127.0.0.1), PG_POOL_SIZE (default 10).
 * Prints `listening <port>` when ready.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pg from 'pg';
import { readBody, refuse, serveHandWritten, unknownDocument } from './handWrittenHttp.js';
import { ALL_QUERIES, type BenchQuery, type Variables } from './queries.js';

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error('DATABASE_URL is required');

const pool = new pg.Pool({ connectionString, max: Number(process.env.PG_POOL_SIZE || 10), options: '-c jit=off' });
pool.on('error', () => undefined);

/** A verified key: what its secret proved once (never its state). */
interface Key {
  readonly accountId: string;
  readonly keyId: string;
  readonly role: string;
  readonly personId: string | null;
}
const KEY_PATTERN = /^(lq_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
const verified = new Map<string, Key>();

async function authenticate(header: string | undefined): Promise<Key | null> {
  if (!header?.startsWith('Token ')) return null;
  const key = header.slice(6).trim();
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  const hash = createHash('sha256').update(key).digest();
  const known = verified.get(hash.toString('base64'));
  if (known) return known;
  const { rows } = await pool.query<{ account_id: string; id: string; key_hash: Uint8Array; active: boolean; role: string; variables: Record<string, string> }>({
    name: 'key',
    text: 'SELECT account_id, id, key_hash, active, role, variables FROM api_keys WHERE prefix = $1',
    values: [match[1]],
  });
  const row = rows[0];
  if (!row || !row.active || !timingSafeEqual(Buffer.from(row.key_hash), hash)) return null;
  const found: Key = { accountId: row.account_id, keyId: row.id, role: row.role, personId: row.variables.person_id ?? null };
  verified.set(hash.toString('base64'), found);
  return found;
}

/** A query's statements, built once: its text with the key-state check around it, as the service checks it. */
interface Prepared {
  readonly query: BenchQuery;
  /** Parameters before the query's own: the account, and the investor's person id. */
  readonly leading: number;
  readonly read: pg.QueryConfig;
  readonly write: pg.QueryConfig | null;
}
/** The statements by role and document text (`role \u0000 document`): what a request asks for. */
const byDocument = new Map<string, Prepared>(
  ALL_QUERIES.map((query) => {
    const leading = query.role === 'investor' ? 2 : 1;
    // The read's own parameters: for a mutation, the account and the written id.
    const own = query.baselineWriteSql ? 2 : leading + query.baselineParams({}).length;
    const text = `SELECT CASE WHEN EXISTS (SELECT 1 FROM api_keys WHERE account_id = $1 AND id = $${own + 1} AND active) THEN (${query.baselineSql}) END AS response`;
    const read = { name: `${query.id}`, text };
    const write = query.baselineWriteSql ? { name: `${query.id}w`, text: query.baselineWriteSql } : null;
    return [`${query.role ?? 'admin'}\u0000${query.graphql}`, { query, leading, read, write }];
  }),
);

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const [body, key] = await Promise.all([readBody(req), authenticate(req.headers.authorization)]);
  if (!key) return refuse(res);
  const request = JSON.parse(body) as { query?: unknown; variables?: Variables };
  const prepared = typeof request.query === 'string' ? byDocument.get(`${key.role}\u0000${request.query}`) : undefined;
  if (!prepared) return unknownDocument(res);
  const variables = request.variables ?? {};
  const { query } = prepared;
  let response: string | null | undefined;
  if (prepared.write) {
    // A mutation: the write and the read of its result in one transaction, as the engine does.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const written = await client.query<{ id: string }>({ ...prepared.write, values: [key.accountId, ...query.baselineWriteParams!(variables)] });
      const { rows } = await client.query<{ response: string | null }>({ ...prepared.read, values: [key.accountId, written.rows[0]?.id ?? null, key.keyId] });
      response = rows[0]?.response;
      await client.query(response === null ? 'ROLLBACK' : 'COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } else {
    const leading = prepared.leading === 2 ? [key.accountId, key.personId] : [key.accountId];
    const { rows } = await pool.query<{ response: string | null }>({ ...prepared.read, values: [...leading, ...query.baselineParams(variables), key.keyId] });
    response = rows[0]?.response;
  }
  if (response === null || response === undefined) return refuse(res);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(response);
}

serveHandWritten('baseline', pool, answer);
