import { watch, type FSWatcher } from 'node:fs';
import type { Database } from '../db/index.js';
import { GraphEngine, type EngineOptions } from '../engine/index.js';
import { checkMetadataAgainstDatabase, loadMetadataFile, MetadataError } from '../metadata/index.js';

/** Loads a metadata file, checks it against the database, and builds its engine. */
export async function buildEngine(path: string, db: Database, options: EngineOptions): Promise<GraphEngine> {
  const { metadata, catalogue } = await checkMetadataAgainstDatabase(loadMetadataFile(path), db);
  return new GraphEngine(metadata, options, catalogue);
}

export interface ReloadOutcome {
  readonly ok: boolean;
  readonly problems?: readonly string[];
}

/**
 * Holds the engine in service and swaps it atomically when the metadata file changes (file
 * watch) or on `reload()` (SIGHUP). An invalid edit is refused; the previous engine keeps serving.
 */
export class EngineHolder {
  #engine: GraphEngine;
  #watcher: FSWatcher | null = null;
  #debounce: NodeJS.Timeout | null = null;
  #reloading: Promise<ReloadOutcome> | null = null;

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

  async reload(): Promise<ReloadOutcome> {
    // One reload at a time; a change during a reload triggers another afterwards.
    while (this.#reloading) await this.#reloading;
    this.#reloading = (async () => {
      try {
        this.#engine = await buildEngine(this.path, this.db, this.options);
        return { ok: true };
      } catch (error) {
        if (error instanceof MetadataError) return { ok: false, problems: error.problems };
        return { ok: false, problems: [(error as Error).message] };
      }
    })();
    const outcome = await this.#reloading;
    this.#reloading = null;
    this.onReload(outcome);
    return outcome;
  }

  /** Watches the file; editors that replace the file are handled by watching its folder entry. */
  watch(): void {
    if (this.#watcher) return;
    this.#watcher = watch(this.path, { persistent: false }, () => {
      if (this.#debounce) clearTimeout(this.#debounce);
      this.#debounce = setTimeout(() => {
        this.#debounce = null;
        void this.reload().then(() => this.#rewatch());
      }, 150);
    });
    this.#watcher.on('error', () => this.#rewatch());
  }

  #rewatch(): void {
    // After an editor's rename-and-replace the old watcher points at a deleted inode.
    this.#watcher?.close();
    this.#watcher = null;
    try {
      this.watch();
    } catch {
      setTimeout(() => this.#rewatch(), 500).unref();
    }
  }

  close(): void {
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#watcher?.close();
    this.#watcher = null;
  }
}
