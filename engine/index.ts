/** Public surface of `engine/`: the GraphQL engine built from resolved metadata. */
export { GraphEngine, type EngineOptions, type GraphRequest, type PreparedRequest, type Principal, type StatementGuard } from './execute/graphEngine.js';
export { RequestError, type ResponseError } from './execute/errors.js';
