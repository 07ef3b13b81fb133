import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readAccountProfile } from '../../app/accountProfile.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { createAccountWithAdmin, DashboardClient, formFieldsOf } from './dashboardClient.js';

/**
 * Settings > Lender profile (session 38) over HTTP: the form shows each field of the account's
 * profile with its label, limit and hint, saves through `app/accountProfile.ts` (303, then the
 * outcome focused at the top), and a refusal is the form again (400) with each problem beside its
 * input, the values typed kept and nothing written — not even the good fields sent with a bad one.
 */
const PASSWORD = 'lender profile password';
const PATH = '/dashboard/settings/profile';

let database: TestDatabase;
let server: TestServer;
let accountId: string;
let client: DashboardClient;

before(async () => {
  database = await openTestDatabase();
  server = await startTestServer(database.db);
  const { account, email } = await createAccountWithAdmin(database.db, PASSWORD);
  accountId = account.id;
  client = new DashboardClient(server.url);
  assert.equal((await client.logIn(email, PASSWORD)).status, 303);
});

after(async () => {
  await server?.close();
  await database?.close();
});

describe('Settings > Lender profile', () => {
  it('is linked from the settings navigation and shows every field empty, with its label, limit and hint', async () => {
    const servicing = await client.get('/dashboard/settings/servicing');
    assert.match(servicing.text, /<a href="\/dashboard\/settings\/profile">Lender profile<\/a>/);
    const page = await client.get(PATH);
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/dashboard\/settings\/profile" aria-current="page">Lender profile<\/a>/);
    assert.match(page.text, /<label for="profile-legal_name">Legal name<\/label>\s*<input type="text" autocomplete="organization" id="profile-legal_name" name="legal_name" maxlength="200" aria-describedby="profile-legal_name-hint" value="">/);
    assert.match(page.text, /<input type="tel" autocomplete="tel" id="profile-phone" name="phone" maxlength="40"/);
    assert.match(page.text, /<input type="email" autocomplete="email" id="profile-email" name="email" maxlength="254"/);
    assert.match(page.text, /<textarea rows="6" id="profile-payment_instructions" name="payment_instructions" maxlength="2000" aria-describedby="profile-payment_instructions-hint"><\/textarea>/);
    assert.match(page.text, /printed on the payoff letter\. Text \(line breaks allowed\) of at most 2,000 characters; leave it empty for none\./);
    assert.deepEqual(Object.keys(formFieldsOf(page.text)), ['legal_name', 'address_line1', 'address_line2', 'city', 'region', 'postal_code', 'country', 'phone', 'email', 'payment_instructions']);
  });

  it('saves the form as typed: 303, then the outcome focused at the top and the values shown; sent again unchanged, nothing to save', async () => {
    const form = formFieldsOf((await client.get(PATH)).text);
    const saved = await client.postForm(PATH, {
      ...form,
      legal_name: ' Harbor Private Lending LLC ',
      address_line1: '200 W Madison St',
      city: 'Chicago',
      region: 'IL',
      postal_code: '60606',
      phone: '+1 312 555 0100',
      email: 'payoffs@harbor.example',
      payment_instructions: 'Wire to First Lakes Bank\r\nABA 071000013\r\n',
    });
    assert.equal(saved.status, 303, saved.text);
    const page = await client.follow(saved);
    assert.match(page.text, /id="outcome" tabindex="-1" autofocus role="status">Saved legal name, address line 1, city, state or region, postal code, phone, e-mail, payment instructions\. Payoff letters and investor statements made from now on carry them\.<\/div>/);
    assert.match(page.text, /name="legal_name" maxlength="200" aria-describedby="profile-legal_name-hint" value="Harbor Private Lending LLC">/);
    assert.match(page.text, /name="payment_instructions"[^>]*>Wire to First Lakes Bank\nABA 071000013<\/textarea>/);
    const { profile } = await readAccountProfile(database.db, accountId);
    assert.deepEqual(
      [profile.legal_name, profile.address_line2, profile.city, profile.email, profile.payment_instructions],
      ['Harbor Private Lending LLC', null, 'Chicago', 'payoffs@harbor.example', 'Wire to First Lakes Bank\nABA 071000013'],
    );
    const again = await client.follow(await client.postForm(PATH, formFieldsOf(page.text)));
    assert.match(again.text, /Nothing to save: the profile already had these values\./);
    // Emptying a field clears it.
    const cleared = await client.follow(await client.postForm(PATH, { ...formFieldsOf(page.text), region: '' }));
    assert.match(cleared.text, /Saved state or region\./);
    assert.equal((await readAccountProfile(database.db, accountId)).profile.region, null);
  });

  it('refuses bad values with 400: the outcome focused at the top, each problem beside its input, the typed values kept, nothing written', async () => {
    const before = await readAccountProfile(database.db, accountId);
    const form = formFieldsOf((await client.get(PATH)).text);
    const refused = await client.postForm(PATH, { ...form, city: 'Springfield', email: 'payoffs at harbor', phone: 'ask for Dana', postal_code: '6'.repeat(21) });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /id="outcome" tabindex="-1" autofocus role="alert">Not saved — postal_code: is 21 characters long; at most 20; phone: expected a phone number/);
    assert.match(refused.text, /id="profile-email" name="email" maxlength="254" aria-invalid="true" aria-describedby="profile-email-hint profile-email-error" value="payoffs at harbor">/);
    assert.match(refused.text, /<span id="profile-email-error" class="field-error">E-mail: expected an e-mail address \(name@example\.com\)/);
    assert.match(refused.text, /<span id="profile-phone-error" class="field-error">Phone: expected a phone number/);
    assert.match(refused.text, /<span id="profile-postal_code-error" class="field-error">Postal code: is 21 characters long; at most 20<\/span>/);
    assert.match(refused.text, /name="city" maxlength="100" aria-describedby="profile-city-hint" value="Springfield">/, 'what was typed is kept');
    assert.doesNotMatch(refused.text, /profile-city-error/);
    assert.deepEqual(await readAccountProfile(database.db, accountId), before, 'nothing was written, the good city neither');
    // A NUL character is refused before anything runs, as every dashboard form refuses it.
    const nul = await client.postForm(PATH, { ...form, city: 'Spring\u0000field' });
    assert.equal(nul.status, 400);
    assert.deepEqual(await readAccountProfile(database.db, accountId), before);
  });
});
