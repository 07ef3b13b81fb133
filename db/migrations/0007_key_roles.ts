/**
 * Roles for API keys (issue 15): each key carries the name of a metadata role and the values of
 * that role's key variables (`key.person_id`), as a JSON object of strings. Existing keys keep
 * today's behaviour: role `admin`, no variables. The role is a name, not a foreign key: roles
 * live in the metadata file; a key whose role the metadata no longer has is refused (403).
 */
export const name = '0007_key_roles';

export const sql = /* sql */ `
ALTER TABLE api_keys
  ADD COLUMN role text NOT NULL DEFAULT 'admin',
  ADD COLUMN variables jsonb NOT NULL DEFAULT '{}'::jsonb,
  ADD CONSTRAINT api_keys_variables_object CHECK (jsonb_typeof(variables) = 'object');
`;
