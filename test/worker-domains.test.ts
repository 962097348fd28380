/**
 * Workers and domains on one shared Redis (issue 19, point 2), with a private redis-server and
 * workers started in this process (startWorker):
 *
 * - Each domain's jobs go on its own queue (`weft-effects-<domain>`): a worker of another domain on
 *   the same Redis never sees them; a worker of the job's domain runs them.
 * - A worker runs a job of a library version its module does not build, once that library's blob is
 *   in the store (read by digest); it refuses — a coded refusal naming the worker, which the runtime
 *   records as `step.refused` without spending an attempt (flag 13) — a job whose library the store
 *   lacks, that names an actuator it does not have, whose args fail its actuator's schema, or that
 *   belongs to another domain (two domains forced onto one queue with --queue).
 * - The first runtime of a domain to dispatch on a queue records it as that domain's: a worker of
 *   another domain then refuses to start there (QueueOwnedError), naming the owner.
 * - One log line per job: its key, attempt, outcome and duration.
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { canonicalBytes } from '../journal/canonical.js';
import { RedisStore } from '../stores/redis.js';
import { BullMqDispatcher, queueForDomain } from '../queue/bullmq.js';
import { startWorker, type RunningWorker } from '../queue/worker.js';
import { QueueOwnedError, queueOwner } from '../queue/queue-owner.js';
import { hostname } from 'node:os';
import { defineDomain, type Domain } from '../runtime/domain.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { sleep, waitFor } from './support/weft-processes.js';
import { CONF, conformanceDomain, newJob, testActuators, type ConformanceCall } from './dispatcher-conformance.js';

const redisOk = requireRedis();
let server: RedisServer;

beforeAll(async () => {
  if (!redisOk) return;
  server = await startRedis({ aof: false });
});
afterAll(async () => {
  await server?.stop();
});

if (!redisOk && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

let rigs = 0;

/** The conformance domain under another name (its own queue), with its calls recorded. */
function domainNamed(name: string, record: (call: ConformanceCall) => void): Domain {
  const base = conformanceDomain();
  return defineDomain({ name, libraries: base.libraries, actuators: () => testActuators(record), observe: CONF.observe });
}

/** A prefix of its own per test: journals' store, blobs and BullMQ queues. */
function rig() {
  const prefix = `wd-${process.pid}-${++rigs}`;
  const store = new RedisStore({ redis: server.url, prefix });
  const closing: Array<{ close(): Promise<void> }> = [];
  return {
    prefix,
    store,
    dispatcher(domain: string, queue?: string, actuators = testActuators()) {
      const d = new BullMqDispatcher({ connection: server.url, prefix: `${prefix}:bull`, domain, ...(queue ? { queue } : {}), actuators, waitTimeoutMs: 20_000, noWorkerAfterMs: 60_000, warn: () => undefined });
      closing.push(d);
      return d;
    },
    async worker(domain: Domain, options: { queue?: string; log?: string[] } = {}): Promise<RunningWorker> {
      const w = await startWorker({
        domain,
        connection: server.url,
        redis: { url: server.url, prefix },
        prefix: `${prefix}:bull`,
        ...(options.queue ? { queue: options.queue } : {}),
        ...(options.log ? { log: (line: string) => options.log!.push(line) } : {}),
      });
      closing.push(w);
      return w;
    },
    async close() {
      for (const c of closing.reverse()) await c.close();
      await store.close();
    },
  };
}

/** Another version of the conformance library: same actuators, another digest. */
function nextVersion(): Library {
  const base = conformanceDomain().libraries[0]!;
  return { ...structuredClone(base), name: `${base.name}-mined-1` };
}

