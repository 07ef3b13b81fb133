import {
  execute as executeGraphQL,
  getVariableValues,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type FieldNode,
  type SelectionSetNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { queryInOrder, queryThenCommit, StatementFailed, type Database, type Queryable, type QueryOptions, type Statement } from '../../db/index.js';
import type { Catalogue, Metadata } from '../../metadata/index.js';
import { planMutation } from '../plan/planMutation.js';
import { compileMutation, type CompiledMutation } from '../sql/compileMutation.js';
import { checkWrittenValue } from './valueChecks.js';
import { classifyWriteError } from './writeErrors.js';
import { checkCount, planOperation } from '../plan/planOperation.js';
import { patternProblem } from '../plan/patternCost.js';
import { queryCost } from '../plan/queryCost.js';
import { buildSchema } from '../schema/buildSchema.js';
import { compileOperation } from '../sql/compileOperation.js';
import { genericPlanSafety, type Param, type RenderedSql } from '../sql/fragment.js';
import { bareWordsAsStrings } from '../validation/bareWordsAsStrings.js';
import { depthLimitRule } from '../validation/depthLimitRule.js';
import { noNulCharactersRule, variablesWithNul } from '../validation/nulCharacters.js';
import { classifyDatabaseError, RequestError, toResponseError } from './errors.js';
import { inParts, PARTS_FROM_LENGTH } from './inParts.js';
import { scalarVariableCoercer, type VariableCoercer } from './coerceVariables.js';

export interface EngineOptions {
  readonly maxDepth: number;
  readonly maxRows: number | null;
  readonly planCacheSize: number;
  /** The most rows one mutation request inserts, nested rows included (default 1000). */
  readonly maxInsertObjects?: number;
  /** Most estimated cost of one request (`plan/queryCost.ts`); 0 = no limit. */
  readonly maxCost?: number;
  /** Most root fields of one operation (fragments followed); 0 = no limit. */
  readonly maxRootFields?: number;
  /** Most fields of one operation, every fragment spread counted in full; 0 = no limit. */
  readonly maxFields?: number;
}

export const DEFAULT_MAX_INSERT_OBJECTS = 1000;

/**
 * Who a request runs for: an account id (the admin role's keys, the REST and CLI callers), or
 * an account with the variables of its API key (`key.person_id`), bound where a role's filter
 * or preset names them. Pass it to the engine of the key's role (`forRole`).
 */
export type Principal = string | { readonly accountId: string; readonly keyVariables: ReadonlyMap<string, unknown> };

interface Caller {
  readonly accountId: string;
  readonly keyVariables: ReadonlyMap<string, unknown>;
}
const NO_KEY_VARIABLES: ReadonlyMap<string, unknown> = new Map();
const callerOf = (principal: Principal): Caller => (typeof principal === 'string' ? { accountId: principal, keyVariables: NO_KEY_VARIABLES } : principal);
/** Defaults of the request limits (README, Configuration). */
export const DEFAULT_MAX_QUERY_COST = 50_000;
export const DEFAULT_MAX_ROOT_FIELDS = 50;
export const DEFAULT_MAX_FIELDS = 1_000;
/**
 * The plan cache holds at most about this many bytes, whatever `planCacheSize` says: a stream of
 * unique documents would otherwise keep `planCacheSize` of them parsed, planned and compiled.
 * An entry's size is estimated from its texts: a parsed document costs about 140 bytes of heap
 * per character of its text (AST nodes, locations and the token list they keep; measured: 40 KB
 * for a 250-character document with its 1.6 KB statement), a statement 2 bytes per character.
 */
export const PLAN_CACHE_MAX_BYTES = 16 * 1024 * 1024;
const DOCUMENT_BYTES_PER_CHARACTER = 140;
const planCacheEntryBytes = (key: string, entry: CachedOperation): number =>
  Math.max(1, Math.min(PLAN_CACHE_MAX_BYTES, key.length * DOCUMENT_BYTES_PER_CHARACTER + 2 * (entry.compiled?.text.length ?? 0)));

/** A GraphQL-over-HTTP request body, not yet checked. */
export interface GraphRequest {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
  /** GraphQL over HTTP's `extensions`: a map when given; nothing in it is used. */
  readonly extensions?: unknown;
}

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

interface IntrospectionPart {
  readonly data: Readonly<Record<string, unknown>>;
  readonly order: readonly string[];
}

interface CachedOperation {
  readonly cacheKey: string;
  /** Requests prepared from this entry; its statement is marked reusable from the second on. */
  uses: number;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** The compiled statement, when the plan does not depend on variable values. */
  compiled: RenderedSql | null | undefined;
  /** The same for a mutation: its compiled statements. */
  compiledMutation: CompiledMutation | null | undefined;
  /** The estimated cost of `compiled` (`plan/queryCost.ts`). */
  cost: number;
  /** A response of this operation has been large: it runs in parts from now on (`inParts.ts`). */
  inParts: boolean;
  /** Whether `compiled`, once cached, may run on the generic plan (`genericPlanSafety`, worked out when it is cached). */
  genericPlanSafety: ReturnType<typeof genericPlanSafety>;
  /** Statement texts made from `compiled` (guarded, in parts), by kind. */
  readonly derivedTexts: Map<string, string>;
  /** The operation's fast variable coercion (`coerceVariables.ts`): null when it has none; undefined until first use. */
  coerceVariables: VariableCoercer | null | undefined;
  readonly needsDatabase: boolean;
  readonly hasIntrospection: boolean;
  /** The document with only the root fields graphql-js answers itself (`__schema`, `__type`, `__typename`). */
  readonly introspectionDocument: DocumentNode;
}

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/**
 * The query engine for one metadata version: schema, plan cache, and the request pipeline
 * parse → validate → plan → compile → bind → execute. One request runs at most one statement.
 */
export class GraphEngine {
  readonly schema: GraphQLSchema;
  readonly #cache: LRUCache<string, CachedOperation>;
  readonly #rules: typeof specifiedRules;
  /** The engines of the metadata's roles, built on first use (each its own schema and plan cache). */
  readonly #roleEngines = new Map<string, GraphEngine>();

  constructor(
    readonly metadata: Metadata,
    readonly options: EngineOptions,
    /** What writes need from the database catalogue (`checkMetadataAgainstDatabase`); without it, errors name fewer fields. */
    readonly catalogue: Catalogue | null = null,
  ) {
    this.schema = buildSchema(metadata);
    this.#cache = new LRUCache({
      max: Math.max(1, options.planCacheSize),
      maxSize: PLAN_CACHE_MAX_BYTES,
      sizeCalculation: (entry, key) => planCacheEntryBytes(key, entry),
    });
    this.#rules = [...specifiedRules, depthLimitRule(options.maxDepth), noNulCharactersRule];
  }

  /**
   * The engine of a role: the metadata as the role sees it, its own schema (introspection shows
   * only what the role may use) and plan cache, so plans are cached per role and never per key.
   * `admin` is this engine. Null when the metadata has no such role (any more).
   */
  forRole(name: string): GraphEngine | null {
    const role = this.metadata.roles.get(name);
    if (!role) return null;
    if (role.metadata === this.metadata) return this;
    let engine = this.#roleEngines.get(name);
    if (!engine) this.#roleEngines.set(name, (engine = new GraphEngine(role.metadata, this.options, this.catalogue)));
    return engine;
  }

  /** Checks, plans and binds a request for an account. Throws `RequestError` for client mistakes. */
  prepare(request: GraphRequest, principal: Principal): PreparedRequest {
    return this.#prepare(request, principal).prepared;
  }

  #prepare(request: GraphRequest, principal: Principal): { prepared: PreparedRequest; operation: CachedOperation } {
    const caller = callerOf(principal);
    const { query, operationName, variables } = checkEnvelope(request);
    const cached = this.#operation(query, operationName);
    // Variable names are the client's: looked up in a Map, so `$constructor` is just a name.
    if (cached.coerceVariables === undefined) cached.coerceVariables = scalarVariableCoercer(this.schema, cached.operation);
    const variableValues: ReadonlyMap<string, unknown> = cached.coerceVariables?.(variables ?? {}) ?? this.#coerceVariables(cached, variables);
    if (cached.operation.operation === 'mutation') return { prepared: this.#prepareMutation(cached, variableValues, caller), operation: cached };

    let introspection: IntrospectionPart | null = null;
    if (cached.hasIntrospection || !cached.needsDatabase) {
      const result = executeGraphQL({ schema: this.schema, document: cached.introspectionDocument, operationName, variableValues: variables ?? {} }) as {
        data?: Record<string, unknown> | null;
        errors?: readonly GraphQLError[];
      };
      if (!cached.needsDatabase) {
        if (result.errors?.length) throw new RequestError(result.errors.map((error) => toResponseError(error, 'validation-failed')), 'execution');
        return { prepared: { kind: 'static', body: JSON.stringify({ data: result.data ?? null }) }, operation: cached };
      }
      introspection = { data: result.data ?? {}, order: rootKeys(cached) };
    }

    let compiled = cached.compiled;
    let cost = cached.cost;
    if (!compiled) {
      const planned = this.#plan(cached, variableValues);
      cost = queryCost(planned.plan);
      this.#checkCost(cost);
      compiled = compileOperation(planned.plan, this.metadata);
      if (planned.reusable) {
        cached.compiled = compiled;
        cached.cost = cost;
        cached.genericPlanSafety = genericPlanSafety(compiled.params);
        // Stored again so that the cache counts the compiled text in the entry's size
        // (lru-cache recomputes a size only for a new value, hence delete first).
        if (this.#cache.delete(cached.cacheKey)) this.#cache.set(cached.cacheKey, cached);
      } else cached.compiled = null;
    }
    this.#checkCost(cost);
    const values = compiled.params.map((param) => bind(param, variableValues, caller, this.options.maxRows, cached.operation));
    cached.uses += 1;
    // Only a statement run before is worth preparing on the database's connections: a document
    // seen once (most unique documents) would only fill their prepared-statement maps.
    const reusable = cached.compiled === compiled && cached.uses > 1;
    return {
      prepared: { kind: 'statement', text: compiled.text, params: compiled.params, values, introspection, reusable },
      operation: cached,
    };
  }

  /** graphql-js's coercion of the variables, then the NUL check: every error a request's variables can have. */
  #coerceVariables(cached: CachedOperation, variables: Readonly<Record<string, unknown>> | undefined): ReadonlyMap<string, unknown> {
    const coerced = getVariableValues(this.schema, cached.operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 50 });
    if (coerced.errors) throw new RequestError(coerced.errors.map((error) => toResponseError(error, 'validation-failed')), 'document');
    if (cached.operation.variableDefinitions?.length) {
      const withNul = variablesWithNul(cached.operation, new Map(Object.entries(variables ?? {})));
      if (withNul.length) throw new RequestError(withNul.map((error) => toResponseError(error, 'validation-failed')), 'document');
    }
    return new Map(Object.entries(coerced.coerced));
  }

  /**
   * Runs a request and returns the whole response body text (`{"data": …}`) as PostgreSQL made
   * it. With a guard, the guard's condition is checked in the same statement (no extra round
   * trip) and `null` comes back when it is false — also for a request that needs no statement or
   * is refused as a client mistake, which then pay one small statement for the check.
   */
  async execute(db: Database, request: GraphRequest, accountId: Principal): Promise<string>;
  async execute(db: Database, request: GraphRequest, accountId: Principal, guard: StatementGuard | undefined): Promise<string | null>;
  async execute(db: Database, request: GraphRequest, accountId: Principal, guard?: StatementGuard): Promise<string | null> {
    const pieces: string[] = [];
    if (!(await this.respond(db, request, accountId, guard, (piece) => void pieces.push(piece)))) return null;
    return pieces.length === 1 ? pieces[0]! : pieces.join('');
  }

  /**
   * Runs a request like `execute` and hands the response body text to `write`, in order: in one
   * piece, or — for an operation whose response has once been longer than `PARTS_FROM_LENGTH` —
   * in parts of about `PART_BYTES` as they arrive, so a large response is never held whole
   * (see `inParts.ts`). Resolves false, having written nothing, when the guard does not hold.
   * A client's mistake throws `RequestError` before anything is written.
   */
  async respond(db: Database, request: GraphRequest, accountId: Principal, guard: StatementGuard | undefined, write: (piece: string) => void): Promise<boolean> {
    try {
      const { prepared, operation } = this.#prepare(request, accountId);
      if (prepared.kind === 'mutation') {
        // The guard is checked after the writes, in their round trip (`runMutation`): when it
        // fails, the transaction is rolled back, so no write of a deactivated key stays.
        const text = await db.transaction((tx) => this.runMutation(tx, prepared, { guard, endsTransaction: true })).catch((error: unknown) => {
          if (error instanceof GuardFailed) return null;
          throw error;
        });
        if (text === null) return false;
        write(text);
        return true;
      }
      if (prepared.kind === 'static') {
        if (guard && !(await guardHolds(db, guard))) return false;
        write(prepared.body);
        return true;
      }
      // Texts derived from a cached plan's statement are built once per operation, so a request
      // sends the very same string (node-postgres names prepared statements by their text).
      const derive = (kind: string, build: () => string): string => (prepared.reusable ? operation.derivedTexts.get(kind) ?? remember(operation.derivedTexts, kind, build()) : build());
      const text = guard ? derive(`guard ${guard.condition}`, () => guardedStatement(prepared.text, prepared.values.length, guard)) : prepared.text;
      const values = guard ? [...prepared.values, ...guard.values] : prepared.values;
      if (operation.inParts && !prepared.introspection) {
        return await runInParts(db, derive(`parts ${guard?.condition ?? ''}`, () => inParts(text)), values, prepared.reusable, write);
      }
      // The guard's values (the account, the key's id) do not choose a plan either.
      const genericPlanSafe = prepared.reusable ? operation.genericPlanSafety : null;
      const response = await runStatement(db, text, values, genericPlanSafe ? { reusable: true, genericPlanSafe } : { reusable: prepared.reusable });
      if (response === null) return false;
      if (response.length > PARTS_FROM_LENGTH) operation.inParts = true;
      write(prepared.introspection ? mergeIntrospection(response, prepared.introspection) : response);
      return true;
    } catch (error) {
      if (guard && error instanceof RequestError && !(await guardHolds(db, guard))) return false;
      throw error;
    }
  }

  /**
   * The type of the operation a request would run (`query`, `mutation`), from the parsed and
   * validated document (cached: running it afterwards parses nothing again). For `GET
   * /api/graph`, which runs queries only. A document the engine refuses throws `RequestError`.
   */
  operationType(request: GraphRequest): OperationDefinitionNode['operation'] {
    const { query, operationName } = checkEnvelope(request);
    return this.#operation(query, operationName).operation.operation;
  }

  /**
   * The statement of a request, its parameters, and PostgreSQL's plan for it. With `estimates:
   * false` the plan has no costs, row counts or widths: those come from table-wide statistics,
   * every account's rows included, so an API caller must not see them (README "Security").
   */
  async explain(
    db: Database,
    request: GraphRequest,
    accountId: Principal,
    { estimates = true }: { readonly estimates?: boolean } = {},
  ): Promise<{ sql: string; params: unknown[]; plan: unknown; statements?: { sql: string; params: unknown[] }[] }> {
    const prepared = this.prepare(request, accountId);
    if (prepared.kind === 'static') return { sql: '', params: [], plan: null };
    if (prepared.kind === 'mutation') return explainMutation(prepared);
    const { rows } = await db
      .query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON${estimates ? '' : ', COSTS OFF'}) ${prepared.text}`, prepared.values)
      .catch((error: unknown) => rethrowClientError(error));
    const plan = rows[0]?.['QUERY PLAN'];
    return { sql: prepared.text, params: [...prepared.values], plan: typeof plan === 'string' ? JSON.parse(plan) : plan };
  }

  #operation(query: string, operationName: string | undefined): CachedOperation {
    const cacheKey = `${operationName ?? ''}\u0000${query}`;
    const hit = this.#cache.get(cacheKey);
    if (hit) return hit;
    let parsed: DocumentNode;
    try {
      parsed = parse(query, { maxTokens: 50_000 });
    } catch (error) {
      throw new RequestError([toResponseError(error as GraphQLError, 'parse-failed')], 'document');
    }
    // Right after parsing: before the typed rewrite and graphql-js's rules (whose field-merging
    // check is quadratic in same-named fields) and planning, which take a second for 10,000 aliases.
    this.#checkSize(parsed);
    const document = bareWordsAsStrings(this.schema, parsed);
    const errors = validate(this.schema, document, this.#rules, { maxErrors: 50 });
    if (errors.length) throw new RequestError(errors.map((error) => toResponseError(error, 'validation-failed')), 'document');
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
    if (!operation) {
      const message = operationName ? `unknown operation named "${operationName}"` : 'the document has several operations: give operationName';
      throw new RequestError([{ message, extensions: { code: 'validation-failed' } }], 'document');
    }
    if (operation.operation === 'mutation' && !this.schema.getMutationType()) {
      // graphql-js validates a mutation against a schema without mutations; it fails only when run.
      const message = 'this schema has no mutations: no field of mutation_root exists for this key (its role writes nothing)';
      throw new RequestError([{ message, extensions: { code: 'validation-failed' } }], 'document');
    }
    if (operation.operation === 'subscription') {
      throw new RequestError([{ message: 'subscription operations are not supported', extensions: { code: 'validation-failed' } }], 'document');
    }
    const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
    const names = topLevelFieldNames(operation, fragments);
    const entry: CachedOperation = {
      cacheKey,
      uses: 0,
      document,
      operation,
      fragments,
      compiled: undefined,
      compiledMutation: undefined,
      cost: 0,
      inParts: false,
      genericPlanSafety: null,
      derivedTexts: new Map(),
      coerceVariables: undefined,
      needsDatabase: names.some((name) => !name.startsWith('__')),
      hasIntrospection: names.some((name) => INTROSPECTION_FIELDS.has(name)),
      introspectionDocument: onlyIntrospectionRootFields(document, operation),
    };
    this.#cache.set(cacheKey, entry);
    return entry;
  }

  /**
   * Runs a prepared mutation on `tx`, an open transaction: its write statements in order, then
   * the SELECT that builds the response over the rows they wrote (so `returning` shows the
   * state after every write of the request, trigger effects included). Returns the response
   * text; a client's mistake throws `RequestError`, and the caller's transaction is then undone.
   * `guard` is checked after the writes (the request is refused with the transaction rolled
   * back when it fails); with `endsTransaction`, the response statement commits `tx`
   * (`queryThenCommit`) — only for a caller that runs nothing on `tx` afterwards.
   */
  async runMutation(tx: Queryable, prepared: Extract<PreparedRequest, { kind: 'mutation' }>, { guard, endsTransaction = false }: { guard?: StatementGuard; endsTransaction?: boolean } = {}): Promise<string> {
    const newIds = new Map<number, string>();
    const results: { ids: string[]; count: number; json: string | null }[] = [];
    const value = (param: Param): unknown => {
      switch (param.kind) {
        case 'newId': {
          let id = newIds.get(param.slot);
          if (!id) newIds.set(param.slot, (id = randomUUID()));
          return id;
        }
        case 'stepResult':
          return results[param.step]![param.output];
        default:
          return prepared.bind(param);
      }
    };
    const { steps, response } = prepared.program;
    const options = { reusable: prepared.reusable };
    const statementOf = (index: number): Statement => ({ text: steps[index]!.statement.text, values: steps[index]!.statement.params.map(value), options });
    const record = (index: number, row: Record<string, unknown>): void => {
      const step = steps[index]!;
      if (Number(row['violations'] ?? 0) > 0) throw permissionError(step.alias, step.collection.name, Number(row['violations']));
      results.push({ ids: row['ids'] ? (JSON.parse(row['ids'] as string) as string[]) : [], count: Number(row['count']), json: (row['json'] as string | null | undefined) ?? null });
    };
    const writeFailed = (index: number, error: unknown): never => {
      const clientError = classifyWriteError(error, steps[index]!, this.metadata, this.catalogue);
      if (clientError) throw new RequestError([clientError], 'execution');
      throw error;
    };
    // One round trip (where the adapter can: `queryInOrder`) for the writes that need nothing
    // of an earlier write's result, then the guard — after the writes, so a write of a key
    // deactivated meanwhile is rolled back — then each dependent write, then the response with
    // the COMMIT (`queryThenCommit`): two round trips for most mutations.
    let leading = 0;
    while (leading < steps.length && !steps[leading]!.statement.params.some((param) => param.kind === 'stepResult')) leading += 1;
    const first = Array.from({ length: leading }, (_, index) => statementOf(index));
    if (guard) first.push({ ...guardCheck(guard), options });
    let firstResults;
    try {
      firstResults = await queryInOrder(tx, first);
    } catch (error) {
      if (!(error instanceof StatementFailed)) throw error;
      if (error.index < leading) writeFailed(error.index, error.cause);
      throw error.cause;
    }
    for (let index = 0; index < leading; index++) record(index, firstResults[index]!.rows[0]!);
    if (guard && firstResults[leading]!.rows[0]?.['holds'] !== true) throw new GuardFailed();
    for (let index = leading; index < steps.length; index++) {
      const statement = statementOf(index);
      const { rows } = await tx.query(statement.text, statement.values, options).catch((error: unknown) => writeFailed(index, error));
      record(index, rows[0]!);
    }
    let rows: Record<string, unknown>[];
    try {
      const last = { text: response.text, values: response.params.map(value), options };
      ({ rows } = endsTransaction ? await queryThenCommit(tx, last) : await tx.query(last.text, last.values, options));
    } catch (error) {
      return rethrowClientError(error);
    }
    return rows[0]!['response'] as string;
  }

  #prepareMutation(cached: CachedOperation, variableValues: ReadonlyMap<string, unknown>, caller: Caller): PreparedRequest {
    let program = cached.compiledMutation;
    if (!program) {
      let planned;
      try {
        planned = planMutation(this.schema, cached.operation, cached.fragments, variableValues, {
          maxRows: this.options.maxRows,
          collections: this.metadata.collections,
          maxInsertObjects: this.options.maxInsertObjects ?? DEFAULT_MAX_INSERT_OBJECTS,
        });
      } catch (error) {
        if (error instanceof GraphQLError) throw new RequestError([toResponseError(error, 'validation-failed')], 'document');
        throw error;
      }
      program = compileMutation(planned.plan, this.metadata);
      cached.compiledMutation = planned.reusable ? program : null;
    }
    const bindParam = (param: Param): unknown => bind(param, variableValues, caller, this.options.maxRows, cached.operation);
    const problems: GraphQLError[] = [];
    for (const check of program.checks) {
      const problem = checkWrittenValue(check, bindParam(check.param), this.catalogue);
      if (problem) problems.push(problem);
    }
    if (problems.length) throw new RequestError(problems.map((problem) => toResponseError(problem, 'validation-failed')), 'document');
    // Patterns in variables are checked now, before the transaction opens (binding checks them).
    for (const statement of [...program.steps.map((step) => step.statement), program.response]) {
      for (const param of statement.params) if (param.kind === 'var' && param.pattern) bindParam(param);
    }
    const reusable = cached.compiledMutation === program;
    return { kind: 'mutation', program, bind: bindParam, reusable };
  }

  /** What the plan cache holds now: entries and their estimated bytes. */
  get planCacheUsage(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.#cache.size, bytes: this.#cache.calculatedSize };
  }

  #checkCost(cost: number): void {
    const limit = this.options.maxCost ?? DEFAULT_MAX_QUERY_COST;
    if (limit > 0 && cost > limit) {
      const message = `the query's estimated cost ${cost} is over the limit of ${limit} (MAX_QUERY_COST): use fewer aliases, smaller limits, or fewer filters through relationships`;
      throw new RequestError([{ message, extensions: { code: 'query-too-expensive', cost, limit } }], 'document');
    }
  }

  /**
   * Refuses a document with an operation of more root fields than `maxRootFields` (fragments
   * followed, each once) or more fields than `maxFields` (every spread counted in full, each
   * fragment's count worked out once): linear in the document, whatever it spreads.
   */
  #checkSize(document: DocumentNode): void {
    const rootLimit = this.options.maxRootFields ?? DEFAULT_MAX_ROOT_FIELDS;
    const fieldLimit = this.options.maxFields ?? DEFAULT_MAX_FIELDS;
    const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
    const tooExpensive = (message: string, extensions: Record<string, number>) => new RequestError([{ message, extensions: { code: 'query-too-expensive', ...extensions } }], 'document');
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      if (rootLimit > 0) {
        let count = 0;
        walkRootSelections(definition, fragments, (selection) => void (count += selection.name.value.startsWith('__') ? 0 : 1));
        if (count > rootLimit) throw tooExpensive(`the operation has ${count} root fields, over the limit of ${rootLimit} (MAX_ROOT_FIELDS): split it into several requests`, { rootFields: count, limit: rootLimit });
      }
      if (fieldLimit > 0) {
        const count = expandedFieldCount(definition.selectionSet, fragments, new Map(), new Set());
        if (count > fieldLimit) throw tooExpensive(`the operation selects ${count > 1e15 ? 'over 10^15' : count} fields (fragments expanded), over the limit of ${fieldLimit} (MAX_QUERY_FIELDS)`, { fields: Math.min(count, Number.MAX_SAFE_INTEGER), limit: fieldLimit });
      }
    }
  }

  #plan(cached: CachedOperation, variables: ReadonlyMap<string, unknown>) {
    try {
      return planOperation(this.schema, cached.operation, cached.fragments, variables, { maxRows: this.options.maxRows, collections: this.metadata.collections });
    } catch (error) {
      if (error instanceof GraphQLError) throw new RequestError([toResponseError(error, 'validation-failed')], 'document');
      throw error;
    }
  }
}

