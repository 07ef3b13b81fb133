import type { LoanFormField } from '../loanForm.js';
import { html, type Html } from '../html.js';
import { csrfField, message, outcome, renderPage, type Viewer } from './layout.js';
import { onceField } from '../formOnce.js';
import { LOANS_PATH, loanPath } from './servicingPaths.js';
import { DATE_INPUT_ATTRIBUTES, enumLabel, inPageWords, loanLabel, text, type Row } from './servicingFormat.js';

/**
 * The create and edit form of a loan (`loanForm.ts` says which inputs): one input per field of
 * the product, each problem the REST rules report beside its input, the first wrong one focused.
 */
export interface LoanFormView {
  readonly mode: 'create' | 'update';
  readonly fields: readonly LoanFormField[];
  readonly values: ReadonlyMap<string, string>;
  /** Problems by body name, as the rules of `POST`/`PATCH /api/loan` report them. */
  readonly problems: ReadonlyMap<string, string>;
  readonly error?: string;
  /** The loan being edited. */
  readonly loan?: Row;
}

const inputId = (name: string) => `loan-field-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/**
 * The names the rules' messages may use for the form's fields and values, with what the form
 * calls them: each field by its body name (`Date_Funded`), its column (`date_funded`) and the
 * schedule's name for it (`dateFunded`) → its label (`Date Funded`); each option of a select by
 * its stored value (`interest_only`) → its words (`interest only`).
 */
function messageLabels(fields: readonly LoanFormField[]): ReadonlyMap<string, string> {
  const labels = new Map<string, string>();
  for (const field of fields) {
    labels.set(field.name, field.label);
    if (field.source.kind === 'column') {
      labels.set(field.source.column, field.label);
      labels.set(field.source.column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()), field.label);
    }
    if (field.rule.kind === 'enum') for (const value of field.rule.values) labels.set(value, enumLabel(value));
  }
  return labels;
}

/** How the API's messages say "empty" (a body sends null; a form leaves the input empty), in the form's words. */
const API_PHRASES: readonly (readonly [RegExp, string])[] = [
  [/\bsend that date, or null to\b/g, 'enter that date, or leave it empty to'],
  [/\bsend null\b/g, 'leave it empty'],
  [/\bmay not be null\b/g, 'may not be empty'],
  [/ \(or a decimal string\)/g, ''],
];

/** A message of the rules as the form says it: its fields by their labels, values in words, empty for null. */
function inFormWords(message: string, labels: ReadonlyMap<string, string>): string {
  return API_PHRASES.reduce((words, [phrase, replacement]) => words.replace(phrase, replacement), inPageWords(message, labels));
}

/** The create and edit form of a loan, one input per field of the product, errors next to their field. */
export function loanFormPage(viewer: Viewer, view: LoanFormView): string {
  const action = view.mode === 'create' ? LOANS_PATH : `${loanPath(text(view.loan?.id))}/edit`;
  const title = view.mode === 'create' ? 'New loan' : `Edit ${(view.loan ? loanLabel(view.loan) : '')}`;
  const shown = new Set(view.fields.map((field) => field.name.toLowerCase()));
  const others = [...view.problems].filter(([name]) => !shown.has(name.toLowerCase()));
  const contactStart = view.fields.findIndex((field) => field.source.kind === 'contact');
  const loanFields = contactStart < 0 ? view.fields : view.fields.slice(0, contactStart);
  const contactFields = contactStart < 0 ? [] : view.fields.slice(contactStart);
  // The refused form opens on its first wrong field, where the error is written beside it.
  const firstWrong = view.fields.find((field) => problemOf(field, view) !== undefined)?.name;
  const labels = messageLabels(view.fields);
  const field = (each: LoanFormField) => formField(each, view, each.name === firstWrong, labels);
  return renderPage(
    { title, viewer, section: 'loans' },
    html`<p class="breadcrumb"><a href="${LOANS_PATH}">Loans</a>${view.loan ? html` › <a href="${loanPath(text(view.loan.id))}">${loanLabel(view.loan)}</a>` : null}</p>
<h1>${title}</h1>
${(firstWrong ? message : outcome)('error', view.error ? `Not saved — ${inFormWords(view.error, labels)}${others.length ? ` — ${others.map(([name, problem]) => `${inFormWords(name, labels)}: ${inFormWords(problem, labels)}`).join('; ')}` : ''}` : null)}
<form class="stack loan-form" method="post" action="${action}" novalidate>
  ${csrfField(viewer.csrfToken)}${view.mode === 'create' ? onceField() : null}
  <fieldset><legend>Loan</legend><div class="form-grid">${loanFields.map(field)}</div></fieldset>
  ${contactFields.length ? html`<fieldset><legend>Contacts</legend><p class="hint">A borrower or guarantor is found by e-mail, else created. Leave empty for none.</p><div class="form-grid">${contactFields.map(field)}</div></fieldset>` : null}
  <div class="actions">
    <button type="submit">${view.mode === 'create' ? 'Create loan' : 'Save changes'}</button>
    <a class="button button-secondary" href="${view.loan ? loanPath(text(view.loan.id)) : LOANS_PATH}">Cancel</a>
  </div>
</form>`,
  );
}

/** What the refusal says of a field (the body's names are matched without regard to case). */
function problemOf(field: LoanFormField, view: LoanFormView): string | undefined {
  return [...view.problems].find(([name]) => name.toLowerCase() === field.name.toLowerCase())?.[1];
}

function formField(field: LoanFormField, view: LoanFormView, focus: boolean, labels: ReadonlyMap<string, string>): Html {
  const id = inputId(field.name);
  const value = view.values.get(field.name) ?? '';
  const problem = problemOf(field, view);
  const describedBy = [field.hint ? `${id}-hint` : '', problem ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = html` id="${id}" name="${field.name}"${focus ? html` autofocus` : null}${field.required ? html` required aria-required="true"` : null}${problem ? html` aria-invalid="true"` : null}${describedBy ? html` aria-describedby="${describedBy}"` : null}`;
  const rule = field.rule;
  let input: Html;
  if (rule.kind === 'enum' || rule.kind === 'boolean') {
    const options = rule.kind === 'enum' ? rule.values : ['true', 'false'];
    input = html`<select${common}><option value="">${field.required ? 'Choose…' : '—'}</option>${options.map((option) => html`<option value="${option}"${value === option ? html` selected` : null}>${enumLabel(option)}</option>`)}</select>`;
  } else {
    const type = field.name.endsWith('_Email') ? 'email' : 'text';
    const mode = rule.kind === 'decimal' ? html` inputmode="decimal"` : rule.kind === 'integer' ? html` inputmode="numeric"` : rule.kind === 'date' ? DATE_INPUT_ATTRIBUTES : null;
    input = html`<input type="${type}"${mode}${common} value="${value}">`;
  }
  return html`<div class="field${problem ? ' has-error' : ''}">
    <label for="${id}">${field.label}${field.required ? ' (required)' : null}</label>
    ${input}
    ${field.hint ? html`<span id="${id}-hint" class="hint">${field.hint}</span>` : null}
    ${problem ? html`<span id="${id}-error" class="field-error">${field.label}: ${inFormWords(problem, labels)}</span>` : null}
  </div>`;
}
