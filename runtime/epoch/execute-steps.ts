/**
 * Execution and compensation. Each step is admitted, written ahead as `step.dispatched` with its
 * idempotency key and attempt, dispatched, and its completion recorded before the next; transient
 * failures are retried with derived backoff under the same key. A failed epoch's completed effects
 * are undone in reverse order (`compensation.dispatched` / `compensation.completed`).
 *
 * Whatever an actuator returns must be recordable: a result that is not plain, well-formed JSON
 * (a lone surrogate, NaN, a cycle) is a permanent `actuator.bad_result` failure of that step,
 * recorded — never a journal that cannot be appended to after the effect happened.
 *
 * Under flag 1, every attempt is admitted at dispatch against the policy's contract envelope
 * (allowed actuators and recipients, dispatches per epoch, the invocation's spending cap) and its
 * `admitStep`; the decision on each step of a model-authored fragment is recorded, allow included.
 * A denial ends the epoch with a `step.denied` policy failure: under flag 4 the machine compensates
 * the steps done before it (compensate below), truncates and re-plans; before it, the run failed.
 * Under flag 7 and a policy pack, each recorded step admission names the rule that decided
 * (admission-rule.ts): the pack's, or the envelope part's rule. Under flag 9 every step's admission
 * is recorded, allow included, before its first attempt (dispatched or shadowed) — once, whatever
 * the fragment's source; a retry is checked against the envelope again but records only a refusal,
 * and a sleep step is not admitted (no world effect, no policy asked), so it records none.
 *
 * A shadow run (pin.shadow) is admitted the same way, step by step, but a world-effect step is
 * never dispatched: it is recorded as `step.shadowed` (shadow-step.ts), with no `step.dispatched`
 * before it. Read-only steps run as usual. Compensation passes over shadowed steps: they never happened.
 *
 * Before each step the epoch asks whether the run must stop (stop-steps.ts): a cancel waiting in the
 * inbox, or the pinned deadline passed — recorded, then the machine compensates and ends. A pinned
 * step timeout (`limits.stepTimeoutMs`) races each attempt's dispatch but the last: one that takes
 * longer is a transient `step.timed_out` failure, retried under the same idempotency key (its late
 * result is ignored; the key covers an effect it applied anyway). The last attempt is awaited.
 *
 * Under flag 13 a worker's refusal of a step's job (another domain's, an unknown library, a missing
 * actuator) is no attempt: it is recorded (`step.refused`) and the attempt dispatched again, up to a
 * bounded wait for a capable worker, then the run rests suspended (refusals.ts).
 */
import { idempotencyKey } from '../../actors/actuator.js';
import { createRandom } from '../../actors/random.js';
import { canonicalize } from '../../journal/canonical.js';
import { WeftError } from '../../journal/errors.js';
import type { JournalRecord } from '../../journal/records.js';
import type { EpochStep, InvocationContext, Json, StepResult } from '../../machines/context.js';
import { SLEEP_ACTUATOR, sleepUntil } from '../../machines/sleep.js';
import { bounded } from '../../machines/untrusted-text.js';
import { backoffMs } from '../../machines/epoch.js';
import { envelopeSpend, envelopeStepViolation } from '../../machines/envelope.js';
import { FLAG_FAIL_CLOSED, FLAG_PIVOTS, FLAG_STEP_ADMISSIONS, hasFlag } from '../../machines/flags.js';
import type { Admission } from '../../machines/policy.js';
import type { Job, JobOutcome } from '../../queue/dispatcher.js';
import { pinnedSpendScope } from '../../machines/spenders.js';
import type { EpochServices } from './services.js';
import { recordedRule } from './admission-rule.js';
import { recordedWarnings } from './admission-warnings.js';
import { shadowStep } from './shadow-step.js';
import { hasInverse, worldEffect, type EffectRef } from './world-effects.js';
import { stopRequested } from './stop-check.js';
import { completeRefusable } from './refusals.js';

