/**
 * A migrated, private database for one test file (or one `describe`).
 *
 * - Default: in-memory PGlite. Starting PGlite from nothing (initdb) and migrating takes
 *   about 4–5 s; loading a dump of an already-migrated instance takes about 0.4 s. So the
 *   first process to need one builds it once and leaves the dump in the OS temp directory,
 *   keyed by a hash of the migration files and the PGlite version, and every later database
 *   (in this process or any other test process) is loaded from that dump.
 * - `TEST_DATABASE_URL` set: a fresh database `loanql_test_<random>` created on that
 *   PostgreSQL server, migrated, and dropped again by `close()`.
 *
 * Either way `migrate` runs on the result, so a stale or wrong dump can never hide a schema
 * change: at worst the dump is slower than it could be.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryFS, PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { countForTestFileCpu } from './testTally.js';
import { migrate, openPgliteDatabase, openPostgresDatabase, type Database } from '../../db/index.js';

export interface TestDatabase {
  readonly db: Database;
  close(): Promise<void>;
}

/**
 * PostgreSQL's `shared_buffers` in the tests' embedded databases (and, through `childEnv`, the
 * service and CLI processes they start: `EMBEDDED_SHARED_BUFFERS`). PGlite zeroes the whole pool
 * at every start: at PostgreSQL's default of 128MB that was about 80 ms of an open's 0.5–0.7
 * CPU-seconds, paid some 170 times a run; no test database comes near 32MB of hot pages
 * (tests/README.md, "How long").
 */
export const TEST_SHARED_BUFFERS = '32MB';

const PGLITE_OPTIONS = { sharedBuffers: TEST_SHARED_BUFFERS };

/**
 * A dump's bytes as the `Blob` PGlite loads (`loadDataDir`), which only calls `arrayBuffer()`:
 * that hands over the bytes themselves (`owned`: read for this one open) or a copy of them (a
 * dump kept for every open of the process). Node 20's own `Blob.arrayBuffer()` reads its parts
 * in chunks: 50–80 ms of CPU for a 33 MB dump, against about 20 for a copy. Anything
 * else a `Blob` does is delegated to a real one.
 */
class DumpBlob extends Blob {
  readonly #bytes: Buffer;
  readonly #owned: boolean;
  #real: Blob | null = null;

  constructor(bytes: Buffer, type: string, owned: boolean) {
    super([], { type });
    this.#bytes = bytes;
    this.#owned = owned;
    Object.defineProperty(this, 'size', { value: bytes.byteLength });
  }

  /** The files of a plain tar, read once (null for a gzipped dump, or a tar holding more than folders and files). */
  files(): DumpFiles | null {
    if (this.#files === undefined) this.#files = this.type === 'application/x-tar' ? tarFiles(this.#bytes) : null;
    return this.#files;
  }

  #files: DumpFiles | null | undefined;

  override arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#bytes;
    const whole = this.#owned && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    return Promise.resolve((whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) as ArrayBuffer);
  }

  override stream(): ReturnType<Blob['stream']> {
    return this.#asBlob().stream();
  }

  override text(): Promise<string> {
    return this.#asBlob().text();
  }

  override slice(start?: number, end?: number, type?: string): Blob {
    return this.#asBlob().slice(start, end, type);
  }

  #asBlob(): Blob {
    return (this.#real ??= new Blob([this.#bytes], { type: this.type }));
  }
}

/** A data directory's folders (parents first) and files, paths relative to it. */
interface DumpFiles {
  readonly folders: readonly string[];
  readonly files: readonly { readonly path: string; readonly bytes: Uint8Array }[];
}

/**
 * The folders and files of a tar as PGlite's `dumpDataDir` writes it (ustar: names like
 * `/base/5/1259`), the files' bytes views of `tar`; null when it holds anything else (a link, a
 * name it cannot read), so that PGlite's own loader takes it.
 */
