/**
 * An authored effect does only what its goal asked (issue 30, defect 1): travel's `book_transfer`
 * binds the quote's and the booking's traveller, airport, hotel and day to the goal's args, and
 * books at most once per run.
 *
 * - The model is asked for `book_transfer(me, lisbon-airport, h-alfama, 12, 120)` and authors the
 *   Madrid ride on the 25th for 42 EUR, or the right ride on the 13th: the fragment is refused at
 *   admission by `weft:task-constraints`, naming the step, the arg, the value the goal asked for and
 *   the one the step passes; the refusal is the denied epoch's outcome the model reads when asked
 *   for its next goal; nothing is dispatched and the world holds no taxi. Replay gives the bytes.
 * - A fragment that keeps to its goal runs.
 * - The model naming `book_transfer` again in a later epoch (another day): the second booking is
 *   refused by the run-wide count, with the epoch that booked; the world holds exactly one booking
 *   — in a fork of the run too, which counts its parent's booking.
 * - A journal pinned to the library before the bindings, where a drifted ride ran, still replays
 *   to its fingerprint on today's domain (no behaviour flag: the old library cannot bind).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import type { EpochOutcome } from '../machines/context.js';
import { FLAG_LINEAGE_EFFECTS } from '../machines/flags.js';
import { createRuntime, Runtime, type RuntimeOptions } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { initialTravelState, readTravelState, seedTravelState, travelTranscript } from '../examples/travel/index.js';
import { TRAVEL_TRANSFER_INTENTS, TravelScriptedModel } from '../examples/travel/transfer-script.js';

const root = mkdtempSync(join(tmpdir(), 'weft-goal-binding-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
const GOAL = { task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', 12, 120] };
type Body = Record<string, unknown>;
type Step = { operator: string; args: Array<string | number> };
let n = 0;

function travel(options: Partial<RuntimeOptions> = {}) {
  const dir = join(root, `ws${n++}`);
  const store = new FileStore(join(dir, 'store'));
  const stateDir = join(dir, 'state');
  const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(5)), sleep: async () => undefined, ...options });
  return { store, stateDir, runtime };
}

async function run(options: Partial<RuntimeOptions>) {
  const t = travel(options);
  const start = { tenant: 'bind', seed: '11', asOf: AS_OF };
  const id = Runtime.defaultId(TRAVEL_TRANSFER_INTENTS.lisbon, start);
  seedTravelState(join(t.stateDir, id, TRAVEL_STATE_FILE), initialTravelState());
  const handle = await t.runtime.start(TRAVEL_TRANSFER_INTENTS.lisbon, { ...start, id });
  const result = await handle.done;
  return { ...t, id, result, records: await t.store.read(id), world: () => readTravelState(join(t.stateDir, id, TRAVEL_STATE_FILE)) };
}

/** The travel model, authoring `steps(goal args)` instead of the ride the goal asked for. */
function authoring(steps: (args: Array<string | number>) => Step[]): Model & { requests: ModelRequest[] } {
  const inner = new TravelScriptedModel(travelTranscript);
  const requests: ModelRequest[] = [];
  return {
    id: inner.id,
    params: inner.params,
    requests,
    async complete(request) {
      requests.push(request);
      if (request.purpose !== 'author') return inner.complete(request);
      return { text: JSON.stringify({ steps: steps(request.goal!.args) }) };
    },
  };
}

const quote = (from: string, to: string, day: number): Step => ({ operator: 'quote_taxi', args: ['me', from, to, day] });
const book = (from: string, to: string, day: number, price: number): Step => ({ operator: 'book_taxi', args: ['me', from, to, day, price] });
const inEpoch = (records: JournalRecord[], epoch: number, kind: string) => records.filter((r) => r.epoch === epoch && r.kind === kind).map((r) => r.body as Body);
const epochAdmission = (records: JournalRecord[], epoch: number) => inEpoch(records, epoch, 'admission.decided').find((b) => b.subject === 'epoch');

