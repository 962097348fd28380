/**
 * `npm run bench -- redis [--steps N] [--reps R] [--url redis://…]` — the Redis store under the
 * runtime, each figure beside a baseline from the same run on the same server:
 *
 *   1. per-step latency (p50/p99) of a no-op world-effect step (bench/noop-app.ts, in-process
 *      dispatcher) with a RedisStore, beside the raw round trips one step needs: the store's own
 *      append script (EVALSHA) run directly, once per record the runtime appends per step (counted
 *      from the real run's journal), with the real run's record lines, each awaited before the
 *      next. Goal: step ≤ 1.5× raw. A step is timed from one step.completed record to the next.
 *   2. per-step cost late in one long invocation (mean of steps 1,001–1,019) vs early (steps
 *      1–19). Goal: ≤ 1.1×.
 *   3. bytes in Redis per hibernated invocation (hibernated at its first epoch boundary) beyond
 *      its journal: MEMORY USAGE … SAMPLES 0 of its snapshot, lease and status keys plus what its
 *      entries in the shared index / registry / open set cost, beside the journal list's.
 *      Goal: ≤ 4 KB. Every key under the invocation's prefix is listed with its payload bytes.
 *
 * To say where a step's time goes, the same run also times the raw appends plus the store's
 * index merges (redis-index.ts), a JournalWriter appending the same records through a RedisStore,
 * the app on a MemoryStore, the time spent inside store.append(), the server's commands per step
 * (INFO commandstats) and the CPU of node and redis-server per step.
 *
 * Without --url it starts a private `redis-server --save '' --appendonly yes --appendfsync always`
 * in a temp dir (stopped at the end); with --url it uses that server under a fresh key prefix and
 * deletes its keys afterwards. Either way the server's AOF settings are printed (CONFIG GET).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { signingKeyFromSecret } from '../journal/seal.js';
import type { JournalRecord } from '../journal/records.js';
import { MemoryStore } from '../stores/memory.js';
import { RedisStore } from '../stores/redis.js';
import { appendPatch, mergeScript } from '../stores/redis-index.js';
import { scripts } from '../stores/redis-scripts.js';
import { JournalWriter } from '../journal/writer.js';
import { createRuntime, type InvocationHandle, type Runtime } from '../runtime/index.js';
import { BENCH_INTENT, noopActuators, noopLibrary, noopModel } from './noop-app.js';
import { aofSettings, serverCpuMs } from './redis-info.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
const ASOF = '2026-01-01T00:00:00Z';
const WINDOW = 19;

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const us = (ms: number) => `${fmt(ms * 1000)} µs`;
const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const loadLine = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

function runtimeOver(store: RedisStore | MemoryStore, steps: number): Runtime {
  return createRuntime({ store, libraries: [noopLibrary], actuators: noopActuators(steps), observe: 'bench.observe', model: noopModel(), signingKey: key, limits: { maxNodes: 10_000_000, maxDepth: 1_000_000 } });
}

/** INFO commandstats as { command: calls } and { command: usec }. */
async function commandStats(client: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const text = await client.info('commandstats');
  const out = new Map<string, { calls: number; usec: number }>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}


/** A RedisStore that adds up the wall time its callers wait in append() (call to settlement). */
class TimedRedisStore extends RedisStore {
  appendMs = 0;
  appends = 0;
  override async append(...args: Parameters<RedisStore['append']>): Promise<void> {
    const t0 = performance.now();
    try {
      await super.append(...args);
    } finally {
      this.appendMs += performance.now() - t0;
      this.appends++;
    }
  }
}

interface WeftRun {
  id: string;
  /** Per-step durations (ms): step i = step.completed(i) − step.completed(i−1); step 0 from epoch.certified. */
  stepMs: number[];
  /** The journal's record lines, as stored. */
  lines: string[];
  records: JournalRecord[];
  /** Server commands during the run (delta of INFO commandstats). */
  commands: Map<string, { calls: number; usec: number }>;
  /** Node process CPU (ms) and redis-server CPU (ms) during the run. */
  clientCpuMs: number;
  serverCpuMs: number;
  wallMs: number;
  /** Wall time (ms) inside store.append() over the whole run, and how many calls. */
  appendMs: number;
  appends: number;
}

