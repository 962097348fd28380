/**
 * Generalisation: a gap-path epoch (goal, authored fragment, observed state) becomes a candidate
 * method for the goal's task.
 *
 * - Constants that come from the goal's args become the method's parameters — the task's own
 *   parameter names (`?t`, `?from`, …).
 * - A constant the library declares (`email`) stays a constant.
 * - Any other constant must come from the observed state (an object, or an arg of a fact): it
 *   becomes a variable (`?v1`, `?v2`, … in the order the fragment first uses them, typed by the
 *   operator parameter it fills) that the method's precondition binds.
 * - The precondition is the conjunction of the fragment's operators' preconditions, instantiated,
 *   without those established earlier in the fragment: a positive atom an earlier step adds, a
 *   negated atom an earlier step deletes, and a compound condition over a predicate an earlier
 *   step changes (the planner re-checks every operator's precondition as it applies it, so a
 *   dropped condition is never skipped). Duplicates are kept once.
 * - A state variable no remaining positive atom binds is bound by a fact of the observed state
 *   that ties it to constants already generalised (the first such fact in canonical order).
 *
 * A constant from nowhere — neither the goal, nor the library, nor the state — means the fragment
 * does not generalise: the method could only ever memorise it. So does a constant whose origin one
 * epoch cannot tell (`ambiguity`): two goal args at once, or a number that is a goal arg and also
 * the value an observed fact gives (a fare equal to the budget). Positive atoms come first in the
 * precondition so that variables are bound before negations and evaluable tests read them.
 *
 * The result's `shape` is the canonical JSON of the method without its name: two epochs whose
 * fragments generalise to the same shape are one candidate. Pure and deterministic.
 */
import { canonicalize } from '../journal/canonical.js';
import { digestOf } from '../journal/digest.js';
import type { Formula, Goal, Library, Method, Param, Term, WorldState } from '../htn/library/schema.js';
import { conjuncts, plainEffects, substFormula, type Fresh } from './terms.js';

export type Generalised = { kind: 'method'; method: Method; shape: string } | { kind: 'not-general'; reason: string };

const keyOf = (c: string | number): string => `${typeof c}:${c}`;

function inState(state: WorldState, c: string | number): boolean {
  if (typeof c === 'string' && state.objects.some((o) => o.name === c)) return true;
  return state.facts.some((f) => f.slice(1).some((a) => a === c));
}

/** The method name a shape gets: stable across runs, inputs and machines. */
export function minedMethodName(task: string, shape: string): string {
  return `mined-${task}-${digestOf(JSON.parse(shape)).slice(0, 12)}`;
}

