/**
 * A key's statement guard, apart from `apiKeys.ts`: the one part of an API key that needs the
 * engine. The CLI's key commands load `apiKeys.ts`, and loading the engine with it (GraphQL, the
 * metadata's parser and validator) cost each `loanql key …` about a third of its CPU.
 */
import type { AuthenticatedKey } from './apiKeys.js';
import { statementGuard, type StatementGuard } from '../engine/index.js';

/**
 * The condition "this key is still active (and its account exists)", for the engine to check
 * inside the request's own statement (see `VerifiedKeyCache`): a fragment whose account and key
 * are bound parameters, so every key's requests share one statement text.
 */
export function activeKeyGuard(key: AuthenticatedKey): StatementGuard {
  let guard = KEY_GUARDS.get(key);
  if (!guard) KEY_GUARDS.set(key, (guard = statementGuard`EXISTS (SELECT 1 FROM api_keys WHERE account_id = ${key.accountId} AND id = ${key.keyId} AND active)`));
  return guard;
}

/** Each key's guard, made once: a known key (`VerifiedKeyCache`) is the same object on every request, and its guard renders once (`statementGuard.ts`). */
const KEY_GUARDS = new WeakMap<AuthenticatedKey, StatementGuard>();
