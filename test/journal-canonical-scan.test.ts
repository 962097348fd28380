// The byte scanner (journal/canonical-scan.ts) and the shape checks over its bytes
// (journal/scan-shapes.ts) against their specifications: canonicalize, JSON.parse, the UTF-8
// decoder and the zod schemas. Soundness first — whatever the scanner accepts is exactly the
// canonical text of a z.json() value, whatever a shape check accepts zod accepts — and, for speed,
// completeness on what writers write.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { canonicalize } from '../journal/canonical.js';
import { firstInvalidUtf8, scanCount, scanNumber, scanObject, scanString, scanValue, stringPlain, tapeMembers } from '../journal/canonical-scan.js';
import type { RecordKind } from '../journal/records.js';
import { bodyTapeChecks } from '../journal/scan-shapes.js';
import { mutate, mutation, ordinary, validBody, zodOk } from './journal-body-generators.js';

const encoder = new TextEncoder();
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** `bytes` followed by the 0 terminator the scanners rely on. */
function terminated(bytes: Uint8Array | string): Uint8Array {
  const raw = typeof bytes === 'string' ? encoder.encode(bytes) : bytes;
  const out = new Uint8Array(raw.length + 16);
  out.set(raw);
  return out;
}

function wholeValue(bytes: Uint8Array): boolean {
  return scanValue(terminated(bytes), 0) === bytes.length;
}

/** Every object key in `v` plain (printable ASCII, no `"` or `\`) and not `__proto__`; nesting within the scanner's limit. */
function plainKeys(v: unknown, depth = 0): boolean {
  if (depth > 60) return false;
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) return v.every((x) => plainKeys(x, depth + 1));
  return Object.entries(v).every(([k, x]) => /^[\x20-\x7e]*$/.test(k) && !/["\\]/.test(k) && k !== '__proto__' && plainKeys(x, depth + 1));
}

const specialBytes = [0x22, 0x5c, 0x20, 0x30, 0x31, 0x2e, 0x65, 0x45, 0x2b, 0x2d, 0x75, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x0a, 0x09, 0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
const byteEdit = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('set' as const, 'insert' as const, 'delete' as const, 'xor' as const),
  byte: fc.oneof(fc.constantFrom(...specialBytes), fc.integer({ min: 0, max: 255 })),
});
type ByteEdit = { at: number; op: 'set' | 'insert' | 'delete' | 'xor'; byte: number };

function edit(bytes: Uint8Array, e: ByteEdit): Uint8Array {
  if (bytes.length === 0) return Uint8Array.of(e.byte);
  const at = e.at % bytes.length;
  const out = Array.from(bytes);
  if (e.op === 'set') out[at] = e.byte;
  else if (e.op === 'xor') out[at] = out[at]! ^ (e.byte || 1);
  else if (e.op === 'insert') out.splice(at, 0, e.byte);
  else out.splice(at, 1);
  return Uint8Array.from(out);
}

const jsonValues = fc.oneof(
  fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }),
  fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

/** canonicalize(v), or undefined when canonical JSON refuses it (a lone surrogate). */
function canonical(v: unknown): string | undefined {
  try {
    return canonicalize(v);
  } catch {
    return undefined;
  }
}

