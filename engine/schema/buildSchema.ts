import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLScalarType,
} from 'graphql';
import type { Collection, Field, Metadata, Relationship, ScalarType } from '../../metadata/index.js';
import { buildMutationFields, type MutationKind } from './buildMutationFields.js';
import { SCALAR_FOR_TYPE } from './scalars.js';

export type { MutationKind };

/**
 * What a schema field stands for, attached as `extensions.loanql` so the planner never
 * guesses from names. Aggregate helper types carry `aggregate*` kinds.
 */
export type FieldRole =
  | { readonly kind: 'root'; readonly root: 'select' | 'select_by_pk' | 'select_aggregate'; readonly collection: Collection }
  | { readonly kind: 'column'; readonly field: Field }
  | { readonly kind: 'objectRelationship'; readonly relationship: Relationship; readonly target: Collection }
  | { readonly kind: 'arrayRelationship'; readonly relationship: Relationship; readonly target: Collection }
  | { readonly kind: 'arrayAggregate'; readonly relationship: Relationship; readonly target: Collection }
  | { readonly kind: 'aggregate' }
  | { readonly kind: 'nodes' }
  | { readonly kind: 'count' }
  | { readonly kind: 'aggregateFunction'; readonly fn: AggregateFunction }
  | { readonly kind: 'mutationRoot'; readonly mutation: MutationKind; readonly collection: Collection }
  | { readonly kind: 'affectedRows' }
  | { readonly kind: 'returning' };

export type AggregateFunction = 'sum' | 'avg' | 'min' | 'max';

const NUMERIC_TYPES: readonly ScalarType[] = ['numeric', 'integer'];
const ORDERABLE_TYPES: readonly ScalarType[] = ['numeric', 'integer', 'text', 'date', 'timestamptz'];
const TEXT_OPERATORS = ['_like', '_nlike', '_ilike', '_nilike'] as const;

export const ORDER_BY_DIRECTIONS = ['asc', 'asc_nulls_first', 'asc_nulls_last', 'desc', 'desc_nulls_first', 'desc_nulls_last'] as const;
export type OrderDirection = (typeof ORDER_BY_DIRECTIONS)[number];

const role = (value: FieldRole): { loanql: FieldRole } => ({ loanql: value });
const nonNullList = <T extends GraphQLObjectType | GraphQLInputObjectType | GraphQLEnumType>(type: T) =>
  new GraphQLList(new GraphQLNonNull(type));

