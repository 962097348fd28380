/**
 * The demo's intent and the ScriptedModel transcript that plays the model for it offline.
 *
 * Matching rules (actors/model/scripted.ts matches by content, never by position):
 * - epoch 1, first prompt (purpose parse, exact intent, no earlier outcomes): a malformed reply —
 *   prose, not JSON — which the runtime records as rejected and re-prompts;
 * - epoch 1, re-prompt whose feedback contains "not valid JSON": `find_options(me, lisbon, 12)`;
 * - epoch 2, with the EXACT outcome of epoch 1 (the two search results; they are a pure function
 *   of the seed catalogue, computed here with the providers' own search functions):
 *   `book_trip(me, lisbon, 12, 900)`;
 * - epoch 3 and epoch 4 match on intent and epoch only: their earlier outcomes carry booking
 *   references drawn from the seeded stream of each step's idempotency key, and the key contains
 *   the invocation id, which the runtime derives from tenant, seed and asOf — not known here.
 *   Epoch 3: `share_itinerary(me, lisbon)`; epoch 4: `{ done: true, summary }`.
 * The transcript assumes the state file starts as `initialTravelState()` (or the state passed to
 * `buildTravelTranscript`); any other start makes epoch 2 find no reply, and the run stops with a
 * clear `model.no_scripted_reply` error instead of booking on the wrong context.
 *
 * The taxi intents of the gap path ("…, and book me a taxi from the airport") are not in this
 * transcript: `TravelScriptedModel` (transfer-script.ts) derives their replies from each request.
 */
import type { Transcript } from '../../actors/model/scripted.js';
import type { EpochOutcome } from '../../machines/context.js';
import { flightSearchResultOf, hotelSearchResultOf } from './search.js';
import { initialTravelState, type TravelState } from './state.js';

export const TRAVEL_INTENT = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';

export const TRAVEL_GOALS = {
  findOptions: { task: 'find_options', args: ['me', 'lisbon', 12] },
  bookTrip: { task: 'book_trip', args: ['me', 'lisbon', 12, 900] },
  shareItinerary: { task: 'share_itinerary', args: ['me', 'lisbon'] },
} as const;

export const TRAVEL_SUMMARY = 'Booked flight and hotel for the Lisbon conference within the 900 EUR budget, sent the itinerary and set a check-in reminder.';

/** The exact outcome of epoch 1 over `state`: what the model is shown when it forms goal 2. */
export function expectedSearchOutcome(state: TravelState = initialTravelState()): EpochOutcome {
  const [, city, day] = TRAVEL_GOALS.findOptions.args;
  return {
    epoch: 1,
    goal: { task: TRAVEL_GOALS.findOptions.task, args: [...TRAVEL_GOALS.findOptions.args] },
    outcome: 'completed',
    results: [
      { step: 0, operator: 'search_flights', result: flightSearchResultOf(state, { from: state.traveller.home, to: city, day }) },
      { step: 1, operator: 'search_hotels', result: hotelSearchResultOf(state, { city, day }) },
    ],
  };
}

export function buildTravelTranscript(state: TravelState = initialTravelState(), intent: string = TRAVEL_INTENT): Transcript {
  const goal = (g: { task: string; args: ReadonlyArray<string | number> }) => ({ goal: { task: g.task, args: [...g.args] } });
  return {
    model: 'travel-demo',
    entries: [
      {
        match: { purpose: 'parse', intent, epoch: 1, outcomes: [] },
        reply: { text: 'Sure! First I will look for flights and hotels in Lisbon around the 12th, then book the cheapest pair under 900 EUR.' },
      },
      { match: { purpose: 'parse', intent, epoch: 1, outcomes: [], feedback: 'not valid JSON' }, reply: goal(TRAVEL_GOALS.findOptions) },
      {
        match: { purpose: 'parse', intent, epoch: 2, outcomes: [expectedSearchOutcome(state) as unknown as Transcript['entries'][number]['reply']] },
        reply: goal(TRAVEL_GOALS.bookTrip),
      },
      { match: { purpose: 'parse', intent, epoch: 3 }, reply: goal(TRAVEL_GOALS.shareItinerary) },
      { match: { purpose: 'parse', intent, epoch: 4 }, reply: { done: true, summary: TRAVEL_SUMMARY } },
    ],
  };
}

/** The transcript for the seed world and the default intent. */
export const travelTranscript: Transcript = buildTravelTranscript();
