import type { ColumnsDocument, Presets, RoleDocument, RolePermissionsDocument } from './document.js';
import {
  ADMIN_ROLE,
  type Collection,
  type DeletePermission,
  type Field,
  type FilterJsonbOperator,
  isArrayType,
  type FilterOperator,
  type FilterValue,
  type InsertPermission,
  type PresetValue,
  type Relationship,
  type ResolvedMetadata,
  type ResolvedRole,
  type RootFieldKind,
  type RowFilter,
  type ScalarType,
  type UpdatePermission,
} from './model.js';
import { proveVisibleRows, type UnprovenCollection } from './visibleRows.js';
import { literalProblem } from './filterLiterals.js';

type Columns = ColumnsDocument;
type FilterOf = (value: unknown, place: string) => RowFilter | null;

const TEXT_OPERATOR_LIST: readonly FilterOperator[] = ['_like', '_nlike', '_ilike', '_nilike', '_regex', '_iregex', '_nregex', '_niregex', '_similar', '_nsimilar'];
const COMPARISON_OPERATORS: ReadonlySet<string> = new Set<FilterOperator>(['_eq', '_neq', '_gt', '_gte', '_lt', '_lte', ...TEXT_OPERATOR_LIST]);
const TEXT_OPERATORS: ReadonlySet<string> = new Set(TEXT_OPERATOR_LIST);
const JSONB_OPERATORS: ReadonlySet<string> = new Set<FilterJsonbOperator>(['_contains', '_contained_in', '_has_key', '_has_keys_any', '_has_keys_all']);
/** A filter or preset value naming a key variable: `key.person_id`. */
const KEY_VARIABLE = /^key\.([a-z_][a-z0-9_]*)$/;

/**
 * The permissions stage (after relationships): each role becomes "the metadata as this role
 * sees it". A collection the role has no `select` for is absent, with every relationship to it;
 * fields are narrowed to `columns`; aggregates only with `allow_aggregations`; writes only as
 * the role declares them, within what the collection itself declares writable. Filters are
 * resolved against the whole metadata. Which relationships reach only rows the role may see
 * (`visibleRows.ts`) is worked out here, once per version. Problems are pushed, naming role,
 * collection and place.
 */
/** Hasura's column comparison operators (role filters) and the comparison each makes. */
const COLUMN_OPERATORS = { _ceq: '_eq', _cne: '_neq', _cgt: '_gt', _clt: '_lt', _cgte: '_gte', _clte: '_lte' } as const;

export function resolveRoles(base: Omit<ResolvedMetadata, 'roles'>, document: Readonly<Record<string, RoleDocument>> | undefined, problems: string[]): Map<string, ResolvedRole> {
  const roles = new Map<string, ResolvedRole>();
  for (const [roleName, roleDocument] of Object.entries(document ?? {})) {
    const role = resolveRole(base, roleName, roleDocument, problems);
    if (role) roles.set(roleName, role);
  }
  return roles;
}

