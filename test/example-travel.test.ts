/**
 * The travel example (examples/travel/): its library validates and binds real actuators; the
 * planner decomposes each epoch's goal over what the observation reports after the previous
 * epochs' steps ran against a temp state file; the budget picks the method; providers dedupe by
 * idempotency key, undo through their compensations, fail as their state file says, and answer
 * deterministically; the transcript re-prompts a malformed reply; and the whole demo runs end to
 * end on the runtime with every effect applied exactly once.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { classifyFailure, type Actuator, type ActuatorContext } from '../actors/actuator.js';
import { NoScriptedReplyError, ScriptedModel } from '../actors/model/scripted.js';
import { createRandom } from '../actors/random.js';
import { validateLibrary } from '../htn/library/validate.js';
import { plan } from '../htn/planner/plan.js';
import type { PlanStep } from '../htn/planner/result.js';
import type { Goal, WorldState } from '../htn/library/schema.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { judgeParseReply } from '../machines/reply.js';
import { createRuntime } from '../runtime/index.js';
import {
  TRAVEL_GOALS, TRAVEL_INTENT, TRAVEL_SUMMARY, checkInReminderAt, createTravelApp, effectCounts, expectedSearchOutcome, readTravelState,
  travelEvaluables, travelLibrary, travelPolicy, travelTranscript, updateTravelState,
} from '../examples/travel/index.js';
import { TRAVEL_AS_OF, travelDomain } from '../examples/travel/domain.js';

const AS_OF = TRAVEL_AS_OF;
type Step = { operator: string; args: Array<string | number>; actuator?: string };

function ctx(key: string, opts: { attempt?: number; seed?: string; asOf?: string } = {}): ActuatorContext {
  const [invocation = 'inv', epoch = '1', step = '0'] = key.split('.');
  return { key, attempt: opts.attempt ?? 1, invocation, tenant: 't1', epoch: Number(epoch), step: Number(step), asOf: opts.asOf ?? AS_OF, random: createRandom(opts.seed ?? 'seed-1', key) };
}

function world(opts: { crash?: (actuator: string, key: string) => void } = {}) {
  const stateFile = join(mkdtempSync(join(tmpdir(), 'weft-travel-')), 'providers.json');
  const app = createTravelApp({ stateFile, ...(opts.crash ? { crashAfterEffect: opts.crash } : {}) });
  const actuators = new Map(app.actuators.map((a) => [a.name, a]));
  const get = (name: string): Actuator => actuators.get(name)!;
  const call = async (name: string, args: unknown, key: string, o: Parameters<typeof ctx>[1] = {}) => get(name).run(get(name).argsSchema.parse(args), ctx(key, o));
  const observe = async (goal: Goal): Promise<WorldState> => (await call(app.observe, { goal }, 'inv.0.0.observe')) as WorldState;
  const decompose = async (goal: Goal) => plan(travelLibrary, await observe(goal), goal, { evaluables: travelEvaluables() });
  /** One epoch by hand: observe → plan → run each step's actuator with key `inv.<epoch>.<i>`. */
  const epoch = async (n: number, goal: Goal) => {
    const result = await decompose(goal);
    if (result.kind !== 'plan') throw new Error(`epoch ${n}: ${result.kind}`);
    const results: unknown[] = [];
    for (const [i, step] of result.steps.entries()) results.push(await call(step.actuator!, step.actuatorArgs, `inv.${n}.${i}`));
    return { ...result, results };
  };
  return { stateFile, app, get, call, observe, decompose, epoch, state: () => readTravelState(stateFile) };
}

const goal = (g: { task: string; args: ReadonlyArray<string | number> }): Goal => ({ task: g.task, args: [...g.args] });
const brief = (steps: readonly PlanStep[]): Step[] => steps.map((s) => ({ operator: s.operator, args: [...s.args], actuator: s.actuator! }));
const method = (r: Awaited<ReturnType<ReturnType<typeof world>['decompose']>>) => (r.kind === 'plan' ? (r.tree.nodes[0] as { method: string }).method : r.kind);
const BOOK = (budget: number): Goal => ({ task: 'book_trip', args: ['me', 'lisbon', 12, budget] });

