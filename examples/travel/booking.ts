/**
 * World-effect providers of a booking: the airline and the hotel (hold, confirm, cancel) and the
 * card (charge, refund).
 *
 * Invariants:
 * - Every call goes through `providerActuator` (`runEffect`): counted per idempotency key, applied once per key; a
 *   repeated key returns the first call's recorded result.
 * - Results are plain JSON and deterministic: references come from `ctx.random` (seeded by the pin
 *   and the step's key), times from `ctx.asOf` — never the clock or Math.random.
 * - Failures are classified: a precondition the provider cannot meet (unknown offer, no hold, a
 *   stale quote, a sold-out room) is `permanent` — retrying will not help, the epoch compensates.
 *   Injected `flaky` faults are `transient` (state.ts).
 * - Undo: a hold releases itself and a charge refunds itself (their `compensate` sees the result
 *   with the reference); confirmations are undone by `airline.cancel` / `hotel.cancel`, which the
 *   library binds from the operator's params. Every undo is idempotent on its own key too.
 */
import { z } from 'zod';
import { ActuatorError, type Actuator, type ActuatorContext } from '../../actors/actuator.js';
import { providerActuator, type ProviderOptions, type TravelState } from './state.js';

const name = z.string().min(1);
const HOLD_MINUTES = 30;

/** A provider reference: a prefix and six characters drawn from the step's seeded stream. */
export function reference(ctx: ActuatorContext, prefix: string): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const stream = ctx.random.stream(`travel.ref.${prefix}`);
  let out = '';
  for (let i = 0; i < 6; i++) out += alphabet[stream.int(alphabet.length)];
  return `${prefix}-${out}`;
}

function plusMinutes(iso: string, minutes: number): string {
  return new Date(Date.parse(iso) + minutes * 60_000).toISOString();
}

function fail(code: string, message: string): never {
  throw new ActuatorError(code, 'permanent', message);
}

function offerPrice(state: TravelState, kind: 'flight' | 'hotel', item: string): number {
  const offer = kind === 'flight' ? state.offers.flights.find((f) => f.id === item) : state.offers.hotels.find((h) => h.id === item);
  if (!offer) fail(`${kind === 'flight' ? 'airline' : 'hotel'}.unknown_offer`, `${item} is not an offer the ${kind} search returned; search first`);
  return offer.price;
}

/** Args of the per-item providers: the traveller and the flight or hotel, named by its kind. */
type ItemArgs = { traveller: string; flight?: string; hotel?: string };

function itemArgs(kind: 'flight' | 'hotel'): z.ZodType<ItemArgs> {
  return kind === 'flight' ? z.strictObject({ traveller: name, flight: name }) : z.strictObject({ traveller: name, hotel: name });
}

function itemOf(kind: 'flight' | 'hotel', args: ItemArgs): string {
  return (kind === 'flight' ? args.flight : args.hotel)!;
}

function activeHold(state: TravelState, kind: 'flight' | 'hotel', traveller: string, item: string) {
  return state.holds.find((h) => h.kind === kind && h.traveller === traveller && h.item === item && h.status === 'held');
}

// ── holds ────────────────────────────────────────────────────────────────────────────────────

const holdResult = z.strictObject({ hold: z.string(), item: z.string(), price: z.number(), expires: z.string() });

function holdActuator(options: ProviderOptions, kind: 'flight' | 'hotel'): Actuator {
  const actuator = kind === 'flight' ? 'airline.hold' : 'hotel.hold';
  return providerActuator(options, {
    name: actuator,
    kind: 'tool',
    args: itemArgs(kind),
    result: holdResult,
    apply(state, args, ctx) {
      const item = itemOf(kind, args);
      const price = offerPrice(state, kind, item);
      if (kind === 'hotel' && state.offers.unavailable.includes(item)) fail('hotel.sold_out', `${item} has no rooms left`);
      const ref = reference(ctx, kind === 'flight' ? 'FH' : 'HH');
      const expires = plusMinutes(ctx.asOf, HOLD_MINUTES);
      state.holds.push({ ref, kind, item, traveller: args.traveller, price, expires, status: 'held' });
      return { hold: ref, item, price, expires };
    },
    undo: {
      as: 'release',
      apply(state, _args, result) {
        const hold = state.holds.find((h) => h.ref === result.hold);
        if (hold?.status === 'held') hold.status = 'released';
        return { hold: result.hold, status: hold?.status ?? 'unknown' };
      },
    },
  });
}

// ── the card ─────────────────────────────────────────────────────────────────────────────────

const chargeArgs = z.strictObject({ traveller: name, card: name, flight: name, hotel: name, amount: z.number().positive() });
const chargeResult = z.strictObject({ charge: z.string(), card: z.string(), amount: z.number(), currency: z.literal('EUR'), capturedAt: z.string() });
type ChargeArgs = z.infer<typeof chargeArgs>;
type ChargeResult = z.infer<typeof chargeResult>;

