/**
 * The data model (SPEC §3, §8). Every tenant table carries `account_id`; primary keys are
 * `(account_id, id)` and every foreign key includes `account_id`, so a row can never point
 * into another account, and the tables can be distributed by `account_id`.
 */
export const name = '0001_schema';

export const sql = /* sql */ `
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE accounts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE admins (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  email text NOT NULL,
  name text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);
-- Admins log in with their e-mail alone, so it is unique across accounts.
CREATE UNIQUE INDEX admins_email_key ON admins (lower(email));

CREATE TABLE api_keys (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  prefix text NOT NULL UNIQUE,
  key_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  active boolean NOT NULL DEFAULT true,
  deactivated_at timestamptz,
  PRIMARY KEY (account_id, id)
);

CREATE TABLE products (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);
CREATE UNIQUE INDEX products_one_default ON products (account_id) WHERE is_default;

CREATE TABLE product_fields (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  product_id uuid NOT NULL,
  name text NOT NULL,
  -- The name as sent in a request body: spaces to underscores, lower case.
  key text NOT NULL,
  type text NOT NULL CHECK (type IN ('text', 'number', 'currency', 'percent', 'integer', 'date', 'boolean', 'select')),
  options jsonb,
  required boolean NOT NULL DEFAULT false,
  default_value jsonb,
  position integer NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, product_id) REFERENCES products (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, product_id, key)
);

CREATE TABLE people (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  email text,
  phone text,
  status text NOT NULL DEFAULT 'active',
  entity_type text NOT NULL DEFAULT 'individual' CHECK (entity_type IN ('individual', 'company')),
  is_borrower boolean NOT NULL DEFAULT false,
  is_investor boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);
CREATE INDEX people_name_trgm ON people USING gin (name gin_trgm_ops);
CREATE INDEX people_account_name ON people (account_id, name);
-- Find-or-create keys: an individual by name + e-mail, a company by name (case-insensitive).
CREATE UNIQUE INDEX people_individual_identity ON people (account_id, lower(name), lower(email))
  WHERE entity_type = 'individual' AND email IS NOT NULL;
CREATE UNIQUE INDEX people_company_identity ON people (account_id, lower(name)) WHERE entity_type = 'company';

CREATE TABLE company_memberships (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL,
  person_id uuid NOT NULL,
  role text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, company_id) REFERENCES people (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, company_id, person_id)
);
CREATE INDEX company_memberships_person ON company_memberships (account_id, person_id);

CREATE TABLE loans (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  product_id uuid,
  name text NOT NULL DEFAULT '',
  amount numeric(14, 2) CHECK (amount >= 0),
  status text NOT NULL DEFAULT 'lead' CHECK (status IN ('lead', 'servicing', 'closed')),
  rate numeric(9, 4) CHECK (rate >= 0),
  term integer CHECK (term > 0),
  frequency text CHECK (frequency IN ('monthly', 'quarterly', 'semi_monthly', 'biweekly', 'weekly', 'annually')),
  amortization text NOT NULL DEFAULT 'amortizing' CHECK (amortization IN ('amortizing', 'interest_only')),
  regular_payment numeric(14, 2),
  date_funded date,
  first_payment_date date,
  date_maturity date,
  custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, product_id) REFERENCES products (account_id, id)
);
CREATE INDEX loans_account_created ON loans (account_id, created_at DESC, id);
CREATE INDEX loans_account_status_created ON loans (account_id, status, created_at DESC, id);

CREATE TABLE borrows (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  person_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, loan_id, person_id)
);
CREATE INDEX borrows_person ON borrows (account_id, person_id);

CREATE TABLE guarantees (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  person_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, loan_id, person_id)
);
CREATE INDEX guarantees_person ON guarantees (account_id, person_id);

CREATE TABLE documents (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  type text,
  uploaded_date date,
  PRIMARY KEY (account_id, id)
);

CREATE TABLE loan_documents (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  document_id uuid NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, document_id) REFERENCES documents (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, loan_id, document_id)
);
CREATE INDEX loan_documents_document ON loan_documents (account_id, document_id);

CREATE TABLE addresses (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  street1 text,
  city text,
  state text,
  zipcode text,
  PRIMARY KEY (account_id, id)
);

CREATE TABLE address_details (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  address_id uuid NOT NULL,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, address_id) REFERENCES addresses (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, loan_id, address_id)
);
CREATE INDEX address_details_address ON address_details (account_id, address_id);

CREATE TABLE valuations (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  address_id uuid NOT NULL,
  value numeric(14, 2),
  valuation_type text,
  report_date date,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, address_id) REFERENCES addresses (account_id, id) ON DELETE CASCADE
);
CREATE INDEX valuations_address_date ON valuations (account_id, address_id, report_date DESC);

CREATE TABLE insurances (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  address_id uuid NOT NULL,
  carrier text,
  type text,
  coverage_amount numeric(14, 2),
  expiration date,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, address_id) REFERENCES addresses (account_id, id) ON DELETE CASCADE
);
CREATE INDEX insurances_address ON insurances (account_id, address_id);

CREATE TABLE payments (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  date date NOT NULL,
  amount numeric(14, 2) NOT NULL,
  type text NOT NULL DEFAULT 'regular',
  method text,
  date_reversed date,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE
);
CREATE INDEX payments_loan_date ON payments (account_id, loan_id, date DESC);

CREATE TABLE schedules (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  number integer NOT NULL,
  due date NOT NULL,
  payment numeric(14, 2) NOT NULL,
  principal numeric(14, 2) NOT NULL,
  interest numeric(14, 2) NOT NULL,
  balance numeric(14, 2) NOT NULL,
  is_next boolean NOT NULL DEFAULT false,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  UNIQUE (account_id, loan_id, number)
);
CREATE INDEX schedules_loan_due ON schedules (account_id, loan_id, due);
CREATE INDEX schedules_next ON schedules (account_id, loan_id) WHERE is_next;
-- At most one next row per loan, enforced by the database.
CREATE UNIQUE INDEX schedules_one_next ON schedules (account_id, loan_id) WHERE is_next;

CREATE TABLE tasks (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid,
  name text NOT NULL,
  status text NOT NULL DEFAULT 'open',
  date_due date,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE
);
CREATE INDEX tasks_loan ON tasks (account_id, loan_id);
CREATE INDEX tasks_due_open ON tasks (account_id, date_due) WHERE status <> 'completed';

CREATE TABLE comments (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  loan_id uuid NOT NULL,
  admin_id uuid,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, admin_id) REFERENCES admins (account_id, id)
);
CREATE INDEX comments_loan ON comments (account_id, loan_id, created_at);

CREATE TABLE funding_sources (
  account_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  person_id uuid NOT NULL,
  loan_id uuid NOT NULL,
  class text,
  rate numeric(9, 4),
  original_amount numeric(14, 2),
  committed_amount numeric(14, 2),
  date_funded date,
  PRIMARY KEY (account_id, id),
  FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, loan_id) REFERENCES loans (account_id, id) ON DELETE CASCADE
);
CREATE INDEX funding_sources_person ON funding_sources (account_id, person_id);
CREATE INDEX funding_sources_loan ON funding_sources (account_id, loan_id);

-- is_next (SPEC §7): for a loan in servicing, the earliest schedule row whose cumulative
-- scheduled total exceeds the sum of the loan's non-reversed payments. Kept true by the
-- database for any writer: statement-level triggers recompute the loans a statement touched.
CREATE FUNCTION loanql_next_schedule_id(p_account uuid, p_loan uuid) RETURNS uuid
LANGUAGE sql STABLE AS $$
  SELECT c.id FROM (
    SELECT s.id, s.due, s.number, sum(s.payment) OVER (ORDER BY s.due, s.number) AS cumulative
    FROM schedules s WHERE s.account_id = p_account AND s.loan_id = p_loan
  ) c
  WHERE (SELECT l.status FROM loans l WHERE l.account_id = p_account AND l.id = p_loan) = 'servicing'
    AND c.cumulative > coalesce((
      SELECT sum(p.amount) FROM payments p
      WHERE p.account_id = p_account AND p.loan_id = p_loan AND p.date_reversed IS NULL), 0)
  ORDER BY c.due, c.number
  LIMIT 1
$$;

-- Two statements (clear, then set) because the unique "one next row" index is checked row by row.
CREATE FUNCTION loanql_refresh_next(p_account uuid[], p_loan uuid[]) RETURNS void
LANGUAGE sql AS $$
  WITH next_rows AS (
    SELECT t.account_id, t.loan_id, loanql_next_schedule_id(t.account_id, t.loan_id) AS next_id
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) t
  )
  UPDATE schedules s SET is_next = false
  FROM next_rows n
  WHERE s.account_id = n.account_id AND s.loan_id = n.loan_id AND s.is_next AND s.id IS DISTINCT FROM n.next_id;

  WITH next_rows AS (
    SELECT t.account_id, loanql_next_schedule_id(t.account_id, t.loan_id) AS next_id
    FROM (SELECT DISTINCT * FROM unnest(p_account, p_loan) AS u(account_id, loan_id)) t
  )
  UPDATE schedules s SET is_next = true
  FROM next_rows n
  WHERE s.account_id = n.account_id AND s.id = n.next_id AND NOT s.is_next;
$$;

CREATE FUNCTION loanql_refresh_next_from_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM loanql_refresh_next(array_agg(account_id), array_agg(loan_id)) FROM changed_rows;
  RETURN NULL;
END $$;

CREATE TRIGGER payments_refresh_next_insert AFTER INSERT ON payments
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();
CREATE TRIGGER payments_refresh_next_update AFTER UPDATE ON payments
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();
CREATE TRIGGER payments_refresh_next_delete AFTER DELETE ON payments
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();
CREATE TRIGGER schedules_refresh_next_insert AFTER INSERT ON schedules
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION loanql_refresh_next_from_new();

CREATE FUNCTION loanql_refresh_next_for_loan() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM loanql_refresh_next(ARRAY[NEW.account_id], ARRAY[NEW.id]);
  RETURN NULL;
END $$;
CREATE TRIGGER loans_refresh_next AFTER UPDATE OF status ON loans
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION loanql_refresh_next_for_loan();
`;
