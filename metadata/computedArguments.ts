import { isCalendarDay } from '../domain/calendar.js';
import type { ComputedArgumentDocument } from './document.js';
import type { ArgumentRange, ScalarType } from './model.js';

/**
 * A computed field's `args:` as written → each argument's type, and the ranges some declare
 * (`as_of: {type: date, range: {from: "1900-01-01", to: "2999-12-31", meaning: "…"}}`). A range is
 * of a date argument, from a real day to a real day not before it; anything else is a problem
 * named by `where` (`collection loans, computed field payoff`) and the argument.
 */
export function computedArguments(
  where: string,
  written: Readonly<Record<string, ScalarType | ComputedArgumentDocument>> | undefined,
  problems: string[],
): { args: Map<string, ScalarType>; argumentRanges: Map<string, ArgumentRange> } {
  const args = new Map<string, ScalarType>();
  const argumentRanges = new Map<string, ArgumentRange>();
  for (const [name, spec] of Object.entries(written ?? {})) {
    if (typeof spec === 'string') {
      args.set(name, spec);
      continue;
    }
    args.set(name, spec.type);
    if (!spec.range) continue;
    const at = `${where}, argument ${name}`;
    const { from, to, meaning } = spec.range;
    if (spec.type !== 'date') problems.push(`${at}: a range is of a date argument, not ${spec.type}`);
    else if (!isCalendarDay(from) || !isCalendarDay(to)) problems.push(`${at}: range from ${from} to ${to}: each end is a day written YYYY-MM-DD`);
    else if (from > to) problems.push(`${at}: range from ${from} to ${to} holds no day (from is after to)`);
    else argumentRanges.set(name, { from, to, meaning: meaning ?? null });
  }
  return { args, argumentRanges };
}

