/**
 * Cancel (issue 23, "Cancel and deadlines"). Each scenario asserts the journal's records, the
 * world's final state, and that the journal replays to the same fingerprint and verifies offline:
 *
 * - a running invocation cancelled mid-epoch from a second process (`weft cancel`, a child process):
 *   the holder sees the request in the inbox before its next step, records `cancel.requested`,
 *   compensates the epoch's two holds in reverse order and ends cancelled, sealed;
 * - a hibernated one: the canceller takes it up; the effects of the epoch already closed stay done
 *   and `invocation.cancelled` lists them; a second cancel writes nothing;
 * - a sleeping one (`weft.sleep`): the charge before the sleep is compensated;
 * - one awaiting approval with a cancel waiting in its inbox: approve is refused, resume cancels it;
 * - a crash right after `cancel.requested` is durable: replay says unfinished, resume finishes it;
 * - a compensation that fails for good during a cancel: handed off, with the trail;
 * - a holder that does not answer in time (stuck in a step): the canceller says so, the request
 *   stays in the inbox and the holder acts on it once the step returns;
 * - serve cancels a resting invocation whose cancel waits in its inbox;
 * - the tenant check: another tenant's id is unknown, and its inbox is not written.
 *
 * Scenario (travel): epoch 1 searches (read-only), epoch 2 books — airline.hold (step 0),
 * hotel.hold (step 1), card.charge (step 2) …
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ActuatorError, type Actuator } from '../actors/actuator.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import { LibraryBuilder, add, atom, not } from '../htn/library/builder.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, describeInvocation, RuntimeUsageError } from '../runtime/index.js';
import { assertBuilt, weft } from './support/cli.js';
import { newLedger, notifyActuators } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(23));
const root = mkdtempSync(path.join(tmpdir(), 'weft-cancel-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;
const label = (r: JournalRecord) => ((r.body as Body).step === undefined ? r.kind : `${r.kind}#${(r.body as Body).step}`);

/** Epoch 1 searches, epoch 2 books, then done. */
const model: Model = {
  id: 'scripted:cancel',
  params: {},
  async complete(request: ModelRequest) {
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? TRAVEL_GOALS.bookTrip : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'booked' }) };
  },
};

/** The travel domain over a file store; `gate`: the named actuator waits for it before its effect. */
function travelRuntime(storeDir: string, gate?: { actuator: string; open: Promise<void> }) {
  const stateDir = mkdtempSync(path.join(root, 'state-'));
  const actuators = travelDomain.actuators({ stateDir }).map((a): Actuator =>
    gate && a.name === gate.actuator ? { ...a, run: async (args, ctx) => (await gate.open, a.run.call(a, args, ctx)) } : a,
  );
  const runtime = createRuntime({ store: new FileStore(storeDir), domain: travelDomain, stateDir, actuators, model, signingKey: key, sleep: async () => undefined });
  return { runtime, stateDir };
}
const providers = (stateDir: string, id: string) => readTravelState(path.join(stateDir, id, 'providers.json'));
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Charge a person, sleep until a time (`weft.sleep`), then message them. */
function sleepLibrary() {
  return new LibraryBuilder('charge-then-remind')
    .type('person')
    .predicate('reachable', { '?p': 'person' })
    .predicate('charged', { '?p': 'person' })
    .predicate('waited', { '?p': 'person' })
    .predicate('notified', { '?p': 'person' })
    .task('charge_then_remind', { '?p': 'person', '?when': 'number' })
    .operator('charge', { params: { '?p': 'person' }, precondition: not(atom('charged', '?p')), effect: add('charged', '?p'), actuator: { actuator: 'card.charge', args: { who: '?p', amount: 10 } } })
    .operator('wait_until', { params: { '?p': 'person', '?when': 'number' }, precondition: not(atom('waited', '?p')), effect: add('waited', '?p'), actuator: { actuator: 'weft.sleep', args: { until: '?when' } }, readOnly: true })
    .operator('send', { params: { '?p': 'person' }, precondition: atom('reachable', '?p'), effect: add('notified', '?p'), actuator: { actuator: 'msg.send', args: { to: '?p' } } })
    .method('m', { task: ['charge_then_remind', '?p', '?when'], params: { '?p': 'person', '?when': 'number' }, subtasks: [['charge', '?p'], ['wait_until', '?p', '?when'], ['send', '?p']] })
    .build();
}

