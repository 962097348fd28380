/**
 * `runtime.serve()` / `weft serve`: the long-running process that keeps invocations moving without
 * anyone typing `resume`. Each round it lists the invocations that have not ended (with Redis, from
 * the status index's open set, so a poll costs nothing per ended invocation) and resumes:
 *
 * - a **pending** one — pinned by a client (`client.start`) and never taken up;
 * - an **interrupted** invocation — not ended, not resting, and no live runtime holds its lease
 *   (its process died: the lease expired, or its holder is a dead process on this host);
 * - a **suspended** one whose suspension a retry can fix — class `transient` (the model endpoint
 *   failed after the pinned attempts, an observation failed) or `runtime` (the store was down, a
 *   wait for a worker timed out) — with exponential backoff per invocation (`backoffMs` doubling up
 *   to `maxBackoffMs`), never one suspended for credentials or an endpoint, which a person fixes.
 *
 * - one **awaiting approval** whose decision is in its inbox (`weft approve … --leave-to-serve`,
 *   written from any process): resuming it records the decision and goes on;
 * - a **sleeping** one (`waiting_timer`, a durable `weft.sleep` step) whose time has come — never
 *   before: a resume before its time would only rest it again. With BullMQ dispatch the runtime
 *   that put it to sleep added a delayed job, which wakes it here the moment it fires; the listing
 *   finds it too, if that job was lost.
 *
 * - a **hibernated or suspended** one with a request to resume in its inbox (the viewer's Resume:
 *   inspector/page-actions.ts): resumed as `weft resume` would, which clears the request;
 *
 * - a **resting** one (hibernated, awaiting approval, asleep, suspended) with a cancel waiting in its
 *   inbox (`weft cancel` from a process that could not take it up), or whose pinned deadline has
 *   passed: resuming it stops it first (runtime/cancel.ts) — `cancel.requested` or
 *   `deadline.passed`, the current epoch compensated, ended cancelled or failed, sealed. So a run
 *   hibernated past its deadline ends here.
 *
 * Several serve processes share the work: the lease decides who runs each invocation, and one that
 * finds it taken (LeaseHeldError) leaves it to the other. Hibernated invocations stay asleep (a
 * person hibernated them), and those awaiting approval wait for `weft approve`.
 *
 * - **One domain.** Only the invocations of the serving domain (`domain`, default the runtime's) are
 *   resumed: those whose store metadata names it, or — for a journal from before the store kept
 *   metadata — whose pinned library is one of the domain's (by digest, or by the stored library's
 *   name). Others are left alone, silently: another domain's serve runs them. The answer is kept per
 *   invocation while it is open (it never changes), so a poll costs nothing more for them; a store
 *   that cannot answer is asked again at the next poll, silently (serve-domain.ts).
 * - **Per invocation, where its effects run**: `runtimeFor(id)` may hand each resume a runtime of its
 *   own (the CLI's `--dispatch auto`: BullMQ when a worker consumes the domain's queue at that
 *   moment, else this process); default, the runtime given.
 * - **Outages**: when the store's connection closes (Redis), or it cannot be listed — an error, or no
 *   answer within `listTimeoutMs` — one `outage` event when that starts and one when a listing
 *   succeeds again (with how long it lasted), not one per poll. Polling never waits for the wake-up
 *   consumer to connect; one that could not connect in an outage is started again after it.
 */
import { LeaseHeldError } from '../journal/errors.js';
import type { Library } from '../htn/library/schema.js';
import { watchConnectionClosed } from '../journal/store.js';
import { Outage } from '../queue/outage.js';
import { isConnectionLoss } from '../redis/reconnect.js';
import type { InvocationSummary } from './list.js';
import type { ServableRuntime } from './servable-runtime.js';
import { pause } from './pause.js';
import { domainFilter } from './serve-domain.js';
import { isTenants } from './tenant-of.js';
import { countPoll } from '../telemetry/metrics.js';
import { startPollSpan } from '../telemetry/serve-spans.js';