describe.skipIf(!redisOk)('workers and domains on one Redis', () => {
  test('each domain has its own queue: a worker of another domain never sees the job; one of its domain runs it', async () => {
    const r = rig();
    try {
      const theirs: ConformanceCall[] = [];
      const theirLog: string[] = [];
      await r.worker(domainNamed('refunds', (c) => theirs.push(c)), { log: theirLog });
      const travel = r.dispatcher('conformance');
      expect(travel.name).toBe(`bullmq:${queueForDomain('conformance')}`);
      const job = newJob(CONF.echo, { text: 'mine', n: 1 }, { library: libraryDigest(conformanceDomain().libraries[0]!) });
      const outcome = travel.dispatch(job);
      await sleep(1_500); // long enough for the refunds worker to have taken it, were it on its queue
      expect(theirs).toEqual([]);
      expect(theirLog).toEqual([]);
      const mine: ConformanceCall[] = [];
      await r.worker(domainNamed('conformance', (c) => mine.push(c)));
      expect(await outcome).toMatchObject({ ok: true });
      expect(mine.map((c) => c.key)).toEqual([job.key]);
      expect(theirs).toEqual([]);
    } finally {
      await r.close();
    }
  });

  test('a job of a library version the worker does not build runs once that library is in the store; without it, a coded refusal naming the worker', async () => {
    const r = rig();
    try {
      const calls: ConformanceCall[] = [];
      const log: string[] = [];
      await r.worker(domainNamed('conformance', (c) => calls.push(c)), { log });
      // The runtime's build of the domain has an actuator this worker's lacks (conf.newer).
      const newerActuator = { ...testActuators().find((a) => a.name === CONF.echo)!, name: 'conf.newer' };
      const dispatcher = r.dispatcher('conformance', undefined, [...testActuators(), newerActuator]);
      const v2 = nextVersion();
      const digest = libraryDigest(v2);
      expect(conformanceDomain().libraries.map((l) => libraryDigest(l))).not.toContain(digest);

      const early = newJob(CONF.echo, { text: 'v2', n: 2 }, { library: digest });
      expect(await dispatcher.dispatch(early)).toEqual({
        ok: false,
        failure: { class: 'transient', code: 'worker.library_unknown', message: expect.stringContaining(digest) },
        refused: { reason: expect.stringContaining(digest) },
        worker: `${hostname()}:${process.pid}`,
      });
      expect(calls).toEqual([]);

      expect(await r.store.putBlob(canonicalBytes(v2))).toBe(digest);
      const later = newJob(CONF.echo, { text: 'v2', n: 3 }, { library: digest });
      expect(await dispatcher.dispatch(later)).toMatchObject({ ok: true });
      expect(calls.map((c) => c.key)).toEqual([later.key]);

      // It has the library now, but not this actuator, and these args fail its echo's schema.
      const newer = newJob('conf.newer', { text: 'x', n: 0 }, { library: digest });
      expect((await dispatcher.dispatch(newer)) as unknown).toMatchObject({ ok: false, failure: { class: 'transient', code: 'worker.no_actuator', message: expect.stringContaining('conf.newer') }, refused: { reason: expect.stringContaining('conf.newer') }, worker: `${hostname()}:${process.pid}` });
      const bad = newJob(CONF.echo, { text: 7 }, { library: digest });
      expect((await dispatcher.dispatch(bad)) as unknown).toMatchObject({ ok: false, failure: { class: 'transient', code: 'worker.bad_args' }, refused: { reason: expect.any(String) }, worker: `${hostname()}:${process.pid}` });
      expect(calls.map((c) => c.key)).toEqual([later.key]); // refused jobs never reach an actuator

      // One line per job: key, attempt, outcome, duration.
      await waitFor('four log lines', () => log.length >= 4, 10_000);
      expect(log).toHaveLength(4);
      expect(log[0]).toMatch(new RegExp(`^${early.key.replaceAll('.', '\\.')} attempt 1 refused \\(worker\\.library_unknown\\) \\d+ ms$`));
      expect(log[1]).toMatch(new RegExp(`^${later.key.replaceAll('.', '\\.')} attempt 1 ok \\d+ ms$`));
      expect(log[2]).toContain('refused (worker.no_actuator)');
      expect(log[3]).toContain('refused (worker.bad_args)');
    } finally {
      await r.close();
    }
  });

  test('two domains forced onto one queue: the worker refuses the other domain’s job (worker.wrong_domain), naming the worker to start', async () => {
    const r = rig();
    try {
      const calls: ConformanceCall[] = [];
      await r.worker(domainNamed('conformance', (c) => calls.push(c)), { queue: 'shared' });
      const refunds = r.dispatcher('refunds', 'shared');
      const job = newJob(CONF.echo, { text: 'refund', n: 1 }, { library: libraryDigest(conformanceDomain().libraries[0]!) });
      expect(await refunds.dispatch(job)).toEqual({
        ok: false,
        failure: { class: 'transient', code: 'worker.wrong_domain', message: expect.stringContaining('weft worker --domain refunds') },
        refused: { reason: expect.stringContaining('this worker runs domain conformance') },
        worker: `${hostname()}:${process.pid}`,
      });
      expect(calls).toEqual([]);
      // The refunds runtime was first to dispatch on the queue: it is refunds' now, and a conformance worker no longer starts there.
      expect(await queueOwner({ url: server.url }, `${r.prefix}:bull`, 'shared')).toBe('refunds');
      const refused = await r.worker(domainNamed('conformance', () => undefined), { queue: 'shared' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(QueueOwnedError);
      expect((refused as Error).message).toContain('queue shared belongs to domain refunds');
      expect((refused as Error).message).toContain('weft worker --domain refunds');
    } finally {
      await r.close();
    }
  });

  test('an actuator failure is logged with its class and code', async () => {
    const r = rig();
    try {
      const log: string[] = [];
      await r.worker(domainNamed('conformance', () => undefined), { log });
      const job = newJob(CONF.permanent, { text: 'x', n: 0 }, { library: libraryDigest(conformanceDomain().libraries[0]!) });
      const outcome = await r.dispatcher('conformance').dispatch(job);
      expect(outcome.ok).toBe(false);
      await waitFor('a log line', () => log.length >= 1, 10_000);
      const failure = (outcome as { failure: { class: string; code: string } }).failure;
      expect(log).toEqual([expect.stringMatching(new RegExp(`^${job.key.replaceAll('.', '\\.')} attempt 1 ${failure.class} \\(${failure.code.replaceAll('.', '\\.')}\\) \\d+ ms$`))]);
    } finally {
      await r.close();
    }
  });
});
