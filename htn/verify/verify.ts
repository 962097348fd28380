/**
 * `verifyPlan(domain, problem, plan)`: an independent checker for total-order HTN plans in the
 * IPC 2020 format. It shares nothing with the planner (no htn/planner, no htn/library imports);
 * it reads only the HDDL AST and the parsed plan.
 *
 * A plan is valid iff, in this order of checking (the first failure is reported):
 *  1. every action line names a domain action with the right arity and type-correct objects;
 *  2. the tree is well formed (tree.ts): unique ids, every child id exists, one parent each;
 *  3. the root tasks, in order, match the problem's `:htn` tasks (binding its `:parameters`);
 *     then everything is reachable from `root` and the action order = left-to-right leaf order;
 *  4. every decomposition names a method of its task, and the method's parameters bind
 *     consistently to the task's arguments and to its children's names and arguments (children in
 *     the method's subtask order), type-correctly;
 *  5. executing the actions in order from the initial state, each action's precondition holds
 *     before it runs (effects: deletes then adds), and each method's precondition and
 *     `:constraints` hold — for some values of its remaining free parameters — in the state just
 *     before its first primitive descendant (or at its place in the sequence if it has none);
 *  6. the goal, if any, holds in the final state.
 *
 * Invariants: pure and deterministic; the state is indexed and updated in place (no copy per
 * action), so 100k-action plans verify in well under a second.
 */
import type { ActionDecl, HddlDomain, HddlProblem, MethodDecl, TaskDecl, Term, TypedVariable } from '../hddl/index.js';
import type { IpcDecomposition, IpcPlan } from '../ipc-plan.js';
import { searchBinding } from './bind.js';
import { VerifyFailure } from './failure.js';
import { Evaluator, render, type Env } from './formula.js';
import { FactState } from './state.js';
import { buildTree, checkCoverageAndOrder, describeAction, describeTask } from './tree.js';
import { World } from './world.js';

export type VerifyResult =
  | { readonly ok: true; readonly actions: number; readonly methods: number }
  | { readonly ok: false; readonly error: string; readonly id?: number; readonly line?: number };

interface PendingMethod {
  readonly node: IpcDecomposition;
  readonly method: MethodDecl;
  readonly env: Env;
  readonly free: readonly TypedVariable[];
}

/** Verifies `plan` against the domain and problem. Never throws for an invalid plan. */
export function verifyPlan(domain: HddlDomain, problem: HddlProblem, plan: IpcPlan): VerifyResult {
  try {
    return check(domain, problem, plan);
  } catch (e) {
    if (e instanceof VerifyFailure) return { ok: false, error: e.message, ...e.where };
    throw e;
  }
}

function firstByName<T extends { name: string }>(xs: readonly T[]): Map<string, T> {
  const m = new Map<string, T>();
  for (const x of xs) if (!m.has(x.name)) m.set(x.name, x);
  return m;
}

/** Binds `t` to `value` in `env`; returns a reason on conflict. */
function unify(t: Term, value: string, env: Env): string | undefined {
  if (t.kind === 'constant') return t.name === value ? undefined : `expected the constant ${t.name}, found ${value}`;
  const cur = env.get(t.name);
  if (cur === undefined) {
    env.set(t.name, value);
    return undefined;
  }
  return cur === value ? undefined : `${t.name} is already bound to ${cur}, found ${value}`;
}

