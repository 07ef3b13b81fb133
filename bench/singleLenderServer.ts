/**
 * The single-lender server (issue 36): bench/baselineServer.ts's design — `node:http`, a `pg`
 * pool of PG_POOL_SIZE with `jit=off`, the same request bytes (`POST /graphql`, the statement
 * found by the document's text), the key verified once and its state checked inside the one
 * named prepared statement — over the schema a person would design for ONE lender
 * (bench/singleLender.ts: no tenant column, `bigint` keys, the index each query wants) and the
 * statements of bench/singleLenderQueries.ts. Its connections' `search_path` is `single_lender`.
 *
 * Environment: DATABASE_URL, PORT, HOST (default 127.0.0.1), PG_POOL_SIZE (default 10).
 * Prints `listening <port>` when ready.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pg from 'pg';
import { readBody, refuse, serveHandWritten, unknownDocument } from './handWrittenHttp.js';
import { QUERIES, type Variables } from './queries.js';
import { SINGLE_LENDER_SCHEMA } from './singleLender.js';
import { SINGLE_LENDER_STATEMENTS, type SingleLenderStatement } from './singleLenderQueries.js';

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error('DATABASE_URL is required');

const pool = new pg.Pool({ connectionString, max: Number(process.env.PG_POOL_SIZE || 10), options: `-c jit=off -c search_path=${SINGLE_LENDER_SCHEMA}` });
pool.on('error', () => undefined);

const KEY_PATTERN = /^(lq_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
/** Verified keys by the key's SHA-256: the key's id (never its state). Admin keys only. */
const verified = new Map<string, string>();

async function authenticate(header: string | undefined): Promise<string | null> {
  if (!header?.startsWith('Token ')) return null;
  const key = header.slice(6).trim();
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  const hash = createHash('sha256').update(key).digest();
  const known = verified.get(hash.toString('base64'));
  if (known) return known;
  const { rows } = await pool.query<{ id: string; key_hash: Uint8Array; active: boolean; role: string }>({
    name: 'key',
    text: 'SELECT id, key_hash, active, role FROM api_keys WHERE prefix = $1',
    values: [match[1]],
  });
  const row = rows[0];
  if (!row || !row.active || row.role !== 'admin' || !timingSafeEqual(Buffer.from(row.key_hash), hash)) return null;
  verified.set(hash.toString('base64'), row.id);
  return row.id;
}

interface Prepared {
  readonly statement: SingleLenderStatement;
  readonly read: pg.QueryConfig;
  readonly write: pg.QueryConfig | null;
}
/** The statements by document text. */
const byDocument = new Map<string, Prepared>(
  QUERIES.filter((query) => SINGLE_LENDER_STATEMENTS[query.id]).map((query) => {
    const statement = SINGLE_LENDER_STATEMENTS[query.id]!;
    const own = statement.write ? 1 : statement.params({}).length;
    const text = `SELECT CASE WHEN EXISTS (SELECT 1 FROM api_keys WHERE id = $${own + 1} AND active) THEN (${statement.sql}) END AS response`;
    return [query.graphql, { statement, read: { name: query.id, text }, write: statement.write ? { name: `${query.id}w`, text: statement.write.sql } : null }];
  }),
);

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const [body, keyId] = await Promise.all([readBody(req), authenticate(req.headers.authorization)]);
  if (!keyId) return refuse(res);
  const request = JSON.parse(body) as { query?: unknown; variables?: Variables };
  const prepared = typeof request.query === 'string' ? byDocument.get(request.query) : undefined;
  if (!prepared) return unknownDocument(res);
  const variables = request.variables ?? {};
  const { statement } = prepared;
  let response: string | null | undefined;
  if (prepared.write && statement.write) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const written = await client.query<{ id: string }>({ ...prepared.write, values: [...statement.write.params(variables)] });
      const { rows } = await client.query<{ response: string | null }>({ ...prepared.read, values: [written.rows[0]?.id ?? null, keyId] });
      response = rows[0]?.response;
      await client.query(response === null ? 'ROLLBACK' : 'COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } else {
    const { rows } = await pool.query<{ response: string | null }>({ ...prepared.read, values: [...statement.params(variables), keyId] });
    response = rows[0]?.response;
  }
  if (response === null || response === undefined) return refuse(res);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(response);
}

serveHandWritten('single-lender', pool, answer);
