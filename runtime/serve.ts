/**
 * `runtime.serve()` / `weft serve`: the long-running process that keeps invocations moving without
 * anyone typing `resume`. Each round it lists the invocations that have not ended (with Redis, from
 * the status index's open set, so a poll costs nothing per ended invocation) and resumes:
 *
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
 * Several serve processes share the work: the lease decides who runs each invocation, and one that
 * finds it taken (LeaseHeldError) leaves it to the other. Hibernated invocations stay asleep (a
 * person hibernated them), and those awaiting approval wait for `weft approve`.
 */
import { LeaseHeldError } from '../journal/errors.js';
import type { InvocationSummary } from './list.js';
import type { Runtime } from './runtime.js';

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
}

export type ServeEvent =
  | { kind: 'resuming'; id: string; why: 'interrupted' | 'suspended' | 'timer' | 'approval'; reason?: string }
  | { kind: 'stopped'; id: string; status: string; reason?: string }
  | { kind: 'skipped'; id: string; reason: string }
  | { kind: 'error'; id?: string; message: string };

/** Why serve would pick this invocation up now, or undefined. */
export function servable(row: InvocationSummary, now: number = Date.now()): 'interrupted' | 'suspended' | 'timer' | 'approval' | undefined {
  if (row.status === 'interrupted') return 'interrupted';
  if (row.status === 'awaiting_approval') return row.decided ? 'approval' : undefined;
  if (row.status === 'waiting_timer') return row.wakeAt !== undefined && Date.parse(row.wakeAt) <= now ? 'timer' : undefined;
  if (row.status === 'suspended' && (row.suspendedAs === 'transient' || row.suspendedAs === 'runtime')) return 'suspended';
  return undefined;
}

export async function serve(runtime: Runtime, options: ServeOptions = {}): Promise<void> {
  const pollMs = options.pollMs ?? 1_000;
  const base = options.backoffMs ?? 2_000;
  const cap = options.maxBackoffMs ?? 300_000;
  const now = options.now ?? Date.now;
  const emit = options.onEvent ?? (() => undefined);
  const running = new Map<string, Promise<void>>();
  const backoff = new Map<string, { failures: number; notBefore: number }>();

  const take = (row: InvocationSummary, why: 'interrupted' | 'suspended' | 'timer' | 'approval') => {
    emit({ kind: 'resuming', id: row.id, why, ...(row.reason === undefined ? {} : { reason: row.reason }) });
    const run = (async () => {
      try {
        const handle = await runtime.resume(row.id);
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

  // With BullMQ, a durable sleep's delayed job wakes it at once; the listing below is the fallback.
  const wakeups = await runtime.onWake((id) => {
    if (running.has(id) || options.signal?.aborted) return;
    take({ id, tenant: '?', intent: '?', records: 0, status: 'waiting_timer' }, 'timer');
  })?.catch((err: unknown) => {
    emit({ kind: 'error', message: `cannot consume wake-ups: ${(err as Error)?.message ?? String(err)}` });
    return undefined;
  });

  const repairMs = options.repairMs ?? 30_000;
  let repairedAt: number | undefined;
  while (!options.signal?.aborted) {
    let rows: InvocationSummary[] = [];
    try {
      // Repairs keep to the real clock (an injected `now` may be frozen or virtual, for backoff).
      const repair = repairedAt === undefined || Date.now() - repairedAt >= repairMs;
      rows = await runtime.listOpen({ repair });
      if (repair) repairedAt = Date.now();
    } catch (err) {
      emit({ kind: 'error', message: `cannot list the store: ${(err as Error)?.message ?? String(err)}` });
    }
    for (const row of rows) {
      if (options.signal?.aborted) break;
      const why = servable(row, now());
      if (!why || running.has(row.id)) continue;
      const wait = backoff.get(row.id);
      if (wait && now() < wait.notBefore) continue;
      take(row, why);
    }
    await pause(pollMs, options.signal);
  }
  await wakeups?.close().catch(() => undefined);
  await Promise.allSettled([...running.values()]);
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
