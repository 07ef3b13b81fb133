import { constants, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * The metadata file an admin edits (`metadata/loanql.yaml`) is local state, like `./data`: it is
 * not in git, and the service or the CLI creates it from the shipped default
 * (`metadata/loanql.default.yaml`, which the tests read) the first time it is needed. So an
 * edit never shows up as a change to the project, and `npm test` never sees it.
 *
 * Returns whether the file was created now.
 */
export function ensureMetadataFile(path: string, shippedPath: string): boolean {
  if (existsSync(path)) return false;
  try {
    copyFileSync(shippedPath, path, constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    // Another process created it first.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The sections whose entries a newer shipped default may add (issues 15 and 16; collections: `remittances`, session 34). */
const GROWING_SECTIONS = ['collections', 'roles', 'event_types'] as const;

/**
 * What the shipped default defines that the admin's file does not, per section (`collections`,
 * `roles`, `event_types`): a file created from an older default lacks the collections, roles and
 * event types added since, and nothing else would say so (no `remittances` in the schema, a key
 * of the `investor` role cannot be created, an endpoint gets no `payment.posted`), and the relationships a shipped event type's payload names that the
 * file's same event type lacks (`event type payload relationships`: `payment.posted allocations`).
 * Names only, in the shipped file's order; empty when nothing
 * is missing or either file cannot be read as YAML (loading the file reports that properly).
 */
export function shippedEntriesMissing(path: string, shippedPath: string): { section: string; names: string[] }[] {
  let mine: unknown;
  let shipped: unknown;
  try {
    const mineText = readFileSync(path, 'utf8');
    const shippedText = readFileSync(shippedPath, 'utf8');
    // The file as created from this default (the usual case): nothing can be missing, and the two
    // parses are skipped (~40 ms each at a start, the YAML parser's code not yet optimised).
    if (mineText === shippedText) return [];
    mine = parse(mineText);
    shipped = parse(shippedText);
  } catch {
    return [];
  }
  const namesOf = (document: unknown, section: string): string[] => {
    if (!document || typeof document !== 'object') return [];
    const value = new Map(Object.entries(document)).get(section);
    return value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
  };
  const missing: { section: string; names: string[] }[] = [];
  for (const section of GROWING_SECTIONS) {
    const have = new Set(namesOf(mine, section));
    const names = namesOf(shipped, section).filter((name) => !have.has(name));
    if (names.length) missing.push({ section, names });
  }
  // A shipped event type may grow relationships in its payload (issue 29: payment.posted's
  // allocation); an older copy of it then lacks them. Only the `{relationship: …}` form is
  // compared: a bare name may be a field, which the copy's default payload already holds.
  const payloadOf = (document: unknown, name: string): unknown[] => {
    const types = document && typeof document === 'object' ? new Map(Object.entries(document)).get('event_types') : undefined;
    const eventType: unknown = types && typeof types === 'object' ? new Map(Object.entries(types)).get(name) : undefined;
    const payload: unknown = eventType && typeof eventType === 'object' ? new Map(Object.entries(eventType)).get('payload') : undefined;
    return Array.isArray(payload) ? payload : [];
  };
  const keysOf = (entry: unknown): string[] => (typeof entry === 'string' ? [entry] : entry && typeof entry === 'object' ? Object.keys(entry) : []);
  const payloads: string[] = [];
  const mineTypes = new Set(namesOf(mine, 'event_types'));
  for (const name of namesOf(shipped, 'event_types').filter((type) => mineTypes.has(type))) {
    const have = new Set(payloadOf(mine, name).flatMap(keysOf));
    const relationships = payloadOf(shipped, name).filter((entry) => typeof entry !== 'string').flatMap(keysOf);
    for (const key of relationships) if (!have.has(key)) payloads.push(`${name} ${key}`);
  }
  if (payloads.length) missing.push({ section: 'event type payload relationships', names: payloads });
  // A shipped collection may grow checks its older copy lacks: a computed field argument's range
  // (a day outside it is refused before the database) and the collection's overflow sentence.
  const at = (value: unknown, ...path: string[]): unknown => {
    for (const key of path) value = value && typeof value === 'object' && !Array.isArray(value) ? new Map(Object.entries(value)).get(key) : undefined;
    return value;
  };
  const hasRange = (argument: unknown): boolean => at(argument, 'range') !== undefined;
  const ranges: string[] = [];
  const overflows: string[] = [];
  const mineCollections = new Set(namesOf(mine, 'collections'));
  for (const collection of namesOf(shipped, 'collections').filter((name) => mineCollections.has(name))) {
    if (at(shipped, 'collections', collection, 'overflow') !== undefined && at(mine, 'collections', collection, 'overflow') === undefined) overflows.push(collection);
    const fields = at(shipped, 'collections', collection, 'computed_fields');
    for (const field of fields && typeof fields === 'object' ? Object.keys(fields) : []) {
      const mineArgs = at(mine, 'collections', collection, 'computed_fields', field, 'args');
      if (mineArgs === undefined) continue;
      const args = at(fields, field, 'args');
      for (const argument of args && typeof args === 'object' ? Object.keys(args) : []) {
        const mineArgument = at(mineArgs, argument);
        if (hasRange(at(args, argument)) && mineArgument !== undefined && !hasRange(mineArgument)) ranges.push(`${collection}.${field} ${argument}`);
      }
    }
  }
  if (ranges.length) missing.push({ section: 'computed field argument ranges', names: ranges });
  if (overflows.length) missing.push({ section: 'collection overflow sentences', names: overflows });
  return missing;
}
