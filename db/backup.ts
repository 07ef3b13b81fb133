import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { Database, Queryable } from './database.js';
import { knownMigrations, migrate, migrateInTransaction } from './migrate.js';

/**
 * `loanql backup` and `loanql restore` (README "Backups"): every logged table of the schema the
 * migrations own, read in one snapshot and written as lines of JSON (the caller gzips them), then
 * loaded into an empty database brought to the backup's migrations, in one transaction.
 *
 * The file, one JSON value a line:
 *   {"format":"loanql-backup","version":1,"lastMigration":…,"migrations":[…],"takenAt":…,"postgres":…}
 *   {"table":"accounts","columns":["id",…]}   then one line per row: ["text of column 1",null,…]
 *   {"rows":12}                                 the table's end and its row count
 *   {"sequence":"webhook_outbox_seq_seq","lastValue":"41","isCalled":true}
 *   {"end":true,"tables":38,"rows":5210}        the last line: a file without it is cut short
 * Each value is its column's text form (what COPY writes), so every type comes back exact.
 */
export const BACKUP_FORMAT = 'loanql-backup';
export const BACKUP_FORMAT_VERSION = 1;

/** Rows read by one keyset statement: a table is never held whole. */
const ROWS_PER_READ = 500;
/** Rows, or bytes of their text, loaded by one INSERT. */
const ROWS_PER_LOAD = 500;
const BYTES_PER_LOAD = 4 * 1024 * 1024;

/** The first line of a backup. */
export interface BackupHeader {
  readonly format: string;
  readonly version: number;
  /** The loanql migrations the database had applied, in order; the schema the rows belong to. */
  readonly migrations: readonly string[];
  readonly lastMigration: string;
  /** When the snapshot was taken (ISO 8601, UTC). */
  readonly takenAt: string;
  /** The PostgreSQL version that held it (`server_version`). */
  readonly postgres: string;
}

export interface BackupSummary {
  readonly header: BackupHeader;
  readonly tables: number;
  readonly rows: number;
}

/** A backup file that cannot be read: not one, cut short, or damaged. Nothing was written. */
export class BackupFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupFileError';
  }
}

/** A restore this database or this build cannot take (not empty, a newer backup). Nothing was written. */
export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

/** A double-quoted identifier. Names come only from the database's catalogue, never from a file. */
function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

interface TableShape {
  readonly name: string;
  /** The columns a row is written with: not the generated ones (PostgreSQL computes them). */
  readonly columns: readonly string[];
  /** Each column's type (`format_type` without its modifier: the column's own applies on insert). */
  readonly types: readonly string[];
}

/**
 * The logged tables of the current schema with their columns, parents before the tables whose
 * foreign keys name them (a load in this order passes every foreign key). Unlogged tables — the
 * caches `ledger_fingerprints`, `ledger_resume_states`, `rate_limit_buckets`,
 * `key_write_positions` — are left out (a crash empties them anyway), and so is
 * `loanql_migrations`: a restore brings the database to the header's migrations by running them.
 */
async function tablesOf(db: Queryable): Promise<TableShape[]> {
  const { rows } = await db.query<{ name: string; columns: string[]; types: string[] }>(
    `SELECT c.relname AS name,
            array_agg(a.attname::text ORDER BY a.attnum) AS columns,
            array_agg(format_type(a.atttypid, NULL) ORDER BY a.attnum) AS types
       FROM pg_class c
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p'
        AND NOT c.relispartition AND c.relname <> 'loanql_migrations'
      GROUP BY c.relname
      ORDER BY c.relname`,
  );
  const { rows: references } = await db.query<{ child: string; parent: string }>(
    `SELECT DISTINCT child.relname AS child, parent.relname AS parent
       FROM pg_constraint k
       JOIN pg_class child ON child.oid = k.conrelid
       JOIN pg_class parent ON parent.oid = k.confrelid
      WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace AND k.conrelid <> k.confrelid`,
  );
  const parents = new Map(rows.map((row) => [row.name, new Set<string>()]));
  for (const { child, parent } of references) if (parents.has(parent)) parents.get(child)?.add(parent);
  const ordered: TableShape[] = [];
  const placed = new Set<string>();
  const byName = new Map(rows.map((row) => [row.name, { name: row.name, columns: row.columns, types: row.types }]));
  while (placed.size < byName.size) {
    const ready = [...byName.keys()].filter((name) => !placed.has(name) && [...parents.get(name)!].every((parent) => placed.has(parent)));
    // A cycle of foreign keys (none today): its tables in name order; the load does not check them anyway.
    const next = ready.length ? ready : [[...byName.keys()].find((name) => !placed.has(name))!];
    for (const name of next) {
      placed.add(name);
      ordered.push(byName.get(name)!);
    }
  }
  return ordered;
}

