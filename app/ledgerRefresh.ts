import type { Database } from '../db/index.js';

/**
 * Time alone changes a ledger (SPEC §12 R4: rows fall due and late fees accrue on a Sunday with
 * no write). `refreshStaleLedgers` replays every serviced loan whose stored ledger is of an
 * earlier day than its account's business date, 500 loans per transaction, until none is left:
 * idempotent, and it catches up after any downtime. The service runs it beside its webhook
 * worker (`startLedgerRefresh`); `loanql ledger refresh` runs it once.
 */
export async function refreshStaleLedgers(db: Database): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await db.query<{ replayed: number }>('SELECT loanql_refresh_stale_ledgers(500) AS replayed');
    const replayed = Number(rows[0]?.replayed ?? 0);
    total += replayed;
    if (replayed < 500) return total;
  }
}

export interface LedgerRefreshLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/** Runs `refreshStaleLedgers` now and every `intervalMs` (15 minutes); returns a stop function. */
export function startLedgerRefresh(db: Database, logger: LedgerRefreshLogger, intervalMs = 15 * 60 * 1000): () => void {
  let running = false;
  const tick = (): void => {
    if (running) return;
    running = true;
    refreshStaleLedgers(db)
      .then((replayed) => {
        if (replayed > 0) logger.info({ replayed }, 'ledgers refreshed for the business date');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'refreshing ledgers failed; the next run tries again'))
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  setTimeout(tick, 1000).unref();
  return () => clearInterval(timer);
}