function tarFiles(tar: Uint8Array): DumpFiles | null {
  const folders: string[] = [];
  const files: { path: string; bytes: Uint8Array }[] = [];
  const text = (from: number, length: number): string => {
    let end = from;
    while (end < from + length && tar[end] !== 0) end++;
    return Buffer.from(tar.buffer, tar.byteOffset + from, end - from).toString('utf8');
  };
  let at = 0;
  while (at + 512 <= tar.length && tar[at] !== 0) {
    const size = Number.parseInt(text(at + 124, 12).trim() || '0', 8);
    const kind = tar[at + 156] === 0 ? '0' : String.fromCharCode(tar[at + 156]!);
    const prefix = text(at + 257, 5) === 'ustar' ? text(at + 345, 155) : '';
    const path = (prefix ? `${prefix}/${text(at, 100)}` : text(at, 100)).replace(/^\/+|\/+$/g, '');
    if (!Number.isSafeInteger(size) || size < 0 || path === '' || path.split('/').includes('..')) return null;
    at += 512;
    if (kind === '5') folders.push(path);
    // A plain Uint8Array view, not a Buffer: Buffer's `slice()` is a view too, not the copy each open needs.
    else if (kind === '0') files.push({ path, bytes: new Uint8Array(tar.buffer, tar.byteOffset + at, size) });
    else return null;
    at += Math.ceil(size / 512) * 512;
  }
  return { folders: folders.sort(), files };
}

/**
 * PGlite's memory file system, filled from a dump's files before PostgreSQL starts (PGlite then
 * finds a data directory and runs no initdb). Its own `loadDataDir` parses the tar at every open,
 * looks up every parent folder of every file, copies each file twice and sets its times: an open
 * of the migrated dump took 366–400 ms of CPU that way and 260–264 this way (eight in a row, the
 * first two left out).
 */
class DumpFileSystem extends MemoryFS {
  constructor(private readonly dump: DumpFiles) {
    super();
  }

  override async initialSyncFs(): Promise<void> {
    await super.initialSyncFs();
    const fs = (this.pg as PGlite).Module.FS as unknown as {
      analyzePath(path: string): { exists: boolean };
      mkdirTree(path: string): void;
      mkdir(path: string, mode?: number): void;
      writeFile(path: string, data: Uint8Array, options: { canOwn: boolean }): void;
    };
    const root = PGlite.paths.PGDATA;
    if (!fs.analyzePath(root).exists) fs.mkdirTree(root);
    for (const folder of this.dump.folders) fs.mkdir(`${root}/${folder}`, 0o700);
    // A copy each: PostgreSQL writes into its files, and a dump serves every open of the process.
    for (const file of this.dump.files) fs.writeFile(`${root}/${file.path}`, Uint8Array.prototype.slice.call(file.bytes), { canOwn: true });
  }
}

/** An in-memory PGlite from a dump: a plain tar read here is written into its memory file system directly (`DumpFileSystem`); anything else PGlite loads itself. */
function openDump(dump: Blob): ReturnType<typeof openPgliteDatabase> {
  countForTestFileCpu('opens');
  const files = dump instanceof DumpBlob ? dump.files() : null;
  return files ? openPgliteDatabase(undefined, undefined, { ...PGLITE_OPTIONS, fs: new DumpFileSystem(files) }) : openPgliteDatabase(undefined, dump, PGLITE_OPTIONS);
}

/** Opens a migrated database of its own for a test (see the module comment). */
export async function openTestDatabase(): Promise<TestDatabase> {
  const url = process.env.TEST_DATABASE_URL;
  return url ? openServerTestDatabase(url) : openEmbeddedTestDatabase();
}

/**
 * An empty, NOT migrated database of its own (for tests of a migration on an earlier schema):
 * a fresh PGlite, or a new database on the `TEST_DATABASE_URL` server, dropped by `close()`.
 */
export async function openEmptyTestDatabase(): Promise<TestDatabase> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const created = await createServerDatabase(url);
    const db = openPostgresDatabase({ connectionString: created.url, maxConnections: 2 });
    return {
      db,
      async close() {
        await db.close();
        await created.drop();
      },
    };
  }
  const embedded = await openDump(await emptyDump());
  return { db: embedded, close: () => embedded.close() };
}

let emptyDumpPromise: Promise<Blob> | null = null;

/**
 * The database PGlite's initdb makes, dumped once per PGlite version (in the temp dir, beside the
 * migrated dump): initdb cost 3.5–5 CPU-seconds an empty database, loading its dump about half a
 * second. initdb's database, templates and all, with 1 MB WAL segments and written after a checkpoint.
 */
function emptyDump(): Promise<Blob> {
  emptyDumpPromise ??= cachedDump(emptyDumpPath(), async () => {}).catch((error: unknown) => {
    emptyDumpPromise = null;
    throw error;
  });
  return emptyDumpPromise;
}

