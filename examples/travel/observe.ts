/**
 * The observation: the read-only `state` actuator the runtime calls at the start of every epoch
 * with `{ goal: { task, args } }`. It turns the provider state into the planner's world — typed
 * objects and ground facts — using the predicates the travel library declares.
 *
 * Invariants:
 * - Read-only and deterministic: a pure function of the invocation's world (`observeTravel`), as
 *   its backend reads it (state.ts), listed in a fixed order (state order, then pairings in offer
 *   order). It records nothing, so it is not in the per-key ledger; re-observing after a crash just
 *   reads again.
 * - Only what searches recorded is visible: before `find_options` there are no offers, so
 *   `book_trip` has no method — the model must search first.
 * - Prices are numbers. `trip-total` is the provider's package quote for every flight and hotel
 *   offered for the same city and day (the flight's arrival day is the check-in day).
 * - A hotel found sold out is no longer offered (unless it is already booked).
 * - The gap path's world (taxi.ts): booked rides are `(taxi-booked ?t ?from ?to ?day)`; when the
 *   goal is `book_transfer`, the airports (`(airport-of ?a ?c)`) and the provider's fares
 *   (`(taxi-fare ?from ?to ?price)`) too — the constants an authored fragment's amount comes from.
 *   An event other than the conference is `(conference ?c ?day)` when the goal names its city.
 *   Neither shows for the trip goals of a world without transfers, so their observations (and the
 *   journals recording them) are unchanged.
 */
import { z } from 'zod';
import type { Actuator } from '../../actors/actuator.js';
import type { Fact, ObjectDecl, WorldState } from '../../htn/library/schema.js';
import { providerState, type ProviderOptions, type TravelState } from './state.js';

export const observeArgs = z.strictObject({
  goal: z.strictObject({ task: z.string().min(1), args: z.array(z.union([z.string(), z.number()])) }),
});
const fact = z.tuple([z.string().min(1)]).rest(z.union([z.string().min(1), z.number().finite()]));
export const observeResult = z.strictObject({
  objects: z.array(z.strictObject({ name: z.string().min(1), type: z.string().min(1) })),
  facts: z.array(fact),
});

/** Channels the library declares as constants; contacts on other channels are not reported. */
const CHANNELS = ['email', 'sms'];

/** The goal the runtime observes for (`{ goal }`, the actuator's args), as far as the world depends on it. */
export type ObservedGoal = { task: string; args: ReadonlyArray<string | number> };

export function observeTravel(state: TravelState, goal?: ObservedGoal): WorldState {
  const objects: ObjectDecl[] = [];
  const seen = new Set<string>();
  const object = (name: string, type: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    objects.push({ name, type });
  };
  const facts: Fact[] = [];
  const t = state.traveller;

  object(t.id, 'traveller');
  object(t.home, 'city');
  object(state.conference.city, 'city');
  object(t.card, 'card');
  facts.push(['home', t.id, t.home], ['card-of', t.id, t.card], ['conference', state.conference.city, state.conference.day]);
  if (CHANNELS.includes(t.prefers) && t.contacts[t.prefers]) facts.push(['prefers-channel', t.id, t.prefers]);
  for (const ch of CHANNELS) if (t.contacts[ch]) facts.push(['reachable', t.id, ch]);

  const bookedItems = new Set(state.bookings.filter((b) => b.status === 'confirmed').map((b) => b.item));
  const hotels = state.offers.hotels.filter((h) => !state.offers.unavailable.includes(h.id) || bookedItems.has(h.id));
  for (const f of state.offers.flights) {
    object(f.from, 'city');
    object(f.to, 'city');
    object(f.id, 'flight');
    facts.push(['offer-flight', f.id, f.to, f.day, f.price], ['departs-from', f.id, f.from]);
    if (f.stops === 0) facts.push(['direct', f.id]);
  }
  for (const h of hotels) {
    object(h.city, 'city');
    object(h.id, 'hotel');
    facts.push(['offer-hotel', h.id, h.city, h.checkIn, h.price]);
    if (h.nearVenue) facts.push(['near-venue', h.id]);
  }
  for (const f of state.offers.flights) {
    for (const h of hotels) if (f.to === h.city && f.day === h.checkIn) facts.push(['trip-total', f.id, h.id, f.price + h.price]);
  }

  for (const hold of state.holds) if (hold.status === 'held') facts.push(['held', hold.traveller, hold.item]);
  for (const c of state.charges) if (c.status === 'captured') facts.push(['paid', c.traveller, c.flight, c.hotel]);
  for (const b of state.bookings) if (b.status === 'confirmed') facts.push(['booked', b.traveller, b.item]);
  for (const m of state.messages) facts.push(['itinerary-sent', m.to, m.flight, m.hotel]);
  for (const r of state.reminders) if (r.status === 'set') facts.push(['reminder-set', r.traveller, r.flight]);
  // Transfers (taxi.ts): rides booked are facts whatever the goal; the provider's fares only when the
  // goal is a transfer, and another event only when the goal names its city — so the observations of
  // the trip goals of a world with no transfers are what they were before transfers existed.
  for (const r of state.transfers ?? []) {
    if (r.status !== 'booked') continue;
    object(r.from, 'airport');
    object(r.to, 'hotel');
    facts.push(['taxi-booked', r.traveller, r.from, r.to, r.day]);
  }
  if (goal?.task === 'book_transfer') {
    for (const a of state.catalogue.airports ?? []) {
      object(a.id, 'airport');
      object(a.city, 'city');
      facts.push(['airport-of', a.id, a.city]);
    }
    for (const fare of state.catalogue.taxis ?? []) {
      object(fare.from, 'airport');
      object(fare.to, 'hotel');
      facts.push(['taxi-fare', fare.from, fare.to, fare.price]);
    }
  }
  for (const e of state.events ?? []) {
    if (!goal?.args.includes(e.city) || e.city === state.conference.city) continue;
    object(e.city, 'city');
    facts.push(['conference', e.city, e.day]);
  }
  // Items a fact names must be declared objects even when their offer is gone.
  for (const b of state.bookings) if (!seen.has(b.item)) object(b.item, b.kind);
  for (const h of state.holds) if (!seen.has(h.item)) object(h.item, h.kind);
  return { objects, facts };
}

export function observeActuator(options: ProviderOptions): Actuator<z.infer<typeof observeArgs>, WorldState> {
  return {
    name: 'travel.observe',
    kind: 'state',
    readOnly: true,
    argsSchema: observeArgs,
    resultSchema: observeResult as unknown as z.ZodType<WorldState>,
    async run(args, ctx) {
      return observeTravel(await providerState(options, ctx), args.goal);
    },
  };
}
