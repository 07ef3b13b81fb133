import type { Collection, ComputedField, Field } from '../../metadata/index.js';
import type { CompileContext } from './compileContext.js';
import type { Fragment } from './fragment.js';
import { storedFormRenderer } from './renderStoredForm.js';

/** What an aggregate reads of each row: a field, or a scalar computed field (`sum { payoff }`). */
export type AggregatedValue = Field | ComputedField;

/** Whether an aggregated value is a computed field (its function, or its stored form), not a field of the row. */
export const isComputedValue = (value: AggregatedValue): value is ComputedField => !('source' in value);

/**
 * The value of a row an aggregate reads — in an `_aggregate` field and in an `order_by` on an
 * array relationship's aggregate alike: a field, a computed field's stored form when it has one
 * (no call per row), else its function with the arguments' defaults.
 */
export function aggregatedValueRenderer(context: Pick<CompileContext, 'param' | 'fieldValue' | 'computedCall'>) {
  const { fieldValue, computedCall } = context;
  const { storedValue } = storedFormRenderer(context);
  return (collection: Collection, table: Fragment, value: AggregatedValue): Fragment => {
    if (!isComputedValue(value)) return fieldValue(table, value);
    return value.storedForm ? storedValue(value, table) : computedCall(collection, value, table);
  };
}
