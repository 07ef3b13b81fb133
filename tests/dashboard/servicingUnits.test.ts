import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBody, loanFormFields, updateBody } from '../../dashboard/loanForm.js';
import { containsPattern } from '../../dashboard/routes/loanRoutes.js';
import { plainAmount } from '../../dashboard/moneyInput.js';
import { ruleForCustomField, type Product } from '../../app/products.js';

const product: Product = {
  id: null,
  customFields: [
    { name: 'Loan Officer', key: 'loan_officer', type: 'text', rule: ruleForCustomField('text'), position: 1 },
    { name: 'Escrow', key: 'escrow', type: 'boolean', rule: ruleForCustomField('boolean'), position: 2, required: true },
    { name: 'Origination Fee', key: 'origination_fee', type: 'currency', rule: ruleForCustomField('currency'), position: 3 },
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

  it('create: sends every non-empty input, integers and booleans typed, amounts as plain decimals, other text as typed (the rules check it)', () => {
    const fields = loanFormFields(product, 'create');
    const body = createBody(fields, new Map([['Name', 'Elm'], ['Amount', ' 1,000 '], ['Regular_Payment', '8,884.88'], ['Origination_Fee', '2,500'], ['Term', '12'], ['Rate', ''], ['Escrow', 'true'], ['Borrower_Name', 'Ada'], ['__proto__', 'x'], ['Unknown', 'y']]));
    assert.deepEqual(body, { Name: 'Elm', Amount: '1000', Regular_Payment: '8884.88', Origination_Fee: '2500', Term: 12, Escrow: true, Borrower_Name: 'Ada' });
    assert.deepEqual(createBody(fields, new Map([['Term', 'twelve'], ['Escrow', 'maybe'], ['Amount', '1,25.00'], ['Rate', '1,000']])), { Term: 'twelve', Escrow: 'maybe', Amount: '1,25.00', Rate: '1,000' }, 'an ambiguous amount, and a rate (not money), as typed');
  });

  it('reads an amount with thousands separators, refuses an ambiguous one (moneyInput.ts)', () => {
    for (const [typed, plain] of [['1,250.00', '1250.00'], [' 1250.00 ', '1250.00'], ['12,500,000', '12500000'], ['-1,250.5', '-1250.5'], ['999', '999'], ['0.50', '0.50']] as const) assert.equal(plainAmount(typed), plain, typed);
    for (const typed of ['1,25.00', '1.250,00', '12,50', '1,2500', ',250', '1,250.', '01,250', '1 250', '$1,250', '1,250,00', '', '.5']) assert.equal(plainAmount(typed), null, typed);
  });

  it('edit: sends only what differs from the form as shown, an emptied input as null', () => {
    const fields = loanFormFields(product, 'update');
    const shown = new Map([['Name', 'Elm'], ['Regular_Payment', '8884.88'], ['Date_Maturity', '2027-01-15'], ['Loan_Officer', 'Kim']]);
    assert.deepEqual(updateBody(fields, new Map(shown), shown), {});
    assert.deepEqual(updateBody(fields, new Map([...shown, ['Name', 'Oak'], ['Loan_Officer', ''], ['Regular_Payment', '8884.88 ']]), shown), { Name: 'Oak', Loan_Officer: null });
    assert.deepEqual(updateBody(fields, new Map([...shown, ['Regular_Payment', '8,884.88']]), shown), {}, 'the same amount with its thousands separated is no change');
  });

  it('search text is matched literally inside _ilike', () => {
    assert.equal(containsPattern('50%_a\\b'), '%50\\%\\_a\\\\b%');
  });
});
