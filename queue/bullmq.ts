/**
 * The BullMQ dispatcher — the distributed mode's default: world effects run on `weft worker`
 * processes, with the in-process dispatcher's contract (dispatcher.ts).
 *
 * - **One job per attempt.** The job id is `<idempotency key>.a<attempt>` (an idempotency key is
 *   `<invocation>.<epoch>.<step>[.undo|.observe]`, so ids never hold BullMQ's `:`). BullMQ's own
 *   `attempts` stays 1, and workers run with `maxStalledCount: 0`: the runtime — the journal's single
 *   writer — owns retries and records each attempt. A stalled job (its worker died holding it) ends
 *   `failed`, which this dispatcher answers as a transient failure (`worker.stalled`); the runtime
 *   records it, and its next attempt is a new job. The actuator dedupes on the idempotency key.
 * - **Awaiting.** Completions come through ONE shared `QueueEvents` per dispatcher (never a
 *   `waitUntilFinished` per job), with a time-out. A wait that times out is not an outcome of the
 *   step: it throws (the runtime suspends, class `runtime`), and nothing is recorded for the step.
 * - **Re-dispatch after a crash.** The job for an attempt may already exist (the runtime wrote
 *   `step.dispatched`, added the job, and died). It is never re-added: a completed or failed job's
 *   stored outcome is read, a waiting or active one is awaited. Finished jobs are kept for
 *   `keepFinishedSeconds` (default 7 days) so a runtime resumed within that time reads them; after
 *   it, the job is gone and the attempt is dispatched again under the same key, which the actuator
 *   dedupes.
 * - **Observations are asked again.** A read-only job (`readOnly`: an epoch's observation) gets a job
 *   id of its own per dispatch (`<key>.a<attempt>.r<dispatcher>-<n>`): a resumed runtime observes
 *   the world afresh rather than awaiting what an earlier process saw, so it needs no look-up.
 * - **Backoff is a delayed job**: the runtime does not sleep before a retry; the next attempt's job
 *   is added with the backoff as its delay (`delaysJobs`).
 * - **No worker.** A job nobody takes within `noWorkerAfterMs` while the queue has no worker gets one
 *   warning naming the command that starts one; the runtime keeps waiting.
 *
 * - **One queue per domain**: `weft-effects-<domain>` (queueForDomain) unless a queue is given, and
 *   every job carries its domain's name, so a worker of another domain never runs it.
 *
 * Workers answer with the job outcome as their return value (queue/worker.ts): an actuator's own
 * failure is an outcome, never a BullMQ failure. A worker that refuses a job (another domain, an
 * actuator it lacks, a library not in the store) fails it with the refusal's code and its name; that
 * is answered as a transient failure of that code (`worker.wrong_domain`, …) marked `refused`. Under
 * flag 13 the runtime records it as `step.refused` and dispatches the same attempt again as a job of
 * its own (`<key>.a<attempt>.x<n>`, jobIdOf), with `untakenAfterMs` bounding how long it waits.
 * - **Queue owners**: a dispatcher of a domain records, on its first use of a queue, that its domain
 *   owns it (queue-owner.ts); a worker of another domain then refuses to start there.
 *
 * BullMQ itself (and ioredis under it) is imported when a dispatcher is made, not when this module
 * is: a runtime or command on the embedded default never pays for loading it.
 *
 * Over 400 lines on purpose: one dispatcher class — jobs, their outcomes, wake-ups and closing
 * share one connection and one set of waiters.
 */
import { randomUUID } from 'node:crypto';
import type { ConnectionOptions, Queue, QueueEvents } from 'bullmq';
import type { Actuator } from '../actors/actuator.js';
import { WeftError } from '../journal/errors.js';
import { reconnectStrategy } from '../redis/index.js';
import { CatalogueDispatcher } from './catalogue.js';
import { redisUrlWord, shellWord } from './shell-words.js';
import { REFUSAL_CODES, type Job, type JobOutcome } from './dispatcher.js';
import { claimQueue } from './queue-owner.js';
import { traceparentOf, wantJobContexts } from '../telemetry/job-context.js';

