import { GraphQLBoolean, GraphQLEnumType, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema } from 'graphql';
import type { GraphQLFieldConfig, GraphQLFieldConfigArgumentMap, GraphQLFieldConfigMap, GraphQLInputFieldConfigMap } from 'graphql';
import { isArrayType, tableKey, type Collection, type ComputedField, type Field, type FieldType, type Metadata, type Relationship, type ScalarType } from '../../metadata/index.js';
import { buildMutationFields, primaryKeyArgs, type MutationKind } from './buildMutationFields.js';
import { graphqlTypeOf, JSONB_PATH_ARGS, SCALAR_FOR_TYPE } from './scalars.js';
import { comparisonTypes } from './comparisonTypes.js';
import { streamFields } from './buildStreamFields.js';
import { functionFields } from './buildFunctionFields.js';
import { typeNameClash } from './typeNameClash.js';
import { ORDER_BY_DIRECTIONS, STATISTICAL_FUNCTIONS, type AggregateFunction, type FieldRole } from './schemaVocabulary.js';

export { fieldRole, ORDER_BY_DIRECTIONS, STATISTICAL_FUNCTIONS, type AggregateFunction, type FieldRole, type OrderDirection, type StatisticalFunction } from './schemaVocabulary.js';
export type { MutationKind };
const NUMERIC_TYPES: readonly ScalarType[] = ['numeric', 'integer', 'bigint', 'smallint', 'float8', 'real'];
const ORDERABLE_TYPES: readonly ScalarType[] = [...NUMERIC_TYPES, 'text', 'citext', 'date', 'timestamptz', 'timestamp', 'time'];

/**
 * A collection's scalar computed fields of these types: what its aggregate's functions offer
 * (Hasura's aggregates of computed fields, called with their arguments' defaults), in the
 * aggregate field and in `<c>_aggregate_order_by` alike.
 */
const aggregatedComputedFields = (collection: Collection, types: readonly ScalarType[]): ComputedField[] => [...collection.computedFields.values()].filter((computed) => types.includes(computed.type));

