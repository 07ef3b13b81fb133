import type { DocumentNode, FragmentDefinitionNode, OperationDefinitionNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { CompiledMutation } from '../sql/compileMutation.js';
import type { genericPlanSafety, RenderedSql } from '../sql/fragment.js';
import type { StreamCursor } from '../plan/ir.js';
import type { VariableCoercer } from './coerceVariables.js';

/** A query's (or subscription's) statement, a streaming subscription's cursor, and a subscription's `refreshKeys`. */
export interface CompiledQuery extends RenderedSql {
  readonly stream: StreamCursor | null;
  /** A subscription's: which parameters hold the loan of each table it reads (`live/refreshKeys.ts`); null for a query. */
  readonly refreshKeys: ReadonlyMap<string, readonly number[]> | null;
}

/** What the engine keeps of one operation (document and operation name) between requests. */
export interface CachedOperation {
  readonly cacheKey: string;
  /** Requests prepared from this entry; its statement is marked reusable from the second on. */
  uses: number;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** The compiled statement, when the plan does not depend on variable values (null when it does; undefined until planned). */
  compiled: CompiledQuery | null | undefined;
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
  /** `engineFacts.ts`'s hashes of the document and of `compiled`, worked out the first time a caller asks for facts. */
  documentHash?: string;
  statementHash?: string;
  /** The document with only the root fields graphql-js answers itself (`__schema`, `__type`, `__typename`). */
  readonly introspectionDocument: DocumentNode;
}

/**
 * The plan cache holds at most about this many bytes, whatever `planCacheSize` says: a stream of
 * unique documents would otherwise keep `planCacheSize` of them parsed, planned and compiled.
 * An entry's size is estimated from its texts: a parsed document costs about 140 bytes of heap
 * per character of its text (AST nodes, locations and the token list they keep; measured: 40 KB
 * for a 250-character document with its 1.6 KB statement), a statement 2 bytes per character —
 * a query's one statement, a mutation's every statement.
 */
export const PLAN_CACHE_MAX_BYTES = 16 * 1024 * 1024;
const DOCUMENT_BYTES_PER_CHARACTER = 140;

function statementCharacters(entry: CachedOperation): number {
  let characters = entry.compiled?.text.length ?? 0;
  const program = entry.compiledMutation;
  if (program) {
    for (const step of program.steps) characters += step.statement.text.length;
    characters += program.announce?.text.length ?? 0;
    characters += program.response.text.length + (program.single?.text.length ?? 0);
  }
  return characters;
}

const entryBytes = (key: string, entry: CachedOperation): number => Math.max(1, Math.min(PLAN_CACHE_MAX_BYTES, key.length * DOCUMENT_BYTES_PER_CHARACTER + 2 * statementCharacters(entry)));

/**
 * The operations of one engine (one role, one metadata version), least recently used first out,
 * bounded by `planCacheSize` entries and by `PLAN_CACHE_MAX_BYTES` estimated.
 */
export class PlanCache {
  readonly #entries: LRUCache<string, CachedOperation>;

  constructor(maxEntries: number) {
    this.#entries = new LRUCache({ max: Math.max(1, maxEntries), maxSize: PLAN_CACHE_MAX_BYTES, sizeCalculation: (entry, key) => entryBytes(key, entry) });
  }

  /** The key of an operation: its name and its document's text. */
  static keyOf(query: string, operationName: string | undefined): string {
    return `${operationName ?? ''}\u0000${query}`;
  }

  get(key: string): CachedOperation | undefined {
    return this.#entries.get(key);
  }

  set(entry: CachedOperation): void {
    this.#entries.set(entry.cacheKey, entry);
  }

  /**
   * Counts an entry again after its statements were compiled into it: lru-cache sizes an entry
   * only when it is set, hence delete first. An entry evicted meanwhile stays out.
   */
  remeasure(entry: CachedOperation): void {
    if (this.#entries.delete(entry.cacheKey)) this.#entries.set(entry.cacheKey, entry);
  }

  /** What the cache holds now: entries and their estimated bytes. */
  get usage(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.#entries.size, bytes: this.#entries.calculatedSize };
  }
}
