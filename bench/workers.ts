/**
 * `npm run bench -- workers [--steps N] [--reps R] [--invocations N] [--epoch-steps N]
 * [--rounds N] [--worker-concurrency N] [--pairs N] [--url redis://…]` — the distributed mode (RedisStore +
 * BullMQ dispatcher, world effects on separate `weft worker` processes), each figure beside a raw
 * BullMQ baseline from the same run on the same server:
 *
 *   1. per-step latency (p50/p99) of one no-op world-effect step (bench/noop-app.ts's library as a
 *      domain, bench/workers-domain.ts) through `createRuntime({ redis, dispatch: 'bullmq' })` with
 *      ONE worker process (concurrency 1), timed from one step.completed record to the next within
 *      R epochs of N steps; beside a raw BullMQ round trip timed the same way (one completion to the
 *      next): `queue.add` of a job of the same shape, completion seen through a QueueEvents
 *      'completed' event, a raw Worker in its own process whose processor returns at once.
 *      Goal: p50 ≤ 1.5× raw.
 *   2. throughput (no-op steps/s) of `--invocations` concurrent invocations (default 64), each an
 *      epoch of `--epoch-steps` no-op steps (default 10), `--rounds` invocations per lane, on 2
 *      worker processes; beside raw BullMQ at the same concurrency (as many concurrent add→completed
 *      loops, the same number of jobs, 2 raw worker processes). Both kinds of worker run with
 *      `--worker-concurrency` (default 32) each. `--pairs` (default 7) weft/raw pairs of runs, each
 *      pair back to back; the figure is the median of the pairs' ratios. Goal: ≥ 50 % of raw.
 *   3. per-step cost late in one invocation (mean of steps 1,001–1,019) vs early (steps 1–19), from
 *      the runs of 1. Goal: ≤ 1.1×.
 *
 * To say where a step's time goes, the same run also times: the runtime with a timed RedisStore
 * and a timed BullMqDispatcher (time awaited in appends and in dispatch per step), the same app on
 * a MemoryStore with the in-process dispatcher (the runtime's own work), single round trips on the
 * same server (PING, a fsync'd INCR, BullMQ's job look-up, queue.add alone), the server's commands
 * per step (INFO commandstats) and the CPU of node, the workers and redis-server per step.
 *
 * Without --url it starts a private `redis-server --save '' --appendonly yes --appendfsync always`
 * (bench/redis-server.ts); with --url it uses that server under a fresh key prefix and deletes its
 * keys afterwards. The worker processes (bench/workers-child.ts) and the server are stopped at the
 * end, on error too; a worker whose parent dies exits when its stdin closes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Job as BullJob, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { JournalRecord } from '../journal/records.js';
import { signFingerprint, signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { RedisStore } from '../stores/redis.js';
import { BullMqDispatcher } from '../queue/bullmq.js';
import type { Dispatcher, Job, JobOutcome } from '../queue/dispatcher.js';
import { createRuntime, type Runtime } from '../runtime/index.js';
import { BENCH_INTENT } from './noop-app.js';
import { aofSettings, serverCpuMs } from './redis-info.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';
import { benchDomain, rawJobData, tenantFor } from './workers-domain.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
const ASOF = '2026-01-01T00:00:00Z';
const WINDOW = 19;
/** Throughput runs per side, alternated. */
/** Throughput runs: this many weft/raw pairs, each pair run back to back (order alternating). */
const THROUGHPUT_PAIRS = 7;
/** Timed diagnosis epochs, each followed by a raw run of as many round trips. */
const DIAG_RUNS = 3;
const LIMITS = { maxNodes: 10_000_000, maxDepth: 1_000_000 };
/** What the BullMqDispatcher gives its jobs: kept 7 days after they finish. */
const KEEP = { removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: { age: 7 * 24 * 3600 } };

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const us = (ms: number) => `${fmt(ms * 1000)} µs`;
const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const loadLine = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

// ── worker processes ────────────────────────────────────────────────────────────────────────────