function resolveRole(base: Omit<ResolvedMetadata, 'roles'>, roleName: string, document: RoleDocument, problems: string[]): ResolvedRole | null {
  if (roleName === ADMIN_ROLE) {
    problems.push(`role ${roleName}: built in (all the collections expose); do not define it`);
    return null;
  }
  const variables = new Map<string, ScalarType>(Object.entries(document.variables ?? {}));
  const before = problems.length;
  const permissions = new Map<string, RolePermissionsDocument>();
  for (const [collectionName, spec] of Object.entries(document.collections)) {
    if (!base.collections.has(collectionName)) problems.push(`role ${roleName}, collection ${collectionName}: not a collection of the metadata`);
    else permissions.set(collectionName, spec);
  }
  // Selectable collections first: relationships are kept only towards them.
  const selectable = new Set([...permissions].filter(([, spec]) => spec.select).map(([name]) => name));
  const collections = new Map<string, UnprovenCollection>();
  for (const [collectionName, spec] of permissions) {
    const collection = base.collections.get(collectionName)!;
    const where = `role ${roleName}, collection ${collectionName}`;
    const filterOf = (value: unknown, place: string): RowFilter | null =>
      value === undefined ? null : resolveFilter(base, collection, value, `${where}, ${place}`, variables, problems);
    if (!spec.select) {
      for (const operation of ['insert', 'update', 'delete'] as const)
        if (spec[operation]) problems.push(`${where}, ${operation}: needs select on the collection too (returning and the row filter read it)`);
      continue;
    }
    const select = spec.select;
    // A computed field is named among the select columns like a field ('*' takes them all).
    const computedFields = select.columns === '*' ? new Map(collection.computedFields) : new Map([...collection.computedFields].filter(([name]) => select.columns.includes(name)));
    // A table computed field also needs select on the collection it returns (as a relationship does).
    const tableComputedFields = new Map(
      [...collection.tableComputedFields].filter(([name, field]) => (select.columns === '*' || select.columns.includes(name)) && selectable.has(field.returns)),
    );
    const plainColumns = select.columns === '*' ? select.columns : select.columns.filter((name) => !collection.computedFields.has(name) && !collection.tableComputedFields.has(name));
    const fields = pickFields(collection.fields, plainColumns, `${where}, select columns`, problems);
    for (const key of collection.primaryKey) if (!fields.has(key.name)) problems.push(`${where}, select columns: must include the primary key ${key.name}`);
    const relationships = new Map<string, Relationship>([...collection.relationships].filter(([, relationship]) => selectable.has(relationship.target)));
    const allowAggregations = select.allow_aggregations === true;
    const rootFields = new Set<RootFieldKind>([...collection.rootFields].filter((kind) => kind !== 'select_aggregate' || allowAggregations));
    const insert = resolveInsert(collection, spec.insert, where, variables, problems, filterOf);
    const update = resolveUpdate(collection, spec.update, where, variables, problems, filterOf);
    const remove: DeletePermission | null = !spec.delete
      ? null
      : collection.delete
        ? { allowed: true, filter: filterOf(spec.delete.filter, 'delete filter') }
        : (problems.push(`${where}, delete: the collection itself declares no delete`), null);
    collections.set(collectionName, {
      ...collection,
      fields,
      computedFields,
      tableComputedFields,
      relationships,
      rootFields,
      insert,
      update,
      delete: remove,
      selectFilter: filterOf(select.filter, 'select filter'),
      selectLimit: select.limit ?? null,
      allowAggregations,
    });
  }
  if (problems.length > before) return null;
  const limit = document.rate_limit;
  const rateLimit = limit ? { perSecond: limit.per_second, burst: limit.burst ?? Math.max(1, Math.ceil(limit.per_second)) } : null;
  return { name: roleName, variables, rateLimit, metadata: { tenantColumn: base.tenantColumn, collections: proveVisibleRows(collections), roles: new Map(), eventTypes: base.eventTypes, functions: base.functions } };
}

function pickFields(fields: ReadonlyMap<string, Field>, columns: Columns, where: string, problems: string[]): Map<string, Field> {
  if (columns === '*') return new Map(fields);
  const picked = new Map<string, Field>();
  for (const name of columns) {
    const field = fields.get(name);
    if (!field) problems.push(`${where}: ${name} is not a field of the collection`);
    else picked.set(name, field);
  }
  return picked;
}

function resolvePresets(
  presets: Presets | undefined,
  allowed: ReadonlyMap<string, Field>,
  inherited: ReadonlyMap<string, PresetValue>,
  where: string,
  variables: ReadonlyMap<string, ScalarType>,
  problems: string[],
): Map<string, PresetValue> {
  const set = new Map(inherited);
  for (const [name, value] of Object.entries(presets ?? {})) {
    const field = allowed.get(name) ?? inherited.get(name)?.field;
    if (!field) {
      problems.push(`${where}: ${name} is not a field the collection lets this operation write`);
      continue;
    }
    const variable = typeof value === 'string' ? KEY_VARIABLE.exec(value)?.[1] : undefined;
    if (variable !== undefined) {
      const type = variables.get(variable);
      if (!type) problems.push(`${where}, field ${name}: key.${variable} is not a variable of the role`);
      else if (type !== field.type) problems.push(`${where}, field ${name}: key.${variable} is a ${type}, the field a ${field.type}`);
      set.set(name, { field, value: null, variable });
    } else set.set(name, { field, value });
  }
  return set;
}

function narrowColumns(allowed: ReadonlyMap<string, Field>, columns: Columns, where: string, problems: string[]): Map<string, Field> {
  if (columns === '*') return new Map(allowed);
  const picked = new Map<string, Field>();
  for (const name of columns) {
    const field = allowed.get(name);
    if (!field) problems.push(`${where}: ${name} is not a field the collection lets this operation write`);
    else picked.set(name, field);
  }
  return picked;
}

