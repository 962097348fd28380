// SHA-256: the @noble/hashes reference and the node:crypto fast path give the same bytes on random
// inputs (every length around the 64-byte block boundary included), and the known vectors.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { bytesToHex, digestOf, isDigest, referenceSha256, sha256Hex } from '../journal/digest.js';
import { nodeSha256 } from '../journal/sha256-node.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('sha256', () => {
  test('noble and node:crypto agree on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        expect(bytesToHex(nodeSha256(bytes))).toBe(bytesToHex(referenceSha256(bytes)));
      }),
      { numRuns: 500 },
    );
  });

  test('noble and node:crypto agree on every length 0..200 (block boundaries)', () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff);
      expect(bytesToHex(nodeSha256(bytes)), `length ${n}`).toBe(bytesToHex(referenceSha256(bytes)));
    }
  });

  test('noble and node:crypto agree on views into a larger buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = a % bytes.length;
        const end = start + (b % (bytes.length - start + 1));
        const view = bytes.subarray(start, end);
        expect(bytesToHex(nodeSha256(view))).toBe(bytesToHex(referenceSha256(view)));
      }),
    );
  });

  test('known vectors (FIPS 180-2)', () => {
    for (const impl of [nodeSha256, referenceSha256]) {
      expect(bytesToHex(impl(utf8('')))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      expect(bytesToHex(impl(utf8('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
      expect(bytesToHex(impl(utf8('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
        '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
      );
    }
  });

  test('digests are full 64-hex, and digestOf hashes the canonical form', () => {
    expect(sha256Hex(utf8('abc'))).toHaveLength(64);
    expect(isDigest(digestOf({ b: 1, a: 2 }))).toBe(true);
    expect(digestOf({ b: 1, a: 2 })).toBe(digestOf({ a: 2, b: 1 }));
    expect(digestOf({ a: 2, b: 1 })).toBe(sha256Hex(utf8('{"a":2,"b":1}')));
    expect(isDigest('A'.repeat(64))).toBe(false);
    expect(isDigest('a'.repeat(63))).toBe(false);
  });

  test('isDigest accepts exactly 64 lowercase hex characters (the regex it replaced, on random near-digests)', () => {
    // Mostly hex, with upper case, other ASCII and characters above 255 whose low byte is a hex digit.
    const char = fc.oneof(
      { weight: 20, arbitrary: fc.constantFrom(...'0123456789abcdef') },
      { weight: 1, arbitrary: fc.constantFrom('A', 'F', 'g', 'x', ' ', '\u0130', '\u0161', '\u0230', '\uff10') },
    );
    fc.assert(
      fc.property(fc.array(char, { minLength: 62, maxLength: 66 }), (chars) => {
        const s = chars.join('');
        expect(isDigest(s)).toBe(/^[0-9a-f]{64}$/.test(s));
      }),
      { numRuns: 3000 },
    );
    expect(isDigest(undefined)).toBe(false);
    expect(isDigest(42)).toBe(false);
  });
});
