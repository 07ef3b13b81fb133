import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { statementPdf } from '../../app/statementPdf.js';
import type { InvestorStatement, StatementLoan } from '../../app/investorStatements.js';
import { pdfPages } from '../support/pdfText.js';
import { letterheadOf } from '../../app/accountProfile.js';

/**
 * The investor statement's PDF (docs/investors.md, "Formats") for names as people are written
 * through GraphQL, read back with pdfjs-dist as a viewer does. A name is free text: one holding a
 * line break (pasted from an address block) used to push the footer below the page's margin, so a
 * one-page statement came out as two pages, the second blank but for the footer's second line, and
 * its "page 1 of 1" was wrong; a loan's name with one ran over the row below it.
 */
/** Each page's text as extracted (`raw`: items joined by a space). */
const pageTexts = async (bytes: Uint8Array): Promise<string[]> => (await pdfPages(bytes)).map((page) => page.raw);

const AMOUNTS = { openingPrincipal: '60000.00', funded: '0.00', principal: '4730.93', interest: '500.00', fees: '0.00', adjustments: '0.00', total: '5230.93', closingPrincipal: '55269.07' };

function loan(name: string, index: number): StatementLoan {
  return { loanId: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`, loanName: name, rate: '10.0000', dateFunded: '2026-01-15', ...AMOUNTS };
}

function statement(personName: string, loans: StatementLoan[], accountName = 'Harbor Private Lending'): InvestorStatement {
  return {
    accountName,
    letterhead: letterheadOf(accountName, null),
    currency: 'USD',
    person: { id: '11111111-1111-4111-8111-111111111111', name: personName },
    period: { from: '2026-02-01', to: '2026-02-28' },
    loans,
    totals: AMOUNTS,
    lines: [],
  };
}

describe('Investor statement PDF: names as written', () => {
  it('a name with line breaks prints on one line: one page, numbered "page 1 of 1"', async () => {
    const pages = await pageTexts(await statementPdf(statement('Ann Investor\nc/o Harbor Trust\r\nSuite 4', [loan('Elm St\nbridge', 1)], 'Harbor\nLending'), '2026-03-01'));
    assert.equal(pages.length, 1, pages.join('\n---\n'));
    assert.match(pages[0]!, /Investor: Ann Investor c\/o Harbor Trust Suite 4/);
    assert.match(pages[0]!, /Elm St bridge/);
    assert.match(pages[0]!, /Harbor Lending - Ann Investor c\/o Harbor Trust Suite 4 - page 1 of 1/);
  });

  it('a very long name is shortened in the footer so the page number stays on the page', async () => {
    const long = `Evergreen ${'Investment '.repeat(40)}Trust LP`;
    const pages = await pageTexts(await statementPdf(statement(long, [loan('Elm St bridge', 1)]), '2026-03-01'));
    assert.equal(pages.length, 1);
    assert.match(pages[0]!, /\.\.\. - page 1 of 1/);
  });

  it('40 loans: further pages with the headings repeated, each numbered of the whole', async () => {
    const loans = Array.from({ length: 40 }, (_, index) => loan(`Loan ${String(index + 1).padStart(2, '0')}`, index + 1));
    const pages = await pageTexts(await statementPdf(statement('Ann Investor', loans), '2026-03-01'));
    assert.equal(pages.length, 2);
    pages.forEach((text, index) => {
      assert.match(text, /Opening/);
      assert.match(text, new RegExp(`page ${index + 1} of 2`));
    });
    assert.match(pages[1]!, /Loan 40/);
    assert.match(pages[1]!, /Total/);
  });

  it('amounts in a currency whose sign the standard fonts lack are printed with its code (INR 5,230.93), never another character', async () => {
    // Before: `¹5,230.93`, the ₹ sign's low byte in the font's encoding.
    for (const [currency, total] of [['INR', 'INR 5,230.93'], ['CHF', 'CHF 5,230.93'], ['EUR', '€5,230.93']] as const) {
      const [page] = await pageTexts(await statementPdf({ ...statement('Ann Investor', [loan('Elm St bridge', 1)]), currency }, '2026-03-01'));
      const text = page!.replace(/\u00a0/g, ' ');
      assert.ok(text.includes(total), `${currency}: ${text}`);
      assert.ok(text.includes(`Amounts in ${currency}.`), `${currency}: ${text}`);
      assert.doesNotMatch(text, /[¹ª±]/);
    }
  });
});
