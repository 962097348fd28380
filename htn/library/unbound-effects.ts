/**
 * A library check that warns, never refuses: a compound task with NO method is the gap path — the
 * model authors every fragment that achieves it — and what keeps such a fragment to its goal is the
 * task's constraints (schema.ts). An effectful operator the task may use, whose actuator args no
 * constraint ties down, lets an authored fragment do something else than the goal asked: book a
 * ride from another airport, on another day, for another traveller (issue 30, defect 1).
 *
 * `unboundEffectWarnings` lists, for each method-less task, each non-readOnly operator it may use —
 * those whose actuator its `only` constraints allow (every one when it has none), not ruled out by
 * a `count … atMost 0` — with the args of its actuator that neither a `bind` constraint of the task
 * ties to a term nor a `sum` constraint bounds. A valid library may have such warnings (a task
 * whose model is trusted with a free arg is a choice); `weft policy check --domain` and `weft mine`
 * print them. Pure and deterministic: tasks and operators in declared order, arg names sorted.
 */
import type { Library } from './schema.js';

export interface UnboundEffectWarning {
  task: string;
  operator: string;
  actuator: string;
  /** The actuator args no constraint of the task ties down, sorted. */
  args: string[];
  message: string;
}

export function unboundEffectWarnings(library: Library): UnboundEffectWarning[] {
  const warnings: UnboundEffectWarning[] = [];
  const covered = new Set(library.methods.map((m) => m.task.task));
  for (const task of library.tasks) {
    if (covered.has(task.name)) continue;
    const constraints = task.constraints ?? [];
    const onlies = constraints.flatMap((c) => ('only' in c ? [new Set(c.only)] : []));
    const none = (actuator: string) => constraints.some((c) => 'count' in c && c.atMost === 0 && (c.count === '*' || c.count === actuator));
    for (const op of library.operators) {
      if (!op.actuator || op.readOnly) continue;
      const actuator = op.actuator.actuator;
      if (onlies.some((only) => !only.has(actuator)) || none(actuator)) continue;
      const tied = new Set<string>();
      for (const c of constraints) {
        if ('bind' in c && c.bind === actuator) for (const a of Object.keys(c.args)) tied.add(a);
        if ('sum' in c && c.sum === actuator) tied.add(c.arg);
      }
      const args = Object.keys(op.actuator.args).filter((a) => !tied.has(a)).sort();
      if (args.length === 0) continue;
      const example = `{ bind: '${actuator}', args: { ${args.map((a) => `${a}: '?…'`).join(', ')} } }`;
      warnings.push({
        task: task.name,
        operator: op.name,
        actuator,
        args,
        message:
          `task ${task.name} has no method, so the model authors its fragments: operator ${op.name} dispatches ${actuator} with ` +
          `${args.join(', ')}, which no constraint of ${task.name} ties to the goal — a fragment may pass any value there ` +
          `(bind them to the task's params: ${example})`,
      });
    }
  }
  return warnings;
}