export function job(ctx: InvocationContext, j: Pick<Job, 'op' | 'actuator' | 'args' | 'key' | 'attempt' | 'step'> & Pick<Job, 'refusals' | 'untakenAfterMs'> & { result?: unknown; delayMs?: number; fresh?: boolean; readOnly?: boolean }): Job {
  const out: Job = { op: j.op, actuator: j.actuator, args: j.args, key: j.key, attempt: j.attempt, step: j.step, invocation: ctx.invocation, tenant: ctx.tenant, epoch: ctx.epoch, asOf: ctx.pin.asOf, seed: ctx.pin.seed, library: ctx.pin.library, ...(ctx.world === undefined ? {} : { world: ctx.world }) };
  if (j.result !== undefined) out.result = j.result;
  if (j.delayMs !== undefined) out.delayMs = j.delayMs;
  if (j.fresh !== undefined) out.fresh = j.fresh;
  if (j.readOnly !== undefined) out.readOnly = j.readOnly;
  if (j.refusals !== undefined) out.refusals = j.refusals;
  if (j.untakenAfterMs !== undefined) out.untakenAfterMs = j.untakenAfterMs;
  return out;
}

export async function dispatch(s: EpochServices, j: Job): Promise<JobOutcome> {
  if (!s.dispatcher) throw new WeftError('runtime.no_dispatcher', 'permanent', 'this runtime has no dispatcher to run actuators');
  const outcome = workerNamed(await s.dispatcher.dispatch(j));
  if (!outcome.ok) return outcome;
  const problem = unrecordable(outcome.result);
  if (!problem) return outcome;
  return { ok: false, failure: { class: 'permanent', code: 'actuator.bad_result', message: `${j.actuator} returned a result that cannot be recorded (${problem}); fix the actuator to return plain JSON with well-formed text` }, ...(outcome.worker === undefined ? {} : { worker: outcome.worker }) };
}

/** The outcome with its worker's name kept only when it is short printable ASCII (it goes into the envelope as it is). */
function workerNamed(outcome: JobOutcome): JobOutcome {
  if (outcome.worker === undefined || (typeof outcome.worker === 'string' && /^[\x20-\x7e]{1,200}$/.test(outcome.worker))) return outcome;
  const { worker: _dropped, ...rest } = outcome;
  return rest as JobOutcome;
}

/** Why a value cannot go into the journal's canonical JSON, or undefined. */
function unrecordable(value: unknown): string | undefined {
  try {
    canonicalize(value);
    return undefined;
  } catch (err) {
    return bounded((err as Error).message, 200);
  }
}

/**
 * Backoff before the next attempt, derived from the seed: slept here, or — for a dispatcher that
 * delays jobs itself (BullMQ) — returned, to go with the next job as its delay. Live only.
 */
async function pause(s: EpochServices, ctx: InvocationContext, key: string, attempt: number): Promise<number> {
  if (s.recorder().replaying || !s.recorder().live) return 0; // the journal already holds what came next
  const unit = createRandom(ctx.pin.seed, key).stream(`backoff.${attempt}`).next();
  const ms = backoffMs(attempt, unit);
  if (s.dispatcher?.delaysJobs) return ms;
  await s.sleep(ms);
  return 0;
}

/**
 * The epoch's steps. A step's completion is staged and written with the next step's write-ahead
 * record (one durable write per step; see recorder.ts). A crash in between loses only a completion
 * that was never acknowledged: the step is dispatched again under its key.
 */