export interface ServeOptions {
  /** How often the store is looked at (default 1 s). */
  pollMs?: number;
  /** First delay before retrying a suspended invocation, doubled per failure (default 2 s), up to `maxBackoffMs` (default 5 min). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Stop taking work when this aborts; `serve` returns once the runs it started have stopped. */
  signal?: AbortSignal;
  /** Told of everything serve does (the CLI prints it). */
  onEvent?: (event: ServeEvent) => void;
  /** Wall clock for backoff (default Date.now). */
  now?: () => number;
  /**
   * How often the listing first repairs what it reads (default 30 s; always on the first poll):
   * with Redis each poll reads only the invocations that have not ended (the open set), and a
   * repair brings that set in line with the whole index.
   */
  repairMs?: number;
  /**
   * How long one listing may take before it counts as failed (default 30 s): a command caught by a
   * dropped connection can stay unanswered for ever, and serve must go on polling (and say so).
   */
  listTimeoutMs?: number;
  /** The domain whose invocations are served (default the runtime's; a runtime without one serves every invocation). */
  domain?: { name: string; libraries: readonly Library[] };
  /** The runtime that resumes this invocation, chosen when it is taken (default the runtime given), and what it dispatches with, for the event. */
  runtimeFor?: (id: string) => Promise<{ runtime: ServableRuntime; dispatch?: string }>;
}

export type ServeEvent =
  | { kind: 'resuming'; id: string; why: ServeReason; reason?: string; dispatch?: string }
  | { kind: 'stopped'; id: string; status: string; reason?: string }
  | { kind: 'skipped'; id: string; reason: string }
  | { kind: 'error'; id?: string; message: string }
  // An outage concerns no invocation (`id` is there for code that reads every event's id).
  | { kind: 'outage'; state: 'started'; since: string; message: string; id?: undefined }
  | { kind: 'outage'; state: 'ended'; since: string; ms: number; id?: undefined };

/** Why serve picks an invocation up. */
export type ServeReason = 'pending' | 'interrupted' | 'suspended' | 'timer' | 'approval' | 'cancel' | 'deadline' | 'resume';

const RESTING: ReadonlySet<string> = new Set(['hibernated', 'awaiting_approval', 'waiting_timer', 'suspended']);

/** Why serve would pick this invocation up now, or undefined. */
export function servable(row: InvocationSummary, now: number = Date.now()): ServeReason | undefined {
  if (row.status === 'pending') return 'pending';
  if (row.status === 'interrupted') return 'interrupted';
  if (RESTING.has(row.status) && row.cancelRequested) return 'cancel';
  if (RESTING.has(row.status) && row.deadline !== undefined && Date.parse(row.deadline) <= now) return 'deadline';
  if (row.status === 'awaiting_approval') return row.decided ? 'approval' : undefined;
  // A person asked for it to go on (the viewer's Resume, an inbox request): as `weft resume` would.
  if ((row.status === 'hibernated' || row.status === 'suspended') && row.resumeRequested) return 'resume';
  if (row.status === 'waiting_timer') return row.wakeAt !== undefined && Date.parse(row.wakeAt) <= now ? 'timer' : undefined;
  if (row.status === 'suspended' && (row.suspendedAs === 'transient' || row.suspendedAs === 'runtime')) return 'suspended';
  return undefined;
}

