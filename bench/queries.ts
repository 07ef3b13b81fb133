/**
 * The benchmark's query set (issue #6): each query in the interface's GraphQL, the ONE
 * hand-written SQL statement the baseline server answers it with (same JSON, literal keys,
 * parameters for every value), and how its variables are drawn from the seeded data.
 *
 * Both sides order lists the same way: the engine breaks ties by primary key ascending and
 * orders a list without `order_by` by primary key, so the hand-written SQL does the same.
 */
import type pg from 'pg';

export type Variables = Readonly<Record<string, unknown>>;

/** Values picked from one account's data before timing; requests rotate through them. */
export interface DataSample {
  readonly loanIds: readonly string[];
  readonly loanCount: number;
  readonly taskDueDates: readonly string[];
  /** Open tasks, for the complete-a-task mutation. */
  readonly taskIds: readonly string[];
  /** The investor the `investor` key is made for: the person funding the most loans. */
  readonly investorPersonId: string;
  /** The loans that investor funds. */
  readonly investorLoanIds: readonly string[];
}

export interface BenchQuery {
  /** Short id used in tables and URLs (`q1` … `q8`). */
  readonly id: string;
  readonly title: string;
  readonly graphql: string;
  readonly operationName: string;
  /**
   * A mutation's baseline writes first, in the same transaction: this statement (`$1` the
   * account id, then `baselineWriteParams`) returns the written row's `id`, which the read
   * statement `baselineSql` gets as `$2`.
   */
  readonly baselineWriteSql?: string;
  readonly baselineWriteParams?: (variables: Variables) => readonly unknown[];
  /**
   * For a mutation whose answers differ by what each side wrote (m1's balances move by the cent each
   * side posts): the part of an answer the same-data check compares. bench/ledger.ts checks m1's
   * balances against the stored ledger instead.
   */
  readonly comparable?: (answer: unknown) => unknown;
  /**
   * The role the engine's key carries (default `admin`). For `investor`, the baseline binds the
   * key's `person_id` as `$2`, and its statement applies the role's filter written by hand.
   */
  readonly role?: 'investor';
  /** `$1` is always the account id (`$2` the investor's person id for an investor query); then the values of `baselineParams` (for a mutation: the written id). */
  readonly baselineSql: string;
  readonly baselineParams: (variables: Variables) => readonly unknown[];
  /** The i-th variable set (i counts up; implementations wrap around the sample). */
  readonly variables: (sample: DataSample, i: number) => Variables;
}

const at = <T>(list: readonly T[], i: number): T => {
  const value = list[i % list.length];
  if (value === undefined) throw new Error('the data sample is empty');
  return value;
};

