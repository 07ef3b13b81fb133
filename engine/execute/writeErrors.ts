import { tableKey, type Catalogue, type Collection, type Field, type Metadata } from '../../metadata/index.js';
import type { ErrorCode } from '../errorCode.js';
import { classifyDatabaseError, type ResponseError } from './errors.js';

/**
 * The GraphQL error of a failed write statement, or null when the failure is not the client's
 * (then it is internal and censored). Violations name the fields of the constraint, found in
 * the catalogue; a reference to a record that is not there — or is another account's, which the
 * composite foreign keys make the same thing — is `not-found` and says nothing more.
 */
export function classifyWriteError(
  error: unknown,
  step: { readonly alias: string; readonly collection: Collection; readonly kind: 'insert' | 'update' | 'delete'; readonly incremented?: readonly Field[] },
  metadata: Metadata,
  catalogue: Catalogue | null,
): ResponseError | null {
  const { alias, collection } = step;
  const pgError = error as { code?: unknown; constraint?: unknown; schema?: unknown; table?: unknown; column?: unknown; message?: unknown };
  const code = typeof pgError.code === 'string' ? pgError.code : '';
  const constraintName = typeof pgError.constraint === 'string' ? pgError.constraint : '';
  // The table PostgreSQL names: the written one, or for a delete's foreign-key violation the one
  // whose rows still refer to the deleted row.
  const written = typeof pgError.table === 'string' ? collectionOfTable(metadata, typeof pgError.schema === 'string' ? pgError.schema : null, pgError.table) ?? collection : collection;
  // Of the written collection's table, or of the table PostgreSQL names when no collection is
  // its (a view's table; the catalogue keys it `schema.table`).
  const reportedTable = typeof pgError.table === 'string' && typeof pgError.schema === 'string' ? `${pgError.schema}.${pgError.table}` : null;
  const constraint = catalogue?.constraints.get(tableKey(written))?.get(constraintName) ?? (reportedTable === null ? undefined : catalogue?.constraints.get(reportedTable)?.get(constraintName));
  const fields = fieldNames(written, constraint?.columns ?? (typeof pgError.column === 'string' ? [pgError.column] : []), metadata.tenantColumn);
  const named = fields.length ? fields.join(', ') : 'a field';
  const path = [alias];
  const fail = (code: ErrorCode, message: string, extra: Record<string, unknown> = {}): ResponseError => ({
    message: `${alias}: ${message}`,
    path,
    extensions: { code, ...extra },
  });
  switch (code) {
    case '23505':
      return fail('constraint-violation', `${withArticle(written.name)} record with the same ${fields.length ? fields.join(', ') : 'values'} already exists`, { fields });
    case '23503': {
      // A write that sets a reference fails because the record is not there; a delete, because
      // other records still refer to the row (decided by the statement, not PostgreSQL's words).
      if (step.kind !== 'delete') return fail('not-found', `${named}: no such record`, { fields });
      // PostgreSQL names the referring table and its columns: the deleted record is the step's.
      const referring = typeof pgError.table === 'string' && written === collection && pgError.table !== collection.table ? pgError.table : written.name;
      return fail('foreign-key-violation', `${withArticle(collection.name)} record is still referred to by ${referring} records${fields.length ? ` (their ${fields.join(', ')})` : ''}; nothing was deleted`, { fields, referred_by: referring });
    }
    case '23514': {
      // A rule a trigger checks raises its own sentence for the client (`RAISE … USING ERRCODE =
      // 'check_violation'`: "a refund of 50.00 is more than the loan's credit balance of 0.00 on
      // …"); PostgreSQL's words for a CHECK constraint name its table instead, so those get the
      // constraint's own sentence, its comment in the database (read with the catalogue).
      // A rule about the whole row (migration 0086: a loan holding money is never deleted) names no column: its sentence alone.
      if (typeof pgError.message === 'string' && pgError.message !== '' && !BUILT_IN_CHECK_MESSAGE.test(pgError.message))
        return fail('check-violation', fields.length ? `${named}: ${pgError.message}` : pgError.message, { fields, constraint: constraintName });
      const sentence = constraint?.kind === 'c' ? constraint.sentence : undefined;
      if (sentence) {
        const about = fieldNames(written, sentence.columns, metadata.tenantColumn);
        return fail('check-violation', `${about.length ? about.join(', ') : named}: ${sentence.text}`, { fields: about.length ? about : fields, constraint: constraintName });
      }
      return fail('check-violation', `${named}: the value breaks the rule ${constraintName || 'of the table'}`, { fields, constraint: constraintName });
    }
    case '23502':
      return fail('validation-failed', `${named}: a value is required`, { fields });
    case '23P01':
    case '23000':
    case '23001':
      return fail('constraint-violation', `${named}: the write breaks the rule ${constraintName}`, { fields });
    case '44000':
      // A view's WITH CHECK OPTION: the written row would not be in the view (without one,
      // PostgreSQL writes it and returning, read through the view, does not show it).
      return fail('check-violation', `the written row would not be in view ${written.schema === null ? '' : `${written.schema}.`}${written.table} (its WITH CHECK OPTION); nothing was written`);
    case '428C9':
      // A GENERATED ALWAYS identity column given a value: `metadata check` refuses such a column
      // among insert columns, so only a table altered since the check gets here.
      return fail('validation-failed', `${fields.length ? `${named}: ` : ''}the database generates this column's every value (GENERATED ALWAYS); leave it out`, { fields });
    case '21000':
      // `ON CONFLICT DO UPDATE command cannot affect row a second time`: two objects of one upsert
      // are the same row (equal in the constraint's columns). Before session 36 a 500.
      if (step.kind === 'insert')
        return fail('validation-failed', `two of the objects are the same ${collection.name} row (equal in the on_conflict constraint's columns), and an upsert writes a row once; nothing was written`);
      return classifyDatabaseError(error);
    case '40001':
    case '40P01':
      return fail('conflict', 'the write collided with a concurrent one and was undone; send it again');
    case '22003': {
      // A value past what its column holds. Every value of the input was checked against its
      // column before the database (valueChecks.ts: a numeric's digits, a whole number's bounds),
      // so it is a sum `_inc` makes or a figure the write computed from the input (a trigger's, a
      // generated column's): in PostgreSQL's words, which give the column's range ("numeric field
      // overflow: A field with precision 14, scale 2 must round to an absolute value less than
      // 10^12", "smallint out of range"). Before session 41 a write without `_inc` got loanql's
      // ledger sentence (a balance, credit or fee past 999,999,999,999.99) on any table. A collection
      // whose metadata says what such a figure means (`overflow`: loanql's payments, fees and loans,
      // whose writes replay the ledger) gets its sentence, naming its fields, as REST's 400 does.
      const words = `${typeof pgError.message === 'string' && pgError.message !== '' ? pgError.message : 'out of range'}${typeof (pgError as { detail?: unknown }).detail === 'string' ? `: ${(pgError as { detail: string }).detail.replace(/\.$/, '')}` : ''}`;
      if (step.incremented?.length) {
        const incremented = step.incremented.map((field) => field.name);
        return fail('validation-failed', `${incremented.join(', ')}: _inc makes a value its column cannot hold (${words}); nothing was written`, { fields: incremented });
      }
      if (collection.overflow) return fail('validation-failed', `${collection.overflow.fields.join(', ')}: ${collection.overflow.sentence}; nothing was written`, { fields: [...collection.overflow.fields] });
      return fail('validation-failed', `${fields.length ? `${named}: ` : ''}the write makes a value too large for its column to store (${words}); nothing was written`, { fields });
    }
    default:
      // A value PostgreSQL refuses (22xxx); a trigger's check names its column (migration 0063:
      // `custom_fields`, its message naming each key), and the answer names its field.
      if (code.startsWith('22')) return fail('validation-failed', `${typeof pgError.message === 'string' ? pgError.message : 'invalid value'}`, fields.length ? { fields } : {});
      return classifyDatabaseError(error);
  }
}

