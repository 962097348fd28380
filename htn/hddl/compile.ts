/**
 * HDDL → method library: compiles a parsed domain and problem (H2's AST, ast.ts) into the same
 * representation a Weft library uses, plus the world state and the goal.
 *
 * - HDDL names are case-insensitive: every reference is resolved to the spelling of its
 *   declaration (so plans round-trip names exactly as the domain/problem wrote them); variables
 *   are folded to lower case (they never appear in plans).
 * - The problem's initial task network becomes a synthetic compound task `__top` with one method
 *   `__top_method` (parameters = `:htn :parameters`, precondition = its `:constraints`), and the
 *   problem's `:goal` becomes the goal's final-state `condition`.
 * - Method `:constraints` are conjoined to the precondition; `sortof` becomes `is-a`.
 * - Actions become operators without an actuator (HDDL domains do not dispatch), not read-only.
 */
import type * as A from './ast.js';
import { ROOT_TYPE, type Effect, type Formula, type Goal, type Library, type Param, type Term, type WorldState } from '../library/schema.js';
import { validateLibrary } from '../library/validate.js';

export const TOP_TASK = '__top';
export const TOP_METHOD = '__top_method';

export interface CompiledHddl {
  readonly library: Library;
  readonly state: WorldState;
  readonly goal: Goal;
}

export class HddlCompileError extends Error {
  override readonly name = 'HddlCompileError';
  constructor(file: string, pos: A.SourcePos, reason: string) {
    super(`${file}:${pos.line}:${pos.column}: ${reason}`);
  }
}

class Names {
  private readonly map = new Map<string, string>();
  declare(name: string): string {
    const key = name.toLowerCase();
    const found = this.map.get(key);
    if (found !== undefined) return found;
    this.map.set(key, name);
    return name;
  }
  get(name: string): string | undefined {
    return this.map.get(name.toLowerCase());
  }
}