describe('the travel library and app', () => {
  test('the library validates and every operator binds an actuator of the app with args its schema accepts', () => {
    expect(validateLibrary(travelLibrary)).toEqual(travelLibrary);
    const { app } = world();
    const names = new Set(app.actuators.map((a) => a.name));
    expect(names.size).toBe(app.actuators.length);
    for (const op of travelLibrary.operators) {
      expect(names.has(op.actuator!.actuator), op.name).toBe(true);
      if (op.compensate) expect(names.has(op.compensate.actuator), op.name).toBe(true);
    }
    const kinds = Object.fromEntries(app.actuators.map((a) => [a.name, `${a.kind}${a.readOnly ? ':ro' : ''}`]));
    expect(kinds).toMatchObject({ 'travel.observe': 'state:ro', 'flights.search': 'tool:ro', 'hotels.search': 'tool:ro', 'card.charge': 'tool', 'message.send': 'message', 'reminder.set': 'timer' });
    expect(app.observe).toBe('travel.observe');
    expect(app.policy?.id).toMatch(/^pack:travel@5#[0-9a-f]{64}$/);
  });
});

describe('the demo epochs, simulated by hand', () => {
  test('find options → book under budget → share the itinerary, each decomposed over the observed state', async () => {
    const w = world();
    expect((await w.decompose(BOOK(900))).kind).toBe('no-method'); // nothing searched yet

    const e1 = await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    expect(method(e1)).toBe('search-flights-and-hotels');
    expect(brief(e1.steps)).toEqual([
      { operator: 'search_flights', args: ['me', 'london', 'lisbon', 12], actuator: 'flights.search' },
      { operator: 'search_hotels', args: ['lisbon', 12], actuator: 'hotels.search' },
    ]);
    expect(e1.steps.every((s) => s.readOnly)).toBe(true);
    expect(e1.results).toEqual(expectedSearchOutcome().results.map((r) => r.result));

    const observed = await w.observe(BOOK(900));
    expect(observed.facts).toContainEqual(['offer-flight', 'f-tp1353', 'lisbon', 12, 310]);
    expect(observed.facts).toContainEqual(['trip-total', 'f-tp1353', 'h-alfama', 780]);
    expect(observed.facts).not.toContainEqual(['offer-flight', 'f-tp1357', 'lisbon', 13, 290]);
    expect(method(await w.decompose(goal(TRAVEL_GOALS.findOptions)))).toBe('refresh-hotels-only');

    const e2 = await w.epoch(2, goal(TRAVEL_GOALS.bookTrip));
    expect(method(e2)).toBe('direct-flight-hotel-near-venue');
    expect(brief(e2.steps)).toEqual([
      { operator: 'hold_flight', args: ['me', 'f-tp1353'], actuator: 'airline.hold' },
      { operator: 'hold_hotel', args: ['me', 'h-alfama'], actuator: 'hotel.hold' },
      { operator: 'charge_card', args: ['me', 'card-visa-4242', 'f-tp1353', 'h-alfama', 780], actuator: 'card.charge' },
      { operator: 'confirm_flight', args: ['me', 'f-tp1353'], actuator: 'airline.confirm' },
      { operator: 'confirm_hotel', args: ['me', 'h-alfama'], actuator: 'hotel.confirm' },
    ]);
    expect(e2.steps[2]!.actuatorArgs).toEqual({ traveller: 'me', card: 'card-visa-4242', flight: 'f-tp1353', hotel: 'h-alfama', amount: 780 });
    expect(e2.steps[3]!.compensate).toEqual({ actuator: 'airline.cancel', args: { traveller: 'me', flight: 'f-tp1353' } });
    const epochPlan = { source: 'htn' as const, digest: 'd', steps: JSON.parse(JSON.stringify(e2.steps)) };
    expect(travelPolicy.admitEpoch({ tenant: 't1', epoch: 2, goal: goal(TRAVEL_GOALS.bookTrip), plan: epochPlan })).toEqual({ decision: 'allow' });

    const e3 = await w.epoch(3, goal(TRAVEL_GOALS.shareItinerary));
    expect(method(e3)).toBe('itinerary-on-preferred-channel');
    expect(brief(e3.steps)).toEqual([
      { operator: 'send_itinerary', args: ['me', 'email', 'f-tp1353', 'h-alfama'], actuator: 'message.send' },
      { operator: 'set_checkin_reminder', args: ['me', 'f-tp1353'], actuator: 'reminder.set' },
    ]);
    expect((await w.decompose(goal(TRAVEL_GOALS.shareItinerary))).kind).toBe('no-method'); // already sent

    const s = w.state();
    expect(s.charges).toMatchObject([{ amount: 780, status: 'captured' }]);
    expect(s.bookings.map((b) => [b.item, b.status])).toEqual([['f-tp1353', 'confirmed'], ['h-alfama', 'confirmed']]);
    expect(s.messages).toHaveLength(1);
    expect(s.reminders).toMatchObject([{ flight: 'f-tp1353', at: '2026-06-11T06:55:00.000Z', status: 'set' }]);
    const counts = effectCounts(w.stateFile);
    expect(counts).toMatchObject({ attempts: 9, applied: 9 });
  });

  test('the budget chooses the method: over budget falls to the next method, then to no method', async () => {
    const w = world();
    await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    const chosen = async (budget: number) => {
      const r = await w.decompose(BOOK(budget));
      return r.kind === 'plan' ? [method(r), r.steps[2]!.args.slice(2)] : [r.kind];
    };
    expect(await chosen(900)).toEqual(['direct-flight-hotel-near-venue', ['f-tp1353', 'h-alfama', 780]]);
    expect(await chosen(700)).toEqual(['direct-flight-any-hotel', ['f-tp1353', 'h-belem', 570]]);
    expect(await chosen(400)).toEqual(['any-flight-any-hotel', ['f-ux1016', 'h-belem', 390]]);
    expect(await chosen(350)).toEqual(['no-method']);
    const none = await w.decompose(BOOK(350));
    expect(none.kind === 'no-method' && none.explanation.goal.methods?.map((m) => m.failed)).toEqual(['(le ?total ?budget)', '(le ?total ?budget)', '(le ?total ?budget)']);
  });

  test('an epoch spending above 1000 needs approval', () => {
    const step = { operator: 'charge_card', args: [], actuator: 'card.charge', actuatorArgs: { amount: 1100 }, readOnly: false };
    const decision = travelPolicy.admitEpoch({ tenant: 't1', epoch: 2, goal: BOOK(1200), plan: { source: 'htn', digest: 'd', steps: [step] } });
    expect(decision.decision).toBe('require_approval');
  });
});

describe('the providers', () => {
  test('dedupe by idempotency key: attempts 2, applied 1, the same result', async () => {
    let crashes = 0;
    const w = world({ crash: () => crashes++ });
    await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    const first = await w.call('airline.hold', { traveller: 'me', flight: 'f-tp1353' }, 'inv.2.0');
    const again = await w.call('airline.hold', { traveller: 'me', flight: 'f-tp1353' }, 'inv.2.0', { attempt: 2 });
    expect(again).toEqual(first);
    expect(effectCounts(w.stateFile).byKey['inv.2.0']).toEqual({ actuator: 'airline.hold', attempts: 2, applied: 1 });
    expect(w.state().holds).toHaveLength(1);
    expect(crashes).toBe(3); // two searches and the hold; never on the deduplicated call
    await expect(w.call('hotel.hold', { traveller: 'me', hotel: 'h-alfama' }, 'inv.2.0')).rejects.toMatchObject({ code: 'travel.key_reused', failureClass: 'permanent' });
  });

  test('the crash hook runs after the effect is on disk', async () => {
    const seen: Array<{ actuator: string; key: string; holds: number }> = [];
    const w = world({ crash: (actuator, key) => seen.push({ actuator, key, holds: JSON.parse(readFileSync(w.stateFile, 'utf8')).holds.length }) });
    await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    await w.call('hotel.hold', { traveller: 'me', hotel: 'h-belem' }, 'inv.2.1');
    expect(seen.at(-1)).toEqual({ actuator: 'hotel.hold', key: 'inv.2.1', holds: 1 });
  });

  test('compensations undo: cancel the bookings, refund the charge, release the holds', async () => {
    const w = world();
    await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    const e2 = await w.epoch(2, goal(TRAVEL_GOALS.bookTrip));
    for (let i = e2.steps.length - 1; i >= 0; i--) {
      const step = e2.steps[i]!;
      const key = `inv.2.${i}.undo`;
      if (step.compensate) await w.call(step.compensate.actuator, step.compensate.args, key);
      else await w.get(step.actuator!).compensate!(step.actuatorArgs, e2.results[i], ctx(key));
    }
    const refund = w.get('card.charge').compensate!(e2.steps[2]!.actuatorArgs, e2.results[2], ctx('inv.2.2.undo', { attempt: 2 }));
    await expect(refund).resolves.toMatchObject({ refunded: (e2.results[2] as { charge: string }).charge, amount: 780 });
    const s = w.state();
    expect(s.charges.map((c) => c.status)).toEqual(['refunded']);
    expect(s.bookings.map((b) => b.status)).toEqual(['cancelled', 'cancelled']);
    expect(s.holds.map((h) => h.status)).toEqual(['converted', 'converted']);
    expect(effectCounts(w.stateFile).byKey['inv.2.2.undo']).toEqual({ actuator: 'card.charge#refund', attempts: 2, applied: 1 });
    const facts = (await w.observe(BOOK(900))).facts.map((f) => f[0]);
    expect(facts).not.toContain('booked');
    expect(facts).not.toContain('paid');
    expect(method(await w.decompose(BOOK(900)))).toBe('direct-flight-hotel-near-venue'); // bookable again
  });

  test('a sold-out hotel fails confirmation permanently and is no longer offered', async () => {
    const w = world();
    await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    updateTravelState(w.stateFile, (s) => void s.faults.soldOut.push('h-alfama'));
    await expect(w.epoch(2, goal(TRAVEL_GOALS.bookTrip))).rejects.toSatisfy((err: unknown) => {
      const failure = classifyFailure(err);
      return failure.class === 'permanent' && failure.code === 'hotel.sold_out';
    });
    expect(effectCounts(w.stateFile).byKey['inv.2.4']).toEqual({ actuator: 'hotel.confirm', attempts: 1, applied: 0 });
    expect((await w.observe(BOOK(900))).facts.filter((f) => f[0] === 'offer-hotel').map((f) => f[1])).not.toContain('h-alfama');
  });

  test('a flaky provider fails transiently N times, then applies once', async () => {
    const w = world();
    await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
    updateTravelState(w.stateFile, (s) => void (s.faults.flaky['airline.hold'] = 2));
    const hold = () => w.call('airline.hold', { traveller: 'me', flight: 'f-tp1353' }, 'inv.2.0');
    for (let i = 0; i < 2; i++) await expect(hold()).rejects.toSatisfy((err: unknown) => classifyFailure(err).class === 'transient');
    await expect(hold()).resolves.toMatchObject({ item: 'f-tp1353', price: 310 });
    expect(effectCounts(w.stateFile).byKey['inv.2.0']).toEqual({ actuator: 'airline.hold', attempts: 3, applied: 1 });
  });

  test('results are deterministic for the same key, asOf and seed', async () => {
    const run = async (seed: string) => {
      const w = world();
      await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
      const e2 = await w.epoch(2, goal(TRAVEL_GOALS.bookTrip));
      return [e2.results, await w.call('flights.search', { from: 'london', to: 'lisbon', day: 12 }, 'inv.9.0', { seed })];
    };
    expect(await run('seed-1')).toEqual(await run('seed-1'));
    const a = await world().call('flights.search', { from: 'london', to: 'lisbon', day: 12 }, 'k.1.0', { seed: 'x' });
    const b = await world().call('flights.search', { from: 'london', to: 'lisbon', day: 12 }, 'k.1.0', { seed: 'y' });
    expect(a).toEqual(b); // searches carry no key-derived ids
    const holdRef = async (seed: string) => {
      const w = world();
      await w.epoch(1, goal(TRAVEL_GOALS.findOptions));
      return ((await w.call('airline.hold', { traveller: 'me', flight: 'f-tp1353' }, 'inv.2.0', { seed })) as { hold: string }).hold;
    };
    expect(await holdRef('x')).toBe(await holdRef('x'));
    expect(await holdRef('x')).not.toBe(await holdRef('y'));
    expect(checkInReminderAt('2026-06-20T00:00:00Z', { day: 12, departs: '06:55' })).toEqual({ departure: '2026-07-12T06:55:00.000Z', at: '2026-07-11T06:55:00.000Z' });
  });
});

describe('the transcript', () => {
  test('a malformed first reply is re-prompted; each epoch gets its goal; wrong context gets no reply', async () => {
    const model = new ScriptedModel(travelTranscript);
    const ask = (epoch: number, outcomes: unknown[], feedback?: string) =>
      model.complete({ purpose: 'parse', intent: TRAVEL_INTENT, epoch, outcomes, tasks: [], ...(feedback ? { feedback } : {}) });
    const first = judgeParseReply((await ask(1, [])).text, travelLibrary);
    expect(first.kind === 'rejected' && first.reason).toContain('not valid JSON');
    expect(judgeParseReply((await ask(1, [], first.kind === 'rejected' ? first.reason : '')).text, travelLibrary)).toEqual({ kind: 'goal', goal: goal(TRAVEL_GOALS.findOptions) });
    expect(judgeParseReply((await ask(2, [expectedSearchOutcome()])).text, travelLibrary)).toEqual({ kind: 'goal', goal: BOOK(900) });
    await expect(ask(2, [])).rejects.toBeInstanceOf(NoScriptedReplyError);
    expect(judgeParseReply((await ask(3, [{}, {}])).text, travelLibrary)).toEqual({ kind: 'goal', goal: goal(TRAVEL_GOALS.shareItinerary) });
    expect(judgeParseReply((await ask(4, [{}, {}, {}])).text, travelLibrary)).toEqual({ kind: 'done', summary: TRAVEL_SUMMARY });
  });

  test('end to end on the runtime: completes, applies every effect once, replays to the same fingerprint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-travel-e2e-'));
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain: travelDomain, stateDir: dir, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(7)), sleep: async () => undefined });
    const handle = await runtime.start(travelDomain.intent!, { tenant: 't1', seed: 1, asOf: travelDomain.asOf! });
    const result = await handle.done;
    expect(result).toMatchObject({ status: 'completed', summary: TRAVEL_SUMMARY });
    const records = await store.read(handle.id);
    expect(records.filter((r) => r.kind === 'model.rejected')).toHaveLength(1);
    expect(records.filter((r) => r.kind === 'epoch.closed')).toHaveLength(3);
    const counts = effectCounts(join(dir, handle.id, 'providers.json'));
    expect(counts).toMatchObject({ attempts: 9, applied: 9 });
    expect(Object.values(counts.byKey).map((e) => e.actuator)).toEqual([
      'flights.search', 'hotels.search', 'airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm', 'message.send', 'reminder.set',
    ]);
    expect(await runtime.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
  });
});
