/**
 * Public surface of `metadata/`: the metadata in three stages — parsed (`MetadataDocument`),
 * resolved (`ResolvedMetadata`), checked against the database (`Metadata`, the only one the
 * engine accepts) — and the model they share.
 */
export { assumeEmptyCatalogue } from './catalogueFacts.js';
export { checkMetadataAgainstDatabase, WHOLE_NUMBER_BOUNDS, type Catalogue, type CatalogueConstraint, type WholeNumberType } from './checkAgainstDatabase.js';
export type { CollectionDocument, ComputedArgumentDocument, FieldDocument, MetadataDocument, RelationshipDocument } from './document.js';
export { ensureMetadataFile, shippedEntriesMissing } from './ensureMetadataFile.js';
export { keyVariableProblem } from './filterLiterals.js';
export { loadMetadataFile, parseMetadata } from './loadMetadata.js';
export { parseMetadataDocument, validateMetadataDocument } from './parseMetadataDocument.js';
export { resolveMetadata } from './resolveMetadata.js';
export { withSelectFilters } from './visibleRows.js';
export {
  ADMIN_ROLE,
  MetadataError,
  SCALAR_TYPES,
  FIELD_TYPES,
  ARRAY_ELEMENT_TYPES,
  isArrayType,
  elementTypeOf,
  tableKey,
  type TrackedFunction,
  type AggregatePredicateOf,
  type BoolExpOf,
  type ColumnOperator,
  type PredicateAggregate,
  type CatalogueFacts,
  type Collection,
  type ComputedField,
  type ArgumentRange,
  type StoredForm,
  type StoredFormOperator,
  type DeletePermission,
  type EventOperation,
  type EventPayloadRelationship,
  type EventType,
  type Field,
  type FieldSource,
  type FilterJsonbOperator,
  type FilterOperator,
  type FilterValue,
  type InsertPermission,
  type Metadata,
  type PresetValue,
  type Relationship,
  type ResolvedMetadata,
  type ResolvedRole,
  type RateLimit,
  type Role,
  type RootFieldKind,
  type RowFilter,
  type ScalarType,
  type TableComputedField,
  type FieldType,
  type ArrayFieldType,
  type ArrayElementType,
  type UpdatePermission,
} from './model.js';
