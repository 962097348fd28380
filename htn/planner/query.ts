/**
 * Compiled preconditions: a formula becomes a sequence of steps over a binding array of variable
 * slots, run lazily by `QueryRun` (an explicit-stack join — no recursion over steps) so that a
 * method's bindings are produced one at a time, in a deterministic order, as search backtracks.
 *
 * Step kinds:
 * - `match`: a positive atom; candidates come from the fact index (the smallest bucket among the
 *   bound argument positions, else the predicate's whole list) and bind the unbound variables;
 * - `enum`: a variable no atom binds, enumerated over its type's members (canonical order);
 * - `assign`: `(= ?x t)` with ?x unbound binds ?x to t;
 * - `test`: any other formula (negation, disjunction, quantifiers, evaluables, equality), placed at
 *   the first step where all its free variables are bound, evaluated by `holds` (which recurses on
 *   formula depth only).
 *
 * A term is encoded as a number: >= 0 is a variable slot, < 0 is the constant with id `-t - 1`.
 * Every binding is checked against the slot's declared type.
 */
import type { EvaluablePredicate } from '../library/evaluables.js';
import type { FactRecord, FactStore } from './fact-store.js';
import type { SymbolTable, TypeTable } from './symbols.js';

export type CTerm = number;

export type CFormula =
  | { k: 'true' }
  | { k: 'atom'; pred: number; args: CTerm[]; scratch: Int32Array }
  | { k: 'eval'; fn: EvaluablePredicate; args: CTerm[] }
  | { k: 'and' | 'or'; args: CFormula[] }
  | { k: 'not'; arg: CFormula }
  | { k: 'eq'; a: CTerm; b: CTerm }
  | { k: 'forall' | 'exists'; vars: number[]; types: number[]; body: CFormula }
  | { k: 'isa'; t: CTerm; type: number };

export type Step =
  | { k: 'match'; pred: number; args: CTerm[]; binds: number[]; scratch: Int32Array; source: string }
  | { k: 'enum'; v: number; type: number; binds: number[]; source: string }
  | { k: 'assign'; v: number; from: CTerm; binds: number[]; source: string }
  | { k: 'test'; f: CFormula; binds: number[]; source: string };

export interface Query {
  readonly steps: Step[];
  /** Declared type of every slot (bindings are checked against it). */
  readonly slotTypes: number[];
  /**
   * When set, solutions that agree on these slots are the same alternative (e.g. a method's
   * pulled-up look-ahead binds helper variables the subtasks never see): only the first is
   * returned, so backtracking does not re-explore an identical decomposition.
   */
  projection?: number[];
}

export interface QueryContext {
  readonly store: FactStore;
  readonly types: TypeTable;
  readonly symbols: SymbolTable;
}

export function termValue(t: CTerm, b: Int32Array): number {
  return t >= 0 ? b[t]! : -t - 1;
}

/** Whether a fully bound formula holds in the current state (quantified slots are scratch). */
export function holds(f: CFormula, b: Int32Array, ctx: QueryContext): boolean {
  switch (f.k) {
    case 'true':
      return true;
    case 'atom': {
      const s = f.scratch;
      for (let i = 0; i < f.args.length; i++) s[i] = termValue(f.args[i]!, b);
      return ctx.store.has(f.pred, s);
    }
    case 'eval':
      return f.fn.test(f.args.map((t) => ctx.symbols.value(termValue(t, b))));
    case 'and':
      for (const g of f.args) if (!holds(g, b, ctx)) return false;
      return true;
    case 'or':
      for (const g of f.args) if (holds(g, b, ctx)) return true;
      return false;
    case 'not':
      return !holds(f.arg, b, ctx);
    case 'eq':
      return termValue(f.a, b) === termValue(f.b, b);
    case 'isa':
      return ctx.types.members[f.type]![termValue(f.t, b)] === 1;
    case 'forall':
    case 'exists':
      return quantified(f, 0, b, ctx);
  }
}

function quantified(f: Extract<CFormula, { k: 'forall' | 'exists' }>, i: number, b: Int32Array, ctx: QueryContext): boolean {
  if (i === f.vars.length) return holds(f.body, b, ctx);
  const slot = f.vars[i]!;
  const forall = f.k === 'forall';
  const objects = ctx.types.objects[f.types[i]!]!;
  let result = forall;
  for (let j = 0; j < objects.length; j++) {
    b[slot] = objects[j]!;
    const r = quantified(f, i + 1, b, ctx);
    if (forall ? !r : r) {
      result = !forall;
      break;
    }
  }
  b[slot] = -1;
  return result;
}

const NO_FACTS: FactRecord[] = [];

/**
 * One lazy enumeration of a query's solutions over a binding array. `next()` yields the next
 * solution (bindings filled in) or returns false when there are none left. Between calls the
 * caller may change the fact state only if it restores it exactly before calling again.
 */
