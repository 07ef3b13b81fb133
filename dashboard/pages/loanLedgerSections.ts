import { html, type Html } from '../html.js';
import { csrfField, outcome, refusedField, type Viewer } from './layout.js';
import { onceField } from '../formOnce.js';
import type { LoanPageView } from './loanPages.js';
import { loanPath } from './servicingPaths.js';
import { cash, centsOf, dateInput, enumLabel, fromCents, loanLabel, money, orDash, row, rows, statusPill, text, type Row } from './servicingFormat.js';

/**
 * The loan page's parts that show the servicing ledger (SPEC §12): the balances, the payoff
 * quote with "Post this payoff", each payment's allocation, and the fees with their forms.
 */

/** The loan's balances (SPEC §12 R2, stored by the ledger's replay), status and days past due. */
export function balancesSection(loan: Row, today: Row | null, currency: string): Html {
  const closed = text(loan.date_closed);
  const dpd = text(today?.days_past_due);
  return html`<section aria-labelledby="balances-heading" class="card balances" id="balances">
  <h2 id="balances-heading">Balances</h2>
  <dl class="facts">
    <dt>Status</dt><dd>${statusPill(loan.status)}${closed ? html` <span class="closed-on">closed on ${closed}</span>` : null}</dd>
    <dt>Principal outstanding</dt><dd class="money" data-balance="principal_outstanding">${cash(loan.principal_outstanding, currency)}</dd>
    <dt>Interest due</dt><dd class="money" data-balance="interest_due">${cash(loan.interest_due, currency)}</dd>
    <dt>Fees due</dt><dd class="money" data-balance="fees_due">${cash(loan.fees_due, currency)}</dd>
    <dt>Credit</dt><dd class="money" data-balance="credit_balance">${cash(loan.credit_balance, currency)}</dd>
    <dt>Oldest unpaid due</dt><dd data-balance="oldest_unpaid_due">${orDash(loan.oldest_unpaid_due)}</dd>
    <dt>Days past due</dt><dd data-balance="days_past_due">${dpd ? html`${dpd} <span class="hint">as of ${text(today?.as_of)}</span>` : orDash(null)}</dd>
  </dl>
  <p class="hint">Balances are as of today's business date (or the last payment's date, when later).</p>
</section>`;
}

/**
 * The payoff quote (SPEC §12 R5) for a chosen day — a GET form, so a quote is a link — with its
 * breakdown and per diem, and "Post this payoff": one button posting a payment of type
 * `payoff` for the quoted amount on that day (the server quotes again before posting).
 */
