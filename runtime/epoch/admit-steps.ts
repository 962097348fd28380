/**
 * Admission: an epoch is certified whole before anything runs — every step must name a known
 * actuator with args that pass its schema (fail closed) — then the pinned policy decides: allow,
 * deny, or require a person's approval, which hibernates the run until `approval.decided`.
 *
 * Under flag 1, certification also checks the goal task's declared constraints (library data:
 * "the sum of charges ≤ the budget") and the policy's contract envelope (actuators, recipients,
 * steps per fragment, the invocation's spending cap) on every fragment, planned or authored; and
 * world effects in a model-authored fragment need a person's approval unless the envelope admits
 * them (`authoredEffects: 'allow'`, or an allowance of actuators and spend that they stay within). None of this pre-authorizes a step: each is admitted again at
 * dispatch (execute-steps.ts).
 *
 * Under flag 7 and a policy that names its rules (a policy pack, policy/), the decision records the
 * rule that decided: the pack's rule id, or the runtime's own check — `weft:certify`,
 * `weft:task-constraints`, `weft:envelope.<part>`, `weft:authored-effects`, `weft:default`.
 *
 * Under flag 11 an authored-effects allowance `per: 'run'` holds the fragment's spend plus what the
 * run's earlier authored effects spent (machines/authored-allowance.ts), and a plan from the model
 * that the envelope admits is allowed by the rule that let it through (the pack's authored-effects
 * rule, named — admission-rule.ts), its record saying why.
 */
import type { ApprovalInput } from '../../machines/actors.js';
import type { EpochPlan, InvocationContext } from '../../machines/context.js';
import { checkTaskConstraints, earlierEffects } from '../../machines/constraints.js';
import { SLEEP_ACTUATOR, sleepArgsProblem } from '../../machines/sleep.js';
import { allowanceAdmitted, authoredBefore, fromModel, modelPlanRule } from '../../machines/authored-allowance.js';
import { authoredEffectsProblem, envelopeEpochViolation } from '../../machines/envelope.js';
import { FLAG_FAIL_CLOSED, FLAG_RUN_ALLOWANCE, hasFlag } from '../../machines/flags.js';
import type { Admission } from '../../machines/policy.js';
import { pinnedSpendScope } from '../../machines/spenders.js';
import { recordedRule } from './admission-rule.js';
import { recordedWarnings } from './admission-warnings.js';
import type { EpochServices } from './services.js';

/** Certification before anything runs: every step names a known actuator with args that fit. */
function certify(s: EpochServices, plan: EpochPlan): string | undefined {
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    if (!step.actuator) return `step ${i} (${step.operator}) has no actuator binding in the library`;
    if (step.actuator === SLEEP_ACTUATOR) {
      const problem = sleepArgsProblem(step.actuatorArgs);
      if (problem) return `step ${i} (${step.operator}): ${problem}`;
      continue;
    }
    if (!s.dispatcher) continue; // replay without actuators: the recorded decision is compared instead
    if (!s.dispatcher.knows(step.actuator)) return `step ${i} (${step.operator}) names the unknown actuator ${step.actuator}`;
    const bad = s.dispatcher.checkArgs(step.actuator, step.actuatorArgs ?? {});
    if (bad) return `step ${i} (${step.operator}): ${bad}`;
  }
  return undefined;
}

/**
 * Flag 1's checks over the whole fragment: the goal's constraints, then the contract envelope —
 * a refusal with the rule it comes from (the runtime's own, or the pack rule that set that part).
 */
function withinContract(s: EpochServices, ctx: InvocationContext, plan: EpochPlan): { reason: string; rule: string } | undefined {
  const broken = checkTaskConstraints(s.library, ctx.goal!, plan.steps, earlierEffects(ctx));
  if (broken) return { reason: broken, rule: 'weft:task-constraints' };
  const violation = s.policy.envelope ? envelopeEpochViolation(s.policy.envelope, plan, ctx.spent ?? 0, pinnedSpendScope(ctx.pin)) : undefined;
  return violation && { reason: violation.reason, rule: s.policy.envelopeRules?.[violation.part] ?? `weft:envelope.${violation.part}` };
}

/** The admission, and (flag 11) why the envelope let a plan from the model through without a person. */
type Decided = Admission & { why?: string };

