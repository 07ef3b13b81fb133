import { statSync, watch, type FSWatcher } from 'node:fs';
import type { Database } from '../db/index.js';
import { GraphEngine, type EngineOptions } from '../engine/index.js';
import { checkMetadataAgainstDatabase, loadMetadataFile, MetadataError } from '../metadata/index.js';
import { keysWhoseVariablesDoNotFit, keysWithoutRole } from './apiKeys.js';
import { addChangeNotices } from './changeNotices.js';
import { applyEventTriggers, endpointsWithoutEventType } from './webhooks/index.js';

/**
 * Loads a metadata file (parsed and resolved), checks it against the database (the checked
 * stage, the only one the engine accepts), and builds its engine.
 */
export async function buildEngine(path: string, db: Database, options: EngineOptions): Promise<GraphEngine> {
  const { metadata, catalogue } = await checkMetadataAgainstDatabase(loadMetadataFile(path), db);
  return new GraphEngine(metadata, options, catalogue);
}

/**
 * `buildEngine`, with change notices added first to the collections' tables, and the tables under
 * their views, that send none (a lender's own: `addChangeNotices`, so its live queries are
 * refreshed by writes), then the
 * metadata's event types applied to the database (capture triggers, re-created only when their
 * definition changed): what the service serves from.
 */
export async function buildServingEngine(path: string, db: Database, options: EngineOptions): Promise<GraphEngine> {
  const resolved = loadMetadataFile(path);
  const tables = [...new Map([...resolved.collections.values()].map((collection) => [`${collection.schema}.${collection.table}`, [collection.schema, collection.table] as const])).values()];
  // A table the service may not alter (another role's) keeps no notices: its live queries are
  // refreshed at SUBSCRIPTION_FALLBACK_MS, as before; the metadata check below still runs.
  await addChangeNotices(db, resolved.tenantColumn, tables).catch(() => []);
  const { metadata, catalogue } = await checkMetadataAgainstDatabase(resolved, db);
  const engine = new GraphEngine(metadata, options, catalogue);
  await applyEventTriggers(db, engine.metadata.eventTypes);
  return engine;
}

export interface ReloadOutcome {
  readonly ok: boolean;
  readonly problems?: readonly string[];
  /** A loaded metadata's warnings (`metadataWarnings`): API keys and webhook endpoints it leaves without a role, variable or event type they use. */
  readonly warnings?: readonly string[];
}

/**
 * What an admin should know about a metadata that loads: roles active keys carry and it lacks,
 * keys whose variables no longer fit their role, and event types active webhook endpoints
 * subscribe to and it lacks. Keys are named by prefix, endpoints by id (never a key or a URL).
 * With `accountId`, only that account's keys and endpoints (the dashboard's metadata page: an
 * account's admin sees no other account's); without, the whole service's (the log, the CLI).
 */
export async function metadataWarnings(engine: GraphEngine, db: Database, accountId?: string): Promise<string[]> {
  const { roles, eventTypes } = engine.metadata;
  return [
    ...(await keysWithoutRole(db, roles.keys(), accountId)),
    ...(await keysWhoseVariablesDoNotFit(db, roles, accountId)),
    ...(await endpointsWithoutEventType(db, eventTypes.keys(), accountId)),
  ];
}

/** An edit of the metadata file that was refused, and why (the previous engine kept serving). */
export interface RefusedMetadataEdit {
  readonly at: Date;
  readonly problems: readonly string[];
}

/** What the dashboard's metadata page shows besides the metadata itself. */
export interface MetadataStatus {
  readonly path: string;
  /** When the metadata in service was loaded (at start-up or by the last successful reload). */
  readonly loadedAt: Date;
  /** The last refused edit, kept after a later successful reload (compare `at` with `loadedAt`). */
  readonly lastRefused: RefusedMetadataEdit | null;
}

/** The database found not to match the metadata in service (a column dropped under it), and what is missing. */
export interface MetadataMismatchFound {
  readonly at: Date;
  readonly problems: readonly string[];
}

/** The shortest time between two checks of the metadata in service after a mismatch. */
const MISMATCH_CHECK_INTERVAL_MS = 5_000;

/**
 * Holds the engine in service and swaps it atomically when the metadata file changes (file
 * watch) or on `reload()` (SIGHUP). An invalid edit is refused; the previous engine keeps serving.
 */
export class EngineHolder {
  #engine: GraphEngine;
  #watcher: FSWatcher | null = null;
  #closed = false;
  /** The file as the last reload found it before reading it (inode, modification time, size). */
  #readIdentity = '';
  #debounce: NodeJS.Timeout | null = null;
  #reloading: Promise<ReloadOutcome> | null = null;
  #loadedAt = new Date();
  #lastRefused: RefusedMetadataEdit | null = null;
  #mismatch: MetadataMismatchFound | null = null;
  #mismatchCheck: Promise<void> | null = null;
  #mismatchCheckedAt = 0;
  readonly #swapListeners = new Set<(engine: GraphEngine) => void>();

