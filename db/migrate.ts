import type { Database } from './database.js';

/**
 * Every migration, in order: its name, and its module (`name`, `sql`), loaded only when it has to
 * run. A start with nothing to apply — every CLI command, every later start of the service — reads
 * none of their ~380 KB of SQL (nor runs the text edits later ones make to earlier ones' functions).
 * A migration is applied once, in one transaction.
 */
const MIGRATIONS: readonly { readonly name: string; load(): Promise<{ readonly name: string; readonly sql: string }> }[] = [
  { name: '0001_schema', load: () => import('./migrations/0001_schema.js') },
  { name: '0002_is_next_on_every_write', load: () => import('./migrations/0002_is_next_on_every_write.js') },
  { name: '0003_dashboard', load: () => import('./migrations/0003_dashboard.js') },
  { name: '0004_loan_derived_fields', load: () => import('./migrations/0004_loan_derived_fields.js') },
  { name: '0005_servicing_writes', load: () => import('./migrations/0005_servicing_writes.js') },
  { name: '0006_webhooks', load: () => import('./migrations/0006_webhooks.js') },
  { name: '0007_key_roles', load: () => import('./migrations/0007_key_roles.js') },
  { name: '0008_event_outbox', load: () => import('./migrations/0008_event_outbox.js') },
  { name: '0009_custom_fields_gin', load: () => import('./migrations/0009_custom_fields_gin.js') },
  { name: '0010_outbox_json', load: () => import('./migrations/0010_outbox_json.js') },
  { name: '0011_idempotency_scope', load: () => import('./migrations/0011_idempotency_scope.js') },
  { name: '0012_servicing_ledger', load: () => import('./migrations/0012_servicing_ledger.js') },
  { name: '0013_loan_name_not_blank', load: () => import('./migrations/0013_loan_name_not_blank.js') },
  { name: '0014_servicing_settings', load: () => import('./migrations/0014_servicing_settings.js') },
  { name: '0015_product_settings_replay', load: () => import('./migrations/0015_product_settings_replay.js') },
  { name: '0016_faster_replay', load: () => import('./migrations/0016_faster_replay.js') },
  { name: '0018_fees_and_delinquency', load: () => import('./migrations/0018_fees_and_delinquency.js') },
  { name: '0019_days_past_due_index', load: () => import('./migrations/0019_days_past_due_index.js') },
  { name: '0020_account_currency', load: () => import('./migrations/0020_account_currency.js') },
  { name: '0022_fee_job_forward', load: () => import('./migrations/0022_fee_job_forward.js') },
  { name: '0023_drop_stale_ledger_refresh', load: () => import('./migrations/0023_drop_stale_ledger_refresh.js') },
  { name: '0024_distributions', load: () => import('./migrations/0024_distributions.js') },
  { name: '0025_remittances', load: () => import('./migrations/0025_remittances.js') },
  { name: '0026_replay_writes_from_first_difference', load: () => import('./migrations/0026_replay_writes_from_first_difference.js') },
  { name: '0027_key_write_positions', load: () => import('./migrations/0027_key_write_positions.js') },
  { name: '0028_rate_limit_buckets', load: () => import('./migrations/0028_rate_limit_buckets.js') },
  { name: '0029_change_notices', load: () => import('./migrations/0029_change_notices.js') },
  { name: '0031_change_notices_by_loan', load: () => import('./migrations/0031_change_notices_by_loan.js') },
  { name: '0032_replay_skips_unchanged_inputs', load: () => import('./migrations/0032_replay_skips_unchanged_inputs.js') },
  { name: '0033_linear_distribution_split', load: () => import('./migrations/0033_linear_distribution_split.js') },
  { name: '0034_replay_resumes_after_last_payment', load: () => import('./migrations/0034_replay_resumes_after_last_payment.js') },
  { name: '0035_distribution_split_plans_per_call', load: () => import('./migrations/0035_distribution_split_plans_per_call.js') },
  { name: '0037_read_shape_indexes', load: () => import('./migrations/0037_read_shape_indexes.js') },
  { name: '0038_cheaper_ledger_versions', load: () => import('./migrations/0038_cheaper_ledger_versions.js') },
  { name: '0039_change_notices_without_dynamic_sql', load: () => import('./migrations/0039_change_notices_without_dynamic_sql.js') },
  { name: '0040_loan_status_totals_index', load: () => import('./migrations/0040_loan_status_totals_index.js') },
  { name: '0041_one_statement_writes', load: () => import('./migrations/0041_one_statement_writes.js') },
  { name: '0042_leaner_full_replay', load: () => import('./migrations/0042_leaner_full_replay.js') },
  { name: '0043_replay_output_digest', load: () => import('./migrations/0043_replay_output_digest.js') },
  { name: '0044_loans_fillfactor', load: () => import('./migrations/0044_loans_fillfactor.js') },
  { name: '0045_list_order_indexes', load: () => import('./migrations/0045_list_order_indexes.js') },
  { name: '0046_arrears_since_replanned', load: () => import('./migrations/0046_arrears_since_replanned.js') },
];

/**
 * Brings the database up to date. The same runner and SQL serve PostgreSQL and PGlite.
 * An advisory lock keeps two processes migrating one PostgreSQL database from racing.
 * Returns the names of the migrations it applied.
 */
export async function migrate(database: Database): Promise<string[]> {
  const ran = await database.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(4242001)');
    await tx.query(`CREATE TABLE IF NOT EXISTS loanql_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ name: string }>('SELECT name FROM loanql_migrations');
    const applied = new Set(rows.map((row) => row.name));
    const ran: string[] = [];
    for (const entry of MIGRATIONS) {
      if (applied.has(entry.name)) continue;
      const migration = await entry.load();
      if (migration.name !== entry.name) throw new Error(`db/migrations/${entry.name} names itself ${migration.name}`);
      await tx.script(migration.sql);
      await tx.query('INSERT INTO loanql_migrations (name) VALUES ($1)', [migration.name]);
      ran.push(migration.name);
    }
    return ran;
  });
  // A migration may create or fill tables: fresh statistics for the planner (PGlite has no
  // autovacuum to gather them). Only when something ran, so a start with nothing to do stays fast.
  if (ran.length) await database.query('ANALYZE');
  return ran;
}
