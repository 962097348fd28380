/**
 * RedisStore: the conformance suite against a private redis-server (injected clock, blob
 * corruption; no torn tails — a Redis append is one atomic script — and no holder processes),
 * plus what only the Redis store does: its key layout, the durability check, the invocation
 * registry and its repair, crash safety of acknowledged appends (SIGKILL with AOF fsync always),
 * and atomic appends under a race.
 *
 * Needs `redis-server` on PATH: under CI (CI=true) its absence fails the file; elsewhere the file is
 * skipped with a loud notice. Every server is a child process on a free port (never 6379).
 */
import { Redis } from 'ioredis';
import { describe, expect, test, vi } from 'vitest';
import { recordLine } from '../journal/encode.js';
import { canonicalize } from '../journal/canonical.js';
import { FencedError, JournalIntegrityError, LeaseHeldError, SeqConflictError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { checkRedisDurability, RedisDurabilityError, RedisStore } from '../stores/redis.js';
import { chainRecord } from '../journal/chain.js';
import { invocationSummary, listInvocations, listOpenInvocations } from '../runtime/list.js';
import { fillEnded } from '../bench/list-fixture.js';
import { chain, storeConformance } from './store-conformance.js';
import { fileRedis } from './support/file-redis.js';
import { startRedis } from './support/redis-server.js';

/** The file's private Redis (AOF, fsync always, noeviction); each test's stores under a prefix of their own. */
const redis = fileRedis();
const available = redis.available;
const freshPrefix = () => redis.freshPrefix('t');

if (available) {
  storeConformance({
    name: 'redis',
    injectableClock: true,
    create: async ({ now }) => new RedisStore({ redis: redis.url, prefix: freshPrefix(), now }),
    peer: async (store, { now }) => new RedisStore({ redis: redis.url, prefix: (store as RedisStore).prefix, now }),
    corruptBlob: async (store, digest) => {
      await redis.admin.set((store as RedisStore).blobKey(digest), 'not the original bytes');
    },
    damageMetadata: async (store, invocation, text) => {
      await redis.admin.set(`${(store as RedisStore).prefix}:{${invocation}}:meta`, text);
    },
  });
}

describe.skipIf(!available)('RedisStore', () => {
  const open = (over: { now?: () => number; prefix?: string } = {}) => new RedisStore({ redis: redis.url, prefix: over.prefix ?? freshPrefix(), ...(over.now ? { now: over.now } : {}) });

  test('stores each record as its canonical line (the file store\'s bytes), under the invocation\'s hash tag', async () => {
    const store = open();
    const lease = await store.acquire('layout', { writer: 'w', ttlMs: 60_000 });
    const records = chain('layout', 3);
    await store.append(lease, 0, records);
    await store.putSnapshot(lease, { seq: 3, hash: records[2]!.hash, data: { at: 3 } });
    await store.putStatus('layout', { status: 'running', at: 1 });
    const keys = store.keys('layout');
    expect(keys).toEqual({
      journal: `${store.prefix}:{layout}:journal`,
      lease: `${store.prefix}:{layout}:lease`,
      snapshot: `${store.prefix}:{layout}:snapshot`,
      status: `${store.prefix}:{layout}:status`,
    });
    expect(await redis.admin.lrange(keys.journal, 0, -1)).toEqual(records.map((r) => canonicalize(r)));
    expect(await redis.admin.hgetall(keys.lease)).toEqual({ writer: 'w', token: '1', expiresAt: String(lease.expiresAt), released: '0', attempt: expect.any(String), appended: expect.any(String) });
    expect(JSON.parse((await redis.admin.get(keys.snapshot))!)).toEqual({ seq: 3, hash: records[2]!.hash, data: { at: 3 } });
    expect(await redis.admin.type(keys.status)).toBe('string');
    expect(await redis.admin.zrange(store.registryKey, '0', '-1')).toEqual(['layout']);
    expect(store.name).toBe(`redis://127.0.0.1:${redis.server.port}/0`);
    await store.close();
  });

  test('reads lease expiry from the injected clock only; tokens keep growing across releases', async () => {
    let t = 0;
    const store = open({ now: () => t });
    const a = await store.acquire('clock', { writer: 'a', ttlMs: 100 });
    expect(a).toEqual({ invocation: 'clock', writer: 'a', token: 1, expiresAt: 100 });
    t = 99;
    await expect(store.acquire('clock', { writer: 'b', ttlMs: 100 })).rejects.toThrow(LeaseHeldError);
    expect(await store.holder('clock')).toEqual({ writer: 'a', expiresAt: 100, live: true });
    t = 100;
    expect(await store.holder('clock')).toEqual({ writer: 'a', expiresAt: 100, live: false });
    const b = await store.acquire('clock', { writer: 'b', ttlMs: 100 });
    expect(b).toEqual({ invocation: 'clock', writer: 'b', token: 2, expiresAt: 200 });
    await store.release(b);
    expect(await store.holder('clock')).toBeUndefined();
    expect(await redis.admin.hget(store.keys('clock').lease, 'token')).toBe('2'); // kept after release
    expect((await store.acquire('clock', { writer: 'c', ttlMs: 100 })).token).toBe(3);
    await store.close();
  });

  test('has no torn tails to quarantine (the holder still has to be the current one)', async () => {
    const store = open();
    const lease = await store.acquire('whole', { writer: 'a', ttlMs: 60_000 });
    await store.append(lease, 0, chain('whole', 2));
    expect(await store.quarantineTornTail(lease)).toBeUndefined();
    await expect(store.quarantineTornTail({ ...lease, token: 9 })).rejects.toThrow(FencedError);
    expect(await store.length('whole')).toBe(2);
    await store.close();
  });

  test('a stored line that does not parse is a JournalIntegrityError naming its seq — on read, tail and append', async () => {
    const store = open();
    const lease = await store.acquire('garbled', { writer: 'a', ttlMs: 60_000 });
    const records = chain('garbled', 3);
    await store.append(lease, 0, records.slice(0, 2));
    await redis.admin.lset(store.keys('garbled').journal, 1, '{"seq":1,"kind":');
    await expect(store.read('garbled')).rejects.toThrow(/^seq 1: the record at index 1 of .*:\{garbled\}:journal .*is not valid JSON/);
    await expect(store.tail('garbled')).rejects.toThrow(/^seq 1: /);
    const err = await store.append(lease, 2, records.slice(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JournalIntegrityError);
    expect((err as JournalIntegrityError).seq).toBe(1);
    expect(await store.length('garbled')).toBe(2);
    expect((await store.read('garbled', 0, 1))[0]).toEqual(records[0]);
    await store.close();
  });

  test("readLines gives the journal's stored lines from a seq on, as Redis holds them — the records' canonical lines, and a line that is not one as it is", async () => {
    const store = open();
    const lease = await store.acquire('lines', { writer: 'a', ttlMs: 60_000 });
    const records = chain('lines', 4);
    await store.append(lease, 0, records);
    expect(await store.readLines('lines')).toEqual(records.map((r) => recordLine(r)));
    expect(await store.readLines('lines', 2)).toEqual(records.slice(2).map((r) => recordLine(r)));
    expect(await store.readLines('lines', 4)).toEqual([]);
    await redis.admin.lset(store.keys('lines').journal, 3, '{"seq":3,"kind":');
    expect(await store.readLines('lines', 3)).toEqual(['{"seq":3,"kind":']);
    expect(await store.readLines('none')).toEqual([]);
    await store.close();
  });

  test('two handles appending at once under one lease token: exactly one wins, the other gets SeqConflictError', async () => {
    const a = open();
    const other = new RedisStore({ redis: redis.url, prefix: a.prefix });
    const lease = await a.acquire('race', { writer: 'w', ttlMs: 60_000 });
    const all = chain('race', 1 + 3 * 20);
    await a.append(lease, 0, all.slice(0, 1));
    let length = 1;
    for (let round = 0; round < 20; round++) {
      const tail = all[length - 1]!;
      const one = chain(tail, 1);
      const two = chain(tail, 2);
      const results = await Promise.allSettled([a.append(lease, length, one), other.append(lease, length, two)]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason).toBeInstanceOf(SeqConflictError);
      const grown = results[0]!.status === 'fulfilled' ? 1 : 2;
      expect(await a.length('race')).toBe(length + grown);
      expect((await a.tail('race'))!.hash).toBe((grown === 1 ? one : two).at(-1)!.hash);
      length += grown;
      all.splice(length - grown, grown, ...(grown === 1 ? one : two));
    }
    expect((await a.read('race')).map((r) => r.seq)).toEqual(Array.from({ length }, (_, i) => i));
    await Promise.all([a.close(), other.close()]);
  });

  test('close() leaves a client it was given open, and quits one it created', async () => {
    const client = new Redis(redis.url);
    const store = new RedisStore({ redis: client, prefix: freshPrefix() });
    expect(store.name).toBe(`redis://127.0.0.1:${redis.server.port}/0`);
    await store.putStatus('x', { status: 'running', at: 1 });
    await store.close();
    expect(await client.ping()).toBe('PONG');
    await expect(store.getStatus('x')).rejects.toThrow(/closed/);
    await client.quit();
  });

  describe('the invocation registry', () => {
    test('list() keeps only registered ids whose journal or snapshot exists', async () => {
      const store = open();
      const lease = await store.acquire('real', { writer: 'w', ttlMs: 60_000 });
      await store.append(lease, 0, chain('real', 1));
      await redis.admin.zadd(store.registryKey, '0', 'ghost'); // registered, then the write never happened
      expect(await store.list()).toEqual(['real']);
      // A refused write may register its id; it is still not listed.
      const fenced = await store.acquire('refused', { writer: 'w', ttlMs: 60_000 });
      await expect(store.append({ ...fenced, token: 99 }, 0, chain('refused', 1))).rejects.toThrow(FencedError);
      expect(await store.list()).toEqual(['real']);
      await store.close();
    });

    test('a lost registry update is repaired by rebuildIndex()', async () => {
      const prefix = freshPrefix();
      const writer = open({ prefix });
      for (const id of ['inv-a', 'inv-b', 'inv-c']) {
        const lease = await writer.acquire(id, { writer: 'w', ttlMs: 60_000 });
        await writer.append(lease, 0, chain(id, 2));
      }
      const snap = await writer.acquire('inv-s', { writer: 'w', ttlMs: 60_000 });
      await writer.putSnapshot(snap, { seq: 0, hash: 'a'.repeat(64), data: {} });
      await writer.acquire('lease-only', { writer: 'w', ttlMs: 60_000 });
      await writer.putStatus('note-only', { status: 'running', at: 1 });
      // Keys of another prefix that shares a beginning must not be picked up.
      const neighbour = open({ prefix: `${prefix}0` });
      const n = await neighbour.acquire('neighbour', { writer: 'w', ttlMs: 60_000 });
      await neighbour.append(n, 0, chain('neighbour', 1));

      await redis.admin.zrem(writer.registryKey, 'inv-b', 'inv-s'); // the registry updates were lost
      const reader = open({ prefix });
      expect(await reader.list()).toEqual(['inv-a', 'inv-c']);
      expect((await reader.rebuildIndex()).added).toEqual(['inv-b', 'inv-s']);
      expect(await reader.list()).toEqual(['inv-a', 'inv-b', 'inv-c', 'inv-s']);

      await redis.admin.del(writer.registryKey); // the whole registry lost
      expect(await reader.list()).toEqual([]);
      expect((await reader.rebuildIndex()).added).toEqual(['inv-a', 'inv-b', 'inv-c', 'inv-s']);
      expect(await writer.list()).toEqual(['inv-a', 'inv-b', 'inv-c', 'inv-s']);
      expect((await reader.rebuildIndex()).added).toEqual([]); // idempotent
      await Promise.all([writer.close(), reader.close(), neighbour.close()]);
    });
  });

  test("the status index carries an ended invocation's epoch and last record, from the append and from a reindex alike (the viewer's columns)", async () => {
    const store = open();
    const ids = await fillEnded([store], 2);
    await (await store.connection()).ping(); // the index merges were sent, not awaited
    const fromJournals = await Promise.all(ids.map((id) => invocationSummary(store, id)));
    const fromIndex = await listInvocations(store);
    expect(fromIndex).toEqual(fromJournals);
    for (const [i, row] of fromIndex.entries()) {
      const last = (await store.read(ids[i]!)).at(-1)!;
      expect(row.last).toEqual({ kind: last.kind, ...(last.meta?.at === undefined ? {} : { at: last.meta.at }) });
      expect(row.epoch).toBe(last.epoch);
    }
    await redis.admin.del(store.indexKey);
    expect(await listInvocations(store)).toEqual(fromIndex); // rebuilt from the journals
    await store.close();
  });

  describe('the open set (what weft serve polls)', () => {
    /** Start `id`'s journal, and — `ended` — seal it with an ending record. */
    async function invocation(store: RedisStore, id: string, ended: boolean): Promise<void> {
      const lease = await store.acquire(id, { writer: 'w', ttlMs: 60_000 });
      const start = chain(id, 2);
      await store.append(lease, 0, start);
      if (ended) {
        const done = chainRecord(start[1]!.hash, { seq: 2, kind: 'invocation.completed', epoch: 1, body: { summary: 'done' } }) as JournalRecord;
        await store.append(lease, 2, [done]);
      }
      await store.release(lease);
    }
    const settle = async (store: RedisStore) => (await store.connection()).ping(); // the index merges were sent, not awaited

    test('holds exactly the invocations that have not ended; serve reads only those entries, and repairs the set from the index', async () => {
      const store = open();
      for (let i = 0; i < 30; i++) await invocation(store, `done-${String(i).padStart(2, '0')}`, true);
      await invocation(store, 'open-a', false);
      await invocation(store, 'open-b', false);
      await settle(store);
      expect((await redis.admin.smembers(store.openKey)).sort()).toEqual(['open-a', 'open-b']);
      expect((await store.openIndexed()).map((e) => e.id)).toEqual(['open-a', 'open-b']);
      expect((await listOpenInvocations(store)).map((r) => r.id)).toEqual(['open-a', 'open-b']);

      // The set lost (or never built, e.g. an index from before it existed): a repair rebuilds it from the index.
      await redis.admin.del(store.openKey);
      expect(await store.openIndexed()).toEqual([]);
      expect((await store.openIndexed({ repair: true })).map((e) => e.id)).toEqual(['open-a', 'open-b']);
      expect((await redis.admin.smembers(store.openKey)).sort()).toEqual(['open-a', 'open-b']);

      // A member nothing accounts for any more (its journal deleted or moved aside) is dropped by a repair.
      await redis.admin.sadd(store.openKey, 'inv-deleted');
      expect((await store.openIndexed({ repair: true })).map((e) => e.id)).toEqual(['open-a', 'open-b']);
      expect(await redis.admin.sismember(store.openKey, 'inv-deleted')).toBe(0);

      // A stale member (its ending's index update was lost) is summarized, found ended, and dropped.
      await redis.admin.sadd(store.openKey, 'done-07');
      await redis.admin.hset(store.indexKey, 'done-07', JSON.stringify({ tenant: 'acme', intent: 'x', status: 'running', epoch: 1, records: 2, updated: 1 }));
      expect((await listOpenInvocations(store)).map((r) => r.id)).toEqual(['open-a', 'open-b']);
      expect(await redis.admin.sismember(store.openKey, 'done-07')).toBe(0);
      expect(JSON.parse((await redis.admin.hget(store.indexKey, 'done-07'))!).status).toBe('completed');

      // A poll reads the open entries by id: no HGETALL of the index, no EXISTS per registered id.
      // monitor() opens a connection of its own (a duplicate() before it would be a client nobody closes).
      const monitor = await redis.admin.monitor();
      const seen: string[] = [];
      monitor.on('monitor', (_time: unknown, args: string[]) => seen.push(String(args[0]).toLowerCase()));
      await listOpenInvocations(store);
      await settle(store);
      await new Promise((resolve) => setTimeout(resolve, 50));
      monitor.disconnect();
      expect(seen).toContain('smembers');
      expect(seen).not.toContain('hgetall');
      expect(seen.filter((c) => c === 'exists')).toHaveLength(0);
      await store.close();
    });
  });

  describe('durability', () => {
    test('the test server (AOF, fsync always, noeviction) passes; open() connects', async () => {
      expect(await checkRedisDurability(redis.admin)).toEqual({ ok: true });
      const store = await RedisStore.open({ redis: redis.url, prefix: freshPrefix() });
      expect(await store.length('nothing')).toBe(0);
      await store.close();
    });

    test('refuses a server without the append-only file, naming the settings to change', async () => {
      const bare = await startRedis({ aof: false });
      try {
        const err = await RedisStore.open({ redis: bare.url }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RedisDurabilityError);
        expect((err as RedisDurabilityError).code).toBe('store.durability');
        expect((err as RedisDurabilityError).failureClass).toBe('permanent');
        const message = (err as Error).message;
        expect(message).toContain(`Redis at redis://127.0.0.1:${bare.port}/0 may lose acknowledged journal records`);
        expect(message).toContain('appendonly is no: an acknowledged append is lost when Redis restarts; set appendonly yes');
        expect(message).toContain('appendfsync is everysec: up to a second of acknowledged appends is lost on a crash; set appendfsync always');
        expect(message).toContain("or pass durability: 'relaxed' (--redis-durability relaxed) to accept the risk");
        expect(message).not.toContain('maxmemory-policy');
      } finally {
        await bare.stop();
      }
    });

    test('refuses a server that may evict keys', async () => {
      const lru = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
      try {
        const err = await RedisStore.open({ redis: lru.url, durability: 'strict' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RedisDurabilityError);
        expect((err as RedisDurabilityError).problems).toEqual(['maxmemory-policy is allkeys-lru: journals may be evicted; set maxmemory-policy noeviction']);
      } finally {
        await lru.stop();
      }
    });

    test('a server whose CONFIG cannot be read is not ok', async () => {
      const locked = await startRedis({ args: ['--rename-command', 'CONFIG', ''] });
      const client = new Redis(locked.url);
      try {
        const verdict = await checkRedisDurability(client);
        expect(verdict.ok).toBe(false);
        expect(!verdict.ok && verdict.problems).toEqual([expect.stringMatching(/^cannot read the server's settings \(CONFIG is disabled\?\)/)]);
        await expect(RedisStore.open({ redis: locked.url })).rejects.toThrow(/cannot read the server's settings \(CONFIG is disabled\?\)/);
      } finally {
        await client.quit();
        await locked.stop();
      }
    });

    test("durability: 'relaxed' accepts the risk and warns once", async () => {
      const bare = await startRedis({ aof: false });
      try {
        const warn = vi.fn();
        const store = await RedisStore.open({ redis: bare.url, durability: 'relaxed', warn });
        expect(warn).toHaveBeenCalledTimes(1);
        expect(warn.mock.calls[0]![0]).toMatch(/may lose acknowledged journal records \(durability: 'relaxed' accepts the risk\): appendonly is no: .*set appendonly yes/);
        const lease = await store.acquire('relaxed', { writer: 'w', ttlMs: 60_000 });
        await store.append(lease, 0, chain('relaxed', 2));
        expect(await store.length('relaxed')).toBe(2);
        expect(warn).toHaveBeenCalledTimes(1);
        await store.close();
        await expect(RedisStore.open({ redis: bare.url, durability: 'lax' as 'relaxed' })).rejects.toThrow(TypeError);
      } finally {
        await bare.stop();
      }
    });
  });

  test('after SIGKILL of redis-server and a restart, every acknowledged append is still there (AOF, fsync always)', async () => {
    const crashing = await startRedis();
    try {
      const store = new RedisStore({ redis: crashing.url, prefix: 'crash' });
      const lease = await store.acquire('kept', { writer: 'w', ttlMs: 600_000 });
      const records = chain('kept', 400);
      let acked = 0;
      let stop = false;
      const appending = (async () => {
        for (let seq = 0; seq < records.length && !stop; seq++) {
          await store.append(lease, seq, [records[seq]!]);
          acked = seq + 1;
        }
      })();
      while (acked < 100) await new Promise((r) => setTimeout(r, 1));
      stop = true; // the append in flight now is the last one
      await crashing.kill();
      const ackedAtKill = acked; // every acknowledgement received before the server died

      await crashing.restart();
      const after = new RedisStore({ redis: crashing.url, prefix: 'crash' });
      const length = await after.length('kept');
      expect(length).toBeGreaterThanOrEqual(ackedAtKill);
      expect(length).toBeLessThanOrEqual(ackedAtKill + 1); // at most the one in flight, not acknowledged yet
      expect(await after.read('kept')).toEqual(records.slice(0, length) as JournalRecord[]);
      expect(await after.list()).toEqual(['kept']);

      // The crashed handle reconnects and resends the append whose reply was lost: it lands exactly once.
      await appending;
      expect(await after.length('kept')).toBe(acked);
      expect(await after.read('kept')).toEqual(records.slice(0, acked) as JournalRecord[]);
      // The lease survived too: the old token still writes (it has not expired), a new writer is refused.
      await expect(after.acquire('kept', { writer: 'other', ttlMs: 1_000 })).rejects.toThrow(LeaseHeldError);
      await after.append(lease, acked, records.slice(acked, acked + 1));
      expect(await after.length('kept')).toBe(acked + 1);
      await Promise.all([after.close(), store.close()]);
    } finally {
      await crashing.stop();
    }
  });

  test('a script the client resends after a lost reply takes effect once: acquire and append are acknowledged, not refused', async () => {
    const client = new Redis(redis.url);
    // Every script runs twice, as it would when ioredis resends a command whose reply was lost.
    const resending = new Proxy(client, {
      get(target, key) {
        if (key === 'evalsha') {
          return async (...args: Parameters<Redis['evalsha']>) => {
            await target.evalsha(...args);
            return target.evalsha(...args);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const store = new RedisStore({ redis: resending, prefix: freshPrefix() });
    const lease = await store.acquire('twice', { writer: 'w', ttlMs: 60_000 });
    expect(lease.token).toBe(1);
    const records = chain('twice', 5);
    await store.append(lease, 0, records.slice(0, 2));
    await store.append(lease, 2, records.slice(2));
    expect(await store.read('twice')).toEqual(records);
    await store.putSnapshot(lease, { seq: 5, hash: records[4]!.hash, data: {} });
    expect((await store.renew(lease, 60_000)).token).toBe(1);
    await store.release(lease);
    // A different call is still refused.
    const other = new RedisStore({ redis: redis.url, prefix: store.prefix });
    const b = await other.acquire('twice', { writer: 'b', ttlMs: 60_000 });
    await expect(other.acquire('twice', { writer: 'c', ttlMs: 60_000 })).rejects.toThrow(LeaseHeldError);
    await expect(other.append(b, 4, chain(records[3]!, 1))).rejects.toThrow(SeqConflictError);
    await Promise.all([store.close(), other.close()]);
    await client.quit();
  });
});
