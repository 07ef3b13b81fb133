import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createApiKey, listApiKeys } from '../../app/apiKeys.js';
import { createLogger } from '../../app/logger.js';
import { Writable } from 'node:stream';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient, newKeyOnPage } from './dashboardClient.js';

/**
 * The dashboard over HTTP (issue #5, SPEC §4): login, sessions, CSRF, Settings > API keys
 * scoped to the admin's account, the console's GraphQL endpoints, headers, and what is logged.
 */
const PASSWORD_A = 'first correct horse';
const PASSWORD_B = 'second battery staple';

let database: TestDatabase;
let server: TestServer;
let accountA: { id: string; email: string };
let accountB: { id: string; email: string };
/** Every secret the tests used: none may appear in the captured log. */
const secrets: string[] = [PASSWORD_A, PASSWORD_B];

before(async () => {
  database = await openTestDatabase();
  // Everything the service logs, down to trace, so the log check below sees it all.
  server = await startTestServer(database.db, { logLevel: 'trace' });
  const a = await createAccountWithAdmin(database.db, PASSWORD_A);
  const b = await createAccountWithAdmin(database.db, PASSWORD_B);
  accountA = { id: a.account.id, email: a.email };
  accountB = { id: b.account.id, email: b.email };
});

after(async () => {
  await server?.close();
  await database?.close();
});

async function loggedIn(email = accountA.email, password = PASSWORD_A): Promise<DashboardClient> {
  const client = new DashboardClient(server.url);
  const reply = await client.logIn(email, password);
  assert.equal(reply.status, 303, 'login redirects');
  assert.ok(client.sessionToken, 'a session cookie is set');
  secrets.push(client.sessionToken);
  await client.get('/dashboard/settings/api-keys'); // a page with the session's CSRF token
  return client;
}

