/**
 * Invocations running at once in one process, on one FileStore: each ends with exactly the journal
 * it has when run alone (same bytes, same fingerprint), and with more than one journal open the
 * default store ('auto') flushes on the thread pool — so the invocations' flushes overlap instead of
 * holding the event loop one after another — while one invocation alone flushes blocking.
 */
import fs, { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { signingKeyFromSecret, publicKeyOf } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { verifyJournalBytes } from '../journal/verify-bytes.js';
import { createRuntime } from '../runtime/index.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
const intent = 'Tell Alice the report is ready';
const replies = [
  { match: { intent, epoch: 1 }, reply: { goal: { task: 'notify', args: ['alice'] } } },
  { match: { intent, epoch: 2 }, reply: { done: true, summary: 'Alice was told' } },
];
const scratch = mkdtempSync(join(tmpdir(), 'weft-concurrent-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run `seeds` through one runtime on a fresh FileStore, all at once or one after another; count the flushes of each kind. */
async function run(name: string, seeds: number[], together: boolean) {
  const store = new FileStore(join(scratch, name));
  const runtime = createRuntime({
    store,
    libraries: [notifyLibrary],
    actuators: notifyActuators(newLedger()),
    observe: 'world.observe',
    model: new ScriptedModel({ model: 'notify', entries: replies }),
    signingKey: key,
    sleep: async () => undefined,
  });
  const flushes = { pool: 0, blocking: 0 };
  const original = { fdatasync: fs.fdatasync, fdatasyncSync: fs.fdatasyncSync };
  fs.fdatasync = ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) => (flushes.pool++, original.fdatasync(fd, done))) as typeof fs.fdatasync;
  fs.fdatasyncSync = (fd) => (flushes.blocking++, original.fdatasyncSync(fd));
  syncBuiltinESMExports();
  try {
    const start = (seed: number) => runtime.start(intent, { tenant: 'acme', seed, asOf: '2026-12-01T09:00:00Z' }).then((handle) => handle.done);
    const results = [];
    if (together) results.push(...(await Promise.all(seeds.map(start))));
    else for (const seed of seeds) results.push(await start(seed));
    const journals = results.map((result) => ({ result, bytes: readFileSync(store.journalPath(result.id)) }));
    await store.close();
    return { journals, flushes };
  } finally {
    Object.assign(fs, original);
    syncBuiltinESMExports();
  }
}

/** A journal's lines without the unhashed envelope (wall time and writer differ between runs). */
const hashedParts = (bytes: Buffer) =>
  bytes
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((line) => {
      const { meta: _meta, ...record } = JSON.parse(line) as Record<string, unknown>;
      return record;
    });

describe('invocations running at once on one FileStore', () => {
  test('each ends with the journal it has alone, and their flushes go to the thread pool', async () => {
    const seeds = [1, 2, 3, 4, 5, 6];
    const alone = await run('alone', seeds, false);
    const together = await run('together', seeds, true);
    expect(alone.flushes.pool).toBe(0); // one journal open at a time: 'auto' blocks
    expect(together.flushes.pool).toBeGreaterThan(0);
    for (const [i, { result, bytes }] of together.journals.entries()) {
      const solo = alone.journals[i]!;
      expect(result.status).toBe('completed');
      expect(result.id).toBe(solo.result.id);
      expect(result.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(result.fingerprint).toBe(solo.result.fingerprint);
      expect(hashedParts(bytes)).toEqual(hashedParts(solo.bytes));
      const verdict = verifyJournalBytes(bytes, { publicKey: publicKeyOf(key) });
      expect(verdict.ok).toBe(true);
      expect(verdict.fingerprint).toBe(result.fingerprint);
    }
    expect(new Set(together.journals.map((j) => j.result.id)).size).toBe(seeds.length);
  });
});
