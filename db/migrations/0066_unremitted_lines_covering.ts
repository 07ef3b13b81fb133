/**
 * The remittance run (`app/remittances.ts`, RUN: what the lender owes each investor — the
 * dashboard's Remittance page, its CSV and `GET /api/remittances`) sums every unremitted investor
 * line dated up to the period's end, by investor (and the investor's name) and component.
 * PostgreSQL 15 walked those lines in investor order through `distributions_person_date` to merge
 * them with `people`, fetching each line from the table for its component, adjustment flag and
 * amount: a lender with 10,000 loans that had not yet remitted (~197,000 lines over four years;
 * session 37) spent 1.85 s of the statement's 2.58 s there, and the Remittance page took
 * 1.1–2.8 s on a loaded machine — four times that lender would pass the 10 s statement timeout
 * (a 503 since the same session, a 500 before). 0025's `distributions_unremitted (account_id,
 * date)` finds the same lines but not in that order, and covering it did not change the plan.
 *
 * This index holds the unremitted investor lines in investor order with every column the run
 * reads, so the run is an index-only scan: the statement 0.46–0.83 s, the page 0.6–1.1 s on the
 * same loaded machine. 0025's index stays: a mark's stamping (`STAMP`) takes the lines in date order.
 * A line is written into one more (partial) index while it is unremitted; a mark takes it out.
 * On a running database: a `CREATE INDEX` (SHARE lock: reads go on, distribution writes wait for the
 * build, about 1 s per 200,000 unremitted lines).
 */
export const name = '0066_unremitted_lines_covering';

export const sql = /* sql */ `
CREATE INDEX distributions_unremitted_by_person ON distributions (account_id, person_id, date) INCLUDE (component, adjustment, amount)
  WHERE remittance_id IS NULL AND funding_source_id IS NOT NULL;
`;
