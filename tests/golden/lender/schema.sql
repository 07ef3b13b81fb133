-- A lender's own tables (issue 30): a bigserial key, a composite key, a text key, mixed-case
-- names, float8, bigint, citext and timestamp columns; rows of the golden account only.
CREATE EXTENSION IF NOT EXISTS citext;
CREATE TABLE lender_branches (
  account_id uuid NOT NULL,
  id bigserial NOT NULL,
  name text NOT NULL,
  region citext,
  opened_at timestamp,
  score float8,
  budget bigint,
  PRIMARY KEY (account_id, id),
  UNIQUE (account_id, name)
);
CREATE TABLE "LoanNotes" (
  account_id uuid NOT NULL,
  "branchId" bigint NOT NULL,
  "Seq" integer NOT NULL,
  "Body" text NOT NULL,
  "createdAt" timestamp NOT NULL,
  PRIMARY KEY (account_id, "branchId", "Seq"),
  FOREIGN KEY (account_id, "branchId") REFERENCES lender_branches (account_id, id)
);
INSERT INTO lender_branches (account_id, id, name, region, opened_at, score, budget) VALUES
  ('601de000-0000-4000-8000-000000000001', 1, 'North', 'Highlands', '2025-03-04 10:11:12', 4.25, 9007199254740993),
  ('601de000-0000-4000-8000-000000000001', 2, 'South', 'lowlands', '2024-12-31 23:59:59.5', -0.5, 7),
  ('601de000-0000-4000-8000-000000000001', 3, 'East', 'HIGHLANDS', NULL, NULL, NULL);
INSERT INTO "LoanNotes" (account_id, "branchId", "Seq", "Body", "createdAt") VALUES
  ('601de000-0000-4000-8000-000000000001', 1, 1, 'first', '2026-01-01 09:00'),
  ('601de000-0000-4000-8000-000000000001', 1, 2, 'second', '2026-01-01 09:00'),
  ('601de000-0000-4000-8000-000000000001', 2, 1, 'south one', '2026-01-02 10:30'),
  ('601de000-0000-4000-8000-000000000001', 3, 1, 'east one', '2026-01-01 09:00');
