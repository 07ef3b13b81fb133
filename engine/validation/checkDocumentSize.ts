import { validate, type DocumentNode, type GraphQLError, type GraphQLSchema } from 'graphql';
import { DEFAULT_MAX_FIELDS, maxFieldsRule } from './maxFieldsRule.js';
import { DEFAULT_MAX_ROOT_FIELDS, maxRootFieldsRule } from './maxRootFieldsRule.js';

/** The document-size limits of a request (`EngineOptions`); absent = the default, 0 = no limit. */
export interface SizeLimits {
  readonly maxRootFields?: number;
  readonly maxFields?: number;
}

/**
 * The first size problem of a document (root fields, then fields, operation by operation), or
 * null. Run right after parsing — before the typed rewrite and graphql-js's rules (whose
 * field-merging check is quadratic in same-named fields) and planning, which take a second for
 * 10,000 aliases — and alone, so the caller refuses the document with this one error, its
 * numbers in `extensions`.
 */
export function checkDocumentSize(schema: GraphQLSchema, document: DocumentNode, limits: SizeLimits): GraphQLError | null {
  const rules = [maxRootFieldsRule(limits.maxRootFields ?? DEFAULT_MAX_ROOT_FIELDS), maxFieldsRule(limits.maxFields ?? DEFAULT_MAX_FIELDS)];
  return validate(schema, document, rules)[0] ?? null;
}
