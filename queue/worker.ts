/**
 * A worker: the process that runs a domain's actuators for jobs on a BullMQ queue (bullmq.ts) —
 * `weft worker --domain <d> --redis URL` or `startWorker(...)` in code.
 *
 * - Each job is one attempt of one step; it runs exactly as in the runtime's own process
 *   (`runJob`: args checked, actuator called with the seeded context, result checked, failures
 *   classified), and the outcome — success or the actuator's classified failure — is the job's
 *   return value. The worker never retries: the runtime owns attempts.
 * - Its queue is its domain's (`weft-effects-<domain>`, queueForDomain) unless given one. It does not
 *   start on a queue recorded as another domain's (queue-owner.ts): QueueOwnedError names the owner
 *   and the commands that are right.
 * - Which jobs it takes (`admit`): a job of ANY library version of its domain whose actuator it has.
 *   A job pinned to a library this worker's domain builds runs at once; one pinned to another
 *   version (a newer release, a mined library, a fork) runs once that library's blob is found in the
 *   store by its digest, and the step's actuator is one this worker has, with args that pass its
 *   schema. It refuses — failing the job with a coded reason that names this worker, which the
 *   runtime records as `step.refused` (flag 13: no attempt spent, the job goes back on the queue for
 *   a worker that can run it; before flag 13, a transient failure of that code) — a job
 *   of another domain (`worker.wrong_domain`), of a library the store does not have
 *   (`worker.library_unknown`), naming an actuator it lacks (`worker.no_actuator`), or whose args
 *   its actuator's schema rejects (`worker.bad_args`).
 * - `maxStalledCount: 0`: a job whose worker died is failed as stalled, never silently re-run by
 *   BullMQ; the runtime records the stall and dispatches the next attempt as a new job, and the
 *   actuator dedupes on the idempotency key.
 * - Each outcome names the worker that ran it (`identity`, default `<host>:<pid>`): the runtime puts
 *   it in the completion's unhashed envelope (`meta.worker`) and the viewer's timeline shows it.
 * - `log`: one line per job — its idempotency key, attempt, outcome (ok, the failure's class and
 *   code, or refused) and duration. `outage`: told when Redis stops answering and when it is back.
 * - `close()` (SIGTERM in the CLI) stops taking jobs and waits for the running ones to finish — also
 *   after a Redis outage, when BullMQ's own graceful close would wait for ever.
 */
import { hostname } from 'node:os';
import { Worker, type ConnectionOptions } from 'bullmq';
import type { Actuator } from '../actors/actuator.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { JournalStore } from '../journal/store.js';
import { RedisStore } from '../stores/redis.js';
import { isConnectionLoss } from '../redis/index.js';
import type { ActuatorDomain } from '../actors/domain-context.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { bullPrefix, connectionOf, queueForDomain, withReconnect, workerCommand } from './bullmq.js';
import type { Job, JobOutcome } from './dispatcher.js';
import { InProcessDispatcher } from './in-process.js';
import type { Outage } from './outage.js';
import { QueueOwnedError, queueOwner } from './queue-owner.js';
import { METRICS } from '../telemetry/metrics.js';
import { traceJob } from '../telemetry/worker-span.js';

export interface WorkerOptions {
  domain: ActuatorDomain;
  connection: string | ConnectionOptions;
  /** The queue to consume (default `queueForDomain(domain.name)`). */
  queue?: string;
  prefix?: string;
  concurrency?: number;
  /** How long a job's lock lasts before BullMQ may call it stalled (default 30 s): a dead worker's job is noticed within 1.5 × this. */
  lockDurationMs?: number;
  /** What the domain's factories get: its local folder and, in this mode, the Redis it may share state in. */
  stateDir?: string;
  /** The Weft store's Redis: where pinned libraries are read by digest (and handed to the domain's factories). */
  redis?: { url: string; prefix: string };
  /** Where pinned libraries and invocation metadata are read (default: a RedisStore on `redis`, else on `connection` with prefix `weft`). */
  store?: Pick<JournalStore, 'getBlob' | 'getMetadata'>;
  /** Who this worker is, as each job's outcome names it (default `<host>:<pid>`): the viewer's timeline shows it. */
  identity?: string;
  /** Replaces the domain's actuators (crash injection in tests). */
  actuators?: readonly Actuator[];
  /** One line per job (key, attempt, outcome, duration); default: none. */
  log?: (line: string) => void;
  /** Told when Redis becomes unreachable and when it is back (one line each, not one per retry). */
  outage?: Outage;
}

export interface RunningWorker {
  readonly worker: Worker;
  /** Stop taking jobs; wait for the running ones. */
  close(): Promise<void>;
}

