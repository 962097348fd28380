/**
 * The real logic behind the invocation machine's named actors. Each one is a recorded step over
 * the journal through the Recorder: it derives the records it can compute (requests, plan digests,
 * dispatches, admissions) and obtains the ones it cannot (model replies, observations, actuator
 * completions) — live from the world, or, on resume and replay, read back from the journal.
 *
 * Write-ahead order (invariant 1): `model.requested` / `step.dispatched` /
 * `compensation.dispatched` are durable before the call; the completion is durable before the
 * actor returns and the machine moves on.
 */
import { fromPromise } from 'xstate';
import type { ApprovalInput, FinishInput, InvocationActors } from '../machines/actors.js';
import type { InvocationContext } from '../machines/context.js';
import { admit, recordApproval } from './epoch/admit-steps.js';
import { closeEpoch, finish, truncate } from './epoch/close-steps.js';
import { compensate, execute } from './epoch/execute-steps.js';
import { author, parseGoal } from './epoch/model-steps.js';
import { decompose } from './epoch/plan-steps.js';
import type { EpochServices } from './epoch/services.js';

export { AUTHORED_TASK, type EpochServices } from './epoch/services.js';

export function epochActors(s: EpochServices): Partial<InvocationActors> {
  /** An actor over the services; its errors are reported before the machine suspends on them. */
  const actor = <I, O>(step: (s: EpochServices, input: I) => Promise<O>) =>
    fromPromise(async ({ input }: { input: I }) => {
      try {
        return await step(s, input);
      } catch (err) {
        s.onActorError?.(err);
        throw err;
      }
    });
  return {
    parseGoal: actor<InvocationContext, unknown>(parseGoal),
    decompose: actor<InvocationContext, unknown>(decompose),
    author: actor<InvocationContext, unknown>(author),
    admit: actor<InvocationContext, unknown>(admit),
    recordApproval: actor<ApprovalInput, unknown>(recordApproval),
    execute: actor<InvocationContext, unknown>(execute),
    compensate: actor<InvocationContext, unknown>(compensate),
    truncate: actor<InvocationContext, unknown>(truncate),
    closeEpoch: actor<InvocationContext, unknown>(closeEpoch),
    finish: actor<FinishInput, unknown>(finish),
  } as Partial<InvocationActors>;
}
