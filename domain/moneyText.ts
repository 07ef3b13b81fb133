/**
 * Money as people read it, in an account's currency: `84600.2` in USD → `$84,600.20`, in EUR →
 * `€84,600.20`, a negative amount `−$5.00` (or with `-` where the font has no minus sign: PDFs
 * made with the standard fonts). Two decimals; a value with more decimals keeps them all. The
 * digits go from text to text, never through a float. The dashboard's `cash` uses it; the payoff
 * letter's and investor statement's PDFs use `pdfMoneyText` (the code for a sign their fonts lack).
 */

const affixes = new Map<string, { readonly prefix: string; readonly suffix: string }>();

/** What is written before and after an amount in a currency (`$`, `€`, `CA$`, `CHF `), as English writes it. */
function currencyAffixes(currency: string): { readonly prefix: string; readonly suffix: string } {
  let known = affixes.get(currency);
  if (!known) {
    let parts: Intl.NumberFormatPart[];
    try {
      parts = new Intl.NumberFormat('en', { style: 'currency', currency }).formatToParts(1);
    } catch {
      parts = [{ type: 'integer', value: '1' }, { type: 'literal', value: ` ${currency}` }];
    }
    const first = parts.findIndex((part) => part.type === 'integer');
    const last = parts.length - 1 - [...parts].reverse().findIndex((part) => part.type === 'integer' || part.type === 'fraction');
    known = { prefix: parts.slice(0, first).map((part) => part.value).join(''), suffix: parts.slice(last + 1).map((part) => part.value).join('') };
    affixes.set(currency, known);
  }
  return known;
}

/** A decimal text with at least two decimals (`84600.2` → `84600.20`, `5` → `5.00`); anything else as given. */
function twoDecimals(digits: string): string {
  const match = /^(-?\d+)(?:\.(\d*))?$/.exec(digits);
  if (!match) return digits;
  return `${match[1]}.${(match[2] ?? '').padEnd(2, '0')}`;
}

/** A decimal text with its whole part grouped by thousands: `100000.00` → `100,000.00`. */
export function groupedDigits(digits: string): string {
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(digits);
  if (!match) return digits;
  return `${match[1]}${match[2]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${match[3] ?? ''}`;
}

/**
 * `amount` (a decimal text) in `currency`: `$84,600.20`; a negative one with `minus` before the
 * currency sign (default U+2212 `−`). A text that is not a decimal is returned as given.
 */
export function moneyText(amount: string, currency: string, minus = '−'): string {
  return withAffixes(amount, currencyAffixes(currency), minus);
}

/**
 * What the standard PDF fonts can print (Windows-1252: printable ASCII, Latin-1 and `€`, among
 * others): a currency sign outside it (`₹`, `₪`, `₱`) came out of a letter as another character
 * (`¹84,600.20`, `ª84,600.20`, `±84,600.20`).
 */
const STANDARD_FONT_TEXT = /^[\x20-\x7e\xa0-\xff€]*$/;

/**
 * `moneyText` for a PDF made with the standard fonts: `-` for the minus sign, and the currency's
 * code instead of a sign those fonts cannot print (`INR 84,600.20`, not `₹84,600.20`).
 */
export function pdfMoneyText(amount: string, currency: string): string {
  const affixes = currencyAffixes(currency);
  const printable = STANDARD_FONT_TEXT.test(affixes.prefix + affixes.suffix);
  return withAffixes(amount, printable ? affixes : { prefix: `${currency}\u00a0`, suffix: '' }, '-');
}

function withAffixes(amount: string, { prefix, suffix }: { readonly prefix: string; readonly suffix: string }, minus: string): string {
  if (!/^-?\d+(\.\d*)?$/.test(amount)) return amount;
  const digits = groupedDigits(twoDecimals(/^-[0.]+$/.test(amount) ? amount.slice(1) : amount));
  return digits.startsWith('-') ? `${minus}${prefix}${digits.slice(1)}${suffix}` : `${prefix}${digits}${suffix}`;
}