function emptyDumpPath(): string {
  return join(tmpdir(), `loanql-test-pgdata-${createHash('sha256').update(`empty, pglite ${pgliteVersion()}, after a checkpoint, 1 MB WAL segments\n`).digest('hex').slice(0, 16)}.tar`);
}

/** Which database the tests run on, for test names and messages. */
export const testDatabaseKind: 'postgres' | 'pglite' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * A new, empty database on the PostgreSQL server at `serverUrl`: its URL, and `drop()`.
 * Also used by the process-level tests, which hand the URL to the service as `DATABASE_URL`.
 */
export async function createServerDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `loanql_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(serverUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const target = new URL(serverUrl);
  target.pathname = `/${name}`;
  let dropped = false;
  return {
    url: target.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      // WITH (FORCE) (PostgreSQL 13+) also ends any connection a failed test left behind.
      await withAdminClient(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * A new database on the server owned by a new role that may log in and is no superuser (as the
 * owner of a managed PostgreSQL's database is), and its URL as that role; `drop()` removes both.
 */
export async function createServerDatabaseOwnedByPlainRole(serverUrl: string): Promise<{ url: string; role: string; drop(): Promise<void> }> {
  const suffix = randomBytes(6).toString('hex');
  const [role, name] = [`loanql_owner_${suffix}`, `loanql_test_${suffix}`];
  await withAdminClient(serverUrl, async (admin) => {
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${role}`);
  });
  const target = new URL(serverUrl);
  target.username = role;
  target.password = '';
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    role,
    async drop() {
      await withAdminClient(serverUrl, async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${role}`);
      });
    },
  };
}

async function openServerTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const created = await createServerDatabase(serverUrl);
  const db = openPostgresDatabase({ connectionString: created.url, maxConnections: 5 });
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    await created.drop();
    throw error;
  }
  let closed = false;
  return {
    db,
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
      await created.drop();
    },
  };
}

async function withAdminClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A migrated embedded database (PGlite, from the migrated dump) whatever `TEST_DATABASE_URL` says:
 * for a test that needs PGlite's one session (a session setting kept between statements).
 */
export async function openEmbeddedTestDatabase(): Promise<TestDatabase> {
  let db: Awaited<ReturnType<typeof openPgliteDatabase>>;
  try {
    db = await openDump(await migratedDump());
  } catch {
    // An unreadable dump (say, cut short by a full disk): start from nothing and replace it.
    rmSync(dumpPath(), { force: true });
    dumpPromise = null;
    db = await openDump(await migratedDump());
  }
  await migrate(db);
  return embeddedTestDatabase(db);
}

function embeddedTestDatabase(db: Database): TestDatabase {
  let closed = false;
  return {
    db,
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}

/**
 * Fills `dataDir` (a path that does not exist yet) with a migrated embedded data directory that
 * holds no account — what the service's first start leaves after its migrations, before the
 * demo — for the process tests whose subject is not that first start: the service started on it
 * still migrates (nothing to do) and writes the demo, without PGlite's initdb and the migrations
 * (about 5 CPU-seconds a start). A copy of a directory built once per schema beside the dumps.
 */
export async function copyMigratedDataDir(dataDir: string): Promise<void> {
  cpSync(await migratedDataDirTemplate(), dataDir, { recursive: true });
}

async function migratedDataDirTemplate(): Promise<string> {
  const template = dumpPath().replace(/\.tar$/, '-datadir');
  if (!existsSync(template)) await buildOnce(`${template}.lock`, () => existsSync(template), () => buildMigratedDataDir(template));
  const now = new Date();
  utimesSync(template, now, now); // in use (see removeOldDumps)
  return template;
}

async function buildMigratedDataDir(template: string): Promise<void> {
  // Built under a unique name and renamed into place: a concurrent reader sees none or a whole one.
  const partial = `${template}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  try {
    const built = await openPgliteDatabase(partial, await migratedDump(), PGLITE_OPTIONS);
    try {
      await migrate(built);
      await checkpoint(built);
    } finally {
      await built.close();
    }
    renameSync(partial, template);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(template)) throw error; // another process won the race otherwise
  }
}

