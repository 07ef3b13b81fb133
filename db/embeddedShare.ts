import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { cpuNow, profileStatement, statementProfileOn } from './statementProfile.js';

/** For the statement profile: a Parse's or Query's SQL text (the messages after it in a batch run it). */
function shareMessageLabel(message: Buffer): string | undefined {
  const type = String.fromCharCode(message[0] ?? 0);
  if (type === 'Q') return message.subarray(5, message.indexOf(0, 5)).toString();
  if (type === 'P') {
    const nameEnd = message.indexOf(0, 5);
    return message.subarray(nameEnd + 1, message.indexOf(0, nameEnd + 1)).toString();
  }
  return undefined;
}

/**
 * Shares the service's PGlite over the PostgreSQL wire protocol on loopback, so the CLI can
 * work while the service runs (SPEC §2).
 *
 * Why not `@electric-sql/pglite-socket` as is: it queues single protocol messages, so one
 * client's Parse/Bind/Execute could interleave with the service's own queries on PGlite's one
 * session. Here a client's messages are run as whole Sync batches while holding PGlite's
 * transaction and query locks, and a client that opens a transaction keeps those locks until
 * it ends it (or goes idle for `idleInTransactionMs`, when it is rolled back and disconnected).
 *
 * Every connection must authenticate with the share's password (PostgreSQL's MD5 password
 * exchange, which node-postgres and psql speak, so the password never crosses the socket in
 * clear) before its startup message reaches PGlite; any user name is accepted with it. The
 * service makes a random password per start and keeps it in the 0600 lock file
 * (`dataDirLock.ts`); a wrong or missing password gets SQLSTATE 28P01 and the connection is closed.
 */
