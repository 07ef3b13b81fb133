/**
 * The account's currency (issue 28): every amount the dashboard shows carries it (`$84,600.20`,
 * `€1,200.00`), where it used to show bare digits. An ISO 4217 code; `USD` for the accounts that
 * exist. `app/accounts.ts` checks the code against the ones this Node knows before it is written
 * (`loanql account create --currency`, `loanql account set --currency`); this CHECK holds the shape
 * for every other writer. The amounts themselves stay numbers without a currency: an account
 * lends in one currency.
 */
export const name = '0020_account_currency';

export const sql = /* sql */ `
ALTER TABLE accounts ADD COLUMN currency text NOT NULL DEFAULT 'USD' CONSTRAINT accounts_currency CHECK (currency ~ '^[A-Z]{3}$');
`;
