/**
 * The lender's letterhead (session 38): an account's legal name, postal address, phone, e-mail and
 * the payment instructions its payoff letter gives (wire details). Before, an account had a name
 * and nothing else a letter needs: the payoff letter and the investor statement printed no address,
 * so a borrower's title company could not tell where to send the payoff.
 *
 * Columns of `accounts` (one row per lender; the tenant tables' `(account_id, id)` rule is not for
 * it), every one optional: null is "not given", and the letters then print what they printed
 * before (the account's name alone). `app/accountProfile.ts` checks a change with the same rules
 * and words before it writes (`PATCH /api/account`, the dashboard's Settings > Lender profile); these
 * CHECKs hold them for every other writer (a lender's own SQL):
 *
 * - not blank, no white space at either end (the API stores a value trimmed, and an empty one as
 *   null), and at most a length each: legal name and address lines 200, city, region and country
 *   100, postal code 20, phone 40, e-mail 254 (RFC 5321's path), payment instructions 2,000;
 * - the one-line fields hold no control character (a line break would move what follows it on the
 *   letter); the payment instructions may hold line breaks (`\n`, the API turns `\r\n` into it),
 *   no other control character;
 * - the e-mail is `something@domain.tld` with no white space; the phone digits, spaces and
 *   `+ ( ) - .` with at least one digit, optionally an extension (`x 12`, `ext. 12`).
 *
 * A NUL character cannot be stored in a text column at all; the API refuses it by name first.
 * No row is touched: every account starts with an empty profile.
 */
export const name = '0068_account_profile';

/** `x` is a stored one-line value: trimmed, not empty, no control character, at most `max` characters. */
function oneLine(column: string, max: number): string {
  return `CONSTRAINT accounts_${column} CHECK (${column} IS NULL OR (char_length(${column}) BETWEEN 1 AND ${max} AND ${column} = btrim(${column}) AND ${column} !~ '[\\x01-\\x1f\\x7f]'))`;
}

export const sql = /* sql */ `
ALTER TABLE accounts
  ADD COLUMN legal_name text ${oneLine('legal_name', 200)},
  ADD COLUMN address_line1 text ${oneLine('address_line1', 200)},
  ADD COLUMN address_line2 text ${oneLine('address_line2', 200)},
  ADD COLUMN city text ${oneLine('city', 100)},
  ADD COLUMN region text ${oneLine('region', 100)},
  ADD COLUMN postal_code text ${oneLine('postal_code', 20)},
  ADD COLUMN country text ${oneLine('country', 100)},
  ADD COLUMN phone text ${oneLine('phone', 40)},
  ADD COLUMN email text ${oneLine('email', 254)},
  ADD COLUMN payment_instructions text CONSTRAINT accounts_payment_instructions CHECK (
    payment_instructions IS NULL OR (char_length(payment_instructions) BETWEEN 1 AND 2000
      AND payment_instructions = btrim(payment_instructions, E' \\n') AND payment_instructions !~ '[\\x01-\\x09\\x0b-\\x1f\\x7f]')),
  ADD CONSTRAINT accounts_email_shape CHECK (email ~ '^[^[:space:]@]+@[^[:space:]@]+[.][^[:space:]@]+$'),
  ADD CONSTRAINT accounts_phone_shape CHECK (phone ~ '^[+]?[-0-9 ().]*[0-9][-0-9 ().]*( ?(x|ext[.]?) ?[0-9]{1,6})?$');
`;
