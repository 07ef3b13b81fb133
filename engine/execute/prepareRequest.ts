import { runMutationPasses, runPlanPasses } from '../plan/passes/index.js';
import { GraphQLError, type ValidationRule } from 'graphql';
import { rootFields } from '../document/foldSelections.js';
import { planMutation } from '../plan/planMutation.js';
import { planOperation, STREAM_CURSOR_VARIABLE } from '../plan/planOperation.js';
import type { StreamCursor } from '../plan/ir.js';
import { queryCost } from '../plan/queryCost.js';
import { compileMutation, type CompiledMutation } from '../sql/compileMutation.js';
import { compileOperation } from '../sql/compileOperation.js';
import { genericPlanSafety, type Param } from '../sql/fragment.js';
import { bindParam, callerOf, type Binding, type Principal } from './bindParam.js';
import { checkEnvelope, type CheckedEnvelope, type GraphRequest } from './checkEnvelope.js';
import { coerceVariables } from './coerceVariables.js';
import { DEFAULT_MAX_INSERT_OBJECTS, DEFAULT_MAX_QUERY_COST, type EngineContext } from './engineOptions.js';
import { RequestError, toResponseError } from './errors.js';
import { answerIntrospection, type IntrospectionPart } from './introspection.js';
import { loadOperation } from './loadOperation.js';
import { PlanCache, type CachedOperation } from './planCache.js';
import { checkWrittenValue } from './valueChecks.js';
import type { ErrorCode } from '../errorCode.js';
import { shortHash, type EngineFacts } from './engineFacts.js';
import { refreshKeys } from './live/refreshKeys.js';

/** A request ready to run: the statement and its values, or a response needing no database. */
export type PreparedRequest =
  | {
      readonly kind: 'statement';
      readonly text: string;
      readonly params: readonly Param[];
      readonly values: readonly unknown[];
      readonly introspection: IntrospectionPart | null;
      /** The statement comes from the plan cache and runs again with other values: worth keeping prepared. */
      readonly reusable: boolean;
      /** The plan's estimated cost (`plan/queryCost.ts`), what admission by cost reserves. */
      readonly cost: number;
      /** A streaming subscription: where its cursor parameter is and what it starts from. */
      readonly stream: PreparedStream | null;
      /** A subscription: table → the parameters holding the loan its rows belong to (`live/refreshKeys.ts`). */
      readonly refreshKeys: ReadonlyMap<string, readonly number[]> | null;
    }
  | { readonly kind: 'static'; readonly body: string }
  /** A mutation: its statements run in one transaction (`runMutation`). */
  | {
      readonly kind: 'mutation';
      readonly program: CompiledMutation;
      readonly bind: (param: Param) => unknown;
      /** The statements come from the plan cache: worth keeping prepared, like a query's. */
      readonly reusable: boolean;
    };

/** A stream's cursor in a prepared statement: `values[cursorIndex]` is the position, from `initialValue`. */
export interface PreparedStream {
  /** The root field's alias, and the alias under which each row carries the cursor field. */
  readonly alias: string;
  readonly cursorAlias: string;
  readonly cursorIndex: number;
  readonly initialValue: unknown;
}

/** What preparing needs besides the engine: its plan cache and validation rules. */
export interface Preparation extends EngineContext {
  readonly cache: PlanCache;
  readonly rules: readonly ValidationRule[];
}

/** The operation of a request, from the plan cache or loaded into it (`loadOperation`). */
export function operationOf(engine: Preparation, { query, operationName }: CheckedEnvelope, facts?: EngineFacts): CachedOperation {
  const cacheKey = PlanCache.keyOf(query, operationName);
  const hit = engine.cache.get(cacheKey);
  if (facts) facts.planCacheHit = hit !== undefined;
  if (hit) return hit;
  const { maxRootFields, maxFields } = engine.options;
  const entry = loadOperation(engine.schema, engine.rules, { maxRootFields, maxFields }, cacheKey, query, operationName);
  engine.cache.set(entry);
  return entry;
}

