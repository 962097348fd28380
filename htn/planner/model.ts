/**
 * The compiled planning problem: a library plus a world state plus a goal, interned into
 * integer-indexed tables the search runs over.
 *
 * - Symbols and types are interned canonically (symbols.ts); initial facts are deduplicated and
 *   loaded in sorted order, so the model — and every enumeration order in search — depends only on
 *   the state as a SET of facts and objects.
 * - Tasks and operators share one index space (`tasks`); a compound task lists its methods in
 *   declared order.
 * - Method preconditions are compiled with "pull-up" (pull-up.ts): conditions that the method's
 *   subtasks will need and that cannot change before they run are checked when the method is
 *   chosen, which binds variables by matching the state instead of guessing them.
 * - A method's query is compiled per pattern of unbound head arguments (logic variables passed
 *   down by the search), lazily and cached; slot numbering is the same for every pattern.
 */
import type { EvaluablePredicate, EvaluableRegistry } from '../library/evaluables.js';
import { isVariable, type Effect, type Goal, type Library, type WorldState } from '../library/schema.js';
import { FactStore } from './fact-store.js';
import type { CFormula, CTerm, Query } from './query.js';
import { QueryBuilder, type CompileEnv, type Scope } from './query-compile.js';
import { HtnInputError, SymbolTable, buildTypes, type TypeTable } from './symbols.js';
import { analyse, pullUpSubtasks, type PullUpAnalysis } from './pull-up.js';

export type CEffect =
  | { k: 'add' | 'del'; pred: number; args: CTerm[] }
  | { k: 'and'; effects: CEffect[] }
  | { k: 'forall'; vars: number[]; types: number[]; effect: CEffect }
  | { k: 'when'; cond: CFormula; effect: CEffect };

export interface CActuatorCall {
  readonly actuator: string;
  readonly args: [string, CTerm][];
}

export interface COperator {
  readonly name: string;
  readonly task: number;
  readonly slots: number;
  readonly paramTypes: number[];
  readonly pre: Query;
  /** The precondition query when the params in `mask` are unbound (it binds them); cached. */
  readonly preFor: (mask: number) => Query;
  readonly effect: CEffect;
  readonly actuator: CActuatorCall | undefined;
  readonly compensate: CActuatorCall | undefined;
  readonly readOnly: boolean;
}

export interface CSubtask {
  readonly task: number;
  readonly args: CTerm[];
}

export interface CMethod {
  readonly name: string;
  readonly index: number;
  readonly source: Library['methods'][number];
  readonly taskArgs: CTerm[];
  readonly slots: number;
  /** The query when every head argument is bound. */
  readonly query: Query;
  readonly subtasks: CSubtask[];
  /** The query for a pattern of unbound head arguments (bit i = arg i unbound); cached. */
  readonly queryFor: (mask: number) => Query;
}

export interface CTask {
  readonly name: string;
  readonly arity: number;
  readonly operator: COperator | undefined;
  readonly methods: CMethod[];
}

export interface Model {
  readonly library: Library;
  readonly symbols: SymbolTable;
  readonly types: TypeTable;
  readonly predicates: Map<string, number>;
  readonly predicateNames: string[];
  readonly tasks: CTask[];
  readonly taskIndex: Map<string, number>;
  readonly store: FactStore;
  readonly goalTask: number;
  readonly goalArgs: Int32Array;
  readonly goalCondition: Query | undefined;
}

function collectTerms(value: unknown, strings: Set<string>, numbers: Set<number>): void {
  // Walks library data with an explicit stack; term positions are `args` arrays, eq sides, is-a terms.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push(x);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (Array.isArray(o['args'])) for (const a of o['args']) addTerm(a, strings, numbers);
    if (o['op'] === 'eq') {
      addTerm(o['left'], strings, numbers);
      addTerm(o['right'], strings, numbers);
    }
    if (o['op'] === 'is-a') addTerm(o['term'], strings, numbers);
    for (const child of Object.values(o)) if (child !== null && typeof child === 'object') stack.push(child);
  }
}

function addTerm(t: unknown, strings: Set<string>, numbers: Set<number>): void {
  if (typeof t === 'number') numbers.add(t === 0 ? 0 : t);
  else if (typeof t === 'string' && !isVariable(t)) strings.add(t);
}

