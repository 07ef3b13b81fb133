/**
 * How every money input of the dashboard's forms is read (the payment and payoff forms, the
 * loan form's amounts, the money settings): a clerk may type thousands separated by commas, as
 * the pages show amounts (`1,250.00`), and the API, the engine and the database get the plain
 * decimal (`1250.00`).
 */

/**
 * Grouped: a first group of one to three digits not starting with 0, then groups of exactly three
 * after each comma. Plain: digits only. Either with an optional sign and a point before the decimals.
 */
const AMOUNT_AS_TYPED = /^(-?)([1-9]\d{0,2}(?:,\d{3})+|\d+)(\.\d+)?$/;

/**
 * The plain decimal of an amount typed into a form, or null when it is not plainly one. Commas
 * are thousands separators only where they fall every three digits before the point: `1,250.00`,
 * `12,500,000`, `-1,250.5` are read (`1250.00`, `12500000`, `-1250.5`), and so is `1250.00`
 * itself. Anything that could mean two amounts is refused rather than guessed — a comma
 * elsewhere (`1,25.00`, `12,50`: a decimal comma?), a point between thousands (`1.250,00`), a
 * space, a currency sign, a leading zero before a comma. Decimals and range are each field's
 * own rule, checked after.
 */
export function plainAmount(typed: string): string | null {
  const match = AMOUNT_AS_TYPED.exec(typed.trim());
  if (!match) return null;
  return `${match[1]}${match[2]!.replace(/,/g, '')}${match[3] ?? ''}`;
}

/** How a money field's message says what it takes. */
export const AMOUNT_EXAMPLE = 'e.g. 1250.00 or 1,250.00';