/**
 * The collection whose table PostgreSQL named (an error's `schema` and `table`): of a declared
 * schema that one, else one in the current schema (`schema` left out); tables of one name in two
 * schemas are two collections (before session 35 the first of either name was taken).
 */
function collectionOfTable(metadata: Metadata, schema: string | null, table: string): Collection | undefined {
  const named = [...metadata.collections.values()].filter((c) => c.table === table);
  return named.find((c) => schema !== null && c.schema === schema) ?? named.find((c) => c.schema === null);
}

/** PostgreSQL's own message for a row that fails a CHECK constraint (`new row for relation "t" violates check constraint "c"`, and its domain form). */
const BUILT_IN_CHECK_MESSAGE = /violates check constraint "/;

function fieldNames(collection: Collection, columns: readonly string[], tenantColumn: string): string[] {
  const names: string[] = [];
  for (const column of columns) {
    if (column === tenantColumn) continue;
    const field = [...collection.fields.values()].find((f) => f.source.kind === 'column' && f.source.column === column);
    names.push(field?.name ?? column);
  }
  return names;
}

/**
 * A collection's name after its article, as a sentence reads it: `an open_limits record`, `a loans
 * record`. By the first letter (a, e, i, o take `an`; `u` is left to `a`, as in `a users record`).
 */
function withArticle(name: string): string {
  return /^[aeio]/i.test(name) ? `an ${name}` : `a ${name}`;
}
