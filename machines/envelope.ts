/**
 * The contract envelope — what an invocation may do at most, whoever planned it: a spending cap
 * per invocation, the actuators any step may dispatch, the allowed values of a recipient-like arg,
 * the size of a model-authored fragment, the dispatches per epoch, and whether the world effects of
 * an authored fragment need a person. A policy carries it (`AdmissionPolicy.envelope`, so it is
 * pinned with the policy's id); the runtime checks it twice:
 * - `checkEnvelopeEpoch` before an epoch runs, over its whole plan (fail before anything runs);
 * - `checkEnvelopeStep` at each dispatch, against what the invocation has spent and dispatched.
 *
 * Rules, in the order they are checked:
 * - `actuators`: every step's actuator, and the actuator of its declared compensation, is listed;
 * - `recipients`: a step (of `recipients.actuators`, or any) that passes `recipients.arg` passes one
 *   of the allowed values (so does its compensation);
 * - `stepsPerFragment`: a model-authored plan (source `authored`) has at most this many steps;
 *   plans of the pinned library are bounded by the planner's limits instead;
 * - `dispatchesPerEpoch`: at the epoch, the plan has at most this many steps; at dispatch, fewer
 *   than this many dispatches were made in the epoch so far;
 * - `spend`: what was spent so far in the invocation plus `envelopeSpend` of the steps is at most
 *   `spend.cap`. A world-effect step in scope whose arg is present but not a finite number is
 *   refused (fail closed); negative amounts count as 0 (they never offset a charge).
 *
 * Which steps spend (the spend scope) depends on the invocation's pin (machines/spenders.ts,
 * `pinnedSpendScope`), never on the actuators a runtime has now:
 * - under behaviour flag 2, with spending actuators pinned (`pin.spenders`: those whose actuator
 *   declares `spends`, the name of its arg that is money out), only their steps — and, when
 *   `spend.actuators` is given too, are listed there. A message that mentions an amount is not
 *   spending. `spendDeclarationProblem` refuses an ambiguous declaration when a domain or runtime
 *   is built, so the two never disagree;
 * - without flag 2 (journals pinned before it), or with none pinned (a domain that declares
 *   `spends` nowhere), every world-effect step that passes `spend.arg` (of `spend.actuators`, when
 *   given) — the rule those journals were written under, and the one that counts more.
 *
 * `authoredEffects` is not a check here: it tells the admission of an authored fragment with world
 * effects to ask a person ('approval', the default), to admit it ('allow'), or to admit it within an
 * allowance (`{ actuators, spendAtMost, per? }`: listed actuators, spending at most that much — per
 * fragment, or under flag 11 with `per: 'run'` over the run's authored effects so far plus the
 * fragment's; a booking over it asks a person); `authoredEffectsProblem` says which.
 *
 * Every reason is bounded (quoted values at most 60 characters) and says what the envelope allows.
 * Pure: no clock, no I/O.
 */
import type { EpochPlan, EpochStep } from './context.js';
import { clip, QUOTE_CHARS, quoteValue } from './untrusted-text.js';

export interface ContractEnvelope {
  /**
   * Spending cap per invocation: the sum of the numeric actuator arg `arg` over the steps that spend
   * — under flag 2 those whose actuator declares `spends: arg`; before it, every world-effect step
   * (of `actuators`, when given).
   */
  spend?: { arg: string; cap: number; actuators?: readonly string[] };
  /** Actuators any step may dispatch (reads and effects); absent = any the library binds. */
  actuators?: readonly string[];
  /** Allowed values of a recipient-like arg, e.g. { arg: 'channel', allowed: ['email','sms'] }. */
  recipients?: { arg: string; allowed: readonly string[]; actuators?: readonly string[] };
  stepsPerFragment?: number;
  dispatchesPerEpoch?: number;
  /**
   * World effects in a model-authored fragment: 'approval' (default) asks a person; 'allow' admits
   * them; an allowance admits them when each dispatches one of `actuators` and together they spend at
   * most `spendAtMost` (under `spend.arg`, by the spend scope) — else a person approves.
   */
  authoredEffects?: 'approval' | 'allow' | AuthoredAllowance;
}

/** Authored world effects a policy admits without a person (see `authoredEffectsProblem`). */
export interface AuthoredAllowance {
  actuators: readonly string[];
  spendAtMost: number;
  /**
   * What `spendAtMost` bounds: each fragment alone ('fragment', the default), or the run — the sum
   * over the model-authored effects that stay done in this invocation and its lineage, plus this
   * fragment's (flag 11; machines/authored-allowance.ts).
   */
  per?: 'fragment' | 'run';
}

/** The model-authored world effects admitted before a fragment in the run: how many, and what they spent. */
export interface AuthoredSoFar {
  effects: number;
  spent: number;
}

/**
 * Why the world effects of an authored fragment need a person under `env.authoredEffects`, or
 * undefined when the envelope admits them: 'allow' admits any; an allowance admits effects that all
 * dispatch a listed actuator and spend at most its `spendAtMost` together — with `before` (the run's
 * earlier authored effects, given when the allowance holds per run under flag 11) added. Pure.
 */
