import { tableKey, type CatalogueFacts, type Field, type Metadata, type ResolvedMetadata, type Role, type TrackedFunction } from './model.js';

/**
 * What the catalogue says, before it is given to each view: CHECK value lists are by
 * `table.column` here, and become each view's `fieldValues` (by the view's own fields).
 */
export interface CatalogueReading extends Omit<CatalogueFacts, 'fieldValues'> {
  readonly valueLists: ReadonlyMap<string, readonly string[]>;
  /** The tracked functions as the catalogue has them (which arguments have no default); replaces every view's. */
  readonly functions: ReadonlyMap<string, TrackedFunction>;
}

/** A catalogue that declares nothing: every column nullable, no index constants, no CHECK lists, no foreign keys. */
const EMPTY_CATALOGUE: Omit<CatalogueReading, 'functions'> = { notNullColumns: new Set(), indexConstants: new Map(), valueLists: new Map(), foreignKeyRelationships: new Set(), uniqueConstraints: new Map(), tablesFinalAtReturning: new Set(), announcesSeveralWrites: false, changeNoticeKeys: new Map(), tablesUnderViews: new Map() };

/**
 * Stage 3's result from what the catalogue says: the resolved metadata and every role's view,
 * each with the catalogue's facts. `admin`'s view stays the metadata itself. Called by
 * `checkMetadataAgainstDatabase` once the catalogue has been read and found to agree.
 */
export function withCatalogueFacts(resolved: ResolvedMetadata, reading: CatalogueReading): Metadata {
  const { notNullColumns, indexConstants, foreignKeyRelationships, valueLists, uniqueConstraints, functions, tablesFinalAtReturning, announcesSeveralWrites, changeNoticeKeys, tablesUnderViews } = reading;
  const roles = new Map<string, Role>();
  const checked: Metadata = { ...resolved, notNullColumns, indexConstants, fieldValues: fieldValuesOf(resolved, valueLists), foreignKeyRelationships, uniqueConstraints, functions, tablesFinalAtReturning, announcesSeveralWrites, changeNoticeKeys, tablesUnderViews, roles };
  for (const [name, role] of resolved.roles)
    roles.set(name, {
      ...role,
      metadata:
        role.metadata === resolved
          ? checked
          : { ...role.metadata, roles: new Map(), notNullColumns, indexConstants, fieldValues: fieldValuesOf(role.metadata, valueLists), foreignKeyRelationships, uniqueConstraints, functions, tablesFinalAtReturning, announcesSeveralWrites, changeNoticeKeys, tablesUnderViews },
    });
  return checked;
}

/**
 * The checked stage WITHOUT a database, for code that compiles but never runs against one
 * (pure unit tests, micro-benchmarks): the catalogue is assumed to declare nothing, so every
 * column is written with a null fallback, no document string becomes SQL text, no filter
 * skips a table. The SQL is valid and the answers the same, only plainer and slower than a
 * checked engine's: anything that serves requests uses `checkMetadataAgainstDatabase`.
 */
export function assumeEmptyCatalogue(resolved: ResolvedMetadata): Metadata {
  return withCatalogueFacts(resolved, { ...EMPTY_CATALOGUE, functions: resolved.functions });
}

/** The fields of a view's collections whose column has a CHECK list of values (`Metadata.fieldValues`). */
function fieldValuesOf(view: Pick<ResolvedMetadata, 'collections'>, lists: ReadonlyMap<string, readonly string[]>): Map<Field, readonly string[]> {
  const values = new Map<Field, readonly string[]>();
  for (const collection of view.collections.values())
    for (const field of collection.fields.values()) {
      const list = field.type === 'text' && field.source.kind === 'column' ? lists.get(`${tableKey(collection)}.${field.source.column}`) : undefined;
      if (list) values.set(field, list);
    }
  return values;
}
