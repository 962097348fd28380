/**
 * The travel example — the folder's public face. Its default export is the travel domain
 * (`weft run travel`, or `weft run ./dist/examples/travel/index.js`): "Take me to Lisbon for the
 * conference on the 12th, under 900 EUR" — search, hold, pay, confirm, send the itinerary, set a
 * reminder — and the taxi intents of the gap path (transfer-script.ts: "…, and book me a taxi from
 * the airport"). The named exports are its parts, for tests and for apps that wire a runtime by hand.
 */
export { travelDomain as default, travelDomain, TRAVEL_AS_OF, TRAVEL_STATE_FILE } from './domain.js';
export { createTravelApp, travelActuators, travelPolicy, travelPolicyV2, AUTHORED_TAXI_ALLOWANCE, TRAVEL_OBSERVE, type TravelApp } from './app.js';
export { TRAVEL_POLICY_PACK, TRAVEL_POLICY_PACK_V4, travelPackPolicy, travelPackPolicyV4 } from './policy-pack.js';
export { taxiActuators, taxiFare } from './taxi.js';
export { TRAVEL_TRANSFER_INTENTS, TravelScriptedModel, parseTransferIntent, airportOf, type TransferIntent } from './transfer-script.js';
export { travelLibrary, travelEvaluables } from './library.js';
export { travelLibraryBeforeBindings, TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST } from './library-before-bindings.js';
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
  serializeTravelState,
  parseTravelState,
  fileStateBackend,
  redisStateBackend,
  travelStateKey,
  type TravelState,
  type TravelStateBackend,
  type FileBackendOptions,
  type RedisBackendOptions,
  type EffectCounts,
  type ProviderOptions,
} from './state.js';
export { TRAVEL_INTENT, TRAVEL_GOALS, TRAVEL_SUMMARY, travelTranscript, buildTravelTranscript, expectedSearchOutcome } from './transcript.js';
