/**
 * Structural checks of an IPC plan's decomposition tree, independent of the domain: ids are
 * unique; every child id names an action or a decomposed task; every node has exactly one parent
 * (the `root` line counts as a parent); everything is reachable from the root; and the listed
 * action order equals the tree's left-to-right leaf order.
 *
 * An artificial `__top -> __top_method <ids>` root (allowed by the IPC format) is unwrapped: its
 * children become the roots. The walk uses an explicit stack (plans reach millions of nodes).
 *
 * Output: the decompositions in pre-order, each with `start` = the number of primitive actions
 * that precede it in execution order (its method precondition is checked in the state after that
 * many actions — the total-order semantics; an empty method sits at that point of the sequence).
 */
import type { IpcAction, IpcDecomposition, IpcPlan } from '../ipc-plan.js';
import { VerifyFailure } from './failure.js';

export const TOP_TASK = '__top';
export const TOP_METHOD = '__top_method';
/** The parent recorded for ids listed on the `root` line. */
export const ROOT_PARENT = -1;

export interface PlanTree {
  readonly actions: ReadonlyMap<number, IpcAction>;
  readonly decompositions: ReadonlyMap<number, IpcDecomposition>;
  /** The ids matched against the problem's initial task network (after unwrapping `__top`). */
  readonly roots: readonly number[];
  /** Decompositions in pre-order (the artificial `__top` excluded), with their start position. */
  readonly preorder: readonly { readonly node: IpcDecomposition; readonly start: number }[];
  /** Action ids in the tree's left-to-right order. */
  readonly leaves: readonly number[];
  /** id → the id of the decomposition that lists it, or ROOT_PARENT for the root line. */
  readonly parent: ReadonlyMap<number, number>;
  /** The artificial `__top` decomposition, if the plan uses one. */
  readonly top: IpcDecomposition | undefined;
}

export function describeAction(a: IpcAction): string {
  return `action ${a.id} (${[a.name, ...a.args].join(' ')})`;
}

export function describeTask(d: IpcDecomposition): string {
  return `task ${d.id} (${[d.task, ...d.args].join(' ')}) -> ${d.method}`;
}

function where(x: { id: number; line?: number }): { id: number; line?: number } {
  return x.line === undefined ? { id: x.id } : { id: x.id, line: x.line };
}

export function buildTree(plan: IpcPlan): PlanTree {
  const actions = new Map<number, IpcAction>();
  const decompositions = new Map<number, IpcDecomposition>();
  for (const a of plan.actions) {
    if (actions.has(a.id)) throw new VerifyFailure(`id ${a.id} is used by two actions`, where(a));
    actions.set(a.id, a);
  }
  for (const d of plan.decompositions) {
    if (actions.has(d.id) || decompositions.has(d.id)) throw new VerifyFailure(`id ${d.id} is used twice`, where(d));
    decompositions.set(d.id, d);
  }

  let roots = plan.root;
  let top: IpcDecomposition | undefined;
  const first = decompositions.get(roots[0] ?? -1);
  if (first && first.task === TOP_TASK) {
    if (roots.length !== 1) throw new VerifyFailure(`"${TOP_TASK}" must be the only root`, where(first));
    if (first.method !== TOP_METHOD || first.args.length > 0) {
      throw new VerifyFailure(`the artificial root must read "${first.id} ${TOP_TASK} -> ${TOP_METHOD} <ids>"`, where(first));
    }
    top = first;
    roots = first.children;
  }

  const rootWhere = plan.rootLine === undefined ? {} : { line: plan.rootLine };
  const parent = new Map<number, number>();
  const describeParent = (p: number): string => (p === ROOT_PARENT ? 'the root line' : describeTask(decompositions.get(p)!));
  // Labels are built only on failure: this loop runs once per tree edge (millions on big plans).
  const claim = (child: number, by: number, at: () => { id?: number; line?: number }): void => {
    if (!actions.has(child) && !decompositions.has(child)) {
      throw new VerifyFailure(`${describeParent(by)} lists id ${child}, which is neither an action nor a decomposed task (missing line?)`, at());
    }
    const prev = parent.get(child);
    if (prev === undefined) {
      parent.set(child, by);
      return;
    }
    if (prev === by) throw new VerifyFailure(`${describeParent(by)} lists id ${child} twice`, at());
    throw new VerifyFailure(`id ${child} has two parents: ${describeParent(prev)} and ${describeParent(by)}`, at());
  };
  if (top) parent.set(top.id, ROOT_PARENT);
  const rootBy = top ? top.id : ROOT_PARENT;
  for (const r of roots) claim(r, rootBy, () => (top ? where(top) : rootWhere));
  for (const d of plan.decompositions) {
    if (d === top) continue;
    for (const c of d.children) claim(c, d.id, () => where(d));
  }

  const leaves: number[] = [];
  const preorder: { node: IpcDecomposition; start: number }[] = [];
  const stack: number[] = [...roots].reverse();
  while (stack.length > 0) {
    const id = stack.pop()!;
    const d = decompositions.get(id);
    if (!d) {
      leaves.push(id);
      continue;
    }
    preorder.push({ node: d, start: leaves.length });
    for (let i = d.children.length - 1; i >= 0; i--) stack.push(d.children[i]!);
  }

  return { actions, decompositions, roots, preorder, leaves, parent, top };
}

/**
 * Coverage and order: every action and every decomposition is reached from the roots, and the
 * listed action order equals the tree's left-to-right leaf order. Run after the roots are matched
 * against the problem, so a wrong root line is reported as such rather than as an order problem.
 */
export function checkCoverageAndOrder(plan: IpcPlan, tree: PlanTree): void {
  const { actions, decompositions, preorder, leaves, parent, top } = tree;
  for (const a of plan.actions) {
    if (!parent.has(a.id)) throw new VerifyFailure(`${describeAction(a)} is not reached from the root tasks (no task lists it as a child)`, where(a));
  }
  if (preorder.length + (top ? 1 : 0) !== decompositions.size) {
    const reached = new Set(preorder.map((p) => p.node.id));
    for (const d of plan.decompositions) {
      if (d !== top && !reached.has(d.id)) throw new VerifyFailure(`${describeTask(d)} is not reachable from the root tasks`, where(d));
    }
  }
  for (let i = 0; i < plan.actions.length; i++) {
    const listed = plan.actions[i]!;
    const inTree = leaves[i]!;
    if (listed.id !== inTree) {
      const a = actions.get(inTree)!;
      throw new VerifyFailure(
        `the action order does not match the decomposition tree: position ${i} lists ${describeAction(listed)}, but the tree's left-to-right order puts ${describeAction(a)} there`,
        where(listed),
      );
    }
  }
}
