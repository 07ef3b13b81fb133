import { GraphQLEnumType, GraphQLError, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { Param } from './params.js';
import type { Collection, Field, PresetValue } from '../../metadata/index.js';
import { columnsSetByRelationship, nestedInsertRelationship } from '../schema/buildMutationFields.js';
import { graphqlTypeOf, SCALAR_FOR_TYPE } from '../schema/scalars.js';
import type { BoolExp } from './ir.js';
import type { InsertGroup, InsertRow, InsertValue, MutationField, MutationOutput, MutationPlan, MutationResponseItem, OnConflict, UpdateValue, UpdateWrite } from './mutationIr.js';
import { Literal, VariableRef, type ArgValue, type PlanOptions } from './argumentValues.js';
import { planningContext } from './planningContext.js';
import type { ErrorCode } from '../errorCode.js';

export interface MutationPlanOptions extends PlanOptions {
  /**
   * The most rows one request may insert, nested rows included, and the most `updates` entries
   * its `update_many` fields hold together (MAX_INSERT_OBJECTS): each entry is a statement.
   */
  readonly maxInsertObjects: number;
}

export interface PlannedMutation {
  readonly plan: MutationPlan;
  /** As for queries: false when the plan depends on variable values (a whole object or list in a variable). */
  readonly reusable: boolean;
}

const UPDATE_OPERATORS: readonly (readonly [string, UpdateValue['kind']])[] = [
  ['_set', 'set'],
  ['_inc', 'inc'],
  ['_append', 'append'],
  ['_prepend', 'prepend'],
  ['_delete_key', 'deleteKey'],
  ['_delete_elem', 'deleteElem'],
  ['_delete_at_path', 'deleteAtPath'],
];
const PATH = new GraphQLList(new GraphQLNonNull(GraphQLString));

function invalid(message: string, alias: string): GraphQLError {
  return new GraphQLError(message, { path: [alias], extensions: { code: 'validation-failed' satisfies ErrorCode } });
}

type ArgObject = { readonly [key: string]: ArgValue };
const isObject = (value: ArgValue | undefined): value is ArgObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof VariableRef) && !(value instanceof Literal);

/**
 * Turns a validated mutation operation into the mutation IR. The fields run in document order;
 * `where`, `returning` and the `one` outputs are planned with the query planner's pieces.
 */
