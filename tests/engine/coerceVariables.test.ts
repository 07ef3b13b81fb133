import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getVariableValues, parse, type OperationDefinitionNode } from 'graphql';
import { buildSchema } from '../../engine/schema/buildSchema.js';
import { scalarVariableCoercer } from '../../engine/execute/coerceVariables.js';
import { variablesWithNul } from '../../engine/validation/nulCharacters.js';
import { assumeEmptyCatalogue, loadMetadataFile } from '../../metadata/index.js';
import { METADATA_PATH } from '../support/http.js';

/**
 * Issue 20: the engine coerces the variables of an operation whose variables are all scalars
 * without graphql-js (`engine/execute/coerceVariables.ts`) and falls back to graphql-js for
 * anything it does not answer itself. Generated definitions and inputs (fast-check, fixed seed):
 * whenever the fast path answers, graphql-js accepts the same input with the very same values
 * (and the NUL check finds nothing); whenever graphql-js or the NUL check refuses an input, the
 * fast path declines, so the error reported is graphql-js's.
 */
const schema = buildSchema(assumeEmptyCatalogue(loadMetadataFile(METADATA_PATH)));

const TYPES = ['String', 'Int', 'Boolean', 'uuid', 'date', 'timestamptz', 'numeric', 'jsonb'] as const;
const DEFAULTS: Readonly<Record<(typeof TYPES)[number], string>> = {
  String: '"x"',
  Int: '3',
  Boolean: 'true',
  uuid: '"00000000-0000-4000-8000-000000000000"',
  date: '"2026-02-28"',
  timestamptz: '"2026-02-28T10:00:00Z"',
  numeric: '"12.50"',
  jsonb: '{a: 1}',
};

const scalarValue = fc.oneof(
  fc.constantFrom('2026-02-29', '2024-02-29', '00000000-0000-4000-8000-000000000000', '12.50', '1e3', 'abc', '', 'a\u0000b', '2026-02-28T10:00:00Z', '2147483648', 'true'),
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.constantFrom(2147483648, -2147483649, 1.5, Number.MAX_SAFE_INTEGER, 0, -0),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom([], ['x'], { a: 1 }, { a: 'x\u0000' }),
);

const definition = fc.record({
  type: fc.constantFrom(...TYPES),
  nonNull: fc.boolean(),
  withDefault: fc.boolean(),
  value: scalarValue,
});

describe('fast coercion of scalar variables', () => {
  it('agrees with graphql-js on every generated input, or declines', () => {
    let answered = 0;
    let declined = 0;
    fc.assert(
      fc.property(fc.array(definition, { minLength: 1, maxLength: 4 }), (definitions) => {
        const text = `query Q(${definitions.map((d, i) => `$v${i}: ${d.type}${d.nonNull ? '!' : ''}${d.withDefault ? ` = ${DEFAULTS[d.type]}` : ''}`).join(', ')}) { __typename }`;
        const operation = parse(text).definitions[0] as OperationDefinitionNode;
        const inputs: Record<string, unknown> = {};
        definitions.forEach((d, i) => {
          if (d.value !== undefined) inputs[`v${i}`] = d.value;
        });
        const coercer = scalarVariableCoercer(schema, operation);
        assert.ok(coercer, text);
        const fast = coercer(inputs);
        const slow = getVariableValues(schema, operation.variableDefinitions ?? [], inputs, { maxErrors: 50 });
        const nul = variablesWithNul(operation, new Map(Object.entries(inputs)));
        if (fast === null) {
          declined += 1;
          return;
        }
        answered += 1;
        assert.equal(slow.errors, undefined, `${text} ${JSON.stringify(inputs)}: graphql-js refused what the fast path accepted`);
        assert.deepEqual(nul, [], `${text}: a NUL passed the fast path`);
        assert.deepEqual(fast, new Map(Object.entries(slow.coerced!)), `${text} ${JSON.stringify(inputs)}`);
      }),
      { seed: 20_2026, numRuns: 3000 },
    );
    // Both branches were exercised, so neither half of the property is vacuous.
    assert.ok(answered > 300 && declined > 300, `answered ${answered}, declined ${declined}`);
  });

  it('declines operations with a list, enum or input-object variable (graphql-js coerces those)', () => {
    for (const type of ['[uuid!]', 'order_by', 'loans_bool_exp']) {
      const operation = parse(`query Q($v: ${type}) { __typename }`).definitions[0] as OperationDefinitionNode;
      assert.equal(scalarVariableCoercer(schema, operation), null, type);
    }
  });
});
