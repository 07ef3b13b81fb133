/**
 * A client for the REST loan routes that checks every response it receives against the
 * service's own OpenAPI document (`/api/openapi.json`, validated as OpenAPI 3.1 first), so
 * each REST test also keeps the document true (issue #4, "Done when" 5).
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { tokenHeader } from './http.js';
import { parseExact } from './exactJson.js';

export interface RestAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
  /** The body parsed with exact numbers (`JsonNumber`), or null when it is not JSON. */
  readonly exact: any;
  /** The body parsed with `JSON.parse`, or null when it is not JSON. */
  readonly json: any;
}

export interface RestClient {
  readonly document: Record<string, unknown>;
  get(path: string): Promise<RestAnswer>;
  post(path: string, body: unknown, options?: { raw?: string }): Promise<RestAnswer>;
  patch(path: string, body: unknown, options?: { raw?: string }): Promise<RestAnswer>;
  send(method: string, path: string, init?: RequestInit): Promise<RestAnswer>;
}

/** Which path template of the document a request path belongs to. */
function templateOf(path: string): string {
  const bare = path.split('?')[0]!;
  if (bare === '/api/loan') return '/api/loan';
  if (bare === '/api/product') return '/api/product';
  if (bare === '/api/account') return '/api/account';
  if (bare === '/api/remittances') return '/api/remittances';
  if (/^\/api\/remittances\/[^/]+$/.test(bare)) return '/api/remittances/{id}';
  if (/^\/api\/investors\/[^/]+\/statement$/.test(bare)) return '/api/investors/{person_id}/statement';
  if (bare === '/api/distributions') return '/api/distributions';
  if (bare === '/api/openapi.json') return '/api/openapi.json';
  if (/^\/api\/loan\/[^/]+$/.test(bare)) return '/api/loan/{id}';
  const ledger = /^\/api\/loan\/[^/]+\/(payoff|ledger)$/.exec(bare);
  if (ledger) return `/api/loan/{id}/${ledger[1]}`;
  throw new Error(`no OpenAPI path for ${path}`);
}

/** Validates the document as OpenAPI 3.1 (throws with the validator's errors). */
export async function assertValidOpenApi(document: unknown): Promise<void> {
  const text = JSON.stringify(document);
  if (validOpenApiDocuments.has(text)) return;
  // One validator for the process: it compiles OpenAPI's own schema at its first use (0.14–0.23
  // CPU-seconds each time a new one did), and keeps it.
  validator ??= new Validator();
  const result = await validator.validate(document as Record<string, unknown>);
  assert.equal(validator.version, '3.1', 'the document declares OpenAPI 3.1');
  assert.ok(result.valid, `the OpenAPI document is invalid: ${JSON.stringify(result.errors, null, 2)}`);
  validOpenApiDocuments.add(text);
}

let validator: Validator | undefined;
/** The documents (as JSON text) this process has validated already: a test file's clients mostly share one. */
const validOpenApiDocuments = new Set<string>();

export interface OpenApiChecker {
  readonly document: Record<string, any>;
  /** Asserts that an answer to `method path` is one the document describes, body included. */
  check(method: string, path: string, answer: { status: number; contentType: string | null; text: string }): void;
}

/** Fetches the account's document, validates it as OpenAPI 3.1, and returns a checker of answers. */
export async function openApiChecker(baseUrl: string, key: string): Promise<OpenApiChecker> {
  const response = await fetch(`${baseUrl}/api/openapi.json`, { headers: tokenHeader(key) });
  assert.equal(response.status, 200);
  const document = (await response.json()) as Record<string, any>;
  return checkerOf(document);
}

/** A checker of answers against `document` (made in the test, or fetched), validated as OpenAPI 3.1 first. */
export async function checkerOf(document: Record<string, any>): Promise<OpenApiChecker> {
  await assertValidOpenApi(document);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

  const check = (method: string, path: string, answer: { status: number; contentType: string | null; text: string }): void => {
    const template = templateOf(path);
    const operation = document.paths[template]?.[method.toLowerCase()];
    assert.ok(operation, `the document describes ${method} ${template}`);
    const described = operation.responses[String(answer.status)];
    assert.ok(described, `the document describes status ${answer.status} of ${method} ${template} (body ${answer.text.slice(0, 300)})`);
    const mediaType = (answer.contentType ?? '').split(';')[0]!.trim();
    assert.ok(described.content?.[mediaType], `the document describes ${mediaType} for ${answer.status} of ${method} ${template}`);
    const body = mediaType === 'application/json' ? JSON.parse(answer.text) : answer.text;
    const ref = `openapi.json#/${pointer('paths', template, method.toLowerCase(), 'responses', String(answer.status), 'content', mediaType, 'schema')}`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    assert.ok(validate(body), `${method} ${path} → ${answer.status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${answer.text.slice(0, 500)}`);
  };

  return { document, check };
}

/** Fetches the account's document, validates it, and returns a client checking every answer against it. */
export async function restClient(baseUrl: string, key: string): Promise<RestClient> {
  const { document, check } = await openApiChecker(baseUrl, key);
  const send = async (method: string, path: string, init: RequestInit = {}): Promise<RestAnswer> => {
    const reply = await fetch(`${baseUrl}${path}`, { ...init, method, headers: { ...tokenHeader(key), ...(init.headers as Record<string, string>) } });
    const text = await reply.text();
    const contentType = reply.headers.get('content-type');
    let exact: unknown = null;
    let json: unknown = null;
    if (contentType?.startsWith('application/json')) {
      exact = parseExact(text);
      json = JSON.parse(text);
    }
    const answer = { status: reply.status, contentType, text, exact, json };
    check(method, path, answer);
    return answer;
  };
  const withBody = (method: string) => (path: string, body: unknown, options: { raw?: string } = {}) =>
    send(method, path, { body: options.raw ?? JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

  return { document, get: (path) => send('GET', path), post: withBody('POST'), patch: withBody('PATCH'), send };
}
