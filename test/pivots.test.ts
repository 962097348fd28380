/**
 * Issue 23, "Pivots and compensation failures", behind behaviour flag 8. Travel's booking epoch is
 * airline.hold (0), hotel.hold (1), card.charge (2), airline.confirm (3), hotel.confirm (4). Each
 * scenario asserts the journal's records and the world's final state, and that the journal replays
 * to its own fingerprint and verifies offline.
 *
 * - a pivot: here the card's charge cannot be refunded (its actuator has no `compensate`, and the
 *   step declares no inverse), and the hotel's confirmation fails for good after it → the flight's
 *   confirmation (after the pivot) is cancelled, then compensation stops at the charge:
 *   `compensation.halted` names what ran, what was undone and what stays applied; handed off;
 * - a compensation that fails transiently then succeeds: the charge is refused, the hotel hold's
 *   release fails once, is retried under its own key and succeeds; the epoch closes compensated;
 * - one that fails permanently: the hotel hold cannot be released → halted there, handed off, the
 *   flight hold (before it) is left as it is and named;
 * - a journal pinned before flag 8 passes over the pivot and undoes the rest, and replays as written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import { ActuatorError, type Actuator } from '../actors/actuator.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelPolicy } from '../examples/travel/app.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { FLAG_PIVOTS } from '../machines/flags.js';
import { createRuntime } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(12));
const root = mkdtempSync(path.join(tmpdir(), 'weft-pivots-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;

/** Epoch 1 searches, epoch 2 books, then done. */
const model: Model = {
  id: 'scripted:pivots',
  params: {},
  async complete(request: ModelRequest) {
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? TRAVEL_GOALS.bookTrip : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'the booking did not go through; nothing stays held' }) };
  },
};

/** Change one actuator of travel's: its run, or its compensate, by name. */
type Tamper = Record<string, { run?: (original: Actuator['run']) => Actuator['run']; compensate?: (original: NonNullable<Actuator['compensate']>) => NonNullable<Actuator['compensate']>; /** Its effect cannot be undone: no `compensate`. */ noUndo?: true }>;
function tampered(actuators: Actuator[], tamper: Tamper): Actuator[] {
  return actuators.map((a) => {
    const t = tamper[a.name];
    if (!t) return a;
    const changed: Actuator = { ...a, ...(t.run ? { run: t.run(a.run.bind(a)) } : {}), ...(t.compensate && a.compensate ? { compensate: t.compensate(a.compensate.bind(a)) } : {}) };
    if (t.noUndo) delete changed.compensate;
    return changed;
  });
}

type CreateRuntime = typeof createRuntime;
function runtimeOver(create: CreateRuntime, tamper: Tamper, storeDir = mkdtempSync(path.join(root, 'store-'))) {
  const stateDir = mkdtempSync(path.join(root, 'state-'));
  const actuators = tampered(travelDomain.actuators({ stateDir }), tamper);
  const runtime = create({ store: new FileStore(storeDir), domain: travelDomain, stateDir, actuators, model, policy: travelPolicy, signingKey: key, sleep: async () => undefined });
  return { runtime, stateDir };
}
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });
const world = (stateDir: string, id: string) => readTravelState(path.join(stateDir, id, 'providers.json'));
/** Epoch 2's records from the first failure on, as `kind[#step]`. */
const trail = (records: JournalRecord[]) => {
  const inEpoch = records.filter((r) => r.epoch === 2);
  const from = inEpoch.findIndex((r) => r.kind === 'step.failed');
  return inEpoch.slice(from).map((r) => ((r.body as Body).step === undefined ? r.kind : `${r.kind}#${(r.body as Body).step}`));
};
const permanently = (code: string, message: string) => () => async () => {
  throw new ActuatorError(code, 'permanent', message);
};

async function expectReplaysAndVerifies(runtime: ReturnType<CreateRuntime>, id: string, status: string, fingerprint: string | undefined) {
  const replayed = await runtime.replay(id);
  expect(replayed).toMatchObject({ status, sealed: true, fingerprint });
  const report = await runtime.verify(id, publicKeyOf(key));
  expect(report.ok).toBe(true);
}