async function apiStatus(key: string): Promise<{ status: number; contentType: string | null; body: string }> {
  const response = await fetch(`${server.url}/api/graph`, {
    method: 'POST',
    headers: { ...tokenHeader(key), 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ loans_aggregate { aggregate { count } } }' }),
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

describe('Dashboard login', () => {
  it('sends a visitor without a session to the login page, and / to the dashboard', async () => {
    const client = new DashboardClient(server.url);
    const page = await client.get('/dashboard/settings/api-keys');
    assert.equal(page.status, 303);
    assert.equal(page.location, '/dashboard/login?next=%2Fdashboard%2Fsettings%2Fapi-keys');
    const root = await client.get('/');
    assert.equal(root.location, '/dashboard');
    const login = await client.get('/dashboard/login');
    assert.equal(login.status, 200);
    assert.match(login.text, /<label for="email">E-mail<\/label>/);
    assert.match(login.text, /<label for="password">Password<\/label>/);
  });

  it('logs an admin in (e-mail in any case) with a httpOnly, SameSite=Lax cookie limited to /dashboard', async () => {
    const client = new DashboardClient(server.url);
    await client.get('/dashboard/login');
    const reply = await client.postForm('/dashboard/login', { email: accountA.email.toUpperCase(), password: PASSWORD_A });
    assert.equal(reply.status, 303);
    assert.equal(reply.location, '/dashboard');
    const cookie = reply.headers.getSetCookie().find((line) => line.startsWith('loanql_session='));
    assert.ok(cookie);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\/dashboard(;|$)/);
    const overview = await client.get('/dashboard');
    assert.equal(overview.status, 200);
    assert.match(overview.text, new RegExp(`Logged in as ${accountA.email}`));
    secrets.push(client.sessionToken!);
  });

  it('returns to the page asked for, but never outside the dashboard', async () => {
    const client = new DashboardClient(server.url);
    await client.get('/dashboard/login?next=%2Fdashboard%2Fconsole');
    const back = await client.postForm('/dashboard/login?next=%2Fdashboard%2Fconsole', { email: accountA.email, password: PASSWORD_A });
    assert.equal(back.location, '/dashboard/console');
    const other = new DashboardClient(server.url);
    await other.get('/dashboard/login');
    const away = await other.postForm('/dashboard/login?next=%2F%2Fevil.example%2F', { email: accountA.email, password: PASSWORD_A });
    assert.equal(away.location, '/dashboard');
  });

  it('stores only the SHA-256 of the session token', async () => {
    const client = await loggedIn();
    const token = client.sessionToken!;
    const { rows } = await database.db.query<{ token_hash: Uint8Array }>('SELECT token_hash FROM admin_sessions WHERE account_id = $1', [accountA.id]);
    const hashes = rows.map((row) => Buffer.from(row.token_hash).toString('hex'));
    assert.ok(hashes.includes(createHash('sha256').update(token).digest('hex')));
    const { rows: anywhere } = await database.db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM admin_sessions s WHERE s::text LIKE '%' || $1 || '%') AS found`,
      [token],
    );
    assert.equal(anywhere[0]!.found, false);
  });

  it('refuses a wrong password with 401 and no session', async () => {
    const client = new DashboardClient(server.url);
    const reply = await client.logIn(accountA.email, 'not the password');
    assert.equal(reply.status, 401);
    assert.match(reply.text, /<div class="message message-error" role="alert" id="login-error">The e-mail or the password is wrong/);
    assert.match(reply.text, new RegExp(`value="${accountA.email}" aria-describedby="login-error">`), 'the e-mail is kept in the form, and described by the refusal');
    assert.match(reply.text, /autocomplete="current-password" required aria-describedby="login-error">/, 'the password field is described by the refusal too');
    assert.doesNotMatch(reply.text, /not the password/);
    assert.equal(client.sessionToken, undefined);
    assert.equal((await client.get('/dashboard')).status, 303);
  });

  it('answers an unknown e-mail exactly like a wrong password', async () => {
    const client = new DashboardClient(server.url);
    const reply = await client.logIn('nobody@nowhere.test', PASSWORD_A);
    assert.equal(reply.status, 401);
    assert.match(reply.text, /The e-mail or the password is wrong/);
    assert.equal(client.sessionToken, undefined);
  });

  it('refuses a login form without its CSRF token, or with one that does not match the cookie', async () => {
    const client = new DashboardClient(server.url);
    await client.get('/dashboard/login');
    const missing = await client.postForm('/dashboard/login', { _csrf: null, email: accountA.email, password: PASSWORD_A });
    assert.equal(missing.status, 403);
    assert.equal(client.sessionToken, undefined);
    const forged = await client.postForm('/dashboard/login', { _csrf: 'A'.repeat(43), email: accountA.email, password: PASSWORD_A });
    assert.equal(forged.status, 403);
    client.cookies.delete('loanql_login_csrf');
    const withoutCookie = await client.postForm('/dashboard/login', { email: accountA.email, password: PASSWORD_A });
    assert.equal(withoutCookie.status, 403);
    assert.equal(client.sessionToken, undefined);
  });

  it('throttles an e-mail after 5 failures from one address, even with the right password, but not other e-mails', async () => {
    const { email } = await createAccountWithAdmin(database.db, 'throttled password');
    const client = new DashboardClient(server.url);
    for (let attempt = 1; attempt <= 5; attempt++) assert.equal((await client.logIn(email, `wrong ${attempt}`)).status, 401);
    const refused = await client.logIn(email, 'throttled password');
    assert.equal(refused.status, 429);
    assert.match(refused.text, /Too many failed logins/);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(client.sessionToken, undefined);
    assert.equal((await new DashboardClient(server.url).logIn(accountB.email, PASSWORD_B)).status, 303, 'another admin still logs in');
  });

  it('logs out: the session row is deleted and its cookie no longer opens a page', async () => {
    const client = await loggedIn();
    const token = client.sessionToken!;
    const withoutToken = await client.postForm('/dashboard/logout', { _csrf: null });
    assert.equal(withoutToken.status, 403, 'logout needs the CSRF token too');
    const out = await client.postForm('/dashboard/logout', {});
    assert.equal(out.status, 303);
    assert.equal(out.location, '/dashboard/login?logged_out=1');
    assert.equal(client.sessionToken, undefined, 'the cookie is cleared');
    const { rows } = await database.db.query('SELECT 1 FROM admin_sessions WHERE token_hash = $1', [createHash('sha256').update(token).digest()]);
    assert.equal(rows.length, 0);
    client.cookies.set('loanql_session', token);
    assert.equal((await client.get('/dashboard')).status, 303, 'the old cookie is refused');
  });
});

describe('Settings > API keys', () => {
  it('creates a key and shows it once, with no-store, then lists it without the key', async () => {
    const client = await loggedIn();
    const posted = await client.postForm('/dashboard/settings/api-keys', { name: 'reporting job' });
    assert.equal(posted.status, 303, 'Post/Redirect/Get');
    const created = await client.follow(posted);
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const key = newKeyOnPage(created.text);
    assert.ok(key && /^lq_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/.test(key), 'the page shows the whole key');
    secrets.push(key);
    assert.equal((await apiStatus(key)).status, 200, 'the key works at once');
    const list = await client.get('/dashboard/settings/api-keys');
    assert.ok(list.text.includes(key.slice(0, 11)), 'the listing names the key by its prefix');
    assert.ok(!list.text.includes(key), 'the listing never shows the key again');
    assert.match(list.text, /reporting job/);
  });

  it('creates an investor key with its person_id (role and variable picked in the form); the key reaches only that person', async () => {
    // An account of its own, so the people made here stay out of the other tests' answers.
    const portal = await createAccountWithAdmin(database.db, PASSWORD_A);
    const [person] = (await database.db.query<{ id: string }>(`INSERT INTO people (account_id, name, email, is_investor) VALUES ($1, 'Ivy Investor', 'ivy@example.test', true) RETURNING id`, [portal.account.id])).rows;
    const [other] = (await database.db.query<{ id: string }>(`INSERT INTO people (account_id, name) VALUES ($1, 'Otto Other') RETURNING id`, [portal.account.id])).rows;
    const [foreign] = (await database.db.query<{ id: string }>(`INSERT INTO people (account_id, name) VALUES ($1, 'Bea of B') RETURNING id`, [accountB.id])).rows;
    const client = await loggedIn(portal.email, PASSWORD_A);
    const form = await client.get('/dashboard/settings/api-keys');
    assert.match(form.text, /<select id="key-role" name="role"[^>]*>[\s\S]*<option value="investor">investor<\/option>/);
    assert.match(form.text, /name="var_person_id"/);
    const missing = await client.postForm('/dashboard/settings/api-keys', { name: 'portal', role: 'investor' });
    assert.equal(missing.status, 400);
    assert.match(missing.text, /role investor needs person_id/);
    const wrongAccount = await client.postForm('/dashboard/settings/api-keys', { name: 'portal', role: 'investor', var_person_id: foreign!.id });
    assert.equal(wrongAccount.status, 400);
    assert.match(wrongAccount.text, /is not a person of the account/);
    assert.equal((await client.postForm('/dashboard/settings/api-keys', { name: 'portal', role: 'auditor' })).status, 400);
    const posted = await client.postForm('/dashboard/settings/api-keys', { name: 'investor portal', role: 'investor', var_person_id: person!.id });
    assert.equal(posted.status, 303, posted.text);
    const created = await client.follow(posted);
    const key = newKeyOnPage(created.text)!;
    secrets.push(key);
    const response = await fetch(`${server.url}/api/graph`, {
      method: 'POST',
      headers: { ...tokenHeader(key), 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ people { id name } }' }),
    });
    assert.deepEqual(await response.json(), { data: { people: [{ id: person!.id, name: 'Ivy Investor' }] } });
    assert.notEqual(other!.id, person!.id);
    const listed = (await listApiKeys(database.db, portal.account.id)).find((k) => k.name === 'investor portal')!;
    assert.deepEqual([listed.role, listed.variables], ['investor', { person_id: person!.id }]);
    assert.match((await client.get('/dashboard/settings/api-keys')).text, new RegExp(`investor <span class="hint">\\(person_id=${person!.id}\\)`));
  });

  it('refuses a key without a name with a message next to the field, not a 500, and writes nothing', async () => {
    const client = await loggedIn();
    const before = (await listApiKeys(database.db, accountA.id)).length;
    // Blank, and with a role that does not exist either: the name is still the one told next to its field.
    for (const fields of [{ name: '   ' }, { name: '', role: 'auditor' }] as Record<string, string>[]) {
      const reply = await client.postForm('/dashboard/settings/api-keys', fields);
      assert.equal(reply.status, 400);
      assert.match(reply.text, /a key name must not be blank/);
      assert.match(reply.text, /<input id="key-name" name="name"[^>]*aria-describedby="key-name-error key-name-hint" aria-invalid="true"/);
      assert.match(reply.text, /<span id="key-name-error" class="field-error">Enter a name: say what the key is for\.<\/span>/);
    }
    assert.equal((await listApiKeys(database.db, accountA.id)).length, before, 'no key was created');
  });

  it('creates with Post/Redirect/Get: the key is shown once after the redirect; a reload neither shows it again nor creates another', async () => {
    const client = await loggedIn();
    const before = (await listApiKeys(database.db, accountA.id)).length;
    const posted = await client.postForm('/dashboard/settings/api-keys', { name: 'shown once' });
    assert.equal(posted.status, 303);
    assert.match(posted.location ?? '', /^\/dashboard\/settings\/api-keys\?created=lq_[a-z0-9]{8}$/);
    assert.equal(newKeyOnPage(posted.text), undefined, 'the POST answer itself holds no key');
    const flash = posted.headers.getSetCookie().find((line) => line.startsWith('loanql_new_key='));
    assert.ok(flash, 'the key travels in a one-time cookie');
    assert.match(flash, /; Path=\/dashboard\/settings\/api-keys(;|$)/);
    assert.match(flash, /; HttpOnly/);
    assert.match(flash, /; Max-Age=60/);

    // Another session of the same account that somehow had the cookie cannot read it.
    const other = await loggedIn();
    other.cookies.set('loanql_new_key', client.cookies.get('loanql_new_key')!);
    const stolen = await other.get(posted.location!);
    assert.equal(newKeyOnPage(stolen.text), undefined, 'another session cannot open the flash');

    const shown = await client.follow(posted);
    const key = newKeyOnPage(shown.text);
    assert.ok(key && key.startsWith(posted.location!.slice(-11)), 'the redirect shows the new key');
    secrets.push(key);
    assert.ok(!flash.includes(key) && !flash.includes(key.slice(12)), 'the cookie does not hold the key in clear');
    assert.equal(client.cookies.has('loanql_new_key'), false, 'showing it cleared the cookie');
    assert.equal((await apiStatus(key)).status, 200);

    const reload = await client.get(posted.location!);
    assert.equal(reload.status, 200);
    assert.equal(newKeyOnPage(reload.text), undefined, 'a reload does not show the key again');
    assert.ok(!reload.text.includes(key));
    assert.match(reload.text, /Key “shown once” \(lq_[a-z0-9]{8}\) was created\. It was shown only once/);
    assert.equal((await listApiKeys(database.db, accountA.id)).length, before + 1, 'exactly one key was created');
  });

  it('deactivates a key after a confirmation page, and the API refuses it from the next request on', async () => {
    const client = await loggedIn();
    const key = newKeyOnPage((await client.follow(await client.postForm('/dashboard/settings/api-keys', { name: 'short-lived' }))).text)!;
    secrets.push(key);
    const prefix = key.slice(0, 11);
    const confirm = await client.get(`/dashboard/settings/api-keys/${prefix}/deactivate`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /Deactivate “short-lived”\?/);
    assert.equal((await apiStatus(key)).status, 200, 'opening the confirmation changes nothing');
    const done = await client.postForm(`/dashboard/settings/api-keys/${prefix}/deactivate`, {});
    assert.equal(done.status, 303);
    assert.equal(done.location, `/dashboard/settings/api-keys?deactivated=${prefix}`);
    assert.deepEqual(await apiStatus(key), { status: 403, contentType: 'text/plain', body: 'Not authorized' });
    const list = await client.get(done.location);
    assert.match(list.text, /is deactivated/);
    // A second deactivation (another tab, or the CLI first) is said so and changes nothing.
    const again = await client.postForm(`/dashboard/settings/api-keys/${prefix}/deactivate`, {});
    assert.equal(again.status, 303);
    assert.equal(again.location, `/dashboard/settings/api-keys?deactivated=${prefix}&already=1`);
    assert.match((await client.get(again.location)).text, /Key “short-lived” \(lq_\w+\) was already deactivated; nothing changed\./);
  });

  it('refuses creating or deactivating without the CSRF token, or with another session’s', async () => {
    const client = await loggedIn();
    const other = await loggedIn(accountB.email, PASSWORD_B);
    const before = (await listApiKeys(database.db, accountA.id)).length;
    assert.equal((await client.postForm('/dashboard/settings/api-keys', { _csrf: null, name: 'no token' })).status, 403);
    assert.equal((await client.postForm('/dashboard/settings/api-keys', { _csrf: other.csrfToken!, name: 'foreign token' })).status, 403);
    assert.equal((await listApiKeys(database.db, accountA.id)).length, before, 'no key was created');

    const { key, prefix } = await createApiKey(database.db, accountA.id, 'kept');
    secrets.push(key);
    assert.equal((await client.postForm(`/dashboard/settings/api-keys/${prefix}/deactivate`, { _csrf: null })).status, 403);
    assert.equal((await client.postForm(`/dashboard/settings/api-keys/${prefix}/deactivate`, { _csrf: 'x' })).status, 403);
    assert.equal((await apiStatus(key)).status, 200, 'the key is still active');
  });

  it('never shows or deactivates a key of another account: it is answered like a key that does not exist', async () => {
    const { key: keyOfB, prefix: prefixOfB } = await createApiKey(database.db, accountB.id, 'belongs to B');
    secrets.push(keyOfB);
    const adminOfA = await loggedIn();
    const list = await adminOfA.get('/dashboard/settings/api-keys');
    assert.ok(!list.text.includes(prefixOfB), 'B’s key is not listed for A');
    assert.ok(!list.text.includes('belongs to B'));
    const confirm = await adminOfA.get(`/dashboard/settings/api-keys/${prefixOfB}/deactivate`);
    const unknown = await adminOfA.get('/dashboard/settings/api-keys/lq_00000000/deactivate');
    assert.equal(confirm.status, 404);
    assert.equal(unknown.status, 404);
    assert.ok(!confirm.text.includes('belongs to B'));
    const deactivate = await adminOfA.postForm(`/dashboard/settings/api-keys/${prefixOfB}/deactivate`, {});
    assert.equal(deactivate.status, 404);
    assert.equal((await apiStatus(keyOfB)).status, 200, 'B’s key still works');
    const ofB = await listApiKeys(database.db, accountB.id);
    assert.equal(ofB.find((row) => row.prefix === prefixOfB)?.active, true);
  });
});

describe('Query console endpoints', () => {
  before(async () => {
    await database.db.query(`INSERT INTO people (account_id, name) VALUES ($1, 'Person of A'), ($2, 'Person of B')`, [accountA.id, accountB.id]);
  });

  it('runs GraphQL against the session’s account only', async () => {
    const client = await loggedIn();
    const viewer = await client.get('/dashboard/console');
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(viewer.text)?.[1];
    assert.ok(csrf);
    const reply = await client.postJson('/dashboard/graph', { query: '{ people { name } }' }, csrf);
    assert.equal(reply.status, 200);
    assert.deepEqual(JSON.parse(reply.text), { data: { people: [{ name: 'Person of A' }] } });
  });

  it('explains a query: its SQL, its parameters (with the session’s account) and the plan', async () => {
    const client = await loggedIn();
    const reply = await client.postJson('/dashboard/graph/explain', { query: '{ people { name } }' }, client.csrfToken);
    assert.equal(reply.status, 200);
    const body = JSON.parse(reply.text) as { sql: string; params: unknown[]; plan: unknown };
    assert.match(body.sql, /^SELECT concat\('{"data":'/);
    assert.ok(body.params.includes(accountA.id));
    assert.ok(Array.isArray(body.plan));
  });

  it('answers GraphQL mistakes as GraphQL errors, not 500', async () => {
    const client = await loggedIn();
    const reply = await client.postJson('/dashboard/graph', { query: '{ nope }' }, client.csrfToken);
    assert.equal(reply.status, 200);
    assert.equal((JSON.parse(reply.text) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code, 'validation-failed');
  });

  it('refuses a request without the CSRF header (403) or without a session (401)', async () => {
    const client = await loggedIn();
    const withoutHeader = await client.postJson('/dashboard/graph', { query: '{ people { name } }' });
    assert.equal(withoutHeader.status, 403);
    const withoutSession = await new DashboardClient(server.url).postJson('/dashboard/graph', { query: '{ people { name } }' }, client.csrfToken);
    assert.equal(withoutSession.status, 401);
    const explainWithoutHeader = await client.postJson('/dashboard/graph/explain', { query: '{ people { name } }' });
    assert.equal(explainWithoutHeader.status, 403);
  });
});

describe('Dashboard responses', () => {
  it('carry a strict Content-Security-Policy, forbid framing and are never cached', async () => {
    for (const path of ['/dashboard/login', '/dashboard/console', '/dashboard/settings/api-keys']) {
      const client = path === '/dashboard/login' ? new DashboardClient(server.url) : await loggedIn();
      const reply = await client.get(path);
      assert.equal(reply.status, 200, path);
      const csp = reply.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(reply.headers.get('x-frame-options'), 'DENY');
      assert.equal(reply.headers.get('cache-control'), 'no-store');
      assert.doesNotMatch(reply.text, /<script>|https?:\/\/(?!127\.0\.0\.1)/, `${path} loads nothing inline or from elsewhere`);
    }
  });

  it('serve the built console bundle and its styles from the service itself', async () => {
    for (const [asset, type] of [
      ['console.js', /javascript/],
      ['console.css', /css/],
      ['dashboard.css', /css/],
    ] as const) {
      const response = await fetch(`${server.url}/dashboard/assets/${asset}`);
      assert.equal(response.status, 200, asset);
      assert.match(response.headers.get('content-type') ?? '', type);
      assert.notEqual(response.headers.get('cache-control'), 'no-store');
      await response.arrayBuffer();
    }
    const css = await (await fetch(`${server.url}/dashboard/assets/console.css`)).text();
    assert.match(css, /\.graphiql-container/, 'GraphiQL’s own styles are bundled');
  });

  it('answer an unknown dashboard page with a 404 page', async () => {
    const client = await loggedIn();
    const reply = await client.get('/dashboard/nowhere');
    assert.equal(reply.status, 404);
    assert.match(reply.text, /Page not found/);
  });
});

describe('Logs', () => {
  it('redact request bodies, cookies and tokens even when a caller logs them', () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
    logger.info({ req: { body: { email: 'a@b.test', password: 'hunter2 secret' }, headers: { cookie: 'loanql_session=abc' } }, body: 'password=hunter2+secret', token: 'tok-secret' }, 'careless');
    const text = lines.join('');
    assert.doesNotMatch(text, /hunter2|abc|tok-secret/);
  });

  it('never contain a password, an API key or a session token from any test above', () => {
    const text = server.logs.map((line) => JSON.stringify(line)).join('\n');
    assert.ok(server.logs.some((line) => line.event === 'dashboard.login'), 'logins were logged');
    assert.ok(server.logs.some((line) => line.event === 'dashboard.login.refused'), 'refusals were logged');
    assert.ok(secrets.length > 8);
    for (const secret of secrets) assert.ok(!text.includes(secret), `a secret (${secret.slice(0, 4)}…) is in the log`);
    assert.ok(!text.includes('not the password') && !text.includes('wrong 1') && !text.includes('throttled password'));
  });
});
