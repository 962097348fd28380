/**
 * The travel providers' world, kept in one JSON STATE FILE: the traveller and the conference, the
 * providers' catalogues, the offers searches have recorded, holds, charges, bookings, messages,
 * reminders, injected faults, and a per-idempotency-key ledger.
 *
 * Invariants:
 * - Every write is atomic (write a temp file, fsync, rename, fsync the folder) and synchronous, so
 *   an actuator call that returned has its effect on disk, and a crash leaves the old or the new
 *   file, never a torn one.
 * - `runEffect` is the one way an actuator changes the world: each call counts an attempt for its
 *   key; the effect is applied at most once per key — a later call with the same key returns the
 *   recorded result of the first without applying again. The effect and its ledger entry are
 *   written in the same atomic write, so "applied" and "recorded" can never disagree on disk.
 * - A key names one effect of one actuator: reusing it for another actuator is refused.
 * - Nothing here reads the clock or Math.random: results come from args, key, asOf and ctx.random.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ActuatorError, type Actuator, type ActuatorContext, type ActuatorKind } from '../../actors/actuator.js';

const json = z.json();

export const flightSchema = z.strictObject({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  /** Day of the month the flight leaves and lands (same-day flights only). */
  day: z.number().int(),
  departs: z.string().regex(/^\d\d:\d\d$/),
  arrives: z.string().regex(/^\d\d:\d\d$/),
  stops: z.number().int().nonnegative(),
  price: z.number(),
});
export type Flight = z.infer<typeof flightSchema>;

export const hotelSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  city: z.string(),
  checkIn: z.number().int(),
  nights: z.number().int().positive(),
  /** Price of the whole stay. */
  price: z.number(),
  nearVenue: z.boolean(),
});
export type Hotel = z.infer<typeof hotelSchema>;

const holdSchema = z.strictObject({ ref: z.string(), kind: z.enum(['flight', 'hotel']), item: z.string(), traveller: z.string(), price: z.number(), expires: z.string(), status: z.enum(['held', 'released', 'converted']) });
const chargeSchema = z.strictObject({ ref: z.string(), card: z.string(), traveller: z.string(), flight: z.string(), hotel: z.string(), amount: z.number(), status: z.enum(['captured', 'refunded']) });
const bookingSchema = z.strictObject({ ref: z.string(), kind: z.enum(['flight', 'hotel']), item: z.string(), traveller: z.string(), hold: z.string(), status: z.enum(['confirmed', 'cancelled']) });
const messageSchema = z.strictObject({ id: z.string(), to: z.string(), flight: z.string(), hotel: z.string(), channel: z.string(), address: z.string(), subject: z.string(), body: z.string() });
const reminderSchema = z.strictObject({ id: z.string(), traveller: z.string(), flight: z.string(), at: z.string(), text: z.string(), status: z.enum(['set', 'cancelled']) });
const ledgerEntrySchema = z.strictObject({ actuator: z.string(), attempts: z.number().int(), applied: z.number().int(), result: json.optional() });

export const travelStateSchema = z.strictObject({
  format: z.literal('weft.example.travel/1'),
  traveller: z.strictObject({
    id: z.string(),
    name: z.string(),
    home: z.string(),
    card: z.string(),
    prefers: z.string(),
    contacts: z.record(z.string(), z.string()),
  }),
  conference: z.strictObject({ name: z.string(), city: z.string(), day: z.number().int(), venue: z.string() }),
  catalogue: z.strictObject({ flights: z.array(flightSchema), hotels: z.array(hotelSchema) }),
  /** What searches have recorded; `unavailable` lists hotels a failed confirmation found sold out. */
  offers: z.strictObject({ flights: z.array(flightSchema), hotels: z.array(hotelSchema), unavailable: z.array(z.string()) }),
  holds: z.array(holdSchema),
  charges: z.array(chargeSchema),
  bookings: z.array(bookingSchema),
  messages: z.array(messageSchema),
  reminders: z.array(reminderSchema),
  faults: z.strictObject({
    /** Hotels whose confirmation fails permanently (the last room went while it was held). */
    soldOut: z.array(z.string()),
    /** Per actuator name: how many more calls fail transiently before it answers. */
    flaky: z.record(z.string(), z.number().int().nonnegative()),
  }),
  ledger: z.record(z.string(), ledgerEntrySchema),
});
export type TravelState = z.infer<typeof travelStateSchema>;
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

