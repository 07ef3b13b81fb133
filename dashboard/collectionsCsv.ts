import type { LateLoan } from '../app/collectionsQueue.js';
import { numberCell, textCell } from '../app/csv.js';

/**
 * The collections queue as CSV (RFC 4180): a header row, then one line per late loan in the
 * page's order, lines ended by CRLF, UTF-8 with a byte-order mark (so a spreadsheet reads names
 * with accents right). A field holding a comma, a quote or a line break is quoted, its quotes
 * doubled. Text that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed
 * with `'`, so a spreadsheet never runs a name as a formula (CSV injection); the amounts and
 * days are the database's exact digits and are never prefixed (they are numbers, not text a
 * borrower chose, and a prefix would change them).
 */
export function collectionsCsv(loans: readonly LateLoan[], currency: string): string {
  const header = [
    'Loan ID',
    'Loan',
    'Days past due',
    'Bucket',
    `Amount past due (${currency})`,
    `Principal outstanding (${currency})`,
    `Fees due (${currency})`,
    'Last payment date',
    `Last payment amount (${currency})`,
    'Borrower',
    'Borrower email',
    'Borrower phone',
    'Next task due',
    'Next task',
  ].map(textCell);
  const lines = loans.map((loan) =>
    [
      textCell(loan.id),
      textCell(loan.name),
      String(loan.daysPastDue),
      textCell(loan.bucket),
      numberCell(loan.amountPastDue),
      numberCell(loan.principalOutstanding),
      numberCell(loan.feesDue),
      textCell(loan.lastPaymentDate ?? ''),
      numberCell(loan.lastPaymentAmount),
      textCell(loan.borrowerName ?? ''),
      textCell(loan.borrowerEmail ?? ''),
      textCell(loan.borrowerPhone ?? ''),
      textCell(loan.nextTaskDue ?? ''),
      textCell(loan.nextTaskName ?? ''),
    ].join(','),
  );
  return `\uFEFF${[header.join(','), ...lines].map((line) => `${line}\r\n`).join('')}`;
}