/** The current schema's logged sequences (an identity column's among them). */
async function sequencesOf(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class
      WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S' AND relpersistence = 'p' ORDER BY relname`,
  );
  return rows.map((row) => row.name);
}

/**
 * Writes a backup of `database` to `write` (one line at a time; it resolves when the line may be
 * followed by the next, so a slow disk slows the read rather than filling memory): one `REPEATABLE
 * READ, READ ONLY` transaction, so every table is read as of one moment while the service goes on
 * writing (on PostgreSQL; on the embedded database its statements wait for the transaction, as
 * PGlite runs one session). Each table is read in keyset batches of `ROWS_PER_READ` rows by `ctid`
 * (stable within the snapshot; a TID range scan), so none is held whole.
 */
export async function writeBackup(database: Database, write: (line: string) => Promise<void>): Promise<BackupSummary> {
  let runs = 0;
  return database.transaction(async (tx) => {
    // Lines already written cannot be taken back: a snapshot that had to run again would repeat them.
    if (++runs > 1) throw new Error('the backup transaction was undone by the database; nothing usable was written');
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const migrations = await appliedMigrations(tx);
    if (!migrations.length) throw new RestoreRefusedError('nothing to back up: the database has no loanql migrations (is DATABASE_URL or DATA_DIR the right one?)');
    const { rows: about } = await tx.query<{ version: string; now: string }>(
      `SELECT current_setting('server_version') AS version, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`,
    );
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_FORMAT_VERSION,
      migrations,
      lastMigration: migrations[migrations.length - 1]!,
      takenAt: about[0]!.now,
      postgres: about[0]!.version,
    };
    await write(`${JSON.stringify(header)}\n`);
    const tables = await tablesOf(tx);
    let total = 0;
    for (const table of tables) {
      await write(`${JSON.stringify({ table: table.name, columns: table.columns })}\n`);
      const read = `SELECT ctid::text AS at, ARRAY[${table.columns.map((column) => `${identifier(column)}::text`).join(', ')}] AS r
        FROM ${identifier(table.name)} WHERE ctid > $1::tid ORDER BY ctid LIMIT $2`;
      let after = '(0,0)';
      let count = 0;
      for (;;) {
        const { rows } = await tx.query<{ at: string; r: (string | null)[] }>(read, [after, ROWS_PER_READ]);
        for (const row of rows) await write(`${JSON.stringify(row.r)}\n`);
        count += rows.length;
        if (rows.length < ROWS_PER_READ) break;
        after = rows[rows.length - 1]!.at;
      }
      await write(`${JSON.stringify({ rows: count })}\n`);
      total += count;
    }
    for (const sequence of await sequencesOf(tx)) {
      const { rows } = await tx.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${identifier(sequence)}`);
      await write(`${JSON.stringify({ sequence, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called })}\n`);
    }
    await write(`${JSON.stringify({ end: true, tables: tables.length, rows: total })}\n`);
    return { header, tables: tables.length, rows: total };
  });
}

async function appliedMigrations(db: Queryable): Promise<string[]> {
  const { rows: exists } = await db.query<{ present: boolean }>(`SELECT to_regclass('loanql_migrations') IS NOT NULL AS present`);
  if (!exists[0]!.present) return [];
  const { rows } = await db.query<{ name: string }>('SELECT name FROM loanql_migrations ORDER BY name');
  return rows.map((row) => row.name);
}

/** The lines of a text stream (UTF-8), without their line breaks; the stream's errors (a damaged gzip) reject. */
export async function* linesOf(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let end = pending.indexOf('\n');
    while (end >= 0) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
      end = pending.indexOf('\n');
    }
  }
  pending += decoder.end();
  if (pending !== '') yield pending;
}

/** One line of a backup after the header, checked for its shape. */
type BackupLine =
  | { readonly kind: 'table'; readonly table: string; readonly columns: readonly string[] }
  | { readonly kind: 'row'; readonly values: readonly (string | null)[] }
  | { readonly kind: 'tableEnd'; readonly rows: number }
  | { readonly kind: 'sequence'; readonly sequence: string; readonly lastValue: string; readonly isCalled: boolean }
  | { readonly kind: 'end'; readonly tables: number; readonly rows: number };

const isText = (value: unknown): value is string => typeof value === 'string';

function parseLine(text: string, lineNumber: number): BackupLine {
  const damaged = (what: string) => new BackupFileError(`the backup is damaged at line ${lineNumber}: ${what}; nothing was written`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw damaged('not a line of a loanql backup');
  }
  if (Array.isArray(value)) {
    if (!value.every((item) => item === null || isText(item))) throw damaged('a row holds a value that is not text');
    return { kind: 'row', values: value as (string | null)[] };
  }
  const line = new Map(Object.entries(value !== null && typeof value === 'object' ? value : {}));
  const table = line.get('table');
  const columns = line.get('columns');
  if (isText(table) && Array.isArray(columns) && columns.every(isText)) return { kind: 'table', table, columns };
  const rows = line.get('rows');
  if (line.get('end') === true && Number.isSafeInteger(line.get('tables')) && Number.isSafeInteger(rows)) return { kind: 'end', tables: line.get('tables') as number, rows: rows as number };
  if (line.size === 1 && Number.isSafeInteger(rows)) return { kind: 'tableEnd', rows: rows as number };
  const sequence = line.get('sequence');
  const lastValue = line.get('lastValue');
  const isCalled = line.get('isCalled');
  if (isText(sequence) && isText(lastValue) && /^-?\d{1,19}$/.test(lastValue) && typeof isCalled === 'boolean') return { kind: 'sequence', sequence, lastValue, isCalled };
  throw damaged('not a line of a loanql backup');
}

/**
 * Reads a backup's header and checks it against this build's migrations: a backup from a newer
 * loanql (a migration this build does not know) is refused naming both, before anything is opened.
 */
export function checkBackupHeader(text: string | undefined): BackupHeader {
  const notOne = new BackupFileError(`not a loanql backup (its first line is not a ${BACKUP_FORMAT} header); nothing was written`);
  if (text === undefined) throw new BackupFileError('the backup is empty; nothing was written');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notOne;
  }
  const header = new Map(Object.entries(value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}));
  if (header.get('format') !== BACKUP_FORMAT) throw notOne;
  if (header.get('version') !== BACKUP_FORMAT_VERSION) throw new RestoreRefusedError(`the backup is format version ${String(header.get('version'))}; this loanql reads version ${BACKUP_FORMAT_VERSION}: restore it with the loanql that wrote it`);
  const migrations = header.get('migrations');
  const lastMigration = header.get('lastMigration');
  if (!Array.isArray(migrations) || !migrations.length || !migrations.every(isText) || migrations[migrations.length - 1] !== lastMigration) throw notOne;
  const known = knownMigrations();
  const unknown = migrations.filter((name) => !known.includes(name));
  if (unknown.length) {
    throw new RestoreRefusedError(
      `the backup was taken by a newer version of loanql: it has migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, which this version (up to ${known[known.length - 1]}) does not know; ` +
        'restore it with that version or a later one; nothing was written',
    );
  }
  const expected = known.slice(0, known.indexOf(lastMigration as string) + 1);
  if (expected.join('\n') !== migrations.join('\n')) throw new RestoreRefusedError(`the backup's migrations are not a beginning of this version's list (it ends at ${String(lastMigration)}); nothing was written`);
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_FORMAT_VERSION,
    migrations,
    lastMigration: lastMigration as string,
    takenAt: String(header.get('takenAt')),
    postgres: String(header.get('postgres')),
  };
}

/**
 * Reads a whole backup without a database: the header checked (`checkBackupHeader`), every line's
 * shape, each table's row count and the last line's totals. A file cut short or damaged is refused
 * here, before a restore opens (or creates) the database it would go into.
 */
export async function checkBackupFile(lines: AsyncIterable<string>): Promise<BackupSummary> {
  const iterator = lines[Symbol.asyncIterator]();
  const header = checkBackupHeader((await iterator.next()).value as string | undefined);
  let lineNumber = 1;
  let tables = 0;
  let total = 0;
  let inTable: { columns: number; rows: number } | null = null;
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const line = parseLine(next.value, ++lineNumber);
    const damaged = (what: string) => new BackupFileError(`the backup is damaged at line ${lineNumber}: ${what}; nothing was written`);
    if (line.kind === 'row') {
      if (!inTable) throw damaged('a row outside a table');
      if (line.values.length !== inTable.columns) throw damaged(`a row of ${line.values.length} values in a table of ${inTable.columns} columns`);
      inTable.rows++;
    } else if (inTable && line.kind !== 'tableEnd') {
      throw damaged("a table's rows end without their count");
    } else if (line.kind === 'table') {
      inTable = { columns: line.columns.length, rows: 0 };
      tables++;
    } else if (line.kind === 'tableEnd') {
      if (!inTable || line.rows !== inTable.rows) throw damaged(`a table's count says ${line.rows} rows, ${inTable?.rows ?? 0} were read`);
      total += inTable.rows;
      inTable = null;
    } else if (line.kind === 'end') {
      if (line.tables !== tables || line.rows !== total) throw damaged(`the totals say ${line.tables} tables and ${line.rows} rows, ${tables} and ${total} were read`);
      if (!(await iterator.next()).done) throw damaged('lines after the last one');
      return { header, tables, rows: total };
    }
  }
  throw new BackupFileError(`the backup is cut short after line ${lineNumber} (its last line, with the totals, is missing); nothing was written`);
}

