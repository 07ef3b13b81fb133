/**
 * The types a product's custom field may have (README, "Custom fields"). On their own so that the
 * command line's help can list them without loading the product code (ajv, decimal.js).
 */
export type CustomFieldType = 'text' | 'number' | 'currency' | 'percent' | 'integer' | 'date' | 'boolean' | 'select';
export const CUSTOM_FIELD_TYPES: readonly CustomFieldType[] = ['text', 'number', 'currency', 'percent', 'integer', 'date', 'boolean', 'select'];
