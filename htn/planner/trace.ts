/**
 * The search trace: the decomposition tree and the plan recorded so far, as parallel arrays that
 * backtracking truncates to a mark, plus the cycle index used to recognise a task re-entered in
 * the same state.
 *
 * Nodes are appended in depth-first order, so at success the arrays hold exactly the final tree
 * in pre-order. Cycle detection: compound nodes are indexed by a hash of (task, args, state
 * hash); a check looks only at nodes with the same key and confirms exactly — same task, same
 * args, same 64-bit state hash — and that the node is an ancestor of the task being expanded
 * (still open). The index is kept in step with truncation (LIFO).
 */
import type { FactStore } from './fact-store.js';

export class Trace {
  readonly nodeTask: number[] = [];
  readonly nodeArgs: Int32Array[] = [];
  /** Method index, or -1 for a primitive step. */
  readonly nodeMethod: number[] = [];
  /** Parent node id, -1 for the goal. */
  readonly nodeParent: number[] = [];
  readonly nodeDepth: number[] = [];
  /** State hash when the node was opened. */
  private readonly nodeHashA: number[] = [];
  private readonly nodeHashB: number[] = [];
  /** Cycle-index key of a compound node (-1 when not indexed). */
  private readonly nodeKey: number[] = [];
  readonly stepTask: number[] = [];
  readonly stepArgs: Int32Array[] = [];
  private readonly openByKey = new Map<number, number[]>();

  constructor(
    private readonly store: FactStore,
    private readonly indexCycles: boolean,
  ) {}

  get nodeCount(): number {
    return this.nodeTask.length;
  }

  get stepCount(): number {
    return this.stepTask.length;
  }

  depthOf(parent: number): number {
    return parent < 0 ? 1 : this.nodeDepth[parent]! + 1;
  }

  /** Records a node (method -1: a primitive step, which is also appended to the plan). */
  open(task: number, args: Int32Array, parent: number, method: number): number {
    const id = this.nodeTask.length;
    this.nodeTask.push(task);
    this.nodeArgs.push(args);
    this.nodeMethod.push(method);
    this.nodeParent.push(parent);
    this.nodeDepth.push(this.depthOf(parent));
    this.nodeHashA.push(this.store.hashA);
    this.nodeHashB.push(this.store.hashB);
    if (method >= 0 && this.indexCycles) {
      const key = this.cycleKey(task, args);
      this.nodeKey.push(key);
      let list = this.openByKey.get(key);
      if (!list) this.openByKey.set(key, (list = []));
      list.push(id);
    } else this.nodeKey.push(-1);
    if (method < 0) {
      this.stepTask.push(task);
      this.stepArgs.push(args);
    }
    return id;
  }

  /** Drops every node from id `nodes` on and every step from index `steps` on. */
  truncate(nodes: number, steps: number): void {
    for (let id = this.nodeKey.length - 1; id >= nodes; id--) {
      const key = this.nodeKey[id]!;
      if (key >= 0) this.openByKey.get(key)!.pop();
    }
    this.nodeKey.length = nodes;
    this.nodeTask.length = nodes;
    this.nodeArgs.length = nodes;
    this.nodeMethod.length = nodes;
    this.nodeParent.length = nodes;
    this.nodeDepth.length = nodes;
    this.nodeHashA.length = nodes;
    this.nodeHashB.length = nodes;
    this.stepTask.length = steps;
    this.stepArgs.length = steps;
  }

  /** Whether `task(args)`, about to be expanded under `parent`, is already open in this state. */
  isCycle(task: number, args: Int32Array, parent: number): boolean {
    const candidates = this.openByKey.get(this.cycleKey(task, args));
    if (!candidates || candidates.length === 0) return false;
    const { hashA, hashB } = this.store;
    for (let k = candidates.length - 1; k >= 0; k--) {
      const c = candidates[k]!;
      if (this.nodeTask[c] !== task || this.nodeHashA[c] !== hashA || this.nodeHashB[c] !== hashB) continue;
      const a = this.nodeArgs[c]!;
      let same = true;
      for (let i = 0; i < a.length; i++) {
        if (a[i] !== args[i]) {
          same = false;
          break;
        }
      }
      if (!same) continue;
      const depth = this.nodeDepth[c]!;
      let p = parent;
      while (p >= 0 && this.nodeDepth[p]! > depth) p = this.nodeParent[p]!;
      if (p === c) return true;
    }
    return false;
  }

  private cycleKey(task: number, args: Int32Array): number {
    let h = Math.imul(this.store.hashA ^ (task + 0x9e3779b9), 0x85ebca6b);
    for (let i = 0; i < args.length; i++) h = Math.imul(h ^ (args[i]! + 0x165667b1), 0xc2b2ae35) ^ (h >>> 15);
    return (h ^ (h >>> 16)) >>> 0;
  }
}