/**
 * Why a worker will not run a job: its code (a refusal the runtime records: `step.refused` under
 * flag 13, a transient failure before it), the worker's name when it is known, and a one-line reason.
 * The message is what BullMQ keeps as the job's failed reason: `<code>: [worker <name>] <reason>`
 * (bullmq.ts failureOf reads it back).
 */
export class JobRefusal extends Error {
  constructor(
    readonly code: 'worker.wrong_domain' | 'worker.library_unknown' | 'worker.no_actuator' | 'worker.bad_args',
    readonly reason: string,
    readonly worker?: string,
  ) {
    super(`${code}: ${worker === undefined ? '' : `[worker ${worker}] `}${reason}`);
  }

  /** The same refusal, naming the worker (printable ASCII without `]`, at most 200 characters). */
  by(worker: string): JobRefusal {
    return new JobRefusal(this.code, this.reason, worker.replace(/[^\x20-\x5c\x5e-\x7e]/g, '?').slice(0, 200) || '?');
  }
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { domain } = options;
  const actuators = options.actuators ?? domain.actuators({
    get stateDir(): string {
      if (options.stateDir === undefined) throw new Error(`domain ${domain.name} keeps local state: pass a state folder to the worker`);
      return options.stateDir;
    },
    ...(options.redis ? { redis: options.redis } : {}),
  });
  const local = new InProcessDispatcher(actuators);
  // Reconnect for ever with a bounded backoff: jobs are taken again within a second of an outage's end.
  const connection = withReconnect(connectionOf(options.connection), undefined);
  const queue = options.queue ?? queueForDomain(domain.name);
  let ownStore: RedisStore | undefined;
  const store = (): Pick<JournalStore, 'getBlob' | 'getMetadata'> => {
    if (options.store) return options.store;
    const url = options.redis?.url ?? (typeof options.connection === 'string' ? options.connection : undefined);
    if (url === undefined) throw new JobRefusal('worker.library_unknown', 'this worker was given no store to read pinned libraries from (startWorker({ store }))');
    ownStore ??= new RedisStore({ redis: url, prefix: options.redis?.prefix ?? 'weft' });
    return ownStore;
  };
  // The command a refusal names: the job's domain on this worker's Redis. A refusal is recorded in the
  // journal: a URL that holds a password is named "$WEFT_REDIS_URL" (workerCommand), never printed.
  const hintFor = (other: string) => workerCommand({ domain: other, redisUrl: options.redis?.url ?? (typeof options.connection === 'string' ? options.connection : undefined), redisPrefix: options.redis?.prefix, queue });
  const admit = admission(domain, local, store, hintFor);
  const log = options.log;
  const identity = options.identity ?? `${hostname()}:${process.pid}`;
  // Each job under the span its traceparent names, and counted (telemetry/worker-span.ts).
  const run = (job: Job): Promise<JobOutcome> => traceJob(job, { queue, worker: identity }, () => runJob(job));
  const runJob = async (job: Job): Promise<JobOutcome> => {
    const started = performance.now();
    const took = () => `${Math.round(performance.now() - started)} ms`;
    try {
      await admit(job);
    } catch (err) {
      log?.(`${job.key} attempt ${job.attempt} refused (${err instanceof JobRefusal ? err.code : 'worker.refused'}) ${took()}`);
      throw err instanceof JobRefusal ? err.by(identity) : err;
    }
    const outcome = { ...(await local.dispatch(job)), worker: identity };
    log?.(`${job.key} attempt ${job.attempt} ${outcome.ok ? 'ok' : `${outcome.failure.class} (${outcome.failure.code})`} ${took()}`);
    return outcome;
  };
  // A queue another domain owns (queue-owner.ts): refuse to start, rather than refuse every job there.
  // (A Redis that cannot be asked now does not keep the worker from starting: it asks no owner then.)
  const owner = await queueOwner(connection, options.prefix ?? bullPrefix(), queue).catch(() => undefined);
  if (owner !== undefined && owner !== domain.name) {
    await ownStore?.close();
    const url = options.redis?.url ?? (typeof options.connection === 'string' ? options.connection : undefined);
    const command = (d: string) => workerCommand({ domain: d, redisUrl: url, redisPrefix: options.redis?.prefix });
    throw new QueueOwnedError(queue, owner, domain.name, { own: command(domain.name), owner: command(owner) });
  }
  // The jobs running now, and who waits for none to be (close).
  let active = 0;
  const idle: Array<() => void> = [];
  const worker = new Worker<Job, JobOutcome>(
    queue,
    async (bullJob) => {
      active++;
      try {
        return await run(bullJob.data);
      } finally {
        if (--active === 0) for (const wake of idle.splice(0)) wake();
      }
    },
    {
      connection,
      prefix: options.prefix ?? bullPrefix(),
      concurrency: options.concurrency ?? 1,
      maxStalledCount: 0,
      // A dead worker's lock expires after lockDuration; the stalled check, every half of it, then
      // finds the job: noticed within 1.5 × the lock (45 s by default).
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: Math.max(500, Math.floor((options.lockDurationMs ?? 30_000) / 2)),
      // After a failed fetch (Redis out of reach) BullMQ waits this long before the next: a bounded
      // backoff of 1 s, so a worker takes jobs again within a second of Redis coming back (its
      // default, 15 s, left a run waiting that long after an outage).
      runRetryDelay: 1_000,
    },
  );
  // An outage starts at the connection's first error or close, and ends when a probe on a
  // connection of its own answers (BullMQ says nothing when its connections come back).
  const outage = options.outage;
  let closing = false;
  let probe: Promise<void> | undefined;
  const lost = (reason: string) => {
    if (closing || !outage) return;
    outage.unreachable(reason);
    probe ??= waitForRedis(connection, () => closing).then(
      () => {
        probe = undefined;
        if (!closing) outage.reachable();
      },
      () => (probe = undefined),
    );
  };
  worker.on('error', (err) => {
    if (isConnectionLoss(err)) lost(err.message);
  });
  worker.on('ioredis:close', () => lost('the connection closed'));
  worker.on('stalled', () => METRICS.stalls.inc());
  await worker.waitUntilReady();
  return {
    worker,
    // Stop taking jobs, let the running ones finish, then close without BullMQ's own wait for them:
    // after a long Redis outage that wait never ends (its fetch loop waits on a connection it lost).
    close: async () => {
      closing = true;
      await worker.pause(true).catch(() => undefined);
      if (active > 0) await new Promise<void>((resolve) => idle.push(resolve));
      await worker.close(true);
      await ownStore?.close();
    },
  };
}

