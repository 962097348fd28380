/**
 * Pivots: a world-effect step that declares no inverse and is not read-only. Once it has run,
 * nothing undoes it; a step after it that fails leaves the epoch half done with no way back. A
 * pack's `pivot-last` rule denies, at admission, an epoch that puts a pivot before any other step
 * (every dispatch may fail; a durable sleep is not a dispatch).
 *
 * An inverse is declared on the step (the library operator's `compensate` binding, in the plan) or
 * on its actuator (`Actuator.compensate`, which the plan does not show). Admission is pure over the
 * plan and the pinned pack — a replay has no actuators to ask — so the rule lists the actuators that
 * undo themselves (`undoable`); one it does not list counts as a pivot, which refuses more, never
 * less. Pure.
 */
import type { EpochStep } from '../machines/context.js';
import { SLEEP_ACTUATOR } from '../machines/sleep.js';
import { clip, QUOTE_CHARS } from '../machines/untrusted-text.js';

/** A world effect with no declared inverse (`undoable`: the actuators that undo their own effect). */
export function isPivot(step: EpochStep, undoable: ReadonlySet<string> = new Set()): boolean {
  if (step.readOnly || step.compensate !== undefined || step.actuator === SLEEP_ACTUATOR) return false;
  return step.actuator === undefined || !undoable.has(step.actuator);
}

/** A step that may fail once dispatched: any dispatch (a durable sleep only waits). */
function mayFail(step: EpochStep): boolean {
  return step.actuator !== SLEEP_ACTUATOR;
}

function named(step: EpochStep, index: number): string {
  const op = clip(step.operator, QUOTE_CHARS);
  return step.actuator === undefined ? `step ${index} (${op})` : `step ${index} (${op} → ${clip(step.actuator, QUOTE_CHARS)})`;
}

/** The first pivot followed by a step that may fail, as a reason naming both; undefined when there is none. */
export function pivotBeforeFallible(steps: readonly EpochStep[], undoable: ReadonlySet<string> = new Set()): string | undefined {
  for (let i = 0; i < steps.length; i++) {
    if (!isPivot(steps[i]!, undoable)) continue;
    const next = steps.findIndex((s, j) => j > i && mayFail(s));
    if (next < 0) continue;
    return `${named(steps[i]!, i)} is a pivot (a world effect with no declared compensation) and ${named(steps[next]!, next)} may fail after it, when nothing can undo it; the pack puts pivots last`;
  }
  return undefined;
}