export interface RestoreSummary extends BackupSummary {
  /** The migrations of this build run after the load (a backup from an older build). */
  readonly migratedAfter: readonly string[];
}

/**
 * Restores a backup (its `lines`, header first) into `database`, which must be empty: in one
 * transaction it is migrated to the backup's last migration (no further), every table is loaded
 * with `session_replication_role = replica` — no trigger fires, so the ledger is not replayed, no
 * change notice or webhook event is made, and foreign keys are not checked row by row (the rows
 * were consistent in their snapshot) — or, by a role that may not set it, with the schema's
 * triggers disabled and its foreign keys dropped and added again after
 * (`suspendTriggersAndForeignKeys`), and the sequences are set. Then `ANALYZE`, and the
 * migrations of this build the backup predates run as at any start. Anything wrong rolls back all.
 */
export async function restoreBackup(database: Database, lines: AsyncIterable<string>): Promise<RestoreSummary> {
  const iterator = lines[Symbol.asyncIterator]();
  const header = checkBackupHeader((await iterator.next()).value as string | undefined);
  let runs = 0;
  const summary = await database.transaction(async (tx) => {
    if (++runs > 1) throw new Error('the restore transaction was undone by the database (a conflict); nothing was written: run it again');
    await refuseUnlessEmpty(tx, header);
    await migrateInTransaction(tx, header.lastMigration);
    const suspended = (await replicationRoleSet(tx)) ? null : await suspendTriggersAndForeignKeys(tx);
    const tables = new Map((await tablesOf(tx)).map((table) => [table.name, table]));
    const sequences = new Set(await sequencesOf(tx));
    const loaded = await loadLines(tx, iterator, tables, sequences, header);
    if (suspended) await resumeTriggersAndForeignKeys(tx, suspended);
    return loaded;
  });
  await database.query('ANALYZE');
  const migratedAfter = await migrate(database);
  return { ...summary, migratedAfter };
}

