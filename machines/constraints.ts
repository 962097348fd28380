/**
 * Task constraints, checked — the library's own bounds on any fragment of steps that achieves a
 * compound task (declared in its `constraints`, htn/library/schema.ts). The runtime cannot guess
 * which argument of a goal is a budget, so the library says it as data: `sum of card.charge amount
 * ≤ ?budget`, `count of airline.hold ≤ 1`, `only flights.search, hotels.search`, `taxi.book binds
 * from = ?from`. They matter most on the gap path, where the model authors the fragment and no
 * method fixed its shape.
 *
 * `checkTaskConstraints` binds the goal's args to the task's params (in declaration order), checks
 * each constraint over the steps in declared order and returns the first violation as a bounded,
 * human reason naming the constraint, the computed value and the bound; `undefined` when every
 * constraint holds, the task declares none, or the goal names an operator (operators have none).
 * Fail closed: a step whose summed arg is not a number, or a param bound the goal does not bind to
 * a number, is a violation; so is a bound arg a step does not pass, or a term the goal leaves unbound.
 *
 * A binding's reason names the step, each broken arg (in sorted order: a library read back from its
 * canonical blob has sorted keys), the value the goal asked for and the one the step passes — the
 * values quoted and clipped, since a model wrote them.
 *
 * A run-wide count (`per: 'run'`) adds the world effects earlier epochs left done for the same task
 * (`earlier`, from `earlierEffects`): "the same task" is the goal's task NAME, not its args — the
 * model chooses the args, so keying on them would let it escape the bound by asking again with
 * another budget or day. Pure.
 */
import { boundArgs, describeConstraint, isVariable, type Library, type TaskConstraint } from '../htn/library/schema.js';
import type { EpochStep, InvocationContext } from './context.js';
import { clip, QUOTE_CHARS, quoteValue } from './untrusted-text.js';

/** Longest constraint description in a reason (an `only` list can be long). */
const DESCRIBE_MAX = 120;

/** A world effect an earlier epoch of the run left done, with the task its epoch achieved. */
export interface EarlierEffect {
  epoch: number;
  task: string;
  actuator: string;
}

/**
 * What earlier epochs of this run — and, for a fork, of its parent up to the fork's boundary — left
 * done: the context's `kept` effects (completed, not compensated: what `spent` counts too), each
 * with the goal task of its epoch from the outcomes the run carries. An effect whose epoch has no
 * outcome counts for every task (fail closed).
 */
export function earlierEffects(ctx: Pick<InvocationContext, 'kept' | 'outcomes'>): EarlierEffect[] {
  const taskOf = new Map(ctx.outcomes.map((o) => [o.epoch, o.goal.task]));
  return (ctx.kept ?? []).map((k) => ({ epoch: k.epoch, task: taskOf.get(k.epoch) ?? '*', actuator: k.actuator }));
}

function stepName(steps: readonly EpochStep[], i: number): string {
  return `step ${i} (${clip(steps[i]!.operator, QUOTE_CHARS)})`;
}

/** The first violated constraint of `goal.task` over `steps`, as a reason; undefined if all hold. */
export function checkTaskConstraints(
  library: Library,
  goal: { task: string; args: ReadonlyArray<string | number> },
  steps: readonly EpochStep[],
  earlier: readonly EarlierEffect[] = [],
): string | undefined {
  const task = library.tasks.find((t) => t.name === goal.task);
  if (!task?.constraints?.length) return undefined;
  const binding = new Map<string, string | number | undefined>(task.params.map((p, i) => [p.name, goal.args[i]]));
  const before = earlier.filter((e) => e.task === goal.task || e.task === '*');
  for (const constraint of task.constraints) {
    const failure = violation(constraint, binding, steps, before);
    if (failure !== undefined) return `${clip(task.name, QUOTE_CHARS)}'s constraint "${clip(describeConstraint(constraint), DESCRIBE_MAX)}" fails: ${failure}`;
  }
  return undefined;
}

/** Why `c` fails over `steps` (the part after "fails: "), or undefined if it holds. */
function violation(c: TaskConstraint, binding: ReadonlyMap<string, string | number | undefined>, steps: readonly EpochStep[], before: readonly EarlierEffect[]): string | undefined {
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
    const done = c.per === 'run' ? before.filter((e) => c.count === '*' || e.actuator === c.count) : [];
    if (n + done.length <= c.atMost) return undefined;
    if (done.length === 0) return `${n} > ${c.atMost}`;
    const epochs = [...new Set(done.map((e) => e.epoch))].sort((a, b) => a - b);
    return `${n + done.length} > ${c.atMost} (${n} in this fragment, ${done.length} already done by epoch${epochs.length === 1 ? '' : 's'} ${epochs.join(', ')} of this run)`;
  }
  if ('bind' in c) return bindingViolation(c, binding, steps);
  const allowed = new Set(c.only);
  const i = steps.findIndex((s) => s.actuator === undefined || !allowed.has(s.actuator));
  if (i < 0) return undefined;
  const actuator = steps[i]!.actuator;
  return actuator === undefined ? `${stepName(steps, i)} dispatches no actuator` : `${stepName(steps, i)} dispatches ${clip(actuator, QUOTE_CHARS)}`;
}

/** The first step dispatching `c.bind` that passes another value than the goal asked, with every arg it breaks. */
function bindingViolation(c: Extract<TaskConstraint, { bind: string }>, binding: ReadonlyMap<string, string | number | undefined>, steps: readonly EpochStep[]): string | undefined {
  const names = boundArgs(c);
  for (const name of names) {
    const term = c.args[name]!;
    if (isVariable(term) && binding.get(term) === undefined) return `the goal binds ${clip(term, QUOTE_CHARS)} to nothing (it has too few args)`;
  }
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (step.actuator !== c.bind) continue;
    const broken: string[] = [];
    for (const name of names) {
      const term = c.args[name]!;
      const expected = isVariable(term) ? binding.get(term)! : term;
      const actual = step.actuatorArgs?.[name];
      if (actual === expected) continue;
      const asked = isVariable(term) ? `the goal binds ${clip(term, QUOTE_CHARS)} to ${quoteValue(expected)}` : `the task fixes it to ${quoteValue(expected)}`;
      broken.push(`${clip(name, QUOTE_CHARS)} ${quoteValue(actual)} where ${asked}`);
    }
    if (broken.length > 0) return `${stepName(steps, i)} passes ${broken.join('; ')}`;
  }
  return undefined;
}
