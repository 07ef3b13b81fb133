import type { Queryable } from '../db/index.js';

export interface LoanPage {
  readonly loans: unknown[];
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
}

/** A page of the account's loans, newest first (SPEC §6). */
export async function listLoans(db: Queryable, accountId: string, query: { status?: string; limit: number; offset: number }): Promise<LoanPage> {
  const { rows } = await db.query<{ page: { loans: unknown[]; total: number } }>(
    `SELECT json_build_object(
        'loans', coalesce((SELECT json_agg(l ORDER BY l.created_at DESC, l.id) FROM (
            SELECT id, name, amount, status, rate, term, frequency, amortization, regular_payment,
                   date_funded, first_payment_date, date_maturity, custom_fields, created_at
              FROM loans WHERE account_id = $1 AND ($2::text IS NULL OR status = $2)
             ORDER BY created_at DESC, id LIMIT $3 OFFSET $4) l), '[]'::json),
        'total', (SELECT count(*) FROM loans WHERE account_id = $1 AND ($2::text IS NULL OR status = $2))) AS page`,
    [accountId, query.status ?? null, query.limit, query.offset],
  );
  const page = rows[0]!.page;
  return { loans: page.loans, total: Number(page.total), limit: query.limit, offset: query.offset };
}