/**
 * Sets `session_replication_role = replica` for the rest of the transaction — no trigger fires, no
 * foreign key is checked row by row — when the role may (a superuser, or on PostgreSQL 15+ one
 * granted `SET ON PARAMETER session_replication_role`); false when it may not, with the
 * transaction as it was (the attempt is undone to a savepoint).
 */
async function replicationRoleSet(tx: Queryable): Promise<boolean> {
  await tx.query('SAVEPOINT loanql_restore_role');
  try {
    await tx.query('SET LOCAL session_replication_role = replica');
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42501') throw error;
    await tx.query('ROLLBACK TO SAVEPOINT loanql_restore_role');
    return false;
  }
  await tx.query('RELEASE SAVEPOINT loanql_restore_role');
  return true;
}

/** What a restore without `session_replication_role` turned off, to turn back on after the load. */
interface SuspendedChecks {
  readonly triggers: readonly { readonly table: string; readonly trigger: string }[];
  readonly foreignKeys: readonly { readonly table: string; readonly name: string; readonly definition: string }[];
}

/**
 * A role that may not set `session_replication_role` — the database's owner that is no superuser,
 * as on most managed PostgreSQL — restores as the owner of the tables it has just migrated may
 * (before session 39 it was refused): each enabled trigger of the schema disabled by name (the
 * ledger is not replayed, no change notice or webhook event made), each foreign key dropped, and
 * after the load the foreign keys added again — checked once, over the whole tables — and the
 * triggers enabled, all in the restore's one transaction. A table the role does not own (the
 * database was migrated by another role) is refused, naming the privileges that would do.
 */