function resolveInsert(
  collection: Collection,
  spec: RolePermissionsDocument['insert'],
  where: string,
  variables: ReadonlyMap<string, ScalarType>,
  problems: string[],
  filterOf: FilterOf,
): InsertPermission | null {
  if (!spec) return null;
  if (!collection.insert) {
    problems.push(`${where}, insert: the collection itself declares no insert`);
    return null;
  }
  const presets = resolvePresets(spec.set, collection.insert.columns, collection.insert.set, `${where}, insert set`, variables, problems);
  const columns = narrowColumns(collection.insert.columns, spec.columns, `${where}, insert columns`, problems);
  for (const name of presets.keys()) columns.delete(name);
  return { columns, set: presets, conflictConstraints: collection.insert.conflictConstraints, check: filterOf(spec.check, 'insert check') };
}

function resolveUpdate(
  collection: Collection,
  spec: RolePermissionsDocument['update'],
  where: string,
  variables: ReadonlyMap<string, ScalarType>,
  problems: string[],
  filterOf: FilterOf,
): UpdatePermission | null {
  if (!spec) return null;
  if (!collection.update) {
    problems.push(`${where}, update: the collection itself declares no update`);
    return null;
  }
  const presets = resolvePresets(spec.set, collection.update.columns, collection.update.set, `${where}, update set`, variables, problems);
  const columns = narrowColumns(collection.update.columns, spec.columns, `${where}, update columns`, problems);
  for (const name of presets.keys()) columns.delete(name);
  return { columns, set: presets, filter: filterOf(spec.filter, 'update filter'), check: filterOf(spec.check, 'update check') };
}

/**
 * Resolves a filter written in the query language (`{field: {_op: value}}`, `_and`, `_or`,
 * `_not`, relationships) against the whole metadata. A value `key.<name>` is a key variable
 * of the role, of the field's type.
 */