export async function execute(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  // Waking from a durable sleep: go on at the sleep step, with what the epoch did before it.
  const waking = ctx.timer ?? undefined;
  const done: StepResult[] = waking ? [...ctx.done] : [];
  const failClosed = hasFlag(ctx.pin, FLAG_FAIL_CLOSED);
  const envelope = failClosed ? s.policy.envelope : undefined;
  // Which allows at dispatch are recorded: every step's under flag 9, else (flag 1) an authored fragment's.
  const recordsAllow = hasFlag(ctx.pin, FLAG_STEP_ADMISSIONS) || (failClosed && plan.source === 'authored');
  let dispatches = waking?.dispatches ?? 0;
  /** Admission at dispatch: the envelope (flag 1), then the policy's own step rule. */
  const admitAttempt = (i: number, attempt: number): Admission => {
    const step = plan.steps[i]!;
    if (envelope) {
      const spenders = pinnedSpendScope(ctx.pin);
      const spent = (ctx.spent ?? 0) + envelopeSpend(envelope, done.map((d) => plan.steps[d.step]!), spenders);
      const refusal = envelopeStepViolation(envelope, step, dispatches, spent, spenders);
      if (refusal) return { decision: 'deny', reason: refusal.reason, rule: s.policy.envelopeRules?.[refusal.part] ?? `weft:envelope.${refusal.part}` };
    }
    if (attempt > 1) return { decision: 'allow' };
    return s.policy.admitStep?.({ tenant: ctx.tenant, epoch: ctx.epoch, index: i, step }) ?? { decision: 'allow' };
  };
  for (let i = waking?.step ?? 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    const stop = await stopRequested(s, ctx, 'step');
    if (stop) return { ...rec.at(), done, failure: null, stop };
    if (step.actuator === SLEEP_ACTUATOR) {
      const slept = await sleepStep(s, ctx, i, step, waking?.step === i);
      if (slept.kind === 'waiting') return { ...rec.at(), done, failure: null, waiting: { step: i, until: slept.until, dispatches } };
      done.push({ step: i, operator: step.operator, result: { woke: slept.at } });
      continue;
    }
    const key = idempotencyKey(ctx.invocation, ctx.epoch, i);
    const args = (step.actuatorArgs ?? {}) as Json;
    let delayMs = 0;
    for (let attempt = 1; ; attempt++) {
      const admission = admitAttempt(i, attempt);
      if (admission.decision !== 'allow') {
        const rule = recordedRule(s, ctx, admission);
        await rec.derive({ kind: 'admission.decided', epoch: ctx.epoch, body: { subject: 'step', step: i, decision: admission.decision, policy: s.policy.id, reason: admission.reason, ...(rule === undefined ? {} : { rule }), ...recordedWarnings(ctx, admission) } });
        return { ...rec.at(), done, failure: { step: i, class: 'policy' as const, code: 'step.denied', message: admission.reason } };
      }
      if (recordsAllow && attempt === 1) {
        const rule = recordedRule(s, ctx, admission);
        await rec.derive({ kind: 'admission.decided', epoch: ctx.epoch, body: { subject: 'step', step: i, decision: 'allow', policy: s.policy.id, ...(rule === undefined ? {} : { rule }), ...recordedWarnings(ctx, admission) } });
      }
      dispatches++;
      if (ctx.pin.shadow !== undefined && !step.readOnly) {
        const shadowed = await shadowStep(s, ctx, i, step, key, args, (j) => dispatch(s, job(ctx, j)));
        if (shadowed.failure) return { ...rec.at(), done, failure: { step: i, ...shadowed.failure } };
        done.push({ step: i, operator: step.operator, result: shadowed.result, shadowed: shadowed.source });
        break;
      }
      // Per-step bodies are written with their keys in canonical (sorted) order: the canonicalizer
      // then serializes them in one native call instead of sorting a copy first.
      await rec.derive({ kind: 'step.dispatched', epoch: ctx.epoch, body: { actuator: step.actuator!, args, attempt, key, step: i } });
      // The completion (who ran it goes into its unhashed envelope, meta.worker); under flag 13 the
      // refusals before it are recorded and spend no attempt (refusals.ts). Only an attempt's first
      // dispatch races the step timeout: after a refusal the step has not started running.
      const first = delayMs;
      const completion = await completeRefusable(s, ctx, {
        what: { step: i, key, attempt, actuator: step.actuator!, label: `step ${i}` },
        expected: {
          kinds: ['step.completed', 'step.failed'] as const,
          describe: `the completion of step ${i} attempt ${attempt}`,
          accepts: (r) => r.body.step === i && r.body.attempt === attempt && r.body.key === key,
        },
        fresh: rec.lastWritten,
        stops: true,
        send: (again, isFirst) => {
          const sent = dispatch(s, job(ctx, { op: 'run', actuator: step.actuator!, args, key, attempt, step: i, ...(isFirst && first > 0 ? { delayMs: first } : {}), ...again }));
          return isFirst ? withinStepTimeout(ctx, i, attempt, sent) : sent;
        },
        record: (outcome) => {
          const by = outcome.worker === undefined ? {} : { worker: outcome.worker };
          return outcome.ok
            ? { kind: 'step.completed' as const, epoch: ctx.epoch, body: { attempt, key, result: outcome.result as Json, step: i }, ...by }
            : { kind: 'step.failed' as const, epoch: ctx.epoch, body: { step: i, key, attempt, ...outcome.failure }, ...by };
        },
      });
      if ('stop' in completion) return { ...rec.at(), done, failure: null, stop: completion.stop }; // seen between refusals: the step never ran
      if (completion.kind === 'step.completed') {
        done.push({ step: i, operator: step.operator, result: (completion.body as { result: Json }).result });
        break;
      }
      const failed = completion.body as JournalRecord<'step.failed'>['body'];
      if (failed.class === 'transient' && attempt < ctx.limits.maxAttempts) {
        delayMs = await pause(s, ctx, key, attempt);
        continue;
      }
      return { ...rec.at(), done, failure: { step: i, class: failed.class, code: failed.code, message: failed.message } };
    }
  }
  return { ...rec.at(), done, failure: null };
}