export const QUERIES: readonly BenchQuery[] = [
  {
    id: 'q1',
    title: 'loan by primary key: borrowers, next scheduled payment, last 5 payments, address with newest valuation',
    operationName: 'LoanById',
    graphql: `query LoanById($id: uuid!) {
  loans_by_pk(id: $id) {
    id name amount status rate
    borrows { person { name email } }
    schedules(where: {is_next: {_eq: true}}) { due payment principal interest }
    payments(where: {date_reversed: {_is_null: true}}, order_by: {date: desc}, limit: 5) { date amount type }
    address_details { address { street1 city state zipcode valuations(order_by: {report_date: desc}, limit: 1) { value valuation_type report_date } } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.id, 'name', l.name, 'amount', l.amount, 'status', l.status, 'rate', l.rate,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('name', p.name, 'email', p.email)) ORDER BY b.id), '[]')
                  FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
                 WHERE b.account_id = l.account_id AND b.loan_id = l.id),
    'schedules', (SELECT coalesce(json_agg(json_build_object('due', s.due, 'payment', s.payment, 'principal', s.principal, 'interest', s.interest) ORDER BY s.id), '[]')
                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next),
    'payments', (SELECT coalesce(json_agg(json_build_object('date', x.date, 'amount', x.amount, 'type', x.type) ORDER BY x.date DESC, x.id), '[]')
                   FROM (SELECT pm.id, pm.date, pm.amount, pm.type FROM payments pm
                          WHERE pm.account_id = l.account_id AND pm.loan_id = l.id AND pm.date_reversed IS NULL
                          ORDER BY pm.date DESC, pm.id LIMIT 5) x),
    'address_details', (SELECT coalesce(json_agg(json_build_object('address', json_build_object(
                            'street1', a.street1, 'city', a.city, 'state', a.state, 'zipcode', a.zipcode,
                            'valuations', (SELECT coalesce(json_agg(json_build_object('value', v.value, 'valuation_type', v.valuation_type, 'report_date', v.report_date)), '[]')
                                             FROM (SELECT * FROM valuations v WHERE v.account_id = a.account_id AND v.address_id = a.id
                                                   ORDER BY v.report_date DESC, v.id LIMIT 1) v))) ORDER BY d.id), '[]')
                          FROM address_details d JOIN addresses a ON a.account_id = d.account_id AND a.id = d.address_id
                         WHERE d.account_id = l.account_id AND d.loan_id = l.id))
    FROM loans l WHERE l.account_id = $1 AND l.id = $2)))::text AS response`,
    baselineParams: (v) => [v.id],
    variables: (sample, i) => ({ id: at(sample.loanIds, i) }),
  },
  {
    id: 'q2',
    title: 'servicing loans, newest first, page 3 of 20, with borrower names',
    operationName: 'ServicingPage',
    graphql: `query ServicingPage($status: String!, $limit: Int!, $offset: Int!) {
  loans(where: {status: {_eq: $status}}, order_by: {created_at: desc}, limit: $limit, offset: $offset) {
    id name amount rate created_at
    borrows { person { name } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans', (
  SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'amount', l.amount, 'rate', l.rate, 'created_at', l.created_at,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('name', p.name)) ORDER BY b.id), '[]')
                  FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
                 WHERE b.account_id = l.account_id AND b.loan_id = l.id)) ORDER BY l.created_at DESC, l.id), '[]')
    FROM (SELECT * FROM loans WHERE account_id = $1 AND status = $2 ORDER BY created_at DESC, id LIMIT $3 OFFSET $4) l)))::text AS response`,
    baselineParams: (v) => [v.status, v.limit, v.offset],
    variables: () => ({ status: 'servicing', limit: 20, offset: 40 }),
  },
  {
    id: 'q3',
    title: 'one aggregate over servicing loans: count, sum of amount, avg/min/max of rate',
    operationName: 'ServicingTotals',
    graphql: `query ServicingTotals($status: String!) {
  loans_aggregate(where: {status: {_eq: $status}}) {
    aggregate { count sum { amount } avg { rate } min { rate } max { rate } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_aggregate', json_build_object('aggregate', json_build_object(
    'count', count(*), 'sum', json_build_object('amount', sum(amount)), 'avg', json_build_object('rate', avg(rate)),
    'min', json_build_object('rate', min(rate)), 'max', json_build_object('rate', max(rate))))))::text AS response
  FROM loans WHERE account_id = $1 AND status = $2`,
    baselineParams: (v) => [v.status],
    variables: () => ({ status: 'servicing' }),
  },
  {
    id: 'q4',
    title: 'aliased aggregates in one request: count per status, total count and sum',
    operationName: 'PortfolioByStatus',
    graphql: `query PortfolioByStatus {
  lead: loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count } }
  servicing: loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count } }
  closed: loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { count } }
  all: loans_aggregate { aggregate { count sum { amount } } }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object(
    'lead', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'lead'))),
    'servicing', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'servicing'))),
    'closed', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'closed'))),
    'all', json_build_object('aggregate', json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount))))))::text AS response
  FROM loans WHERE account_id = $1`,
    baselineParams: () => [],
    variables: () => ({}),
  },
  {
    id: 'q5',
    title: "people whose name _ilike '%smi%', 20, with funding sources and each source's loan",
    operationName: 'PeopleByName',
    graphql: `query PeopleByName($pattern: String!) {
  people(where: {name: {_ilike: $pattern}}, limit: 20) {
    id name email
    funding_sources { class committed_amount loan { id name status } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('people', (
  SELECT coalesce(json_agg(json_build_object('id', p.id, 'name', p.name, 'email', p.email,
    'funding_sources', (SELECT coalesce(json_agg(json_build_object('class', f.class, 'committed_amount', f.committed_amount,
                                 'loan', json_build_object('id', l.id, 'name', l.name, 'status', l.status)) ORDER BY f.id), '[]')
                          FROM funding_sources f JOIN loans l ON l.account_id = f.account_id AND l.id = f.loan_id
                         WHERE f.account_id = p.account_id AND f.person_id = p.id)) ORDER BY p.id), '[]')
    FROM (SELECT * FROM people WHERE account_id = $1 AND name ILIKE $2 ORDER BY id LIMIT 20) p)))::text AS response`,
    baselineParams: (v) => [v.pattern],
    variables: () => ({ pattern: '%smi%' }),
  },
  {
    id: 'q6',
    title: 'tasks not completed, due on or before $today, earliest 50, with the loan name',
    operationName: 'TasksDue',
    graphql: `query TasksDue($today: date!) {
  tasks(where: {status: {_neq: "completed"}, date_due: {_lte: $today}}, order_by: {date_due: asc}, limit: 50) {
    id name status date_due
    loan { id name }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('tasks', (
  SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'status', t.status, 'date_due', t.date_due,
    'loan', (SELECT json_build_object('id', l.id, 'name', l.name) FROM loans l WHERE l.account_id = t.account_id AND l.id = t.loan_id))
    ORDER BY t.date_due, t.id), '[]')
    FROM (SELECT * FROM tasks WHERE account_id = $1 AND status <> 'completed' AND date_due <= $2 ORDER BY date_due, id LIMIT 50) t)))::text AS response`,
    baselineParams: (v) => [v.today],
    variables: (sample, i) => ({ today: at(sample.taskDueDates, i) }),
  },
  {
    id: 'q7',
    title: "one loan's non-reversed payments with their _aggregate count and sum",
    operationName: 'LoanPayments',
    graphql: `query LoanPayments($id: uuid!) {
  loans_by_pk(id: $id) {
    id name
    payments(where: {date_reversed: {_is_null: true}}, order_by: {date: desc}) { id date amount type method }
    payments_aggregate(where: {date_reversed: {_is_null: true}}) { aggregate { count sum { amount } } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.id, 'name', l.name,
    'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'date', p.date, 'amount', p.amount, 'type', p.type, 'method', p.method) ORDER BY p.date DESC, p.id), '[]')
                   FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL),
    'payments_aggregate', (SELECT json_build_object('aggregate', json_build_object('count', count(*), 'sum', json_build_object('amount', sum(p.amount))))
                             FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL))
    FROM loans l WHERE l.account_id = $1 AND l.id = $2)))::text AS response`,
    baselineParams: (v) => [v.id],
    variables: (sample, i) => ({ id: at(sample.loanIds, i) }),
  },
  {
    id: 'q8',
    title: '100 loans with every relationship nested',
    operationName: 'LoansWithEverything',
    graphql: `query LoansWithEverything($offset: Int!) {
  loans(order_by: {created_at: desc}, limit: 100, offset: $offset) {
    id name amount status rate term frequency date_funded date_maturity created_at
    borrows { person { id name email } }
    payments(order_by: {date: desc}) { id date amount type method date_reversed }
    schedules(order_by: {number: asc}) { number due payment principal interest balance is_next }
    tasks { id name status date_due }
    comments(order_by: {created_at: asc}) { text created_at admin { name } }
    loan_documents { document { name status type uploaded_date } }
    address_details { address {
      street1 city state zipcode
      valuations(order_by: {report_date: desc}) { value valuation_type report_date }
      insurances { carrier type coverage_amount expiration }
    } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans', (
  SELECT coalesce(json_agg(json_build_object(
    'id', l.id, 'name', l.name, 'amount', l.amount, 'status', l.status, 'rate', l.rate, 'term', l.term, 'frequency', l.frequency,
    'date_funded', l.date_funded, 'date_maturity', l.date_maturity, 'created_at', l.created_at,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('id', p.id, 'name', p.name, 'email', p.email)) ORDER BY b.id), '[]')
                  FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
                 WHERE b.account_id = l.account_id AND b.loan_id = l.id),
    'payments', (SELECT coalesce(json_agg(json_build_object('id', x.id, 'date', x.date, 'amount', x.amount, 'type', x.type, 'method', x.method,
                                 'date_reversed', x.date_reversed) ORDER BY x.date DESC, x.id), '[]')
                   FROM payments x WHERE x.account_id = l.account_id AND x.loan_id = l.id),
    'schedules', (SELECT coalesce(json_agg(json_build_object('number', s.number, 'due', s.due, 'payment', s.payment, 'principal', s.principal,
                                  'interest', s.interest, 'balance', s.balance, 'is_next', s.is_next) ORDER BY s.number, s.id), '[]')
                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id),
    'tasks', (SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'status', t.status, 'date_due', t.date_due) ORDER BY t.id), '[]')
                FROM tasks t WHERE t.account_id = l.account_id AND t.loan_id = l.id),
    'comments', (SELECT coalesce(json_agg(json_build_object('text', c.text, 'created_at', c.created_at,
                                 'admin', (SELECT json_build_object('name', ad.name) FROM admins ad WHERE ad.account_id = c.account_id AND ad.id = c.admin_id))
                                 ORDER BY c.created_at, c.id), '[]')
                   FROM comments c WHERE c.account_id = l.account_id AND c.loan_id = l.id),
    'loan_documents', (SELECT coalesce(json_agg(json_build_object('document', json_build_object('name', doc.name, 'status', doc.status, 'type', doc.type,
                                       'uploaded_date', doc.uploaded_date)) ORDER BY ld.id), '[]')
                         FROM loan_documents ld JOIN documents doc ON doc.account_id = ld.account_id AND doc.id = ld.document_id
                        WHERE ld.account_id = l.account_id AND ld.loan_id = l.id),
    'address_details', (SELECT coalesce(json_agg(json_build_object('address', json_build_object(
                           'street1', a.street1, 'city', a.city, 'state', a.state, 'zipcode', a.zipcode,
                           'valuations', (SELECT coalesce(json_agg(json_build_object('value', v.value, 'valuation_type', v.valuation_type, 'report_date', v.report_date)
                                                   ORDER BY v.report_date DESC, v.id), '[]')
                                            FROM valuations v WHERE v.account_id = a.account_id AND v.address_id = a.id),
                           'insurances', (SELECT coalesce(json_agg(json_build_object('carrier', i.carrier, 'type', i.type, 'coverage_amount', i.coverage_amount,
                                                   'expiration', i.expiration) ORDER BY i.id), '[]')
                                            FROM insurances i WHERE i.account_id = a.account_id AND i.address_id = a.id))) ORDER BY d.id), '[]')
                          FROM address_details d JOIN addresses a ON a.account_id = d.account_id AND a.id = d.address_id
                         WHERE d.account_id = l.account_id AND d.loan_id = l.id)
  ) ORDER BY l.created_at DESC, l.id), '[]')
    FROM (SELECT * FROM loans WHERE account_id = $1 ORDER BY created_at DESC, id LIMIT 100 OFFSET $2) l)))::text AS response`,
    baselineParams: (v) => [v.offset],
    variables: (sample, i) => ({ offset: ((i * 37) % Math.max(1, Math.floor(sample.loanCount / 100))) * 100 }),
  },
  {
    // Issue 30, done-when 5: computed fields (SQL functions of the row, with an argument) against a
    // hand-written statement calling the same functions with the same arguments.
    id: 'q9',
    title: 'computed fields: a payoff quote — one loan by primary key with payoff(as_of) and per_diem(as_of)',
    operationName: 'PayoffQuote',
    graphql: `query PayoffQuote($id: uuid!, $asOf: date!) {
  loans_by_pk(id: $id) {
    id name status
    payoff(args: {as_of: $asOf})
    per_diem(args: {as_of: $asOf})
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.id, 'name', l.name, 'status', l.status,
    'payoff', loanql_loan_payoff(l.account_id, l.id, $3::date), 'per_diem', loanql_loan_per_diem(l.account_id, l.id, $3::date))
    FROM loans l WHERE l.account_id = $1 AND l.id = $2)))::text AS response`,
    baselineParams: (v) => [v.id, v.asOf],
    // Quotes for the 30 days from 2026-11-20 (the seed's payments are dated around its day).
    variables: (sample, i) => ({ id: at(sample.loanIds, i), asOf: new Date(Date.UTC(2026, 10, 20 + (i % 30))).toISOString().slice(0, 10) }),
  },
  {
    id: 'm1',
    title: 'mutation: post a payment, returning the loan\'s next scheduled row and new balances (after the ledger replay, SPEC §12)',
    operationName: 'PostPayment',
    // A payment of one cent rarely moves is_next, so the engine's and the baseline's answers
    // (each posting its own payment) stay comparable; the work is the same whatever the amount.
    graphql: `mutation PostPayment($loan: uuid!, $date: date!, $amount: numeric!) {
  insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: "regular", method: "ach"}) {
    amount date
    loan { principal_outstanding interest_due fees_due credit_balance status schedules(where: {is_next: {_eq: true}}) { number due } }
  }
}`,
    baselineWriteSql: `INSERT INTO payments (account_id, loan_id, date, amount, type, method) VALUES ($1, $2, $3::date, $4::numeric, 'regular', 'ach') RETURNING id`,
    baselineWriteParams: (v) => [v.loan, v.date, v.amount],
    baselineSql: `SELECT json_build_object('data', json_build_object('insert_payments_one', (
  SELECT json_build_object('amount', p.amount, 'date', p.date, 'loan', (
           SELECT json_build_object('principal_outstanding', l.principal_outstanding, 'interest_due', l.interest_due, 'fees_due', l.fees_due,
                                    'credit_balance', l.credit_balance, 'status', l.status,
                                    'schedules', (SELECT coalesce(json_agg(json_build_object('number', s.number, 'due', s.due) ORDER BY s.id), '[]')
                                                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next))
             FROM loans l WHERE l.account_id = p.account_id AND l.id = p.loan_id))
    FROM payments p WHERE p.account_id = $1 AND p.id = $2)))::text AS response`,
    baselineParams: () => [],
    comparable: (answer) =>
      JSON.parse(JSON.stringify(answer), (key, value: unknown) => (['principal_outstanding', 'interest_due', 'fees_due', 'credit_balance'].includes(key) ? typeof value : value)),
    variables: (sample, i) => ({ loan: at(sample.loanIds, i), date: '2026-11-20', amount: '0.01' }),
  },
  {
    id: 'm2',
    title: 'mutation: complete a task by primary key',
    operationName: 'CompleteTask',
    graphql: `mutation CompleteTask($id: uuid!) {
  update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed"}) { id name status }
}`,
    baselineWriteSql: `UPDATE tasks SET status = 'completed' WHERE account_id = $1 AND id = $2 RETURNING id`,
    baselineWriteParams: (v) => [v.id],
    baselineSql: `SELECT json_build_object('data', json_build_object('update_tasks_by_pk', (
  SELECT json_build_object('id', t.id, 'name', t.name, 'status', t.status) FROM tasks t WHERE t.account_id = $1 AND t.id = $2)))::text AS response`,
    baselineParams: () => [],
    variables: (sample, i) => ({ id: at(sample.taskIds, i) }),
  },
];

