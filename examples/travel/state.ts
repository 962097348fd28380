/**
 * The travel providers' world — the traveller and the conference, the providers' catalogues, the
 * offers searches have recorded, holds, charges, bookings, messages, reminders, injected faults,
 * and a per-idempotency-key ledger — one per invocation, kept behind a TravelStateBackend:
 *
 * - `fileStateBackend`: one JSON STATE FILE per invocation (`<stateDir>/<invocation>/providers.json`
 *   in the travel domain) — the embedded mode, and any number of worker processes on one host.
 * - `redisStateBackend`: one Redis key per invocation (`<prefix>:travel:{<invocation>}:providers`,
 *   holding the very bytes the file would) — the distributed mode, where a runtime or a worker in
 *   another process, on another machine, with no file of its own sees the same world.
 *
 * Invariants:
 * - Every change is an atomic read-modify-write of the whole world (`update`): the file backend
 *   holds an exclusive lock file around it and writes atomically (temp file, fsync, rename, fsync
 *   the folder); the Redis backend compares-and-sets (a Lua script that writes only if the value
 *   is still the one the change read, else the change runs again on the fresh value). So
 *   concurrent actuators — in one process or many — never lose each other's ledger entries, and a
 *   crash leaves the old or the new world, never a torn or half-applied one.
 * - An actuator call that returned has its effect stored: renamed into place (file), or
 *   acknowledged by Redis (as durable as that server's persistence — the runtime's durability check
 *   covers the Redis its journals live in).
 * - `runEffect` is the one way an actuator changes the world: each call counts an attempt for its
 *   key; the effect is applied at most once per key — a later call with the same key returns the
 *   recorded result of the first without applying again. The effect and its ledger entry are
 *   written in the same atomic update, so "applied" and "recorded" can never disagree.
 * - A key names one effect of one actuator: reusing it for another actuator is refused.
 * - Results never depend on the clock or Math.random: they come from args, key, asOf and
 *   ctx.random — replayed draw for draw when a conflict runs an effect again — and from the world.
 *   (Only waiting for a lock or after a conflict reads the clock.)
 * - Both backends seed an invocation's world (default: `initialTravelState()`) the first time it
 *   is read or updated, never before — so building the actuators (say, to replay a journal
 *   elsewhere) writes nothing and connects to nothing.
 *
 * Over 400 lines on purpose: mostly the demo world's data (catalogues, offers), read as one table.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { ActuatorError, type Actuator, type ActuatorContext, type ActuatorKind } from '../../actors/actuator.js';
import type { Random, RandomStream } from '../../actors/random.js';
import { StoreUnreachableError } from '../../journal/errors.js';
import { isConnectionLoss, reconnectStrategy, redisServerName } from '../../redis/index.js';

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
/** A taxi fare the transfer provider offers: from an airport to a hotel, the whole ride, any day. */
export const taxiFareSchema = z.strictObject({ from: z.string(), to: z.string(), price: z.number() });
export type TaxiFare = z.infer<typeof taxiFareSchema>;
/** An airport the transfer provider serves, and the city it serves. */
export const airportSchema = z.strictObject({ id: z.string(), city: z.string() });
/** An event other than the traveller's main conference (a city and a day an intent may name). */
export const eventSchema = z.strictObject({ name: z.string(), city: z.string(), day: z.number().int(), venue: z.string() });
const transferSchema = z.strictObject({ ref: z.string(), traveller: z.string(), from: z.string(), to: z.string(), day: z.number().int(), amount: z.number(), status: z.enum(['booked', 'cancelled']) });
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
  /** Other events (the gap-path intents name them); optional so worlds written before them still load. */
  events: z.array(eventSchema).optional(),
  catalogue: z.strictObject({
    flights: z.array(flightSchema),
    hotels: z.array(hotelSchema),
    /** The transfer provider (taxi.ts): the airports it serves and its fares; optional, as `events`. */
    airports: z.array(airportSchema).optional(),
    taxis: z.array(taxiFareSchema).optional(),
  }),
  /** What searches have recorded; `unavailable` lists hotels a failed confirmation found sold out. */
  offers: z.strictObject({ flights: z.array(flightSchema), hotels: z.array(hotelSchema), unavailable: z.array(z.string()) }),
  holds: z.array(holdSchema),
  charges: z.array(chargeSchema),
  bookings: z.array(bookingSchema),
  messages: z.array(messageSchema),
  reminders: z.array(reminderSchema),
  /** Taxi transfers booked (taxi.book) and cancelled (taxi.cancel); optional, as `events`. */
  transfers: z.array(transferSchema).optional(),
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

