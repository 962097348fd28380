/**
 * One job — an attempt of a step, of a compensation, or an observation — from its write-ahead record
 * to its completion, and, under flag 13, the refusals in between: a refusal is not an attempt.
 *
 * A worker that will not run a job (another domain's, a library its store lacks, an actuator its
 * build lacks, args its schema rejects — queue/worker.ts) refuses it without running anything. Under
 * flag 13 the runtime, the journal's single writer, records `step.refused` {step, key, attempt, code,
 * reason, worker} (appended at once: it announces the job's return to the queue) and dispatches the
 * SAME attempt again, as a job of its own: its id is derived from the number of refusals the
 * journal holds for the attempt (queue/bullmq.ts jobIdOf), so a resume after a crash anywhere in
 * here finds the job it added before — it is awaited or read, never added twice — and a refused job,
 * which never ran, is never counted as an attempt. Replay reads the refusals back and never looks at
 * a clock or a queue.
 *
 * The wait is bounded (live only, on a monotonic clock): from the first refusal this process sees —
 * or, on a resume, from its first re-dispatch after the recorded ones — a job that no capable worker
 * has taken after `refusalWaitMs` (the runtime option, default 5 min) stops the run: the actor throws
 * `step.no_capable_worker` and the invocation rests suspended (a runtime-side cause: the reason lives
 * in the store's status note and the snapshot's suspension, not in the journal), naming the workers
 * that refused and what to do. `weft resume` (or serve) goes on from the recorded refusals. Re-
 * dispatches are spaced by a backoff that grows with the refusals recorded (250 ms doubling, at most
 * 30 s), so a refusing worker cannot fill the journal; they are not raced against the pinned step
 * timeout (the step has not started running), only the first dispatch of an attempt is.
 *
 * A cancel or a passed deadline is looked for after each refusal of a step (nothing of the step is in
 * flight then), so a run suspended in a refusal wait can be cancelled at once.
 *
 * Without flag 13 a refusal is what it was: a transient `step.failed` of its code, one attempt spent
 * (a failed observation or compensation, likewise).
 */
import { WeftError } from '../../journal/errors.js';
import type { JournalRecord, RecordKind } from '../../journal/records.js';
import type { RecordDraft } from '../../journal/writer.js';
import type { InvocationContext, Stop } from '../../machines/context.js';
import { FLAG_REFUSALS, hasFlag } from '../../machines/flags.js';
import { bounded } from '../../machines/untrusted-text.js';
import type { Job, JobOutcome } from '../../queue/dispatcher.js';
import type { EpochServices } from './services.js';
import { stopRequested } from './stop-check.js';

/** How long a refused step waits for a capable worker before the run rests suspended, by default. */
export const DEFAULT_REFUSAL_WAIT_MS = 5 * 60_000;

/** The delay of the re-dispatch after the n-th refusal (n ≥ 1): 250 ms doubling, at most 30 s. */
export function refusalBackoffMs(refusals: number): number {
  return Math.min(250 * 2 ** Math.min(refusals - 1, 16), 30_000);
}

type Refused = JournalRecord<'step.refused'>['body'];

/**
 * The refusals of one job (a step's attempt, a compensation's, an observation) and the bounded wait
 * they start: live only, on a monotonic clock. Replay passes refusals read back and never waits.
 */
export class RefusalWait {
  readonly counts: boolean;
  private readonly waitMs: number;
  private readonly seen: Refused[] = [];
  private deadline: number | undefined;

  constructor(
    private readonly s: EpochServices,
    private readonly ctx: InvocationContext,
    /** What the job runs, for the suspension's reason. */
    private readonly what: { step: number; actuator: string; label: string },
  ) {
    this.counts = hasFlag(ctx.pin, FLAG_REFUSALS);
    this.waitMs = s.refusalWaitMs ?? DEFAULT_REFUSAL_WAIT_MS;
  }

  /** The job fields of its dispatch after `refusals` recorded refusals: its id's part, its delay, how long it may stay untaken. */
  job(refusals: number): Pick<Job, 'refusals' | 'untakenAfterMs' | 'delayMs'> {
    if (refusals === 0) return {};
    this.deadline ??= performance.now() + this.waitMs;
    return { refusals, delayMs: refusalBackoffMs(refusals), untakenAfterMs: Math.max(0, this.deadline - performance.now()) };
  }

  /** The record a refusal makes (flag 13), or undefined for any other outcome. */
  draft(outcome: JobOutcome, body: Pick<Refused, 'step' | 'key' | 'attempt'>): RecordDraft<'step.refused'> | undefined {
    if (!this.counts || outcome.ok || !outcome.refused) return undefined;
    return { kind: 'step.refused', epoch: this.ctx.epoch, body: { ...body, code: outcome.failure.code, reason: bounded(outcome.refused.reason, 400), worker: outcome.worker ?? 'unnamed' } };
  }

  /** No worker took the re-dispatched job in time: the error the run suspends on. */
  untaken(outcome: JobOutcome): WeftError | undefined {
    return !outcome.ok && outcome.untaken ? this.noCapableWorker() : undefined;
  }

  /** A refusal recorded (`written`: now, live) or read back. */
  noted(refused: Refused, written: boolean): void {
    this.seen.push(refused);
    if (written) this.deadline ??= performance.now() + this.waitMs; // read back: the wait starts at this process's first re-dispatch
  }

