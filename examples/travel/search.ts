/**
 * Read-only provider lookups: flight search and hotel search, plus the pure search functions the
 * transcript uses to predict epoch 1's results exactly.
 *
 * Invariants:
 * - A search result is a pure function of the catalogue and the args (no key-derived ids), so the
 *   same search gives the same JSON on every run — which lets the transcript match epoch 2 on the
 *   exact outcome of epoch 1.
 * - A search records the offers it returned in the provider state (upsert by id) so the next
 *   observation sees them as facts; it is still `readOnly` for the runtime: it commits nothing,
 *   spends nothing, and needs no compensation. Like every call it goes through `runEffect`
 *   (counted per key, applied once per key).
 * - Hotels a failed confirmation found sold out (`offers.unavailable`) are no longer offered.
 */
import { z } from 'zod';
import type { Actuator } from '../../actors/actuator.js';
import { providerActuator, type Flight, type Hotel, type ProviderOptions, type TravelState } from './state.js';

const name = z.string().min(1);
const day = z.number().int().min(1).max(31);

export const flightSearchArgs = z.strictObject({ from: name, to: name, day });
export const flightSearchResult = z.strictObject({
  from: z.string(),
  to: z.string(),
  day: z.number(),
  currency: z.literal('EUR'),
  offers: z.array(z.strictObject({ flight: z.string(), departs: z.string(), arrives: z.string(), stops: z.number(), price: z.number() })),
});
export type FlightSearchArgs = z.infer<typeof flightSearchArgs>;
export type FlightSearchResult = z.infer<typeof flightSearchResult>;

export const hotelSearchArgs = z.strictObject({ city: name, day });
export const hotelSearchResult = z.strictObject({
  city: z.string(),
  checkIn: z.number(),
  currency: z.literal('EUR'),
  offers: z.array(z.strictObject({ hotel: z.string(), name: z.string(), nights: z.number(), price: z.number(), nearVenue: z.boolean() })),
});
export type HotelSearchArgs = z.infer<typeof hotelSearchArgs>;
export type HotelSearchResult = z.infer<typeof hotelSearchResult>;

/** The flights of the catalogue matching the search, cheapest first (ties by id). */
export function findFlights(state: Pick<TravelState, 'catalogue'>, args: FlightSearchArgs): Flight[] {
  return state.catalogue.flights
    .filter((f) => f.from === args.from && f.to === args.to && f.day === args.day)
    .sort((a, b) => a.price - b.price || (a.id < b.id ? -1 : 1));
}

/** The hotels of the catalogue matching the search (still available), cheapest first. */
export function findHotels(state: Pick<TravelState, 'catalogue' | 'offers'>, args: HotelSearchArgs): Hotel[] {
  return state.catalogue.hotels
    .filter((h) => h.city === args.city && h.checkIn === args.day && !state.offers.unavailable.includes(h.id))
    .sort((a, b) => a.price - b.price || (a.id < b.id ? -1 : 1));
}

export function flightSearchResultOf(state: Pick<TravelState, 'catalogue'>, args: FlightSearchArgs): FlightSearchResult {
  const offers = findFlights(state, args).map((f) => ({ flight: f.id, departs: f.departs, arrives: f.arrives, stops: f.stops, price: f.price }));
  return { from: args.from, to: args.to, day: args.day, currency: 'EUR', offers };
}

export function hotelSearchResultOf(state: Pick<TravelState, 'catalogue' | 'offers'>, args: HotelSearchArgs): HotelSearchResult {
  const offers = findHotels(state, args).map((h) => ({ hotel: h.id, name: h.name, nights: h.nights, price: h.price, nearVenue: h.nearVenue }));
  return { city: args.city, checkIn: args.day, currency: 'EUR', offers };
}

function upsert<T extends { id: string }>(list: T[], items: T[]): void {
  for (const item of items) {
    const at = list.findIndex((x) => x.id === item.id);
    if (at >= 0) list[at] = item;
    else list.push(item);
  }
}

export function searchActuators(options: ProviderOptions): Actuator[] {
  const flights: Actuator<FlightSearchArgs, FlightSearchResult> = providerActuator(options, {
    name: 'flights.search',
    kind: 'tool',
    readOnly: true,
    args: flightSearchArgs,
    result: flightSearchResult,
    apply(state, args) {
      upsert(state.offers.flights, findFlights(state, args));
      return flightSearchResultOf(state, args);
    },
  });
  const hotels: Actuator<HotelSearchArgs, HotelSearchResult> = providerActuator(options, {
    name: 'hotels.search',
    kind: 'tool',
    readOnly: true,
    args: hotelSearchArgs,
    result: hotelSearchResult,
    apply(state, args) {
      upsert(state.offers.hotels, findHotels(state, args));
      return hotelSearchResultOf(state, args);
    },
  });
  return [flights, hotels];
}
