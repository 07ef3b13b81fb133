import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { assumeEmptyCatalogue, loadMetadataFile, type Collection, type Metadata } from '../../metadata/index.js';
import type { BoolExp, OperationPlan } from '../../engine/plan/ir.js';
import { foreignKeyShortcuts, shortenFilter } from '../../engine/plan/passes/foreignKeyShortcuts.js';

/**
 * The foreign-key shortcut pass alone (engine/README.md, "Filters through a foreign key"): IR in,
 * IR out, no database. `{loan: {funding_sources: {…}}}` on schedules becomes the inner
 * relationship from the schedule directly when `schedules.loan` is backed by a foreign key.
 */
const metadata = assumeEmptyCatalogue(loadMetadataFile(fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url))));
const collection = (name: string): Collection => metadata.collections.get(name)!;
const schedules = collection('schedules');
const loans = collection('loans');
const fundingSources = collection('funding_sources');
const loan = schedules.relationships.get('loan')!;
const fundedBy = loans.relationships.get('funding_sources')!;
const personId = fundingSources.fields.get('person_id')!;
const withKeys: Metadata = { ...metadata, foreignKeyRelationships: new Set([loan]) };

const byPerson: BoolExp = { kind: 'compare', field: personId, operator: '_eq', value: { kind: 'var', name: 'p', cast: 'value' } };
const throughLoan: BoolExp = { kind: 'relationship', relationship: loan, target: loans, where: { kind: 'relationship', relationship: fundedBy, target: fundingSources, where: byPerson } };

const listOfSchedules = (where: BoolExp): OperationPlan => ({
  rootFields: [{ kind: 'select', alias: 'schedules', collection: schedules, query: { where, distinctOn: [], orderBy: [], limit: null, offset: null }, selection: [] }],
  sharedScans: [],
});

describe('Plan pass: foreign-key shortcuts', () => {
  it('rewrites a filter through an object relationship backed by a foreign key onto the inner relationship', () => {
    const shortened = shortenFilter(throughLoan, withKeys.foreignKeyRelationships);
    assert.equal(shortened.kind, 'relationship');
    if (shortened.kind !== 'relationship') return;
    assert.equal(shortened.target, fundingSources);
    assert.equal(shortened.relationship.name, 'loan.funding_sources');
    assert.equal(shortened.relationship.kind, 'array');
    // funding_sources.loan_id = schedules.loan_id: the loan's id is what the schedule's loan_id holds.
    assert.deepEqual(shortened.relationship.mapping, [[loan.mapping[0]![0], fundedBy.mapping[0]![1]]]);
    assert.equal(shortened.where, byPerson);
  });

  it('keeps the filter when the relationship has no foreign key, or the inner filter is not one relationship', () => {
    assert.deepEqual(shortenFilter(throughLoan, new Set()), throughLoan);
    const wrapped: BoolExp = { ...throughLoan, where: { kind: 'and', items: [(throughLoan as Extract<BoolExp, { kind: 'relationship' }>).where] } };
    assert.deepEqual(shortenFilter(wrapped, withKeys.foreignKeyRelationships), wrapped);
  });

  it('rewrites every where of a plan and leaves the input plan as it was', () => {
    const plan = listOfSchedules({ kind: 'not', item: throughLoan });
    const before = JSON.stringify(plan);
    const after = foreignKeyShortcuts(plan, withKeys);
    assert.equal(JSON.stringify(plan), before);
    const field = after.rootFields[0]!;
    assert.ok(field.kind === 'select' && field.query.where?.kind === 'not' && field.query.where.item.kind === 'relationship');
    assert.equal(field.query.where.item.relationship.name, 'loan.funding_sources');
    assert.deepEqual(foreignKeyShortcuts(plan, { ...metadata, foreignKeyRelationships: new Set() }), plan);
  });
});
