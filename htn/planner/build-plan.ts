/**
 * Turns the search trace of a successful decomposition into the result data: ground steps with
 * their actuator bindings, and the flat decomposition tree (pre-order ids, children in subtask
 * order). Values are the original strings and numbers; nothing here depends on hash order.
 */
import type { Value } from '../library/evaluables.js';
import type { Model } from './model.js';
import type { CActuatorCall } from './model.js';
import { termValue } from './query.js';
import type { PlanResult, PlanStep, TreeNode } from './result.js';
import type { Trace } from './trace.js';

export function buildPlan(model: Model, t: Trace, nodes: number, varValue: number[], varType: number[]): PlanResult {
  const value = (id: number): Value => {
    if (id >= 0) return model.symbols.value(id);
    // A logic variable: its binding, or (never constrained) the first object of its type.
    const k = -id - 1;
    const bound = varValue[k]!;
    if (bound >= 0) return model.symbols.value(bound);
    const first = model.types.objects[varType[k]!]![0];
    return first === undefined ? `?_${k}` : model.symbols.value(first);
  };
  const bind = (call: CActuatorCall, args: Int32Array): Record<string, Value> => {
    const out: Record<string, Value> = {};
    for (const [key, term] of call.args) out[key] = value(termValue(term, args));
    return out;
  };
  const steps: PlanStep[] = t.stepTask.map((task, i) => {
    const op = model.tasks[task]!.operator!;
    const args = t.stepArgs[i]!;
    return {
      operator: op.name,
      args: Array.from(args, value),
      ...(op.actuator ? { actuator: op.actuator.actuator, actuatorArgs: bind(op.actuator, args) } : {}),
      ...(op.compensate ? { compensate: { actuator: op.compensate.actuator, args: bind(op.compensate, args) } } : {}),
      readOnly: op.readOnly,
    };
  });
  const children: number[][] = t.nodeTask.map(() => []);
  const roots: number[] = [];
  for (let id = 0; id < t.nodeTask.length; id++) {
    const p = t.nodeParent[id]!;
    (p < 0 ? roots : children[p]!).push(id);
  }
  let stepIndex = 0;
  const treeNodes: TreeNode[] = t.nodeTask.map((task, id) => {
    const name = model.tasks[task]!.name;
    const args = Array.from(t.nodeArgs[id]!, value);
    const method = t.nodeMethod[id]!;
    if (method < 0) return { task: name, args, step: stepIndex++ };
    return { task: name, args, method: model.library.methods[method]!.name, children: children[id]! };
  });
  return { kind: 'plan', steps, tree: { roots, nodes: treeNodes }, stats: { nodes } };
}