/**
 * The dispatch's outcome, or — past the pinned step timeout — a transient `step.timed_out` failure
 * (the late outcome is ignored: the retry carries the same idempotency key). Not on the last
 * attempt: its outcome is always awaited and recorded, since an attempt abandoned there could apply
 * its effect with no retry to carry its key and no record for compensation to undo it by.
 */
function withinStepTimeout(ctx: InvocationContext, i: number, attempt: number, outcome: Promise<JobOutcome>): Promise<JobOutcome> {
  const ms = ctx.limits.stepTimeoutMs ?? 0;
  if (!(ms > 0) || attempt >= ctx.limits.maxAttempts) return outcome;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<JobOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, failure: { class: 'transient', code: 'step.timed_out', message: `step ${i} took longer than its pinned timeout of ${ms} ms; it is retried under the same idempotency key` } }), ms);
  });
  outcome.catch(() => undefined);
  return Promise.race([outcome, late]).finally(() => clearTimeout(timer));
}

/**
 * A durable sleep step: `timer.set` (derived), then — once its time has come, on the runtime's wall
 * clock — `timer.fired`, recorded. Before that the epoch waits (awaitingTimer); replay reads the
 * recorded firing and never looks at a clock.
 */
async function sleepStep(s: EpochServices, ctx: InvocationContext, i: number, step: EpochStep, resumed: boolean): Promise<{ kind: 'waiting'; until: string } | { kind: 'fired'; at: string }> {
  const rec = s.recorder();
  const until = sleepUntil(step.actuatorArgs);
  if (!resumed) await rec.derive({ kind: 'timer.set', epoch: ctx.epoch, body: { step: i, until } });
  // A cancel or a passed deadline recorded next is the rest's (the machine stops there), not the firing.
  const next = rec.peek();
  const stopsAtRest = next?.kind === 'cancel.requested' || next?.kind === 'deadline.passed';
  const due = (next !== undefined && !stopsAtRest) || (next === undefined && rec.live && s.now() >= Date.parse(until));
  if (!due) return { kind: 'waiting', until };
  const fired = await rec.complete(
    { kinds: ['timer.fired'] as const, epoch: ctx.epoch, describe: `the firing of step ${i}'s timer`, accepts: (r) => r.body.step === i },
    async () => ({ kind: 'timer.fired' as const, epoch: ctx.epoch, body: { step: i, at: new Date(s.now()).toISOString() } }),
  );
  return { kind: 'fired', at: fired.body.at };
}