describe('a fragment that drifts from its goal is refused, fed back, and never reaches the world', () => {
  test('the Madrid ride on the 25th for 42 EUR, asked for Lisbon on the 12th', async () => {
    const model = authoring(() => [quote('madrid-airport', 'h-prado', 25), book('madrid-airport', 'h-prado', 25, 42)]);
    const { runtime, id, result, records, world } = await run({ model });
    // The fragment applies in the observed state (the Madrid fare is a fact there): the planner certified it.
    expect(inEpoch(records, 3, 'epoch.derived')).toEqual([expect.objectContaining({ source: 'authored', goal: GOAL, steps: 2 })]);
    const reason =
      `book_transfer's constraint "taxi.quote binds day = ?day, from = ?from, to = ?to" fails: step 0 (quote_taxi) passes ` +
      `day 25 where the goal binds ?day to 12; from "madrid-airport" where the goal binds ?from to "lisbon-airport"; to "h-prado" where the goal binds ?to to "h-alfama"`;
    expect(epochAdmission(records, 3)).toEqual({ subject: 'epoch', decision: 'deny', policy: expect.any(String), reason, rule: 'weft:task-constraints' });
    expect(inEpoch(records, 3, 'epoch.certified')).toEqual([]);
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
    expect(records.filter((r) => r.kind === 'step.dispatched').map((r) => (r.body as Body).actuator)).not.toContain('taxi.book');
    expect(inEpoch(records, 3, 'epoch.closed')).toEqual([{ outcome: 'denied', steps: 0 }]);
    // Fed back: the next request to the model carries the denied epoch with its reason (recorded in model.requested).
    const next = inEpoch(records, 4, 'model.requested')[0]!;
    expect(next.purpose).toBe('parse');
    expect((next.request as Body).outcomes).toContainEqual(expect.objectContaining({ epoch: 3, goal: GOAL, outcome: 'denied', reason, results: [] }));
    expect((model.requests.at(-1)!.outcomes as EpochOutcome[]).at(-1)).toMatchObject({ outcome: 'denied', reason });
    // The world: the trip, and no taxi at all.
    expect(world().transfers).toEqual([]);
    expect(Object.values(world().ledger).map((e) => e.actuator).filter((a) => a.startsWith('taxi.'))).toEqual([]);
    expect(result.status).toBe('completed');
    expect((await runtime.replay(id)).fingerprint).toBe(result.fingerprint);
  });

  test('the right ride on the 13th, asked for the 12th: the refusal names the day, the goal\'s and the step\'s', async () => {
    const model = authoring(() => [quote('lisbon-airport', 'h-alfama', 13), book('lisbon-airport', 'h-alfama', 13, 35)]);
    const { records, world } = await run({ model });
    expect(epochAdmission(records, 3)).toMatchObject({
      decision: 'deny',
      rule: 'weft:task-constraints',
      reason: `book_transfer's constraint "taxi.quote binds day = ?day, from = ?from, to = ?to" fails: step 0 (quote_taxi) passes day 13 where the goal binds ?day to 12`,
    });
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
    expect(inEpoch(records, 4, 'model.requested')[0]!.request).toMatchObject({ outcomes: expect.arrayContaining([expect.objectContaining({ epoch: 3, outcome: 'denied' })]) });
    expect(world().transfers).toEqual([]);
  });

  test('a fragment that keeps to its goal runs: quoted and booked, one ride in the world', async () => {
    const model = authoring(() => [quote('lisbon-airport', 'h-alfama', 12), book('lisbon-airport', 'h-alfama', 12, 35)]);
    const { records, world, result } = await run({ model });
    expect(result.status).toBe('completed');
    expect(epochAdmission(records, 3)).toMatchObject({ decision: 'allow' });
    expect(inEpoch(records, 3, 'step.dispatched').map((b) => b.actuator)).toEqual(['taxi.quote', 'taxi.book']);
    expect(world().transfers).toEqual([expect.objectContaining({ from: 'lisbon-airport', to: 'h-alfama', day: 12, amount: 35, status: 'booked' })]);
  });
});

