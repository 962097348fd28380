/**
 * `npm run bench -- inspect-list [--count N] [--reps R] [--concurrency C] [--url redis://…] [--no-redis]`
 * — the viewer's invocation list with N (default 10,000) ended invocations in the store, on the
 * file store and on Redis: the time `listInvocations` takes (what `weft ls` and the viewer's list
 * call), the time the viewer's `/api/invocations` takes from request to parsed JSON, and, beside
 * them as the baseline, the same file-store listing with the summaries removed (every journal
 * read, as before file-summary.ts). Issue 20's goal is page load to table shown ≤ 1 s; this
 * measures the server's share (the page's rendering is the viewer's own test). Times are medians
 * of R runs after a warm-up; the store is filled by bench/list-fixture.ts (intact journals, one
 * append each, as a runtime's reach the store). Only ratios travel: the machine line says where.
 */
import { mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { RedisStore } from '../stores/redis.js';
import { createInspectorServer } from '../inspector/server.js';
import { listInvocations } from '../runtime/list.js';
import { fillEnded } from './list-fixture.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : 0)} ms`;
const loadLine = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/** Median time (ms) of `reps` calls of `work` after one warm-up call, and the warm-up's answer. */
async function timed<T>(reps: number, work: () => Promise<T>): Promise<{ ms: number; first: T }> {
  const first = await work();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return { ms: median(times), first };
}

/** The viewer over `store`, listening on loopback; its `/api/invocations`, fetched and parsed. */
async function viewerList(store: JournalStore): Promise<{ fetchList: () => Promise<unknown[]>; close: () => Promise<void> }> {
  const server = createInspectorServer({ store, loopback: true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    fetchList: async () => {
      const res = await fetch(`http://127.0.0.1:${port}/api/invocations`);
      if (!res.ok) throw new Error(`/api/invocations answered ${res.status}`);
      return (await res.json()) as unknown[];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function measure(label: string, store: JournalStore, count: number, reps: number, out: string[]): Promise<number> {
  const listed = await timed(reps, () => listInvocations(store));
  if (listed.first.length !== count) throw new Error(`${label}: listed ${listed.first.length} invocations, filled ${count}`);
  const viewer = await viewerList(store);
  try {
    const api = await timed(reps, viewer.fetchList);
    if (api.first.length !== count) throw new Error(`${label}: /api/invocations gave ${api.first.length} rows, filled ${count}`);
    out.push(`${label.padEnd(34)} listInvocations ${ms(listed.ms).padStart(9)}   /api/invocations → JSON ${ms(api.ms).padStart(9)}`);
  } finally {
    await viewer.close();
  }
  return listed.ms;
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { count: { type: 'string' }, reps: { type: 'string' }, concurrency: { type: 'string' }, url: { type: 'string' }, 'no-redis': { type: 'boolean' } } });
  const count = Number(values.count ?? 10_000);
  const reps = Number(values.reps ?? 3);
  const concurrency = Number(values.concurrency ?? 16);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count must be a positive integer');
  if (!Number.isSafeInteger(reps) || reps < 1) throw new Error('--reps must be a positive integer');
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new Error('--concurrency must be a positive integer');
  const out: string[] = [`load at start: ${loadLine()}`, `invocations: ${count} ended (one step each, 14 records), medians of ${reps} after a warm-up`];
  const dir = mkdtempSync(join(os.tmpdir(), 'weft-bench-list-'));
  let server: PrivateRedis | undefined;
  let redis: RedisStore | undefined;
  try {
    const file = new FileStore(dir);
    const stores: JournalStore[] = [file];
    if (!values['no-redis']) {
      if (!values.url) server = await startPrivateRedis({ orElse: 'pass --url redis://…' });
      const url = values.url ?? server!.url;
      redis = new RedisStore({ redis: url, prefix: `weft-bench-list-${process.pid}` });
      stores.push(redis);
      out.push(`redis: ${server ? `private ${server.args.join(' ')}` : `given ${url.replace(/\/\/[^@]*@/, '//…@')}`}`);
    }
    const fillStart = performance.now();
    await fillEnded(stores, count, { concurrency, onProgress: (n) => process.stderr.write(`\rfilled ${n}/${count}`) });
    process.stderr.write('\n');
    out.push(`filled in ${((performance.now() - fillStart) / 1000).toFixed(1)} s (${stores.length === 1 ? 'file store' : 'file store and Redis'}, ${concurrency} at a time)`);

    const withSummaries = await measure('file store, summaries', file, count, reps, out);
    if (redis) await measure('redis, status index', redis, count, reps, out);
    // The baseline: the same file store with every summary gone, so each journal is read in full.
    for (const id of readdirSync(join(dir, 'invocations'))) unlinkSync(join(dir, 'invocations', id, 'summary.json'));
    const withoutSummaries = await measure('file store, no summaries (before)', new FileStore(dir), count, reps, out);
    out.push(`file store: summaries list ${(withoutSummaries / withSummaries).toFixed(1)}× faster than reading every journal`);
    out.push(`load at end: ${loadLine()}`);
  } finally {
    await redis?.close().catch(() => undefined);
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${out.join('\n')}\n`);
}
