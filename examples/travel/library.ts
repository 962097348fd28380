/**
 * The travel method library — the data an invocation pins (its digest is the hash of this JSON).
 *
 * Four goals a model can name — the first three, one per epoch of the demo:
 * - `find_options(traveller, city, day)`: read-only searches; the providers record offers, which
 *   the next observation shows as facts (`offer-flight`, `offer-hotel`, `trip-total`, …).
 * - `book_trip(traveller, city, day, budget)`: choose a flight and a hotel under the budget and
 *   book them: hold both, charge the card once, confirm both. Methods, in preference order:
 *   direct flight + hotel near the venue, direct flight + any hotel, any flight (connections too)
 *   + any hotel. Each tests `(le ?total ?budget)` with the evaluable `le@1`.
 * - `share_itinerary(traveller, city)`: send the itinerary on the preferred channel (else any
 *   reachable one) and set a check-in reminder.
 *
 * Why `trip-total`: evaluables only test, they never compute, and the charge must carry one
 * explicit amount (the spend policy sums the `amount` arg). So the providers quote the package
 * price of every (flight, hotel) pair they offered together, and the observation exposes it as
 * `(trip-total ?f ?h ?total)`; the method binds `?total`, tests it against the budget and passes it
 * to `card.charge`, which re-checks it against the current offers (a stale quote fails closed).
 *
 * Task constraints (checked on any fragment achieving the task, model-authored ones above all,
 * where no method fixed the shape): `book_trip` charges the card at most once and at most `?budget`
 * in all, and holds and confirms each of the flight and the hotel at most once; `find_options` only
 * searches (no world effect); `share_itinerary` sends one message and sets one reminder at most.
 *
 * - `book_transfer(traveller, from, to, day, budget)`: a taxi from the airport `from` to the hotel
 *   `to` on `day`, at most `budget`. A declared task with NO method: it is the gap path a user can
 *   see (the taxi intents, transcript.ts): the model authors a fragment of `quote_taxi` and
 *   `book_taxi` with explicit args only — every constant is a goal arg or an observed fact
 *   (`(taxi-fare ?from ?to ?price)`, shown when the goal is a transfer) — so a method mined from
 *   the recorded run can re-derive it for other constants. Its constraints: only `taxi.quote` and
 *   `taxi.book`, at most one booking in the whole run (`per: 'run'`: a booking an earlier epoch left
 *   done counts), the booking's amount at most `?budget`, and the quote and the booking bound to
 *   the goal's traveller, airport, hotel and day (`bind`): a fragment for another ride is refused.
 *
 * Compensation: holds, the charge and the reminder undo themselves (their actuators'
 * `compensate`, which see the step's result: hold and charge references); the confirmations
 * declare a compensating binding (`airline.cancel` / `hotel.cancel`) from the operator's params, as
 * does the taxi booking (`taxi.cancel`).
 */
import { LibraryBuilder, add, and, atom, del, exists, neq, not } from '../../htn/library/builder.js';
import { standardEvaluables, type EvaluableRegistry } from '../../htn/library/evaluables.js';
import type { Library } from '../../htn/library/schema.js';

const T = '?t';

/** The shared precondition of the booking methods, with the method's extra literals. */
function bookingPrecondition(extra: { direct: boolean; nearVenue: boolean }) {
  return and(
    atom('home', T, '?from'),
    atom('offer-flight', '?f', '?c', '?day', '?fp'),
    atom('departs-from', '?f', '?from'),
    ...(extra.direct ? [atom('direct', '?f')] : []),
    atom('offer-hotel', '?h', '?c', '?day', '?hp'),
    ...(extra.nearVenue ? [atom('near-venue', '?h')] : []),
    atom('trip-total', '?f', '?h', '?total'),
    atom('le', '?total', '?budget'),
    atom('card-of', T, '?k'),
    not(atom('booked', T, '?f')),
    not(atom('booked', T, '?h')),
  );
}

const bookingParams = {
  [T]: 'traveller', '?c': 'city', '?day': 'number', '?budget': 'number', '?from': 'city',
  '?f': 'flight', '?fp': 'number', '?h': 'hotel', '?hp': 'number', '?total': 'number', '?k': 'card',
} as const;

