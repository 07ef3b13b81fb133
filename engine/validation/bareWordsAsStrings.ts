import { getNamedType, GraphQLString, Kind, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from 'graphql';

/**
 * interface.md §4.4 writes `status: {_neq: completed}`: a bare word where a String is
 * expected. GraphQL reads a bare word as an enum value, which String rejects, so users copying
 * the documented pattern would get an error. This rewrite reads such a word as the string of
 * the same letters; every other enum position (order_by directions, column names) is untouched.
 */
export function bareWordsAsStrings(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      EnumValue(node) {
        const type = typeInfo.getInputType();
        if (type && getNamedType(type) === GraphQLString) return { kind: Kind.STRING, value: node.value, loc: node.loc };
        return undefined;
      },
    }),
  );
}