/**
 * The `investor` role of the shipped metadata (issue 15), hand-written: a loan is visible when
 * the key's person funds it (`$2`), a person only when it is that person, a funding source only
 * when it is theirs. The hand-written statements check each rule once, where a person writing
 * them would: at the root of a list, and on a nested collection whose rule the path does not
 * already imply (`borrows → person`, `loan → funding_sources`). The payments, schedules,
 * borrows and documents of a visible loan are visible by the rule's definition, so they are not
 * checked again; the engine checks every reference (see bench/README.md).
 */
const INVESTOR_LOANS = `SELECT f.loan_id FROM funding_sources f WHERE f.account_id = $1 AND f.person_id = $2`;
const INVESTOR_OWNS_LOAN = `EXISTS (SELECT 1 FROM funding_sources f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.person_id = $2)`;
const INVESTOR_BORROWS = `'borrows', (SELECT coalesce(json_agg(json_build_object('person', (SELECT json_build_object('name', p.name) FROM people p
                                    WHERE p.account_id = b.account_id AND p.id = b.person_id AND p.id = $2)) ORDER BY b.id), '[]')
                  FROM borrows b WHERE b.account_id = l.account_id AND b.loan_id = l.id)`;

export const INVESTOR_QUERIES: readonly BenchQuery[] = [
  {
    id: 'q1i',
    role: 'investor',
    title: 'investor: a funded loan by primary key: borrowers (visible only if the investor), next scheduled payment, last 5 payments, own funding',
    operationName: 'InvestorLoanById',
    graphql: `query InvestorLoanById($id: uuid!) {
  loans_by_pk(id: $id) {
    id name amount status rate
    borrows { person { name } }
    schedules(where: {is_next: {_eq: true}}) { due payment principal interest }
    payments(where: {date_reversed: {_is_null: true}}, order_by: {date: desc}, limit: 5) { date amount type }
    funding_sources { class committed_amount }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.id, 'name', l.name, 'amount', l.amount, 'status', l.status, 'rate', l.rate,
    ${INVESTOR_BORROWS},
    'schedules', (SELECT coalesce(json_agg(json_build_object('due', s.due, 'payment', s.payment, 'principal', s.principal, 'interest', s.interest) ORDER BY s.id), '[]')
                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id AND s.is_next),
    'payments', (SELECT coalesce(json_agg(json_build_object('date', x.date, 'amount', x.amount, 'type', x.type) ORDER BY x.date DESC, x.id), '[]')
                   FROM (SELECT pm.id, pm.date, pm.amount, pm.type FROM payments pm
                          WHERE pm.account_id = l.account_id AND pm.loan_id = l.id AND pm.date_reversed IS NULL
                          ORDER BY pm.date DESC, pm.id LIMIT 5) x),
    'funding_sources', (SELECT coalesce(json_agg(json_build_object('class', f.class, 'committed_amount', f.committed_amount) ORDER BY f.id), '[]')
                          FROM funding_sources f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.person_id = $2))
    FROM loans l WHERE l.account_id = $1 AND l.id = $3 AND ${INVESTOR_OWNS_LOAN})))::text AS response`,
    baselineParams: (v) => [v.id],
    variables: (sample, i) => ({ id: at(sample.investorLoanIds, i) }),
  },
  {
    id: 'q2i',
    role: 'investor',
    title: "investor: the investor's servicing loans, newest first, 20, with borrower names",
    operationName: 'InvestorServicingPage',
    graphql: `query InvestorServicingPage($status: String!, $limit: Int!, $offset: Int!) {
  loans(where: {status: {_eq: $status}}, order_by: {created_at: desc}, limit: $limit, offset: $offset) {
    id name amount rate created_at
    borrows { person { name } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans', (
  SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'amount', l.amount, 'rate', l.rate, 'created_at', l.created_at,
    ${INVESTOR_BORROWS}) ORDER BY l.created_at DESC, l.id), '[]')
    FROM (SELECT * FROM loans WHERE account_id = $1 AND status = $3 AND id IN (${INVESTOR_LOANS})
           ORDER BY created_at DESC, id LIMIT $4 OFFSET $5) l)))::text AS response`,
    baselineParams: (v) => [v.status, v.limit, v.offset],
    variables: () => ({ status: 'servicing', limit: 20, offset: 0 }),
  },
  {
    id: 'q3i',
    role: 'investor',
    title: "investor: one aggregate over the investor's servicing loans",
    operationName: 'InvestorServicingTotals',
    graphql: `query InvestorServicingTotals($status: String!) {
  loans_aggregate(where: {status: {_eq: $status}}) {
    aggregate { count sum { amount } avg { rate } min { rate } max { rate } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_aggregate', json_build_object('aggregate', json_build_object(
    'count', count(*), 'sum', json_build_object('amount', sum(amount)), 'avg', json_build_object('rate', avg(rate)),
    'min', json_build_object('rate', min(rate)), 'max', json_build_object('rate', max(rate))))))::text AS response
  FROM loans WHERE account_id = $1 AND status = $3 AND id IN (${INVESTOR_LOANS})`,
    baselineParams: (v) => [v.status],
    variables: () => ({ status: 'servicing' }),
  },
  {
    id: 'q4i',
    role: 'investor',
    title: "investor: aliased aggregates over the investor's loans: count per status, total count and sum",
    operationName: 'InvestorPortfolioByStatus',
    graphql: `query InvestorPortfolioByStatus {
  lead: loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count } }
  servicing: loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count } }
  closed: loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { count } }
  all: loans_aggregate { aggregate { count sum { amount } } }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object(
    'lead', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'lead'))),
    'servicing', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'servicing'))),
    'closed', json_build_object('aggregate', json_build_object('count', count(*) FILTER (WHERE status = 'closed'))),
    'all', json_build_object('aggregate', json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount))))))::text AS response
  FROM loans WHERE account_id = $1 AND id IN (${INVESTOR_LOANS})`,
    baselineParams: () => [],
    variables: () => ({}),
  },
  {
    id: 'q5i',
    role: 'investor',
    title: "investor: people by name (only the investor is visible), their funding sources and each source's loan",
    operationName: 'InvestorPeopleByName',
    graphql: `query InvestorPeopleByName($pattern: String!) {
  people(where: {name: {_ilike: $pattern}}, limit: 20) {
    id name
    funding_sources { class committed_amount loan { id name status } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('people', (
  SELECT coalesce(json_agg(json_build_object('id', p.id, 'name', p.name,
    'funding_sources', (SELECT coalesce(json_agg(json_build_object('class', f.class, 'committed_amount', f.committed_amount,
                                 'loan', json_build_object('id', l.id, 'name', l.name, 'status', l.status)) ORDER BY f.id), '[]')
                          FROM funding_sources f JOIN loans l ON l.account_id = f.account_id AND l.id = f.loan_id
                         WHERE f.account_id = p.account_id AND f.person_id = p.id)) ORDER BY p.id), '[]')
    FROM (SELECT * FROM people WHERE account_id = $1 AND id = $2 AND name ILIKE $3 ORDER BY id LIMIT 20) p)))::text AS response`,
    baselineParams: (v) => [v.pattern],
    variables: () => ({ pattern: '%' }),
  },
  {
    id: 'q6i',
    role: 'investor',
    title: "investor: next scheduled payments due on or before $today on the investor's loans, earliest 50, with the loan name",
    operationName: 'InvestorNextDue',
    graphql: `query InvestorNextDue($today: date!) {
  schedules(where: {is_next: {_eq: true}, due: {_lte: $today}}, order_by: {due: asc}, limit: 50) {
    number due payment
    loan { id name }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('schedules', (
  SELECT coalesce(json_agg(json_build_object('number', s.number, 'due', s.due, 'payment', s.payment,
    'loan', (SELECT json_build_object('id', l.id, 'name', l.name) FROM loans l WHERE l.account_id = s.account_id AND l.id = s.loan_id))
    ORDER BY s.due, s.id), '[]')
    FROM (SELECT * FROM schedules WHERE account_id = $1 AND is_next AND due <= $3 AND loan_id IN (${INVESTOR_LOANS})
           ORDER BY due, id LIMIT 50) s)))::text AS response`,
    baselineParams: (v) => [v.today],
    variables: (sample, i) => ({ today: at(sample.taskDueDates, i) }),
  },
  {
    id: 'q7i',
    role: 'investor',
    title: "investor: one funded loan's non-reversed payments with their _aggregate count and sum",
    operationName: 'InvestorLoanPayments',
    graphql: `query InvestorLoanPayments($id: uuid!) {
  loans_by_pk(id: $id) {
    id name
    payments(where: {date_reversed: {_is_null: true}}, order_by: {date: desc}) { id date amount type method }
    payments_aggregate(where: {date_reversed: {_is_null: true}}) { aggregate { count sum { amount } } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans_by_pk', (
  SELECT json_build_object('id', l.id, 'name', l.name,
    'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'date', p.date, 'amount', p.amount, 'type', p.type, 'method', p.method) ORDER BY p.date DESC, p.id), '[]')
                   FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL),
    'payments_aggregate', (SELECT json_build_object('aggregate', json_build_object('count', count(*), 'sum', json_build_object('amount', sum(p.amount))))
                             FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL))
    FROM loans l WHERE l.account_id = $1 AND l.id = $3 AND ${INVESTOR_OWNS_LOAN})))::text AS response`,
    baselineParams: (v) => [v.id],
    variables: (sample, i) => ({ id: at(sample.investorLoanIds, i) }),
  },
  {
    id: 'q8i',
    role: 'investor',
    title: "investor: the investor's loans (up to 100) with every relationship the role sees nested",
    operationName: 'InvestorLoansWithEverything',
    graphql: `query InvestorLoansWithEverything($offset: Int!) {
  loans(order_by: {created_at: desc}, limit: 100, offset: $offset) {
    id name amount status rate term frequency date_funded date_maturity created_at
    borrows { person { id name } }
    payments(order_by: {date: desc}) { id date amount type method date_reversed }
    schedules(order_by: {number: asc}) { number due payment principal interest balance is_next }
    funding_sources { class committed_amount date_funded }
    loan_documents { document { name status type uploaded_date } }
  }
}`,
    baselineSql: `SELECT json_build_object('data', json_build_object('loans', (
  SELECT coalesce(json_agg(json_build_object(
    'id', l.id, 'name', l.name, 'amount', l.amount, 'status', l.status, 'rate', l.rate, 'term', l.term, 'frequency', l.frequency,
    'date_funded', l.date_funded, 'date_maturity', l.date_maturity, 'created_at', l.created_at,
    'borrows', (SELECT coalesce(json_agg(json_build_object('person', (SELECT json_build_object('id', p.id, 'name', p.name) FROM people p
                                    WHERE p.account_id = b.account_id AND p.id = b.person_id AND p.id = $2)) ORDER BY b.id), '[]')
                  FROM borrows b WHERE b.account_id = l.account_id AND b.loan_id = l.id),
    'payments', (SELECT coalesce(json_agg(json_build_object('id', x.id, 'date', x.date, 'amount', x.amount, 'type', x.type, 'method', x.method,
                                 'date_reversed', x.date_reversed) ORDER BY x.date DESC, x.id), '[]')
                   FROM payments x WHERE x.account_id = l.account_id AND x.loan_id = l.id),
    'schedules', (SELECT coalesce(json_agg(json_build_object('number', s.number, 'due', s.due, 'payment', s.payment, 'principal', s.principal,
                                  'interest', s.interest, 'balance', s.balance, 'is_next', s.is_next) ORDER BY s.number, s.id), '[]')
                    FROM schedules s WHERE s.account_id = l.account_id AND s.loan_id = l.id),
    'funding_sources', (SELECT coalesce(json_agg(json_build_object('class', f.class, 'committed_amount', f.committed_amount, 'date_funded', f.date_funded) ORDER BY f.id), '[]')
                          FROM funding_sources f WHERE f.account_id = l.account_id AND f.loan_id = l.id AND f.person_id = $2),
    'loan_documents', (SELECT coalesce(json_agg(json_build_object('document', json_build_object('name', doc.name, 'status', doc.status, 'type', doc.type,
                                       'uploaded_date', doc.uploaded_date)) ORDER BY ld.id), '[]')
                         FROM loan_documents ld JOIN documents doc ON doc.account_id = ld.account_id AND doc.id = ld.document_id
                        WHERE ld.account_id = l.account_id AND ld.loan_id = l.id)
  ) ORDER BY l.created_at DESC, l.id), '[]')
    FROM (SELECT * FROM loans WHERE account_id = $1 AND id IN (${INVESTOR_LOANS}) ORDER BY created_at DESC, id LIMIT 100 OFFSET $3) l)))::text AS response`,
    baselineParams: (v) => [v.offset],
    variables: () => ({ offset: 0 }),
  },
];

