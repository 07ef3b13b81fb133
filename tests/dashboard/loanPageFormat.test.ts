import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LosslessNumber } from 'lossless-json';
import { loanPage, type LoanPageView } from '../../dashboard/pages/loanPages.js';
import { cash, customFieldValue, enumLabel, inPageWords } from '../../dashboard/pages/servicingFormat.js';
import type { Viewer } from '../../dashboard/pages/layout.js';

/**
 * Issue 28's formatting and layout of the loan page, rendered without a server: custom fields
 * by their type, enum values as words, ISO date inputs, tasks in working order with the overdue
 * marked, the outcome beside the form it reports on, a short schedule shown whole.
 */
const viewer: Viewer = { accountName: 'Acme', currency: 'USD', adminEmail: 'a@acme.test', csrfToken: 'token' };
const n = (digits: string) => new LosslessNumber(digits);

function schedule(rows: number): Record<string, unknown>[] {
  return Array.from({ length: rows }, (_, i) => ({ number: n(String(i + 1)), due: `2026-${String((i % 12) + 1).padStart(2, '0')}-15`, payment: n('100.00'), principal: n('90.00'), interest: n('10.00'), balance: n('0.00'), is_next: i === 0 }));
}

function page(overrides: Partial<LoanPageView> = {}, loan: Record<string, unknown> = {}): string {
  return loanPage(viewer, {
    loan: {
      id: 'abcdef12-3456-4789-8abc-def012345678',
      name: 'Elm St bridge',
      status: 'servicing',
      amount: n('100000.00'),
      frequency: 'semi_monthly',
      amortization: 'interest_only',
      custom_fields: { origination_fee: n('2500'), ltv: n('65'), property_type: 'mixed_use' },
      schedules: schedule(12),
      payments: [{ id: 'p1', date: '2026-01-15', amount: n('100.00'), type: 'regular', method: 'ach', date_reversed: '2026-01-20', reversal_reason: 'nsf', allocations: [] }],
      tasks: [
        { id: 't1', name: 'Done long ago', status: 'completed', date_due: '2026-01-01' },
        { id: 't2', name: 'No due date', status: 'open', date_due: null },
        { id: 't3', name: 'Due later', status: 'open', date_due: '2026-12-01' },
        { id: 't4', name: 'Late one', status: 'open', date_due: '2026-02-01' },
      ],
      ...loan,
    },
    customFields: [
      { key: 'origination_fee', label: 'Origination Fee', type: 'currency' },
      { key: 'ltv', label: 'LTV', type: 'percent' },
      { key: 'property_type', label: 'Property Type', type: 'select' },
    ],
    businessDate: '2026-03-01',
    today: { as_of: '2026-03-01', days_past_due: n('0') },
    ...overrides,
  });
}

