import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { databaseSettingsFromEnv, type DatabaseSettings } from '../db/index.js';
import { metadataFileSettingsFromEnv, type MetadataFileSettings } from './metadataFile.js';
import { DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_FIELDS, DEFAULT_MAX_QUERY_COST, DEFAULT_MAX_ROOT_FIELDS, type EngineOptions } from '../engine/index.js';
import { webhookSettingsFromEnv, type WebhookSettings } from './webhooks/index.js';
import { defaultRateLimitFromEnv } from './operations/rateLimiter.js';
import type { RateLimit } from '../metadata/index.js';
import { admissionSettingsFromEnv, type AdmissionSettings } from './operations/costAdmission.js';
import { REQUEST_LOG_LEVELS, type RequestLogSettings } from './operations/requestLog.js';
import { tracingWantedByEnv } from './operations/requestTraces.js';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import { choiceSetting, LARGEST_SETTING, wholeNumberSetting } from './envSettings.js';

export { metadataFileOf } from './metadataFile.js';

/** Every setting of the service, from the environment (documented in the README). */
export interface ServiceConfig extends MetadataFileSettings {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseSettings;
  readonly bodyLimitBytes: number;
  readonly maxDepth: number;
  readonly maxRows: number | null;
  readonly planCacheSize: number;
  readonly maxInsertObjects: number;
  /** Most estimated cost of a GraphQL request (0 = no limit). */
  readonly maxQueryCost: number;
  /** Most root fields of a GraphQL operation (0 = no limit). */
  readonly maxRootFields: number;
  /** Most fields of a GraphQL operation, fragments expanded (0 = no limit). */
  readonly maxFields: number;
  /** Most requests in one batch of `POST /api/graph` (a JSON array of requests). */
  readonly maxBatchSize: number;
  /** `LOG_LEVEL`: pino's level of the service's log. */
  readonly logLevel: LogLevel;
  /** Express's `trust proxy` setting (`TRUST_PROXY`), or false. */
  readonly trustProxy: boolean | number | string;
  readonly http: HttpTimeouts;
  /** How long SIGTERM waits for in-flight requests before closing the database anyway. */
  readonly shutdownGraceMs: number;
  /** `DEMO_SCALE`: the size of the demo portfolio a first start on an empty database writes (0.05: 500 loans). */
  readonly demoScale: number;
  readonly webhooks: WebhookSettings;
  /** API processes (`WORKERS`; `auto` = the machine's cores); more than 1 needs DATABASE_URL. */
  readonly workers: number;
  /** Read replicas (`DATABASE_REPLICA_URLS`, `REPLICA_MAX_LAG_MS`, `READ_YOUR_WRITES_WINDOW_MS`). */
  readonly readReplicas: { readonly urls: readonly string[]; readonly maxLagMs: number; readonly windowMs: number; readonly checkIntervalMs: number };
  /** Metrics and the request log (README "Operations"). */
  readonly operations: OperationsSettings;
  /** GraphQL subscriptions over WebSocket (`SUBSCRIPTIONS_*`, README "Subscriptions"). */
  readonly subscriptions: SubscriptionSettings;
}

/** `METRICS_TOKEN`, `REQUEST_LOG_LEVEL`, `REQUEST_LOG_SAMPLE`, `ADMISSION_*`, `RATE_LIMIT_*`, `OTEL_*`. */
export interface OperationsSettings {
  /** The bearer token `GET /metrics` asks for; null: no `/metrics` (404). */
  readonly metricsToken: string | null;
  readonly requestLog: RequestLogSettings;
  /** Admission by cost (`ADMISSION_*`); null: off. */
  readonly admission: AdmissionSettings | null;
  /** The rate limit of keys whose role has none (`RATE_LIMIT_PER_SECOND`, `RATE_LIMIT_BURST`); null: none. */
  readonly rateLimit: RateLimit | null;
  /** Traces of requests (OpenTelemetry), on when the `OTEL_*` variables ask for an exporter (`tracingWantedByEnv`). */
  readonly tracing: boolean;
}

export interface SubscriptionSettings {
  /** Open subscriptions of one API key per process (`SUBSCRIPTIONS_PER_KEY`). */
  readonly perKey: number;
  /** Open subscriptions of one process (`SUBSCRIPTIONS_PER_PROCESS`). */
  readonly perProcess: number;
  /** Unsent bytes after which a connection that does not read is dropped (`SUBSCRIPTION_BUFFER_BYTES`). */
  readonly maxBufferedBytes: number;
  /** Change notices within this window refresh a cohort once (`SUBSCRIPTION_REFRESH_WINDOW_MS`). */
  readonly refreshWindowMs: number;
  /** Every cohort is refreshed this often whatever the notices say (`SUBSCRIPTION_FALLBACK_MS`; 0 = never). */
  readonly fallbackIntervalMs: number;
  /**
   * Hasura's design, for comparison only (`SUBSCRIPTION_POLL_MS`; 0 = off, the default): change
   * notices are ignored and every cohort is re-run this often (bench/subscriptions.ts).
   */
  readonly pollIntervalMs: number;
}

