/**
 * The real logic behind the invocation machine's named actors. Each one is a recorded step over
 * the journal through the Recorder: it derives the records it can compute (requests, plan digests,
 * dispatches, admissions) and obtains the ones it cannot (model replies, observations, actuator
 * completions) — live from the world, or, on resume and replay, read back from the journal.
 *
 * Write-ahead order (invariant 1): `model.requested` / `step.dispatched` /
 * `compensation.dispatched` are durable before the call; the completion is durable before the
 * actor returns and the machine moves on.
 *
 * The machine is provided with these actors ONCE per process (`servicedMachine`): building a
 * machine formats every transition of the chart, which costs more than a short invocation's own
 * work. What differs per invocation — its recorder, pinned library and policy — is bound to the
 * invocation's actor system by `createInvocationActor`, and each actor looks it up there.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- an actor system's type is not needed to key the map */
import { createActor, fromPromise, type ActorOptions, type ActorSystem } from 'xstate';
import type { ApprovalInput, FinishInput, InvocationActors } from '../machines/actors.js';
import type { InvocationContext, InvocationInput } from '../machines/context.js';
import { invocationMachine, type InvocationMachine } from '../machines/invocation-machine.js';
import { admit, recordApproval } from './epoch/admit-steps.js';
import { closeEpoch, finish, truncate } from './epoch/close-steps.js';
import { compensate, execute } from './epoch/execute-steps.js';
import { author, parseGoal } from './epoch/model-steps.js';
import { decompose } from './epoch/plan-steps.js';
import { stopEpoch } from './epoch/stop-steps.js';
import type { EpochServices } from './epoch/services.js';

export { AUTHORED_TASK, type EpochServices } from './epoch/services.js';

/** Each invocation's services, by the actor system its machine runs in (one system per invocation). */
const servicesBySystem = new WeakMap<ActorSystem<any>, EpochServices>();

function servicesOf(system: ActorSystem<any>): EpochServices {
  const services = servicesBySystem.get(system);
  if (!services) throw new Error('weft: an epoch actor ran in a machine not created by createInvocationActor (no services bound to its system)');
  return services;
}

/** An actor over the invocation's services; its errors are reported before the machine suspends on them. */
function serviced<I, O>(step: (s: EpochServices, input: I) => Promise<O>) {
  return fromPromise(async ({ input, system }: { input: I; system: ActorSystem<any> }) => {
    const s = servicesOf(system);
    try {
      return await step(s, input);
    } catch (err) {
      s.onActorError?.(err);
      throw err;
    }
  });
}

const servicedActors = {
  parseGoal: serviced<InvocationContext, unknown>(parseGoal),
  decompose: serviced<InvocationContext, unknown>(decompose),
  author: serviced<InvocationContext, unknown>(author),
  admit: serviced<InvocationContext, unknown>(admit),
  recordApproval: serviced<ApprovalInput, unknown>(recordApproval),
  execute: serviced<InvocationContext, unknown>(execute),
  compensate: serviced<InvocationContext, unknown>(compensate),
  truncate: serviced<InvocationContext, unknown>(truncate),
  closeEpoch: serviced<InvocationContext, unknown>(closeEpoch),
  finish: serviced<FinishInput, unknown>(finish),
  stopEpoch: serviced<InvocationContext, unknown>(stopEpoch),
} as Partial<InvocationActors>;

/** The invocation machine with the real actors, built once. */
export const servicedMachine: InvocationMachine = invocationMachine.provide({ actors: servicedActors }) as InvocationMachine;

/** An actor of the serviced machine whose epoch actors use `services` (not started). */
export function createInvocationActor(services: EpochServices, options: ActorOptions<InvocationMachine> & { input: InvocationInput }) {
  const actor = createActor(servicedMachine, options);
  servicesBySystem.set(actor.system, services);
  return actor;
}
