/**
 * Renders library formulas and calls as HDDL-like text for explanations and error messages,
 * e.g. `(and (at ?t ?from) (not (= ?from ?to)))`. Pure and deterministic.
 */
import type { Formula, Param, Term } from '../library/schema.js';

function terms(args: readonly Term[]): string {
  return args.map((a) => ` ${String(a)}`).join('');
}

function params(vars: readonly Param[]): string {
  return vars.map((v) => `${v.name} - ${v.type}`).join(' ');
}

export function formatCall(name: string, args: readonly (string | number)[]): string {
  return `(${name}${terms(args)})`;
}

export function formatFormula(f: Formula): string {
  switch (f.op) {
    case 'true':
      return '(and)';
    case 'atom':
      return `(${f.pred}${terms(f.args)})`;
    case 'and':
    case 'or':
      return `(${f.op}${f.args.map((g) => ` ${formatFormula(g)}`).join('')})`;
    case 'not':
      return `(not ${formatFormula(f.arg)})`;
    case 'imply':
      return `(imply ${formatFormula(f.if)} ${formatFormula(f.then)})`;
    case 'eq':
      return `(= ${String(f.left)} ${String(f.right)})`;
    case 'forall':
    case 'exists':
      return `(${f.op} (${params(f.vars)}) ${formatFormula(f.body)})`;
    case 'is-a':
      return `(sortof ${String(f.term)} - ${f.type})`;
  }
}
