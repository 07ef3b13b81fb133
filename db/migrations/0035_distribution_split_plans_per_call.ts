/**
 * Issue 28: the R10 split (`loanql_distribute_payments`, 0033) planned for the batch it is given.
 * Since 0026, `loanql_replay_loans` runs with `plan_cache_mode = force_generic_plan`, and a
 * function's SET stays in force for the functions it calls: the split's one large statement was
 * planned once for arrays of unknown length (nested loops sized for ten payments) and kept. A
 * seed's final replay hands it every payment of 500 loans at once: the demo's first start (500
 * loans, ~10,000 payments) went from ~10 s to ~100 s under load, three quarters of it here (4.0
 * CPU-seconds for the 4,000 payments of a scale-0.02 seed with the generic plan, 1.2 with a plan
 * for the batch). The function now sets `plan_cache_mode = auto`, PostgreSQL's default: its first
 * calls in a session are planned for their own arrays, and PostgreSQL keeps a generic plan only
 * when it costs no more than those. Nothing it computes changes (docs/ledger.md, "Distributions (R10)", Cost).
 */
export const name = '0035_distribution_split_plans_per_call';

export const sql = /* sql */ `
ALTER FUNCTION loanql_distribute_payments(uuid[], uuid[]) SET plan_cache_mode = auto;
`;