/**
 * The seed world of the demo: Ana, home in London, a conference in Lisbon on the 12th — and, for the
 * gap-path intents, a summit in Porto on the 20th, a forum in Madrid on the 25th, flights and hotels
 * for both, and the taxi provider's airports and fares (taxi.ts).
 */
export function initialTravelState(): TravelState {
  const f = (id: string, from: string, day: number, departs: string, arrives: string, stops: number, price: number): Flight => ({ id, from, to: 'lisbon', day, departs, arrives, stops, price });
  const h = (id: string, name: string, city: string, price: number, nearVenue: boolean): Hotel => ({ id, name, city, checkIn: 12, nights: 2, price, nearVenue });
  return {
    format: 'weft.example.travel/1',
    traveller: { id: 'me', name: 'Ana Costa', home: 'london', card: 'card-visa-4242', prefers: 'email', contacts: { email: 'ana.costa@example.com', sms: '+44 7700 900123' } },
    conference: { name: 'Lisbon Systems Conference', city: 'lisbon', day: 12, venue: 'Centro de Congressos, Alfama' },
    events: [
      { name: 'Porto Systems Summit', city: 'porto', day: 20, venue: 'Alfândega do Porto' },
      { name: 'Madrid Data Forum', city: 'madrid', day: 25, venue: 'IFEMA, Campo de las Naciones' },
    ],
    catalogue: {
      flights: [
        f('f-tp1353', 'london', 12, '06:55', '09:40', 0, 310),
        f('f-ba500', 'london', 12, '11:20', '14:05', 0, 460),
        f('f-ux1016', 'london', 12, '13:10', '19:55', 1, 130),
        f('f-tp1357', 'london', 13, '06:55', '09:40', 0, 290),
        f('f-lh1166', 'frankfurt', 12, '09:30', '11:35', 0, 240),
        { id: 'f-fr8354', from: 'london', to: 'porto', day: 20, departs: '07:05', arrives: '09:45', stops: 0, price: 190 },
        { id: 'f-tp1331', from: 'london', to: 'porto', day: 20, departs: '12:40', arrives: '15:20', stops: 0, price: 280 },
        { id: 'f-ib3163', from: 'london', to: 'madrid', day: 25, departs: '08:15', arrives: '11:35', stops: 0, price: 220 },
        { id: 'f-ux1014', from: 'london', to: 'madrid', day: 25, departs: '10:05', arrives: '16:50', stops: 1, price: 120 },
      ],
      hotels: [
        h('h-alfama', 'Memmo Alfama', 'lisbon', 470, true),
        h('h-oriente', 'Oriente Riverside', 'lisbon', 640, true),
        h('h-belem', 'Belém Guesthouse', 'lisbon', 260, false),
        h('h-ribeira', 'Ribeira Porto', 'porto', 300, false),
        // The gap-path intents' cities (Porto's summit on the 20th, Madrid's forum on the 25th).
        { id: 'h-infante', name: 'Infante Sagres', city: 'porto', checkIn: 20, nights: 2, price: 520, nearVenue: true },
        { id: 'h-bolhao', name: 'Bolhão Rooms', city: 'porto', checkIn: 20, nights: 2, price: 340, nearVenue: false },
        { id: 'h-prado', name: 'Prado Gardens', city: 'madrid', checkIn: 25, nights: 2, price: 560, nearVenue: true },
        { id: 'h-sol', name: 'Hostal Sol', city: 'madrid', checkIn: 25, nights: 2, price: 210, nearVenue: false },
      ],
      airports: [
        { id: 'lisbon-airport', city: 'lisbon' },
        { id: 'porto-airport', city: 'porto' },
        { id: 'madrid-airport', city: 'madrid' },
      ],
      taxis: [
        { from: 'lisbon-airport', to: 'h-alfama', price: 35 },
        { from: 'lisbon-airport', to: 'h-oriente', price: 18 },
        { from: 'lisbon-airport', to: 'h-belem', price: 30 },
        { from: 'porto-airport', to: 'h-infante', price: 28 },
        { from: 'porto-airport', to: 'h-bolhao', price: 25 },
        { from: 'madrid-airport', to: 'h-prado', price: 42 },
        { from: 'madrid-airport', to: 'h-sol', price: 38 },
      ],
    },
    offers: { flights: [], hotels: [], unavailable: [] },
    holds: [],
    charges: [],
    bookings: [],
    messages: [],
    reminders: [],
    transfers: [],
    faults: { soldOut: [], flaky: {} },
    ledger: {},
  };
}

