import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { dataOf, exactDataOf, JsonNumber, num, parseExact, startSeededService, type SeededService } from '../support/seededService.js';

/**
 * interface.md §4.4 and SPEC §5 over HTTP: every element of the query-language table and every
 * "useful pattern", sent as `POST /api/graph` with an API key, on a seeded portfolio. Every
 * data assertion is checked against hand-written SQL over the same tables; numbers are read
 * with their exact digits (`parseExact`).
 */
let s: SeededService;
let accountId: string;
/** A loan inserted besides the seed, whose amount has a significant trailing zero. */
let exactLoanId: string;

before(async () => {
  s = await startSeededService();
  accountId = s.account.id;
  const [row] = await s.sql<{ id: string }>(
    `INSERT INTO loans (account_id, name, amount, status, rate, term, frequency)
     VALUES ($1, 'Exact Digits Loan', 100000.50, 'lead', 7.1250, 12, 'monthly') RETURNING id`,
    [accountId],
  );
  exactLoanId = row!.id;
});

after(async () => {
  await s?.close();
});

/** The data of a query, numbers exact. */
async function query(text: string, variables?: Record<string, unknown>): Promise<any> {
  return exactDataOf(await s.graph(text, variables));
}

/** The one JSON value (`j`) a hand-written SQL query builds, numbers exact. `$1` is the account. */
async function sqlJson(text: string, values: readonly unknown[] = []): Promise<any> {
  const rows = await s.sql<{ j: string }>(`SELECT (${text})::text AS j`, [accountId, ...values]);
  return parseExact(rows[0]!.j);
}

/** Ids from hand-written SQL (`$1` is the account), in the SQL's order. */
async function sqlIds(text: string, values: readonly unknown[] = []): Promise<string[]> {
  return (await s.sql<{ id: string }>(text, [accountId, ...values])).map((row) => row.id);
}

async function sqlCount(text: string, values: readonly unknown[] = []): Promise<number> {
  const rows = await s.sql<{ count: string }>(text, [accountId, ...values]);
  return Number(rows[0]!.count);
}

const idsOf = (rows: readonly { id: string }[]): string[] => rows.map((row) => row.id);

