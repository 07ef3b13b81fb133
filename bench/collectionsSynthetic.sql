-- 100,000 synthetic loans for bench/collections.ts (issue 31) when `loanql seed --scale 10` cannot finish:
-- psql "$DATABASE_URL" -f bench/collectionsSynthetic.sql after `loanql account create bench10`; then
-- node --import tsx bench/collections.ts --account bench10 --note '…'. 24 monthly rows a loan, 90 % in servicing,
-- 70 % paying every row due, the rest stopped 1–400 days ago; balances stored as the replay would (no replay: loanql.replaying on).
\set ON_ERROR_STOP on
BEGIN;
SELECT set_config('loanql.replaying', 'on', true), set_config('loanql.capture_events', 'off', true);
SELECT id AS acc FROM accounts WHERE slug = 'bench10' \gset
INSERT INTO products (account_id, name, is_default) VALUES (:'acc', 'Default', true);
-- 60,000 people, 100,000 loans (90 % servicing), 24 monthly rows each.
INSERT INTO people (account_id, name, email, phone, is_borrower)
  SELECT :'acc', 'Person ' || i, 'p' || i || '@example.test', '(555) ' || lpad((i % 10000)::text, 4, '0'), true FROM generate_series(1, 60000) i;
ANALYZE people;
CREATE TEMP TABLE p AS SELECT id, row_number() OVER (ORDER BY id) AS n FROM people WHERE account_id = :'acc';
CREATE TEMP TABLE g AS
  SELECT i, gen_random_uuid() AS id, (current_date - 30 * (i % 24) - (i % 29))::date AS first_due,
         -- 70 % pay every row due; the rest stopped paying 1–400 days ago
         CASE WHEN i % 10 < 7 THEN 0 ELSE 1 + (i * 37) % 400 END AS lateness
    FROM generate_series(1, 100000) i;
INSERT INTO loans (account_id, id, name, amount, status, rate, term, frequency, date_funded, first_payment_date, regular_payment)
  SELECT :'acc', g.id, i || ' Synthetic St Loan', 24000, CASE WHEN i % 10 = 9 THEN 'closed' ELSE 'servicing' END, 12, 24, 'monthly', first_due - 30, first_due, 1129.76 FROM g;
ANALYZE loans;
CREATE INDEX ON p (n); ANALYZE p; ANALYZE g;
INSERT INTO borrows (account_id, loan_id, person_id) SELECT :'acc', g.id, p.id FROM g JOIN p ON p.n = 1 + g.i % 60000;
INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance, interest_paid, principal_paid)
  SELECT :'acc', g.id, k, (g.first_due + make_interval(months => k - 1))::date, 1129.76, 889.76, 240.00, 24000 - 889.76 * k,
         CASE WHEN (g.first_due + make_interval(months => k - 1))::date < current_date - g.lateness THEN 240.00 ELSE 0 END,
         CASE WHEN (g.first_due + make_interval(months => k - 1))::date < current_date - g.lateness THEN 889.76 ELSE 0 END
    FROM g, generate_series(1, 24) k;
ANALYZE schedules;
INSERT INTO payments (account_id, loan_id, date, amount, type, method)
  SELECT :'acc', s.loan_id, s.due, 1129.76, 'regular', 'ach' FROM schedules s WHERE s.account_id = :'acc' AND s.principal_paid > 0;
-- Stored balances as the replay would leave them, then arrears_since by the loans' own trigger.
UPDATE loans l SET principal_outstanding = 24000 - x.principal_paid, fees_due = x.late_rows * 56.49, interest_due = x.interest_owed,
                   credit_balance = 0, oldest_unpaid_due = x.oldest, ledger_as_of = current_date
  FROM (SELECT s.loan_id, sum(s.principal_paid) AS principal_paid, min(s.due) FILTER (WHERE s.principal_paid = 0) AS oldest,
               count(*) FILTER (WHERE s.principal_paid = 0 AND s.due < current_date - 10) AS late_rows,
               sum(s.interest - s.interest_paid) FILTER (WHERE s.due <= current_date) AS interest_owed
          FROM schedules s WHERE s.account_id = :'acc' GROUP BY s.loan_id) x
 WHERE l.account_id = :'acc' AND l.id = x.loan_id;
COMMIT;
VACUUM ANALYZE;
SELECT count(*) AS loans, count(*) FILTER (WHERE status = 'servicing' AND arrears_since < loanql_business_date(account_id)) AS late FROM loans WHERE account_id = :'acc';
