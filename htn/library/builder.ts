/**
 * A typed TypeScript builder for method libraries. It produces exactly the JSON data of
 * schema.ts (validated on `build()`), so a library written in code and the same library written
 * as JSON have the same digest.
 *
 * Parameters are written as `{ '?f': 'flight', '?p': 'number' }` (declaration order is kept);
 * formulas and effects with the small helpers below (`atom`, `and`, `not`, `eq`, `forall`, …).
 *
 * ```ts
 * const lib = new LibraryBuilder('travel')
 *   .type('flight').predicate('price', { '?f': 'flight', '?p': 'number' })
 *   .evaluable({ name: 'le', version: '1', params: { '?a': 'number', '?b': 'number' } })
 *   .task('book', { '?f': 'flight' })
 *   .operator('pay', { params: { '?f': 'flight', '?p': 'number' }, precondition: atom('price', '?f', '?p'),
 *     effect: add('paid', '?f'), actuator: { actuator: 'card.charge', args: { flight: '?f', amount: '?p' } } })
 *   .method('book-direct', { task: ['book', '?f'], params: { '?f': 'flight', '?p': 'number' },
 *     precondition: atom('price', '?f', '?p'), subtasks: [['pay', '?f', '?p']] })
 *   .build();
 * ```
 */
import type { ActuatorCall, Effect, Formula, Library, Param, TaskConstraint, Term } from './schema.js';
import { freezeValidLibrary, validateLibrary } from './validate.js';

export type ParamSpec = Readonly<Record<string, string>>;
/** A task call written as a tuple: task name, then args. */
export type CallSpec = readonly [string, ...Term[]];

function params(spec: ParamSpec | undefined): Param[] {
  return Object.entries(spec ?? {}).map(([name, type]) => ({ name, type }));
}

function constraintOf(c: TaskConstraintSpec): TaskConstraint {
  if ('sum' in c) return { sum: c.sum, arg: c.arg, atMost: c.atMost };
  if ('count' in c) return { count: c.count, atMost: c.atMost, ...(c.per === undefined ? {} : { per: c.per }) };
  if ('bind' in c) return { bind: c.bind, args: { ...c.args } };
  return { only: [...c.only] };
}

export const TRUE: Formula = { op: 'true' };
export const atom = (pred: string, ...args: Term[]): Formula => ({ op: 'atom', pred, args });
export const and = (...args: Formula[]): Formula => ({ op: 'and', args });
export const or = (...args: Formula[]): Formula => ({ op: 'or', args });
export const not = (arg: Formula): Formula => ({ op: 'not', arg });
export const imply = (cond: Formula, then: Formula): Formula => ({ op: 'imply', if: cond, then });
export const eq = (left: Term, right: Term): Formula => ({ op: 'eq', left, right });
export const neq = (left: Term, right: Term): Formula => not(eq(left, right));
export const forall = (vars: ParamSpec, body: Formula): Formula => ({ op: 'forall', vars: params(vars), body });
export const exists = (vars: ParamSpec, body: Formula): Formula => ({ op: 'exists', vars: params(vars), body });
export const isA = (term: Term, type: string): Formula => ({ op: 'is-a', term, type });

export const add = (pred: string, ...args: Term[]): Effect => ({ op: 'add', pred, args });
export const del = (pred: string, ...args: Term[]): Effect => ({ op: 'del', pred, args });
export const effects = (...list: Effect[]): Effect => ({ op: 'and', effects: list });
export const when = (condition: Formula, effect: Effect): Effect => ({ op: 'when', condition, effect });
export const forallEffect = (vars: ParamSpec, effect: Effect): Effect => ({ op: 'forall', vars: params(vars), effect });

export interface OperatorSpec {
  params?: ParamSpec;
  precondition?: Formula;
  effect?: Effect | Effect[];
  actuator?: ActuatorCall;
  compensate?: ActuatorCall;
  readOnly?: boolean;
}

/** A task constraint as written in code (schema.ts `TaskConstraintSchema`; `only` may be readonly). */
export type TaskConstraintSpec =
  | { readonly sum: string; readonly arg: string; readonly atMost: string | number }
  | { readonly count: string; readonly atMost: number; readonly per?: 'run' }
  | { readonly only: readonly string[] }
  /** Each step dispatching `bind` passes these args exactly these terms' values (task params or constants). */
  | { readonly bind: string; readonly args: Readonly<Record<string, Term>> };

export interface TaskOptions {
  /** Constraints on any fragment of steps achieving the task, checked in order. */
  constraints?: readonly TaskConstraintSpec[];
}

export interface MethodSpec {
  task: CallSpec;
  params?: ParamSpec;
  precondition?: Formula;
  subtasks: readonly CallSpec[];
}

export class LibraryBuilder {
  private readonly data: Library;

  constructor(name: string) {
    this.data = { format: 'weft.htn-library/1', name, types: [], constants: [], predicates: [], evaluables: [], tasks: [], operators: [], methods: [] };
  }

  type(name: string, parent?: string): this {
    this.data.types.push(parent === undefined ? { name } : { name, parent });
    return this;
  }

  constant(name: string, type: string): this {
    this.data.constants.push({ name, type });
    return this;
  }

  predicate(name: string, spec?: ParamSpec): this {
    this.data.predicates.push({ name, params: params(spec) });
    return this;
  }

  /** References an evaluable predicate by name and version (its code is registered at plan time). */
  evaluable(ref: { name: string; version: string; params?: ParamSpec }): this {
    this.data.evaluables.push({ name: ref.name, version: ref.version, params: params(ref.params) });
    return this;
  }

  /**
   * Declares a compound task; `options.constraints` bound any fragment that achieves it, e.g.
   * `.task('book', { '?b': 'number' }, { constraints: [{ sum: 'card.charge', arg: 'amount', atMost: '?b' }] })`,
   * or `{ bind: 'taxi.book', args: { from: '?from' } }` to tie an effect's arg to the goal's.
   */
  task(name: string, spec?: ParamSpec, options?: TaskOptions): this {
    this.data.tasks.push({
      name,
      params: params(spec),
      ...(options?.constraints ? { constraints: options.constraints.map(constraintOf) } : {}),
    });
    return this;
  }

  operator(name: string, spec: OperatorSpec): this {
    const effect = Array.isArray(spec.effect) ? effects(...spec.effect) : (spec.effect ?? effects());
    this.data.operators.push({
      name,
      params: params(spec.params),
      precondition: spec.precondition ?? TRUE,
      effect,
      ...(spec.actuator ? { actuator: spec.actuator } : {}),
      ...(spec.compensate ? { compensate: spec.compensate } : {}),
      readOnly: spec.readOnly ?? false,
    });
    return this;
  }

  /** Adds a method; methods are tried in the order they are added. */
  method(name: string, spec: MethodSpec): this {
    const [task, ...args] = spec.task;
    this.data.methods.push({
      name,
      task: { task, args },
      params: params(spec.params),
      precondition: spec.precondition ?? TRUE,
      subtasks: spec.subtasks.map(([t, ...a]) => ({ task: t, args: a })),
    });
    return this;
  }

  /** The validated library data (a fresh copy each call). */
  /** The library, validated and deep-frozen (a built library is a pinned value: it never changes after). */
  build(): Library {
    return freezeValidLibrary(validateLibrary(structuredClone(this.data)));
  }
}
