import type { ArgumentRange } from '../../metadata/index.js';

/** A computed field's date argument bounded by its metadata (`range:`): the name its error gives (`as_of of payoff`) and its days. */
export interface BoundedArgument {
  readonly argument: string;
  readonly range: ArgumentRange;
}

/**
 * Why a computed field's date argument is refused, or null when the day is one its metadata's
 * `range` takes (`ArgumentRange`, both ends included; days compared as text, four-digit years).
 * GraphQL's `date` takes 0001-01-01 to 9999-12-31; a field's function may mean only some of
 * them (loanql's ledger fields: 1900–2999, as REST's `?date=`). Checked before the database: a
 * literal when planned, a variable when bound.
 */
export function argumentRangeProblem({ argument, range }: BoundedArgument, day: unknown): string | null {
  if (typeof day !== 'string' || (day >= range.from && day <= range.to)) return null;
  return `${argument}: ${day} is not ${rangeWords(range)}${range.meaning === null ? '' : `, ${range.meaning}`}`;
}

/** `in the years 1900–2999` for whole years, else `from 2020-03-01 to 2020-06-30`. */
function rangeWords({ from, to }: ArgumentRange): string {
  if (!from.endsWith('-01-01') || !to.endsWith('-12-31')) return `from ${from} to ${to}`;
  const [first, last] = [from.slice(0, 4), to.slice(0, 4)];
  return first === last ? `in the year ${first}` : `in the years ${first}–${last}`;
}