/**
 * The queue a domain's jobs go on unless `--queue` says otherwise: `weft-effects-<domain name>`, so
 * that two domains sharing one Redis never take each other's jobs (a domain name is letters, digits,
 * `.`, `_` and `-`: never BullMQ's `:`). The queue name is not recorded anywhere: an invocation's
 * journal is the same whatever queue ran its effects.
 */
export function queueForDomain(domain: string): string {
  return `weft-effects-${domain}`;
}

/** The queue of a dispatcher given neither a queue nor a domain (a runtime made from bare libraries). */
export const UNNAMED_DOMAIN_QUEUE = 'weft-effects';

/**
 * The command that starts a worker for these jobs, as a user can run it: the domain as `--domain`
 * takes it (a built-in's name, a module's path), the Redis URL (`"$WEFT_REDIS_URL"` when it holds a
 * password: shell-words.ts), and `--redis-prefix` / `--queue`
 * whenever they are not the defaults the worker would pick itself.
 */
export function workerCommand(options: { domain: string; domainName?: string; redisUrl?: string; redisPrefix?: string; queue?: string; redisWord?: string }): string {
  const name = options.domainName ?? options.domain;
  // `redisWord`: how a command printed only to the person who gave the URL names it (cli/hints.ts); never in what is stored.
  const redis = options.redisWord ?? (options.redisUrl === undefined ? '<url>' : redisUrlWord(options.redisUrl));
  const parts = ['weft worker', `--domain ${shellWord(options.domain)}`, `--redis ${redis}`];
  if (options.redisPrefix !== undefined && options.redisPrefix !== 'weft') parts.push(`--redis-prefix ${shellWord(options.redisPrefix)}`);
  if (options.queue !== undefined && options.queue !== queueForDomain(name)) parts.push(`--queue ${shellWord(options.queue)}`);
  return parts.join(' ');
}

/** BullMQ's key prefix under a Weft Redis prefix (`weft` → `weft:bull`): runtimes and workers must agree on it. */
export function bullPrefix(redisPrefix = 'weft'): string {
  return `${redisPrefix}:bull`;
}

/** BullMQ connection options from a Redis URL or options. */
export function connectionOf(connection: string | ConnectionOptions): ConnectionOptions {
  return typeof connection === 'string' ? { url: connection } : connection;
}

/**
 * Connection options that stop reconnecting after `giveUpAfterMs` unreachable (a client instance is
 * left as it is). Commands wait for the reconnect meanwhile (no per-command retry limit): the budget
 * alone decides, so a command that fails means the connection has given up.
 *
 * With no budget (a long-lived `weft worker` or `serve`) the connection reconnects for ever, its
 * backoff bounded at one second (reconnectStrategy) — not BullMQ's default, which backs off to 20 s
 * between attempts: after an outage of a minute a worker then logged Redis reachable again within
 * two seconds but took its next job some 18 s later, and a run waited that long. A retryStrategy the
 * caller gave is kept.
 */
export function withReconnect(connection: ConnectionOptions, giveUpAfterMs: number | undefined): ConnectionOptions {
  if (typeof (connection as { connect?: unknown }).connect === 'function') return connection;
  if (giveUpAfterMs === undefined) {
    if ((connection as { retryStrategy?: unknown }).retryStrategy !== undefined) return connection;
    return { ...connection, retryStrategy: reconnectStrategy(undefined) } as ConnectionOptions;
  }
  return { ...connection, retryStrategy: reconnectStrategy(giveUpAfterMs), maxRetriesPerRequest: null } as ConnectionOptions;
}

