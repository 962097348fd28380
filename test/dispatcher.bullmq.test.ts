/**
 * The dispatcher conformance suite against BullMqDispatcher — a private redis-server, a queue of
 * its own per test, a worker started in this process with startWorker over the same conformance
 * actuators — and what only the BullMQ dispatcher has to get right: one job per attempt
 * (`<key>.a<attempt>`), a re-dispatch of a finished attempt reads the stored outcome and runs
 * nothing, one warning while no worker consumes the queue, a bounded wait (dispatch.wait_timeout),
 * a worker refusing a job pinned to a library it lacks, and a worker in a separate process
 * (`weft worker`): same outcomes as in-process (a shadow run's `shadow` jobs too), a SIGKILLed worker's job answered as
 * `worker.stalled`, SIGTERM finishing the running job.
 *
 * Needs `redis-server` on PATH: under CI (CI=true) its absence fails; elsewhere the tests are
 * skipped, loudly. Process tests need the build (`npm run build`).
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { libraryDigest } from '../htn/library/digest.js';
import { isWeftError } from '../journal/errors.js';
import { BullMqDispatcher, jobIdOf, type BullMqDispatcherOptions } from '../queue/bullmq.js';
import type { Job, JobOutcome } from '../queue/dispatcher.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { startWorker, type RunningWorker } from '../queue/worker.js';
import { assertBuilt, repoRoot } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { startRedis } from './support/redis-server.js';
import { runNodeWithin, sleep, startWeftWorker, waitFor } from './support/weft-processes.js';
import {
  CONF,
  conformanceDomain,
  dispatcherConformance,
  expectedCall,
  newJob,
  rejection,
  testActuators,
  type ConformanceCall,
} from './dispatcher-conformance.js';

const CLOSE_CHECK = path.join(repoRoot, 'test', 'support', 'dispatcher-close-check.mjs');
const CONF_DOMAIN = path.join(repoRoot, 'test', 'support', 'conformance-domain.mjs');
const PREFIX = 'weft-test:bull';

/** The file's private Redis (no AOF: BullMQ's queues need no durability here); a queue of its own per test. */
const redis = fileRedis({ aof: false });
const redisOk = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-dispatcher-bullmq-'));