/**
 * A migrated test database that `build` has filled, and what `build` returned (plain JSON). On
 * PGlite the result is kept as a dump beside the migrated one, keyed by the schema, `key` and
 * every source file under `sources` (folders relative to the project root, read recursively):
 * the first process pays for `build` (a scale-1 portfolio: about a minute), later ones load
 * the dump in a few seconds; a process that needs it while another builds it waits for that one
 * (`buildOnce`). `gzip: false` keeps the dump uncompressed: for a small build (a seeded account,
 * `seededService.ts`), loading a plain tar costs about half as much CPU. `base` (PGlite only)
 * opens the database `build` starts from instead of the migrated one — another built database,
 * whose result `build` is given — so builds that share a beginning (seeded accounts, the first
 * ones the same) pay for it once. With `TEST_DATABASE_URL`, `build` runs on a fresh migrated
 * database every time, given no earlier result. Use it only where `build`'s result depends on
 * nothing but those inputs.
 */
export async function openBuiltTestDatabase<T, B = undefined>(
  key: string,
  sources: readonly string[],
  build: (db: Database, base: B | undefined) => Promise<T>,
  { gzip = true, base }: { gzip?: boolean; base?: () => Promise<{ database: TestDatabase; built: B }> } = {},
): Promise<{ database: TestDatabase; built: T }> {
  if (process.env.TEST_DATABASE_URL) {
    const database = await openTestDatabase();
    try {
      return { database, built: await build(database.db, undefined) };
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  const stem = builtStem(key, sources);
  const path = `${stem}${gzip ? '.tar.gz' : '.tar'}`;
  const resultPath = `${stem}.json`;
  const open = async (): Promise<{ database: TestDatabase; built: T } | undefined> => {
    try {
      const built = JSON.parse(readFileSync(resultPath, 'utf8')) as T;
      const db = await openDump(new DumpBlob(readFileSync(path), gzip ? 'application/x-gzip' : 'application/x-tar', true));
      const now = new Date();
      utimesSync(path, now, now);
      utimesSync(resultPath, now, now);
      await migrate(db);
      return { database: embeddedTestDatabase(db), built };
    } catch {
      return undefined; // not built yet (or unreadable): built below
    }
  };
  const buildAndKeep = async (): Promise<{ database: TestDatabase; built: T }> => {
    const start = base ? await base() : { database: await openEmbeddedTestDatabase(), built: undefined };
    const { database } = start;
    try {
      const built = await build(database.db, start.built);
      // Compressed by default, unlike the migrated dump: after a scale-1 seed the tar is 900 MB
      // (half of it write-ahead log PGlite keeps), gzipped 235 MB, and loads in 7 s instead of 5.
      await checkpoint(database.db);
      const dump = await (database.db as Awaited<ReturnType<typeof openPgliteDatabase>>).pglite.dumpDataDir(gzip ? 'gzip' : 'none');
      const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.partial`;
      try {
        // The result first, then the dump: a reader that finds the dump finds its result.
        writeFileSync(`${resultPath}.${suffix}`, JSON.stringify(built ?? null));
        renameSync(`${resultPath}.${suffix}`, resultPath);
        writeFileSync(`${path}.${suffix}`, Buffer.from(await dump.arrayBuffer()));
        renameSync(`${path}.${suffix}`, path);
      } catch {
        rmSync(`${resultPath}.${suffix}`, { force: true });
        rmSync(`${path}.${suffix}`, { force: true });
      }
      return { database, built };
    } catch (error) {
      await database.close();
      throw error;
    }
  };
  return (
    (await open()) ??
    (await buildOnce(`${stem}.lock`, () => existsSync(path), buildAndKeep)) ??
    // Built by another process meanwhile (or, when its dump cannot be opened, built here too).
    (await open()) ??
    (await buildAndKeep())
  );
}

/** How long a process waits for another's build of the same dump before it builds it too. */
const BUILD_PATIENCE_MS = 10 * 60_000;

/**
 * Runs `build` holding the lock `lock` (a folder, made atomically, with the holder's pid in it),
 * unless `ready()` turns true first: then it answers undefined — another process built it. Test
 * processes that run side by side often need the same dump at the same moment (in a fresh
 * clone's first run, two built the default seeded account at once: 4 CPU-seconds twice); now one
 * builds and the others wait, idle, for its result. A lock whose process is gone (killed mid-build)
 * is taken over; after `BUILD_PATIENCE_MS` a waiter builds anyway, as before locks.
 */
async function buildOnce<T>(lock: string, ready: () => boolean, build: () => Promise<T>): Promise<T | undefined> {
  const since = Date.now();
  for (;;) {
    if (ready()) return undefined;
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return build();
      if (lockHolderGone(lock)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() - since > BUILD_PATIENCE_MS) return build();
      else await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      writeFileSync(join(lock, 'pid'), String(process.pid));
      if (ready()) return undefined; // finished by another process between the check and the lock
      return await build();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** True when the process that made `lock` has exited (or never wrote its pid, a while ago). */
function lockHolderGone(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs > 10_000;
    } catch {
      return false; // removed meanwhile: the next attempt takes it
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Fills `dataDir` (a path that does not exist yet) with a migrated embedded data directory that
 * `build` has filled, and answers what `build` returned (plain JSON): `copyMigratedDataDir` for
 * the process tests whose data is always the same (a seeded account), so the seeding is paid
 * once per schema, `key` and `sources` (as `openBuiltTestDatabase`) instead of once per run. The
 * built directory is kept beside the dumps; `build` runs in this process on a copy of the
 * migrated one, closed before the copy is handed out. Embedded (PGlite) only.
 */
export async function copyBuiltDataDir<T>(dataDir: string, key: string, sources: readonly string[], build: (db: Database) => Promise<T>): Promise<T> {
  // One folder holds the data directory (`data`) and build's result (`built.json`), so that a
  // rename puts both in place at once: a concurrent reader sees none or a matching pair.
  const template = `${builtStem(`data directory: ${key}`, sources)}-datadir`;
  if (!existsSync(template)) await buildOnce(`${template}.lock`, () => existsSync(template), () => buildDataDir(template, key, build));
  const now = new Date();
  utimesSync(template, now, now); // in use (see removeOldDumps)
  cpSync(join(template, 'data'), dataDir, { recursive: true });
  return JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as T;
}

async function buildDataDir<T>(template: string, key: string, build: (db: Database) => Promise<T>): Promise<void> {
  const partial = `${template}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  try {
    cpSync(await migratedDataDirTemplate(), join(partial, 'data'), { recursive: true });
    const built = await openPgliteDatabase(join(partial, 'data'), undefined, PGLITE_OPTIONS);
    let result: T;
    try {
      await migrate(built);
      result = await build(built);
      await checkpoint(built);
    } finally {
      await built.close();
    }
    writeFileSync(join(partial, 'built.json'), JSON.stringify(result ?? null));
    renameSync(partial, template);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(template)) throw error; // another process won the race otherwise
  }
}

/** The path stem of a built dump or data directory: the migrated dump's, with a hash of `key` and every file under `sources`. */
function builtStem(key: string, sources: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(`${key}\n`);
  const root = fileURLToPath(new URL('../../', import.meta.url));
  for (const source of sources) hashTree(hash, join(root, source), source); // names relative to the root: every checkout shares the dumps
  return dumpPath().replace(/\.tar$/, `-${hash.digest('hex').slice(0, 16)}`);
}

/** Adds every file under `path` (sorted, by relative name and content) to `hash`. */
function hashTree(hash: ReturnType<typeof createHash>, path: string, name = path): void {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) hashTree(hash, join(path, entry), `${name}/${entry}`);
    return;
  }
  hash.update(`${name}\n`);
  hash.update(readFileSync(path));
}

let dumpPromise: Promise<Blob> | null = null;

/** The dump of a freshly migrated PGlite: from this process's memory, the temp dir, or built now. */
function migratedDump(): Promise<Blob> {
  dumpPromise ??= loadOrBuildDump().catch((error: unknown) => {
    dumpPromise = null;
    throw error;
  });
  return dumpPromise;
}

function loadOrBuildDump(): Promise<Blob> {
  const path = dumpPath();
  return cachedDump(
    path,
    async (db) => {
      await migrate(db);
      await dropTemplateDatabases(db);
    },
    () => removeOldDumps(path),
  );
}

/**
 * The dump at `path` in the temp dir, or, when there is none yet, a new PGlite's after `prepare`,
 * written there (then `written`). 1 MB WAL segments (PostgreSQL's default is 16): the segment the
 * dump holds, and the next one a checkpoint may create, were 16–33 MB of every dump (seeded ones
 * are built from the migrated one), read, copied and unpacked at every open. Uncompressed: gzip
 * makes the file 8× smaller but loading it 50 % slower.
 */
async function cachedDump(path: string, prepare: (db: Database) => Promise<void>, written: () => void = () => {}): Promise<Blob> {
  const read = (): Blob | undefined => {
    try {
      const blob = new DumpBlob(readFileSync(path), 'application/x-tar', false);
      const now = new Date();
      utimesSync(path, now, now); // marks it as in use (see removeOldDumps)
      return blob;
    } catch {
      return undefined; // not built yet
    }
  };
  return (
    read() ??
    (await buildOnce(`${path}.lock`, () => existsSync(path), () => buildDump(path, prepare, written))) ??
    read() ??
    (await buildDump(path, prepare, written))
  );
}

async function buildDump(path: string, prepare: (db: Database) => Promise<void>, written: () => void): Promise<Blob> {
  const fresh = await openPgliteDatabase(undefined, undefined, { ...PGLITE_OPTIONS, walSegmentSizeMB: 1 });
  try {
    await prepare(fresh);
    await checkpoint(fresh);
    const dump = await fresh.pglite.dumpDataDir('none');
    // Written under a unique name and renamed into place: another test process reading
    // concurrently sees either no file or a whole one, never half of one.
    const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
    try {
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, path);
      written();
    } catch {
      rmSync(partial, { force: true });
    }
    return dump;
  } finally {
    await fresh.close();
  }
}

