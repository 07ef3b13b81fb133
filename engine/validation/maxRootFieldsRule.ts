import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import { fragmentsOf, rootFields } from '../document/foldSelections.js';
import type { ErrorCode } from '../errorCode.js';

/** Default of `MAX_ROOT_FIELDS` (README, Configuration). */
export const DEFAULT_MAX_ROOT_FIELDS = 50;

/**
 * Refuses an operation with more root fields than `limit` (fragments followed, each once;
 * introspection fields not counted): `query-too-expensive`, with `rootFields` and `limit`. Run
 * right after parsing, alone (see `sizeRules`). 0 = no limit.
 */
export function maxRootFieldsRule(limit: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = fragmentsOf(context.getDocument());
    return {
      OperationDefinition(node) {
        if (limit <= 0) return false;
        const count = rootFields(node, fragments).filter((field) => !field.name.value.startsWith('__')).length;
        if (count > limit) {
          const code: ErrorCode = 'query-too-expensive';
          context.reportError(
            new GraphQLError(`the operation has ${count} root fields, over the limit of ${limit} (MAX_ROOT_FIELDS): split it into several requests`, {
              extensions: { code, rootFields: count, limit },
            }),
          );
        }
        return false;
      },
    };
  };
}
