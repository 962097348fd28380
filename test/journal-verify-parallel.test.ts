// Parallel verification (journal/verify-parallel.ts): the verdict — ok, first bad seq, message,
// fingerprint, sealed, key id, invocation, count — equals readJournalText's on random valid and
// mutated journals cut into several chunks (the line threshold lowered to 2, 2..5 chunks on 2
// workers), with and without the key, and on a large journal with the default threshold.
// Worker threads need the compiled module (Node 20 cannot start a .ts worker without a loader):
// this test imports journal/verify-parallel.js from dist/ (`npm test` builds it first).
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readJournalText, type ReadOptions } from '../journal/reader.js';
import { buildJournal } from './fixtures/journal/make.js';
import { journal, mutate, mutation, publicKey, toJsonl, verdictOf } from './journal-verify-generators.js';
import { repoRoot } from './support/cli.js';

type ParallelModule = typeof import('../journal/verify-parallel.js');
const compiled = path.join(repoRoot, 'dist', 'journal', 'verify-parallel.js');
let parallel: ParallelModule;

beforeAll(async () => {
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run "npm run build" (npm test does it first)`);
  parallel = (await import(pathToFileURL(compiled).href)) as ParallelModule;
  expect(parallel.parallelAvailable()).toBe(true);
});

afterAll(async () => {
  await parallel?.closeVerifyPool();
});

async function same(text: string, options: ReadOptions, chunks: number): Promise<void> {
  const expected = verdictOf(readJournalText(text, options));
  const got = await parallel.verifyJournalTextParallel(text, { ...options, minLines: 2, workers: 2, chunks });
  expect(verdictOf(got)).toEqual(expected);
}

describe('verifyJournalTextParallel', () => {
  test('random valid sealed journals, in chunks: the same verdict as readJournalText', async () => {
    await fc.assert(
      fc.asyncProperty(journal, fc.integer({ min: 2, max: 5 }), async (records, chunks) => {
        const text = toJsonl(records);
        await same(text, { publicKey }, chunks);
        await same(text, {}, chunks);
      }),
      { numRuns: 100 },
    );
  });

  test('every mutation, in chunks: the same verdict as readJournalText, with and without the key', async () => {
    const tail = fc.constantFrom('', '', '{not json\n', '{"x":1}\n', '{"x":1}\n{not json\n', '{"torn"');
    await fc.assert(
      fc.asyncProperty(journal, mutation, fc.integer({ min: 2, max: 5 }), tail, async (records, m, chunks, t) => {
        const text = mutate(records, m).text + t;
        await same(text, { publicKey }, chunks);
        await same(text, {}, chunks);
      }),
      { numRuns: 400 },
    );
  });

  test('a large journal (default workers; 4,000-line threshold with the pool running): intact, then a flip near the end and at a chunk boundary', async () => {
    const pin = { library: 'a'.repeat(64), runtime: 'r', flags: [], model: { id: 'm', params: {} }, seed: 's', asOf: 'now', policy: 'p' };
    const drafts = Array.from({ length: 5000 }, (_, i) => ({ kind: 'invocation.handed_off' as const, epoch: 0, body: { reason: `r${i}` } }));
    const records = buildJournal({ invocation: 'inv', tenant: 't', intent: 'x', pin }, drafts, {});
    const text = toJsonl(records);
    const lines = text.split('\n');
    const check = async (t: string) => {
      const expected = verdictOf(readJournalText(t, {}));
      expect(verdictOf(await parallel.verifyJournalTextParallel(t, {}))).toEqual(expected);
      expect(verdictOf(await parallel.verifyJournalTextParallel(t, { workers: 2, chunks: 7 }))).toEqual(expected);
      return expected;
    };
    await parallel.verifyJournalTextParallel(text, { minLines: 2 }); // the pool is running: the warm threshold applies
    expect((await check(text)).ok).toBe(true);
    for (const at of [4990, 2500, 2501, 714, 715]) {
      const edited = [...lines];
      edited[at] = edited[at]!.replace(`"r${at - 1}"`, `"R${at - 1}"`);
      const v = await check(edited.join('\n'));
      expect(v.seq).toBe(at);
    }
  });
});
