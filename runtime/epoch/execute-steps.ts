/**
 * Execution and compensation. Each step is admitted, written ahead as `step.dispatched` with its
 * idempotency key and attempt, dispatched, and its completion recorded before the next; transient
 * failures are retried with derived backoff under the same key. A failed epoch's completed effects
 * are undone in reverse order (`compensation.dispatched` / `compensation.completed`).
 */
import { idempotencyKey } from '../../actors/actuator.js';
import { createRandom } from '../../actors/random.js';
import { WeftError } from '../../journal/errors.js';
import type { JournalRecord } from '../../journal/records.js';
import type { InvocationContext, Json, StepResult } from '../../machines/context.js';
import { backoffMs } from '../../machines/epoch.js';
import type { Job, JobOutcome } from '../../queue/dispatcher.js';
import type { EpochServices } from './services.js';

export function job(ctx: InvocationContext, j: Pick<Job, 'op' | 'actuator' | 'args' | 'key' | 'attempt' | 'step'> & { result?: unknown }): Job {
  return { ...j, invocation: ctx.invocation, tenant: ctx.tenant, epoch: ctx.epoch, asOf: ctx.pin.asOf, seed: ctx.pin.seed };
}

export async function dispatch(s: EpochServices, j: Job): Promise<JobOutcome> {
  if (!s.dispatcher) throw new WeftError('runtime.no_dispatcher', 'permanent', 'this runtime has no dispatcher to run actuators');
  return s.dispatcher.dispatch(j);
}

async function pause(s: EpochServices, ctx: InvocationContext, key: string, attempt: number): Promise<void> {
  if (s.recorder().replaying || !s.recorder().live) return; // the journal already holds what came next
  const unit = createRandom(ctx.pin.seed, key).stream(`backoff.${attempt}`).next();
  await s.sleep(backoffMs(attempt, unit));
}

export async function execute(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  const done: StepResult[] = [];
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    const admission = s.policy.admitStep?.({ tenant: ctx.tenant, epoch: ctx.epoch, index: i, step }) ?? { decision: 'allow' as const };
    if (admission.decision !== 'allow') {
      await rec.derive({ kind: 'admission.decided', epoch: ctx.epoch, body: { subject: 'step', step: i, decision: admission.decision, policy: s.policy.id, reason: admission.reason } });
      return { ...rec.at(), done, failure: { step: i, class: 'policy' as const, code: 'step.denied', message: admission.reason } };
    }
    const key = idempotencyKey(ctx.invocation, ctx.epoch, i);
    const args = (step.actuatorArgs ?? {}) as Json;
    for (let attempt = 1; ; attempt++) {
      await rec.derive({ kind: 'step.dispatched', epoch: ctx.epoch, body: { step: i, actuator: step.actuator!, args, key, attempt } });
      const completion = await rec.complete(
        {
          kinds: ['step.completed', 'step.failed'] as const,
          epoch: ctx.epoch,
          describe: `the completion of step ${i} attempt ${attempt}`,
          accepts: (r) => r.body.step === i && r.body.attempt === attempt && r.body.key === key,
        },
        async () => {
          const outcome = await dispatch(s, job(ctx, { op: 'run', actuator: step.actuator!, args, key, attempt, step: i }));
          return outcome.ok
            ? { kind: 'step.completed' as const, epoch: ctx.epoch, body: { step: i, key, attempt, result: outcome.result as Json } }
            : { kind: 'step.failed' as const, epoch: ctx.epoch, body: { step: i, key, attempt, ...outcome.failure } };
        },
      );
      if (completion.kind === 'step.completed') {
        done.push({ step: i, operator: step.operator, result: (completion.body as { result: Json }).result });
        break;
      }
      const failed = completion.body as JournalRecord<'step.failed'>['body'];
      if (failed.class === 'transient' && attempt < ctx.limits.maxAttempts) {
        await pause(s, ctx, key, attempt);
        continue;
      }
      return { ...rec.at(), done, failure: { step: i, class: failed.class, code: failed.code, message: failed.message } };
    }
  }
  return { ...rec.at(), done, failure: null };
}

export async function compensate(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  for (const done of [...ctx.done].reverse()) {
    const step = plan.steps[done.step]!;
    if (step.readOnly) continue;
    const declared = step.compensate;
    const own = !declared && step.actuator !== undefined && (s.dispatcher ? s.dispatcher.canCompensate(step.actuator) : true);
    if (!declared && !own) continue;
    const actuator = declared ? declared.actuator : step.actuator!;
    const args = (declared ? declared.args : step.actuatorArgs ?? {}) as Json;
    const key = idempotencyKey(ctx.invocation, ctx.epoch, done.step, 'undo');
    for (let attempt = 1; ; attempt++) {
      await rec.derive({ kind: 'compensation.dispatched', epoch: ctx.epoch, body: { step: done.step, actuator, args, key, attempt } });
      const completion = await rec.complete(
        {
          kinds: ['compensation.completed'] as const,
          epoch: ctx.epoch,
          describe: `the compensation of step ${done.step} attempt ${attempt}`,
          accepts: (r) => r.body.step === done.step && r.body.attempt === attempt && r.body.key === key,
        },
        async () => {
          const outcome = await dispatch(s, job(ctx, { op: declared ? 'run' : 'compensate', actuator, args, result: done.result, key, attempt, step: done.step }));
          return {
            kind: 'compensation.completed' as const,
            epoch: ctx.epoch,
            body: outcome.ok ? { step: done.step, key, attempt, result: outcome.result as Json } : { step: done.step, key, attempt, result: null, failure: outcome.failure },
          };
        },
      );
      const failure = completion.body.failure;
      if (!failure) break;
      if (failure.class === 'transient' && attempt < ctx.limits.maxAttempts) {
        await pause(s, ctx, key, attempt);
        continue;
      }
      return { ...rec.at(), kind: 'handoff' as const, reason: `compensating step ${done.step} (${step.operator}) failed: ${failure.message}; a person must undo it` };
    }
  }
  return { ...rec.at(), kind: 'compensated' as const };
}