const bookingSubtasks = [
  ['hold_flight', T, '?f'],
  ['hold_hotel', T, '?h'],
  ['charge_card', T, '?k', '?f', '?h', '?total'],
  ['confirm_flight', T, '?f'],
  ['confirm_hotel', T, '?h'],
] as const;

const itineraryParams = { [T]: 'traveller', '?c': 'city', '?ch': 'channel', '?f': 'flight', '?fd': 'number', '?fp': 'number', '?h': 'hotel', '?hd': 'number', '?hp': 'number' } as const;
const booked = and(
  atom('booked', T, '?f'),
  atom('offer-flight', '?f', '?c', '?fd', '?fp'),
  atom('booked', T, '?h'),
  atom('offer-hotel', '?h', '?c', '?hd', '?hp'),
  not(atom('itinerary-sent', T, '?f', '?h')),
);

export const travelLibrary: Library = new LibraryBuilder('travel')
  .type('traveller').type('city').type('card').type('channel')
  .type('bookable').type('flight', 'bookable').type('hotel', 'bookable').type('airport')
  .constant('email', 'channel').constant('sms', 'channel')
  // What the observation reports (examples/travel/observe.ts).
  .predicate('home', { [T]: 'traveller', '?c': 'city' })
  .predicate('card-of', { [T]: 'traveller', '?k': 'card' })
  .predicate('conference', { '?c': 'city', '?day': 'number' })
  .predicate('prefers-channel', { [T]: 'traveller', '?ch': 'channel' })
  .predicate('reachable', { [T]: 'traveller', '?ch': 'channel' })
  .predicate('offer-flight', { '?f': 'flight', '?c': 'city', '?day': 'number', '?price': 'number' })
  .predicate('departs-from', { '?f': 'flight', '?c': 'city' })
  .predicate('direct', { '?f': 'flight' })
  .predicate('offer-hotel', { '?h': 'hotel', '?c': 'city', '?day': 'number', '?price': 'number' })
  .predicate('near-venue', { '?h': 'hotel' })
  .predicate('trip-total', { '?f': 'flight', '?h': 'hotel', '?total': 'number' })
  .predicate('held', { [T]: 'traveller', '?b': 'bookable' })
  .predicate('paid', { [T]: 'traveller', '?f': 'flight', '?h': 'hotel' })
  .predicate('booked', { [T]: 'traveller', '?b': 'bookable' })
  .predicate('itinerary-sent', { [T]: 'traveller', '?f': 'flight', '?h': 'hotel' })
  .predicate('reminder-set', { [T]: 'traveller', '?f': 'flight' })
  .predicate('airport-of', { '?a': 'airport', '?c': 'city' })
  .predicate('taxi-fare', { '?from': 'airport', '?to': 'hotel', '?price': 'number' })
  .predicate('taxi-quoted', { [T]: 'traveller', '?from': 'airport', '?to': 'hotel', '?day': 'number' })
  .predicate('taxi-booked', { [T]: 'traveller', '?from': 'airport', '?to': 'hotel', '?day': 'number' })
  .evaluable({ name: 'le', version: '1', params: { '?a': 'number', '?b': 'number' } })
  // Constraints bound any fragment achieving a task — a model-authored one above all (the gap path).
  .task('find_options', { [T]: 'traveller', '?c': 'city', '?day': 'number' }, {
    constraints: [{ only: ['flights.search', 'hotels.search'] }, { count: '*', atMost: 0 }],
  })
  .task('book_trip', { [T]: 'traveller', '?c': 'city', '?day': 'number', '?budget': 'number' }, {
    constraints: [
      { sum: 'card.charge', arg: 'amount', atMost: '?budget' },
      { count: 'card.charge', atMost: 1 },
      { count: 'airline.hold', atMost: 1 },
      { count: 'hotel.hold', atMost: 1 },
      { count: 'airline.confirm', atMost: 1 },
      { count: 'hotel.confirm', atMost: 1 },
    ],
  })
  .task('share_itinerary', { [T]: 'traveller', '?c': 'city' }, {
    constraints: [{ count: 'message.send', atMost: 1 }, { count: 'reminder.set', atMost: 1 }],
  })
  // The gap path: a task with no method. The model authors its fragment (or a mined method covers it).
  .task('book_transfer', { [T]: 'traveller', '?from': 'airport', '?to': 'hotel', '?day': 'number', '?budget': 'number' }, {
    constraints: [
      { only: ['taxi.quote', 'taxi.book'] },
      // One booking per run for the task: a model naming book_transfer again in a later epoch is refused.
      { count: 'taxi.book', atMost: 1, per: 'run' },
      { sum: 'taxi.book', arg: 'amount', atMost: '?budget' },
      // The ride the goal asked for, not another: the quote and the booking carry the goal's own args.
      { bind: 'taxi.quote', args: { from: '?from', to: '?to', day: '?day' } },
      { bind: 'taxi.book', args: { traveller: T, from: '?from', to: '?to', day: '?day' } },
    ],
  })
  // ── operators ──────────────────────────────────────────────────────────────────────────────
  .operator('search_flights', {
    params: { [T]: 'traveller', '?from': 'city', '?to': 'city', '?day': 'number' },
    actuator: { actuator: 'flights.search', args: { from: '?from', to: '?to', day: '?day' } },
    readOnly: true,
  })
  .operator('search_hotels', {
    params: { '?c': 'city', '?day': 'number' },
    actuator: { actuator: 'hotels.search', args: { city: '?c', day: '?day' } },
    readOnly: true,
  })
  .operator('hold_flight', {
    params: { [T]: 'traveller', '?f': 'flight' },
    precondition: and(not(atom('held', T, '?f')), not(atom('booked', T, '?f'))),
    effect: add('held', T, '?f'),
    actuator: { actuator: 'airline.hold', args: { traveller: T, flight: '?f' } },
  })
  .operator('hold_hotel', {
    params: { [T]: 'traveller', '?h': 'hotel' },
    precondition: and(not(atom('held', T, '?h')), not(atom('booked', T, '?h'))),
    effect: add('held', T, '?h'),
    actuator: { actuator: 'hotel.hold', args: { traveller: T, hotel: '?h' } },
  })
  .operator('charge_card', {
    params: { [T]: 'traveller', '?k': 'card', '?f': 'flight', '?h': 'hotel', '?amount': 'number' },
    precondition: and(atom('card-of', T, '?k'), atom('held', T, '?f'), atom('held', T, '?h'), not(atom('paid', T, '?f', '?h'))),
    effect: add('paid', T, '?f', '?h'),
    actuator: { actuator: 'card.charge', args: { traveller: T, card: '?k', flight: '?f', hotel: '?h', amount: '?amount' } },
  })
  .operator('confirm_flight', {
    params: { [T]: 'traveller', '?f': 'flight' },
    precondition: and(atom('held', T, '?f'), exists({ '?h': 'hotel' }, atom('paid', T, '?f', '?h'))),
    effect: [del('held', T, '?f'), add('booked', T, '?f')],
    actuator: { actuator: 'airline.confirm', args: { traveller: T, flight: '?f' } },
    compensate: { actuator: 'airline.cancel', args: { traveller: T, flight: '?f' } },
  })
  .operator('confirm_hotel', {
    params: { [T]: 'traveller', '?h': 'hotel' },
    precondition: and(atom('held', T, '?h'), exists({ '?f': 'flight' }, atom('paid', T, '?f', '?h'))),
    effect: [del('held', T, '?h'), add('booked', T, '?h')],
    actuator: { actuator: 'hotel.confirm', args: { traveller: T, hotel: '?h' } },
    compensate: { actuator: 'hotel.cancel', args: { traveller: T, hotel: '?h' } },
  })
  .operator('send_itinerary', {
    params: { [T]: 'traveller', '?ch': 'channel', '?f': 'flight', '?h': 'hotel' },
    precondition: and(atom('reachable', T, '?ch'), atom('booked', T, '?f'), atom('booked', T, '?h')),
    effect: add('itinerary-sent', T, '?f', '?h'),
    actuator: { actuator: 'message.send', args: { traveller: T, channel: '?ch', flight: '?f', hotel: '?h' } },
  })
  .operator('set_checkin_reminder', {
    params: { [T]: 'traveller', '?f': 'flight' },
    precondition: and(atom('booked', T, '?f'), not(atom('reminder-set', T, '?f'))),
    effect: add('reminder-set', T, '?f'),
    actuator: { actuator: 'reminder.set', args: { traveller: T, flight: '?f' } },
  })
  .operator('quote_taxi', {
    params: { [T]: 'traveller', '?from': 'airport', '?to': 'hotel', '?day': 'number' },
    precondition: not(atom('taxi-booked', T, '?from', '?to', '?day')),
    effect: add('taxi-quoted', T, '?from', '?to', '?day'),
    actuator: { actuator: 'taxi.quote', args: { from: '?from', to: '?to', day: '?day' } },
    readOnly: true,
  })
  .operator('book_taxi', {
    params: { [T]: 'traveller', '?from': 'airport', '?to': 'hotel', '?day': 'number', '?price': 'number' },
    precondition: and(atom('taxi-quoted', T, '?from', '?to', '?day'), atom('taxi-fare', '?from', '?to', '?price'), not(atom('taxi-booked', T, '?from', '?to', '?day'))),
    effect: [del('taxi-quoted', T, '?from', '?to', '?day'), add('taxi-booked', T, '?from', '?to', '?day')],
    actuator: { actuator: 'taxi.book', args: { traveller: T, from: '?from', to: '?to', day: '?day', amount: '?price' } },
    compensate: { actuator: 'taxi.cancel', args: { traveller: T, from: '?from', to: '?to', day: '?day' } },
  })
  // ── methods (tried in this order) ──────────────────────────────────────────────────────────
  .method('refresh-hotels-only', {
    // Flights for this trip were already found: only look for hotels again (e.g. after a hotel sold out).
    task: ['find_options', T, '?c', '?day'],
    params: { [T]: 'traveller', '?c': 'city', '?day': 'number', '?from': 'city', '?f': 'flight', '?fp': 'number' },
    precondition: and(atom('home', T, '?from'), atom('offer-flight', '?f', '?c', '?day', '?fp'), atom('departs-from', '?f', '?from')),
    subtasks: [['search_hotels', '?c', '?day']],
  })
  .method('search-flights-and-hotels', {
    task: ['find_options', T, '?c', '?day'],
    params: { [T]: 'traveller', '?c': 'city', '?day': 'number', '?from': 'city' },
    precondition: and(atom('home', T, '?from'), neq('?from', '?c')),
    subtasks: [['search_flights', T, '?from', '?c', '?day'], ['search_hotels', '?c', '?day']],
  })
  .method('direct-flight-hotel-near-venue', {
    task: ['book_trip', T, '?c', '?day', '?budget'],
    params: bookingParams,
    precondition: bookingPrecondition({ direct: true, nearVenue: true }),
    subtasks: bookingSubtasks,
  })
  .method('direct-flight-any-hotel', {
    task: ['book_trip', T, '?c', '?day', '?budget'],
    params: bookingParams,
    precondition: bookingPrecondition({ direct: true, nearVenue: false }),
    subtasks: bookingSubtasks,
  })
  .method('any-flight-any-hotel', {
    // The fallback: connections allowed, any hotel in the city — still under the budget.
    task: ['book_trip', T, '?c', '?day', '?budget'],
    params: bookingParams,
    precondition: bookingPrecondition({ direct: false, nearVenue: false }),
    subtasks: bookingSubtasks,
  })
  .method('itinerary-on-preferred-channel', {
    task: ['share_itinerary', T, '?c'],
    params: itineraryParams,
    precondition: and(atom('prefers-channel', T, '?ch'), atom('reachable', T, '?ch'), booked),
    subtasks: [['send_itinerary', T, '?ch', '?f', '?h'], ['set_checkin_reminder', T, '?f']],
  })
  .method('itinerary-on-any-channel', {
    task: ['share_itinerary', T, '?c'],
    params: itineraryParams,
    precondition: and(atom('reachable', T, '?ch'), booked),
    subtasks: [['send_itinerary', T, '?ch', '?f', '?h'], ['set_checkin_reminder', T, '?f']],
  })
  .build();

/** The evaluable predicates the library pins (`le@1`). */
export function travelEvaluables(): EvaluableRegistry {
  return standardEvaluables();
}