export function authoredEffectsProblem(env: ContractEnvelope | undefined, steps: readonly EpochStep[], spenders?: Spenders, before?: AuthoredSoFar): string | undefined {
  const rule = env?.authoredEffects ?? 'approval';
  const effects = steps.filter((step) => !step.readOnly);
  if (effects.length === 0 || rule === 'allow') return undefined;
  const has = `it has ${effects.length} world effect(s)`;
  if (rule === 'approval') return `${has}: a person approves them`;
  const other = effects.find((step) => step.actuator === undefined || !rule.actuators.includes(step.actuator));
  if (other) {
    const what = other.actuator === undefined ? 'no actuator' : clip(other.actuator, QUOTE_CHARS);
    return `${has}, and ${clip(other.operator, QUOTE_CHARS)} dispatches ${what} (the policy admits only ${list(rule.actuators)} from the model without a person): a person approves them`;
  }
  // Without a spend rule what they spend cannot be counted: not "nothing", so a person looks.
  if (!env?.spend) return `${has}, and the envelope names no spend argument, so what they spend cannot be held to the ${rule.spendAtMost} the policy admits from the model without a person: a person approves them`;
  const spent = envelopeSpend(env, effects, spenders);
  if (before !== undefined) {
    const total = before.spent + spent;
    if (total <= rule.spendAtMost) return undefined;
    const earlier = before.effects === 0 ? '' : `, with ${before.spent} spent by ${before.effects} authored effect(s) admitted before in this run (${total} in all)`;
    return `${has} spending ${spent}${earlier}, above the ${rule.spendAtMost} the policy admits from the model without a person this run: a person approves them`;
  }
  if (spent > rule.spendAtMost) return `${has} spending ${spent}, above the ${rule.spendAtMost} the policy admits from the model without a person: a person approves them`;
  return undefined;
}

const LIST_MAX = 200;
const quote = (value: unknown) => quoteValue(value);

function list(values: readonly string[]): string {
  return values.length === 0 ? 'none' : clip(values.join(', '), LIST_MAX);
}

function stepName(step: EpochStep, index: number | undefined): string {
  const op = clip(step.operator, QUOTE_CHARS);
  return index === undefined ? `step ${op}` : `step ${index} (${op})`;
}

/**
 * The pinned spending actuators (flag 2), or undefined for the rule before it (every world-effect
 * step). See the header.
 */
export type Spenders = ReadonlySet<string> | undefined;

function inSpendScope(spend: NonNullable<ContractEnvelope['spend']>, step: EpochStep, spenders: Spenders): boolean {
  if (step.readOnly) return false;
  if (spenders !== undefined && (step.actuator === undefined || !spenders.has(step.actuator))) return false;
  return spend.actuators === undefined || (step.actuator !== undefined && spend.actuators.includes(step.actuator));
}

/** What these steps would spend under the envelope's cap (0 without a `spend` rule). */
export function envelopeSpend(env: ContractEnvelope, steps: readonly EpochStep[], spenders?: Spenders): number {
  const spend = env.spend;
  if (!spend) return 0;
  let total = 0;
  for (const step of steps) {
    if (!inSpendScope(spend, step, spenders)) continue;
    const value = step.actuatorArgs?.[spend.arg];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) total += value;
  }
  return total;
}

/** The part of the envelope a refusal comes from (a policy pack names the rule that set it). */
export type EnvelopePart = 'spend' | 'actuators' | 'recipients' | 'stepsPerFragment' | 'dispatchesPerEpoch';

/** A refusal and the part of the envelope it comes from. */
export interface EnvelopeViolation {
  part: EnvelopePart;
  reason: string;
}

/** The envelope's rules for one step: actuator, compensation's actuator, recipients. */
function stepViolation(env: ContractEnvelope, step: EpochStep, index: number | undefined, withCompensation: boolean): EnvelopeViolation | undefined {
  const reason = stepActuatorViolation(env, step, index, withCompensation);
  if (reason !== undefined) return { part: 'actuators', reason };
  const recipient = stepRecipientViolation(env, step, index, withCompensation);
  return recipient === undefined ? undefined : { part: 'recipients', reason: recipient };
}

function stepActuatorViolation(env: ContractEnvelope, step: EpochStep, index: number | undefined, withCompensation: boolean): string | undefined {
  const name = stepName(step, index);
  if (env.actuators) {
    const allowed = env.actuators;
    if (step.actuator === undefined) return `${name} dispatches no actuator; the envelope allows only ${list(allowed)}`;
    if (!allowed.includes(step.actuator)) return `${name} dispatches ${clip(step.actuator, QUOTE_CHARS)}; the envelope allows only ${list(allowed)}`;
    if (withCompensation && step.compensate && !allowed.includes(step.compensate.actuator)) {
      return `${name} is undone by ${clip(step.compensate.actuator, QUOTE_CHARS)}; the envelope allows only ${list(allowed)}`;
    }
  }
  return undefined;
}

