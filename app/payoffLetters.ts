import type { Queryable } from '../db/index.js';
import type { PayoffQuote } from '../domain/ledger/index.js';
import { UserInputError } from './errors.js';
import { LeadHasNoPayoff } from './ledgerReads.js';
import { letterheadOf, paymentInstructionsOf, profileJsonSql, type Letterhead } from './accountProfile.js';

/**
 * The payoff letter a borrower asks for when selling or refinancing (SPEC §12 R5; docs/ledger.md,
 * "Payoff letter"): what pays the loan off on a day, itemised, on the lender's letterhead, with
 * the per diem after that day as information — a later day is quoted anew, never extrapolated.
 * The figures are R5's quote from the database's own replay (`loanql_ledger`), the same
 * expressions as `GET /api/loan/{id}/payoff` (`ledgerReads.ts`), with the unpaid fees listed one
 * by one. Who the loan is for (its name, borrowers, property) is read by the caller as its role
 * sees the loan (`LetterParties`): an investor key's letter names no borrower it cannot read.
 */

/** The loan as the letter names it, read through the engine by the caller (`LETTER_PARTIES_FIELDS`). */
export interface LetterParties {
  readonly loanId: string;
  readonly loanName: string;
  readonly dateFunded: string | null;
  readonly borrowers: readonly string[];
  /** Each property address of the loan on one line (`12 Elm St, Springfield, IL 62704`). */
  readonly propertyAddresses: readonly string[];
}

/** A fee dated on or before the good-through day with something left to pay (amount − paid − waived). */
export interface UnpaidFee {
  readonly kind: 'late' | 'nsf' | 'manual';
  readonly rowNumber: number | null;
  readonly date: string;
  readonly description: string | null;
  readonly unpaid: string;
}

/** R5's parts as decimal texts to the cent (`84600.20`): exactly the JSON quote's (the model's `PayoffQuote`, its amount as `payoff`). */
export type PayoffFigures = Omit<PayoffQuote, 'date' | 'amount'> & { readonly payoff: string };

export interface PayoffLetter {
  readonly lenderName: string;
  /** The lender's letterhead (`accountProfile.ts`): its legal name, address and contact. */
  readonly letterhead: Letterhead;
  /** How to pay the payoff (the profile's payment instructions, wire details); null when not given. */
  readonly paymentInstructions: string | null;
  readonly currency: string;
  /** The account's business date on which the letter was made. */
  readonly issuedOn: string;
  /** The day the total pays the loan off (the quote's day). */
  readonly goodThrough: string;
  readonly loan: LetterParties;
  readonly figures: PayoffFigures;
  readonly unpaidFees: readonly UnpaidFee[];
}

/**
 * What the letter asks of the loan, as a selection of `loans` in a fixed view that has
 * `address_details` (the REST view of `loanReads.ts`, the dashboard's servicing view): both read
 * the same fields, so a letter from either names the loan alike.
 */
export const LETTER_PARTIES_FIELDS = `id name date_funded
    borrows(order_by: [{created_at: asc}, {id: asc}]) { person { name } }
    address_details(order_by: [{id: asc}]) { address { street1 city state zipcode } }`;

type Json = Record<string, unknown>;
const textOf = (value: unknown): string => (value === null || value === undefined ? '' : String(value).replace(/\s+/g, ' ').trim());

/** The parties of a loan read with `LETTER_PARTIES_FIELDS` (a role that reads no borrower or address gets none). */
export function letterPartiesOf(loan: Json): LetterParties {
  const borrows = (loan.borrows ?? []) as { person: Json | null }[];
  const addresses = (loan.address_details ?? []) as { address: Json | null }[];
  return {
    loanId: textOf(loan.id),
    loanName: textOf(loan.name),
    dateFunded: loan.date_funded ? textOf(loan.date_funded) : null,
    borrowers: borrows.map((link) => textOf(link.person?.name)).filter((name) => name !== ''),
    propertyAddresses: addresses.map((link) => addressLine(link.address)).filter((line) => line !== ''),
  };
}

/** `street1, city, state zipcode`, leaving out what the address does not have. */
function addressLine(address: Json | null): string {
  if (!address) return '';
  const stateZip = [textOf(address.state), textOf(address.zipcode)].filter(Boolean).join(' ');
  return [textOf(address.street1), textOf(address.city), stateZip].filter(Boolean).join(', ');
}

/**
 * A payoff before the loan was funded is a 400 naming `name`: the loan owed nothing then, and a
 * letter for that day would quote a payoff no one can make (the dashboard's quote refuses it too).
 */