function decide(s: EpochServices, ctx: InvocationContext, plan: EpochPlan): Decided {
  const failClosed = hasFlag(ctx.pin, FLAG_FAIL_CLOSED);
  const uncertified = certify(s, plan);
  if (uncertified) return { decision: 'deny', reason: uncertified, rule: 'weft:certify' };
  const refusal = failClosed ? withinContract(s, ctx, plan) : undefined;
  if (refusal) return { decision: 'deny', ...refusal };
  const spenders = pinnedSpendScope(ctx.pin);
  const admission = s.policy.admitEpoch({ tenant: ctx.tenant, epoch: ctx.epoch, goal: ctx.goal!, plan, ...(spenders ? { spenders } : {}) });
  // What the model authored — now, or earlier and mined into a method no person has reviewed yet — is held to the policy's allowance for the model.
  if (!failClosed || admission.decision !== 'allow' || !fromModel(plan)) return admission;
  // Under flag 11 an allowance `per: 'run'` counts the run's earlier authored effects too.
  const before = authoredBefore(s.policy.envelope, ctx);
  const problem = authoredEffectsProblem(s.policy.envelope, plan.steps, spenders, before);
  if (problem === undefined) return hasFlag(ctx.pin, FLAG_RUN_ALLOWANCE) ? { ...admission, why: allowanceAdmitted(s.policy.envelope, plan, spenders, before) } : admission;
  const rule = modelPlanRule(s.policy.envelopeRules);
  // The pack's warnings stand whichever rule decided (flag 12).
  const warned = admission.warnings === undefined ? {} : { warnings: admission.warnings };
  // (The authored wording is the one recorded in journals since the gap path began: replay compares it.)
  if (plan.source === 'authored') return { decision: 'require_approval', reason: `the model authored this fragment (no method covers ${ctx.goal!.task}) and ${problem}`, rule, ...warned };
  const methods = `${plan.mined!.length === 1 ? 'a method' : 'methods'} mined from the model's fragments (${plan.mined!.join(', ')})`;
  return { decision: 'require_approval', reason: `this plan uses ${methods}, held to the model's allowance until a person removes "origin": "mined", and ${problem}`, rule, ...warned };
}

export async function admit(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  const admission = decide(s, ctx, plan);
  const reason = admission.decision === 'allow' ? undefined : admission.reason;
  const rule = recordedRule(s, ctx, admission);
  // Under flag 11 the allow of a plan from the model says why the rule it names let it through.
  const why = admission.decision === 'allow' && rule !== undefined && rule === modelPlanRule(s.policy.envelopeRules) ? admission.why : reason;
  await rec.derive({
    kind: 'admission.decided',
    epoch: ctx.epoch,
    body: { subject: 'epoch', decision: admission.decision, policy: s.policy.id, ...(why === undefined ? {} : { reason: why }), ...(rule === undefined ? {} : { rule }), ...recordedWarnings(ctx, admission) },
  });
  if (admission.decision === 'allow') await rec.derive({ kind: 'epoch.certified', epoch: ctx.epoch, body: { plan: plan.digest, policy: s.policy.id } });
  if (admission.decision === 'require_approval') await rec.derive({ kind: 'approval.requested', epoch: ctx.epoch, body: { plan: plan.digest, reason: admission.reason } });
  return { ...rec.at(), decision: admission.decision, ...(reason === undefined ? {} : { reason }) };
}

export async function recordApproval(s: EpochServices, input: ApprovalInput) {
  const { context: ctx, decision, by, note } = input;
  const rec = s.recorder();
  await rec.derive({ kind: 'approval.decided', epoch: ctx.epoch, body: { decision, by, ...(note === undefined ? {} : { note }) } });
  // An authoring call's approval (flag 5: no plan yet) certifies nothing: the fragment is admitted when authored.
  if (decision === 'approved' && ctx.plan) await rec.derive({ kind: 'epoch.certified', epoch: ctx.epoch, body: { plan: ctx.plan.digest, policy: s.policy.id } });
  return { ...rec.at(), approved: decision === 'approved', reason: decision === 'approved' ? 'approved' : `rejected by ${by}${note ? `: ${note}` : ''}` };
}