describe('Dashboard: values shown by their type', () => {
  it('enum values as words; custom fields by type', () => {
    assert.equal(enumLabel('interest_only'), 'interest only');
    assert.equal(enumLabel('semi_monthly'), 'semi-monthly');
    assert.equal(enumLabel('ach'), 'ACH');
    assert.equal(customFieldValue('currency', n('2500'), 'USD'), '$2,500.00');
    assert.equal(customFieldValue('percent', n('65'), 'USD'), '65 %');
    assert.equal(customFieldValue('boolean', true, 'USD'), 'yes');
    assert.equal(customFieldValue('select', 'mixed_use', 'USD'), 'mixed use');
    assert.equal(customFieldValue(undefined, 'kept as stored', 'USD'), 'kept as stored');
  });

  it('messages in the page’s words: code names by their labels, never inside what was typed, words left alone', () => {
    const labels = new Map([['Date_Funded', 'Date Funded'], ['dateFunded', 'Date Funded'], ['interest_only', 'interest only'], ['amount', 'Amount'], ['deed_of_trust', 'deed of trust']]);
    assert.equal(
      inPageWords('dateFunded is after Date_Funded_2; an interest_only loan of amount 5; got "deed_of_trust"', labels),
      'Date Funded is after Date_Funded_2; an interest only loan of amount 5; got "deed_of_trust"',
    );
  });

  it('amounts in the account’s currency, as English writes it, with their exact digits', () => {
    assert.equal(cash(n('84600.2'), 'USD'), '$84,600.20');
    assert.equal(cash(n('1234567.891'), 'EUR'), '€1,234,567.891', 'more decimals than cents are shown, never rounded away');
    assert.equal(cash('-5', 'GBP'), '−£5.00');
    assert.equal(cash(n('99999999999999.99'), 'CAD'), 'CA$99,999,999,999,999.99', 'past a float’s digits');
    assert.equal(cash('1200', 'CHF'), 'CHF\u00a01,200.00', 'a code keeps to its number with a no-break space');
    assert.match(page({}, { amount: n('100000.00') }).replace(/\s+/g, ' '), /<dt>Amount<\/dt><dd>\$100,000\.00<\/dd>/);
    assert.match(loanPage({ ...viewer, currency: 'EUR' }, { loan: { id: 'abcdef12-3456-4789-8abc-def012345678', name: 'x', status: 'servicing', amount: n('5'), schedules: [], payments: [], tasks: [] }, customFields: [], businessDate: '2026-03-01' }), /<dt>Amount<\/dt><dd>€5\.00<\/dd>/);
  });

  it('the loan page shows them so, and every date input takes ISO text', () => {
    const text = page();
    assert.match(text, /<dt>Origination Fee<\/dt><dd>\$2,500\.00<\/dd>/);
    assert.match(text, /<dt>LTV<\/dt><dd>65 %<\/dd>/);
    // The rate as stored (numeric, four places) with zeros past two decimals left off, as percent fields are shown (it was 11.0000 %).
    assert.match(page({}, { rate: n('11.0000') }), /<dt>Rate<\/dt><dd>11\.00 %<\/dd>/);
    assert.match(page({}, { rate: n('7.1250') }), /<dt>Rate<\/dt><dd>7\.125 %<\/dd>/);
    assert.equal(customFieldValue('percent', n('65.5000'), 'USD'), '65.50 %');
    assert.match(text, /<dt>Property Type<\/dt><dd>mixed use<\/dd>/);
    assert.match(text, /<dt>Frequency<\/dt><dd>semi-monthly<\/dd>/);
    assert.match(text, /<dt>Amortization<\/dt><dd>interest only<\/dd>/);
    assert.match(text, /<td>regular<\/td><td>ACH<\/td>/);
    assert.match(text, /\(NSF\)/);
    assert.doesNotMatch(text, /type="date"/);
    assert.equal([...text.matchAll(/placeholder="YYYY-MM-DD"/g)].length, 4, 'payment date, payoff date, fee date, task due');
  });
});

describe('Dashboard: the loan page’s layout', () => {
  it('lists open tasks first by due date, the overdue marked, completed ones last', () => {
    const names = [...page().matchAll(/<li class="item( is-overdue)?">\s*<span><span class="status[^>]*>[^<]*<\/span> ([^<]+)/g)].map((match) => `${match[2]!.trim()}${match[1] ? ' (overdue)' : ''}`);
    assert.deepEqual(names, ['Late one (overdue)', 'Due later', 'No due date', 'Done long ago']);
    assert.match(page(), /<span class="overdue">overdue: due 2026-02-01<\/span>/);
  });

  it('shows the outcome beside the form that made it, focused on load', () => {
    const posted = page({ notice: 'Payment posted.', noticeKey: 'payment-posted' });
    const payments = posted.slice(posted.indexOf('id="payments-heading"'), posted.indexOf('id="tasks-heading"'));
    assert.match(payments, /<div class="message message-ok outcome" id="outcome" tabindex="-1" autofocus role="status">Payment posted\.<\/div>/);
    const created = page({ notice: 'Loan created.', noticeKey: 'created' });
    assert.ok(created.indexOf('id="outcome"') < created.indexOf('id="balances-heading"'), 'a created loan’s notice is at the top');
    const refused = page({ form: { form: 'task', error: 'Task: enter a name.', values: new Map() } });
    const tasks = refused.slice(refused.indexOf('id="tasks-heading"'), refused.indexOf('id="comments-heading"'));
    assert.match(tasks, /id="outcome" tabindex="-1" autofocus role="alert">Task: enter a name\./);
    assert.equal([...refused.matchAll(/ autofocus/g)].length, 1);
  });

  it('shows a short schedule whole and scrolls a long one in its box', () => {
    assert.match(page(), /class="table-scroll schedule"/);
    assert.match(page({}, { schedules: schedule(360) }), /class="table-scroll schedule schedule-long"/);
  });

  it('labels a nameless loan by its id', () => {
    assert.match(page({}, { name: '' }), /<h1>Loan abcdef12 /);
  });
});