export function compileModel(library: Library, state: WorldState, goal: Goal, evaluables: EvaluableRegistry | undefined): Model {
  const strings = new Set<string>();
  const numbers = new Set<number>();
  for (const c of library.constants) strings.add(c.name);
  for (const o of state.objects) strings.add(o.name);
  for (const f of state.facts) for (let i = 1; i < f.length; i++) addTerm(f[i], strings, numbers);
  for (const a of goal.args) addTerm(a, strings, numbers);
  collectTerms([library.operators, library.methods, goal.condition ?? null], strings, numbers);
  for (const op of library.operators) {
    for (const call of [op.actuator, op.compensate]) if (call) for (const t of Object.values(call.args)) addTerm(t, strings, numbers);
  }
  const symbols = new SymbolTable(strings, numbers);
  const types = buildTypes(library, state, symbols);

  const predicates = new Map<string, number>();
  const predicateNames: string[] = [];
  const arities: number[] = [];
  for (const p of library.predicates) {
    predicates.set(p.name, predicateNames.length);
    predicateNames.push(p.name);
    arities.push(p.params.length);
  }
  const evalMap = new Map<string, EvaluablePredicate>();
  for (const ref of library.evaluables) {
    if (!evaluables) throw new HtnInputError(`the library uses evaluable ${ref.name}@${ref.version}; pass an evaluable registry`);
    const fn = evaluables.resolve(ref.name, ref.version);
    if (fn.arity !== ref.params.length) throw new HtnInputError(`evaluable ${ref.name}@${ref.version} takes ${fn.arity} args, the library declares ${ref.params.length}`);
    evalMap.set(ref.name, fn);
  }

  const store = new FactStore(arities, symbols.size);
  const loaded: { pred: number; args: Int32Array }[] = [];
  for (const f of state.facts) {
    const pred = predicates.get(f[0]);
    if (pred === undefined) throw new HtnInputError(`fact ${JSON.stringify(f)}: unknown predicate ${f[0]}`);
    if (f.length - 1 !== arities[pred]) throw new HtnInputError(`fact ${JSON.stringify(f)}: ${f[0]} takes ${arities[pred]} args`);
    const args = Int32Array.from(f.slice(1), (a) => symbols.id(a as string | number));
    loaded.push({ pred, args });
  }
  loaded.sort((a, b) => (a.pred - b.pred) || compareArgs(a.args, b.args));
  for (const f of loaded) store.add(f.pred, f.args);
  store.clearTrail();

  const env: CompileEnv = { symbols, types, predicates, evaluables: evalMap };
  const taskIndex = new Map<string, number>();
  const tasks: CTask[] = [];
  for (const t of library.tasks) {
    taskIndex.set(t.name, tasks.length);
    tasks.push({ name: t.name, arity: t.params.length, operator: undefined, methods: [] });
  }
  for (const op of library.operators) {
    const index = tasks.length;
    taskIndex.set(op.name, index);
    tasks.push({ name: op.name, arity: op.params.length, operator: compileOperator(op, index, env), methods: [] });
  }
  for (const t of tasks) {
    // Unbound-argument patterns are bit masks over a task's args (search.ts, logic-vars.ts).
    if (t.arity > 30) throw new HtnInputError(`task ${t.name} has ${t.arity} parameters; the planner supports at most 30`);
  }
  const analysis = analyse(library, (n) => types.index.get(n) ?? 0, (v) => symbols.id(v), types.members, types.objects);
  library.methods.forEach((m, i) => {
    const t = taskIndex.get(m.task.task);
    if (t === undefined) throw new HtnInputError(`method ${m.name}: unknown task ${m.task.task}`);
    tasks[t]!.methods.push(compileMethod(m, i, env, library, taskIndex, analysis));
  });

  const goalTask = taskIndex.get(goal.task);
  if (goalTask === undefined) throw new HtnInputError(`goal task ${goal.task} is not in the library`);
  if (goal.args.length !== tasks[goalTask]!.arity) throw new HtnInputError(`goal task ${goal.task} takes ${tasks[goalTask]!.arity} args, got ${goal.args.length}`);
  const goalArgs = Int32Array.from(goal.args, (a) => symbols.id(a));
  let goalCondition: Query | undefined;
  if (goal.condition) {
    const qb = new QueryBuilder(env);
    qb.add(goal.condition, new Map());
    goalCondition = qb.build();
  }
  return { library, symbols, types, predicates, predicateNames, tasks, taskIndex, store, goalTask, goalArgs, goalCondition };
}