export async function serve(runtime: ServableRuntime, options: ServeOptions = {}): Promise<void> {
  const pollMs = options.pollMs ?? 1_000;
  const base = options.backoffMs ?? 2_000;
  const cap = options.maxBackoffMs ?? 300_000;
  const now = options.now ?? Date.now;
  const emit = options.onEvent ?? (() => undefined);
  const running = new Map<string, Promise<void>>();
  const backoff = new Map<string, { failures: number; notBefore: number }>();

  const domain = domainFilter(runtime.store, options.domain ?? runtime.options.domain);
  const scope = runtime.options.tenant;

  const take = (row: InvocationSummary, why: ServeReason) => {
    const run = (async () => {
      try {
        if (!(await domain.belongs(row.id))) return; // another domain's (or the store cannot say now): left alone, silently
        // A wake-up names only an id: a serve scoped to one tenant leaves another tenant's to that tenant's serve, silently.
        if (row.tenant === '?' && !(await isTenants(runtime.store, row.id, scope))) return;
        const chosen = options.runtimeFor ? await options.runtimeFor(row.id) : { runtime };
        emit({ kind: 'resuming', id: row.id, why, ...(row.reason === undefined ? {} : { reason: row.reason }), ...(chosen.dispatch === undefined ? {} : { dispatch: chosen.dispatch }) });
        const handle = await chosen.runtime.resume(row.id);
        const result = await handle.done;
        emit({ kind: 'stopped', id: row.id, status: result.status, ...(result.reason === undefined ? {} : { reason: result.reason }) });
        if (result.status === 'suspended') delay(row.id);
        else backoff.delete(row.id);
      } catch (err) {
        if (err instanceof LeaseHeldError) {
          emit({ kind: 'skipped', id: row.id, reason: 'another runtime holds it' });
        } else {
          emit({ kind: 'error', id: row.id, message: (err as Error)?.message ?? String(err) });
          delay(row.id);
        }
      } finally {
        running.delete(row.id);
      }
    })();
    running.set(row.id, run);
  };
  const delay = (id: string) => {
    const failures = (backoff.get(id)?.failures ?? 0) + 1;
    backoff.set(id, { failures, notBefore: now() + Math.min(cap, base * 2 ** (failures - 1)) });
  };

  const repairMs = options.repairMs ?? 30_000;
  const listTimeoutMs = options.listTimeoutMs ?? 30_000;
  let repairedAt: number | undefined;
  // Outages keep to the real clock too.
  const outage = new Outage((change) =>
    emit(change.state === 'started'
      ? { kind: 'outage', state: 'started', since: new Date(change.since).toISOString(), message: change.reason }
      : { kind: 'outage', state: 'ended', since: new Date(change.since).toISOString(), ms: change.ms }),
  );
  // An outage starts the moment the store's connection closes (Redis), not only when a listing gives
  // up after its reconnects; it ends when a listing succeeds.
  const unwatch = watchConnectionClosed(runtime.store, () => outage.unreachable(`the connection to ${runtime.store.name} closed`));

  // With BullMQ, a durable sleep's delayed job wakes it at once; the listing below is the fallback.
  // Not awaited: the listing must not wait for it (a Redis lost while it connects would hold serve
  // before its first poll for ever); a consumer that connects after serve stopped is closed at once.
  // One that could not connect because Redis went away is part of the outage, and is asked for again
  // once a listing succeeds.
  let wakeups: { close(): Promise<void> } | undefined;
  let wakeupsAgain = false;
  let stopped = false;
  const consumeWakeups = () =>
    runtime
      .onWake((id) => {
        if (running.has(id) || options.signal?.aborted) return;
        take({ id, tenant: '?', intent: '?', records: 0, status: 'waiting_timer' }, 'timer');
      })
      ?.then(
        (consumer) => {
          if (stopped) void consumer.close().catch(() => undefined);
          else wakeups = consumer;
        },
        (err: unknown) => {
          const message = `cannot consume wake-ups: ${(err as Error)?.message ?? String(err)}`;
          if (!isConnectionLoss(err)) return emit({ kind: 'error', message });
          outage.unreachable(message);
          wakeupsAgain = true;
        },
      );
  void consumeWakeups();

  while (!options.signal?.aborted) {
    let rows: InvocationSummary[] = [];
    // Repairs keep to the real clock (an injected `now` may be frozen or virtual, for backoff).
    const repair = repairedAt === undefined || Date.now() - repairedAt >= repairMs;
    const polled = startPollSpan(repair); // telemetry/serve-spans.ts
    try {
      rows = await within(listTimeoutMs, runtime.listOpen({ repair }), `the store did not answer a listing within ${listTimeoutMs} ms`);
      if (repair) repairedAt = Date.now();
      countPoll(rows.map((row) => row.status));
      polled.listed(rows.length);
      outage.reachable();
      if (wakeupsAgain && !stopped) {
        wakeupsAgain = false;
        void consumeWakeups();
      }
      domain.keepOnly([...rows.map((row) => row.id), ...running.keys()]); // what ended is forgotten
    } catch (err) {
      countPoll(undefined);
      polled.failed();
      outage.unreachable(`cannot list the store: ${(err as Error)?.message ?? String(err)}`);
    }
    for (const row of rows) {
      if (options.signal?.aborted) break;
      const why = servable(row, now());
      if (!why || running.has(row.id)) continue;
      const wait = backoff.get(row.id);
      if (wait && now() < wait.notBefore) continue;
      take(row, why);
      polled.took();
    }
    polled.end();
    await pause(pollMs, options.signal);
  }
  stopped = true;
  outage.stop();
  unwatch();
  await wakeups?.close().catch(() => undefined);
  await Promise.allSettled([...running.values()]);
}

/** `promise`, or a rejection with `message` once `ms` have passed (the promise itself is left to settle). */
function within<T>(ms: number, promise: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  promise.catch(() => undefined);
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

