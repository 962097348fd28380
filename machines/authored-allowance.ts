/**
 * The model's allowance held per run, and the rule that admits what the model planned named
 * (behaviour flag 11). An `authored-effects` allowance (machines/envelope.ts) admits the world
 * effects of a plan from the model — authored on the gap path, or through a method mined from such
 * fragments that no person has reviewed — without a person when they dispatch its actuators and
 * spend at most `spendAtMost`. With `per: 'run'` under flag 11 that bound is on the run:
 *
 * - what counts: the world effects of completed epochs whose plan came from the model
 *   (`InvocationContext.authored`, appended as each epoch closes, the way the spend cap's `spent`
 *   is — a compensated epoch spent nothing), and for a fork its lineage's (`invocation.forked`
 *   state `authored`), plus the fragment being admitted;
 * - an epoch admitted by it records why (`allowanceAdmitted`: what it spends of the allowance this
 *   run), and its allow — and each of its steps' at dispatch — names the allowance's rule, or
 *   `weft:authored-effects` when the pack has none (`modelPlanRule`);
 * - a run that ends handed off lists those effects in its reason (`handedOffReason`), in cancel's
 *   wording (kept-effects.ts).
 *
 * Without flag 11 nothing here applies: each fragment is held to the allowance alone, an allow no
 * rule objected to records `weft:default`, and the handoff's reason is the failure's. Pure.
 */
import type { AuthoredEffect, EpochPlan, EpochStep, InvocationContext, KeptEffect } from './context.js';
import { envelopeSpend, type AuthoredSoFar, type ContractEnvelope, type Spenders } from './envelope.js';
import { FLAG_RUN_ALLOWANCE, hasFlag } from './flags.js';
import { keptEffectText } from './kept-effects.js';
import type { EnvelopeRuleIds } from './policy.js';
import { clip, QUOTE_CHARS } from './untrusted-text.js';

/** The rule id a pack-less allowance decision is named by. */
export const AUTHORED_EFFECTS_RULE = 'weft:authored-effects';

/** Whether the plan came from the model: authored now, or through a mined method no person has reviewed. */
export function fromModel(plan: Pick<EpochPlan, 'source' | 'mined'>): boolean {
  return plan.source === 'authored' || (plan.mined?.length ?? 0) > 0;
}

/** Under flag 11 with an allowance `per: 'run'`: the run's authored effects so far; else undefined (each fragment alone). */
export function authoredBefore(env: ContractEnvelope | undefined, ctx: Pick<InvocationContext, 'pin' | 'authored'>): AuthoredSoFar | undefined {
  const rule = env?.authoredEffects;
  if (!hasFlag(ctx.pin, FLAG_RUN_ALLOWANCE) || typeof rule !== 'object' || rule.per !== 'run') return undefined;
  const effects = ctx.authored ?? [];
  return { effects: effects.length, spent: effects.reduce((sum, e) => sum + e.amount, 0) };
}

/** The rule that admits a plan from the model no other rule decided (flag 11): the pack's authored-effects rule, else the runtime's. */
export function modelPlanRule(rules: EnvelopeRuleIds | undefined): string {
  return rules?.authoredEffects ?? AUTHORED_EFFECTS_RULE;
}

const effectsWord = (n: number) => `${n} world effect${n === 1 ? '' : 's'}`;

/**
 * Why the envelope admits a plan from the model without a person (recorded on its allow under flag
 * 11): what its world effects spend of the allowance — this run, with `before` — or that it has none.
 * Call only once `authoredEffectsProblem` found nothing.
 */
export function allowanceAdmitted(env: ContractEnvelope | undefined, plan: Pick<EpochPlan, 'source' | 'steps'>, spenders: Spenders, before: AuthoredSoFar | undefined): string {
  const who = plan.source === 'authored' ? 'the model authored' : 'the mined methods plan';
  const effects = plan.steps.filter((step) => !step.readOnly);
  if (effects.length === 0) return `${who} no world effect: nothing for a person to approve`;
  const actuators = clip([...new Set(effects.map((e: EpochStep) => e.actuator ?? 'no actuator'))].join(', '), 200);
  const rule = env?.authoredEffects;
  if (typeof rule !== 'object' || !env?.spend) return `${who} ${effectsWord(effects.length)} (${actuators}), which the pack admits from the model without a person`;
  const spent = envelopeSpend(env, effects, spenders);
  const arg = clip(env.spend.arg, QUOTE_CHARS);
  const head = `${who} ${effectsWord(effects.length)} (${actuators}) spending ${spent}`;
  if (before === undefined) return `${head}, within the ${rule.spendAtMost} ${arg} the pack admits from the model without a person per fragment`;
  const earlier = before.effects === 0 ? '' : ` (${before.spent} by ${before.effects} authored effect${before.effects === 1 ? '' : 's'} admitted before)`;
  return `${head}: ${before.spent + spent} of the ${rule.spendAtMost} ${arg} the pack admits from the model without a person this run${earlier}`;
}

/** The world effects of a completed epoch's plan from the model that stay done, with their amounts (flag 11); none otherwise. */
export function authoredOfEpoch(env: ContractEnvelope | undefined, ctx: Pick<InvocationContext, 'pin' | 'plan'>, kept: readonly KeptEffect[], spenders: Spenders): AuthoredEffect[] {
  const plan = ctx.plan;
  if (!hasFlag(ctx.pin, FLAG_RUN_ALLOWANCE) || !plan || !fromModel(plan)) return [];
  return kept.map((k) => ({ ...k, amount: env ? envelopeSpend(env, [plan.steps[k.step]!], spenders) : 0 }));
}

/**
 * The reason a run hands off with: the failure's, and under flag 11 the model-authored world
 * effects that stay applied (actuator, key, amount), so a person sees what to undo by hand.
 */
export function handedOffReason(ctx: Pick<InvocationContext, 'pin' | 'failure' | 'authored'>): string {
  const reason = ctx.failure?.message ?? 'handed off';
  const authored = ctx.authored ?? [];
  if (!hasFlag(ctx.pin, FLAG_RUN_ALLOWANCE) || authored.length === 0) return reason;
  const total = authored.reduce((sum, e) => sum + e.amount, 0);
  return `${reason}; ${authored.length} world effect(s) the model authored stay applied (${total} in all): ${authored.map(keptEffectText).join('; ')}`;
}
