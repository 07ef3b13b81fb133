/**
 * Product settings editable with the product (issue 29; SPEC §12 "Settings per product"). The
 * rules the settings' editor (`app/productSettings.ts`) relies on, held here for every writer:
 *
 * - **Every late-fee setting replays the product's loans.** 0012 replayed them when
 *   `allocation_order`, `day_count` or `arrears_tolerance` changed; yet the replay derives the late
 *   fees (R4) from `late_fee_grace_days`, `late_fee_percent`, `late_fee_fixed`, `late_fee_min` and
 *   `late_fee_max` too. What a loan owes follows from its product's settings, recomputed by replay
 *   (§12), so a change of any of them now re-derives the existing late fees in the same
 *   transaction: a fee keeps its id (and its waiver) when its row still gets one, takes the new
 *   amount and date, and is removed when the new rule gives none. `nsf_fee` is not among them: an
 *   NSF fee is a record made when the payment is reversed (R8), and keeps the amount it was made
 *   with. Neither are `delinquency_buckets` (read as of a day, never stored) nor
 *   `investor_fee_share` (distributions are not stored yet).
 * - **A late fee is a percent or a fixed amount, not both.** §12 says a fee is the fixed amount if
 *   set, else the percent; a product showing both would show a percent that does nothing. Rows
 *   that have both keep what the replay did (the fixed amount): their percent is cleared first.
 *   Both may be unset: no late fees.
 * - **A minimum or maximum needs a percent or a fixed amount.** With neither, 0012's replay made a
 *   fee of the bound alone (`greatest(NULL, min)` is `min`), where "no percent and no fixed
 *   amount" means no late fee. A product in that state has its bounds cleared (after the trigger
 *   above exists, so its loans are replayed without those fees).
 */
export const name = '0015_product_settings_replay';

export const sql = /* sql */ `
DROP TRIGGER products_replay_loans ON products;
CREATE TRIGGER products_replay_loans
  AFTER UPDATE OF allocation_order, day_count, arrears_tolerance, late_fee_grace_days, late_fee_percent, late_fee_fixed, late_fee_min, late_fee_max ON products
  FOR EACH ROW WHEN ((OLD.allocation_order, OLD.day_count, OLD.arrears_tolerance, OLD.late_fee_grace_days, OLD.late_fee_percent, OLD.late_fee_fixed, OLD.late_fee_min, OLD.late_fee_max)
                     IS DISTINCT FROM (NEW.allocation_order, NEW.day_count, NEW.arrears_tolerance, NEW.late_fee_grace_days, NEW.late_fee_percent, NEW.late_fee_fixed, NEW.late_fee_min, NEW.late_fee_max))
  EXECUTE FUNCTION loanql_replay_product_loans();

UPDATE products SET late_fee_percent = NULL WHERE late_fee_fixed IS NOT NULL AND late_fee_percent IS NOT NULL;
ALTER TABLE products ADD CONSTRAINT products_late_fee_percent_or_fixed CHECK (late_fee_percent IS NULL OR late_fee_fixed IS NULL);
UPDATE products SET late_fee_min = NULL, late_fee_max = NULL
 WHERE late_fee_percent IS NULL AND late_fee_fixed IS NULL AND (late_fee_min IS NOT NULL OR late_fee_max IS NOT NULL);
ALTER TABLE products ADD CONSTRAINT products_late_fee_bounds_need_rule
  CHECK (late_fee_percent IS NOT NULL OR late_fee_fixed IS NOT NULL OR (late_fee_min IS NULL AND late_fee_max IS NULL));
`;