describe('POST /api/graph with an API key (interface §4.4)', () => {
  describe('collection selection', () => {
    it('returns every loan of the account with its fields exactly as the database holds them, ordered by primary key', async () => {
      const data = await query(`{ loans { id name amount status rate term frequency regular_payment date_maturity created_at } }`);
      const expected = await sqlJson(
        `SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'amount', amount, 'status', status, 'rate', rate, 'term', term,
           'frequency', frequency, 'regular_payment', regular_payment, 'date_maturity', date_maturity, 'created_at', created_at) ORDER BY id), '[]')
         FROM loans WHERE account_id = $1`,
      );
      assert.equal(data.loans.length, s.summary.loans + 1);
      assert.deepEqual(data.loans, expected);
    });

    it('selects related lists as nested members (borrows → person, address_details → address, payments)', async () => {
      const data = await query(`{ loans { id borrows { person { id name } } address_details { address { id city } } payments { id amount } } }`);
      const expected = await sqlJson(
        `SELECT json_agg(json_build_object(
            'id', l.id,
            'borrows', (SELECT coalesce(json_agg(json_build_object('person', json_build_object('id', p.id, 'name', p.name)) ORDER BY b.id), '[]')
                          FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
                         WHERE b.account_id = l.account_id AND b.loan_id = l.id),
            'address_details', (SELECT coalesce(json_agg(json_build_object('address', json_build_object('id', a.id, 'city', a.city)) ORDER BY d.id), '[]')
                          FROM address_details d JOIN addresses a ON a.account_id = d.account_id AND a.id = d.address_id
                         WHERE d.account_id = l.account_id AND d.loan_id = l.id),
            'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'amount', p.amount) ORDER BY p.id), '[]')
                          FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id)
          ) ORDER BY l.id)
         FROM loans l WHERE l.account_id = $1`,
      );
      assert.deepEqual(data.loans, expected);
      assert.ok(data.loans.some((loan: any) => loan.borrows.length > 1), 'some loan has several borrowers');
      assert.ok(data.loans.some((loan: any) => loan.payments.length > 10), 'some loan has many payments');
    });

    it('selects object relationships as nested objects (funding_sources → loan, person; comments → admin)', async () => {
      const data = await query(`{ funding_sources { id class rate loan { id name status } person { name } } comments(limit: 20) { text admin { name } } }`);
      const expected = await sqlJson(
        `SELECT json_agg(json_build_object('id', f.id, 'class', f.class, 'rate', f.rate,
            'loan', json_build_object('id', l.id, 'name', l.name, 'status', l.status), 'person', json_build_object('name', p.name)) ORDER BY f.id)
           FROM funding_sources f
           JOIN loans l ON l.account_id = f.account_id AND l.id = f.loan_id
           JOIN people p ON p.account_id = f.account_id AND p.id = f.person_id
          WHERE f.account_id = $1`,
      );
      assert.deepEqual(data.funding_sources, expected);
      assert.equal(data.comments.length, 20);
      for (const comment of data.comments) assert.deepEqual(comment.admin, { name: 'Avery Admin' });
    });

    it('selects the documents of a loan through loan_documents { document }', async () => {
      const data = await query(`{ loans { id loan_documents { document { id name status type uploaded_date } } } }`);
      const expected = await sqlJson(
        `SELECT json_agg(json_build_object('id', l.id, 'loan_documents',
            (SELECT coalesce(json_agg(json_build_object('document', json_build_object('id', d.id, 'name', d.name, 'status', d.status, 'type', d.type,
               'uploaded_date', d.uploaded_date)) ORDER BY ld.id), '[]')
               FROM loan_documents ld JOIN documents d ON d.account_id = ld.account_id AND d.id = ld.document_id
              WHERE ld.account_id = l.account_id AND ld.loan_id = l.id)) ORDER BY l.id)
           FROM loans l WHERE l.account_id = $1`,
      );
      assert.deepEqual(data.loans, expected);
    });
  });

  describe('primary-key lookup <collection>_by_pk', () => {
    it('finds a loan by `$id: uuid!`', async () => {
      const [id] = await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY amount DESC, id LIMIT 1`);
      const data = await query(`query Loan($id: uuid!) { loans_by_pk(id: $id) { id name amount status } }`, { id });
      const expected = await sqlJson(`SELECT json_build_object('id', id, 'name', name, 'amount', amount, 'status', status) FROM loans WHERE account_id = $1 AND id = $2`, [id]);
      assert.deepEqual(data.loans_by_pk, expected);
    });

    it('finds records of other collections the same way (payments_by_pk, people_by_pk)', async () => {
      const [paymentId] = await sqlIds(`SELECT id FROM payments WHERE account_id = $1 ORDER BY amount DESC, id LIMIT 1`);
      const [personId] = await sqlIds(`SELECT id FROM people WHERE account_id = $1 ORDER BY name DESC, id LIMIT 1`);
      const data = await query(`query($p: uuid!, $q: uuid!) { payments_by_pk(id: $p) { id amount loan_id } people_by_pk(id: $q) { id name email } }`, {
        p: paymentId,
        q: personId,
      });
      assert.deepEqual(data.payments_by_pk, await sqlJson(`SELECT json_build_object('id', id, 'amount', amount, 'loan_id', loan_id) FROM payments WHERE account_id = $1 AND id = $2`, [paymentId]));
      assert.deepEqual(data.people_by_pk, await sqlJson(`SELECT json_build_object('id', id, 'name', name, 'email', email) FROM people WHERE account_id = $1 AND id = $2`, [personId]));
    });

    it('gives null for an id that does not exist', async () => {
      const data = await query(`query($id: uuid!) { loans_by_pk(id: $id) { id } }`, { id: '00000000-0000-4000-8000-000000000000' });
      assert.deepEqual(data, { loans_by_pk: null });
    });
  });

  describe('filters: where', () => {
    it('combines several fields in one object with AND', async () => {
      const data = await query(`{ loans(where: {status: {_eq: "servicing"}, frequency: {_eq: "monthly"}, amount: {_gte: 500000}}) { id } }`);
      const expected = await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' AND frequency = 'monthly' AND amount >= 500000 ORDER BY id`);
      const eachAlone = await sqlCount(`SELECT count(*) FROM loans WHERE account_id = $1 AND amount >= 500000`);
      assert.ok(expected.length > 0 && expected.length < eachAlone, 'the AND is narrower than one of its parts');
      assert.deepEqual(idsOf(data.loans), expected);
    });

    /** A threshold that is an existing amount, so `_gt` and `_gte` differ. */
    let threshold = '';
    before(async () => {
      threshold = (await s.sql<{ amount: string }>(`SELECT amount FROM loans WHERE account_id = $1 ORDER BY amount, id OFFSET 100 LIMIT 1`, [accountId]))[0]!.amount;
    });

    interface OperatorCase {
      readonly name: string;
      readonly collection: string;
      readonly table: string;
      /** The GraphQL where argument (literal text). */
      where(): string;
      /** The SQL predicate it must mean. */
      predicate(): string;
    }
    const operatorCases: readonly OperatorCase[] = [
      { name: '_eq', collection: 'loans', table: 'loans', where: () => `{status: {_eq: "closed"}}`, predicate: () => `status = 'closed'` },
      { name: '_neq', collection: 'loans', table: 'loans', where: () => `{status: {_neq: "closed"}}`, predicate: () => `status <> 'closed'` },
      { name: '_gt', collection: 'loans', table: 'loans', where: () => `{amount: {_gt: ${threshold}}}`, predicate: () => `amount > ${threshold}` },
      { name: '_gte', collection: 'loans', table: 'loans', where: () => `{amount: {_gte: ${threshold}}}`, predicate: () => `amount >= ${threshold}` },
      { name: '_lt', collection: 'loans', table: 'loans', where: () => `{amount: {_lt: "${threshold}"}}`, predicate: () => `amount < ${threshold}` },
      { name: '_lte', collection: 'loans', table: 'loans', where: () => `{amount: {_lte: "${threshold}"}}`, predicate: () => `amount <= ${threshold}` },
      { name: '_ilike (case-insensitive, % wildcard)', collection: 'people', table: 'people', where: () => `{name: {_ilike: "%SMI%"}}`, predicate: () => `name ILIKE '%smi%'` },
      { name: '_like (case-sensitive)', collection: 'people', table: 'people', where: () => `{name: {_like: "% Smith"}}`, predicate: () => `name LIKE '% Smith'` },
      { name: '_nlike', collection: 'people', table: 'people', where: () => `{name: {_nlike: "%Smith%"}}`, predicate: () => `name NOT LIKE '%Smith%'` },
      { name: '_nilike', collection: 'people', table: 'people', where: () => `{name: {_nilike: "%SMITH%"}}`, predicate: () => `name NOT ILIKE '%smith%'` },
      { name: '_is_null: true', collection: 'payments', table: 'payments', where: () => `{date_reversed: {_is_null: true}}`, predicate: () => `date_reversed IS NULL` },
      { name: '_is_null: false', collection: 'payments', table: 'payments', where: () => `{date_reversed: {_is_null: false}}`, predicate: () => `date_reversed IS NOT NULL` },
      { name: '_in', collection: 'loans', table: 'loans', where: () => `{frequency: {_in: ["weekly", "quarterly"]}}`, predicate: () => `frequency IN ('weekly', 'quarterly')` },
      { name: '_nin', collection: 'loans', table: 'loans', where: () => `{frequency: {_nin: ["monthly", "weekly"]}}`, predicate: () => `frequency NOT IN ('monthly', 'weekly')` },
      {
        name: '_and',
        collection: 'loans',
        table: 'loans',
        where: () => `{_and: [{status: {_eq: "servicing"}}, {rate: {_gte: 10}}]}`,
        predicate: () => `status = 'servicing' AND rate >= 10`,
      },
      {
        name: '_or',
        collection: 'loans',
        table: 'loans',
        where: () => `{_or: [{status: {_eq: "lead"}}, {amount: {_gt: 1500000}}]}`,
        predicate: () => `(status = 'lead' OR amount > 1500000)`,
      },
      { name: '_not', collection: 'loans', table: 'loans', where: () => `{_not: {status: {_eq: "servicing"}}}`, predicate: () => `NOT (status = 'servicing')` },
      { name: 'a date comparison', collection: 'loans', table: 'loans', where: () => `{date_maturity: {_lte: "2027-01-01"}}`, predicate: () => `date_maturity <= '2027-01-01'` },
      {
        name: 'a timestamptz comparison',
        collection: 'loans',
        table: 'loans',
        where: () => `{created_at: {_gt: "2025-01-01T00:00:00Z"}}`,
        predicate: () => `created_at > '2025-01-01T00:00:00Z'`,
      },
      { name: 'a boolean comparison', collection: 'people', table: 'people', where: () => `{is_investor: {_eq: true}}`, predicate: () => `is_investor` },
      { name: 'an integer comparison', collection: 'schedules', table: 'schedules', where: () => `{number: {_eq: 1}}`, predicate: () => `number = 1` },
      {
        name: 'a product custom field (loan_officer)',
        collection: 'loans',
        table: 'loans',
        where: () => `{loan_officer: {_is_null: false}}`,
        predicate: () => `custom_fields ? 'loan_officer'`,
      },
      {
        name: 'a relationship: loans whose borrower is called like %smi%',
        collection: 'loans',
        table: 'loans',
        where: () => `{borrows: {person: {name: {_ilike: "%smi%"}}}}`,
        predicate: () =>
          `EXISTS (SELECT 1 FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
                    WHERE b.account_id = loans.account_id AND b.loan_id = loans.id AND p.name ILIKE '%smi%')`,
      },
      {
        name: 'an object relationship: payments of closed loans',
        collection: 'payments',
        table: 'payments',
        where: () => `{loan: {status: {_eq: "closed"}}}`,
        predicate: () => `EXISTS (SELECT 1 FROM loans l WHERE l.account_id = payments.account_id AND l.id = payments.loan_id AND l.status = 'closed')`,
      },
      {
        name: 'an array relationship with an aggregate-like condition: loans with a reversed payment',
        collection: 'loans',
        table: 'loans',
        where: () => `{payments: {date_reversed: {_is_null: false}}}`,
        predicate: () => `EXISTS (SELECT 1 FROM payments p WHERE p.account_id = loans.account_id AND p.loan_id = loans.id AND p.date_reversed IS NOT NULL)`,
      },
    ];

    for (const operator of operatorCases) {
      it(`filters with ${operator.name} exactly as PostgreSQL does`, async () => {
        const data = await query(`{ ${operator.collection}(where: ${operator.where()}) { id } }`);
        const expected = await sqlIds(`SELECT id FROM ${operator.table} WHERE account_id = $1 AND ${operator.predicate()} ORDER BY id`);
        const total = await sqlCount(`SELECT count(*) FROM ${operator.table} WHERE account_id = $1`);
        assert.ok(expected.length > 0 && expected.length < total, `the case must select some rows but not all (${expected.length} of ${total})`);
        assert.deepEqual(idsOf(data[operator.collection]), expected);
      });
    }

    it('_gt and _gte differ exactly by the rows equal to the value', async () => {
      const data = await query(`{ gt: loans_aggregate(where: {amount: {_gt: ${threshold}}}) { aggregate { count } } gte: loans_aggregate(where: {amount: {_gte: ${threshold}}}) { aggregate { count } } }`);
      const equal = await sqlCount(`SELECT count(*) FROM loans WHERE account_id = $1 AND amount = $2`, [threshold]);
      assert.ok(equal > 0);
      assert.equal(Number(data.gte.aggregate.count.text) - Number(data.gt.aggregate.count.text), equal);
    });

    it('never matches a null field with _neq or _nin (SPEC §5: PostgreSQL semantics)', async () => {
      const data = await query(`{ a: people(where: {email: {_neq: "nobody@example.com"}}) { id } b: people(where: {email: {_nin: ["nobody@example.com"]}}) { id } }`);
      const withEmail = await sqlIds(`SELECT id FROM people WHERE account_id = $1 AND email IS NOT NULL ORDER BY id`);
      const total = await sqlCount(`SELECT count(*) FROM people WHERE account_id = $1`);
      assert.ok(withEmail.length < total, 'some people have no e-mail');
      assert.deepEqual(idsOf(data.a), withEmail);
      assert.deepEqual(idsOf(data.b), withEmail);
    });
  });

  describe('sorting: order_by', () => {
    const cases: readonly (readonly [string, string, string])[] = [
      ['{amount: asc}', 'amount ASC', 'ascending'],
      ['{amount: desc}', 'amount DESC', 'descending'],
      ['{regular_payment: asc}', 'regular_payment ASC NULLS LAST', 'ascending with nulls last (asc)'],
      ['{regular_payment: desc}', 'regular_payment DESC NULLS FIRST', 'descending with nulls first (desc)'],
      ['{regular_payment: asc_nulls_first}', 'regular_payment ASC NULLS FIRST', 'asc_nulls_first'],
      ['{regular_payment: asc_nulls_last}', 'regular_payment ASC NULLS LAST', 'asc_nulls_last'],
      ['{regular_payment: desc_nulls_first}', 'regular_payment DESC NULLS FIRST', 'desc_nulls_first'],
      ['{regular_payment: desc_nulls_last}', 'regular_payment DESC NULLS LAST', 'desc_nulls_last'],
      ['[{status: asc}, {amount: desc}]', 'status ASC, amount DESC', 'a list of several keys'],
      ['{status: desc}', 'status DESC', 'a key with many ties, broken by primary key ascending'],
      ['{name: asc}', 'name ASC', 'text'],
      ['{date_maturity: desc_nulls_last}', 'date_maturity DESC NULLS LAST', 'a date'],
    ];
    for (const [orderBy, sql, what] of cases) {
      it(`sorts loans ${what}: order_by: ${orderBy}`, async () => {
        const data = await query(`{ loans(order_by: ${orderBy}) { id } }`);
        assert.deepEqual(idsOf(data.loans), await sqlIds(`SELECT id FROM loans WHERE account_id = $1 ORDER BY ${sql}, id`));
      });
    }

    it('has null regular payments to sort (leads), so the nulls cases can fail', async () => {
      assert.ok((await sqlCount(`SELECT count(*) FROM loans WHERE account_id = $1 AND regular_payment IS NULL`)) > 1);
    });

    it('sorts by a field of an object relationship (payments by their loan’s amount)', async () => {
      const data = await query(`{ payments(order_by: [{loan: {amount: desc}}, {date: asc}]) { id } }`);
      const expected = await sqlIds(
        `SELECT p.id FROM payments p JOIN loans l ON l.account_id = p.account_id AND l.id = p.loan_id
          WHERE p.account_id = $1 ORDER BY l.amount DESC, p.date ASC, p.id`,
      );
      assert.deepEqual(idsOf(data.payments), expected);
    });

    it('sorts by a field two object relationships away (borrows by person name, then by loan name)', async () => {
      const data = await query(`{ borrows(order_by: [{person: {name: asc}}, {loan: {name: desc}}]) { id } }`);
      const expected = await sqlIds(
        `SELECT b.id FROM borrows b
           JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id
           JOIN loans l ON l.account_id = b.account_id AND l.id = b.loan_id
          WHERE b.account_id = $1 ORDER BY p.name, l.name DESC, b.id`,
      );
      assert.deepEqual(idsOf(data.borrows), expected);
    });

    it('sorts rows without the related object like nulls (tasks without a loan last, asc)', async () => {
      const data = await query(`{ tasks(order_by: {loan: {name: asc}}) { id loan { name } } }`);
      const expected = await sqlIds(
        `SELECT t.id FROM tasks t LEFT JOIN loans l ON l.account_id = t.account_id AND l.id = t.loan_id
          WHERE t.account_id = $1 ORDER BY l.name ASC NULLS LAST, t.id`,
      );
      assert.deepEqual(idsOf(data.tasks), expected);
      assert.ok(data.tasks.at(-1).loan === null, 'some task has no loan, and it comes last');
    });

    it('gives the same order on every request (ties broken by primary key)', async () => {
      const text = `{ payments(order_by: {method: asc}) { id } }`;
      const first = await query(text);
      const second = await query(text);
      assert.deepEqual(first, second);
      assert.deepEqual(idsOf(first.payments), await sqlIds(`SELECT id FROM payments WHERE account_id = $1 ORDER BY method, id`));
    });
  });

  describe('paging: limit and offset', () => {
    it('page N of size S is offset (N-1)*S: pages do not overlap and together are the whole ordered list', async () => {
      const all = idsOf((await query(`{ loans(order_by: {amount: desc}) { id } }`)).loans);
      assert.deepEqual(all, await sqlIds(`SELECT id FROM loans WHERE account_id = $1 ORDER BY amount DESC, id`));
      const size = 7;
      const pages: string[][] = [];
      for (let page = 1; ; page++) {
        const data = await query(`query($limit: Int!, $offset: Int!) { loans(order_by: {amount: desc}, limit: $limit, offset: $offset) { id } }`, {
          limit: size,
          offset: (page - 1) * size,
        });
        if (!data.loans.length) break;
        assert.ok(data.loans.length <= size);
        pages.push(idsOf(data.loans));
      }
      assert.equal(pages.length, Math.ceil(all.length / size));
      pages.forEach((page, index) => assert.deepEqual(page, all.slice(index * size, (index + 1) * size), `page ${index + 1}`));
      assert.equal(new Set(pages.flat()).size, all.length, 'no id on two pages');
    });

    it('pages with literal limit and offset too, and without order_by in primary-key order', async () => {
      const data = await query(`{ loans(limit: 5, offset: 10) { id } }`);
      assert.deepEqual(idsOf(data.loans), await sqlIds(`SELECT id FROM loans WHERE account_id = $1 ORDER BY id LIMIT 5 OFFSET 10`));
    });

    it('returns an empty list for limit 0 and for an offset past the end', async () => {
      const data = await query(`{ a: loans(limit: 0) { id } b: loans(offset: 100000) { id } }`);
      assert.deepEqual(data, { a: [], b: [] });
    });
  });

  describe('aggregates: <collection>_aggregate', () => {
    it('returns count as an integer and sum, avg, min, max as objects keyed by field, with PostgreSQL’s digits', async () => {
      const answer = await s.graph(`{ loans_aggregate { aggregate { count sum { amount } avg { amount rate } min { rate amount } max { rate amount } } } }`);
      const data = exactDataOf(answer);
      const expected = await sqlJson(
        `SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)),
           'avg', json_build_object('amount', avg(amount), 'rate', avg(rate)),
           'min', json_build_object('rate', min(rate), 'amount', min(amount)),
           'max', json_build_object('rate', max(rate), 'amount', max(amount)))
           FROM loans WHERE account_id = $1`,
      );
      assert.deepEqual(data.loans_aggregate.aggregate, expected);
      const plain = dataOf(answer);
      assert.equal(typeof plain.loans_aggregate.aggregate.count, 'number');
      assert.ok(Number.isInteger(plain.loans_aggregate.aggregate.count));
      assert.equal(typeof plain.loans_aggregate.aggregate.sum.amount, 'number');
    });

    it('applies where before aggregating', async () => {
      const data = await query(`{ payments_aggregate(where: {date_reversed: {_is_null: true}, type: {_eq: "regular"}}) { aggregate { count sum { amount } avg { amount } } } }`);
      const expected = await sqlJson(
        `SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)), 'avg', json_build_object('amount', avg(amount)))
           FROM payments WHERE account_id = $1 AND date_reversed IS NULL AND type = 'regular'`,
      );
      assert.deepEqual(data.payments_aggregate.aggregate, expected);
    });

    it('takes min and max over dates and text too', async () => {
      const data = await query(`{ loans_aggregate { aggregate { min { date_maturity name } max { date_maturity name } } } }`);
      const expected = await sqlJson(
        `SELECT json_build_object('min', json_build_object('date_maturity', min(date_maturity), 'name', min(name)),
                                  'max', json_build_object('date_maturity', max(date_maturity), 'name', max(name)))
           FROM loans WHERE account_id = $1`,
      );
      assert.deepEqual(data.loans_aggregate.aggregate, expected);
    });

    it('counts given columns, distinct or not: count(columns:, distinct:)', async () => {
      const data = await query(`{ loans_aggregate { aggregate {
        statuses: count(columns: [status], distinct: true)
        withPayment: count(columns: [regular_payment])
        distinctPayments: count(columns: [regular_payment], distinct: true)
        officers: count(columns: [loan_officer])
        pairs: count(columns: [status, frequency], distinct: true)
      } } }`);
      const expected = await sqlJson(
        `SELECT json_build_object('statuses', count(DISTINCT status), 'withPayment', count(regular_payment),
           'distinctPayments', count(DISTINCT regular_payment), 'officers', count(custom_fields -> 'loan_officer'),
           'pairs', (SELECT count(*) FROM (SELECT DISTINCT status, frequency FROM loans WHERE account_id = $1 AND frequency IS NOT NULL) d))
           FROM loans WHERE account_id = $1`,
      );
      assert.deepEqual(data.loans_aggregate.aggregate, expected);
      assert.ok(Number(data.loans_aggregate.aggregate.statuses.text) >= 3, 'lead, servicing, closed (and overpaid: SPEC §12 R9)');
    });

    it('returns the aggregated rows as nodes, in order', async () => {
      const data = await query(`{ loans_aggregate(where: {status: {_eq: "lead"}}, order_by: {amount: desc}) { aggregate { count } nodes { id amount } } }`);
      const expected = await sqlJson(
        `SELECT coalesce(json_agg(json_build_object('id', id, 'amount', amount) ORDER BY amount DESC, id), '[]') FROM loans WHERE account_id = $1 AND status = 'lead'`,
      );
      assert.deepEqual(data.loans_aggregate.nodes, expected);
      assert.equal(Number(data.loans_aggregate.aggregate.count.text), expected.length);
    });

    it('aggregates the first rows only when given order_by and limit', async () => {
      const data = await query(`{ loans_aggregate(order_by: {amount: desc}, limit: 5) { aggregate { count sum { amount } } } }`);
      const expected = await sqlJson(
        `SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount)))
           FROM (SELECT amount FROM loans WHERE account_id = $1 ORDER BY amount DESC, id LIMIT 5) top`,
      );
      assert.deepEqual(data.loans_aggregate.aggregate, expected);
    });

    it('answers an empty set with count 0 and null sums', async () => {
      const data = await query(`{ loans_aggregate(where: {amount: {_gt: 999999999}}) { aggregate { count sum { amount } max { rate } } nodes { id } } }`);
      assert.deepEqual(data.loans_aggregate, { aggregate: { count: num(0), sum: { amount: null }, max: { rate: null } }, nodes: [] });
    });

    it('nests aggregates under a relationship: payments_aggregate per loan', async () => {
      const data = await query(`{ loans { id payments_aggregate { aggregate { count sum { amount } max { date } } } } }`);
      const expected = await sqlJson(
        `SELECT json_agg(json_build_object('id', l.id, 'payments_aggregate', json_build_object('aggregate',
           (SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(p.amount)), 'max', json_build_object('date', max(p.date)))
              FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id))) ORDER BY l.id)
           FROM loans l WHERE l.account_id = $1`,
      );
      assert.deepEqual(data.loans, expected);
    });

    it('nests aggregates with arguments: count of unreversed payments and the nodes of the newest two', async () => {
      const data = await query(`{ loans(where: {status: {_eq: "servicing"}}, limit: 10) { id
        payments_aggregate(where: {date_reversed: {_is_null: true}}, order_by: {date: desc}, limit: 2) { aggregate { count } nodes { id date } }
      } }`);
      for (const loan of data.loans) {
        const newest = await sqlJson(
          `SELECT coalesce(json_agg(json_build_object('id', id, 'date', date) ORDER BY date DESC, id), '[]')
             FROM (SELECT id, date FROM payments WHERE account_id = $1 AND loan_id = $2 AND date_reversed IS NULL ORDER BY date DESC, id LIMIT 2) p`,
          [loan.id],
        );
        assert.deepEqual(loan.payments_aggregate.nodes, newest);
        assert.equal(Number(loan.payments_aggregate.aggregate.count.text), newest.length);
      }
    });
  });

  describe('aliases', () => {
    it('runs several aggregates in one request, each under its alias', async () => {
      const data = await query(`{
        servicing: loans_aggregate(where: {status: {_eq: "servicing"}}) { aggregate { count sum { amount } } }
        closed: loans_aggregate(where: {status: {_eq: "closed"}}) { aggregate { count sum { amount } } }
        lead: loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count sum { amount } } }
        all: loans_aggregate { aggregate { total: count } }
      }`);
      for (const status of ['servicing', 'closed', 'lead']) {
        const expected = await sqlJson(
          `SELECT json_build_object('count', count(*), 'sum', json_build_object('amount', sum(amount))) FROM loans WHERE account_id = $1 AND status = $2`,
          [status],
        );
        assert.deepEqual(data[status].aggregate, expected, status);
      }
      assert.deepEqual(Object.keys(data), ['servicing', 'closed', 'lead', 'all']);
      assert.equal(Number(data.all.aggregate.total.text), s.summary.loans + 1);
    });

    it('aliases fields and nested lists, keeping the document’s key order', async () => {
      const data = await query(`{ loans(limit: 1, order_by: {amount: desc}) { loanName: name biggest: amount last: payments(order_by: {date: desc}, limit: 1) { when: date } first: payments(order_by: {date: asc}, limit: 1) { when: date } } }`);
      const [loan] = data.loans;
      assert.deepEqual(Object.keys(loan), ['loanName', 'biggest', 'last', 'first']);
      const expected = await sqlJson(
        `SELECT json_build_object('loanName', name, 'biggest', amount,
           'last', (SELECT coalesce(json_agg(json_build_object('when', date)), '[]') FROM (SELECT date FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id ORDER BY date DESC, id LIMIT 1) x),
           'first', (SELECT coalesce(json_agg(json_build_object('when', date)), '[]') FROM (SELECT date FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id ORDER BY date ASC, id LIMIT 1) x))
           FROM loans l WHERE account_id = $1 ORDER BY amount DESC, id LIMIT 1`,
      );
      assert.deepEqual(loan, expected);
    });
  });

  describe('response keys', () => {
    it('follow the document’s order in a selection of up to 50 fields', async () => {
      const aliases = Array.from({ length: 50 }, (_, i) => `f${50 - i}`);
      const data = await query(`{ loans(limit: 1) { ${aliases.map((alias) => `${alias}: id`).join(' ')} } }`);
      assert.deepEqual(Object.keys(data.loans[0]), aliases);
    });

    it('follow the document’s order in a selection of more than 50 fields', async () => {
      const aliases = Array.from({ length: 60 }, (_, i) => `f${60 - i}`);
      const data = await query(`{ loans(limit: 1) { ${aliases.map((alias) => `${alias}: id`).join(' ')} } }`);
      assert.deepEqual(Object.keys(data.loans[0]), aliases);
    });

    it('follow the document’s order in a selection of more fields than a PostgreSQL function takes arguments', async () => {
      const aliases = Array.from({ length: 130 }, (_, i) => `f${130 - i}`);
      const data = await query(`{ loans(limit: 1) { ${aliases.map((alias) => `${alias}: name`).join(' ')} } }`);
      assert.deepEqual(Object.keys(data.loans[0]), aliases);
    });
  });

  describe('response text', () => {
    /** The text with every whitespace character outside JSON strings removed. */
    const compact = (text: string): string => {
      let out = '';
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i]!;
        if (inString) {
          out += c;
          if (c === '\\') out += text[++i];
          else if (c === '"') inString = false;
        } else if (c === '"') {
          inString = true;
          out += c;
        } else if (!/\s/.test(c)) out += c;
      }
      return out;
    };

    it('is compact JSON: no space after a colon or a comma, at any depth, whatever the value types', async () => {
      const answer = await s.graph(`query($none: uuid!) {
        __typename
        loans(order_by: {regular_payment: asc_nulls_first}, limit: 3) {
          id name amount rate regular_payment date_funded created_at __typename
          borrows { person { name email } }
          schedules(limit: 2) { due payment }
          payments_aggregate { aggregate { count sum { amount } max { date } } }
        }
        missing: loans_by_pk(id: $none) { id }
        leads: loans_aggregate(where: {status: {_eq: "lead"}}) { aggregate { count avg { regular_payment } } }
        none: loans(where: {amount: {_lt: 0}}) { id }
        more: loans_aggregate { aggregate { count } }
      }`, { none: '00000000-0000-4000-8000-000000000000' });
      assert.equal(answer.status, 200);
      assert.ok(answer.text.startsWith('{"data":{"__typename":"query_root","loans":[{"id":'), answer.text.slice(0, 80));
      assert.equal(answer.text, compact(answer.text));
      const data = dataOf(answer);
      assert.equal(data.missing, null);
      assert.deepEqual(data.none, []);
      assert.equal(data.loans[0].regular_payment, null, 'a null value is written as null');
      assert.match(answer.text, /"regular_payment":null,"date_funded":/);
      assert.match(answer.text, /"amount":\d+\.\d\d,/, 'numbers keep PostgreSQL’s digits');
    });
  });

  describe('nested arguments on related lists', () => {
    it('filters, sorts and limits each loan’s payments', async () => {
      const data = await query(`{ loans(where: {status: {_eq: "servicing"}}) { id payments(where: {date_reversed: {_is_null: true}, amount: {_gt: 1000}}, order_by: {amount: desc}, limit: 3) { id amount } } }`);
      const expected = await sqlJson(
        `SELECT json_agg(json_build_object('id', l.id, 'payments',
           (SELECT coalesce(json_agg(json_build_object('id', id, 'amount', amount) ORDER BY amount DESC, id), '[]')
              FROM (SELECT id, amount FROM payments p WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL AND p.amount > 1000
                     ORDER BY amount DESC, id LIMIT 3) p)) ORDER BY l.id)
           FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing'`,
      );
      assert.deepEqual(data.loans, expected);
    });

    it('pages a nested list with offset', async () => {
      const data = await query(`{ loans(where: {status: {_eq: "servicing"}}, limit: 5) { id schedules(order_by: {due: asc}, limit: 2, offset: 3) { number due } } }`);
      for (const loan of data.loans) {
        const expected = await sqlJson(
          `SELECT coalesce(json_agg(json_build_object('number', number, 'due', due) ORDER BY due, id), '[]')
             FROM (SELECT id, number, due FROM schedules WHERE account_id = $1 AND loan_id = $2 ORDER BY due, id LIMIT 2 OFFSET 3) x`,
          [loan.id],
        );
        assert.deepEqual(loan.schedules, expected);
      }
    });
  });

  describe('variables of every scalar type', () => {
    it('uuid: $id: uuid!', async () => {
      const data = await query(`query($id: uuid!) { loans(where: {id: {_eq: $id}}) { id } }`, { id: exactLoanId });
      assert.deepEqual(idsOf(data.loans), [exactLoanId]);
    });

    it('date: $today: date!', async () => {
      const today = '2026-06-30';
      const data = await query(`query($today: date!) { schedules_aggregate(where: {due: {_gte: $today}}) { aggregate { count } } }`, { today });
      assert.equal(Number(data.schedules_aggregate.aggregate.count.text), await sqlCount(`SELECT count(*) FROM schedules WHERE account_id = $1 AND due >= $2`, [today]));
    });

    it('numeric: as a JSON number and as a string of exact digits', async () => {
      const data = await query(`query($a: numeric!, $b: numeric!) { a: loans(where: {amount: {_eq: $a}}) { id } b: loans(where: {amount: {_eq: $b}}) { id } }`, {
        a: 100000.5,
        b: '100000.50',
      });
      assert.deepEqual(data, { a: [{ id: exactLoanId }], b: [{ id: exactLoanId }] });
    });

    it('String: $status: String!', async () => {
      const data = await query(`query($status: String!) { loans(where: {status: {_eq: $status}}) { id } }`, { status: 'closed' });
      assert.deepEqual(idsOf(data.loans), await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND status = 'closed' ORDER BY id`));
    });

    it('Boolean: $investor: Boolean!', async () => {
      const data = await query(`query($investor: Boolean!) { people(where: {is_investor: {_eq: $investor}}) { id } }`, { investor: true });
      assert.deepEqual(idsOf(data.people), await sqlIds(`SELECT id FROM people WHERE account_id = $1 AND is_investor ORDER BY id`));
    });

    it('Int: $limit: Int! and an integer field', async () => {
      const data = await query(`query($limit: Int!, $n: Int!) { schedules(where: {number: {_eq: $n}}, limit: $limit) { id } }`, { limit: 4, n: 2 });
      assert.deepEqual(idsOf(data.schedules), await sqlIds(`SELECT id FROM schedules WHERE account_id = $1 AND number = 2 ORDER BY id LIMIT 4`));
    });

    it('timestamptz: $since: timestamptz!', async () => {
      const since = '2025-06-01T12:00:00Z';
      const data = await query(`query($since: timestamptz!) { loans(where: {created_at: {_gte: $since}}) { id } }`, { since });
      assert.deepEqual(idsOf(data.loans), await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND created_at >= $2 ORDER BY id`, [since]));
    });

    it('a list variable for _in: [uuid!]', async () => {
      const some = await sqlIds(`SELECT id FROM loans WHERE account_id = $1 ORDER BY amount LIMIT 3`);
      const data = await query(`query($ids: [uuid!]!) { loans(where: {id: {_in: $ids}}) { id } }`, { ids: some });
      assert.deepEqual(idsOf(data.loans), [...some].sort());
    });

    it('a variable’s default value is used when it is not sent', async () => {
      const data = await query(`query($status: String = "lead") { loans_aggregate(where: {status: {_eq: $status}}) { aggregate { count } } }`);
      assert.equal(Number(data.loans_aggregate.aggregate.count.text), await sqlCount(`SELECT count(*) FROM loans WHERE account_id = $1 AND status = 'lead'`));
    });

    it('binds new values on every request of the same document (the plan cache keeps no values)', async () => {
      const text = `query($status: String!, $limit: Int) { loans(where: {status: {_eq: $status}}, limit: $limit) { id status } }`;
      for (const [status, limit] of [['lead', 2], ['closed', null], ['servicing', 3], ['lead', null]] as const) {
        const data = await query(text, { status, limit });
        const expected = await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND status = $2 ORDER BY id LIMIT $3`, [status, limit]);
        assert.deepEqual(idsOf(data.loans), expected, `${status} ${limit}`);
      }
    });

    it('takes a whole where and order_by as variables', async () => {
      const data = await query(`query($where: loans_bool_exp, $order: [loans_order_by!]) { loans(where: $where, order_by: $order) { id } }`, {
        where: { status: { _eq: 'servicing' }, amount: { _lt: 300000 } },
        order: [{ rate: 'desc' }],
      });
      assert.deepEqual(idsOf(data.loans), await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' AND amount < 300000 ORDER BY rate DESC, id`));
    });
  });

  describe('fragments', () => {
    const inline = `{ loans(where: {status: {_eq: "servicing"}}, limit: 5) { id name amount borrows { person { id name } } payments_aggregate { aggregate { count } } } }`;

    it('named fragments, nested and on an aggregate type, give what the same selection written out gives', async () => {
      const withFragments = `
        query { loans(where: {status: {_eq: "servicing"}}, limit: 5) { ...LoanFields payments_aggregate { ...Counted } } }
        fragment LoanFields on loans { id ...Named borrows { person { ...Person } } amount }
        fragment Named on loans { name }
        fragment Person on people { id name }
        fragment Counted on payments_aggregate { aggregate { count } }`;
      const expected = await query(inline);
      assert.equal(expected.loans.length, 5);
      const data = await query(withFragments);
      assert.deepEqual(data.loans.map((loan: any) => ({ ...loan })), expected.loans.map((loan: any) => ({ ...loan })));
    });

    it('inline fragments, with and without a type condition, do too', async () => {
      const data = await query(`{ loans(where: {status: {_eq: "servicing"}}, limit: 5) { id ... on loans { name amount } ... { borrows { person { ... on people { id name } } } payments_aggregate { aggregate { count } } } } }`);
      assert.deepEqual(data, await query(inline));
    });

    it('fragments at the root spread root fields', async () => {
      const data = await query(`query { ...Roots } fragment Roots on query_root { loans_aggregate { aggregate { count } } }`);
      assert.equal(Number(data.loans_aggregate.aggregate.count.text), s.summary.loans + 1);
    });

    it('@include and @skip follow their variables', async () => {
      const text = `query($with: Boolean!) { loans(limit: 1) { id name @include(if: $with) amount @skip(if: $with) } }`;
      const yes = await query(text, { with: true });
      const no = await query(text, { with: false });
      assert.deepEqual(Object.keys(yes.loans[0]), ['id', 'name']);
      assert.deepEqual(Object.keys(no.loans[0]), ['id', 'amount']);
    });
  });

  describe('__typename and introspection', () => {
    it('answers __typename at every level', async () => {
      const data = await query(`{ __typename loans(limit: 1) { __typename borrows { __typename person { __typename } }
        payments_aggregate { __typename aggregate { __typename count sum { __typename amount } } } } }`);
      const [loan] = data.loans;
      assert.deepEqual(data, {
        __typename: 'query_root',
        loans: [
          {
            __typename: 'loans',
            borrows: loan.borrows.map(() => ({ __typename: 'borrows', person: { __typename: 'people' } })),
            payments_aggregate: {
              __typename: 'payments_aggregate',
              aggregate: { __typename: 'payments_aggregate_fields', count: loan.payments_aggregate.aggregate.count, sum: { __typename: 'payments_sum_fields', amount: loan.payments_aggregate.aggregate.sum.amount } },
            },
          },
        ],
      });
      assert.ok(loan.borrows.length > 0);
    });

    it('answers an aggregate that asks for nothing but __typename', async () => {
      const root = await s.graph(`{ loans_aggregate { __typename aggregate { __typename sum { __typename } } } }`);
      assert.deepEqual(dataOf(root), {
        loans_aggregate: { __typename: 'loans_aggregate', aggregate: { __typename: 'loans_aggregate_fields', sum: { __typename: 'loans_sum_fields' } } },
      });
      const nested = await s.graph(`{ loans { payments_aggregate { __typename } } }`);
      const loans = dataOf(nested).loans as unknown[];
      assert.equal(loans.length, s.summary.loans + 1);
      for (const loan of loans) assert.deepEqual(loan, { payments_aggregate: { __typename: 'payments_aggregate' } });
    });

    it('answers __schema { queryType { name } }', async () => {
      assert.deepEqual(await query(`{ __schema { queryType { name } } }`), { __schema: { queryType: { name: 'query_root' } } });
    });

    it('describes a collection with __type(name: "loans"), listing the fields of interface §2', async () => {
      const data = await query(`{ __type(name: "loans") { name kind fields { name } } }`);
      assert.equal(data.__type.name, 'loans');
      assert.equal(data.__type.kind, 'OBJECT');
      const names = new Set(data.__type.fields.map((field: { name: string }) => field.name));
      const documented = ['id', 'name', 'amount', 'status', 'rate', 'term', 'frequency', 'regular_payment', 'date_maturity', 'created_at'];
      const relationships = ['borrows', 'guarantees', 'loan_documents', 'address_details', 'payments', 'schedules', 'tasks', 'comments'];
      for (const name of [...documented, ...relationships, 'payments_aggregate']) assert.ok(names.has(name), `loans.${name}`);
    });

    it('answers the standard introspection query with a schema a client can build (GraphiQL, codegen)', async () => {
      const data = dataOf(await s.graph(getIntrospectionQuery())) as IntrospectionQuery;
      const schema = buildClientSchema(data);
      assert.equal(schema.getQueryType()?.name, 'query_root');
      for (const name of ['loans', 'loans_by_pk', 'loans_aggregate', 'people', 'payments_aggregate', 'address_details']) {
        assert.ok(schema.getQueryType()!.getFields()[name], name);
      }
      for (const type of ['uuid', 'numeric', 'date', 'timestamptz', 'loans_bool_exp', 'loans_order_by', 'String_comparison_exp', 'numeric_comparison_exp']) {
        assert.ok(schema.getType(type), type);
      }
    });

    it('answers introspection and data together in one request', async () => {
      const data = await query(`{ loans_aggregate { aggregate { count } } __type(name: "loans") { name } __typename }`);
      assert.deepEqual(Object.keys(data), ['loans_aggregate', '__type', '__typename']);
      assert.deepEqual(data.__type, { name: 'loans' });
      assert.equal(Number(data.loans_aggregate.aggregate.count.text), s.summary.loans + 1);
    });

    it('answers introspection beside a nullable data field (by_pk)', async () => {
      const data = await query(`query($id: uuid!) { loans_by_pk(id: $id) { name } __type(name: "loans") { name } }`, { id: exactLoanId });
      assert.deepEqual(data, { loans_by_pk: { name: 'Exact Digits Loan' }, __type: { name: 'loans' } });
    });
  });

  describe('the useful patterns of interface §4.4', () => {
    it('filter by status: status: {_eq: <status>}, quoted or as the bare word the interface writes', async () => {
      const data = await query(`{ quoted: loans(where: {status: {_eq: "servicing"}}) { id } bare: loans(where: {status: {_eq: servicing}}) { id } }`);
      const expected = await sqlIds(`SELECT id FROM loans WHERE account_id = $1 AND status = 'servicing' ORDER BY id`);
      assert.deepEqual(idsOf(data.quoted), expected);
      assert.deepEqual(idsOf(data.bare), expected);
    });

    it('payments not reversed: date_reversed: {_is_null: true}', async () => {
      const data = await query(`{ payments(where: {date_reversed: {_is_null: true}}) { id date_reversed } }`);
      const expected = await sqlIds(`SELECT id FROM payments WHERE account_id = $1 AND date_reversed IS NULL ORDER BY id`);
      assert.ok(expected.length < s.summary.payments, 'some payments are reversed');
      assert.deepEqual(idsOf(data.payments), expected);
      assert.ok(data.payments.every((payment: any) => payment.date_reversed === null));
    });

    it('the next scheduled payment: schedules(where: {is_next: {_eq: true}}) is exactly the one row SPEC §7 defines', async () => {
      const data = await query(`{ loans(where: {status: {_eq: "servicing"}}) { id schedules(where: {is_next: {_eq: true}}) { id due payment is_next } } }`);
      // SPEC §7, computed here without the is_next column: the earliest row whose cumulative
      // scheduled total exceeds the sum of the loan's non-reversed payments.
      const rows = await s.sql<{ loan_id: string; id: string; due: string; payment: string }>(
        `WITH paid AS (
           SELECT l.id AS loan_id, coalesce((SELECT sum(p.amount) FROM payments p
                                              WHERE p.account_id = l.account_id AND p.loan_id = l.id AND p.date_reversed IS NULL), 0) AS total
             FROM loans l WHERE l.account_id = $1 AND l.status = 'servicing'
         ), running AS (
           SELECT s.loan_id, s.id, s.due, s.number, s.payment,
                  sum(s.payment) OVER (PARTITION BY s.loan_id ORDER BY s.due, s.number ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative
             FROM schedules s WHERE s.account_id = $1
         )
         SELECT DISTINCT ON (r.loan_id) r.loan_id, r.id, r.due::text AS due, r.payment::text AS payment
           FROM running r JOIN paid ON paid.loan_id = r.loan_id
          WHERE r.cumulative > paid.total
          ORDER BY r.loan_id, r.due, r.number`,
        [accountId],
      );
      const next = new Map(rows.map((row) => [row.loan_id, row]));
      assert.ok(next.size > 10, 'servicing loans with uncovered installments exist');
      for (const loan of data.loans) {
        const expected = next.get(loan.id);
        if (!expected) {
          assert.deepEqual(loan.schedules, [], `loan ${loan.id} has every installment covered`);
          continue;
        }
        assert.equal(loan.schedules.length, 1, `loan ${loan.id} has exactly one next payment`);
        assert.deepEqual(loan.schedules[0], { id: expected.id, due: expected.due, payment: new JsonNumber(expected.payment), is_next: true });
      }
      const others = await query(`{ loans(where: {status: {_neq: "servicing"}}) { schedules(where: {is_next: {_eq: true}}) { id } } }`);
      assert.ok(others.loans.every((loan: any) => loan.schedules.length === 0), 'closed loans and leads have no next payment');
    });

    it('tasks not completed: status: {_neq: completed}, written with the bare word as the interface does', async () => {
      const answer = await s.graph(`{ tasks(where: {status: {_neq: completed}}) { id status } }`);
      const data = dataOf(answer);
      const expected = await sqlIds(`SELECT id FROM tasks WHERE account_id = $1 AND status <> 'completed' ORDER BY id`);
      assert.ok(expected.length < s.summary.tasks, 'some tasks are completed');
      assert.deepEqual(idsOf(data.tasks), expected);
      assert.ok(data.tasks.every((task: any) => task.status !== 'completed'));
    });

    it('reads bare words as strings in lists too: status: {_in: [open, in_progress]}', async () => {
      const data = await query(`{ tasks(where: {status: {_in: [open, in_progress]}}) { id } }`);
      assert.deepEqual(idsOf(data.tasks), await sqlIds(`SELECT id FROM tasks WHERE account_id = $1 AND status IN ('open', 'in_progress') ORDER BY id`));
    });

    it('newest related record first: valuations(order_by: {report_date: desc}, limit: 1) under address_details { address }', async () => {
      const data = await query(`{ loans { id address_details { address { id valuations(order_by: {report_date: desc}, limit: 1) { value report_date } } } } }`);
      const rows = await s.sql<{ address_id: string; j: string }>(
        `SELECT DISTINCT ON (address_id) address_id, json_build_object('value', value, 'report_date', report_date)::text AS j
           FROM valuations WHERE account_id = $1 ORDER BY address_id, report_date DESC, id`,
        [accountId],
      );
      const newest = new Map(rows.map((row) => [row.address_id, parseExact(row.j)]));
      const several = await sqlCount(`SELECT count(*) FROM (SELECT address_id FROM valuations WHERE account_id = $1 GROUP BY address_id HAVING count(*) > 1) x`);
      assert.ok(several > 10, 'many addresses have several valuations');
      let seen = 0;
      for (const loan of data.loans) {
        for (const detail of loan.address_details) {
          const expected = newest.get(detail.address.id);
          assert.deepEqual(detail.address.valuations, expected ? [expected] : []);
          seen++;
        }
      }
      assert.equal(seen, await sqlCount(`SELECT count(*) FROM address_details WHERE account_id = $1`));
    });
  });

  describe('numbers', () => {
    it('writes numeric values as JSON numbers with PostgreSQL’s exact digits (100000.50, 7.1250)', async () => {
      const answer = await s.graph(`query($id: uuid!) { loans_by_pk(id: $id) { amount rate term } }`, { id: exactLoanId });
      assert.equal(answer.status, 200);
      assert.match(answer.text, /"amount"\s*:\s*100000\.50\s*[,}]/);
      assert.match(answer.text, /"rate"\s*:\s*7\.1250\s*[,}]/);
      assert.match(answer.text, /"term"\s*:\s*12\s*[,}]/);
      assert.deepEqual(dataOf(answer).loans_by_pk, { amount: 100000.5, rate: 7.125, term: 12 });
    });

    it('writes aggregate sums and averages with their exact digits, counts as integers', async () => {
      const answer = await s.graph(`query($id: uuid!) { loans_aggregate(where: {id: {_eq: $id}}) { aggregate { count sum { amount } avg { amount } } } }`, { id: exactLoanId });
      const [expected] = await s.sql<{ avg: string }>(`SELECT avg(amount)::text AS avg FROM loans WHERE account_id = $1 AND id = $2`, [accountId, exactLoanId]);
      assert.match(answer.text, /"count"\s*:\s*1\s*[,}]/);
      assert.match(answer.text, /"sum"\s*:\s*\{\s*"amount"\s*:\s*100000\.50\s*\}/);
      assert.ok(answer.text.includes(expected!.avg), `avg ${expected!.avg} in ${answer.text}`);
    });
  });
});
