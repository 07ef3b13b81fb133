import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { METADATA_PATH, startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient } from './dashboardClient.js';
import { createApiKey } from '../../app/apiKeys.js';

/**
 * Issue 17, done-when 3: the metadata page shows the metadata in service and when it was
 * loaded; an invalid edit of the file while the service runs (the holder watches it, as
 * `npm start` does) is shown there with its problems, and the previous metadata keeps serving.
 */
const PASSWORD = 'metadata page password';

let database: TestDatabase;
let server: TestServer;
let folder: string;
let metadataFile: string;
let client: DashboardClient;
let accountId: string;
let accountSlug: string;

before(async () => {
  database = await openTestDatabase();
  folder = mkdtempSync(join(tmpdir(), 'loanql-metadata-page-'));
  metadataFile = join(folder, 'loanql.yaml');
  copyFileSync(METADATA_PATH, metadataFile);
  server = await startTestServer(database.db, { metadataPath: metadataFile });
  server.engines.watch();
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  accountId = account.id;
  accountSlug = account.slug;
  await database.db.query(`INSERT INTO loans (account_id, name, amount) VALUES ($1, 'Exact digits', 100000.00)`, [account.id]);
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
  await client.get('/dashboard/metadata'); // any page: the CSRF token for the console calls
});

after(async () => {
  await server?.close();
  await database?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** The page's "Loaded" timestamp. */
function loadedAt(page: string): string {
  const match = /<dt>Loaded<\/dt><dd><time datetime="([^"]+)"/.exec(page);
  assert.ok(match, 'the page says when the metadata was loaded');
  return match[1]!;
}

