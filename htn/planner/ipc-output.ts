/**
 * Converts a planner result for an HDDL problem into the IPC plan structure (htn/ipc-plan.ts).
 * Ids are the decomposition tree's node ids; the synthetic `__top` node is not written — its
 * children form the `root` line. Actions are listed in execution order.
 */
import type { IpcAction, IpcDecomposition, IpcPlan } from '../ipc-plan.js';
import { TOP_TASK } from '../hddl/compile.js';
import type { PlanResult } from './result.js';

export function toIpcPlan(result: Extract<PlanResult, { kind: 'plan' }>): IpcPlan {
  const { nodes, roots } = result.tree;
  const actions: IpcAction[] = [];
  const decompositions: IpcDecomposition[] = [];
  let root: number[] = [...roots];
  nodes.forEach((node, id) => {
    const args = node.args.map(String);
    if ('step' in node) actions.push({ id, name: node.task, args });
    else if (node.task === TOP_TASK && roots.includes(id)) root = [...node.children];
    else decompositions.push({ id, task: node.task, args, method: node.method, children: [...node.children] });
  });
  return { actions, root, decompositions };
}
