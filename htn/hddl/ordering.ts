/**
 * Normalises `:subtasks` + `:ordering` into one total order (Kahn's algorithm over the subtask
 * ids). This front end is for total-order HTN: an ordering that leaves two subtasks unordered,
 * names an unknown id, or has a cycle is rejected with the position of the offending part.
 *
 * Invariant: when the order is total, the result is the unique topological order, independent of
 * the order in which constraints were written.
 */
import type { SourcePos, TaskCall } from './ast.js';

export interface OrderingPair {
  readonly before: { readonly text: string; readonly pos: SourcePos };
  readonly after: { readonly text: string; readonly pos: SourcePos };
  readonly pos: SourcePos;
}

export function orderSubtasks(
  calls: readonly TaskCall[],
  pairs: readonly OrderingPair[],
  owner: string,
  at: SourcePos,
  fail: (pos: SourcePos, reason: string) => never,
): TaskCall[] {
  if (calls.length <= 1 && pairs.length === 0) return [...calls];
  const index = new Map<string, number>();
  calls.forEach((c, i) => {
    if (c.id === undefined) return;
    if (index.has(c.id)) fail(c.pos, `${owner}: duplicate subtask id "${c.id}"`);
    index.set(c.id, i);
  });
  const succ: number[][] = calls.map(() => []);
  const indeg: number[] = calls.map(() => 0);
  for (const p of pairs) {
    const a = index.get(p.before.text);
    const b = index.get(p.after.text);
    if (a === undefined) fail(p.before.pos, `${owner}: unknown subtask id "${p.before.text}" in :ordering`);
    if (b === undefined) fail(p.after.pos, `${owner}: unknown subtask id "${p.after.text}" in :ordering`);
    succ[a]!.push(b);
    indeg[b]!++;
  }
  const out: TaskCall[] = [];
  let ready = indeg.flatMap((d, i) => (d === 0 ? [i] : []));
  while (ready.length > 0) {
    if (ready.length > 1) {
      const [x, y] = ready.map((i) => calls[i]!);
      fail(at, `${owner}: ordering is not total (subtasks "${x!.id ?? x!.name}" and "${y!.id ?? y!.name}" are unordered)`);
    }
    const i = ready[0]!;
    out.push(calls[i]!);
    ready = [];
    for (const j of succ[i]!) if (--indeg[j]! === 0) ready.push(j);
  }
  if (out.length !== calls.length) fail(at, `${owner}: :ordering has a cycle`);
  return out;
}
