-- A lender's own types (issue 30): json (not jsonb), arrays of scalars, and a computed field's
-- function of the row alone; rows of the golden account only.
CREATE SCHEMA lender_types;
CREATE TABLE lender_types.notes (
  account_id uuid NOT NULL,
  id bigserial NOT NULL,
  title text NOT NULL,
  body json,
  tags text[],
  scores integer[],
  PRIMARY KEY (account_id, id)
);
CREATE FUNCTION lender_types.note_tag_count(account uuid, id bigint) RETURNS integer
  LANGUAGE sql STABLE AS $$ SELECT coalesce(cardinality(n.tags), 0) FROM lender_types.notes n WHERE n.account_id = account AND n.id = note_tag_count.id $$;
INSERT INTO lender_types.notes (account_id, id, title, body, tags, scores) VALUES
  ('601de000-0000-4000-8000-000000000001', 1, 'first', '{"b": [true, null], "a": 1}', '{a,b}', '{1,2,3}'),
  ('601de000-0000-4000-8000-000000000001', 2, 'second', '[1, "two"]', '{b,c,"with, comma"}', '{3}'),
  ('601de000-0000-4000-8000-000000000001', 3, 'third', '"just a string"', '{}', '{1,2}'),
  ('601de000-0000-4000-8000-000000000001', 4, 'fourth', NULL, NULL, NULL);
CREATE FUNCTION lender_types.note_others(account uuid, id bigint, min_score integer DEFAULT 0) RETURNS SETOF lender_types.notes
  LANGUAGE sql STABLE AS $$ SELECT * FROM lender_types.notes n WHERE n.id <> note_others.id AND coalesce(n.scores[1], 0) >= min_score $$;
