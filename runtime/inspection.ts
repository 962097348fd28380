/**
 * Inspection is observation only: an XState inspection observer given to `createRuntime({ inspect })`
 * (or to `runtime.replay(…, { inspect })`) is wrapped so that nothing it does can fail or stall a run.
 *
 * - **Throwing.** Whatever it throws — from `next`, `error` or `complete` — never reaches the
 *   machine: a throwing observer would otherwise make `runtime.start` throw, or a transition fail.
 *   It goes on being called (a throw may be about one event only).
 * - **Slow.** XState calls an observer synchronously, inside the transition, so an observer that
 *   does its work there holds the run for that long. Each call is timed: once `slowCalls` calls
 *   have each taken more than `slowCallMs`, the observer is detached — never called again by this
 *   runtime — and a warning says so, once. An observer should only queue and work later, as Weft's
 *   own does (the Stately relay's tap). An observer that returns a promise is not waited for.
 *
 * The clock here only decides whether the observer is still called; it never reaches a journal.
 */
import type { InspectionEvent, Observer } from 'xstate';

export type InspectionObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

export interface ObserverBudget {
  /** A call that takes longer than this (ms) is a slow one (default 50). */
  slowCallMs: number;
  /** After this many slow calls the observer is detached (default 3). */
  slowCalls: number;
  /** The clock calls are timed with (default performance.now). */
  now: () => number;
  /** Told once, when the observer is detached (default: process.emitWarning). */
  onDetached: (reason: string) => void;
}

export const DEFAULT_OBSERVER_BUDGET: ObserverBudget = {
  slowCallMs: 50,
  slowCalls: 3,
  now: () => performance.now(),
  onDetached: (reason) => process.emitWarning(reason, { code: 'WEFT_INSPECT_OBSERVER_DETACHED' }),
};

/**
 * Marks an observer that only queues its work (Weft's own, the Stately relay's tap): it is still
 * kept from throwing into the run, but its calls are not timed — two clock reads per inspection
 * event are a cost of their own on a busy run.
 */
export const QUEUES_ONLY = Symbol.for('weft.inspection.queuesOnly');

/** `observer`, made unable to throw into the run, and detached once it has been slow (see the header). */
export function guardedObserver(observer: InspectionObserver, budget: Partial<ObserverBudget> = {}): Observer<InspectionEvent> {
  const { slowCallMs, slowCalls, now, onDetached } = { ...DEFAULT_OBSERVER_BUDGET, ...budget };
  // An observer that only queues is not timed (QUEUES_ONLY): the same guard, without the clock.
  const timed = (observer as { [QUEUES_ONLY]?: boolean })[QUEUES_ONLY] !== true;
  const target: Partial<Observer<InspectionEvent>> = typeof observer === 'function' ? { next: observer } : observer;
  let slow = 0;
  let slowest = 0;
  let detached = false;
  const safely =
    <A extends unknown[]>(call: ((...args: A) => void) | undefined) =>
    (...args: A) => {
      if (detached || call === undefined) return;
      const started = timed ? now() : 0;
      try {
        call(...args);
      } catch {
        /* observation only: the run goes on */
      }
      if (!timed) return;
      const took = now() - started;
      if (took <= slowCallMs) return;
      slow++;
      slowest = Math.max(slowest, took);
      if (slow < slowCalls) return;
      detached = true;
      try {
        onDetached(
          `weft: the inspection observer was detached: ${slow} of its calls took more than ${slowCallMs} ms each (the slowest ${Math.round(slowest)} ms), ` +
            'and XState calls it inside each transition, so it was holding the run. An observer should only queue its work and do it later ' +
            '(the Stately relay, inspector/stately, does); the run goes on without it.',
        );
      } catch {
        /* observation only */
      }
    };
  return {
    next: safely(target.next ? (event: InspectionEvent) => target.next!.call(target, event) : undefined),
    error: safely(target.error ? (err: unknown) => target.error!.call(target, err) : undefined),
    complete: safely(target.complete ? () => target.complete!.call(target) : undefined),
  };
}
