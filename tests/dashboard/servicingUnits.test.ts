import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBody, loanFormFields, updateBody } from '../../dashboard/loanForm.js';
import { containsPattern } from '../../dashboard/routes/loanRoutes.js';
import { ruleForCustomField, type Product } from '../../app/products.js';

const product: Product = {
  id: null,
  customFields: [
    { name: 'Loan Officer', key: 'loan_officer', type: 'text', rule: ruleForCustomField('text'), position: 1 },
    { name: 'Escrow', key: 'escrow', type: 'boolean', rule: ruleForCustomField('boolean'), position: 2, required: true },
  ],
};

describe('Dashboard: the loan form as a REST body', () => {
  it('lists the built-in fields, then the product’s, then (on create only) the contacts', () => {
    const create = loanFormFields(product, 'create').map((field) => field.name);
    assert.deepEqual(create.slice(0, 3), ['Name', 'Amount', 'Status']);
    assert.ok(create.includes('Loan_Officer') && create.includes('Escrow') && create.includes('Borrower_Email') && create.includes('Guarantor_Company'));
    assert.ok(!loanFormFields(product, 'update').some((field) => field.name.startsWith('Borrower_')));
    assert.equal(loanFormFields(product, 'create').find((field) => field.name === 'Escrow')!.required, true);
  });

  it('create: sends every non-empty input, integers and booleans typed, other text as typed (the rules check it)', () => {
    const fields = loanFormFields(product, 'create');
    const body = createBody(fields, new Map([['Name', 'Elm'], ['Amount', ' 1,000 '], ['Term', '12'], ['Rate', ''], ['Escrow', 'true'], ['Borrower_Name', 'Ada'], ['__proto__', 'x'], ['Unknown', 'y']]));
    assert.deepEqual(body, { Name: 'Elm', Amount: '1,000', Term: 12, Escrow: true, Borrower_Name: 'Ada' });
    assert.deepEqual(createBody(fields, new Map([['Term', 'twelve'], ['Escrow', 'maybe']])), { Term: 'twelve', Escrow: 'maybe' });
  });

  it('edit: sends only what differs from the form as shown, an emptied input as null', () => {
    const fields = loanFormFields(product, 'update');
    const shown = new Map([['Name', 'Elm'], ['Regular_Payment', '8884.88'], ['Date_Maturity', '2027-01-15'], ['Loan_Officer', 'Kim']]);
    assert.deepEqual(updateBody(fields, new Map(shown), shown), {});
    assert.deepEqual(updateBody(fields, new Map([...shown, ['Name', 'Oak'], ['Loan_Officer', ''], ['Regular_Payment', '8884.88 ']]), shown), { Name: 'Oak', Loan_Officer: null });
  });

  it('search text is matched literally inside _ilike', () => {
    assert.equal(containsPattern('50%_a\\b'), '%50\\%\\_a\\\\b%');
  });
});
