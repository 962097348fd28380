/**
 * The planner as mining calls it: the real HTN engine (htn/planner) over a library version, a
 * recorded observation and a goal, with the runtime's default search limits. A goal or state the
 * engine refuses is an `error` result, never a throw, so one odd journal cannot stop a mining run.
 * Pure.
 */
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import type { Goal, Library, WorldState } from '../htn/library/schema.js';
import { plan } from '../htn/planner/plan.js';
import { planDigest, type PlanResult } from '../htn/planner/result.js';
import { DEFAULT_LIMITS } from '../machines/limits.js';

export interface PlanningOptions {
  evaluables?: EvaluableRegistry | undefined;
  maxNodes?: number;
  maxDepth?: number;
}

/** The runtime's default search limits: a recorded decomposition is re-derived under the limits runs get. */
const MAX_NODES = DEFAULT_LIMITS.maxNodes;
const MAX_DEPTH = DEFAULT_LIMITS.maxDepth;

export type Planned = PlanResult | { kind: 'error'; reason: string };

export function planOn(library: Library, state: WorldState, goal: Goal, options: PlanningOptions): Planned {
  try {
    return plan(library, state, goal, { maxNodes: options.maxNodes ?? MAX_NODES, maxDepth: options.maxDepth ?? MAX_DEPTH, ...(options.evaluables ? { evaluables: options.evaluables } : {}), trustedLibrary: true });
  } catch (err) {
    return { kind: 'error', reason: (err as Error).message };
  }
}

/** The plan digest a decomposition has, or undefined when there is no plan. */
export function digestOfPlanned(p: Planned): string | undefined {
  return p.kind === 'plan' ? planDigest(p) : undefined;
}

/** The steps of a plan as operator calls (what an authored fragment is). */
export function stepsOf(p: Planned): Goal[] | undefined {
  return p.kind === 'plan' ? p.steps.map((s) => ({ task: s.operator, args: [...s.args] })) : undefined;
}
