/**
 * A GIN index on `loans.custom_fields` (issue 19), so the query language's jsonb operators
 * `_contains` (@>), `_has_key` (?), `_has_keys_any` (?|) and `_has_keys_all` (?&) can use an
 * index instead of reading every loan of the account (`_contained_in`, <@, is not a GIN
 * operator: it filters the account's rows). The default `jsonb_ops` operator class (not the smaller
 * `jsonb_path_ops`) because only it supports the key-existence operators too. PGlite builds
 * and uses it like PostgreSQL (tests/engine/explain.test.ts shows the plan on both).
 */
export const name = '0009_custom_fields_gin';

export const sql = /* sql */ `
CREATE INDEX loans_custom_fields_gin ON loans USING gin (custom_fields);
`;
