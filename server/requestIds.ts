import { randomFillSync } from 'node:crypto';

/** Random bytes drawn at a time: 256 ids' worth. */
const POOL_BYTES = 16 * 256;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;
const text = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of the 16 bytes' two hex digits go in `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`. */
const DIGIT_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
for (const dash of [8, 13, 18, 23]) text[dash] = 0x2d;

/**
 * A new random (version 4) UUID, as `crypto.randomUUID` makes one, from the same source (random
 * bytes drawn from the CSPRNG 256 ids at a time), but as one flat string: `randomUUID` joins its
 * pieces into a string V8 keeps as a tree (a "cons" string), and every regular expression Node's
 * header check, or the request log's, runs over such a string first has V8 copy it out of line
 * — ~3 µs of CPU a request under load between `writeHead` and the log line (bench/README.md).
 */
export function newRequestId(): string {
  if (used === POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  for (let i = 0; i < 16; i++) {
    let byte = pool[used + i]!;
    if (i === 6) byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10xx
    const at = DIGIT_AT[i]!;
    text[at] = HEX[byte >> 4]!;
    text[at + 1] = HEX[byte & 0x0f]!;
  }
  used += 16;
  return text.toString('latin1');
}
