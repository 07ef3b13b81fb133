import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types, type PGliteOptions } from '@electric-sql/pglite';
import { citext } from '@electric-sql/pglite/contrib/citext';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { restrictTree, secureDataDir, withPrivateUmask } from './dataDirMode.js';
import { cpuNow, profileStatement, statementProfileOn } from './statementProfile.js';
import { asUnavailable } from './unavailable.js';
import { retryWriteConflicts } from './conflictRetry.js';
import { ObserverSet, TYPE_OIDS, type Database, type Queryable, type QueryResult } from './database.js';

const identity = (value: string): string => value;

/** Parsers so PGlite rows match node-postgres rows (see `TYPE_OIDS`). */
const PARSERS = {
  [TYPE_OIDS.int8]: identity,
  [TYPE_OIDS.numeric]: identity,
  [TYPE_OIDS.date]: identity,
  [TYPE_OIDS.timestamp]: identity,
  [TYPE_OIDS.timestamptz]: identity,
  [types.JSON]: (value: string) => JSON.parse(value) as unknown,
  [types.JSONB]: (value: string) => JSON.parse(value) as unknown,
};

export interface EmbeddedDatabase extends Database {
  /** The PGlite instance itself, for the sharing server (see `embeddedShare.ts`). */
  readonly pglite: PGlite;
  /**
   * Hands a notification that reached another client of PGlite's one session (a CLI command
   * through the share, whose commit raised it) to this process's `listen`ers: PGlite passes only
   * its own queries' notifications to them, so the share delivers the others here.
   */
  deliverNotice(channel: string, payload: string): void;
}

export interface PgliteOptions {
  /**
   * PostgreSQL's `shared_buffers` (`EMBEDDED_SHARED_BUFFERS`, e.g. `32MB`); unset: PostgreSQL's
   * default, 128MB. PGlite zeroes the whole pool at every start (about 80 ms of CPU for 128MB),
   * and its file system is memory already, so a small database (a test's, a CLI command's) loses
   * nothing with a smaller pool.
   */
  readonly sharedBuffers?: string | undefined;
  /**
   * A new database's WAL segment size in MB (initdb's `--wal-segsize`, a power of 2 from 1 to
   * 1024); PostgreSQL's default is 16. Ignored for an existing database (its own is in its
   * control file). The tests' dumps use 1: a 16 MB segment was half of every dump's bytes,
   * read, copied and unpacked at every open.
   */
  readonly walSegmentSizeMB?: number | undefined;
  /**
   * The file system PGlite starts on, for an in-memory database (`dataDir` undefined): the tests
   * give one they fill from a dump themselves (tests/support/testDatabase.ts), which is cheaper
   * than PGlite's own `loadDataDir`. Unset: PGlite's default.
   */
  readonly fs?: PGliteOptions['fs'];
}

/**
 * The PostgreSQL major version of this build's PGlite (0.5.14 runs PostgreSQL 18.6): the only one
 * whose data directories it can open (`tests/cli/backup.test.ts` checks a new one says so).
 */
export const EMBEDDED_POSTGRES_MAJOR = '18';

/**
 * Refuses a data directory another PostgreSQL major version made (its `PG_VERSION`), naming both
 * and the way over — PGlite itself only fails with "PGlite failed to initialize properly". A
 * directory without the file is new (PGlite makes it).
 */
function refuseOtherPostgresMajor(dataDir: string): void {
  let version: string;
  try {
    version = readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim();
  } catch {
    return;
  }
  if (version === EMBEDDED_POSTGRES_MAJOR) return;
  throw new Error(
    `DATA_DIR ${dataDir} holds a PostgreSQL ${version.slice(0, 20)} database, and this loanql's embedded PostgreSQL is ${EMBEDDED_POSTGRES_MAJOR}: it cannot open it. ` +
      `Take a backup with the loanql version that made it (\`loanql backup --out FILE\`; for a version without it, README "Backups"), then \`loanql restore --in FILE\` into a new DATA_DIR with this one`,
  );
}

/**
 * Opens embedded PostgreSQL (PGlite). `dataDir` undefined means in memory (tests).
 * PGlite serialises all work on its single session: plain queries wait for open transactions.
 * Its files in `dataDir` are the service user's only (`dataDirMode.ts`).
 */
