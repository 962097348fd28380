/**
 * The verifier's own formula and effect evaluator over typed objects (independent of the
 * planner). Preconditions: and / or / not / imply / = / forall / exists / sortof over atoms;
 * effects: add / delete / and / forall / when, collected against the state BEFORE the action and
 * then applied deletes-first, adds-second (PDDL semantics: an atom both deleted and added is true).
 *
 * Variable bindings are a mutable `Env` map; quantifiers bind and then restore, so evaluation
 * allocates nothing per object. An unbound variable is a domain error and fails verification.
 */
import type { Atom, Effect, Formula, Term } from '../hddl/index.js';
import { VerifyFailure } from './failure.js';
import { factKey, type FactState } from './state.js';
import type { World } from './world.js';

export type Env = Map<string, string>;

export interface GroundEffects {
  readonly adds: [string, string[]][];
  readonly deletes: [string, string[]][];
}

export class Evaluator {
  constructor(
    private readonly world: World,
    private readonly state: FactState,
  ) {}

  value(t: Term, env: Env): string {
    if (t.kind === 'constant') return t.name;
    const v = env.get(t.name);
    if (v === undefined) throw new VerifyFailure(`unbound variable ${t.name} at line ${t.pos.line}, column ${t.pos.column} of the domain`);
    return v;
  }

  groundArgs(a: Atom, env: Env): string[] {
    return a.args.map((t) => this.value(t, env));
  }

  holds(f: Formula, env: Env): boolean {
    switch (f.kind) {
      case 'atom':
        return this.state.has(factKey(f.predicate, this.groundArgs(f, env)));
      case 'and':
        return f.args.every((g) => this.holds(g, env));
      case 'or':
        return f.args.some((g) => this.holds(g, env));
      case 'not':
        return !this.holds(f.arg, env);
      case 'imply':
        return !this.holds(f.left, env) || this.holds(f.right, env);
      case 'equals':
        return this.value(f.left, env) === this.value(f.right, env);
      case 'sortof':
        return this.world.isOfType(this.value(f.term, env), f.type);
      case 'forall':
        return this.quantify(f.params, 0, env, () => this.holds(f.body, env), true);
      case 'exists':
        return this.quantify(f.params, 0, env, () => this.holds(f.body, env), false);
    }
  }

  /** forall (`all`) / exists over typed params, binding in place and restoring afterwards. */
  private quantify(
    params: readonly { name: string; type: string }[],
    i: number,
    env: Env,
    body: () => boolean,
    all: boolean,
  ): boolean {
    const p = params[i];
    if (!p) return body();
    const saved = env.get(p.name);
    try {
      for (const o of this.world.objectsOf(p.type)) {
        env.set(p.name, o);
        if (this.quantify(params, i + 1, env, body, all) !== all) return !all;
      }
      return all;
    } finally {
      if (saved === undefined) env.delete(p.name);
      else env.set(p.name, saved);
    }
  }

  /**
   * A short description of why `f` is false under `env`: the first false conjunct, descending
   * through `and`, rendered with the binding applied. Call only when `holds(f, env)` is false.
   */
  explain(f: Formula, env: Env): string {
    if (f.kind === 'and') {
      const bad = f.args.find((g) => !this.holds(g, env));
      if (bad) return this.explain(bad, env);
    }
    return render(f, env);
  }

  /** Collects the ground add and delete lists of `e` evaluated in the current state. */
  effects(e: Effect, env: Env, out: GroundEffects = { adds: [], deletes: [] }): GroundEffects {
    switch (e.kind) {
      case 'add':
        out.adds.push([e.atom.predicate, this.groundArgs(e.atom, env)]);
        break;
      case 'delete':
        out.deletes.push([e.atom.predicate, this.groundArgs(e.atom, env)]);
        break;
      case 'and':
        for (const x of e.effects) this.effects(x, env, out);
        break;
      case 'when':
        if (this.holds(e.condition, env)) this.effects(e.effect, env, out);
        break;
      case 'forall':
        this.quantify(e.params, 0, env, () => (this.effects(e.effect, env, out), true), true);
        break;
    }
    return out;
  }

  apply(g: GroundEffects): void {
    for (const [p, args] of g.deletes) this.state.delete(p, args);
    for (const [p, args] of g.adds) this.state.add(p, args);
  }
}

function term(t: Term, env: Env | undefined): string {
  return t.kind === 'variable' ? (env?.get(t.name) ?? t.name) : t.name;
}

function params(ps: readonly { name: string; type: string }[]): string {
  return ps.map((p) => `${p.name} - ${p.type}`).join(' ');
}

/** Renders a formula in HDDL syntax, substituting bound variables. */
export function render(f: Formula, env?: Env): string {
  switch (f.kind) {
    case 'atom':
      return `(${[f.predicate, ...f.args.map((t) => term(t, env))].join(' ')})`;
    case 'and':
    case 'or':
      return `(${[f.kind, ...f.args.map((g) => render(g, env))].join(' ')})`;
    case 'not':
      return `(not ${render(f.arg, env)})`;
    case 'imply':
      return `(imply ${render(f.left, env)} ${render(f.right, env)})`;
    case 'equals':
      return `(= ${term(f.left, env)} ${term(f.right, env)})`;
    case 'sortof':
      return `(sortof ${term(f.term, env)} - ${f.type})`;
    case 'forall':
    case 'exists':
      return `(${f.kind} (${params(f.params)}) ${render(f.body, env)})`;
  }
}