  /** Throws once a live wait is over (after a refusal written now, before the job goes back on the queue). */
  checkOver(): void {
    if (this.deadline !== undefined && performance.now() >= this.deadline) throw this.noCapableWorker();
  }

  /**
   * The runtime-side cause the invocation rests suspended on: no worker that can run the job took it
   * within the wait. Names the fix first (the reason is clipped at 500 characters), then the refusing
   * workers (at most three, with how many more).
   */
  private noCapableWorker(): WeftError {
    const workers = new Map<string, string>();
    for (const r of this.seen) workers.set(r.worker, r.code);
    const named = [...workers].slice(0, 3).map(([worker, code]) => `${bounded(worker, 60)} (${code}: ${FIX[code] ?? 'it cannot run it'})`);
    const more = workers.size > 3 ? ` and ${workers.size - 3} more` : '';
    const start = this.s.workerHint === undefined ? `a worker of this invocation's domain whose build has ${this.what.actuator}` : `\`${this.s.workerHint}\``;
    return new WeftError(
      'step.no_capable_worker',
      'transient',
      `no worker that can run ${this.what.label} (${this.what.actuator}) took it within ${this.waitMs} ms: start ${start}, then weft resume ${this.ctx.invocation}. ` +
        `Refused ${this.seen.length} time(s), no attempt spent, by ${named.join(', ') || 'no worker'}${more}`,
    );
  }
}

/** One job — a step's attempt, a compensation's, an observation — and how its outcome is recorded. */
export interface RefusableJob<K extends RecordKind> {
  /** What it runs, for the suspension's reason; `step`, `key` and `attempt` go into its refusals. */
  what: { step: number; key: string; attempt: number; actuator: string; label: string };
  /** The completion kinds the journal may hold for it (besides `step.refused`) and which record is its. */
  expected: { kinds: readonly K[]; describe: string; accepts: (record: JournalRecord<K> | JournalRecord<'step.refused'>) => boolean };
  /** Its write-ahead record was written just now (no job for it can exist yet). */
  fresh: boolean;
  /** Dispatch it; `again`: the fields of a re-dispatch after refusals (none for the first). */
  send(again: Pick<Job, 'fresh' | 'delayMs' | 'refusals' | 'untakenAfterMs'>, first: boolean): Promise<JobOutcome>;
  /** The completion record of an outcome that is no refusal. */
  record(outcome: JobOutcome): RecordDraft<K>;
  /**
   * A step's attempt: after each refusal, before the job goes back on the queue, a cancel or a passed
   * deadline stops the run there (stop-check.ts: recorded live, read back on replay). Nothing of the
   * step is in flight then — the refused job never ran and the next is not added — so it needs no undoing.
   */
  stops?: boolean;
}

/**
 * The job's completion, with its refusals recorded before it (flag 13) — read back on replay and
 * resume, dispatched again live until a worker runs it or the bounded wait ends (then it throws
 * `step.no_capable_worker`, and the run rests suspended).
 */
export function completeRefusable<K extends RecordKind>(s: EpochServices, ctx: InvocationContext, j: RefusableJob<K> & { stops: true }): Promise<JournalRecord<K> | { stop: Stop }>;
export function completeRefusable<K extends RecordKind>(s: EpochServices, ctx: InvocationContext, j: RefusableJob<K> & { stops?: false }): Promise<JournalRecord<K>>;
export async function completeRefusable<K extends RecordKind>(s: EpochServices, ctx: InvocationContext, j: RefusableJob<K>): Promise<JournalRecord<K> | { stop: Stop }> {
  const rec = s.recorder();
  const wait = new RefusalWait(s, ctx, j.what);
  const kinds = (wait.counts ? [...j.expected.kinds, 'step.refused'] : j.expected.kinds) as readonly (K | 'step.refused')[];
  let fresh = j.fresh;
  for (let refusals = 0; ; refusals++) {
    const record = await rec.complete<K | 'step.refused'>(
      { kinds, epoch: ctx.epoch, describe: j.expected.describe, accepts: j.expected.accepts as (r: JournalRecord<K | 'step.refused'>) => boolean },
      async () => {
        const again = wait.job(refusals);
        // A dispatcher that does not delay jobs itself (not BullMQ) gets the backoff slept here.
        if (again.delayMs !== undefined && !s.dispatcher?.delaysJobs) await s.sleep(again.delayMs);
        const outcome = await j.send({ fresh, ...again }, refusals === 0);
        const untaken = wait.untaken(outcome);
        if (untaken) throw untaken;
        return wait.draft(outcome, { step: j.what.step, key: j.what.key, attempt: j.what.attempt }) ?? j.record(outcome);
      },
    );
    if (record.kind !== 'step.refused') return record as JournalRecord<K>;
    fresh = rec.lastWritten;
    wait.noted((record as JournalRecord<'step.refused'>).body, rec.lastWritten);
    const stop = j.stops ? await stopRequested(s, ctx, 'step') : undefined;
    if (stop) return { stop };
    if (fresh) wait.checkOver();
  }
}

/** What each refusal code asks of a person. */
const FIX: Record<string, string> = {
  'worker.wrong_domain': 'it runs another domain: drop its --queue',
  'worker.library_unknown': "its store lacks the pinned library: give it the runtime's --redis and --redis-prefix, or upgrade it",
  'worker.no_actuator': 'its build lacks the actuator: upgrade it',
  'worker.bad_args': 'its build has another schema for the actuator: upgrade it',
};