/** `operationOf`, telling `facts.phase` how long parsing and validating (or the cache lookup) took, refused or not. */
function timedOperationOf(engine: Preparation, envelope: CheckedEnvelope, facts: EngineFacts): CachedOperation {
  const parsing = performance.now();
  try {
    return operationOf(engine, envelope, facts);
  } finally {
    facts.phase?.('parse', parsing, performance.now());
  }
}

/**
 * Checks, plans, compiles and binds a request for a principal: envelope → operation (cached) →
 * variables → plan (cached when it does not depend on variable values) → cost → bound values.
 * Throws `RequestError` for client mistakes; runs nothing.
 */
export function prepareRequest(
  engine: Preparation,
  request: GraphRequest,
  principal: Principal,
  facts?: EngineFacts,
  { subscription = false }: { readonly subscription?: boolean } = {},
): { readonly prepared: PreparedRequest; readonly operation: CachedOperation } {
  const envelope = checkEnvelope(request);
  const { operationName, variables } = envelope;
  const cached = facts?.phase ? timedOperationOf(engine, envelope, facts) : operationOf(engine, envelope, facts);
  if (facts) noteOperation(facts, cached, envelope.query);
  if (cached.operation.operation === 'subscription' && !subscription) {
    throw new RequestError([{ message: 'subscriptions run over WebSocket: open graphql-transport-ws on /api/graph (README, "Subscriptions")', extensions: { code: 'validation-failed' satisfies ErrorCode } }], 'document');
  }
  const binding: Binding = { variables: coerceVariables(engine.schema, cached, variables), caller: callerOf(principal), maxRows: engine.options.maxRows, operation: cached.operation };
  if (cached.operation.operation === 'mutation') return { prepared: prepareMutation(engine, cached, binding), operation: cached };

  let introspection: IntrospectionPart | null = null;
  if (cached.hasIntrospection || !cached.needsDatabase) {
    const data = answerIntrospection(engine.schema, cached.introspectionDocument, operationName, variables, { whole: !cached.needsDatabase });
    if (!cached.needsDatabase) return { prepared: { kind: 'static', body: JSON.stringify({ data }) }, operation: cached };
    introspection = { data: data ?? {}, order: [...new Set(rootKeys(cached))] };
  }

  let compiled = cached.compiled;
  let cost = cached.cost;
  if (!compiled) {
    const planned = refusingPlanErrors(() =>
      planOperation(engine.schema, cached.operation, cached.fragments, binding.variables, { maxRows: engine.options.maxRows, collections: engine.metadata.collections }),
    );
    cost = queryCost(planned.plan);
    checkQueryCost(cost, engine.options.maxCost ?? DEFAULT_MAX_QUERY_COST);
    // The IR passes (plan/passes/index.ts), then the compiler only renders.
    const rendered = compileOperation(runPlanPasses(planned.plan, engine.metadata), engine.metadata);
    const refreshing = cached.operation.operation === 'subscription' ? refreshKeys(planned.plan, rendered.params, engine.metadata.changeNoticeKeys, engine.metadata.tablesUnderViews) : null;
    compiled = { ...rendered, stream: planned.stream, refreshKeys: refreshing };
    if (planned.reusable) {
      cached.compiled = compiled;
      cached.cost = cost;
      cached.genericPlanSafety = genericPlanSafety(compiled.params);
      engine.cache.remeasure(cached);
    } else cached.compiled = null;
  }
  if (facts) facts.cost = cost;
  checkQueryCost(cost, engine.options.maxCost ?? DEFAULT_MAX_QUERY_COST);
  const values = compiled.params.map((param) => bindParam(param, binding));
  cached.uses += 1;
  // Only a statement run before is worth preparing on the database's connections: a document
  // seen once (most unique documents) would only fill their prepared-statement maps.
  const reusable = cached.compiled === compiled && cached.uses > 1;
  const stream = compiled.stream ? preparedStream(compiled.stream, compiled.params, binding) : null;
  return { prepared: { kind: 'statement', text: compiled.text, params: compiled.params, values, introspection, reusable, cost, stream, refreshKeys: compiled.refreshKeys }, operation: cached };
}

