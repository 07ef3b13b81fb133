import { GraphQLInputObjectType, GraphQLList, GraphQLNonNull, type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, type GraphQLObjectType } from 'graphql';
import type { Collection, Metadata } from '../../metadata/index.js';
import type { FieldRole } from './schemaVocabulary.js';
import { SCALAR_FOR_TYPE } from './scalars.js';

const role = (value: FieldRole): { loanql: FieldRole } => ({ loanql: value });

/**
 * Hasura's custom functions: for each tracked function whose collection the view has,
 * `<fn>(args: <fn>_args, distinct_on, where, order_by, limit, offset): [<collection>!]!` and —
 * where the view may aggregate the collection — `<fn>_aggregate(…): <collection>_aggregate!`.
 * `args` is non-null when an argument has no default (that argument is non-null too), and left
 * out when the function takes none. On `query_root` only (not subscriptions).
 */
export function functionFields(
  metadata: Metadata,
  types: { readonly objectTypes: ReadonlyMap<string, GraphQLObjectType>; readonly aggregateTypes: ReadonlyMap<string, GraphQLObjectType> },
  listArgs: (collection: Collection) => GraphQLFieldConfigArgumentMap,
): GraphQLFieldConfigMap<unknown, unknown> {
  const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const fn of metadata.functions.values()) {
    const collection = metadata.collections.get(fn.returns);
    if (!collection) continue;
    const required = [...fn.args.values()].some((arg) => arg.required);
    const argsType = fn.args.size
      ? new GraphQLInputObjectType({
          name: `${fn.name}_args`,
          description: `arguments of the SQL function ${fn.function}`,
          fields: Object.fromEntries([...fn.args].map(([name, arg]) => [name, { type: arg.required ? new GraphQLNonNull(SCALAR_FOR_TYPE[arg.type]) : SCALAR_FOR_TYPE[arg.type] }])),
        })
      : null;
    const args: GraphQLFieldConfigArgumentMap = {
      ...(argsType ? { args: { type: required ? new GraphQLNonNull(argsType) : argsType, description: `input parameters for the function "${fn.function}"` } } : {}),
      ...listArgs(collection),
    };
    fields[fn.name] = {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(types.objectTypes.get(collection.name)!))),
      description: fn.description ?? `execute the function "${fn.function}" which returns "${collection.table}"`,
      args,
      extensions: role({ kind: 'functionRoot', root: 'select', fn, collection }),
    };
    if (collection.allowAggregations)
      fields[`${fn.name}_aggregate`] = {
        type: new GraphQLNonNull(types.aggregateTypes.get(collection.name)!),
        description: `execute the function "${fn.function}" and query aggregates on the result of table type "${collection.table}"`,
        args,
        extensions: role({ kind: 'functionRoot', root: 'select_aggregate', fn, collection }),
      };
  }
  return fields;
}
