/**
 * The actuator contract: anything that leaves the deterministic core — the model, a tool call, a
 * state observation, a message, a timer. Its reply is recorded at the boundary (write-ahead request,
 * dispatch, recorded completion), so replay reads the completion and never calls it again.
 *
 * Guarantee to providers: every dispatch of the same step carries the same idempotency key
 * (invocation · epoch · step), across attempts and across re-dispatch after a crash, with the
 * attempt number as a separate field — so a provider that dedupes on the key applies the effect
 * once even though it may be dispatched more than once.
 */
import type { z } from 'zod';
import { isWeftError, WeftError, type FailureClass } from '../journal/errors.js';
import type { Random } from './random.js';

export type ActuatorKind = 'model' | 'tool' | 'state' | 'message' | 'timer';

export interface ActuatorContext {
  /** Idempotency key: `<invocation>.<epoch>.<step>` — the same for every attempt of this step. */
  key: string;
  /** 1 for the first attempt; each retry of the same step adds one. */
  attempt: number;
  invocation: string;
  /**
   * The invocation whose world this one acts in, when it is not itself: a fork (runtime/fork.ts)
   * goes on in its parent's world. An actuator that keeps a world per invocation keys it by
   * `world ?? invocation`; idempotency keys stay the invocation's own.
   */
  world?: string;
  tenant: string;
  epoch: number;
  step: number;
  /** The pinned "now" of the invocation (ISO 8601): actuators reason about time from it, not the clock. */
  asOf: string;
  /** Seeded PRNG with named streams, derived from the pinned seed and this step's key. */
  random: Random;
  signal?: AbortSignal;
}

export interface Actuator<Args = any, Result = any> {
  name: string;
  kind: ActuatorKind;
  argsSchema: z.ZodType<Args>;
  resultSchema: z.ZodType<Result>;
  /** True when running it changes nothing in the world (observations, lookups). */
  readOnly: boolean;
  /**
   * The name of its numeric arg that is money out (a charge, a refund, a payout): the policy's
   * spending cap counts this actuator's steps, and only those that declare it (behaviour flag 2,
   * machines/spenders.ts). Absent: it spends nothing — a message that mentions an amount included.
   */
  spends?: string;
  run(args: Args, ctx: ActuatorContext): Promise<Result>;
  /**
   * What `run` would return, without touching the world — for shadow runs (`weft run --shadow`).
   * Optional; it is called instead of `run` for a world-effect step of a shadow run, with the key
   * the step would have carried (suffixed `.shadow`), and its result must pass `resultSchema`. An
   * actuator that has one lets a shadow run go on past its first shadowed epoch; it must not
   * change anything `run` would change (it may read).
   */
  shadow?(args: Args, ctx: ActuatorContext): Promise<Result>;
  /** Undo a completed effect; dispatched with its own idempotency key when an epoch fails. */
  compensate?(args: Args, result: Result, ctx: ActuatorContext): Promise<unknown>;
}

/** Idempotency key of a step. No ':' (BullMQ job ids may not contain it). */
export function idempotencyKey(invocation: string, epoch: number, step: number, suffix?: string): string {
  return suffix ? `${invocation}.${epoch}.${step}.${suffix}` : `${invocation}.${epoch}.${step}`;
}

/** What an actuator throws to say how it failed; anything else it throws counts as transient. */
export class ActuatorError extends WeftError {
  constructor(code: string, failureClass: FailureClass, message: string) {
    super(code, failureClass, message);
  }
}

/**
 * Classify anything an actuator threw. Unknown errors are transient: retried, then permanent. A
 * WeftError is recognised by its brand, so an ActuatorError from the domain's own copy of weft
 * keeps its class.
 */
export function classifyFailure(err: unknown): { class: FailureClass; code: string; message: string } {
  if (isWeftError(err)) return { class: err.failureClass, code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { class: 'transient', code: 'actuator.threw', message };
}
