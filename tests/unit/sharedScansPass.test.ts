import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadMetadataFile, type Collection } from '../../metadata/index.js';
import type { AggregateSelection, BoolExp, OperationPlan, RootField, SelectAggregateField } from '../../engine/plan/ir.js';
import { groupedBy, MAX_SHARED_SCAN_AGGREGATES, sharedScans, sharedScanShape } from '../../engine/plan/passes/sharedScans.js';

/**
 * The shared-scan pass alone (engine/README.md, "Shared scans of root aggregates"): root
 * aggregates of one collection become one `SharedScan` and `sharedAggregate` fields in place.
 */
const metadata = loadMetadataFile(fileURLToPath(new URL('../../metadata/loanql.default.yaml', import.meta.url)));
const collection = (name: string): Collection => metadata.collections.get(name)!;
const loans = collection('loans');
const people = collection('people');
const status = loans.fields.get('status')!;
const amount = loans.fields.get('amount')!;

const byStatus = (value: string): BoolExp => ({ kind: 'compare', field: status, operator: '_eq', value: { kind: 'const', value } });
const COUNT: AggregateSelection = [{ kind: 'aggregate', alias: 'aggregate', fields: [{ kind: 'count', alias: 'count', columns: [], distinct: false }] }];
const aggregateOf = (alias: string, of: Collection, where: BoolExp | null, aggregate: AggregateSelection = COUNT, limit = false): SelectAggregateField => ({
  kind: 'selectAggregate',
  alias,
  collection: of,
  query: { where, distinctOn: [], orderBy: [], limit: limit ? { kind: 'const', value: 1 } : null, offset: null },
  aggregate,
});
const planOf = (...rootFields: RootField[]): OperationPlan => ({ rootFields, sharedScans: [] });

describe('Plan pass: shared scans of root aggregates', () => {
  it('groups root aggregates of one collection into one scan, in place and in order', () => {
    const lead = aggregateOf('lead', loans, byStatus('lead'));
    const closed = aggregateOf('closed', loans, byStatus('closed'));
    const persons = aggregateOf('people', people, null);
    const after = sharedScans(planOf(lead, { kind: 'typename', alias: '__typename', value: 'query_root' }, persons, closed));
    assert.equal(after.sharedScans.length, 1);
    assert.deepEqual(after.sharedScans[0], { collection: loans, members: [lead, closed], shape: 'grouped', groupBy: status });
    assert.deepEqual(
      after.rootFields.map((field) => field.kind),
      ['sharedAggregate', 'typename', 'selectAggregate', 'sharedAggregate'],
    );
    assert.deepEqual(after.rootFields[3], { kind: 'sharedAggregate', alias: 'closed', scan: 0, member: 1 });
  });

  it('leaves one aggregate, paged aggregates and too many aggregates alone', () => {
    const one = planOf(aggregateOf('a', loans, null), aggregateOf('b', loans, null, COUNT, true));
    assert.equal(sharedScans(one), one);
    const many = planOf(...Array.from({ length: MAX_SHARED_SCAN_AGGREGATES + 1 }, (_, i) => aggregateOf(`a${i}`, loans, null)));
    assert.equal(sharedScans(many), many);
  });

  it('reads flags when a member with a where makes more than one aggregate call', () => {
    const sumAndCount: AggregateSelection = [
      { kind: 'aggregate', alias: 'aggregate', fields: [{ kind: 'count', alias: 'count', columns: [], distinct: false }, { kind: 'function', alias: 'sum', fn: 'sum', items: [{ kind: 'column', alias: 'amount', field: amount }] }] },
    ];
    assert.equal(sharedScanShape([aggregateOf('a', loans, byStatus('lead'), sumAndCount), aggregateOf('b', loans, null)]), 'flags');
    assert.equal(sharedScanShape([aggregateOf('a', loans, null, sumAndCount), aggregateOf('b', loans, byStatus('lead'))]), 'direct');
  });

  it('groups by a column when every where is that column _eq a value or none, and every call combines across groups', () => {
    const call = (fn: 'sum' | 'avg' | 'min' | 'max', field = amount): AggregateSelection => [{ kind: 'aggregate', alias: 'aggregate', fields: [{ kind: 'function', alias: fn, fn, items: [{ kind: 'column', alias: field.name, field }] }] }];
    const rate = loans.fields.get('rate')!;
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead')), aggregateOf('b', loans, byStatus('closed')), aggregateOf('all', loans, null, call('sum'))]), status);
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead'), call('min', rate)), aggregateOf('b', loans, byStatus('closed'), call('max'))]), status);
    // One filtered member: nothing to save.
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead')), aggregateOf('all', loans, null)]), null);
    // avg does not combine across groups; nor another operator, nor another column.
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead'), call('avg')), aggregateOf('b', loans, byStatus('closed'))]), null);
    const other: BoolExp = { kind: 'compare', field: amount, operator: '_eq', value: { kind: 'const', value: 5 } };
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead')), aggregateOf('b', loans, other)]), null);
    const neq: BoolExp = { kind: 'compare', field: status, operator: '_neq', value: { kind: 'const', value: 'lead' } };
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead')), aggregateOf('b', loans, neq)]), null);
    // Not by a primary key column: a group a row.
    const id = loans.fields.get('id')!;
    const byId = (value: string): BoolExp => ({ kind: 'compare', field: id, operator: '_eq', value: { kind: 'const', value } });
    assert.ok(loans.primaryKey.includes(id));
    assert.equal(groupedBy([aggregateOf('a', loans, byId('x')), aggregateOf('b', loans, byId('y')), aggregateOf('all', loans, null)]), null);
    // A count of a column (it skips nulls: a group's count(*) would not) is not combined.
    const countColumn: AggregateSelection = [{ kind: 'aggregate', alias: 'aggregate', fields: [{ kind: 'count', alias: 'count', columns: [rate], distinct: false }] }];
    assert.equal(groupedBy([aggregateOf('a', loans, byStatus('lead'), countColumn), aggregateOf('b', loans, byStatus('closed'))]), null);
  });
});