/**
 * Times a run's steps as its records are chained: each step.completed after the one before (the
 * first after epoch.certified). `times(n)` checks that n steps completed.
 */
function stepClock(handle: InvocationHandle): { times(expected: number): number[] } {
  let certified = 0;
  const completed: number[] = [];
  handle.on('record', (record: JournalRecord) => {
    if (record.kind === 'step.completed') completed.push(performance.now());
    else if (record.kind === 'epoch.certified') certified = performance.now();
  });
  return {
    times(expected) {
      if (completed.length !== expected || !certified) throw new Error(`saw ${completed.length} step.completed records of ${expected}`);
      return completed.map((t, i) => t - (i === 0 ? certified : completed[i - 1]!));
    },
  };
}

/** One invocation of `steps` no-op steps through the runtime with a RedisStore under `prefix`. */
async function weftRun(url: string, client: Redis, prefix: string, steps: number, seed: string): Promise<WeftRun> {
  const store = new TimedRedisStore({ redis: url, prefix });
  try {
    await (await store.connection()).ping(); // connect outside the timing
    const rt = runtimeOver(store, steps);
    const before = await commandStats(client);
    const cpuBefore = await serverCpuMs(client);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const handle = await rt.start(BENCH_INTENT, { tenant: 'bench', seed, asOf: ASOF });
    const clock = stepClock(handle);
    const result = await handle.done;
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cpuAfter = await serverCpuMs(client);
    const after = await commandStats(client);
    if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
    const stepMs = clock.times(steps);
    const commands = new Map<string, { calls: number; usec: number }>();
    for (const [name, a] of after) {
      const b = before.get(name) ?? { calls: 0, usec: 0 };
      if (a.calls > b.calls) commands.set(name, { calls: a.calls - b.calls, usec: a.usec - b.usec });
    }
    const lines = await client.lrange(store.keys(result.id).journal, 0, -1);
    return { id: result.id, stepMs, lines, records: lines.map((l) => JSON.parse(l) as JournalRecord), commands, clientCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs: cpuAfter - cpuBefore, wallMs, appendMs: store.appendMs, appends: store.appends };
  } finally {
    await store.close();
  }
}

/**
 * The journal of a real run cut into what the runtime appends: `head` (records before the first
 * step), then per step the records from the one after the previous step.completed up to this
 * step's step.completed — each of which the runtime appended by itself (one script call each).
 */
function stepGroups(run: WeftRun): { head: string[]; steps: string[][] } {
  const firstStep = run.records.findIndex((r) => r.kind === 'step.dispatched');
  const head = run.lines.slice(0, firstStep);
  const steps: string[][] = [];
  let current: string[] = [];
  for (let i = firstStep; i < run.records.length; i++) {
    current.push(run.lines[i]!);
    if (run.records[i]!.kind === 'step.completed') {
      steps.push(current);
      current = [];
    }
  }
  return { head, steps };
}

/**
 * The raw baseline: the same record lines appended to a fresh journal on the same server by the
 * store's append script (EVALSHA, NOSCRIPT → EVAL), one script call per record, each awaited before
 * the next — exactly the round trips the runtime makes per step, without the runtime.
 */
