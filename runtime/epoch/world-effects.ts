/**
 * Which completed steps of an epoch are world effects, and which of them can be undone — one answer
 * for compensation (execute-steps.ts), the effects a cancel leaves done (stop-steps.ts) and the
 * trail of a halted compensation. A world effect: a step with an actuator that is neither read-only
 * nor a durable sleep, and that really ran (a shadowed step never happened). It can be undone when
 * it declares a compensating binding, or its actuator has `compensate` — as the dispatcher says;
 * replay, which may have no dispatcher, takes every actuator to have one.
 */
import { idempotencyKey } from '../../actors/actuator.js';
import type { EpochStep, InvocationContext, StepResult } from '../../machines/context.js';
import { SLEEP_ACTUATOR } from '../../machines/sleep.js';
import type { EpochServices } from './services.js';

/** A world effect of the epoch: its step, actuator and idempotency key. */
export interface EffectRef {
  step: number;
  actuator: string;
  key: string;
}

/** The world effect a completed step was, or undefined (read-only, a sleep, shadowed, or no actuator). */
export function worldEffect(ctx: InvocationContext, done: StepResult): EffectRef | undefined {
  const step = ctx.plan?.steps[done.step];
  if (!step || step.readOnly || step.actuator === undefined || step.actuator === SLEEP_ACTUATOR || done.shadowed !== undefined) return undefined;
  return { step: done.step, actuator: step.actuator, key: idempotencyKey(ctx.invocation, ctx.epoch, done.step) };
}

/** Whether compensation undoes this step: a declared inverse, or an actuator that compensates its own effect. */
export function hasInverse(s: EpochServices, step: Pick<EpochStep, 'compensate' | 'actuator'>): boolean {
  if (step.compensate) return true;
  return step.actuator !== undefined && (s.dispatcher ? s.dispatcher.canCompensate(step.actuator) : true);
}