/** Timeouts and caps of the HTTP server (README, Configuration). */
export interface HttpTimeouts {
  /** Longest wait for a request's complete headers (`server.headersTimeout`). */
  readonly headersTimeoutMs: number;
  /** Longest wait for a whole request, body included (`server.requestTimeout`). */
  readonly requestTimeoutMs: number;
  /** Idle time after which a keep-alive connection is closed (`server.keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number;
  /** A socket on which nothing happens for this long is closed (`server.timeout`). */
  readonly idleSocketTimeoutMs: number;
  /** Most open connections; more are refused at once (`server.maxConnections`). */
  readonly maxConnections: number;
}

/** The engine's options from the service's configuration. */
export function engineOptionsOf(config: ServiceConfig): EngineOptions {
  return { maxDepth: config.maxDepth, maxRows: config.maxRows, planCacheSize: config.planCacheSize, maxInsertObjects: config.maxInsertObjects, maxCost: config.maxQueryCost, maxRootFields: config.maxRootFields, maxFields: config.maxFields, maxBatchSize: config.maxBatchSize };
}

/** The names `TRUST_PROXY` may use for address ranges (Express's, through proxy-addr). */
const TRUST_PROXY_NAMES: ReadonlySet<string> = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: unset or `false` trusts no proxy (X-Forwarded-* ignored); `true` trusts every
 * hop; a number trusts that many hops; anything else is Express's list of addresses/subnets
 * (`loopback`, `10.0.0.0/8, 127.0.0.1`), each entry checked here: Express would refuse a bad one
 * only when the app is made, in its own words ("invalid IP address: …").
 */
function trustProxyOf(raw: string | undefined): boolean | number | string {
  const value = (raw ?? '').trim();
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const bad = value.split(',').map((entry) => entry.trim()).find((entry) => !isTrustedRange(entry));
  if (bad !== undefined) {
    throw new Error(`TRUST_PROXY must be true, false, a number of hops, or addresses and subnets separated by commas (10.0.0.0/8, 127.0.0.1, loopback, linklocal, uniquelocal); "${bad.slice(0, 40)}" is none of these`);
  }
  return value;
}

/** An entry of a `TRUST_PROXY` list: a name, an address, `address/prefix` or an IPv4 `address/netmask`. */
function isTrustedRange(entry: string): boolean {
  if (TRUST_PROXY_NAMES.has(entry)) return true;
  const [address = '', mask, ...more] = entry.split('/');
  const version = isIP(address);
  if (!version || more.length) return false;
  if (mask === undefined) return true;
  if (/^\d{1,3}$/.test(mask)) return Number(mask) <= (version === 4 ? 32 : 128);
  return version === 4 && isIP(mask) === 4;
}

/** `DEMO_SCALE`: a number from 0.0001 (one loan) to 1 (10,000 loans). */
function demoScaleOf(env: NodeJS.ProcessEnv): number {
  const raw = env.DEMO_SCALE;
  if (raw === undefined || raw === '') return 0.05;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || !(value >= 0.0001 && value <= 1)) throw new Error(`DEMO_SCALE must be a number from 0.0001 to 1, not "${raw}"`);
  return value;
}

/** A count or a time in milliseconds (README, Configuration): a whole number from `min` (0 unless said) to `max` (2147483647 unless said). */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = LARGEST_SETTING): number {
  return wholeNumberSetting(env, name, fallback, { min, max });
}

/** The longest `SHUTDOWN_GRACE_MS`: a day (the stop's own last-resort timer adds 15 s to it and must stay a valid timer). */
const LONGEST_SHUTDOWN_GRACE_MS = 86_400_000;

/**
 * The HTTP server's limits. Node refuses a headers timeout longer than the request timeout (when
 * both are on) with its own message; it is refused here first.
 */
