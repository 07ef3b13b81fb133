/**
 * Slows down password guessing at the dashboard's login, in memory (one service process; a
 * restart forgets). Two sliding windows count failed logins: per e-mail + client address
 * (`perEmailAndAddress`, 5 in 15 minutes by default) and per client address alone over all
 * e-mails (`perAddress`, 50), so neither one account nor many can be guessed at speed. A
 * successful login clears the e-mail + address count. The number of addresses remembered is
 * bounded, oldest dropped first, so a flood of addresses cannot exhaust memory.
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

const emailKey = (email: string, address: string): string => `e\u0000${email.trim().toLowerCase()}\u0000${address}`;
const addressKey = (address: string): string => `a\u0000${address}`;