function stepRecipientViolation(env: ContractEnvelope, step: EpochStep, index: number | undefined, withCompensation: boolean): string | undefined {
  const name = stepName(step, index);
  const r = env.recipients;
  if (r) {
    const calls: Array<{ actuator: string | undefined; args: Record<string, string | number> | undefined; what: string }> = [
      { actuator: step.actuator, args: step.actuatorArgs, what: name },
    ];
    if (withCompensation && step.compensate) calls.push({ actuator: step.compensate.actuator, args: step.compensate.args, what: `the compensation of ${name}` });
    for (const call of calls) {
      if (r.actuators !== undefined && (call.actuator === undefined || !r.actuators.includes(call.actuator))) continue;
      if (!call.args || !Object.hasOwn(call.args, r.arg)) continue;
      const value = call.args[r.arg];
      if (typeof value !== 'string' || !r.allowed.includes(value)) {
        return `${call.what} sends to ${clip(r.arg, QUOTE_CHARS)} ${quote(value)}; the envelope allows ${clip(r.arg, QUOTE_CHARS)} ${list(r.allowed)}`;
      }
    }
  }
  return undefined;
}

/** The spend rule over `steps` (`what` names them in the reason). */
function spendViolation(env: ContractEnvelope, steps: readonly EpochStep[], spentSoFar: number, what: string, atDispatch: boolean, spenders: Spenders): string | undefined {
  const spend = env.spend;
  if (!spend) return undefined;
  const arg = clip(spend.arg, QUOTE_CHARS);
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (!inSpendScope(spend, step, spenders) || !step.actuatorArgs || !Object.hasOwn(step.actuatorArgs, spend.arg)) continue;
    const value = step.actuatorArgs[spend.arg];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `${stepName(step, atDispatch ? undefined : i)} has ${arg} ${quote(value)}, not a number; the envelope caps ${arg} at ${spend.cap} per invocation`;
    }
  }
  const would = envelopeSpend(env, steps, spenders);
  const total = spentSoFar + would;
  if (total <= spend.cap) return undefined;
  return `${what} would spend ${would} with ${spentSoFar} already spent in this invocation (${total} in all); the envelope caps ${arg} at ${spend.cap} per invocation`;
}

/** Before an epoch runs: actuators, recipients, fragment size, dispatches, spend — a reason, or undefined. */
export function checkEnvelopeEpoch(env: ContractEnvelope, plan: EpochPlan, spentSoFar: number, spenders?: Spenders): string | undefined {
  return envelopeEpochViolation(env, plan, spentSoFar, spenders)?.reason;
}

/** `checkEnvelopeEpoch` with the part of the envelope that refused (same reasons, same order). */
export function envelopeEpochViolation(env: ContractEnvelope, plan: EpochPlan, spentSoFar: number, spenders?: Spenders): EnvelopeViolation | undefined {
  for (let i = 0; i < plan.steps.length; i++) {
    const violation = stepViolation(env, plan.steps[i]!, i, true);
    if (violation !== undefined) return violation;
  }
  const n = plan.steps.length;
  if (plan.source === 'authored' && env.stepsPerFragment !== undefined && !(n <= env.stepsPerFragment)) {
    return { part: 'stepsPerFragment', reason: `the authored fragment has ${n} steps; the envelope allows at most ${env.stepsPerFragment} per fragment` };
  }
  if (env.dispatchesPerEpoch !== undefined && !(n <= env.dispatchesPerEpoch)) {
    return { part: 'dispatchesPerEpoch', reason: `the epoch has ${n} steps; the envelope allows at most ${env.dispatchesPerEpoch} dispatches per epoch` };
  }
  const spend = spendViolation(env, plan.steps, spentSoFar, 'the epoch', false, spenders);
  return spend === undefined ? undefined : { part: 'spend', reason: spend };
}

/** At dispatch: the step's actuator and recipient, the epoch's dispatches so far, spend — a reason, or undefined. */
export function checkEnvelopeStep(env: ContractEnvelope, step: EpochStep, dispatchesThisEpoch: number, spentSoFar: number, spenders?: Spenders): string | undefined {
  return envelopeStepViolation(env, step, dispatchesThisEpoch, spentSoFar, spenders)?.reason;
}

/** `checkEnvelopeStep` with the part of the envelope that refused (same reasons, same order). */
export function envelopeStepViolation(env: ContractEnvelope, step: EpochStep, dispatchesThisEpoch: number, spentSoFar: number, spenders?: Spenders): EnvelopeViolation | undefined {
  const violation = stepViolation(env, step, undefined, false);
  if (violation !== undefined) return violation;
  if (env.dispatchesPerEpoch !== undefined && !(dispatchesThisEpoch < env.dispatchesPerEpoch)) {
    return { part: 'dispatchesPerEpoch', reason: `the epoch already made ${dispatchesThisEpoch} dispatches; the envelope allows at most ${env.dispatchesPerEpoch} per epoch` };
  }
  const spend = spendViolation(env, [step], spentSoFar, stepName(step, undefined), true, spenders);
  return spend === undefined ? undefined : { part: 'spend', reason: spend };
}
