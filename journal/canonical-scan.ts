/**
 * Proves UTF-8 bytes are canonical JSON — exactly what canonical.ts writes (RFC 8785) — without
 * building a value: the byte verifier's inner loop (verify-bytes.ts). Each scanner takes the bytes
 * and the offset where a token starts and returns the offset just past it, or -1 when the bytes
 * are not exactly `canonicalize(JSON.parse(text))` for a value that `z.json()` accepts. -1 is a
 * doubt, not a verdict: the caller hands the line to the text reader, which decides.
 *
 * So the one property that matters is soundness — an accepted token is the canonical text of the
 * value it parses to:
 *   - strings: valid UTF-8 (no overlong form, no surrogate, nothing past U+10FFFF), no raw control
 *     character, and only JSON.stringify's escapes (`\"` `\\` `\b` `\f` `\n` `\r` `\t`, and `\u00xx`
 *     in lowercase hex for the other control characters);
 *   - numbers: ECMAScript's shortest round-trip form (`String(Number(token)) === token`), proved
 *     without converting for integers of up to 15 digits and for decimals of up to 15 significant
 *     digits (any such decimal is the unique shortest form of its double), converted otherwise;
 *   - objects: keys strictly increasing by UTF-16 code units and no `__proto__` key (zod treats
 *     that member specially); a key with an escape or a non-ASCII byte is a doubt;
 *   - no whitespace anywhere; nesting deeper than MAX_DEPTH is a doubt.
 * test/journal-canonical-scan.test.ts checks it against canonicalize on random values and against
 * JSON.parse on random byte mutations.
 *
 * The caller guarantees a terminator: a 0x00 byte after the data, which ends every token, so no
 * scan runs past the data it was given.
 *
 * Pure: no I/O.
 */

import { LOWER_HEX } from './digest.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Nesting deeper than this is left to the text reader. */
export const MAX_DEPTH = 64;

/** Byte classes inside a string: 0 printable ASCII, 1 `"`, 2 `\`, 3 control, 4 UTF-8 lead or continuation. */
const STRING_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_CLASS[c] = 3;
STRING_CLASS[QUOTE] = 1;
STRING_CLASS[BACKSLASH] = 2;
for (let c = 0x80; c < 0x100; c++) STRING_CLASS[c] = 4;

/** Whether the last string scanString accepted was plain: no escape, ASCII only (so its bytes are its UTF-16 code units). */
export let stringPlain = true;

/**
 * The end of the valid UTF-8 sequence whose lead byte is at `p`, or -1 (overlong, surrogate, past
 * U+10FFFF, truncated, or a stray continuation byte).
 */
function utf8SequenceEnd(b: Uint8Array, p: number): number {
  const c = b[p]!;
  if (c < 0xc2) return -1; // continuation bytes and overlong 2-byte leads
  if (c < 0xe0) return (b[p + 1]! & 0xc0) === 0x80 ? p + 2 : -1;
  if (c < 0xf0) {
    const c1 = b[p + 1]!;
    if (c === 0xe0 ? c1 < 0xa0 || c1 > 0xbf : c === 0xed ? c1 < 0x80 || c1 > 0x9f : (c1 & 0xc0) !== 0x80) return -1;
    return (b[p + 2]! & 0xc0) === 0x80 ? p + 3 : -1;
  }
  if (c > 0xf4) return -1;
  const c1 = b[p + 1]!;
  if (c === 0xf0 ? c1 < 0x90 || c1 > 0xbf : c === 0xf4 ? c1 < 0x80 || c1 > 0x8f : (c1 & 0xc0) !== 0x80) return -1;
  return (b[p + 2]! & 0xc0) === 0x80 && (b[p + 3]! & 0xc0) === 0x80 ? p + 4 : -1;
}

/** The offset of the first byte in [from, to) that starts no valid UTF-8 sequence, or -1 when all of it is valid. */
export function firstInvalidUtf8(b: Uint8Array, from: number, to: number): number {
  let p = from;
  while (p < to) {
    if (b[p]! < 0x80) {
      p++;
      continue;
    }
    const end = utf8SequenceEnd(b, p);
    if (end < 0 || end > to) return p;
    p = end;
  }
  return -1;
}

/** The control characters JSON.stringify writes as `\u00xx` (the others have short escapes). */
const U00_ESCAPED = new Uint8Array(0x20).fill(1);
for (const c of [0x08, 0x09, 0x0a, 0x0c, 0x0d]) U00_ESCAPED[c] = 0;

/** `"`, `\`, b, f, n, r, t: the two-character escapes. */
const SHORT_ESCAPE = new Uint8Array(256);
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;

