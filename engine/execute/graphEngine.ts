import { specifiedRules, type GraphQLSchema, type OperationDefinitionNode, type ValidationRule } from 'graphql';
import type { Database, Queryable } from '../../db/index.js';
import { tableKey, type Catalogue, type Metadata } from '../../metadata/index.js';
import { buildSchema } from '../schema/buildSchema.js';
import type { StatementGuard } from '../sql/statementGuard.js';
import { depthLimitRule } from '../validation/depthLimitRule.js';
import { noNulCharactersRule } from '../validation/nulCharacters.js';
import type { Principal } from './bindParam.js';
import { checkEnvelope, type GraphRequest } from './checkEnvelope.js';
import type { EngineContext, EngineOptions } from './engineOptions.js';
import { GuardFailed, RequestError } from './errors.js';
import { explainRequest, type Explanation } from './explainRequest.js';
import { guardHolds } from './guardHolds.js';
import { PlanCache, type CachedOperation } from './planCache.js';
import { shortHash, type EngineFacts } from './engineFacts.js';
import { operationOf, prepareRequest, type Preparation, type PreparedRequest } from './prepareRequest.js';
import { runMutation, runOneStatement, type MutationRunOptions } from './runMutation.js';
import { runQuery } from './runQuery.js';
import { tablesRead } from './live/cohortStatement.js';
import { runAdmitted, type Admit, type RespondOptions } from './runAdmitted.js';

export type { Admit, RespondOptions };

/**
 * The query engine for one metadata version and role: its schema, its plan cache, and the
 * request pipeline parse → validate → plan → compile → bind → run (`engine/README.md` walks it).
 * A query runs as one statement; a mutation whose one write's rows are its whole response as one
 * statement in autocommit, any other as one transaction of a statement per write and one for the
 * response (`runMutation.ts`).
 */
export class GraphEngine implements EngineContext {
  readonly schema: GraphQLSchema;
  readonly #preparation: Preparation;
  /** The engines of the metadata's roles, built on first use (each its own schema and plan cache). */
  readonly #roleEngines = new Map<string, GraphEngine>();

