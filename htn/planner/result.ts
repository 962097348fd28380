/**
 * What the planner returns — plain JSON data, so the runtime can hash it (`planDigest`) and the
 * journal can record it.
 *
 * - `plan`: the closed sub-plan (ground steps with their actuator bindings) and its decomposition
 *   tree. The tree is flat (`nodes` indexed by id, `roots` the top-level ids) so that encoding it
 *   never recurses on plan depth; nodes are numbered in pre-order.
 * - `no-method`: no decomposition of the goal exists under the library (the runtime's gap path),
 *   with an explanation of why.
 * - `limit`: a deterministic budget (`nodes`, `depth`) ran out, or the caller's `shouldStop`
 *   interrupted the search (`interrupted`: CLI and benchmark only — never in a runtime epoch).
 *
 * `stats` is informative and is excluded from `planDigest`, so engine optimisations that change
 * how much search was done do not change the digest of the same plan.
 */
import { digestOf } from '../../journal/digest.js';
import type { Value } from '../library/evaluables.js';

export interface ActuatorBinding {
  readonly actuator: string;
  readonly args: Record<string, Value>;
}

export interface PlanStep {
  readonly operator: string;
  readonly args: Value[];
  /** Weft domains: the actuator this step dispatches, with explicit ground args. */
  readonly actuator?: string;
  readonly actuatorArgs?: Record<string, Value>;
  readonly compensate?: ActuatorBinding;
  readonly readOnly: boolean;
}

export type TreeNode =
  | { readonly task: string; readonly args: Value[]; readonly step: number }
  | { readonly task: string; readonly args: Value[]; readonly method: string; readonly children: number[] };

export interface DecompositionTree {
  readonly roots: number[];
  readonly nodes: TreeNode[];
}

/** Why one method did not yield a decomposition. */
export interface MethodAttempt {
  readonly method: string;
  /**
   * `task-args`: the task's args do not unify with the method's head or fail its param types;
   * `precondition`: no binding satisfies the precondition — `failed` is the first literal that
   * had no solution; `subtasks`: bindings exist but every decomposition failed further down;
   * `cycle`: not tried, the same task with the same args is already open with no action between.
   */
  readonly outcome: 'task-args' | 'precondition' | 'subtasks' | 'cycle';
  readonly failed?: string;
}

export interface TaskFailure {
  readonly task: string;
  readonly args: Value[];
  /** How many steps of the plan had been applied when this task failed. */
  readonly stepsBefore: number;
  /** Compound task: every method, in declared order. */
  readonly methods?: MethodAttempt[];
  /** Primitive task: the first precondition literal that does not hold (or its type check). */
  readonly failed?: string;
}

export interface NoMethodExplanation {
  /** The goal task at the initial state: each method and why it failed. */
  readonly goal: TaskFailure;
  /** The failure the search got furthest into the plan before (the usual place to look). */
  readonly deepest: TaskFailure | undefined;
  /** The goal condition (final-state check) failed at least once after a full decomposition. */
  readonly goalConditionFailed: boolean;
}

export interface PlanStats {
  readonly nodes: number;
}

export type PlanResult =
  | { readonly kind: 'plan'; readonly steps: PlanStep[]; readonly tree: DecompositionTree; readonly stats: PlanStats }
  | {
      readonly kind: 'no-method';
      readonly task: string;
      readonly args: Value[];
      readonly explanation: NoMethodExplanation;
      readonly stats: PlanStats;
    }
  | {
      readonly kind: 'limit';
      readonly limit: 'nodes' | 'depth' | 'interrupted';
      /** The budget that ran out (absent for `interrupted`). */
      readonly budget?: number;
      /** The task being expanded when the limit was hit. */
      readonly task: string;
      readonly args: Value[];
      /** The failure the search got furthest into the plan before, if any (for debugging a domain). */
      readonly deepest?: TaskFailure;
      readonly stats: PlanStats;
    };

export interface PlanOptions {
  /** Budget on search nodes (method bindings tried + operator applications). Part of the pin. */
  readonly maxNodes?: number;
  /** Budget on decomposition depth (the goal is at depth 1). Part of the pin. */
  readonly maxDepth?: number;
  /**
   * Prune re-entry of a compound task with the same args in the same state (compared by a 64-bit
   * state hash) as an open ancestor: left recursion and switch-off/switch-on loops would otherwise
   * recurse forever. Plans found are unaffected in validity; in contrived domains this can miss a
   * plan that needs the repetition. Default true. Part of the pin.
   */
  readonly cycleCheck?: boolean;
  /** CLI/benchmark only: polled every few thousand nodes; returning true stops the search. */
  readonly shouldStop?: () => boolean;
}

export const DEFAULT_MAX_NODES = 1_000_000;
export const DEFAULT_MAX_DEPTH = 100_000;

/** The digest the runtime records for an epoch: canonical JSON of the result without `stats`. */
export function planDigest(result: PlanResult): string {
  const { stats: _stats, ...rest } = result;
  return digestOf(rest);
}
