/**
 * The gap path a user can see (issue 22, first part): travel's taxi intents reach `book_transfer`,
 * a task with no method, so the scripted model authors a fragment of taxi operators with explicit
 * args only; it is validated, certified against the task's constraints and the travel@5 pack's
 * envelope (policy v3's rules as data, naming the rule that decided each admission),
 * executed and recorded as authored — from the command line, with no person for a ride within the
 * 80 EUR allowance. A ride over the allowance asks for approval; a fragment over the goal's budget
 * or the envelope's cap is refused before anything is dispatched; replay reproduces the bytes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { createRuntime, Runtime, type RuntimeOptions } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { travelPackPolicy } from '../examples/travel/policy-pack.js';
import { fileStateBackend, initialTravelState, readTravelState, seedTravelState, travelActuators, travelPolicyV2, travelTranscript, type TravelState } from '../examples/travel/index.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { parseTransferIntent, TRAVEL_TRANSFER_INTENTS, TravelScriptedModel } from '../examples/travel/transfer-script.js';
import { assertBuilt, weft } from './support/cli.js';

const root = mkdtempSync(join(tmpdir(), 'weft-gap-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
type Body = Record<string, unknown>;
let n = 0;

function travel(options: Partial<RuntimeOptions> = {}) {
  const dir = join(root, `ws${n++}`);
  const store = new FileStore(join(dir, 'store'));
  const stateDir = join(dir, 'state');
  const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(5)), sleep: async () => undefined, ...options });
  return { store, stateDir, runtime };
}

/** Start `intent` in a world of its own (`edit` changes the seed world first). */
async function run(intent: string, edit?: (world: TravelState) => void, options: Partial<RuntimeOptions> = {}) {
  const t = travel(options);
  const start = { tenant: 'gap', seed: '11', asOf: AS_OF };
  const id = Runtime.defaultId(intent, start);
  const world = initialTravelState();
  edit?.(world);
  seedTravelState(join(t.stateDir, id, TRAVEL_STATE_FILE), world);
  const handle = await t.runtime.start(intent, { ...start, id });
  return { ...t, id, result: await handle.done };
}

const inEpoch = (records: JournalRecord[], epoch: number, kind: string) => records.filter((r) => r.epoch === epoch && r.kind === kind).map((r) => r.body as Body);
const fareTo = (world: TravelState, to: string, price: number) => {
  world.catalogue.taxis = world.catalogue.taxis!.map((t) => (t.to === to ? { ...t, price } : t));
};

describe('the taxi intents from the command line', () => {
  beforeAll(() => assertBuilt());

  test('Lisbon, Porto and Madrid complete with an authored epoch, no person; the journal replays to its fingerprint', async () => {
    const expected = { lisbon: ['h-alfama', 120, 35], porto: ['h-infante', 490, 28], madrid: ['h-prado', 220, 42] } as const;
    for (const [city, intent] of Object.entries(TRAVEL_TRANSFER_INTENTS) as Array<[keyof typeof expected, string]>) {
      const dir = join(root, `cli-${city}`);
      const out = await weft(['run', 'travel', intent, '--seed', '11', '--as-of', AS_OF, '--dir', dir, '--json']);
      expect(out.code, out.stderr).toBe(0);
      const line = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { status: string; journal: string; fingerprint: string };
      expect(line.status, city).toBe('completed');
      const records = readFileSync(line.journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as JournalRecord);
      const derived = records.filter((r) => r.kind === 'epoch.derived').map((r) => [(r.body as Body).source, ((r.body as Body).goal as Body).task]);
      expect(derived).toEqual([['htn', 'find_options'], ['htn', 'book_trip'], ['authored', 'book_transfer']]);
      const [hotel, left, fare] = expected[city];
      const booked = inEpoch(records, 3, 'step.dispatched').map((b) => [b.actuator, b.args]);
      expect(booked).toEqual([
        ['taxi.quote', { from: `${city}-airport`, to: hotel, day: parseTransferIntent(intent)!.day }],
        ['taxi.book', { traveller: 'me', from: `${city}-airport`, to: hotel, day: parseTransferIntent(intent)!.day, amount: fare }],
      ]);
      expect((inEpoch(records, 3, 'epoch.derived')[0]!.goal as Body).args).toEqual(['me', `${city}-airport`, hotel, parseTransferIntent(intent)!.day, left]);
      const replayed = await weft(['replay', line.journal, '--json']);
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(JSON.parse(replayed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ fingerprint: line.fingerprint });
    }
  });
});