function checkEnvelope(request: GraphRequest): { query: string; operationName: string | undefined; variables: Record<string, unknown> | undefined } {
  const problem = (message: string) => new RequestError([{ message, extensions: { code: 'invalid-request' } }], 'request');
  if (typeof request !== 'object' || request === null || Array.isArray(request)) throw problem('the request body must be a JSON object');
  const { query, operationName, variables, extensions } = request;
  if (typeof query !== 'string' || query.trim() === '') throw problem('"query" must be a non-empty string');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw problem('"operationName" must be a string');
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) throw problem('"variables" must be an object');
  if (extensions !== undefined && extensions !== null && (typeof extensions !== 'object' || Array.isArray(extensions))) throw problem('"extensions" must be an object');
  return { query, operationName: (operationName as string | null) ?? undefined, variables: (variables as Record<string, unknown> | null) ?? undefined };
}

/** A row written by a mutation fails the role's `check`: nothing of the request is written. */
function permissionError(alias: string, collection: string, rows: number): RequestError {
  const message = `${alias}: ${rows === 1 ? 'a row' : `${rows} rows`} of ${collection} would fall outside what this key's role may write (its check); nothing was written`;
  return new RequestError([{ message, path: [alias], extensions: { code: 'permission-error' } }], 'execution');
}