describe('cancel', () => {
  test('a running invocation cancelled mid-epoch from a second process: every effect of the epoch compensated, in reverse order', async () => {
    assertBuilt();
    const dir = mkdtempSync(path.join(root, 'store-'));
    let open!: () => void;
    const gate = { actuator: 'hotel.hold', open: new Promise<void>((resolve) => (open = resolve)) };
    const { runtime, stateDir } = travelRuntime(dir, gate);
    const handle = await runtime.start(TRAVEL_INTENT, start('mid-epoch'));
    // The hotel hold is dispatched (the flight hold done) and waits at the gate: the run is mid-epoch.
    await until('hotel.hold dispatched', async () => ((await runtime.store.read(handle.id)).some((r) => r.kind === 'step.dispatched' && (r.body as Body).actuator === 'hotel.hold') ? true : undefined));
    const canceller = weft(['cancel', handle.id, '--dir', dir, '--tenant', 't1', '--reason', 'the trip is off', '--by', 'ops', '--json']);
    await until('the cancel in the inbox', async () => ((await runtime.store.peekInbox(handle.id))?.type === 'cancel' ? true : undefined));
    open();
    const result = await handle.done;
    expect(result.status).toBe('cancelled');
    expect(result.cancelled).toEqual({ by: 'ops', reason: 'the trip is off', kept: [] });

    const cli = await canceller;
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout.trim().split('\n').at(-1)!)).toMatchObject({ id: handle.id, status: 'cancelled', fingerprint: result.fingerprint, kept: [], by: 'ops' });

    const records = await runtime.store.read(handle.id);
    const epoch2 = records.filter((r) => r.epoch === 2);
    const from = epoch2.findIndex((r) => r.kind === 'cancel.requested');
    expect(epoch2.slice(from - 1).map(label)).toEqual([
      'step.completed#1',
      'cancel.requested',
      'compensation.dispatched#1',
      'compensation.completed#1',
      'compensation.dispatched#0',
      'compensation.completed#0',
      'invocation.cancelled',
      'invocation.sealed',
    ]);
    expect(epoch2[from]!.body).toMatchObject({ by: 'ops', reason: 'the trip is off' });
    expect(epoch2.filter((r) => r.kind === 'step.dispatched').map((r) => (r.body as Body).actuator)).toEqual(['airline.hold', 'hotel.hold']);
    expect(records.find((r) => r.kind === 'invocation.cancelled')!.body).toEqual({ by: 'ops', reason: 'the trip is off', kept: [] });
    expect(await runtime.store.peekInbox(handle.id)).toBeUndefined();

    // The world: both holds placed and released, nothing charged.
    expect(providers(stateDir, handle.id).holds.map((h) => `${h.kind}:${h.status}`).sort()).toEqual(['flight:released', 'hotel:released']);
    expect(providers(stateDir, handle.id).charges).toEqual([]);

    expect(await runtime.replay(handle.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
    expect((await runtime.verify({ journalPath: runtime.journalPath(handle.id)! }, publicKeyOf(key))).ok).toBe(true);
    expect((await runtime.list()).find((row) => row.id === handle.id)?.status).toBe('cancelled');
    // weft show (and the viewer): the epoch ended cancelled, its two holds undone.
    const described = await describeInvocation(runtime.store, handle.id);
    expect(described.epochs.at(-1)).toMatchObject({ epoch: 2, outcome: 'cancelled' });
    expect(described.epochs.at(-1)!.steps.slice(0, 2).map((st) => st.outcome)).toEqual(['compensated', 'compensated']);
  });

  test('a holder that does not answer in time: the canceller says so, the request stays in the inbox, and the holder acts on it later', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    let open!: () => void;
    const gate = { actuator: 'hotel.hold', open: new Promise<void>((resolve) => (open = resolve)) };
    const { runtime, stateDir } = travelRuntime(dir, gate);
    const handle = await runtime.start(TRAVEL_INTENT, start('unanswered'));
    await until('hotel.hold dispatched', async () => ((await runtime.store.read(handle.id)).some((r) => r.kind === 'step.dispatched' && (r.body as Body).actuator === 'hotel.hold') ? true : undefined));
    // The holder is stuck in the hotel hold: it cannot look at its inbox before that step returns.
    const { runtime: canceller } = travelRuntime(dir);
    await expect(canceller.cancel(handle.id, { reason: 'stuck', by: 'ops', waitMs: 300, pollMs: 20 })).rejects.toMatchObject({ code: 'runtime.cancel_unanswered' });
    expect(await runtime.store.peekInbox(handle.id)).toMatchObject({ type: 'cancel', by: 'ops', reason: 'stuck' });
    open();
    const result = await handle.done;
    expect(result).toMatchObject({ status: 'cancelled', cancelled: { by: 'ops', reason: 'stuck', kept: [] } });
    expect(providers(stateDir, handle.id).holds.map((h) => h.status)).toEqual(['released', 'released']);
    expect(await runtime.replay(handle.id)).toMatchObject({ status: 'cancelled', fingerprint: result.fingerprint });
  });

  test('serve cancels a resting invocation whose cancel waits in its inbox', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime } = travelRuntime(dir);
    const handle = await runtime.start(TRAVEL_INTENT, start('serve'));
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    await runtime.store.putInbox(handle.id, { type: 'cancel', by: 'ops', reason: 'left to serve', at: Date.parse('2026-06-01T10:00:00Z') });
    const stop = new AbortController();
    const serving = runtime.serve({ signal: stop.signal, pollMs: 10 });
    try {
      await until('the cancel sealed by serve', async () => ((await runtime.store.tail(handle.id))?.kind === 'invocation.sealed' ? true : undefined));
    } finally {
      stop.abort();
      await serving;
    }
    const records = await runtime.store.read(handle.id);
    expect(records.slice(-3).map((r) => r.kind)).toEqual(['cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
    expect(await runtime.replay(handle.id)).toMatchObject({ status: 'cancelled', sealed: true });
  });

  test('a hibernated invocation: cancelled where it rests; the closed epoch\'s effects stay done and are listed', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = travelRuntime(dir);
    const handle = await runtime.start(TRAVEL_INTENT, start('hibernated'));
    // Hibernate at the boundary after the booking epoch.
    handle.on('record', (record: JournalRecord) => {
      if (record.kind === 'step.dispatched' && record.epoch === 2) handle.hibernate();
    });
    expect((await handle.done).status).toBe('hibernated');
    const before = await runtime.store.read(handle.id);
    const booked = before.filter((r) => r.epoch === 2 && r.kind === 'step.dispatched' && !(r.body as Body).actuator.endsWith('.search'));
    const heldBefore = providers(stateDir, handle.id);

    // Another tenant cannot cancel it, and writes nothing.
    await expect(runtime.cancel(handle.id, { reason: 'x', tenant: 't2' })).rejects.toMatchObject({ code: 'invocation.not_found' });
    await expect(runtime.cancel(handle.id, { reason: 'x', tenant: 't2' })).rejects.toBeInstanceOf(RuntimeUsageError);
    expect(await runtime.store.peekInbox(handle.id)).toBeUndefined();
    const scoped = createRuntime({ store: new FileStore(dir), domain: travelDomain, stateDir, model, signingKey: key, tenant: 't2' });
    await expect(scoped.cancel(handle.id, { reason: 'x' })).rejects.toMatchObject({ code: 'invocation.not_found' });

    // A second runtime over the same store cancels it.
    const { runtime: other } = travelRuntime(dir);
    const result = await (await other.cancel(handle.id, { reason: 'plans changed', by: 'alice' })).done;
    expect(result.status).toBe('cancelled');
    const kept = booked.map((r) => ({ epoch: 2, step: (r.body as Body).step, actuator: (r.body as Body).actuator, key: (r.body as Body).key }));
    expect(kept.map((k) => k.actuator)).toEqual(['airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm']);
    expect(result.cancelled).toEqual({ by: 'alice', reason: 'plans changed', kept });
    // What the world held when the run hibernated: both holds converted into bookings, one charge,
    // each kept effect applied once, under its key.
    expect(heldBefore.holds.map((h) => `${h.kind}:${h.status}`).sort()).toEqual(['flight:converted', 'hotel:converted']);
    expect(heldBefore.charges).toHaveLength(1);
    for (const effect of kept) expect(heldBefore.ledger[effect.key], effect.key).toMatchObject({ actuator: effect.actuator, applied: 1 });

    const records = await runtime.store.read(handle.id);
    expect(records.slice(before.length).map((r) => `${r.kind}@${r.epoch}`)).toEqual(['cancel.requested@3', 'invocation.cancelled@3', 'invocation.sealed@3']);
    expect(records.find((r) => r.kind === 'invocation.cancelled')!.body).toEqual({ by: 'alice', reason: 'plans changed', kept });
    // Nothing of the closed epoch was undone.
    expect(records.some((r) => r.kind === 'compensation.dispatched')).toBe(false);
    expect(providers(stateDir, handle.id)).toEqual(heldBefore);

    // Cancelling it again reports how it ended and writes nothing.
    const again = await (await other.cancel(handle.id, { reason: 'again' })).done;
    expect(again).toMatchObject({ status: 'cancelled', fingerprint: result.fingerprint, cancelled: { by: 'alice', kept } });
    expect((await runtime.store.read(handle.id)).length).toBe(records.length);

    expect(await runtime.replay(handle.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
    expect((await runtime.verify({ journalPath: runtime.journalPath(handle.id)! }, publicKeyOf(key))).ok).toBe(true);
  });

  test('an invocation that had already ended is reported as it ended; nothing is written', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime } = travelRuntime(dir);
    const done = await (await runtime.start(TRAVEL_INTENT, start('ended'))).done;
    expect(done.status).toBe('completed');
    const length = await runtime.store.length(done.id);
    const result = await (await runtime.cancel(done.id, { reason: 'too late' })).done;
    expect(result).toMatchObject({ status: 'completed', fingerprint: done.fingerprint });
    expect(result.reason).toMatch(/had already ended completed/);
    expect(await runtime.store.length(done.id)).toBe(length);
    expect(await runtime.store.peekInbox(done.id)).toBeUndefined();
  });

  test('an invocation awaiting approval with a cancel in its inbox: approve is refused, the next resume cancels it', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const stateDir = mkdtempSync(path.join(root, 'state-'));
    const runtime = createRuntime({ store: new FileStore(dir), domain: travelDomain, stateDir, signingKey: key, policy: spendApprovalPolicy({ version: 'cancel', limit: 100, amountArg: 'amount' }), sleep: async () => undefined });
    const first = await (await runtime.start(TRAVEL_INTENT, start('approval'))).done;
    expect(first.status).toBe('awaiting_approval');
    // A cancel written by a process that could not take the invocation up (its holder did not answer in time).
    await runtime.store.putInbox(first.id, { type: 'cancel', by: 'ops', reason: 'budget frozen', at: Date.parse('2026-06-01T10:00:00Z') });
    expect((await runtime.list()).find((row) => row.id === first.id)).toMatchObject({ status: 'awaiting_approval', cancelRequested: true });
    await expect(runtime.approve(first.id, { decision: 'approved', by: 'alice' })).rejects.toMatchObject({ code: 'runtime.cancel_pending' });
    expect((await runtime.store.peekInbox(first.id))?.type).toBe('cancel');

    const result = await (await runtime.resume(first.id)).done;
    expect(result).toMatchObject({ status: 'cancelled', cancelled: { by: 'ops', reason: 'budget frozen', kept: [] } });
    const records = await runtime.store.read(first.id);
    expect(records.slice(-4).map((r) => r.kind)).toEqual(['approval.requested', 'cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
    expect(records.at(-3)!.body).toEqual({ by: 'ops', reason: 'budget frozen', at: '2026-06-01T10:00:00.000Z' });
    expect(records.some((r) => r.kind === 'step.dispatched' && !(r.body as Body).actuator.endsWith('.search'))).toBe(false);
    expect(await runtime.store.peekInbox(first.id)).toBeUndefined();
    expect(await runtime.replay(first.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
    expect((await runtime.verify(first.id, publicKeyOf(key))).ok).toBe(true);
  });

  test('an approval written over the cancel as it lands (two processes racing on the one inbox): the cancel still wins, nothing is executed', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const stateDir = mkdtempSync(path.join(root, 'state-'));
    // Another process's approve writes its decision right after this process's cancel reached the inbox.
    class RacedStore extends FileStore {
      override async putInbox(...args: Parameters<FileStore['putInbox']>) {
        await super.putInbox(...args);
        if (args[1].type === 'cancel') await super.putInbox(args[0], { type: 'approval', decision: 'approved', by: 'alice', at: Date.parse('2026-06-01T10:00:01Z') });
      }
    }
    const runtime = createRuntime({ store: new RacedStore(dir), domain: travelDomain, stateDir, signingKey: key, policy: spendApprovalPolicy({ version: 'cancel', limit: 100, amountArg: 'amount' }), sleep: async () => undefined });
    const first = await (await runtime.start(TRAVEL_INTENT, start('approval-race'))).done;
    expect(first.status).toBe('awaiting_approval');
    const result = await (await runtime.cancel(first.id, { reason: 'budget frozen', by: 'ops' })).done;
    expect(result).toMatchObject({ status: 'cancelled', cancelled: { by: 'ops', reason: 'budget frozen', kept: [] } });
    const records = await runtime.store.read(first.id);
    expect(records.slice(-4).map((r) => r.kind)).toEqual(['approval.requested', 'cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
    expect(records.some((r) => r.kind === 'approval.decided' || (r.kind === 'step.dispatched' && !(r.body as Body).actuator.endsWith('.search')))).toBe(false);
    expect(await runtime.replay(first.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
  });

  test('a cancel after a crash that followed a recorded approval: the decision is read back, and the epoch stops before its first step', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const stateDir = mkdtempSync(path.join(root, 'state-'));
    // The store loses its reply to the append that holds approval.decided (durable; the runtime does not know).
    class LossyStore extends FileStore {
      armed = false;
      override async append(...args: Parameters<FileStore['append']>) {
        await super.append(...args);
        if (this.armed && args[2].some((r) => r.kind === 'approval.decided')) {
          this.armed = false;
          throw new Error('connection reset after the append');
        }
      }
    }
    const store = new LossyStore(dir);
    const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: key, policy: spendApprovalPolicy({ version: 'cancel', limit: 100, amountArg: 'amount' }), sleep: async () => undefined });
    const first = await (await runtime.start(TRAVEL_INTENT, start('approval-crash'))).done;
    expect(first.status).toBe('awaiting_approval');
    store.armed = true;
    expect((await (await runtime.approve(first.id, { decision: 'approved', by: 'alice' })).done).status).toBe('suspended');
    const cut = await store.read(first.id);
    expect(cut.at(-1)!.kind).toBe('approval.decided');

    const result = await (await runtime.cancel(first.id, { reason: 'changed my mind', by: 'alice' })).done;
    expect(result).toMatchObject({ status: 'cancelled', cancelled: { by: 'alice', reason: 'changed my mind', kept: [] } });
    const records = await store.read(first.id);
    // The approved epoch is certified, then stops before its first step.
    expect(records.slice(cut.length).map((r) => r.kind)).toEqual(['epoch.certified', 'cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
    expect(records.filter((r) => r.kind === 'approval.decided')).toHaveLength(1);
    expect(records.some((r) => r.kind === 'step.dispatched' && !(r.body as Body).actuator.endsWith('.search'))).toBe(false);
    expect(await runtime.replay(first.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
  });

  test('a sleeping invocation (weft.sleep): the charge made before the sleep is compensated', async () => {
    const intent = 'Charge Alice, then remind her tomorrow';
    const wake = Date.parse('2026-12-02T08:00:00Z');
    const library = sleepLibrary();
    const ledger = newLedger();
    const scripted = new ScriptedModel({ model: 'remind', entries: [{ match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_then_remind', args: ['alice', wake] } } }] });
    const store = new MemoryStore();
    const runtime = createRuntime({ store, libraries: [library], actuators: notifyActuators(ledger), observe: 'world.observe', model: scripted, signingKey: key, now: () => new Date('2026-12-01T20:00:00Z'), sleep: async () => undefined });
    const first = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T20:00:00Z' })).done;
    expect(first.status).toBe('waiting_timer');
    const chargeKey = Object.keys(ledger.applied)[0]!;
    expect(ledger.applied[chargeKey]).toEqual({ charged: 'alice', amount: 10 });

    const result = await (await runtime.cancel(first.id, { reason: 'no longer needed', by: 'bob' })).done;
    expect(result.status).toBe('cancelled');
    const records = await store.read(first.id);
    const from = records.findIndex((r) => r.kind === 'timer.set');
    expect(records.slice(from).map(label)).toEqual([
      'timer.set#1',
      'cancel.requested',
      'compensation.dispatched#0',
      'compensation.completed#0',
      'invocation.cancelled',
      'invocation.sealed',
    ]);
    expect(records.find((r) => r.kind === 'invocation.cancelled')!.body).toEqual({ by: 'bob', reason: 'no longer needed', kept: [] });
    // The world: the charge undone, the reminder never sent.
    expect(ledger.undone).toEqual([`${chargeKey}.undo`]);
    expect(Object.values(ledger.applied)).toEqual([{ charged: 'alice', amount: 10 }]);

    expect(await runtime.replay(first.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
    expect((await runtime.verify(first.id, publicKeyOf(key))).ok).toBe(true);
  });

  test('a crash right after cancel.requested is durable: the journal replays as unfinished, and resume finishes the cancel from the record', async () => {
    const intent = 'Charge Alice, then remind her tomorrow';
    const ledger = newLedger();
    const scripted = new ScriptedModel({ model: 'remind', entries: [{ match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_then_remind', args: ['alice', Date.parse('2026-12-02T08:00:00Z')] } } }] });
    // The store loses its reply to the append that holds cancel.requested (the record is durable; the runtime does not know).
    class LossyStore extends MemoryStore {
      armed = false;
      override async append(...args: Parameters<MemoryStore['append']>) {
        await super.append(...args);
        if (this.armed && args[2].some((r) => r.kind === 'cancel.requested')) {
          this.armed = false;
          throw new Error('connection reset after the append');
        }
      }
    }
    const store = new LossyStore();
    const runtime = createRuntime({ store, libraries: [sleepLibrary()], actuators: notifyActuators(ledger), observe: 'world.observe', model: scripted, signingKey: key, now: () => new Date('2026-12-01T20:00:00Z'), sleep: async () => undefined });
    const first = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T20:00:00Z' })).done;
    expect(first.status).toBe('waiting_timer');
    store.armed = true;
    const broken = await (await runtime.cancel(first.id, { reason: 'stop', by: 'bob' })).done;
    expect(broken.status).toBe('suspended');
    const cut = await store.read(first.id);
    expect(cut.at(-1)!.kind).toBe('cancel.requested');
    expect(ledger.undone).toEqual([]);
    expect(await runtime.replay({ records: cut })).toMatchObject({ status: 'unfinished' });

    // Resumed, it goes on from the recorded cancel (the inbox plays no part: it was cleared or not, the record decides).
    await store.clearInbox(first.id);
    const result = await (await runtime.resume(first.id)).done;
    expect(result).toMatchObject({ status: 'cancelled', cancelled: { by: 'bob', reason: 'stop' } });
    const records = await store.read(first.id);
    expect(records.filter((r) => r.kind === 'cancel.requested')).toHaveLength(1);
    expect(records.slice(cut.length).map(label)).toEqual(['compensation.dispatched#0', 'compensation.completed#0', 'invocation.cancelled', 'invocation.sealed']);
    expect(ledger.undone).toHaveLength(1);
    expect(await runtime.replay(first.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
  });

  test('a compensation that fails for good during a cancel hands off, with the trail', async () => {
    const intent = 'Charge Alice, then remind her tomorrow';
    const library = sleepLibrary();
    const ledger = newLedger();
    const scripted = new ScriptedModel({ model: 'remind', entries: [{ match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_then_remind', args: ['alice', Date.parse('2026-12-02T08:00:00Z')] } } }] });
    const actuators = notifyActuators(ledger).map((a): Actuator =>
      a.name === 'card.charge' ? { ...a, compensate: async () => { throw new ActuatorError('refund.closed', 'permanent', 'the card issuer refuses refunds for this charge'); } } : a,
    );
    const store = new MemoryStore();
    const runtime = createRuntime({ store, libraries: [library], actuators, observe: 'world.observe', model: scripted, signingKey: key, now: () => new Date('2026-12-01T20:00:00Z'), sleep: async () => undefined });
    const first = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T20:00:00Z' })).done;
    expect(first.status).toBe('waiting_timer');
    const result = await (await runtime.cancel(first.id, { reason: 'stop', by: 'bob' })).done;
    expect(result.status).toBe('handed_off');
    expect(result.reason).toMatch(/compensating step 0 \(charge\) failed: the card issuer refuses refunds/);
    const records = await store.read(first.id);
    expect(records.slice(records.findIndex((r) => r.kind === 'cancel.requested')).map(label)).toEqual(['cancel.requested', 'compensation.dispatched#0', 'compensation.completed#0', 'compensation.halted', 'invocation.handed_off', 'invocation.sealed']);
    // The trail (flag 8): the charge ran, nothing was undone, the charge stays applied.
    expect(records.find((r) => r.kind === 'compensation.halted')!.body).toMatchObject({ at: 0, why: 'compensation_failed', undone: [], notUndone: [{ step: 0, actuator: 'card.charge' }] });
    expect(await runtime.replay(first.id)).toMatchObject({ status: 'handed_off', sealed: true, fingerprint: result.fingerprint });
  });
});
