/**
 * What the two hand-written servers (bench/baselineServer.ts on loanql's schema,
 * bench/singleLenderServer.ts on one lender's) share around their statements: reading the body,
 * the 403 and 400 answers, and the process — `node:http` answering `POST /graphql` only, a 500 for
 * a failed request (logged with the server's name), `listening <port>` on stdout when ready, and
 * SIGTERM/SIGINT closing the server and the pool. Nothing here runs per request beyond what
 * each server did by itself before it was shared.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export const refuse = (res: ServerResponse): void => void res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Not authorized"}');

export const unknownDocument = (res: ServerResponse): void =>
  void res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end('{"errors":[{"message":"unknown document"}]}');

/** Serves `answer` on PORT/HOST (default 127.0.0.1) until SIGTERM or SIGINT. */
export function serveHandWritten(name: string, pool: pg.Pool, answer: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void {
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/graphql') {
      res.writeHead(404).end();
      return;
    }
    answer(req, res).catch((error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
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
}
