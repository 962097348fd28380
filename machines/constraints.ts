/**
 * Task constraints, checked — the library's own bounds on any fragment of steps that achieves a
 * compound task (declared in its `constraints`, htn/library/schema.ts). The runtime cannot guess
 * which argument of a goal is a budget, so the library says it as data: `sum of card.charge amount
 * ≤ ?budget`, `count of airline.hold ≤ 1`, `only flights.search, hotels.search`. They matter most on
 * the gap path, where the model authors the fragment and no method fixed its shape.
 *
 * `checkTaskConstraints` binds the goal's args to the task's params (in declaration order), checks
 * each constraint over the steps in declared order and returns the first violation as a bounded,
 * human reason naming the constraint, the computed value and the bound; `undefined` when every
 * constraint holds, the task declares none, or the goal names an operator (operators have none).
 * Fail closed: a step whose summed arg is not a number, or a param bound the goal does not bind to
 * a number, is a violation. Pure.
 */
import { describeConstraint, type Library, type TaskConstraint } from '../htn/library/schema.js';
import type { EpochStep } from './context.js';
import { clip, QUOTE_CHARS, quoteValue } from './untrusted-text.js';

/** Longest constraint description in a reason (an `only` list can be long). */
const DESCRIBE_MAX = 120;


function stepName(steps: readonly EpochStep[], i: number): string {
  return `step ${i} (${clip(steps[i]!.operator, QUOTE_CHARS)})`;
}

/** The first violated constraint of `goal.task` over `steps`, as a reason; undefined if all hold. */
export function checkTaskConstraints(
  library: Library,
  goal: { task: string; args: ReadonlyArray<string | number> },
  steps: readonly EpochStep[],
): string | undefined {
  const task = library.tasks.find((t) => t.name === goal.task);
  if (!task?.constraints?.length) return undefined;
  const binding = new Map<string, string | number | undefined>(task.params.map((p, i) => [p.name, goal.args[i]]));
  for (const constraint of task.constraints) {
    const failure = violation(constraint, binding, steps);
    if (failure !== undefined) return `${clip(task.name, QUOTE_CHARS)}'s constraint "${clip(describeConstraint(constraint), DESCRIBE_MAX)}" fails: ${failure}`;
  }
  return undefined;
}

/** Why `c` fails over `steps` (the part after "fails: "), or undefined if it holds. */
function violation(c: TaskConstraint, binding: ReadonlyMap<string, string | number | undefined>, steps: readonly EpochStep[]): string | undefined {
  if ('sum' in c) {
    let bound: number;
    if (typeof c.atMost === 'number') bound = c.atMost;
    else {
      const value = binding.get(c.atMost);
      if (typeof value !== 'number' || !Number.isFinite(value)) return `the goal binds ${clip(c.atMost, QUOTE_CHARS)} to ${quoteValue(value)}, not a number`;
      bound = value;
    }
    let total = 0;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      if (step.actuator !== c.sum) continue;
      const value = step.actuatorArgs?.[c.arg];
      if (typeof value !== 'number' || !Number.isFinite(value)) return `${stepName(steps, i)} has ${clip(c.arg, QUOTE_CHARS)} ${quoteValue(value)}, not a number`;
      // A negative term would let one step pay for another's excess: the sum is over what is moved.
      if (value < 0) return `${stepName(steps, i)} has ${clip(c.arg, QUOTE_CHARS)} ${value}, a negative amount (a sum constraint counts only amounts of 0 or more)`;
      total += value;
    }
    return total <= bound ? undefined : `${total} > ${bound}`;
  }
  if ('count' in c) {
    const n = steps.filter((s) => (c.count === '*' ? !s.readOnly : s.actuator === c.count)).length;
    return n <= c.atMost ? undefined : `${n} > ${c.atMost}`;
  }
  const allowed = new Set(c.only);
  const i = steps.findIndex((s) => s.actuator === undefined || !allowed.has(s.actuator));
  if (i < 0) return undefined;
  const actuator = steps[i]!.actuator;
  return actuator === undefined ? `${stepName(steps, i)} dispatches no actuator` : `${stepName(steps, i)} dispatches ${clip(actuator, QUOTE_CHARS)}`;
}
