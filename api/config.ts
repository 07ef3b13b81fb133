import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseSettingsFromEnv, type DatabaseSettings } from '../db/index.js';
import { ensureMetadataFile } from '../metadata/index.js';

/** Every setting of the service, from the environment (documented in the README). */
export interface ServiceConfig {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseSettings;
  readonly bodyLimitBytes: number;
  readonly maxDepth: number;
  readonly maxRows: number | null;
  readonly planCacheSize: number;
  readonly maxInsertObjects: number;
  readonly metadataPath: string;
  /** The metadata shipped with the project, from which `metadataPath` is created when missing. */
  readonly shippedMetadataPath: string;
  /** Whether `metadataPath` is the project's own `metadata/loanql.yaml` (METADATA_PATH unset). */
  readonly metadataPathIsDefault: boolean;
  readonly logLevel: string;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not "${raw}"`);
  return value;
}

/**
 * The project's `metadata/` folder, found from this file (as `api/config.ts` under tsx or
 * `dist/api/config.js` when built) by its shipped `loanql.default.yaml`, so the service and the
 * `loanql` bin work from any directory.
 */
function metadataDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    const candidate = join(dir, 'metadata');
    if (existsSync(join(candidate, SHIPPED_METADATA_FILE))) return candidate;
    dir = dirname(dir);
  }
  return resolve('metadata');
}

const SHIPPED_METADATA_FILE = 'loanql.default.yaml';


/**
 * The metadata file to serve: `config.metadataPath`, first created from the shipped default when
 * it is the project's own file and missing (`ensureMetadataFile`); `onCreated` is told when it
 * was. When it cannot be created (a read-only folder, a container user without write access to
 * a mounted one) the shipped file is served and `onCannotCreate` says why.
 */
export function metadataFileOf(
  config: ServiceConfig,
  onCreated: (path: string) => void = () => {},
  onCannotCreate: (path: string, reason: string) => void = () => {},
): string {
  if (!config.metadataPathIsDefault) return config.metadataPath;
  try {
    if (ensureMetadataFile(config.metadataPath, config.shippedMetadataPath)) onCreated(config.metadataPath);
    return config.metadataPath;
  } catch (error) {
    onCannotCreate(config.metadataPath, (error as Error).message);
    return config.shippedMetadataPath;
  }
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const maxRows = positiveInt(env, 'MAX_ROWS', 0);
  return {
    port: positiveInt(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    database: databaseSettingsFromEnv(env),
    bodyLimitBytes: positiveInt(env, 'BODY_LIMIT_BYTES', 1024 * 1024),
    maxDepth: positiveInt(env, 'MAX_QUERY_DEPTH', 12),
    maxRows: maxRows > 0 ? maxRows : null,
    planCacheSize: positiveInt(env, 'PLAN_CACHE_SIZE', 1000),
    maxInsertObjects: positiveInt(env, 'MAX_INSERT_OBJECTS', 1000),
    metadataPath: env.METADATA_PATH ? resolve(env.METADATA_PATH) : join(metadataDir(), 'loanql.yaml'),
    shippedMetadataPath: join(metadataDir(), SHIPPED_METADATA_FILE),
    metadataPathIsDefault: !env.METADATA_PATH,
    logLevel: env.LOG_LEVEL || 'info',
  };
}
