import { choiceSetting, wholeNumberSetting } from '../envSettings.js';

/** The webhook settings, from the environment (README "Configuration" and "Webhooks"). */
export interface WebhookSettings {
  /** Run the delivery worker inside the service (`WEBHOOK_WORKER`, default on; `0` turns it off). */
  readonly workerInService: boolean;
  /** Allow private, loopback and link-local destinations (`WEBHOOK_ALLOW_PRIVATE=1`: tests, self-hosting). */
  readonly allowPrivate: boolean;
  /** How often an idle worker looks for due deliveries. */
  readonly pollMs: number;
  /** Deliveries in flight at once, per process. */
  readonly concurrency: number;
  /** Deliveries in flight at once to one endpoint, per process (so a slow endpoint leaves room for others). */
  readonly perEndpointConcurrency: number;
  /** One attempt's time limit (connect, send, status and the start of the body). */
  readonly timeoutMs: number;
  /** Attempts before a delivery is `failed`. */
  readonly maxAttempts: number;
  /** Backoff: the first retry waits about this long, each later one twice as long ... */
  readonly retryBaseMs: number;
  /** ... up to this. */
  readonly retryMaxMs: number;
}

export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  const whole = (name: string, fallback: number, min: number): number => wholeNumberSetting(env, name, fallback, { min });
  return {
    workerInService: choiceSetting(env, 'WEBHOOK_WORKER', ['0', '1'], '1') === '1',
    allowPrivate: choiceSetting(env, 'WEBHOOK_ALLOW_PRIVATE', ['0', '1'], '0') === '1',
    pollMs: whole('WEBHOOK_POLL_MS', 250, 10),
    concurrency: whole('WEBHOOK_CONCURRENCY', 16, 1),
    perEndpointConcurrency: whole('WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1),
    timeoutMs: whole('WEBHOOK_TIMEOUT_MS', 10_000, 100),
    maxAttempts: whole('WEBHOOK_MAX_ATTEMPTS', 8, 1),
    retryBaseMs: whole('WEBHOOK_RETRY_BASE_MS', 10_000, 1),
    retryMaxMs: whole('WEBHOOK_RETRY_MAX_MS', 6 * 60 * 60 * 1000, 1),
  };
}

/**
 * Exponential backoff with jitter: attempt n (1-based) failed → wait base·2^(n−1), capped, then
 * a random 50–100 % of it, so endpoints that failed together do not all retry at one moment.
 */
export function retryDelayMs(settings: WebhookSettings, failedAttempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(failedAttempt - 1, 40));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}