function check(domain: HddlDomain, problem: HddlProblem, plan: IpcPlan): VerifyResult {
  const world = new World(domain, problem);
  const state = new FactState();
  const ev = new Evaluator(world, state);
  const actionDecls = firstByName(domain.actions);
  const taskDecls = firstByName(domain.tasks);
  const methods = firstByName(domain.methods);

  const whereOf = (x: { id: number; line?: number }): { id: number; line?: number } =>
    x.line === undefined ? { id: x.id } : { id: x.id, line: x.line };
  const typeCheck = (params: readonly TypedVariable[], args: readonly string[], subject: { id: number; line?: number }, label: () => string): void => {
    params.forEach((p, i) => {
      const v = args[i]!;
      if (!world.isObject(v)) throw new VerifyFailure(`${label()}: argument ${i + 1} "${v}" is not a declared object or constant`, whereOf(subject));
      if (!world.isOfType(v, p.type)) throw new VerifyFailure(`${label()}: argument ${i + 1} "${v}" is not of type ${p.type} (parameter ${p.name})`, whereOf(subject));
    });
  };

  // 1. Action lines: known action, arity, types.
  const actionOf = new Map<number, ActionDecl>();
  for (const a of plan.actions) {
    const decl = actionDecls.get(a.name);
    if (!decl) {
      const hint = taskDecls.has(a.name) ? ` ("${a.name}" is a compound task; it needs a method line)` : '';
      throw new VerifyFailure(`${describeAction(a)}: no action named "${a.name}" in the domain${hint}`, whereOf(a));
    }
    if (decl.params.length !== a.args.length) {
      throw new VerifyFailure(`${describeAction(a)}: "${a.name}" takes ${decl.params.length} argument(s), found ${a.args.length}`, whereOf(a));
    }
    typeCheck(decl.params, a.args, a, () => describeAction(a));
    actionOf.set(a.id, decl);
  }

  // 2. Tree structure (coverage and leaf order are checked after the roots, below).
  const tree = buildTree(plan);
  const nameAndArgs = (id: number): { name: string; args: readonly string[]; readonly label: string } => {
    const a = tree.actions.get(id);
    if (a) return { name: a.name, args: a.args, get label() { return describeAction(a); } };
    const d = tree.decompositions.get(id)!;
    return { name: d.task, args: d.args, get label() { return describeTask(d); } };
  };


  // 3. Root tasks against the problem's initial task network.
  const expected = problem.htn?.subtasks ?? [];
  const rootWhere = plan.rootLine === undefined ? {} : { line: plan.rootLine };
  if (tree.roots.length !== expected.length) {
    throw new VerifyFailure(`the root line lists ${tree.roots.length} task(s), but the problem's :htn has ${expected.length}`, rootWhere);
  }
  const htnEnv: Env = new Map();
  expected.forEach((want, i) => {
    const got = nameAndArgs(tree.roots[i]!);
    const rendered = `(${[want.name, ...want.args.map((t) => t.name)].join(' ')})`;
    if (got.name !== want.name || got.args.length !== want.args.length) {
      throw new VerifyFailure(`root task ${i + 1} is ${got.label}, but the problem's :htn task ${i + 1} is ${rendered}`, rootWhere);
    }
    want.args.forEach((t, j) => {
      const why = unify(t, got.args[j]!, htnEnv);
      if (why) throw new VerifyFailure(`root task ${i + 1} (${got.label}) does not match :htn task ${rendered}: ${why}`, rootWhere);
    });
  });
  for (const p of problem.htn?.params ?? []) {
    const v = htnEnv.get(p.name);
    if (v !== undefined && !world.isOfType(v, p.type)) {
      throw new VerifyFailure(`:htn parameter ${p.name} is bound to "${v}", which is not of type ${p.type}`, rootWhere);
    }
  }

  checkCoverageAndOrder(plan, tree);

  // 4. Decompositions: method exists, task matches, parameters bind to task and children.
  const byStart = new Map<number, PendingMethod[]>();
  for (const { node: d, start } of tree.preorder) {
    // `label` and `at` are getters: built only when a check fails (this loop runs per decomposition).
    const o = {
      get label() {
        return describeTask(d);
      },
      get at() {
        return whereOf(d);
      },
    };
    const m = methods.get(d.method);
    if (!m) throw new VerifyFailure(`${o.label}: no method named "${d.method}" in the domain`, o.at);
    if (m.task.name !== d.task) throw new VerifyFailure(`${o.label}: method ${m.name} decomposes task "${m.task.name}", not "${d.task}"`, o.at);
    const decl: TaskDecl | undefined = taskDecls.get(d.task);
    if (m.task.args.length !== d.args.length) {
      throw new VerifyFailure(`${o.label}: task "${d.task}" takes ${m.task.args.length} argument(s), found ${d.args.length}`, o.at);
    }
    if (decl && decl.params.length === d.args.length) typeCheck(decl.params, d.args, d, () => o.label);
    const env: Env = new Map();
    m.task.args.forEach((t, i) => {
      const why = unify(t, d.args[i]!, env);
      if (why) throw new VerifyFailure(`${o.label}: argument ${i + 1} does not fit method ${m.name}'s task ${t.name}: ${why}`, o.at);
    });
    if (m.subtasks.length !== d.children.length) {
      throw new VerifyFailure(`${o.label}: method ${m.name} has ${m.subtasks.length} subtask(s), but the line lists ${d.children.length} child id(s)`, o.at);
    }
    m.subtasks.forEach((sub, i) => {
      const child = nameAndArgs(d.children[i]!);
      if (child.name !== sub.name) {
        throw new VerifyFailure(`${o.label}: child ${i + 1} is ${child.label}, but subtask ${i + 1} of method ${m.name} is "${sub.name}"`, o.at);
      }
      if (child.args.length !== sub.args.length) {
        throw new VerifyFailure(`${o.label}: child ${i + 1} (${child.label}) has ${child.args.length} argument(s), subtask "${sub.name}" has ${sub.args.length}`, o.at);
      }
      sub.args.forEach((t, j) => {
        const why = unify(t, child.args[j]!, env);
        if (why) throw new VerifyFailure(`${o.label}: child ${i + 1} (${child.label}) does not match subtask ${sub.name} of method ${m.name}: ${why}`, o.at);
      });
    });
    const free: TypedVariable[] = [];
    for (const p of m.params) {
      const v = env.get(p.name);
      if (v === undefined) free.push(p);
      else if (!world.isOfType(v, p.type)) {
        throw new VerifyFailure(`${o.label}: method ${m.name} binds ${p.name} to "${v}", which is not ${world.isObject(v) ? `of type ${p.type}` : 'a declared object'}`, o.at);
      }
    }
    let list = byStart.get(start);
    if (!list) byStart.set(start, (list = []));
    list.push({ node: d, method: m, env, free });
  }

  // 5. Execute: methods checked at their start position, actions applied in order.
  for (const f of problem.init) state.add(f.predicate, f.args.map((t) => t.name));
  if (problem.htn?.constraints) {
    const unboundHtn = (problem.htn.params ?? []).filter((p) => !htnEnv.has(p.name));
    if (!searchBinding(ev, world, state, [problem.htn.constraints], htnEnv, unboundHtn)) {
      throw new VerifyFailure(`the :htn constraints ${render(problem.htn.constraints, htnEnv)} do not hold`, rootWhere);
    }
  }
  const checkMethods = (k: number): void => {
    for (const pm of byStart.get(k) ?? []) {
      const conds = [pm.method.precondition, pm.method.constraints].filter((c) => c !== undefined);
      if (conds.length === 0) continue;
      if (pm.free.length === 0) {
        for (const c of conds) {
          if (!ev.holds(c, pm.env)) {
            const what = c === pm.method.precondition ? 'precondition' : 'constraint';
            throw new VerifyFailure(`${describeTask(pm.node)}: method ${what} ${ev.explain(c, pm.env)} false (before action position ${k})`, whereOf(pm.node));
          }
        }
      } else if (!searchBinding(ev, world, state, conds, pm.env, pm.free)) {
        const vars = pm.free.map((p) => `${p.name} - ${p.type}`).join(' ');
        const shown = conds.map((c) => render(c, pm.env)).join(' and ');
        throw new VerifyFailure(`${describeTask(pm.node)}: no value of (${vars}) makes the method precondition ${shown} true (before action position ${k})`, whereOf(pm.node));
      }
    }
  };
  plan.actions.forEach((a, k) => {
    checkMethods(k);
    const decl = actionOf.get(a.id)!;
    const env: Env = new Map();
    decl.params.forEach((p, i) => env.set(p.name, a.args[i]!));
    if (decl.precondition && !ev.holds(decl.precondition, env)) {
      throw new VerifyFailure(`${describeAction(a)}: precondition ${ev.explain(decl.precondition, env)} false`, whereOf(a));
    }
    if (decl.effect) ev.apply(ev.effects(decl.effect, env));
  });
  checkMethods(plan.actions.length);

  // 6. Goal.
  if (problem.goal && !ev.holds(problem.goal, new Map())) {
    throw new VerifyFailure(`goal ${ev.explain(problem.goal, new Map())} false in the final state`);
  }
  return { ok: true, actions: plan.actions.length, methods: tree.preorder.length };
}
