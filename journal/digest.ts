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

/**
 * SHA-256 over `prefix`'s bytes followed by the UTF-8 of `text` and then of `tail`, as 64 hex
 * characters — the chain's one hot shape (`prev`'s 32 raw bytes ‖ a record's canonical text) in
 * one call, so a native implementation can encode the strings straight into its own buffer. Lone
 * surrogates encode as U+FFFD, as TextEncoder does.
 */
export type Sha256PrefixedHex = (prefix: Uint8Array, text: string, tail: string) => string;

/**
 * SHA-256 of bytes as a 32-character string of its raw bytes (each char code one byte, 0–255) —
 * the byte verifier's form (verify-bytes.ts): compared byte by byte with a hex digest on the line,
 * with no Buffer or Uint8Array made per record.
 */
export type Sha256Binary = (bytes: Uint8Array) => string;

/** The reference implementation (pure JS, browser-safe). */
export const referenceSha256: Sha256 = (bytes) => nobleSha256(bytes);

const encoder = new TextEncoder();
/** Reused input buffer of the composed form: the implementations consume it before returning. */
let scratch = new Uint8Array(4096);

/** `Sha256PrefixedHex` composed from a plain `Sha256` (TextEncoder into a reused buffer). */
export function composePrefixedHex(impl: Sha256): Sha256PrefixedHex {
  return (prefix, text, tail) => {
    const need = prefix.length + 3 * (text.length + tail.length);
    if (scratch.length < need) scratch = new Uint8Array(Math.max(need, 2 * scratch.length));
    scratch.set(prefix, 0);
    let n = prefix.length + encoder.encodeInto(text, scratch.subarray(prefix.length)).written;
    if (tail.length > 0) n += encoder.encodeInto(tail, scratch.subarray(n)).written;
    return bytesToHex(impl(scratch.subarray(0, n)));
  };
}

/** The reference two-part form: @noble/hashes over the composed bytes. */
export const referenceSha256PrefixedHex: Sha256PrefixedHex = composePrefixedHex(referenceSha256);

/** `Sha256Binary` composed from a plain `Sha256`. */
export function composeBinary(impl: Sha256): Sha256Binary {
  return (bytes) => {
    const digest = impl(bytes);
    let out = '';
    for (let i = 0; i < digest.length; i++) out += String.fromCharCode(digest[i]!);
    return out;
  };
}

let active: Sha256 = referenceSha256;
let activePrefixedHex: Sha256PrefixedHex = referenceSha256PrefixedHex;
let activeBinary: Sha256Binary = composeBinary(referenceSha256);
let activeName = 'noble';

/**
 * Replace the SHA-256 implementation (Node entry points install node:crypto). Same bytes, faster.
 * `prefixedHex` and `binary`, when given, are its native forms; otherwise they are composed from `impl`.
 */
export function installSha256(impl: Sha256, name: string, prefixedHex?: Sha256PrefixedHex, binary?: Sha256Binary): void {
  active = impl;
  activePrefixedHex = prefixedHex ?? composePrefixedHex(impl);
  activeBinary = binary ?? composeBinary(impl);
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

/** SHA-256 of `prefix` ‖ UTF-8(`text`) ‖ UTF-8(`tail`) as hex, by the active implementation. */
export function sha256PrefixedHex(prefix: Uint8Array, text: string, tail = ''): string {
  return activePrefixedHex(prefix, text, tail);
}

/** SHA-256 of bytes as a 32-character binary string (see `Sha256Binary`), by the active implementation. */
export function sha256Binary(bytes: Uint8Array): string {
  return activeBinary(bytes);
}

/** The digest of a JSON value: SHA-256 of its canonical JSON bytes, as hex. */
export function digestOf(value: unknown): string {
  return sha256Hex(canonicalBytes(value));
}

/** The value of a lowercase hex digit's code (0–255), -1 for any other (upper case included). */
export const LOWER_HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) LOWER_HEX['0123456789abcdef'.charCodeAt(i)] = i;

/** True when `s` is a full SHA-256 hex digest (64 lowercase hex characters). A loop, not a regex: twice as fast, and every append checks one per record. */
export function isDigest(s: unknown): s is string {
  if (typeof s !== 'string' || s.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const code = s.charCodeAt(i);
    if (code > 255 || LOWER_HEX[code]! < 0) return false;
  }
  return true;
}

export { bytesToHex, hexToBytes };
