import type { Database, QueryOptions } from '../../db/index.js';
import { guardCheck, guardedStatement, type StatementGuard } from '../sql/statementGuard.js';
import { GuardFailed, rethrowClientError } from './errors.js';
import { inParts, PARTS_FROM_LENGTH } from '../sql/inParts.js';
import { mergeIntrospection } from './introspection.js';
import type { CachedOperation } from './planCache.js';
import type { PreparedRequest } from './prepareRequest.js';
import { guardHolds } from './guardHolds.js';

/**
 * Runs a prepared query (or answers a static one) and hands the response text to `write`: in one
 * piece, or — for an operation whose response has once been longer than `PARTS_FROM_LENGTH` —
 * in parts as they arrive (`inParts.ts`). With a guard, the guard is checked in the same
 * statement (no extra round trip; a static answer pays one small statement for it), and
 * `GuardFailed` is thrown, nothing written, when it does not hold.
 */
export async function runQuery(
  db: Database,
  prepared: Exclude<PreparedRequest, { kind: 'mutation' }>,
  operation: CachedOperation,
  guard: StatementGuard | undefined,
  write: (piece: string) => void,
): Promise<void> {
  if (prepared.kind === 'static') {
    if (guard && !(await guardHolds(db, guard))) throw new GuardFailed();
    write(prepared.body);
    return;
  }
  // Texts derived from a cached plan's statement are built once per operation, so a request
  // sends the very same string (node-postgres names prepared statements by their text).
  const derive = (kind: string, build: () => string): string => (prepared.reusable ? (operation.derivedTexts.get(kind) ?? remember(operation.derivedTexts, kind, build())) : build());
  let text = prepared.text;
  let values = prepared.values;
  let guardName = '';
  if (guard) {
    // The guard alone, from $1: its text names the statements made with it, its values are bound after the statement's.
    const alone = guardCheck(guard);
    guardName = alone.text;
    text = derive(kindsOf(guardName).guard, () => guardedStatement(prepared.text, prepared.values.length, guard));
    values = [...prepared.values, ...alone.values];
  }
  if (operation.inParts && !prepared.introspection) {
    if (!(await runInParts(db, derive(kindsOf(guardName).parts, () => inParts(text)), values, prepared.reusable, write))) throw new GuardFailed();
    return;
  }
  // The guard's values (the account, the key's id) do not choose a plan either.
  const genericPlanSafe = prepared.reusable ? operation.genericPlanSafety : null;
  // In place rather than a function of its own: an async layer less a request.
  let response: string | null;
  try {
    response = (await db.query<{ response: string | null }>(text, values, genericPlanSafe ? { reusable: true, genericPlanSafe } : prepared.reusable ? REUSABLE : ONCE)).rows[0]!.response;
  } catch (error) {
    rethrowClientError(error);
  }
  // Only a guard makes the statement answer NULL.
  if (response === null) throw new GuardFailed();
  if (response.length > PARTS_FROM_LENGTH) operation.inParts = true;
  write(prepared.introspection ? mergeIntrospection(response, prepared.introspection) : response);
}

/**
 * The `derivedTexts` names of a guard's statements (`guard …`, `parts …`), made once per guard
 * text (one per kind of guard, the same for every caller): a name concatenated per request would
 * be a new string to hash on every lookup.
 */
function kindsOf(guardName: string): { readonly guard: string; readonly parts: string } {
  let kinds = KINDS.get(guardName);
  if (!kinds) KINDS.set(guardName, (kinds = { guard: `guard ${guardName}`, parts: `parts ${guardName}` }));
  return kinds;
}

const KINDS = new Map<string, { readonly guard: string; readonly parts: string }>([['', { guard: 'guard ', parts: 'parts ' }]]);

function remember(texts: Map<string, string>, kind: string, text: string): string {
  texts.set(kind, text);
  return text;
}

/** Runs a statement in parts (`inParts.ts`), writing each as it arrives; false when the response is NULL. */
async function runInParts(db: Database, partsText: string, values: readonly unknown[], reusable: boolean, write: (piece: string) => void): Promise<boolean> {
  let written = false;
  const writePart = (row: { part: string }): void => {
    written = true;
    write(row.part);
  };
  try {
    return (await db.each(partsText, values, writePart, { reusable })) > 0;
  } catch (error) {
    // Past the first part the response is half sent: no longer a client's mistake to report.
    if (written) throw error;
    return rethrowClientError(error);
  }
}

const REUSABLE: QueryOptions = Object.freeze({ reusable: true });
const ONCE: QueryOptions = Object.freeze({ reusable: false });
