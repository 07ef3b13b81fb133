import { GraphQLBoolean, GraphQLInputObjectType, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';
import type { GraphQLInputFieldConfigMap, GraphQLScalarType } from 'graphql';
import { elementTypeOf, isArrayType, type Field } from '../../metadata/index.js';
import { SCALAR_FOR_TYPE } from './scalars.js';
import { TEXT_OPERATOR_DESCRIPTIONS, TEXT_OPERATORS } from './schemaVocabulary.js';

/** The `*_comparison_exp` input types one schema shares, each made once, on first use. */
export interface ComparisonTypes {
  /** `<Scalar>_comparison_exp` (jsonb's and json's their own operators). */
  comparisonFor(scalar: GraphQLScalarType): GraphQLInputObjectType;
  /** A field's comparison type: its scalar's, or `<Element>_array_comparison_exp` for an array. */
  fieldComparison(field: Field): GraphQLInputObjectType;
  /** `<Scalar>_stored_comparison_exp`: what a computed field's stored form offers. */
  storedFormComparison(scalar: GraphQLScalarType): GraphQLInputObjectType;
}

/** New comparison types for one schema (`buildSchema`): a schema's type names must be unique, so each build makes its own. */
export function comparisonTypes(): ComparisonTypes {
  const scalarComparisons = new Map<GraphQLScalarType, GraphQLInputObjectType>();
  const comparisonFor = (scalar: GraphQLScalarType): GraphQLInputObjectType => {
    let type = scalarComparisons.get(scalar);
    if (!type && scalar === SCALAR_FOR_TYPE.jsonb) {
      // Hasura's jsonb operators (containment and top-level keys; GIN-indexed on
      // loans.custom_fields), and _cast to compare the JSON text. Not ordered, not _eq'd.
      const castType = new GraphQLInputObjectType({
        name: 'jsonb_cast_exp',
        description: 'Compare the JSON text of a jsonb field (PostgreSQL jsonb::text).',
        fields: () => ({ String: { type: comparisonFor(GraphQLString) } }),
      });
      type = new GraphQLInputObjectType({
        name: 'jsonb_comparison_exp',
        description: 'Boolean expression to compare fields of type "jsonb". All fields are combined with logical \'AND\'.',
        fields: {
          _cast: { type: castType },
          _contained_in: { type: scalar, description: 'is the column contained in the given json value (<@)' },
          _contains: { type: scalar, description: 'does the column contain the given json value at the top level (@>)' },
          _has_key: { type: GraphQLString, description: 'does the string exist as a top-level key in the column (?)' },
          _has_keys_all: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'do all of these strings exist as top-level keys in the column (?&)' },
          _has_keys_any: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'do any of these strings exist as top-level keys in the column (?|)' },
          _is_null: { type: GraphQLBoolean },
        },
      });
      scalarComparisons.set(scalar, type);
    }
    if (!type && scalar === SCALAR_FOR_TYPE.json) {
      // PostgreSQL has no = for json: equality is the values' as jsonb (engine/README.md, "json").
      // Not ordered, no containment (Hasura offers those on jsonb only).
      type = new GraphQLInputObjectType({
        name: 'json_comparison_exp',
        description: 'Boolean expression to compare fields of type "json" (equal as jsonb: key order and spacing aside). All fields are combined with logical \'AND\'.',
        fields: {
          _eq: { type: scalar },
          _in: { type: new GraphQLList(new GraphQLNonNull(scalar)) },
          _is_null: { type: GraphQLBoolean },
          _neq: { type: scalar },
          _nin: { type: new GraphQLList(new GraphQLNonNull(scalar)) },
        },
      });
      scalarComparisons.set(scalar, type);
    }
    if (!type) {
      const fields: GraphQLInputFieldConfigMap = {
        _eq: { type: scalar },
        _neq: { type: scalar },
        _gt: { type: scalar },
        _gte: { type: scalar },
        _lt: { type: scalar },
        _lte: { type: scalar },
        _in: { type: new GraphQLList(new GraphQLNonNull(scalar)) },
        _nin: { type: new GraphQLList(new GraphQLNonNull(scalar)) },
        _is_null: { type: GraphQLBoolean },
      };
      if (scalar === GraphQLString || scalar === SCALAR_FOR_TYPE.citext) for (const op of TEXT_OPERATORS) fields[op] = { type: scalar, description: TEXT_OPERATOR_DESCRIPTIONS[op] };
      type = new GraphQLInputObjectType({
        name: `${scalar.name}_comparison_exp`,
        description: `Boolean expression to compare fields of type "${scalar.name}". All fields are combined with logical 'AND'.`,
        fields,
      });
      scalarComparisons.set(scalar, type);
    }
    return type;
  };

  /**
   * `<Scalar>_array_comparison_exp` (Hasura's, since 2.29): an array field compared as a whole
   * (`_eq`, ordering comparisons, `_in` of arrays) or by containment (`_contains`: every element of
   * the value is in the field's, `@>`; `_contained_in`: `<@`).
   */
  const arrayComparisons = new Map<GraphQLScalarType, GraphQLInputObjectType>();
  const arrayComparisonFor = (element: GraphQLScalarType): GraphQLInputObjectType => {
    let type = arrayComparisons.get(element);
    if (!type) {
      const array = new GraphQLList(new GraphQLNonNull(element));
      const arrays = new GraphQLList(new GraphQLNonNull(array));
      type = new GraphQLInputObjectType({
        name: `${element.name}_array_comparison_exp`,
        description: `Boolean expression to compare fields of type "${element.name}" array. All fields are combined with logical 'AND'.`,
        fields: {
          _contained_in: { type: array, description: 'is the array contained in the given array value' },
          _contains: { type: array, description: 'does the array contain the given value' },
          _eq: { type: array },
          _gt: { type: array },
          _gte: { type: array },
          _in: { type: arrays },
          _is_null: { type: GraphQLBoolean },
          _lt: { type: array },
          _lte: { type: array },
          _neq: { type: array },
          _nin: { type: arrays },
        },
      });
      arrayComparisons.set(element, type);
    }
    return type;
  };
  const fieldComparison = (field: Field): GraphQLInputObjectType =>
    isArrayType(field.type) ? arrayComparisonFor(SCALAR_FOR_TYPE[elementTypeOf(field.type)]) : comparisonFor(SCALAR_FOR_TYPE[field.type]);

  /** `<Scalar>_stored_comparison_exp`: the operators a computed field's stored form offers (no lists, no patterns). */
  const storedComparisons = new Map<GraphQLScalarType, GraphQLInputObjectType>();
  const storedFormComparison = (scalar: GraphQLScalarType): GraphQLInputObjectType => {
    let type = storedComparisons.get(scalar);
    if (!type) {
      type = new GraphQLInputObjectType({
        name: `${scalar.name}_stored_comparison_exp`,
        description: `Boolean expression to compare a computed field of type "${scalar.name}" as of the business date (through an index).`,
        fields: { _eq: { type: scalar }, _neq: { type: scalar }, _gt: { type: scalar }, _gte: { type: scalar }, _lt: { type: scalar }, _lte: { type: scalar }, _is_null: { type: GraphQLBoolean } },
      });
      storedComparisons.set(scalar, type);
    }
    return type;
  };

  return { comparisonFor, fieldComparison, storedFormComparison };
}
