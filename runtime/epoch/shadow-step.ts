/**
 * A shadow run's world-effect step (pin.shadow; docs/operate-shadow.md): admitted like any step,
 * then recorded as `step.shadowed` instead of being dispatched — nothing reaches the world.
 *
 * - Pinned `results: 'none'`: the record is derived (`source: 'none'`, result null); no job is sent
 *   anywhere, not even to a worker.
 * - Pinned `results: 'actuators'`: the actuator's `shadow(args, ctx)` is asked for what `run` would
 *   return — a job with op `shadow` under the step's key suffixed `.shadow`, in this process or on a
 *   worker — and its reply is recorded like a completion (replay reads it back, never asks again).
 *   An actuator the dispatcher cannot shadow (an authored step naming one the pin did not cover,
 *   a resume elsewhere) gives `source: 'none'`; a shadow call that fails is recorded with its
 *   failure, which fails the epoch as a step failure would. One attempt: nothing is applied, so
 *   there is nothing to retry under a key. Not `fresh`: nothing is written ahead of it, so a resume
 *   after a crash may find its job already there (BullMQ), and reads that job's outcome.
 *
 * A step shadowed with `source: 'none'` ends the run after its epoch: the machine notes the epoch
 * at its boundary (`shadowEnded`), and the next parse answers done with `shadowEnding`'s summary
 * instead of asking the model — derived from the context alone, so replay reaches the same record.
 */
import { idempotencyKey } from '../../actors/actuator.js';
import type { JournalRecord } from '../../journal/records.js';
import type { EpochStep, InvocationContext, Json } from '../../machines/context.js';
import type { Job, JobOutcome } from '../../queue/dispatcher.js';
import type { EpochServices } from './services.js';

/** How a shadow job reaches the dispatcher: execute-steps.ts's `dispatch(s, job(ctx, …))`, handed in (the two files do not import each other). */
export type AskShadow = (j: Pick<Job, 'op' | 'actuator' | 'args' | 'key' | 'attempt' | 'step'>) => Promise<JobOutcome>;

export interface Shadowed {
  source: 'actuator' | 'none';
  result: Json;
  failure?: JournalRecord<'step.shadowed'>['body']['failure'];
}

/** The summary a shadow run ends with after an epoch shadowed a world effect with no shadow result, or undefined. */
export function shadowEnding(ctx: InvocationContext): string | undefined {
  if (ctx.pin.shadow === undefined || ctx.shadowEnded === undefined) return undefined;
  return `shadow run, nothing reached the world: ended after epoch ${ctx.shadowEnded}, whose world effects were shadowed with no shadow result (the unchanged world cannot show them to a next epoch)`;
}

export async function shadowStep(s: EpochServices, ctx: InvocationContext, i: number, step: EpochStep, key: string, args: Json, ask: AskShadow): Promise<Shadowed> {
  const rec = s.recorder();
  const actuator = step.actuator!;
  const base = { step: i, actuator, args, key };
  if (ctx.pin.shadow!.results === 'none') {
    await rec.derive({ kind: 'step.shadowed', epoch: ctx.epoch, body: { ...base, source: 'none', result: null } });
    return { source: 'none', result: null };
  }
  const record = await rec.complete(
    {
      kinds: ['step.shadowed'] as const,
      epoch: ctx.epoch,
      describe: `the shadow outcome of step ${i}`,
      accepts: (r) => r.body.step === i && r.body.key === key && r.body.actuator === actuator,
    },
    async () => {
      if (!s.dispatcher?.canShadow?.(actuator)) return { kind: 'step.shadowed' as const, epoch: ctx.epoch, body: { ...base, source: 'none' as const, result: null } };
      const outcome = await ask({ op: 'shadow', actuator, args, key: idempotencyKey(ctx.invocation, ctx.epoch, i, 'shadow'), attempt: 1, step: i });
      const by = outcome.worker === undefined ? {} : { worker: outcome.worker };
      return outcome.ok
        ? { kind: 'step.shadowed' as const, epoch: ctx.epoch, body: { ...base, source: 'actuator' as const, result: outcome.result as Json }, ...by }
        : { kind: 'step.shadowed' as const, epoch: ctx.epoch, body: { ...base, source: 'actuator' as const, result: null, failure: outcome.failure }, ...by };
    },
  );
  const body = record.body;
  return { source: body.source, result: body.result, ...(body.failure ? { failure: body.failure } : {}) };
}
