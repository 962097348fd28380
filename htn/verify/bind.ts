/**
 * Existential search for method parameters that the plan does not fix: parameters that appear in
 * neither the method's task nor its subtasks, bound only by the precondition / constraints.
 * Succeeds iff SOME type-correct assignment makes every condition true in the current state.
 *
 * Strategy (complete, usually fast): conjuncts whose variables are all bound are checked first
 * (pruning); a positive atom with unbound variables enumerates the matching facts of its
 * predicate from the state's index; a variable that occurs in no positive atom enumerates the
 * objects of its type. The env is extended in place and restored on backtrack.
 */
import type { Formula, TypedVariable } from '../hddl/index.js';
import type { Env, Evaluator } from './formula.js';
import type { FactState } from './state.js';
import type { World } from './world.js';

function conjuncts(f: Formula, out: Formula[]): Formula[] {
  if (f.kind === 'and') for (const g of f.args) conjuncts(g, out);
  else out.push(f);
  return out;
}

/** Free variables of `f` (names), quantified ones excluded. */
function freeVars(f: Formula, bound: ReadonlySet<string>, out: Set<string>): Set<string> {
  switch (f.kind) {
    case 'atom':
      for (const t of f.args) if (t.kind === 'variable' && !bound.has(t.name)) out.add(t.name);
      break;
    case 'equals':
      for (const t of [f.left, f.right]) if (t.kind === 'variable' && !bound.has(t.name)) out.add(t.name);
      break;
    case 'sortof':
      if (f.term.kind === 'variable' && !bound.has(f.term.name)) out.add(f.term.name);
      break;
    case 'and':
    case 'or':
      for (const g of f.args) freeVars(g, bound, out);
      break;
    case 'not':
      freeVars(f.arg, bound, out);
      break;
    case 'imply':
      freeVars(f.left, bound, out);
      freeVars(f.right, bound, out);
      break;
    case 'forall':
    case 'exists': {
      const inner = new Set(bound);
      for (const p of f.params) inner.add(p.name);
      freeVars(f.body, inner, out);
      break;
    }
  }
  return out;
}

interface Conjunct {
  readonly f: Formula;
  readonly vars: readonly string[];
}

/**
 * Tries to extend `env` with values for `unbound` so that every formula in `conditions` holds.
 * On success `env` holds the witness binding and true is returned; on failure `env` is unchanged.
 */
export function searchBinding(
  ev: Evaluator,
  world: World,
  state: FactState,
  conditions: readonly Formula[],
  env: Env,
  unbound: readonly TypedVariable[],
): boolean {
  const all: Conjunct[] = [];
  const none = new Set<string>();
  for (const c of conditions) for (const f of conjuncts(c, [])) all.push({ f, vars: [...freeVars(f, none, new Set())] });
  const typeOf = new Map(unbound.map((v) => [v.name, v.type]));

  const isBound = (v: string): boolean => env.has(v);

  const search = (pending: readonly Conjunct[]): boolean => {
    const rest: Conjunct[] = [];
    for (const c of pending) {
      if (c.vars.every(isBound)) {
        if (!ev.holds(c.f, env)) return false;
      } else rest.push(c);
    }
    const open = unbound.filter((v) => !env.has(v.name));
    if (open.length === 0) return rest.every((c) => ev.holds(c.f, env));
    // Prefer a positive atom that mentions an open variable: its facts bound the candidates.
    const atomC = rest.find((c) => c.f.kind === 'atom' && c.vars.some((v) => !env.has(v)));
    if (atomC && atomC.f.kind === 'atom') {
      const atom = atomC.f;
      for (const fact of state.factsOf(atom.predicate)) {
        if (fact.length !== atom.args.length) continue;
        const newly: string[] = [];
        let ok = true;
        for (let i = 0; i < fact.length && ok; i++) {
          const t = atom.args[i]!;
          const val = fact[i]!;
          if (t.kind === 'constant') ok = t.name === val;
          else {
            const cur = env.get(t.name);
            if (cur !== undefined) ok = cur === val;
            else {
              const ty = typeOf.get(t.name);
              ok = ty === undefined || world.isOfType(val, ty);
              if (ok) {
                env.set(t.name, val);
                newly.push(t.name);
              }
            }
          }
        }
        if (ok && search(rest)) return true;
        for (const v of newly) env.delete(v);
      }
      return false;
    }
    const v = open[0]!;
    for (const o of world.objectsOf(v.type)) {
      env.set(v.name, o);
      if (search(rest)) return true;
      env.delete(v.name);
    }
    return false;
  };

  return search(all);
}
