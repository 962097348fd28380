/**
 * Issue 23, defect 2: a policy that answers `require_approval` to the gap path's authoring call.
 * Under behaviour flag 5 the run asks a person: `approval.requested` {subject: 'authoring'}, it
 * rests awaiting approval (listed with the policy's reason), and a person's decision — taken by
 * another runtime over the same store, as a second process would — goes on: approved, the model
 * is asked to author (the call is not admitted again) and the fragment runs; rejected, the epoch
 * closes denied and the model is asked for another goal. A journal pinned before flag 5 is handed
 * off as before and replays as written on today's runtime.
 *
 * Scenario (travel): epoch 1 searches; epoch 2 asks for a book_trip under a budget no method
 * covers (the gap path); the model would author a read-only fragment; epoch 3 is done.
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
import { FLAG_AUTHORING_APPROVAL } from '../machines/flags.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { createRuntime, describeInvocation } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(11));
const root = mkdtempSync(path.join(tmpdir(), 'weft-authoring-approval-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;
const WHY = 'a person reviews what the model may author for this tenant';
/** Below every trip total the searches find: no method covers book_trip. */
const gapGoal = { task: 'book_trip', args: ['me', 'lisbon', 12, 300] };

const policy: AdmissionPolicy = {
  ...travelPolicy,
  id: 'review-authoring@1',
  admitEpoch: (request) => travelPolicy.admitEpoch(request),
  admitAuthoring: () => ({ decision: 'require_approval', reason: WHY }),
};

/** Epoch 1 searches, epoch 2 names the uncovered book_trip, the authored fragment is a read-only search, then done. */
class GapModel implements Model {
  readonly id = 'scripted:authoring-approval';
  readonly params = {};
  readonly purposes: string[] = [];
  async complete(request: ModelRequest) {
    this.purposes.push(`${request.epoch}:${request.purpose}`);
    if (request.purpose === 'author') return { text: JSON.stringify({ steps: [{ operator: 'search_hotels', args: ['lisbon', 12] }] }) };
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? gapGoal : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'looked again; nothing booked' }) };
  }
}

function runtimeOver(create: typeof createRuntime, storeDir: string, model: Model) {
  const stateDir = path.join(root, 'state');
  return create({ store: new FileStore(storeDir), domain: travelDomain, stateDir, actuators: travelDomain.actuators({ stateDir }), model, policy, policies: [travelPolicy], signingKey: key, sleep: async () => undefined });
}
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });
/** The invocation's travel world (its own file under the shared state folder). */
const worldOf = (id: string) => readTravelState(path.join(root, 'state', id, 'providers.json'));
/** Epoch 2's records as `kind[:detail]`, from the authoring admission on. */
const epoch2 = (records: JournalRecord[]) =>
  records
    .filter((r) => r.epoch === 2)
    .map((r) => {
      const b = r.body as Body;
      if (r.kind === 'admission.decided') return `admission:${b.subject}:${b.decision}`;
      if (r.kind === 'model.requested' || r.kind === 'model.completed') return `${r.kind}:${b.purpose}`;
      if (r.kind === 'approval.decided') return `approval.decided:${b.decision}`;
      if (r.kind === 'epoch.closed') return `epoch.closed:${b.outcome}`;
      return r.kind;
    })
    .filter((k, i, all) => i >= all.indexOf('admission:authoring:require_approval'));

/** Starts the gap run and checks it rests awaiting a person's decision on the authoring call. */
async function startWaiting(seed: string) {
  const dir = mkdtempSync(path.join(root, 'store-'));
  const model = new GapModel();
  const runtime = runtimeOver(createRuntime, dir, model);
  const handle = await runtime.start(TRAVEL_INTENT, start(seed));
  const waiting = await handle.done;
  expect(waiting).toMatchObject({ status: 'awaiting_approval', reason: WHY });
  const records = await runtime.store.read(handle.id);
  expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toContain(FLAG_AUTHORING_APPROVAL);
  expect(records.at(-1)!).toMatchObject({ kind: 'approval.requested', epoch: 2, body: { subject: 'authoring', reason: WHY } });
  expect(records.find((r) => r.kind === 'admission.decided' && (r.body as Body).subject === 'authoring')!.body).toEqual({ subject: 'authoring', decision: 'require_approval', policy: policy.id, reason: WHY });
  expect(model.purposes).not.toContain('2:author');
  const listed = (await runtime.list()).find((s) => s.id === handle.id);
  expect(listed).toMatchObject({ status: 'awaiting_approval', reason: WHY, approvalOf: 'authoring' });
  expect(listed!.approvalSteps).toBeUndefined();
  // What `weft show` says it waits for, and what each command does.
  const described = await describeInvocation(runtime.store, handle.id);
  expect(described.waiting).toMatchObject({ kind: 'approval', reason: WHY, plan: null, steps: null });
  expect(described.commands.map((c) => c.does)).toEqual([
    'let the model author a fragment for the goal (each of its steps is still admitted)',
    'refuse: the epoch closes as denied and the model is asked for another goal',
  ]);
  // Resting, the run has only searched: nothing is held or charged.
  const world = worldOf(handle.id);
  expect({ holds: world.holds, charges: world.charges }).toEqual({ holds: [], charges: [] });
  return { dir, id: handle.id, world };
}