export function compileHddl(domain: A.HddlDomain, problem: A.HddlProblem): CompiledHddl {
  const types = new Names();
  types.declare(ROOT_TYPE);
  const preds = new Names();
  const tasks = new Names();
  const symbols = new Names();

  const typeName = (name: string): string => (name.toLowerCase() === ROOT_TYPE ? ROOT_TYPE : types.declare(name));
  const typeDecls: Library['types'] = [];
  const seenType = new Set<string>();
  for (const t of domain.types) {
    const name = typeName(t.name);
    const parent = t.supertype === undefined ? undefined : typeName(t.supertype);
    if (name === ROOT_TYPE) continue;
    typeDecls.push(parent === undefined || parent === ROOT_TYPE ? { name } : { name, parent });
    seenType.add(name);
  }
  const param = (v: A.TypedVariable): Param => ({ name: v.name.toLowerCase(), type: typeName(v.type) });

  const constants = domain.constants.map((c) => ({ name: symbols.declare(c.name), type: typeName(c.type) }));
  const objects = problem.objects.map((o) => ({ name: symbols.declare(o.name), type: typeName(o.type) }));

  const predicates = domain.predicates.map((p) => ({ name: preds.declare(p.name), params: p.params.map(param) }));
  const taskDecls = domain.tasks.map((t) => ({ name: tasks.declare(t.name), params: t.params.map(param) }));
  for (const a of domain.actions) tasks.declare(a.name);

  const term = (t: A.Term): Term => (t.kind === 'variable' ? t.name.toLowerCase() : (symbols.get(t.name) ?? t.name));
  const predName = (name: string, file: string, pos: A.SourcePos): string => {
    const p = preds.get(name);
    if (p === undefined) throw new HddlCompileError(file, pos, `unknown predicate ${name}`);
    return p;
  };
  const taskName = (name: string, file: string, pos: A.SourcePos): string => {
    const t = tasks.get(name);
    if (t === undefined) throw new HddlCompileError(file, pos, `unknown task ${name}`);
    return t;
  };

  const formula = (f: A.Formula, file: string): Formula => {
    switch (f.kind) {
      case 'atom':
        return { op: 'atom', pred: predName(f.predicate, file, f.pos), args: f.args.map(term) };
      case 'and':
      case 'or':
        return { op: f.kind, args: f.args.map((g) => formula(g, file)) };
      case 'not':
        return { op: 'not', arg: formula(f.arg, file) };
      case 'imply':
        return { op: 'imply', if: formula(f.left, file), then: formula(f.right, file) };
      case 'equals':
        return { op: 'eq', left: term(f.left), right: term(f.right) };
      case 'forall':
      case 'exists':
        return { op: f.kind, vars: f.params.map(param), body: formula(f.body, file) };
      case 'sortof':
        return { op: 'is-a', term: term(f.term), type: typeName(f.type) };
    }
  };
  const effect = (e: A.Effect, file: string): Effect => {
    switch (e.kind) {
      case 'and':
        return { op: 'and', effects: e.effects.map((g) => effect(g, file)) };
      case 'add':
      case 'delete':
        return { op: e.kind === 'add' ? 'add' : 'del', pred: predName(e.atom.predicate, file, e.atom.pos), args: e.atom.args.map(term) };
      case 'forall':
        return { op: 'forall', vars: e.params.map(param), effect: effect(e.effect, file) };
      case 'when':
        return { op: 'when', condition: formula(e.condition, file), effect: effect(e.effect, file) };
    }
  };
  const conjoin = (parts: (A.Formula | undefined)[], file: string): Formula => {
    const list = parts.filter((p): p is A.Formula => p !== undefined).map((p) => formula(p, file));
    return list.length === 0 ? { op: 'true' } : list.length === 1 ? list[0]! : { op: 'and', args: list };
  };
  const call = (c: A.TaskCall, file: string): { task: string; args: Term[] } => ({ task: taskName(c.name, file, c.pos), args: c.args.map(term) });

  const operators: Library['operators'] = domain.actions.map((a) => ({
    name: tasks.get(a.name)!,
    params: a.params.map(param),
    precondition: a.precondition ? formula(a.precondition, domain.file) : { op: 'true' },
    effect: a.effect ? effect(a.effect, domain.file) : { op: 'and', effects: [] },
    readOnly: false,
  }));
  const methods: Library['methods'] = domain.methods.map((m) => ({
    name: m.name,
    task: call(m.task, domain.file),
    params: m.params.map(param),
    precondition: conjoin([m.precondition, m.constraints], domain.file),
    subtasks: m.subtasks.map((s) => call(s, domain.file)),
  }));

  // Types used but never declared hang directly under `object`.
  const used = [...predicates.flatMap((p) => p.params), ...taskDecls.flatMap((t) => t.params), ...operators.flatMap((o) => o.params), ...methods.flatMap((m) => m.params)]
    .map((p) => p.type)
    .concat(constants.map((c) => c.type), objects.map((o) => o.type), typeDecls.flatMap((t) => (t.parent ? [t.parent] : [])));
  for (const t of used) {
    if (t !== ROOT_TYPE && !seenType.has(t)) {
      seenType.add(t);
      typeDecls.push({ name: t });
    }
  }

  const htn = problem.htn;
  methods.push({
    name: TOP_METHOD,
    task: { task: TOP_TASK, args: [] },
    params: htn ? htn.params.map(param) : [],
    precondition: htn?.constraints ? formula(htn.constraints, problem.file) : { op: 'true' },
    subtasks: htn ? htn.subtasks.map((s) => call(s, problem.file)) : [],
  });
  const library = validateLibrary({
    format: 'weft.htn-library/1',
    name: domain.name,
    types: typeDecls,
    constants,
    predicates,
    evaluables: [],
    tasks: [...taskDecls, { name: TOP_TASK, params: [] }],
    operators,
    methods,
  });
  const facts = problem.init.map((a) => [predName(a.predicate, problem.file, a.pos), ...a.args.map((t) => String(term(t)))] as [string, ...string[]]);
  const goal: Goal = problem.goal ? { task: TOP_TASK, args: [], condition: formula(problem.goal, problem.file) } : { task: TOP_TASK, args: [] };
  return { library, state: { objects, facts }, goal };
}
