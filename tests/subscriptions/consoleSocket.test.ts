import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { csrfTokenForSession, endAdminSession, startAdminSession } from '../../app/adminSessions.js';
import { dataOf, startSeededService, type SeededService } from '../support/seededService.js';
import { subscribe } from '../support/graphSocket.js';

/**
 * Issue 34: the dashboard console's GraphiQL runs subscriptions on `/dashboard/graph`
 * (graphql-transport-ws), authenticated by the session cookie, the page's origin and the
 * session's CSRF token in `connection_init`; a session that ends closes its sockets with 4403.
 */
let s: SeededService;
let token: string;

before(async () => {
  s = await startSeededService();
  const [admin] = await s.sql<{ id: string }>(`SELECT id FROM admins WHERE account_id = $1 LIMIT 1`, [s.account.id]);
  token = (await startAdminSession(s.db, { accountId: s.account.id, id: admin!.id })).token;
});
after(async () => {
  await s?.close();
});

/** A console client: the cookie and `Origin` a browser page of the service would send, and a CSRF token in `connection_init`. */
function consoleClient(options: { cookie?: string | null; origin?: string | null; csrfToken?: string | null } = {}) {
  const closes: number[] = [];
  const headers: Record<string, string> = {};
  const cookie = options.cookie === undefined ? `loanql_session=${token}` : options.cookie;
  const origin = options.origin === undefined ? s.url : options.origin;
  if (cookie) headers.cookie = cookie;
  if (origin) headers.origin = origin;
  class BrowserLikeSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  const csrf = options.csrfToken === undefined ? csrfTokenForSession(token) : options.csrfToken;
  const client = createClient({
    url: `${s.url.replace(/^http/, 'ws')}/dashboard/graph`,
    webSocketImpl: BrowserLikeSocket,
    retryAttempts: 0,
    connectionParams: csrf ? { csrfToken: csrf } : {},
    on: { closed: (event) => void closes.push((event as { code: number }).code) },
  });
  return { client, closes };
}

const COUNT = `subscription($id: uuid!) { loans_by_pk(id: $id) { id payments_aggregate { aggregate { count } } } }`;

describe("The console's socket (/dashboard/graph)", () => {
  it('with the session: the first result, then a new one after a payment posted elsewhere; the session ended closes it with 4403', async () => {
    const [loan] = await s.sql<{ id: string }>(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id LIMIT 1`, [s.account.id]);
    const { client, closes } = consoleClient();
    const live = subscribe(client, COUNT, { id: loan!.id });
    const first = await live.next();
    dataOf(await s.graph(`mutation($loan: uuid!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-20", amount: "10.00", type: "regular", method: "ach"}) { id } }`, { loan: loan!.id }));
    const second = await live.next();
    assert.equal(second.data.loans_by_pk.payments_aggregate.aggregate.count, first.data.loans_by_pk.payments_aggregate.aggregate.count + 1);
    await endAdminSession(s.db, token);
    await live.ended;
    for (let tries = 0; !closes.length; tries++) {
      assert.ok(tries < 300, 'the socket closes');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(closes, [4403]);
    await client.dispose();
    const [admin] = await s.sql<{ id: string }>(`SELECT id FROM admins WHERE account_id = $1 LIMIT 1`, [s.account.id]);
    token = (await startAdminSession(s.db, { accountId: s.account.id, id: admin!.id })).token;
  });

  for (const [name, options] of [
    ['no session cookie', { cookie: null }],
    ['a cookie that is no session', { cookie: `loanql_session=${'x'.repeat(43)}` }],
    ['no CSRF token in connection_init', { csrfToken: null }],
    ["another session's CSRF token", { csrfToken: csrfTokenForSession('y'.repeat(43)) }],
    ["another site's page (Origin)", { origin: 'https://evil.example' }],
    ['no Origin (not a browser page)', { origin: null }],
  ] as const) {
    it(`refused with 4403: ${name}`, async () => {
      const { client, closes } = consoleClient(options);
      const live = subscribe(client, `subscription { loans_aggregate { aggregate { count } } }`);
      const ended = await live.ended;
      assert.ok(ended, 'the subscription ended with an error, not a result');
      assert.equal(live.raw.length, 0);
      assert.deepEqual(closes, [4403]);
      await client.dispose();
    });
  }

  it('an API key is not what this path takes: a key in connection_init without the session is refused', async () => {
    const { client, closes } = consoleClient({ cookie: null, csrfToken: null });
    const keyed = createClient({
      url: `${s.url.replace(/^http/, 'ws')}/dashboard/graph`,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers: { origin: s.url } });
        }
      },
      retryAttempts: 0,
      connectionParams: { Authorization: `Token ${s.apiKey}` },
      on: { closed: (event) => void closes.push((event as { code: number }).code) },
    });
    const live = subscribe(keyed, `subscription { loans_aggregate { aggregate { count } } }`);
    await live.ended;
    assert.deepEqual(closes, [4403]);
    await keyed.dispose();
    await client.dispose();
  });
});
