/**
 * Issue 32: \`loanql_distribute_payments\` (0024) in time linear in the payments it splits. 0024
 * summed the sources' shares with a subquery per (payment, component) and looked for existing
 * lines with a subquery per payment, each scanning the whole CTE: quadratic in the batch, which a
 * seed (hundreds of loans' payments in one replay) or a reversal early in a long loan with several
 * sources made slow. Both are joins now; what is computed is unchanged.
 */
export const name = '0033_linear_distribution_split';

export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION loanql_distribute_payments(p_account uuid[], p_payment uuid[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  cause uuid := nullif(current_setting('loanql.distribution_cause', true), '')::uuid;
BEGIN
  IF coalesce(cardinality(p_payment), 0) = 0 THEN RETURN; END IF;
  WITH pay AS (
         SELECT DISTINCT p.account_id, p.id, p.loan_id, p.date
           FROM unnest(p_account, p_payment) AS u(account_id, id)
           JOIN payments p ON p.account_id = u.account_id AND p.id = u.id),
       terms AS (
         SELECT pay.*, l.amount * 100 AS amount_cents, l.rate * 10000 AS rate4,
                coalesce(pr.investor_fee_share, 0) * 10000 AS share4
           FROM pay JOIN loans l ON l.account_id = pay.account_id AND l.id = pay.loan_id
           LEFT JOIN LATERAL (SELECT pr.investor_fee_share FROM products pr
                               WHERE pr.account_id = l.account_id AND (pr.id = l.product_id OR (l.product_id IS NULL AND pr.is_default))
                               ORDER BY pr.id = l.product_id DESC LIMIT 1) pr ON true),
       -- each payment's total per component now, in cents (a reversed payment has no lines: 0)
       totals AS (
         SELECT t.*, c.component, coalesce(s.cents, 0) AS cents,
                CASE c.component
                  WHEN 'principal' THEN t.amount_cents
                  WHEN 'interest' THEN t.amount_cents * t.rate4
                  ELSE t.amount_cents * 10000 END AS den
           FROM terms t
          CROSS JOIN (VALUES ('principal', 'principal'), ('interest', 'interest'), ('fees', 'fee')) AS c(component, allocation_component)
           LEFT JOIN LATERAL (SELECT sum(a.amount) * 100 AS cents FROM payment_allocations a
                               WHERE a.account_id = t.account_id AND a.payment_id = t.id AND a.component = c.allocation_component) s ON true),
       -- the funding sources sharing each component (none when the loan has no amount, or no rate for interest)
       shares AS (
         SELECT x.account_id, x.id AS payment_id, x.loan_id, x.component, x.cents, x.den, f.id AS funding_source_id, f.person_id,
                row_number() OVER (PARTITION BY x.account_id, x.id, x.component ORDER BY f.date_funded, f.id) AS ord,
                x.cents * f.original_amount * 100 * CASE x.component
                  WHEN 'principal' THEN 1
                  WHEN 'interest' THEN least(coalesce(f.rate, x.rate4 / 10000) * 10000, x.rate4)
                  ELSE x.share4 END AS num
           FROM totals x
           JOIN funding_sources f ON f.account_id = x.account_id AND f.loan_id = x.loan_id
            AND f.date_funded <= x.date AND f.original_amount > 0
          WHERE x.den > 0),
       -- 0033: the sources' shares summed once per payment and component (was a subquery per row)
       shared AS (
         SELECT s.account_id, s.payment_id, s.component, sum(s.num) AS num FROM shares s GROUP BY 1, 2, 3),
       parties AS (
         SELECT s.account_id, s.payment_id, s.loan_id, s.component, s.cents, s.den, s.funding_source_id, s.person_id, s.ord, s.num FROM shares s
         UNION ALL
         -- the lender: the rest, last on ties
         SELECT x.account_id, x.id, x.loan_id, x.component, x.cents, greatest(x.den, 1), NULL, NULL, 1000000,
                x.cents * greatest(x.den, 1) - coalesce(sh.num, 0)
           FROM totals x
           LEFT JOIN shared sh ON sh.account_id = x.account_id AND sh.payment_id = x.id AND sh.component = x.component),
       floored AS (
         SELECT p.*, q.fl, p.num - q.fl * p.den AS rem
           FROM parties p
          CROSS JOIN LATERAL (SELECT div(p.num, p.den) - CASE WHEN p.num < 0 AND mod(p.num, p.den) <> 0 THEN 1 ELSE 0 END AS fl) q),
       ranked AS (
         SELECT f.*, f.cents - sum(f.fl) OVER w AS leftover,
                row_number() OVER (PARTITION BY f.account_id, f.payment_id, f.component ORDER BY f.rem DESC, f.ord) AS place
           FROM floored f
         WINDOW w AS (PARTITION BY f.account_id, f.payment_id, f.component)),
       split AS (
         SELECT r.account_id, r.payment_id, r.loan_id, r.component, r.funding_source_id, r.person_id,
                (r.fl + CASE WHEN r.place <= r.leftover THEN 1 ELSE 0 END) / 100.0 AS amount
           FROM ranked r),
       existing AS (
         SELECT d.account_id, d.payment_id, d.funding_source_id, d.component, sum(d.amount) AS amount,
                (array_agg(d.person_id))[1] AS person_id
           FROM pay JOIN distributions d ON d.account_id = pay.account_id AND d.payment_id = pay.id
          GROUP BY 1, 2, 3, 4),
       delta AS (
         SELECT coalesce(s.account_id, e.account_id) AS account_id, coalesce(s.payment_id, e.payment_id) AS payment_id,
                coalesce(s.funding_source_id, e.funding_source_id) AS funding_source_id, coalesce(s.person_id, e.person_id) AS person_id,
                coalesce(s.component, e.component) AS component, coalesce(s.amount, 0) - coalesce(e.amount, 0) AS amount
           FROM split s FULL JOIN existing e
             ON e.account_id = s.account_id AND e.payment_id = s.payment_id AND e.component = s.component
            AND coalesce(e.funding_source_id, '00000000-0000-0000-0000-000000000000') = coalesce(s.funding_source_id, '00000000-0000-0000-0000-000000000000')),
       changed AS (
         SELECT d.* FROM delta d WHERE d.amount <> 0),
       -- one batch per payment written: original lines (the payment's date), or adjustments dated the
       -- cause's reversal (a reversal) or the business date (a posting), caused by the payment this
       -- transaction wrote last on the loan (loanql.distribution_cause), or the payment itself when reversed
       batch AS (
         SELECT pay.account_id, gen_random_uuid() AS id, pay.loan_id, pay.id AS payment_id, a.adjustment,
                CASE WHEN NOT a.adjustment THEN NULL WHEN me.date_reversed IS NOT NULL THEN pay.id ELSE c.id END AS cause_payment_id,
                CASE WHEN NOT a.adjustment THEN pay.date
                     WHEN me.date_reversed IS NOT NULL THEN me.date_reversed
                     ELSE coalesce(c.date_reversed, loanql_business_date(pay.account_id)) END AS date
           FROM pay
           JOIN payments me ON me.account_id = pay.account_id AND me.id = pay.id
          -- 0033: a join with the payments that have lines (was a subquery per payment)
           LEFT JOIN (SELECT DISTINCT e.account_id, e.payment_id FROM existing e) ex ON ex.account_id = pay.account_id AND ex.payment_id = pay.id
          CROSS JOIN LATERAL (SELECT ex.payment_id IS NOT NULL AS adjustment) a
           LEFT JOIN payments c ON c.account_id = pay.account_id AND c.id = cause AND c.loan_id = pay.loan_id
          WHERE EXISTS (SELECT 1 FROM changed d WHERE d.account_id = pay.account_id AND d.payment_id = pay.id)),
       batches AS (
         INSERT INTO distribution_batches (account_id, id, loan_id, payment_id, adjustment, cause_payment_id, date)
         SELECT b.account_id, b.id, b.loan_id, b.payment_id, b.adjustment, b.cause_payment_id, b.date FROM batch b
         RETURNING *)
  INSERT INTO distributions (account_id, loan_id, payment_id, funding_source_id, person_id, component, amount, adjustment, cause_payment_id, date, batch_id)
  SELECT d.account_id, b.loan_id, d.payment_id, d.funding_source_id, d.person_id, d.component, d.amount, b.adjustment, b.cause_payment_id, b.date, b.id
    FROM changed d JOIN batches b ON b.account_id = d.account_id AND b.payment_id = d.payment_id
   ORDER BY d.payment_id, CASE d.component WHEN 'principal' THEN 1 WHEN 'interest' THEN 2 ELSE 3 END, d.funding_source_id IS NULL;
END $$;
`;
