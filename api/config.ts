import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseSettingsFromEnv, type DatabaseSettings } from '../db/index.js';
import { webhookSettingsFromEnv, type WebhookSettings } from '../app/webhooks/index.js';

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
  readonly logLevel: string;
  readonly webhooks: WebhookSettings;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not "${raw}"`);
  return value;
}

/**
 * The project's `metadata/loanql.yaml`, found from this file (as `api/config.ts` under tsx or
 * `dist/api/config.js` when built), so the service and the `loanql` bin work from any directory.
 */
function defaultMetadataPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    const candidate = join(dir, 'metadata', 'loanql.yaml');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return resolve('metadata/loanql.yaml');
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
    metadataPath: env.METADATA_PATH ? resolve(env.METADATA_PATH) : defaultMetadataPath(),
    logLevel: env.LOG_LEVEL || 'info',
    webhooks: webhookSettingsFromEnv(env),
  };
}