export function payoffSection(viewer: Viewer, loan: Row, view: LoanPageView, outcomeHere: Html | null): Html {
  const id = text(loan.id);
  const quote = view.quote ?? null;
  const day = view.quoteError !== undefined ? view.quoteDayAsked ?? '' : view.form?.form === 'payoff' ? text(quote?.as_of) || (view.form.values.get('date') ?? '') : text(quote?.as_of);
  const payoff = centsOf(quote?.payoff);
  const postable = quote !== null && payoff !== null && payoff > 0n && text(loan.status) === 'servicing';
  const method = view.form?.form === 'payoff' ? view.form.values.get('method') ?? 'ach' : 'ach';
  // A part the payoff subtracts, shown as what it does to the payoff: a credit of 50.00 as −50.00,
  // and a credit below zero (a refund the borrower owes back) of −100.00 as 100.00 — it was shown
  // as −100.00 too, so the lines no longer added up to the payoff.
  const minus = (value: unknown) => {
    const cents = centsOf(value);
    return cents !== null && cents !== 0n ? cash(fromCents(-cents), viewer.currency) : cash(value, viewer.currency);
  };
  return html`<section aria-labelledby="payoff-heading" class="card payoff" id="payoff">
  <h2 id="payoff-heading">Payoff quote</h2>
  ${outcomeHere}
  <form class="inline-form" method="get" action="${loanPath(id)}" aria-label="Quote a payoff">
    <div class="field"><label for="quote-date">Payoff date</label>${dateInput('quote-date', 'quote_date', day, true, refusedField(view.quoteError, 'Payoff date'))}</div>
    <div><button type="submit" class="button-secondary">Quote</button></div>
  </form>
  ${
    quote
      ? html`<dl class="facts quote" aria-label="Payoff on ${text(quote.as_of)}"${view.quoteAsked ? html` id="quote" tabindex="-1" autofocus` : null}>
    <dt>Principal outstanding</dt><dd class="num" data-quote="principal_outstanding">${cash(quote.principal_outstanding, viewer.currency)}</dd>
    <dt>Interest due</dt><dd class="num" data-quote="interest_due">${cash(quote.interest_due, viewer.currency)}</dd>
    <dt>Accrued interest</dt><dd class="num" data-quote="accrued_interest">${cash(quote.accrued_interest, viewer.currency)}</dd>
    <dt>Interest paid ahead</dt><dd class="num" data-quote="interest_paid_ahead">${minus(quote.interest_paid_ahead)}</dd>
    <dt>Fees due</dt><dd class="num" data-quote="fees_due">${cash(quote.fees_due, viewer.currency)}</dd>
    <dt>${(centsOf(quote.credit_balance) ?? 0n) < 0n ? 'Credit owed back (refunded beyond the credit)' : 'Credit'}</dt><dd class="num" data-quote="credit_balance">${minus(quote.credit_balance)}</dd>
    <dt class="total">Payoff on ${text(quote.as_of)}</dt><dd class="num total" data-quote="payoff"><strong>${cash(quote.payoff, viewer.currency)}</strong></dd>
    <dt>Per diem</dt><dd class="num" data-quote="per_diem">${cash(quote.per_diem, viewer.currency)}</dd>
  </dl>
  <p><a class="payoff-letter" href="${loanPath(id)}/payoff-letter.pdf?date=${text(quote.as_of)}" download>Payoff letter (PDF)</a> <span class="hint">for ${text(quote.as_of)}: these figures on the lender's letterhead, with the per diem.</span></p>
  ${
    postable
      ? html`<form class="inline-form post-payoff" method="post" action="${loanPath(id)}/payoff" aria-label="Post this payoff">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <input type="hidden" name="date" value="${text(quote.as_of)}">
    <input type="hidden" name="amount" value="${fromCents(payoff)}">
    <div class="field"><label for="payoff-method">Method</label><select id="payoff-method" name="method">${['ach', 'check', 'wire', 'cash'].map(
      (option) => html`<option value="${option}"${method === option ? html` selected` : null}>${enumLabel(option)}</option>`,
    )}</select></div>
    <div><button type="submit">Post this payoff: ${cash(fromCents(payoff), viewer.currency)} on ${text(quote.as_of)}</button></div>
  </form>`
      : html`<p class="hint">${text(loan.status) === 'servicing' ? 'Nothing to pay off on this day.' : `The loan is ${enumLabel(loan.status)}: a payoff is posted only for a loan in servicing.`}</p>`
  }`
      : html`<p>No quote: the loan has no schedule.</p>`
  }
</section>`;
}

