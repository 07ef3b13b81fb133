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
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
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

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const refuse = (res: ServerResponse): void => void res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Not authorized"}');

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const [body, keyId] = await Promise.all([readBody(req), authenticate(req.headers.authorization)]);
  if (!keyId) return refuse(res);
  const request = JSON.parse(body) as { query?: unknown; variables?: Variables };
  const prepared = typeof request.query === 'string' ? byDocument.get(request.query) : undefined;
  if (!prepared) {
    res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end('{"errors":[{"message":"unknown document"}]}');
    return;
  }
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

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/graphql') {
    res.writeHead(404).end();
    return;
  }
  answer(req, res).catch((error: unknown) => {
    process.stderr.write(`single-lender: ${error instanceof Error ? error.message : String(error)}\n`);
    res.writeHead(500).end();
  });
});

server.listen(Number(process.env.PORT || 0), process.env.HOST || '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});

const stop = (): void => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
  setTimeout(() => process.exit(1), 5_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
