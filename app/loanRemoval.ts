import type { Database, Queryable } from '../db/index.js';

/** What a loan's removal came to (`DELETE /api/loan/{id}`, the dashboard's Delete). */
export type LoanRemoval<Seen> =
  /** Deleted, with its non-money rows; `loan` is what the caller read of it just before (`seenBy`'s answer). */
  | { readonly kind: 'removed'; readonly loan: Seen }
  /** No such loan for this caller (none, another account's, outside its role's delete filter, or not a uuid). */
  | { readonly kind: 'not-found' }
  /** It holds money history (SPEC §12: never deleted): the database's sentence and what it holds. */
  | ({ readonly kind: 'holds-money' } & MoneyHeld);

/** How the caller sees the loan inside the removal's transaction (REST: its `{"loan": …}` text), or null when it may not remove it. */
export type LoanAsSeen<Seen> = (tx: Queryable, loanId: string) => Promise<Seen | null>;

/** Why a loan may not be removed — the database's sentence and what it holds (`{"payments": 2}`) — or null when it may (migration 0086's one list). */
export async function loanRemovalRefusal(db: Queryable, accountId: string, loanId: string): Promise<MoneyHeld | null> {
  const { rows } = await db.query<{ holds: Record<string, number>; refusal: string | null }>(
    'SELECT loanql_loan_money_held($1, $2) AS holds, loanql_loan_removal_refusal($1, $2) AS refusal',
    [accountId, loanId],
  );
  const found = rows[0];
  return found && found.refusal !== null ? { message: found.refusal, holds: found.holds } : null;
}

export interface MoneyHeld {
  readonly message: string;
  readonly holds: Readonly<Record<string, number>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Removes a loan entered by mistake (a lead typed twice, a test loan) with its schedule rows,
 * tasks, comments and links, in one transaction — unless it holds a payment (reversed or not), a
 * manual or NSF fee, a fee waiver, a funding source or a distribution line: money is never deleted (SPEC §12),
 * and migration 0086's trigger refuses that delete for every writer. The loan is locked first, as
 * every write of a loan does, so a payment posted meanwhile waits for the removal and then finds
 * no loan; or the removal waits for it and is refused.
 */
export async function removeLoan<Seen>(db: Database, accountId: string, loanId: string, seenBy: LoanAsSeen<Seen>): Promise<LoanRemoval<Seen>> {
  if (!UUID.test(loanId)) return { kind: 'not-found' };
  return db.transaction(async (tx) => {
    // The lock first, then what the loan holds in a statement of its own: its snapshot is taken
    // once the lock is held, so it sees a payment committed by the write it waited for (one
    // statement would count with the snapshot taken before the wait, and the trigger would then
    // refuse the DELETE as a fault). Money rows reference the loan, so none is added meanwhile.
    const locked = await tx.query('SELECT 1 FROM loans WHERE account_id = $1 AND id = $2 FOR UPDATE', [accountId, loanId]);
    if (!locked.rows.length) return { kind: 'not-found' };
    const loan = await seenBy(tx, loanId);
    if (loan === null) return { kind: 'not-found' };
    const refusal = await loanRemovalRefusal(tx, accountId, loanId);
    if (refusal) return { kind: 'holds-money', ...refusal };
    await tx.query('DELETE FROM loans WHERE account_id = $1 AND id = $2', [accountId, loanId]);
    return { kind: 'removed', loan };
  });
}
