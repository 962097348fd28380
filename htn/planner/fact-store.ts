/**
 * The planner's fact state: ground facts over interned symbols, indexed by predicate and by the
 * value at each argument position, with an undo trail so search backtracks by undoing rather than
 * copying.
 *
 * Invariants:
 * - Every list (a predicate's `all` list and each per-argument bucket) is changed only by
 *   append / swap-remove, and `undoTo(mark)` reverts changes in exact LIFO order, restoring every
 *   list to the identical order it had at the mark. Query iterators hold live list references and
 *   positions across backtracking, which is only sound because of this.
 * - Buckets are never deleted once created (an iterator may hold one).
 * - Order of facts in lists is a deterministic function of the (canonically sorted) initial facts
 *   and the sequence of applied effects — never of hash iteration order.
 */

export interface FactRecord {
  readonly args: Int32Array;
  /** Position in the predicate's `all` list while present (kept after removal for exact undo). */
  posAll: number;
  /** Position in each argument bucket while present. */
  readonly posArg: Int32Array;
}

const EMPTY: FactRecord[] = [];

export class PredicateTable {
  readonly all: FactRecord[] = [];
  /** byArg[i]: symbol at position i → facts with that symbol there. */
  readonly byArg: Map<number, FactRecord[]>[];
  private readonly keyed = new Map<number | string, FactRecord>();
  private readonly numericKey: boolean;

  constructor(
    readonly arity: number,
    private readonly symbolCount: number,
  ) {
    this.byArg = Array.from({ length: arity }, () => new Map<number, FactRecord[]>());
    this.numericKey = Math.pow(Math.max(symbolCount, 2), arity) < Number.MAX_SAFE_INTEGER;
  }

  key(args: ArrayLike<number>): number | string {
    if (this.numericKey) {
      let k = 0;
      for (let i = 0; i < this.arity; i++) k = k * this.symbolCount + args[i]!;
      return k;
    }
    return Array.prototype.join.call(args, ',');
  }

  find(args: ArrayLike<number>): FactRecord | undefined {
    return this.keyed.get(this.key(args));
  }

  has(args: ArrayLike<number>): boolean {
    return this.keyed.has(this.key(args));
  }

  /** Facts whose argument `position` is `symbol` (a live list; do not mutate). */
  bucket(position: number, symbol: number): FactRecord[] {
    return this.byArg[position]!.get(symbol) ?? EMPTY;
  }

  insert(rec: FactRecord): void {
    this.keyed.set(this.key(rec.args), rec);
    rec.posAll = this.all.length;
    this.all.push(rec);
    for (let i = 0; i < this.arity; i++) {
      const map = this.byArg[i]!;
      const sym = rec.args[i]!;
      let list = map.get(sym);
      if (!list) {
        list = [];
        map.set(sym, list);
      }
      rec.posArg[i] = list.length;
      list.push(rec);
    }
  }

  /** Swap-remove from every list; positions stay recorded on `rec` for `reinsert`. */
  remove(rec: FactRecord): void {
    this.keyed.delete(this.key(rec.args));
    const last = this.all.pop()!;
    if (last !== rec) {
      this.all[rec.posAll] = last;
      last.posAll = rec.posAll;
    }
    for (let i = 0; i < this.arity; i++) {
      const list = this.byArg[i]!.get(rec.args[i]!)!;
      const tail = list.pop()!;
      if (tail !== rec) {
        const p = rec.posArg[i]!;
        list[p] = tail;
        tail.posArg[i] = p;
      }
    }
  }

  /** Exact inverse of the most recent `remove(rec)` (LIFO). */
  reinsert(rec: FactRecord): void {
    this.keyed.set(this.key(rec.args), rec);
    restore(this.all, rec, rec.posAll, (r, p) => (r.posAll = p));
    for (let i = 0; i < this.arity; i++) {
      const list = this.byArg[i]!.get(rec.args[i]!)!;
      restore(list, rec, rec.posArg[i]!, (r, p) => (r.posArg[i] = p));
    }
  }