export interface WorkerProcess {
  readonly pid: number;
  readonly label: string;
  /** Its own user + system CPU so far (µs), NaN if it does not answer. */
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

const CHILD_SCRIPT = fileURLToPath(new URL('./workers-child.js', import.meta.url));

export async function spawnWorker(mode: 'weft' | 'raw', url: string, bullPrefix: string, queue: string, concurrency: number): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [CHILD_SCRIPT, mode, url, bullPrefix, queue, String(concurrency)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      children.delete(child);
      resolve();
    }),
  );
  child.stdin!.on('error', () => undefined);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  const cpuWaiters: Array<(us: number) => void> = [];
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line === 'ready') onReady();
    else if (line.startsWith('cpu ')) cpuWaiters.shift()?.(Number(line.slice(4)));
  });
  const label = `${mode} worker pid ${child.pid} (queue ${queue}, concurrency ${concurrency})`;
  const stop = async () => {
    if (!gone) {
      child.stdin!.end('stop\n');
      const killer = setTimeout(() => child.kill('SIGKILL'), 6_000);
      await exited;
      clearTimeout(killer);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([ready.then(() => 'ready'), exited.then(() => 'exited'), new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timeout'), 20_000)))]);
  clearTimeout(timer);
  if (outcome !== 'ready') {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${label} ${outcome === 'exited' ? 'exited' : 'did not say ready within 20 s'}:\n${stderr}`);
  }
  return {
    pid: child.pid!,
    label,
    cpuUs: () =>
      gone
        ? Promise.resolve(Number.NaN)
        : new Promise<number>((resolve) => {
            const timer = setTimeout(() => resolve(Number.NaN), 2_000);
            cpuWaiters.push((v) => {
              clearTimeout(timer);
              resolve(v);
            });
            child.stdin!.write('cpu\n');
          }),
    stop,
  };
}

const workersCpuMs = async (ws: readonly WorkerProcess[]) => (await Promise.all(ws.map((w) => w.cpuUs()))).reduce((a, b) => a + b, 0) / 1000;

// ── server-side counters ────────────────────────────────────────────────────────────────────────

type CommandStats = Map<string, { calls: number; usec: number }>;

/** INFO commandstats as { command: calls, usec }. */
async function commandStats(client: Redis): Promise<CommandStats> {
  const text = await client.info('commandstats');
  const out: CommandStats = new Map();
  for (const line of text.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

function statsDelta(before: CommandStats, after: CommandStats): CommandStats {
  const out: CommandStats = new Map();
  for (const [name, a] of after) {
    const b = before.get(name) ?? { calls: 0, usec: 0 };
    if (a.calls > b.calls) out.set(name, { calls: a.calls - b.calls, usec: a.usec - b.usec });
  }
  return out;
}

function statsSum(all: readonly CommandStats[]): CommandStats {
  const out: CommandStats = new Map();
  for (const s of all) for (const [name, c] of s) out.set(name, { calls: (out.get(name)?.calls ?? 0) + c.calls, usec: (out.get(name)?.usec ?? 0) + c.usec });
  return out;
}

const perStepCommands = (s: CommandStats, steps: number) =>
  [...s]
    .filter(([name]) => name !== 'info')
    .sort((a, b) => b[1].calls - a[1].calls)
    .map(([name, c]) => `${name} ${fmt(c.calls / steps, 2)}`)
    .join(', ');



/** CPU (ms) of this process, the workers and redis-server over one measured stretch. */
interface Cpu {
  node: number;
  workers: number;
  server: number;
}

async function cpuMark(client: Redis, workers: readonly WorkerProcess[]): Promise<() => Promise<Cpu>> {
  const [w0, s0] = await Promise.all([workersCpuMs(workers), serverCpuMs(client)]);
  const n0 = process.cpuUsage();
  return async () => {
    const n = process.cpuUsage(n0);
    const [w1, s1] = await Promise.all([workersCpuMs(workers), serverCpuMs(client)]);
    return { node: (n.user + n.system) / 1000, workers: w1 - w0, server: s1 - s0 };
  };
}

const cpuSum = (xs: readonly Cpu[]): Cpu => xs.reduce((a, c) => ({ node: a.node + c.node, workers: a.workers + c.workers, server: a.server + c.server }), { node: 0, workers: 0, server: 0 });
const cpuPerStep = (c: Cpu, steps: number) =>
  `node ${us(c.node / steps)} + workers ${us(c.workers / steps)} + redis-server ${us(c.server / steps)} = ${us((c.node + c.workers + c.server) / steps)}`;

// ── the raw BullMQ client ───────────────────────────────────────────────────────────────────────

/**
 * A raw producer: a Queue and ONE QueueEvents (as the BullMqDispatcher has), a waiter per job id
 * registered before the add, and — as the dispatcher does — a look at the job after 1 s in case
 * the event stream missed the completion (counted; it should stay 0).
 */
class RawProducer {
  readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly waiters = new Map<string, () => void>();
  rechecked = 0;

  constructor(url: string, prefix: string, name: string) {
    this.queue = new Queue(name, { connection: { url }, prefix });
    this.events = new QueueEvents(name, { connection: { url }, prefix });
    this.events.on('completed', ({ jobId }) => this.waiters.get(jobId)?.());
    this.queue.on('error', () => undefined);
    this.events.on('error', () => undefined);
  }

  async ready(): Promise<void> {
    await Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]);
  }

  /** add → completed; resolves with the time (ms) queue.add took. */
  async roundTrip(id: string, data: unknown): Promise<number> {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.waiters.set(id, resolve);
    const recheck = setInterval(() => {
      void BullJob.fromId(this.queue, id)
        .then((job) => job?.getState())
        .then((state) => {
          if (state === 'completed' && this.waiters.has(id)) {
            this.rechecked++;
            resolve();
          }
        })
        .catch(() => undefined);
    }, 1_000);
    try {
      const t0 = performance.now();
      await this.queue.add('noop', data, { jobId: id, attempts: 1, ...KEEP });
      const addMs = performance.now() - t0;
      await done;
      return addMs;
    } finally {
      clearInterval(recheck);
      this.waiters.delete(id);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
  }
}

// ── the measured runs ──────────────────────────────────────────────────────────────────────────

interface LatencyRun {
  /** Per-step durations (ms): completion i − completion i−1 (the first from the epoch's certification / the loop's start). */
  stepMs: number[];
  wallMs: number;
  commands: CommandStats;
  cpu: Cpu;
  /** Raw only: time queue.add took, per job. */
  addMs?: number[];
}

/** One invocation of `steps` no-op steps through `rt`, timed per step from the records it emits. */
async function weftEpoch(rt: Runtime, steps: number, seed: string): Promise<{ stepMs: number[]; wallMs: number }> {
  const t0 = performance.now();
  const handle = await rt.start(BENCH_INTENT, { tenant: tenantFor(steps), seed, asOf: ASOF });
  let certified = 0;
  const completed: number[] = [];
  handle.on('record', (record: JournalRecord) => {
    if (record.kind === 'step.completed') completed.push(performance.now());
    else if (record.kind === 'epoch.certified' && !certified) certified = performance.now();
  });
  const result = await handle.done;
  const wallMs = performance.now() - t0;
  if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
  if (completed.length !== steps || !certified) throw new Error(`saw ${completed.length} step.completed records of ${steps}`);
  return { stepMs: completed.map((t, i) => t - (i === 0 ? certified : completed[i - 1]!)), wallMs };
}

async function weftLatencyRun(rt: Runtime, client: Redis, workers: readonly WorkerProcess[], steps: number, seed: string): Promise<LatencyRun> {
  const before = await commandStats(client);
  const cpu = await cpuMark(client, workers);
  const { stepMs, wallMs } = await weftEpoch(rt, steps, seed);
  const used = await cpu();
  const after = await commandStats(client);
  return { stepMs, wallMs, commands: statsDelta(before, after), cpu: used };
}

async function rawLatencyRun(raw: RawProducer, client: Redis, workers: readonly WorkerProcess[], steps: number, tag: string): Promise<LatencyRun> {
  const data = Array.from({ length: steps }, (_, i) => rawJobData(tag, i)); // prepared before the clock starts
  const before = await commandStats(client);
  const cpu = await cpuMark(client, workers);
  const stepMs: number[] = [];
  const addMs: number[] = [];
  const t0 = performance.now();
  let last = t0;
  for (let i = 0; i < steps; i++) {
    addMs.push(await raw.roundTrip(`raw-${tag}-${i}`, data[i]));
    const now = performance.now();
    stepMs.push(now - last);
    last = now;
  }
  const wallMs = performance.now() - t0;
  const used = await cpu();
  const after = await commandStats(client);
  return { stepMs, wallMs, commands: statsDelta(before, after), cpu: used, addMs };
}

interface ThroughputRun {
  steps: number;
  wallMs: number;
  /** Jobs the workers completed (Weft: the steps plus each epoch's observation). */
  jobs: number;
  cpu: Cpu;
  commands: CommandStats;
}

async function completedCount(queue: Queue): Promise<number> {
  return (await queue.getJobCounts('completed')).completed ?? 0;
}

/** `lanes` concurrent lanes, each starting `rounds` invocations of `epochSteps` no-op steps one after another. */
async function weftThroughputRun(rt: Runtime, counter: Queue, client: Redis, workers: readonly WorkerProcess[], lanes: number, rounds: number, epochSteps: number, tag: string): Promise<ThroughputRun> {
  const jobs0 = await completedCount(counter);
  const before = await commandStats(client);
  const cpu = await cpuMark(client, workers);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let k = 0; k < rounds; k++) {
        const handle = await rt.start(BENCH_INTENT, { tenant: tenantFor(epochSteps), seed: `${tag}-${lane}-${k}`, asOf: ASOF });
        const result = await handle.done;
        if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const used = await cpu();
  const after = await commandStats(client);
  return { steps: lanes * rounds * epochSteps, wallMs, jobs: (await completedCount(counter)) - jobs0, cpu: used, commands: statsDelta(before, after) };
}

/** `lanes` concurrent add→completed loops, `perLane` jobs each. */
async function rawThroughputRun(raw: RawProducer, client: Redis, workers: readonly WorkerProcess[], lanes: number, perLane: number, tag: string): Promise<ThroughputRun> {
  const data = Array.from({ length: lanes }, (_, lane) => Array.from({ length: perLane }, (_, i) => rawJobData(`${tag}-${lane}`, i)));
  const before = await commandStats(client);
  const cpu = await cpuMark(client, workers);
  const t0 = performance.now();
  await Promise.all(
    data.map(async (jobs, lane) => {
      for (let i = 0; i < jobs.length; i++) await raw.roundTrip(`raw-${tag}-${lane}-${i}`, jobs[i]);
    }),
  );
  const wallMs = performance.now() - t0;
  const used = await cpu();
  const after = await commandStats(client);
  return { steps: lanes * perLane, wallMs, jobs: lanes * perLane, cpu: used, commands: statsDelta(before, after) };
}

// ── the diagnosis's instruments ─────────────────────────────────────────────────────────────────

/** A RedisStore that records the wall time its callers wait in each append(). */
class TimedRedisStore extends RedisStore {
  calls: number[] = [];
  override async append(...args: Parameters<RedisStore['append']>): Promise<void> {
    const t0 = performance.now();
    try {
      await super.append(...args);
    } finally {
      this.calls.push(performance.now() - t0);
    }
  }
}

/** The BullMqDispatcher the runtime would choose, wrapped to add up the time the runtime waits in dispatch(). */
class TimedDispatcher implements Dispatcher {
  readonly name: string;
  readonly delaysJobs: boolean | undefined;
  /** Wall time of each dispatch of a no-op step, and of every other job (the epochs' observations). */
  steps: number[] = [];
  others: number[] = [];
  constructor(private readonly inner: Dispatcher) {
    this.name = inner.name;
    this.delaysJobs = inner.delaysJobs;
  }
  knows(actuator: string): boolean {
    return this.inner.knows(actuator);
  }
  canCompensate(actuator: string): boolean {
    return this.inner.canCompensate(actuator);
  }
  checkArgs(actuator: string, args: unknown): string | undefined {
    return this.inner.checkArgs(actuator, args);
  }
  async dispatch(job: Job): Promise<JobOutcome> {
    const t0 = performance.now();
    try {
      return await this.inner.dispatch(job);
    } finally {
      (job.actuator === 'noop' ? this.steps : this.others).push(performance.now() - t0);
    }
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Median wall time (ms) of `n` sequential awaited calls of `op`. */
async function medianRtt(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await op(i);
    xs.push(performance.now() - t0);
  }
  return quantile(xs, 0.5);
}

// ── the suite ───────────────────────────────────────────────────────────────────────────────────

/** Run a weft/raw pair back to back, the order alternating with `r` (neither always runs on the other's leftovers). */
async function alternately(r: number, weft: () => Promise<unknown>, raw: () => Promise<unknown>): Promise<void> {
  for (const run of r % 2 === 0 ? [weft, raw] : [raw, weft]) await run();
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      steps: { type: 'string' },
      reps: { type: 'string' },
      invocations: { type: 'string' },
      'epoch-steps': { type: 'string' },
      rounds: { type: 'string' },
      'worker-concurrency': { type: 'string' },
      pairs: { type: 'string' },
      url: { type: 'string' },
    },
  });
  const int = (name: string, text: string | undefined, fallback: number, min: number) => {
    const n = Number(text ?? fallback);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const steps = int('steps', values.steps, 1100, 2 * WINDOW + 2);
  const reps = int('reps', values.reps, 5, 1);
  const lanes = int('invocations', values.invocations, 64, 1);
  const epochSteps = int('epoch-steps', values['epoch-steps'], 10, 1);
  const rounds = int('rounds', values.rounds, 4, 1);
  const workerConcurrency = int('worker-concurrency', values['worker-concurrency'], 32, 1);
  const pairs = int('pairs', values.pairs, THROUGHPUT_PAIRS, 1);

  const suiteStart = performance.now();
  const loadStart = loadLine();
  let server: PrivateRedis | undefined;
  const workers: WorkerProcess[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  const prefix = `weft-bench-w${process.pid}-${Date.now().toString(36)}`;
  const bullPrefix = `${prefix}:bull`;
  const queues = { weftLat: 'weft-lat', rawLat: 'raw-lat', weftThr: 'weft-thr', rawThr: 'raw-thr', weftDiag: 'weft-diag' };
  const out: string[] = [];
  const note = (line: string) => process.stderr.write(`  [workers] ${line}\n`);
  let client: Redis | undefined;
  const stopWorkers = async () => {
    await Promise.allSettled(workers.splice(0).map((w) => w.stop()));
  };
  // Interrupted (Ctrl-C, kill): stop the workers and the server before going.
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`bench workers: ${signal}: stopping the workers and the server\n`);
    for (const child of children) child.kill('SIGKILL');
    void (server?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (!values.url) server = await startPrivateRedis({ orElse: 'pass --url redis://…' });
    const url = values.url ?? server!.url;
    client = new Redis(url, { lazyConnect: true });
    client.on('error', () => undefined);
    await client.connect();
    out.push(`redis: ${server ? `private ${server.args.join(' ')}` : `given ${url.replace(/\/\/[^@]*@/, '//…@')}`}`);
    out.push(`       ${await aofSettings(client)}`);
    out.push(`load at start: ${loadStart}`);
    const newRuntime = (queue: string) => {
      const rt = createRuntime({ redis: url, redisPrefix: prefix, dispatch: 'bullmq', queue, domain: benchDomain, signingKey: key, limits: LIMITS });
      closers.push(() => rt.close());
      return rt;
    };
    const newRaw = async (queue: string) => {
      const raw = new RawProducer(url, bullPrefix, queue);
      closers.push(() => raw.close());
      await raw.ready();
      return raw;
    };

    // ── 1 + 3: latency, one worker process each ──
    note(`latency: ${reps} × ${steps} steps, weft vs raw, one worker process each`);
    const [weftLatWorker, rawLatWorker] = await Promise.all([spawnWorker('weft', url, bullPrefix, queues.weftLat, 1), spawnWorker('raw', url, bullPrefix, queues.rawLat, 1)]);
    workers.push(weftLatWorker, rawLatWorker);
    const rtLat = newRuntime(queues.weftLat);
    const rawLat = await newRaw(queues.rawLat);
    // Warm-up (JIT, script cache, connections, the event streams' readers): not reported.
    await weftEpoch(rtLat, Math.min(steps, 200), 'warm-lat');
    await rawLatencyRun(rawLat, client, [], Math.min(steps, 200), 'warm-lat');
    const weftLat: LatencyRun[] = [];
    const rawLatRuns: LatencyRun[] = [];
    for (let r = 0; r < reps; r++) {
      // Alternate the order so that neither always runs on the other's leftovers.
      await alternately(
        r,
        async () => weftLat.push(await weftLatencyRun(rtLat, client!, [weftLatWorker], steps, `lat-${r}`)),
        async () => rawLatRuns.push(await rawLatencyRun(rawLat, client!, [rawLatWorker], steps, `lat-${r}`)),
      );
    }

    // ── diagnosis: the same steps with timed store and dispatcher; round trips alone; MemoryStore ──
    note('diagnosis: timed store + dispatcher, single round trips, MemoryStore');
    const diagSteps = Math.min(steps, 200);
    const diagWorker = await spawnWorker('weft', url, bullPrefix, queues.weftDiag, 1);
    workers.push(diagWorker);
    const timedStore = new TimedRedisStore({ redis: url, prefix });
    const timedDispatcher = new TimedDispatcher(new BullMqDispatcher({ connection: url, prefix: bullPrefix, queue: queues.weftDiag, actuators: benchDomain.actuators({ stateDir: os.tmpdir() }) }));
    const rtDiag = createRuntime({ store: timedStore, dispatcher: timedDispatcher, domain: benchDomain, signingKey: key, limits: LIMITS });
    closers.push(async () => {
      await rtDiag.close();
      await timedStore.close();
    });
    await weftEpoch(rtDiag, 50, 'warm-diag');
    timedStore.calls = [];
    timedDispatcher.steps = [];
    timedDispatcher.others = [];
    // DIAG_RUNS timed epochs, alternated with as many raw runs of as many round trips (like for like).
    const diagStepMs: number[] = [];
    const diagRawMs: number[] = [];
    for (let r = 0; r < DIAG_RUNS; r++) {
      diagStepMs.push(...(await weftEpoch(rtDiag, diagSteps, `diag-${r}`)).stepMs);
      diagRawMs.push(...(await rawLatencyRun(rawLat, client, [], diagSteps, `diag-${r}`)).stepMs);
    }
    // The same app, MemoryStore + in-process dispatcher: the runtime's own work per step.
    const rtMem = createRuntime({ store: new MemoryStore(), domain: benchDomain, signingKey: key, limits: LIMITS });
    await weftEpoch(rtMem, 50, 'warm-mem');
    const memCpu0 = process.cpuUsage();
    const mem = await weftEpoch(rtMem, diagSteps, 'mem');
    const memCpu = process.cpuUsage(memCpu0);
    // …and in the throughput's shape: lanes × rounds invocations of epochSteps steps, all concurrent.
    let shapeRecords = 0;
    let shapeSeals = 0;
    const memThrCpu0 = process.cpuUsage();
    const memThrT0 = performance.now();
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        for (let k = 0; k < rounds; k++) {
          const handle = await rtMem.start(BENCH_INTENT, { tenant: tenantFor(epochSteps), seed: `mem-thr-${lane}-${k}`, asOf: ASOF });
          if (lane === 0 && k === 0) {
            handle.on('record', (record: JournalRecord) => {
              shapeRecords++;
              if (typeof (record.body as { signature?: unknown } | undefined)?.signature === 'string') shapeSeals++;
            });
          }
          const result = await handle.done;
          if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
        }
      }),
    );
    const memThrMs = performance.now() - memThrT0;
    const memThrCpu = process.cpuUsage(memThrCpu0);
    const memThrSteps = lanes * rounds * epochSteps;
    await rtMem.close();
    const signMs = await medianRtt(200, async (i) => signFingerprint(key, i.toString(16).padStart(64, '0')));
    // Single round trips on the same server.
    const pingMs = await medianRtt(300, () => client!.ping());
    const incrMs = await medianRtt(300, () => client!.incr(`${prefix}:bench-counter`));
    const lookUpMs = await medianRtt(300, (i) => rawLat.queue.getJobState(`missing-${i}`));
    const rawAddMs = quantile(rawLatRuns.flatMap((r) => r.addMs ?? []), 0.5);
    await diagWorker.stop();
    workers.splice(workers.indexOf(diagWorker), 1);
    await stopWorkers();

    // ── 2: throughput, two worker processes each ──
    note(`throughput: ${lanes} concurrent invocations × ${rounds} rounds × ${epochSteps} steps, 2 worker processes (concurrency ${workerConcurrency} each), weft vs raw`);
    const weftThrWorkers = await Promise.all([0, 1].map(() => spawnWorker('weft', url, bullPrefix, queues.weftThr, workerConcurrency)));
    workers.push(...weftThrWorkers);
    const rawThrWorkers = await Promise.all([0, 1].map(() => spawnWorker('raw', url, bullPrefix, queues.rawThr, workerConcurrency)));
    workers.push(...rawThrWorkers);
    const rtThr = newRuntime(queues.weftThr);
    const rawThr = await newRaw(queues.rawThr);
    const counter = new Queue(queues.weftThr, { connection: { url }, prefix: bullPrefix });
    counter.on('error', () => undefined);
    closers.push(() => counter.close());
    await weftThroughputRun(rtThr, counter, client, weftThrWorkers, lanes, 1, epochSteps, 'warm-thr');
    await rawThroughputRun(rawThr, client, rawThrWorkers, lanes, epochSteps, 'warm-thr');
    const weftThr: ThroughputRun[] = [];
    const rawThrRuns: ThroughputRun[] = [];
    for (let r = 0; r < pairs; r++) {
      await alternately(
        r,
        async () => weftThr.push(await weftThroughputRun(rtThr, counter, client!, weftThrWorkers, lanes, rounds, epochSteps, `thr-${r}`)),
        async () => rawThrRuns.push(await rawThroughputRun(rawThr, client!, rawThrWorkers, lanes, rounds * epochSteps, `thr-${r}`)),
      );
    }
    await stopWorkers();

    // ── the figures ──
    const wAll = weftLat.flatMap((x) => x.stepMs);
    const rAll = rawLatRuns.flatMap((x) => x.stepMs);
    const w50 = quantile(wAll, 0.5);
    const w99 = quantile(wAll, 0.99);
    const r50 = quantile(rAll, 0.5);
    const r99 = quantile(rAll, 0.99);
    const rate = (xs: ThroughputRun[]) => xs.reduce((a, x) => a + x.steps, 0) / (xs.reduce((a, x) => a + x.wallMs, 0) / 1000);
    const wRate = rate(weftThr);
    const rRate = rate(rawThrRuns);
    // The figure is the median of the pairs' ratios: a pair's two runs share the machine's moment,
    // which on a shared VM moves both; the spread says how much it moved.
    const pairRatios = weftThr.map((w, i) => rate([w]) / rate([rawThrRuns[i]!])).sort((a, b) => a - b);
    const thrRatio = quantile(pairRatios, 0.5);
    const early = (xs: number[]) => xs.slice(1, 1 + WINDOW);
    const lateFrom = Math.min(1001, steps - WINDOW);
    const late = (xs: number[]) => xs.slice(lateFrom, lateFrom + WINDOW);
    const wEarly = weftLat.flatMap((x) => early(x.stepMs));
    const wLate = weftLat.flatMap((x) => late(x.stepMs));
    const rEarly = rawLatRuns.flatMap((x) => early(x.stepMs));
    const rLate = rawLatRuns.flatMap((x) => late(x.stepMs));

    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const rows: string[][] = [['figure', 'weft', 'baseline (same run, same server)', 'ratio', 'goal', '']];
    rows.push([`1. step latency p50, 1 worker (${reps} × ${fmt(steps)} steps)`, us(w50), `${us(r50)}  raw add → 'completed' event`, `${fmt(w50 / r50, 2)}×`, '≤ 1.5×', verdict(w50 / r50 <= 1.5)]);
    rows.push(['   step latency p99', us(w99), `${us(r99)}  raw add → 'completed' event`, `${fmt(w99 / r99, 2)}×`, '—', '']);
    rows.push([`2. throughput, ${lanes} invocations × ${epochSteps} steps, 2 workers`, `${fmt(wRate)} steps/s`, `${fmt(rRate)} jobs/s  ${lanes} raw add → completed loops`, `${fmt(thrRatio * 100, 1)} %`, '≥ 50 %', verdict(thrRatio >= 0.5)]);
    rows.push([`3. step cost, mean of steps ${lateFrom}–${lateFrom + WINDOW - 1}`, us(mean(wLate)), `${us(mean(wEarly))}  steps 1–${WINDOW}`, `${fmt(mean(wLate) / mean(wEarly), 2)}×`, '≤ 1.1×', verdict(mean(wLate) / mean(wEarly) <= 1.1)]);
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
    out.push('');
    for (const [i, row] of rows.entries()) {
      out.push(`  ${row.map((cell, c) => (c === 0 || c === 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd()}`);
      if (i === 0) out.push(`  ${widths.map((w) => '─'.repeat(w)).join('  ')}`);
    }

    // ── where the time goes ──
    const latSteps = reps * steps;
    const wCmd = statsSum(weftLat.map((x) => x.commands));
    const rCmd = statsSum(rawLatRuns.map((x) => x.commands));
    out.push('');
    out.push(`where a step's time goes (1 worker; p50 / p99 / mean per step, same run):`);
    out.push(`  weft step (step.completed → step.completed)      ${us(w50).padStart(9)} / ${us(w99).padStart(9)} / ${us(mean(wAll)).padStart(9)}`);
    out.push(`  raw add → 'completed' event (the baseline)        ${us(r50).padStart(9)} / ${us(r99).padStart(9)} / ${us(mean(rAll)).padStart(9)}   (of which queue.add alone: p50 ${us(rawAddMs)})`);
    out.push(`  same app, MemoryStore + in-process dispatcher     ${us(quantile(mem.stepMs, 0.5)).padStart(9)} / ${us(quantile(mem.stepMs, 0.99)).padStart(9)} / ${us(mean(mem.stepMs)).padStart(9)}   (the runtime's own work; node CPU ${us((memCpu.user + memCpu.system) / 1000 / diagSteps)} per step incl. planning)`);
    {
      const n = diagStepMs.length;
      const total = diagStepMs.reduce((a, b) => a + b, 0);
      const appendTotal = timedStore.calls.reduce((a, b) => a + b, 0);
      const stepDispatch = timedDispatcher.steps.reduce((a, b) => a + b, 0);
      const otherDispatch = timedDispatcher.others.reduce((a, b) => a + b, 0);
      const a50 = quantile(timedStore.calls, 0.5);
      const d50 = quantile(timedDispatcher.steps, 0.5);
      const x50 = quantile(diagRawMs, 0.5);
      const perStepAppends = timedStore.calls.length / n;
      out.push(
        `  timed runs (${DIAG_RUNS} × ${diagSteps} steps through a TimedRedisStore and a timed wrapper around the BullMqDispatcher the runtime would choose, each followed by ${diagSteps} raw round trips):`,
      );
      out.push(
        `    means per step: ${us(total / n)} = ${us(appendTotal / n)} awaiting store.append() (${fmt(perStepAppends, 2)} calls/step) + ${us(stepDispatch / n)} awaiting the step's dispatch() + ${us(otherDispatch / n)} awaiting the epochs' observation jobs + ${us((total - appendTotal - stepDispatch - otherDispatch) / n)} other (the runtime's own work between awaits)`,
      );
      out.push(
        `    p50s: step ${us(quantile(diagStepMs, 0.5))}; one append ${us(a50)}; one step's dispatch ${us(d50)} vs one raw round trip ${us(x50)} (the raw runs beside) → the dispatch costs ${d50 >= x50 ? `${us(d50 - x50)} more` : `${us(x50 - d50)} less (within the noise)`} (its own extras: the Weft worker's runJob and larger reply, the dispatcher's timers) and ${fmt(perStepAppends, 2)} appends add ${us(perStepAppends * a50)}: ${us(x50)} + ${us(d50 - x50)} + ${us(perStepAppends * a50)} = ${us(d50 + perStepAppends * a50)} ≈ ${fmt((d50 + perStepAppends * a50) / x50, 2)}× raw before any runtime work`,
      );
    }
    out.push(`  single round trips, p50: PING ${us(pingMs)}, INCR (a write: fsync'd before the reply) ${us(incrMs)}, the dispatcher's look before each add (queue.getJobState of a job not there yet) ${us(lookUpMs)}, queue.add ${us(rawAddMs)}`);
    out.push(`  server commands per step, weft (per-invocation ones amortized over ${fmt(steps)} steps): ${perStepCommands(wCmd, latSteps)}`);
    out.push(`  server commands per step, raw: ${perStepCommands(rCmd, latSteps)}`);
    out.push(`  CPU per step, weft: ${cpuPerStep(cpuSum(weftLat.map((x) => x.cpu)), latSteps)}`);
    out.push(`  CPU per step, raw:  ${cpuPerStep(cpuSum(rawLatRuns.map((x) => x.cpu)), latSteps)}`);
    out.push(
      `  step cost early → late (means, steps 1–${WINDOW} → ${lateFrom}–${lateFrom + WINDOW - 1}): weft ${us(mean(wEarly))} → ${us(mean(wLate))} (medians ${us(quantile(wEarly, 0.5))} → ${us(quantile(wLate, 0.5))}); raw ${us(mean(rEarly))} → ${us(mean(rLate))}`,
    );
    out.push(`  per-run step p50, weft: ${weftLat.map((x) => us(quantile(x.stepMs, 0.5))).join(', ')}; raw: ${rawLatRuns.map((x) => us(quantile(x.stepMs, 0.5))).join(', ')}`);
    out.push('');
    const thrSteps = (xs: ThroughputRun[]) => xs.reduce((a, x) => a + x.steps, 0);
    const wThrJobs = weftThr.reduce((a, x) => a + x.jobs, 0);
    const wThrWall = weftThr.reduce((a, x) => a + x.wallMs, 0) / 1000;
    out.push(`throughput (${lanes} concurrent; 2 worker processes of concurrency ${workerConcurrency} each; ${pairs} pairs of runs, each pair back to back, order alternating):`);
    out.push(`  weft / raw per pair (the figure is their median): ${pairRatios.map((x) => `${fmt(x * 100, 1)} %`).join(', ')}; over all runs ${fmt((wRate / rRate) * 100, 1)} %`);
    out.push(`  weft: ${weftThr.map((x) => `${fmt(x.steps)} steps in ${fmt(x.wallMs / 1000, 2)} s`).join(', ')} → ${fmt(wRate)} steps/s; ${fmt(wThrJobs / wThrWall)} jobs/s (${fmt(wThrJobs / thrSteps(weftThr), 2)} jobs per no-op step: each epoch's observations are jobs too), ${fmt((lanes * rounds * weftThr.length) / wThrWall, 1)} invocations/s`);
    out.push(`  raw:  ${rawThrRuns.map((x) => `${fmt(x.steps)} jobs in ${fmt(x.wallMs / 1000, 2)} s`).join(', ')} → ${fmt(rRate)} jobs/s`);
    out.push(`  CPU per step, weft: ${cpuPerStep(cpuSum(weftThr.map((x) => x.cpu)), thrSteps(weftThr))}; ${fmt(cpuSum(weftThr.map((x) => x.cpu)).node / 1000 / wThrWall * 100, 0)} % of a core in node`);
    out.push(`  CPU per step, raw:  ${cpuPerStep(cpuSum(rawThrRuns.map((x) => x.cpu)), thrSteps(rawThrRuns))}; ${fmt(cpuSum(rawThrRuns.map((x) => x.cpu)).node / 1000 / (rawThrRuns.reduce((a, x) => a + x.wallMs, 0) / 1000) * 100, 0)} % of a core in node`);
    out.push(`  weft's runtime alone, the same shape on a MemoryStore + in-process dispatcher (no Redis, no queue): ${fmt(memThrSteps / (memThrMs / 1000))} steps/s, node CPU ${us((memThrCpu.user + memThrCpu.system) / 1000 / memThrSteps)} per step (the runtime's own work per step at ${epochSteps}-step epochs, per-invocation costs included)`);
    {
      const perStepLong = (memCpu.user + memCpu.system) / 1000 / diagSteps;
      const perInvocation = ((memThrCpu.user + memThrCpu.system) / 1000 / memThrSteps - perStepLong) * epochSteps;
      out.push(
        `    i.e. ≈ ${us(perInvocation)} of node CPU per invocation beyond its steps (MemoryStore: ${us((memThrCpu.user + memThrCpu.system) / 1000 / memThrSteps)}/step at ${epochSteps}-step epochs vs ${us(perStepLong)}/step at ${diagSteps}) — an invocation appends ${shapeRecords} records for its ${epochSteps} steps and seals ${shapeSeals === 1 ? 'once' : `${shapeSeals} times`} (ed25519 sign in @noble/curves: ${us(signMs)} each)`,
      );
    }
    out.push(`  server commands per step, weft: ${perStepCommands(statsSum(weftThr.map((x) => x.commands)), thrSteps(weftThr))}`);
    out.push(`  server commands per step, raw:  ${perStepCommands(statsSum(rawThrRuns.map((x) => x.commands)), thrSteps(rawThrRuns))}`);
    out.push(`  ${os.cpus().length} vCPUs shared by node, ${2} workers and redis-server${rawLat.rechecked + rawThr.rechecked ? `; raw completions found by the 1 s look instead of the event: ${rawLat.rechecked + rawThr.rechecked}` : ''}`);
    out.push('');
    out.push(`load at end: ${loadLine()}; suite took ${fmt((performance.now() - suiteStart) / 1000, 1)} s`);
  } catch (err) {
    // Invocations still in flight hold timers (the dispatcher's wait time-out): once everything
    // below is cleaned up and the error reported, do not let them keep the process alive.
    setTimeout(() => process.exit(process.exitCode ?? 1), 3_000).unref();
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await stopWorkers();
    if (client) {
      if (!server) {
        // A given server: remove everything this run wrote under its prefix.
        try {
          let cursor = '0';
          do {
            const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', '1000');
            if (batch.length) await client.unlink(...batch);
            cursor = next;
          } while (cursor !== '0');
        } catch {
          /* best effort */
        }
      }
      client.disconnect();
    }
    await server?.stop();
  }
  process.stdout.write(out.join('\n') + '\n');
}
