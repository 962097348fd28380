/**
 * The travel example — the folder's public face. `createTravelApp({ stateFile })` returns the
 * WeftApp the runtime runs for "Take me to Lisbon for the conference on the 12th, under 900 EUR":
 * the pinned method library, the simulated providers (every one deduplicating on its idempotency
 * key against one JSON state file), the observation, the spend policy and the evaluables.
 *
 * Invariants:
 * - The state file is the providers' whole world; it is created from `initialTravelState()` (or
 *   `initialState`) when missing and otherwise used as it is, so a resumed process sees the
 *   effects an earlier, crashed process applied.
 * - Actuator names are unique and every operator of the library binds one of them (a test checks).
 * - The demo spends 780 EUR, under `travelPolicy`'s 1000 EUR approval limit.
 */
import type { Actuator } from '../../actors/actuator.js';
import { spendApprovalPolicy, type AdmissionPolicy } from '../../machines/policy.js';
import type { WeftApp } from '../../runtime/app.js';
import { bookingActuators } from './booking.js';
import { travelEvaluables, travelLibrary } from './library.js';
import { notifyActuators } from './notify.js';
import { observeActuator } from './observe.js';
import { searchActuators } from './search.js';
import { seedTravelState, type ProviderOptions, type TravelState } from './state.js';

export interface TravelAppOptions extends ProviderOptions {
  /** The world to seed a missing state file with (default: `initialTravelState()`). */
  initialState?: TravelState;
}

/** Epochs whose world-effect steps spend more than 1000 (sum of `amount` args) need approval. */
export const travelPolicy: AdmissionPolicy = spendApprovalPolicy({ version: '1', limit: 1000, amountArg: 'amount' });

export const TRAVEL_OBSERVE = 'travel.observe';

/** Every actuator of the example, bound to one state file. */
export function travelActuators(options: ProviderOptions): Actuator[] {
  return [observeActuator(options), ...searchActuators(options), ...bookingActuators(options), ...notifyActuators(options)];
}

export function createTravelApp(options: TravelAppOptions): WeftApp {
  seedTravelState(options.stateFile, options.initialState);
  const provider: ProviderOptions = { stateFile: options.stateFile, ...(options.crashAfterEffect ? { crashAfterEffect: options.crashAfterEffect } : {}) };
  return {
    name: 'travel',
    library: travelLibrary,
    actuators: travelActuators(provider),
    observe: TRAVEL_OBSERVE,
    policy: travelPolicy,
    evaluables: travelEvaluables(),
  };
}

export { travelLibrary, travelEvaluables } from './library.js';
export { observeTravel } from './observe.js';
export { checkInReminderAt } from './notify.js';
export { findFlights, findHotels, flightSearchResultOf, hotelSearchResultOf } from './search.js';
export {
  initialTravelState,
  readTravelState,
  writeTravelState,
  seedTravelState,
  updateTravelState,
  effectCounts,
  attemptsFor,
  appliedFor,
  type TravelState,
  type EffectCounts,
  type ProviderOptions,
} from './state.js';
export { TRAVEL_INTENT, TRAVEL_GOALS, TRAVEL_SUMMARY, travelTranscript, buildTravelTranscript, expectedSearchOutcome } from './transcript.js';
