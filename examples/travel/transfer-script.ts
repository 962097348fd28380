/**
 * The taxi intents — the gap path a user can see — and the scripted model's replies for them.
 *
 *   weft run travel "Take me to Lisbon for the conference on the 12th, under 900 EUR, and book me a taxi from the airport"
 *   weft run travel "Take me to Porto for the summit on the 20th, under 1200 EUR, and book me a taxi from the airport"
 *   weft run travel "Take me to Madrid for the forum on the 25th, under 1000 EUR, and book me a taxi from the airport"
 *
 * Any intent of that shape ("Take me to <City> for the <event> on the <day>, under <budget> EUR, and
 * book me a taxi from the airport") is answered by `TravelScriptedModel`, offline. Its replies are
 * DERIVED from each request, never memorised per city, so the same script serves every constant:
 * - parse, no outcomes yet: `find_options(me, <city>, <day>)`;
 * - parse after the searches completed: `book_trip(me, <city>, <day>, <budget>)`;
 * - parse after the trip was booked: `book_transfer(me, <city>-airport, <hotel>, <day>, <left>)` —
 *   the hotel the trip confirmed and what the budget has left after the card charge, both read from
 *   the outcomes the request carries. The library has no method for it: the gap path.
 * - author (the gap path): a fragment of explicit args only — `quote_taxi(t, from, to, day)` then
 *   `book_taxi(t, from, to, day, price)` — whose every constant is a goal arg except the price, read
 *   from the observed fact `(taxi-fare from to price)` in the request's state;
 * - parse after the transfer: `{ done, summary }`.
 * Anything else (a failed trip, a re-prompt) has no reply: the run stops with `model.no_scripted_reply`
 * instead of guessing. Every other intent goes to the demo's transcript (transcript.ts), unchanged.
 */
import { NoScriptedReplyError, ScriptedModel, type Transcript } from '../../actors/model/scripted.js';
import type { ModelReply, ModelRequest } from '../../actors/model/model.js';
import { canonicalize } from '../../journal/canonical.js';
import type { EpochOutcome } from '../../machines/context.js';

export const TRAVEL_TRANSFER_INTENTS = {
  lisbon: 'Take me to Lisbon for the conference on the 12th, under 900 EUR, and book me a taxi from the airport',
  porto: 'Take me to Porto for the summit on the 20th, under 1200 EUR, and book me a taxi from the airport',
  madrid: 'Take me to Madrid for the forum on the 25th, under 1000 EUR, and book me a taxi from the airport',
} as const;

/** What the travel domain's offline model answers (the refusal of anything else says it): its sentence pattern and the world it knows. */
export const TRAVEL_SCRIPTED_ANSWERS =
  'the demo intent and "Take me to <City> for the <event> on the <day>th, under <budget> EUR, and book me a taxi from the airport", ' +
  'its world having flights and hotels for Lisbon (12th), Porto (20th) and Madrid (25th) only';

export interface TransferIntent {
  city: string;
  event: string;
  day: number;
  budget: number;
}

const SHAPE = /^Take me to ([A-Z][a-z]+) for the ([a-z]+) on the (\d{1,2})(?:st|nd|rd|th), under (\d{1,6}) EUR, and book me a taxi from the airport$/;

/** The constants of a taxi intent, or undefined when the intent is not of that shape. */
export function parseTransferIntent(intent: string): TransferIntent | undefined {
  const m = SHAPE.exec(intent);
  if (!m) return undefined;
  return { city: m[1]!.toLowerCase(), event: m[2]!, day: Number(m[3]), budget: Number(m[4]) };
}

/** The airport a taxi from "the airport" of `city` leaves from (the provider's naming, state.ts). */
export const airportOf = (city: string): string => `${city}-airport`;

type Reply = Record<string, unknown>;
const TRAVELLER = 'me';

function resultOf(outcome: EpochOutcome, operator: string): Record<string, unknown> | undefined {
  const r = outcome.results.find((x) => x.operator === operator)?.result;
  return r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : undefined;
}

function parseReply(request: ModelRequest, t: TransferIntent): Reply | undefined {
  const outcomes = request.outcomes as EpochOutcome[];
  const last = outcomes.at(-1);
  if (!last) return { goal: { task: 'find_options', args: [TRAVELLER, t.city, t.day] } };
  if (last.outcome !== 'completed' && last.goal.task !== 'book_transfer') return undefined;
  if (last.goal.task === 'find_options') return { goal: { task: 'book_trip', args: [TRAVELLER, t.city, t.day, t.budget] } };
  if (last.goal.task === 'book_trip') {
    const hotel = resultOf(last, 'confirm_hotel')?.item;
    const charged = resultOf(last, 'charge_card')?.amount;
    if (typeof hotel !== 'string' || typeof charged !== 'number') return undefined;
    return { goal: { task: 'book_transfer', args: [TRAVELLER, airportOf(t.city), hotel, t.day, t.budget - charged] } };
  }
  if (last.goal.task === 'book_transfer') {
    const City = t.city[0]!.toUpperCase() + t.city.slice(1);
    const ride = resultOf(last, 'book_taxi');
    const taxi = last.outcome === 'completed' && ride ? `and a taxi from the airport to the hotel (${String(ride.amount)} EUR)` : `but no taxi (${last.reason ?? last.outcome})`;
    return { done: true, summary: `Booked flight and hotel for the ${City} ${t.event} within the ${t.budget} EUR budget, ${taxi}.` };
  }
  return undefined;
}

function authorReply(request: ModelRequest): Reply | undefined {
  const goal = request.goal;
  if (goal?.task !== 'book_transfer') return undefined;
  const [traveller, from, to, day] = goal.args;
  const facts = (request.state as { facts?: unknown[][] } | undefined)?.facts ?? [];
  const fare = facts.find((f) => f[0] === 'taxi-fare' && f[1] === from && f[2] === to);
  if (!fare || typeof fare[3] !== 'number') return undefined;
  return {
    steps: [
      { operator: 'quote_taxi', args: [traveller, from, to, day] },
      { operator: 'book_taxi', args: [traveller, from, to, day, fare[3]] },
    ],
  };
}

/**
 * The travel domain's scripted model: the demo's transcript for its intents, and derived replies
 * for the taxi intents. Same id as the transcript's model (`scripted:travel-demo`), so the pins of
 * the demo's runs are what they were.
 */
export class TravelScriptedModel extends ScriptedModel {
  constructor(transcript: Transcript) {
    super(transcript, { answers: TRAVEL_SCRIPTED_ANSWERS });
  }

  override async complete(request: ModelRequest): Promise<ModelReply> {
    const t = parseTransferIntent(request.intent);
    if (!t) return super.complete(request);
    const reply = request.feedback !== undefined ? undefined : request.purpose === 'author' ? authorReply(request) : parseReply(request, t);
    if (!reply) throw new NoScriptedReplyError(request, this);
    this.requests.push(request);
    return { text: canonicalize(reply as never) };
  }
}
