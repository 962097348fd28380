/**
 * A readable one-paragraph explanation of a "no method" planning result — what the model sees on
 * the gap path and what a person debugging a domain reads. Pure; derived from the planner's
 * structured explanation only.
 */
import type { MethodAttempt, PlanResult, TaskFailure } from '../htn/planner/result.js';

function call(task: string, args: ReadonlyArray<string | number>): string {
  return `${task}(${args.join(', ')})`;
}

function attempt(a: MethodAttempt): string {
  return a.failed ? `${a.method}: ${a.outcome} ${a.failed}` : `${a.method}: ${a.outcome}`;
}

function failure(f: TaskFailure): string {
  if (f.methods) return `${call(f.task, f.args)} — ${f.methods.length ? f.methods.map(attempt).join('; ') : 'no method declared'}`;
  return `${call(f.task, f.args)} — ${f.failed ?? 'not applicable'}`;
}

export function explainNoMethod(result: Extract<PlanResult, { kind: 'no-method' }>): string {
  const e = result.explanation;
  const parts = [`no method covers ${failure(e.goal)}`];
  if (e.deepest && (e.deepest.task !== e.goal.task || e.deepest.stepsBefore > 0)) parts.push(`deepest failure after ${e.deepest.stepsBefore} step(s): ${failure(e.deepest)}`);
  if (e.goalConditionFailed) parts.push('a full decomposition was found but the goal condition did not hold');
  return parts.join('. ');
}
