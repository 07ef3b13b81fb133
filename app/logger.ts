import { pino, type Logger } from 'pino';

/**
 * Structured JSON logs. Secrets never reach them: request headers are not logged at all,
 * and any field that could carry a key or password is redacted as a second line of defence.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'loanql' },
      redact: {
        paths: [
          'password', '*.password', 'key', '*.key', 'authorization', '*.authorization', 'headers', '*.headers', 'cookie', '*.cookie',
          // Request bodies (login and key forms) and the dashboard's session and CSRF tokens.
          'body', '*.body', 'token', '*.token', 'csrfToken', '*.csrfToken',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? process.stdout,
  );
}
export type { Logger };