export function checkLetterDay(name: string, day: string | null, parties: LetterParties): void {
  if (day !== null && parties.dateFunded !== null && day < parties.dateFunded) {
    throw new UserInputError(`${name}: ${day} is before the loan was funded (${parties.dateFunded})`, 400, new Map([[name, `expected a day on or after ${parties.dateFunded}, when the loan was funded`]]));
  }
}

/**
 * The letter for the loan on `day` (default the business date); null when the loan has no
 * quote (no such loan, or no schedule — as the JSON route's 404). One statement, so the figures
 * and the listed fees are of one snapshot.
 */
export async function payoffLetter(db: Queryable, accountId: string, parties: LetterParties, day: string | null): Promise<PayoffLetter | null> {
  const { rows } = await db.query<{ body: string | null; lead: boolean }>(
    `WITH d AS (SELECT coalesce($3::date, loanql_business_date($1)) AS as_of),
          r AS MATERIALIZED (SELECT d.as_of, loanql_ledger($1, $2, d.as_of) AS l FROM d)
     SELECT json_build_object(
              'lender_name', a.name, 'lender_profile', ${profileJsonSql('a')}, 'currency', a.currency, 'issued_on', loanql_business_date($1)::text, 'good_through', r.as_of::text,
              'payoff', round((r.l).payoff, 2)::text,
              'principal_outstanding', round((r.l).principal_outstanding, 2)::text, 'interest_due', round((r.l).interest_due, 2)::text,
              'accrued_interest', round((r.l).accrued_interest, 2)::text, 'interest_paid_ahead', round((r.l).interest_paid_ahead, 2)::text,
              'fees_due', round((r.l).fees_due, 2)::text, 'credit_balance', round((r.l).credit_balance, 2)::text, 'per_diem', round((r.l).per_diem, 2)::text,
              'unpaid_fees', coalesce((
                 SELECT json_agg(json_build_object('kind', u.kind, 'row_number', u.row_number, 'date', u.date::text, 'description', f.description,
                                                   'unpaid', round(u.amount - u.paid - u.waived, 2)::text) ORDER BY u.position)
                   FROM unnest((r.l).fee_id, (r.l).fee_kind, (r.l).fee_row, (r.l).fee_date, (r.l).fee_amount, (r.l).fee_paid, (r.l).fee_waived)
                        WITH ORDINALITY AS u(id, kind, row_number, date, amount, paid, waived, position)
                   LEFT JOIN fees f ON f.account_id = l.account_id AND f.id = u.id
                  WHERE u.date <= r.as_of AND round(u.amount - u.paid - u.waived, 2) > 0), '[]'::json)
            )::text AS body,
            l.status = 'lead' AS lead
       FROM r JOIN loans l ON l.account_id = $1 AND l.id = $2 JOIN accounts a ON a.id = $1
      WHERE (r.l).principal_outstanding IS NOT NULL OR l.status = 'lead'`,
    [accountId, parties.loanId, day],
  );
  // A lead owes nothing: no letter (as no JSON quote: `LeadHasNoPayoff`).
  if (rows[0]?.lead) throw new LeadHasNoPayoff(parties.loanId);
  const body = rows[0]?.body;
  if (!body) return null;
  const read = JSON.parse(body) as Json & { unpaid_fees: Json[]; lender_profile: Json };
  const figure = (name: string) => String(read[name]);
  return {
    lenderName: String(read.lender_name),
    letterhead: letterheadOf(String(read.lender_name), read.lender_profile),
    paymentInstructions: paymentInstructionsOf(read.lender_profile),
    currency: String(read.currency),
    issuedOn: String(read.issued_on),
    goodThrough: String(read.good_through),
    loan: parties,
    figures: {
      principalOutstanding: figure('principal_outstanding'),
      interestDue: figure('interest_due'),
      accruedInterest: figure('accrued_interest'),
      interestPaidAhead: figure('interest_paid_ahead'),
      feesDue: figure('fees_due'),
      creditBalance: figure('credit_balance'),
      payoff: figure('payoff'),
      perDiem: figure('per_diem'),
    },
    unpaidFees: read.unpaid_fees.map((fee) => ({
      kind: fee.kind as UnpaidFee['kind'],
      rowNumber: typeof fee.row_number === 'number' ? fee.row_number : null,
      date: String(fee.date),
      description: typeof fee.description === 'string' && fee.description.trim() !== '' ? fee.description : null,
      unpaid: String(fee.unpaid),
    })),
  };
}

/** The letter's file name: `payoff-<loan id's first 8>-<good-through day>.pdf`. */
export function payoffLetterFileName(letter: PayoffLetter): string {
  return `payoff-${letter.loan.loanId.slice(0, 8)}-${letter.goodThrough}.pdf`;
}