beforeAll(() => {
  if (redisOk) assertBuilt();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const freshQueue = () => redis.freshPrefix('conf');

/** The dispatcher's copy of the actuators: names and schemas only — running one here is a bug. */
const certOnly = () =>
  testActuators(() => {
    throw new Error('BullMqDispatcher ran an actuator in the runtime process');
  });

interface BullRig {
  queue: string;
  dispatcher: BullMqDispatcher;
  calls: ConformanceCall[];
  worker: RunningWorker | undefined;
  startWorker(): Promise<RunningWorker>;
  /** Another dispatcher on the same queue (a resumed runtime in another process). */
  another(options?: Partial<BullMqDispatcherOptions>): BullMqDispatcher;
  /** Wait until every dispatcher of this rig reads its event stream (see eventReadersBlocked). */
  settled(): Promise<void>;
  inspect: Queue;
  close(): Promise<void>;
}

/**
 * Wait until `count` QueueEvents readers of `queue` are blocked in XREAD (seen in CLIENT LIST by
 * their BullMQ client name). BullMqDispatcher misses the completion of a job that finishes before
 * its reader issued its first `XREAD … $` (see the race test below); the other tests wait this out
 * so that they test what they name, not that race.
 */
async function eventReadersBlocked(queue: string, count: number, prefix = PREFIX): Promise<void> {
  const name = `name=${prefix}:${Buffer.from(queue).toString('base64')}:qe `;
  const admin = new Redis(redis.url);
  try {
    await waitFor(`${count} event reader(s) of ${queue} to block in XREAD`, async () => {
      const list = (await admin.client('LIST')) as string;
      return list.split('\n').filter((l) => l.includes(name) && / cmd=xread /.test(l)).length >= count;
    }, 60_000);
  } finally {
    admin.disconnect();
  }
}

async function openBull(options: Partial<BullMqDispatcherOptions> & { worker?: boolean; lockDurationMs?: number } = {}): Promise<BullRig> {
  const queue = freshQueue();
  const calls: ConformanceCall[] = [];
  const dispatchers: BullMqDispatcher[] = [];
  const workers: RunningWorker[] = [];
  const make = (more: Partial<BullMqDispatcherOptions> = {}) => {
    const d = new BullMqDispatcher({ connection: redis.url, queue, prefix: PREFIX, actuators: certOnly(), waitTimeoutMs: 15_000, noWorkerAfterMs: 60_000, warn: () => undefined, ...options, ...more });
    dispatchers.push(d);
    return d;
  };
  const inspect = new Queue(queue, { connection: { url: redis.url }, prefix: PREFIX });
  const dispatcher = make();
  await eventReadersBlocked(queue, 1);
  const rig: BullRig = {
    queue,
    dispatcher,
    calls,
    worker: undefined,
    async startWorker() {
      const w = await startWorker({
        domain: conformanceDomain(),
        actuators: testActuators((c) => calls.push(c)),
        connection: redis.url,
        queue,
        prefix: PREFIX,
        ...(options.lockDurationMs ? { lockDurationMs: options.lockDurationMs } : {}),
      });
      workers.push(w);
      rig.worker = w;
      return w;
    },
    another: make,
    async settled() {
      await eventReadersBlocked(queue, dispatchers.length);
    },
    inspect,
    async close() {
      await Promise.all(dispatchers.map((d) => d.close()));
      await Promise.all(workers.map((w) => w.close()));
      await inspect.close();
    },
  };
  if (options.worker !== false) await rig.startWorker();
  return rig;
}

describe.skipIf(!redisOk)('BullMqDispatcher', () => {
  dispatcherConformance({
    name: 'BullMqDispatcher (worker in this process)',
    async open() {
      const rig = await openBull();
      return { dispatcher: rig.dispatcher, calls: () => rig.calls, close: () => rig.close() };
    },
    async closeCheck() {
      // The worker runs here; the child process holds only the dispatcher, so its exit is the dispatcher's doing.
      const queue = freshQueue();
      const worker = await startWorker({ domain: conformanceDomain(), actuators: testActuators(), connection: redis.url, queue, prefix: PREFIX });
      try {
        return await runNodeWithin(20_000, CLOSE_CHECK, ['bullmq', redis.url, queue, PREFIX]);
      } finally {
        await worker.close();
      }
    },
    // The worker runs in this process: its outcomes name it `<host>:<pid>`.
    worker: `${hostname()}:${process.pid}`,
  });

  test('close() gives back every Redis connection the dispatcher opened', async () => {
    const admin = new Redis(redis.url);
    const clients = async () => (await admin.client('LIST') as string).trim().split('\n').length;
    try {
      const before = await clients();
      const dispatcher = new BullMqDispatcher({ connection: redis.url, queue: freshQueue(), prefix: PREFIX, actuators: certOnly(), warn: () => undefined, waitTimeoutMs: 500 });
      await rejection(dispatcher.dispatch(newJob(CONF.echo, { text: 'x', n: 0 })));
      expect(await clients()).toBeGreaterThan(before);
      await dispatcher.close();
      await waitFor('the dispatcher’s connections to close', async () => (await clients()) === before, 30_000);
    } finally {
      admin.disconnect();
    }
  });

  test('each attempt is its own job, `<key>.a<attempt>`, holding its outcome', async () => {
    const rig = await openBull();
    try {
      const a1 = newJob(CONF.flaky, {});
      const a2: Job = { ...a1, attempt: 2 };
      expect(jobIdOf(a1)).toBe(`${a1.key}.a1`);
      await rig.dispatcher.dispatch(a1);
      await rig.dispatcher.dispatch(a2);
      const j1 = await rig.inspect.getJob(`${a1.key}.a1`);
      const j2 = await rig.inspect.getJob(`${a1.key}.a2`);
      expect(await j1!.getState()).toBe('completed');
      expect(await j2!.getState()).toBe('completed');
      expect(j1!.returnvalue).toMatchObject({ ok: false, failure: { class: 'transient', code: 'conf.flaky' } });
      expect(j2!.returnvalue).toEqual({ ok: true, result: { key: a1.key, attempt: 2 }, worker: `${hostname()}:${process.pid}` });
      expect(j1!.opts.attempts ?? 1, 'BullMQ never retries: the runtime owns attempts').toBe(1);
      expect(j1!.data).toEqual(a1);
    } finally {
      await rig.close();
    }
  });

  test('a re-dispatch of an attempt whose job already finished returns the stored outcome without running the actuator again', async () => {
    const rig = await openBull();
    try {
      const ok = newJob(CONF.echo, { text: 'once', n: 1 });
      const broken = newJob(CONF.permanent, {});
      const okOutcome = await rig.dispatcher.dispatch(ok);
      const brokenOutcome = await rig.dispatcher.dispatch(broken);
      expect(okOutcome).toEqual({ ok: true, result: { echoed: 'once', n: 1, key: ok.key, attempt: 1 }, worker: `${hostname()}:${process.pid}` });
      expect(brokenOutcome).toMatchObject({ ok: false, failure: { class: 'permanent', code: 'conf.broken' } });
      expect(rig.calls).toHaveLength(2);
      // The same dispatcher again …
      expect(await rig.dispatcher.dispatch(ok)).toEqual(okOutcome);
      expect(await rig.dispatcher.dispatch(broken)).toEqual(brokenOutcome);
      expect(rig.calls).toHaveLength(2);
      // … and a new one (a runtime resumed in another process) with no worker left: a job added
      // again would never finish, and the short wait would reject.
      await rig.worker!.close();
      const resumed = rig.another({ waitTimeoutMs: 3_000 });
      expect(await resumed.dispatch(ok)).toEqual(okOutcome);
      expect(await resumed.dispatch(broken)).toEqual(brokenOutcome);
      expect(rig.calls, 'the actuator ran once per attempt').toHaveLength(2);
      expect(await rig.inspect.getJobCounts('completed', 'waiting', 'active', 'failed')).toEqual({ completed: 2, waiting: 0, active: 0, failed: 0 });
    } finally {
      await rig.close();
    }
  });

  test('a re-dispatch of an attempt whose job BullMQ failed (refused by a worker) reads that refusal and adds nothing', async () => {
    const rig = await openBull();
    try {
      const job = newJob(CONF.echo, { text: 'pinned', n: 1 }, { library: 'f'.repeat(64) });
      const first = await rig.dispatcher.dispatch(job);
      // A refusal, naming the worker that refused (flag 13 records it as step.refused; before it, a transient failure).
      expect(first).toEqual({
        ok: false,
        failure: { class: 'transient', code: 'worker.library_unknown', message: expect.stringContaining('f'.repeat(64)) },
        refused: { reason: expect.stringMatching(/^job \S+ pinned library f{64}, which is not in this worker's store/) },
        worker: `${hostname()}:${process.pid}`,
      });
      expect(rig.calls, 'a refused job never reaches the actuator').toEqual([]);
      expect(await rig.another().dispatch(job)).toEqual(first);
      expect(await rig.inspect.getJobCounts('failed', 'waiting')).toEqual({ failed: 1, waiting: 0 });
      // The library the worker's domain has is accepted.
      const pinned = newJob(CONF.echo, { text: 'pinned', n: 1 }, { library: libraryDigest(conformanceDomain().libraries[0]!) });
      expect(await rig.dispatcher.dispatch(pinned)).toMatchObject({ ok: true });
      expect(rig.calls).toEqual([expectedCall(pinned)]);
    } finally {
      await rig.close();
    }
  });

  test('after a refusal the same attempt goes back on the queue as a job of its own (`<key>.a<attempt>.x<n>`); one no worker takes in time is answered untaken and stays queued, to be awaited', async () => {
    const rig = await openBull({ worker: false });
    try {
      const job = newJob(CONF.echo, { text: 'again', n: 5 });
      expect(jobIdOf(job)).toBe(`${job.key}.a1`);
      const again = { ...job, refusals: 2, untakenAfterMs: 200, fresh: true };
      expect(jobIdOf(again)).toBe(`${job.key}.a1.x2`);
      expect(await rig.dispatcher.dispatch(again)).toMatchObject({ ok: false, untaken: true, failure: { code: 'dispatch.untaken' } });
      expect(await rig.inspect.getJobState(`${job.key}.a1.x2`)).toBe('waiting');
      await rig.startWorker();
      const resumed = rig.another();
      await rig.settled();
      expect(await resumed.dispatch({ ...job, refusals: 2, untakenAfterMs: 30_000 })).toEqual({ ok: true, result: { echoed: 'again', n: 5, key: job.key, attempt: 1 }, worker: expect.any(String) });
      expect(rig.calls, 'awaited, not added again').toEqual([expectedCall(job)]);
      expect(await rig.inspect.getJobCounts('completed', 'waiting')).toEqual({ completed: 1, waiting: 0 });
    } finally {
      await rig.close();
    }
  });

  test('an actuator the dispatcher knows but the worker’s domain lacks (version skew) is a policy failure from the worker', async () => {
    const extra = { ...testActuators().find((a) => a.name === CONF.echo)!, name: 'conf.newer' };
    const rig = await openBull({ actuators: [...certOnly(), extra] });
    try {
      const job = newJob('conf.newer', { text: 'x', n: 0 });
      expect(await rig.dispatcher.dispatch(job)).toEqual({ ok: false, failure: { class: 'policy', code: 'actuator.unknown', message: expect.stringContaining('conf.newer') }, worker: `${hostname()}:${process.pid}` });
    } finally {
      await rig.close();
    }
  });

  test('a job nobody consumes gets exactly one warning naming the command, and completes once a worker starts', async () => {
    const warnings: string[] = [];
    const rig = await openBull({ worker: false, noWorkerAfterMs: 150, workerHint: 'weft worker --domain conformance --redis URL', warn: (m) => warnings.push(m) });
    try {
      const job = newJob(CONF.echo, { text: 'late', n: 2 });
      let settled: JobOutcome | undefined;
      const pending = rig.dispatcher.dispatch(job).then((o) => (settled = o));
      await waitFor('the no-worker warning', () => warnings.length > 0, 30_000);
      await sleep(600); // several more times noWorkerAfterMs: still one warning
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`no worker is consuming queue ${rig.queue}`);
      expect(warnings[0]).toContain('`weft worker --domain conformance --redis URL`');
      expect(settled, 'the dispatch keeps waiting').toBeUndefined();
      await rig.startWorker();
      await pending;
      expect(settled).toEqual({ ok: true, result: { echoed: 'late', n: 2, key: job.key, attempt: 1 }, worker: expect.any(String) });
      expect(rig.calls).toEqual([expectedCall(job)]);
      expect(warnings).toHaveLength(1);
    } finally {
      await rig.close();
    }
  });

  test('several jobs waiting at once with no worker still give exactly one warning', async () => {
    const warnings: string[] = [];
    const rig = await openBull({ worker: false, noWorkerAfterMs: 150, warn: (m) => warnings.push(m) });
    try {
      const jobs = [1, 2, 3].map((n) => newJob(CONF.echo, { text: `job-${n}`, n }));
      const pending = Promise.all(jobs.map((j) => rig.dispatcher.dispatch(j)));
      await waitFor('the no-worker warning', () => warnings.length > 0, 30_000);
      await sleep(600);
      expect(warnings, `warnings:\n${warnings.join('\n')}`).toHaveLength(1);
      await rig.startWorker();
      expect((await pending).every((o) => o.ok)).toBe(true);
    } finally {
      await rig.close();
    }
  });

  test('no warning while a worker consumes the queue, even if the job takes longer than noWorkerAfterMs', async () => {
    const warnings: string[] = [];
    const rig = await openBull({ noWorkerAfterMs: 100, warn: (m) => warnings.push(m) });
    try {
      expect(await rig.dispatcher.dispatch(newJob(CONF.slow, { ms: 400 }))).toEqual({ ok: true, result: { slept: 400 }, worker: expect.any(String) });
      expect(warnings).toEqual([]);
    } finally {
      await rig.close();
    }
  });

  test('waitTimeoutMs with no worker: the dispatch rejects with dispatch.wait_timeout (not an outcome); a re-dispatch once a worker runs awaits the same job', async () => {
    const rig = await openBull({ worker: false, waitTimeoutMs: 300 });
    try {
      const job = newJob(CONF.echo, { text: 'timeout', n: 4 });
      const started = Date.now();
      const err = await rejection(rig.dispatcher.dispatch(job));
      // 300 ms asked; the bound only tells "its own time-out" from the 10-minute default, on a busy machine too.
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(isWeftError(err), String(err)).toBe(true);
      expect(err).toMatchObject({ code: 'dispatch.wait_timeout', message: expect.stringContaining(jobIdOf(job)) });
      expect(await rig.inspect.getJobCounts('waiting')).toEqual({ waiting: 1 });
      await rig.startWorker();
      const resumed = rig.another({ waitTimeoutMs: 10_000 });
      await rig.settled();
      expect(await resumed.dispatch(job)).toEqual({ ok: true, result: { echoed: 'timeout', n: 4, key: job.key, attempt: 1 }, worker: expect.any(String) });
      expect(rig.calls, 'the job was awaited, not added again').toEqual([expectedCall(job)]);
      expect(await rig.inspect.getJobCounts('completed', 'waiting')).toEqual({ completed: 1, waiting: 0 });
    } finally {
      await rig.close();
    }
  });

  test('giveUpAfterMs: Redis killed while a dispatch waits — the wait fails as a transient dispatch.redis_unreachable once the budget has passed, not after the ten-minute wait', async () => {
    const own = await startRedis();
    const queue = freshQueue();
    const dispatcher = new BullMqDispatcher({ connection: own.url, queue, prefix: PREFIX, actuators: certOnly(), waitTimeoutMs: 600_000, noWorkerAfterMs: 600_000, recheckMs: 100, giveUpAfterMs: 1_000, warn: () => undefined });
    const inspect = new Queue(queue, { connection: { url: own.url, maxRetriesPerRequest: 1 }, prefix: PREFIX });
    inspect.on('error', () => undefined);
    try {
      const job = newJob(CONF.echo, { text: 'gone', n: 5 });
      const waiting = rejection(dispatcher.dispatch(job));
      await waitFor('the job to be added', async () => (await inspect.getJobCounts('waiting')).waiting === 1);
      await inspect.close();
      await own.kill();
      const err = await waiting;
      expect(isWeftError(err), String(err)).toBe(true);
      expect(err).toMatchObject({ code: 'dispatch.redis_unreachable', failureClass: 'transient', message: expect.stringContaining(jobIdOf(job)) });
      expect((err as Error).message).toMatch(/nothing is recorded for the step: resume the invocation once Redis is back/);
    } finally {
      await dispatcher.close();
      await inspect.close().catch(() => undefined);
      await own.stop();
    }
  });

  test('a job that completes before the dispatcher has started reading its event stream is still answered', async () => {
    // A busy process or a slow link can start the dispatcher's QueueEvents reader late: its
    // waitUntilReady() has resolved (dispatch() awaits only that), but its first `XREAD … $` comes
    // after the worker's `completed` event, which is then never delivered. Simulated here by
    // starting the reader 150 ms late; under load it happens by itself.
    const run = QueueEvents.prototype.run;
    QueueEvents.prototype.run = async function (this: QueueEvents) {
      await sleep(150);
      return run.call(this);
    };
    const queue = freshQueue();
    const calls: ConformanceCall[] = [];
    const worker = await startWorker({ domain: conformanceDomain(), actuators: testActuators((c) => calls.push(c)), connection: redis.url, queue, prefix: PREFIX });
    const dispatcher = new BullMqDispatcher({ connection: redis.url, queue, prefix: PREFIX, actuators: certOnly(), waitTimeoutMs: 3_000, warn: () => undefined });
    try {
      const job = newJob(CONF.echo, { text: 'quick', n: 1 });
      const outcome = await dispatcher.dispatch(job).catch((err: unknown) => err);
      expect(calls, 'the worker ran the job').toEqual([expectedCall(job)]);
      const inspect = new Queue(queue, { connection: { url: redis.url }, prefix: PREFIX });
      expect(await inspect.getJobState(jobIdOf(job))).toBe('completed');
      await inspect.close();
      expect(outcome, 'the completed job’s outcome (not a wait time-out)').toEqual({ ok: true, result: { echoed: 'quick', n: 1, key: job.key, attempt: 1 }, worker: expect.any(String) });
    } finally {
      QueueEvents.prototype.run = run;
      await dispatcher.close();
      await worker.close();
    }
  });

  test('a worker in a separate process (weft worker): the in-process outcomes; SIGTERM finishes the running job; a SIGKILLed worker’s job is worker.stalled and attempt 2 runs elsewhere', async () => {
    const prefix = `sep${process.pid}`;
    const queue = freshQueue();
    const bullPrefix = `${prefix}:bull`; // the CLI's BullMQ prefix is `<--redis-prefix>:bull`
    const callsFile = path.join(root, 'calls.jsonl');
    const readCalls = (): ConformanceCall[] => (existsSync(callsFile) ? readFileSync(callsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as ConformanceCall) : []);
    const workerArgs = ['--domain', CONF_DOMAIN, '--redis', redis.url, '--redis-prefix', prefix, '--queue', queue, '--dir', path.join(root, 'worker')];
    const env = { WEFT_TEST_CALLS_FILE: callsFile, WEFT_WORKER_LOCK_MS: '1000' };
    const dispatcher = new BullMqDispatcher({ connection: redis.url, queue, prefix: bullPrefix, actuators: certOnly(), waitTimeoutMs: 20_000, warn: () => undefined });
    await eventReadersBlocked(queue, 1, bullPrefix);
    const referenceCalls: ConformanceCall[] = [];
    const reference = new InProcessDispatcher(testActuators((c) => referenceCalls.push(c)));
    let survivor: RunningWorker | undefined;
    let child = await startWeftWorker(workerArgs, env);
    try {
      // 1. Same outcomes, same calls as the in-process reference.
      const flaky = newJob(CONF.flaky, {});
      const echo = newJob(CONF.echo, { text: 'far', n: 5 });
      const jobs: Job[] = [
        echo,
        flaky,
        { ...flaky, attempt: 2 },
        newJob(CONF.permanent, {}),
        newJob(CONF.policy, {}),
        newJob(CONF.throws, {}),
        newJob(CONF.badResult, {}),
        newJob(CONF.echo, { text: 'far', n: -5 }),
        { ...echo, op: 'compensate', key: `${echo.key}.undo`, result: { echoed: 'far', n: 5, key: echo.key, attempt: 1 } },
        // A shadow run's job: the worker asks the actuator's shadow, never its run.
        { ...echo, op: 'shadow', key: `${echo.key}.shadow` },
        { ...flaky, op: 'shadow', key: `${flaky.key}.shadow` },
      ];
      for (const job of jobs) {
        const remote = await dispatcher.dispatch(job);
        // The same outcome — but run by the worker process, which it names (`<host>:<pid>`).
        expect(remote, `${job.actuator} ${job.op} attempt ${job.attempt}`).toEqual({ ...(await reference.dispatch(job)), worker: `${hostname()}:${child.pid}` });
      }
      const remoteCalls = readCalls();
      expect(new Set(remoteCalls.map((c) => c.pid)), 'every job ran in the worker process').toEqual(new Set([child.pid]));
      expect(remoteCalls.map(({ pid: _pid, ...c }) => c)).toEqual(referenceCalls);

      // 2. SIGTERM while a job runs: the job finishes (ok), then the worker exits 0.
      const slow = newJob(CONF.slow, { ms: 1_500 });
      const slowOutcome = dispatcher.dispatch(slow);
      await waitFor('the slow job to start in the worker', () => readCalls().some((c) => c.key === slow.key), 60_000);
      child.signal('SIGTERM');
      expect(await slowOutcome).toEqual({ ok: true, result: { slept: 1_500 }, worker: expect.any(String) });
      const stopped = await child.done;
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stderr).toContain('SIGTERM: finishing the running jobs');

      // 3. SIGKILL in the middle of a job: a surviving worker's stall check fails it; the dispatcher
      //    answers worker.stalled (transient), and attempt 2 — a new job, same key — runs on the survivor.
      child = await startWeftWorker(workerArgs, env);
      const hung = newJob(CONF.slow, { ms: 60_000 });
      const hungOutcome = dispatcher.dispatch(hung);
      await waitFor('the long job to start in the second worker', () => readCalls().some((c) => c.key === hung.key && c.pid === child.pid), 60_000);
      await child.kill();
      const survivorCalls: ConformanceCall[] = [];
      survivor = await startWorker({ domain: conformanceDomain(), actuators: testActuators((c) => survivorCalls.push(c)), connection: redis.url, queue, prefix: bullPrefix, lockDurationMs: 1_000 });
      const stalled = await hungOutcome;
      expect(stalled).toEqual({ ok: false, failure: { class: 'transient', code: 'worker.stalled', message: expect.stringMatching(/stalled/) } });
      expect(survivorCalls, 'BullMQ never re-runs a stalled job by itself (maxStalledCount 0)').toEqual([]);
      const retry: Job = { ...hung, attempt: 2, args: { ms: 10 } };
      expect(await dispatcher.dispatch(retry)).toEqual({ ok: true, result: { slept: 10 }, worker: expect.any(String) });
      expect(survivorCalls.map((c) => [c.key, c.attempt])).toEqual([[hung.key, 2]]);
    } finally {
      child.signal('SIGKILL');
      await dispatcher.close();
      await survivor?.close();
    }
  });
});
