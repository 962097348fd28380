/**
 * Stopping an invocation before its end: a cancel someone asked for (`runtime.cancel`, `weft
 * cancel`), or the pinned deadline passing. Neither may be read from a clock or an inbox on replay,
 * so each is a journal input, recorded before anything acts on it:
 *
 * - `stopRequested` (stop-check.ts) — asked before each step and as an epoch closes;
 * - `stopEpoch` — the `cancelling` state's actor: the stop's record (when it came with a resting
 *   state's event and is not in the journal yet), then the current epoch's completed effects
 *   compensated in reverse order (execute-steps.ts `compensate`, which hands off with the trail when
 *   one fails for good), and the effects that stay done because they have no inverse.
 *
 * `keptOf` says which effects stay done: world-effect steps (not read-only, not a sleep) that
 * completed and were not compensated — in an epoch that completed, all of them; in one that was
 * compensated (or is being stopped), those with no inverse to run.
 */
import type { InvocationContext, KeptEffect, StepResult } from '../../machines/context.js';
import { compensate } from './execute-steps.js';
import type { EpochServices } from './services.js';
import { hasInverse, worldEffect } from './world-effects.js';

/** The `cancelling` state: record the stop if an event brought it, compensate the current epoch, say what stays done. */
export async function stopEpoch(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const stop = ctx.stop;
  if (!stop) throw new Error('weft: the cancelling state was entered without a stop (a cancel or a deadline)');
  if (!stop.recorded) {
    if (stop.kind === 'cancel') await rec.derive({ kind: 'cancel.requested', epoch: ctx.epoch, body: { by: stop.by, reason: stop.reason, at: stop.at } });
    else await rec.derive({ kind: 'deadline.passed', epoch: ctx.epoch, body: { deadline: stop.deadline, at: stop.at } });
  }
  if (ctx.done.length > 0 && ctx.plan) {
    const undone = await compensate(s, ctx);
    if (undone.kind === 'handoff') return undone;
  }
  return { ...rec.at(), kind: 'compensated' as const, kept: ctx.plan ? keptOf(s, ctx, ctx.done, 'compensated') : [] };
}

/** The world effects of `done` (steps of the current epoch) that stay done, when the epoch `ended` so. */
export function keptOf(s: EpochServices, ctx: InvocationContext, done: readonly StepResult[], ended: 'completed' | 'compensated' | 'denied'): KeptEffect[] {
  const plan = ctx.plan;
  if (!plan || ended === 'denied') return [];
  const kept: KeptEffect[] = [];
  for (const d of done) {
    const effect = worldEffect(ctx, d);
    if (!effect || (ended === 'compensated' && hasInverse(s, plan.steps[d.step]!))) continue;
    kept.push({ epoch: ctx.epoch, ...effect });
  }
  return kept;
}
