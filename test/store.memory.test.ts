/**
 * MemoryStore: the conformance suite with an injected clock, plus what only the memory store does.
 */
import { describe, expect, test } from 'vitest';
import { LeaseHeldError } from '../journal/errors.js';
import { MemoryStore } from '../stores/memory.js';
import { chain, storeConformance } from './store-conformance.js';

storeConformance({
  name: 'memory',
  injectableClock: true,
  create: async ({ now }) => new MemoryStore({ now }),
  // A memory store is process-local: a second runtime in this process shares the instance.
  peer: async (store) => store,
});

describe('MemoryStore', () => {
  test('reads lease expiry from the injected clock only', async () => {
    let t = 0;
    const store = new MemoryStore({ now: () => t });
    const a = await store.acquire('clock', { writer: 'a', ttlMs: 100 });
    expect(a.expiresAt).toBe(100);
    t = 99;
    await expect(store.acquire('clock', { writer: 'b', ttlMs: 100 })).rejects.toThrow(LeaseHeldError);
    t = 100;
    const b = await store.acquire('clock', { writer: 'b', ttlMs: 100 });
    expect(b).toEqual({ invocation: 'clock', writer: 'b', token: a.token + 1, expiresAt: 200 });
  });

  test('has no torn tails to quarantine', async () => {
    const store = new MemoryStore();
    const lease = await store.acquire('whole', { writer: 'a', ttlMs: 1000 });
    await store.append(lease, 0, chain('whole', 2));
    expect(await store.quarantineTornTail(lease)).toBeUndefined();
    expect(await store.length('whole')).toBe(2);
  });
});
