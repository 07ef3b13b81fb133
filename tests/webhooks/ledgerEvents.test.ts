import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Decimal } from 'decimal.js';
import { Webhook } from 'standardwebhooks';
import { updateAccount, type Account } from '../../app/accounts.js';
import { checkNewEndpoint, createWebhookEndpoint, redeliverWebhookEvent, WebhookWorker, webhookSettingsFromEnv, type WebhookSettings } from '../../app/webhooks/index.js';
import { parseExact, JsonNumber } from '../support/exactJson.js';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhookReceiver.js';

/**
 * Issue 29 (SPEC §12): `payment.posted` carries the payment's allocation as posted and its loan's
 * balances after it (an event type's payload naming relationships, captured when the write
 * commits), and `loan.status_changed` fires once for each status change the ledger makes (R9) and
 * for one made by hand. Every body is signature-checked and read with its numbers' exact digits.
 */
let database: TestDatabase;
let server: TestServer;
let worker: WebhookWorker;
const settings: WebhookSettings = { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50, timeoutMs: 2000, retryBaseMs: 200, retryMaxMs: 500, maxAttempts: 6 };

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  worker = new WebhookWorker(database.db, settings, { warn: () => undefined });
  worker.start();
});
after(async () => {
  await worker?.stop();
  await server?.close();
  await database?.close();
});

const KNOWN = new Set(['loan.created', 'loan.updated', 'loan.status_changed', 'payment.posted', 'payment.reversed', 'task.completed', 'person.created', 'fee.assessed', 'fee.waived']);

interface Subscriber {
  account: Account;
  key: string;
  secret: string;
  receiver: WebhookReceiver;
}

async function subscriber(eventTypes: string[]): Promise<Subscriber> {
  const receiver = await startWebhookReceiver();
  const { account, apiKey } = await createAccountWithKey(database.db);
  const endpoint = await createWebhookEndpoint(database.db, account.id, { url: receiver.url, eventTypes }, { knownEventTypes: KNOWN, allowPrivate: true });
  return { account, key: apiKey.key, secret: endpoint.secret, receiver };
}

/** The reference loan of SPEC §7 (100,000 at 12 %, 12 monthly, 8,884.88 a month), funded 2026-01-15, over REST. */
async function createLoan(key: string): Promise<string> {
  const response = await fetch(`${server.url}/api/loan`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'Elm St bridge', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { loan: { id: string } }).loan.id;
}

