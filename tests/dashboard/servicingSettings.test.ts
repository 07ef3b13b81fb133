import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLoan } from '../../app/loanWrites.js';
import { readProductSettings } from '../../app/productSettings.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient, formFieldsOf } from './dashboardClient.js';

/**
 * Settings > Servicing (issue 29) over HTTP: the form shows every setting with its value and
 * default, saves through `app/productSettings.ts` (303, then the outcome focused at the top),
 * replays the product's loans, and a refusal is the form again (400) with the problem beside its
 * input, the values typed kept and nothing written. Linked from the settings navigation.
 */
const PASSWORD = 'servicing settings password';
const PATH = '/dashboard/settings/servicing';

let database: TestDatabase;
let server: TestServer;
let accountId: string;
let client: DashboardClient;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  accountId = account.id;
  await createLoan(database.db, accountId, { Name: 'Reference', Amount: 100000, Rate: 12, Term: 12, Frequency: 'monthly', Date_Funded: '2026-01-15', Status: 'servicing' });
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('Settings > Servicing', () => {
  it('is linked from the settings navigation and shows each setting with its value, default and the right input', async () => {
    const keys = await client.get('/dashboard/settings/api-keys');
    assert.match(keys.text, /<a href="\/dashboard\/settings\/servicing">Servicing<\/a>/);
    const page = await client.get(PATH);
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/dashboard\/settings\/servicing" aria-current="page">Servicing<\/a>/);
    assert.match(page.text, /<select id="setting-day_count" name="day_count" aria-describedby="setting-day_count-hint"><option value="actual\/360" selected>/);
    assert.match(page.text, /<input type="number" inputmode="numeric" step="1" min="0" max="365" required id="setting-late_fee_grace_days" name="late_fee_grace_days" aria-describedby="setting-late_fee_grace_days-hint" value="10">/);
    assert.match(page.text, /<input type="text" inputmode="decimal" autocomplete="off" id="setting-late_fee_percent"[^>]* value="5">/);
    // Money as text, read by the dashboard's money parser (a number input reads `12,50` as 1250).
    assert.match(page.text, /<input type="text" inputmode="decimal" autocomplete="off" id="setting-late_fee_fixed"[^>]* value="">/);
    assert.match(page.text, /<textarea rows="7" spellcheck="false" required id="setting-delinquency_buckets"[^>]*>current: 0\n1-29: 1\n30-59: 30\n60-89: 60\n90-119: 90\n120\+: 120<\/textarea>/);
    assert.match(page.text, /Default: 5\./);
    assert.match(page.text, /Default: current: 0, 1-29: 1, 30-59: 30/);
  });

  it('saves the whole form as typed: 303, then the outcome focused at the top; the loans are replayed', async () => {
    const form = formFieldsOf((await client.get(PATH)).text);
    assert.equal(Object.keys(form).length, 11);
    const saved = await client.postForm(PATH, { ...form, late_fee_percent: '', late_fee_fixed: '50', delinquency_buckets: 'current: 0\r\nlate: 1\r\ndefault: 90\r\n', investor_fee_share: '0.25' });
    assert.equal(saved.status, 303, saved.text);
    const page = await client.follow(saved);
    assert.match(page.text, /<div class="message message-ok outcome" id="outcome" tabindex="-1" autofocus role="status">Saved late_fee_percent, late_fee_fixed, delinquency_buckets, investor_fee_share\. The ledgers of 1 loan were replayed with the new values\.<\/div>/);
    const { settings } = await readProductSettings(database.db, accountId);
    assert.deepEqual([settings.get('late_fee_percent'), settings.get('late_fee_fixed'), settings.get('investor_fee_share')], [null, '50.00', '0.25']);
    assert.deepEqual(settings.get('delinquency_buckets'), [{ name: 'current', from: 0 }, { name: 'late', from: 1 }, { name: 'default', from: 90 }]);
    const fees = await database.db.query<{ amount: string }>(`SELECT amount::text FROM fees WHERE account_id = $1 AND row_number = 1`, [accountId]);
    assert.deepEqual(fees.rows.map((row) => row.amount), ['50.00'], "the loan's late fee follows the fixed amount");
    // Sent again unchanged: nothing to save.
    const again = await client.follow(await client.postForm(PATH, formFieldsOf(page.text)));
    assert.match(again.text, /Nothing to save: the settings already had these values\./);
  });

  it('refuses a bad value or a conflict with 400: the outcome focused at the top, the problem beside its input, the typed values kept, nothing written', async () => {
    const before = await readProductSettings(database.db, accountId);
    const form = formFieldsOf((await client.get(PATH)).text);
    const refused = await client.postForm(PATH, { ...form, day_count: '30/360', late_fee_min: '80', late_fee_max: '40', late_fee_grace_days: '400' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /id="outcome" tabindex="-1" autofocus role="alert">Not saved — late_fee_grace_days must be a whole number from 0 to 365/);
    assert.match(refused.text, /id="setting-late_fee_grace_days" name="late_fee_grace_days" aria-invalid="true" aria-describedby="setting-late_fee_grace_days-hint setting-late_fee_grace_days-error" value="400">/);
    assert.match(refused.text, /<span id="setting-late_fee_grace_days-error" class="field-error">late_fee_grace_days: must be a whole number from 0 to 365<\/span>/);
    assert.match(refused.text, /<option value="30\/360" selected>/, 'what was typed is kept');
    // The conflict between two settings names both, beside each.
    const conflict = await client.postForm(PATH, { ...form, late_fee_min: '80', late_fee_max: '40' });
    assert.equal(conflict.status, 400);
    assert.match(conflict.text, /Not saved — late_fee_min must not exceed late_fee_max \(80\.00 &gt; 40\.00\)/);
    assert.match(conflict.text, /class="field-error">late_fee_max: late_fee_min \(80\.00\) must not exceed late_fee_max \(40\.00\)</);
    assert.match(conflict.text, /value="80">/);
    const buckets = await client.postForm(PATH, { ...form, delinquency_buckets: 'current: 0\nlate' });
    assert.equal(buckets.status, 400);
    assert.match(buckets.text, /delinquency_buckets: must be lines of &quot;name: first day&quot; \(&quot;late&quot; is not\)/);
    // A percent with a decimal comma reaches the setting's check as typed (a number input read `12,5` as 125).
    const comma = await client.postForm(PATH, { ...form, late_fee_percent: '12,5' });
    assert.equal(comma.status, 400);
    assert.match(comma.text, /class="field-error">late_fee_percent: must be a number from 0 to 100 with at most 4 decimal places, or null \(none\)</);
    assert.match(comma.text, /id="setting-late_fee_percent"[^>]* value="12,5">/, 'what was typed is kept');
    assert.deepEqual(await readProductSettings(database.db, accountId), before, 'nothing was written');
  });
});
