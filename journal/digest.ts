/**
 * SHA-256 digests — full 32 bytes, written as 64 lowercase hex characters, never truncated.
 *
 * @noble/hashes is the reference implementation: it is pure JavaScript, runs in the browser
 * viewer, and is the default here. On Node, `journal/sha256-node.ts` installs node:crypto as the
 * fast path; a test proves both give the same bytes. The pure side only ever calls `sha256`.
 *
 * `digestOf(value)` is the one place a JSON value's digest is computed: SHA-256 over its
 * canonical JSON (RFC 8785) bytes.
 */
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { canonicalBytes } from './canonical.js';

export type Sha256 = (bytes: Uint8Array) => Uint8Array;

/** The reference implementation (pure JS, browser-safe). */
export const referenceSha256: Sha256 = (bytes) => nobleSha256(bytes);

let active: Sha256 = referenceSha256;
let activeName = 'noble';

/** Replace the SHA-256 implementation (Node entry points install node:crypto). Same bytes, faster. */
export function installSha256(impl: Sha256, name: string): void {
  active = impl;
  activeName = name;
}

/** Which implementation is active ("noble" or "node:crypto"), for benchmarks and diagnostics. */
export function sha256Implementation(): string {
  return activeName;
}

/** SHA-256 of bytes, by the active implementation. */
export function sha256(bytes: Uint8Array): Uint8Array {
  return active(bytes);
}

/** SHA-256 of bytes as 64 hex characters. */
export function sha256Hex(bytes: Uint8Array): string {
  return bytesToHex(active(bytes));
}

/** The digest of a JSON value: SHA-256 of its canonical JSON bytes, as hex. */
export function digestOf(value: unknown): string {
  return sha256Hex(canonicalBytes(value));
}

/** True when `s` is a full SHA-256 hex digest. */
export function isDigest(s: unknown): s is string {
  return typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
}

export { bytesToHex, hexToBytes };