/** A payment's allocation (SPEC §12 R1): totals per component, and its lines (row, component, amount) in a disclosure. */
export function allocationCell(payment: Row, currency: string): Html {
  const lines = rows(payment.allocations);
  if (!lines.length) return html`<span class="hint">${payment.date_reversed ? 'nothing (reversed)' : 'nothing yet'}</span>`;
  const totals = new Map<string, bigint>();
  for (const line of lines) totals.set(text(line.component), (totals.get(text(line.component)) ?? 0n) + (centsOf(line.amount) ?? 0n));
  const summary = [...totals].map(([component, cents]) => `${enumLabel(component)} ${cash(fromCents(cents), currency)}`).join(', ');
  return html`<details class="allocation">
  <summary>${summary} <span class="hint">(${lines.length} ${lines.length === 1 ? 'line' : 'lines'})</span></summary>
  <table class="allocation-lines">
    <caption class="visually-hidden">Allocation of the payment of ${cash(payment.amount, currency)} on ${text(payment.date)}</caption>
    <thead><tr><th scope="col">Row</th><th scope="col">Component</th><th scope="col" class="num">Amount</th></tr></thead>
    <tbody>${lines.map((line) => {
      const fee = row(line.fee);
      const where = fee ? `${enumLabel(fee.kind)} fee` : text(line.row_number) ? `row ${text(line.row_number)}` : '—';
      return html`<tr><td>${where}</td><td>${enumLabel(line.component)}</td><td class="num">${cash(line.amount, currency)}</td></tr>`;
    })}</tbody>
  </table>
</details>`;
}

/** A fee's kind in words (`late` → "Late fee, row 3"). */
function feeKind(fee: Row): string {
  const kind = text(fee.kind);
  if (kind === 'late') return text(fee.row_number) ? `Late fee, row ${text(fee.row_number)}` : 'Late fee';
  if (kind === 'nsf') return 'NSF fee (returned payment)';
  if (kind === 'manual') return 'Manual fee';
  return `${enumLabel(kind)} fee`;
}

/** What is still due of a fee: its amount less what was paid and waived (cents; stored by the ledger's replay). */
export function feeUnpaid(fee: Row): bigint {
  return (centsOf(fee.amount) ?? 0n) - (centsOf(fee.paid) ?? 0n) - (centsOf(fee.waived) ?? 0n);
}

/** The loan statuses a fee is added to (the API's servicer role's rule). */
export const FEE_STATUSES: readonly string[] = ['servicing', 'overpaid'];

/**
 * The loan's fees (late, NSF, manual; SPEC §12 R4, R8) by date, each with what was paid, waived
 * and is still due, as the ledger's replay stored them; "Add a fee" (a manual fee) and, for each
 * fee with something unpaid and no waiver, "Waive" — a disclosure with the amount it waives (all
 * that is unpaid: the collection waives no part of a fee) and a reason. A refused waiver is shown
 * in its fee's disclosure, open, with what was typed. The labels ("Fee", "Fee date", "To waive")
 * are not the payment form's "Amount" and "Date": a field's name stays one field's on the page.
 */
