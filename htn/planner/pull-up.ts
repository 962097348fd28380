/**
 * Pull-up: conditions a method's subtasks will need, checked when the method is chosen — so the
 * search binds variables by matching the state instead of guessing them, and gives up on a method
 * before descending into it.
 *
 * Soundness rule: a literal of subtask k may be checked at method start only if its truth cannot
 * change before subtask k starts, i.e. no operator reachable from subtasks 0..k-1 has an effect
 * that could touch it. "Could touch" is decided per argument with types (HyperTensioN's
 * typredicate idea): an effect `(at ?v - vehicle ?l)` cannot touch `(at ?p - package ?l)` because
 * no object is both a vehicle and a package. Literals pulled up:
 * - the first subtask, when it is an operator: its whole precondition (nothing runs before it);
 * - a later operator subtask: its atoms, negated atoms and equalities that are stable so far;
 * - a compound subtask with exactly one method whose first subtask is an operator (a "macro",
 *   like `load` → `pick_up`): the stable literals of that method's precondition and of that
 *   operator's precondition, mapped through the method head.
 * Everything is a pure function of the library, so the compiled queries stay deterministic.
 */
import { isVariable, type Effect, type Formula, type Library, type Param, type Term } from '../library/schema.js';
import type { QueryBuilder, Scope } from './query-compile.js';

type Operator = Library['operators'][number];
type Method = Library['methods'][number];

/** One effect position: a type id, or a constant's symbol id. */
type ArgSig = { type: number } | { sym: number };

export interface PullUpAnalysis {
  readonly operators: Map<string, Operator>;
  readonly methodsByTask: Map<string, Method[]>;
  /** Operators reachable from each task name (operators reach themselves). */
  readonly reach: Map<string, Set<string>>;
  /** Effect signatures by operator, grouped by predicate. */
  readonly effects: Map<string, Map<string, ArgSig[][]>>;
  readonly members: Uint8Array[];
  readonly objects: Int32Array[];
  readonly typeId: (name: string) => number;
  readonly symbolId: (value: Term) => number;
}

export function analyse(library: Library, typeId: (n: string) => number, symbolId: (v: Term) => number, members: Uint8Array[], objects: Int32Array[]): PullUpAnalysis {
  const operators = new Map(library.operators.map((o) => [o.name, o] as const));
  const methodsByTask = new Map<string, Method[]>();
  for (const m of library.methods) {
    const list = methodsByTask.get(m.task.task) ?? [];
    list.push(m);
    methodsByTask.set(m.task.task, list);
  }
  const reach = new Map<string, Set<string>>();
  for (const o of library.operators) reach.set(o.name, new Set([o.name]));
  for (const t of library.tasks) reach.set(t.name, new Set());
  for (let changed = true; changed; ) {
    changed = false;
    for (const m of library.methods) {
      const into = reach.get(m.task.task)!;
      for (const s of m.subtasks) {
        for (const op of reach.get(s.task) ?? []) {
          if (!into.has(op)) {
            into.add(op);
            changed = true;
          }
        }
      }
    }
  }
  const effects = new Map<string, Map<string, ArgSig[][]>>();
  for (const o of library.operators) {
    const byPred = new Map<string, ArgSig[][]>();
    const walk = (e: Effect, types: Map<string, string>): void => {
      if (e.op === 'and') e.effects.forEach((g) => walk(g, types));
      else if (e.op === 'when') walk(e.effect, types);
      else if (e.op === 'forall') walk(e.effect, new Map([...types, ...e.vars.map((v) => [v.name, v.type] as const)]));
      else {
        const sig = e.args.map((a): ArgSig => (isVariable(a) ? { type: typeId(types.get(a) ?? 'object') } : { sym: symbolId(a) }));
        const list = byPred.get(e.pred) ?? [];
        list.push(sig);
        byPred.set(e.pred, list);
      }
    };
    walk(o.effect, new Map(o.params.map((p) => [p.name, p.type] as const)));
    effects.set(o.name, byPred);
  }
  return { operators, methodsByTask, reach, effects, members, objects, typeId, symbolId };
}

function conjuncts(f: Formula): Formula[] {
  return f.op === 'and' ? f.args.flatMap(conjuncts) : f.op === 'true' ? [] : [f];
}

/** Whether no effect of `ops` can change the literal (atoms, negated atoms, equalities only). */
function stable(f: Formula, types: Map<string, string>, ops: Set<string>, a: PullUpAnalysis): boolean {
  if (f.op === 'eq') return [f.left, f.right].every((t) => !isVariable(t) || types.has(t));
  if (f.op === 'not') return stable(f.arg, types, ops, a);
  if (f.op !== 'atom') return false;
  if (!f.args.every((t) => !isVariable(t) || types.has(t))) return false;
  const lit: ArgSig[] = f.args.map((t) => (isVariable(t) ? { type: a.typeId(types.get(t)!) } : { sym: a.symbolId(t) }));
  for (const op of ops) {
    for (const sig of a.effects.get(op)?.get(f.pred) ?? []) if (sig.every((s, i) => overlaps(s, lit[i]!, a))) return false;
  }
  return true;
}