  constructor(
    engine: GraphEngine,
    private readonly path: string,
    private readonly db: Database,
    private readonly options: EngineOptions,
    private readonly onReload: (outcome: ReloadOutcome) => void = () => undefined,
  ) {
    this.#engine = engine;
  }

  get engine(): GraphEngine {
    return this.#engine;
  }

  /** When the engine in service was loaded and the last refused edit, kept in memory by this process. */
  get status(): MetadataStatus {
    return { path: this.path, loadedAt: this.#loadedAt, lastRefused: this.#lastRefused };
  }

  /** What a check after a `metadata-mismatch` answer found missing, until the metadata matches again (a reload, or the database put back). */
  get mismatch(): MetadataMismatchFound | null {
    return this.#mismatch;
  }

  /**
   * A statement failed because a table, column or function the metadata names is gone: check the
   * metadata in service against the database again (at most every 5 s, one at a time), so that
   * `/readyz` names what is missing — or clears it once the database has it again.
   */
  noteMismatch(): void {
    if (this.#mismatchCheck || Date.now() - this.#mismatchCheckedAt < MISMATCH_CHECK_INTERVAL_MS) return;
    this.#mismatchCheckedAt = Date.now();
    this.#mismatchCheck = this.checkServing().finally(() => {
      this.#mismatchCheck = null;
    });
  }

  /** Checks the metadata in service against the database now (`noteMismatch`'s check). */
  async checkServing(): Promise<void> {
    const serving = this.#engine;
    try {
      await checkMetadataAgainstDatabase(serving.metadata, this.db);
      if (this.#engine === serving) this.#mismatch = null;
    } catch (error) {
      const problems = error instanceof MetadataError ? error.problems : [(error as Error).message];
      if (this.#engine === serving) this.#mismatch = { at: new Date(), problems };
    }
  }

  async reload(): Promise<ReloadOutcome> {
    // One reload at a time; a change during a reload triggers another afterwards.
    while (this.#reloading) await this.#reloading;
    this.#reloading = (async () => {
      this.#readIdentity = fileIdentity(this.path);
      try {
        this.#engine = await buildServingEngine(this.path, this.db, this.options);
        this.#loadedAt = new Date();
        this.#mismatch = null;
        const warnings = await metadataWarnings(this.#engine, this.db).catch(() => []);
        return warnings.length ? { ok: true, warnings } : { ok: true };
      } catch (error) {
        const problems = error instanceof MetadataError ? error.problems : [(error as Error).message];
        this.#lastRefused = { at: new Date(), problems };
        return { ok: false, problems };
      }
    })();
    const outcome = await this.#reloading;
    this.#reloading = null;
    if (outcome.ok) for (const listener of this.#swapListeners) listener(this.#engine);
    this.onReload(outcome);
    return outcome;
  }

  /**
   * Calls `listener` with each engine a successful reload puts in service (the WebSocket API
   * plans its open subscriptions again); the function returned stops it.
   */
  onSwap(listener: (engine: GraphEngine) => void): () => void {
    this.#swapListeners.add(listener);
    return () => void this.#swapListeners.delete(listener);
  }

  /** Watches the file; editors that replace the file (write elsewhere, rename over it) are followed. */
  watch(): void {
    if (this.#watcher || this.#closed) return;
    this.#watcher = watch(this.path, { persistent: false }, () => this.#changed());
    this.#watcher.on('error', () => this.#rewatch());
  }

  #changed(): void {
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => {
      this.#debounce = null;
      void this.reload().then(() => {
        this.#rewatch();
        // A replacement that landed while the reload ran went to the old inode's watch: if the
        // file is not the one the reload read, read it again.
        if (!this.#closed && fileIdentity(this.path) !== this.#readIdentity) this.#changed();
      });
    }, 150);
  }

  #rewatch(): void {
    // After an editor's rename-and-replace the old watcher points at a deleted inode.
    this.#watcher?.close();
    this.#watcher = null;
    try {
      this.watch();
    } catch {
      // The file is gone (deleted, or between an unlink and a create): watched again once it is
      // back, and then read, since its creation was seen by no watch (before, a file deleted and
      // written anew kept the old metadata serving, and the dashboard the "cannot read" refusal,
      // until the next edit).
      if (!this.#closed) setTimeout(() => this.#watchAgainWhenBack(), 500).unref();
    }
  }

  #watchAgainWhenBack(): void {
    this.#rewatch();
    if (this.#watcher && fileIdentity(this.path) !== this.#readIdentity) this.#changed();
  }

  close(): void {
    this.#closed = true;
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#watcher?.close();
    this.#watcher = null;
  }
}

/** What tells one version of the file from another without reading it; '' when it cannot be read. */
function fileIdentity(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
  } catch {
    return '';
  }
}