export class QueryRun {
  private readonly pos: Int32Array;
  private readonly lists: (readonly FactRecord[] | Int32Array)[];
  private started = false;
  private finished = false;
  /** The deepest step whose candidates ran out (for "which precondition failed first"). */
  deepest = -1;

  constructor(
    private readonly query: Query,
    readonly bindings: Int32Array,
    private readonly ctx: QueryContext,
  ) {
    const n = query.steps.length;
    this.pos = new Int32Array(n);
    this.lists = new Array(n).fill(NO_FACTS);
  }

  next(): boolean {
    const projection = this.query.projection;
    if (!projection) return this.nextSolution();
    for (;;) {
      if (!this.nextSolution()) return false;
      let key = '';
      for (let i = 0; i < projection.length; i++) key += `${this.bindings[projection[i]!]},`;
      this.seen ??= new Set();
      if (!this.seen.has(key)) {
        this.seen.add(key);
        return true;
      }
    }
  }

  private seen: Set<string> | undefined;

  private nextSolution(): boolean {
    if (this.finished) return false;
    const n = this.query.steps.length;
    let level: number;
    if (!this.started) {
      this.started = true;
      if (n === 0) return true;
      level = 0;
      this.init(0);
    } else {
      if (n === 0) {
        this.finished = true;
        return false;
      }
      level = n - 1;
    }
    for (;;) {
      if (this.advance(level)) {
        level++;
        if (level === n) return true;
        this.init(level);
      } else {
        if (level > this.deepest) this.deepest = level;
        level--;
        if (level < 0) {
          this.finished = true;
          return false;
        }
      }
    }
  }

  private init(level: number): void {
    this.pos[level] = 0;
    const step = this.query.steps[level]!;
    for (let i = 0; i < step.binds.length; i++) this.bindings[step.binds[i]!] = -1;
    if (step.k === 'match') {
      const table = this.ctx.store.tables[step.pred]!;
      const b = this.bindings;
      let best: readonly FactRecord[] | undefined;
      let allBound = true;
      for (let i = 0; i < step.args.length; i++) {
        const t = step.args[i]!;
        const v = t >= 0 ? b[t]! : -t - 1;
        if (v < 0) {
          allBound = false;
          continue;
        }
        const bucket = table.bucket(i, v);
        if (best === undefined || bucket.length < best.length) best = bucket;
      }
      // A fully bound atom is a membership test (lists[level] = null marker via the empty list).
      this.lists[level] = allBound ? NO_FACTS : (best ?? table.all);
      if (allBound) this.pos[level] = -1;
    } else if (step.k === 'enum') {
      this.lists[level] = this.ctx.types.objects[step.type]!;
    }
  }

  private advance(level: number): boolean {
    const step = this.query.steps[level]!;
    const b = this.bindings;
    const binds = step.binds;
    for (let i = 0; i < binds.length; i++) b[binds[i]!] = -1;
    const members = this.ctx.types.members;
    const slotTypes = this.query.slotTypes;
    switch (step.k) {
      case 'match': {
        const p = this.pos[level]!;
        if (p === -1) {
          this.pos[level] = -2;
          const s = step.scratch;
          for (let i = 0; i < step.args.length; i++) s[i] = termValue(step.args[i]!, b);
          return this.ctx.store.has(step.pred, s);
        }
        if (p === -2) return false;
        const list = this.lists[level] as readonly FactRecord[];
        const args = step.args;
        for (let j = p; j < list.length; j++) {
          const fact = list[j]!.args;
          let ok = true;
          for (let i = 0; i < args.length; i++) {
            const t = args[i]!;
            const sym = fact[i]!;
            if (t < 0) {
              if (-t - 1 !== sym) { ok = false; break; }
            } else {
              const cur = b[t]!;
              if (cur === -1) {
                if (members[slotTypes[t]!]![sym] !== 1) { ok = false; break; }
                b[t] = sym;
              } else if (cur !== sym) { ok = false; break; }
            }
          }
          if (ok) {
            this.pos[level] = j + 1;
            return true;
          }
          for (let i = 0; i < binds.length; i++) b[binds[i]!] = -1;
        }
        this.pos[level] = list.length;
        return false;
      }
      case 'enum': {
        const list = this.lists[level] as Int32Array;
        const typeBits = members[slotTypes[step.v]!]!;
        for (let j = this.pos[level]!; j < list.length; j++) {
          const sym = list[j]!;
          if (typeBits[sym] === 1) {
            this.pos[level] = j + 1;
            b[step.v] = sym;
            return true;
          }
        }
        this.pos[level] = list.length;
        return false;
      }
      case 'assign': {
        if (this.pos[level] !== 0) return false;
        this.pos[level] = 1;
        const sym = termValue(step.from, b);
        if (members[slotTypes[step.v]!]![sym] !== 1) return false;
        b[step.v] = sym;
        return true;
      }
      case 'test': {
        if (this.pos[level] !== 0) return false;
        this.pos[level] = 1;
        return holds(step.f, b, this.ctx);
      }
    }
  }
}
