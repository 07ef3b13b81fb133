import { GraphQLError, Kind, type ASTNode, type ASTVisitor, type OperationDefinitionNode, type ValidationContext } from 'graphql';
import type { ErrorCode } from '../errorCode.js';

/**
 * PostgreSQL's text cannot hold U+0000 (NUL): a string carrying it would fail in the database.
 * The engine refuses it before planning, wherever a request can write a string — literals in the
 * document (this rule) and variable values (`variablesWithNul`) — with an error that names the
 * argument or variable and points at it.
 */
const NUL = '\u0000';
const PROBLEM = 'contains a NUL character (\\u0000), which PostgreSQL text cannot hold';

/** Validation rule: no string literal (arguments, input fields, defaults) holds a NUL. */
export function noNulCharactersRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node, _key, parent, _path, ancestors) {
      if (!node.value.includes(NUL)) return;
      const lineage = parent && !Array.isArray(parent) ? [...ancestors, parent as ASTNode] : ancestors;
      context.reportError(new GraphQLError(`String value at ${pathOf(lineage)} ${PROBLEM}`, { nodes: node, extensions: { code: 'validation-failed' satisfies ErrorCode } }));
    },
  };
}

/** The argument and input-field names leading to a literal: `where.name._eq`. */
function pathOf(ancestors: readonly (ASTNode | readonly ASTNode[])[]): string {
  const names: string[] = [];
  for (const ancestor of ancestors) {
    if (Array.isArray(ancestor)) continue;
    const node = ancestor as ASTNode;
    if (node.kind === Kind.ARGUMENT || node.kind === Kind.OBJECT_FIELD) names.push(node.name.value);
    else if (node.kind === Kind.VARIABLE_DEFINITION) names.push(`$${node.variable.name.value}`);
    else if (node.kind === Kind.FIELD) names.length = 0, names.push(node.alias?.value ?? node.name.value);
  }
  return names.join('.') || 'the document';
}

/**
 * The operation's variables whose values hold a NUL in any string or object key, as errors
 * located at the variable's definition. Only declared variables are looked at (others are
 * ignored by GraphQL anyway); `variables` is the request's raw JSON.
 */
export function variablesWithNul(operation: OperationDefinitionNode, variables: ReadonlyMap<string, unknown>): GraphQLError[] {
  const errors: GraphQLError[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const where = nulPath(variables.get(name), name);
    if (where !== null) errors.push(new GraphQLError(`Variable "$${name}" ${PROBLEM} (at ${where})`, { nodes: definition, extensions: { code: 'validation-failed' satisfies ErrorCode } }));
  }
  return errors;
}

/**
 * Where in a JSON value the first NUL is (`n.list[2].key`), or null. Iterative, and paths are
 * built only for a find: JSON may nest deeper than the call stack.
 */
function nulPath(root: unknown, rootName: string): string | null {
  interface Step {
    readonly value: unknown;
    readonly segment: string;
    readonly parent: Step | null;
  }
  const pathOfStep = (step: Step | null): string => {
    const segments: string[] = [];
    for (let at = step; at; at = at.parent) segments.push(at.segment);
    return segments.reverse().join('');
  };
  const pending: Step[] = [{ value: root, segment: rootName, parent: null }];
  while (pending.length) {
    const step = pending.pop()!;
    const { value } = step;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return pathOfStep(step);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], segment: `[${i}]`, parent: step });
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key.includes(NUL)) return `${pathOfStep(step)}.${key.replace(/\u0000/g, '\\u0000')}`;
        pending.push({ value: inner, segment: `.${key}`, parent: step });
      }
    }
  }
  return null;
}