/** Builds the Hasura-compatible GraphQL schema of SPEC §5 from resolved metadata. */
export function buildSchema(metadata: Metadata): GraphQLSchema {
  const orderBy = new GraphQLEnumType({
    name: 'order_by',
    description: 'Column ordering options. asc puts nulls last, desc first (PostgreSQL default).',
    values: Object.fromEntries(ORDER_BY_DIRECTIONS.map((direction) => [direction, { value: direction }])),
  });

  const comparisonTypes = new Map<GraphQLScalarType, GraphQLInputObjectType>();
  const comparisonFor = (scalar: GraphQLScalarType): GraphQLInputObjectType => {
    let type = comparisonTypes.get(scalar);
    if (!type && scalar === SCALAR_FOR_TYPE.jsonb) {
      // A JSON value is only tested for presence; containment operators are not offered.
      type = new GraphQLInputObjectType({
        name: 'jsonb_comparison_exp',
        description: 'Boolean expression to compare fields of type "jsonb": only _is_null.',
        fields: { _is_null: { type: GraphQLBoolean } },
      });
      comparisonTypes.set(scalar, type);
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
      if (scalar === GraphQLString) for (const op of TEXT_OPERATORS) fields[op] = { type: scalar };
      type = new GraphQLInputObjectType({
        name: `${scalar.name}_comparison_exp`,
        description: `Boolean expression to compare fields of type "${scalar.name}". All fields are combined with logical 'AND'.`,
        fields,
      });
      comparisonTypes.set(scalar, type);
    }
    return type;
  };

  const objectTypes = new Map<string, GraphQLObjectType>();
  const boolExps = new Map<string, GraphQLInputObjectType>();
  const orderBys = new Map<string, GraphQLInputObjectType>();
  const aggregateTypes = new Map<string, GraphQLObjectType>();
  const selectColumns = new Map<string, GraphQLEnumType>();
  const target = (relationship: Relationship): Collection => metadata.collections.get(relationship.target)!;

  for (const collection of metadata.collections.values()) {
    const name = collection.name;
    boolExps.set(
      name,
      new GraphQLInputObjectType({
        name: `${name}_bool_exp`,
        description: `Boolean expression to filter rows from "${name}". All fields are combined with a logical 'AND'.`,
        fields: () => {
          const self = boolExps.get(name)!;
          const fields: GraphQLInputFieldConfigMap = {
            _and: { type: nonNullList(self) },
            _or: { type: nonNullList(self) },
            _not: { type: self },
          };
          for (const field of collection.fields.values()) fields[field.name] = { type: comparisonFor(SCALAR_FOR_TYPE[field.type]) };
          for (const relationship of collection.relationships.values()) fields[relationship.name] = { type: boolExps.get(relationship.target)! };
          return fields;
        },
      }),
    );
    orderBys.set(
      name,
      new GraphQLInputObjectType({
        name: `${name}_order_by`,
        description: `Ordering options when selecting data from "${name}".`,
        fields: () => {
          const fields: GraphQLInputFieldConfigMap = {};
          for (const field of collection.fields.values()) if (field.type !== 'jsonb') fields[field.name] = { type: orderBy };
          for (const relationship of collection.relationships.values())
            if (relationship.kind === 'object') fields[relationship.name] = { type: orderBys.get(relationship.target)! };
          return fields;
        },
      }),
    );
    selectColumns.set(
      name,
      new GraphQLEnumType({
        name: `${name}_select_column`,
        description: `Select columns of table "${name}".`,
        values: Object.fromEntries([...collection.fields.keys()].map((field) => [field, { value: field }])),
      }),
    );
  }

  const listArgs = (collection: Collection): GraphQLFieldConfigArgumentMap => ({
    where: { type: boolExps.get(collection.name)!, description: 'filter the rows returned' },
    order_by: { type: nonNullList(orderBys.get(collection.name)!), description: 'sort the rows by one or more columns' },
    limit: { type: GraphQLInt, description: 'limit the number of rows returned' },
    offset: { type: GraphQLInt, description: 'skip the first n rows. Use only with order_by' },
  });

  for (const collection of metadata.collections.values()) {
    const name = collection.name;
    objectTypes.set(
      name,
      new GraphQLObjectType({
        name,
        description: `columns and relationships of "${collection.table}"`,
        fields: () => {
          const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
          for (const field of collection.fields.values()) {
            const scalar = SCALAR_FOR_TYPE[field.type];
            fields[field.name] = {
              type: field === collection.primaryKey ? new GraphQLNonNull(scalar) : scalar,
              extensions: role({ kind: 'column', field }),
            };
          }
          for (const relationship of collection.relationships.values()) {
            const targetCollection = target(relationship);
            if (relationship.kind === 'object') {
              fields[relationship.name] = {
                type: objectTypes.get(relationship.target)!,
                description: 'An object relationship',
                extensions: role({ kind: 'objectRelationship', relationship, target: targetCollection }),
              };
            } else {
              fields[relationship.name] = {
                type: new GraphQLNonNull(nonNullList(objectTypes.get(relationship.target)!)),
                description: 'An array relationship',
                args: listArgs(targetCollection),
                extensions: role({ kind: 'arrayRelationship', relationship, target: targetCollection }),
              };
              // A role sees aggregates of a collection only with allow_aggregations.
              if (targetCollection.allowAggregations) fields[`${relationship.name}_aggregate`] = {
                type: new GraphQLNonNull(aggregateTypes.get(relationship.target)!),
                description: 'An aggregate relationship',
                args: listArgs(targetCollection),
                extensions: role({ kind: 'arrayAggregate', relationship, target: targetCollection }),
              };
            }
          }
          return fields;
        },
      }),
    );
  }

  for (const collection of metadata.collections.values()) {
    const name = collection.name;
    const fieldsOf = (types: readonly ScalarType[]) => [...collection.fields.values()].filter((field) => types.includes(field.type));
    const functionType = (fn: AggregateFunction, fields: readonly Field[]): GraphQLFieldConfig<unknown, unknown> | null => {
      if (!fields.length) return null;
      return {
        type: new GraphQLObjectType({
          name: `${name}_${fn}_fields`,
          description: `aggregate ${fn} on columns`,
          fields: Object.fromEntries(
            fields.map((field) => [
              field.name,
              { type: fn === 'sum' || fn === 'avg' ? SCALAR_FOR_TYPE.numeric : SCALAR_FOR_TYPE[field.type], extensions: role({ kind: 'column', field }) },
            ]),
          ),
        }),
        extensions: role({ kind: 'aggregateFunction', fn }),
      };
    };
    const aggregateFields: GraphQLFieldConfigMap<unknown, unknown> = {
      count: {
        type: new GraphQLNonNull(GraphQLInt),
        args: { columns: { type: nonNullList(selectColumns.get(name)!) }, distinct: { type: GraphQLBoolean } },
        extensions: role({ kind: 'count' }),
      },
    };
    for (const [fn, types] of [
      ['sum', NUMERIC_TYPES],
      ['avg', NUMERIC_TYPES],
      ['min', ORDERABLE_TYPES],
      ['max', ORDERABLE_TYPES],
    ] as const) {
      const config = functionType(fn, fieldsOf(types));
      if (config) aggregateFields[fn] = config;
    }
    const aggregateFieldsType = new GraphQLObjectType({ name: `${name}_aggregate_fields`, description: `aggregate fields of "${name}"`, fields: aggregateFields });
    aggregateTypes.set(
      name,
      new GraphQLObjectType({
        name: `${name}_aggregate`,
        description: `aggregated selection of "${name}"`,
        fields: {
          aggregate: { type: aggregateFieldsType, extensions: role({ kind: 'aggregate' }) },
          nodes: { type: new GraphQLNonNull(nonNullList(objectTypes.get(name)!)), extensions: role({ kind: 'nodes' }) },
        },
      }),
    );
  }

  const rootFields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const collection of metadata.collections.values()) {
    const name = collection.name;
    if (collection.rootFields.has('select'))
      rootFields[name] = {
        type: new GraphQLNonNull(nonNullList(objectTypes.get(name)!)),
        description: `fetch data from the table: "${collection.table}"`,
        args: listArgs(collection),
        extensions: role({ kind: 'root', root: 'select', collection }),
      };
    if (collection.rootFields.has('select_aggregate'))
      rootFields[`${name}_aggregate`] = {
        type: new GraphQLNonNull(aggregateTypes.get(name)!),
        description: `fetch aggregated fields from the table: "${collection.table}"`,
        args: listArgs(collection),
        extensions: role({ kind: 'root', root: 'select_aggregate', collection }),
      };
    if (collection.rootFields.has('select_by_pk'))
      rootFields[`${name}_by_pk`] = {
        type: objectTypes.get(name)!,
        description: `fetch data from the table: "${collection.table}" using primary key columns`,
        args: { [collection.primaryKey.name]: { type: new GraphQLNonNull(SCALAR_FOR_TYPE[collection.primaryKey.type]) } },
        extensions: role({ kind: 'root', root: 'select_by_pk', collection }),
      };
  }
  const mutationFields = buildMutationFields(metadata, { objectTypes, boolExps }, (value) => role(value as FieldRole));
  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'query_root', fields: rootFields }),
    ...(Object.keys(mutationFields).length ? { mutation: new GraphQLObjectType({ name: 'mutation_root', fields: mutationFields }) } : {}),
  });
}

/** The role of a schema field (every field the schema generates has one). */
export function fieldRole(extensions: Readonly<Record<string, unknown>> | null | undefined): FieldRole | undefined {
  return extensions?.loanql as FieldRole | undefined;
}
