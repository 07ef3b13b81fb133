/** Public surface of `engine/`: the GraphQL engine built from resolved metadata. */
export { GraphEngine, type Admit, type RespondOptions } from './execute/graphEngine.js';
export { DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_QUERY_COST, type EngineOptions } from './execute/engineOptions.js';
export { DEFAULT_MAX_FIELDS } from './validation/maxFieldsRule.js';
export { DEFAULT_MAX_ROOT_FIELDS } from './validation/maxRootFieldsRule.js';
export { STREAM_BATCH_MAX } from './plan/argumentValues.js';
export type { GraphRequest } from './execute/checkEnvelope.js';
export type { PreparedRequest } from './execute/prepareRequest.js';
export type { Principal } from './execute/bindParam.js';
export { guardHolds } from './execute/guardHolds.js';
export { chooseOperation, parseDocumentText } from './execute/loadOperation.js';
export { statementGuard, type StatementGuard } from './sql/statementGuard.js';
export { GuardFailed, isMetadataMismatch, MetadataMismatch, RequestError, type ResponseError } from './execute/errors.js';
export type { ErrorCode } from './errorCode.js';
export { newEngineFacts, type EngineFacts } from './execute/engineFacts.js';
export { LiveQueries, type LiveAdmission, type LiveQueryOptions, type LiveReads, type LiveSink, type LiveStatement, type LiveSubscription } from './execute/live/liveQueries.js';
export type { PreparedStream } from './execute/prepareRequest.js';
