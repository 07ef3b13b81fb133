import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { checkedLookup, destinationProblem, RefusedDestinationError } from './destination.js';

/** Most of a response body read (kept for the attempt log); the rest is discarded. */
const RESPONSE_BODY_LIMIT = 4096;

export interface AttemptResult {
  /** The response status, or null when none came (refused, timed out, blocked destination). */
  readonly statusCode: number | null;
  /** What went wrong, in words (never holds the secret or the signature). */
  readonly error: string | null;
  readonly durationMs: number;
}

/**
 * One POST of a webhook: connects only to a checked address, follows no redirect (a 3xx is a
 * failed attempt), reads at most 4 KiB of the answer, and gives up after `timeoutMs` in all.
 */
export function postWebhook(url: string, headers: Readonly<Record<string, string>>, body: string, options: { timeoutMs: number; allowPrivate: boolean }): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (statusCode: number | null, error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ statusCode, error, durationMs: elapsed() });
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return finish(null, 'the endpoint URL is not a URL');
    }
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const problem = !options.allowPrivate && isIP(host) ? destinationProblem(host) : null;
    if (problem) return finish(null, `refused: ${host} is not a public address (${problem})`);
    const send = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : null;
    if (!send) return finish(null, 'the endpoint URL is not http or https');
    timer = setTimeout(() => {
      request.destroy(new Error(`timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'loanql-webhooks/1' },
      lookup: checkedLookup(options.allowPrivate) as never,
      agent: false,
    });
    request.on('response', (response: IncomingMessage) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= RESPONSE_BODY_LIMIT) {
          finish(response.statusCode ?? null, null);
          response.destroy();
        }
      });
      response.on('end', () => finish(response.statusCode ?? null, null));
      response.on('error', () => finish(response.statusCode ?? null, null));
    });
    request.on('error', (error: Error) => {
      const refused = error instanceof RefusedDestinationError || error.name === 'RefusedDestinationError';
      finish(null, refused ? `refused: ${error.message}` : error.message || String(error));
    });
    request.end(body);
  });
}
