/**
 * Issue 35: a request the client sent no usable `X-Request-Id` gets a new random UUID
 * (`server/requestIds.ts`, made without `crypto.randomUUID` for speed): a version 4 UUID in the
 * canonical lower-case form, different every time, across refills of its pool of random bytes.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newRequestId } from '../../server/requestIds.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it('makes version 4 UUIDs, each new, whose random digits take every value', () => {
  const seen = new Set<string>();
  const digits = new Set<string>();
  // 2,000 ids draw the pool of 256 ids' bytes about eight times.
  for (let i = 0; i < 2_000; i++) {
    const id = newRequestId();
    assert.match(id, UUID_V4);
    assert.ok(!seen.has(id), `${id} came twice`);
    seen.add(id);
    for (const digit of id.replaceAll('-', '')) digits.add(digit);
  }
  assert.equal(digits.size, 16);
  // The variant's four values all occur (10xx: 8, 9, a, b).
  assert.deepEqual(new Set([...seen].map((id) => id[19])), new Set(['8', '9', 'a', 'b']));
});
