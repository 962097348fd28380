/**
 * Operator application: type check, precondition, effects. PDDL semantics — `when` conditions and
 * `forall` ranges are read in the pre-state, then every delete is applied, then every add (so a
 * fact both deleted and added ends up present). Changes go through the fact store's undo trail.
 */
import type { FactStore } from './fact-store.js';
import type { CEffect, COperator } from './model.js';
import { QueryRun, holds, termValue, type QueryContext } from './query.js';

/** Whether the ground operator instance is applicable (types and precondition) in the current state. */
export function operatorApplicable(op: COperator, args: Int32Array, ctx: QueryContext, members: Uint8Array[]): Int32Array | undefined {
  for (let i = 0; i < args.length; i++) if (members[op.paramTypes[i]!]![args[i]!] !== 1) return undefined;
  const b = new Int32Array(op.slots).fill(-1);
  b.set(args);
  if (op.pre.steps.length > 0 && !new QueryRun(op.pre, b, ctx).next()) return undefined;
  return b;
}

/** Applies the operator if applicable; returns false (state untouched) otherwise. */
export function applyOperator(op: COperator, args: Int32Array, store: FactStore, ctx: QueryContext, members: Uint8Array[]): boolean {
  const b = operatorApplicable(op, args, ctx, members);
  if (!b) return false;
  applyEffects(op, b, store, ctx);
  return true;
}

/** Applies the operator's effects under bindings `b` (params first), deletes before adds. */
export function applyEffects(op: COperator, b: Int32Array, store: FactStore, ctx: QueryContext): void {
  const dels: number[] = [];
  const delArgs: Int32Array[] = [];
  const adds: number[] = [];
  const addArgs: Int32Array[] = [];
  collect(op.effect, b, ctx, dels, delArgs, adds, addArgs);
  for (let i = 0; i < dels.length; i++) store.delete(dels[i]!, delArgs[i]!);
  for (let i = 0; i < adds.length; i++) store.add(adds[i]!, addArgs[i]!);
}

function collect(
  e: CEffect,
  b: Int32Array,
  ctx: QueryContext,
  dels: number[],
  delArgs: Int32Array[],
  adds: number[],
  addArgs: Int32Array[],
): void {
  switch (e.k) {
    case 'add':
    case 'del': {
      const args = new Int32Array(e.args.length);
      for (let i = 0; i < args.length; i++) args[i] = termValue(e.args[i]!, b);
      if (e.k === 'add') {
        adds.push(e.pred);
        addArgs.push(args);
      } else {
        dels.push(e.pred);
        delArgs.push(args);
      }
      return;
    }
    case 'and':
      for (const g of e.effects) collect(g, b, ctx, dels, delArgs, adds, addArgs);
      return;
    case 'when':
      if (holds(e.cond, b, ctx)) collect(e.effect, b, ctx, dels, delArgs, adds, addArgs);
      return;
    case 'forall': {
      const loop = (i: number): void => {
        if (i === e.vars.length) {
          collect(e.effect, b, ctx, dels, delArgs, adds, addArgs);
          return;
        }
        const slot = e.vars[i]!;
        for (const obj of ctx.types.objects[e.types[i]!]!) {
          b[slot] = obj;
          loop(i + 1);
        }
        b[slot] = -1;
      };
      loop(0);
      return;
    }
  }
}
