/**
 * Substitution over library terms, formulas and effects — what generalisation needs to
 * instantiate an operator's precondition and effects with a step's (generalised) args.
 *
 * `subst` maps variables to terms; a variable it does not name is left as it is. Quantified
 * variables (`forall`, `exists`) are renamed to fresh ones (`?q1`, `?q2`, … from the counter the
 * caller passes) so an instantiated body never captures a method's own variables. Pure.
 */
import { isVariable, type Effect, type Formula, type Param, type Term } from '../htn/library/schema.js';

export type Subst = ReadonlyMap<string, Term>;

/** A fresh-name source for quantified variables, shared across one method's instantiations. */
export interface Fresh {
  next: number;
}

export function substTerm(t: Term, s: Subst): Term {
  return isVariable(t) ? (s.get(t) ?? t) : t;
}

function renameVars(vars: Param[], s: Subst, fresh: Fresh): { vars: Param[]; inner: Map<string, Term> } {
  const inner = new Map<string, Term>(s);
  const renamed = vars.map((v) => {
    const name = `?q${fresh.next++}`;
    inner.set(v.name, name);
    return { name, type: v.type };
  });
  return { vars: renamed, inner };
}

export function substFormula(f: Formula, s: Subst, fresh: Fresh): Formula {
  switch (f.op) {
    case 'true':
      return f;
    case 'atom':
      return { op: 'atom', pred: f.pred, args: f.args.map((a) => substTerm(a, s)) };
    case 'and':
    case 'or':
      return { op: f.op, args: f.args.map((a) => substFormula(a, s, fresh)) };
    case 'not':
      return { op: 'not', arg: substFormula(f.arg, s, fresh) };
    case 'imply':
      return { op: 'imply', if: substFormula(f.if, s, fresh), then: substFormula(f.then, s, fresh) };
    case 'eq':
      return { op: 'eq', left: substTerm(f.left, s), right: substTerm(f.right, s) };
    case 'is-a':
      return { op: 'is-a', term: substTerm(f.term, s), type: f.type };
    case 'forall':
    case 'exists': {
      const { vars, inner } = renameVars(f.vars, s, fresh);
      return { op: f.op, vars, body: substFormula(f.body, inner, fresh) };
    }
  }
}

/** The top-level `add` / `del` literals of an effect, instantiated (conditional and quantified effects are left out). */
export function plainEffects(e: Effect, s: Subst): Array<{ op: 'add' | 'del'; pred: string; args: Term[] }> {
  if (e.op === 'and') return e.effects.flatMap((x) => plainEffects(x, s));
  if (e.op === 'add' || e.op === 'del') return [{ op: e.op, pred: e.pred, args: e.args.map((a) => substTerm(a, s)) }];
  return [];
}

/** The conjuncts of a formula's top-level `and` (nested ands flattened; `true` dropped). */
export function conjuncts(f: Formula): Formula[] {
  if (f.op === 'true') return [];
  if (f.op === 'and') return f.args.flatMap(conjuncts);
  return [f];
}

/** Every variable a formula mentions free (outside its own quantifiers). */
export function freeVariables(f: Formula, bound: ReadonlySet<string> = new Set(), out: Set<string> = new Set()): Set<string> {
  const term = (t: Term) => {
    if (isVariable(t) && !bound.has(t)) out.add(t);
  };
  switch (f.op) {
    case 'true':
      break;
    case 'atom':
      f.args.forEach(term);
      break;
    case 'and':
    case 'or':
      f.args.forEach((a) => freeVariables(a, bound, out));
      break;
    case 'not':
      freeVariables(f.arg, bound, out);
      break;
    case 'imply':
      freeVariables(f.if, bound, out);
      freeVariables(f.then, bound, out);
      break;
    case 'eq':
      term(f.left);
      term(f.right);
      break;
    case 'is-a':
      term(f.term);
      break;
    case 'forall':
    case 'exists':
      freeVariables(f.body, new Set([...bound, ...f.vars.map((v) => v.name)]), out);
      break;
  }
  return out;
}