/** Every query of the benchmark: the admin set, then the investor variants. */
export const ALL_QUERIES: readonly BenchQuery[] = [...QUERIES, ...INVESTOR_QUERIES];

/** Whether a benchmark query writes (its baseline runs a write statement first, in a transaction). */
export const isMutation = (query: BenchQuery): boolean => query.baselineWriteSql !== undefined;

/** Draws the variable sample from one account's data (deterministic order, so runs compare). */
/** The id of the account `slug` (a bench run's `--account`); throws when there is none. */
export async function accountIdOf(client: pg.Pool, slug: string): Promise<string> {
  const id = (await client.query<{ id: string }>('SELECT id FROM accounts WHERE slug = $1', [slug])).rows[0]?.id;
  if (!id) throw new Error(`no account ${slug}`);
  return id;
}

export async function sampleData(client: pg.Pool, accountId: string): Promise<DataSample> {
  const loans = await client.query<{ id: string }>(
    `SELECT id FROM loans WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 500`,
    [accountId],
  );
  const count = await client.query<{ n: string }>('SELECT count(*) AS n FROM loans WHERE account_id = $1', [accountId]);
  const dates = await client.query<{ due: string }>(
    `SELECT DISTINCT date_due::text AS due FROM tasks WHERE account_id = $1 AND date_due IS NOT NULL AND status <> 'completed'
      ORDER BY 1`,
    [accountId],
  );
  // Every tenth distinct due date of open tasks: early dates (few matches) to late ones (many).
  const taskDueDates = dates.rows.filter((_, i) => i % 10 === 0).map((row) => row.due);
  const tasks = await client.query<{ id: string }>(`SELECT id FROM tasks WHERE account_id = $1 AND status <> 'completed' ORDER BY md5(id::text) LIMIT 500`, [accountId]);
  // The investor: the person funding the most loans (ties broken by id, so runs compare).
  const investor = await client.query<{ person_id: string }>(
    `SELECT person_id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(DISTINCT loan_id) DESC, person_id LIMIT 1`,
    [accountId],
  );
  const investorPersonId = investor.rows[0]?.person_id;
  if (!investorPersonId) throw new Error('the account has no funding sources: no investor to benchmark');
  const investorLoans = await client.query<{ loan_id: string }>(
    `SELECT DISTINCT loan_id FROM funding_sources WHERE account_id = $1 AND person_id = $2 ORDER BY loan_id`,
    [accountId, investorPersonId],
  );
  return {
    loanIds: loans.rows.map((row) => row.id),
    loanCount: Number(count.rows[0]?.n ?? 0),
    taskDueDates,
    taskIds: tasks.rows.map((row) => row.id),
    investorPersonId,
    investorLoanIds: investorLoans.rows.map((row) => row.loan_id),
  };
}
