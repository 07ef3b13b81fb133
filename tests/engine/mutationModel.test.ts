import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { analyzeGrownTables } from '../../db/index.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';

/**
 * Issue 14, Done-when 4: random sequences of payment posts, reversals (and refused second
 * reversals), loan status changes and task writes, sent as GraphQL mutations — several at once
 * where they can be — against an in-memory model of SPEC §7: after every step, `is_next` and
 * every read of the loan (payments, tasks, status) equal the model's.
 */
let database: TestDatabase;
let server: TestServer;
let accountId: string;
let key: string;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const created = await createAccountWithKey(database.db);
  accountId = created.account.id;
  key = created.apiKey.key;
  // No late fees here (payments come months after the dues): the model is §7's rows and R9.
  await database.db.query(`INSERT INTO products (account_id, name, is_default) VALUES ($1, 'Default', true) ON CONFLICT DO NOTHING`, [accountId]);
  await database.db.query(`UPDATE products SET late_fee_percent = 0 WHERE account_id = $1`, [accountId]);
});
after(async () => {
  await server?.close();
  await database?.close();
});

interface GraphAnswer {
  data?: any;
  errors?: { message: string; extensions?: { code?: string } }[];
}
async function graph(query: string, variables: Record<string, unknown> = {}): Promise<GraphAnswer> {
  const response = await fetch(`${server.url}/api/graph`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  assert.equal(response.status, 200);
  return (await response.json()) as GraphAnswer;
}

type Action =
  | { kind: 'post'; cents: readonly number[] }
  | { kind: 'reverse'; pick: number }
  | { kind: 'unreverse'; pick: number }
  | { kind: 'status'; status: 'lead' | 'servicing' }
  | { kind: 'addTask'; name: string }
  | { kind: 'completeTask'; pick: number }
  | { kind: 'deleteTask'; pick: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('post' as const), cents: fc.array(fc.integer({ min: 1, max: 250_000 }), { minLength: 1, maxLength: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unreverse' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom('lead' as const, 'servicing' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('addTask' as const), name: fc.string({ minLength: 1, maxLength: 12 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('completeTask' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteTask' as const), pick: fc.nat() }) },
);

interface Model {
  status: string;
  installments: number[];
  payments: { id: string; cents: number; reversed: boolean }[];
  tasks: { id: string; name: string; status: string }[];
}

/** SPEC §7: the earliest row whose cumulative total exceeds the non-reversed payments; none unless servicing. */
function modelNext(model: Model): number | null {
  if (model.status !== 'servicing') return null;
  const paid = model.payments.filter((p) => !p.reversed).reduce((sum, p) => sum + p.cents, 0);
  let cumulative = 0;
  for (const [index, cents] of model.installments.entries()) {
    cumulative += cents;
    if (cumulative > paid) return index + 1;
  }
  return null;
}

/** What the live payments pay against the installments, and whether every row is paid by them. */
function ledgerOf(model: Model): { paid: number; total: number; settled: boolean } {
  const live = model.payments.filter((p) => !p.reversed);
  const paid = live.reduce((sum, p) => sum + p.cents, 0);
  const total = model.installments.reduce((sum, cents) => sum + cents, 0);
  return { paid, total, settled: model.installments.length > 0 && live.length > 0 && paid >= total };
}

/**
 * SPEC §12 R9, as the ledger applies it after every write: a serviced loan whose rows are all paid
 * is closed (overpaid with money to spare); a reversal that reopens a balance puts it back in
 * servicing. (Closing by hand is refused while money is owed: tests/db/isNext and the ledger's
 * own tests cover it; here statuses are set by hand only to lead and servicing.)
 */
function settle(model: Model): void {
  const { paid, total, settled } = ledgerOf(model);
  if (['servicing', 'closed', 'overpaid'].includes(model.status) && settled) model.status = paid > total ? 'overpaid' : 'closed';
  else if (model.status === 'closed' || model.status === 'overpaid') model.status = 'servicing';
}

const money = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

async function newLoan(installments: readonly number[]): Promise<string> {
  // Fresh statistics as the tables grow, as the service keeps them on PGlite (db/statisticsUpkeep.ts): the
  // replay's plans are then made for the rows written so far (tests/README.md, "How long", session 17).
  await analyzeGrownTables(database.db);
  const { rows } = await database.db.query<{ id: string }>(`INSERT INTO loans (account_id, name, status) VALUES ($1, 'model', 'servicing') RETURNING id`, [accountId]);
  const loanId = rows[0]!.id;
  await database.db.query(
    `INSERT INTO schedules (account_id, loan_id, number, due, payment, principal, interest, balance)
     SELECT $1, $2, n, (date '2026-01-31' + make_interval(months => n::int - 1))::date, p, p, 0, 0 FROM unnest($3::numeric[]) WITH ORDINALITY AS s(p, n)`,
    [accountId, loanId, installments.map(money)],
  );
  return loanId;
}

const READ = `query($id: uuid!) { loans_by_pk(id: $id) { status schedules { number is_next } payments { id amount date_reversed } tasks { id name status } } }`;

async function checkAgainstModel(loanId: string, model: Model, step: string): Promise<void> {
  const loan = (await graph(READ, { id: loanId })).data.loans_by_pk;
  const next = loan.schedules.filter((row: { is_next: boolean }) => row.is_next).map((row: { number: number }) => row.number);
  assert.deepEqual(next, modelNext(model) === null ? [] : [modelNext(model)], `is_next after ${step}`);
  assert.equal(loan.status, model.status, step);
  const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((x, y) => x.id.localeCompare(y.id));
  assert.deepEqual(
    (byId(loan.payments) as { id: string; amount: number; date_reversed: string | null }[]).map((p) => [p.id, money(Math.round(p.amount * 100)), p.date_reversed !== null]),
    byId(model.payments).map((p) => [p.id, money(p.cents), p.reversed]),
    `payments after ${step}`,
  );
  assert.deepEqual(byId(loan.tasks), byId(model.tasks), `tasks after ${step}`);
}