function compareArgs(a: Int32Array, b: Int32Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function compileOperator(op: Library['operators'][number], index: number, env: CompileEnv): COperator {
  const build = (mask: number) => {
    const qb = new QueryBuilder(env);
    const scope = qb.declare(op.params);
    op.params.forEach((p, i) => {
      if ((mask & (1 << i)) === 0) qb.markBound(scope.get(p.name)!);
    });
    qb.add(op.precondition, scope);
    const effect = compileEffect(op.effect, scope, qb);
    qb.bindAll(op.params.map((p) => scope.get(p.name)!));
    return { qb, scope, effect, pre: qb.build() };
  };
  const { qb, scope, effect, pre } = build(0);
  const cache = new Map<number, Query>([[0, pre]]);
  const call = (c: typeof op.actuator): CActuatorCall | undefined =>
    c && { actuator: c.actuator, args: Object.keys(c.args).sort().map((k) => [k, qb.term(c.args[k]!, scope)] as [string, CTerm]) };
  return {
    name: op.name,
    task: index,
    slots: qb.slotTypes.length,
    paramTypes: op.params.map((p) => qb.typeId(p.type)),
    pre,
    preFor: (mask) => {
      let q = cache.get(mask);
      if (!q) cache.set(mask, (q = build(mask).pre));
      return q;
    },
    effect,
    actuator: call(op.actuator),
    compensate: call(op.compensate),
    readOnly: op.readOnly,
  };
}

function compileEffect(e: Effect, scope: Scope, qb: QueryBuilder): CEffect {
  switch (e.op) {
    case 'and':
      return { k: 'and', effects: e.effects.map((g) => compileEffect(g, scope, qb)) };
    case 'add':
    case 'del': {
      const pred = qb.env.predicates.get(e.pred);
      if (pred === undefined) throw new HtnInputError(`effect on unknown predicate ${e.pred}`);
      return { k: e.op, pred, args: e.args.map((a) => qb.term(a, scope)) };
    }
    case 'forall': {
      const inner = qb.declare(e.vars, scope);
      const vars = e.vars.map((v) => inner.get(v.name)!);
      return { k: 'forall', vars, types: vars.map((v) => qb.slotTypes[v]!), effect: compileEffect(e.effect, inner, qb) };
    }
    case 'when':
      return { k: 'when', cond: qb.formula(e.condition, scope, new Set()), effect: compileEffect(e.effect, scope, qb) };
  }
}

function compileMethod(
  m: Library['methods'][number],
  index: number,
  env: CompileEnv,
  library: Library,
  taskIndex: Map<string, number>,
  analysis: PullUpAnalysis,
): CMethod {
  /**
   * Builds the method's query for one pattern of unbound head arguments (bit i of `mask` set =
   * the task's i-th arg is an unbound logic variable). Slot numbering is the same for every mask.
   */
  const build = (mask: number): { query: Query; taskArgs: CTerm[]; subtasks: CSubtask[] } => {
    const qb = new QueryBuilder(env);
    const scope = qb.declare(m.params);
    const taskArgs = m.task.args.map((a) => qb.term(a, scope));
    // Task arguments are bound by unification before the query runs (unless masked).
    taskArgs.forEach((a, i) => {
      if (a >= 0 && (mask & (1 << i)) === 0) qb.markBound(a);
    });
    qb.add(m.precondition, scope);
    pullUpSubtasks(qb, m, scope, analysis);
    const subtasks = m.subtasks.map((st) => {
      const task = taskIndex.get(st.task);
      if (task === undefined) throw new HtnInputError(`method ${m.name}: unknown subtask ${st.task}`);
      return { task, args: st.args.map((a) => qb.term(a, scope)) };
    });
    // Variables only subtasks use stay unbound: the search passes them down as logic variables.
    const query = qb.build();
    // Slots that shape the decomposition: subtask args, and head args (they bind the caller's variables).
    const used = [...new Set([...taskArgs, ...subtasks.flatMap((st) => st.args)].filter((a) => a >= 0))].sort((x, y) => x - y);
    if (query.steps.some((step) => step.binds.some((v) => !used.includes(v)))) query.projection = used;
    return { query, taskArgs, subtasks };
  };
  const base = build(0);
  const cache = new Map<number, Query>([[0, base.query]]);
  const slots = Math.max(m.params.length, base.query.slotTypes.length);
  return {
    name: m.name,
    index,
    source: m,
    taskArgs: base.taskArgs,
    slots,
    query: base.query,
    subtasks: base.subtasks,
    queryFor: (mask) => {
      let q = cache.get(mask);
      if (!q) cache.set(mask, (q = build(mask).query));
      return q;
    },
  };
}