function resolveFilter(
  base: Omit<ResolvedMetadata, 'roles'>,
  collection: Collection,
  value: unknown,
  where: string,
  variables: ReadonlyMap<string, ScalarType>,
  problems: string[],
): RowFilter | null {
  const before = problems.length;
  const walk = (current: Collection, expression: unknown, path: string): RowFilter => {
    const items: RowFilter[] = [];
    if (typeof expression !== 'object' || expression === null || Array.isArray(expression)) {
      problems.push(`${where}, ${path}: must be an object`);
      return { kind: 'and', items };
    }
    for (const [key, inner] of Object.entries(expression)) {
      const at = path ? `${path}.${key}` : key;
      if (key === '_and' || key === '_or') {
        if (!Array.isArray(inner)) problems.push(`${where}, ${at}: must be a list`);
        else items.push({ kind: key === '_and' ? 'and' : 'or', items: inner.map((item, index) => walk(current, item, `${at}[${index}]`)) });
      } else if (key === '_not') items.push({ kind: 'not', item: walk(current, inner, at) });
      else if (key === '_exists') items.push(...exists(inner, at));
      else if (current.fields.has(key)) items.push(...comparisons(current.fields.get(key)!, inner, at, current));
      else if (current.computedFields.has(key)) {
        // A computed field of the row alone, as a request's `where` has it (Hasura's computed fields in permissions).
        const field = current.computedFields.get(key)!;
        if (field.args.size) problems.push(`${where}, ${at}: computed field ${key} takes arguments (${[...field.args.keys()].join(', ')}); a filter may use only a computed field of the row alone`);
        else {
          // The stand-in's column, `fn()`, is no SQL name: no catalogue constant of a real column can match it (as engine/plan/planWhere.ts).
          const as: Field = { name: field.name, type: field.type, source: { kind: 'column', column: `${field.function}()` } };
          const compared = comparisons(as, inner, at);
          items.push({ kind: 'computedValue', collection: current, field, as, where: compared.length === 1 ? compared[0]! : { kind: 'and', items: compared } });
        }
      } else if (current.relationships.has(key)) {
        const relationship = current.relationships.get(key)!;
        const target = base.collections.get(relationship.target)!;
        items.push({ kind: 'relationship', relationship, target, where: walk(target, inner, at) });
      } else if (key.endsWith('_aggregate') && current.relationships.get(key.slice(0, -'_aggregate'.length))?.kind === 'array') {
        items.push(...aggregatePredicates(current.relationships.get(key.slice(0, -'_aggregate'.length))!, inner, at));
      } else problems.push(`${where}, ${at}: not a field or relationship of ${current.name}`);
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  };
  /**
   * Hasura's `_exists: {_table: {name, schema}, _where: {…}}`: some row of a collection's table,
   * of the request's account, matches `_where` (its fields are the collection's).
   */
  const exists = (spec: unknown, at: string): RowFilter[] => {
    const given = typeof spec === 'object' && spec !== null && !Array.isArray(spec) ? (spec as Record<string, unknown>) : null;
    const table = given && typeof given._table === 'object' && given._table !== null ? (given._table as Record<string, unknown>) : null;
    if (!given || !table || typeof table.name !== 'string' || given._where === undefined) {
      problems.push(`${where}, ${at}: give {_table: {name, schema}, _where: {…}}`);
      return [];
    }
    // A collection without a schema is the current schema's (public).
    const schema = typeof table.schema === 'string' ? table.schema : 'public';
    const target = [...base.collections.values()].find((candidate) => candidate.table === table.name && (candidate.schema ?? 'public') === schema);
    if (!target) {
      problems.push(`${where}, ${at}._table: no collection has the table ${schema}.${table.name}`);
      return [];
    }
    return [{ kind: 'exists', target, where: walk(target, given._where, `${at}._where`) }];
  };
  /** `<rel>_aggregate: {count: {predicate, filter, distinct, arguments}, bool_and: {…}, bool_or: {…}}`, as in a request. */
  const aggregatePredicates = (relationship: Relationship, spec: unknown, path: string): RowFilter[] => {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      problems.push(`${where}, ${path}: give {count | bool_and | bool_or: {predicate: {…}}}`);
      return [];
    }
    const target = base.collections.get(relationship.target)!;
    return Object.entries(spec).flatMap(([fn, raw]): RowFilter[] => {
      const at = `${path}.${fn}`;
      if (fn !== 'count' && fn !== 'bool_and' && fn !== 'bool_or') {
        problems.push(`${where}, ${at}: an aggregate predicate is count, bool_and or bool_or`);
        return [];
      }
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !('predicate' in raw)) {
        problems.push(`${where}, ${at}: give {predicate: {…}} (and arguments, distinct, filter)`);
        return [];
      }
      const given = raw as Record<string, unknown>;
      const names = given.arguments === undefined || given.arguments === null ? [] : Array.isArray(given.arguments) ? given.arguments : [given.arguments];
      const columns: Field[] = [];
      for (const name of names) {
        const field = typeof name === 'string' ? target.fields.get(name) : undefined;
        if (!field || (fn !== 'count' && field.type !== 'boolean')) problems.push(`${where}, ${at}.arguments: ${String(name)} is not a ${fn === 'count' ? '' : 'boolean '}field of ${target.name}`);
        else if (!columns.includes(field)) columns.push(field);
      }
      if (fn !== 'count' && columns.length !== 1) problems.push(`${where}, ${at}.arguments: ${fn} takes one boolean field`);
      if (given.distinct !== undefined && typeof given.distinct !== 'boolean') problems.push(`${where}, ${at}.distinct: must be true or false`);
      const as: Field = { name: fn, type: fn === 'count' ? 'integer' : 'boolean', source: { kind: 'column', column: fn } };
      const predicate = comparisons(as, given.predicate, `${at}.predicate`);
      return [
        {
          kind: 'aggregate',
          relationship,
          target,
          fn,
          arguments: columns,
          distinct: given.distinct === true,
          filter: given.filter === undefined || given.filter === null ? null : walk(target, given.filter, `${at}.filter`),
          as,
          predicate: predicate.length === 1 ? predicate[0]! : { kind: 'and', items: predicate },
        },
      ];
    });
  };
  const operand = (field: Field, raw: unknown, at: string): FilterValue => {
    const variable = typeof raw === 'string' ? KEY_VARIABLE.exec(raw)?.[1] : undefined;
    if (variable !== undefined) {
      const type = variables.get(variable);
      if (!type) problems.push(`${where}, ${at}: key.${variable} is not a variable of the role`);
      else if (type !== field.type) problems.push(`${where}, ${at}: key.${variable} is a ${type}, the field a ${field.type}`);
      return { kind: 'keyVariable', name: variable };
    }
    if (raw === null || typeof raw === 'object') problems.push(`${where}, ${at}: give a value or key.<variable>`);
    else if (!isArrayType(field.type)) {
      const wrong = literalProblem(field.type, raw);
      if (wrong) problems.push(`${where}, ${at}: ${wrong}, the type of ${field.name}`);
    }
    return { kind: 'const', value: raw };
  };
  const comparisons = (field: Field, spec: unknown, path: string, row: Collection | null = null): RowFilter[] => {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      problems.push(`${where}, ${path}: give operators, e.g. {_eq: value}`);
      return [];
    }
    return Object.entries(spec).flatMap(([operator, raw]): RowFilter[] => {
      const at = `${path}.${operator}`;
      if (field.type === 'jsonb' && operator !== '_is_null') return jsonbComparison(field, operator, raw, at);
      if ((field.type === 'json' || isArrayType(field.type)) && operator !== '_is_null') {
        // Decision (metadata/README.md "Types"): a role filter tests a json or array field for null only.
        problems.push(`${where}, ${at}: a ${field.type} field takes only _is_null in a role filter`);
        return [];
      }
      if (JSONB_OPERATORS.has(operator) || operator === '_cast') {
        problems.push(`${where}, ${at}: ${operator} needs a jsonb field`);
        return [];
      }
      if (operator in COLUMN_OPERATORS) {
        // Hasura's column comparison: another field of the same row, by name.
        const other = typeof raw === 'string' ? row?.fields.get(raw) : undefined;
        if (!other) {
          problems.push(`${where}, ${at}: give the name of another field of ${row?.name ?? 'the row'}`);
          return [];
        }
        if (other.type !== field.type) problems.push(`${where}, ${at}: ${other.name} is a ${other.type}, ${field.name} a ${field.type}`);
        return [{ kind: 'columns', field, operator: COLUMN_OPERATORS[operator as keyof typeof COLUMN_OPERATORS], other }];
      }
      if (COMPARISON_OPERATORS.has(operator)) {
        if (TEXT_OPERATORS.has(operator) && field.type !== 'text') problems.push(`${where}, ${at}: ${operator} needs a text field`);
        return [{ kind: 'compare', field, operator: operator as FilterOperator, value: operand(field, raw, at) }];
      }
      if (operator === '_in' || operator === '_nin') {
        if (!Array.isArray(raw)) {
          problems.push(`${where}, ${at}: must be a list`);
          return [];
        }
        return [{ kind: 'in', field, negated: operator === '_nin', values: { kind: 'list', items: raw.map((item, index) => operand(field, item, `${at}[${index}]`)) } }];
      }
      if (operator === '_is_null') {
        if (typeof raw !== 'boolean') problems.push(`${where}, ${at}: must be true or false`);
        return [{ kind: 'isNull', field, value: { kind: 'const', value: raw } }];
      }
      problems.push(`${where}, ${at}: unknown operator`);
      return [];
    });
  };
  /** The query language's jsonb operators (and `_cast: {String: {…}}`), as in a request. */
  const jsonbComparison = (field: Field, operator: string, raw: unknown, at: string): RowFilter[] => {
    if (operator === '_contains' || operator === '_contained_in') {
      // Any JSON value; a string `key.<name>` is a variable only where a string is expected.
      if (raw === undefined) problems.push(`${where}, ${at}: give a JSON value`);
      return [{ kind: 'jsonb', field, operator, value: { kind: 'const', value: JSON.stringify(raw) } }];
    }
    // A key, or each key of a list, may be `key.<variable>` (a text variable of the role).
    const keyName: Field = { name: field.name, type: 'text', source: field.source };
    if (operator === '_has_key') {
      if (typeof raw !== 'string') problems.push(`${where}, ${at}: must be a string`);
      return [{ kind: 'jsonb', field, operator, value: operand(keyName, raw, at) }];
    }
    if (operator === '_has_keys_any' || operator === '_has_keys_all') {
      if (!Array.isArray(raw) || !raw.every((item) => typeof item === 'string')) {
        problems.push(`${where}, ${at}: must be a list of strings`);
        return [];
      }
      const keys = raw.map((item, index) => operand(keyName, item, `${at}[${index}]`));
      return [{ kind: 'jsonb', field, operator, value: keys.every((key) => key.kind === 'const') ? { kind: 'const', value: raw } : { kind: 'list', items: keys } }];
    }
    if (operator === '_cast') {
      const cast = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
      if (!cast || Object.keys(cast).some((type) => type !== 'String')) {
        problems.push(`${where}, ${at}: give {String: {<operator>: value}}`);
        return [];
      }
      if (cast.String === undefined) return [];
      const as: Field = { name: field.name, type: 'text', source: field.source };
      const items = comparisons(as, cast.String, `${at}.String`);
      return [{ kind: 'cast', field, as, where: items.length === 1 ? items[0]! : { kind: 'and', items } }];
    }
    problems.push(`${where}, ${at}: a jsonb field takes _is_null, _contains, _contained_in, _has_key, _has_keys_any, _has_keys_all or _cast`);
    return [];
  };
  const filter = walk(collection, value, '');
  return problems.length > before ? null : filter;
}