describe('approval before authoring (issue 23, defect 2)', () => {
  test('under flag 5: the run rests awaiting approval; approved from another runtime, the model authors, the fragment runs, replay gives the same fingerprint', async () => {
    const { dir, id, world } = await startWaiting('authoring-granted');
    const model = new GapModel();
    const other = runtimeOver(createRuntime, dir, model);
    const done = await (await other.approve(id, { decision: 'approved', by: 'ops', note: 'go ahead' })).done;
    expect(done.status).toBe('completed');
    const records = await other.store.read(id);
    expect(epoch2(records)).toEqual([
      'admission:authoring:require_approval',
      'approval.requested',
      'approval.decided:approved',
      'model.requested:author',
      'model.completed:author',
      'epoch.derived',
      'admission:epoch:allow',
      'epoch.certified',
      'admission:step:allow',
      'step.dispatched',
      'step.completed',
      'epoch.closed:completed',
    ]);
    // Approved once: the authoring call is not admitted again after the decision.
    expect(records.filter((r) => r.kind === 'admission.decided' && (r.body as Body).subject === 'authoring')).toHaveLength(1);
    expect(records.find((r) => r.kind === 'approval.decided')!.body).toEqual({ decision: 'approved', by: 'ops', note: 'go ahead' });
    expect(model.purposes).toEqual(['2:author', '3:parse']);
    // The authored fragment was a read-only search: the world is as it was while the run waited,
    // but for the search's own ledger entry (applied once, under its key).
    const after = worldOf(id);
    expect({ ...after, ledger: {} }).toEqual({ ...world, ledger: {} });
    expect(Object.entries(after.ledger).filter(([key]) => !(key in world.ledger)).map(([key, e]) => [key, e.actuator, e.applied])).toEqual([[`${id}.2.0`, 'hotels.search', 1]]);
    expect(await other.replay(id)).toMatchObject({ status: 'completed', sealed: true, fingerprint: done.fingerprint });
    expect(await other.verify(id, publicKeyOf(key))).toMatchObject({ ok: true });
  });

  test('under flag 5: rejected, the epoch closes denied without asking the model to author, the model is asked for another goal; replay gives the same fingerprint', async () => {
    const { dir, id, world } = await startWaiting('authoring-refused');
    const model = new GapModel();
    const other = runtimeOver(createRuntime, dir, model);
    const done = await (await other.approve(id, { decision: 'rejected', by: 'ops', note: 'not today' })).done;
    expect(done.status).toBe('completed');
    const records = await other.store.read(id);
    expect(epoch2(records)).toEqual(['admission:authoring:require_approval', 'approval.requested', 'approval.decided:rejected', 'epoch.closed:denied']);
    expect(records.some((r) => r.kind === 'model.requested' && (r.body as Body).purpose === 'author')).toBe(false);
    // What the model sees when it forms the next goal: the epoch was denied, by whom and why.
    const next = records.find((r) => r.epoch === 3 && r.kind === 'model.requested')!.body as Body;
    expect(next.request.outcomes.at(-1)).toMatchObject({ epoch: 2, outcome: 'denied', reason: 'rejected by ops: not today' });
    expect(model.purposes).toEqual(['3:parse']);
    expect(worldOf(id)).toEqual(world);
    expect(await other.replay(id)).toMatchObject({ status: 'completed', sealed: true, fingerprint: done.fingerprint });
    expect(await other.verify(id, publicKeyOf(key))).toMatchObject({ ok: true });
  });

  test('a journal pinned before flag 5 is handed off as before, and replays as written on today\'s runtime', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => ({ ...(await original<typeof import('../machines/flags.js')>()), IMPLEMENTED_FLAGS: [1, 2, 4] }));
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const old = runtimeOver(older, dir, new GapModel());
    const handle = await old.start(TRAVEL_INTENT, start('authoring-old'));
    const result = await handle.done;
    expect(result.status).toBe('handed_off');
    const records = await old.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toEqual([1, 2, 4]);
    expect(epoch2(records)).toEqual(['admission:authoring:require_approval', 'invocation.handed_off', 'invocation.sealed']);

    const today = runtimeOver(createRuntime, dir, new GapModel());
    expect(await today.replay(handle.id)).toMatchObject({ status: 'handed_off', sealed: true, fingerprint: result.fingerprint });
    expect(await today.verify(handle.id, publicKeyOf(key))).toMatchObject({ ok: true });
  });
});