async function suspendTriggersAndForeignKeys(tx: Queryable): Promise<SuspendedChecks> {
  const { rows: triggers } = await tx.query<{ table: string; trigger: string }>(
    `SELECT c.relname AS table, t.tgname AS trigger
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal AND t.tgenabled = 'O'
      ORDER BY c.relname, t.tgname`,
  );
  const { rows: foreignKeys } = await tx.query<{ table: string; name: string; definition: string }>(
    `SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE k.connamespace = current_schema()::regnamespace AND k.contype = 'f' AND k.conparentid = 0
      ORDER BY c.relname, k.conname`,
  );
  try {
    // Names from the catalog, quoted; DDL takes no parameters.
    for (const { table, trigger } of triggers) await tx.query(`ALTER TABLE ${identifier(table)} DISABLE TRIGGER ${identifier(trigger)}`);
    for (const { table, name } of foreignKeys) await tx.query(`ALTER TABLE ${identifier(table)} DROP CONSTRAINT ${identifier(name)}`);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42501') throw error;
    throw new RestoreRefusedError(
      `the restore cannot turn off the ledger's triggers during the load: ${(error as Error).message}. ` +
        'Restore as the role that owns the database (and migrated it: restore into a new, empty database), as a superuser, ' +
        'or on PostgreSQL 15 or later GRANT SET ON PARAMETER session_replication_role TO the role; nothing was written',
    );
  }
  return { triggers, foreignKeys };
}

async function resumeTriggersAndForeignKeys(tx: Queryable, suspended: SuspendedChecks): Promise<void> {
  for (const { table, name, definition } of suspended.foreignKeys) {
    try {
      // `definition` is the catalog's own text of the key just dropped (pg_get_constraintdef), not input.
      await tx.query(`ALTER TABLE ${identifier(table)} ADD CONSTRAINT ${identifier(name)} ${definition}`);
    } catch (error) {
      if ((error as { code?: unknown }).code !== '23503') throw error;
      throw new BackupFileError(`the backup's rows of ${table} cannot be loaded: ${(error as Error).message}; nothing was written`);
    }
  }
  for (const { table, trigger } of suspended.triggers) await tx.query(`ALTER TABLE ${identifier(table)} ENABLE TRIGGER ${identifier(trigger)}`);
}

/** Refuses a database that holds accounts, or loanql migrations beyond the backup's. */
async function refuseUnlessEmpty(tx: Queryable, header: BackupHeader): Promise<void> {
  const { rows: present } = await tx.query<{ accounts: boolean }>(`SELECT to_regclass('accounts') IS NOT NULL AS accounts`);
  if (present[0]!.accounts) {
    const { rows } = await tx.query<{ slug: string; total: string }>(`SELECT slug, count(*) OVER ()::text AS total FROM accounts ORDER BY slug LIMIT 3`);
    if (rows.length) {
      const total = Number(rows[0]!.total);
      throw new RestoreRefusedError(
        `the database already has ${total} account${total === 1 ? '' : 's'} (${rows.map((row) => row.slug).join(', ')}${total > rows.length ? ', …' : ''}): ` +
          'a restore goes into an empty database only — a new DATA_DIR, or a new PostgreSQL database (createdb); nothing was written',
      );
    }
  }
  const applied = await appliedMigrations(tx);
  const beyond = applied.filter((name) => !header.migrations.includes(name));
  if (beyond.length) {
    throw new RestoreRefusedError(
      `the database is already migrated beyond the backup (it has ${beyond[beyond.length - 1]}; the backup ends at ${header.lastMigration}): ` +
        'restore into a new, empty DATA_DIR or PostgreSQL database; nothing was written',
    );
  }
}

