import type { ComputedField, StoredForm, StoredFormOperator } from '../../metadata/index.js';
import type { OrderDirection } from '../schema/buildSchema.js';
import type { Param } from '../plan/params.js';
import type { CompileContext } from './compileContext.js';
import { sql, type Fragment } from './fragment.js';
import { OPERATOR } from './sqlTables.js';

const ACCOUNT = sql.param({ kind: 'account' });

/** The most days a comparison turns into a range of the date column: today − 1,000,000 days (~2,700 years) is still a date. */
const INDEXED_DAYS = 1_000_000;

/**
 * A computed field called without arguments, through its stored form
 * (`ComputedField.storedForm`, metadata/README.md): its value, a comparison with it and an order
 * on it, written so that PostgreSQL can answer the comparison and the order from an index on
 * (tenant, column).
 *
 * `daysSince` (x the date column, T = today(account)): the value is T − x when x < T, else 0
 * (x null: 0). A comparison with a number written in the document becomes a range of x —
 * `v >= n` is `x <= T − n` for n > 0 and true for n ≤ 0, and so on — and `v` is never null. A
 * comparison with a variable, or with a number beyond `INDEXED_DAYS`, compares the value itself
 * (exact, not through the index: the shape would depend on the variable's sign). Ordering by v ascending is x descending with nulls first
 * (v's ties, 0, are then in x's order, before the primary key).
 */
export function storedFormRenderer({ param }: Pick<CompileContext, 'param'>) {
  const today = (form: StoredForm): Fragment => sql`${sql.ident(form.today)}(${ACCOUNT})`;
  const column = (form: StoredForm, table: Fragment): Fragment => sql`${table}.${sql.ident(form.column)}`;

  function storedValue(field: ComputedField, table: Fragment): Fragment {
    const form = field.storedForm!;
    const x = column(form, table);
    return sql`(CASE WHEN ${x} < ${today(form)} THEN ${today(form)} - ${x} ELSE 0 END)`;
  }

  function storedComparison(field: ComputedField, operator: StoredFormOperator, value: Param, table: Fragment): Fragment {
    const form = field.storedForm!;
    const x = column(form, table);
    if (operator === '_is_null') {
      if (value.kind === 'const' && typeof value.value === 'boolean') return value.value ? sql`false` : sql`true`;
      return sql`(false = ${param(value, 'boolean')})`;
    }
    // A number beyond INDEXED_DAYS too: today − n would be no date PostgreSQL holds (GraphQL's Int
    // reaches 2147483647 days, some 5.9 million years), and n + 1 no integer.
    if (value.kind !== 'const' || typeof value.value !== 'number' || !Number.isSafeInteger(value.value) || Math.abs(value.value) > INDEXED_DAYS) {
      return sql`(${storedValue(field, table)} ${OPERATOR[operator]} ${param(value, 'integer')})`;
    }
    const n = value.value;
    // date − integer (the scalar `integer` is bigint in SQL, and date − bigint does not exist).
    const daysBefore = (days: number): Fragment => sql`(${today(form)} - ${sql.param({ kind: 'const', value: days })}::integer)`;
    // v >= m (m > 0) ⇔ x <= T − m; v < m (m > 0) ⇔ x is null or x > T − m.
    const atLeast = (m: number): Fragment => (m <= 0 ? sql`true` : sql`(${x} IS NOT NULL AND ${x} <= ${daysBefore(m)})`);
    const below = (m: number): Fragment => (m <= 0 ? sql`false` : sql`(${x} IS NULL OR ${x} > ${daysBefore(m)})`);
    switch (operator) {
      case '_gte':
        return atLeast(n);
      case '_gt':
        return atLeast(n + 1);
      case '_lt':
        return below(n);
      case '_lte':
        return below(n + 1);
      case '_eq':
        if (n < 0) return sql`false`;
        return n === 0 ? sql`(${x} IS NULL OR ${x} >= ${today(form)})` : sql`(${x} IS NOT NULL AND ${x} = ${daysBefore(n)})`;
      case '_neq':
        if (n < 0) return sql`true`;
        return n === 0 ? sql`(${x} IS NOT NULL AND ${x} < ${today(form)})` : sql`(${x} IS NULL OR ${x} <> ${daysBefore(n)})`;
    }
  }

  /** The value and direction to sort by: the column, the other way round (more days = an earlier date). */
  function storedOrder(field: ComputedField, direction: OrderDirection, table: Fragment): { readonly value: Fragment; readonly direction: Fragment } {
    const ascending = direction.startsWith('asc');
    return { value: column(field.storedForm!, table), direction: ascending ? sql`DESC NULLS FIRST` : sql`ASC NULLS LAST` };
  }

  return { storedValue, storedComparison, storedOrder };
}
