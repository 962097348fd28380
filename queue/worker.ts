/**
 * A worker: the process that runs a domain's actuators for jobs on a BullMQ queue (bullmq.ts) —
 * `weft worker --domain <d> --redis URL` or `startWorker(...)` in code.
 *
 * - Each job is one attempt of one step; it runs exactly as in the runtime's own process
 *   (`runJob`: args checked, actuator called with the seeded context, result checked, failures
 *   classified), and the outcome — success or the actuator's classified failure — is the job's
 *   return value. The worker never retries: the runtime owns attempts.
 * - A job whose pinned library digest this domain does not have is refused (the job fails, which
 *   the runtime records as a transient failure): a worker of another version must not act for it.
 * - `maxStalledCount: 0`: a job whose worker died is failed as stalled, never silently re-run by
 *   BullMQ; the runtime records the stall and dispatches the next attempt as a new job, and the
 *   actuator dedupes on the idempotency key.
 * - `close()` (SIGTERM in the CLI) stops taking jobs and waits for the running ones to finish.
 */
import { Worker, type ConnectionOptions } from 'bullmq';
import type { Actuator } from '../actors/actuator.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Domain } from '../runtime/domain.js';
import { bullPrefix, connectionOf, DEFAULT_QUEUE } from './bullmq.js';
import type { Job, JobOutcome } from './dispatcher.js';
import { InProcessDispatcher } from './in-process.js';

export interface WorkerOptions {
  domain: Domain;
  connection: string | ConnectionOptions;
  queue?: string;
  prefix?: string;
  concurrency?: number;
  /** How long a job's lock lasts before BullMQ may call it stalled (default 30 s): a dead worker's job is noticed within 1.5 × this. */
  lockDurationMs?: number;
  /** What the domain's factories get: its local folder and, in this mode, the Redis it may share state in. */
  stateDir?: string;
  redis?: { url: string; prefix: string };
  /** Replaces the domain's actuators (crash injection in tests). */
  actuators?: readonly Actuator[];
}

export interface RunningWorker {
  readonly worker: Worker;
  /** Stop taking jobs; wait for the running ones. */
  close(): Promise<void>;
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
  const digests = new Set(domain.libraries.map((l) => libraryDigest(l)));
  const connection = connectionOf(options.connection);
  const worker = new Worker<Job, JobOutcome>(
    options.queue ?? DEFAULT_QUEUE,
    async (bullJob) => {
      const job = bullJob.data;
      if (job.library !== undefined && !digests.has(job.library)) {
        throw new Error(`this worker's domain ${domain.name} has no library ${job.library} (the job's invocation pinned it): run a worker of that version`);
      }
      return local.dispatch(job);
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
    },
  );
  worker.on('error', () => undefined);
  await worker.waitUntilReady();
  return {
    worker,
    close: () => worker.close(),
  };
}
