/**
 * Admission: an epoch is certified whole before anything runs — every step must name a known
 * actuator with args that pass its schema (fail closed) — then the pinned policy decides: allow,
 * deny, or require a person's approval, which hibernates the run until `approval.decided`.
 */
import type { ApprovalInput } from '../../machines/actors.js';
import type { EpochPlan, InvocationContext } from '../../machines/context.js';
import type { EpochServices } from './services.js';

/** Certification before anything runs: every step names a known actuator with args that fit. */
function certify(s: EpochServices, plan: EpochPlan): string | undefined {
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    if (!step.actuator) return `step ${i} (${step.operator}) has no actuator binding in the library`;
    if (!s.dispatcher) continue; // replay without actuators: the recorded decision is compared instead
    if (!s.dispatcher.knows(step.actuator)) return `step ${i} (${step.operator}) names the unknown actuator ${step.actuator}`;
    const bad = s.dispatcher.checkArgs(step.actuator, step.actuatorArgs ?? {});
    if (bad) return `step ${i} (${step.operator}): ${bad}`;
  }
  return undefined;
}

export async function admit(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  const refusal = certify(s, plan);
  const admission = refusal ? { decision: 'deny' as const, reason: refusal } : s.policy.admitEpoch({ tenant: ctx.tenant, epoch: ctx.epoch, goal: ctx.goal!, plan });
  const reason = admission.decision === 'allow' ? undefined : admission.reason;
  await rec.derive({
    kind: 'admission.decided',
    epoch: ctx.epoch,
    body: { subject: 'epoch', decision: admission.decision, policy: s.policy.id, ...(reason === undefined ? {} : { reason }) },
  });
  if (admission.decision === 'allow') await rec.derive({ kind: 'epoch.certified', epoch: ctx.epoch, body: { plan: plan.digest, policy: s.policy.id } });
  if (admission.decision === 'require_approval') await rec.derive({ kind: 'approval.requested', epoch: ctx.epoch, body: { plan: plan.digest, reason: admission.reason } });
  return { ...rec.at(), decision: admission.decision, ...(reason === undefined ? {} : { reason }) };
}

export async function recordApproval(s: EpochServices, input: ApprovalInput) {
  const { context: ctx, decision, by, note } = input;
  const rec = s.recorder();
  await rec.derive({ kind: 'approval.decided', epoch: ctx.epoch, body: { decision, by, ...(note === undefined ? {} : { note }) } });
  if (decision === 'approved') await rec.derive({ kind: 'epoch.certified', epoch: ctx.epoch, body: { plan: ctx.plan!.digest, policy: s.policy.id } });
  return { ...rec.at(), approved: decision === 'approved', reason: decision === 'approved' ? 'approved' : `rejected by ${by}${note ? `: ${note}` : ''}` };
}
