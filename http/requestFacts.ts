import type { ServerResponse } from 'node:http';
import { newEngineFacts, type EngineFacts } from '../engine/index.js';

/**
 * What the routes note about one request for its metrics, log line and trace (issue 35): who
 * asked (the key's visible prefix and its role, never the key) and what the engine said of it.
 * The server attaches it to the response when anything observes requests (`server/observeRequests.ts`);
 * otherwise `factsOf` is undefined and the routes note nothing.
 */
export interface RequestFacts {
  /** The request's id: the client's `X-Request-Id` when it is a plain token, else a new UUID. */
  readonly id: string;
  keyPrefix: string | null;
  role: string | null;
  /** The caller's account (for its own figures on the dashboard's operations page; never logged nor a label). */
  accountId: string | null;
  /** The engine's facts (`GraphEngine.respond`), for a GraphQL request. */
  readonly engine: EngineFacts;
}

const FACTS = Symbol('loanql.requestFacts');
type WithFacts = ServerResponse & { [FACTS]?: RequestFacts };

/** Attaches new facts to a response; the server does this as a request arrives. */
export function attachFacts(res: ServerResponse, id: string): RequestFacts {
  const facts: RequestFacts = { id, keyPrefix: null, role: null, accountId: null, engine: newEngineFacts() };
  (res as WithFacts)[FACTS] = facts;
  return facts;
}

/** The facts of a request, when something observes requests. */
export function factsOf(res: ServerResponse): RequestFacts | undefined {
  return (res as WithFacts)[FACTS];
}

/** Notes the caller: the key's visible prefix and its role (a dashboard session: its role, no prefix). */
export function noteCaller(res: ServerResponse, caller: { readonly prefix?: string; readonly role: string; readonly accountId: string }): void {
  const facts = (res as WithFacts)[FACTS];
  if (!facts) return;
  facts.keyPrefix = caller.prefix ?? null;
  facts.role = caller.role;
  facts.accountId = caller.accountId;
}
