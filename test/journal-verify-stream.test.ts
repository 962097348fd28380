// The verify-only paths: (1) the two-part SHA-256 primitive (digest.ts `sha256PrefixedHex`) gives
// the bytes of the @noble/hashes reference over prefix ‖ UTF-8(text) ‖ UTF-8(tail), node:crypto
// and composed alike; (2) verifyJournalText (streaming, no records kept) and verifyJournalBytes
// (the byte verifier, over the text's UTF-8) give readJournalText's verdict — ok, first bad seq,
// message, fingerprint, sealed, key id, invocation, record count — on random valid and mutated
// journals, with and without the key. What only the byte verifier does (byte edits, pieces, UTF-8,
// its fast path) is test/journal-verify-bytes.test.ts.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { nodeSha256, nodeSha256PrefixedHex } from '../journal/sha256-node.js';
import { bytesToHex, composePrefixedHex, referenceSha256, referenceSha256PrefixedHex } from '../journal/digest.js';
import { readJournalText, verifyJournalText, verifyRecords, type ReadOptions } from '../journal/reader.js';
import { verifyJournalBytes } from '../journal/verify-bytes.js';
import { journal, mutate, mutation, publicKey, toJsonl, verdictOf } from './journal-verify-generators.js';

const encoder = new TextEncoder();

function reference(prefix: Uint8Array, text: string, tail: string): string {
  const t = encoder.encode(text);
  const u = encoder.encode(tail);
  const all = new Uint8Array(prefix.length + t.length + u.length);
  all.set(prefix, 0);
  all.set(t, prefix.length);
  all.set(u, prefix.length + t.length);
  return bytesToHex(referenceSha256(all));
}

describe('sha256PrefixedHex', () => {
  const text = fc.string({ unit: 'binary', maxLength: 300 }); // lone surrogates included
  test('node:crypto and the composed form give the noble bytes', () => {
    const composedNode = composePrefixedHex(nodeSha256);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), text, text, (prefix, a, b) => {
        const expected = reference(prefix, a, b);
        expect(nodeSha256PrefixedHex(prefix, a, b)).toBe(expected);
        expect(referenceSha256PrefixedHex(prefix, a, b)).toBe(expected);
        expect(composedNode(prefix, a, b)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  test('every length around the block boundaries, and a large input (buffer growth)', () => {
    const prefix = Uint8Array.from({ length: 32 }, (_, i) => i * 7);
    for (let n = 0; n <= 200; n++) {
      const s = 'é'.repeat(n >> 1) + 'x'.repeat(n & 1);
      expect(nodeSha256PrefixedHex(prefix, s, '}'), `length ${n}`).toBe(reference(prefix, s, '}'));
    }
    const big = '\u{1F600}ab'.repeat(20_000);
    expect(nodeSha256PrefixedHex(prefix, big, big)).toBe(reference(prefix, big, big));
    expect(referenceSha256PrefixedHex(prefix, big, '')).toBe(reference(prefix, big, ''));
  });
});

/** verifyJournalText and verifyJournalBytes give readJournalText's verdict. */
function same(text: string, options: ReadOptions): void {
  const expected = verdictOf(readJournalText(text, options));
  expect(verdictOf(verifyJournalText(text, options))).toEqual(expected);
  expect(verdictOf(verifyJournalBytes(encoder.encode(text), options))).toEqual(expected);
}

describe('verifyJournalText and verifyJournalBytes', () => {
  test('random valid sealed journals: the same verdict as readJournalText', () => {
    fc.assert(
      fc.property(journal, (records) => {
        const text = toJsonl(records);
        same(text, { publicKey });
        same(text, {});
        expect(verifyJournalText(text, { publicKey }).ok).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  test('every mutation: the same verdict as readJournalText, with and without the key', () => {
    fc.assert(
      fc.property(journal, mutation, (records, m) => {
        const { text } = mutate(records, m);
        same(text, { publicKey });
        same(text, {});
      }),
      { numRuns: 600 },
    );
  });

  test('two mutations (a bad seal with a later problem, unparseable and torn tails): the same verdict', () => {
    const tail = fc.constantFrom('', '{not json\n', '{"x":1}\n', '{"x":1}\n{not json\n', '{"torn"', '\n', 'x');
    fc.assert(
      fc.property(journal, mutation, mutation, tail, (records, m1, m2, t) => {
        const once = mutate(records, m1).text;
        // a second mutation on the first's lines, when they still parse as records
        let text = once;
        try {
          const lines = once.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
          if (lines.length > 0) text = mutate(lines, m2).text;
        } catch {
          // keep the single mutation
        }
        for (const candidate of [text, text + t, once + t]) {
          same(candidate, { publicKey });
          same(candidate, {});
        }
      }),
      { numRuns: 300 },
    );
  });

  test('the fast path gives the slow path verdict (verifyRecords: every record through zod) on mutated journals', () => {
    // A digest respelled (upper case, a non-hex character) keeps the line canonical and 64 long:
    // the fast path admits it and must still report what the slow path's shape check reports.
    const respell = fc.constantFrom(
      (h: string) => h.toUpperCase(),
      (h: string) => 'g' + h.slice(1),
      (h: string) => h.slice(0, 63) + 'A',
      (h: string) => h,
    );
    fc.assert(
      fc.property(journal, mutation, fc.nat(), fc.constantFrom('prev' as const, 'hash' as const), respell, (records, m, at, field, f) => {
        const lines = mutate(records, m).text.split('\n');
        if (lines.pop() !== '') return; // torn: not a verifyRecords question
        let values: unknown[];
        try {
          values = lines.map((l) => JSON.parse(l) as unknown);
        } catch {
          return;
        }
        if (lines.length > 0) {
          const k = at % lines.length;
          const old = (values[k] as Record<string, unknown> | null)?.[field];
          if (typeof old === 'string') lines[k] = lines[k]!.replace(`"${field}":"${old}"`, `"${field}":"${f(old)}"`);
          values = lines.map((l) => JSON.parse(l) as unknown);
        }
        const text = lines.map((l) => l + '\n').join('');
        for (const options of [{ publicKey }, {}]) {
          const expected = verdictOf(verifyRecords(values, options));
          expect(verdictOf(verifyJournalText(text, options))).toEqual(expected);
          expect(verdictOf(readJournalText(text, options))).toEqual(expected);
          expect(verdictOf(verifyJournalBytes(encoder.encode(text), options))).toEqual(expected);
        }
      }),
      { numRuns: 400 },
    );
  });

  test('edge texts: empty, only newlines, torn only, CRLF, not JSON', () => {
    for (const text of ['', '\n', '\n\n', 'x', '{}', '{}\n', '{}\r\n', '[]\n{}\n', 'null\n', '"s"\n1\n', '\uFEFF{}\n']) {
      same(text, { publicKey });
      same(text, {});
    }
  });
});
