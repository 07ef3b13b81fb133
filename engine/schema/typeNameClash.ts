import { MetadataError, type Metadata } from '../../metadata/index.js';

const DUPLICATE_TYPE = /^Schema must contain uniquely named types but contains multiple types named "([^"]+)"\.$/;

/**
 * graphql-js's refusal of a schema with two types of one name, as the metadata mistake it is:
 * a collection whose key (its GraphQL name) is a type another collection generates
 * (`collateral_bool_exp` beside `collateral`) or one every schema has (`String`, `query_root`,
 * `numeric_comparison_exp`, `order_by`). Null for any other error. Before, `metadata check` exited
 * 1 with graphql-js's words alone, naming no collection (a reload was refused with them).
 */
export function typeNameClash(error: unknown, metadata: Metadata): MetadataError | null {
  const match = error instanceof Error ? DUPLICATE_TYPE.exec(error.message) : null;
  if (!match) return null;
  const type = match[1]!;
  const names = [...metadata.collections.keys(), ...metadata.functions.keys()];
  const named = names.filter((name) => name === type);
  const makers = names.filter((name) => name !== type && type.startsWith(`${name}_`));
  const owner = named.length ? `collection ${named[0]}` : `the GraphQL type ${type}`;
  const other = makers.length ? `a type that ${makers.map((name) => `${metadata.collections.has(name) ? 'collection' : 'function'} ${name}`).join(' or ')} generates` : "one of the schema's own types (scalars, their comparisons, order_by, the roots)";
  return new MetadataError([`${owner}: its GraphQL type ${type} is also ${other}; rename the collection (its key is its GraphQL name)`]);
}
