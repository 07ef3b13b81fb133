/**
 * The baseline: the least a server can do to answer the benchmark's queries over node-postgres.
 * A bare `node:http` server and a `pg` pool (same size as the service's); `POST /<query id>`
 * with the variables as the JSON body runs that query's ONE hand-written statement and forwards
 * the text PostgreSQL built. No authentication, no GraphQL, no framework.
 *
 * Environment: DATABASE_URL, ACCOUNT_ID (the tenant every statement is scoped to), PORT,
 * HOST (default 127.0.0.1), PG_POOL_SIZE (default 10). Prints `listening <port>` when ready.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { QUERIES, type Variables } from './queries.js';

const connectionString = process.env.DATABASE_URL;
const accountId = process.env.ACCOUNT_ID;
if (!connectionString || !accountId) throw new Error('DATABASE_URL and ACCOUNT_ID are required');

// jit=off as on the service's own connections (db/postgresDatabase.ts), so both sides plan alike.
const pool = new pg.Pool({ connectionString, max: Number(process.env.PG_POOL_SIZE || 10), options: '-c jit=off' });
pool.on('error', () => undefined);
const byPath = new Map(QUERIES.map((query) => [`/${query.id}`, query]));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const server = createServer((req, res) => {
  const query = byPath.get(req.url ?? '');
  if (req.method !== 'POST' || !query) {
    res.writeHead(404).end();
    return;
  }
  readBody(req)
    .then(async (body) => {
      const variables = (body ? JSON.parse(body) : {}) as Variables;
      let response: string | undefined;
      if (query.baselineWriteSql) {
        // A mutation: the write and the read of its result in one transaction, as the engine does.
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const written = await client.query<{ id: string }>(query.baselineWriteSql, [accountId, ...query.baselineWriteParams!(variables)]);
          const { rows } = await client.query<{ response: string }>(query.baselineSql, [accountId, written.rows[0]?.id ?? null]);
          await client.query('COMMIT');
          response = rows[0]?.response;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        } finally {
          client.release();
        }
      } else {
        const { rows } = await pool.query<{ response: string }>(query.baselineSql, [accountId, ...query.baselineParams(variables)]);
        response = rows[0]?.response;
      }
      const rows = [{ response }];
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(rows[0]?.response ?? 'null');
    })
    .catch((error: unknown) => {
      process.stderr.write(`baseline ${query.id}: ${error instanceof Error ? error.message : String(error)}\n`);
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