async function graph(key: string, query: string, variables: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}/api/graph`, { method: 'POST', headers: { ...tokenHeader(key), 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  assert.equal(response.status, 200);
  const answer = parseExact(await response.text()) as { data?: Record<string, unknown>; errors?: unknown[] };
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data!;
}

type Exact = JsonNumber | string | null;
interface Line {
  row_number: JsonNumber | null;
  schedule: { id: string; number: JsonNumber; due: string } | null;
  fee_id: string | null;
  component: string;
  amount: JsonNumber;
}
interface PostedPayment {
  id: string;
  loan_id: string;
  amount: JsonNumber;
  date: string;
  allocations: Line[];
  loan: Record<string, Exact>;
}
interface EventBody {
  id: string;
  type: string;
  data: { old: Record<string, Exact> | null; new: Record<string, Exact> | null; currency?: string };
}

/** Checks the signature (standardwebhooks), then reads the body with exact numbers. */
function verified(secret: string, webhook: ReceivedWebhook): EventBody {
  new Webhook(secret).verify(webhook.body, webhook.headers);
  return parseExact(webhook.body) as EventBody;
}

const text = (value: unknown): string | null => (value instanceof JsonNumber ? value.text : (value as string | null));

/** The events of `type` a subscriber has been sent, once `count` of them arrived (and nothing more in 300 ms). */
async function eventsOf(who: Subscriber, type: string, count: number): Promise<EventBody[]> {
  const ofType = (): EventBody[] => who.receiver.received.map((w) => verified(who.secret, w)).filter((event) => event.type === type);
  for (const deadline = Date.now() + 10_000; ofType().length < count; await new Promise((resolve) => setTimeout(resolve, 20))) {
    assert.ok(Date.now() < deadline, `${count} ${type} events arrive (got ${ofType().length})`);
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const events = ofType();
  assert.equal(events.length, count, `exactly ${count} ${type} events`);
  return events;
}

/** What the database holds for a payment: its allocation lines in order and its loan's balances. */
async function stored(who: Subscriber, paymentId: string): Promise<{ lines: string[][]; loan: Record<string, string | null> }> {
  const lines = await database.db.query<{ row_number: string | null; schedule_id: string | null; component: string; amount: string }>(
    `SELECT a.row_number::text, s.id AS schedule_id, a.component, a.amount::text
       FROM payment_allocations a LEFT JOIN schedules s ON s.account_id = a.account_id AND s.loan_id = a.loan_id AND s.number = a.row_number
      WHERE a.account_id = $1 AND a.payment_id = $2 ORDER BY a.position`,
    [who.account.id, paymentId],
  );
  const loan = await database.db.query<Record<string, string | null>>(
    `SELECT l.principal_outstanding::text, l.interest_due::text, l.fees_due::text, l.credit_balance::text, l.oldest_unpaid_due::text, l.status, l.date_closed::text
       FROM loans l JOIN payments p ON p.account_id = l.account_id AND p.loan_id = l.id WHERE p.account_id = $1 AND p.id = $2`,
    [who.account.id, paymentId],
  );
  return { lines: lines.rows.map((l) => [l.row_number ?? '', l.schedule_id ?? '', l.component, l.amount]), loan: loan.rows[0]! };
}

/** The event's lines and loan, in the shape of `stored`; and its lines sum to the payment's amount. */
function asPosted(event: EventBody): { lines: string[][]; loan: Record<string, string | null> } {
  const posted = event.data.new as unknown as PostedPayment;
  const sum = posted.allocations.reduce((total, line) => total.plus(line.amount.text), new Decimal(0));
  assert.equal(sum.toFixed(2), posted.amount.text, `the lines of payment ${posted.id} sum to its amount`);
  for (const line of posted.allocations) {
    if (line.schedule) assert.equal(line.schedule.number.text, line.row_number!.text, 'a line names its schedule row by id and number');
  }
  return {
    lines: posted.allocations.map((line) => [line.row_number?.text ?? '', line.schedule?.id ?? '', line.component, line.amount.text]),
    loan: Object.fromEntries(Object.entries(posted.loan).map(([key, value]) => [key, text(value)])),
  };
}

const POST = 'mutation($loan: uuid!, $date: date!, $amount: numeric!, $type: String!) { insert_payments_one(object: {loan_id: $loan, date: $date, amount: $amount, type: $type, method: "ach"}) { id } }';
const post = async (who: Subscriber, loan: string, date: string, amount: string, type = 'regular'): Promise<string> =>
  ((await graph(who.key, POST, { loan, date, amount, type })).insert_payments_one as { id: string }).id;

describe('Webhooks: payment.posted carries the allocation', () => {
  it('a payment posted over GraphQL: signed, its lines by schedule row summing to it, and the loan’s stored balances', async () => {
    const who = await subscriber(['payment.posted']);
    try {
      const loan = await createLoan(who.key);
      const paymentId = await post(who, loan, '2026-02-15', '10000.00');
      const [event] = await eventsOf(who, 'payment.posted', 1);
      const posted = event!.data.new as unknown as PostedPayment;
      assert.equal(posted.id, paymentId);
      assert.equal(posted.amount.text, '10000.00', 'money keeps its exact digits on the wire');
      // SPEC §12 R1: row 1 (due 02-15) in full, then row 2's interest and the rest to its principal.
      assert.deepEqual(
        posted.allocations.map((line) => [line.row_number?.text, line.schedule?.due, line.component, line.amount.text]),
        [
          ['1', '2026-02-15', 'interest', '1000.00'],
          ['1', '2026-02-15', 'principal', '7884.88'],
          ['2', '2026-03-15', 'interest', '921.15'],
          ['2', '2026-03-15', 'principal', '193.97'],
        ],
      );
      assert.deepEqual(asPosted(event!), await stored(who, paymentId), 'the lines and balances are the ones stored');
      assert.deepEqual(Object.keys(posted.loan).sort(), ['credit_balance', 'date_closed', 'fees_due', 'interest_due', 'oldest_unpaid_due', 'principal_outstanding', 'status']);
    } finally {
      await who.receiver.close();
    }
  });

  it('a multi-row insert, on one loan and on two loans, gives each event its own payment’s allocation', async () => {
    const who = await subscriber(['payment.posted']);
    try {
      const [one, two] = [await createLoan(who.key), await createLoan(who.key)];
      const data = await graph(
        who.key,
        `mutation($one: uuid!, $two: uuid!) {
           insert_payments(objects: [
             {loan_id: $one, date: "2026-02-15", amount: "8884.88"},
             {loan_id: $one, date: "2026-03-15", amount: "8884.88"},
             {loan_id: $two, date: "2026-02-10", amount: "500.00"},
             {loan_id: $one, date: "2026-04-15", amount: "100.00"},
             {loan_id: $two, date: "2026-02-15", amount: "9000.00"}
           ]) { returning { id } }
         }`,
        { one, two },
      );
      const ids = (data.insert_payments as { returning: { id: string }[] }).returning.map((row) => row.id);
      const events = await eventsOf(who, 'payment.posted', 5);
      assert.deepEqual(new Set(events.map((event) => event.data.new!.id)), new Set(ids));
      for (const event of events) {
        const expected = await stored(who, event.data.new!.id as string);
        assert.ok(expected.lines.length > 0);
        assert.deepEqual(asPosted(event), expected, `payment ${event.data.new!.amount instanceof JsonNumber ? event.data.new!.amount.text : ''}`);
      }
      const byAmount = new Map(events.map((event) => [text(event.data.new!.amount), event.data.new as unknown as PostedPayment]));
      assert.deepEqual(byAmount.get('500.00')!.allocations.map((line) => [line.row_number?.text, line.component, line.amount.text]), [['1', 'interest', '500.00']]);
      assert.deepEqual(byAmount.get('100.00')!.allocations.map((line) => [line.row_number?.text, line.component, line.amount.text]), [['3', 'interest', '100.00']]);
    } finally {
      await who.receiver.close();
    }
  });

  it('an event is a fact at its time: reversing an earlier payment later changes the ledger, not the event', async () => {
    const who = await subscriber(['payment.posted']);
    try {
      const loan = await createLoan(who.key);
      const first = await post(who, loan, '2026-02-15', '8884.88');
      const second = await post(who, loan, '2026-03-15', '8884.88');
      const events = await eventsOf(who, 'payment.posted', 2);
      const secondEvent = events.find((event) => event.data.new!.id === second)!;
      const before = asPosted(secondEvent);
      assert.equal(before.lines[0]![0], '2', 'the second payment paid row 2');
      await graph(who.key, 'mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-03-20"}) { id } }', { id: first });
      const now = await stored(who, second);
      assert.equal(now.lines[0]![0], '1', 'after the reversal the second payment pays row 1');
      assert.notDeepEqual(now, before);
      // The stored event, sent again, is the one of its time.
      const count = who.receiver.received.length;
      assert.equal(await redeliverWebhookEvent(database.db, secondEvent.id), 1);
      await who.receiver.waitFor((received) => received.length > count, 5000);
      const again = verified(who.secret, who.receiver.received.at(-1)!);
      assert.equal(again.id, secondEvent.id);
      assert.deepEqual(asPosted(again), before);
    } finally {
      await who.receiver.close();
    }
  });
});

describe("Webhooks: SPEC §12's payment.allocated is payment.posted", () => {
  const subscribe = (events: string[], known: ReadonlySet<string>) => checkNewEndpoint({ url: 'http://127.0.0.1:9/hook', eventTypes: events }, { knownEventTypes: known, allowPrivate: true });
  const refusal = async (events: string[], known: ReadonlySet<string>): Promise<unknown> => {
    try {
      await subscribe(events, known);
    } catch (error) {
      return (error as { fields?: unknown }).fields;
    }
    return assert.fail('accepted');
  };

  it("a subscription to payment.allocated is refused saying the allocation is in payment.posted's payload (it said only 'unknown event type')", async () => {
    const known = [...KNOWN].sort().join(', ');
    assert.deepEqual(await refusal(['payment.allocated'], KNOWN), { events: `payment.allocated: no such event type; the allocation is in payment.posted's payload (known: ${known})` });
    assert.deepEqual(await refusal(['loan.exploded', 'payment.allocated', 'loan.gone'], KNOWN), {
      events: `unknown event type loan.exploded, loan.gone; payment.allocated: no such event type; the allocation is in payment.posted's payload (known: ${known})`,
    });
  });

  it('follows the metadata: without payment.posted the name is only unknown; a metadata that declares payment.allocated takes it', async () => {
    const withoutPosted = new Set([...KNOWN].filter((type) => type !== 'payment.posted'));
    assert.deepEqual(await refusal(['payment.allocated'], withoutPosted), { events: `unknown event type payment.allocated (known: ${[...withoutPosted].sort().join(', ')})` });
    assert.deepEqual((await subscribe(['payment.allocated'], new Set([...KNOWN, 'payment.allocated']))).eventTypes, ['payment.allocated']);
  });
});

