import { GraphQLError, Kind, parse, validate, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode, type ValidationRule } from 'graphql';
import { fragmentsOf, rootFields } from '../document/foldSelections.js';
import { bareWordsAsStrings } from '../validation/bareWordsAsStrings.js';
import { checkDocumentSize, type SizeLimits } from '../validation/checkDocumentSize.js';
import { DEFAULT_MAX_FIELDS } from '../validation/maxFieldsRule.js';
import { DEFAULT_MAX_ROOT_FIELDS } from '../validation/maxRootFieldsRule.js';
import { writtenSizeRefusal } from '../validation/writtenFields.js';
import { RequestError, toResponseError, type ResponseError } from './errors.js';
import { onlyIntrospectionRootFields } from './introspection.js';
import type { CachedOperation } from './planCache.js';
import type { ErrorCode } from '../errorCode.js';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/**
 * A document's text parsed, what needs neither a schema nor a database: its fields counted on the
 * text (`writtenSizeRefusal`: MAX_ROOT_FIELDS and MAX_QUERY_FIELDS without parsing), then its
 * syntax. A problem is a `RequestError` (`query-too-expensive` or `parse-failed`), the same a
 * request gets; `loanql sql` checks its document with it before it opens the database.
 */
export function parseDocumentText(query: string, limits: SizeLimits): DocumentNode {
  // An alias bomb is refused from its text, before the parser spends tens of milliseconds on it.
  const tooLargeAsWritten = writtenSizeRefusal(query, limits.maxRootFields ?? DEFAULT_MAX_ROOT_FIELDS, limits.maxFields ?? DEFAULT_MAX_FIELDS);
  if (tooLargeAsWritten) throw new RequestError([{ message: tooLargeAsWritten.message, extensions: tooLargeAsWritten.extensions as ResponseError['extensions'] }], 'document');
  try {
    return parse(query, { maxTokens: 50_000 });
  } catch (error) {
    throw new RequestError([toResponseError(error as GraphQLError, 'parse-failed')], 'document');
  }
}

const refuse = (message: string) => new RequestError([{ message, extensions: { code: 'validation-failed' satisfies ErrorCode } }], 'document');

/**
 * The operation `operationName` picks from a parsed document (the only one when it is unset), or
 * the `validation-failed` refusal a request gets: no operation of that name, or several and no
 * name. Needs no schema: `loanql sql --operation-name` checks it before it opens the database.
 */
export function chooseOperation(document: DocumentNode, operationName: string | undefined): OperationDefinitionNode {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation) throw refuse(operationName ? `unknown operation named "${operationName}"` : 'the document has several operations: give operationName');
  return operation;
}

/**
 * A document's text made into a plan-cache entry: its fields counted on the text
 * (`writtenSizeRefusal`: MAX_ROOT_FIELDS and MAX_QUERY_FIELDS without parsing), parsed, its size checked
 * (`checkDocumentSize`), bare words read as strings, validated with `rules`, and its operation
 * chosen by `operationName`. Planning and compiling wait for the first request that runs it.
 * Every problem is the client's: `parse-failed`, `query-too-expensive` or `validation-failed`.
 */
export function loadOperation(
  schema: GraphQLSchema,
  rules: readonly ValidationRule[],
  limits: SizeLimits,
  cacheKey: string,
  query: string,
  operationName: string | undefined,
): CachedOperation {
  const parsed = parseDocumentText(query, limits);
  const tooLarge = checkDocumentSize(schema, parsed, limits);
  if (tooLarge) throw new RequestError([{ message: tooLarge.message, extensions: tooLarge.extensions as ResponseError['extensions'] }], 'document');
  const document = bareWordsAsStrings(schema, parsed);
  const errors = validate(schema, document, rules, { maxErrors: 50 });
  if (errors.length) throw new RequestError(errors.map((error) => toResponseError(error, 'validation-failed')), 'document');
  const operation = chooseOperation(document, operationName);
  // graphql-js validates a mutation against a schema without mutations; it fails only when run.
  if (operation.operation === 'mutation' && !schema.getMutationType()) throw refuse('this schema has no mutations: no field of mutation_root exists for this key (its role writes nothing)');
  const fragments = fragmentsOf(document);
  const names = rootFields(operation, fragments).map((field) => field.name.value);
  return {
    cacheKey,
    uses: 0,
    document,
    operation,
    fragments,
    compiled: undefined,
    compiledMutation: undefined,
    cost: 0,
    inParts: false,
    genericPlanSafety: null,
    derivedTexts: new Map(),
    coerceVariables: undefined,
    needsDatabase: names.some((name) => !name.startsWith('__')),
    hasIntrospection: names.some((name) => INTROSPECTION_FIELDS.has(name)),
    introspectionDocument: onlyIntrospectionRootFields(document, operation),
  };
}