/** `operation`: where a refused variable is defined, for the error's `locations`. */
function bind(param: Param, variables: ReadonlyMap<string, unknown>, caller: Caller, maxRows: number | null, operation: OperationDefinitionNode): unknown {
  switch (param.kind) {
    case 'newId':
    case 'stepResult':
      throw new Error(`a ${param.kind} parameter is bound only while a mutation runs`);
    case 'account':
      return caller.accountId;
    case 'keyVariable':
      // A key without the variable matches nothing (x = NULL), never everything.
      return caller.keyVariables.get(param.name) ?? null;
    case 'const':
      return param.value;
    case 'list':
      return param.items.map((item) => bind(item, variables, caller, maxRows, operation));
    case 'var': {
      const value = variables.get(param.name) ?? null;
      const refused = (message: string, extensions: Readonly<Record<string, unknown>> | undefined): RequestError => {
        const definition = operation.variableDefinitions?.find((d) => d.variable.name.value === param.name);
        const located = new GraphQLError(`Variable "$${param.name}": ${message}`, { ...(definition ? { nodes: definition } : {}), extensions });
        return new RequestError([toResponseError(located, 'validation-failed')], 'document');
      };
      if (param.cast === 'value') {
        // A regular expression or SIMILAR TO pattern in a variable: its cost is bounded here,
        // before the statement runs, as one written in the document is when it is planned.
        const problem = param.pattern && typeof value === 'string' ? patternProblem(value, param.pattern) : null;
        if (problem) throw refused(problem, { code: 'validation-failed' });
        return value;
      }
      if (value === null) return param.cast === 'cappedLimit' ? maxRows : null;
      try {
        return checkCount(value, param.cast === 'offset' ? 'offset' : 'limit', maxRows);
      } catch (error) {
        throw refused((error as GraphQLError).message, (error as GraphQLError).extensions);
      }
    }
  }
}

