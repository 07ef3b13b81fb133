import { execute as executeGraphQL, Kind, type DocumentNode, type GraphQLError, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { RequestError, toResponseError } from './errors.js';

/** graphql-js's answer to the introspection root fields of a request that also reads data. */
export interface IntrospectionPart {
  readonly data: Readonly<Record<string, unknown>>;
  /** The response's root keys in document order, data and introspection alike. */
  readonly order: readonly string[];
}

/**
 * A copy of the document whose operation keeps only root fields starting with `__`, so data
 * fields (which have no resolvers) cannot null out the introspection answer.
 */
export function onlyIntrospectionRootFields(document: DocumentNode, operation: OperationDefinitionNode): DocumentNode {
  const selections = operation.selectionSet.selections.filter((selection) => selection.kind !== Kind.FIELD || selection.name.value.startsWith('__'));
  const trimmed: OperationDefinitionNode = { ...operation, selectionSet: { ...operation.selectionSet, selections } };
  return { ...document, definitions: document.definitions.map((definition) => (definition === operation ? trimmed : definition)) };
}

/**
 * Runs the introspection part of a request with graphql-js (`__schema`, `__type`, `__typename`
 * need no database). A request with nothing else is answered by it whole, and its errors are
 * the client's (`validation-failed`); beside data fields, its errors are left out, as graphql-js
 * answers only what it can.
 */
export function answerIntrospection(
  schema: GraphQLSchema,
  introspectionDocument: DocumentNode,
  operationName: string | undefined,
  variables: Readonly<Record<string, unknown>> | undefined,
  { whole }: { readonly whole: boolean },
): Readonly<Record<string, unknown>> | null {
  const result = executeGraphQL({ schema, document: introspectionDocument, operationName, variableValues: variables ?? {} }) as {
    data?: Record<string, unknown> | null;
    errors?: readonly GraphQLError[];
  };
  if (whole && result.errors?.length) throw new RequestError(result.errors.map((error) => toResponseError(error, 'validation-failed')), 'execution');
  return result.data ?? null;
}

/** Rare path: a request mixing introspection and data. Merge in the document's key order. */
export function mergeIntrospection(text: string, introspection: IntrospectionPart): string {
  const response = JSON.parse(text) as { data: Record<string, unknown> };
  const data: Record<string, unknown> = {};
  for (const key of introspection.order) data[key] = key in response.data ? response.data[key] : introspection.data[key];
  return JSON.stringify({ data });
}
