import { randomUUID } from 'node:crypto';
import { queryInOrder, queryThenCommit, queryWrite, StatementFailed, type Database, type Queryable, type Statement } from '../../db/index.js';
import type { Param } from '../sql/fragment.js';
import { guardCheck, oneStatementText, type StatementGuard } from '../sql/statementGuard.js';
import type { EngineContext } from './engineOptions.js';
import { GuardFailed, RequestError, rethrowClientError } from './errors.js';
import type { PreparedRequest } from './prepareRequest.js';
import { classifyWriteError } from './writeErrors.js';
import type { ErrorCode } from '../errorCode.js';

export interface MutationRunOptions {
  /** Checked after the writes, in their round trip: when it fails, `GuardFailed` is thrown and the caller's transaction must be rolled back. */
  readonly guard?: StatementGuard | undefined;
  /** The response statement commits `tx` (`queryThenCommit`) — only for a caller that runs nothing on `tx` afterwards. */
  readonly endsTransaction?: boolean;
}

/**
 * Runs a prepared mutation on `tx`, an open transaction: its write statements in order, then
 * the SELECT that builds the response over the rows they wrote (so `returning` shows the
 * state after every write of the request, trigger effects included). Returns the response
 * text; a client's mistake throws `RequestError`, and the caller's transaction is then undone.
 */
export async function runMutation(engine: EngineContext, tx: Queryable, prepared: Extract<PreparedRequest, { kind: 'mutation' }>, { guard, endsTransaction = false }: MutationRunOptions = {}): Promise<string> {
  const newIds = new Map<number, string>();
  const results: { ids: string; count: number; json: string | null }[] = [];
  const value = (param: Param): unknown => {
    switch (param.kind) {
      case 'newId': {
        let id = newIds.get(param.slot);
        if (!id) newIds.set(param.slot, (id = randomUUID()));
        return id;
      }
      case 'stepResult':
        return results[param.step]![param.output];
      default:
        return prepared.bind(param);
    }
  };
  const { steps, response } = prepared.program;
  const options = { reusable: prepared.reusable };
  const statementOf = (index: number): Statement => ({ text: steps[index]!.statement.text, values: steps[index]!.statement.params.map(value), options });
  const record = (index: number, row: Record<string, unknown>): void => {
    const step = steps[index]!;
    if (Number(row['violations'] ?? 0) > 0) throw permissionError(step.alias, step.collection.name, Number(row['violations']));
    results.push({ ids: (row['ids'] as string | null | undefined) ?? '[]', count: Number(row['count']), json: (row['json'] as string | null | undefined) ?? null });
  };
  const writeFailed = (index: number, error: unknown): never => {
    const clientError = classifyWriteError(error, steps[index]!, engine.metadata, engine.catalogue);
    // The database's error stays its cause: the transaction's owner runs a conflict again (`retryWriteConflicts`).
    if (clientError) throw new RequestError([clientError], 'execution', error);
    return rethrowClientError(error);
  };
  // One round trip (where the adapter can: `queryInOrder`) for the writes that need nothing
  // of an earlier write's result, then the guard — after the writes, so a write of a key
  // deactivated meanwhile is rolled back — then each dependent write, then the response with
  // the COMMIT (`queryThenCommit`): two round trips for most mutations.
  let leading = 0;
  while (leading < steps.length && !steps[leading]!.statement.params.some((param) => param.kind === 'stepResult')) leading += 1;
  // Before the first write, in the same round trip: the tables the writes touch, told to the
  // database (migration 0071), which takes the locks that keep them from crossing another transaction's.
  const { announce } = prepared.program;
  const before = announce ? 1 : 0;
  const first = [...(announce ? [{ text: announce.text, values: announce.params.map(value), options }] : []), ...Array.from({ length: leading }, (_, index) => statementOf(index))];
  if (guard) first.push({ ...guardCheck(guard), options });
  let firstResults;
  try {
    firstResults = await queryInOrder(tx, first);
  } catch (error) {
    if (!(error instanceof StatementFailed)) throw error;
    if (error.index >= before && error.index < before + leading) writeFailed(error.index - before, error.cause);
    throw error.cause;
  }
  for (let index = 0; index < leading; index++) record(index, firstResults[before + index]!.rows[0]!);
  if (guard && firstResults[before + leading]!.rows[0]?.['holds'] !== true) throw new GuardFailed();
  for (let index = leading; index < steps.length; index++) {
    const statement = statementOf(index);
    const { rows } = await tx.query(statement.text, statement.values, options).catch((error: unknown) => writeFailed(index, error));
    record(index, rows[0]!);
  }
  let rows: Record<string, unknown>[];
  try {
    const last = { text: response.text, values: response.params.map(value), options };
    ({ rows } = endsTransaction ? await queryThenCommit(tx, last) : await tx.query(last.text, last.values, options));
  } catch (error) {
    return rethrowClientError(error);
  }
  return rows[0]!['response'] as string;
}

/** SQLSTATE of `loanql_assert` (migration 0041): a guard or a role's `check` of a one-statement mutation failed. */
const ASSERTION_FAILED = 'LQ001';

/**
 * Runs a prepared mutation that has a one-statement form (`CompiledMutation.single`) as that one
 * statement on `db`, in autocommit where writes go (`queryWrite`: the primary, with replicas): one round trip, no BEGIN or COMMIT. The guard and the role's
 * `check` are asserted in the statement, so a failing one writes nothing; the answers are the
 * two-statement form's (`GuardFailed`, `permission-error`, a write error as `classifyWriteError`
 * names it). Returns the response text.
 */
export async function runOneStatement(engine: EngineContext, db: Database, prepared: Extract<PreparedRequest, { kind: 'mutation' }>, guard: StatementGuard | undefined): Promise<string> {
  const single = prepared.program.single!;
  const step = prepared.program.steps[0]!;
  const newIds = new Map<number, string>();
  const values = single.params.map((param) => {
    if (param.kind !== 'newId') return prepared.bind(param);
    let id = newIds.get(param.slot);
    if (!id) newIds.set(param.slot, (id = randomUUID()));
    return id;
  });
  let text = single.text;
  if (guard) {
    const guarded = oneStatementText(single, values.length, guard);
    text = guarded.text;
    values.push(...guarded.values);
  }
  try {
    // Undone as a deadlock or serialization failure, the statement runs again (the database's `query`).
    const { rows } = await queryWrite(db, text, values, { reusable: prepared.reusable });
    return rows[0]!['response'] as string;
  } catch (error) {
    if ((error as { code?: unknown }).code === ASSERTION_FAILED) {
      const reason = (error as Error).message;
      if (reason === 'guard') throw new GuardFailed();
      if (reason.startsWith('check ')) throw permissionError(step.alias, step.collection.name, Number(reason.slice('check '.length)));
    }
    const clientError = classifyWriteError(error, step, engine.metadata, engine.catalogue);
    if (clientError) throw new RequestError([clientError], 'execution', error);
    return rethrowClientError(error);
  }
}

/** A row written by a mutation fails the role's `check`: nothing of the request is written. */
function permissionError(alias: string, collection: string, rows: number): RequestError {
  const message = `${alias}: ${rows === 1 ? 'a row' : `${rows} rows`} of ${collection} would fall outside what this key's role may write (its check); nothing was written`;
  return new RequestError([{ message, path: [alias], extensions: { code: 'permission-error' satisfies ErrorCode } }], 'execution');
}