export interface BullMqDispatcherOptions {
  /** Where BullMQ keeps the queue: a Redis URL or BullMQ connection options. */
  connection: string | ConnectionOptions;
  /** The queue's name (default `queueForDomain(domain)`); workers of the same domain consume it. */
  queue?: string;
  /** The domain's name: the default queue, and stamped on every job so that a worker of another domain refuses it. */
  domain?: string;
  /** BullMQ's key prefix (default `weft:bull`). */
  prefix?: string;
  /** The domain's actuators — their names and schemas only (certification); never run here. */
  actuators: readonly Actuator[];
  /** How long one job may take from dispatch to outcome before the wait gives up (default 10 min). */
  waitTimeoutMs?: number;
  /** Warn once when a job is still waiting this long and no worker consumes the queue (default 5 s). */
  noWorkerAfterMs?: number;
  /** How often a waiting dispatch looks at its job directly, besides the event stream (default 1 s). */
  recheckMs?: number;
  /** How long finished jobs (and their outcomes) are kept (default 7 days). */
  keepFinishedSeconds?: number;
  /** The command a user runs to start a worker, for the warning. */
  workerHint?: string;
  /**
   * Stop reconnecting once Redis has been unreachable this long, and fail a waiting dispatch (a
   * transient `dispatch.redis_unreachable`: nothing is recorded for the step). Default: reconnect for ever.
   */
  giveUpAfterMs?: number;
  warn?: (message: string) => void;
}

type Waiter = (outcome: JobOutcome) => void;

/**
 * A job id for one attempt of one idempotency key — and, after the journal recorded `n` refusals of
 * that attempt (flag 13), for its n-th re-dispatch: `<key>.a<attempt>.x<n>` (a refused job's id stays
 * taken by the failed job, so the attempt goes back on the queue as a job of its own). Derived from
 * the journal alone, so a resume finds the job it dispatched before the crash.
 */
export function jobIdOf(job: Pick<Job, 'key' | 'attempt' | 'refusals'>): string {
  return `${job.key}.a${job.attempt}${job.refusals ? `.x${job.refusals}` : ''}`;
}

export class BullMqDispatcher extends CatalogueDispatcher {
  readonly name: string;
  /** A retry's backoff is a delayed job: the runtime does not sleep, BullMQ holds the job back. */
  readonly delaysJobs = true;
  private readonly queueName: string;
  /** BullMQ, its queue and its event stream, once loaded and connected. */
  private readonly ready: Promise<{ bull: typeof import('bullmq'); queue: Queue; events: QueueEvents }>;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private warned = false;
  private closing: Promise<void> | undefined;
  private wakeQueue: Queue | undefined;
  private readonly connection: ConnectionOptions;
  private readonly prefix: string;
  /** This dispatcher's part of a read-only job's id, and how many such jobs it has added. */
  private readonly instance = randomUUID().replaceAll('-', '').slice(0, 12);
  private readOnlyJobs = 0;
  /** The queue and event stream once made (closed by close() even if they never connected). */
  private parts: { queue: Queue; events: QueueEvents } | undefined;

  constructor(private readonly options: BullMqDispatcherOptions) {
    super(options.actuators);
    wantJobContexts(); // its jobs carry their dispatch span's traceparent (telemetry/job-context.ts)
    const queueName = options.queue ?? (options.domain === undefined ? UNNAMED_DOMAIN_QUEUE : queueForDomain(options.domain));
    this.queueName = queueName;
    this.name = `bullmq:${queueName}`;
    const connection = withReconnect(connectionOf(options.connection), options.giveUpAfterMs);
    const prefix = options.prefix ?? bullPrefix();
    this.connection = connection;
    this.prefix = prefix;
    this.ready = import('bullmq').then(async (bull) => {
      const queue = new bull.Queue(queueName, { connection, prefix });
      const events = new bull.QueueEvents(queueName, { connection, prefix });
      events.on('completed', ({ jobId, returnvalue }) => this.settle(jobId, outcomeOf(returnvalue)));
      events.on('failed', ({ jobId, failedReason }) => this.settle(jobId, failureOf(failedReason)));
      queue.on('error', () => undefined);
      events.on('error', () => undefined);
      this.parts = { queue, events };
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
      if (options.domain !== undefined) await this.claim(options.domain);
      return { bull, queue, events };
    });
    this.ready.catch(() => undefined);
  }

