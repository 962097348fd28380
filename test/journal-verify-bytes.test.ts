// The byte verifier (journal/verify-bytes.ts) gives verifyJournalText's verdict — ok, first bad seq,
// message, fingerprint, sealed, key id, invocation, tenant, pin, record count — for the UTF-8 bytes
// of the same text. journal-verify-stream.test.ts checks that on random valid journals and every
// mutation of the reader's property test; here: byte edits anywhere on a line, any cut of the bytes
// into pushed pieces, records larger than its buffers, and what only bytes show (a line that is not
// valid UTF-8 is refused). And its fast path is really taken: writer-made lines are never decoded.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { verifyJournalText, type ReadOptions } from '../journal/reader.js';
import { JournalByteVerifier, verifyJournalBytes } from '../journal/verify-bytes.js';
import { buildJournal, toJsonl, type Draft } from './fixtures/journal/make.js';
import { journal, key, mutate, mutation, publicKey, verdictOf } from './journal-verify-generators.js';

const encoder = new TextEncoder();
const fatal = new TextDecoder('utf-8', { fatal: true });

function same(text: string, options: ReadOptions): void {
  expect(verdictOf(verifyJournalBytes(encoder.encode(text), options))).toEqual(verdictOf(verifyJournalText(text, options)));
}

/** The verdict of `bytes` pushed in pieces cut at `cuts` (offsets, any order). */
function pushedInPieces(bytes: Uint8Array, cuts: number[], options: ReadOptions) {
  const verifier = new JournalByteVerifier(options);
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    verifier.push(bytes.subarray(from, cut));
    from = cut;
  }
  verifier.push(bytes.subarray(from));
  return verifier.end();
}

const genesis = { invocation: 'inv-bytes-1', tenant: 'acme', intent: 'book a trip to Lisbon', pin: { library: 'ab'.repeat(32), runtime: 'weft/test', flags: [1], model: { id: 'scripted', params: { temperature: 0 } }, seed: 's', asOf: '2026-01-01T00:00:00.000Z', policy: 'p@1' } };

/** A journal like the runtime writes: dispatch/complete pairs with small JSON args and results. */
function realistic(n: number, extra: (i: number) => Record<string, unknown> = () => ({})): string {
  const drafts: Draft[] = [];
  for (let i = 0; i < n; i++) {
    const key = `inv-bytes-1.${1 + (i >> 3)}.${i & 7}`;
    drafts.push(
      i % 2 === 0
        ? { kind: 'step.dispatched', epoch: 1 + (i >> 3), body: { step: i & 7, actuator: 'book_hotel', key, attempt: 1, args: { city: 'lisbon', guests: 2, maxPrice: 400.5 + i, ...extra(i) } } }
        : { kind: 'step.completed', epoch: 1 + (i >> 3), body: { step: i & 7, key, attempt: 1, result: { ok: true, price: i / 100, booking: `BK-${i}`, ...extra(i) } } },
    );
  }
  return toJsonl(buildJournal(genesis, drafts, { key, meta: (seq) => (seq % 3 === 0 ? { writer: 'runtime-1', at: '2026-01-01T00:00:00.000Z' } : { writer: 'runtime-1' }) }));
}

describe('verifyJournalBytes gives verifyJournalText’s verdict (see also journal-verify-stream.test.ts)', () => {
  test('a byte edited anywhere (envelope, meta, structure): the same verdict while the text is UTF-8; refused at its line when not', () => {
    const edit = fc.record({ at: fc.nat(), byte: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x22, 0x5c, 0x20, 0x0a, 0x7b, 0x7d, 0x2c, 0x30, 0x80, 0xc3, 0xff)), insert: fc.boolean() });
    fc.assert(
      fc.property(journal, edit, (records, e) => {
        const original = encoder.encode(toJsonl(records));
        const at = e.at % original.length;
        const bytes = e.insert
          ? Uint8Array.from([...original.subarray(0, at), e.byte, ...original.subarray(at)])
          : Uint8Array.from(original, (b, i) => (i === at ? e.byte : b));
        let text: string | undefined;
        try {
          text = fatal.decode(bytes);
        } catch {
          text = undefined;
        }
        for (const options of [{ publicKey }, {}]) {
          const verdict = verifyJournalBytes(bytes, options);
          if (text !== undefined) {
            expect(verdictOf(verdict)).toEqual(verdictOf(verifyJournalText(text, options)));
          } else {
            const line = original.subarray(0, at).filter((b) => b === 0x0a).length;
            expect(verdict.ok).toBe(false);
            expect(verdict.error!.seq).toBe(line);
          }
        }
      }),
      { numRuns: 600 },
    );
  });

  test('a writer-made journal with CRLF line ends, or a BOM', () => {
    const journalText = realistic(6);
    same(journalText.replace(/\n/g, '\r\n'), {});
    same('\uFEFF' + journalText, {});
  });
});

