import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { feeLabel, payoffLetterPdf } from '../../app/payoffLetterPdf.js';
import type { PayoffLetter, UnpaidFee } from '../../app/payoffLetters.js';
import { pdfPages } from '../support/pdfText.js';
import { letterheadOf } from '../../app/accountProfile.js';

/**
 * The payoff letter's PDF (docs/ledger.md, "Payoff letter") read back with pdfjs-dist as a viewer
 * does, for what the HTTP tests (tests/api/payoffLetter.test.ts) do not reach: a loan owing many
 * fees runs onto a second page with each fee's amount beside its label, a credit owed back adds
 * to the total, and names with line breaks print on one line.
 */
function letter(fees: UnpaidFee[], overrides: Partial<PayoffLetter['figures']> = {}): PayoffLetter {
  return {
    lenderName: 'Harbor\nPrivate Lending',
    letterhead: letterheadOf('Harbor\nPrivate Lending', null),
    paymentInstructions: null,
    currency: 'EUR',
    issuedOn: '2026-04-01',
    goodThrough: '2026-03-31',
    loan: { loanId: '3f1c2a9e-0000-4000-8000-000000000001', loanName: 'Oak Ave\r\nsale', dateFunded: '2026-01-15', borrowers: ['Ben Borrower'], propertyAddresses: [] },
    figures: { principalOutstanding: '92000.00', interestDue: '0.00', accruedInterest: '448.81', interestPaidAhead: '0.00', feesDue: '0.00', creditBalance: '0.00', payoff: '92448.81', perDiem: '28.05', ...overrides },
    unpaidFees: fees,
  };
}

describe('Payoff letter PDF', () => {
  it('60 unpaid fees: a second page, every fee on one line with its amount, the total and per diem after them, pages numbered of the whole', async () => {
    const fees: UnpaidFee[] = Array.from({ length: 60 }, (_, index) => ({ kind: 'late', rowNumber: index + 1, date: '2026-02-26', description: null, unpaid: '25.00' }));
    const pages = await pdfPages(await payoffLetterPdf(letter(fees, { feesDue: '1500.00', payoff: '93948.81' })));
    assert.equal(pages.length, 2);
    const lines = pages.flatMap((page) => [...page.lines.values()].map((parts) => parts.join(' ')));
    for (const fee of fees) assert.ok(lines.includes(`${feeLabel(fee)} €25.00`), feeLabel(fee));
    assert.ok(pages[1]!.text.includes('Total to pay off on 2026-03-31 €93,948.81'), pages[1]!.text);
    assert.ok(pages[1]!.text.includes('Per diem: €28.05 for each day after 2026-03-31'));
    pages.forEach((page, index) => assert.match(page.text, new RegExp(`Harbor Private Lending - payoff letter 3f1c2a9e-0000-4000-8000-000000000001 - page ${index + 1} of 2`)));
  });

  it("the lender's letterhead and long payment instructions: every line printed, a further page when they run past the first, the letterhead's name in each footer", async () => {
    const instructions = Array.from({ length: 40 }, (_, index) => `Step ${index + 1}: wire reference line`).join('\n');
    const headed: PayoffLetter = {
      ...letter([]),
      letterhead: letterheadOf('Harbor', { legal_name: 'Harbor Private Lending LLC', address_line1: '1 Quay St', city: 'Boston', region: 'MA', postal_code: '02110', email: 'payoffs@harbor.example' }),
      paymentInstructions: instructions,
    };
    const pages = await pdfPages(await payoffLetterPdf(headed));
    assert.equal(pages.length, 2);
    assert.ok(pages[0]!.text.startsWith('Harbor Private Lending LLC 1 Quay St Boston, MA 02110 payoffs@harbor.example Amounts in EUR Payoff letter'), pages[0]!.text);
    const lines = pages.flatMap((page) => [...page.lines.values()].map((parts) => parts.join(' ')));
    assert.ok(lines.includes('Payment instructions'));
    for (let step = 1; step <= 40; step += 1) assert.ok(lines.includes(`Step ${step}: wire reference line`), `step ${step}`);
    pages.forEach((page, index) => assert.match(page.text, new RegExp(`Harbor Private Lending LLC - payoff letter 3f1c2a9e-0000-4000-8000-000000000001 - page ${index + 1} of 2`)));
  });

  it('a credit owed back (a refund beyond the credit) is added, not subtracted; nothing paid ahead is not listed; names print on one line', async () => {
    const [page] = await pdfPages(await payoffLetterPdf(letter([{ kind: 'manual', rowNumber: null, date: '2026-03-02', description: 'Wire\nfee', unpaid: '35.00' }], { feesDue: '35.00', creditBalance: '-100.00', payoff: '92583.81' })));
    assert.ok(page!.text.includes('Fees due €35.00 Wire fee, dated 2026-03-02 €35.00 Credit owed back (refunded beyond the credit) €100.00 Total to pay off on 2026-03-31 €92,583.81'), page!.text);
    assert.doesNotMatch(page!.text, /paid on later instalments/);
    assert.ok(page!.text.startsWith('Harbor Private Lending Amounts in EUR Payoff letter Issued 2026-04-01'), page!.text);
    assert.ok(page!.text.includes('Oak Ave sale (3f1c2a9e-0000-4000-8000-000000000001)'));
  });

  it("each lender's currency as the letter prints it: a sign the standard fonts lack gives way to the code, never another character", async () => {
    // Before: ₹, ₪ and ₱ came out as ¹, ª and ± (the low byte of each in the font's encoding).
    const expected: readonly (readonly [string, string])[] = [
      ['EUR', '€84,600.20'], ['CHF', 'CHF 84,600.20'], ['GBP', '£84,600.20'], ['INR', 'INR 84,600.20'], ['ILS', 'ILS 84,600.20'], ['PHP', 'PHP 84,600.20'],
    ];
    for (const [currency, payoff] of expected) {
      const [page] = await pdfPages(await payoffLetterPdf({ ...letter([{ kind: 'late', rowNumber: 3, date: '2026-03-02', description: null, unpaid: '53.31' }], { principalOutstanding: '84546.89', feesDue: '53.31', accruedInterest: '0.00', payoff: '84600.20', perDiem: '1066.19' }), currency }));
      const text = page!.text.replace(/\u00a0/g, ' ');
      const fee = payoff.replace('84,600.20', '53.31');
      assert.ok(text.includes(`Total to pay off on 2026-03-31 ${payoff}`), `${currency}: ${text}`);
      assert.ok(text.includes(`Per diem: ${payoff.replace('84,600.20', '1,066.19')}`), `${currency}: ${text}`);
      assert.ok(text.includes(`Fees due ${fee}`), `${currency}: ${text}`);
      assert.match(text, new RegExp(`Amounts in ${currency}`));
    }
  });
});
