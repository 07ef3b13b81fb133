/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request it
 * gets (headers, raw body, when) and answers what the test says (`respond`), or is closed and
 * reopened on the same port to play an endpoint that is down.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly receivedAt: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** The status to answer with next (default 200); may be changed at any time. */
  respond: (request: ReceivedWebhook) => number;
  /** How long to wait before answering (default 0). */
  delayMs: number;
  /** Resolves once `predicate` holds for the received list (polling), or rejects after `timeoutMs`. */
  waitFor(predicate: (received: readonly ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops listening (connections are then refused); `open()` listens again on the same port. */
  close(): Promise<void>;
  open(): Promise<void>;
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
  return headers;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  let server: Server | null = null;
  const receiver: WebhookReceiver = {
    url: '',
    port,
    received: [],
    respond: () => 200,
    delayMs: 0,
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get what was expected within ${timeoutMs} ms (got ${receiver.received.length} requests)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      const closing = server;
      server = null;
      if (!closing) return;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        closing.closeAllConnections();
      });
    },
    async open() {
      const listening = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const webhook = { headers: headersOf(request), body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() };
          receiver.received.push(webhook);
          const answer = (): void => {
            response.statusCode = receiver.respond(webhook);
            response.end('ok');
          };
          if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
          else answer();
        });
      });
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(receiver.port, '127.0.0.1', () => resolve());
      });
      server = listening;
      const { port: bound } = listening.address() as AddressInfo;
      (receiver as { port: number }).port = bound;
      (receiver as { url: string }).url = `http://127.0.0.1:${bound}/hooks`;
    },
  };
  await receiver.open();
  return receiver;
}