async function rawRun(client: Redis, prefix: string, run: WeftRun, tag: string, withIndex = false): Promise<{ stepMs: number[]; clientCpuMs: number }> {
  const { head, steps } = stepGroups(run);
  const keyStore = new RedisStore({ redis: client, prefix });
  const keys = keyStore.keys(`raw-${tag}-${randomUUID().slice(0, 8)}`);
  const now = Date.now();
  const acquired = await scripts.acquire.run(client, [keys.lease], ['bench-raw', String(now), String(now + 3_600_000), randomUUID()]);
  if (acquired[0] !== 1) throw new Error(`raw acquire refused: ${JSON.stringify(acquired)}`);
  const token = String(acquired[1]);
  const hashOf = (line: string) => (JSON.parse(line) as { hash: string }).hash;
  const headReply = await scripts.append.run(client, [keys.lease, keys.journal], [token, '0', 'ok', '', randomUUID(), ...head]);
  if (headReply[0] !== 1) throw new Error(`raw append refused: ${JSON.stringify(headReply)}`);
  // Everything each call sends is prepared before the clock starts.
  let seq = head.length;
  let prev = hashOf(head[head.length - 1]!);
  const id = keys.journal;
  const prepared = steps.map((group) =>
    group.map((line) => {
      const args = [token, String(seq), 'ok', prev, randomUUID(), line];
      seq++;
      prev = hashOf(line);
      // withIndex: the store's index merge after each append (redis-index.ts), sent and not awaited.
      return { args, patch: withIndex ? [id, JSON.stringify(appendPatch([JSON.parse(line) as JournalRecord], now))] : undefined };
    }),
  );
  const lanes = [keys.lease, keys.journal];
  const indexLanes = [keyStore.indexKey, keyStore.openKey];
  const out: number[] = [];
  const cpu0 = process.cpuUsage();
  for (const group of prepared) {
    const t0 = performance.now();
    for (const { args, patch } of group) {
      const reply = await scripts.append.run(client, lanes, args);
      if (reply[0] !== 1) throw new Error(`raw append refused: ${JSON.stringify(reply)}`);
      if (patch) mergeScript.run(client, indexLanes, patch).catch(() => undefined);
    }
    out.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  return { stepMs: out, clientCpuMs: (cpu.user + cpu.system) / 1000 };
}

/**
 * The store's whole client path without the runtime: a JournalWriter over a RedisStore appending
 * the real run's step records (kind, epoch, body) one at a time, as the recorder does — hash
 * chaining, encoding, the store's checks, the append script and its index merge.
 */
async function writerRun(url: string, prefix: string, run: WeftRun, tag: string): Promise<{ stepMs: number[]; clientCpuMs: number }> {
  const store = new RedisStore({ redis: url, prefix });
  try {
    await (await store.connection()).ping();
    const pinned = run.records[0] as JournalRecord<'invocation.pinned'>;
    const firstStep = run.records.findIndex((r) => r.kind === 'step.dispatched');
    const writer = await JournalWriter.create(store, { invocation: `wr-${tag}-${randomUUID().slice(0, 8)}`, tenant: pinned.body.tenant, intent: pinned.body.intent, pin: pinned.body.pin }, { writer: 'bench', now: () => new Date() });
    const draft = (r: JournalRecord) => ({ kind: r.kind, epoch: r.epoch, body: r.body });
    await writer.appendAll(run.records.slice(1, firstStep).map(draft));
    const groups: JournalRecord[][] = [];
    let current: JournalRecord[] = [];
    for (const r of run.records.slice(firstStep)) {
      current.push(r);
      if (r.kind === 'step.completed') {
        groups.push(current);
        current = [];
      }
    }
    const out: number[] = [];
    const cpu0 = process.cpuUsage();
    for (const group of groups) {
      const t0 = performance.now();
      for (const r of group) await writer.append(draft(r));
      out.push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);
    await writer.close();
    return { stepMs: out, clientCpuMs: (cpu.user + cpu.system) / 1000 };
  } finally {
    await store.close();
  }
}

/** The same app on a MemoryStore: the runtime's own per-step time, no Redis at all. */
async function memoryStepMs(steps: number, seed: string): Promise<{ stepMs: number[]; clientCpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const handle = await runtimeOver(new MemoryStore(), steps).start(BENCH_INTENT, { tenant: 'bench', seed, asOf: ASOF });
  const clock = stepClock(handle);
  const result = await handle.done;
  const cpu = process.cpuUsage(cpu0);
  if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
  return { stepMs: clock.times(steps), clientCpuMs: (cpu.user + cpu.system) / 1000 };
}

interface KeyBytes {
  role: string;
  key: string;
  type: string;
  /** MEMORY USAGE key SAMPLES 0 (the whole value, with Redis's key and object overhead). */
  memory: number;
  /** Payload: STRLEN, Σ HGETALL field+value bytes, Σ LRANGE element bytes, Σ ZRANGE member bytes. */
  payload: number;
}

async function keyBytes(client: Redis, key: string, role: string): Promise<KeyBytes> {
  const type = await client.type(key);
  const memory = Number((await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  let payload = 0;
  if (type === 'string') payload = await client.strlen(key);
  else if (type === 'hash') for (const [f, v] of Object.entries(await client.hgetall(key))) payload += Buffer.byteLength(f) + Buffer.byteLength(v);
  else if (type === 'list') for (const v of await client.lrangeBuffer(key, '0', '-1')) payload += v.length;
  else if (type === 'zset') for (const m of await client.zrange(key, '0', '-1')) payload += Buffer.byteLength(m);
  return { role, key, type, memory, payload };
}

async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', '1000');
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

/**
 * What one more entry like `id`'s costs in a shared index HASH or registry ZSET holding many: a
 * scratch key filled with 1,000 then 2,000 entries of the same sizes, (MEMORY USAGE at 2,000 −
 * at 1,000) / 1,000 — the key's own overhead cancels out; the hash table's growth is included.
 */
async function entryBytes(client: Redis, type: 'hash' | 'zset' | 'set', source: string, id: string, scratch: string): Promise<number> {
  const value = type === 'hash' ? await client.hget(source, id) : null;
  if (type === 'hash' && value === null) return 0;
  const name = (k: number) => `${id.slice(0, Math.max(0, id.length - 7))}-${String(k).padStart(6, '0')}`;
  const fill = async (from: number, to: number) => {
    const pipeline = client.pipeline();
    for (let k = from; k < to; k++) {
      if (type === 'hash') pipeline.hset(scratch, name(k), value!);
      else if (type === 'zset') pipeline.zadd(scratch, '0', name(k));
      else pipeline.sadd(scratch, name(k));
    }
    await pipeline.exec();
  };
  const usage = async () => Number(await client.call('MEMORY', 'USAGE', scratch, 'SAMPLES', '0'));
  try {
    await fill(0, 1000);
    const at1000 = await usage();
    await fill(1000, 2000);
    return (await usage() - at1000) / 1000;
  } finally {
    await client.del(scratch);
  }
}

/** Hibernate an invocation of `steps` steps at its first epoch boundary, alone under `prefix`, and weigh its keys. */
async function hibernatedBytes(url: string, client: Redis, prefix: string, steps: number) {
  const store = new RedisStore({ redis: url, prefix });
  try {
    const handle = await runtimeOver(store, steps).start(BENCH_INTENT, { tenant: 'bench', seed: `hibernate-${steps}`, asOf: ASOF });
    handle.hibernate();
    const result = await handle.done;
    if (result.status !== 'hibernated') throw new Error(`expected a hibernated invocation, got ${result.status}: ${result.reason}`);
    const keys = store.keys(result.id);
    const roles = new Map<string, string>([
      [keys.journal, 'journal'],
      [keys.snapshot, 'snapshot'],
      [keys.lease, 'lease'],
      [keys.status, 'status'],
      [store.registryKey, 'registry'],
      [store.indexKey, 'index'],
      [store.openKey, 'open'],
    ]);
    const all = await scanKeys(client, `${prefix}:*`);
    const weighed: KeyBytes[] = [];
    for (const k of all) weighed.push(await keyBytes(client, k, roles.get(k) ?? (k.startsWith(`${prefix}:blob:`) ? 'blob' : 'other')));
    for (const [k, role] of roles) if (!all.includes(k)) weighed.push({ role, key: k, type: 'none', memory: 0, payload: 0 });
    const inIndex = await entryBytes(client, 'hash', store.indexKey, result.id, `${prefix}:scratch-index`);
    const inRegistry = (await client.zscore(store.registryKey, result.id)) === null ? 0 : await entryBytes(client, 'zset', store.registryKey, result.id, `${prefix}:scratch-registry`);
    const inOpenSet = (await client.sismember(store.openKey, result.id)) === 0 ? 0 : await entryBytes(client, 'set', store.openKey, result.id, `${prefix}:scratch-open`);
    const own = weighed.filter((k) => k.role === 'snapshot' || k.role === 'lease' || k.role === 'status').reduce((a, k) => a + k.memory, 0);
    return { id: result.id, records: result.records ?? 0, weighed, inIndex, inRegistry, inOpenSet, perInvocation: own + inIndex + inRegistry + inOpenSet };
  } finally {
    await store.close();
  }
}


export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { steps: { type: 'string' }, reps: { type: 'string' }, url: { type: 'string' } } });
  const steps = Number(values.steps ?? 1100);
  const reps = Number(values.reps ?? 5);
  if (!Number.isSafeInteger(steps) || steps < 2 * WINDOW + 2) throw new Error(`--steps must be an integer ≥ ${2 * WINDOW + 2}`);
  if (!Number.isSafeInteger(reps) || reps < 1) throw new Error('--reps must be a positive integer');
  const suiteStart = performance.now();
  const loadStart = loadLine();

  let server: PrivateRedis | undefined;
  if (!values.url) server = await startPrivateRedis({ orElse: 'pass --url redis://…' });
  const url = values.url ?? server!.url;
  const client = new Redis(url, { lazyConnect: true });
  client.on('error', () => undefined);
  const prefix = `weft-bench-${process.pid}-${Date.now().toString(36)}`;
  const out: string[] = [];
  try {
    await client.connect();
    out.push(`redis: ${server ? `private ${server.args.join(' ')}` : `given ${url.replace(/\/\/[^@]*@/, '//…@')}`}`);
    out.push(`       ${await aofSettings(client)}`);
    out.push(`load at start: ${loadStart}`);

    // Warm-up (JIT, script cache, connections): a short invocation and its raw appends, not reported.
    const warm = await weftRun(url, client, `${prefix}-warm`, Math.min(steps, 200), 'warm');
    await rawRun(client, `${prefix}-warm`, warm, 'warm');
    await rawRun(client, `${prefix}-warm`, warm, 'warm', true);
    await memoryStepMs(Math.min(steps, 200), 'warm');
    await writerRun(url, `${prefix}-warm`, warm, 'warm');

    // 1 + 2: R long invocations, each beside the raw appends of its own journal (and, for the
    // diagnosis, the same appends plus the store's index merges, the same records through a
    // JournalWriter over a RedisStore, and the app on a MemoryStore);
    // the order rotates per rep so that none always runs on another's leftovers.
    const runs: WeftRun[] = [];
    const raws: Array<{ stepMs: number[]; clientCpuMs: number }> = [];
    const rawIdxRuns: Array<{ stepMs: number[]; clientCpuMs: number }> = [];
    const memRuns: Array<{ stepMs: number[]; clientCpuMs: number }> = [];
    const writerRuns: Array<{ stepMs: number[]; clientCpuMs: number }> = [];
    for (let r = 0; r < reps; r++) {
      const w = await weftRun(url, client, prefix, steps, `run-${r}`);
      runs.push(w);
      const others = [
        async () => raws.push(await rawRun(client, prefix, w, `plain-${r}`)),
        async () => rawIdxRuns.push(await rawRun(client, prefix, w, `index-${r}`, true)),
        async () => memRuns.push(await memoryStepMs(steps, `mem-${r}`)),
        async () => writerRuns.push(await writerRun(url, prefix, w, String(r))),
      ];
      for (let i = 0; i < others.length; i++) await others[(i + r) % others.length]!();
    }
    const weftSteps = runs.map((w) => w.stepMs);
    const rawIdx = rawIdxRuns.map((x) => x.stepMs);
    const mem = memRuns.map((x) => x.stepMs);
    const wr = writerRuns.map((x) => x.stepMs);
    const cpuPerStep = (xs: Array<{ clientCpuMs: number }>) => us(mean(xs.map((x) => x.clientCpuMs)) / steps);
    const rawSteps = raws.map((x) => x.stepMs);
    const recordsPerStep = stepGroups(runs[0]!).steps.map((g) => g.length);
    const perStep = recordsPerStep.every((n) => n === recordsPerStep[0]) ? String(recordsPerStep[0]) : `${fmt(mean(recordsPerStep), 2)} (varies)`;
    const weftAll = weftSteps.flat();
    const rawAll = rawSteps.flat();
    const w50 = quantile(weftAll, 0.5);
    const w99 = quantile(weftAll, 0.99);
    const r50 = quantile(rawAll, 0.5);
    const r99 = quantile(rawAll, 0.99);
    const i50 = quantile(rawIdx.flat(), 0.5);
    const i99 = quantile(rawIdx.flat(), 0.99);
    const m50 = quantile(mem.flat(), 0.5);
    const m99 = quantile(mem.flat(), 0.99);

    const early = (xs: number[]) => xs.slice(1, 1 + WINDOW);
    const lateFrom = Math.min(1001, steps - WINDOW);
    const late = (xs: number[]) => xs.slice(lateFrom, lateFrom + WINDOW);
    const wEarly = weftSteps.flatMap(early);
    const wLate = weftSteps.flatMap(late);
    const rEarly = rawSteps.flatMap(early);
    const rLate = rawSteps.flatMap(late);
    const mEarly = mem.flatMap(early);
    const mLate = mem.flatMap(late);

    // 3: hibernated invocations, each alone under its own prefix.
    const hibSmall = await hibernatedBytes(url, client, `${prefix}-hib10`, 10);
    const hibLarge = await hibernatedBytes(url, client, `${prefix}-hib${steps}`, steps);
    const beyond = (h: typeof hibSmall) => h.weighed.filter((k) => k.role !== 'journal' && k.role !== 'blob');
    const sum = (ks: KeyBytes[], f: 'memory' | 'payload') => ks.reduce((a, k) => a + k[f], 0);
    const journalOf = (h: typeof hibSmall) => h.weighed.filter((k) => k.role === 'journal');

    // ── the table ──
    const verdict = (ratio: number, goal: number) => (ratio <= goal ? 'met' : 'MISSED');
    const rows: string[][] = [['figure', 'weft', 'baseline (same run, same server)', 'ratio', 'goal', '']];
    rows.push([`1. step latency p50 (${reps} × ${fmt(steps)} steps)`, us(w50), `${us(r50)}  ${perStep} raw EVALSHA appends`, `${fmt(w50 / r50, 2)}×`, '≤ 1.5×', verdict(w50 / r50, 1.5)]);
    rows.push(['   step latency p99', us(w99), `${us(r99)}  ${perStep} raw EVALSHA appends`, `${fmt(w99 / r99, 2)}×`, '≤ 1.5×', verdict(w99 / r99, 1.5)]);
    rows.push([`2. step cost, mean of steps ${lateFrom}–${lateFrom + WINDOW - 1}`, us(mean(wLate)), `${us(mean(wEarly))}  steps 1–${WINDOW}`, `${fmt(mean(wLate) / mean(wEarly), 2)}×`, '≤ 1.1×', verdict(mean(wLate) / mean(wEarly), 1.1)]);
    for (const [i, h] of [hibSmall, hibLarge].entries()) {
      const extra = h.perInvocation;
      const j = sum(journalOf(h), 'memory');
      rows.push([`3. hibernated, ${i === 0 ? '10' : fmt(steps)}-step epoch: beyond journal`, `${fmt(extra)} B`, `${fmt(j)} B  journal (${fmt(h.records)} records)`, `${fmt((extra / Math.max(1, j)) * 100, 1)} %`, '≤ 4,096 B', verdict(extra, 4096)]);
    }
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
    out.push('');
    for (const [i, row] of rows.entries()) {
      out.push(`  ${row.map((cell, c) => (c === 0 || c === 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd()}`);
      if (i === 0) out.push(`  ${widths.map((w) => '─'.repeat(w)).join('  ')}`);
    }

    // ── where the time goes ──
    out.push('');
    out.push(`where a step's time goes (p50 / p99 per step, same run; ${perStep} records appended per step, each its own awaited EVALSHA):`);
    out.push(`  weft, RedisStore                                  ${us(w50).padStart(9)} / ${us(w99).padStart(9)}`);
    out.push(`  raw appends (the baseline)                        ${us(r50).padStart(9)} / ${us(r99).padStart(9)}`);
    out.push(`  raw appends + the store's index merge after each  ${us(i50).padStart(9)} / ${us(i99).padStart(9)}   (what an index merge after every append would cost; the store now merges only at status changes and epoch boundaries)`);
    out.push(`  JournalWriter → RedisStore, same records          ${us(quantile(wr.flat(), 0.5)).padStart(9)} / ${us(quantile(wr.flat(), 0.99)).padStart(9)}   (the store's whole client path: chaining, encoding, checks, script, index merge)`);
    out.push(`  the same app on a MemoryStore (no Redis)          ${us(m50).padStart(9)} / ${us(m99).padStart(9)}   (the runtime's own work: XState, planning, hashing, dispatch)`);
    const appendPerStep = mean(runs.map((r) => r.appendMs)) / steps;
    const stepMean = mean(runs.map((r) => mean(r.stepMs)));
    out.push(`  weft, mean per step ${us(stepMean)}: ${us(appendPerStep)} waiting in store.append() (${fmt(runs[0]!.appends / steps, 2)} calls/step; raw appends + index mean ${us(mean(rawIdx.flat()))}), ${us(stepMean - appendPerStep)} outside it (MemoryStore step mean ${us(mean(mem.flat()))})`);
    const totalSteps = steps * runs.length;
    const merged = new Map<string, { calls: number; usec: number }>();
    for (const run of runs) for (const [name, c] of run.commands) merged.set(name, { calls: (merged.get(name)?.calls ?? 0) + c.calls, usec: (merged.get(name)?.usec ?? 0) + c.usec });
    const cmds = [...merged].filter(([name]) => name !== 'info').sort((a, b) => b[1].calls - a[1].calls).map(([name, c]) => `${name} ${fmt(c.calls / totalSteps, 2)}`);
    out.push(`  server commands per step during the weft runs (incl. those inside scripts; per-invocation ones amortized over ${fmt(steps)} steps): ${cmds.join(', ')}`);
    const evalsha = merged.get('evalsha');
    if (evalsha) out.push(`  server time per EVALSHA ${fmt(evalsha.usec / evalsha.calls, 1)} µs (commandstats; excludes the AOF fsync, done before replies are sent)`);
    out.push(
      `  CPU per step: node ${cpuPerStep(runs)} (raw appends ${cpuPerStep(raws)}, raw + index ${cpuPerStep(rawIdxRuns)}, writer → store ${cpuPerStep(writerRuns)}, MemoryStore ${cpuPerStep(memRuns)}), redis-server ${us(mean(runs.map((r) => r.serverCpuMs)) / steps)}; wall ${us(mean(runs.map((r) => r.wallMs)) / steps)} (whole invocation / steps); ${os.cpus().length} vCPUs shared by node and redis-server`,
    );
    out.push(`  step cost early → late (means, steps 1–${WINDOW} → ${lateFrom}–${lateFrom + WINDOW - 1}): weft ${us(mean(wEarly))} → ${us(mean(wLate))} (medians ${us(quantile(wEarly, 0.5))} → ${us(quantile(wLate, 0.5))}); raw appends ${us(mean(rEarly))} → ${us(mean(rLate))}; MemoryStore ${us(mean(mEarly))} → ${us(mean(mLate))}`);
    out.push('');
    for (const h of [hibSmall, hibLarge]) {
      out.push(`hibernated invocation ${h.id} (${fmt(h.records)} records), MEMORY USAGE … SAMPLES 0 [payload: STRLEN / Σ HGETALL field+value / Σ LRANGE / Σ ZRANGE member bytes]:`);
      for (const k of h.weighed) out.push(`  ${k.role.padEnd(9)} ${k.type.padEnd(6)} ${fmt(k.memory).padStart(9)} B  [payload ${fmt(k.payload).padStart(9)} B]  ${k.key}`);
      out.push(`  per invocation beyond the journal: snapshot + lease + status keys + one entry in a shared index (${fmt(h.inIndex)} B), registry (${fmt(h.inRegistry)} B) and open set (${fmt(h.inOpenSet)} B) = ${fmt(h.perInvocation)} B`);
      out.push(`    (an entry's cost measured in a 1,000–2,000-entry scratch copy; alone, with their keys' own overhead, index + registry + open set weigh ${fmt(sum(h.weighed.filter((k) => k.role === 'index' || k.role === 'registry' || k.role === 'open'), 'memory'))} B → ${fmt(sum(beyond(h), 'memory'))} B in all [payload ${fmt(sum(beyond(h), 'payload'))} B]; the blobs are the pinned library and the signing public key, shared by every invocation using them)`);
    }
    out.push('');
    out.push(`load at end: ${loadLine()}; suite took ${fmt((performance.now() - suiteStart) / 1000, 1)} s`);
  } finally {
    if (!server) {
      // A given server: remove everything this run wrote under its prefixes.
      try {
        const mine = await scanKeys(client, `${prefix}*`);
        for (let i = 0; i < mine.length; i += 500) await client.unlink(...mine.slice(i, i + 500));
      } catch {
        /* best effort */
      }
    }
    client.disconnect();
    await server?.stop();
  }
  process.stdout.write(out.join('\n') + '\n');
}
