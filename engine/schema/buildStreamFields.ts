import { GraphQLEnumType, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, type GraphQLFieldConfigMap, type GraphQLInputFieldConfigMap, type GraphQLObjectType } from 'graphql';
import { isArrayType, type Metadata, type ScalarType } from '../../metadata/index.js';
import type { FieldRole } from './buildSchema.js';
import { SCALAR_FOR_TYPE } from './scalars.js';

const role = (value: FieldRole): { loanql: FieldRole } => ({ loanql: value });

/** The ordering of a stream's cursor (Hasura's `cursor_ordering`). */
const CURSOR_ORDERING = new GraphQLEnumType({
  name: 'cursor_ordering',
  description: 'ordering argument of a cursor',
  values: { ASC: { value: 'ASC', description: 'ascending ordering of the cursor' }, DESC: { value: 'DESC', description: 'descending ordering of the cursor' } },
});

/** Field types a stream's cursor may be (ordered, comparable; not jsonb). */
const CURSOR_TYPES: readonly ScalarType[] = ['uuid', 'numeric', 'integer', 'text', 'date', 'timestamptz'];

/**
 * Hasura's streaming subscriptions: `<c>_stream(batch_size: Int!, cursor: [<c>_stream_cursor_input]!,
 * where: <c>_bool_exp)` for every collection a role may list, on `subscription_root` only.
 */
export function streamFields(metadata: Metadata, objectTypes: ReadonlyMap<string, GraphQLObjectType>, boolExps: ReadonlyMap<string, GraphQLInputObjectType>): GraphQLFieldConfigMap<unknown, unknown> {
  const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const collection of metadata.collections.values()) {
    if (!collection.rootFields.has('select')) continue;
    const name = collection.name;
    const valueFields: GraphQLInputFieldConfigMap = {};
    for (const field of collection.fields.values()) if (!isArrayType(field.type) && CURSOR_TYPES.includes(field.type)) valueFields[field.name] = { type: SCALAR_FOR_TYPE[field.type] };
    if (!Object.keys(valueFields).length) continue;
    const valueInput = new GraphQLInputObjectType({ name: `${name}_stream_cursor_value_input`, description: `Initial value of the column from where the streaming should start`, fields: valueFields });
    const cursorInput = new GraphQLInputObjectType({
      name: `${name}_stream_cursor_input`,
      description: `Streaming cursor of the table "${name}"`,
      fields: {
        initial_value: { type: new GraphQLNonNull(valueInput), description: 'Stream column input with initial value' },
        ordering: { type: CURSOR_ORDERING, description: 'cursor ordering' },
      },
    });
    fields[`${name}_stream`] = {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(objectTypes.get(name)!))),
      description: `fetch data from the table in a streaming manner: "${collection.table}"`,
      args: {
        batch_size: { type: new GraphQLNonNull(GraphQLInt), description: 'maximum number of rows returned in a single batch' },
        cursor: { type: new GraphQLNonNull(new GraphQLList(cursorInput)), description: 'cursor to stream the results returned by the query' },
        where: { type: boolExps.get(name)!, description: 'filter the rows returned' },
      },
      extensions: role({ kind: 'root', root: 'select_stream', collection }),
    };
  }
  return fields;
}