/** The seed world of the demo: Ana, home in London, a conference in Lisbon on the 12th. */
export function initialTravelState(): TravelState {
  const f = (id: string, from: string, day: number, departs: string, arrives: string, stops: number, price: number): Flight => ({ id, from, to: 'lisbon', day, departs, arrives, stops, price });
  const h = (id: string, name: string, city: string, price: number, nearVenue: boolean): Hotel => ({ id, name, city, checkIn: 12, nights: 2, price, nearVenue });
  return {
    format: 'weft.example.travel/1',
    traveller: { id: 'me', name: 'Ana Costa', home: 'london', card: 'card-visa-4242', prefers: 'email', contacts: { email: 'ana.costa@example.com', sms: '+44 7700 900123' } },
    conference: { name: 'Lisbon Systems Conference', city: 'lisbon', day: 12, venue: 'Centro de Congressos, Alfama' },
    catalogue: {
      flights: [
        f('f-tp1353', 'london', 12, '06:55', '09:40', 0, 310),
        f('f-ba500', 'london', 12, '11:20', '14:05', 0, 460),
        f('f-ux1016', 'london', 12, '13:10', '19:55', 1, 130),
        f('f-tp1357', 'london', 13, '06:55', '09:40', 0, 290),
        f('f-lh1166', 'frankfurt', 12, '09:30', '11:35', 0, 240),
      ],
      hotels: [
        h('h-alfama', 'Memmo Alfama', 'lisbon', 470, true),
        h('h-oriente', 'Oriente Riverside', 'lisbon', 640, true),
        h('h-belem', 'Belém Guesthouse', 'lisbon', 260, false),
        h('h-ribeira', 'Ribeira Porto', 'porto', 300, false),
      ],
    },
    offers: { flights: [], hotels: [], unavailable: [] },
    holds: [],
    charges: [],
    bookings: [],
    messages: [],
    reminders: [],
    faults: { soldOut: [], flaky: {} },
    ledger: {},
  };
}

