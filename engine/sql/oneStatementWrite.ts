import { tableKey, type Collection, type Metadata, type RowFilter } from '../../metadata/index.js';
import type { Selection } from '../plan/ir.js';
import type { MutationOutput } from '../plan/mutationIr.js';
import type { Param } from '../plan/params.js';
import { render, sql, type Fragment } from './fragment.js';

// The one-statement form of a mutation (engine/README.md, "Writes in one statement"): built by
// compileMutation beside the two-statement form while the mutation stays eligible.

/**
 * A mutation as one statement: `WITH _w AS (UPDATE|INSERT|DELETE … RETURNING …) SELECT CASE WHEN
 * <guard and check hold> THEN <response> END AS "response"`. A guard (`statementGuard.ts`,
 * `oneStatementText`) goes between `head` and `tail`, its parameters after `params`; without one
 * the statement is `text`. The role's `check` and the guard are `loanql_assert` calls (migration
 * 0041), which fail the statement — autocommit then keeps nothing — with SQLSTATE LQ001.
 */
export interface OneStatement {
  readonly head: string;
  readonly tail: string;
  /** `head` + `tail`: the statement without a guard. */
  readonly text: string;
  readonly params: readonly Param[];
}

/** A write step as a data-modifying CTE for the one-statement form: its name, and whether it has the `ok` column of a role's `check`. */
export interface WriteCte {
  readonly cte: Fragment;
  readonly written: Fragment;
  readonly checked: boolean;
  /** The order `returning` lists the rows in: by key (updates), or as the write returned them (inserts). */
  readonly order: 'key' | 'returned';
}

/**
 * The one statement of a mutation whose one write is `write`: the guard's place between `head` and
 * `tail` (`OneStatement`), then the role's `check` over the written rows, then the response.
 */
export function oneStatement(write: { readonly cte: Fragment; readonly written: Fragment; readonly checked: boolean }, data: Fragment): OneStatement {
  const head = sql`WITH ${write.cte} SELECT CASE WHEN `;
  const failing = sql.ident('loanql_failing');
  const check = write.checked ? sql`loanql_assert(${failing}.${failing} = 0, 'check ' || ${failing}.${failing})` : sql`true`;
  const from = write.checked ? sql` FROM (SELECT count(*) FILTER (WHERE NOT ${write.written}.${sql.ident('ok')}) FROM ${write.written}) AS ${failing} (${failing})` : sql``;
  // Rendered whole (the account and equal constants bound once); parameters are numbered in the
  // order they appear, so the text of `head` rendered alone is where the whole text starts.
  const whole = render(sql`${head}${check} THEN concat('{"data":', ${data}, '}') END AS ${sql.ident('response')}${from}`);
  const headText = render(head).text;
  if (!whole.text.startsWith(headText)) throw new Error('compileMutation: the one statement does not start with its head');
  return { head: headText, tail: whole.text.slice(headText.length), text: whole.text, params: whole.params };
}

/**
 * Whether the response of a write to `collection` reads only the written rows' own columns, as
 * the write returns them: the table's rows are final at RETURNING (`Metadata.tablesFinalAtReturning`),
 * the selection has columns only (no relationship, computed field or aggregate: those read other
 * rows, or the table after triggers ran), and the role's select filter tests the row's own columns.
 */
export function readsOnlyWrittenRows(collection: Collection, output: MutationOutput, metadata: Metadata): boolean {
  if (!metadata.tablesFinalAtReturning.has(tableKey(collection))) return false;
  if (collection.selectFilter && !testsOwnColumns(collection.selectFilter)) return false;
  const ownColumns = (selection: Selection): boolean => selection.every((item) => item.kind === 'column' || item.kind === 'typename');
  if (output.kind === 'one') return ownColumns(output.selection);
  return output.items.every((item) => item.kind !== 'returning' || ownColumns(item.selection));
}

/** A role filter that reads nothing but the row's own columns (no relationship, `_exists`, computed field or aggregate). */
function testsOwnColumns(filter: RowFilter): boolean {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.items.every(testsOwnColumns);
    case 'not':
      return testsOwnColumns(filter.item);
    case 'cast':
      return testsOwnColumns(filter.where);
    case 'compare':
    case 'in':
    case 'isNull':
    case 'jsonb':
    case 'arrayContainment':
    case 'columns':
      return true;
    default:
      return false;
  }
}