function overlaps(x: ArgSig, y: ArgSig, a: PullUpAnalysis): boolean {
  if ('sym' in x && 'sym' in y) return x.sym === y.sym;
  if ('sym' in x) return x.sym < 0 || a.members[(y as { type: number }).type]![x.sym] === 1;
  if ('sym' in y) return y.sym < 0 || a.members[x.type]![y.sym] === 1;
  const bits = a.members[y.type]!;
  return a.objects[x.type]!.some((o) => bits[o] === 1);
}

/** Binds `params` to the caller's terms in a new scope (constants get a slot and an equality). */
function bind(qb: QueryBuilder, caller: Scope, params: Param[], args: Term[]): Map<string, number> {
  const scope = new Map<string, number>();
  params.forEach((p, j) => {
    const a = args[j]!;
    if (isVariable(a)) scope.set(p.name, caller.get(a)!);
    else {
      scope.set(p.name, qb.slot(p.type));
      qb.add({ op: 'eq', left: p.name, right: a }, scope);
    }
  });
  return scope;
}

/** Adds the pulled-up conditions of method `m`'s subtasks to its query. */
export function pullUpSubtasks(qb: QueryBuilder, m: Method, scope: Scope, a: PullUpAnalysis): void {
  const before = new Set<string>();
  m.subtasks.forEach((st, k) => {
    const op = a.operators.get(st.task);
    qb.origin = `subtask ${k + 1} (${st.task})`;
    if (op) {
      const opScope = bind(qb, scope, op.params, st.args);
      const types = new Map(op.params.map((p) => [p.name, p.type] as const));
      const kept = conjuncts(op.precondition).filter((c) => k === 0 || stable(c, types, before, a));
      if (kept.length) qb.add({ op: 'and', args: kept }, opScope);
      if (k === 0) for (const p of op.params) qb.add({ op: 'is-a', term: p.name, type: p.type }, opScope);
    } else {
      const only = a.methodsByTask.get(st.task);
      const inner = only?.length === 1 ? only[0]! : undefined;
      const innerOp = inner?.subtasks[0] && a.operators.get(inner.subtasks[0].task);
      if (inner && innerOp) pullUpMacro(qb, scope, st.args, inner, innerOp, before, a);
    }
    for (const op of a.reach.get(st.task) ?? []) before.add(op);
  });
  qb.origin = '';
}

function pullUpMacro(qb: QueryBuilder, scope: Scope, args: Term[], inner: Method, op: Operator, before: Set<string>, a: PullUpAnalysis): void {
  // Map the inner method's head onto the caller's terms; other params become fresh slots.
  const innerScope = new Map<string, number>();
  const equalities: Formula[] = [];
  const caller = new Map<string, number>(scope);
  inner.task.args.forEach((h, j) => {
    const arg = args[j]!;
    const slot = isVariable(arg) ? scope.get(arg)! : undefined;
    if (!isVariable(h)) {
      if (slot !== undefined) equalities.push({ op: 'eq', left: `?__arg${j}`, right: h });
      if (slot !== undefined) caller.set(`?__arg${j}`, slot);
      return;
    }
    if (innerScope.has(h)) {
      if (slot !== undefined) {
        caller.set(`?__arg${j}`, slot);
        caller.set(`?__head${j}`, innerScope.get(h)!);
        equalities.push({ op: 'eq', left: `?__arg${j}`, right: `?__head${j}` });
      }
      return;
    }
    if (slot !== undefined) innerScope.set(h, slot);
  });
  for (const e of equalities) qb.add(e, caller);
  for (const p of inner.params) if (!innerScope.has(p.name)) innerScope.set(p.name, qb.slot(p.type));
  // Constant task args mapped to a head variable: give it a slot holding the constant.
  inner.task.args.forEach((h, j) => {
    const arg = args[j]!;
    if (isVariable(h) && !isVariable(arg)) qb.add({ op: 'eq', left: '?__v', right: arg }, new Map([['?__v', innerScope.get(h)!]]));
  });
  const innerTypes = new Map(inner.params.map((p) => [p.name, p.type] as const));
  const kept = conjuncts(inner.precondition).filter((c) => stable(c, innerTypes, before, a));
  if (kept.length) qb.add({ op: 'and', args: kept }, innerScope);
  const opScope = bind(qb, innerScope, op.params, inner.subtasks[0]!.args);
  const opTypes = new Map(op.params.map((p) => [p.name, p.type] as const));
  const keptOp = conjuncts(op.precondition).filter((c) => stable(c, opTypes, before, a));
  if (keptOp.length) qb.add({ op: 'and', args: keptOp }, opScope);
}
