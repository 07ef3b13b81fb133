/** Public surface of `db/`: the database interface, how to open it, and migrations. */
export type { Database, DatabaseKind, PoolStatus, Queryable, QueryOptions, QueryResult, Statement, StatementObserver } from './database.js';
export { queryInOrder, queryThenCommit, queryWrite, StatementFailed } from './database.js';
export { CONFLICT_ATTEMPTS, isWriteConflict, retryWriteConflicts } from './conflictRetry.js';
export { DataDirBusyError } from './dataDirLock.js';
export { DatabaseNewerThanBuildError, knownMigrations, migrate, MigrationFailedError } from './migrate.js';
export { ping } from './ping.js';
export { analyzeGrownTables, keepStatisticsFresh, type StatisticsUpkeepOptions } from './statisticsUpkeep.js';
export { databaseSettingsFromEnv, openCommandDatabase, openPgliteDatabase, openServiceDatabase, sharedBuffersOf, type DatabaseSettings, type OpenedDatabase } from './openDatabase.js';
export type { PgliteOptions } from './pgliteDatabase.js';
export { openPostgresDatabase } from './postgresDatabase.js';
export { databaseInTransaction } from './transactionDatabase.js';
export { DatabaseUnavailableError, isConnectionError } from './unavailable.js';
export { isStatementTimeout } from './statementTimeout.js';
export { formatLsn, parseLsn, ReadReplicas, RoutedDatabase, type Lsn, type ReadReplicaSettings, type ReplicaHealth } from './readReplicas.js';
export { BackupFileError, checkBackupFileAt, restoreBackupFile, RestoreRefusedError, writeBackupFile, type BackupHeader, type BackupSummary, type RestoreSummary } from './backup.js';
export { LEDGER_WRITERS_LOCK } from './ledgerWritersLock.js';