async function pageUntil(predicate: (text: string) => boolean, what: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const page = await client.get('/dashboard/metadata');
    assert.equal(page.status, 200);
    if (predicate(page.text)) return page.text;
    if (Date.now() > deadline) throw new Error(`the metadata page never showed ${what}:\n${page.text.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function consoleQuery(query: string): Promise<string> {
  const reply = await client.postJson('/dashboard/graph', { query }, client.csrfToken);
  assert.equal(reply.status, 200, reply.text);
  return reply.text;
}

describe('Dashboard: the metadata page', () => {
  let firstLoad = '';

  it('shows the collections with their fields and relationships, the roles with their permissions, and the event types', async () => {
    const page = await client.get('/dashboard/metadata');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const text = page.text;
    assert.match(text, /<a href="\/dashboard\/metadata" aria-current="page">Metadata<\/a>/, 'its own entry in the main navigation');
    assert.match(text, /<h3 id="collection-loans"><code>loans<\/code><\/h3>/);
    assert.match(text, /<tr><td><code>amount<\/code><\/td><td>numeric<\/td><td><code>amount<\/code><\/td><\/tr>/);
    assert.match(text, /<tr><td><code>loan_officer<\/code><\/td><td>text<\/td><td><code>custom_fields → loan_officer<\/code><\/td><\/tr>/);
    assert.match(text, /<td><code>borrows<\/code><\/td><td>list of <a href="#collection-borrows"><code>borrows<\/code><\/a><\/td><td><code>id = borrows.loan_id<\/code><\/td>/);
    assert.match(text, /<h3 id="role-investor"><code>investor<\/code><\/h3>/);
    assert.match(text, /Key variables: <code>person_id<\/code> \(uuid\)/);
    assert.match(text, /rows where <code>funding_sources \{ person_id _eq key\.person_id \}<\/code>/);
    assert.match(text, /check <code>loan \{ status _eq &quot;servicing&quot; \}<\/code>/, 'the servicer’s payment check');
    assert.match(text, /<tr><td><code>payment\.reversed<\/code><\/td><td><code>payments<\/code><\/td><td>update<\/td><td>date_reversed set<\/td>/);
    assert.match(text, /<tr><td><code>task\.completed<\/code><\/td><td><code>tasks<\/code><\/td><td>update<\/td><td>status becomes &quot;completed&quot;<\/td>/);
    assert.match(text, /<dt>File<\/dt><dd><code>loanql\.yaml<\/code><\/dd>/, 'the file by its name, not its path on the server');
    assert.ok(!text.includes(folder), 'the server’s directory is not shown');
    assert.doesNotMatch(text, /role="alert"/, 'no refused edit yet');
    firstLoad = loadedAt(text);
  });

  it('answers from the engine in memory and the session: the same page on every request (speed is measured in bench/, never here)', async () => {
    const bodies = new Set<string>();
    for (let i = 0; i < 15; i++) {
      const answer = await client.get('/dashboard/metadata');
      assert.equal(answer.status, 200);
      bodies.add(answer.text.replace(/name="_csrf" value="[^"]*"/g, ''));
    }
    assert.equal(bodies.size, 1);
  });

  it('shows an invalid edit made while the service runs with its problems; the previous metadata keeps serving', async () => {
    const valid = readFileSync(metadataFile, 'utf8');
    // A field whose column does not exist: the file is valid YAML and valid against the JSON
    // Schema; only the check against the live database refuses it.
    const invalid = valid.replace('      amount: numeric\n', '      amount: numeric\n      amount_in_words: text\n');
    assert.notEqual(invalid, valid);
    writeFileSync(metadataFile, invalid);
    const page = await pageUntil((text) => text.includes('role="alert"'), 'the refused edit');
    assert.match(page, /The last edit of the metadata file was refused/);
    assert.match(page, /amount_in_words/, 'the problem names the field');
    assert.equal(loadedAt(page), firstLoad, 'the metadata in service is still the one loaded first');
    assert.doesNotMatch(page, /<code>amount_in_words<\/code><\/td>/, 'the refused field is not listed as served');

    // The previous metadata keeps serving: the console (and the API) answer with it.
    assert.equal(await consoleQuery('{ loans { name amount } }'), '{"data":{"loans":[{"name":"Exact digits","amount":100000.00}]}}');
    const refused = JSON.parse(await consoleQuery('{ loans { amount_in_words } }')) as { errors?: { message: string }[] };
    assert.match(refused.errors?.[0]?.message ?? '', /amount_in_words/);
  });

  it('shows a file that is not even YAML the same way, and a fixed file replaces the metadata and quiets the alert', async () => {
    const valid = readFileSync(METADATA_PATH, 'utf8');
    writeFileSync(metadataFile, `${valid}\ncollections: [unclosed\n`);
    const page = await pageUntil((text) => text.includes('role="alert"') && !text.includes('amount_in_words'), 'the YAML error');
    assert.equal(loadedAt(page), firstLoad);
    assert.match(page, /<code>loanql\.yaml is not valid YAML at line \d+/, 'the YAML problem, with the file named but not its directory');
    assert.ok(!page.includes(folder));

    writeFileSync(metadataFile, `${valid}\n# fixed\n`);
    const fixed = await pageUntil((text) => !text.includes('role="alert"'), 'the fixed metadata');
    assert.ok(loadedAt(fixed) > firstLoad, 'a newer load');
    assert.match(fixed, /An earlier edit was refused at <time/, 'the refused edit is still told, as history');
  });

  it('shows computed fields, tracked functions, and the computed fields a role\'s columns name (the page left all three out)', async () => {
    await database.db.query(`CREATE FUNCTION loans_at_least(min_amount numeric DEFAULT 0) RETURNS SETOF loans LANGUAGE sql STABLE AS $$ SELECT * FROM loans WHERE amount >= min_amount $$`);
    const valid = readFileSync(METADATA_PATH, 'utf8');
    assert.ok(valid.includes('\nroles:\n'));
    const edited = `${valid.replace('\nroles:\n', '\nroles:\n  officer:\n    collections:\n      loans: { select: { columns: [id, name, payoff] } }\n')}
functions:
  loans_at_least: { function: loans_at_least, returns: loans, args: { min_amount: numeric } }
`;
    writeFileSync(metadataFile, edited);
    const page = await pageUntil((text) => text.includes('id="functions"'), 'the functions');
    assert.match(page, /<tr><td><code>payoff<\/code><\/td><td>numeric<\/td><td>computed: <code>loanql_loan_payoff\(tenant, id, as_of date\)<\/code><\/td><\/tr>/);
    assert.match(page, /<tr><td><code>days_past_due<\/code><\/td><td>integer<\/td><td>computed: <code>loanql_loan_days_past_due\(tenant, id, as_of date\)<\/code><\/td><\/tr>/);
    assert.match(page, /<tr><td><code>loans_at_least<\/code>, <code>loans_at_least_aggregate<\/code><\/td><td><code>loans_at_least\(min_amount numeric \(optional\)\)<\/code><\/td><td>rows of <a href="#collection-loans"><code>loans<\/code><\/a><\/td><\/tr>/);
    assert.match(page, /<a href="#functions">Functions<\/a>/);
    assert.match(page, /<tr><td><code>loans<\/code><\/td><td>id, name, payoff; no aggregates<\/td>/, 'the officer sees payoff');
    assert.match(page, /<tr><td><code>loans<\/code><\/td><td>all fields; rows where <code>funding_sources/, 'columns: \'*\' is still all fields, computed ones included');
    assert.equal(await consoleQuery('{ loans_at_least(args: {min_amount: 1}) { name } }'), '{"data":{"loans_at_least":[{"name":"Exact digits"}]}}');
  });
});