  /**
   * Record that this dispatcher's domain owns its queue (queue-owner.ts), so that a worker of another
   * domain refuses to start on it; warn once when another domain owns it already (its workers refuse
   * these jobs). Never fails the dispatcher: the record is a help, not a lock.
   */
  private async claim(domain: string): Promise<void> {
    const owner = await claimQueue(this.connection, this.prefix, this.queueName, domain).catch(() => domain);
    if (owner === domain) return;
    (this.options.warn ?? ((m: string) => process.stderr.write(`weft: ${m}\n`)))(
      `queue ${this.queueName} belongs to domain ${owner}: its workers refuse domain ${domain}'s jobs — give ${domain} its own queue (drop --queue)`,
    );
  }

  async dispatch(job: Job): Promise<JobOutcome> {
    if (!this.catalogue.knows(job.actuator)) {
      return { ok: false, failure: { class: 'policy', code: 'actuator.unknown', message: `no actuator named ${job.actuator} is registered with this dispatcher` } };
    }
    const { queue } = await this.ready;
    const id = job.readOnly ? `${jobIdOf(job)}.r${this.instance}-${++this.readOnlyJobs}` : jobIdOf(job);
    // Listen before looking, so a completion between the look and the listen is not missed.
    const outcome = this.waitFor(id, job.readOnly === true);
    // A dispatch written ahead just now has no job yet; one read back on a resume may (see the header).
    if (job.fresh || job.readOnly || !(await this.lookUp(id))) {
      const keep = this.options.keepFinishedSeconds ?? 7 * 24 * 3600;
      const delay = job.delayMs !== undefined && job.delayMs > 0 ? { delay: job.delayMs } : {};
      // Beside the job: its domain and, when its dispatch is traced, its traceparent (never journaled).
      const traceparent = traceparentOf(job.key, job.attempt);
      const data: Job = { ...job, ...(this.options.domain === undefined ? {} : { domain: this.options.domain }), ...(traceparent === undefined ? {} : { traceparent }) };
      await queue.add(job.actuator, data, { jobId: id, attempts: 1, removeOnComplete: { age: keep }, removeOnFail: { age: keep }, ...delay });
    }
    const noWorker = setTimeout(() => void this.warnIfNoWorker(id), this.options.noWorkerAfterMs ?? 5_000);
    // A re-dispatch after a refusal (flag 13): answered `untaken` if no worker has taken it in time.
    const untaken = job.untakenAfterMs === undefined ? undefined : setTimeout(() => void this.settleIfUntaken(id), Math.max(0, job.untakenAfterMs));
    // The event stream is the fast path; a completion it missed (its reader had not started yet, a
    // reconnect) is found by looking at the job itself now and then. With a giveUpAfterMs, a look
    // fails only once the connection has given up (see withReconnect): the wait fails then too,
    // rather than for ever.
    const budget = this.options.giveUpAfterMs;
    const recheck = setInterval(
      () => void this.lookUp(id).catch((err: unknown) => (budget === undefined ? undefined : outcome.fail(unreachable(id, budget, err)))),
      this.options.recheckMs ?? 1_000,
    );
    try {
      return await outcome.promise;
    } finally {
      clearTimeout(noWorker);
      clearTimeout(untaken);
      clearInterval(recheck);
      outcome.cancel();
    }
  }

  /** Whether the job exists; a finished one settles its waiters with its stored outcome. */
  private async lookUp(id: string): Promise<boolean> {
    // The state first, then the data: BullMQ stores a job's return value (or failure reason) in the
    // same step that moves it to completed (failed), so data read after such a state is final —
    // read before it, a job finishing in between would show its empty return value.
    const { bull, queue } = await this.ready;
    const state = await queue.getJobState(id);
    if (state === 'unknown') return false;
    if (state !== 'completed' && state !== 'failed') return true;
    const existing = await bull.Job.fromId(queue, id);
    if (!existing) return true; // removed meanwhile: its outcome comes as an event, or the wait times out
    if (state === 'completed') this.settle(id, outcomeOf(existing.returnvalue));
    else this.settle(id, failureOf(existing.failedReason));
    return true;
  }