function preparedStream(stream: StreamCursor, params: readonly Param[], binding: Binding): PreparedStream {
  const initialValue = bindParam(stream.initialValue, binding);
  // A null from a variable (one written in the document is refused when planned): after null, no row is ever read.
  if (initialValue === null || initialValue === undefined) {
    throw new RequestError([{ message: `a stream cursor's initial_value cannot be null: give the ${stream.field.name} to read after`, extensions: { code: 'validation-failed' } }], 'document');
  }
  return {
    alias: stream.alias,
    cursorAlias: stream.cursorAlias,
    cursorIndex: params.findIndex((param) => param.kind === 'var' && param.name === STREAM_CURSOR_VARIABLE),
    initialValue,
  };
}

function prepareMutation(engine: Preparation, cached: CachedOperation, binding: Binding): PreparedRequest {
  let program = cached.compiledMutation;
  if (!program) {
    const planned = refusingPlanErrors(() =>
      planMutation(engine.schema, cached.operation, cached.fragments, binding.variables, {
        maxRows: engine.options.maxRows,
        collections: engine.metadata.collections,
        maxInsertObjects: engine.options.maxInsertObjects ?? DEFAULT_MAX_INSERT_OBJECTS,
      }),
    );
    program = compileMutation(runMutationPasses(planned.plan, engine.metadata), engine.metadata);
    cached.compiledMutation = planned.reusable ? program : null;
    if (planned.reusable) engine.cache.remeasure(cached);
  }
  const bind = (param: Param): unknown => bindParam(param, binding);
  const problems: GraphQLError[] = [];
  for (const check of program.checks) {
    const problem = checkWrittenValue(check, bind(check.param), engine.catalogue);
    if (problem) problems.push(problem);
  }
  if (problems.length) throw new RequestError(problems.map((problem) => toResponseError(problem, 'validation-failed')), 'document');
  // Patterns and computed fields' bounded days in variables are checked now, before the transaction opens (binding checks them).
  for (const statement of [...program.steps.map((step) => step.statement), program.response, ...(program.single ? [program.single] : [])]) {
    for (const param of statement.params) if (param.kind === 'var' && (param.pattern || param.dayRange)) bind(param);
  }
  return { kind: 'mutation', program, bind, reusable: cached.compiledMutation === program };
}

/** A planner's GraphQLError is the client's (`validation-failed`, located). */
function refusingPlanErrors<T>(plan: () => T): T {
  try {
    return plan();
  } catch (error) {
    if (error instanceof GraphQLError) throw new RequestError([toResponseError(error, 'validation-failed')], 'document');
    throw error;
  }
}

/** Refuses a plan whose estimated cost (`plan/queryCost.ts`) is over `limit` (`MAX_QUERY_COST`; 0 = no limit). */
function checkQueryCost(cost: number, limit: number): void {
  if (limit > 0 && cost > limit) {
    const message = `the query's estimated cost ${cost} is over the limit of ${limit} (MAX_QUERY_COST): use fewer aliases, smaller limits, or fewer filters through relationships`;
    throw new RequestError([{ message, extensions: { code: 'query-too-expensive' satisfies ErrorCode, cost, limit } }], 'document');
  }
}

/** The operation's type, name and document hash (memoised on the cached entry). */
function noteOperation(facts: EngineFacts, cached: CachedOperation, query: string): void {
  facts.operationType = cached.operation.operation;
  facts.operationName = cached.operation.name?.value ?? null;
  facts.documentHash = cached.documentHash ??= shortHash(query);
}

function rootKeys(cached: CachedOperation): string[] {
  return rootFields(cached.operation, cached.fragments).map((field) => field.alias?.value ?? field.name.value);
}
