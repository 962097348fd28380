/**
 * Issue 23, defect 1: a step denied at dispatch after earlier steps of its epoch applied world
 * effects. Under behaviour flag 4 those effects are compensated in reverse order, the frontier is
 * truncated and the epoch closed `compensated` with the denial as its reason; the run then re-plans
 * (here the model says it is done). A journal pinned before flag 4 — written by a runtime that did
 * not implement it — keeps its behaviour (the invocation fails `step.denied` with the holds left
 * applied) and replays on today's runtime to its own fingerprint.
 *
 * Scenario (travel): epoch 1 searches; epoch 2 books — airline.hold (step 0) and hotel.hold
 * (step 1) run, then the policy's `admitStep` denies card.charge (step 2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelPolicy } from '../examples/travel/app.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { FLAG_DENIED_STEP_COMPENSATED } from '../machines/flags.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { createRuntime } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(11));
const root = mkdtempSync(path.join(tmpdir(), 'weft-denied-step-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;
const DENIAL = 'charges need a second signature today';

/** travelPolicy, except that card.charge is denied at dispatch. */
const policy: AdmissionPolicy = {
  ...travelPolicy,
  id: 'no-charge-at-dispatch@1',
  admitEpoch: (request) => travelPolicy.admitEpoch(request),
  admitStep: ({ step }) => (step.actuator === 'card.charge' ? { decision: 'deny', reason: DENIAL } : { decision: 'allow' }),
};

/** Epoch 1 searches, epoch 2 books, then done (after the booking was denied). */
const model: Model = {
  id: 'scripted:denied-step',
  params: {},
  async complete(request: ModelRequest) {
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? TRAVEL_GOALS.bookTrip : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'the booking was denied; nothing is held' }) };
  },
};

type CreateRuntime = typeof createRuntime;
function runtimeOver(create: CreateRuntime, storeDir: string) {
  const stateDir = mkdtempSync(path.join(root, 'state-'));
  const runtime = create({ store: new FileStore(storeDir), domain: travelDomain, stateDir, actuators: travelDomain.actuators({ stateDir }), model, policy, policies: [travelPolicy], signingKey: key, sleep: async () => undefined });
  return { runtime, stateDir };
}
const holdsOf = (stateDir: string, id: string) => readTravelState(path.join(stateDir, id, 'providers.json')).holds.map((h) => `${h.kind}:${h.status}`);
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });
/** The epoch's records from the denial on, as `kind[#step]`. */
const trail = (records: JournalRecord[], epoch: number) => {
  const inEpoch = records.filter((r) => r.epoch === epoch);
  const from = inEpoch.findIndex((r) => r.kind === 'admission.decided' && (r.body as Body).subject === 'step' && (r.body as Body).decision === 'deny');
  return inEpoch.slice(from).map((r) => ((r.body as Body).step === undefined ? r.kind : `${r.kind}#${(r.body as Body).step}`));
};

describe('a step denied at dispatch after effects (issue 23, defect 1)', () => {
  test('under flag 4: the two holds are released in reverse order, the epoch closes compensated, the run re-plans; replay gives the same fingerprint', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(createRuntime, dir);
    const handle = await runtime.start(TRAVEL_INTENT, start('denied-new'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toContain(FLAG_DENIED_STEP_COMPENSATED);

    expect(trail(records, 2)).toEqual([
      'admission.decided#2',
      'compensation.dispatched#1',
      'compensation.completed#1',
      'compensation.dispatched#0',
      'compensation.completed#0',
      'frontier.truncated',
      'epoch.closed',
    ]);
    const epoch2 = records.filter((r) => r.epoch === 2);
    // Steps 0 and 1 were allowed at dispatch (recorded under flag 9), step 2 denied.
    const stepAdmissions = epoch2.filter((r) => r.kind === 'admission.decided' && (r.body as Body).subject === 'step');
    expect(stepAdmissions.map((r) => `${(r.body as Body).step}:${(r.body as Body).decision}`)).toEqual(['0:allow', '1:allow', '2:deny']);
    expect(stepAdmissions.at(-1)!.body).toEqual({ subject: 'step', step: 2, decision: 'deny', policy: policy.id, reason: DENIAL });
    expect(epoch2.filter((r) => r.kind === 'step.dispatched').map((r) => (r.body as Body).actuator)).toEqual(['airline.hold', 'hotel.hold']);
    expect(epoch2.filter((r) => r.kind === 'compensation.completed').map((r) => (r.body as Body).failure)).toEqual([undefined, undefined]);
    expect(epoch2.find((r) => r.kind === 'frontier.truncated')!.body).toMatchObject({ reason: DENIAL });
    expect(epoch2.find((r) => r.kind === 'epoch.closed')!.body).toEqual({ outcome: 'compensated', steps: 2 });
    // The run went on: epoch 3 asked the model, which said it was done.
    expect(records.some((r) => r.epoch === 3 && r.kind === 'invocation.completed')).toBe(true);
    expect(records.some((r) => r.kind === 'invocation.failed')).toBe(false);

    // The world: both holds were placed and both released; nothing charged.
    expect(holdsOf(stateDir, handle.id).sort()).toEqual(['flight:released', 'hotel:released']);
    expect(readTravelState(path.join(stateDir, handle.id, 'providers.json')).charges).toEqual([]);

    const replayed = await runtime.replay(handle.id);
    expect(replayed).toMatchObject({ status: 'completed', sealed: true, fingerprint: result.fingerprint });
    // Offline: the chain and the seal check against the public key alone.
    expect(await runtime.verify(handle.id, publicKeyOf(key))).toMatchObject({ ok: true });
  });

  test('a journal pinned before flag 4 fails step.denied with the holds left applied, and replays as written on today\'s runtime', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    // A weft that did not implement flag 4: the same code with flags 1 and 2 only.
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => ({ ...(await original<typeof import('../machines/flags.js')>()), IMPLEMENTED_FLAGS: [1, 2] }));
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const { runtime: old, stateDir } = runtimeOver(older, dir);
    const handle = await old.start(TRAVEL_INTENT, start('denied-old'));
    const result = await handle.done;
    expect(result.status).toBe('failed');
    const records = await old.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toEqual([1, 2]);
    expect(trail(records, 2)).toEqual(['admission.decided#2', 'invocation.failed', 'invocation.sealed']);
    expect(records.find((r) => r.kind === 'invocation.failed')!.body).toMatchObject({ code: 'step.denied', class: 'policy', reason: DENIAL });
    expect(holdsOf(stateDir, handle.id).sort()).toEqual(['flight:held', 'hotel:held']);

    // Today's runtime (flags 1, 2 and 4) replays it under the journal's flags.
    const { runtime: today } = runtimeOver(createRuntime, dir);
    const replayed = await today.replay(handle.id);
    expect(replayed).toMatchObject({ status: 'failed', sealed: true, fingerprint: result.fingerprint });
    expect((await today.store.read(handle.id)).length).toBe(records.length);
    expect(await today.verify(handle.id, publicKeyOf(key))).toMatchObject({ ok: true });
  });
});
