/**
 * Compiles library formulas (schema.ts) into the step sequences of query.ts.
 *
 * Conjunctions (and `exists` at conjunction level) are flattened; positive fact atoms become
 * `match` steps, most constrained first (all args bound, then some, then none; written order
 * among equals); everything else becomes a `test` placed right after the step that binds its last
 * free variable. Variables no atom binds are enumerated over their type when a test needs them
 * (`enum`), narrowed by an `is-a` constraint when there is one; variables only subtasks use stay
 * unbound (the search passes them down as logic variables). The compiled order is a pure
 * function of the library, so binding order — and with it the plan — is deterministic.
 */
import { isVariable, type Formula, type Param, type Term } from '../library/schema.js';
import type { EvaluablePredicate } from '../library/evaluables.js';
import { formatFormula } from './format.js';
import type { CFormula, CTerm, Query, Step } from './query.js';
import { HtnInputError, type SymbolTable, type TypeTable } from './symbols.js';

export interface CompileEnv {
  readonly symbols: SymbolTable;
  readonly types: TypeTable;
  readonly predicates: Map<string, number>;
  readonly evaluables: Map<string, EvaluablePredicate>;
}

export type Scope = ReadonlyMap<string, number>;

interface Deferred {
  f: CFormula;
  free: number[];
  source: string;
}

export class QueryBuilder {
  readonly slotTypes: number[] = [];
  readonly steps: Step[] = [];
  private readonly bound: boolean[] = [];
  private deferred: Deferred[] = [];
  /** Where the conjuncts being added come from (pull-up), appended to their explanation text. */
  origin = '';

  constructor(readonly env: CompileEnv) {}

  typeId(name: string): number {
    const t = this.env.types.index.get(name);
    if (t === undefined) throw new HtnInputError(`unknown type ${name}`);
    return t;
  }

  /** A fresh variable slot of the given type. */
  slot(type: string): number {
    this.slotTypes.push(this.typeId(type));
    this.bound.push(false);
    return this.slotTypes.length - 1;
  }

  /** Declares parameters into a new scope (extending `outer`). */
  declare(params: readonly Param[], outer: Scope = new Map()): Map<string, number> {
    const scope = new Map(outer);
    for (const p of params) scope.set(p.name, this.slot(p.type));
    return scope;
  }

  isBound(slot: number): boolean {
    return this.bound[slot] === true;
  }

  /** Marks slots as bound before the query starts (task arguments, operator parameters). */
  markBound(slot: number): void {
    this.bound[slot] = true;
  }

  term(t: Term, scope: Scope): CTerm {
    if (isVariable(t)) {
      const slot = scope.get(t);
      if (slot === undefined) throw new HtnInputError(`variable ${t} is not declared`);
      return slot;
    }
    const id = this.env.symbols.id(t);
    if (id < 0) throw new HtnInputError(`symbol ${String(t)} is unknown`);
    return -id - 1;
  }

  private isBoundTerm(t: CTerm): boolean {
    return t < 0 || this.bound[t] === true;
  }

  /**
   * Adds a formula as conjuncts of the query. A conjunction (with `exists` flattened into it) is
   * ordered greedily: filters as written (each waits for its variables), then among the fact
   * atoms the most constrained first — all arguments bound, then some bound, then none — keeping
   * the written order among equals; `sortof` enumerations last. A pure function of the library,
   * so binding order stays deterministic; it avoids scanning a whole predicate when a later atom
   * could have been looked up by a bound argument.
   */
  add(f: Formula, scope: Scope): void {
    const items: { f: Formula; scope: Scope }[] = [];
    const flatten = (g: Formula, sc: Scope): void => {
      if (g.op === 'and') for (const h of g.args) flatten(h, sc);
      else if (g.op === 'exists') flatten(g.body, this.declare(g.vars, sc));
      else if (g.op !== 'true') items.push({ f: g, scope: sc });
    };
    flatten(f, scope);
    const atoms: { f: Extract<Formula, { op: 'atom' }>; scope: Scope }[] = [];
    const late: { f: Formula; scope: Scope }[] = [];
    for (const it of items) {
      if (it.f.op === 'atom' && this.env.predicates.has(it.f.pred)) atoms.push(it as (typeof atoms)[number]);
      else if (it.f.op === 'is-a') late.push(it);
      else this.addOne(it.f, it.scope);
    }
    while (atoms.length > 0) {
      let best = 0;
      let bestScore = -1;
      atoms.forEach((a, i) => {
        const args = a.f.args.map((t) => this.term(t, a.scope));
        const bound = args.filter((t) => this.isBoundTerm(t)).length;
        const score = bound === args.length ? 2 : bound > 0 ? 1 : 0;
        if (score > bestScore) {
          bestScore = score;
          best = i;
        }
      });
      const [chosen] = atoms.splice(best, 1);
      this.addOne(chosen!.f, chosen!.scope);
    }
    for (const it of late) this.addOne(it.f, it.scope);
  }

