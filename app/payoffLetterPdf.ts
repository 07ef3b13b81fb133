import { pdfMoneyText } from '../domain/moneyText.js';
import type { PayoffLetter, UnpaidFee } from './payoffLetters.js';

/**
 * A payoff letter (`payoffLetters.ts`) as a PDF (pdfkit, loaded on first use as the investor
 * statement's, `statementPdf.ts`): US Letter, portrait; the lender's letterhead (its legal name
 * or else the account's name, and the address, phone and e-mail of its profile when given:
 * `accountProfile.ts`), the day issued, the loan (name, id, borrowers, property), the good-through day, the
 * itemised figures ending in the total to pay off, then the per diem as information and the note
 * that a later day needs a new quote (SPEC §12 R5: never extrapolated), and the profile's payment
 * instructions when it has them. Money in the account's
 * currency to the cent, with `-` for a subtracted part (the standard fonts have no minus sign) and
 * the currency's code where they have no sign for it (`INR 84,600.20`: `pdfMoneyText`);
 * days ISO. Helvetica covers Western European text only, as the statement's.
 */

const MARGIN = 56;
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const AMOUNT_WIDTH = 130;

const FEE_KINDS: ReadonlyMap<UnpaidFee['kind'], string> = new Map([
  ['late', 'Late fee'],
  ['nsf', 'Returned payment (NSF) fee'],
  ['manual', 'Fee'],
]);

/** How a fee is named on its line: `Late fee, row 1, dated 2026-02-26`. */
export function feeLabel(fee: UnpaidFee): string {
  const kind = fee.kind === 'manual' && fee.description ? oneLine(fee.description) : FEE_KINDS.get(fee.kind) ?? 'Fee';
  return `${kind}${fee.rowNumber !== null ? `, row ${fee.rowNumber}` : ''}, dated ${fee.date}`;
}

export async function payoffLetterPdf(letter: PayoffLetter): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'LETTER',
    margin: MARGIN,
    bufferPages: true,
    info: { Title: `Payoff letter, good through ${letter.goodThrough}`, Author: letter.letterhead.name, Subject: oneLine(letter.loan.loanName) },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = MARGIN;
  const width = doc.page.width - 2 * MARGIN;
  const money = (amount: string) => pdfMoneyText(amount, letter.currency);
  /** What a subtracted part does to the total: 50.00 → -$50.00, -100.00 → $100.00. */
  const less = (amount: string) => money(amount.startsWith('-') ? amount.slice(1) : /^[0.]+$/.test(amount) ? amount : `-${amount}`);
  const { figures } = letter;

  const { letterhead } = letter;
  doc.font(BOLD).fontSize(18).text(letterhead.name, left, MARGIN, { width });
  doc.font(FONT).fontSize(9).fillColor('#444444');
  for (const addressLine of letterhead.addressLines) doc.text(addressLine, { width });
  if (letterhead.contactLine) doc.text(letterhead.contactLine, { width });
  doc.text(`Amounts in ${letter.currency}`, { width });
  doc.fillColor('black').moveDown(1.2);
  doc.font(BOLD).fontSize(14).text('Payoff letter', { width });
  doc.font(FONT).fontSize(10).text(`Issued ${letter.issuedOn}`, { width });
  doc.moveDown(0.8);

  const fact = (label: string, value: string) => {
    doc.font(BOLD).text(`${label}: `, { continued: true, width }).font(FONT).text(value, { width });
  };
  fact('Loan', `${oneLine(letter.loan.loanName) || '(no name)'} (${letter.loan.loanId})`);
  if (letter.loan.borrowers.length) fact(letter.loan.borrowers.length === 1 ? 'Borrower' : 'Borrowers', letter.loan.borrowers.join('; '));
  for (const address of letter.loan.propertyAddresses) fact('Property', address);
  fact('Good through', letter.goodThrough);
  doc.moveDown(1);

  /** One line of the itemisation: the label on the left, the amount right-aligned. */
  const bottom = doc.page.height - MARGIN - 24;
  const line = (label: string, amount: string, options: { bold?: boolean; indent?: number } = {}) => {
    // A long list of fees continues on the next page, label and amount together (pdfkit would
    // move the label alone to a new page and leave its amount behind).
    if (doc.y + 30 > bottom) doc.addPage();
    const y = doc.y;
    const indent = options.indent ?? 0;
    doc.font(options.bold ? BOLD : FONT).fontSize(10);
    doc.text(label, left + indent, y, { width: width - AMOUNT_WIDTH - indent - 8 });
    const below = doc.y;
    doc.text(amount, left + width - AMOUNT_WIDTH, y, { width: AMOUNT_WIDTH, align: 'right', lineBreak: false });
    doc.y = Math.max(below, y + 14) + 2;
    doc.x = left;
  };
  const rule = () => {
    doc.moveTo(left, doc.y).lineTo(left + width, doc.y).lineWidth(0.8).strokeColor('#444444').stroke();
    doc.y += 4;
  };

  line('Principal outstanding', money(figures.principalOutstanding));
  line('Interest due', money(figures.interestDue));
  line(`Interest accrued to ${letter.goodThrough}`, money(figures.accruedInterest));
  if (figures.interestPaidAhead !== '0.00') line('Less interest already paid on later instalments', less(figures.interestPaidAhead));
  line('Fees due', money(figures.feesDue));
  for (const fee of letter.unpaidFees) line(feeLabel(fee), money(fee.unpaid), { indent: 16 });
  line(figures.creditBalance.startsWith('-') ? 'Credit owed back (refunded beyond the credit)' : 'Less credit', less(figures.creditBalance));
  rule();
  line(`Total to pay off on ${letter.goodThrough}`, money(figures.payoff), { bold: true });
  doc.moveDown(1.2);

  doc.font(FONT).fontSize(10).text(
    `Per diem: ${money(figures.perDiem)} for each day after ${letter.goodThrough}. This is for information only: ` +
      `the total above is good through ${letter.goodThrough}, and a payoff on a later day needs a new quote, ` +
      'since payments, fees and interest after that day change it.',
    left,
    doc.y,
    { width },
  );
  if (letter.paymentInstructions) {
    // Where the payoff goes (the lender's wire details): as the lender wrote them, a line each.
    doc.moveDown(1);
    doc.font(BOLD).fontSize(10).text('Payment instructions', left, doc.y, { width });
    doc.font(FONT).fontSize(10).text(letter.paymentInstructions, { width });
  }

  const pages = doc.bufferedPageRange();
  for (let index = 0; index < pages.count; index += 1) {
    doc.switchToPage(pages.start + index);
    doc.font(FONT).fontSize(8).fillColor('#444444');
    const footer = `${letterhead.name} - payoff letter ${letter.loan.loanId} - page ${index + 1} of ${pages.count}`;
    doc.text(footer, left, doc.page.height - MARGIN - 14, { width, align: 'center', lineBreak: false, height: 12 });
  }
  doc.end();
  return done;
}

/** A name on one line: a name is free text, and a line break in it would move what follows. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