/** Fields `order_by` offers: not json, jsonb or arrays. */
const ORDERABLE_FIELD = (field: Field): boolean => field.type !== 'jsonb' && field.type !== 'json' && !isArrayType(field.type);

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

  const { comparisonFor, fieldComparison, storedFormComparison } = comparisonTypes();

  const objectTypes = new Map<string, GraphQLObjectType>();
  const boolExps = new Map<string, GraphQLInputObjectType>();
  const orderBys = new Map<string, GraphQLInputObjectType>();
  const aggregateTypes = new Map<string, GraphQLObjectType>();
  const selectColumns = new Map<string, GraphQLEnumType>();
  const aggregateOrderBys = new Map<string, GraphQLInputObjectType>();
  const target = (relationship: Relationship): Collection => metadata.collections.get(relationship.target)!;

  /**
   * `<c>_aggregate_order_by` (Hasura's name and shape): order rows by an aggregate of an array
   * relationship, `{payments_aggregate: {count: desc}}`, `{payments_aggregate: {sum: {amount: asc}}}`;
   * each function offers the computed fields its aggregate field offers (`{loans_aggregate: {sum: {payoff: desc}}}`).
   */
  const aggregateOrderBy = (collection: Collection): GraphQLInputObjectType => {
    let type = aggregateOrderBys.get(collection.name);
    if (type) return type;
    const fields: GraphQLInputFieldConfigMap = { count: { type: orderBy } };
    for (const [fn, types] of [
      ['avg', NUMERIC_TYPES],
      ['max', ORDERABLE_TYPES],
      ['min', ORDERABLE_TYPES],
      ...STATISTICAL_FUNCTIONS.map((statistical) => [statistical, NUMERIC_TYPES] as const),
      ['sum', NUMERIC_TYPES],
    ] as const) {
      const columns = [...collection.fields.values()].filter((field) => !isArrayType(field.type) && types.includes(field.type));
      const computedFields = aggregatedComputedFields(collection, types);
      if (!columns.length && !computedFields.length) continue;
      fields[fn] = {
        type: new GraphQLInputObjectType({
          name: `${collection.name}_${fn}_order_by`,
          description: `order by ${fn}() on columns of table "${collection.table}"`,
          fields: Object.fromEntries([
            ...columns.map((field) => [field.name, { type: orderBy }] as const),
            ...computedFields.map((computed) => [computed.name, { type: orderBy, description: `${fn} of the computed field ${computed.name}, its arguments' defaults` }] as const),
          ]),
        }),
      };
    }
    type = new GraphQLInputObjectType({ name: `${collection.name}_aggregate_order_by`, description: `order by aggregate values of table "${collection.table}"`, fields });
    aggregateOrderBys.set(collection.name, type);
    return type;
  };

  /**
   * `<c>_aggregate_bool_exp` (Hasura's name and shape): a predicate over an aggregate of an
   * array relationship's rows, `{payments_aggregate: {count: {predicate: {_gt: 3}, filter: {…}}}}`;
   * `bool_and` / `bool_or` over one boolean column, only where the collection has one.
   */
  const aggregateBoolExps = new Map<string, GraphQLInputObjectType>();
  const aggregateBoolExp = (collection: Collection): GraphQLInputObjectType => {
    let type = aggregateBoolExps.get(collection.name);
    if (type) return type;
    const name = collection.name;
    const fields: GraphQLInputFieldConfigMap = {
      count: {
        type: new GraphQLInputObjectType({
          name: `${name}_aggregate_bool_exp_count`,
          fields: () => ({
            arguments: { type: nonNullList(selectColumns.get(name)!) },
            distinct: { type: GraphQLBoolean },
            filter: { type: boolExps.get(name)! },
            predicate: { type: new GraphQLNonNull(comparisonFor(SCALAR_FOR_TYPE.integer)) },
          }),
        }),
      },
    };
    const booleans = [...collection.fields.values()].filter((field) => field.type === 'boolean');
    if (booleans.length)
      for (const fn of ['bool_and', 'bool_or'] as const) {
        const columns = new GraphQLEnumType({
          name: `${name}_select_column_${name}_aggregate_bool_exp_${fn}_arguments_columns`,
          description: `select "${name}_aggregate_bool_exp_${fn}_arguments_columns" columns of table "${collection.table}"`,
          values: Object.fromEntries(booleans.map((field) => [field.name, { value: field.name }])),
        });
        fields[fn] = {
          type: new GraphQLInputObjectType({
            name: `${name}_aggregate_bool_exp_${fn}`,
            fields: () => ({
              arguments: { type: new GraphQLNonNull(columns) },
              distinct: { type: GraphQLBoolean },
              filter: { type: boolExps.get(name)! },
              predicate: { type: new GraphQLNonNull(comparisonFor(SCALAR_FOR_TYPE.boolean)) },
            }),
          }),
        };
      }
    type = new GraphQLInputObjectType({ name: `${name}_aggregate_bool_exp`, fields });
    aggregateBoolExps.set(name, type);
    return type;
  };

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
          for (const field of collection.fields.values()) fields[field.name] = { type: fieldComparison(field) };
          // A computed field with a stored form, without arguments: through its index.
          for (const computed of collection.computedFields.values()) {
            if (computed.storedForm) fields[computed.name] = { type: storedFormComparison(SCALAR_FOR_TYPE[computed.type]) };
            // A function of the row alone (Hasura's rule for computed fields in filters): its type's comparisons.
            else if (!computed.args.size) fields[computed.name] = { type: comparisonFor(SCALAR_FOR_TYPE[computed.type]) };
          }
          for (const relationship of collection.relationships.values()) {
            fields[relationship.name] = { type: boolExps.get(relationship.target)! };
            // An aggregate predicate: only where the role may aggregate the target.
            if (relationship.kind === 'array' && target(relationship).allowAggregations) fields[`${relationship.name}_aggregate`] = { type: aggregateBoolExp(target(relationship)) };
          }
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
          // Not json, jsonb or arrays (as Hasura's order_by).
          for (const field of collection.fields.values()) if (ORDERABLE_FIELD(field)) fields[field.name] = { type: orderBy };
          for (const computed of collection.computedFields.values()) {
            if (computed.storedForm) fields[computed.name] = { type: orderBy, description: `${computed.name} as of the business date` };
            else if (!computed.args.size && computed.type !== 'jsonb' && computed.type !== 'json') fields[computed.name] = { type: orderBy, description: `${computed.name}, computed by ${computed.function}` };
          }
          for (const relationship of collection.relationships.values()) {
            if (relationship.kind === 'object') fields[relationship.name] = { type: orderBys.get(relationship.target)! };
            // As the aggregate field itself: only where the role may aggregate the target.
            else if (target(relationship).allowAggregations) fields[`${relationship.name}_aggregate`] = { type: aggregateOrderBy(target(relationship)) };
          }
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
    distinct_on: { type: nonNullList(selectColumns.get(collection.name)!), description: 'distinct select on columns' },
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
            const scalar = graphqlTypeOf(field.type);
            fields[field.name] = {
              // Non-null where the database guarantees a value (the catalogue's NOT NULL columns),
              // as Hasura does: typed clients then get non-optional fields. A role filters rows,
              // never a column's value, so this holds for every role's view.
              type: collection.primaryKey.includes(field) || (field.source.kind === 'column' && metadata.notNullColumns.has(`${tableKey(collection)}.${field.source.column}`)) ? new GraphQLNonNull(scalar) : scalar,
              extensions: role({ kind: 'column', field }), ...(field.type === 'jsonb' || field.type === 'json' ? { args: JSONB_PATH_ARGS } : {}),
            };
          }
          for (const computed of collection.computedFields.values()) {
            // Hasura's shape: `payoff(args: {as_of: "2026-03-31"})`; every argument is optional (the function's default).
            const argsType = computedArgsType(name, collection.table, computed);
            fields[computed.name] = {
              type: SCALAR_FOR_TYPE[computed.type],
              description: computed.description ?? `computed by the SQL function ${computed.function}`,
              ...(argsType ? { args: { args: { type: argsType } } } : {}),
              extensions: role({ kind: 'computed', field: computed }),
            };
          }
          for (const computed of collection.tableComputedFields.values()) {
            // Hasura's table computed field: `args` (when the function takes any) and the returned collection's list arguments.
            const targetCollection = metadata.collections.get(computed.returns)!;
            const argsType = computedArgsType(name, collection.table, computed);
            fields[computed.name] = {
              type: new GraphQLNonNull(nonNullList(objectTypes.get(computed.returns)!)),
              description: computed.description ?? `rows of "${targetCollection.table}" computed by the SQL function ${computed.function}`,
              args: { ...(argsType ? { args: { type: argsType } } : {}), ...listArgs(targetCollection) },
              extensions: role({ kind: 'tableComputed', field: computed, target: targetCollection }),
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
    const fieldsOf = (types: readonly ScalarType[]) => [...collection.fields.values()].filter((field) => !isArrayType(field.type) && types.includes(field.type));
    // Scalar computed fields too (Hasura's aggregates of computed fields), called with their arguments' defaults.
    const computedOf = (types: readonly ScalarType[]) => aggregatedComputedFields(collection, types);
    const functionType = (fn: AggregateFunction, fields: readonly Field[], computedFields: readonly ComputedField[]): GraphQLFieldConfig<unknown, unknown> | null => {
      if (!fields.length && !computedFields.length) return null;
      // sum, avg and the statistical aggregates as numeric: PostgreSQL's exact text (Hasura says Float for avg and the statistical ones).
      const typeOf = (type: FieldType) => (fn === 'min' || fn === 'max' ? graphqlTypeOf(type) : SCALAR_FOR_TYPE.numeric);
      return {
        type: new GraphQLObjectType({
          name: `${name}_${fn}_fields`,
          description: `aggregate ${fn} on columns`,
          fields: Object.fromEntries([
            ...fields.map((field) => [field.name, { type: typeOf(field.type), extensions: role({ kind: 'column', field }) }] as const),
            ...computedFields.map(
              (computed) =>
                [
                  computed.name,
                  { type: typeOf(computed.type), description: `${fn} of the computed field ${computed.name}, its arguments' defaults`, extensions: role({ kind: 'computed', field: computed }) },
                ] as const,
            ),
          ]),
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
      ...STATISTICAL_FUNCTIONS.map((statistical) => [statistical, NUMERIC_TYPES] as const),
    ] as const) {
      const config = functionType(fn, fieldsOf(types), computedOf(types));
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
        args: primaryKeyArgs(collection),
        extensions: role({ kind: 'root', root: 'select_by_pk', collection }),
      };
  }
  const mutationFields = buildMutationFields(metadata, { objectTypes, boolExps }, (value) => role(value as FieldRole));
  try {
    return new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'query_root', fields: { ...rootFields, ...functionFields(metadata, { objectTypes, aggregateTypes }, listArgs) } }),
      subscription: new GraphQLObjectType({ name: 'subscription_root', fields: { ...rootFields, ...streamFields(metadata, objectTypes, boolExps) } }),
      ...(Object.keys(mutationFields).length ? { mutation: new GraphQLObjectType({ name: 'mutation_root', fields: mutationFields }) } : {}),
    });
  } catch (error) {
    throw typeNameClash(error, metadata) ?? error;
  }
}

/**
 * The `args` input type of a computed field (`<type>_<field>_args`, each argument optional: the
 * function's default), or null when the function takes none.
 */
function computedArgsType(typeName: string, table: string, computed: { readonly name: string; readonly args: ReadonlyMap<string, keyof typeof SCALAR_FOR_TYPE> }): GraphQLInputObjectType | null {
  if (!computed.args.size) return null;
  return new GraphQLInputObjectType({
    name: `${typeName}_${computed.name}_args`,
    description: `arguments of the computed field ${computed.name} of "${table}"`,
    fields: Object.fromEntries([...computed.args].map(([arg, type]) => [arg, { type: SCALAR_FOR_TYPE[type] }])),
  });
}
