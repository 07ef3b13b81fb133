import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import { foldSelections, fragmentsOf, type SelectionFold } from '../document/foldSelections.js';
import type { ErrorCode } from '../errorCode.js';

/** Default of `MAX_QUERY_FIELDS` (README, Configuration). */
export const DEFAULT_MAX_FIELDS = 1_000;

/** Fields of a selection set, every fragment spread counted in full. */
const FIELD_COUNT: SelectionFold<number> = {
  field: (field, nested) => 1 + (field.selectionSet ? nested(field.selectionSet) : 0),
  combine: (sum, part) => sum + part,
  empty: 0,
};

/**
 * Refuses an operation that selects more fields than `limit`, every fragment spread counted in
 * full (each fragment's count worked out once, so the count is linear in the document whatever
 * it spreads): `query-too-expensive`, with `fields` and `limit`. 0 = no limit.
 */
export function maxFieldsRule(limit: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = fragmentsOf(context.getDocument());
    return {
      OperationDefinition(node) {
        if (limit <= 0) return false;
        const count = foldSelections(node.selectionSet, fragments, FIELD_COUNT);
        if (count > limit) {
          const code: ErrorCode = 'query-too-expensive';
          context.reportError(
            new GraphQLError(`the operation selects ${count > 1e15 ? 'over 10^15' : count} fields (fragments expanded), over the limit of ${limit} (MAX_QUERY_FIELDS)`, {
              extensions: { code, fields: Math.min(count, Number.MAX_SAFE_INTEGER), limit },
            }),
          );
        }
        return false;
      },
    };
  };
}