// ── the world as bytes ────────────────────────────────────────────────────────────────────────

/** The world as the state file (and the Redis value) holds it: indented JSON and a newline. */
export function serializeTravelState(state: TravelState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

/** Parse and validate the bytes of a world. */
export function parseTravelState(text: string): TravelState {
  return travelStateSchema.parse(JSON.parse(text));
}

/** What a first read of an invocation's world finds: `initial` validated, as it is stored. */
function seedText(initial: TravelState): string {
  return serializeTravelState(travelStateSchema.parse(initial));
}

// ── the synchronous file helpers (tests, inspection, fault injection) ───────────────────────────

/** Read and validate the state file. */
export function readTravelState(file: string): TravelState {
  return parseTravelState(readFileSync(file, 'utf8'));
}

/**
 * Write the state file atomically and durably: temp file, fsync, rename, fsync the folder. It
 * takes no lock: within a backend it runs under one; elsewhere, only on a world nobody else is
 * changing (or use `updateTravelState`).
 */
export function writeTravelState(file: string, state: TravelState): void {
  writeTravelText(file, serializeTravelState(state));
}

function writeTravelText(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, text);
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
  const text = seedText(state);
  withFileLockSync(file, DEFAULT_LOCK_TIMEOUT_MS, () => {
    if (!existsSync(file)) writeTravelText(file, text);
  });
}

/** Change the state file outside any actuator (tests: inject faults, inspect), under its lock. */
export function updateTravelState(file: string, change: (state: TravelState) => void): TravelState {
  return withFileLockSync(file, DEFAULT_LOCK_TIMEOUT_MS, () => {
    const state = readTravelState(file);
    change(state);
    writeTravelState(file, travelStateSchema.parse(state));
    return state;
  });
}

export interface EffectCounts {
  /** Calls per key, including deduplicated and failed ones. */
  attempts: number;
  /** Times the effect of a key was applied (0 or 1 for a correct provider). */
  applied: number;
  byKey: Record<string, { actuator: string; attempts: number; applied: number }>;
}

/** Attempts and applications per key and in total, of a world (or of a state file). */
export function effectCounts(source: string | TravelState): EffectCounts {
  const state = typeof source === 'string' ? readTravelState(source) : source;
  const byKey: EffectCounts['byKey'] = {};
  let attempts = 0;
  let applied = 0;
  for (const [key, e] of Object.entries(state.ledger)) {
    byKey[key] = { actuator: e.actuator, attempts: e.attempts, applied: e.applied };
    attempts += e.attempts;
    applied += e.applied;
  }
  return { attempts, applied, byKey };
}

export const attemptsFor = (file: string, key: string): number => readTravelState(file).ledger[key]?.attempts ?? 0;
export const appliedFor = (file: string, key: string): number => readTravelState(file).ledger[key]?.applied ?? 0;

// ── the backend interface ───────────────────────────────────────────────────────────────────