export function generalise(goal: Goal, fragment: readonly Goal[], state: WorldState, library: Library): Generalised {
  const task = library.tasks.find((t) => t.name === goal.task);
  if (!task) return { kind: 'not-general', reason: `the goal ${goal.task} is not a compound task of library ${library.name}, so no method can be written for it` };
  if (task.params.length !== goal.args.length) return { kind: 'not-general', reason: `the goal ${goal.task} has ${goal.args.length} args, the task declares ${task.params.length}` };
  const vars = new Map<string, Term>();
  const params: Param[] = task.params.map((p) => ({ name: p.name, type: p.type }));
  const fromGoal = new Map<string, string[]>();
  goal.args.forEach((a, i) => {
    if (!vars.has(keyOf(a))) vars.set(keyOf(a), task.params[i]!.name);
    fromGoal.set(keyOf(a), [...(fromGoal.get(keyOf(a)) ?? []), task.params[i]!.name]);
  });
  const declared = new Set(library.constants.map((c) => c.name));
  const stateVars: Array<{ name: string; constant: string | number }> = [];
  const subtasks: Goal[] = [];
  const substs: Array<Map<string, Term>> = [];
  for (const [i, step] of fragment.entries()) {
    const op = library.operators.find((o) => o.name === step.task);
    if (!op) return { kind: 'not-general', reason: `step ${i + 1} names ${step.task}, which is not an operator of library ${library.name}` };
    if (op.params.length !== step.args.length) return { kind: 'not-general', reason: `step ${i + 1} (${step.task}) has ${step.args.length} args, the operator takes ${op.params.length}` };
    const args: Term[] = [];
    for (const [j, c] of step.args.entries()) {
      const ambiguous = ambiguity(c, fromGoal, op, step.args, state, declared);
      if (ambiguous) return { kind: 'not-general', reason: `step ${i + 1} (${step.task}): ${ambiguous}` };
      let v = vars.get(keyOf(c));
      if (v === undefined && typeof c === 'string' && declared.has(c)) v = c;
      if (v === undefined) {
        if (!inState(state, c)) {
          return { kind: 'not-general', reason: `step ${i + 1} (${step.task}) uses the constant ${JSON.stringify(c)}, which comes from neither the goal's args, the library, nor the observed state` };
        }
        v = `?v${stateVars.length + 1}`;
        vars.set(keyOf(c), v);
        stateVars.push({ name: v, constant: c });
        params.push({ name: v, type: op.params[j]!.type });
      }
      args.push(v);
    }
    subtasks.push({ task: step.task, args });
    substs.push(new Map(op.params.map((p, j) => [p.name, args[j]!])));
  }

  // Preconditions not established earlier in the fragment.
  const fresh: Fresh = { next: 1 };
  const evaluable = new Set(library.evaluables.map((e) => e.name));
  const kept: Formula[] = [];
  const seen = new Set<string>();
  const added = new Set<string>();
  const deleted = new Set<string>();
  const changed = new Set<string>();
  for (const [i, step] of subtasks.entries()) {
    const op = library.operators.find((o) => o.name === step.task)!;
    for (const c of conjuncts(substFormula(op.precondition, substs[i]!, fresh))) {
      if (c.op === 'atom' && added.has(canonicalize(c))) continue;
      if (c.op === 'not' && c.arg.op === 'atom' && deleted.has(canonicalize(c.arg))) continue;
      if (c.op !== 'atom' && !(c.op === 'not' && c.arg.op === 'atom') && predicatesOf(c).some((p) => changed.has(p))) continue;
      const key = canonicalize(normalised(c));
      if (seen.has(key)) continue;
      seen.add(key);
      kept.push(c);
    }
    for (const e of plainEffects(op.effect, substs[i]!)) {
      const atom = canonicalize({ op: 'atom', pred: e.pred, args: e.args });
      (e.op === 'add' ? added : deleted).add(atom);
      changed.add(e.pred);
    }
  }

  // Every state variable bound by a positive atom (else by a connecting fact of the state).
  const binders = kept.filter((c) => c.op === 'atom' && !evaluable.has(c.pred));
  const bound = new Set(binders.flatMap((c) => (c.op === 'atom' ? c.args.filter((a): a is string => typeof a === 'string') : [])));
  for (const sv of stateVars) {
    if (bound.has(sv.name)) continue;
    const fact = [...state.facts]
      .filter((f) => f.slice(1).includes(sv.constant) && f.slice(1).every((a) => vars.has(keyOf(a)) || (typeof a === 'string' && declared.has(a))))
      .sort((a, b) => (canonicalize(a) < canonicalize(b) ? -1 : canonicalize(a) > canonicalize(b) ? 1 : 0))[0];
    if (!fact) {
      return { kind: 'not-general', reason: `the constant ${JSON.stringify(sv.constant)} is in the observed state, but no fact there ties it to the goal's args, so no precondition can bind it` };
    }
    const atom: Formula = { op: 'atom', pred: fact[0], args: fact.slice(1).map((a) => vars.get(keyOf(a)) ?? a) };
    kept.unshift(atom);
    for (const a of fact.slice(1)) {
      const v = vars.get(keyOf(a));
      if (typeof v === 'string') bound.add(v);
    }
  }
  const positive = kept.filter((c) => c.op === 'atom' && !evaluable.has(c.pred));
  const rest = kept.filter((c) => !(c.op === 'atom' && !evaluable.has(c.pred)));
  const all = [...positive, ...rest];
  const precondition: Formula = all.length === 0 ? { op: 'true' } : all.length === 1 ? all[0]! : { op: 'and', args: all };
  const body = { task: { task: goal.task, args: task.params.map((p) => p.name) }, params, precondition, subtasks: subtasks.map((s) => ({ task: s.task, args: s.args })) };
  const shape = canonicalize(body);
  return { kind: 'method', method: { name: minedMethodName(goal.task, shape), ...body, origin: 'mined' }, shape };
}

/**
 * Why one epoch cannot tell where the constant `c` comes from, or undefined when it can: it is two
 * of the goal's args at once (which parameter?), or a number that is a goal arg and also the value
 * an observed fact gives for the goal's other constants — a fare equal, by chance, to the budget.
 * Taking it for the goal arg would write a method that applies only where the two are equal; an
 * epoch where they differ tells them apart.
 */
function ambiguity(c: string | number, fromGoal: ReadonlyMap<string, string[]>, op: Library['operators'][number], stepArgs: readonly (string | number)[], state: WorldState, declared: ReadonlySet<string>): string | undefined {
  const params = fromGoal.get(keyOf(c));
  if (params === undefined) return undefined;
  if (params.length > 1) return `the constant ${JSON.stringify(c)} is the goal's ${params.join(' and ')} at once, so which of them the step uses cannot be told`;
  if (typeof c !== 'number') return undefined;
  const instance = new Map<string, Term>(op.params.map((p, j) => [p.name, stepArgs[j]!]));
  const known = (a: string | number) => a !== c && (fromGoal.has(keyOf(a)) || (typeof a === 'string' && declared.has(a)));
  for (const atom of conjuncts(substFormula(op.precondition, instance, { next: 1 }))) {
    if (atom.op !== 'atom' || !atom.args.includes(c)) continue;
    const fact = state.facts.find((f) => f[0] === atom.pred && f.length === atom.args.length + 1 && atom.args.every((a, k) => f[k + 1] === a));
    if (fact && atom.args.every((a) => a === c || known(a))) {
      return `the number ${c} is the goal's ${params[0]} and also what the observed fact (${fact.map(String).join(' ')}) gives, so one epoch cannot tell which it is (an epoch where they differ can)`;
    }
  }
  return undefined;
}

/** A formula with its quantified variables numbered from 1, so duplicates compare equal. */
function normalised(f: Formula): Formula {
  return substFormula(f, new Map(), { next: 1 });
}

function predicatesOf(f: Formula): string[] {
  switch (f.op) {
    case 'atom':
      return [f.pred];
    case 'and':
    case 'or':
      return f.args.flatMap(predicatesOf);
    case 'not':
      return predicatesOf(f.arg);
    case 'imply':
      return [...predicatesOf(f.if), ...predicatesOf(f.then)];
    case 'forall':
    case 'exists':
      return predicatesOf(f.body);
    default:
      return [];
  }
}