describe('canonical JSON scanner', () => {
  test('what writers write is accepted whole (values with plain keys)', () => {
    fc.assert(
      fc.property(jsonValues, (v) => {
        const text = canonical(v);
        if (text === undefined) return;
        const accepted = wholeValue(encoder.encode(text));
        if (plainKeys(v)) expect(accepted).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  test('sound: bytes accepted whole are valid UTF-8, parse, and are the canonical text of a z.json() value', () => {
    let accepted = 0;
    fc.assert(
      fc.property(jsonValues, fc.array(byteEdit, { minLength: 1, maxLength: 3 }), (v, edits) => {
        const text = canonical(v);
        if (text === undefined) return;
        const bytes = edits.reduce(edit, encoder.encode(text));
        if (!wholeValue(bytes)) return;
        accepted++;
        const decoded = fatal.decode(bytes); // throws on invalid UTF-8
        const parsed: unknown = JSON.parse(decoded);
        expect(canonicalize(parsed)).toBe(decoded);
        expect(z.json().safeParse(parsed).success).toBe(true);
      }),
      { numRuns: 6000 },
    );
    expect(accepted).toBeGreaterThan(100); // edits that keep a value canonical do happen
  });

  test('numbers: accepted exactly when the token is its own shortest round-trip form', () => {
    const digits = (min: number, max: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));
    const token = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(fc.constant('0'), fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 22)).map(([a, b]) => `${a}${b}`)),
        fc.option(digits(1, 22).map((d) => `.${d}`), { nil: '' }),
        fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 3)).map((p) => p.join('')), { nil: '' }),
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(token, (tok) => {
        const n = Number(tok);
        expect(scanNumber(terminated(tok), 0) === tok.length).toBe(Number.isFinite(n) && String(n) === tok);
      }),
      { numRuns: 20000 },
    );
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const tok = String(d);
        expect(scanNumber(terminated(tok), 0)).toBe(tok.length);
      }),
      { numRuns: 5000 },
    );
    for (const tok of ['0.000001', '1e-7', '0.1', '123456789012345', '1234567890123456', '100000000000000000000', '1e+21', '-0', '0.0', '1.50', '01', '1E+21', '5e-324'])
      expect(scanNumber(terminated(tok), 0) === tok.length, tok).toBe(String(Number(tok)) === tok);
  });

  test('strings: JSON.stringify of a well-formed string is accepted, plain exactly when it is printable ASCII without " or \\', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 20 }), (s) => {
        const text = JSON.stringify(s);
        const end = scanString(terminated(text), 0);
        expect(end === encoder.encode(text).length).toBe(!LONE_SURROGATE.test(s));
        if (end >= 0) expect(stringPlain).toBe(/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(s));
      }),
      { numRuns: 5000 },
    );
    // escapes JSON.stringify would not write
    for (const text of ['"\\/"', '"\\u0041"', '"\\u001F"', '"\\u000a"', '"\\ud83d\\ude00"', '"\\x"', '"\t"', '"\u0001"']) expect(scanString(terminated(text), 0), text).toBe(-1);
    for (const text of ['"\\u001f"', '"\\n"', '"\\""', '"\\\\"', '"é€😀"', '"\u007f\u2028"']) expect(scanString(terminated(text), 0), text).toBe(encoder.encode(text).length);
  });

  test('object keys must be strictly increasing, never __proto__', () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'b', 'B', '_', 'p', 'r', 'o', 't', '1'), maxLength: 9 });
    fc.assert(
      fc.property(fc.array(fc.tuple(key, fc.nat({ max: 9 })), { maxLength: 5 }), (entries) => {
        const text = `{${entries.map(([k, n]) => `${JSON.stringify(k)}:${n}`).join(',')}}`;
        const keys = entries.map(([k]) => k);
        const increasing = keys.every((k, i) => i === 0 || keys[i - 1]! < k);
        expect(scanObject(terminated(text), 0, 0, true) === text.length).toBe(increasing && !keys.includes('__proto__'));
      }),
      { numRuns: 3000 },
    );
  });

  test('counts: safe non-negative integers in canonical form', () => {
    const table: [string, number][] = [['0', 1], ['7', 1], ['42', 2], ['00', -1], ['01', -1], ['-1', -1], ['9007199254740991', 16], ['9007199254740992', -1], ['10000000000000000', -1], ['1.5', 1], ['x', -1]];
    for (const [tok, end] of table) expect(scanCount(terminated(tok), 0), tok).toBe(end);
  });

  test('firstInvalidUtf8 agrees with the fatal decoder', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 24 }), fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => encoder.encode(s))), fc.array(byteEdit, { maxLength: 2 }), (start, edits) => {
        const bytes = edits.reduce(edit, start);
        let valid = true;
        try {
          fatal.decode(bytes);
        } catch {
          valid = false;
        }
        expect(firstInvalidUtf8(bytes, 0, bytes.length) < 0).toBe(valid);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('shape checks over canonical bytes vs the zod schemas', () => {
  /** The tape check's verdict for a body's canonical bytes, or undefined when the scan doubts them. */
  function tapeVerdict(kind: RecordKind, body: unknown): boolean | undefined {
    const text = canonical(body);
    if (text === undefined || text[0] !== '{') return undefined;
    const bytes = terminated(text);
    if (scanObject(bytes, 0, 0, true) !== encoder.encode(text).length) return undefined;
    return bodyTapeChecks[kind](bytes, tapeMembers);
  }

  test('valid bodies of every kind with plain keys are accepted', () => {
    fc.assert(
      fc.property(validBody, ([k, body]) => {
        if (!plainKeys(body)) return;
        expect(tapeVerdict(k, body)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('mutated bodies, under their own kind or another: a shape check accepts only what zod accepts', () => {
    let rejected = 0;
    fc.assert(
      fc.property(validBody, fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.constantFrom(...Object.keys(bodyTapeChecks)), fc.boolean(), ([k, body], ms, otherKind, swap) => {
        const kind = (swap ? otherKind : k) as RecordKind;
        const mutated = ms.reduce(mutate, body);
        if (!ordinary(mutated)) return;
        const verdict = tapeVerdict(kind, mutated);
        if (verdict === undefined) return;
        const parsed: unknown = JSON.parse(canonicalize(mutated));
        if (verdict) expect(zodOk(kind, parsed)).toBe(true);
        else rejected++;
      }),
      { numRuns: 4000 },
    );
    expect(rejected).toBeGreaterThan(1000);
  });
});
