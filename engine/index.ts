/** Public surface of `engine/`: the GraphQL engine built from resolved metadata. */
export { DEFAULT_MAX_FIELDS, DEFAULT_MAX_QUERY_COST, DEFAULT_MAX_ROOT_FIELDS, GraphEngine, type EngineOptions, type GraphRequest, type PreparedRequest, type Principal, type StatementGuard } from './execute/graphEngine.js';
export { RequestError, type ResponseError } from './execute/errors.js';
