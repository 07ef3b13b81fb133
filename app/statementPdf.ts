import { pdfMoneyText } from '../domain/moneyText.js';
import { STATEMENT_COLUMNS, type InvestorStatement } from './investorStatements.js';

/**
 * An investor statement as a PDF (pdfkit; README "Decisions"): US Letter, landscape, the lender's
 * letterhead at the top (its legal name or else the account's name, with the address, phone and
 * e-mail of its profile when given: `accountProfile.ts`), the investor and the period, one row per loan with the statement's
 * columns and a totals row, money in the account's currency (`domain/moneyText.ts`, with `-` for
 * a negative amount: the standard fonts have no minus sign; the code for a sign they lack, `INR`). One page while the loans fit (about
 * 25); more loans continue on further pages, the column headings repeated and every page numbered.
 * The standard Helvetica font covers Western European text (WinAnsi); a name in another script
 * prints wrongly — embedding a font for those is left for when an account needs it.
 */

const PAGE = { size: 'LETTER' as const, layout: 'landscape' as const, margin: 40 };
const ROW_HEIGHT = 16;
const LOAN_COLUMN = 176;
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';

export async function statementPdf(statement: InvestorStatement, generatedOn: string): Promise<Buffer> {
  // Loaded on first use: pdfkit's fonts and tables cost about 0.15 CPU-seconds to load, which every
  // CLI command and service start paid whether it wrote a PDF or not.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: PAGE.size,
    layout: PAGE.layout,
    margin: PAGE.margin,
    bufferPages: true,
    info: { Title: `Investor statement ${statement.period.from} to ${statement.period.to}`, Author: statement.letterhead.name, Subject: statement.person.name },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = PAGE.margin;
  const right = doc.page.width - PAGE.margin;
  const bottom = doc.page.height - PAGE.margin - 20;
  const amountWidth = (right - left - LOAN_COLUMN) / STATEMENT_COLUMNS.length;
  const money = (amount: string): string => pdfMoneyText(amount, statement.currency);
  const { letterhead } = statement;
  const accountName = letterhead.name;
  const personName = oneLine(statement.person.name);

  doc.font(BOLD).fontSize(18).text(accountName, left, PAGE.margin, { width: right - left });
  doc.font(FONT).fontSize(9).fillColor('#444444');
  for (const addressLine of letterhead.addressLines) doc.text(addressLine, { width: right - left });
  if (letterhead.contactLine) doc.text(letterhead.contactLine, { width: right - left });
  doc.fillColor('black');
  if (letterhead.addressLines.length || letterhead.contactLine) doc.moveDown(0.5);
  doc.font(FONT).fontSize(12).text('Investor statement', { width: right - left });
  doc.moveDown(0.6);
  doc.fontSize(10);
  doc.text(`Investor: ${personName}`);
  doc.text(`Period: ${statement.period.from} to ${statement.period.to}`);
  doc.text(`Amounts in ${statement.currency}. Prepared ${generatedOn}.`);
  doc.moveDown(1);

  /** A row of the table at `y`: the loan cell, then the amounts right-aligned. */
  const row = (y: number, first: string, cells: readonly string[], font: string, wrap = false): void => {
    doc.font(font).fontSize(8.5);
    doc.text(fitted(first, LOAN_COLUMN - 8), left, y, { width: LOAN_COLUMN - 8, lineBreak: false });
    cells.forEach((cell, index) => {
      doc.text(cell, left + LOAN_COLUMN + index * amountWidth, y, { width: amountWidth - 4, align: 'right', lineBreak: wrap });
    });
  };
  const fitted = (text: string, width: number): string => {
    if (doc.widthOfString(text) <= width) return text;
    let cut = text;
    while (cut.length > 1 && doc.widthOfString(`${cut}...`) > width) cut = cut.slice(0, -1);
    return `${cut}...`;
  };
  const rule = (y: number, weight: number): void => {
    doc.moveTo(left, y).lineTo(right, y).lineWidth(weight).strokeColor('#444444').stroke();
  };
  const headings = (y: number): number => {
    // Headings may take two lines ("Opening / principal"); the loan's heading sits on the second.
    row(y, '', STATEMENT_COLUMNS.map(([, label]) => label), BOLD, true);
    row(y + 10, 'Loan', [], BOLD);
    rule(y + 2 * ROW_HEIGHT - 6, 0.8);
    return y + 2 * ROW_HEIGHT;
  };

  let y = headings(doc.y);
  if (statement.loans.length === 0) {
    doc.font(FONT).fontSize(9).text('This person funds no loan in this period.', left, y, { lineBreak: false });
    y += ROW_HEIGHT;
  }
  for (const loan of statement.loans) {
    if (y + ROW_HEIGHT > bottom) {
      doc.addPage();
      y = headings(PAGE.margin);
    }
    row(y, oneLine(loan.loanName), STATEMENT_COLUMNS.map(([key]) => money(loan[key])), FONT);
    y += ROW_HEIGHT;
  }
  if (y + ROW_HEIGHT + 4 > bottom) {
    doc.addPage();
    y = headings(PAGE.margin);
  }
  rule(y - 3, 0.8);
  row(y + 1, 'Total', STATEMENT_COLUMNS.map(([key]) => money(statement.totals[key])), BOLD);

  const pages = doc.bufferedPageRange();
  for (let index = 0; index < pages.count; index += 1) {
    doc.switchToPage(pages.start + index);
    // One line that fits: a longer one would wrap below the margin and pdfkit would add a page.
    const number = ` - page ${index + 1} of ${pages.count}`;
    doc.font(FONT).fontSize(8).fillColor('#444444');
    const footer = `${fitted(`${accountName} - ${personName}`, right - left - doc.widthOfString(number))}${number}`;
    doc.text(footer, left, doc.page.height - PAGE.margin - 14, { width: right - left, align: 'center', lineBreak: false });
  }
  doc.end();
  return done;
}

/** A name on one line: a name is free text, and a line break in it would move what follows. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