describe('the authored epoch in the journal', () => {
  test('records the authoring request (goal, explanation) and the reply, the observation it read, and the certified fragment as authored; replay reproduces every byte', async () => {
    const { runtime, id, result, stateDir, store } = await run(TRAVEL_TRANSFER_INTENTS.lisbon);
    expect(result.status).toBe('completed');
    const records = await store.read(id);
    const goal = { task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', 12, 120] };
    const observed = inEpoch(records, 3, 'state.observed')[0]!;
    expect((observed.state as { facts: unknown[] }).facts).toContainEqual(['taxi-fare', 'lisbon-airport', 'h-alfama', 35]);
    expect(inEpoch(records, 3, 'admission.decided')[0]).toEqual({ subject: 'authoring', decision: 'allow', policy: travelPackPolicy.id, rule: 'weft:default' });
    const asked = inEpoch(records, 3, 'model.requested').filter((b) => b.purpose === 'author');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.request).toMatchObject({ epoch: 3, goal, explanation: expect.stringContaining('no method covers book_transfer') });
    const reply = inEpoch(records, 3, 'model.completed').find((b) => b.purpose === 'author')!;
    expect(JSON.parse(reply.reply as string)).toEqual({
      steps: [
        { operator: 'quote_taxi', args: ['me', 'lisbon-airport', 'h-alfama', 12] },
        { operator: 'book_taxi', args: ['me', 'lisbon-airport', 'h-alfama', 12, 35] },
      ],
    });
    expect(inEpoch(records, 3, 'epoch.derived')).toEqual([expect.objectContaining({ source: 'authored', goal, steps: 2 })]);
    expect(inEpoch(records, 3, 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({ decision: 'allow' });
    expect(inEpoch(records, 3, 'epoch.closed')).toEqual([{ outcome: 'completed', steps: 2 }]);
    expect(readTravelState(join(stateDir, id, TRAVEL_STATE_FILE)).transfers).toEqual([
      expect.objectContaining({ traveller: 'me', from: 'lisbon-airport', to: 'h-alfama', day: 12, amount: 35, status: 'booked' }),
    ]);
    const replay = await runtime.replay(id);
    expect(replay).toMatchObject({ status: 'completed', fingerprint: result.fingerprint, records: records.length });
  });

  test('the scripted author derives the fragment from the request, not from memorised constants', async () => {
    const model = new TravelScriptedModel(travelTranscript);
    const request = (goal: ModelRequest['goal'], facts: unknown[][]): ModelRequest => ({
      purpose: 'author', intent: TRAVEL_TRANSFER_INTENTS.porto, epoch: 3, outcomes: [], tasks: [], goal, state: { objects: [], facts },
    });
    const reply = await model.complete(request({ task: 'book_transfer', args: ['me', 'porto-airport', 'h-bolhao', 20, 77] }, [['taxi-fare', 'porto-airport', 'h-bolhao', 61]]));
    expect(JSON.parse(reply.text).steps).toEqual([
      { operator: 'quote_taxi', args: ['me', 'porto-airport', 'h-bolhao', 20] },
      { operator: 'book_taxi', args: ['me', 'porto-airport', 'h-bolhao', 20, 61] },
    ]);
    await expect(model.complete(request({ task: 'book_transfer', args: ['me', 'porto-airport', 'h-bolhao', 20, 77] }, []))).rejects.toThrow(/model\.no_scripted_reply|no reply/);
  });
});

describe('admission of the authored ride', () => {
  test('a ride over the 80 EUR allowance for authored bookings waits for a person; approved, it is booked', async () => {
    const { runtime, id, result, stateDir, store } = await run(TRAVEL_TRANSFER_INTENTS.lisbon, (w) => fareTo(w, 'h-alfama', 95));
    expect(result.status).toBe('awaiting_approval');
    const records = await store.read(id);
    expect(inEpoch(records, 3, 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({
      decision: 'require_approval',
      reason: expect.stringMatching(/authored this fragment \(no method covers book_transfer\) and it has 1 world effect\(s\) spending 95, above the 80/),
      rule: 'model-taxi-allowance',
    });
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
    expect(readTravelState(join(stateDir, id, TRAVEL_STATE_FILE)).transfers).toEqual([]);
    const done = await (await runtime.approve(id, { decision: 'approved', by: 'ana' })).done;
    expect(done.status).toBe('completed');
    expect(readTravelState(join(stateDir, id, TRAVEL_STATE_FILE)).transfers).toEqual([expect.objectContaining({ amount: 95, status: 'booked' })]);
    expect((await runtime.replay(id)).fingerprint).toBe(done.fingerprint);
  });

  test("a ride over the goal's budget breaks book_transfer's constraint: refused at admission, nothing dispatched", async () => {
    // Lisbon leaves 120 of the 900 after the trip; a 150 EUR ride is over it.
    const { id, result, stateDir, store } = await run(TRAVEL_TRANSFER_INTENTS.lisbon, (w) => fareTo(w, 'h-alfama', 150));
    const records = await store.read(id);
    expect(inEpoch(records, 3, 'epoch.derived')[0]).toMatchObject({ source: 'authored' });
    expect(inEpoch(records, 3, 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({
      decision: 'deny',
      reason: `book_transfer's constraint "sum of taxi.book amount ≤ ?budget" fails: 150 > 120`,
    });
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
    expect(inEpoch(records, 3, 'epoch.certified')).toEqual([]);
    expect(readTravelState(join(stateDir, id, TRAVEL_STATE_FILE)).transfers).toEqual([]);
    expect(result.status).not.toBe('awaiting_approval');
  });

  test("a ride within the budget but over the envelope's 2000 cap per invocation is refused, nothing dispatched", async () => {
    const intent = 'Take me to Lisbon for the conference on the 12th, under 3000 EUR, and book me a taxi from the airport';
    const { id, stateDir, store } = await run(intent, (w) => fareTo(w, 'h-alfama', 1300));
    const records = await store.read(id);
    // Under 3000 the planner's first binding is another flight (930 in all): 2070 left for the ride.
    expect((inEpoch(records, 3, 'epoch.derived')[0]!.goal as Body).args).toEqual(['me', 'lisbon-airport', 'h-alfama', 12, 2070]);
    expect(inEpoch(records, 3, 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({
      decision: 'deny',
      reason: expect.stringMatching(/would spend 1300 with 930 already spent .*caps amount at 2000 per invocation/),
    });
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
    expect(readTravelState(join(stateDir, id, TRAVEL_STATE_FILE)).transfers).toEqual([]);
  });

  test('an authored fragment with a step outside the task (a hotel search) is refused by the constraints; nothing dispatched', async () => {
    const inner = new TravelScriptedModel(travelTranscript);
    const model: Model = {
      id: inner.id,
      params: inner.params,
      async complete(request) {
        if (request.purpose !== 'author') return inner.complete(request);
        const [t, from, to, day] = request.goal!.args;
        return { text: JSON.stringify({ steps: [{ operator: 'search_hotels', args: ['lisbon', 12] }, { operator: 'quote_taxi', args: [t, from, to, day] }, { operator: 'book_taxi', args: [t, from, to, day, 35] }] }) };
      },
    };
    const { id, store } = await run(TRAVEL_TRANSFER_INTENTS.lisbon, undefined, { model });
    const records = await store.read(id);
    expect(inEpoch(records, 3, 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({
      decision: 'deny',
      reason: expect.stringMatching(/^book_transfer's constraint "only taxi\.quote, taxi\.book" fails: step 0 \(search_hotels\) dispatches hotels\.search/),
    });
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
  });

  test('a fragment whose amount is not the observed fare does not apply: rejected, recorded, re-prompted — never dispatched', async () => {
    const inner = new TravelScriptedModel(travelTranscript);
    const model: Model = {
      id: inner.id,
      params: inner.params,
      async complete(request) {
        if (request.purpose !== 'author') return inner.complete(request);
        const [t, from, to, day] = request.goal!.args;
        return { text: JSON.stringify({ steps: [{ operator: 'quote_taxi', args: [t, from, to, day] }, { operator: 'book_taxi', args: [t, from, to, day, 5] }] }) };
      },
    };
    const { id, store, result } = await run(TRAVEL_TRANSFER_INTENTS.lisbon, undefined, { model });
    const records = await store.read(id);
    const rejected = inEpoch(records, 3, 'model.rejected');
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected[0]!.reason).toMatch(/the fragment does not apply in the observed state/);
    expect(inEpoch(records, 3, 'epoch.derived')).toEqual([]);
    expect(inEpoch(records, 3, 'step.dispatched')).toEqual([]);
    expect(result.status).toBe('handed_off');
  });
});

describe('runs started before the taxi', () => {
  test('a travel run hibernated on the library and policy before the taxi resumes on today\'s domain to the uninterrupted fingerprint', async () => {
    const blobs = join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v2', 'blobs');
    const old = JSON.parse(readFileSync(join(blobs, '699f5b73111658226cd8ecc4ee880a3dd1fdc96186acc34105bef49131ea5e50'), 'utf8')) as Library;
    const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
    const at = (name: string) => ({ store: new FileStore(join(root, 'before-taxi', name, 'store')), stateDir: join(root, 'before-taxi', name, 'state') });
    // The domain as it was: the old library, policy v2, and no taxi actuators (so only card.charge spends).
    const before = (w: ReturnType<typeof at>) => {
      const actuators = travelActuators({ state: fileStateBackend((inv) => join(w.stateDir, inv, TRAVEL_STATE_FILE)) }).filter((a) => !a.name.startsWith('taxi.'));
      return createRuntime({ store: w.store, domain: travelDomain, libraries: [old], policy: travelPolicyV2, policies: [], actuators, stateDir: w.stateDir, signingKey: key, sleep: async () => undefined });
    };
    const start = { tenant: 'old', seed: '3', asOf: AS_OF };
    const whole = await (await before(at('whole')).start(travelDomain.intent!, start)).done;
    expect(whole.status).toBe('completed');
    const w = at('paused');
    const handle = await before(w).start(travelDomain.intent!, start);
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    const pinned = (await w.store.read(handle.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin).toMatchObject({ library: libraryDigest(old), policy: 'spend-approval@2', spenders: [{ actuator: 'card.charge', arg: 'amount' }] });
    // Today's domain declares taxi.book spends too; the old library never binds it, so the pin still holds.
    const today = createRuntime({ store: w.store, domain: travelDomain, stateDir: w.stateDir, signingKey: key, sleep: async () => undefined });
    const resumed = await (await today.resume(handle.id)).done;
    expect(resumed).toMatchObject({ status: 'completed', fingerprint: whole.fingerprint });
    expect((await today.replay(handle.id)).fingerprint).toBe(resumed.fingerprint);
  });
});
