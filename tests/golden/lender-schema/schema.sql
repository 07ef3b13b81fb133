-- A lender's own schema (issue 30): tables in schema lender, a view without a key, a SETOF
-- function and a computed field's function with an argument; rows of the golden account only.
CREATE SCHEMA lender;
CREATE TABLE lender.branches (
  account_id uuid NOT NULL,
  id bigserial NOT NULL,
  name text NOT NULL,
  region text,
  PRIMARY KEY (account_id, id)
);
CREATE TABLE lender.loans (
  account_id uuid NOT NULL,
  id bigserial NOT NULL,
  branch_id bigint NOT NULL,
  amount numeric(12, 2) NOT NULL,
  opened date NOT NULL,
  rate float8 NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, branch_id) REFERENCES lender.branches (account_id, id)
);
CREATE VIEW lender.branch_totals AS
  SELECT b.account_id, b.id AS branch_id, b.name, count(l.id)::int AS loans, coalesce(sum(l.amount), 0) AS total
    FROM lender.branches b LEFT JOIN lender.loans l ON l.account_id = b.account_id AND l.branch_id = b.id
   GROUP BY b.account_id, b.id, b.name;
CREATE FUNCTION lender.loans_opened_between(from_date date, to_date date DEFAULT NULL) RETURNS SETOF lender.loans
  LANGUAGE sql STABLE AS $$ SELECT * FROM lender.loans WHERE opened >= from_date AND (to_date IS NULL OR opened <= to_date) $$;
CREATE FUNCTION lender.loan_interest(account uuid, id bigint, years float8 DEFAULT 1) RETURNS numeric
  LANGUAGE sql STABLE AS $$ SELECT round(l.amount * l.rate::numeric * years::numeric, 2) FROM lender.loans l WHERE l.account_id = account AND l.id = loan_interest.id $$;
INSERT INTO lender.branches (account_id, id, name, region) VALUES
  ('601de000-0000-4000-8000-000000000001', 1, 'North', 'highlands'),
  ('601de000-0000-4000-8000-000000000001', 2, 'South', 'lowlands'),
  ('601de000-0000-4000-8000-000000000001', 3, 'Empty', NULL);
INSERT INTO lender.loans (account_id, id, branch_id, amount, opened, rate) VALUES
  ('601de000-0000-4000-8000-000000000001', 1, 1, 1500.00, '2026-01-10', 0.1),
  ('601de000-0000-4000-8000-000000000001', 2, 1, 200.50, '2026-02-01', 0.05),
  ('601de000-0000-4000-8000-000000000001', 3, 2, 3000.00, '2026-03-05', 0.07),
  ('601de000-0000-4000-8000-000000000001', 4, 2, 80.00, '2025-12-24', 0.05);