/** Where the providers keep each invocation's world. */
export interface TravelStateBackend {
  /** The invocation's world, seeded (and stored) from the initial world the first time. */
  read(invocation: string): Promise<TravelState>;
  /**
   * Atomically read-modify-write the invocation's world (seeded the first time): `change` mutates
   * the state it is given and returns a result. It may run more than once (on a conflict) and must
   * be a pure function of the state it is given; only its last run counts. If it throws, nothing is
   * written and the error propagates. Resolves once the new world is durable.
   */
  update<R>(invocation: string, change: (state: TravelState) => R): Promise<{ state: TravelState; result: R }>;
  /** Release what the backend holds (a Redis client it created). */
  close?(): Promise<void>;
}

export interface BackendOptions {
  /** The world an invocation starts from (default: `initialTravelState()`). */
  initialState?: TravelState;
}

// ── the file backend ───────────────────────────────────────────────────────────────────────

export interface FileBackendOptions extends BackendOptions {
  /** How long an update waits for another process's lock before failing (default 30 s). */
  lockTimeoutMs?: number;
}

const DEFAULT_LOCK_TIMEOUT_MS = 30_000;

/**
 * Each invocation's world in its own state file, `stateFile(invocation)`: reads see the last
 * renamed file (no lock needed); updates run under the file's exclusive lock (`<file>.lock`, see
 * `acquireFileLock`), so processes on one host sharing the folder never lose each other's changes.
 * The lock is a same-host lock: it is broken only when its holder's pid is dead on this host.
 */
export function fileStateBackend(stateFile: (invocation: string) => string, options: FileBackendOptions = {}): TravelStateBackend {
  const seed = seedText(options.initialState ?? initialTravelState());
  const timeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  return {
    async read(invocation) {
      const file = stateFile(invocation);
      if (!existsSync(file)) {
        mkdirSync(dirname(file), { recursive: true });
        await withFileLock(file, timeoutMs, () => {
          if (!existsSync(file)) writeTravelText(file, seed);
        });
      }
      return readTravelState(file);
    },
    async update(invocation, change) {
      const file = stateFile(invocation);
      mkdirSync(dirname(file), { recursive: true });
      // The critical section is synchronous: nothing in this process interleaves with it either.
      return withFileLock(file, timeoutMs, () => {
        const state = parseTravelState(existsSync(file) ? readFileSync(file, 'utf8') : seed);
        const result = change(state);
        writeTravelState(file, state);
        return { state, result };
      });
    },
  };
}

/**
 * The lock file of a state file. It exists while a process holds the lock and holds
 * `{"pid","host","token"}` of its holder, written right after creating it with `open(…, 'wx')`.
 */
export const lockFileOf = (file: string): string => `${file}.lock`;

/** How old an unreadable (empty) lock must be before it counts as abandoned mid-creation. */
const UNWRITTEN_LOCK_MS = 5_000;

interface SeenLock {
  /** The lock file's bytes, which identify this very lock (its token). */
  raw: string;
  holder: { pid: number; host: string; token: string } | undefined;
  ageMs: number;
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/** Create `path` exclusively with `content`; false when it exists. */
function createExclusive(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, content);
  } catch (err) {
    closeSync(fd);
    unlinkSync(path);
    throw err;
  }
  closeSync(fd);
  return true;
}

/** The lock at `path` as it is now, or undefined when there is none. */
function seeLock(path: string): SeenLock | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const raw = readFileSync(fd, 'utf8');
    const ageMs = Date.now() - fstatSync(fd).mtimeMs;
    let holder: SeenLock['holder'];
    try {
      const parsed = JSON.parse(raw) as Partial<NonNullable<SeenLock['holder']>>;
      if (Number.isInteger(parsed.pid) && typeof parsed.host === 'string' && typeof parsed.token === 'string') holder = parsed as SeenLock['holder'];
    } catch {
      holder = undefined; // being written (or its writer died in between)
    }
    return { raw, holder, ageMs };
  } finally {
    closeSync(fd);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) === 'EPERM'; // it exists, we just may not signal it
  }
}

