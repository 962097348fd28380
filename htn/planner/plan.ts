/**
 * `plan(library, state, goal, options)` — the engine's one entry point for the runtime.
 *
 * A pure function: same library, same state (as a set), same goal and same budgets give a
 * byte-identical result in any process. Inputs are validated (zod) and a goal naming an unknown
 * task, an arity mismatch or an undeclared predicate throws `HtnInputError` (fail closed); every
 * planning outcome — plan, no method, limit — is returned as data.
 *
 * Values: objects and args are strings (symbols); facts may also carry finite numbers (prices,
 * counts), which only evaluable predicates interpret. The built-in type `number` ranges over the
 * numbers occurring in the problem.
 */
import type { EvaluableRegistry } from '../library/evaluables.js';
import { GoalSchema, WorldStateSchema, type Goal, type Library, type WorldState } from '../library/schema.js';
import { validateLibrary } from '../library/validate.js';
import { compileModel } from './model.js';
import type { PlanOptions, PlanResult } from './result.js';
import { search } from './search.js';

export interface PlanRequestOptions extends PlanOptions {
  /** Implementations of the evaluable predicates the library pins (by name and version). */
  readonly evaluables?: EvaluableRegistry;
  /** Skip zod validation of the library (it was validated when registered). */
  readonly trustedLibrary?: boolean;
}

export function plan(library: Library, state: WorldState, goal: Goal, options: PlanRequestOptions = {}): PlanResult {
  const lib = options.trustedLibrary ? library : validateLibrary(library);
  const world = WorldStateSchema.parse(state);
  const g = GoalSchema.parse(goal);
  const model = compileModel(lib, world, g, options.evaluables);
  return search(model, options);
}