describe('Webhooks: loan.status_changed follows the ledger (SPEC §12 R9)', () => {
  it('fires once for each change the ledger makes (overpaid, closed, reopened) and for one by hand', async () => {
    const who = await subscriber(['loan.status_changed', 'payment.posted']);
    try {
      const loan = await createLoan(who.key);
      const quote = await graph(who.key, 'query($id: uuid!) { loans_by_pk(id: $id) { payoff(args: {as_of: "2026-02-15"}) } }', { id: loan });
      const payoff = text((quote.loans_by_pk as { payoff: JsonNumber }).payoff)!;
      assert.equal(payoff, '101000.00', 'row 1 due that day, nothing accrued since');
      const statusChanges = async (count: number): Promise<[Exact, Exact, Exact][]> =>
        (await eventsOf(who, 'loan.status_changed', count)).map((event) => [event.data.old!.status ?? null, event.data.new!.status ?? null, event.data.new!.date_closed ?? null]);

      // A surplus of 50.00 over the payoff: servicing → overpaid, credit 50.00.
      const payoffId = await post(who, loan, '2026-02-15', new Decimal(payoff).plus(50).toFixed(2), 'payoff');
      assert.deepEqual(await statusChanges(1), [['servicing', 'overpaid', '2026-02-15']]);
      const [posted] = await eventsOf(who, 'payment.posted', 1);
      assert.deepEqual(asPosted(posted!), await stored(who, payoffId));
      assert.equal(text((posted!.data.new as unknown as PostedPayment).loan.credit_balance), '50.00');
      assert.equal(text((posted!.data.new as unknown as PostedPayment).loan.status), 'overpaid');

      // The credit refunded: overpaid → closed, with the day it was settled (the ledger's date_closed).
      await post(who, loan, '2026-02-16', '50.00', 'refund');
      const closed = (await database.db.query<{ status: string; date_closed: string }>('SELECT status, date_closed::text FROM loans WHERE account_id = $1 AND id = $2', [who.account.id, loan])).rows[0]!;
      assert.deepEqual(closed, { status: 'closed', date_closed: '2026-02-15' });
      assert.deepEqual((await statusChanges(2))[1], ['overpaid', 'closed', closed.date_closed]);

      // The payoff reversed: the balance reopens, closed → servicing.
      await graph(who.key, 'mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-20", reversal_reason: "returned"}) { id } }', { id: payoffId });
      assert.deepEqual((await statusChanges(3))[2], ['closed', 'servicing', null]);

      // By hand: not to lead, the loan having taken payments (migration 0053), so on a loan with none.
      await assert.rejects(graph(who.key, 'mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "lead"}) { id } }', { id: loan }), /has taken payments/);
      const unpaid = await createLoan(who.key);
      await graph(who.key, 'mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {status: "lead"}) { id } }', { id: unpaid });
      assert.deepEqual((await statusChanges(4))[3], ['servicing', 'lead', null]);
      const { rows } = await database.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM webhook_events WHERE account_id = $1 AND type = 'loan.status_changed'`, [who.account.id]);
      assert.equal(rows[0]!.n, '4', 'one event per change, none more');
    } finally {
      await who.receiver.close();
    }
  });
});

describe("Webhooks: an event with an amount carries the account's currency", () => {
  it('loan, payment and fee events of a EUR account say EUR beside old and new; events without an amount do not; a later currency is a later event’s', async () => {
    const types = ['loan.created', 'loan.updated', 'loan.status_changed', 'payment.posted', 'payment.reversed', 'fee.assessed', 'fee.waived', 'task.completed'];
    const who = await subscriber(types);
    try {
      await updateAccount(database.db, who.account.slug, { currency: 'EUR' });
      const loan = await createLoan(who.key);
      const payment = await post(who, loan, '2026-02-15', '8884.88');
      await graph(who.key, 'mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-02-20", reversal_reason: "error"}) { id } }', { id: payment });
      const fee = (await graph(who.key, 'mutation($l: uuid!) { insert_fees_one(object: {loan_id: $l, date: "2026-02-16", amount: "25.00", description: "inspection"}) { id } }', { l: loan })).insert_fees_one as { id: string };
      await graph(who.key, 'mutation($f: uuid!) { insert_fee_waivers_one(object: {fee_id: $f, waived_on: "2026-02-17", waived_by: "ops", reason: "goodwill"}) { id } }', { f: fee.id });
      const task = (await graph(who.key, 'mutation($l: uuid!) { insert_tasks_one(object: {loan_id: $l, name: "Call", status: "open"}) { id } }', { l: loan })).insert_tasks_one as { id: string };
      await graph(who.key, 'mutation($id: uuid!) { update_tasks_by_pk(pk_columns: {id: $id}, _set: {status: "completed"}) { id } }', { id: task.id });
      await eventsOf(who, 'task.completed', 1);
      const sent = (): EventBody[] => who.receiver.received.map((w) => verified(who.secret, w));
      const byType = (type: string): EventBody[] => sent().filter((event) => event.type === type);
      for (const type of ['loan.created', 'payment.posted', 'payment.reversed', 'fee.assessed']) {
        assert.ok(byType(type).length > 0, `a ${type} event was sent`);
        for (const event of byType(type)) {
          assert.equal(event.data.currency, 'EUR', `${type} carries the account's currency`);
          assert.ok(event.data.new, `${type} keeps its payload`);
        }
      }
      assert.ok(byType('fee.assessed').some((event) => event.data.new!.description === 'inspection'), 'the manual fee among them');
      for (const type of ['fee.waived', 'task.completed']) {
        const [event] = byType(type);
        assert.deepEqual(Object.keys(event!.data).sort(), ['new', 'old'], `${type} has no amount, so no currency`);
      }
      // The currency is the one of the event's time: an account that changes it tells later events.
      await updateAccount(database.db, who.account.slug, { currency: 'GBP' });
      await graph(who.key, 'mutation($id: uuid!) { update_loans_by_pk(pk_columns: {id: $id}, _set: {name: "Elm St bridge, renamed"}) { id } }', { id: loan });
      await who.receiver.waitFor(() => byType('loan.updated').some((event) => event.data.new!.name === 'Elm St bridge, renamed'), 5000);
      assert.equal(byType('loan.updated').find((event) => event.data.new!.name === 'Elm St bridge, renamed')!.data.currency, 'GBP');
      const created = byType('loan.created')[0]!;
      assert.equal(await redeliverWebhookEvent(database.db, created.id), 1);
      await who.receiver.waitFor(() => byType('loan.created').length === 2, 5000);
      assert.equal(byType('loan.created')[1]!.data.currency, 'EUR', 'an event sent again keeps the currency of its time');
    } finally {
      await who.receiver.close();
    }
  });
});