  constructor(
    readonly metadata: Metadata,
    readonly options: EngineOptions,
    /** What writes need from the database catalogue (`checkMetadataAgainstDatabase`); without it, errors name fewer fields. */
    readonly catalogue: Catalogue | null = null,
  ) {
    this.schema = buildSchema(metadata);
    const rules: readonly ValidationRule[] = [...specifiedRules, depthLimitRule(options.maxDepth), noNulCharactersRule];
    this.#preparation = { schema: this.schema, metadata, options, catalogue, cache: new PlanCache(options.planCacheSize), rules };
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

  /**
   * `prepare` for an operation sent over WebSocket (graphql-transport-ws), where a `subscription`
   * is allowed: its statement is its query's (the same plan cache, cost limit and role), a
   * stream's with its cursor parameter (`PreparedRequest.stream`). Throws `RequestError`.
   */
  prepareSubscription(request: GraphRequest, principal: Principal): PreparedRequest {
    return prepareRequest(this.#preparation, request, principal, undefined, { subscription: true }).prepared;
  }

  /**
   * The tables a statement of this engine reads, as change notices name them (`live/cohortStatement.ts`,
   * `tablesRead`): the metadata's tables it names, and the tables under each view it names
   * (`Metadata.tablesUnderViews`: no notice names a view).
   */
  tablesRead(text: string): ReadonlySet<string> {
    this.#tables ??= tablesOfCollections(this.metadata);
    return tablesRead(text, this.#tables.tables, this.#tables.functions, this.#tables.underViews);
  }

  #tables: ReturnType<typeof tablesOfCollections> | undefined;

  /**
   * Checks, plans and binds a request for a principal (`prepareRequest.ts`). Throws `RequestError`
   * for client mistakes. With `facts`, notes the operation (type, name, document hash) as `respond` does,
   * and its parse and prepare phases when traced (`facts.phase`).
   */
  prepare(request: GraphRequest, principal: Principal, facts?: EngineFacts): PreparedRequest {
    return (facts?.phase ? this.#prepareTimed(request, principal, facts, facts.phase) : prepareRequest(this.#preparation, request, principal, facts)).prepared;
  }

  /**
   * Runs a request and hands the response body text to `write`, in order: in one piece, or — for
   * an operation whose response has once been large — in parts as they arrive (`runQuery.ts`),
   * so a large response is never held whole. With a guard, the guard is checked by the database
   * with the request (in its statement; a mutation's after its writes, in their round trip) and
   * `GuardFailed` is thrown, nothing written and nothing of a mutation kept, when it does not
   * hold — also for a request refused as a client mistake, whose `RequestError` is only thrown
   * once the guard is known to hold. A client's mistake throws before anything is written.
   */
  async respond(db: Database, request: GraphRequest, principal: Principal, guard: StatementGuard | undefined, write: (piece: string) => void, { facts, admit }: RespondOptions = {}): Promise<void> {
    try {
      // Facts are filled as the request goes (no second async layer: it cost ~1 µs a request under load); phases are timed only when traced.
      const { prepared, operation } = facts?.phase ? this.#prepareTimed(request, principal, facts, facts.phase) : prepareRequest(this.#preparation, request, principal, facts);
      if (prepared.kind !== 'mutation') return await runAdmitted(admit, facts, db, prepared, operation, guard, write);
      const asking = facts ? performance.now() : 0;
      try {
        write(await this.#runWrite(db, prepared, guard));
      } finally {
        if (facts) {
          const answered = performance.now();
          facts.databaseMs += answered - asking;
          facts.phase?.('statement', asking, answered);
        }
      }
    } catch (error) {
      if (guard && error instanceof RequestError && !(await guardHolds(db, guard))) throw new GuardFailed();
      throw error;
    }
  }

  /** `prepareRequest` for a traced request: its `prepare` phase timed, and the statement's hash (only a trace shows it). */
  #prepareTimed(request: GraphRequest, principal: Principal, facts: EngineFacts, phase: NonNullable<EngineFacts['phase']>): ReturnType<typeof prepareRequest> {
    const preparing = performance.now();
    let result: ReturnType<typeof prepareRequest> | undefined;
    try {
      result = prepareRequest(this.#preparation, request, principal, facts);
    } finally {
      phase('prepare', preparing, performance.now());
    }
    const { prepared, operation } = result;
    if (prepared.kind === 'statement') facts.statementHash = operation.compiled?.text === prepared.text ? (operation.statementHash ??= shortHash(prepared.text)) : shortHash(prepared.text);
    return result;
  }

  /**
   * A mutation of `respond`: its one statement in autocommit where it has one (`runOneStatement`),
   * else its statements in a transaction, the response's with the COMMIT (`runMutation`).
   */
  #runWrite(db: Database, prepared: Extract<PreparedRequest, { kind: 'mutation' }>, guard: StatementGuard | undefined): Promise<string> {
    if (prepared.program.single) return runOneStatement(this, db, prepared, guard);
    return db.transaction((tx) => this.runMutation(tx, prepared, { guard, endsTransaction: true }));
  }

  /** `respond` for callers that want the whole response text at once (the REST routes, the dashboard, the CLI). */
  async execute(db: Database, request: GraphRequest, principal: Principal, guard?: StatementGuard): Promise<string> {
    const pieces: string[] = [];
    await this.respond(db, request, principal, guard, (piece) => void pieces.push(piece));
    return pieces.length === 1 ? pieces[0]! : pieces.join('');
  }

  /**
   * Runs a prepared mutation on `tx`, an open transaction (`runMutation.ts`): for a caller that
   * owns the transaction (an `Idempotency-Key`'s claim and store run in it too).
   */
  runMutation(tx: Queryable, prepared: Extract<PreparedRequest, { kind: 'mutation' }>, options: MutationRunOptions = {}): Promise<string> {
    return runMutation(this, tx, prepared, options);
  }

  /**
   * The type of the operation a request would run (`query`, `mutation`), from the parsed and
   * validated document (cached: running it afterwards parses nothing again). For `GET
   * /api/graph`, which runs queries only. A document the engine refuses throws `RequestError`.
   */
  operationType(request: GraphRequest): OperationDefinitionNode['operation'] {
    return operationOf(this.#preparation, checkEnvelope(request)).operation.operation;
  }

  /**
   * The statement of a request, its parameters, and PostgreSQL's plan for it (`explainRequest.ts`);
   * a mutation's statements without running them. `estimates: false` leaves out what table-wide
   * statistics say (costs, rows, widths).
   */
  async explain(db: Database, request: GraphRequest, principal: Principal, { estimates = true }: { readonly estimates?: boolean } = {}): Promise<Explanation> {
    return explainRequest(db, this.prepare(request, principal), { estimates });
  }

  /** What the plan cache holds now: entries and their estimated bytes. */
  get planCacheUsage(): { readonly entries: number; readonly bytes: number } {
    return this.#preparation.cache.usage;
  }
}

/** What `tablesRead` matches a statement against: the collections' tables, their computed fields' functions, and the tables under each view (by the view's name). */
function tablesOfCollections(metadata: Metadata): { readonly tables: ReadonlySet<string>; readonly functions: ReadonlySet<string>; readonly underViews: ReadonlyMap<string, readonly string[]> } {
  const collections = [...metadata.collections.values()];
  const underViews = new Map<string, string[]>();
  for (const collection of collections) {
    const under = metadata.tablesUnderViews.get(tableKey(collection));
    if (under) underViews.set(collection.table, [...new Set([...(underViews.get(collection.table) ?? []), ...under])]);
  }
  return {
    tables: new Set(collections.map((collection) => collection.table)),
    functions: new Set(collections.flatMap((collection) => [...collection.computedFields.values()].map((field) => field.function))),
    underViews,
  };
}