export async function openPgliteDatabase(dataDir: string | undefined, loadDataDir?: Blob, options: PgliteOptions = {}): Promise<EmbeddedDatabase> {
  const { sharedBuffers, walSegmentSizeMB, fs } = options;
  if (walSegmentSizeMB !== undefined && !(Number.isInteger(walSegmentSizeMB) && walSegmentSizeMB >= 1 && walSegmentSizeMB <= 1024 && (walSegmentSizeMB & (walSegmentSizeMB - 1)) === 0)) {
    throw new RangeError(`walSegmentSizeMB must be a power of 2 from 1 to 1024, not ${walSegmentSizeMB}`);
  }
  const create = (): Promise<PGlite> =>
    PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      ...(loadDataDir ? { loadDataDir } : {}),
      ...(fs && !dataDir ? { fs } : {}),
      extensions: { pg_trgm, citext },
      parsers: PARSERS,
      // Checked by `sharedBuffersOf` (a number and a unit, nothing else) before it gets here: a start parameter is not SQL.
      ...(sharedBuffers ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] } : {}),
      ...(walSegmentSizeMB ? { initDbStartParams: [`--wal-segsize=${walSegmentSizeMB}`] } : {}),
    });
  let pglite: PGlite;
  const opening = statementProfileOn ? cpuNow() : 0;
  if (dataDir) {
    refuseOtherPostgresMajor(dataDir);
    // Owner-only files (dataDirMode.ts): 0700 directory, umask 077 while PGlite unpacks, chmod -R go-rwx.
    secureDataDir(dataDir);
    pglite = await withPrivateUmask(create);
    restrictTree(dataDir);
  } else pglite = await create();
  if (statementProfileOn) profileStatement(`(open ${dataDir ? 'a data directory' : loadDataDir || fs ? 'a dump' : 'a new database'})`, cpuNow() - opening);
  const observers = new ObserverSet();
  const run = async <R>(target: Pick<PGlite, 'query'>, text: string, values: readonly unknown[] = []): Promise<QueryResult<R>> => {
    observers.notify(text, values);
    const started = statementProfileOn ? cpuNow() : 0;
    const result = await target.query<R>(text, values as unknown[]).catch((error: unknown) => {
      throw asUnavailable(error);
    });
    if (statementProfileOn) profileStatement(text, cpuNow() - started);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  };
  const script = async (target: Pick<PGlite, 'exec'>, sql: string): Promise<void> => {
    observers.notify(sql, []);
    const started = statementProfileOn ? cpuNow() : 0;
    await target.exec(sql);
    if (statementProfileOn) profileStatement(`(script) ${sql.slice(0, 120)}`, cpuNow() - started);
  };
  const sharedListeners = new Map<string, Set<(payload: string) => void>>();
  return {
    kind: 'pglite',
    pglite,
    // As on PostgreSQL, a statement or transaction undone as a conflict runs again (`conflictRetry.ts`);
    // one session runs one transaction at a time, so only an explicit 40001 or 40P01 is one.
    query: (text, values) => retryWriteConflicts(() => run(pglite, text, values)),
    async each(text, values, onRow) {
      const { rows } = await run<Parameters<typeof onRow>[0]>(pglite, text, values);
      for (const row of rows) onRow(row);
      return rows.length;
    },
    script: (sql) => script(pglite, sql),
    transaction: (work) =>
      retryWriteConflicts(() =>
        pglite.transaction(async (transaction) => {
          const tx: Queryable = { query: (text, values) => run(transaction, text, values), script: (sql) => script(transaction, sql) };
          return work(tx);
        }),
      ),
    observe: (observer) => observers.add(observer),
    // One session, in this process: nothing is ever missed, so there is no gap to report. What the
    // share's clients commit is handed over by the share (`deliverNotice`).
    listen: async (channel, onNotice) => {
      const stop = await pglite.listen(channel, onNotice);
      let listeners = sharedListeners.get(channel);
      if (!listeners) sharedListeners.set(channel, (listeners = new Set()));
      listeners.add(onNotice);
      return async () => {
        listeners.delete(onNotice);
        await stop();
      };
    },
    deliverNotice(channel, payload) {
      for (const onNotice of sharedListeners.get(channel) ?? []) onNotice(payload);
    },
    close: () => pglite.close(),
  };
}