async function apply(loanId: string, model: Model, act: Action): Promise<void> {
  switch (act.kind) {
    case 'post': {
      // Several posts at once: concurrent requests on one loan.
      const answers = await Promise.all(
        act.cents.map((cents) =>
          graph(`mutation($loan: uuid!, $amount: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-06-01", amount: $amount}) { id loan { schedules(where: {is_next: {_eq: true}}) { number } } } }`, {
            loan: loanId,
            amount: money(cents),
          }),
        ),
      );
      answers.forEach((answer, index) => {
        if (model.status === 'lead') {
          // A lead takes no payment (migration 0050): refused, nothing written.
          assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
          assert.match(answer.errors![0]!.message, /loan_id: the loan is a lead/);
          return;
        }
        assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
        model.payments.push({ id: answer.data.insert_payments_one.id, cents: act.cents[index]!, reversed: false });
      });
      settle(model);
      if (act.cents.length === 1 && model.status !== 'lead') {
        const next = modelNext(model);
        assert.deepEqual(answers[0]!.data.insert_payments_one.loan.schedules, next === null ? [] : [{ number: next }], 'returning shows the new next row');
      }
      return;
    }
    case 'reverse':
    case 'unreverse': {
      if (!model.payments.length) return;
      const payment = model.payments[act.pick % model.payments.length]!;
      const value = act.kind === 'reverse' ? '"2026-07-01"' : 'null';
      const answer = await graph(`mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: ${value}}) { id } }`, { id: payment.id });
      if (payment.reversed) {
        assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', 'a reversal is final');
      } else if (act.kind === 'reverse') {
        assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
        payment.reversed = true;
        settle(model);
      } else {
        assert.equal(answer.errors, undefined, 'setting null on a payment never reversed changes nothing');
      }
      return;
    }
    case 'status': {
      const answer = await graph(`mutation($id: uuid!, $status: String!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: $status}) { status } }`, { id: loanId, status: act.status });
      if (act.status === 'lead' && model.status !== 'lead' && model.payments.length > 0) {
        // A loan that took a payment has been funded: not a lead again (migration 0053); nothing changes.
        assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
        return;
      }
      if (act.status === 'servicing' && (model.status === 'closed' || model.status === 'overpaid') && ledgerOf(model).settled) {
        // A loan the ledger settled is not reopened by hand (migration 0078); nothing changes.
        assert.equal(answer.errors?.[0]?.extensions?.code, 'check-violation', JSON.stringify(answer));
        return;
      }
      assert.equal(answer.errors, undefined);
      model.status = act.status;
      settle(model);
      return;
    }
    case 'addTask': {
      const answer = await graph(`mutation($loan: uuid!, $name: String!) { insert_tasks_one(object: {loan_id: $loan, name: $name}) { id name status } }`, { loan: loanId, name: act.name });
      assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
      model.tasks.push(answer.data.insert_tasks_one);
      return;
    }
    case 'completeTask':
    case 'deleteTask': {
      if (!model.tasks.length) return;
      const index = act.pick % model.tasks.length;
      const task = model.tasks[index]!;
      if (act.kind === 'completeTask') {
        const answer = await graph(`mutation($id: uuid!) { update_tasks(where: {id: {_eq: $id}}, _set: {status: "completed"}) { affected_rows } }`, { id: task.id });
        assert.equal(answer.data.update_tasks.affected_rows, 1);
        task.status = 'completed';
      } else {
        const answer = await graph(`mutation($id: uuid!) { delete_tasks_by_pk(id: $id) { id } }`, { id: task.id });
        assert.deepEqual(answer.data.delete_tasks_by_pk, { id: task.id });
        model.tasks.splice(index, 1);
      }
      return;
    }
  }
}

describe('Mutations against a model of SPEC §7', () => {
  it('keeps is_next and every read equal to the model for random sequences of writes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 6 }), fc.array(action, { minLength: 1, maxLength: 8 }), async (installments, actions) => {
        const loanId = await newLoan(installments);
        const model: Model = { status: 'servicing', installments, payments: [], tasks: [] };
        await checkAgainstModel(loanId, model, 'the start');
        for (const [index, act] of actions.entries()) {
          await apply(loanId, model, act);
          await checkAgainstModel(loanId, model, `step ${index + 1} (${act.kind})`);
        }
      }),
      { seed: 14014, numRuns: 200 },
    );
  });

  it('keeps is_next right when 20 payments are posted on one loan at once', async () => {
    const installments = Array.from({ length: 30 }, () => 10_000);
    const loanId = await newLoan(installments);
    const model: Model = { status: 'servicing', installments, payments: [], tasks: [] };
    await apply(loanId, model, { kind: 'post', cents: Array.from({ length: 20 }, (_, i) => 5_000 + i * 37) });
    await checkAgainstModel(loanId, model, '20 concurrent posts');
    // And as many reversals at once.
    const answers = await Promise.all(
      model.payments.slice(0, 10).map((payment) => graph(`mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-07-01"}) { id } }`, { id: payment.id })),
    );
    for (const answer of answers) assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
    for (const payment of model.payments.slice(0, 10)) payment.reversed = true;
    await checkAgainstModel(loanId, model, '10 concurrent reversals');
  });
});