export interface EmbeddedShare {
  readonly port: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSS_ENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const ROLLBACK = simpleQuery('ROLLBACK');

function simpleQuery(text: string): Uint8Array {
  const body = Buffer.from(`${text}\0`, 'utf8');
  const message = Buffer.alloc(5 + body.length);
  message.write('Q', 0, 'ascii');
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}

/** Splits complete protocol messages off the front of a buffer. */
class MessageReader {
  #buffer: Buffer = Buffer.alloc(0);
  #started = false;
  push(chunk: Buffer): void {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
  }
  next(): { type: string; bytes: Buffer } | null {
    if (!this.#started) {
      if (this.#buffer.length < 8) return null;
      const length = this.#buffer.readInt32BE(0);
      if (this.#buffer.length < length) return null;
      const bytes = this.#buffer.subarray(0, length);
      this.#buffer = this.#buffer.subarray(length);
      const code = bytes.readInt32BE(4);
      if (code === SSL_REQUEST || code === GSS_ENC_REQUEST) return { type: 'ssl', bytes };
      if (code === CANCEL_REQUEST) return { type: 'cancel', bytes };
      this.#started = true;
      return { type: 'startup', bytes };
    }
    if (this.#buffer.length < 5) return null;
    const length = 1 + this.#buffer.readInt32BE(1);
    if (this.#buffer.length < length) return null;
    const bytes = this.#buffer.subarray(0, length);
    this.#buffer = this.#buffer.subarray(length);
    return { type: String.fromCharCode(bytes[0]!), bytes };
  }
}

/** The user name of a startup message (pairs of C strings after the protocol version). */
function startupUser(startup: Buffer): string {
  const parts = startup.subarray(8).toString('utf8').split('\0');
  for (let i = 0; i + 1 < parts.length; i += 2) if (parts[i] === 'user') return parts[i + 1]!;
  return '';
}

const md5 = (data: string | Buffer): string => createHash('md5').update(data).digest('hex');

/** ErrorResponse (FATAL, 28P01) for a failed password. */
function authenticationFailed(user: string): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C28P01', `Mpassword authentication failed for user "${user}"`].map((field) => `${field}\0`).join('') + '\0';
  const body = Buffer.from(fields, 'utf8');
  const message = Buffer.alloc(5 + body.length);
  message.write('E', 0, 'ascii');
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}

/** The password check of one connection: MD5 challenge after the startup message. */
class PasswordCheck {
  #salt: Buffer | null = null;
  #user = '';
  passed = false;

  constructor(private readonly password: string) {}

  /** AuthenticationMD5Password with a fresh salt, for the client's startup message. */
  challenge(startup: Buffer): Buffer {
    this.#user = startupUser(startup);
    this.#salt = randomBytes(4);
    const message = Buffer.alloc(13);
    message.write('R', 0, 'ascii');
    message.writeInt32BE(12, 1);
    message.writeInt32BE(5, 5);
    this.#salt.copy(message, 9);
    return message;
  }

  /** Checks a PasswordMessage ('p'); true when it carries the right password. */
  verify(message: Buffer): boolean {
    if (!this.#salt) return false;
    const sent = message.subarray(5, message.length - 1);
    const expected = Buffer.from(`md5${md5(Buffer.concat([Buffer.from(md5(this.password + this.#user), 'utf8'), this.#salt]))}`, 'utf8');
    this.passed = sent.length === expected.length && timingSafeEqual(sent, expected);
    return this.passed;
  }

  get user(): string {
    return this.#user;
  }
}

/**
 * Finds the NotificationResponse messages ('A': process id, channel, payload) in a stream of
 * backend messages cut anywhere into chunks: a NOTIFY committed by a client of the share reaches
 * only that client's socket, and the service's own listeners must hear it too.
 */
class NoticeScanner {
  /** Bytes of the current message still to skip, or to collect when it is a notification. */
  #remaining = 0;
  #header: number[] = [];
  #notice: Buffer[] | null = null;

  constructor(private readonly onNotice: (channel: string, payload: string) => void) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#remaining === 0) {
        // A message's type and length: five bytes, which a chunk may split.
        this.#header.push(chunk[at++]!);
        if (this.#header.length < 5) continue;
        const [type, a, b, c, d] = this.#header;
        this.#header = [];
        this.#remaining = ((a! << 24) | (b! << 16) | (c! << 8) | d!) - 4;
        this.#notice = type === 0x41 ? [] : null;
        if (this.#remaining <= 0) this.#remaining = 0;
        continue;
      }
      const take = Math.min(this.#remaining, chunk.length - at);
      if (this.#notice) this.#notice.push(Buffer.from(chunk.subarray(at, at + take)));
      at += take;
      this.#remaining -= take;
      if (this.#remaining === 0 && this.#notice) {
        const body = Buffer.concat(this.#notice);
        this.#notice = null;
        const channelEnd = body.indexOf(0, 4);
        const payloadEnd = body.indexOf(0, channelEnd + 1);
        if (channelEnd > 0 && payloadEnd > channelEnd) this.onNotice(body.subarray(4, channelEnd).toString('utf8'), body.subarray(channelEnd + 1, payloadEnd).toString('utf8'));
      }
    }
  }
}

class Connection {
  readonly #reader = new MessageReader();
  readonly #ready: Buffer[][] = [];
  #pending: Buffer[] = [];
  #startup: Buffer | null = null;
  #wake: (() => void) | null = null;
  closed = false;
  /** What this client's commits notify, for the service's listeners (null: nobody listens). */
  notices: NoticeScanner | null = null;

  constructor(
    readonly socket: Socket,
    private readonly auth: PasswordCheck,
  ) {}

  /** Feeds bytes; returns the batches that became complete. */
  push(chunk: Buffer, onSsl: () => void): void {
    this.#reader.push(chunk);
    for (let message = this.#reader.next(); message; message = this.#reader.next()) {
      if (message.type === 'ssl') onSsl();
      else if (message.type === 'cancel') continue;
      else if (message.type === 'X') this.socket.end();
      else if (!this.auth.passed) {
        // Nothing reaches PGlite before the password is right: the startup waits for it.
        if (message.type === 'startup' && !this.#startup) {
          this.#startup = Buffer.from(message.bytes);
          this.socket.write(this.auth.challenge(this.#startup));
        } else if (message.type === 'p' && this.#startup && this.auth.verify(message.bytes)) {
          this.#ready.push([this.#startup]);
        } else {
          this.socket.end(authenticationFailed(this.auth.user));
          this.markClosed();
          return;
        }
      } else {
        this.#pending.push(message.bytes);
        // Sync and simple Query end a batch: the server answers with ReadyForQuery.
        if (message.type === 'S' || message.type === 'Q') {
          this.#ready.push(this.#pending);
          this.#pending = [];
        }
      }
    }
    this.#wake?.();
  }

  markClosed(): void {
    this.closed = true;
    this.#wake?.();
  }

  /** The next complete batch, or null when the connection closed or stayed idle too long. */
  async nextBatch(timeoutMs: number): Promise<Buffer[] | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.#ready.length === 0) {
      if (this.closed || Date.now() >= deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
    return this.#ready.shift() ?? null;
  }

  hasBatch(): boolean {
    return this.#ready.length > 0;
  }
}

/** Starts the sharing server on 127.0.0.1 (port 0 = any free port). */
export async function startEmbeddedShare(
  pglite: PGlite,
  options: { password: string; port?: number; idleInTransactionMs?: number; onNotice?: (channel: string, payload: string) => void },
): Promise<EmbeddedShare> {
  if (options.password.length < 16) throw new Error('the share password must be at least 16 characters');
  const idleInTransactionMs = options.idleInTransactionMs ?? 30_000;
  const sockets = new Set<Socket>();

  async function runBatch(connection: Connection, batch: Buffer[]): Promise<string> {
    let last = Buffer.alloc(0);
    let statement = '(a statement prepared earlier)';
    const notices = connection.notices;
    for (const message of batch) {
      if (statementProfileOn) statement = shareMessageLabel(message) ?? statement;
      const started = statementProfileOn ? cpuNow() : 0;
      await pglite.execProtocolRawStream(new Uint8Array(message), {
        onRawData: (data: Uint8Array) => {
          notices?.push(data);
          if (!connection.closed && connection.socket.writable) connection.socket.write(data);
          last = Buffer.from(data.subarray(Math.max(0, data.length - 6)));
        },
      });
      if (statementProfileOn) profileStatement(`(share) ${statement}`, cpuNow() - started);
    }
    // The batch's answer ends with ReadyForQuery: 'Z', length 5, status I (idle), T or E (in a transaction).
    return last.length === 6 && last[0] === 0x5a ? String.fromCharCode(last[5]!) : 'I';
  }

  async function serve(connection: Connection): Promise<void> {
    while (!connection.closed || connection.hasBatch()) {
      const first = await connection.nextBatch(2 ** 31 - 1);
      if (!first) return;
      await pglite._runExclusiveTransaction(() =>
        pglite.runExclusive(async () => {
          let status = await runBatch(connection, first);
          while (status !== 'I') {
            const batch = await connection.nextBatch(idleInTransactionMs);
            if (!batch) {
              await pglite.execProtocolRaw(ROLLBACK);
              connection.socket.destroy();
              return;
            }
            status = await runBatch(connection, batch);
          }
        }),
      );
    }
  }

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const connection = new Connection(socket, new PasswordCheck(options.password));
    if (options.onNotice) connection.notices = new NoticeScanner(options.onNotice);
    socket.on('data', (chunk) => connection.push(chunk, () => socket.write('N')));
    socket.on('error', () => connection.markClosed());
    socket.on('close', () => {
      sockets.delete(socket);
      connection.markClosed();
    });
    serve(connection).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('sharing server has no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