function chargeActuator(options: ProviderOptions): Actuator<ChargeArgs, ChargeResult> {
  return providerActuator(options, {
    name: 'card.charge',
    kind: 'tool',
    spends: 'amount', // the only money out: the envelope's cap counts it, and nothing else (flag 2)
    args: chargeArgs,
    result: chargeResult,
    apply(state, args, ctx) {
      if (state.traveller.id !== args.traveller || state.traveller.card !== args.card) fail('card.declined', `card ${args.card} is not on file for ${args.traveller}`);
      if (!activeHold(state, 'flight', args.traveller, args.flight)) fail('card.no_hold', `no active hold on ${args.flight}; hold it before paying`);
      if (!activeHold(state, 'hotel', args.traveller, args.hotel)) fail('card.no_hold', `no active hold on ${args.hotel}; hold it before paying`);
      const quote = offerPrice(state, 'flight', args.flight) + offerPrice(state, 'hotel', args.hotel);
      if (quote !== args.amount) fail('card.quote_changed', `the trip now costs ${quote} EUR, not ${args.amount}; observe again and re-plan`);
      const ref = reference(ctx, 'CH');
      state.charges.push({ ref, card: args.card, traveller: args.traveller, flight: args.flight, hotel: args.hotel, amount: args.amount, status: 'captured' });
      return { charge: ref, card: args.card, amount: args.amount, currency: 'EUR' as const, capturedAt: ctx.asOf };
    },
    undo: {
      as: 'refund',
      apply(state, _args, result, ctx) {
        const charge = state.charges.find((c) => c.ref === result.charge);
        if (!charge) fail('card.unknown_charge', `no charge ${result.charge} to refund`);
        charge.status = 'refunded';
        return { refunded: charge.ref, amount: charge.amount, currency: 'EUR' };
      },
    },
  });
}

// ── confirmations and cancellations ──────────────────────────────────────────────────────────

const confirmResult = z.strictObject({ booking: z.string(), item: z.string(), hold: z.string() });
const cancelResult = z.strictObject({ item: z.string(), cancelled: z.array(z.string()) });

function confirmActuator(options: ProviderOptions, kind: 'flight' | 'hotel'): Actuator {
  const actuator = kind === 'flight' ? 'airline.confirm' : 'hotel.confirm';
  return providerActuator(options, {
    name: actuator,
    kind: 'tool',
    args: itemArgs(kind),
    result: confirmResult,
    apply(state, args, ctx) {
      const item = itemOf(kind, args);
      const traveller = args.traveller;
      if (kind === 'hotel' && state.faults.soldOut.includes(item)) {
        // The provider learns the room is gone: later searches no longer offer it.
        if (!state.offers.unavailable.includes(item)) state.offers.unavailable.push(item);
        fail('hotel.sold_out', `${item} sold its last room while it was held; choose another hotel`);
      }
      const hold = activeHold(state, kind, traveller, item);
      if (!hold) fail(`${actuator}.no_hold`, `no active hold on ${item} for ${traveller}`);
      const paid = state.charges.some((c) => c.traveller === traveller && c.status === 'captured' && (kind === 'flight' ? c.flight : c.hotel) === item);
      if (!paid) fail(`${actuator}.unpaid`, `${item} is held but not paid for`);
      const ref = reference(ctx, kind === 'flight' ? 'PNR' : 'HB');
      hold.status = 'converted';
      state.bookings.push({ ref, kind, item, traveller, hold: hold.ref, status: 'confirmed' });
      return { booking: ref, item, hold: hold.ref };
    },
  });
}

function cancelActuator(options: ProviderOptions, kind: 'flight' | 'hotel'): Actuator {
  const actuator = kind === 'flight' ? 'airline.cancel' : 'hotel.cancel';
  return providerActuator(options, {
    name: actuator,
    kind: 'tool',
    args: itemArgs(kind),
    result: cancelResult,
    apply(state, args) {
      const item = itemOf(kind, args);
      const cancelled: string[] = [];
      for (const b of state.bookings) {
        if (b.kind === kind && b.item === item && b.traveller === args.traveller && b.status === 'confirmed') {
          b.status = 'cancelled';
          cancelled.push(b.ref);
        }
      }
      return { item, cancelled };
    },
  });
}

export function bookingActuators(options: ProviderOptions): Actuator[] {
  return [
    holdActuator(options, 'flight'),
    holdActuator(options, 'hotel'),
    chargeActuator(options),
    confirmActuator(options, 'flight'),
    confirmActuator(options, 'hotel'),
    cancelActuator(options, 'flight'),
    cancelActuator(options, 'hotel'),
  ];
}