/** Resolves once Redis answers a PING on a connection of its own (or `stopped()` turns true). */
async function waitForRedis(connection: ConnectionOptions, stopped: () => boolean): Promise<void> {
  const { Redis } = await import('ioredis');
  const { url, ...rest } = connection as ConnectionOptions & { url?: string };
  const options = { ...rest, maxRetriesPerRequest: null, lazyConnect: false, retryStrategy: (times: number) => (stopped() ? null : Math.min(100 * 2 ** times, 1_000)) };
  const client = url === undefined ? new Redis(options as never) : new Redis(url, options as never);
  client.on('error', () => undefined);
  try {
    await client.ping();
  } finally {
    client.disconnect();
  }
}

/**
 * Whether this worker may run `job` (see the header): resolves, or throws JobRefusal. Libraries
 * found in the store are remembered by digest (content-addressed: the answer never changes).
 */
function admission(domain: ActuatorDomain, local: InProcessDispatcher, store: () => Pick<JournalStore, 'getBlob' | 'getMetadata'>, hintFor: (domain: string) => string): (job: Job) => Promise<void> {
  const known = new Set(domain.libraries.map((l) => libraryDigest(l)));
  const found = new Set<string>();
  return async (job) => {
    const jobDomain = job.domain ?? (job.library !== undefined && !known.has(job.library) ? (await store().getMetadata(job.invocation))?.domain : undefined);
    if (jobDomain !== undefined && jobDomain !== domain.name) {
      throw new JobRefusal('worker.wrong_domain', `job ${job.key} is for domain ${jobDomain}, and this worker runs domain ${domain.name} on the same queue: give each domain its own queue (drop --queue), or start \`${hintFor(jobDomain)}\``);
    }
    if (job.library === undefined || known.has(job.library)) return; // one of its own versions: runJob checks the rest, as in-process
    if (!local.knows(job.actuator)) {
      throw new JobRefusal('worker.no_actuator', `job ${job.key} (library ${job.library}) names actuator ${job.actuator}, which this worker's domain ${domain.name} does not have: run a worker of a build of ${domain.name} that has it`);
    }
    const badArgs = local.checkArgs(job.actuator, job.args);
    if (badArgs !== undefined) {
      throw new JobRefusal('worker.bad_args', `job ${job.key} (library ${job.library}): ${badArgs}; run a worker of the build of ${domain.name} that pinned this library`);
    }
    if (found.has(job.library)) return;
    const library = await readLibraryBlob(store(), job.library).catch((err: unknown) => {
      throw new JobRefusal('worker.library_unknown', `job ${job.key}: library ${job.library} cannot be read from the store (${(err as Error)?.message ?? String(err)})`);
    });
    if (!library) {
      throw new JobRefusal('worker.library_unknown', `job ${job.key} pinned library ${job.library}, which is not in this worker's store: give the worker the runtime's --redis URL and --redis-prefix`);
    }
    found.add(job.library);
  };
}
