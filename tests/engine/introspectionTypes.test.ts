import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  isListType,
  validateSchema,
  type GraphQLSchema,
  type GraphQLType,
  type IntrospectionQuery,
} from 'graphql';
import { createAccountWithKey, startTestServer, tokenHeader, type TestServer } from '../support/http.js';
import { openTestDatabase, testDatabaseKind, type TestDatabase } from '../support/testDatabase.js';

/**
 * Issue 30, done-when 4: what GraphiQL (or any client building a schema from introspection)
 * sees of the new forms. The standard introspection query (graphql-js `getIntrospectionQuery`,
 * what GraphiQL sends) goes to `/api/graph` with a key, and `buildClientSchema` must build a
 * valid schema from the answer holding the new scalars (bigint, smallint, float8, Float for
 * real, citext, timestamp, time), their comparison types with Hasura's operators, the
 * statistical aggregate fields and order_by types, the aggregate predicates' input types and a
 * computed field with its `args` input. Each type is read from the client's schema, so what is
 * asserted is what a client is told, not the server's internal schema.
 */
const SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS citext;
  CREATE TABLE intro_branches (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    name citext NOT NULL,
    rank smallint,
    score float8,
    weight real,
    budget bigint,
    opened_at timestamp,
    opens time,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE intro_visits (
    account_id uuid NOT NULL,
    id bigserial NOT NULL,
    branch_id bigint NOT NULL,
    minutes integer NOT NULL,
    resolved boolean NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, branch_id) REFERENCES intro_branches (account_id, id)
  );
  CREATE FUNCTION intro_scaled_score(p_account uuid, p_id bigint, factor float8 DEFAULT 1) RETURNS float8
    LANGUAGE sql STABLE AS $$ SELECT score * factor FROM intro_branches WHERE account_id = p_account AND id = p_id $$
`;

const METADATA = `
version: 1
tenant_column: account_id
collections:
  branches:
    table: intro_branches
    primary_key: id
    fields: { id: bigint, name: citext, rank: smallint, score: float8, weight: real, budget: bigint, opened_at: timestamp, opens: time }
    relationships:
      visits: { array: visits, on: { id: branch_id } }
    computed_fields:
      scaled_score: { function: intro_scaled_score, type: float8, args: { factor: float8 } }
  visits:
    table: intro_visits
    primary_key: id
    fields: { id: bigint, branch_id: bigint, minutes: integer, resolved: boolean }
    relationships:
      branch: { object: branches, on: { branch_id: id } }