/** A canonical string starting at its opening quote `p`; sets `stringPlain`. */
export function scanString(b: Uint8Array, p: number): number {
  let plain = true;
  p++;
  for (;;) {
    const kind = STRING_CLASS[b[p]!]!;
    if (kind === 0) {
      p++;
    } else if (kind === 1) {
      stringPlain = plain;
      return p + 1;
    } else if (kind === 2) {
      plain = false;
      const e = b[p + 1]!;
      if (SHORT_ESCAPE[e] === 1) {
        p += 2;
      } else if (e === 0x75 /* u */ && b[p + 2] === ZERO && b[p + 3] === ZERO) {
        const hi = b[p + 4]!;
        const lo = LOWER_HEX[b[p + 5]!]!;
        if (lo < 0 || (hi !== ZERO && hi !== 0x31) || U00_ESCAPED[((hi - ZERO) << 4) | lo] !== 1) return -1;
        p += 6;
      } else {
        return -1;
      }
    } else if (kind === 4) {
      plain = false;
      p = utf8SequenceEnd(b, p);
      if (p < 0) return -1;
    } else {
      return -1; // a raw control character (or the terminator)
    }
  }
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/**
 * A canonical number. Integers of up to 15 digits and decimals of up to 15 significant digits
 * (fixed notation, no trailing zero, at most five zeros after "0.") are canonical as written;
 * anything longer, or with an exponent, is converted and compared.
 */
export function scanNumber(b: Uint8Array, p: number): number {
  const start = p;
  if (b[p] === MINUS) p++;
  const intStart = p;
  const c0 = b[p]!;
  if (c0 === ZERO) p++;
  else if (c0 > ZERO && c0 <= NINE) while (isDigit(b[++p]!));
  else return -1;
  const intDigits = p - intStart;
  let c = b[p]!;
  if (c === DOT) {
    const fracStart = p + 1;
    let q = fracStart;
    while (isDigit(b[q]!)) q++;
    if (q === fracStart) return -1;
    c = b[q]!;
    if (c !== 0x65 && c !== 0x45) {
      if (b[q - 1] === ZERO) return -1; // a trailing zero is never canonical
      let significant: number;
      if (c0 === ZERO) {
        let z = fracStart;
        while (b[z] === ZERO) z++;
        significant = z - fracStart <= 5 ? q - z : 99;
      } else {
        significant = intDigits + (q - fracStart);
      }
      return significant <= 15 ? q : converted(b, start, q);
    }
    p = q;
  } else if (c !== 0x65 && c !== 0x45) {
    if (intDigits === 1 && c0 === ZERO && start !== intStart) return -1; // -0
    return intDigits <= 15 ? p : converted(b, start, p);
  }
  // an exponent: [eE][+-]?digits
  p++;
  if (b[p] === 0x2b || b[p] === MINUS) p++;
  if (!isDigit(b[p]!)) return -1;
  while (isDigit(b[++p]!));
  return converted(b, start, p);
}

/** The number token [start, end) (JSON grammar already checked) is canonical when it is its own shortest round-trip form. */
function converted(b: Uint8Array, start: number, end: number): number {
  let token = '';
  for (let i = start; i < end; i++) token += String.fromCharCode(b[i]!);
  const n = Number(token);
  return Number.isFinite(n) && String(n) === token ? end : -1;
}

/** True when the bytes [start, end) of `b` are exactly `want`. */
export function sameBytes(b: Uint8Array, start: number, end: number, want: Uint8Array): boolean {
  if (end - start !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (b[start + i] !== want[i]) return false;
  return true;
}

/** True when the plain (ASCII, unescaped) key [a0, a1) sorts strictly before [c0, c1). */
function keyBefore(b: Uint8Array, a0: number, a1: number, c0: number, c1: number): boolean {
  const n = Math.min(a1 - a0, c1 - c0);
  for (let i = 0; i < n; i++) {
    const x = b[a0 + i]!;
    const y = b[c0 + i]!;
    if (x !== y) return x < y;
  }
  return a1 - a0 < c1 - c0;
}

const PROTO = [...'__proto__'].map((ch) => ch.charCodeAt(0));

function isProto(b: Uint8Array, k0: number, k1: number): boolean {
  if (k1 - k0 !== 9) return false;
  for (let i = 0; i < 9; i++) if (b[k0 + i] !== PROTO[i]) return false;
  return true;
}

/** Members recorded by the last `scanObject(…, true)`: [keyStart, keyEnd, valueStart, valueEnd] each (keys without quotes). */
export const MAX_TAPE_MEMBERS = 16;
export const tape = new Int32Array(4 * MAX_TAPE_MEMBERS);
/** How many members the last recording scan put on the tape. */
export let tapeMembers = 0;

/**
 * A canonical object starting at `{`. With `record`, its members are written to `tape` (more than
 * MAX_TAPE_MEMBERS is a doubt): the byte verifier checks a body's members against its kind's shape
 * once the kind, which follows the body on the line, is known.
 */
export function scanObject(b: Uint8Array, p: number, depth: number, record: boolean): number {
  p++;
  if (b[p] === 0x7d) {
    if (record) tapeMembers = 0;
    return p + 1;
  }
  let prev0 = -1;
  let prev1 = -1;
  let members = 0;
  for (;;) {
    if (b[p] !== QUOTE) return -1;
    const k0 = p + 1;
    p = scanString(b, p);
    if (p < 0 || !stringPlain) return -1;
    const k1 = p - 1;
    if (prev0 >= 0 ? !keyBefore(b, prev0, prev1, k0, k1) : false) return -1;
    if (isProto(b, k0, k1)) return -1;
    prev0 = k0;
    prev1 = k1;
    if (b[p] !== COLON) return -1;
    const v0 = p + 1;
    p = scanValue(b, v0, depth + 1);
    if (p < 0) return -1;
    if (record) {
      if (members === MAX_TAPE_MEMBERS) return -1;
      const t = 4 * members;
      tape[t] = k0;
      tape[t + 1] = k1;
      tape[t + 2] = v0;
      tape[t + 3] = p;
    }
    members++;
    const c = b[p];
    if (c === COMMA) {
      p++;
    } else if (c === 0x7d) {
      if (record) tapeMembers = members;
      return p + 1;
    } else {
      return -1;
    }
  }
}

function scanArray(b: Uint8Array, p: number, depth: number): number {
  p++;
  if (b[p] === 0x5d) return p + 1;
  for (;;) {
    p = scanValue(b, p, depth + 1);
    if (p < 0) return -1;
    const c = b[p];
    if (c === COMMA) p++;
    else if (c === 0x5d) return p + 1;
    else return -1;
  }
}

/** Any canonical JSON value (`z.json()`), starting at `p`. */
export function scanValue(b: Uint8Array, p: number, depth = 0): number {
  if (depth > MAX_DEPTH) return -1;
  switch (b[p]) {
    case QUOTE:
      return scanString(b, p);
    case 0x7b:
      return scanObject(b, p, depth, false);
    case 0x5b:
      return scanArray(b, p, depth);
    case 0x74: // true
      return b[p + 1] === 0x72 && b[p + 2] === 0x75 && b[p + 3] === 0x65 ? p + 4 : -1;
    case 0x66: // false
      return b[p + 1] === 0x61 && b[p + 2] === 0x6c && b[p + 3] === 0x73 && b[p + 4] === 0x65 ? p + 5 : -1;
    case 0x6e: // null
      return b[p + 1] === 0x75 && b[p + 2] === 0x6c && b[p + 3] === 0x6c ? p + 4 : -1;
    default:
      return scanNumber(b, p);
  }
}

/**
 * A count (a safe non-negative integer) in canonical form at `p`: "0" or digits without a leading
 * zero, at most 9007199254740991. Returns its end, or -1 (any other number is a doubt).
 */
export function scanCount(b: Uint8Array, p: number): number {
  const start = p;
  const c0 = b[p]!;
  if (c0 === ZERO) return isDigit(b[p + 1]!) ? -1 : p + 1;
  if (c0 <= ZERO || c0 > NINE) return -1;
  while (isDigit(b[++p]!));
  const digits = p - start;
  if (digits < 16) return p;
  return digits === 16 && !beyondMaxSafe(b, start) ? p : -1;
}

/** The value of a count token [start, end) that scanCount accepted. */
export function countValue(b: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) n = n * 10 + (b[i]! - ZERO);
  return n;
}

/** The digits of Number.MAX_SAFE_INTEGER (9007199254740991), for scanCount. */
const maxSafe = Uint8Array.from(String(Number.MAX_SAFE_INTEGER), (ch) => ch.charCodeAt(0));

/** True when the 16 digits at `start` are more than Number.MAX_SAFE_INTEGER. */
function beyondMaxSafe(b: Uint8Array, start: number): boolean {
  for (let i = 0; i < 16; i++) {
    const x = b[start + i]!;
    const y = maxSafe[i]!;
    if (x !== y) return x > y;
  }
  return false;
}
