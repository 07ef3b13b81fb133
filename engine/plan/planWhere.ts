import { GraphQLError, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';
import { isArrayType, type ArrayFieldType, type Collection, type ComputedField, type Field, type PredicateAggregate, type Relationship, type StoredFormOperator } from '../../metadata/index.js';
import { graphqlTypeOf, SCALAR_FOR_TYPE } from '../schema/scalars.js';
import { Literal, VariableRef, type ArgValue, type ArgumentValues } from './argumentValues.js';
import type { BoolExp, ComparisonOperator, JsonbOperator } from './ir.js';
import type { Param } from './params.js';
import { patternDialect, patternProblem } from './patternCost.js';
import type { ErrorCode } from '../errorCode.js';

/** Deeper boolean expressions are refused: PGlite's parser stack gives out in the hundreds. */
const MAX_FILTER_DEPTH = 64;

const COMPARISON_OPERATORS: ReadonlySet<string> = new Set<ComparisonOperator>([
  '_eq', '_neq', '_gt', '_gte', '_lt', '_lte', '_like', '_nlike', '_ilike', '_nilike', '_regex', '_iregex', '_nregex', '_niregex', '_similar', '_nsimilar',
]);
const JSONB_OPERATORS: ReadonlySet<string> = new Set<JsonbOperator>(['_contains', '_contained_in', '_has_key', '_has_keys_any', '_has_keys_all']);
const STORED_FORM_OPERATORS: ReadonlySet<string> = new Set<StoredFormOperator>(['_eq', '_neq', '_gt', '_gte', '_lt', '_lte', '_is_null']);
const KEY_LIST = new GraphQLList(new GraphQLNonNull(GraphQLString));
const ARRAY_COMPARISON_OPERATORS: ReadonlySet<string> = new Set<ComparisonOperator>(['_eq', '_neq', '_gt', '_gte', '_lt', '_lte']);

/** `where` arguments → `BoolExp`: boolean operators, comparisons, relationship filters. */
const PREDICATE_AGGREGATES: ReadonlySet<string> = new Set<PredicateAggregate>(['count', 'bool_and', 'bool_or']);
const isObject = (value: ArgValue | undefined): value is { [key: string]: ArgValue } =>
  value !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof VariableRef) && !(value instanceof Literal);

