import { PRODUCT_SETTINGS, settingText, type SettingDescriptor } from '../../app/productSettings.js';
import { html, type Html } from '../html.js';
import { csrfField, outcome, type Viewer } from './layout.js';
import { enumLabel } from './servicingFormat.js';
import { SERVICING_PATH, settingsPage } from './settingsFrame.js';

/** Each setting's label on the form (the error beside it names the setting as the API does). */
const LABELS: ReadonlyMap<string, string> = new Map([
  ['allocation_order', 'Allocation order'],
  ['day_count', 'Day count'],
  ['late_fee_grace_days', 'Late-fee grace (days)'],
  ['late_fee_percent', 'Late fee (% of the payment)'],
  ['late_fee_fixed', 'Late fee (fixed amount)'],
  ['late_fee_min', 'Late fee minimum'],
  ['late_fee_max', 'Late fee maximum'],
  ['nsf_fee', 'NSF fee'],
  ['arrears_tolerance', 'Arrears tolerance'],
  ['delinquency_buckets', 'Delinquency buckets'],
  ['investor_fee_share', 'Investors’ share of fees (0–1)'],
]);

export interface ServicingSettingsView {
  /** What each input shows: the stored value, or what was typed into a refused form. */
  readonly values: ReadonlyMap<string, string>;
  /** Problems by setting name, as `updateProductSettings` reports them. */
  readonly problems: ReadonlyMap<string, string>;
  readonly error?: string;
  readonly notice?: string;
}

/** A setting's value as its input holds it: buckets one per line, none as empty. */
export function inputText(setting: SettingDescriptor, value: Parameters<typeof settingText>[0]): string {
  return settingText(value, setting.kind.kind === 'buckets' ? '\n' : ', ');
}

/**
 * Settings > Servicing: the default product's servicing settings (SPEC §12) in one plain form —
 * a select per choice, a number input per whole number, text inputs for decimals, the buckets as
 * `name: first day` lines — each with its default. The outcome of a save, or of a refusal (naming
 * each setting), is the focused box at the top, above the form; a refusal also keeps what was typed
 * and writes each problem above its input (`aria-invalid`, `aria-describedby`).
 */
export function servicingSettingsPage(viewer: Viewer, view: ServicingSettingsView): string {
  const others = [...view.problems].filter(([name]) => !LABELS.has(name));
  return settingsPage(
    viewer,
    'Servicing settings',
    'servicing',
    html`<h2 id="servicing-heading">Servicing settings of the default product</h2>
<p class="lead">They decide how payments are applied and what the product's loans owe. Saving a change replays the ledgers of its loans at once: allocations, late fees, balances and statuses follow the new values.</p>
${outcome('ok', view.notice)}
${outcome('error', view.error ? `Not saved — ${view.error}${others.length ? ` — ${others.map(([name, problem]) => `${name}: ${problem}`).join('; ')}` : ''}` : null)}
<form class="stack" method="post" action="${SERVICING_PATH}" aria-labelledby="servicing-heading">
  ${csrfField(viewer.csrfToken)}
  <div class="form-grid">${PRODUCT_SETTINGS.filter((setting) => setting.kind.kind !== 'buckets').map((setting) => settingField(setting, view))}</div>
  ${PRODUCT_SETTINGS.filter((setting) => setting.kind.kind === 'buckets').map((setting) => settingField(setting, view))}
  <div class="actions"><button type="submit">Save settings</button></div>
</form>`,
  );
}

function settingField(setting: SettingDescriptor, view: ServicingSettingsView): Html {
  const id = `setting-${setting.name}`;
  const value = view.values.get(setting.name) ?? '';
  const problem = view.problems.get(setting.name);
  const shownDefault = setting.default === null ? 'none' : settingText(setting.default);
  const describedBy = `${id}-hint${problem ? ` ${id}-error` : ''}`;
  const common = html` id="${id}" name="${setting.name}"${problem ? html` aria-invalid="true"` : null} aria-describedby="${describedBy}"`;
  const kind = setting.kind;
  let input: Html;
  switch (kind.kind) {
    case 'enum':
      input = html`<select${common}>${kind.values.map((option) => html`<option value="${option}"${value === option ? html` selected` : null}>${enumLabel(option)}</option>`)}</select>`;
      break;
    case 'integer':
      input = html`<input type="number" inputmode="numeric" step="1" min="${kind.min}" max="${kind.max}"${setting.nullable ? null : html` required`}${common} value="${value}">`;
      break;
    case 'decimal':
      // Typed as text: a number input would take `12,50` as 1250 and `12,5` as 125 without a word
      // (Chromium reads commas away) and send only that. An amount of money is read by the
      // dashboard's one money parser (`moneyInput.ts`: `1,250.00` is 1250.00, `12,50` is refused);
      // a percent or a fraction goes to the setting's own check as typed, which refuses a comma.
      input = html`<input type="text" inputmode="decimal" autocomplete="off"${setting.nullable ? null : html` required`}${common} value="${value}">`;
      break;
    case 'buckets':
      input = html`<textarea rows="7" spellcheck="false" required${common}>${value}</textarea>`;
      break;
  }
  const how = kind.kind === 'buckets' ? ' One bucket a line, written “name: first day past due”.' : setting.nullable ? ' Leave empty for none.' : '';
  return html`<div class="field${problem ? ' has-error' : ''}">
    <label for="${id}">${LABELS.get(setting.name) ?? setting.name} <code>${setting.name}</code></label>
    ${problem ? html`<span id="${id}-error" class="field-error">${setting.name}: ${problem}</span>` : null}
    ${input}
    <span id="${id}-hint" class="hint">${setting.description}${how} Default: ${shownDefault}.</span>
  </div>`;
}
