/**
 * A Redis store on a dying connection: every operation of the JournalStore interface but append
 * (which guards itself: a lost reply means more there) and close is answered when the connection
 * ends — rejected with StoreUnreachableError naming the server, never left waiting for ever, never
 * with ioredis' own text. The operations are read off the interface's other implementations, so one
 * added later is checked too (and the table of arguments below fails until it is given some).
 *
 * A store closed over a client passed in takes its listener off that client.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { StoreUnreachableError } from '../journal/errors.js';
import type { JournalStore, Lease } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { RedisStore } from '../stores/redis.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
let server: RedisServer;
beforeAll(async () => {
  if (available) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const methodsOf = (proto: object) => Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor' && typeof (proto as Record<string, unknown>)[n] === 'function');

/** The operations every store implements: the JournalStore interface, as the memory and file stores have it. */
function interfaceOperations(): string[] {
  const file = new Set(methodsOf(FileStore.prototype));
  return methodsOf(MemoryStore.prototype).filter((n) => file.has(n) && n !== 'append' && n !== 'close').sort();
}

const ID = 'inv-guard';
const argsFor = (lease: Lease): Record<string, unknown[]> => ({
  acquire: [ID, { writer: 'other', ttlMs: 30_000 }],
  renew: [lease, 30_000],
  release: [lease],
  read: [ID],
  length: [ID],
  tail: [ID],
  list: [],
  quarantineTornTail: [lease],
  putSnapshot: [lease, { seq: 0, hash: 'h', data: {} }],
  getSnapshot: [ID],
  putStatus: [ID, { status: 'running', at: 1 }],
  getStatus: [ID],
  clearStatus: [ID],
  holder: [ID],
  putInbox: [ID, { type: 'approval', decision: 'approved', by: 'me', at: 1 }],
  peekInbox: [ID],
  clearInbox: [ID],
  putAdvisory: [ID, { type: 'advisory', seq: 3, index: 0, epoch: 1, subject: 'epoch', rule: 'r', reason: 'why', at: 1 }],
  advisories: [ID],
  putMetadata: [ID, { domain: 'travel', library: 'a'.repeat(64) }],
  getMetadata: [ID],
  putBlob: [new Uint8Array([1, 2, 3])],
  getBlob: ['b'.repeat(64)],
});

describe.skipIf(!available)('a Redis store whose connection dies mid-operation', () => {
  test('every JournalStore operation but append and close fails with StoreUnreachableError naming the server', async () => {
    const client = new Redis(server.url, { retryStrategy: () => null });
    const store = new RedisStore({ redis: client, prefix: 'guard' });
    const lease = await store.acquire(ID, { writer: 'me', ttlMs: 30_000 });
    const table = argsFor(lease);
    const operations = interfaceOperations();
    expect(operations.filter((op) => !(op in table)), 'give the new operation arguments in argsFor').toEqual([]);
    // The server stops answering (every client), then the connection is dropped under the waiting operations.
    const admin = new Redis(server.url);
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    const results = operations.map((op) =>
      (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[op]!(...table[op]!).then(
        () => ({ op, outcome: 'answered' }),
        (err: unknown) => ({ op, outcome: err instanceof StoreUnreachableError ? `unreachable ${err.store}` : `${(err as Error).name}: ${(err as Error).message}` }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.disconnect();
    const settled = await Promise.race([
      Promise.all(results),
      new Promise<string>((resolve) => setTimeout(() => resolve('an operation was still waiting 1 s after the connection ended'), 1_000)),
    ]);
    expect(settled).toEqual(operations.map((op) => ({ op, outcome: `unreachable ${server.url}` })));
    await store.close();
    admin.disconnect();
  });

  test('close() takes the store\'s listener off a client passed in', async () => {
    const client = new Redis(server.url);
    const before = client.listenerCount('end');
    const store: JournalStore = new RedisStore({ redis: client, prefix: 'guard' });
    expect(client.listenerCount('end')).toBe(before + 1);
    await store.close();
    expect(client.listenerCount('end')).toBe(before);
    expect(client.status).not.toBe('end'); // the caller's client stays open
    await client.quit();
  });
});

if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}
