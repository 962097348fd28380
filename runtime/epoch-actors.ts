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
  return {
    parseGoal: fromPromise(async ({ input }: { input: InvocationContext }) => parseGoal(s, input)),
    decompose: fromPromise(async ({ input }: { input: InvocationContext }) => decompose(s, input)),
    author: fromPromise(async ({ input }: { input: InvocationContext }) => author(s, input)),
    admit: fromPromise(async ({ input }: { input: InvocationContext }) => admit(s, input)),
    recordApproval: fromPromise(async ({ input }: { input: ApprovalInput }) => recordApproval(s, input)),
    execute: fromPromise(async ({ input }: { input: InvocationContext }) => execute(s, input)),
    compensate: fromPromise(async ({ input }: { input: InvocationContext }) => compensate(s, input)),
    truncate: fromPromise(async ({ input }: { input: InvocationContext }) => truncate(s, input)),
    closeEpoch: fromPromise(async ({ input }: { input: InvocationContext }) => closeEpoch(s, input)),
    finish: fromPromise(async ({ input }: { input: FinishInput }) => finish(s, input)),
  } as Partial<InvocationActors>;
}
