/**
 * The OpenAPI paths and schemas of the investor statement and the remittance run (issue 32),
 * merged into `/api/openapi.json` by `openapi.ts`. Money is a JSON number with PostgreSQL's exact
 * digits (two decimals), as everywhere in the API.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });
const MONEY: Schema = { type: 'number', description: 'An amount with its exact digits (two decimals); negative for money taken back.' };
const DAY: Schema = { type: 'string', format: 'date' };
const UUID: Schema = { type: 'string', format: 'uuid' };
const CSV: Schema = { 'text/csv': { schema: { type: 'string', description: 'RFC 4180, UTF-8 with a byte-order mark; a header line, one line per row, then a Total line.' } } };

const period = (what: string) => [
  { name: 'from', in: 'query', required: true, schema: DAY, description: `The first day of the ${what} (YYYY-MM-DD).` },
  { name: 'to', in: 'query', required: true, schema: DAY, description: `The last day of the ${what} (YYYY-MM-DD), not before from.` },
];
const formatParameter = (formats: readonly string[]) => ({
  name: 'format',
  in: 'query',
  schema: { type: 'string', enum: formats },
  description: `The answer's format; without it the Accept header chooses (${formats.map((f) => (f === 'json' ? 'application/json' : f === 'csv' ? 'text/csv' : 'application/pdf')).join(', ')}; JSON when it allows anything).`,
});

const AMOUNTS = ['principal', 'interest', 'fees', 'adjustments', 'total'] as const;
const STATEMENT_AMOUNTS = ['opening_principal', 'funded', ...AMOUNTS, 'closing_principal'] as const;
const amountProperties = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, MONEY]));

export interface InvestorDocumentParts {
  readonly paths: Record<string, Record<string, unknown>>;
  readonly schemas: Record<string, Schema>;
}

/** `responses` holds the document's shared answers (`badRequest`, `forbidden`, …). */
export function investorDocumentParts(responses: Record<'badRequest' | 'badQuery' | 'forbidden' | 'tooLarge', unknown>): InvestorDocumentParts {
  const notFound = (what: string) => ({ description: `No such ${what} in this account — or, for an investor key, any person but its own.`, content: json('Error') });
  const notAcceptable = { description: 'The Accept header allows none of the formats.', content: json('Error') };
  const statementLoan: Schema = {
    type: 'object',
    required: ['loan_id', 'loan_name', 'rate', 'date_funded', ...STATEMENT_AMOUNTS],
    additionalProperties: false,
    properties: {
      loan_id: UUID,
      loan_name: { type: 'string' },
      rate: { type: ['number', 'null'], description: "The investor's rate (percent) on the loan; null when its funding sources differ." },
      date_funded: { type: ['string', 'null'], format: 'date' },
      ...amountProperties(STATEMENT_AMOUNTS),
    },
  };
  const investorAmounts: Schema = {
    type: 'object',
    required: ['person_id', 'name', ...AMOUNTS, 'line_count', 'earliest_date'],
    additionalProperties: false,
    properties: {
      person_id: UUID,
      name: { type: 'string' },
      ...amountProperties(AMOUNTS),
      line_count: { type: 'integer', minimum: 1 },
      earliest_date: { ...DAY, description: "The earliest line's date: before the period when the run pays a late adjustment or an earlier line no run covered." },
    },
  };
  const totals: Schema = { type: 'object', required: [...AMOUNTS, 'line_count'], additionalProperties: false, properties: { ...amountProperties(AMOUNTS), line_count: { type: 'integer', minimum: 0 } } };
  const summary: Schema = {
    type: 'object',
    required: ['id', 'period', 'remitted_at', 'remitted_by', 'total', 'line_count'],
    properties: {
      id: UUID,
      period: ref('Period'),
      remitted_at: { type: 'string', description: 'When it was marked (timestamptz).' },
      remitted_by: { type: 'string', description: "Who marked it: `key <prefix> (<name>)` or `admin <e-mail>` (never a secret)." },
      total: MONEY,
      line_count: { type: 'integer', minimum: 0 },
    },
  };
  return {
    paths: {
      '/api/investors/{person_id}/statement': {
        parameters: [{ name: 'person_id', in: 'path', required: true, schema: { type: 'string' }, description: 'The person (a uuid).' }],
        get: {
          operationId: 'getInvestorStatement',
          summary:
            "A person's investor statement for a period (issue 32): per funded loan the investor's opening and closing principal, what was funded in the period, the principal, interest and fees received, adjustments and totals, with the period's distribution lines. An investor key reads only its own person's. JSON, CSV or a PDF.",
          parameters: [...period('statement'), formatParameter(['json', 'csv', 'pdf'])],
          responses: {
            '200': {
              description: 'The statement.',
              content: { ...json('InvestorStatement'), ...CSV, 'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } } },
            },
            '400': responses.badQuery,
            '403': responses.forbidden,
            '404': notFound('person'),
            '406': notAcceptable,
          },
        },
      },
      '/api/remittances': {
        get: {
          operationId: 'getRemittanceRun',
          summary:
            "What the lender owes each investor for a period: every investor distribution line not yet remitted and dated on or before `to` (so an adjustment to a period already remitted is paid by the next run). For keys whose role reads every investor's lines. Nothing is written.",
          parameters: [...period('period'), formatParameter(['json', 'csv'])],
          responses: { '200': { description: 'The run.', content: { ...json('RemittanceRun'), ...CSV } }, '400': responses.badQuery, '403': responses.forbidden, '406': notAcceptable },
        },
        post: {
          operationId: 'markRemitted',
          summary:
            'Marks a period remitted (admin keys only): records who and when, and stamps the lines its run owes, in one transaction; their amounts never change. The period must have ended (to ≤ the business date); periods are remitted in order. Give `total` and `line_count` as the run showed them (its `totals`): if the run owes anything else by then (a payment or reversal dated into the period since), nothing is written and the answer is a 409 saying what it owes now — without them, the mark stamps whatever the run owes when it runs.',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['from', 'to'],
                  additionalProperties: false,
                  properties: {
                    from: DAY,
                    to: DAY,
                    total: { type: ['string', 'number'], pattern: '^-?\\d{1,15}(\\.\\d{1,2})?$', description: "The run's `totals.total` as shown (with line_count)." },
                    line_count: { type: ['integer', 'string'], minimum: 0, pattern: '^\\d{1,9}$', description: "The run's `totals.line_count` as shown (with total)." },
                  },
                  dependentRequired: { total: ['line_count'], line_count: ['total'] },
                },
              },
            },
          },
          responses: {
            '201': { description: 'The remittance recorded, with what it paid each investor.', headers: { Location: { schema: { type: 'string' } } }, content: json('RemittanceEnvelope') },
            '400': responses.badRequest,
            '403': responses.forbidden,
            '409': { description: 'The period overlaps, equals, or comes before a period already remitted, another mark of the account is running, or the run owes another total or line count than the body says it was shown; nothing was written.', content: json('Error') },
            '413': responses.tooLarge,
          },
        },
      },
      '/api/remittances/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The remittance (a uuid).' }],
        get: {
          operationId: 'getRemittance',
          summary: 'A recorded remittance and what it paid each investor (the sum of the lines it stamped).',
          parameters: [formatParameter(['json', 'csv'])],
          responses: {
            '200': { description: 'The remittance.', content: { ...json('RemittanceEnvelope'), ...CSV } },
            '400': responses.badQuery,
            '403': responses.forbidden,
            '404': { description: 'No such remittance in this account.', content: json('Error') },
            '406': notAcceptable,
          },
        },
      },
    },
    schemas: {
      Period: { type: 'object', required: ['from', 'to'], additionalProperties: false, properties: { from: DAY, to: DAY } },
      InvestorStatement: {
        type: 'object',
        description: 'closing_principal = opening_principal + funded − principal − the principal part of adjustments. A funding source funded after `to` is not shown.',
        required: ['account_name', 'currency', 'person', 'period', 'loans', 'totals', 'lines'],
        additionalProperties: false,
        properties: {
          account_name: { type: 'string', description: "The lender's account name." },
          currency: { type: 'string', description: 'ISO 4217: every amount is in it.' },
          person: { type: 'object', required: ['id', 'name'], additionalProperties: false, properties: { id: UUID, name: { type: 'string' } } },
          period: ref('Period'),
          loans: { type: 'array', items: statementLoan },
          totals: { type: 'object', required: [...STATEMENT_AMOUNTS], additionalProperties: false, properties: amountProperties(STATEMENT_AMOUNTS) },
          lines: {
            type: 'array',
            description: "The person's distribution lines dated in the period, by date.",
            items: {
              type: 'object',
              required: ['id', 'date', 'loan_id', 'payment_id', 'component', 'amount', 'adjustment', 'cause_payment_id', 'remittance_id'],
              additionalProperties: false,
              properties: {
                id: UUID,
                date: DAY,
                loan_id: UUID,
                payment_id: UUID,
                component: { enum: ['principal', 'interest', 'fees'] },
                amount: MONEY,
                adjustment: { type: 'boolean' },
                cause_payment_id: { type: ['string', 'null'] },
                remittance_id: { type: ['string', 'null'], description: 'The remittance that paid it, once marked.' },
              },
            },
          },
        },
      },
      RemittanceInvestor: investorAmounts,
      RemittanceTotals: totals,
      RemittanceRun: {
        type: 'object',
        required: ['period', 'business_date', 'currency', 'investors', 'totals', 'remitted'],
        additionalProperties: false,
        properties: {
          period: ref('Period'),
          business_date: DAY,
          currency: { type: 'string' },
          investors: { type: 'array', items: ref('RemittanceInvestor') },
          totals: ref('RemittanceTotals'),
          remitted: { type: 'array', description: 'Remittances already recorded that overlap the period.', items: summary },
        },
      },
      RemittanceEnvelope: {
        type: 'object',
        required: ['remittance'],
        additionalProperties: false,
        properties: {
          remittance: {
            allOf: [summary],
            type: 'object',
            required: ['currency', 'investors', 'totals'],
            properties: { currency: { type: 'string' }, investors: { type: 'array', items: ref('RemittanceInvestor') }, totals: ref('RemittanceTotals') },
          },
        },
      },
    },
  };
}
