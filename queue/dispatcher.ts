/**
 * The dispatcher contract: how the runtime hands a world-effect job to whatever runs actuators —
 * in this process (in-process.ts, the embedded default) or on workers (BullMQ, distributed mode).
 *
 * A job is one attempt of one step (or of its compensation). Its idempotency key is the same for
 * every attempt and every re-dispatch after a crash; the attempt number travels separately. The
 * dispatcher never retries on its own: the runtime, the journal's single writer, records each
 * attempt and decides on the next. A dispatcher answers with the result or a classified failure;
 * it throws only when it cannot reach the actuator at all.
 */
import type { ActuatorContext } from '../actors/actuator.js';
import type { FailureClass } from '../journal/errors.js';

/** One attempt of one step: what to run, and the context the actuator will see (minus the PRNG, rebuilt from `seed`). */
export interface Job extends Pick<ActuatorContext, 'key' | 'attempt' | 'invocation' | 'world' | 'tenant' | 'epoch' | 'step' | 'asOf'> {
  /** `run` applies the step's effect; `compensate` undoes a completed one; `shadow` asks what `run` would return, changing nothing (a shadow run). */
  op: 'run' | 'compensate' | 'shadow';
  actuator: string;
  args: unknown;
  /** For `compensate`: the result the step completed with. */
  result?: unknown;
  /** The pinned seed; the actuator's PRNG is derived from it and the key. */
  seed: string;
  /** The digest of the library the invocation pinned: a worker runs it if that library is one of its domain's, or is in the store. */
  library?: string;
  /** The domain whose runtime dispatched it (set by the BullMQ dispatcher): a worker of another domain refuses it. Never journaled. */
  domain?: string;
  /** The W3C traceparent of the step attempt that dispatched it, when that was traced (telemetry/job-context.ts). Never journaled. */
  traceparent?: string;
  /** Backoff before this attempt, for a dispatcher that delays jobs itself (`delaysJobs`). */
  delayMs?: number;
  /** Its write-ahead record was written just now (not read back on a resume): no job for it can exist yet. */
  fresh?: boolean;
  /** It only reads (an epoch's observation): run again on a resume, never awaited from an earlier process. */
  readOnly?: boolean;
  /**
   * How many refusals of this attempt the journal holds (flag 13, `step.refused`): a dispatcher
   * that keeps jobs by id gives each re-dispatch after a refusal an id of its own (bullmq.ts jobIdOf).
   */
  refusals?: number;
  /**
   * A re-dispatch after a refusal: if no worker has taken the job within this many ms, the dispatch
   * answers `untaken` (the job stays queued, to be awaited on a resume); once taken it is awaited.
   */
  untakenAfterMs?: number;
}

/** Refusal codes: a worker that would not run a job it cannot (worker.ts) — never an attempt of the step under flag 13. */
export const REFUSAL_CODES: ReadonlySet<string> = new Set(['worker.wrong_domain', 'worker.library_unknown', 'worker.no_actuator', 'worker.bad_args']);

/**
 * What one attempt came to. `worker`: who ran it — a `weft worker`'s `<host>:<pid>` (worker.ts), or
 * `in-process` — recorded in the completion's unhashed envelope (`meta.worker`), never in its hash.
 */
export type JobOutcome =
  | { ok: true; result: unknown; worker?: string }
  | {
      ok: false;
      failure: { class: FailureClass; code: string; message: string };
      worker?: string;
      /** A worker refused the job without running it (its code one of REFUSAL_CODES; `worker`: who, when it said; `reason`: its words). Before flag 13, a transient failure. */
      refused?: { reason: string };
      /** No worker took the job within `Job.untakenAfterMs`: it stays queued. Never recorded. */
      untaken?: true;
    };

export interface Dispatcher {
  readonly name: string;
  /** True when a retry's backoff is the job's own delay (a delayed job) rather than a sleep in the runtime. */
  readonly delaysJobs?: boolean;
  /** True when an actuator of this name can be dispatched (fail closed before writing ahead). */
  knows(actuator: string): boolean;
  /** True when the actuator can undo its own effect (it has a `compensate`). */
  canCompensate(actuator: string): boolean;
  /** True when the actuator gives a shadow result (it has a `shadow`): a shadow run asks it with op `shadow`. Absent: none can. */
  canShadow?(actuator: string): boolean;
  /** Validate args against the actuator's schema; returns the reason they fail, if they do. */
  checkArgs(actuator: string, args: unknown): string | undefined;
  dispatch(job: Job): Promise<JobOutcome>;
  /**
   * A dispatcher that can wake sleepers itself (BullMQ: a delayed job): `scheduleWake` is called when
   * an invocation rests on a durable sleep, and `serve` consumes the wake-ups with `onWake`. Without
   * them, serve's listing finds sleepers that are due.
   */
  scheduleWake?(invocation: string, at: string): Promise<void>;
  onWake?(wake: (invocation: string) => void): Promise<{ close(): Promise<void> }>;
  close(): Promise<void>;
}
