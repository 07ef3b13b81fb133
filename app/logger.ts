import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Lines are written once this many bytes wait (~20 request lines), or every `FLUSH_EVERY_MS`:
 * under load a `write(2)` (and the wake-up of the thread that makes it) per line cost more CPU
 * than the line itself on a busy machine (bench/RESULTS.md, operations section).
 */
const BATCH_BYTES = 8 * 1024;
const FLUSH_EVERY_MS = 1_000;

/** The service's name on every line. */
const BASE = { service: 'loanql' } as const;

/**
 * Structured JSON logs. Secrets never reach them: request headers are not logged at all,
 * and any field that could carry a key or password is redacted as a second line of defence.
 *
 * Without a destination the lines go to standard output through pino's asynchronous
 * destination (sonic-boom, `sync: false`): a line costs a copy into a buffer, not a `write(2)`;
 * the buffer is written when it holds `BATCH_BYTES`, or at the latest after `FLUSH_EVERY_MS`.
 * pino flushes what is left synchronously when the process exits (`process.exit`, a clean stop
 * after SIGTERM), and `flushLog` does so on demand, so no line is lost on a clean stop; a
 * `kill -9` loses at most the last second's lines.
 */
export function createLogger(level: string, destination?: DestinationStream | NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: BASE,
      redact: {
        paths: [
          'password', '*.password', 'key', '*.key', 'authorization', '*.authorization', 'headers', '*.headers', 'cookie', '*.cookie',
          // Request bodies (login and key forms) and the dashboard's session and CSRF tokens.
          'body', '*.body', 'token', '*.token', 'csrfToken', '*.csrfToken',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, periodicFlush: FLUSH_EVERY_MS }),
  );
}

/**
 * A logger on the same destination and level as `logger`, without redaction: for lines whose
 * fields are a closed set that carries no secret by construction (the request log's
 * `RequestLine`). Redaction's wildcard paths cost ~12 µs a line (measured, docs/operations.md),
 * three times the rest of writing it.
 */
export function unredactedLoggerOf(logger: Logger): Logger {
  return pino({ level: logger.level, base: BASE }, destinationOf(logger));
}

/**
 * Writes out, synchronously, whatever the logger's asynchronous destination still holds: called
 * right before `process.exit` (pino's own exit hook does the same; this does not depend on it).
 */
export function flushLog(logger: Logger): void {
  const destination = destinationOf(logger) as DestinationStream & { flushSync?: () => void };
  try {
    destination.flushSync?.();
  } catch {
    // A destination that cannot flush now (not open yet, or closed): nothing to lose.
  }
}

const destinationOf = (logger: Logger): DestinationStream => (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
export type { Logger };