/** The travel model, naming `book_transfer` again (for the 13th) once the first ride is booked. */
class AgainModel extends TravelScriptedModel {
  asked = 0;
  /** `afterDenied`: ask again after a refused ride too (a fork going on from a denied epoch). */
  constructor(readonly day = 13, readonly afterDenied = false) {
    super(travelTranscript);
  }
  override async complete(request: ModelRequest) {
    const last = (request.outcomes as EpochOutcome[]).at(-1);
    const again = last?.goal.task === 'book_transfer' && (last.outcome === 'completed' || this.afterDenied);
    if (request.purpose === 'parse' && again && this.asked++ === 0) {
      return { text: JSON.stringify({ goal: { task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', this.day, 120] } }) };
    }
    return super.complete(request);
  }
}

describe('one booking per run', () => {
  test('book_transfer named again in a later epoch: the second booking is refused, the world holds one', async () => {
    const { runtime, id, records, world, result } = await run({ model: new AgainModel() });
    expect(epochAdmission(records, 3)).toMatchObject({ decision: 'allow' });
    expect(inEpoch(records, 3, 'epoch.closed')).toEqual([{ outcome: 'completed', steps: 2 }]);
    // Epoch 4: a goal of its own (the 13th), a fragment that keeps to it — and a second booking of the task.
    expect(inEpoch(records, 4, 'epoch.derived')).toEqual([expect.objectContaining({ source: 'authored', goal: { task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', 13, 120] } })]);
    const reason = `book_transfer's constraint "count of taxi.book ≤ 1 per run" fails: 2 > 1 (1 in this fragment, 1 already done by epoch 3 of this run)`;
    expect(epochAdmission(records, 4)).toMatchObject({ decision: 'deny', rule: 'weft:task-constraints', reason });
    expect(inEpoch(records, 4, 'step.dispatched')).toEqual([]);
    expect(inEpoch(records, 5, 'model.requested')[0]!.request).toMatchObject({ outcomes: expect.arrayContaining([expect.objectContaining({ epoch: 4, outcome: 'denied', reason })]) });
    expect(world().transfers).toEqual([expect.objectContaining({ day: 12, status: 'booked' })]);
    expect(result.status).toBe('completed');
    expect((await runtime.replay(id)).fingerprint).toBe(result.fingerprint);
  });

  test("a fork counts its parent's booking: forked after the ride, asking for another, it is refused", async () => {
    const parent = await run({});
    expect(parent.result.status).toBe('completed');
    expect(parent.world().transfers).toHaveLength(1);
    const again = new AgainModel();
    const forked = travel({ store: parent.store, stateDir: join(parent.stateDir), model: again } as Partial<RuntimeOptions>);
    const handle = await forked.runtime.fork(parent.id, { atEpoch: 3, id: 'inv-bind-fork' });
    const done = await handle.done;
    const records = await parent.store.read(handle.id);
    expect(records[1]!.kind).toBe('invocation.forked');
    expect(epochAdmission(records, 4)).toMatchObject({ decision: 'deny', rule: 'weft:task-constraints', reason: expect.stringContaining('2 > 1 (1 in this fragment, 1 already done by epoch 3 of this run)') });
    expect(records.filter((r) => r.kind === 'step.dispatched')).toEqual([]);
    // The fork acts in its parent's world: still exactly the one ride.
    expect(parent.world().transfers).toEqual([expect.objectContaining({ day: 12, status: 'booked' })]);
    expect(done.status).toBe('completed');
    expect((await forked.runtime.replay(handle.id)).fingerprint).toBe(done.fingerprint);
  });

  test("a fork of a fork counts its grandparent's booking (flag 10: a fork's state lists what its lineage left done)", async () => {
    const parent = await run({});
    expect(parent.world().transfers).toHaveLength(1);
    // The first fork, from after the ride: asked for another, refused; it closes epoch 4 denied and is done.
    const first = travel({ store: parent.store, stateDir: parent.stateDir, model: new AgainModel() } as Partial<RuntimeOptions>);
    const child = await first.runtime.fork(parent.id, { atEpoch: 3, id: 'inv-bind-child' });
    expect((await child.done).status).toBe('completed');
    const childRecords = await parent.store.read(child.id);
    expect(epochAdmission(childRecords, 4)).toMatchObject({ decision: 'deny', rule: 'weft:task-constraints' });
    // The grandchild, from the end of the child's epoch 4 — the ride is its grandparent's.
    const second = travel({ store: parent.store, stateDir: parent.stateDir, model: new AgainModel(14, true) } as Partial<RuntimeOptions>);
    const grandchild = await second.runtime.fork(child.id, { atEpoch: 4, id: 'inv-bind-grandchild' });
    const done = await grandchild.done;
    const records = await parent.store.read(grandchild.id);
    expect((records[0]!.body as { pin: { flags: number[] } }).pin.flags).toContain(FLAG_LINEAGE_EFFECTS);
    // Its state lists the trip's effects (epoch 2) and the ride (epoch 3), all its grandparent's.
    const effects = ((records[1]!.body as Body).state as Body).effects as Body[];
    expect(effects.map((e) => [e.epoch, e.actuator])).toEqual([[2, 'airline.hold'], [2, 'hotel.hold'], [2, 'card.charge'], [2, 'airline.confirm'], [2, 'hotel.confirm'], [3, 'taxi.book']]);
    expect(epochAdmission(records, 5)).toMatchObject({ decision: 'deny', rule: 'weft:task-constraints', reason: expect.stringContaining('1 already done by epoch 3 of this run') });
    expect(records.filter((r) => r.kind === 'step.dispatched')).toEqual([]);
    expect(parent.world().transfers).toEqual([expect.objectContaining({ day: 12, status: 'booked' })]);
    expect(done.status).toBe('completed');
    expect((await second.runtime.replay(grandchild.id)).fingerprint).toBe(done.fingerprint);
  });
});

describe('journals pinned before the bindings', () => {
  test('a drifted ride that ran on the library before the bindings replays on today\'s domain to its fingerprint', async () => {
    // The taxi library as travel-v5 pinned it (before issue 30).
    const digest = '7e848cef61d5a62ecfd371d9ae236a170e1f93a6b87e3774f002302d777876da';
    const old = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v5', 'blobs', digest), 'utf8')) as Library;
    expect(libraryDigest(old)).toBe(digest);
    const model = authoring(() => [quote('madrid-airport', 'h-prado', 25), book('madrid-airport', 'h-prado', 25, 42)]);
    const then = await run({ model, libraries: [old] });
    expect(then.records[0]!.body).toMatchObject({ pin: { library: digest } });
    expect(inEpoch(then.records, 3, 'step.dispatched').map((b) => (b.args as Body).from)).toEqual(['madrid-airport', 'madrid-airport']);
    const today = createRuntime({ store: then.store, domain: travelDomain, stateDir: join(root, 'replay-state'), signingKey: signingKeyFromSecret(new Uint8Array(32).fill(5)) });
    expect((await today.replay(then.id)).fingerprint).toBe(then.result.fingerprint);
  });
});