async function loadLines(tx: Queryable, iterator: AsyncIterator<string>, tables: ReadonlyMap<string, TableShape>, sequences: ReadonlySet<string>, header: BackupHeader): Promise<BackupSummary> {
  let lineNumber = 1;
  let total = 0;
  let loaded = 0;
  let table: { shape: TableShape; insert: string; rows: number } | null = null;
  let batch: (string | null)[][] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (!table || !batch.length) return;
    try {
      await tx.query(table.insert, [JSON.stringify(batch)]);
    } catch (error) {
      // A value its column cannot take (22…: a number that is not one; 23…: a constraint): the file's fault.
      const code = String((error as { code?: unknown }).code ?? '');
      if (!/^2[23]/.test(code)) throw error;
      throw new BackupFileError(`the backup's rows of ${table.shape.name} cannot be loaded: ${(error as Error).message}; nothing was written`);
    }
    batch = [];
    batchBytes = 0;
  };
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const line = parseLine(next.value, ++lineNumber);
    const damaged = (what: string) => new BackupFileError(`the backup is damaged at line ${lineNumber}: ${what}; nothing was written`);
    if (line.kind === 'row') {
      if (!table) throw damaged('a row outside a table');
      if (line.values.length !== table.shape.columns.length) throw damaged(`a row of ${line.values.length} values in a table of ${table.shape.columns.length} columns`);
      batch.push(line.values as (string | null)[]);
      batchBytes += next.value.length;
      table.rows++;
      if (batch.length >= ROWS_PER_LOAD || batchBytes >= BYTES_PER_LOAD) await flush();
    } else if (table && line.kind !== 'tableEnd') {
      throw damaged("a table's rows end without their count");
    } else if (line.kind === 'table') {
      table = { shape: matchingTable(tables, line.table, line.columns, header), insert: '', rows: 0 };
      table.insert = insertStatement(table.shape);
      const { rows } = await tx.query<{ any: boolean }>(`SELECT EXISTS (SELECT FROM ${identifier(table.shape.name)}) AS any`);
      if (rows[0]!.any) throw new RestoreRefusedError(`the table ${table.shape.name} already holds rows: a restore goes into an empty database only; nothing was written`);
      loaded++;
    } else if (line.kind === 'tableEnd') {
      if (!table || line.rows !== table.rows) throw damaged(`a table's count says ${line.rows} rows, ${table?.rows ?? 0} were read`);
      await flush();
      total += table.rows;
      table = null;
    } else if (line.kind === 'sequence') {
      if (!sequences.has(line.sequence)) throw new RestoreRefusedError(`the backup sets the sequence ${line.sequence}, which the database migrated to ${header.lastMigration} does not have; nothing was written`);
      await tx.query(`SELECT setval(to_regclass($1), $2::bigint, $3)`, [identifier(line.sequence), line.lastValue, line.isCalled]);
    } else {
      if (line.tables !== loaded || line.rows !== total) throw damaged(`the totals say ${line.tables} tables and ${line.rows} rows, ${loaded} and ${total} were read`);
      return { header, tables: loaded, rows: total };
    }
  }
  throw new BackupFileError(`the backup is cut short after line ${lineNumber} (its last line, with the totals, is missing); nothing was written`);
}

