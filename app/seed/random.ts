/**
 * A small seeded PRNG for deterministic demo data: xoshiro128** (128-bit state, period 2^128 − 1)
 * seeded from a string key through cyrb128 + splitmix32. No `Math.random`, no clock: the same key
 * always gives the same sequence on every platform (only 32-bit integer maths and one division).
 */

/** 128-bit hash of a string (cyrb128), as four 32-bit words. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** splitmix32 step, used to spread the hash over the state. */
function splitmix32(state: number): number {
  let z = (state + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return (z ^ (z >>> 15)) >>> 0;
}

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex32(value: number): string {
  return (HEX[(value >>> 24) & 255] as string) + HEX[(value >>> 16) & 255] + HEX[(value >>> 8) & 255] + HEX[value & 255];
}

/** A deterministic random stream. Create one per purpose with `Random.from(...)` or `fork(...)`. */
export class Random {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  readonly #key: string;

  private constructor(key: string) {
    this.#key = key;
    const [h1, h2, h3, h4] = cyrb128(key);
    this.#a = splitmix32(h1);
    this.#b = splitmix32(h2);
    this.#c = splitmix32(h3);
    this.#d = splitmix32(h4);
    if ((this.#a | this.#b | this.#c | this.#d) === 0) this.#a = 1;
    // Warm up so that nearby keys decorrelate fully.
    for (let i = 0; i < 8; i++) this.uint32();
  }

  /** A stream determined by the given parts (joined with `\u0000`). */
  static from(...parts: readonly (string | number)[]): Random {
    return new Random(parts.map(String).join('\u0000'));
  }

  /** An independent stream derived from this one's key (not from its current position). */
  fork(...parts: readonly (string | number)[]): Random {
    return Random.from(this.#key, ...parts);
  }

  /** Next 32-bit unsigned integer (xoshiro128**). */
  uint32(): number {
    const result = Math.imul(rotl(Math.imul(this.#b, 5), 7), 9) >>> 0;
    const t = this.#b << 9;
    this.#c ^= this.#a;
    this.#d ^= this.#b;
    this.#b ^= this.#c;
    this.#a ^= this.#d;
    this.#c ^= t;
    this.#d = rotl(this.#d, 11);
    return result;
  }

  /** Uniform in [0, 1), 32 bits of resolution. */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform real in [min, max). */
  real(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty array');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One value out of `[value, weight]` pairs (weights need not sum to 1). */
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, weight] of choices) total += weight;
    let target = this.next() * total;
    for (const [value, weight] of choices) {
      target -= weight;
      if (target < 0) return value;
    }
    const last = choices[choices.length - 1];
    if (last === undefined) throw new RangeError('weighted pick from no choices');
    return last[0];
  }

  /** Standard normal deviate (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** `k` distinct indices out of [0, n), in increasing order (k is clamped to n). */
  sample(n: number, k: number): number[] {
    const count = Math.min(Math.max(0, k), n);
    if (count === 0) return [];
    if (count * 3 > n) {
      // Dense: partial Fisher–Yates over all indices.
      const all = Array.from({ length: n }, (_, i) => i);
      for (let i = 0; i < count; i++) {
        const j = i + Math.floor(this.next() * (n - i));
        const swap = all[i] as number;
        all[i] = all[j] as number;
        all[j] = swap;
      }
      return all.slice(0, count).sort((x, y) => x - y);
    }
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(Math.floor(this.next() * n));
    return [...chosen].sort((x, y) => x - y);
  }

  /** A random RFC 4122 version-4 UUID drawn from this stream. */
  uuid(): string {
    const a = this.uint32();
    const b = ((this.uint32() & 0xffff0fff) | 0x00004000) >>> 0;
    const c = ((this.uint32() & 0x3fffffff) | 0x80000000) >>> 0;
    const d = this.uint32();
    const hb = hex32(b);
    const hc = hex32(c);
    return `${hex32(a)}-${hb.slice(0, 4)}-${hb.slice(4)}-${hc.slice(0, 4)}-${hc.slice(4)}${hex32(d)}`;
  }
}

function rotl(value: number, bits: number): number {
  return (value << bits) | (value >>> (32 - bits));
}