/** A lock whose holder is certainly gone: a dead pid on this host, or never written and old. */
function isStale(seen: SeenLock): boolean {
  if (!seen.holder) return seen.ageMs > UNWRITTEN_LOCK_MS;
  if (seen.holder.host !== hostname()) return false; // another machine's process: we cannot tell
  return !pidAlive(seen.holder.pid);
}

function holderText(token: string): string {
  return JSON.stringify({ pid: process.pid, host: hostname(), token });
}

/**
 * Remove the stale lock `seen` — unless it has changed meanwhile. Breakers take turns under a
 * second lock (`<lock>.break`), so between the check and the unlink nobody else can remove the
 * stale lock and create a fresh one that this unlink would then remove.
 */
function breakStale(lock: string, seen: SeenLock): void {
  const guard = `${lock}.break`;
  const token = randomBytes(8).toString('hex');
  if (!createExclusive(guard, holderText(token))) {
    const other = seeLock(guard);
    // A breaker died inside its few microseconds: clear its guard for the next try.
    if (other && isStale(other)) removeIfUnchanged(guard, other.raw);
    return;
  }
  try {
    const now = seeLock(lock);
    if (now && now.raw === seen.raw && isStale(now)) unlinkSync(lock);
  } finally {
    removeIfUnchanged(guard, holderText(token));
  }
}

function removeIfUnchanged(path: string, raw: string): void {
  try {
    if (readFileSync(path, 'utf8') === raw) unlinkSync(path);
  } catch (err) {
    if (errno(err) !== 'ENOENT') throw err;
  }
}

/** One try at the lock: 'acquired', 'held' (by a live process), or 'broken' (a stale one was removed: try again now). */
function tryLock(lock: string, content: string): 'acquired' | 'held' | 'broken' {
  if (createExclusive(lock, content)) return 'acquired';
  const seen = seeLock(lock);
  if (!seen) return 'broken'; // released in between
  if (!isStale(seen)) return 'held';
  breakStale(lock, seen);
  return 'broken';
}

/** Poll delay after the n-th busy try: 1, 2, 3 … ms, at most 20. */
const pollDelay = (n: number): number => Math.min(n + 1, 20);

class LockTimeoutError extends Error {
  constructor(lock: string, timeoutMs: number) {
    const seen = seeLock(lock);
    super(`could not lock ${lock} within ${timeoutMs} ms: held by ${seen?.raw || 'a process that has not written its pid yet'}`);
    this.name = 'LockTimeoutError';
  }
}

async function withFileLock<T>(file: string, timeoutMs: number, critical: () => T): Promise<T> {
  const lock = lockFileOf(file);
  const token = randomBytes(8).toString('hex');
  const content = holderText(token);
  const deadline = Date.now() + timeoutMs;
  for (let busy = 0; ; ) {
    const outcome = tryLock(lock, content);
    if (outcome === 'acquired') break;
    if (outcome === 'held') {
      if (Date.now() > deadline) throw new LockTimeoutError(lock, timeoutMs);
      await new Promise((resolve) => setTimeout(resolve, pollDelay(busy++)));
    }
  }
  try {
    return critical();
  } finally {
    removeIfUnchanged(lock, content);
  }
}

function withFileLockSync<T>(file: string, timeoutMs: number, critical: () => T): T {
  const lock = lockFileOf(file);
  const token = randomBytes(8).toString('hex');
  const content = holderText(token);
  const deadline = Date.now() + timeoutMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (let busy = 0; ; ) {
    const outcome = tryLock(lock, content);
    if (outcome === 'acquired') break;
    if (outcome === 'held') {
      if (Date.now() > deadline) throw new LockTimeoutError(lock, timeoutMs);
      Atomics.wait(nap, 0, 0, pollDelay(busy++));
    }
  }
  try {
    return critical();
  } finally {
    removeIfUnchanged(lock, content);
  }
}

// ── the Redis backend ──────────────────────────────────────────────────────────────────────