function remember(texts: Map<string, string>, kind: string, text: string): string {
  texts.set(kind, text);
  return text;
}

/** Runs a statement in parts (`inParts.ts`), writing each as it arrives; false when the response is NULL. */
async function runInParts(db: Database, partsText: string, values: readonly unknown[], reusable: boolean, write: (piece: string) => void): Promise<boolean> {
  let written = false;
  const writePart = (row: { part: string }): void => {
    written = true;
    write(row.part);
  };
  try {
    return (await db.each(partsText, values, writePart, { reusable })) > 0;
  } catch (error) {
    // Past the first part the response is half sent: no longer a client's mistake to report.
    if (written) throw error;
    return rethrowClientError(error);
  }
}

async function runStatement(db: Database, text: string, values: readonly unknown[], options: QueryOptions): Promise<string | null> {
  try {
    const { rows } = await db.query<{ response: string | null }>(text, values, options);
    return rows[0]!.response;
  } catch (error) {
    return rethrowClientError(error);
  }
}

/** A mutation's guard did not hold: its transaction is rolled back and the request refused. */
class GuardFailed extends Error {
  constructor() {
    super('the statement guard did not hold');
    this.name = 'GuardFailed';
  }
}

/**
 * A condition the caller needs to hold when the request runs (the API key is still active),
 * checked by PostgreSQL in the request's own statement. `condition` is trusted SQL text whose
 * values are `$1…$n` of `values`; the engine renumbers them after the statement's own.
 */
