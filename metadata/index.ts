/** Public surface of `metadata/`: load, validate and resolve the metadata file. */
export { checkMetadataAgainstDatabase, type Catalogue, type CatalogueConstraint } from './checkAgainstDatabase.js';
export { ensureMetadataFile, shippedEntriesMissing } from './ensureMetadataFile.js';
export { loadMetadataFile, parseMetadata } from './loadMetadata.js';
export { ADMIN_ROLE, MetadataError, SCALAR_TYPES, type Collection, type ComputedField, type EventOperation, type EventType, type BoolExpOf, type FilterJsonbOperator, type FilterOperator, type FilterValue, type Role, type RowFilter, type DeletePermission, type Field, type InsertPermission, type PresetValue, type UpdatePermission, type FieldSource, type Metadata, type Relationship, type RootFieldKind, type ScalarType } from './model.js';