/**
 * Drops `template0` and `template1` from a PGlite about to be dumped: a test database is never
 * a template (PGlite runs one database, `postgres`), and without them the dump is 28 MB
 * instead of 43, which every load unpacks (about 0.15 CPU-seconds a database less).
 */
async function dropTemplateDatabases(db: Database): Promise<void> {
  for (const name of ['template0', 'template1']) {
    await db.query(`ALTER DATABASE ${name} IS_TEMPLATE false`);
    await db.query(`DROP DATABASE ${name}`);
  }
}

/**
 * A checkpoint before a dump: a database loaded from it starts without replaying the write-ahead
 * log its build wrote (a fifth less CPU per load), and with `wal_recycle` off (this session only)
 * the log segments the checkpoint frees are deleted instead of kept for reuse (a seeded dump's
 * tar: one 16 MB segment instead of three).
 */
async function checkpoint(db: Database): Promise<void> {
  await db.query('SET wal_recycle = off');
  await db.query('CHECKPOINT');
  await db.query('RESET wal_recycle');
}

/** Dumps (and migrated data directories) of earlier schemas (40 MB each; a built one, a few hundred) not used for an hour are removed, and build locks a killed process left (`buildOnce`). */
function removeOldDumps(current: string): void {
  const hourAgo = Date.now() - 3_600_000;
  for (const file of readdirSync(tmpdir())) {
    const path = join(tmpdir(), file);
    if (!/^loanql-test-pgdata-[0-9a-f]+(?:-[0-9a-f]+)?(?:\.(?:tar|tar\.gz|json)|-datadir)(?:\.lock)?$/.test(file) || path === current || path === current.replace(/\.tar$/, '-datadir')) continue;
    try {
      if (statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      /* removed meanwhile */
    }
  }
}

function dumpPath(): string {
  return join(tmpdir(), `loanql-test-pgdata-${schemaFingerprint()}.tar`);
}

/** The installed PGlite's version (its package.json is not exported, so found beside its entry). */
function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    try {
      const found = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (found.name === '@electric-sql/pglite' && found.version) return found.version;
    } catch {
      /* not here */
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

/** A hash of every migration file, the PGlite version and how dumps are made: a new migration means a new dump. */
function schemaFingerprint(): string {
  const hash = createHash('sha256');
  hash.update(`pglite ${pgliteVersion()}\n`);
  hash.update('dumped after a checkpoint, without template databases, 1 MB WAL segments\n'); // how the dump is made (older dumps were not)
  const migrations = fileURLToPath(new URL('../../db/migrations/', import.meta.url));
  for (const file of readdirSync(migrations).sort()) {
    hash.update(`${file}\n`);
    hash.update(readFileSync(join(migrations, file)));
  }
  hash.update(readFileSync(fileURLToPath(new URL('../../db/migrate.ts', import.meta.url))));
  return hash.digest('hex').slice(0, 16);
}
