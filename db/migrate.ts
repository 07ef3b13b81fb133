import type { Database } from './database.js';
import * as schema from './migrations/0001_schema.js';
import * as isNextOnEveryWrite from './migrations/0002_is_next_on_every_write.js';
import * as dashboard from './migrations/0003_dashboard.js';
import * as loanDerivedFields from './migrations/0004_loan_derived_fields.js';
import * as servicingWrites from './migrations/0005_servicing_writes.js';
import * as webhooks from './migrations/0006_webhooks.js';
import * as keyRoles from './migrations/0007_key_roles.js';
import * as eventOutbox from './migrations/0008_event_outbox.js';
import * as customFieldsGin from './migrations/0009_custom_fields_gin.js';
import * as outboxJson from './migrations/0010_outbox_json.js';
import * as idempotencyScope from './migrations/0011_idempotency_scope.js';
import * as servicingLedger from './migrations/0012_servicing_ledger.js';
import * as loanNameNotBlank from './migrations/0013_loan_name_not_blank.js';
import * as servicingSettings from './migrations/0014_servicing_settings.js';
import * as productSettingsReplay from './migrations/0015_product_settings_replay.js';
import * as fasterReplay from './migrations/0016_faster_replay.js';
import * as feesAndDelinquency from './migrations/0018_fees_and_delinquency.js';
import * as daysPastDueIndex from './migrations/0019_days_past_due_index.js';
import * as accountCurrency from './migrations/0020_account_currency.js';
import * as feeJobForward from './migrations/0022_fee_job_forward.js';
import * as dropStaleLedgerRefresh from './migrations/0023_drop_stale_ledger_refresh.js';
import * as distributions from './migrations/0024_distributions.js';
import * as remittances from './migrations/0025_remittances.js';
import * as replayWritesFromFirstDifference from './migrations/0026_replay_writes_from_first_difference.js';
import * as keyWritePositions from './migrations/0027_key_write_positions.js';
import * as rateLimitBuckets from './migrations/0028_rate_limit_buckets.js';
import * as changeNotices from './migrations/0029_change_notices.js';
import * as changeNoticesByLoan from './migrations/0031_change_notices_by_loan.js';
import * as replaySkipsUnchangedInputs from './migrations/0032_replay_skips_unchanged_inputs.js';
import * as linearDistributionSplit from './migrations/0033_linear_distribution_split.js';
import * as replayResumesAfterLastPayment from './migrations/0034_replay_resumes_after_last_payment.js';
import * as distributionSplitPlansPerCall from './migrations/0035_distribution_split_plans_per_call.js';
import * as readShapeIndexes from './migrations/0037_read_shape_indexes.js';
import * as cheaperLedgerVersions from './migrations/0038_cheaper_ledger_versions.js';
import * as changeNoticesWithoutDynamicSql from './migrations/0039_change_notices_without_dynamic_sql.js';
import * as loanStatusTotalsIndex from './migrations/0040_loan_status_totals_index.js';
import * as oneStatementWrites from './migrations/0041_one_statement_writes.js';
import * as leanerFullReplay from './migrations/0042_leaner_full_replay.js';
import * as replayOutputDigest from './migrations/0043_replay_output_digest.js';
import * as loansFillfactor from './migrations/0044_loans_fillfactor.js';
import * as listOrderIndexes from './migrations/0045_list_order_indexes.js';
import * as arrearsSinceReplanned from './migrations/0046_arrears_since_replanned.js';

/** Every migration, in order. A migration is applied once, in one transaction. */
const MIGRATIONS: readonly { readonly name: string; readonly sql: string }[] = [schema, isNextOnEveryWrite, dashboard, loanDerivedFields, servicingWrites, webhooks, keyRoles, eventOutbox, customFieldsGin, outboxJson, idempotencyScope, servicingLedger, loanNameNotBlank, servicingSettings, productSettingsReplay, fasterReplay, feesAndDelinquency, daysPastDueIndex, accountCurrency, feeJobForward, dropStaleLedgerRefresh, distributions, remittances, replayWritesFromFirstDifference, keyWritePositions, rateLimitBuckets, changeNotices, changeNoticesByLoan, replaySkipsUnchangedInputs, linearDistributionSplit, replayResumesAfterLastPayment, distributionSplitPlansPerCall, readShapeIndexes, cheaperLedgerVersions, changeNoticesWithoutDynamicSql, loanStatusTotalsIndex, oneStatementWrites, leanerFullReplay, replayOutputDigest, loansFillfactor, listOrderIndexes, arrearsSinceReplanned];

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
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.name)) continue;
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