  private addOne(f: Formula, scope: Scope): void {
    switch (f.op) {
      case 'true':
        return;
      case 'and':
      case 'exists':
        return this.add(f, scope);
      case 'atom': {
        const pred = this.env.predicates.get(f.pred);
        if (pred === undefined) break; // an evaluable: a test
        const args = f.args.map((a) => this.term(a, scope));
        const binds = [...new Set(args.filter((a) => a >= 0 && !this.bound[a]))];
        this.push({ k: 'match', pred, args, binds, scratch: new Int32Array(args.length), source: this.describe(f) });
        return;
      }
      case 'eq': {
        const a = this.term(f.left, scope);
        const b = this.term(f.right, scope);
        if (this.isBoundTerm(a) !== this.isBoundTerm(b)) {
          const [v, from] = this.isBoundTerm(a) ? [b, a] : [a, b];
          this.push({ k: 'assign', v, from, binds: [v], source: this.describe(f) });
          return;
        }
        break;
      }
      case 'is-a': {
        const t = this.term(f.term, scope);
        if (!this.isBoundTerm(t)) {
          this.push({ k: 'enum', v: t, type: this.typeId(f.type), binds: [t], source: this.describe(f) });
          return;
        }
        break;
      }
      default:
        break;
    }
    const free = new Set<number>();
    const c = this.formula(f, scope, free);
    this.deferred.push({ f: c, free: [...free].sort((x, y) => x - y), source: this.describe(f) });
    this.flush();
  }

  private describe(f: Formula): string {
    return this.origin ? `${formatFormula(f)} (needed by ${this.origin})` : formatFormula(f);
  }

  /** Enumerates every still-unbound slot in `required` (then any test waiting on them). */
  bindAll(required: readonly number[]): void {
    for (const d of this.deferred) for (const v of d.free) this.enumerate(v);
    for (const v of required) this.enumerate(v);
  }

  build(): Query {
    this.bindAll([]);
    return { steps: this.steps, slotTypes: this.slotTypes };
  }

  private enumerate(v: number): void {
    if (this.bound[v]) return;
    this.push({ k: 'enum', v, type: this.slotTypes[v]!, binds: [v], source: `(bind ${v})` });
  }

  private push(step: Step): void {
    this.steps.push(step);
    for (const v of step.binds) this.bound[v] = true;
    this.flush();
  }

  private flush(): void {
    const waiting: Deferred[] = [];
    const ready: Deferred[] = [];
    for (const d of this.deferred) (d.free.every((v) => this.bound[v]) ? ready : waiting).push(d);
    this.deferred = waiting;
    for (const d of ready) this.steps.push({ k: 'test', f: d.f, binds: [], source: d.source });
  }

  /** Compiles a formula for `holds`; collects its free variable slots into `free`. */
  formula(f: Formula, scope: Scope, free: Set<number>): CFormula {
    const term = (t: Term): CTerm => {
      const c = this.term(t, scope);
      if (c >= 0 && !this.localSlots.has(c)) free.add(c);
      return c;
    };
    switch (f.op) {
      case 'true':
        return { k: 'true' };
      case 'atom': {
        const pred = this.env.predicates.get(f.pred);
        const args = f.args.map(term);
        if (pred !== undefined) return { k: 'atom', pred, args, scratch: new Int32Array(args.length) };
        const fn = this.env.evaluables.get(f.pred);
        if (!fn) throw new HtnInputError(`unknown predicate ${f.pred}`);
        return { k: 'eval', fn, args };
      }
      case 'and':
      case 'or':
        return { k: f.op, args: f.args.map((g) => this.formula(g, scope, free)) };
      case 'not':
        return { k: 'not', arg: this.formula(f.arg, scope, free) };
      case 'imply':
        return { k: 'or', args: [{ k: 'not', arg: this.formula(f.if, scope, free) }, this.formula(f.then, scope, free)] };
      case 'eq':
        return { k: 'eq', a: term(f.left), b: term(f.right) };
      case 'is-a':
        return { k: 'isa', t: term(f.term), type: this.typeId(f.type) };
      case 'forall':
      case 'exists': {
        const inner = new Map(scope);
        const vars: number[] = [];
        const types: number[] = [];
        for (const p of f.vars) {
          const s = this.slot(p.type);
          this.localSlots.add(s);
          inner.set(p.name, s);
          vars.push(s);
          types.push(this.slotTypes[s]!);
        }
        return { k: f.op, vars, types, body: this.formula(f.body, inner, free) };
      }
    }
  }

  private readonly localSlots = new Set<number>();
}