/**
 * Undo the epoch's completed world effects in reverse order. A compensation that fails
 * transiently is retried under its own key (`…:undo`); one that fails permanently stops here.
 *
 * Under flag 8 a **pivot** — a world-effect step that declares no inverse and whose actuator has
 * no `compensate` (a message sent, a payment that cannot be refunded) — is a point of no return:
 * the effects after it are undone, then compensation stops at it, and so it does at a compensation
 * that failed permanently. Either way a `compensation.halted` record names exactly what ran, what
 * was undone and what was not (the pivot or the failed compensation, and every effect before it),
 * and the invocation hands off to a person. Without flag 8, a step with no inverse was passed over
 * silently and the steps before it were undone anyway; a permanent failure handed off with a
 * reason only.
 */
export async function compensate(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  const halts = hasFlag(ctx.pin, FLAG_PIVOTS);
  const effects = (done: readonly StepResult[]) => done.map((d) => worldEffect(ctx, d)).filter((e): e is EffectRef => e !== undefined);
  const ran = effects(ctx.done);
  const undone: EffectRef[] = [];
  const reversed = [...ctx.done].reverse();
  const halt = async (at: number, why: 'pivot' | 'compensation_failed', message: string) => {
    const notUndone = effects(reversed.slice(at)).reverse();
    await rec.derive({ kind: 'compensation.halted', epoch: ctx.epoch, body: { at: reversed[at]!.step, why, ran, undone, notUndone, reason: message } });
    const left = notUndone.map((e) => `step ${e.step} (${e.actuator})`).join(', ');
    return { ...rec.at(), kind: 'handoff' as const, reason: `${message}; not undone: ${left}; a person must decide what to do with them` };
  };
  for (const [index, done] of reversed.entries()) {
    const step = plan.steps[done.step]!;
    const effect = worldEffect(ctx, done);
    if (!effect) continue;
    const declared = step.compensate;
    if (!hasInverse(s, step)) {
      if (halts) return halt(index, 'pivot', `step ${done.step} (${step.operator}, ${step.actuator}) is a pivot: it declares no inverse and its actuator cannot undo it, so compensation stops there`);
      continue;
    }
    const actuator = declared ? declared.actuator : step.actuator!;
    const args = (declared ? declared.args : step.actuatorArgs ?? {}) as Json;
    const key = idempotencyKey(ctx.invocation, ctx.epoch, done.step, 'undo');
    let delayMs = 0;
    for (let attempt = 1; ; attempt++) {
      await rec.derive({ kind: 'compensation.dispatched', epoch: ctx.epoch, body: { step: done.step, actuator, args, key, attempt } });
      // Under flag 13 a worker's refusal of the compensation is recorded and spends no attempt (refusals.ts).
      const first = delayMs;
      const completion = await completeRefusable(s, ctx, {
        what: { step: done.step, key, attempt, actuator, label: `the compensation of step ${done.step}` },
        expected: {
          kinds: ['compensation.completed'] as const,
          describe: `the compensation of step ${done.step} attempt ${attempt}`,
          accepts: (r) => r.body.step === done.step && r.body.attempt === attempt && r.body.key === key,
        },
        fresh: rec.lastWritten,
        send: (again, isFirst) => dispatch(s, job(ctx, { op: declared ? 'run' : 'compensate', actuator, args, result: done.result, key, attempt, step: done.step, ...(isFirst && first > 0 ? { delayMs: first } : {}), ...again })),
        record: (outcome) => ({
          kind: 'compensation.completed' as const,
          epoch: ctx.epoch,
          body: outcome.ok ? { step: done.step, key, attempt, result: outcome.result as Json } : { step: done.step, key, attempt, result: null, failure: outcome.failure },
          ...(outcome.worker === undefined ? {} : { worker: outcome.worker }),
        }),
      });
      const failure = completion.body.failure;
      if (!failure) {
        undone.push(effect);
        break;
      }
      if (failure.class === 'transient' && attempt < ctx.limits.maxAttempts) {
        delayMs = await pause(s, ctx, key, attempt);
        continue;
      }
      const message = `compensating step ${done.step} (${step.operator}) failed: ${failure.message}`;
      if (halts) return halt(index, 'compensation_failed', `${message} (after ${attempt} attempt${attempt === 1 ? '' : 's'})`);
      return { ...rec.at(), kind: 'handoff' as const, reason: `${message}; a person must undo it` };
    }
  }
  return { ...rec.at(), kind: 'compensated' as const };
}
