import type { Database, Queryable } from './database.js';

/**
 * Every migration, in order, by the name of its module in `migrations/` (which exports the same
 * `name` and its `sql`). A module is loaded only when its migration has to run: a start with
 * nothing to apply — every CLI command, every later start of the service — reads none of their
 * ~380 KB of SQL (nor runs the text edits later ones make to earlier ones' functions). A migration
 * is applied once, in one transaction.
 */
const MIGRATIONS: readonly string[] = [
  '0001_schema',
  '0002_is_next_on_every_write',
  '0003_dashboard',
  '0004_loan_derived_fields',
  '0005_servicing_writes',
  '0006_webhooks',
  '0007_key_roles',
  '0008_event_outbox',
  '0009_custom_fields_gin',
  '0010_outbox_json',
  '0011_idempotency_scope',
  '0012_servicing_ledger',
  '0013_loan_name_not_blank',
  '0014_servicing_settings',
  '0015_product_settings_replay',
  '0016_faster_replay',
  '0018_fees_and_delinquency',
  '0019_days_past_due_index',
  '0020_account_currency',
  '0022_fee_job_forward',
  '0023_drop_stale_ledger_refresh',
  '0024_distributions',
  '0025_remittances',
  '0026_replay_writes_from_first_difference',
  '0027_key_write_positions',
  '0028_rate_limit_buckets',
  '0029_change_notices',
  '0031_change_notices_by_loan',
  '0032_replay_skips_unchanged_inputs',
  '0033_linear_distribution_split',
  '0034_replay_resumes_after_last_payment',
  '0035_distribution_split_plans_per_call',
  '0037_read_shape_indexes',
  '0038_cheaper_ledger_versions',
  '0039_change_notices_without_dynamic_sql',
  '0040_loan_status_totals_index',
  '0041_one_statement_writes',
  '0042_leaner_full_replay',
  '0043_replay_output_digest',
  '0044_loans_fillfactor',
  '0045_list_order_indexes',
  '0046_arrears_since_replanned',
  '0047_refund_refusal_in_cents',
  '0048_owed_credit_reopens',
  '0049_funding_source_amounts',
  '0050_payment_dates_and_leads',
  '0051_reversal_reason_final',
  '0052_leads_not_past_due',
  '0053_funded_loan_not_lead',
  '0054_close_refusal_in_cents',
  '0055_payments_stream_index',
  '0061_payment_needs_schedule',
  '0063_custom_field_values_checked',
  '0064_custom_field_values_as_rest',
  '0065_payment_date_within_a_year',
  '0066_unremitted_lines_covering',
  '0067_settings_change_waits_for_payments',
  '0068_account_profile',
  '0070_funding_checks_lock_the_loan',
  '0071_several_writes_take_turns',
  '0074_task_and_comment_rules',
  '0075_fee_job_day_complete',
  '0078_close_by_hand_credit',
  '0079_rule_sentences_in_the_database',
  '0081_before_funding',
  '0083_leads_owe_nothing',
  '0084_funding_day_on_every_write',
  '0086_loan_removal',
  '0087_task_assignee',
  '0090_servicing_rules_every_path',
];

/**
 * The database holds migrations this build does not know: a newer loanql migrated it. This build
 * refuses it, before it changes or serves anything — its code and SQL predate that schema (a
 * rollback to an older version needs the backup taken before the upgrade; README "Upgrading").
 */
export class DatabaseNewerThanBuildError extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(
      `the database was migrated by a newer version of loanql: it has migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, ` +
        `which this version (up to ${MIGRATIONS[MIGRATIONS.length - 1]}) does not know; nothing was changed. ` +
        'Run the newer version, or restore the backup taken before the upgrade (README, "Upgrading")',
    );
    this.name = 'DatabaseNewerThanBuildError';
  }
}

/**
 * A migration failed. The pending migrations run in one transaction, so none of them was applied:
 * the database is as it was before this start.
 */
export class MigrationFailedError extends Error {
  constructor(
    readonly migration: string,
    readonly pending: readonly string[],
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `migration ${migration} failed: ${reason}; nothing was applied, the database is as it was before ` +
        (pending.length === 1 ? '(it ran alone, in one transaction)' : `(the ${pending.length} pending migrations, ${pending[0]} to ${pending[pending.length - 1]}, run in one transaction)`),
      { cause },
    );
    this.name = 'MigrationFailedError';
  }
}

/**
 * Brings the database up to date. The same runner and SQL serve PostgreSQL and PGlite.
 * An advisory lock keeps two processes migrating one PostgreSQL database from racing: the second
 * waits for the first's transaction, then finds nothing to apply. A database that holds a
 * migration this build does not know is refused (`DatabaseNewerThanBuildError`); a migration that
 * fails rolls back every one this start applied (`MigrationFailedError` names it).
 * Returns the names of the migrations it applied.
 */
export async function migrate(database: Database): Promise<string[]> {
  const ran = await database.transaction(async (tx) => migrateInTransaction(tx));
  // A migration may create or fill tables: fresh statistics for the planner (PGlite has no
  // autovacuum to gather them). Only when something ran, so a start with nothing to do stays fast.
  if (ran.length) await database.query('ANALYZE');
  return ran;
}

/** The names of every migration this build knows, in order (a backup's header is checked against them). */
export function knownMigrations(): readonly string[] {
  return MIGRATIONS;
}

/**
 * `migrate`'s work inside the caller's transaction `tx`: takes the advisory lock, refuses a newer
 * database, and applies the pending migrations — all of them, or those up to and including `upTo`
 * (a restore brings an empty database to its backup's schema, no further). Returns their names.
 */
export async function migrateInTransaction(tx: Queryable, upTo?: string): Promise<string[]> {
  await tx.query('SELECT pg_advisory_xact_lock(4242001)');
  await tx.query(`CREATE TABLE IF NOT EXISTS loanql_migrations (
    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
  const { rows } = await tx.query<{ name: string }>('SELECT name FROM loanql_migrations ORDER BY name');
  const applied = new Set(rows.map((row) => row.name));
  const known = new Set(MIGRATIONS);
  const unknown = rows.map((row) => row.name).filter((name) => !known.has(name));
  if (unknown.length) throw new DatabaseNewerThanBuildError(unknown);
  const last = upTo === undefined ? MIGRATIONS.length : MIGRATIONS.indexOf(upTo) + 1;
  if (last === 0) throw new Error(`no migration is named ${upTo}`);
  const pending = MIGRATIONS.slice(0, last).filter((name) => !applied.has(name));
  for (const name of pending) {
    try {
      const migration = (await import(`./migrations/${name}.js`)) as { readonly name: string; readonly sql: string };
      if (migration.name !== name) throw new Error(`db/migrations/${name} names itself ${migration.name}`);
      await tx.script(migration.sql);
      await tx.query('INSERT INTO loanql_migrations (name) VALUES ($1)', [migration.name]);
    } catch (error) {
      throw new MigrationFailedError(name, pending, error);
    }
  }
  return pending;
}