/** The database's table a backup's table goes into: same name, same columns (in the file's order). */
function matchingTable(tables: ReadonlyMap<string, TableShape>, name: string, columns: readonly string[], header: BackupHeader): TableShape {
  const shape = tables.get(name);
  if (!shape) throw new RestoreRefusedError(`the backup holds the table ${name}, which the database migrated to ${header.lastMigration} does not have; nothing was written`);
  const byName = new Map(shape.columns.map((column, i) => [column, shape.types[i]!]));
  const missing = columns.filter((column) => !byName.has(column));
  const extra = shape.columns.filter((column) => !columns.includes(column));
  if (missing.length || extra.length || new Set(columns).size !== columns.length) {
    throw new RestoreRefusedError(`the backup's table ${name} does not have the database's columns (${[...missing.map((c) => `backup only: ${c}`), ...extra.map((c) => `database only: ${c}`)].join(', ') || 'a column twice'}); nothing was written`);
  }
  // The database's own spellings, in the file's order.
  return { name: shape.name, columns: columns.map((column) => shape.columns.find((own) => own === column)!), types: columns.map((column) => byName.get(column)!) };
}

/**
 * One INSERT of a batch of rows given as one JSON parameter (an array of arrays of text): each
 * value goes through its type's input function, as COPY's text format does. `OVERRIDING SYSTEM
 * VALUE`: an identity column (`webhook_outbox.seq`) keeps its stored value.
 */
function insertStatement(shape: TableShape): string {
  const values = shape.columns.map((_, i) => `(r->>${i})::${shape.types[i]}`).join(', ');
  return `INSERT INTO ${identifier(shape.name)} (${shape.columns.map(identifier).join(', ')}) OVERRIDING SYSTEM VALUE
    SELECT ${values} FROM jsonb_array_elements($1::jsonb) AS batch(r)`;
}

/** Text gathered before it goes to gzip: one zlib call per 64 KiB, not per row. */
const WRITE_CHUNK_CHARS = 64 * 1024;

/**
 * `writeBackup` into a new gzipped file at `path` (0600: it holds the lender's data; README
 * "Backups"). It is written as `path.partial` and renamed when complete, so `path` is only ever a
 * whole backup; a failure removes the partial file. Refuses a `path` that exists.
 */
export async function writeBackupFile(database: Database, path: string): Promise<BackupSummary & { readonly bytes: number }> {
  if (existsSync(path)) throw new RestoreRefusedError(`${path} exists: a backup never overwrites a file; give another --out`);
  const partial = `${path}.partial`;
  const gzip = createGzip();
  const written = pipeline(gzip, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
  written.catch(() => {}); // awaited below; a failure meanwhile destroys gzip, which the writes see
  let pending = '';
  const push = async (text: string) => {
    if (gzip.destroyed) throw (await written.then(() => new Error('the backup file was closed early')).catch((error: unknown) => error)) as Error;
    if (!gzip.write(text)) await once(gzip, 'drain');
  };
  try {
    const summary = await writeBackup(database, async (line) => {
      pending += line;
      if (pending.length >= WRITE_CHUNK_CHARS) {
        const text = pending;
        pending = '';
        await push(text);
      }
    });
    await push(pending);
    gzip.end();
    await written;
    renameSync(partial, path);
    return { ...summary, bytes: statSync(path).size };
  } catch (error) {
    gzip.destroy();
    await written.catch(() => {});
    rmSync(partial, { force: true });
    throw error;
  }
}

/** The lines of the gzipped backup at `path`; a file that is not gzip, or is damaged or cut short, throws `BackupFileError`. */
async function* backupFileLines(path: string): AsyncGenerator<string> {
  const source = createReadStream(path);
  const gunzip = createGunzip();
  source.on('error', (error) => gunzip.destroy(error));
  source.pipe(gunzip);
  try {
    yield* linesOf(gunzip);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('Z_')) throw new BackupFileError(`${path} is not a whole loanql backup (gzip: ${(error as Error).message}): damaged or cut short; nothing was written`);
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw new BackupFileError(`cannot read ${path}: ${(error as Error).message}`);
    throw error;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
}

/** `checkBackupFile` of the gzipped backup at `path`. */
export function checkBackupFileAt(path: string): Promise<BackupSummary> {
  return checkBackupFile(backupFileLines(path));
}

/** `restoreBackup` from the gzipped backup at `path`. */
export function restoreBackupFile(database: Database, path: string): Promise<RestoreSummary> {
  return restoreBackup(database, backupFileLines(path));
}