/**
 * The metadata's warnings (app/engineHolder.ts `metadataWarnings`: roles active keys carry and it
 * lacks, keys whose variables no longer fit, event types endpoints subscribe to and it lacks) were
 * logged and printed by `loanql metadata check`, but the page showed only refusals: an admin saw
 * a healthy page while keys were refused. Now a warning box lists this account's, by key prefix
 * and endpoint id — never a key, an endpoint's URL, or another account's keys and endpoints.
 */
describe('Dashboard: the metadata page shows the metadata\'s warnings for the account', () => {
  it('lists keys carrying a role the metadata lacks and endpoints subscribed to an event type it lacks, by prefix and id only', async () => {
    const quiet = await client.get('/dashboard/metadata');
    assert.equal(quiet.status, 200);
    assert.doesNotMatch(quiet.text, /id="warnings-heading"/, 'no box while everything fits');

    const ghost = await createApiKey(database.db, accountId, 'ghost key', { role: 'ghost', variables: new Map() });
    const endpointUrl = 'https://hooks.example.test/in?token=endpoint-secret-token';
    const endpoint = await database.db.query<{ id: string }>(
      `INSERT INTO webhook_endpoints (account_id, url, event_types, secret) VALUES ($1, $2, ARRAY['loan.vanished'], 'whsec_c2VjcmV0c2VjcmV0') RETURNING id`,
      [accountId, endpointUrl],
    );
    const endpointId = endpoint.rows[0]!.id;
    // Another account's key with the same missing role: its prefix is not this admin's business.
    const other = await createAccountWithAdmin(database.db, PASSWORD);
    const othersKey = await createApiKey(database.db, other.account.id, 'other ghost', { role: 'ghost', variables: new Map() });

    const page = (await client.get('/dashboard/metadata')).text;
    const box = /<section class="message message-warning" aria-labelledby="warnings-heading">([\s\S]*?)<\/section>/.exec(page)?.[1];
    assert.ok(box, 'a warning box');
    assert.match(box, /<h2 id="warnings-heading">The metadata leaves 2 things of this account without what they use<\/h2>/);
    const items = [...box.matchAll(/<li>([^<]*)<\/li>/g)].map((match) => match[1]);
    assert.equal(items.length, 2, box);
    assert.match(items[0]!, new RegExp(`^role ghost: 1 active API key \\(${ghost.prefix}\\) carries it, and the metadata has no such role`));
    assert.match(items[1]!, new RegExp(`^event type loan.vanished: 1 active webhook endpoint \\(${endpointId} of ${accountSlug}\\) subscribes to it, and the metadata has no such event type`));
    for (const secret of [ghost.key, endpointUrl, 'endpoint-secret-token', othersKey.prefix, other.account.slug]) assert.ok(!page.includes(secret), `the page shows no ${secret}`);

    // The other account's admin sees only its own key.
    const otherClient = new DashboardClient(server.url);
    assert.equal((await otherClient.logIn(other.email, PASSWORD)).status, 303);
    const otherPage = (await otherClient.get('/dashboard/metadata')).text;
    assert.match(otherPage, /The metadata leaves something of this account without what it uses/);
    assert.ok(otherPage.includes(`(${othersKey.prefix})`) && !otherPage.includes(ghost.prefix) && !otherPage.includes(endpointId));

    // Put right (the key revoked, the endpoint removed): the box goes.
    await database.db.query(`UPDATE api_keys SET active = false WHERE prefix = $1`, [ghost.prefix]);
    await database.db.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [endpointId]);
    assert.doesNotMatch((await client.get('/dashboard/metadata')).text, /id="warnings-heading"/);
  });
});