export function planMutation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: ReadonlyMap<string, unknown>,
  options: MutationPlanOptions,
): PlannedMutation {
  const context = planningContext(schema, operation, fragments, variables, options);
  const { collectFields, roleOf, args, subSelection, planSelection, planWhere, toParam, asList, enumValue, objectType } = context;
  const rootType = schema.getMutationType()!;
  let insertedRows = 0;
  let manyUpdates = 0;
  let slots = 0;

  /**
   * A value for a field: a parameter of its type. A jsonb value written inline is an object or
   * list the planner has taken apart (its leaves are literals and variables): it is put back
   * together as JSON text, read now, so the plan depends on those variables' values.
   */
  const valueParam = (field: Field, value: ArgValue): Param => (field.type === 'jsonb' || field.type === 'json' ? context.jsonbParam(value) : toParam(value, graphqlTypeOf(field.type)));

  function planInsert(alias: string, collection: Collection, objects: readonly ArgValue[], onConflictArg: ArgValue | undefined): MutationField & { kind: 'insert' } {
    const groups = new Map<string, { collection: Collection; rows: InsertRow[] }>();
    let nested = false;

    /**
     * Plans one object to insert into `collection`; returns the value of its key when the server
     * may make it (`serverMadeKey`: the request's key, else a new id), which nested rows refer to.
     * Any other key is the request's or the column's default (identity, serial).
     */
    const planRow = (target: Collection, object: ArgValue, path: string, inherited: ReadonlyMap<string, InsertValue>): InsertValue | null => {
      if (!isObject(object)) throw invalid(`${path}: expected an object to insert`, alias);
      if (++insertedRows > options.maxInsertObjects) throw invalid(`a request inserts at most ${options.maxInsertObjects} rows (MAX_INSERT_OBJECTS), nested rows included`, alias);
      const permission = target.insert!;
      const values = new Map<string, InsertValue>(inherited);
      const keyColumn = target.serverMadeKey ? columnOf(target.primaryKey[0]!) : null;
      if (keyColumn !== null) values.set(keyColumn, { kind: 'newId', slot: slots++ });
      for (const preset of permission.set.values()) values.set(columnOf(preset.field), { kind: 'param', param: presetParam(preset), field: preset.field });
      // The group exists before any nested row is planned, so the field's own rows come first.
      let group = groups.get(path);
      if (!group) groups.set(path, (group = { collection: target, rows: [] }));
      const children: (() => void)[] = [];
      for (const [key, value] of Object.entries(object)) {
        const field = permission.columns.get(key);
        if (field) {
          if (inherited.has(columnOf(field))) throw invalid(`${path}.${key}: set by the relationship the row is inserted through; leave it out`, alias);
          values.set(columnOf(field), { kind: 'param', param: valueParam(field, value), field });
          continue;
        }
        const relationship = target.relationships.get(key);
        if (!relationship || !nestedInsertRelationship(target, relationship, options.collections)) throw invalid(`${path}.${key}: not a field that can be inserted`, alias);
        if (value === null) continue;
        if (!isObject(value)) throw invalid(`${path}.${key}: expected {data: …}`, alias);
        nested = true;
        const childCollection = context.schemaCollection(relationship.target);
        const childPath = `${path}.${key}`;
        if (relationship.kind === 'array') {
          // Children are planned after the parent's own values (its key included, whether the
          // request's or a new id), so a child's slot follows its parent's.
          children.push(() => {
            const parentKey = values.get(keyColumn!)!;
            const childInherited = new Map<string, InsertValue>(columnsSetByRelationship(relationship).onChild.map((column) => [column, parentKey]));
            for (const child of asList(value.data)) planRow(childCollection, child, childPath, childInherited);
          });
        } else {
          const childKey = planRow(childCollection, value.data ?? null, childPath, new Map())!;
          for (const column of columnsSetByRelationship(relationship).onParent) {
            if (values.has(column) && values.get(column)!.kind === 'param') throw invalid(`${path}.${column}: set by the relationship ${key}; leave it out`, alias);
            values.set(column, childKey);
          }
        }
      }
      group.rows.push({ values });
      for (const planChildren of children) planChildren();
      return keyColumn === null ? null : values.get(keyColumn)!;
    };

    for (const object of objects) planRow(collection, object, collection.name, new Map());
    let onConflict: OnConflict | null = null;
    if (isObject(onConflictArg)) {
      if (nested) throw invalid('on_conflict cannot be combined with nested inserts: insert the related rows in a later field', alias);
      const constraint = enumValue(onConflictArg.constraint);
      // The schema's enum is what this view offers (`conflictConstraintsOf`).
      const offered = schema.getType(`${collection.name}_constraint`);
      if (!constraint || !(offered instanceof GraphQLEnumType) || !offered.getValue(constraint)) throw invalid(`on_conflict: unknown constraint ${String(constraint)}`, alias);
      const updateFields = asList(onConflictArg.update_columns).map((item) => {
        const name = enumValue(item);
        const field = name === null ? undefined : collection.update?.columns.get(name);
        if (!field) throw invalid(`on_conflict.update_columns: ${String(name)} is not an update column of ${collection.name}`, alias);
        return field;
      });
      onConflict = { constraint, updateFields, where: isObject(onConflictArg.where) ? planWhere(collection, onConflictArg.where) : null };
    }
    // The field's own rows first: the step returns their ids.
    const ordered: InsertGroup[] = [...groups.values()];
    return { kind: 'insert', alias, collection, insert: { groups: ordered, onConflict }, output: { kind: 'one', selection: [] } };
  }

  /** The operand of an update operator: a value of the field's type, a key, an index or a path. */
  function operandParam(kind: UpdateValue['kind'], field: Field, operand: ArgValue): Param {
    if (kind === 'deleteKey') return toParam(operand, SCALAR_FOR_TYPE.text);
    if (kind === 'deleteElem') return toParam(operand, GraphQLInt);
    if (kind === 'deleteAtPath') return toParam(operand, PATH);
    return valueParam(field, operand);
  }

  function planUpdate(alias: string, collection: Collection, operators: ArgObject, where: BoolExp): UpdateWrite {
    const permission = collection.update!;
    const set = new Map<Field, UpdateValue[]>();
    let given = false;
    for (const [argument, kind] of UPDATE_OPERATORS) {
      const value = operators[argument];
      if (value === undefined || value === null) continue;
      given = true;
      if (!isObject(value)) throw invalid(`${argument}: expected an object`, alias);
      for (const [key, operand] of Object.entries(value)) {
        const field = permission.columns.get(key);
        if (!field) throw invalid(`${argument}.${key}: not an update column of ${collection.name}`, alias);
        if (kind === 'inc' && (operand === null || (operand instanceof Literal && operand.node.kind === 'NullValue'))) throw invalid(`${argument}.${key}: an increment cannot be null`, alias);
        const changes = set.get(field) ?? [];
        if (changes.some((change) => change.kind === 'set' || kind === 'set')) throw invalid(`${key}: given in _set and in another operator`, alias);
        if (kind === 'deleteElem' || kind === 'deleteAtPath') {
          if (operand === null || (operand instanceof Literal && operand.node.kind === 'NullValue')) throw invalid(`${argument}.${key}: expected ${kind === 'deleteElem' ? 'an index' : 'a path'}, not null`, alias);
        }
        changes.push({ kind, param: operandParam(kind, field, operand) });
        set.set(field, changes);
      }
    }
    if (!given) throw invalid(`nothing to update: give at least one of ${UPDATE_OPERATORS.map(([name]) => name).join(', ')}`, alias);
    // Operators that name no field (`_set: {}`) update nothing: affected_rows 0, presets not applied (Hasura).
    if (set.size) for (const preset of permission.set.values()) set.set(preset.field, [{ kind: 'set', param: presetParam(preset) }]);
    return { where, set };
  }

  /** The row a `_by_pk` field names: each key field (`pk_columns`, or the field's own arguments) equal to its value. */
  const byPk = (collection: Collection, values: ArgObject): BoolExp => {
    const items = collection.primaryKey.map((field): BoolExp => ({ kind: 'compare', field, operator: '_eq', value: toParam(values[field.name] ?? null, graphqlTypeOf(field.type)) }));
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  };

  function planOutput(collection: Collection, nodes: Parameters<typeof subSelection>[0], one: boolean): MutationOutput {
    if (one) return { kind: 'one', selection: planSelection(collection, subSelection(nodes)) };
    const responseType = objectType(`${collection.name}_mutation_response`);
    const items: MutationResponseItem[] = [];
    for (const [alias, inner] of subSelection(nodes)) {
      const node = inner[0]!;
      if (node.name.value === '__typename') items.push({ kind: 'typename', alias, value: responseType.name });
      else if (roleOf(responseType, node).kind === 'affectedRows') items.push({ kind: 'affectedRows', alias });
      else items.push({ kind: 'returning', alias, selection: planSelection(collection, subSelection(inner)) });
    }
    return { kind: 'response', items };
  }

  const fields: MutationField[] = [];
  for (const [alias, nodes] of collectFields(operation.selectionSet)) {
    const node = nodes[0]!;
    if (node.name.value === '__typename') {
      fields.push({ kind: 'typename', alias, value: rootType.name });
      continue;
    }
    const role = roleOf(rootType, node);
    if (role.kind !== 'mutationRoot') throw new Error(`unexpected mutation field ${node.name.value}`);
    const collection = role.collection;
    const fieldArgs = args(node);
    switch (role.mutation) {
      case 'insert':
      case 'insert_one': {
        const one = role.mutation === 'insert_one';
        const planned = planInsert(alias, collection, one ? [fieldArgs.object ?? null] : asList(fieldArgs.objects), fieldArgs.on_conflict);
        fields.push({ ...planned, output: planOutput(collection, nodes, one) });
        break;
      }
      case 'update':
      case 'update_by_pk': {
        const one = role.mutation === 'update_by_pk';
        let where: BoolExp;
        if (one) {
          const pk = fieldArgs.pk_columns;
          if (!isObject(pk)) throw invalid('pk_columns: expected an object', alias);
          where = byPk(collection, pk);
        } else {
          where = planWhere(collection, fieldArgs.where ?? null);
        }
        fields.push({ kind: 'update', alias, collection, updates: [planUpdate(alias, collection, fieldArgs, where)], output: planOutput(collection, nodes, one), many: false });
        break;
      }
      case 'update_many': {
        const entries = asList(fieldArgs.updates);
        // Each entry is a statement of the request's transaction: 5,000 of them held a connection 5 s.
        manyUpdates += entries.length;
        if (manyUpdates > options.maxInsertObjects) throw invalid(`a request's update_many fields hold at most ${options.maxInsertObjects} updates together (MAX_INSERT_OBJECTS), not ${manyUpdates}`, alias);
        const updates = entries.map((update, index) => {
          if (!isObject(update)) throw invalid(`updates[${index}]: expected an object`, alias);
          return planUpdate(alias, collection, update, planWhere(collection, update.where ?? null));
        });
        fields.push({ kind: 'update', alias, collection, updates, output: planOutput(collection, nodes, false), many: true });
        break;
      }
      case 'delete':
      case 'delete_by_pk': {
        const one = role.mutation === 'delete_by_pk';
        const where = one ? byPk(collection, fieldArgs) : planWhere(collection, fieldArgs.where ?? null);
        fields.push({ kind: 'delete', alias, collection, where, output: planOutput(collection, nodes, one) });
        break;
      }
    }
  }
  return { plan: { fields }, reusable: context.isReusable() };
}

function columnOf(field: Field): string {
  return field.source.column;
}

/** A preset's value: a constant, or a key variable bound when the request runs (the plan stays per role). */
function presetParam(preset: PresetValue): Param {
  return preset.variable !== undefined ? { kind: 'keyVariable', name: preset.variable } : { kind: 'const', value: preset.value };
}
