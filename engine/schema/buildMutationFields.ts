import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLScalarType,
} from 'graphql';
import { tableKey, type Collection, type Field, type Metadata, type Relationship, type ScalarType } from '../../metadata/index.js';
import { graphqlTypeOf, SCALAR_FOR_TYPE } from './scalars.js';

/** The mutation root fields of a collection (Hasura's names). */
export type MutationKind = 'insert' | 'insert_one' | 'update' | 'update_by_pk' | 'update_many' | 'delete' | 'delete_by_pk';

/** Types `_inc` adds to (Hasura: every numeric type). */
const NUMERIC_FIELD_TYPES: readonly Field['type'][] = ['numeric', 'integer', 'bigint', 'smallint', 'float8', 'real'];

const nonNullList = <T extends GraphQLObjectType | GraphQLInputObjectType | GraphQLEnumType>(type: T) => new GraphQLList(new GraphQLNonNull(type));

/**
 * A relationship through which a row can be inserted together with its parent: the target is
 * insertable and the relationship's columns can be filled from a new row's key, known before
 * either row is written (a single uuid key: the request's or one the server makes,
 * `Collection.serverMadeKey`). An array relationship maps the parent's primary key to child
 * columns; an object relationship maps parent columns to the target's primary key. Those
 * columns are set by the relationship.
 */
export function nestedInsertRelationship(collection: Collection, relationship: Relationship, collections: ReadonlyMap<string, Collection>): boolean {
  const target = collections.get(relationship.target);
  if (!target?.insert) return false;
  const keyColumn = (c: Collection): string | null => (c.serverMadeKey ? c.primaryKey[0]!.source.column : null);
  return relationship.kind === 'array'
    ? relationship.mapping.every(([from]) => from === keyColumn(collection))
    : relationship.mapping.every(([, to]) => to === keyColumn(target));
}

/**
 * The constraints an `on_conflict` of the collection may name: those its insert declares, and,
 * when the view may update the collection, every primary key and unique constraint of its table
 * that includes the tenant column (Hasura offers upserts to a role that may update).
 */
export function conflictConstraintsOf(collection: Collection, metadata: Metadata): readonly string[] {
  const declared = collection.insert?.conflictConstraints ?? [];
  if (!collection.insert || !collection.update) return declared;
  const enumName = /^[_A-Za-z][_0-9A-Za-z]*$/;
  return [...new Set([...declared, ...(metadata.uniqueConstraints.get(tableKey(collection)) ?? []).filter((name) => enumName.test(name) && name !== 'true' && name !== 'false' && name !== 'null')])];
}

/** One required argument per primary-key field, of its type (Hasura's `_by_pk(a:, b:)`, `pk_columns`). */
export function primaryKeyArgs(collection: Collection): Record<string, { type: GraphQLNonNull<GraphQLScalarType> }> {
  return Object.fromEntries(collection.primaryKey.map((field) => [field.name, { type: new GraphQLNonNull(SCALAR_FOR_TYPE[field.type as ScalarType]) /* a key is never an array: resolveMetadata refuses it */ }]));
}

/** Fields a relationship sets on the row it inserts (the child's columns; the parent's for an object relationship). */
export function columnsSetByRelationship(relationship: Relationship): { readonly onParent: readonly string[]; readonly onChild: readonly string[] } {
  return relationship.kind === 'array'
    ? { onParent: [], onChild: relationship.mapping.map(([, to]) => to) }
    : { onParent: relationship.mapping.map(([from]) => from), onChild: [] };
}

/**
 * The mutation root of SPEC §5's engine, Hasura-shaped: per writable collection `c`,
 * `insert_c(objects:, on_conflict:)`, `insert_c_one(object:, on_conflict:)`,
 * `update_c(where:, _set:, _inc:)`, `update_c_by_pk(pk_columns:, …)`, `update_c_many(updates:)`,
 * `delete_c(where:)`, `delete_c_by_pk(id:)`; `c_mutation_response { affected_rows returning }`.
 */
