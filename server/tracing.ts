import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Logger } from '../app/logger.js';

/**
 * Starts OpenTelemetry's Node SDK for the service's traces (README "Operations", "Traces"): its
 * exporter, endpoint, headers, sampler and propagators come from the standard `OTEL_*`
 * variables (the SDK reads them; `OTEL_PROPAGATORS` defaults to W3C `tracecontext,baggage`, so
 * an incoming `traceparent` is honoured). No automatic instrumentations: the spans are the
 * service's own (`app/operations/requestTraces.ts`). `OTEL_SERVICE_NAME` defaults to `loanql`.
 * The SDK's own warnings and errors — a collector that refuses or times out its exports — go to
 * `logger` (`sdkLogger`). Gives the function that flushes and stops it, for shutdown.
 */
export function startTracing(logger: Logger, env: NodeJS.ProcessEnv = process.env): () => Promise<void> {
  diag.setLogger(sdkLogger(logger), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const sdk = new NodeSDK({ instrumentations: [], ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'loanql' }) });
  sdk.start();
  return () => sdk.shutdown();
}

/** One line per message at most this often: a collector that is down fails every export (each batch, every 5 s or 512 spans). */
const REPEAT_MS = 60_000;

/**
 * The SDK's diagnostics as log lines (`msg` "OpenTelemetry: …", with the error's message and
 * code only: never its stack or the request it made, whose headers may hold the collector's
 * credentials). Before, nothing was installed and the SDK said nothing: traces were lost in
 * silence. The same message is written once a minute at most, with how many were held back.
 */
export function sdkLogger(logger: Logger): DiagLogger {
  const lastWritten = new Map<string, { at: number; heldBack: number }>();
  const write = (level: 'warn' | 'error') => (given: string, ...args: unknown[]) => {
    const message = describe(given) ?? 'diagnostic';
    const now = Date.now();
    const last = lastWritten.get(message);
    if (last && now - last.at < REPEAT_MS) {
      last.heldBack += 1;
      return;
    }
    if (lastWritten.size >= 100) lastWritten.clear();
    lastWritten.set(message, { at: now, heldBack: 0 });
    logger[level]({ detail: args.map(describe).filter((text) => text !== null), ...(last?.heldBack ? { heldBack: last.heldBack } : {}) }, `OpenTelemetry: ${message}`);
  };
  const ignore = (): void => {};
  return { error: write('error'), warn: write('warn'), info: ignore, debug: ignore, verbose: ignore };
}

/** An argument of a diagnostic, in a few words: an error's message and code, a short string; nothing else. */
function describe(value: unknown): string | null {
  // The SDK's error handler hands an exception over as its JSON (stack included): its message and code only.
  if (typeof value === 'string' && value.startsWith('{')) {
    try {
      return describe(JSON.parse(value));
    } catch {
      // Not JSON after all: a plain message.
    }
  }
  if (typeof value === 'string') return value.length > 300 ? `${value.slice(0, 300)}…` : value;
  if (value instanceof Error || (value && typeof value === 'object' && 'message' in value)) {
    const { message, code } = value as { message?: unknown; code?: unknown };
    return `${String(message).slice(0, 300)}${code !== undefined ? ` (${String(code)})` : ''}`;
  }
  return null;
}