function httpTimeoutsOf(env: NodeJS.ProcessEnv): HttpTimeouts {
  const headersTimeoutMs = wholeNumber(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000);
  const requestTimeoutMs = wholeNumber(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000);
  if (headersTimeoutMs > 0 && requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new Error(`HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}): the headers are part of the request`);
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: wholeNumber(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000),
    idleSocketTimeoutMs: wholeNumber(env, 'HTTP_IDLE_SOCKET_TIMEOUT_MS', 30_000),
    maxConnections: wholeNumber(env, 'HTTP_MAX_CONNECTIONS', 1_000),
  };
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const maxRows = wholeNumber(env, 'MAX_ROWS', 0);
  return {
    port: wholeNumberSetting(env, 'PORT', 8080, { min: 1, max: 65_535 }),
    host: env.HOST || '0.0.0.0',
    database: databaseSettingsFromEnv(env),
    bodyLimitBytes: wholeNumber(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1),
    maxDepth: wholeNumber(env, 'MAX_QUERY_DEPTH', 12, 1),
    maxRows: maxRows > 0 ? maxRows : null,
    planCacheSize: wholeNumber(env, 'PLAN_CACHE_SIZE', 1000, 1),
    maxQueryCost: wholeNumber(env, 'MAX_QUERY_COST', DEFAULT_MAX_QUERY_COST),
    maxRootFields: wholeNumber(env, 'MAX_ROOT_FIELDS', DEFAULT_MAX_ROOT_FIELDS),
    maxFields: wholeNumber(env, 'MAX_QUERY_FIELDS', DEFAULT_MAX_FIELDS),
    maxBatchSize: wholeNumber(env, 'MAX_BATCH_SIZE', DEFAULT_MAX_BATCH_SIZE),
    maxInsertObjects: wholeNumber(env, 'MAX_INSERT_OBJECTS', 1000, 1),
    ...metadataFileSettingsFromEnv(env),
    logLevel: choiceSetting(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    trustProxy: trustProxyOf(env.TRUST_PROXY),
    http: httpTimeoutsOf(env),
    shutdownGraceMs: wholeNumber(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, LONGEST_SHUTDOWN_GRACE_MS),
    demoScale: demoScaleOf(env),
    webhooks: webhookSettingsFromEnv(env),
    workers: workersOf(env),
    readReplicas: {
      urls: replicaUrlsOf(env),
      maxLagMs: wholeNumber(env, 'REPLICA_MAX_LAG_MS', 1_000),
      windowMs: wholeNumber(env, 'READ_YOUR_WRITES_WINDOW_MS', 60_000),
      checkIntervalMs: wholeNumber(env, 'REPLICA_CHECK_INTERVAL_MS', 250, 10),
    },
    operations: operationsOf(env),
    subscriptions: {
      perKey: wholeNumber(env, 'SUBSCRIPTIONS_PER_KEY', 100, 1),
      perProcess: wholeNumber(env, 'SUBSCRIPTIONS_PER_PROCESS', 20_000, 1),
      maxBufferedBytes: wholeNumber(env, 'SUBSCRIPTION_BUFFER_BYTES', 4 * 1024 * 1024, 64 * 1024),
      refreshWindowMs: wholeNumber(env, 'SUBSCRIPTION_REFRESH_WINDOW_MS', 50, 1),
      fallbackIntervalMs: wholeNumber(env, 'SUBSCRIPTION_FALLBACK_MS', 30_000),
      pollIntervalMs: wholeNumber(env, 'SUBSCRIPTION_POLL_MS', 0),
    },
  };
}

/** The shortest `METRICS_TOKEN`: a bearer token is the only thing between the metrics and anyone who can reach the port. */
const MIN_METRICS_TOKEN_LENGTH = 16;

function operationsOf(env: NodeJS.ProcessEnv): OperationsSettings {
  const token = env.METRICS_TOKEN ?? '';
  if (token !== '' && (token.length < MIN_METRICS_TOKEN_LENGTH || /[^\x21-\x7e]/.test(token))) {
    throw new Error(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} printable characters without spaces`);
  }
  const level = choiceSetting(env, 'REQUEST_LOG_LEVEL', REQUEST_LOG_LEVELS, 'info');
  const rawSample = (env.REQUEST_LOG_SAMPLE ?? '').trim();
  const sample = rawSample === '' ? 1 : Number(rawSample);
  if (!/^\d*\.?\d+$/.test(rawSample || '1') || !(sample >= 0 && sample <= 1)) throw new Error(`REQUEST_LOG_SAMPLE must be a number from 0 to 1, not "${rawSample}"`);
  return { metricsToken: token === '' ? null : token, requestLog: { level, sample }, admission: admissionSettingsFromEnv(env), rateLimit: defaultRateLimitFromEnv(env), tracing: tracingWantedByEnv(env) };
}

/** `WORKERS`: a whole number of at least 1, or `auto` for the machine's cores (default 1). */
function workersOf(env: NodeJS.ProcessEnv): number {
  const raw = (env.WORKERS ?? '').trim();
  if (raw === '') return 1;
  // Digits only, as every count (README "Configuration"): `Number` read `1e0`, `0x2`, `2.0` and `+2` as whole numbers.
  const workers = raw === 'auto' ? availableParallelism() : /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(workers >= 1 && workers <= 256)) throw new Error(`WORKERS must be a whole number from 1 to 256 or "auto", not "${raw}"`);
  if (workers > 1 && !env.DATABASE_URL) throw new Error('WORKERS above 1 needs DATABASE_URL: the embedded database admits one process');
  return workers;
}

/** `DATABASE_REPLICA_URLS`: comma-separated PostgreSQL URLs of streaming replicas of DATABASE_URL. */
function replicaUrlsOf(env: NodeJS.ProcessEnv): string[] {
  const urls = (env.DATABASE_REPLICA_URLS ?? '').split(',').map((url) => url.trim()).filter((url) => url !== '');
  if (urls.length && !env.DATABASE_URL) throw new Error('DATABASE_REPLICA_URLS needs DATABASE_URL (the primary)');
  for (const url of urls) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      parsed = null;
    }
    if (!parsed || !/^postgres(ql)?:$/.test(parsed.protocol)) throw new Error(`DATABASE_REPLICA_URLS: each entry must be a postgres:// URL (entry ${urls.indexOf(url) + 1} is not)`);
  }
  return urls;
}
