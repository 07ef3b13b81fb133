/**
 * A loan needs a name that is not blank (issue 28): lists and pages show a loan by its name, and a
 * nameless one was an empty row nobody could click. `app/loanInput.ts` refuses a blank name on
 * `POST`/`PATCH /api/loan` and the dashboard's forms with a 400 naming `Name`; this constraint
 * holds the rule for every other writer (GraphQL `insert_loans`/`update_loans`, the CLI, plain SQL),
 * whose refusal `engine/execute/writeErrors.ts` reports as a `check-violation` naming `name`.
 *
 * Loans already nameless are named `Loan <first 8 characters of the id>` first — the dashboard's
 * label for a loan without a name — so the constraint can be added to a database in use. The
 * rename is an ordinary update: where webhooks capture loan changes, it is a `loan.updated` event.
 * Blank means empty or only ASCII white space (what `btrim` with these characters removes).
 */
export const name = '0013_loan_name_not_blank';

export const sql = /* sql */ `
UPDATE loans SET name = 'Loan ' || left(id::text, 8) WHERE btrim(name, E' \\t\\n\\r\\f') = '';
ALTER TABLE loans ADD CONSTRAINT loans_name_not_blank CHECK (btrim(name, E' \\t\\n\\r\\f') <> '');
`;
