/**
 * Failure explanations: why a task could not be decomposed at a given state. For a compound task,
 * every method in declared order with its outcome — head/arg-type mismatch, the first
 * precondition literal no binding satisfied (the deepest step of its query that ran out of
 * candidates), or "subtasks" when bindings exist and the failure is further down. For a primitive
 * task, the parameter type or precondition literal that does not hold.
 *
 * Called only on failures (and at most once per new furthest point of the search), after the
 * state has been restored to the one the task faced; it re-runs the queries, it does not record
 * anything during search.
 */
import type { Model } from './model.js';
import { QueryRun, type QueryContext } from './query.js';
import type { MethodAttempt, TaskFailure } from './result.js';

/** Args as values; an unbound logic variable (negative id) is shown as `?_k`. */
function shown(model: Model, args: Int32Array): (string | number)[] {
  return Array.from(args, (a) => (a >= 0 ? model.symbols.value(a) : `?_${-a - 1}`));
}

function unboundMask(args: Int32Array): number {
  let mask = 0;
  for (let i = 0; i < args.length; i++) if (args[i]! < 0) mask |= 1 << i;
  return mask;
}

export function explainTask(model: Model, ctx: QueryContext, task: number, args: Int32Array, stepsBefore: number): TaskFailure {
  const t = model.tasks[task]!;
  const mask = unboundMask(args);
  const methods: MethodAttempt[] = t.methods.map((m) => {
    const b = new Int32Array(m.slots).fill(-1);
    const slotTypes = m.query.slotTypes;
    for (let i = 0; i < m.taskArgs.length; i++) {
      if (args[i]! < 0) continue;
      const term = m.taskArgs[i]!;
      const v = args[i]!;
      const bad =
        term < 0 ? -term - 1 !== v : b[term] !== -1 ? b[term] !== v : model.types.members[slotTypes[term]!]![v] !== 1;
      if (bad) {
        const p = m.source.params.find((x) => x.name === m.source.task.args[i]);
        return {
          method: m.name,
          outcome: 'task-args',
          failed: p ? `${p.name} - ${p.type} = ${String(model.symbols.value(v))}` : `argument ${i + 1} = ${String(model.symbols.value(v))}`,
        };
      }
      if (term >= 0) b[term] = v;
    }
    const query = mask === 0 ? m.query : m.queryFor(mask);
    const run = new QueryRun(query, b, ctx);
    if (run.next()) return { method: m.name, outcome: 'subtasks' };
    const step = query.steps[run.deepest];
    return { method: m.name, outcome: 'precondition', ...(step ? { failed: describe(step.source, m) } : {}) };
  });
  return { task: t.name, args: shown(model, args), stepsBefore, methods };
}

export function explainOperator(model: Model, ctx: QueryContext, task: number, args: Int32Array, stepsBefore: number): TaskFailure {
  const t = model.tasks[task]!;
  const op = t.operator!;
  const base = { task: t.name, args: shown(model, args), stepsBefore };
  const mask = unboundMask(args);
  for (let i = 0; i < args.length; i++) {
    if (args[i]! >= 0 && model.types.members[op.paramTypes[i]!]![args[i]!] !== 1) {
      return { ...base, failed: `argument ${i + 1} (${String(model.symbols.value(args[i]!))}) is not of type ${model.types.names[op.paramTypes[i]!]}` };
    }
  }
  const b = new Int32Array(op.slots).fill(-1);
  for (let i = 0; i < args.length; i++) b[i] = args[i]! >= 0 ? args[i]! : -1;
  const pre = mask === 0 ? op.pre : op.preFor(mask);
  const run = new QueryRun(pre, b, ctx);
  if (run.next()) return { ...base, failed: '(applicable here; a later task failed)' };
  return { ...base, failed: pre.steps[run.deepest]?.source ?? '(precondition)' };
}

function describe(source: string, m: Model['tasks'][number]['methods'][number]): string {
  // Enumeration steps are named by slot; say which parameter that is.
  const match = /^\(bind (\d+)\)$/.exec(source);
  if (!match) return source;
  const p = m.source.params[Number(match[1])];
  return p ? `no object of type ${p.type} for ${p.name}` : 'no binding for a free variable';
}
