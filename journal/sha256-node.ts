/**
 * The node:crypto fast path for SHA-256. Importing this module installs it; Node entry points
 * (stores, CLI, runtime, benchmarks) import it, the browser viewer does not. It computes the
 * same bytes as the @noble/hashes reference (test/digest.test.ts and
 * test/journal-verify-digest.test.ts prove it on random inputs).
 *
 * `nodeSha256PrefixedHex` is the chain's hot shape (prev's 32 raw bytes ‖ a record's text): the
 * strings are written straight into one reused Buffer by Buffer#write (native UTF-8, U+FFFD for a
 * lone surrogate — as TextEncoder) and hashed by the one-shot `crypto.hash` (Node ≥ 20.12; no Hash
 * object per record), hex out. `nodeSha256Binary` is the byte verifier's form: the raw digest as a
 * latin1 string, again with no Buffer made.
 */
import * as crypto from 'node:crypto';
import { installSha256, type Sha256, type Sha256Binary, type Sha256PrefixedHex } from './digest.js';

const { createHash } = crypto;

export const nodeSha256: Sha256 = (bytes) => {
  const out = createHash('sha256').update(bytes).digest();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
};

type OneShot = (algorithm: string, data: Uint8Array, encoding: 'hex' | 'latin1') => string;
const oneShot: OneShot =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (crypto as unknown as { hash: OneShot }).hash
    : (algorithm, data, encoding) => createHash(algorithm).update(data).digest(encoding === 'hex' ? 'hex' : 'binary');

/** Reused input buffer: `crypto.hash` consumes it before returning. */
let scratch = Buffer.allocUnsafe(8192);
/** Views of the scratch buffer's first n bytes, by n (a `subarray` per record is a Buffer per record). */
let views: (Uint8Array | undefined)[] = [];

export const nodeSha256PrefixedHex: Sha256PrefixedHex = (prefix, text, tail) => {
  const need = prefix.length + 3 * (text.length + tail.length);
  if (scratch.length < need) {
    scratch = Buffer.allocUnsafe(Math.max(need, 2 * scratch.length));
    views = [];
  }
  scratch.set(prefix, 0);
  let n = prefix.length;
  if (text.length > 0) n += scratch.write(text, n, 'utf8');
  if (tail.length > 0) n += scratch.write(tail, n, 'utf8');
  let view = views[n];
  if (view === undefined) views[n] = view = new Uint8Array(scratch.buffer, scratch.byteOffset, n);
  return oneShot('sha256', view, 'hex');
};

/** The raw digest as a 32-character latin1 string: `crypto.hash` makes no Buffer for it. */
export const nodeSha256Binary: Sha256Binary = (bytes) => oneShot('sha256', bytes, 'latin1');

installSha256(nodeSha256, 'node:crypto', nodeSha256PrefixedHex, nodeSha256Binary);
