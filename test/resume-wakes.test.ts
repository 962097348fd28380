/**
 * `runtime.resume(id)` continues a hibernated invocation by itself — the library call does what
 * `weft resume` does — and so does one that was woken once and cut off (its journal has gone past
 * its hibernation snapshot): `done` resolves to the end, with the fingerprint of a run that was
 * never hibernated. Before, the handle sat in `hibernated` and `done` never resolved unless the
 * caller knew to send `{ type: 'resume' }`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { travelDomain } from '../examples/travel/domain.js';
import { createRuntime } from '../runtime/index.js';

const signingKey = signingKeyFromSecret(new Uint8Array(32).fill(7));
const stateDir = mkdtempSync(path.join(tmpdir(), 'weft-resume-wakes-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
let writers = 0;
const runtimeOn = (store: MemoryStore, world: string) =>
  createRuntime({ store, domain: travelDomain, stateDir: world, signingKey, writer: `w${writers++}`, sleep: async () => undefined });
const within = <T>(promise: Promise<T>, ms = 20_000) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`done did not resolve within ${ms} ms`)), ms).unref())]);

test('resume wakes a hibernated invocation and follows it to its end, with the uninterrupted fingerprint', async () => {
  const reference = await (await runtimeOn(new MemoryStore(), path.join(stateDir, 'ref')).start(travelDomain.intent!, { id: 'inv-wake' })).done;
  expect(reference.status).toBe('completed');

  const store = new MemoryStore();
  const world = path.join(stateDir, 'w');
  const first = await runtimeOn(store, world).start(travelDomain.intent!, { id: 'inv-wake' });
  first.hibernate();
  expect((await first.done).status).toBe('hibernated');

  const resumed = await runtimeOn(store, world).resume('inv-wake');
  const result = await within(resumed.done);
  expect(result.status).toBe('completed');
  expect(result.fingerprint).toBe(reference.fingerprint);
});