export interface StatementGuard {
  readonly condition: string;
  readonly values: readonly unknown[];
}

function guardCondition(guard: StatementGuard, offset: number): string {
  return guard.condition.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
}

/** The statement answers its response when the guard holds, else NULL (the subquery is then not run). */
function guardedStatement(text: string, paramCount: number, guard: StatementGuard): string {
  return `SELECT CASE WHEN ${guardCondition(guard, paramCount)} THEN (${text}) END AS "response"`;
}

/** The statement that answers whether the guard holds (column `holds`). */
function guardCheck(guard: StatementGuard): { text: string; values: readonly unknown[] } {
  return { text: `SELECT (${guardCondition(guard, 0)}) AS "holds"`, values: guard.values };
}

async function guardHolds(db: Queryable, guard: StatementGuard): Promise<boolean> {
  const check = guardCheck(guard);
  const { rows } = await db.query<{ holds: boolean | null }>(check.text, check.values);
  return rows[0]?.holds === true;
}

function rethrowClientError(error: unknown): never {
  const clientError = classifyDatabaseError(error);
  if (clientError) throw new RequestError([clientError], 'execution');
  throw error;
}

/** Fields of a selection set, each fragment spread counted in full; a fragment's count is remembered by name. */
function expandedFieldCount(selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, known: Map<string, number>, visiting: Set<string>): number {
  let count = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) count += 1 + (selection.selectionSet ? expandedFieldCount(selection.selectionSet, fragments, known, visiting) : 0);
    else if (selection.kind === Kind.INLINE_FRAGMENT) count += expandedFieldCount(selection.selectionSet, fragments, known, visiting);
    else {
      const name = selection.name.value;
      let fragmentCount = known.get(name);
      if (fragmentCount === undefined) {
        const fragment = fragments.get(name);
        // A cycle is graphql-js's to report (NoFragmentCyclesRule); it counts 0 here.
        if (!fragment || visiting.has(name)) continue;
        visiting.add(name);
        fragmentCount = expandedFieldCount(fragment.selectionSet, fragments, known, visiting);
        visiting.delete(name);
        known.set(name, fragmentCount);
      }
      count += fragmentCount;
    }
  }
  return count;
}

