/**
 * The runtime's public face, as docs/api.md promises it: every `runtime.<method>(…)` the page names
 * is a method of `Runtime`, `Runtime.defaultId` gives the id a start without `id` gets, and
 * `runtime.store` / `runtime.options` are the store in use and the options with the domain's parts
 * filled in. The class delegates each verb to a module of its own (runtime/start.ts, resume.ts, …);
 * this holds that split to the documented surface.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { MemoryStore } from '../stores/memory.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { BEHAVIOUR_FLAGS, createRuntime, pinnedModelParams, Runtime, RUNTIME_VERSION } from '../runtime/index.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const api = readFileSync(join(import.meta.dirname, '..', 'docs', 'api.md'), 'utf8');
const key = signingKeyFromSecret(new Uint8Array(32).fill(5));

describe('the runtime public face', () => {
  test('every runtime.<method>( named in docs/api.md is a method of Runtime', () => {
    const named = [...new Set([...api.matchAll(/\bruntime\.([a-zA-Z]+)\(/g)].map((m) => m[1]!))].sort();
    expect(named.length).toBeGreaterThanOrEqual(12);
    const missing = named.filter((name) => typeof (Runtime.prototype as unknown as Record<string, unknown>)[name] !== 'function');
    expect(missing).toEqual([]);
  });

  test('store, options and defaultId: what a start pins and names', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel({ model: 'notify', entries: [{ match: { intent: 'Tell Alice', epoch: 1 }, reply: { done: true, summary: 'nothing to do' } }] });
    const runtime = createRuntime({ store, libraries: [notifyLibrary], actuators: notifyActuators(newLedger()), observe: 'world.observe', model, signingKey: key, sleep: async () => undefined });
    expect(runtime.store).toBe(store);
    expect(runtime.options.observe).toBe('world.observe');
    expect(runtime.options.libraries).toEqual([notifyLibrary]);
    const opts = { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' };
    const handle = await runtime.start('Tell Alice', opts);
    expect(handle.id).toBe(Runtime.defaultId('Tell Alice', opts));
    expect((await handle.done).status).toBe('completed');
    const pinned = (await store.read(handle.id, 0, 1))[0] as { body: { pin: { runtime: string; flags: number[]; model: { params: unknown } } } };
    expect(pinned.body.pin.runtime).toBe(RUNTIME_VERSION);
    expect(pinned.body.pin.flags).toEqual([...BEHAVIOUR_FLAGS]);
    expect(pinned.body.pin.model.params).toEqual(pinnedModelParams(model));
    await runtime.close();
  });
});