describe('streaming', () => {
  test('any cut into pushed pieces gives the one-push verdict', () => {
    fc.assert(
      fc.property(journal, fc.option(mutation, { nil: undefined }), fc.array(fc.nat(), { maxLength: 12 }), (records, m, cuts) => {
        const bytes = encoder.encode(m === undefined ? toJsonl(records) : mutate(records, m).text);
        for (const options of [{ publicKey }, {}]) expect(verdictOf(pushedInPieces(bytes, cuts, options))).toEqual(verdictOf(verifyJournalBytes(bytes, options)));
      }),
      { numRuns: 300 },
    );
  });

  test('one byte at a time, and records longer than the scratch area and than a chunk', () => {
    const text = realistic(20);
    const bytes = encoder.encode(text);
    const oneByOne = new JournalByteVerifier({ publicKey });
    for (let i = 0; i < bytes.length; i++) oneByOne.push(bytes.subarray(i, i + 1));
    expect(verdictOf(oneByOne.end())).toEqual(verdictOf(verifyJournalText(text, { publicKey })));

    const big = realistic(4, (i) => (i === 1 ? { note: 'x'.repeat(100_000) } : i === 2 ? { note: 'é'.repeat(1_500_000) } : {}));
    const bigBytes = encoder.encode(big);
    const verdict = verifyJournalBytes(bigBytes, { publicKey });
    expect(verdict.ok).toBe(true);
    expect(verdictOf(verdict)).toEqual(verdictOf(verifyJournalText(big, { publicKey })));
    expect(verdictOf(pushedInPieces(bigBytes, [70_000, 1_100_000, 2_500_000], { publicKey }))).toEqual(verdictOf(verdict));
  });
});

describe('what only bytes show', () => {
  test('a U+FFFD replaced by a stray byte: the text reader (decoding with replacement) passes it, the byte verifier refuses the line', () => {
    const text = realistic(4, (i) => (i === 2 ? { note: 'café \uFFFD' } : {}));
    const bytes = encoder.encode(text);
    const at = bytes.findIndex((b, i) => b === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd);
    const tampered = Uint8Array.from([...bytes.subarray(0, at), 0x80, ...bytes.subarray(at + 3)]);
    const lossy = new TextDecoder().decode(tampered); // what fs.readFile(file, 'utf8') gives
    expect(verifyJournalText(lossy, { publicKey }).ok).toBe(true);
    const verdict = verifyJournalBytes(tampered, { publicKey });
    expect(verdict.ok).toBe(false);
    expect(verdict.error!.seq).toBe(3);
    expect(verdict.error!.message).toMatch(/^seq 3: not valid UTF-8 \(byte \d+ of the line\)/);
  });
});

describe('the fast path', () => {
  test('writer-made lines never take the slow path: only the pinned record and the seal are decoded', () => {
    const text = realistic(500, (i) => (i % 7 === 0 ? { city: 'Lisboa ☀', nested: [{ a: -1.5e-9, b: null, c: [true, false] }] } : {}));
    const verifier = new JournalByteVerifier({ publicKey });
    verifier.push(encoder.encode(text));
    const verdict = verifier.end();
    expect(verdict.ok).toBe(true);
    expect(verdict.count).toBe(502);
    expect(verifier.fastRecords).toBe(500);
  });

  test('the committed golden journals: every record between the pin and the seal is fast', async () => {
    const { readFileSync } = await import('node:fs');
    for (const file of ['test/fixtures/journal/golden.jsonl', ...goldenRuntimeJournals()]) {
      const bytes = readFileSync(file);
      const verifier = new JournalByteVerifier();
      verifier.push(bytes);
      const verdict = verifier.end();
      expect(verdict.ok, file).toBe(true);
      expect(verifier.fastRecords, file).toBe(verdict.count - 2);
    }
  });
});

function goldenRuntimeJournals(): string[] {
  return ['test/fixtures/runtime/travel/invocations/inv-64e3b8720395372862b64c54bfe13d0c/journal.jsonl'];
}
