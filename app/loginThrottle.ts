import { isIPv6 } from 'node:net';

/**
 * Slows down password guessing at the dashboard's login, in memory (one service process; a
 * restart forgets). Two sliding windows count failed logins: per e-mail + client address
 * (`perEmailAndAddress`, 5 in 15 minutes by default) and per client address alone over all
 * e-mails (`perAddress`, 50), so neither one account nor many can be guessed at speed. A
 * successful login clears the e-mail + address count. The number of addresses remembered is
 * bounded, oldest dropped first, so a flood of addresses cannot exhaust memory.
 *
 * A client address is counted as its network (`clientNetwork`): an IPv6 address by its /64, the
 * smallest block one subscriber is given (RFC 6177) — counted by the whole address, a client with
 * one /64 had 2^64 fresh addresses and was never throttled — and an IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`, how a dual-stack socket shows an IPv4 client) as the IPv4 address.
 */
export interface LoginThrottleLimits {
  readonly windowMs: number;
  readonly perEmailAndAddress: number;
  readonly perAddress: number;
  readonly maxTrackedKeys: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginThrottleLimits = {
  windowMs: 15 * 60_000,
  perEmailAndAddress: 5,
  perAddress: 50,
  maxTrackedKeys: 10_000,
};

export class LoginThrottle {
  /** Failure times per key, oldest first; Map order doubles as least-recently-failed order. */
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly limits: LoginThrottleLimits = DEFAULT_LOGIN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until another attempt is allowed, or 0 when one is allowed now. */
  retryAfterMs(email: string, address: string): number {
    return Math.max(
      this.#waitFor(emailKey(email, address), this.limits.perEmailAndAddress),
      this.#waitFor(addressKey(address), this.limits.perAddress),
    );
  }

  recordFailure(email: string, address: string): void {
    for (const key of [emailKey(email, address), addressKey(address)]) {
      const times = this.#recent(key);
      times.push(this.now());
      this.#failures.delete(key);
      this.#failures.set(key, times);
    }
    while (this.#failures.size > this.limits.maxTrackedKeys) {
      const oldest = this.#failures.keys().next().value;
      if (oldest === undefined) break;
      this.#failures.delete(oldest);
    }
  }

  recordSuccess(email: string, address: string): void {
    this.#failures.delete(emailKey(email, address));
  }

  #recent(key: string): number[] {
    const since = this.now() - this.limits.windowMs;
    return (this.#failures.get(key) ?? []).filter((time) => time > since);
  }

  #waitFor(key: string, limit: number): number {
    const times = this.#recent(key);
    if (times.length < limit) return 0;
    // The window reopens when the oldest failure that still counts against the limit expires.
    return times[times.length - limit]! + this.limits.windowMs - this.now();
  }
}

const emailKey = (email: string, address: string): string => `e\u0000${email.trim().toLowerCase()}\u0000${clientNetwork(address)}`;
const addressKey = (address: string): string => `a\u0000${clientNetwork(address)}`;

/**
 * What the throttle counts a client address as: an IPv6 address's /64 (`2001:db8:0:1::/64`), an
 * IPv4-mapped one's IPv4 address, anything else (IPv4, `unknown`) as it is.
 */
export function clientNetwork(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (!isIPv6(bare)) return address;
  const hextets = expandIPv6(bare);
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    return [hextets[6]! >> 8, hextets[6]! & 0xff, hextets[7]! >> 8, hextets[7]! & 0xff].join('.');
  }
  return `${hextets.slice(0, 4).map((h) => h.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` and a dotted IPv4 tail written out). */
function expandIPv6(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted ? `${address.slice(0, dotted.index)}${((+dotted[1]! << 8) | +dotted[2]!).toString(16)}:${((+dotted[3]! << 8) | +dotted[4]!).toString(16)}` : address;
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
