/**
 * Which metadata file the service serves, apart from `config.ts` (which loads the engine, the
 * webhooks' and the operations' code for their settings): `loanql key create` reads the file's
 * roles and needs only this.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureMetadataFile, shippedEntriesMissing } from '../metadata/index.js';

export interface MetadataFileSettings {
  /** `METADATA_PATH`, else the project's own `metadata/loanql.yaml`. */
  readonly metadataPath: string;
  /** The metadata shipped with the project, from which `metadataPath` is created when missing. */
  readonly shippedMetadataPath: string;
  /** Whether `metadataPath` is the project's own `metadata/loanql.yaml` (METADATA_PATH unset). */
  readonly metadataPathIsDefault: boolean;
}

export function metadataFileSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): MetadataFileSettings {
  return {
    metadataPath: env.METADATA_PATH ? resolve(env.METADATA_PATH) : join(metadataDir(), 'loanql.yaml'),
    shippedMetadataPath: join(metadataDir(), SHIPPED_METADATA_FILE),
    metadataPathIsDefault: !env.METADATA_PATH,
  };
}

/**
 * The project's `metadata/` folder, found from this file (as `app/metadataFile.ts` under tsx or
 * `dist/app/metadataFile.js` when built) by its shipped `loanql.default.yaml`, so the service and the
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
 * The metadata file to serve: `config.metadataPath` (a `ServiceConfig` is one), first created from the shipped default when
 * it is the project's own file and missing (`ensureMetadataFile`); `onCreated` is told when it
 * was, and `onBehindShipped` of each section where the existing file lacks roles or event types
 * the shipped default has (`shippedEntriesMissing`: a file made from an older default). When it cannot be created (a read-only folder, a container user without write access to
 * a mounted one) the shipped file is served and `onCannotCreate` says why.
 */
export function metadataFileOf(
  config: MetadataFileSettings,
  onCreated: (path: string) => void = () => {},
  onCannotCreate: (path: string, reason: string) => void = () => {},
  onBehindShipped: (path: string, section: string, names: readonly string[]) => void = () => {},
): string {
  if (!config.metadataPathIsDefault) return config.metadataPath;
  try {
    if (ensureMetadataFile(config.metadataPath, config.shippedMetadataPath)) onCreated(config.metadataPath);
    else for (const { section, names } of shippedEntriesMissing(config.metadataPath, config.shippedMetadataPath)) onBehindShipped(config.metadataPath, section, names);
    return config.metadataPath;
  } catch (error) {
    onCannotCreate(config.metadataPath, (error as Error).message);
    return config.shippedMetadataPath;
  }
}
