/**
 * The in-process dispatcher — the embedded default. It runs actuators in this process with the
 * same job contract the BullMQ dispatcher uses: args validated against the actuator's schema
 * before running, the result validated after, failures classified (transient / permanent /
 * policy), and the context (idempotency key, attempt, asOf, seeded PRNG) built from the job.
 */
import { classifyFailure, type Actuator, type ActuatorContext } from '../actors/actuator.js';
import { createRandom } from '../actors/random.js';
import { CatalogueDispatcher } from './catalogue.js';
import type { Job, JobOutcome } from './dispatcher.js';

/** The worker identity of a job run by the runtime's own process (JobOutcome.worker). */
export const IN_PROCESS = 'in-process';

export class InProcessDispatcher extends CatalogueDispatcher {
  readonly name = 'in-process';

  async dispatch(job: Job): Promise<JobOutcome> {
    const actuator = this.catalogue.get(job.actuator);
    if (!actuator) {
      return { ok: false, failure: { class: 'policy', code: 'actuator.unknown', message: `no actuator named ${job.actuator} is registered with this dispatcher` } };
    }
    return { ...(await runJob(actuator, job)), worker: IN_PROCESS };
  }

  async close(): Promise<void> {}
}

/** Run one job against one actuator: validate, call, validate, classify. Shared with workers. */
export async function runJob(actuator: Actuator, job: Job): Promise<JobOutcome> {
  const args = actuator.argsSchema.safeParse(job.args);
  if (!args.success) {
    return { ok: false, failure: { class: 'policy', code: 'actuator.bad_args', message: `args for ${actuator.name} fail its schema: ${args.error.issues[0]?.message}` } };
  }
  const ctx: ActuatorContext = {
    key: job.key,
    attempt: job.attempt,
    invocation: job.invocation,
    ...(job.world === undefined ? {} : { world: job.world }),
    tenant: job.tenant,
    epoch: job.epoch,
    step: job.step,
    asOf: job.asOf,
    random: createRandom(job.seed, job.key),
  };
  try {
    if (job.op === 'compensate') {
      if (!actuator.compensate) {
        return { ok: false, failure: { class: 'permanent', code: 'actuator.no_compensation', message: `${actuator.name} has no compensation` } };
      }
      return { ok: true, result: toJson(await actuator.compensate(args.data, job.result, ctx)) };
    }
    if (job.op === 'shadow' && !actuator.shadow) {
      return { ok: false, failure: { class: 'permanent', code: 'actuator.no_shadow', message: `${actuator.name} has no shadow (what run would return, changing nothing): give it one, or let the shadow run end after this epoch` } };
    }
    // A shadow run's world effect: what run would return, nothing applied; its result is checked like run's.
    const result = job.op === 'shadow' ? await actuator.shadow!(args.data, ctx) : await actuator.run(args.data, ctx);
    const checked = actuator.resultSchema.safeParse(result);
    if (!checked.success) {
      return { ok: false, failure: { class: 'permanent', code: 'actuator.bad_result', message: `${actuator.name} returned a result that fails its schema: ${checked.error.issues[0]?.message}` } };
    }
    return { ok: true, result: toJson(checked.data) };
  } catch (err) {
    return { ok: false, failure: classifyFailure(err) };
  }
}

/** Results are journal data: plain JSON only (undefined becomes null). */
function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