  /** Settle the job's waiters with `untaken` when no worker has taken it (it waits, or is delayed); a taken job is awaited. */
  private async settleIfUntaken(id: string): Promise<void> {
    const { queue } = await this.ready;
    const state = await queue.getJobState(id).catch(() => 'unknown');
    if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized' && state !== 'wait') return;
    this.settle(id, { ok: false, untaken: true, failure: { class: 'transient', code: 'dispatch.untaken', message: `job ${id} was not taken by any worker in time; it stays queued` } });
  }

  /** The command that starts a worker for this queue's jobs, as the warnings name it. */
  get workerHint(): string {
    return this.options.workerHint ?? `weft worker --domain ${this.options.domain ?? '<domain>'} --redis <url>`;
  }

  /** The queue of wake-ups for durable sleeps: `<queue>-timers`. */
  get wakeQueueName(): string {
    return `${this.queueName}-timers`;
  }

  /**
   * A delayed job that wakes `invocation` at `at` (ISO 8601): a `serve` process consumes the
   * wake-up queue and resumes it (`onWake`). One job per invocation and wake time.
   */
  async scheduleWake(invocation: string, at: string): Promise<void> {
    const { bull } = await this.ready;
    this.wakeQueue ??= new bull.Queue(this.wakeQueueName, { connection: this.connection, prefix: this.prefix });
    const when = Date.parse(at);
    await this.wakeQueue.add('wake', { invocation, at }, { jobId: `${invocation}.wake.${when}`, delay: Math.max(0, when - Date.now()), attempts: 1, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } });
  }

  /** Consume the wake-up queue: `wake(invocation)` when a durable sleep's delayed job fires. */
  async onWake(wake: (invocation: string) => void): Promise<{ close(): Promise<void> }> {
    const { bull } = await this.ready;
    const worker = new bull.Worker(this.wakeQueueName, async (job) => wake((job.data as { invocation: string }).invocation), { connection: this.connection, prefix: this.prefix });
    worker.on('error', () => undefined);
    try {
      await worker.waitUntilReady();
    } catch (err) {
      // Not left running on a connection it never had: serve asks for another consumer later.
      await worker.close(true).catch(() => undefined);
      throw err;
    }
    // Forced: a wake-up's work is one synchronous call, and BullMQ's graceful close can wait for ever after a Redis outage.
    return { close: () => worker.close(true) };
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      await this.ready.catch(() => undefined);
      const parts = this.parts;
      await Promise.allSettled([...(parts ? [parts.events, parts.queue] : []), ...(this.wakeQueue ? [this.wakeQueue] : [])].map((part) => closeWithin(part, CLOSE_WAIT_MS)));
    })();
    return this.closing;
  }

  private waitFor(id: string, readOnly: boolean): { promise: Promise<JobOutcome>; cancel(): void; fail(err: Error): void } {
    let waiter!: Waiter;
    let fail!: (err: Error) => void;
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.options.waitTimeoutMs ?? 600_000;
    const promise = new Promise<JobOutcome>((resolve, reject) => {
      waiter = resolve;
      fail = reject;
      timer = setTimeout(
        () =>
          reject(
            new WeftError(
              'dispatch.wait_timeout',
              'transient',
              `job ${id} had no outcome after ${timeoutMs} ms (nothing is recorded for it): resume the invocation once a worker runs — ${readOnly ? 'the observation is asked again' : 'the job is awaited, not added again'}`,
            ),
          ),
        timeoutMs,
      );
    });
    const set = this.waiters.get(id) ?? new Set<Waiter>();
    set.add(waiter);
    this.waiters.set(id, set);
    return {
      promise,
      fail,
      cancel: () => {
        clearTimeout(timer);
        set.delete(waiter);
        if (set.size === 0) this.waiters.delete(id);
      },
    };
  }

  private settle(id: string, outcome: JobOutcome): void {
    for (const waiter of this.waiters.get(id) ?? []) waiter(outcome);
  }

  private async warnIfNoWorker(id: string): Promise<void> {
    if (this.warned) return;
    this.warned = true; // before any await: several waiting dispatches give one warning
    const { bull, queue } = await this.ready; // connected: dispatch() awaited it before this timer
    const job = await bull.Job.fromId(queue, id).catch(() => undefined);
    const state = await job?.getState().catch(() => 'unknown');
    if ((state !== 'waiting' && state !== 'prioritized') || (await queue.getWorkersCount().catch(() => 1)) > 0) {
      this.warned = false; // not this time: a later wait may still need the warning
      return;
    }
    const hint = this.workerHint;
    (this.options.warn ?? ((m: string) => process.stderr.write(`weft: ${m}\n`)))(
      `no worker is consuming queue ${this.queueName}: start one with \`${hint}\` (or run with --dispatch in-process); waiting`,
    );
  }
}