export function feesSection(viewer: Viewer, loan: Row, view: LoanPageView, outcomeHere: Html | null): Html {
  const id = text(loan.id);
  const fees = rows(loan.fees);
  const form = view.form;
  const feeField = (name: string) => (form?.form === 'fee' ? form.values.get(name) ?? '' : '');
  const feeRefused = (label: string) => refusedField(form?.form === 'fee' ? form.error : null, label);
  const refusedWaiver = form?.form === 'waiver' ? form : undefined;
  const waivable = (fee: Row) => !text(fee.waived_on) && feeUnpaid(fee) > 0n;
  // A refused waiver is shown in its fee's form; one whose fee has no form now (waived, paid since) above the table.
  const waiverShown = refusedWaiver !== undefined && fees.some((fee) => text(fee.id) === refusedWaiver.target && waivable(fee));
  const money_ = (value: unknown) => cash(value, viewer.currency);
  return html`<section aria-labelledby="fees-heading" id="fees">
  <h2 id="fees-heading">Fees</h2>
  ${outcomeHere ?? (refusedWaiver && !waiverShown ? outcome('error', refusedWaiver.error) : null)}
  ${
    FEE_STATUSES.includes(text(loan.status))
      ? html`<form class="inline-form" method="post" action="${loanPath(id)}/fees" aria-label="Add a fee">
    ${csrfField(viewer.csrfToken)}${onceField()}
    <div class="field"><label for="fee-amount">Fee</label><input id="fee-amount" name="amount" type="text" inputmode="decimal" required${feeRefused('Fee')} value="${feeField('amount')}"></div>
    <div class="field"><label for="fee-date">Fee date</label>${dateInput('fee-date', 'date', feeField('date') || view.businessDate, true, feeRefused('Fee date'))}</div>
    <div class="field"><label for="fee-note">Note <span class="hint">(optional)</span></label><input id="fee-note" name="description" type="text" maxlength="500"${feeRefused('Note')} value="${feeField('description')}"></div>
    <div><button type="submit">Add fee</button></div>
  </form>`
      : html`<p class="hint">A fee is added only to a loan in servicing or overpaid; this loan is ${enumLabel(loan.status)}.</p>`
  }
  ${
    fees.length
      ? html`<div class="table-scroll" role="region" aria-labelledby="fees-caption" tabindex="0"><table class="fees">
  <caption id="fees-caption" class="visually-hidden">Fees of ${loanLabel(loan)}</caption>
  <thead><tr><th scope="col">Date</th><th scope="col">Kind</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Paid</th><th scope="col" class="num">Waived</th><th scope="col" class="num">Due</th><th scope="col">Waiver</th></tr></thead>
  <tbody>${fees.map((fee) => {
    const feeId = text(fee.id);
    const unpaid = feeUnpaid(fee);
    const refused = refusedWaiver?.target === feeId ? refusedWaiver : undefined;
    const reason = refused?.values.get('reason') ?? '';
    return html`<tr data-fee="${feeId}">
    <td class="nowrap">${text(fee.date)}</td>
    <td>${feeKind(fee)}${text(fee.description) ? html`<br><span class="hint">${text(fee.description)}</span>` : null}</td>
    <td class="num" data-fee-part="amount">${money_(fee.amount)}</td><td class="num" data-fee-part="paid">${money_(fee.paid)}</td><td class="num" data-fee-part="waived">${money_(fee.waived)}</td><td class="num" data-fee-part="due">${money_(fromCents(unpaid))}</td>
    <td>${
      text(fee.waived_on)
        ? html`Waived ${text(fee.waived_on)} by ${text(fee.waived_by)}${text(fee.waived_reason) ? html`: <span class="reason">${text(fee.waived_reason)}</span>` : null}`
        : waivable(fee)
          ? html`<details class="waive"${refused ? html` open` : null}>
      <summary>Waive<span class="visually-hidden"> the ${feeKind(fee).toLowerCase()} of ${money_(fee.amount)} on ${text(fee.date)}</span></summary>
      ${refused ? outcome('error', refused.error) : null}
      <form class="stack" method="post" action="${loanPath(id)}/fees/${feeId}/waive" aria-label="Waive the ${feeKind(fee).toLowerCase()} of ${money_(fee.amount)} on ${text(fee.date)}">
        ${csrfField(viewer.csrfToken)}${onceField()}
        <div class="field"><label for="waive-amount-${feeId}">To waive <span class="hint">(all that is unpaid)</span></label><input id="waive-amount-${feeId}" name="amount" type="text" inputmode="decimal" readonly value="${refused?.values.get('amount') ?? fromCents(unpaid)}"${refusedField(refused?.error, 'To waive')}></div>
        <div class="field"><label for="waive-reason-${feeId}">Reason</label><textarea id="waive-reason-${feeId}" name="reason" rows="2" required maxlength="500"${refusedField(refused?.error, 'Reason')}>${reason}</textarea></div>
        <div><button type="submit" class="button-secondary">Waive fee</button></div>
      </form>
    </details>`
          : html`<span class="hint">${unpaid === 0n ? 'paid' : orDash(null)}</span>`
    }</td>
  </tr>`;
  })}</tbody></table></div>`
      : html`<p>No fees.</p>`
  }
  <p class="hint">Late fees are the ledger's, assessed as the days pass; a waiver is dated today's business date, recorded with who waived the fee and why, and never undone.</p>
</section>`;
}
