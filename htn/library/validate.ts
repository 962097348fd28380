/**
 * Library validation: shape by zod (schema.ts), then references — every type, predicate, task,
 * operator and variable a library mentions is declared, and arities match. A library that passes
 * can be compiled by the planner without further name checks; one that fails is rejected with
 * every problem listed (fail closed: a library is never "mostly" loaded).
 *
 * Task constraints (schema.ts) are checked too: the actuators they name are dispatched by some
 * operator (a misspelt one would make the constraint vacuous), a summed arg is passed to that
 * actuator, a param bound is a number-typed param of the task, counts are non-negative integers, a
 * run-wide count counts a world effect, and a binding names args its actuator is passed and terms
 * that are the task's params (or constants).
 */
import {
  LibrarySchema,
  NUMBER_TYPE,
  ROOT_TYPE,
  describeConstraint,
  isVariable,
  type Effect,
  type Formula,
  type Library,
  type Param,
  type Term,
} from './schema.js';

export class LibraryValidationError extends Error {
  override readonly name = 'LibraryValidationError';
  constructor(readonly problems: string[]) {
    super(`invalid method library: ${problems.slice(0, 10).join('; ')}${problems.length > 10 ? `; and ${problems.length - 10} more` : ''}`);
  }
}

/**
 * Libraries already known valid: deep-frozen results of a validation (`freezeValidLibrary`). A
 * frozen library cannot change, so validating it again is a lookup — a domain's libraries are built,
 * given to defineDomain and registered by every runtime, and each used to pay the whole check again
 * (a `weft` command's start-up did it a dozen times over the travel domain's versions).
 */
const knownValid = new WeakSet<object>();

/** Freezes `value` and everything in it (already-frozen parts are taken as frozen through). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/**
 * `library` (the result of `validateLibrary`, not shared with anyone who may still change it),
 * deep-frozen and remembered as valid: a later `validateLibrary` of it returns it at once.
 */
export function freezeValidLibrary(library: Library): Library {
  deepFreeze(library);
  knownValid.add(library);
  return library;
}

/** Whether `data` is a library `freezeValidLibrary` sealed (frozen, so still valid). */
export function isFrozenValidLibrary(data: unknown): data is Library {
  return typeof data === 'object' && data !== null && knownValid.has(data);
}