export function buildMutationFields(
  metadata: Metadata,
  types: { readonly objectTypes: ReadonlyMap<string, GraphQLObjectType>; readonly boolExps: ReadonlyMap<string, GraphQLInputObjectType> },
  role: (value: unknown) => { loanql: unknown },
): GraphQLFieldConfigMap<unknown, unknown> {
  const insertInputs = new Map<string, GraphQLInputObjectType>();
  const arrayInserts = new Map<string, GraphQLInputObjectType>();
  const objectInserts = new Map<string, GraphQLInputObjectType>();
  const onConflicts = new Map<string, GraphQLInputObjectType | null>();
  const scalarOf = (field: Field) => graphqlTypeOf(field.type);

  const updateColumnEnum = new Map<string, GraphQLEnumType>();
  for (const collection of metadata.collections.values()) {
    if (collection.update?.columns.size)
      updateColumnEnum.set(
        collection.name,
        new GraphQLEnumType({
          name: `${collection.name}_update_column`,
          description: `update columns of table "${collection.table}"`,
          values: Object.fromEntries([...collection.update.columns.keys()].map((name) => [name, { value: name }])),
        }),
      );
  }

  const onConflictOf = (collection: Collection): GraphQLInputObjectType | null => {
    if (onConflicts.has(collection.name)) return onConflicts.get(collection.name)!;
    let type: GraphQLInputObjectType | null = null;
    const constraints = conflictConstraintsOf(collection, metadata);
    if (constraints.length) {
      const constraintEnum = new GraphQLEnumType({
        name: `${collection.name}_constraint`,
        description: `unique constraints of table "${collection.table}"`,
        values: Object.fromEntries(constraints.map((name) => [name, { value: name }])),
      });
      const fields: GraphQLInputFieldConfigMap = {
        constraint: { type: new GraphQLNonNull(constraintEnum) },
        where: { type: types.boolExps.get(collection.name)! },
      };
      // Hasura's shape: every on_conflict has `update_columns = []` (so `update_columns: []`, the
      // documented "do nothing", is accepted); a view that updates nothing gets Hasura's one-value
      // enum `_PLACEHOLDER`, which the planner refuses as no update column.
      const updateColumns =
        updateColumnEnum.get(collection.name) ??
        new GraphQLEnumType({ name: `${collection.name}_update_column`, description: `placeholder for update columns of table "${collection.table}" (current role has no relevant permissions)`, values: { _PLACEHOLDER: { value: '_PLACEHOLDER', description: 'placeholder (do not use)' } } });
      fields.update_columns = { type: new GraphQLNonNull(nonNullList(updateColumns)), defaultValue: [] };
      type = new GraphQLInputObjectType({ name: `${collection.name}_on_conflict`, description: `on_conflict condition type for table "${collection.table}"`, fields });
    }
    onConflicts.set(collection.name, type);
    return type;
  };

  const insertInputOf = (collection: Collection): GraphQLInputObjectType => {
    let type = insertInputs.get(collection.name);
    if (type) return type;
    type = new GraphQLInputObjectType({
      name: `${collection.name}_insert_input`,
      description: `input type for inserting data into table "${collection.table}"`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const [name, field] of collection.insert!.columns) fields[name] = { type: scalarOf(field) };
        for (const relationship of collection.relationships.values()) {
          if (!nestedInsertRelationship(collection, relationship, metadata.collections)) continue;
          const target = metadata.collections.get(relationship.target)!;
          fields[relationship.name] = { type: relationship.kind === 'array' ? arrayInsertOf(target) : objectInsertOf(target) };
        }
        return fields;
      },
    });
    insertInputs.set(collection.name, type);
    return type;
  };
  const arrayInsertOf = (target: Collection): GraphQLInputObjectType => {
    let type = arrayInserts.get(target.name);
    if (!type) {
      type = new GraphQLInputObjectType({
        name: `${target.name}_arr_rel_insert_input`,
        description: `input type for inserting array relation for remote table "${target.table}"`,
        fields: () => ({ data: { type: new GraphQLNonNull(nonNullList(insertInputOf(target))) } }),
      });
      arrayInserts.set(target.name, type);
    }
    return type;
  };
  const objectInsertOf = (target: Collection): GraphQLInputObjectType => {
    let type = objectInserts.get(target.name);
    if (!type) {
      type = new GraphQLInputObjectType({
        name: `${target.name}_obj_rel_insert_input`,
        description: `input type for inserting object relation for remote table "${target.table}"`,
        fields: () => ({ data: { type: new GraphQLNonNull(insertInputOf(target)) } }),
      });
      objectInserts.set(target.name, type);
    }
    return type;
  };

  const rootFields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const collection of metadata.collections.values()) {
    if (!collection.insert && !collection.update && !collection.delete) continue;
    const name = collection.name;
    const objectType = types.objectTypes.get(name)!;
    const response = new GraphQLObjectType({
      name: `${name}_mutation_response`,
      description: `response of any mutation on the table "${collection.table}"`,
      fields: {
        affected_rows: { type: new GraphQLNonNull(GraphQLInt), description: 'number of rows affected by the mutation', extensions: role({ kind: 'affectedRows' }) },
        returning: { type: new GraphQLNonNull(nonNullList(objectType)), description: 'data from the rows affected by the mutation', extensions: role({ kind: 'returning' }) },
      },
    });
    const root = (mutation: MutationKind) => role({ kind: 'mutationRoot', mutation, collection });
    const pkArg = primaryKeyArgs(collection);

    if (collection.insert) {
      const onConflict = onConflictOf(collection);
      const conflictArg: GraphQLFieldConfigArgumentMap = onConflict ? { on_conflict: { type: onConflict, description: 'upsert condition' } } : {};
      rootFields[`insert_${name}`] = {
        type: response,
        description: `insert data into the table: "${collection.table}"`,
        args: { objects: { type: new GraphQLNonNull(nonNullList(insertInputOf(collection))), description: 'the rows to be inserted' }, ...conflictArg },
        extensions: root('insert'),
      };
      rootFields[`insert_${name}_one`] = {
        type: objectType,
        description: `insert a single row into the table: "${collection.table}"`,
        args: { object: { type: new GraphQLNonNull(insertInputOf(collection)), description: 'the row to be inserted' }, ...conflictArg },
        extensions: root('insert_one'),
      };
    }
    if (collection.update) {
      const operators: GraphQLInputFieldConfigMap = {};
      const columns = [...collection.update.columns.values()];
      const inputOf = (suffix: string, description: string, fields: readonly Field[], scalar: (field: Field) => GraphQLInputType) => {
        if (!fields.length) return;
        operators[`_${suffix}`] = {
          type: new GraphQLInputObjectType({
            name: `${name}_${suffix}_input`,
            description,
            fields: Object.fromEntries(fields.map((field) => [field.name, { type: scalar(field) }])),
          }),
        };
      };
      inputOf('set', `input type for updating data in table "${collection.table}"`, columns, scalarOf);
      inputOf('inc', 'input type for incrementing numeric columns in table', columns.filter((f) => NUMERIC_FIELD_TYPES.includes(f.type)), scalarOf);
      inputOf('append', 'append existing jsonb value of filtered columns with new jsonb value (the keys of an object are merged)', columns.filter((f) => f.type === 'jsonb'), scalarOf);
      inputOf('prepend', 'prepend existing jsonb value of filtered columns with new jsonb value', columns.filter((f) => f.type === 'jsonb'), scalarOf);
      inputOf('delete_key', 'delete key/value pair or string element from jsonb columns', columns.filter((f) => f.type === 'jsonb'), () => GraphQLString);
      inputOf('delete_elem', 'delete the array element with specified index (negative integers count from the end) from jsonb columns', columns.filter((f) => f.type === 'jsonb'), () => GraphQLInt);
      inputOf('delete_at_path', 'delete the field or element with specified path (for JSON arrays, negative integers count from the end)', columns.filter((f) => f.type === 'jsonb'), () => new GraphQLList(new GraphQLNonNull(GraphQLString)));
      const whereType = new GraphQLNonNull(types.boolExps.get(name)!);
      rootFields[`update_${name}`] = {
        type: response,
        description: `update data of the table: "${collection.table}"`,
        args: { ...operators, where: { type: whereType, description: 'filter the rows which have to be updated ({} for every row)' } },
        extensions: root('update'),
      };
      rootFields[`update_${name}_by_pk`] = {
        type: objectType,
        description: `update single row of the table: "${collection.table}"`,
        args: {
          ...operators,
          pk_columns: { type: new GraphQLNonNull(new GraphQLInputObjectType({ name: `${name}_pk_columns_input`, description: `primary key columns input for table: ${collection.table}`, fields: pkArg })) },
        },
        extensions: root('update_by_pk'),
      };
      const updates = new GraphQLInputObjectType({ name: `${name}_updates`, description: `one update of update_${name}_many`, fields: { ...operators, where: { type: whereType } } });
      rootFields[`update_${name}_many`] = {
        type: new GraphQLList(response),
        description: `update multiples rows of table: "${collection.table}"`,
        args: { updates: { type: new GraphQLNonNull(nonNullList(updates)), description: 'updates to execute, in order' } },
        extensions: root('update_many'),
      };
    }
    if (collection.delete) {
      rootFields[`delete_${name}`] = {
        type: response,
        description: `delete data from the table: "${collection.table}"`,
        args: { where: { type: new GraphQLNonNull(types.boolExps.get(name)!), description: 'filter the rows which have to be deleted ({} for every row)' } },
        extensions: root('delete'),
      };
      rootFields[`delete_${name}_by_pk`] = {
        type: objectType,
        description: `delete single row from the table: "${collection.table}"`,
        args: pkArg,
        extensions: root('delete_by_pk'),
      };
    }
  }
  return rootFields;
}