/** Read and validate the state file. */
export function readTravelState(file: string): TravelState {
  return travelStateSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** Write the state file atomically and durably: temp file, fsync, rename, fsync the folder. */
export function writeTravelState(file: string, state: TravelState): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  try {
    const dir = openSync(dirname(file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // Some platforms cannot fsync a folder; the rename is still atomic.
  }
}

/** Create the state file with `state` (default: the seed world) unless it already exists. */
export function seedTravelState(file: string, state: TravelState = initialTravelState()): void {
  if (existsSync(file)) return;
  mkdirSync(dirname(file), { recursive: true });
  writeTravelState(file, travelStateSchema.parse(state));
}

/**
 * The providers' state as an actuator sees it: the file, seeded with the options' initial world
 * (default: the seed world) the first time an actuator runs — never before, so building the
 * actuators (say, to replay a journal elsewhere) writes nothing.
 */
export function providerState(options: ProviderOptions, ctx: Pick<ActuatorContext, 'invocation'>): TravelState {
  const file = stateFileOf(options, ctx);
  seedTravelState(file, options.initialState);
  return readTravelState(file);
}

/** The state file an actuator call works on: the one file, or the invocation's own world. */
export function stateFileOf(options: ProviderOptions, ctx: Pick<ActuatorContext, 'invocation'>): string {
  return typeof options.stateFile === 'function' ? options.stateFile(ctx.invocation) : options.stateFile;
}

/** Change the state file outside any actuator (tests: inject faults, inspect). */
export function updateTravelState(file: string, change: (state: TravelState) => void): TravelState {
  const state = readTravelState(file);
  change(state);
  writeTravelState(file, travelStateSchema.parse(state));
  return state;
}

export interface EffectCounts {
  /** Calls per key, including deduplicated and failed ones. */
  attempts: number;
  /** Times the effect of a key was applied (0 or 1 for a correct provider). */
  applied: number;
  byKey: Record<string, { actuator: string; attempts: number; applied: number }>;
}

/** Attempts and applications per idempotency key and in total. */
export function effectCounts(file: string): EffectCounts {
  const byKey: EffectCounts['byKey'] = {};
  let attempts = 0;
  let applied = 0;
  for (const [key, e] of Object.entries(readTravelState(file).ledger)) {
    byKey[key] = { actuator: e.actuator, attempts: e.attempts, applied: e.applied };
    attempts += e.attempts;
    applied += e.applied;
  }
  return { attempts, applied, byKey };
}

export const attemptsFor = (file: string, key: string): number => readTravelState(file).ledger[key]?.attempts ?? 0;
export const appliedFor = (file: string, key: string): number => readTravelState(file).ledger[key]?.applied ?? 0;

export interface ProviderOptions {
  /**
   * The providers' state file — one for every invocation, or one per invocation (a function of its
   * id): a world of its own, seeded from the same initial world, so a scripted transcript holds
   * for any number of runs in one workspace.
   */
  stateFile: string | ((invocation: string) => string);
  /** The world a missing state file is seeded with when an actuator first runs (default: `initialTravelState()`). */
  initialState?: TravelState;
  /**
   * Called after an effect is durable (state file renamed into place) and before the actuator
   * returns — only on the call that applied it, never on a deduplicated call. A crash test kills
   * the process here to land between "effect applied" and "completion recorded".
   */
  crashAfterEffect?: (actuator: string, key: string) => void;
}

/**
 * Run one effect exactly once per key. `apply` mutates the state and returns the JSON result; it
 * may throw an ActuatorError (its state changes up to the throw are kept: a provider that learns
 * a room is gone remembers it). Flaky faults fail the call transiently before anything applies.
 */
export function runEffect<R>(options: ProviderOptions, actuator: string, ctx: ActuatorContext, apply: (state: TravelState) => R): R {
  const file = stateFileOf(options, ctx);
  const state = providerState(options, ctx);
  const entry: LedgerEntry = state.ledger[ctx.key] ?? { actuator, attempts: 0, applied: 0 };
  if (entry.actuator !== actuator) {
    throw new ActuatorError('travel.key_reused', 'permanent', `idempotency key ${ctx.key} already names an effect of ${entry.actuator}, not ${actuator}`);
  }
  entry.attempts += 1;
  state.ledger[ctx.key] = entry;
  if (entry.applied > 0) {
    writeTravelState(file, state);
    return entry.result as R;
  }
  const flaky = state.faults.flaky[actuator] ?? 0;
  if (flaky > 0) {
    state.faults.flaky[actuator] = flaky - 1;
    writeTravelState(file, state);
    throw new ActuatorError('travel.provider_unavailable', 'transient', `${actuator} is temporarily unavailable (attempt ${ctx.attempt}); retry with the same key`);
  }
  let result: R;
  try {
    result = apply(state);
  } catch (err) {
    writeTravelState(file, state);
    throw err;
  }
  entry.applied += 1;
  entry.result = JSON.parse(JSON.stringify(result ?? null)) as z.infer<typeof json>;
  writeTravelState(file, state);
  options.crashAfterEffect?.(actuator, ctx.key);
  return result;
}

export interface ProviderSpec<A, R> {
  name: string;
  kind: ActuatorKind;
  /** Searches and observations; they still go through the per-key ledger. Default false. */
  readOnly?: boolean;
  args: z.ZodType<A>;
  result: z.ZodType<R>;
  /** The effect on the providers' state (see runEffect); returns the JSON result. */
  apply(state: TravelState, args: A, ctx: ActuatorContext): R;
  /** The undo, run as its own effect under `<name>#<as>` with the step's result. */
  undo?: { as: string; apply(state: TravelState, args: A, result: R, ctx: ActuatorContext): unknown };
}

/** A simulated provider's actuator: every call, and its undo, is one `runEffect` under its own name. */
export function providerActuator<A, R>(options: ProviderOptions, spec: ProviderSpec<A, R>): Actuator<A, R> {
  const undo = spec.undo;
  return {
    name: spec.name,
    kind: spec.kind,
    readOnly: spec.readOnly ?? false,
    argsSchema: spec.args,
    resultSchema: spec.result,
    run: async (args: A, ctx: ActuatorContext) => runEffect(options, spec.name, ctx, (state) => spec.apply(state, args, ctx)),
    ...(undo ? { compensate: async (args: A, result: R, ctx: ActuatorContext) => runEffect(options, `${spec.name}#${undo.as}`, ctx, (state) => undo.apply(state, args, result, ctx)) } : {}),
  };
}

