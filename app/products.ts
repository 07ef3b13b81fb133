import type { Queryable } from '../db/index.js';

export type CustomFieldType = 'text' | 'number' | 'currency' | 'percent' | 'integer' | 'date' | 'boolean' | 'select';

export interface CustomFieldDefinition {
  readonly name: string;
  readonly type: CustomFieldType;
  readonly options?: readonly string[];
  readonly required?: boolean;
}

/** The body key of a field: spaces become underscores, matched without regard to case (SPEC §6). */
export function fieldKey(name: string): string {
  return name.trim().replace(/\s+/g, '_').toLowerCase();
}

/** The custom fields of the demo account's default product. */
export const DEMO_CUSTOM_FIELDS: readonly CustomFieldDefinition[] = [
  { name: 'Loan Officer', type: 'text' },
  { name: 'Property Type', type: 'select', options: ['residential', 'commercial', 'land', 'mixed_use'] },
  { name: 'LTV', type: 'percent' },
  { name: 'Origination Fee', type: 'currency' },
];

/** Creates the account's default product with these custom fields; returns its id. */
export async function createDefaultProduct(db: Queryable, accountId: string, fields: readonly CustomFieldDefinition[]): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) RETURNING id`,
    [accountId],
  );
  const productId = rows[0]!.id;
  for (const [position, field] of fields.entries()) {
    await db.query(
      `INSERT INTO product_fields (account_id, product_id, name, key, type, options, required, position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [accountId, productId, field.name, fieldKey(field.name), field.type, field.options ? JSON.stringify(field.options) : null, field.required ?? false, position],
    );
  }
  return productId;
}
