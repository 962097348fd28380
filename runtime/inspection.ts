/**
 * Inspection is observation only: an XState inspection observer given to `createRuntime({ inspect })`
 * (or to `runtime.replay(…, { inspect })`) is wrapped so that whatever it does — throw, or throw from
 * `error`/`complete` — never reaches the machine: a throwing observer would otherwise make
 * `runtime.start` throw, or an actor's transition fail. An observer that is slow is slow on its own
 * time only if it defers its work; Weft's own (the Stately relay's tap) only queues.
 */
import type { InspectionEvent, Observer } from 'xstate';

export type InspectionObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** `observer`, made unable to throw into the run. */
export function guardedObserver(observer: InspectionObserver): Observer<InspectionEvent> {
  const target: Partial<Observer<InspectionEvent>> = typeof observer === 'function' ? { next: observer } : observer;
  const safely =
    <A extends unknown[]>(call: ((...args: A) => void) | undefined) =>
    (...args: A) => {
      try {
        call?.(...args);
      } catch {
        /* observation only: the run goes on */
      }
    };
  return {
    next: safely((event: InspectionEvent) => target.next?.call(target, event)),
    error: safely((err: unknown) => target.error?.call(target, err)),
    complete: safely(() => target.complete?.call(target)),
  };
}
