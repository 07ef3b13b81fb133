/**
 * The single-lender server's statements (issue 36): the admin queries of bench/queries.ts written
 * by hand for the schema of bench/singleLender.ts — no tenant predicate, `bigint` joins, the
 * API's uuids read from `uid` — answering with the same JSON as the service (same keys, same
 * order; lists ordered as SPEC §5 orders them, ties by primary key, which here is the `bigint`
 * numbered in uuid order). Parameters are the query's own values from `$1`; the server appends
 * the API key's id for its state check.
 *
 * m1 (post a payment) is left out: its answer is the loanql ledger's replay (SPEC §12), which a
 * single-lender schema without that ledger would not do, so the comparison would not be of the
 * same work. The investor variants are left out too (bench/README.md, "The single-lender server").
 */
import type { Variables } from './queries.js';

export interface SingleLenderStatement {
  readonly sql: string;
  readonly params: (variables: Variables) => readonly unknown[];
  /** A mutation: this statement runs first and returns the written row's `id` (`$1` of `sql`). */
  readonly write?: { readonly sql: string; readonly params: (variables: Variables) => readonly unknown[] };
}

export const SINGLE_LENDER_STATEMENTS: Readonly<Record<string, SingleLenderStatement>> = {
  q1: {
    sql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.uid, 'name', l.name, 'amount', l.amount, 'status', l.status, 'rate', l.rate,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('name', p.name, 'email', p.email)) ORDER BY b.id), '[]')
                  FROM borrows b JOIN people p ON p.id = b.person_id WHERE b.loan_id = l.id),
    'schedules', (SELECT coalesce(json_agg(json_build_object('due', s.due, 'payment', s.payment, 'principal', s.principal, 'interest', s.interest) ORDER BY s.id), '[]')
                    FROM schedules s WHERE s.loan_id = l.id AND s.is_next),
    'payments', (SELECT coalesce(json_agg(json_build_object('date', x.date, 'amount', x.amount, 'type', x.type) ORDER BY x.date DESC, x.id), '[]')
                   FROM (SELECT pm.id, pm.date, pm.amount, pm.type FROM payments pm WHERE pm.loan_id = l.id AND pm.date_reversed IS NULL
                          ORDER BY pm.date DESC, pm.id LIMIT 5) x),
    'address_details', (SELECT coalesce(json_agg(json_build_object('address', json_build_object(
                            'street1', a.street1, 'city', a.city, 'state', a.state, 'zipcode', a.zipcode,
                            'valuations', (SELECT coalesce(json_agg(json_build_object('value', v.value, 'valuation_type', v.valuation_type, 'report_date', v.report_date)), '[]')
                                             FROM (SELECT * FROM valuations v WHERE v.address_id = a.id ORDER BY v.report_date DESC, v.id LIMIT 1) v))) ORDER BY d.id), '[]')
                          FROM address_details d JOIN addresses a ON a.id = d.address_id WHERE d.loan_id = l.id))
    FROM loans l WHERE l.uid = $1)))::text AS response`,
    params: (v) => [v.id],
  },
  q2: {
    sql: `SELECT json_build_object('data', json_build_object('loans', (
  SELECT coalesce(json_agg(json_build_object('id', l.uid, 'name', l.name, 'amount', l.amount, 'rate', l.rate, 'created_at', l.created_at,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('name', p.name)) ORDER BY b.id), '[]')
                  FROM borrows b JOIN people p ON p.id = b.person_id WHERE b.loan_id = l.id)) ORDER BY l.created_at DESC, l.id), '[]')
    FROM (SELECT * FROM loans WHERE status = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3) l)))::text AS response`,
    params: (v) => [v.status, v.limit, v.offset],
  },
  q3: {
    sql: `SELECT json_build_object('data', json_build_object('loans_aggregate', json_build_object('aggregate', json_build_object(
    'count', count(*), 'sum', json_build_object('amount', sum(amount)), 'avg', json_build_object('rate', avg(rate)),
    'min', json_build_object('rate', min(rate)), 'max', json_build_object('rate', max(rate))))))::text AS response
  FROM loans WHERE status = $1`,
    params: (v) => [v.status],
  },
  q4: {
    sql: `SELECT json_build_object('data', json_build_object(
    'lead', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'lead'))),
    'servicing', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'servicing'))),
    'closed', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'closed'))),
    'all', json_build_object('aggregate', json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount))))))::text AS response
  FROM loans`,
    params: () => [],
  },
  q5: {
    sql: `SELECT json_build_object('data', json_build_object('people', (
  SELECT coalesce(json_agg(json_build_object('id', p.uid, 'name', p.name, 'email', p.email,
    'funding_sources', (SELECT coalesce(json_agg(json_build_object('class', f.class, 'committed_amount', f.committed_amount,
                                 'loan', json_build_object('id', l.uid, 'name', l.name, 'status', l.status)) ORDER BY f.id), '[]')
                          FROM funding_sources f JOIN loans l ON l.id = f.loan_id WHERE f.person_id = p.id)) ORDER BY p.id), '[]')
    FROM (SELECT * FROM people WHERE name ILIKE $1 ORDER BY id LIMIT 20) p)))::text AS response`,
    params: (v) => [v.pattern],
  },
  q6: {
    sql: `SELECT json_build_object('data', json_build_object('tasks', (
  SELECT coalesce(json_agg(json_build_object('id', t.uid, 'name', t.name, 'status', t.status, 'date_due', t.date_due,
    'loan', (SELECT json_build_object('id', l.uid, 'name', l.name) FROM loans l WHERE l.id = t.loan_id))
    ORDER BY t.date_due, t.id), '[]')
    FROM (SELECT * FROM tasks WHERE status <> 'completed' AND date_due <= $1 ORDER BY date_due, id LIMIT 50) t)))::text AS response`,
    params: (v) => [v.today],
  },
  q7: {
    sql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.uid, 'name', l.name,
    'payments', (SELECT coalesce(json_agg(json_build_object('id', p.uid, 'date', p.date, 'amount', p.amount, 'type', p.type, 'method', p.method) ORDER BY p.date DESC, p.id), '[]')
                   FROM payments p WHERE p.loan_id = l.id AND p.date_reversed IS NULL),
    'payments_aggregate', (SELECT json_build_object('aggregate', json_build_object('count', count(*), 'sum', json_build_object('amount', sum(p.amount))))
                             FROM payments p WHERE p.loan_id = l.id AND p.date_reversed IS NULL))
    FROM loans l WHERE l.uid = $1)))::text AS response`,
    params: (v) => [v.id],
  },
  q8: {
    sql: `SELECT json_build_object('data', json_build_object('loans', (
  SELECT coalesce(json_agg(json_build_object(
    'id', l.uid, 'name', l.name, 'amount', l.amount, 'status', l.status, 'rate', l.rate, 'term', l.term, 'frequency', l.frequency,
    'date_funded', l.date_funded, 'date_maturity', l.date_maturity, 'created_at', l.created_at,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('id', p.uid, 'name', p.name, 'email', p.email)) ORDER BY b.id), '[]')
                  FROM borrows b JOIN people p ON p.id = b.person_id WHERE b.loan_id = l.id),
    'payments', (SELECT coalesce(json_agg(json_build_object('id', x.uid, 'date', x.date, 'amount', x.amount, 'type', x.type, 'method', x.method,
                                 'date_reversed', x.date_reversed) ORDER BY x.date DESC, x.id), '[]')
                   FROM payments x WHERE x.loan_id = l.id),
    'schedules', (SELECT coalesce(json_agg(json_build_object('number', s.number, 'due', s.due, 'payment', s.payment, 'principal', s.principal,
                                  'interest', s.interest, 'balance', s.balance, 'is_next', s.is_next) ORDER BY s.number, s.id), '[]')
                    FROM schedules s WHERE s.loan_id = l.id),
    'tasks', (SELECT coalesce(json_agg(json_build_object('id', t.uid, 'name', t.name, 'status', t.status, 'date_due', t.date_due) ORDER BY t.id), '[]')
                FROM tasks t WHERE t.loan_id = l.id),
    'comments', (SELECT coalesce(json_agg(json_build_object('text', c.text, 'created_at', c.created_at,
                                 'admin', (SELECT json_build_object('name', ad.name) FROM admins ad WHERE ad.id = c.admin_id))
                                 ORDER BY c.created_at, c.id), '[]')
                   FROM comments c WHERE c.loan_id = l.id),
    'loan_documents', (SELECT coalesce(json_agg(json_build_object('document', json_build_object('name', doc.name, 'status', doc.status, 'type', doc.type,
                                       'uploaded_date', doc.uploaded_date)) ORDER BY ld.id), '[]')
                         FROM loan_documents ld JOIN documents doc ON doc.id = ld.document_id WHERE ld.loan_id = l.id),
    'address_details', (SELECT coalesce(json_agg(json_build_object('address', json_build_object(
                           'street1', a.street1, 'city', a.city, 'state', a.state, 'zipcode', a.zipcode,
                           'valuations', (SELECT coalesce(json_agg(json_build_object('value', v.value, 'valuation_type', v.valuation_type, 'report_date', v.report_date)
                                                   ORDER BY v.report_date DESC, v.id), '[]')
                                            FROM valuations v WHERE v.address_id = a.id),
                           'insurances', (SELECT coalesce(json_agg(json_build_object('carrier', i.carrier, 'type', i.type, 'coverage_amount', i.coverage_amount,
                                                   'expiration', i.expiration) ORDER BY i.id), '[]')
                                            FROM insurances i WHERE i.address_id = a.id))) ORDER BY d.id), '[]')
                          FROM address_details d JOIN addresses a ON a.id = d.address_id WHERE d.loan_id = l.id)
  ) ORDER BY l.created_at DESC, l.id), '[]')
    FROM (SELECT * FROM loans ORDER BY created_at DESC, id LIMIT 100 OFFSET $1) l)))::text AS response`,
    params: (v) => [v.offset],
  },
  m2: {
    write: { sql: `UPDATE tasks SET status = 'completed' WHERE uid = $1 RETURNING id`, params: (v) => [v.id] },
    sql: `SELECT json_build_object('data', json_build_object('update_tasks_by_pk', (
  SELECT json_build_object('id', t.uid, 'name', t.name, 'status', t.status) FROM tasks t WHERE t.id = $1)))::text AS response`,
    params: () => [],
  },
};
