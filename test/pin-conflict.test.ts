/**
 * A start under an id that already names another invocation (runtime/start-conflict.ts): refused,
 * naming each differing field with both values shortened — the library, the seed, the intent — and
 * saying the way on (another --id or --seed), never dumping the whole pin.
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { MemoryStore } from '../stores/memory.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import type { Pin } from '../journal/records.js';
import type { Library } from '../htn/library/schema.js';
import { createRuntime } from '../runtime/index.js';
import { startConflictMessage, startDifferences } from '../runtime/start-conflict.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(3));
const intent = 'Tell Alice the report is ready';
const asOf = '2026-12-01T09:00:00Z';

function runtimeOver(store: MemoryStore, library: Library) {
  const model = new ScriptedModel({ model: 'notify', entries: [] });
  return createRuntime({ store, libraries: [library], actuators: notifyActuators(newLedger()), observe: 'world.observe', model, signingKey: key, sleep: async () => undefined });
}

const pin = (over: Partial<Pin> = {}): Pin =>
  ({ library: 'a'.repeat(64), seed: '1', asOf, policy: 'allow-all', runtime: 'weft@0.1.0', flags: [1, 2], model: { id: 'm', params: {} }, limits: { maxEpochs: 12, maxDepth: 10 }, ...over }) as unknown as Pin;

describe('the differences', () => {
  test('each differing field by name, digests shortened; equal fields left out', () => {
    const differences = startDifferences({ intent, pin: pin() }, { intent, pin: pin({ library: 'b'.repeat(64), seed: '2', limits: { maxEpochs: 3, maxDepth: 10 } as Pin['limits'] }) });
    expect(differences).toEqual([
      { field: 'library', existing: `${'a'.repeat(12)}…`, offered: `${'b'.repeat(12)}…` },
      { field: 'limits.maxEpochs', existing: '12', offered: '3' },
      { field: 'seed', existing: '"1"', offered: '"2"' },
    ]);
  });

  test('the message names the fields and the way on, and stays short', () => {
    const message = startConflictMessage('inv-1', startDifferences({ intent, pin: pin() }, { intent: 'x'.repeat(5000), pin: pin({ seed: '9' }) }));
    expect(message).toMatch(/^invocation inv-1 already exists with a different intent or pin: intent is "Tell Alice[^;]*; seed is "1" there, "9" here\./);
    expect(message).toContain('Use another --id or --seed');
    expect(message.length).toBeLessThan(400);
  });
});

describe('a start that clashes with the invocation under its id', () => {
  test('another library: refused naming the library, not printing the pin', async () => {
    const store = new MemoryStore();
    const first = await runtimeOver(store, notifyLibrary).start(intent, { tenant: 't1', seed: 1, asOf, id: 'trip-1' });
    first.hibernate();
    await first.done;
    const other = { ...notifyLibrary, name: `${notifyLibrary.name}-v2` } as Library;
    const clash = runtimeOver(store, other).start(intent, { tenant: 't1', seed: 1, asOf, id: 'trip-1' });
    await expect(clash).rejects.toMatchObject({ code: 'runtime.id_conflict' });
    const message = ((await clash.catch((e: unknown) => e)) as Error).message;
    expect(message).toMatch(/: library is [0-9a-f]{12}… there, [0-9a-f]{12}… here\. Use another --id or --seed/);
    expect(message).not.toMatch(/[0-9a-f]{64}/);
    expect(message).not.toContain('"limits"');
  });
});