export type RedisBackendOptions = BackendOptions & {
  /** Key prefix (letters, digits, `.`, `_`, `-`, `:`, `/`; no braces) — the runtime's `redisPrefix` in the travel domain. */
  prefix: string;
  /** Give up after this many conflicts in a row on one update (default 1000). */
  maxConflicts?: number;
  /** For a client made from `url`: stop reconnecting once the server has been unreachable this long (DomainContext.redis.giveUpAfterMs); default for ever. */
  giveUpAfterMs?: number;
} & (
  /** A Redis URL: the backend creates its client on first use and `close()` quits it. */
  | { url: string; client?: never }
  /** An ioredis client, left open by `close()`. */
  | { client: Redis; url?: never }
);

const PREFIX = /^[A-Za-z0-9._:/-]{1,100}$/;

/**
 * Compare-and-set: write ARGV[2] only if the key still holds what the change read — its SHA-1 in
 * ARGV[1], or '' for "no key yet". 1 when written, 0 on a conflict.
 */
const CAS_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current == false then
  if ARGV[1] ~= '' then return 0 end
elseif redis.sha1hex(current) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

/** The key of an invocation's world: `<prefix>:travel:{<invocation>}:providers` (the invocation is the Cluster hash tag, as in RedisStore). */
export function travelStateKey(prefix: string, invocation: string): string {
  return `${prefix}:travel:{${invocation}}:providers`;
}

/**
 * Each invocation's world under one Redis key, holding exactly the bytes the state file would.
 * `read` seeds a missing world with SET NX (so of many first readers, one seeds and all see it);
 * `update` reads the value, runs `change` on it and compares-and-sets (CAS_SCRIPT), running the
 * change again on the new value after a conflict — no connection state (WATCH) is involved, so
 * any number of concurrent updates may share one client.
 *
 * A client made from `url` connects on the first read or update, and its socket does not keep the
 * process alive while no command is in flight (a CLI run ends when its work does); `close()` quits it.
 */