describe('pivots and compensation failures (issue 23, flag 8)', () => {
  test('a pivot: a charge that cannot be refunded, then the hotel confirmation fails for good — the flight confirmation after it is cancelled, compensation stops at the charge, names every effect left applied, and hands off', async () => {
    const { runtime, stateDir } = runtimeOver(createRuntime, {
      'card.charge': { noUndo: true },
      'hotel.confirm': { run: permanently('hotel.overbooked', 'the hotel is overbooked') },
    });
    const handle = await runtime.start(TRAVEL_INTENT, start('pivot'));
    const result = await handle.done;
    expect(result.status).toBe('handed_off');
    const records = await runtime.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toContain(FLAG_PIVOTS);
    expect(trail(records)).toEqual(['step.failed#4', 'compensation.dispatched#3', 'compensation.completed#3', 'compensation.halted', 'invocation.handed_off', 'invocation.sealed']);
    const halted = records.find((r) => r.kind === 'compensation.halted')!.body as Body;
    const ref = (step: number, actuator: string) => ({ step, actuator, key: `${handle.id}.2.${step}` });
    expect(halted).toEqual({
      at: 2,
      why: 'pivot',
      ran: [ref(0, 'airline.hold'), ref(1, 'hotel.hold'), ref(2, 'card.charge'), ref(3, 'airline.confirm')],
      undone: [ref(3, 'airline.confirm')],
      notUndone: [ref(0, 'airline.hold'), ref(1, 'hotel.hold'), ref(2, 'card.charge')],
      reason: expect.stringMatching(/step 2 .*card\.charge.* is a pivot/),
    });
    expect((records.find((r) => r.kind === 'invocation.handed_off')!.body as Body).reason).toMatch(/pivot.*not undone: step 0 \(airline\.hold\), step 1 \(hotel\.hold\), step 2 \(card\.charge\)/s);

    // The world: the flight booking was cancelled; the charge stays captured and the holds as they were.
    const w = world(stateDir, handle.id);
    expect(w.charges.map((c) => c.status)).toEqual(['captured']);
    expect(w.bookings.map((b) => `${b.kind}:${b.status}`)).toEqual(['flight:cancelled']);
    await expectReplaysAndVerifies(runtime, handle.id, 'handed_off', result.fingerprint);
  });

  test('a compensation that fails transiently is retried under its own key and succeeds; the epoch closes compensated and the run goes on', async () => {
    let failures = 0;
    const { runtime, stateDir } = runtimeOver(createRuntime, {
      'card.charge': { run: permanently('card.declined', 'the bank declines the card') },
      'hotel.hold': {
        compensate: (original) => async (args, result, ctx) => {
          if (failures++ === 0) throw new ActuatorError('hotel.busy', 'transient', 'the hotel system is busy');
          return original(args, result, ctx);
        },
      },
    });
    const handle = await runtime.start(TRAVEL_INTENT, start('comp-transient'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    expect(trail(records)).toEqual([
      'step.failed#2',
      'compensation.dispatched#1',
      'compensation.completed#1',
      'compensation.dispatched#1',
      'compensation.completed#1',
      'compensation.dispatched#0',
      'compensation.completed#0',
      'frontier.truncated',
      'epoch.closed',
    ]);
    const undo1 = records.filter((r) => r.epoch === 2 && r.kind === 'compensation.completed' && (r.body as Body).step === 1).map((r) => r.body as Body);
    expect(undo1.map((b) => [b.attempt, b.failure?.class ?? 'ok', b.key])).toEqual([
      [1, 'transient', `${handle.id}.2.1.undo`],
      [2, 'ok', `${handle.id}.2.1.undo`],
    ]);
    expect(records.some((r) => r.kind === 'compensation.halted')).toBe(false);
    expect(world(stateDir, handle.id).holds.map((h) => `${h.kind}:${h.status}`).sort()).toEqual(['flight:released', 'hotel:released']);
    await expectReplaysAndVerifies(runtime, handle.id, 'completed', result.fingerprint);
  });

  test('a compensation that fails permanently stops there: halted with the full trail, handed off, the earlier hold named and left as it is', async () => {
    const { runtime, stateDir } = runtimeOver(createRuntime, {
      'card.charge': { run: permanently('card.declined', 'the bank declines the card') },
      'hotel.hold': { compensate: permanently('hotel.locked', 'the booking is locked by the hotel') },
    });
    const handle = await runtime.start(TRAVEL_INTENT, start('comp-permanent'));
    const result = await handle.done;
    expect(result.status).toBe('handed_off');
    const records = await runtime.store.read(handle.id);
    expect(trail(records)).toEqual(['step.failed#2', 'compensation.dispatched#1', 'compensation.completed#1', 'compensation.halted', 'invocation.handed_off', 'invocation.sealed']);
    const halted = records.find((r) => r.kind === 'compensation.halted')!.body as Body;
    expect(halted).toMatchObject({ at: 1, why: 'compensation_failed', undone: [] });
    expect(halted.notUndone.map((e: Body) => e.actuator)).toEqual(['airline.hold', 'hotel.hold']);
    expect(halted.reason).toMatch(/hotel\.hold|the booking is locked/);
    expect(world(stateDir, handle.id).holds.map((h) => `${h.kind}:${h.status}`).sort()).toEqual(['flight:held', 'hotel:held']);
    await expectReplaysAndVerifies(runtime, handle.id, 'handed_off', result.fingerprint);
  });

  test('a journal pinned before flag 8 passes over the pivot (the charge stays captured), undoes the rest, and replays as written on today\'s runtime', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => ({ ...(await original<typeof import('../machines/flags.js')>()), IMPLEMENTED_FLAGS: [1, 2, 4, 5] }));
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const tamper: Tamper = { 'card.charge': { noUndo: true }, 'hotel.confirm': { run: permanently('hotel.overbooked', 'the hotel is overbooked') } };
    const { runtime: old, stateDir } = runtimeOver(older, tamper, dir);
    const handle = await old.start(TRAVEL_INTENT, start('pivot-old'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await old.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toEqual([1, 2, 4, 5]);
    expect(records.some((r) => r.kind === 'compensation.halted')).toBe(false);
    // Every effect but the charge was undone: the pivot was passed over, and the holds before it released.
    expect(records.filter((r) => r.epoch === 2 && r.kind === 'compensation.dispatched').map((r) => (r.body as Body).step)).toEqual([3, 1, 0]);
    const w = world(stateDir, handle.id);
    expect(w.charges.map((c) => c.status)).toEqual(['captured']);
    expect(w.bookings.map((b) => `${b.kind}:${b.status}`)).toEqual(['flight:cancelled']);
    expect(w.holds.find((h) => h.kind === 'hotel')!.status).toBe('released');

    const { runtime: today } = runtimeOver(createRuntime, tamper, dir);
    await expectReplaysAndVerifies(today, handle.id, 'completed', result.fingerprint);
  });
});
