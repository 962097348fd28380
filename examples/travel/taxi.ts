/**
 * The transfer provider: a taxi from an airport to a hotel — the actuators a gap-path fragment for
 * `book_transfer` is made of (the library has the task and these operators, but no method: the
 * model authors the fragment, or a method mined from such runs covers it).
 *
 * - `taxi.quote` (read-only): the fare of a ride, from the catalogue. It commits nothing.
 * - `taxi.book` (a world effect that spends `amount`): books the ride at the quoted fare; an amount
 *   that is not the current fare is refused (permanent: observe again and re-plan), as `card.charge`
 *   refuses a stale trip total. One live booking per (traveller, from, to, day).
 * - `taxi.cancel`: the compensation the library binds from `book_taxi`'s params — cancels the
 *   traveller's live booking of that ride (none left is not an error: the undo is idempotent).
 *
 * Invariants (as every provider here, state.ts): each call is one `runEffect` — counted per
 * idempotency key, applied once per key; references come from the step's seeded stream and times
 * from `asOf`, never the clock. Worlds written before transfers existed have no fares: every quote
 * and booking there fails `taxi.unknown_route` (permanent).
 */
import { z } from 'zod';
import { ActuatorError, type Actuator } from '../../actors/actuator.js';
import { reference } from './booking.js';
import { providerActuator, type ProviderOptions, type TaxiFare, type TravelState } from './state.js';

const name = z.string().min(1);
const day = z.number().int().min(1).max(31);

export const taxiQuoteArgs = z.strictObject({ from: name, to: name, day });
export const taxiQuoteResult = z.strictObject({ from: z.string(), to: z.string(), day: z.number(), price: z.number(), currency: z.literal('EUR') });
export const taxiBookArgs = z.strictObject({ traveller: name, from: name, to: name, day, amount: z.number().positive() });
export const taxiBookResult = z.strictObject({ transfer: z.string(), from: z.string(), to: z.string(), day: z.number(), amount: z.number(), currency: z.literal('EUR'), bookedAt: z.string() });
export const taxiCancelArgs = z.strictObject({ traveller: name, from: name, to: name, day });
export const taxiCancelResult = z.strictObject({ cancelled: z.array(z.string()) });

type QuoteArgs = z.infer<typeof taxiQuoteArgs>;
type BookArgs = z.infer<typeof taxiBookArgs>;
type CancelArgs = z.infer<typeof taxiCancelArgs>;

/** The catalogue's fare from `from` to `to`, if the provider drives that route. */
export function taxiFare(state: Pick<TravelState, 'catalogue'>, from: string, to: string): TaxiFare | undefined {
  return (state.catalogue.taxis ?? []).find((t) => t.from === from && t.to === to);
}

function fareOrFail(state: TravelState, from: string, to: string): TaxiFare {
  const fare = taxiFare(state, from, to);
  if (!fare) throw new ActuatorError('taxi.unknown_route', 'permanent', `no taxi fare from ${from} to ${to}; the provider serves ${(state.catalogue.taxis ?? []).map((t) => `${t.from}→${t.to}`).join(', ') || 'no route'}`);
  return fare;
}

export function taxiActuators(options: ProviderOptions): Actuator[] {
  const quote: Actuator<QuoteArgs, z.infer<typeof taxiQuoteResult>> = providerActuator(options, {
    name: 'taxi.quote',
    kind: 'tool',
    readOnly: true,
    args: taxiQuoteArgs,
    result: taxiQuoteResult,
    apply(state, args) {
      const fare = fareOrFail(state, args.from, args.to);
      return { from: args.from, to: args.to, day: args.day, price: fare.price, currency: 'EUR' as const };
    },
  });
  const book: Actuator<BookArgs, z.infer<typeof taxiBookResult>> = providerActuator(options, {
    name: 'taxi.book',
    kind: 'tool',
    spends: 'amount', // money out: the envelope's cap and the authored-booking allowance count it (flag 2)
    args: taxiBookArgs,
    result: taxiBookResult,
    apply(state, args, ctx) {
      if (state.traveller.id !== args.traveller) throw new ActuatorError('taxi.unknown_traveller', 'permanent', `${args.traveller} has no account with the taxi provider`);
      const fare = fareOrFail(state, args.from, args.to);
      if (fare.price !== args.amount) throw new ActuatorError('taxi.quote_changed', 'permanent', `the ride now costs ${fare.price} EUR, not ${args.amount}; observe again and re-plan`);
      const transfers = (state.transfers ??= []);
      const live = transfers.find((t) => t.traveller === args.traveller && t.from === args.from && t.to === args.to && t.day === args.day && t.status === 'booked');
      if (live) throw new ActuatorError('taxi.already_booked', 'permanent', `${args.traveller} already has ride ${live.ref} from ${args.from} to ${args.to} on day ${args.day}`);
      const ref = reference(ctx, 'TX');
      transfers.push({ ref, traveller: args.traveller, from: args.from, to: args.to, day: args.day, amount: args.amount, status: 'booked' });
      return { transfer: ref, from: args.from, to: args.to, day: args.day, amount: args.amount, currency: 'EUR' as const, bookedAt: ctx.asOf };
    },
  });
  const cancel: Actuator<CancelArgs, z.infer<typeof taxiCancelResult>> = providerActuator(options, {
    name: 'taxi.cancel',
    kind: 'tool',
    args: taxiCancelArgs,
    result: taxiCancelResult,
    apply(state, args) {
      const cancelled: string[] = [];
      for (const t of state.transfers ?? []) {
        if (t.traveller === args.traveller && t.from === args.from && t.to === args.to && t.day === args.day && t.status === 'booked') {
          t.status = 'cancelled';
          cancelled.push(t.ref);
        }
      }
      return { cancelled };
    },
  });
  return [quote, book, cancel];
}
