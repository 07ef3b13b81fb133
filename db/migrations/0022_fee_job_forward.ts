/**
 * The daily fee job replays only the loans the passing days can change (issue 31: under 60 s for
 * 100,000 loans). docs/ledger.md ("Fees, waivers and the daily job", "Bringing a ledger forward
 * without a replay") has the reasoning, rule by rule.
 *
 * A loan's stored ledger is its replay as of `ledger_as_of` (L). As of a later day D, with no
 * payment dated after L, no fee dated or waived after L and no late fee falling due in (L, D], the
 * replay runs over the same payments, activates the same fees, applies the same waivers and
 * settles on the same day; what differs is only:
 * - `interest_due` (R2): the unpaid interest of the rows due ≤ D — the stored value plus the
 *   unpaid interest of the stored rows due in (L, D];
 * - `days_past_due` (R3; 0 for a loan not in servicing): the earliest row due before the day with
 *   unpaid principal and interest above the tolerance; if it was before L (stored days > 0) it is
 *   still that row, so L's days + (D − L); else the earliest such stored row due in [L, D);
 *   the bucket follows by 0018's trigger (and with it `loan.delinquency_changed`);
 * - `ledger_as_of` = D (`loanql_stored_as_of`: no payment is dated after L).
 * (`arrears_since`, 0019, is not recomputed for them: no row changes.) Every other loan is replayed. `loanql_assess_fees_batch` (0018's, replaced: its OUT columns
 * change) locks a batch, then in its next statements (which see every write committed before the
 * locks) sorts it and brings the loans forward with one UPDATE, and replays the rest.
 */
export const name = '0022_fee_job_forward';