/**
 * Calls `visit` with each field of an operation's root selection, following inline fragments and
 * fragment spreads — each named fragment once, so the walk is linear in the document (a
 * fragment spread twice at every level would otherwise be walked 2^levels times).
 */
function walkRootSelections(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, visit: (field: FieldNode) => void): void {
  const visited = new Set<string>();
  const walk = (selections: OperationDefinitionNode['selectionSet']['selections']): void => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) visit(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet.selections);
      else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        const fragment = fragments.get(name);
        if (fragment) walk(fragment.selectionSet.selections);
      }
    }
  };
  walk(operation.selectionSet.selections);
}

function topLevelFieldNames(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): string[] {
  const names: string[] = [];
  walkRootSelections(operation, fragments, (field) => names.push(field.name.value));
  return names;
}

function rootKeys(cached: CachedOperation): string[] {
  const keys: string[] = [];
  walkRootSelections(cached.operation, cached.fragments, (field) => keys.push(field.alias?.value ?? field.name.value));
  return [...new Set(keys)];
}

/**
 * A copy of the document whose operation keeps only root fields starting with `__`, so data
 * fields (which have no resolvers) cannot null out the introspection answer.
 */
function onlyIntrospectionRootFields(document: DocumentNode, operation: OperationDefinitionNode): DocumentNode {
  const selections = operation.selectionSet.selections.filter((selection) => selection.kind !== Kind.FIELD || selection.name.value.startsWith('__'));
  const trimmed: OperationDefinitionNode = { ...operation, selectionSet: { ...operation.selectionSet, selections } };
  return { ...document, definitions: document.definitions.map((definition) => (definition === operation ? trimmed : definition)) };
}