export function wherePlanner({ toParam, jsonbParam, toJs, asList, schemaCollection, enumValue, readNow }: ArgumentValues) {
  function planWhere(collection: Collection, value: ArgValue, depth = 0): BoolExp {
    if (depth > MAX_FILTER_DEPTH) {
      throw new GraphQLError(`a where expression nests deeper than ${MAX_FILTER_DEPTH} levels`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
    }
    if (value instanceof VariableRef || value instanceof Literal || value === null || typeof value !== 'object' || Array.isArray(value)) {
      // null where → no filter (Hasura treats a null boolean expression as true).
      return { kind: 'and', items: [] };
    }
    const items: BoolExp[] = [];
    for (const [key, inner] of Object.entries(value)) {
      // A null anywhere a boolean expression is expected means "no condition", whether it is
      // written inline or arrives in a variable.
      if (inner === null) continue;
      if (key === '_and' || key === '_or') {
        items.push({ kind: key === '_and' ? 'and' : 'or', items: asList(inner).map((item) => planWhere(collection, item, depth + 1)) });
      } else if (key === '_not') {
        items.push({ kind: 'not', item: planWhere(collection, inner, depth + 1) });
      } else if (collection.fields.has(key)) {
        items.push(...planComparison(collection.fields.get(key)!, inner));
      } else if (collection.computedFields.get(key)?.storedForm) {
        items.push(...planStoredComparison(collection.computedFields.get(key)!, inner));
      } else if (collection.computedFields.has(key)) {
        // A computed field of the row alone (the schema offers no other in a filter): compared as a field of its type.
        const field = collection.computedFields.get(key)!;
        // The stand-in's column, `fn()`, is no SQL name: no catalogue constant of a real column can match it.
        const as: Field = { name: field.name, type: field.type, source: { kind: 'column', column: `${field.function}()` } };
        const comparisons = planComparison(as, inner);
        items.push({ kind: 'computedValue', collection, field, as, where: comparisons.length === 1 ? comparisons[0]! : { kind: 'and', items: comparisons } });
      } else if (!collection.relationships.has(key) && key.endsWith('_aggregate') && collection.relationships.get(key.slice(0, -'_aggregate'.length))?.kind === 'array') {
        items.push(...planAggregatePredicates(collection.relationships.get(key.slice(0, -'_aggregate'.length))!, inner, depth));
      } else {
        const relationship = collection.relationships.get(key);
        if (!relationship) throw new GraphQLError(`field "${key}" not found in type: '${collection.name}_bool_exp'`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
        const target = schemaCollection(relationship.target);
        items.push({ kind: 'relationship', relationship, target, where: planWhere(target, inner, depth + 1) });
      }
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  }

  function planComparison(field: Field, value: ArgValue): BoolExp[] {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof VariableRef || value instanceof Literal) return [];
    if (isArrayType(field.type)) return planArrayComparison(field as Field & { readonly type: ArrayFieldType }, value);
    if (field.type === 'json') return planJsonComparison(field, value);
    const scalar = SCALAR_FOR_TYPE[field.type];
    const items: BoolExp[] = [];
    for (const [operator, operand] of Object.entries(value)) {
      if (field.type === 'jsonb' && JSONB_OPERATORS.has(operator)) {
        const keys = operator === '_has_key' ? toParam(operand, GraphQLString) : toParam(operand, KEY_LIST);
        const param = operator === '_contains' || operator === '_contained_in' ? jsonbParam(operand) : keys;
        items.push({ kind: 'jsonb', field, operator: operator as JsonbOperator, value: param });
      } else if (field.type === 'jsonb' && operator === '_cast') {
        // `_cast: {String: {…}}`: the String comparisons apply to the field's JSON text.
        if (operand === null || typeof operand !== 'object' || Array.isArray(operand) || operand instanceof VariableRef || operand instanceof Literal) continue;
        const inner = operand.String;
        if (inner === undefined || inner === null) continue;
        const as: Field = { name: field.name, type: 'text', source: field.source };
        const comparisons = planComparison(as, inner);
        items.push({ kind: 'cast', field, as, where: comparisons.length === 1 ? comparisons[0]! : { kind: 'and', items: comparisons } });
      } else if (COMPARISON_OPERATORS.has(operator)) {
        items.push({ kind: 'compare', field, operator: operator as ComparisonOperator, value: patternChecked(operator, toParam(operand, scalar)) });
      } else if (operator === '_in' || operator === '_nin') {
        items.push({ kind: 'in', field, negated: operator === '_nin', values: toParam(operand, new GraphQLList(new GraphQLNonNull(scalar))) });
      } else if (operator === '_is_null') {
        items.push({ kind: 'isNull', field, value: toParam(operand, SCALAR_FOR_TYPE.boolean) });
      } else {
        throw new GraphQLError(`unknown operator ${operator}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
      }
    }
    return items;
  }

  /**
   * An array field (`<Scalar>_array_comparison_exp`): whole-array comparisons (`$n::text[]`),
   * `_contains`/`_contained_in` (an `arrayContainment` node: `@>`, `<@`), `_in`/`_nin` of arrays
   * — read now, one parameter per array (PostgreSQL's arrays of arrays must be rectangular).
   */
  function planArrayComparison(field: Field & { readonly type: ArrayFieldType }, value: { [key: string]: ArgValue }): BoolExp[] {
    const array = graphqlTypeOf(field.type);
    return Object.entries(value).map(([operator, operand]): BoolExp => {
      if (operator === '_contains' || operator === '_contained_in') return { kind: 'arrayContainment', field, operator, value: toParam(operand, array) };
      if (ARRAY_COMPARISON_OPERATORS.has(operator)) return { kind: 'compare', field, operator: operator as ComparisonOperator, value: toParam(operand, array) };
      if (operator === '_in' || operator === '_nin') {
        const arrays = toJs(operand);
        const items = (Array.isArray(arrays) ? arrays : arrays === null || arrays === undefined ? [] : [arrays]).map((item): Param => ({ kind: 'const', value: Array.isArray(item) ? item : [item] }));
        return { kind: 'in', field, negated: operator === '_nin', values: { kind: 'list', items } };
      }
      if (operator === '_is_null') return { kind: 'isNull', field, value: toParam(operand, SCALAR_FOR_TYPE.boolean) };
      throw new GraphQLError(`unknown operator ${operator} of ${field.name}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
    });
  }

  /** A json field (`json_comparison_exp`): `_eq _neq _in _nin` compare as jsonb (the renderer casts the field), `_is_null`. */
  function planJsonComparison(field: Field, value: { [key: string]: ArgValue }): BoolExp[] {
    return Object.entries(value).map(([operator, operand]): BoolExp => {
      if (operator === '_eq' || operator === '_neq') return { kind: 'compare', field, operator, value: jsonbParam(operand) };
      if (operator === '_in' || operator === '_nin') return { kind: 'in', field, negated: operator === '_nin', values: { kind: 'list', items: asList(operand).map(jsonbParam) } };
      if (operator === '_is_null') return { kind: 'isNull', field, value: toParam(operand, SCALAR_FOR_TYPE.boolean) };
      throw new GraphQLError(`unknown operator ${operator} of ${field.name}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
    });
  }

  /**
   * `<rel>_aggregate: {count: {arguments, distinct, filter, predicate}, bool_and: {…}, bool_or: {…}}`:
   * one aggregate predicate each (the schema requires `predicate`, and `arguments` of bool_and/bool_or).
   */
  function planAggregatePredicates(relationship: Relationship, value: ArgValue, depth: number): BoolExp[] {
    if (!isObject(value)) return [];
    const target = schemaCollection(relationship.target);
    const items: BoolExp[] = [];
    for (const [fn, spec] of Object.entries(value)) {
      if (spec === null) continue;
      if (!PREDICATE_AGGREGATES.has(fn) || !isObject(spec)) throw new GraphQLError(`unknown aggregate ${fn} of ${relationship.name}_aggregate`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
      const names = (fn === 'count' ? asList(spec.arguments) : [spec.arguments]).map((name) => enumValue(name));
      const columns: Field[] = [];
      for (const name of names) {
        const field = target.fields.get(name ?? '');
        if (!field || (fn !== 'count' && field.type !== 'boolean')) throw new GraphQLError(`${relationship.name}_aggregate.${fn}: no column ${String(name)}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
        if (!columns.includes(field)) columns.push(field);
      }
      const as: Field = { name: fn, type: fn === 'count' ? 'integer' : 'boolean', source: { kind: 'column', column: fn } };
      const predicate = planComparison(as, spec.predicate ?? null);
      items.push({
        kind: 'aggregate',
        relationship,
        target,
        fn: fn as PredicateAggregate,
        arguments: columns,
        distinct: readNow(spec.distinct, SCALAR_FOR_TYPE.boolean) === true,
        filter: spec.filter === undefined || spec.filter === null ? null : planWhere(target, spec.filter, depth + 1),
        as,
        predicate: predicate.length === 1 ? predicate[0]! : { kind: 'and', items: predicate },
      });
    }
    return items;
  }

  /** A computed field with a stored form, called without arguments (`_eq` … `_lte`, `_is_null`). */
  function planStoredComparison(field: ComputedField, value: ArgValue): BoolExp[] {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof VariableRef || value instanceof Literal) return [];
    const scalar = SCALAR_FOR_TYPE[field.type];
    return Object.entries(value).map(([operator, operand]): BoolExp => {
      if (!STORED_FORM_OPERATORS.has(operator)) throw new GraphQLError(`unknown operator ${operator} of ${field.name}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
      return { kind: 'computed', field, operator: operator as StoredFormOperator, value: toParam(operand, operator === '_is_null' ? SCALAR_FOR_TYPE.boolean : scalar) };
    });
  }

  /**
   * A regular expression or SIMILAR TO pattern is checked before anything runs (`patternCost.ts`):
   * one written in the document now, one in a variable when the variable is bound (the mark
   * `pattern` on its parameter; the plan stays reusable).
   */
  function patternChecked(operator: string, param: Param): Param {
    const dialect = patternDialect(operator);
    if (!dialect) return param;
    if (param.kind === 'var') return { ...param, pattern: dialect };
    if (param.kind === 'const' && typeof param.value === 'string') {
      const problem = patternProblem(param.value, dialect);
      if (problem) throw new GraphQLError(`${operator}: ${problem}`, { extensions: { code: 'validation-failed' satisfies ErrorCode } });
    }
    return param;
  }

  return { planWhere };
}