export const sql = /* sql */ `
ALTER TABLE ledger_job_days ADD COLUMN loans_forwarded integer NOT NULL DEFAULT 0;

-- 0019's arrears date is read from the stored rows on every write of a loan; bringing a loan
-- forward writes no row, so the job's UPDATE skips it (loanql.forwarding, set only around that
-- UPDATE): half of the UPDATE's cost.
DROP TRIGGER loans_arrears_since ON loans;
CREATE TRIGGER loans_arrears_since BEFORE INSERT OR UPDATE ON loans FOR EACH ROW
  WHEN (current_setting('loanql.forwarding', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION loanql_loan_arrears_since();

DROP FUNCTION loanql_assess_fees_batch(uuid, date, uuid, integer);

-- The next batch of the account's serviced loans whose stored ledger is of a day before p_as_of
-- (ids after p_after, in id order; loans another transaction holds are skipped: it is writing
-- them): the loans the days in between can change are replayed as of p_as_of, the others brought
-- forward in one UPDATE. Returns the batch's size, how many were replayed and brought forward, its
-- last id, and the fees the replays assessed.
CREATE FUNCTION loanql_assess_fees_batch(p_account uuid, p_as_of date, p_after uuid DEFAULT NULL, p_batch integer DEFAULT 2000,
                                         OUT loans_taken integer, OUT loans_replayed integer, OUT loans_forwarded integer,
                                         OUT last_id uuid, OUT fees_assessed integer, OUT fees_amount numeric)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  batch uuid[];
  replay uuid[];
BEGIN
  PERFORM set_config('loanql.business_date', p_as_of::text, true);
  SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}') INTO batch FROM (
    SELECT l.id FROM loans l
     WHERE l.account_id = p_account AND (p_after IS NULL OR l.id > p_after) AND l.status IN ('servicing', 'overpaid')
       AND (l.ledger_as_of IS NULL OR l.ledger_as_of < p_as_of)
     ORDER BY l.id LIMIT p_batch
       FOR NO KEY UPDATE SKIP LOCKED) x;
  loans_taken := cardinality(batch);
  last_id := batch[loans_taken];
  loans_replayed := 0;
  loans_forwarded := 0;
  fees_assessed := 0;
  fees_amount := 0;
  IF loans_taken = 0 THEN RETURN; END IF;

  PERFORM set_config('loanql.forwarding', 'on', true);
  -- Per loan, from its product (the account's default when it has none; no product: 0012's
  -- defaults) and its stored rows due in (L − grace − 1, D], read by the schedules_loan_due range:
  -- whether a late fee falls due in (L, D] on a row not fully paid (R4), the unpaid interest of the
  -- rows falling due (R2), and the earliest row in [L, D) above the tolerance (R3).
  WITH w AS MATERIALIZED (
         SELECT l.id, l.ledger_as_of AS l_as_of, l.status, l.days_past_due, r.*,
                l.ledger_as_of IS NULL
                OR r.late_fee
                OR EXISTS (SELECT 1 FROM payments py WHERE py.account_id = l.account_id AND py.loan_id = l.id AND py.date > l.ledger_as_of)
                OR EXISTS (SELECT 1 FROM fees f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND (f.date > l.ledger_as_of OR f.waived_on > l.ledger_as_of))
                OR EXISTS (SELECT 1 FROM fee_waivers fw WHERE fw.account_id = l.account_id AND fw.loan_id = l.id AND fw.waived_on > l.ledger_as_of)
                  AS needs_replay
           FROM loans l
          CROSS JOIN LATERAL (
                SELECT coalesce(pr.late_fee_grace_days, 10) AS grace, coalesce(pr.arrears_tolerance, 0) AS tolerance
                  FROM (SELECT 1) one
                  LEFT JOIN LATERAL (
                        SELECT p.late_fee_grace_days, p.arrears_tolerance FROM products p
                         WHERE p.account_id = l.account_id AND (p.id = l.product_id OR (l.product_id IS NULL AND p.is_default))
                         ORDER BY p.id = l.product_id DESC LIMIT 1) pr ON true) g
          CROSS JOIN LATERAL (
                SELECT coalesce(bool_or(s.due + g.grace + 1 > l.ledger_as_of AND s.due + g.grace + 1 <= p_as_of
                                        AND s.interest - s.interest_paid + s.principal - s.principal_paid > 0), false) AS late_fee,
                       coalesce(sum(s.interest - s.interest_paid) FILTER (WHERE s.due > l.ledger_as_of), 0) AS interest_falling_due,
                       min(s.due) FILTER (WHERE s.due >= l.ledger_as_of AND s.due < p_as_of
                                          AND s.interest - s.interest_paid + s.principal - s.principal_paid > g.tolerance) AS arrears_from
                  FROM schedules s
                 WHERE s.account_id = l.account_id AND s.loan_id = l.id
                   AND s.due > l.ledger_as_of - g.grace - 1 AND s.due <= p_as_of) r
          WHERE l.account_id = p_account AND l.id = ANY (batch)),
       forwarded AS (
         UPDATE loans l
            SET ledger_as_of = p_as_of,
                interest_due = l.interest_due + w.interest_falling_due,
                days_past_due = CASE WHEN l.status <> 'servicing' THEN 0
                                     WHEN l.days_past_due > 0 THEN l.days_past_due + (p_as_of - w.l_as_of)
                                     WHEN w.arrears_from IS NOT NULL THEN p_as_of - w.arrears_from
                                     ELSE 0 END
           FROM w
          WHERE NOT w.needs_replay AND l.account_id = p_account AND l.id = w.id
         RETURNING l.id)
  SELECT coalesce((SELECT array_agg(w.id ORDER BY w.id) FROM w WHERE w.needs_replay), '{}'), (SELECT count(*) FROM forwarded)
    INTO replay, loans_forwarded;
  PERFORM set_config('loanql.forwarding', 'off', true);

  loans_replayed := cardinality(replay);
  IF loans_replayed = 0 THEN RETURN; END IF;
  PERFORM loanql_refresh_next(array_fill(p_account, ARRAY[loans_replayed]), replay);
  SELECT count(*), coalesce(sum(f.amount), 0) INTO fees_assessed, fees_amount
    FROM fees f WHERE f.account_id = p_account AND f.loan_id = ANY (replay) AND f.created_at >= started;
END $$;
`;