  /** Exact inverse of the most recent `insert(rec)` (LIFO): it is last in every list. */
  unappend(rec: FactRecord): void {
    this.keyed.delete(this.key(rec.args));
    this.all.pop();
    for (let i = 0; i < this.arity; i++) this.byArg[i]!.get(rec.args[i]!)!.pop();
  }
}

function restore(list: FactRecord[], rec: FactRecord, pos: number, setPos: (r: FactRecord, p: number) => void): void {
  if (pos === list.length) {
    list.push(rec);
    return;
  }
  const moved = list[pos]!;
  list.push(moved);
  setPos(moved, list.length - 1);
  list[pos] = rec;
}

const ADDED = 0;
const REMOVED = 1;

/** A 32-bit hash of one fact (deterministic; two seeds give two independent hashes). */
function factHash(seed: number, pred: number, args: ArrayLike<number>): number {
  let h = Math.imul(seed ^ (pred + 0x9e3779b9), 0x85ebca6b);
  for (let i = 0; i < args.length; i++) {
    h = Math.imul(h ^ (args[i]! + 0x27d4eb2f), 0xc2b2ae35);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 13), 0x5bd1e995);
  return (h ^ (h >>> 16)) >>> 0;
}

export class FactStore {
  readonly tables: PredicateTable[];
  /**
   * Order-independent hash of the whole state (XOR of per-fact hashes under two seeds), kept up
   * to date by add/delete/undo; used to recognise a task re-entered in the same state.
   */
  hashA = 0;
  hashB = 0;
  private readonly trailKind: number[] = [];
  private readonly trailPred: number[] = [];
  private readonly trailRec: FactRecord[] = [];

  constructor(arities: readonly number[], symbolCount: number) {
    this.tables = arities.map((a) => new PredicateTable(a, symbolCount));
  }

  has(pred: number, args: ArrayLike<number>): boolean {
    return this.tables[pred]!.has(args);
  }

  /** Adds a fact (no-op if present). Recorded on the trail. */
  add(pred: number, args: Int32Array): void {
    const table = this.tables[pred]!;
    if (table.has(args)) return;
    const rec: FactRecord = { args, posAll: -1, posArg: new Int32Array(table.arity) };
    table.insert(rec);
    this.toggleHash(pred, args);
    this.trailKind.push(ADDED);
    this.trailPred.push(pred);
    this.trailRec.push(rec);
  }

  /** Deletes a fact (no-op if absent). Recorded on the trail. */
  delete(pred: number, args: ArrayLike<number>): void {
    const table = this.tables[pred]!;
    const rec = table.find(args);
    if (!rec) return;
    table.remove(rec);
    this.toggleHash(pred, rec.args);
    this.trailKind.push(REMOVED);
    this.trailPred.push(pred);
    this.trailRec.push(rec);
  }

  private toggleHash(pred: number, args: ArrayLike<number>): void {
    this.hashA = (this.hashA ^ factHash(0x1b873593, pred, args)) >>> 0;
    this.hashB = (this.hashB ^ factHash(0x6a09e667, pred, args)) >>> 0;
  }

  /** The current trail length, to pass to `undoTo` later. */
  mark(): number {
    return this.trailKind.length;
  }

  /** Reverts every change made after `mark`, newest first. */
  undoTo(mark: number): void {
    const kinds = this.trailKind;
    for (let i = kinds.length - 1; i >= mark; i--) {
      const table = this.tables[this.trailPred[i]!]!;
      const rec = this.trailRec[i]!;
      if (kinds[i] === ADDED) table.unappend(rec);
      else table.reinsert(rec);
      this.toggleHash(this.trailPred[i]!, rec.args);
    }
    kinds.length = mark;
    this.trailPred.length = mark;
    this.trailRec.length = mark;
  }

  /** Forgets the trail (used once the initial facts are loaded: they are never undone). */
  clearTrail(): void {
    this.trailKind.length = 0;
    this.trailPred.length = 0;
    this.trailRec.length = 0;
  }
}