/** How long a graceful close may take before the connection is dropped instead. */
const CLOSE_WAIT_MS = 2_000;

/**
 * Close a BullMQ queue or event stream, or — if that has not finished within `ms` — drop its
 * connections and return: after a long Redis outage BullMQ's graceful close can wait for ever, and
 * would hold a stopping process open.
 */
export async function closeWithin(part: { close(): Promise<void>; disconnect(): Promise<void> }, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    // Not awaited: a disconnect waits for an 'end' event that a connection stuck this way may never emit.
    if ((await Promise.race([part.close().then(() => 'closed' as const), late])) === 'late') void part.disconnect().catch(() => undefined);
  } finally {
    clearTimeout(timer);
  }
}

/** A wait given up because Redis has been unreachable for `budget` ms: transient, nothing recorded for the step. */
function unreachable(id: string, budget: number, cause: unknown): WeftError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new WeftError(
    'dispatch.redis_unreachable',
    'transient',
    `job ${id}: Redis has been unreachable for ${budget} ms (${reason.slice(0, 200)}); nothing is recorded for the step: resume the invocation once Redis is back — the job is awaited, not added again`,
  );
}

/** A worker's return value: the job outcome it computed (anything else is a broken worker). */
function outcomeOf(value: unknown): JobOutcome {
  const parsed = typeof value === 'string' ? safeJson(value) : value;
  if (parsed && typeof parsed === 'object' && typeof (parsed as { ok?: unknown }).ok === 'boolean') return parsed as JobOutcome;
  return { ok: false, failure: { class: 'permanent', code: 'worker.bad_outcome', message: `a worker returned ${JSON.stringify(value)?.slice(0, 200)}, not a job outcome` } };
}

/**
 * A job BullMQ failed: stalled (its worker died) or refused by a worker (worker.ts: its reason
 * starts with the refusal's code and, from this version on, names the worker — `worker.wrong_domain:
 * [worker <host>:<pid>] …`; an older worker's names none). Transient; a refusal of one of
 * REFUSAL_CODES is marked `refused`, with the worker when it said (under flag 13 no attempt is spent).
 */
export function failureOf(reason: string | undefined): JobOutcome {
  const text = reason ?? 'unknown';
  // A refusal first: its reason (a worker's words) may say anything, "stalled" included.
  const coded = /^(worker\.[a-z_]+): (?:\[worker ([\x20-\x5c\x5e-\x7e]{1,200})\] )?/.exec(text);
  const code = coded?.[1] ?? 'worker.refused';
  const failure = { class: 'transient' as const, code, message: `a worker refused the job: ${text.slice(0, 400)}` };
  if (coded && REFUSAL_CODES.has(code)) return { ok: false, failure, refused: { reason: text.slice(coded[0].length, coded[0].length + 400) }, ...(coded[2] === undefined ? {} : { worker: coded[2] }) };
  if (/stalled/i.test(text)) return { ok: false, failure: { class: 'transient', code: 'worker.stalled', message: `the worker running this job stopped (${text.slice(0, 200)})` } };
  return { ok: false, failure };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
