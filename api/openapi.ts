import { describeRule, schemaForRule, type ValueRule } from '../app/fieldValues.js';
import { BUILT_IN_FIELDS, bodyName, LOAN_STATUSES, type Product } from '../app/products.js';
import { describeSetting, PRODUCT_SETTINGS, type SettingDescriptor } from '../app/productSettings.js';
import { PROFILE_FIELDS, profileFieldSchema } from '../app/accountProfile.js';
import { CONTACT_PARAMETERS, EMAIL_SCHEMA_PATTERN } from '../app/loanInput.js';
import { investorDocumentParts } from './investorOpenApi.js';
import { distributionListLimits, loanListLimits, type LoanListLimits } from './loanListLimits.js';

/**
 * The OpenAPI 3.1 document of the REST loan routes (SPEC §6), served at `/api/openapi.json`.
 * It is built per request for the caller's account, so the request and response schemas list
 * that account's product custom fields with their types. The tests validate the document and
 * check every REST response they receive against it.
 */

type Schema = Record<string, unknown>;

/** A rule's JSON Schema without ajv's `x-` extensions (OpenAPI shows them as text). */
function publicSchema(rule: ValueRule): Schema {
  const schema = Object.fromEntries(Object.entries(schemaForRule(rule)).filter(([key]) => !key.startsWith('x-')));
  return { ...schema, description: `${describeRule(rule)}.` };
}

const nullable = (schema: Schema): Schema => {
  const { description, ...rest } = schema;
  return { ...(description ? { description } : {}), anyOf: [rest, { type: 'null' }] };
};

/** A decimal as the responses carry it: a JSON number with PostgreSQL's exact digits. */
const DECIMAL_OUT: Schema = { type: ['number', 'null'] };
const DATE_OUT: Schema = { type: ['string', 'null'], format: 'date' };
/** A ledger's money figure: null for a lead (not funded, it owes nothing; migration 0084). */
const LEAD_NULL: Schema = { type: ['number', 'null'] };

function customFieldOutput(product: Product): Schema {
  const properties: Record<string, Schema> = {};
  for (const field of product.customFields) {
    const type = field.rule.kind === 'decimal' ? 'number' : field.rule.kind === 'integer' ? 'integer' : field.rule.kind === 'boolean' ? 'boolean' : 'string';
    properties[field.key] = { type, description: `${field.name} (${field.type})` };
  }
  return {
    type: 'object',
    description:
      'Custom fields of the loan, keyed by field key (the name in lower case, spaces as underscores). Values of fields removed from the product are kept and returned as stored.',
    properties,
  };
}

/**
 * A servicing setting's JSON Schema (SPEC §12), from `app/productSettings.ts`'s table: its type,
 * enum or bounds, default and description. `request`: decimals may also be sent as decimal strings.
 */
function settingSchema(setting: SettingDescriptor, request: boolean): Schema {
  const kind = setting.kind;
  const description = `${setting.description} Accepts ${describeSetting(setting)}.${setting.replays ? " Changing it replays the ledgers of the product's loans." : ''}`;
  let schema: Schema;
  switch (kind.kind) {
    case 'enum':
      schema = { type: 'string', enum: [...kind.values] };
      break;
    case 'integer':
      schema = { type: 'integer', minimum: kind.min, maximum: kind.max };
      break;
    case 'decimal':
      schema = request
        ? { anyOf: [{ type: 'number', minimum: Number(kind.min), maximum: Number(kind.max) }, { type: 'string', pattern: '^\\s*\\d+(\\.\\d+)?\\s*$' }] }
        : { type: 'number', minimum: Number(kind.min), maximum: Number(kind.max) };
      break;
    case 'buckets':
      schema = {
        type: 'array',
        minItems: 1,
        maxItems: kind.maxBuckets,
        items: {
          type: 'object',
          required: ['name', 'from'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: kind.maxName }, from: { type: 'integer', minimum: 0, maximum: kind.maxFrom } },
        },
      };
      break;
  }
  if (setting.nullable) schema = { anyOf: [schema, { type: 'null' }] };
  return { ...schema, default: setting.default, description };
}

/**
 * What a caller's role may do with `/api/loan` (issue 15): the operations the document lists,
 * and whether the role's filters apply (a borrower or guarantor it cannot see is then `null`).
 */
export interface LoanAccess {
  readonly role: string;
  readonly select: boolean;
  readonly insert: boolean;
  readonly update: boolean;
  /** Whether it may remove a loan entered by mistake (`DELETE /api/loan/{id}`: the role's loans delete); default false. */
  readonly delete?: boolean;
  readonly filtered: boolean;
  /** Whether it may change the product's settings (`PATCH /api/product`: admin keys). */
  readonly productUpdate: boolean;
  /** Whether it may change the account's profile (`PATCH /api/account`: admin keys); default `productUpdate`. */
  readonly accountUpdate?: boolean;
  /** Investor statements (issue 32): read (anyone's or its own person's); default true. */
  readonly statements?: boolean;
  /** The remittance run (every investor's lines) and its records; default true. */
  readonly remittances?: boolean;
  /** Marking a period remitted (admin keys); default true. */
  readonly remittanceMark?: boolean;
}

