/**
 * A store full of ended invocations, made cheaply and truthfully. One invocation is run by the real
 * runtime (the no-op app, one step) over a MemoryStore; every other one is that journal under its
 * own id — the id replaced in every record, the tenant set, the chain re-linked from the new
 * genesis and the seal signed again — so each journal is intact and names its own folder (a run of
 * the runtime costs ~20 ms here, a re-link well under one). Each journal is then appended to the
 * target store in one append under a lease, as a runtime's appends reach it (so a file store keeps
 * its summary and a Redis store its status index, exactly as after a real run). For
 * `npm run bench -- inspect-list` and the listing tests.
 */
import { chainRecord, genesisHash } from '../journal/chain.js';
import { signFingerprint, signingKeyFromSecret } from '../journal/seal.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { MemoryStore } from '../stores/memory.js';
import { appendPatch } from '../stores/redis-index.js';
import type { RedisStore } from '../stores/redis.js';
import { recordLine } from '../journal/encode.js';
import { createRuntime } from '../runtime/index.js';
import { BENCH_INTENT, noopActuators, noopLibrary, noopModel } from './noop-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(11));

/** The journal of one completed invocation `id` of tenant `tenant` (the real runtime, in memory). */
export async function endedJournal(id: string, tenant: string): Promise<JournalRecord[]> {
  const store = new MemoryStore();
  const runtime = createRuntime({ store, libraries: [noopLibrary], actuators: noopActuators(1), observe: 'bench.observe', model: noopModel(), signingKey: key });
  const handle = await runtime.start(BENCH_INTENT, { id, tenant, seed: 1, asOf: '2026-01-01T00:00:00Z' });
  const result = await handle.done;
  if (result.status !== 'completed') throw new Error(`fixture invocation ${id} ended ${result.status}: ${result.reason}`);
  return store.read(id);
}

/** Append a whole journal to `store` under `id`, in one append, as its runtime would have. */
export async function putJournal(store: JournalStore, id: string, records: readonly JournalRecord[]): Promise<void> {
  const lease = await store.acquire(id, { writer: 'list-fixture', ttlMs: 60_000 });
  try {
    await store.append(lease, 0, records);
  } finally {
    await store.release(lease);
  }
}

/** The id the template journal is run under (`endedJournal(TEMPLATE_ID, …)` is what `relinked` takes). */
export const TEMPLATE_ID = 'list-template';

/** The template's journal, re-linked as invocation `id` of `tenant` (see the header), its envelope times moved `shiftMs` later (and its intent `intent`, when given). */
export function relinked(template: readonly JournalRecord[], id: string, tenant: string, shiftMs = 0, intent?: string): JournalRecord[] {
  const renamed = JSON.parse(JSON.stringify(template).split(JSON.stringify(TEMPLATE_ID).slice(1, -1)).join(id)) as JournalRecord[];
  const pinned = renamed[0] as JournalRecord<'invocation.pinned'>;
  pinned.body.tenant = tenant;
  if (intent !== undefined) pinned.body.intent = intent;
  let prev = genesisHash(id, pinned.body.pin);
  return renamed.map((record) => {
    const body = record.kind === 'invocation.sealed' ? { ...(record.body as object), fingerprint: prev, signature: signFingerprint(key, prev) } : record.body;
    const linked = chainRecord(prev, { seq: record.seq, kind: record.kind, epoch: record.epoch, body } as never) as JournalRecord;
    if (record.meta !== undefined) linked.meta = shiftMs === 0 || record.meta.at === undefined ? record.meta : { ...record.meta, at: new Date(Date.parse(record.meta.at) + shiftMs).toISOString() };
    prev = linked.hash;
    return linked;
  });
}

/** The key the fixture's journals are sealed with. */
export const fixtureSigningKey = key;

/**
 * Fill `stores` with `count` completed invocations (ids `list-000000`…, tenants `t0`…`t9`),
 * `concurrency` invocations at a time (their flushes overlap); `onProgress` every 1,000. With
 * `spreadMs`, invocation i's envelope times (unhashed) are (count − 1 − i) × spreadMs earlier than
 * the template's, so they started one after another, in id order, the last just now (the list's
 * newest-first order is then reversed id order).
 */
export async function fillEnded(stores: readonly JournalStore[], count: number, options: { concurrency?: number; onProgress?: (done: number) => void; spreadMs?: number } = {}): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `list-${String(i).padStart(6, '0')}`);
  const template = await endedJournal(TEMPLATE_ID, 't0');
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const records = relinked(template, ids[i]!, `t${i % 10}`, (i - (count - 1)) * (options.spreadMs ?? 0));
      for (const store of stores) await putJournal(store, ids[i]!, records);
      if (++done % 1_000 === 0) options.onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, lane));
  return ids;
}

/**
 * Fill a Redis store with `count` completed invocations as `fillEnded` does (the same intact,
 * re-linked journals, ids `<idPrefix>000000`…, tenants `t0`…`t9`, started `spreadMs` apart), but
 * written straight to its keys with pipelines — each journal's lines, its registry entry and its
 * status-index entry (the entry its one append would have merged: redis-index.ts appendPatch) —
 * instead of one lease, append and release each: 100,000 invocations in a minute or two, where
 * the store's own path takes most of an hour. For the list's figures at 100,000 (bench/inspect.ts).
 */
export async function fillEndedRedis(store: RedisStore, count: number, options: { spreadMs?: number; idPrefix?: string; onProgress?: (done: number) => void } = {}): Promise<string[]> {
  const prefix = options.idPrefix ?? 'list-';
  const ids = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(6, '0')}`);
  const template = await endedJournal(TEMPLATE_ID, 't0');
  const redis = await store.connection();
  const CHUNK = 500;
  for (let from = 0; from < count; from += CHUNK) {
    const pipeline = redis.pipeline();
    for (let i = from; i < Math.min(count, from + CHUNK); i++) {
      const id = ids[i]!;
      const records = relinked(template, id, `t${i % 10}`, (i - (count - 1)) * (options.spreadMs ?? 0));
      pipeline.zadd(store.registryKey, 'NX', '0', id);
      pipeline.rpush(store.keys(id).journal, ...records.map(recordLine));
      pipeline.hset(store.indexKey, id, JSON.stringify(appendPatch(records, Date.now())));
    }
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([err]) => err);
    if (failed) throw failed[0];
    options.onProgress?.(Math.min(count, from + CHUNK));
  }
  return ids;
}
