import { describeProfileField, PROFILE_FIELDS, type ProfileField } from '../../app/accountProfile.js';
import { html, type Html } from '../html.js';
import { csrfField, outcome, type Viewer } from './layout.js';
import { PROFILE_PATH, settingsPage } from './settingsFrame.js';

export interface AccountProfileView {
  /** The account's name: what heads the letters when the legal name is empty. */
  readonly accountName: string;
  /** What each input shows: the stored value (empty when none), or what was typed into a refused form. */
  readonly values: ReadonlyMap<string, string>;
  /** Problems by field name, as `updateAccountProfile` reports them. */
  readonly problems: ReadonlyMap<string, string>;
  readonly error?: string;
  readonly notice?: string;
}

/** What the browser may fill an input with (`autocomplete`): the lender's own organisation's details. */
const AUTOCOMPLETE: ReadonlyMap<string, string> = new Map([
  ['legal_name', 'organization'],
  ['address_line1', 'address-line1'],
  ['address_line2', 'address-line2'],
  ['city', 'address-level2'],
  ['region', 'address-level1'],
  ['postal_code', 'postal-code'],
  ['country', 'country-name'],
  ['phone', 'tel'],
  ['email', 'email'],
]);

/**
 * Settings > Lender profile (session 38): the letterhead of the account's payoff letters and
 * investor statements — legal name, postal address, phone, e-mail — and the payoff letter's payment
 * instructions, in one plain form. The outcome of a save, or of a refusal naming each field, is the
 * focused box at the top; a refusal keeps what was typed and writes each problem above its input
 * (`aria-invalid`, `aria-describedby`), and saves nothing.
 */
export function accountProfilePage(viewer: Viewer, view: AccountProfileView): string {
  const known = new Set<string>(PROFILE_FIELDS.map((field) => field.name));
  const others = [...view.problems].filter(([name]) => !known.has(name));
  return settingsPage(
    viewer,
    'Lender profile',
    'profile',
    html`<h2 id="profile-heading">Lender profile</h2>
<p class="lead">The letterhead of your payoff letters and investor statements: who you are and where a borrower's title company sends the payoff. Empty fields are left off the letters; without a legal name they are headed “${view.accountName}”.</p>
${outcome('ok', view.notice)}
${outcome('error', view.error ? `Not saved — ${view.error}${others.length ? ` — ${others.map(([name, problem]) => `${name}: ${problem}`).join('; ')}` : ''}` : null)}
<form class="stack" method="post" action="${PROFILE_PATH}" aria-labelledby="profile-heading">
  ${csrfField(viewer.csrfToken)}
  <div class="form-grid">${PROFILE_FIELDS.filter((field) => !field.multiline).map((field) => profileField(field, view))}</div>
  ${PROFILE_FIELDS.filter((field) => field.multiline).map((field) => profileField(field, view))}
  <div class="actions"><button type="submit">Save profile</button></div>
</form>`,
  );
}

function profileField(field: ProfileField, view: AccountProfileView): Html {
  const id = `profile-${field.name}`;
  const value = view.values.get(field.name) ?? '';
  const problem = view.problems.get(field.name);
  const describedBy = `${id}-hint${problem ? ` ${id}-error` : ''}`;
  const autocomplete = AUTOCOMPLETE.get(field.name);
  const common = html` id="${id}" name="${field.name}" maxlength="${field.maxLength}"${problem ? html` aria-invalid="true"` : null} aria-describedby="${describedBy}"`;
  const type = field.name === 'email' ? 'email' : field.name === 'phone' ? 'tel' : 'text';
  const input = field.multiline
    ? html`<textarea rows="6"${common}>${value}</textarea>`
    : html`<input type="${type}"${autocomplete ? html` autocomplete="${autocomplete}"` : null}${common} value="${value}">`;
  return html`<div class="field${problem ? ' has-error' : ''}">
    <label for="${id}">${field.label}</label>
    ${problem ? html`<span id="${id}-error" class="field-error">${field.label}: ${problem}</span>` : null}
    ${input}
    <span id="${id}-hint" class="hint">${field.description} ${capitalised(describeProfileField(field))}; leave it empty for none.</span>
  </div>`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