`;

let database: TestDatabase;
let server: TestServer;
let directory: string;
let schema: GraphQLSchema;

before(async () => {
  database = await openTestDatabase();
  for (const statement of SCHEMA.split(/;\n/).filter((text) => text.trim())) await database.db.query(statement);
  directory = mkdtempSync(join(tmpdir(), 'loanql-introspection-'));
  const metadataPath = join(directory, 'intro.yaml');
  writeFileSync(metadataPath, METADATA);
  server = await startTestServer(database.db, { metadataPath });
  const { apiKey } = await createAccountWithKey(database.db);
  const response = await fetch(`${server.url}/api/graph`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...tokenHeader(apiKey.key) },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const body = JSON.parse(text) as { data?: IntrospectionQuery; errors?: unknown };
  assert.equal(body.errors, undefined, text);
  schema = buildClientSchema(body.data!);
});
after(async () => {
  await server?.close();
  await database?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function objectType(name: string): GraphQLObjectType {
  const type = schema.getType(name);
  assert.ok(type instanceof GraphQLObjectType, `${name} is an object type (got ${String(type)})`);
  return type;
}
function inputType(name: string): GraphQLInputObjectType {
  const type = schema.getType(name);
  assert.ok(type instanceof GraphQLInputObjectType, `${name} is an input type (got ${String(type)})`);
  return type;
}
/** The named type of each field, by field name (`String!` → `String`). */
function fieldTypes(type: GraphQLObjectType | GraphQLInputObjectType): Record<string, string> {
  return Object.fromEntries(Object.entries(type.getFields()).map(([name, field]) => [name, getNamedType(field.type as GraphQLType).name]));
}

describe(`GraphiQL's introspection shows issue 30's types (${testDatabaseKind})`, () => {
  it('builds a valid client schema from the standard introspection query', () => {
    assert.deepEqual(validateSchema(schema), []);
    assert.equal(schema.getQueryType()?.name, 'query_root');
    assert.equal(schema.getMutationType() ?? null, null, 'the metadata declares no writes');
    for (const root of ['branches', 'branches_by_pk', 'branches_aggregate', 'visits', 'visits_by_pk', 'visits_aggregate']) assert.ok(schema.getQueryType()!.getFields()[root], root);
  });

  it('shows the new scalars, and each column with its scalar (real as Float, as Hasura)', () => {
    for (const name of ['bigint', 'smallint', 'float8', 'citext', 'timestamp', 'time', 'Float']) assert.ok(schema.getType(name) instanceof GraphQLScalarType, name);
    assert.deepEqual(fieldTypes(objectType('branches')), {
      id: 'bigint',
      name: 'citext',
      rank: 'smallint',
      score: 'float8',
      weight: 'Float',
      budget: 'bigint',
      opened_at: 'timestamp',
      opens: 'time',
      scaled_score: 'float8',
      visits: 'visits',
      visits_aggregate: 'visits_aggregate',
    });
    // The key's argument of _by_pk is the key's own scalar, required.
    const byPk = schema.getQueryType()!.getFields().branches_by_pk!;
    assert.deepEqual(
      byPk.args.map((arg) => [arg.name, String(arg.type)]),
      [['id', 'bigint!']],
    );
  });

  it("shows each new scalar's comparison type with Hasura's operators, citext with the pattern ones", () => {
    const where = fieldTypes(inputType('branches_bool_exp'));
    assert.equal(where.rank, 'smallint_comparison_exp');
    assert.equal(where.score, 'float8_comparison_exp');
    assert.equal(where.weight, 'Float_comparison_exp');
    assert.equal(where.budget, 'bigint_comparison_exp');
    assert.equal(where.name, 'citext_comparison_exp');
    assert.equal(where.opened_at, 'timestamp_comparison_exp');
    assert.equal(where.opens, 'time_comparison_exp');
    const ordered = ['_eq', '_gt', '_gte', '_in', '_is_null', '_lt', '_lte', '_neq', '_nin'];
    for (const scalar of ['bigint', 'smallint', 'float8', 'Float', 'timestamp', 'time']) {
      const comparison = inputType(`${scalar}_comparison_exp`);
      assert.deepEqual(Object.keys(comparison.getFields()).sort(), ordered, scalar);
      assert.equal(String(comparison.getFields()._eq!.type), scalar, `${scalar}._eq`);
      assert.equal(String(comparison.getFields()._in!.type), `[${scalar}!]`, `${scalar}._in`);
      assert.equal(String(comparison.getFields()._is_null!.type), 'Boolean', `${scalar}._is_null`);
    }
    const citext = inputType('citext_comparison_exp').getFields();
    for (const operator of [...ordered, '_like', '_ilike', '_nlike', '_nilike', '_similar', '_regex', '_iregex']) assert.ok(citext[operator], `citext.${operator}`);
    assert.equal(String(citext._ilike!.type), 'citext');
  });

  it('shows the statistical aggregates as aggregate fields and as keys of the aggregate order_by', () => {
    const statistical = ['stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop'];
    const aggregateFields = objectType('branches_aggregate_fields').getFields();
    for (const fn of statistical) {
      assert.equal(getNamedType(aggregateFields[fn]!.type).name, `branches_${fn}_fields`, fn);
      // Over the numeric-like columns and (session 40) computed fields, each a nullable number (PostgreSQL's answer text).
      const fields = objectType(`branches_${fn}_fields`).getFields();
      assert.deepEqual(Object.keys(fields).sort(), ['budget', 'id', 'rank', 'scaled_score', 'score', 'weight'], fn);
      for (const field of Object.values(fields)) assert.ok(!(field.type instanceof GraphQLNonNull), `${fn}.${field.name} is nullable`);
    }
    const orderBy = fieldTypes(inputType('visits_aggregate_order_by'));
    for (const fn of statistical) {
      assert.equal(orderBy[fn], `visits_${fn}_order_by`, fn);
      assert.deepEqual(fieldTypes(inputType(`visits_${fn}_order_by`)), { branch_id: 'order_by', id: 'order_by', minutes: 'order_by' }, fn);
    }
    assert.ok(schema.getType('order_by') instanceof GraphQLEnumType);
    assert.equal(fieldTypes(inputType('branches_order_by')).visits_aggregate, 'visits_aggregate_order_by');
  });

  it("shows the aggregate predicates' input types: count with arguments/distinct/filter/predicate, bool_and and bool_or", () => {
    assert.equal(fieldTypes(inputType('branches_bool_exp')).visits_aggregate, 'visits_aggregate_bool_exp');
    const predicates = inputType('visits_aggregate_bool_exp').getFields();
    assert.deepEqual(Object.keys(predicates).sort(), ['bool_and', 'bool_or', 'count']);
    const count = inputType(getNamedType(predicates.count!.type).name).getFields();
    assert.deepEqual(
      Object.fromEntries(Object.entries(count).map(([name, field]) => [name, String(field.type)])),
      { arguments: '[visits_select_column!]', distinct: 'Boolean', filter: 'visits_bool_exp', predicate: 'Int_comparison_exp!' },
    );
    const boolAnd = inputType(getNamedType(predicates.bool_and!.type).name).getFields();
    assert.equal(String(boolAnd.predicate!.type), 'Boolean_comparison_exp!');
    assert.equal(String(boolAnd.filter!.type), 'visits_bool_exp');
    // `arguments` of bool_and names only the boolean columns.
    const boolColumns = getNamedType(boolAnd.arguments!.type);
    assert.ok(boolColumns instanceof GraphQLEnumType);
    assert.deepEqual(boolColumns.getValues().map((value) => value.name), ['resolved']);
    const selectColumns = schema.getType('visits_select_column');
    assert.ok(selectColumns instanceof GraphQLEnumType);
    assert.deepEqual(selectColumns.getValues().map((value) => value.name).sort(), ['branch_id', 'id', 'minutes', 'resolved']);
  });

  it('shows a computed field with an argument: its scalar and its args input type', () => {
    const field = objectType('branches').getFields().scaled_score!;
    assert.equal(String(field.type), 'float8');
    assert.deepEqual(field.args.map((arg) => arg.name), ['args']);
    const args = inputType(getNamedType(field.args[0]!.type).name).getFields();
    assert.deepEqual(Object.fromEntries(Object.entries(args).map(([name, arg]) => [name, String(arg.type)])), { factor: 'float8' });
    assert.ok(!isListType(field.type));
  });
});