export function redisStateBackend(options: RedisBackendOptions): TravelStateBackend & { key(invocation: string): string; close(): Promise<void> } {
  const { prefix } = options;
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) throw new TypeError(`Redis key prefix ${JSON.stringify(prefix)}: use 1–100 letters, digits, ".", "_", "-", ":" or "/" (no braces)`);
  const seed = seedText(options.initialState ?? initialTravelState());
  const maxConflicts = options.maxConflicts ?? 1000;
  const owned = options.client === undefined;
  let created: Promise<Redis> | undefined;
  let closed = false;
  let inFlight = 0;

  /** An owned client's socket holds the process open only while a command is in flight. */
  const settleRef = (client: Redis): void => {
    const socket = client.stream as { ref?(): unknown; unref?(): unknown } | undefined;
    if (inFlight > 0) socket?.ref?.();
    else socket?.unref?.();
  };
  const client = (): Promise<Redis> => {
    if (options.client !== undefined) return Promise.resolve(options.client);
    const url = options.url;
    created ??= import('ioredis').then(({ Redis: Client }) => {
      const made = new Client(url, { lazyConnect: true, retryStrategy: reconnectStrategy(options.giveUpAfterMs) });
      // Command failures reach their callers; without a listener ioredis logs every reconnect error.
      made.on('error', () => undefined);
      made.on('connect', () => settleRef(made));
      return made;
    });
    return created;
  };
  const withClient = async <T>(work: (redis: Redis) => Promise<T>): Promise<T> => {
    if (closed) throw new Error('redisStateBackend: used after close()');
    const redis = await client();
    inFlight += 1;
    if (owned) settleRef(redis);
    try {
      return await work(redis);
    } catch (err) {
      // A client of our own that gave up: say which server, not ioredis' "Connection is closed.".
      if (owned && isConnectionLoss(err)) {
        throw new StoreUnreachableError(redisServerName(options.url!), options.giveUpAfterMs === undefined ? 'its connection was closed' : `no connection for ${options.giveUpAfterMs} ms`, 'the world is looked at again when the run resumes');
      }
      throw err;
    } finally {
      inFlight -= 1;
      if (owned) settleRef(redis);
    }
  };
  const key = (invocation: string): string => {
    if (/[{}]/.test(invocation)) throw new TypeError(`invocation id ${JSON.stringify(invocation)} may not contain braces (it is the key's hash tag)`);
    return travelStateKey(prefix, invocation);
  };

  return {
    key,
    async read(invocation) {
      const k = key(invocation);
      return withClient(async (redis) => {
        let raw = await redis.get(k);
        if (raw === null) {
          await redis.set(k, seed, 'NX');
          raw = await redis.get(k);
          if (raw === null) throw new Error(`${k} vanished right after it was seeded`);
        }
        return parseTravelState(raw);
      });
    },
    async update(invocation, change) {
      const k = key(invocation);
      return withClient(async (redis) => {
        for (let conflicts = 0; ; conflicts++) {
          const bytes = await redis.getBuffer(k);
          const raw = bytes === null ? null : bytes.toString('utf8');
          const state = parseTravelState(raw ?? seed);
          const result = change(state);
          const next = serializeTravelState(state);
          // Unchanged: the answer holds for the value just read; nothing to write.
          if (next === raw) return { state, result };
          const expected = bytes === null ? '' : createHash('sha1').update(bytes).digest('hex');
          if ((await redis.eval(CAS_SCRIPT, 1, k, expected, next)) === 1) return { state, result };
          if (conflicts + 1 >= maxConflicts) throw new Error(`${k}: gave up after ${maxConflicts} conflicting updates in a row`);
          // Someone else wrote first, so someone progresses: retry at once, then back off a little.
          if (conflicts >= 3) await new Promise((resolve) => setTimeout(resolve, Math.min(conflicts, 20)));
        }
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (!owned || !created) return;
      let redis: Redis;
      try {
        redis = await created;
      } catch {
        return;
      }
      try {
        if (redis.status === 'wait') redis.disconnect(); // never connected (lazy)
        else await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}

// ── the providers ──────────────────────────────────────────────────────────────────────────

interface ProviderHooks {
  /**
   * Called after an effect is durable (its update written) and before the actuator returns — only
   * on the call that applied it, never on a deduplicated call. A crash test kills the process here
   * to land between "effect applied" and "completion recorded".
   */
  crashAfterEffect?: (actuator: string, key: string) => void;
}

/**
 * Where the providers keep their worlds: a backend (`fileStateBackend`, `redisStateBackend`, or
 * your own), or — the older form, mapped to `fileStateBackend` — a state file: one for every
 * invocation, or one per invocation (a function of its id), each seeded from `initialState`
 * (default: the seed world) when an actuator first runs.
 */
export type ProviderOptions = ProviderHooks & (
  | { state: TravelStateBackend; stateFile?: never; initialState?: never }
  | { stateFile: string | ((invocation: string) => string); initialState?: TravelState; state?: never }
);

const fileBackends = new WeakMap<object, TravelStateBackend>();

/** The backend the options name (one per options object for the state-file form). */
export function stateBackendOf(options: ProviderOptions): TravelStateBackend {
  if (options.state !== undefined) {
    if (options.stateFile !== undefined) throw new TypeError('travel providers: give state (a backend) or stateFile, not both');
    return options.state;
  }
  let backend = fileBackends.get(options);
  if (!backend) {
    const { stateFile, initialState } = options;
    if (stateFile === undefined) throw new TypeError('travel providers: give state (a backend) or stateFile');
    backend = fileStateBackend(typeof stateFile === 'function' ? stateFile : () => stateFile, initialState ? { initialState } : {});
    fileBackends.set(options, backend);
  }
  return backend;
}

/**
 * The providers' state as an actuator sees it, seeded the first time an actuator runs — never
 * before, so building the actuators (say, to replay a journal elsewhere) writes nothing.
 */
export function providerState(options: ProviderOptions, ctx: Pick<ActuatorContext, 'invocation' | 'world'>): Promise<TravelState> {
  // A fork acts in its parent's world (ActuatorContext.world).
  return stateBackendOf(options).read(ctx.world ?? ctx.invocation);
}

/**
 * `random` as a tape: each view replays, stream by stream, the draws an earlier view made and
 * draws on past them — so an effect that a conflict runs again draws the same numbers. `int(n)`
 * is `floor(next() * n)`, as in actors/random.ts (a test holds them equal).
 */
export function replayableRandom(random: Random): () => Random {
  const tapes = new Map<string, number[]>();
  return () => {
    const positions = new Map<string, number>();
    return {
      stream(name: string): RandomStream {
        let tape = tapes.get(name);
        if (!tape) tapes.set(name, (tape = []));
        const draws = tape;
        const next = (): number => {
          const at = positions.get(name) ?? 0;
          positions.set(name, at + 1);
          if (at === draws.length) draws.push(random.stream(name).next());
          return draws[at]!;
        };
        return {
          next,
          int(n: number): number {
            if (!Number.isInteger(n) || n <= 0) throw new RangeError(`int(n) needs a positive integer, got ${n}`);
            return Math.floor(next() * n);
          },
        };
      },
    };
  };
}

type Outcome<R> = { kind: 'recorded' | 'applied'; result: R } | { kind: 'failed'; error: unknown };

/**
 * Run one effect exactly once per key, as one atomic update of the invocation's world. `apply`
 * mutates the state and returns the JSON result (it gets `ctx` with a replayable `random`: a
 * conflict may run it again); it may throw an ActuatorError (its state changes up to the throw are
 * kept: a provider that learns a room is gone remembers it). Flaky faults fail the call
 * transiently before anything applies. A reused key throws and changes nothing.
 */
export async function runEffect<R>(options: ProviderOptions, actuator: string, ctx: ActuatorContext, apply: (state: TravelState, ctx: ActuatorContext) => R): Promise<R> {
  const tape = replayableRandom(ctx.random);
  const { result: outcome } = await stateBackendOf(options).update(ctx.world ?? ctx.invocation, (state): Outcome<R> => {
    const entry: LedgerEntry = state.ledger[ctx.key] ?? { actuator, attempts: 0, applied: 0 };
    if (entry.actuator !== actuator) {
      throw new ActuatorError('travel.key_reused', 'permanent', `idempotency key ${ctx.key} already names an effect of ${entry.actuator}, not ${actuator}`);
    }
    entry.attempts += 1;
    state.ledger[ctx.key] = entry;
    if (entry.applied > 0) return { kind: 'recorded', result: entry.result as R };
    const flaky = state.faults.flaky[actuator] ?? 0;
    if (flaky > 0) {
      state.faults.flaky[actuator] = flaky - 1;
      return { kind: 'failed', error: new ActuatorError('travel.provider_unavailable', 'transient', `${actuator} is temporarily unavailable (attempt ${ctx.attempt}); retry with the same key`) };
    }
    let result: R;
    try {
      result = apply(state, { ...ctx, random: tape() });
    } catch (error) {
      return { kind: 'failed', error };
    }
    entry.applied += 1;
    entry.result = JSON.parse(JSON.stringify(result ?? null)) as z.infer<typeof json>;
    return { kind: 'applied', result };
  });
  if (outcome.kind === 'failed') throw outcome.error;
  if (outcome.kind === 'applied') options.crashAfterEffect?.(actuator, ctx.key);
  return outcome.result;
}

export interface ProviderSpec<A, R> {
  name: string;
  kind: ActuatorKind;
  /** Searches and observations; they still go through the per-key ledger. Default false. */
  readOnly?: boolean;
  /** Its numeric arg that is money out (Actuator.spends): the policy's spending cap counts it. */
  spends?: string;
  args: z.ZodType<A>;
  result: z.ZodType<R>;
  /** The effect on the providers' state (see runEffect); returns the JSON result. Pure in (state, args, ctx): it may run more than once. */
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
    ...(spec.spends === undefined ? {} : { spends: spec.spends }),
    argsSchema: spec.args,
    resultSchema: spec.result,
    run: async (args: A, ctx: ActuatorContext) => runEffect(options, spec.name, ctx, (state, c) => spec.apply(state, args, c)),
    ...(undo ? { compensate: async (args: A, result: R, ctx: ActuatorContext) => runEffect(options, `${spec.name}#${undo.as}`, ctx, (state, c) => undo.apply(state, args, result, c)) } : {}),
  };
}
