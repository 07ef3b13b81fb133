import type { Catalogue, Metadata } from '../../metadata/index.js';
import type { GraphQLSchema } from 'graphql';

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
  /** Most requests in one batch (a JSON array of requests, as Apollo's BatchHttpLink sends); default 20. */
  readonly maxBatchSize?: number;
}

/** Defaults of the request limits (README, Configuration). */
export const DEFAULT_MAX_INSERT_OBJECTS = 1000;
export const DEFAULT_MAX_QUERY_COST = 50_000;
export const DEFAULT_MAX_BATCH_SIZE = 20;

/** What preparing and running a request needs of the engine of one role and metadata version. */
export interface EngineContext {
  readonly schema: GraphQLSchema;
  readonly metadata: Metadata;
  readonly options: EngineOptions;
  /** What writes need from the database catalogue (`checkMetadataAgainstDatabase`); without it, errors name fewer fields. */
  readonly catalogue: Catalogue | null;
}