export const FULL_ACCESS: LoanAccess = { role: 'admin', select: true, insert: true, update: true, delete: true, filtered: false, productUpdate: true };

/** The 409 of every write: what `retryWriteConflicts` could not settle. */
const WRITE_CONFLICT = 'The write collided with concurrent writes to the same loans (a deadlock or serialization failure) on each of the 5 times the service ran it; `code` is `conflict`. Nothing was written: send it again.';

/** `listLimits`: the `limit` of `GET /api/loan` under MAX_ROWS (`loanListLimits`). */
export function openApiDocument(product: Product, serverUrl: string, access: LoanAccess = FULL_ACCESS, listLimits: LoanListLimits = loanListLimits(null)): Schema {
  // The lines' page under the same MAX_ROWS as the loan list's (`listLimits.byMaxRows`: its max is MAX_ROWS).
  const lineLimits = distributionListLimits(listLimits.byMaxRows ? listLimits.max : null);
  const requestProperties: Record<string, Schema> = {};
  for (const field of BUILT_IN_FIELDS) requestProperties[field.name] = field.nullable ? nullable(publicSchema(field.rule)) : publicSchema(field.rule);
  // A loan needs a name that is not blank (issue 28, migration 0013): required on POST, never null.
  requestProperties.Name = { ...requestProperties.Name, minLength: 1, pattern: '\\S', description: 'The loan\'s name: required on POST, not blank (at most 500 characters).' };
  // `overpaid` is in the enum (answers carry it) but the ledger sets it (R9): a body giving it is refused.
  requestProperties.Status = { ...requestProperties.Status, description: `${requestProperties.Status!.description as string} \`overpaid\` is set by the ledger when payments exceed what is owed: a POST or PATCH giving it is a 400. The status follows the ledger (SPEC §12 R9): \`closed\` by hand is a 400 while money is owed or credit held, a loan the ledger settled is not set to \`servicing\` (400; a reversal, or terms that leave money owed, reopen it), and a loan that took payments is not a \`lead\` again (400).` };
  /** What POST must carry: the name and each required custom field (body keys match without regard to case). */
  const requiredOnCreate = ['Name', ...product.customFields.filter((field) => field.required).map((field) => bodyName(field.name))];
  for (const field of product.customFields) {
    const schema = publicSchema(field.rule);
    requestProperties[bodyName(field.name)] = field.required ? { ...schema, description: `${schema.description as string} Required.` } : nullable(schema);
  }
  const contactProperties: Record<string, Schema> = {};
  for (const prefix of ['Borrower', 'Guarantor']) {
    const said = new Map([
      ['Id', `Id of an existing person or company to attach; wins over the other ${prefix}_ parameters. An id not found attaches nobody (the response says so).`],
      ['Name', `Name of the individual, or of the company when ${prefix}_Is_Company is true.`],
      ['Email', 'With a name: the individual of that name and e-mail (case-insensitive) is attached, or created. Empty: none.'],
      ['Company', 'Company name: found or created; the individual is connected to it and attached.'],
      ['Is_Company', 'When true, the name is a company name: found or created, and attached.'],
    ]);
    // The limits are the body check's own (app/loanInput.ts), so a client refuses what the service refuses.
    for (const { suffix, rule } of CONTACT_PARAMETERS) {
      const schema: Schema = { ...publicSchema(rule), ...(suffix === 'Email' ? { pattern: EMAIL_SCHEMA_PATTERN } : {}) };
      contactProperties[`${prefix}_${suffix}`] = nullable({ ...schema, description: `${said.get(suffix)!} Accepts ${schema.description as string}` });
    }
  }

  const person: Schema = {
    type: 'object',
    required: ['id', 'name', 'email', 'entity_type'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      email: { type: ['string', 'null'] },
      entity_type: { type: 'string', enum: ['individual', 'company'] },
    },
  };
  // Under a role's filters, a person the role cannot see is null in the lists.
  const personItem: Schema = access.filtered
    ? { oneOf: [{ $ref: '#/components/schemas/Person' }, { type: 'null', description: `A person the key's role (${access.role}) cannot see.` }] }
    : { $ref: '#/components/schemas/Person' };
  const loan: Schema = {
    type: 'object',
    additionalProperties: false,
    required: [
      'id', 'name', 'status', 'amount', 'rate', 'term', 'frequency', 'amortization', 'regular_payment', 'date_funded',
      'first_payment_date', 'date_maturity', 'custom_fields', 'created_at', 'updated_at', 'borrowers', 'guarantors',
    ],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      status: { type: 'string', enum: [...LOAN_STATUSES] },
      amount: DECIMAL_OUT,
      rate: { ...DECIMAL_OUT, description: 'Annual rate in percent (12 = 12 %).' },
      term: { type: ['integer', 'null'], description: 'Number of scheduled payments.' },
      frequency: { type: ['string', 'null'] },
      amortization: { type: 'string', enum: ['amortizing', 'interest_only'] },
      regular_payment: { ...DECIMAL_OUT, description: 'Derived from the schedule unless given (a given one must exceed the first row\'s interest; not for interest_only loans).' },
      date_funded: DATE_OUT,
      first_payment_date: DATE_OUT,
      date_maturity: { ...DATE_OUT, description: "The schedule's last due date (a given one must be that date)." },
      custom_fields: customFieldOutput(product),
      created_at: { type: 'string' },
      updated_at: { type: 'string' },
      borrowers: { type: 'array', items: personItem },
      guarantors: { type: 'array', items: personItem },
    },
  };
  const contactOutcome: Schema = {
    oneOf: [
      { type: 'null', description: 'No parameters of this prefix were given.' },
      {
        type: 'object',
        additionalProperties: false,
        required: ['outcome', 'person_id'],
        properties: {
          outcome: { enum: ['found', 'created'] },
          person_id: { type: 'string', format: 'uuid' },
          company: {
            type: 'object',
            additionalProperties: false,
            required: ['outcome', 'person_id'],
            properties: { outcome: { enum: ['found', 'created'] }, person_id: { type: 'string', format: 'uuid' } },
          },
        },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['outcome', 'requested_id'],
        properties: { outcome: { const: 'not_found' }, requested_id: { type: 'string' } },
      },
    ],
  };
  const error: Schema = {
    type: 'object',
    required: ['error'],
    properties: {
      error: { type: 'string' },
      code: { type: 'string', description: 'Where the error has one of the codes GraphQL errors carry (idempotency-key-reused, rate-limited, database-unavailable, timeout, conflict).' },
      fields: { type: 'object', additionalProperties: { type: 'string' }, description: 'Each offending field (or query parameter), as sent, with what is wrong.' },
    },
  };

  const json = (ref: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
  const responses = {
    badRequest: { description: 'Bad input; nothing was written.', ...json('Error') },
    badQuery: { description: 'A query parameter the operation does not take, one given more than once (`loan_id=A&loan_id=B`: give it once), or a value it does not accept; `fields` names each.', ...json('Error') },
    forbidden: {
      description: "Missing, invalid or inactive API key (text), or the key's role lacks the loans permission the operation needs (JSON naming it).",
      content: { 'text/plain': { schema: { const: 'Not authorized' } }, 'application/json': { schema: { $ref: '#/components/schemas/PermissionError' } } },
    },
    notFound: { description: 'No such loan in this account.', ...json('Error') },
    tooLarge: { description: 'The body is larger than BODY_LIMIT_BYTES (1 MB by default).', ...json('Error') },
    badPath: { description: 'A query parameter given, which the operation does not take, or a path that is not valid percent-encoding; `fields` names each parameter.', ...json('Error') },
  };
  /** Answers every operation may give: the key over its rate limit, the database out of reach. */
  const everyOperation = {
    '429': {
      description: "The key is over its rate limit (its role's `rate_limit`, else RATE_LIMIT_PER_SECOND); `code` is `rate-limited`. Nothing was done.",
      headers: {
        'Retry-After': { description: 'Seconds until the key has a request again.', schema: { type: 'string', pattern: '^\\d+$' } },
        RateLimit: { description: 'What is left of the key\'s burst, and when it is whole again (draft-ietf-httpapi-ratelimit-headers).', schema: { type: 'string' } },
        'RateLimit-Policy': { description: 'The key\'s limit: its burst and window.', schema: { type: 'string' } },
      },
      ...json('Error'),
    },
    '503': {
      description: 'The database cannot be reached now (`code` `database-unavailable`: retry after `Retry-After` seconds), or it stopped the request at the statement timeout, STATEMENT_TIMEOUT_MS (`code` `timeout`, no `Retry-After`: ask for less, e.g. a shorter period or a smaller page).',
      headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^\\d+$' } } },
      ...json('Error'),
    },
  };
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The loan id (a uuid).' };
  const investors = investorDocumentParts(responses);

  const document: Schema = {
    openapi: '3.1.0',
    info: {
      title: 'loanql REST loan interface',
      version: '1',
      description:
        'Loans of the account the API key belongs to (interface.md §4.1–4.3, SPEC §6), and its default product with its servicing settings (SPEC §12). Body keys name fields of the default product, spaces written as underscores, matched without regard to case. This document lists the caller account\'s product fields.',
    },
    servers: [{ url: serverUrl }],
    security: [{ token: [] }],
    paths: {
      '/api/loan': {
        get: {
          operationId: 'listLoans',
          summary: 'A page of loans, newest first.',
          parameters: [
            { name: 'status', in: 'query', schema: { type: 'string', enum: [...LOAN_STATUSES] } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 0, maximum: listLimits.max, default: listLimits.byDefault }, ...(listLimits.byMaxRows ? { description: 'At most MAX_ROWS, this service\'s most rows per list; a larger limit is a 400.' } : {}) },
            { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 2147483647, default: 0 } },
          ],
          responses: { '200': { description: 'The page.', ...json('LoanPage') }, '400': responses.badQuery, '403': responses.forbidden },
        },
        post: {
          operationId: 'createLoan',
          summary: 'Creates a loan, its schedule and (optionally) one borrower and one guarantor, in one transaction.',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              description: 'Makes a retry safe: the same key (1–255 visible ASCII characters) and body within 24 hours answer the first response again (header Idempotent-Replayed: true) and create nothing; another body with the key is a 409.',
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
          ],
          requestBody: { required: true, ...json('LoanCreate') },
          responses: {
            '201': {
              description: 'The loan, as GET /api/loan/{id} returns it, and what happened to the contacts.',
              headers: {
                Location: { description: 'The new loan: `/api/loan/{id}`.', schema: { type: 'string' } },
                'Idempotent-Replayed': { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.', schema: { type: 'string', const: 'true' } },
              },
              ...json('LoanCreated'),
            },
            '400': responses.badRequest,
            '403': responses.forbidden,
            '409': { description: 'The Idempotency-Key was used with another body in the last 24 hours; nothing was written.', ...json('Error') },
            '413': responses.tooLarge,
          },
        },
      },
      '/api/loan/{id}': {
        parameters: [idParameter],
        get: {
          operationId: 'getLoan',
          summary: 'One loan with its borrowers, guarantors and custom fields.',
          responses: { '200': { description: 'The loan.', ...json('LoanEnvelope') }, '400': responses.badPath, '403': responses.forbidden, '404': responses.notFound },
        },
        patch: {
          operationId: 'updateLoan',
          summary: 'Updates fields of a loan in one transaction; the schedule is regenerated when its inputs change. Borrower_/Guarantor_ parameters are refused.',
          requestBody: { required: false, ...json('LoanUpdate') },
          responses: { '200': { description: 'The updated loan.', ...json('LoanEnvelope') }, '400': responses.badRequest, '403': responses.forbidden, '404': responses.notFound, '413': responses.tooLarge },
        },
        delete: {
          operationId: 'deleteLoan',
          summary:
            'Removes a loan entered by mistake (a lead typed twice, a test loan) with its schedule rows, tasks, comments and links, in one transaction. A loan that holds money history — a payment (reversed or not), a fee, a fee waiver, a funding source, a distribution line — is never deleted (409; the database refuses it for every writer).',
          responses: {
            '200': { description: 'The loan as it was just before it was removed.', ...json('LoanEnvelope') },
            '400': responses.badPath,
            '403': responses.forbidden,
            '404': responses.notFound,
            '409': { description: 'The loan holds money history: `code` is `loan-holds-money`, `holds` counts what it holds (`{"payments": 2, "fees": 1}`); nothing was removed. Reverse its payments and waive its fees instead.', ...json('LoanHoldsMoney') },
          },
        },
      },
      '/api/loan/{id}/payoff': {
        parameters: [idParameter],
        get: {
          operationId: 'getPayoffQuote',
          summary:
            'What it takes to pay the loan off on a day (SPEC §12 R5), with its parts and per diem; or, with format=pdf (or an Accept preferring application/pdf), the payoff letter: the lender, the day issued, the loan, its borrowers and property as the key reads them, the good-through day, the figures itemised (each unpaid fee listed), the total to pay off and the per diem after that day, a later day quoted anew.',
          parameters: [
            { name: 'date', in: 'query', schema: { type: 'string', format: 'date' }, description: 'The day (YYYY-MM-DD); default the account\'s business date. The letter refuses a day before the loan was funded (400).' },
            {
              name: 'format',
              in: 'query',
              schema: { type: 'string', enum: ['json', 'pdf'] },
              description: 'json (the quote) or pdf (the payoff letter); without it an Accept preferring application/pdf gets the letter, any other the quote.',
            },
          ],
          responses: {
            '200': { description: 'The quote, or the payoff letter.', content: { ...json('PayoffQuote').content, 'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } } } },
            '400': responses.badQuery,
            '403': responses.forbidden,
            '404': responses.notFound,
            '409': { description: 'The loan is a lead (status lead): not funded, it owes nothing and has no payoff; `fields.Status` says so.', ...json('Error') },
          },
        },
      },
      '/api/product': {
        get: {
          operationId: 'getProduct',
          summary: "The account's default product: its servicing settings (SPEC §12) with their defaults, and its fields as request bodies name them.",
          responses: { '200': { description: 'The product.', ...json('ProductEnvelope') }, '400': responses.badQuery, '403': responses.forbidden },
        },
        patch: {
          operationId: 'updateProductSettings',
          summary:
            "Changes some of the default product's servicing settings in one transaction; the ledgers of the product's loans are replayed with them. Admin keys only. An unknown setting or a value it does not accept is a 400 naming it; nothing is written then.",
          requestBody: { required: false, ...json('ProductSettingsChange') },
          responses: {
            '200': { description: 'The product as it now is, which settings changed, and how many loans were replayed.', ...json('ProductUpdated') },
            '400': responses.badRequest,
            '403': responses.forbidden,
            '413': responses.tooLarge,
          },
        },
      },
      '/api/account': {
        get: {
          operationId: 'getAccount',
          summary: "The lender's account: its name and profile (legal name, postal address, phone, e-mail, payment instructions), and the letterhead its payoff letters and investor statements print.",
          responses: { '200': { description: 'The account.', ...json('AccountEnvelope') }, '400': responses.badQuery, '403': responses.forbidden },
        },
        patch: {
          operationId: 'updateAccountProfile',
          summary:
            "Changes some of the account's profile fields. Admin keys only. A value is trimmed; null or an empty string clears the field. An unknown field or a value it does not accept is a 400 naming it; nothing is written then.",
          requestBody: { required: false, ...json('AccountProfileChange') },
          responses: {
            '200': { description: 'The account as it now is, and which fields changed.', ...json('AccountUpdated') },
            '400': responses.badRequest,
            '403': responses.forbidden,
            '413': responses.tooLarge,
          },
        },
      },
      '/api/loan/{id}/ledger': {
        parameters: [idParameter],
        get: {
          operationId: 'getLedger',
          summary: 'The loan\'s balances, payments with their allocations, and fees (SPEC §12).',
          parameters: [{ name: 'date', in: 'query', schema: { type: 'string', format: 'date' }, description: 'The day of the balances (YYYY-MM-DD); default the account\'s business date.' }],
          responses: { '200': { description: 'The ledger.', ...json('Ledger') }, '400': responses.badQuery, '403': responses.forbidden, '404': responses.notFound },
        },
      },
      ...investors.paths,
      '/api/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          summary: "This document: the operations the key's role may use, with its account's product fields.",
          responses: { '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } } }, '400': responses.badQuery, '403': responses.forbidden },
        },
      },
      '/api/distributions': {
        get: {
          operationId: 'listDistributions',
          summary:
            "Investor distribution lines (SPEC §12 R10): each payment's allocation split between the loan's funding sources and the lender, with adjustment lines when an allocation is re-derived. An investor key gets its own lines only; other roles every line of the account.",
          parameters: [
            { name: 'from', in: 'query', schema: { type: 'string', format: 'date' }, description: 'First day (YYYY-MM-DD) of the lines\' dates; an adjustment is dated its reversal\'s `date_reversed` (which may be before the day it was recorded), else the day it was recorded.' },
            { name: 'to', in: 'query', schema: { type: 'string', format: 'date' }, description: 'Last day (YYYY-MM-DD), included.' },
            { name: 'loan_id', in: 'query', schema: { type: 'string' }, description: 'Only this loan\'s lines (a uuid).' },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 0, maximum: lineLimits.max, default: lineLimits.byDefault }, description: `The most lines of the page${lineLimits.byMaxRows ? ': at most MAX_ROWS, this service\'s most rows per list; a larger limit is a 400' : ''}.` },
            { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 2147483647, default: 0 }, description: 'Lines to skip before the page (next gives the following page\'s address).' },
          ],
          responses: { '200': { description: 'A page of the lines, oldest first, with the count and sum of every line the filters select, and the address of the next page.', ...json('DistributionLines') }, '400': responses.badQuery, '403': responses.forbidden },
        },
      },
    },
    components: {
      securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <API_KEY>' } },
      schemas: {
        ...investors.schemas,
        Person: person,
        Loan: loan,
        LoanEnvelope: { type: 'object', required: ['loan'], additionalProperties: false, properties: { loan: { $ref: '#/components/schemas/Loan' } } },
        LoanPage: {
          type: 'object',
          required: ['loans', 'total', 'limit', 'offset'],
          additionalProperties: false,
          properties: {
            loans: { type: 'array', items: { $ref: '#/components/schemas/Loan' } },
            total: { type: 'integer', minimum: 0 },
            limit: { type: 'integer' },
            offset: { type: 'integer' },
          },
        },
        ContactOutcome: contactOutcome,
        LoanCreated: {
          type: 'object',
          required: ['loan', 'contacts'],
          additionalProperties: false,
          properties: {
            loan: { $ref: '#/components/schemas/Loan' },
            contacts: {
              type: 'object',
              required: ['borrower', 'guarantor'],
              additionalProperties: false,
              properties: { borrower: { $ref: '#/components/schemas/ContactOutcome' }, guarantor: { $ref: '#/components/schemas/ContactOutcome' } },
            },
          },
        },
        LoanUpdate: { type: 'object', properties: requestProperties, description: 'Fields of the default product; null clears a field.' },
        LoanCreate: { type: 'object', required: requiredOnCreate, properties: { ...requestProperties, ...contactProperties } },
        Error: error,
        LoanHoldsMoney: {
          type: 'object',
          required: ['error', 'code'],
          properties: {
            error: { type: 'string' },
            code: { type: 'string', description: '`loan-holds-money`; or `conflict` (concurrent writes, below).' },
            holds: {
              type: 'object',
              description: 'How many of each kind of money record the loan holds (only the kinds it has).',
              additionalProperties: false,
              properties: Object.fromEntries(['payments', 'fees', 'fee_waivers', 'funding_sources', 'distributions'].map((kind) => [kind, { type: 'integer', minimum: 1 }])),
            },
          },
        },
        ProductSettings: {
          type: 'object',
          description: "The servicing settings of a product (SPEC §12); each decides what the product's loans owe.",
          required: PRODUCT_SETTINGS.map((setting) => setting.name),
          additionalProperties: false,
          properties: Object.fromEntries(PRODUCT_SETTINGS.map((setting) => [setting.name, settingSchema(setting, false)])),
        },
        ProductSettingsChange: {
          type: 'object',
          description: 'Some settings and their new values (decimals as JSON numbers or decimal strings; null clears a nullable setting). Rules between settings: late_fee_min ≤ late_fee_max; late_fee_percent and late_fee_fixed are not both set.',
          additionalProperties: false,
          properties: Object.fromEntries(PRODUCT_SETTINGS.map((setting) => [setting.name, settingSchema(setting, true)])),
        },
        Product: {
          type: 'object',
          required: ['id', 'settings', 'defaults', 'fields'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', format: 'uuid' },
            settings: { $ref: '#/components/schemas/ProductSettings' },
            defaults: { $ref: '#/components/schemas/ProductSettings' },
            fields: {
              type: 'array',
              description: 'The fields of POST/PATCH /api/loan: built-in ones, then custom ones (as `loanql product field list` shows them).',
              items: {
                type: 'object',
                required: ['body_key', 'type', 'required', 'default', 'options', 'stored_in', 'custom'],
                additionalProperties: false,
                properties: {
                  body_key: { type: 'string' },
                  type: { type: 'string' },
                  required: { type: 'boolean' },
                  default: { description: 'The value a new loan gets when the body does not give the field; null: none.' },
                  options: { type: ['array', 'null'], items: { type: 'string' } },
                  stored_in: { type: 'string' },
                  custom: { type: 'boolean' },
                },
              },
            },
          },
        },
        ProductEnvelope: { type: 'object', required: ['product'], additionalProperties: false, properties: { product: { $ref: '#/components/schemas/Product' } } },
        ProductUpdated: {
          type: 'object',
          required: ['product', 'changed', 'replayed_loans'],
          additionalProperties: false,
          properties: {
            product: { $ref: '#/components/schemas/Product' },
            changed: { type: 'array', items: { type: 'string' }, description: 'The settings whose value changed.' },
            replayed_loans: { type: 'integer', minimum: 0, description: "How many of the product's loans were replayed (0 when no changed setting affects the ledger)." },
          },
        },
        AccountProfile: {
          type: 'object',
          description: "The lender's profile: each field null when not given. An empty profile prints the account's name alone on its letters.",
          required: PROFILE_FIELDS.map((field) => field.name),
          additionalProperties: false,
          properties: Object.fromEntries(PROFILE_FIELDS.map((field) => [field.name, profileFieldSchema(field)])),
        },
        AccountProfileChange: {
          type: 'object',
          description: 'Some of the profile\'s fields: each a string (trimmed; empty clears it) or null (clears it).',
          additionalProperties: false,
          properties: Object.fromEntries(PROFILE_FIELDS.map((field) => [field.name, { type: ['string', 'null'], maxLength: field.maxLength, description: profileFieldSchema(field).description }])),
        },
        Account: {
          type: 'object',
          required: ['slug', 'name', 'profile', 'letterhead'],
          additionalProperties: false,
          properties: {
            slug: { type: 'string' },
            name: { type: 'string', description: "The account's name (`loanql account set --name`); the letterhead's name when the profile has no legal name." },
            profile: { $ref: '#/components/schemas/AccountProfile' },
            letterhead: {
              type: 'object',
              description: 'What heads the payoff letter and the investor statement, made from the profile.',
              required: ['name', 'address_lines', 'contact'],
              additionalProperties: false,
              properties: {
                name: { type: 'string' },
                address_lines: { type: 'array', items: { type: 'string' } },
                contact: { type: ['string', 'null'], description: 'Phone and e-mail on one line; null when neither is given.' },
              },
            },
          },
        },
        AccountEnvelope: { type: 'object', required: ['account'], additionalProperties: false, properties: { account: { $ref: '#/components/schemas/Account' } } },
        AccountUpdated: {
          type: 'object',
          required: ['account', 'changed'],
          additionalProperties: false,
          properties: {
            account: { $ref: '#/components/schemas/Account' },
            changed: { type: 'array', items: { type: 'string' }, description: 'The profile fields whose value changed (none: nothing was written).' },
          },
        },
        PermissionError: {
          type: 'object',
          required: ['error', 'role', 'permission'],
          properties: {
            error: { type: 'string' },
            role: { type: 'string' },
            permission: { enum: ['loans.select', 'loans.insert', 'loans.update', 'loans.delete', 'loans.insert.columns', 'loans.update.columns', 'loans.insert.check', 'loans.update.check', 'product.update', 'account.update', 'distributions.select', 'remittances.insert'] },
            code: { const: 'permission-denied', description: 'Set when the operation is for admin keys only (PATCH /api/product, PATCH /api/account, POST /api/remittances) or needs a read of distribution lines the role lacks.' },
            fields: { type: 'object', additionalProperties: { type: 'string' }, description: 'Each body field the role may not write, with why.' },
          },
        },
        PayoffQuote: {
          type: 'object',
          description: 'SPEC §12 R5: payoff = principal_outstanding + interest_due + accrued_interest − interest_paid_ahead + fees_due − credit_balance, as of the day; per_diem is the interest of one more day. A later day is quoted anew.',
          required: ['loan_id', 'as_of', 'payoff', 'principal_outstanding', 'interest_due', 'accrued_interest', 'interest_paid_ahead', 'fees_due', 'credit_balance', 'per_diem', 'days_past_due'],
          additionalProperties: false,
          properties: {
            loan_id: { type: 'string' },
            as_of: { type: 'string', format: 'date' },
            payoff: { type: 'number' },
            principal_outstanding: { type: 'number' },
            interest_due: { type: 'number' },
            accrued_interest: { type: 'number' },
            interest_paid_ahead: { type: 'number' },
            fees_due: { type: 'number' },
            credit_balance: { type: 'number' },
            per_diem: { type: 'number' },
            days_past_due: { type: 'integer' },
          },
        },
        DistributionLines: {
          type: 'object',
          required: ['from', 'to', 'loan_id', 'count', 'total', 'limit', 'offset', 'next', 'distributions'],
          additionalProperties: false,
          properties: {
            from: { type: ['string', 'null'], format: 'date' },
            to: { type: ['string', 'null'], format: 'date' },
            loan_id: { type: ['string', 'null'] },
            count: { type: 'integer', minimum: 0, description: 'Every line the filters select, on every page.' },
            total: { type: 'number', description: 'The sum of those lines\' amounts (every page).' },
            limit: { type: 'integer', minimum: 0 },
            offset: { type: 'integer', minimum: 0 },
            next: { type: ['string', 'null'], description: 'The address of the next page (same filters and limit), or null on the last page.' },
            distributions: { type: 'array', items: { $ref: '#/components/schemas/Distribution' } },
          },
        },
        Distribution: {
          type: 'object',
          description: 'One line: a party (a funding source, or the lender when funding_source_id is null) and a component of one payment\'s allocation.',
          required: ['id', 'loan_id', 'payment_id', 'funding_source_id', 'person_id', 'component', 'amount', 'adjustment', 'cause_payment_id', 'date', 'created_at'],
          additionalProperties: false,
          properties: {
            id: { type: 'string' },
            loan_id: { type: 'string' },
            payment_id: { type: 'string' },
            funding_source_id: { type: ['string', 'null'] },
            person_id: { type: ['string', 'null'] },
            component: { enum: ['principal', 'interest', 'fees'] },
            amount: { type: 'number', description: 'Negative on an adjustment that takes money back.' },
            adjustment: { type: 'boolean' },
            cause_payment_id: { type: ['string', 'null'], description: 'An adjustment\'s cause: the payment whose posting or reversal re-derived the allocation.' },
            date: { type: 'string', format: 'date' },
            created_at: { type: 'string' },
          },
        },
        Ledger: {
          type: 'object',
          description: 'SPEC §12: the loan\'s balances as of the day, every payment (reversed ones too) with its allocation lines, and its fees.',
          required: ['loan_id', 'status', 'date_closed', 'as_of', 'balances', 'payments', 'fees'],
          additionalProperties: false,
          properties: {
            loan_id: { type: 'string', format: 'uuid' },
            status: { type: 'string', enum: [...LOAN_STATUSES] },
            date_closed: { type: ['string', 'null'], format: 'date' },
            as_of: { type: 'string', format: 'date' },
            balances: {
              type: 'object',
              description: 'As of the day. A lead (not funded) owes nothing: its money figures are null (migration 0084), its days past due 0.',
              required: ['principal_outstanding', 'interest_due', 'fees_due', 'credit_balance', 'oldest_unpaid_due', 'accrued_interest', 'per_diem', 'payoff', 'days_past_due'],
              additionalProperties: false,
              properties: {
                principal_outstanding: LEAD_NULL,
                interest_due: LEAD_NULL,
                fees_due: LEAD_NULL,
                credit_balance: LEAD_NULL,
                oldest_unpaid_due: { type: ['string', 'null'], format: 'date', description: 'The due date of the oldest schedule row not paid in full; null when none is, or for a lead.' },
                accrued_interest: LEAD_NULL,
                per_diem: LEAD_NULL,
                payoff: LEAD_NULL,
                days_past_due: { type: 'integer', minimum: 0 },
              },
            },
            payments: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'date', 'amount', 'type', 'method', 'date_reversed', 'reversal_reason', 'posted_at', 'allocations'],
                additionalProperties: false,
                properties: {
                  id: { type: 'string', format: 'uuid' },
                  date: { type: 'string', format: 'date' },
                  amount: { type: 'number' },
                  type: { type: 'string', enum: ['regular', 'payoff', 'principal', 'refund', 'fee'] },
                  method: { type: ['string', 'null'] },
                  date_reversed: { type: ['string', 'null'], format: 'date' },
                  reversal_reason: { type: ['string', 'null'], enum: ['nsf', 'error', 'returned', 'other', null] },
                  posted_at: { type: 'string', description: 'When it was posted (timestamptz): payments of one day are applied in this order.' },
                  allocations: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['row_number', 'fee_id', 'component', 'amount'],
                      additionalProperties: false,
                      properties: {
                        row_number: { type: ['integer', 'null'], description: 'The schedule row paid; null for a fee, credit, a refund or a curtailment.' },
                        fee_id: { type: ['string', 'null'], format: 'uuid' },
                        component: { type: 'string', enum: ['interest', 'principal', 'fee', 'credit', 'refund'] },
                        amount: { type: 'number' },
                      },
                    },
                  },
                },
              },
            },
            fees: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'kind', 'row_number', 'date', 'amount', 'paid', 'waived', 'waived_on', 'waived_by', 'waived_reason'],
                additionalProperties: false,
                properties: {
                  id: { type: 'string', format: 'uuid' },
                  kind: { type: 'string', enum: ['late', 'nsf', 'manual'] },
                  row_number: { type: ['integer', 'null'] },
                  date: { type: 'string', format: 'date' },
                  amount: { type: 'number' },
                  paid: { type: 'number' },
                  waived: { type: 'number' },
                  waived_on: { type: ['string', 'null'], format: 'date' },
                  waived_by: { type: ['string', 'null'] },
                  waived_reason: { type: ['string', 'null'] },
                },
              },
            },
          },
        },
      },
    },
  };
  // Only the operations the caller's role may use (GET: select, POST: insert, PATCH: update, DELETE: delete).
  const paths = document.paths as Record<string, Record<string, unknown>>;
  const allowed: readonly [string, string, boolean][] = [
    ['/api/loan', 'get', access.select],
    ['/api/loan', 'post', access.insert],
    ['/api/loan/{id}', 'get', access.select],
    ['/api/loan/{id}', 'patch', access.update],
    ['/api/loan/{id}', 'delete', access.delete ?? false],
    ['/api/loan/{id}/payoff', 'get', access.select],
    ['/api/loan/{id}/ledger', 'get', access.select],
    ['/api/product', 'get', access.select],
    ['/api/product', 'patch', access.productUpdate],
    ['/api/account', 'get', access.select],
    ['/api/account', 'patch', access.accountUpdate ?? access.productUpdate],
    ['/api/investors/{person_id}/statement', 'get', access.statements ?? true],
    ['/api/remittances', 'get', access.remittances ?? true],
    ['/api/remittances', 'post', access.remittanceMark ?? true],
    ['/api/remittances/{id}', 'get', access.remittances ?? true],
    ['/api/distributions', 'get', access.select],
  ];
  for (const [path, method, yes] of allowed) if (!yes) delete paths[path]![method];
  for (const path of Object.keys(paths)) if (!['get', 'post', 'patch', 'delete'].some((method) => method in paths[path]!)) delete paths[path];
  // Any operation may meet the key's rate limit or a database out of reach (api/rateLimit.ts, api/unavailable.ts);
  // any write, concurrent writes that PostgreSQL undid it for on each of its runs (db/conflictRetry.ts).
  for (const item of Object.values(paths)) {
    for (const method of ['get', 'post', 'patch', 'delete']) {
      const operation = item[method] as { responses: Record<string, { description: string }> } | undefined;
      if (!operation) continue;
      operation.responses = { ...operation.responses, ...everyOperation };
      if (method === 'get') continue;
      const conflict = operation.responses['409'];
      operation.responses['409'] = conflict ? { ...conflict, description: `${conflict.description} Or: ${WRITE_CONFLICT}` } : { description: WRITE_CONFLICT, ...json('Error') };
    }
  }
  return document;
}
