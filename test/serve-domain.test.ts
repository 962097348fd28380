/**
 * Which invocations a serve of one domain takes (runtime/serve-domain.ts): answers are remembered
 * only for the invocations still open (a long-running serve does not remember every invocation it
 * ever saw), and a store that cannot answer is no answer — asked again later, never an error.
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { MemoryStore } from '../stores/memory.js';
import { domainFilter } from '../runtime/serve-domain.js';
import { notifyLibrary } from './support/notify-app.js';

const LIBRARY = 'a'.repeat(64);

class Counting extends MemoryStore {
  asked = 0;
  failing = new Set<string>();
  override async getMetadata(id: string) {
    this.asked++;
    if (this.failing.has(id)) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
    return super.getMetadata(id);
  }
}

describe('the domain filter of serve', () => {
  test('answers by the metadata, remembered while the invocation is open and forgotten once it is not listed', async () => {
    const store = new Counting();
    await store.putMetadata('mine', { domain: 'notify', library: LIBRARY });
    await store.putMetadata('theirs', { domain: 'refunds', library: LIBRARY });
    const filter = domainFilter(store, { name: 'notify', libraries: [notifyLibrary] });
    expect(await filter.belongs('mine')).toBe(true);
    expect(await filter.belongs('theirs')).toBe(false);
    expect(await filter.belongs('mine')).toBe(true);
    expect(store.asked).toBe(2); // the second question about mine was answered from memory
    expect(filter.remembered).toBe(2);
    filter.keepOnly(['mine']); // theirs ended
    expect(filter.remembered).toBe(1);
    filter.keepOnly([]);
    expect(filter.remembered).toBe(0);
    expect(await filter.belongs('mine')).toBe(true);
    expect(store.asked).toBe(3); // asked again after it was forgotten
  });

  test('a store that cannot answer: no error, not taken, asked again next time', async () => {
    const store = new Counting();
    await store.putMetadata('mine', { domain: 'notify', library: LIBRARY });
    store.failing.add('mine');
    const filter = domainFilter(store, { name: 'notify', libraries: [notifyLibrary] });
    await expect(filter.belongs('mine')).resolves.toBe(false);
    expect(filter.remembered).toBe(0);
    store.failing.clear();
    await expect(filter.belongs('mine')).resolves.toBe(true);
  });

  test('with no domain every invocation belongs and nothing is remembered', async () => {
    const filter = domainFilter(new Counting(), undefined);
    expect(await filter.belongs('any')).toBe(true);
    expect(filter.remembered).toBe(0);
  });
});
