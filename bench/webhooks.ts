/**
 * Webhook benchmark (issue 16, Done-when 8): the cost of event capture on writes, and delivery
 * throughput to a local receiver.
 *
 *   node --import tsx bench/webhooks.ts            # on in-memory PGlite
 *   DATABASE_URL=postgres://… node --import tsx bench/webhooks.ts   # on PostgreSQL (creates an account, deletes it at the end)
 *
 * 1. Writes/s: `WRITERS` concurrent writers each post payments (one INSERT, its own transaction,
 *    the `is_next` triggers included) to their own loans, in 6 alternating rounds of 3 s: without
 *    an endpoint, then with an active endpoint subscribed to `payment.posted` (the capture trigger
 *    then writes the event and its delivery row in the same transaction). No worker runs meanwhile.
 * 2. Deliveries/s: the worker (default settings, WEBHOOK_ALLOW_PRIVATE) sends the events captured
 *    in step 1 to a receiver on 127.0.0.1 that answers 200 at once.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { migrate, openPgliteDatabase, openPostgresDatabase, type Database } from '../db/index.js';
import { createAccount } from '../app/accounts.js';
import { applyEventTriggers, createWebhookEndpoint, setWebhookEndpointActive, WebhookWorker, webhookSettingsFromEnv } from '../app/webhooks/index.js';
import { loadMetadataFile } from '../metadata/index.js';
import { fileURLToPath } from 'node:url';

const ROUND_MS = 3000;
const ROUNDS = 6;
const url = process.env.DATABASE_URL;
const WRITERS = url ? 8 : 1;

async function main(): Promise<void> {
  const db: Database = url ? openPostgresDatabase({ connectionString: url, maxConnections: WRITERS + 4 }) : await openPgliteDatabase(undefined);
  await migrate(db);
  const metadata = loadMetadataFile(fileURLToPath(new URL('../metadata/loanql.default.yaml', import.meta.url)));
  await applyEventTriggers(db, metadata.eventTypes);
  const account = await createAccount(db, `bench-hooks-${process.pid}`);
  const loans = (await db.query<{ id: string }>(`INSERT INTO loans (account_id, name) SELECT $1, 'bench ' || g FROM generate_series(1, $2) g RETURNING id`, [account.id, WRITERS * 4])).rows.map((r) => r.id);

  let received = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const endpoint = await createWebhookEndpoint(db, account.id, { url: receiverUrl, eventTypes: ['payment.posted'] }, { knownEventTypes: new Set(metadata.eventTypes.keys()), allowPrivate: true });
  await setWebhookEndpointActive(db, endpoint.id, false, account.id);

  const writeRound = async (): Promise<number> => {
    let writes = 0;
    const until = Date.now() + ROUND_MS;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; Date.now() < until; i++) {
          await db.query(`INSERT INTO payments (account_id, loan_id, date, amount) VALUES ($1, $2, '2026-01-15', 10)`, [account.id, loans[(w * 4 + (i % 4)) % loans.length]]);
          writes += 1;
        }
      }),
    );
    return writes / (ROUND_MS / 1000);
  };
  const without: number[] = [];
  const withHook: number[] = [];
  await writeRound(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const active = round % 2 === 1;
    await setWebhookEndpointActive(db, endpoint.id, active, account.id);
    (active ? withHook : without).push(await writeRound());
  }
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const pending = Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM webhook_deliveries WHERE account_id = $1`, [account.id])).rows[0]!.n);

  await setWebhookEndpointActive(db, endpoint.id, true, account.id);
  const worker = new WebhookWorker(db, { ...webhookSettingsFromEnv({}), allowPrivate: true, pollMs: 50 }, { warn: (o, m) => console.error(m, o) });
  const started = Date.now();
  worker.start();
  while (received < pending) await new Promise((resolve) => setTimeout(resolve, 20));
  const deliverySeconds = (Date.now() - started) / 1000;
  await worker.stop();

  const lines = [
    `database: ${url ? 'PostgreSQL' : 'PGlite (in memory)'}, ${WRITERS} writer${WRITERS > 1 ? 's' : ''}, ${ROUNDS} alternating rounds of ${ROUND_MS / 1000} s`,
    `payment posts/s without an endpoint: ${mean(without).toFixed(0)} (rounds ${without.map((v) => v.toFixed(0)).join(', ')})`,
    `payment posts/s with an active endpoint: ${mean(withHook).toFixed(0)} (rounds ${withHook.map((v) => v.toFixed(0)).join(', ')})`,
    `capture cost: ${((1 - mean(withHook) / mean(without)) * 100).toFixed(1)} % fewer writes/s (target <= 10 %)`,
    `deliveries: ${pending} events sent to a local receiver in ${deliverySeconds.toFixed(1)} s = ${(pending / deliverySeconds).toFixed(0)} events/s`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  receiver.close();
  await db.query('DELETE FROM accounts WHERE id = $1', [account.id]);
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