/** Rare path: a request mixing introspection and data. Merge in the document's key order. */
function mergeIntrospection(text: string, introspection: IntrospectionPart): string {
  const response = JSON.parse(text) as { data: Record<string, unknown> };
  const data: Record<string, unknown> = {};
  for (const key of introspection.order) data[key] = key in response.data ? response.data[key] : introspection.data[key];
  return JSON.stringify({ data });
}

/**
 * A mutation's statements as they would run, without running them: the values of a later
 * statement that come from an earlier one (its row ids) and the ids the server makes for new
 * rows are shown as placeholders. There is no plan: PostgreSQL cannot EXPLAIN a write without
 * doing it (ANALYZE) or with values it has not seen.
 */
function explainMutation(prepared: Extract<PreparedRequest, { kind: 'mutation' }>): { sql: string; params: unknown[]; plan: null; statements: { sql: string; params: unknown[] }[] } {
  const shown = (param: Param): unknown => {
    if (param.kind === 'newId') return `<id of new row ${param.slot + 1}>`;
    if (param.kind === 'stepResult') return `<${param.output} of statement ${param.step + 1}>`;
    return prepared.bind(param);
  };
  const statements = [...prepared.program.steps.map((step) => step.statement), prepared.program.response].map((statement) => ({
    sql: statement.text,
    params: statement.params.map(shown),
  }));
  return { sql: statements.map((statement) => statement.sql).join(';\n'), params: statements.flatMap((statement) => statement.params), plan: null, statements };
}
