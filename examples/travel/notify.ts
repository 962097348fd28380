/**
 * Telling the traveller: the itinerary message (kind `message`) and the check-in reminder (kind
 * `timer`). No real mail or timer: both are recorded in the provider state.
 *
 * Invariants:
 * - Applied once per idempotency key (`runEffect`); results are deterministic JSON — ids from
 *   `ctx.random`, times from `ctx.asOf` and the booked flight, never the clock.
 * - The reminder fires 24 hours before departure: the departure is the flight's day of the month
 *   in the month of `asOf` (the next month when that moment is not after `asOf`); a reminder that
 *   would be in the past fires at `asOf`.
 * - A message cannot be unsent (no compensation); a reminder cancels itself.
 */
import { z } from 'zod';
import { ActuatorError, type Actuator } from '../../actors/actuator.js';
import { reference } from './booking.js';
import { providerActuator, type Flight, type ProviderOptions, type TravelState } from './state.js';

const name = z.string().min(1);

function fail(code: string, message: string): never {
  throw new ActuatorError(code, 'permanent', message);
}

function confirmed(state: TravelState, kind: 'flight' | 'hotel', traveller: string, item: string) {
  const booking = state.bookings.find((b) => b.kind === kind && b.item === item && b.traveller === traveller && b.status === 'confirmed');
  if (!booking) fail('travel.not_booked', `${item} is not booked for ${traveller}`);
  return booking;
}

/** The departure instant of a same-month-or-next flight, and its reminder 24 hours earlier. */
export function checkInReminderAt(asOf: string, flight: Pick<Flight, 'day' | 'departs'>): { departure: string; at: string } {
  const now = Date.parse(asOf);
  const base = new Date(now);
  const [hh, mm] = flight.departs.split(':').map(Number) as [number, number];
  let departure = Date.UTC(base.getUTCFullYear(), base.getUTCMonth(), flight.day, hh, mm);
  if (departure <= now) departure = Date.UTC(base.getUTCFullYear(), base.getUTCMonth() + 1, flight.day, hh, mm);
  const at = Math.max(now, departure - 24 * 3_600_000);
  return { departure: new Date(departure).toISOString(), at: new Date(at).toISOString() };
}

const messageArgs = z.strictObject({ traveller: name, channel: z.enum(['email', 'sms']), flight: name, hotel: name });
const messageResult = z.strictObject({ message: z.string(), channel: z.string(), to: z.string(), subject: z.string() });
type MessageArgs = z.infer<typeof messageArgs>;
type MessageResult = z.infer<typeof messageResult>;

function messageActuator(options: ProviderOptions): Actuator<MessageArgs, MessageResult> {
  return providerActuator(options, {
    name: 'message.send',
    kind: 'message',
    args: messageArgs,
    result: messageResult,
    apply(state, args, ctx) {
      const address = state.traveller.contacts[args.channel];
      if (state.traveller.id !== args.traveller || !address) fail('message.unreachable', `${args.traveller} has no ${args.channel} address`);
      const pnr = confirmed(state, 'flight', args.traveller, args.flight);
      const stay = confirmed(state, 'hotel', args.traveller, args.hotel);
      const flight = state.offers.flights.find((f) => f.id === args.flight)!;
      const hotel = state.offers.hotels.find((h) => h.id === args.hotel)!;
      const charge = state.charges.find((c) => c.traveller === args.traveller && c.flight === args.flight && c.hotel === args.hotel && c.status === 'captured');
      const subject = `Your trip to ${state.conference.name}`;
      const body = [
        `Hi ${state.traveller.name},`,
        `Flight ${flight.id} ${flight.from} → ${flight.to} on the ${flight.day}th, ${flight.departs}–${flight.arrives}${flight.stops ? ` (${flight.stops} stop)` : ''}, booking ${pnr.ref}.`,
        `${hotel.name}, ${hotel.nights} nights from the ${hotel.checkIn}th, booking ${stay.ref}.`,
        charge ? `Charged ${charge.amount} EUR to ${charge.card} (${charge.ref}).` : 'Not charged yet.',
        `The conference is at ${state.conference.venue} on the ${state.conference.day}th.`,
      ].join('\n');
      const id = reference(ctx, 'MSG');
      state.messages.push({ id, to: args.traveller, flight: args.flight, hotel: args.hotel, channel: args.channel, address, subject, body });
      return { message: id, channel: args.channel, to: address, subject };
    },
  });
}

const reminderArgs = z.strictObject({ traveller: name, flight: name });
const reminderResult = z.strictObject({ reminder: z.string(), at: z.string(), departure: z.string(), text: z.string() });
type ReminderArgs = z.infer<typeof reminderArgs>;
type ReminderResult = z.infer<typeof reminderResult>;

function reminderActuator(options: ProviderOptions): Actuator<ReminderArgs, ReminderResult> {
  return providerActuator(options, {
    name: 'reminder.set',
    kind: 'timer',
    args: reminderArgs,
    result: reminderResult,
    apply(state, args, ctx) {
      const booking = confirmed(state, 'flight', args.traveller, args.flight);
      const flight = state.offers.flights.find((f) => f.id === args.flight)!;
      const { departure, at } = checkInReminderAt(ctx.asOf, flight);
      const text = `Check in for ${flight.id} (booking ${booking.ref}), departing ${flight.from} at ${flight.departs}.`;
      const id = reference(ctx, 'REM');
      state.reminders.push({ id, traveller: args.traveller, flight: args.flight, at, text, status: 'set' });
      return { reminder: id, at, departure, text };
    },
    undo: {
      as: 'cancel',
      apply(state, _args, result, ctx) {
        const reminder = state.reminders.find((r) => r.id === result.reminder);
        if (reminder) reminder.status = 'cancelled';
        return { reminder: result.reminder, status: reminder?.status ?? 'unknown' };
      },
    },
  });
}

export function notifyActuators(options: ProviderOptions): Actuator[] {
  return [messageActuator(options), reminderActuator(options)];
}
