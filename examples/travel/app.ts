/**
 * The travel example's parts, bound to one state backend (state.ts: a state file per invocation,
 * or a Redis key per invocation): every actuator (each simulated provider deduplicating on its
 * idempotency key against the invocation's world), the observation, the spend policy and the
 * evaluables. `travelDomain` (domain.ts) is built from these; tests use `createTravelApp` to get
 * them over a state file of their own, with an injected initial world or crash hook.
 *
 * Invariants:
 * - Actuator names are unique and every operator of the library binds one of them (a test checks).
 * - The demo spends 780 EUR, under the policy's 1000 EUR approval limit and its 2000 EUR
 *   envelope cap, and satisfies the library's task constraints (780 ≤ the 900 budget).
 * - The taxi intents' authored rides (35, 28, 42 EUR in the seed world) are within the policy's
 *   80 EUR allowance for model-authored bookings, so they run without a person.
 */
import type { Actuator } from '../../actors/actuator.js';
import type { EvaluableRegistry } from '../../htn/library/evaluables.js';
import type { Library } from '../../htn/library/schema.js';
import { spendApprovalPolicy, type AdmissionPolicy } from '../../machines/policy.js';
import { bookingActuators } from './booking.js';
import { travelPackPolicy } from './policy-pack.js';
import { travelEvaluables, travelLibrary } from './library.js';
import { notifyActuators } from './notify.js';
import { observeActuator } from './observe.js';
import { searchActuators } from './search.js';
import { taxiActuators } from './taxi.js';
import { seedTravelState, stateBackendOf, type ProviderOptions } from './state.js';

/**
 * Version 1, kept so journals pinned to it resume and replay: epochs whose world-effect steps spend
 * more than 1000 (sum of `amount` args) need approval.
 */
export const travelPolicyV1: AdmissionPolicy = spendApprovalPolicy({ version: '1', limit: 1000, amountArg: 'amount' });

/**
 * The actuators a step of the travel library may dispatch under policy version 2: every operator's
 * actuator and declared compensation (`airline.cancel`, `hotel.cancel`) before the taxi's. `travel.observe` is not among them: the runtime
 * observes at the start of each epoch, never as a step.
 */
export const TRAVEL_STEP_ACTUATORS = [
  'flights.search', 'hotels.search',
  'airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm', 'airline.cancel', 'hotel.cancel',
  'message.send', 'reminder.set',
] as const;

/**
 * The actuators a step of the travel library may dispatch now: those of version 2 and the taxi's
 * (taxi.ts) — `taxi.quote`, `taxi.book` and its declared compensation `taxi.cancel`.
 */
export const TRAVEL_TAXI_ACTUATORS = ['taxi.quote', 'taxi.book', 'taxi.cancel'] as const;
export const TRAVEL_STEP_ACTUATORS_V3 = [...TRAVEL_STEP_ACTUATORS, ...TRAVEL_TAXI_ACTUATORS] as const;

/** What the policy lets the model book without a person (version 3): one taxi ride up to this much. */
export const AUTHORED_TAXI_ALLOWANCE = 80;

/**
 * Version 2, kept so journals pinned to it resume and replay: v1's approval above 1000, plus a
 * contract envelope — at most 2000 spent per invocation, only the library's actuators (before the
 * taxi), messages only by email or sms (the channels the providers know), at most 12 steps in a
 * model-authored fragment and 24 dispatches per epoch; authored world effects always ask a person.
 */
export const travelPolicyV2: AdmissionPolicy = spendApprovalPolicy({
  version: '2',
  limit: 1000,
  amountArg: 'amount',
  envelope: {
    spend: { arg: 'amount', cap: 2000 },
    actuators: TRAVEL_STEP_ACTUATORS,
    recipients: { arg: 'channel', allowed: ['email', 'sms'] },
    stepsPerFragment: 12,
    dispatchesPerEpoch: 24,
  },
});

/**
 * Version 3, kept so journals pinned to it resume and replay (the policy pack travel@4 says the same
 * rules; new runs pin travel@5, which holds the allowance per run, policy-pack.ts): version 2's rules over the taxi's actuators too, and the gap path
 * of the taxi intents runs without a person — a model-authored fragment's world effects are admitted
 * when they are taxi bookings (`taxi.book`) spending at most AUTHORED_TAXI_ALLOWANCE (80 EUR) in
 * all; any other authored effect, or a ride over that, still asks a person. The task's constraints
 * (the ride within the goal's budget) and the envelope's cap are checked first, and refuse.
 */
export const travelPolicy: AdmissionPolicy = spendApprovalPolicy({
  version: '3',
  limit: 1000,
  amountArg: 'amount',
  envelope: {
    spend: { arg: 'amount', cap: 2000 },
    actuators: TRAVEL_STEP_ACTUATORS_V3,
    recipients: { arg: 'channel', allowed: ['email', 'sms'] },
    stepsPerFragment: 12,
    dispatchesPerEpoch: 24,
    authoredEffects: { actuators: ['taxi.book'], spendAtMost: AUTHORED_TAXI_ALLOWANCE },
  },
});

export const TRAVEL_OBSERVE = 'travel.observe';

/**
 * Every actuator of the example, over one state backend — `{ state: fileStateBackend(…) }`,
 * `{ state: redisStateBackend(…) }`, or the older `{ stateFile }` form (a file backend) — each
 * invocation's world seeded when an actuator first runs.
 */
export function travelActuators(options: ProviderOptions): Actuator[] {
  // One backend for all of them (the stateFile form is mapped to a file backend here, once).
  const { crashAfterEffect } = options;
  const shared: ProviderOptions = { state: stateBackendOf(options), ...(crashAfterEffect ? { crashAfterEffect } : {}) };
  return [observeActuator(shared), ...searchActuators(shared), ...bookingActuators(shared), ...notifyActuators(shared), ...taxiActuators(shared)];
}

/** The travel parts over one state file, for tests and apps that wire a runtime by hand. */
export interface TravelApp {
  name: 'travel';
  library: Library;
  actuators: Actuator[];
  observe: string;
  policy: AdmissionPolicy;
  evaluables: EvaluableRegistry;
}

/**
 * The parts over one state file, seeded now (with `options.initialState` or the seed world), under
 * the domain's default policy: the policy pack travel@5 (policy-pack.ts).
 */
export function createTravelApp(options: ProviderOptions & { stateFile: string }): TravelApp {
  seedTravelState(options.stateFile, options.initialState);
  return {
    name: 'travel',
    library: travelLibrary,
    actuators: travelActuators(options),
    observe: TRAVEL_OBSERVE,
    policy: travelPackPolicy,
    evaluables: travelEvaluables(),
  };
}