/** Parses and checks `data` as a library; throws `LibraryValidationError` listing every problem. */
export function validateLibrary(data: unknown): Library {
  if (isFrozenValidLibrary(data)) return data;
  const parsed = LibrarySchema.safeParse(data);
  if (!parsed.success) {
    throw new LibraryValidationError(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  const lib = parsed.data;
  const problems: string[] = [];
  const types = new Set<string>([ROOT_TYPE, NUMBER_TYPE, ...lib.types.map((t) => t.name)]);
  for (const t of lib.types) if (t.parent !== undefined && !types.has(t.parent)) problems.push(`type ${t.name}: unknown parent type ${t.parent}`);
  const constants = new Set(lib.constants.map((c) => c.name));
  for (const c of lib.constants) if (!types.has(c.type)) problems.push(`constant ${c.name}: unknown type ${c.type}`);
  const arity = new Map<string, number>();
  const declare = (kind: string, name: string, n: number): void => {
    if (arity.has(`${kind}:${name}`)) problems.push(`${kind} ${name} is declared twice`);
    arity.set(`${kind}:${name}`, n);
  };
  for (const p of lib.predicates) declare('predicate', p.name, p.params.length);
  for (const e of lib.evaluables) {
    if (arity.has(`predicate:${e.name}`)) problems.push(`evaluable ${e.name} is also declared as a fact predicate`);
    declare('predicate', e.name, e.params.length);
  }
  for (const t of lib.tasks) declare('task', t.name, t.params.length);
  for (const o of lib.operators) {
    if (arity.has(`task:${o.name}`)) problems.push(`operator ${o.name} is also declared as a compound task`);
    declare('task', o.name, o.params.length);
  }
  const methodNames = new Set<string>();
  for (const m of lib.methods) {
    if (methodNames.has(m.name)) problems.push(`method ${m.name} is declared twice`);
    methodNames.add(m.name);
  }

  const checkParams = (where: string, params: Param[], scope: Set<string>): void => {
    for (const p of params) {
      if (!types.has(p.type)) problems.push(`${where}: ${p.name} has unknown type ${p.type}`);
      scope.add(p.name);
    }
  };
  const checkTerm = (where: string, term: Term, scope: Set<string>): void => {
    if (typeof term === 'number') return;
    if (isVariable(term)) {
      if (!scope.has(term)) problems.push(`${where}: variable ${term} is not declared`);
    } else if (!constants.has(term)) {
      // Objects of the problem are not known here; a non-variable term is a symbol resolved at plan time.
    }
  };
  const checkAtom = (where: string, kind: string, name: string, args: Term[], scope: Set<string>): void => {
    const n = arity.get(`${kind}:${name}`);
    if (n === undefined) problems.push(`${where}: unknown ${kind} ${name}`);
    else if (n !== args.length) problems.push(`${where}: ${kind} ${name} takes ${n} args, got ${args.length}`);
    for (const a of args) checkTerm(where, a, scope);
  };
  const checkFormula = (where: string, f: Formula, scope: Set<string>): void => {
    switch (f.op) {
      case 'true':
        return;
      case 'atom':
        return checkAtom(where, 'predicate', f.pred, f.args, scope);
      case 'and':
      case 'or':
        for (const g of f.args) checkFormula(where, g, scope);
        return;
      case 'not':
        return checkFormula(where, f.arg, scope);
      case 'imply':
        checkFormula(where, f.if, scope);
        return checkFormula(where, f.then, scope);
      case 'eq':
        checkTerm(where, f.left, scope);
        return checkTerm(where, f.right, scope);
      case 'forall':
      case 'exists': {
        const inner = new Set(scope);
        checkParams(where, f.vars, inner);
        return checkFormula(where, f.body, inner);
      }
      case 'is-a':
        if (!types.has(f.type)) problems.push(`${where}: unknown type ${f.type}`);
        return checkTerm(where, f.term, scope);
    }
  };
  const checkEffect = (where: string, e: Effect, scope: Set<string>): void => {
    switch (e.op) {
      case 'and':
        for (const g of e.effects) checkEffect(where, g, scope);
        return;
      case 'add':
      case 'del':
        if (lib.evaluables.some((x) => x.name === e.pred)) problems.push(`${where}: effect on evaluable predicate ${e.pred}`);
        return checkAtom(where, 'predicate', e.pred, e.args, scope);
      case 'forall': {
        const inner = new Set(scope);
        checkParams(where, e.vars, inner);
        return checkEffect(where, e.effect, inner);
      }
      case 'when':
        checkFormula(where, e.condition, scope);
        return checkEffect(where, e.effect, scope);
    }
  };

  for (const p of lib.predicates) checkParams(`predicate ${p.name}`, p.params, new Set());
  for (const t of lib.tasks) checkParams(`task ${t.name}`, t.params, new Set());
  checkConstraints(lib, problems);
  for (const o of lib.operators) {
    const where = `operator ${o.name}`;
    const scope = new Set<string>();
    checkParams(where, o.params, scope);
    checkFormula(where, o.precondition, scope);
    checkEffect(where, o.effect, scope);
    for (const call of [o.actuator, o.compensate]) {
      if (call) for (const t of Object.values(call.args)) checkTerm(`${where} actuator ${call.actuator}`, t, scope);
    }
    if (o.compensate && !o.actuator) problems.push(`${where}: a compensation without an actuator`);
  }
  for (const m of lib.methods) {
    const where = `method ${m.name}`;
    const scope = new Set<string>();
    checkParams(where, m.params, scope);
    if (!arity.has(`task:${m.task.task}`) || lib.operators.some((o) => o.name === m.task.task)) {
      problems.push(`${where}: decomposes ${m.task.task}, which is not a declared compound task`);
    }
    checkAtom(where, 'task', m.task.task, m.task.args, scope);
    checkFormula(where, m.precondition, scope);
    for (const s of m.subtasks) checkAtom(where, 'task', s.task, s.args, scope);
  }
  if (problems.length > 0) throw new LibraryValidationError(problems);
  return lib;
}

function checkConstraints(lib: Library, problems: string[]): void {
  // Each actuator an operator dispatches, with the arg names the operators pass it.
  const dispatched = new Map<string, Set<string>>();
  for (const o of lib.operators) {
    if (!o.actuator) continue;
    const args = dispatched.get(o.actuator.actuator) ?? new Set<string>();
    for (const a of Object.keys(o.actuator.args)) args.add(a);
    dispatched.set(o.actuator.actuator, args);
  }
  // The actuators some non-readOnly operator dispatches (a run-wide count sees only those).
  const effectful = new Set(lib.operators.filter((o) => o.actuator && !o.readOnly).map((o) => o.actuator!.actuator));
  const knownActuator = (where: string, actuator: string): boolean => {
    if (dispatched.has(actuator)) return true;
    problems.push(`${where}: no operator dispatches the actuator ${actuator}`);
    return false;
  };
  for (const t of lib.tasks) {
    (t.constraints ?? []).forEach((c, i) => {
      const where = `task ${t.name} constraint ${i} (${describeConstraint(c)})`;
      if ('sum' in c) {
        if (knownActuator(where, c.sum) && !dispatched.get(c.sum)!.has(c.arg)) problems.push(`${where}: no operator passes ${c.sum} an arg ${c.arg}`);
        if (typeof c.atMost === 'string') {
          const param = t.params.find((p) => p.name === c.atMost);
          if (!isVariable(c.atMost)) problems.push(`${where}: atMost must be a number or a param of ${t.name} (a variable starts with "?"), got ${c.atMost}`);
          else if (!param) problems.push(`${where}: ${c.atMost} is not a param of ${t.name}`);
          else if (param.type !== NUMBER_TYPE) problems.push(`${where}: ${c.atMost} has type ${param.type}; a bound must be of type ${NUMBER_TYPE}`);
        }
      } else if ('count' in c) {
        if (c.count !== '*' && knownActuator(where, c.count) && c.per === 'run' && !effectful.has(c.count)) {
          problems.push(`${where}: per run counts the world effects earlier epochs left done, and every operator that dispatches ${c.count} is readOnly (drop per: 'run', or count a world effect)`);
        }
        if (!Number.isInteger(c.atMost) || c.atMost < 0) problems.push(`${where}: atMost must be a non-negative integer, got ${c.atMost}`);
      } else if ('bind' in c) {
        const names = Object.keys(c.args);
        if (names.length === 0) problems.push(`${where}: bind needs at least one arg`);
        if (knownActuator(where, c.bind)) for (const a of names) if (!dispatched.get(c.bind)!.has(a)) problems.push(`${where}: no operator passes ${c.bind} an arg ${a}`);
        for (const term of Object.values(c.args)) {
          if (isVariable(term) && !t.params.some((p) => p.name === term)) problems.push(`${where}: ${term} is not a param of ${t.name}`);
        }
      } else {
        if (c.only.length === 0) problems.push(`${where}: only needs at least one actuator (use { count: '*', atMost: 0 } for no world effects)`);
        for (const a of c.only) knownActuator(where, a);
      }
    });
  }
}
